/*
 * explain.h: --explain, the functions behind a changed benchmark (explain.c). Both programs of a
 * comparison are profiled on one benchmark and the change of its time (or instruction count) per
 * iteration is attributed to functions: by perf's sampled call stacks (time mode) or by
 * callgrind's exact counts (instruction mode). A function is named only when its difference lies
 * beyond the noise of the two profiles.
 */
#ifndef HARNESS_EXPLAIN_H
#define HARNESS_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compare/compare.h"
#include "run/layout.h"
#include "run/run.h"
#include "sys/proc.h"

/** How the change is explained (--explain; --instructions selects counts). */
typedef enum bench__explain_mode {
    BENCH__EXPLAIN_OFF = 0,
    BENCH__EXPLAIN_TIME,         /* perf record's samples, scaled by the time per iteration */
    BENCH__EXPLAIN_INSTRUCTIONS, /* callgrind's exact counts per iteration */
} bench__explain_mode;

/** The most functions named in one explanation. */
#define BENCH__EXPLAIN_TOP 5
/** A function's difference is named when it exceeds this many standard deviations of the two
 * profiles' sampling noise (time mode). */
#define BENCH__EXPLAIN_Z 4.0
/** Worker pairs of one benchmark's profiles (time mode): the noise between processes is
 * estimated from the spread of the pairs' differences. */
#define BENCH__EXPLAIN_PAIRS 3
/** The highest sampling rate asked of perf, Hz (perf_event_max_sample_rate may allow less). */
#define BENCH__EXPLAIN_MAX_HZ 25000

/** One function's part in a change, per iteration of the benchmark: ns (time mode) or
 * instructions (instruction mode); new minus old. */
typedef struct bench__explained_fn {
    char name[160];
    double self_old;   /* in the function itself, old program (A) */
    double self_new;   /* ... new program (B) */
    double self_delta; /* self_new - self_old */
    double self_sd;    /* noise sd of self_delta (0: exact counts) */
    double total_delta; /* the same with what it calls (NAN: call stacks incomplete) */
} bench__explained_fn;

/** What --explain found for one benchmark. */
typedef struct bench__explanation {
    int status;                 /* 0: explained; BENCH_EUNAVAIL: could not (message says why) */
    bench__explain_mode mode;
    char message[512];          /* why it was not explained, or a note on what it lacks */
    double old_value;           /* per iteration, A: ns (the verdict's) or instructions */
    double new_value;           /* ... B */
    double change;              /* new_value - old_value */
    bench__explained_fn fns[BENCH__EXPLAIN_TOP]; /* beyond noise, largest |self_delta| first */
    size_t nfns;
    size_t nbeyond;             /* functions beyond noise in all (nfns of them named) */
    double attributed;          /* sum of the named self_delta / change (fraction) */
    double samples[2];          /* time mode: samples in the timed loops, A and B */
    size_t pairs;               /* time mode: worker pairs profiled */
    double seconds;             /* wall time the explanation took, s */
    char how[160];              /* the profiler as run, e.g. "perf record -e cpu-clock -F ..." */
} bench__explanation;

/** What the explanations are given. */
typedef struct bench__explain_opts {
    bench__explain_mode mode;
    double seconds;   /* time mode: profiling time of one benchmark, both programs, s */
    double timeout_s; /* a worker step that takes longer is stopped, s */
    uint64_t seed;    /* worker layouts */
} bench__explain_opts;

/**
 * Whether explanations can be made at all in this mode: the profiler is on PATH and allowed to
 * record. 0; or BENCH_EUNAVAIL with one line in msg saying why and how to enable it.
 */
int bench__explain_check(const bench__explain_opts *o, char *msg, size_t msglen);

/**
 * Explains benchmark `id` changed from A (old_prog, or its sealed copy old_fd >= 0) to B
 * (new_prog / new_fd) as `ch` says (old_median and new_median: ns per iteration), with samples of
 * `iters` iterations (time mode) into *e. Returns 0 (e->status says whether it was explained),
 * or BENCH_EUSAGE when the run was interrupted.
 */
int bench__explain_one(const char *old_prog, int old_fd, const char *new_prog, int new_fd,
                       const char *id, uint64_t iters, const bench__change *ch,
                       const bench__explain_opts *o, bench__explanation *e);

/** Prints an explanation under its benchmark's verdict (indented lines). */
void bench__explain_print(FILE *out, const bench__explanation *e);

/** Whether a verdict is one --explain explains: regressed or improved (every verdict with
 * BENCH_EXPLAIN_ALL set, for checking an A/A). */
bool bench__explain_wanted(bench__verdict v);

/**
 * Explains the items of a paired comparison (ab.c) whose verdicts bench__explain_wanted takes,
 * A being old_prog (old_fd) and B new_prog (new_fd): a heading, then each benchmark's id, verdict
 * and explanation on out; or one line saying why none can be explained. 0, or BENCH_EUSAGE when
 * the run was interrupted.
 */
int bench__explain_items(FILE *out, const char *old_prog, int old_fd, const char *new_prog,
                         int new_fd, const bench__ab_item *items, size_t n,
                         const bench__explain_opts *o);

#endif /* HARNESS_EXPLAIN_H */
