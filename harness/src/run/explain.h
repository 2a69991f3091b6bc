/*
 * explain.h: --explain, the functions behind a changed benchmark (explain.c; its modes in
 * explain_perf.c and explain_callgrind.c, what they share in explain_int.h). Both programs of a
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
#include "core/result.h"
#include "run/ab.h"
#include "measure/layout.h"
#include "measure/run.h"
#include "sys/proc.h"

/** A function's difference is named when it exceeds this many standard deviations of the two
 * profiles' sampling noise (time mode). */
#define BENCH__EXPLAIN_Z 4.0
/** Worker pairs of one benchmark's profiles (time mode): the noise between processes is
 * estimated from the spread of the pairs' differences. */
#define BENCH__EXPLAIN_PAIRS 3
/** The highest sampling rate asked of perf, Hz (perf_event_max_sample_rate may allow less). */
#define BENCH__EXPLAIN_MAX_HZ 25000

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

/**
 * A function's change of time per iteration between the two profiles, and the sd of its noise
 * (time mode): the function's counts a[j], b[j] out of na[j], nb[j] samples of the old and new
 * program in worker pair j < pairs, ta and tb their times per iteration, log_se the standard
 * error of ln(tb / ta). The variance is the larger of the binomial one of the pooled shares,
 * t^2 p (1 - p) / N for each program (a count of zero counting as one sample), and the spread
 * of the pairs' changes over the pairs; (tb p_b log_se)^2 is added. Returns the sd; *d gets the
 * change, tb p_b - ta p_a.
 */
double bench__explain_diff_sd(const double *a, const double *b, const double *na,
                              const double *nb, size_t pairs, double ta, double tb, double log_se,
                              double *d);

/** Whether a verdict is one --explain explains: regressed or improved (every verdict with
 * BENCH_EXPLAIN_ALL set, for checking an A/A). */
bool bench__explain_wanted(bench__verdict v);

/**
 * Explains the items of a paired comparison (ab.c) whose verdicts bench__explain_wanted takes,
 * A being old_prog (old_fd) and B new_prog (new_fd): a heading, then each benchmark's id, verdict
 * and explanation on out (NULL: printed nowhere); or one line saying why none can be explained.
 * When found is not NULL, found[i] gets item i's explanation (malloc'd, the caller's), others
 * are left as they are. 0, or BENCH_EUSAGE when the run was interrupted.
 */
int bench__explain_items(FILE *out, const char *old_prog, int old_fd, const char *new_prog,
                         int new_fd, const bench__ab_item *items, size_t n,
                         const bench__explain_opts *o, bench__explanation **found);

/** The one line saying why the changed benchmarks cannot be explained (out NULL: stderr). */
void bench__explain_unavailable(FILE *out, const char *why);

#endif /* HARNESS_EXPLAIN_H */
