/*
 * result.h: what one benchmark's run produced: status, samples, estimates, metrics and facts,
 * and how it failed. Invariant: a bench__result owns every pointer in it and is freed with
 * bench__result_destroy.
 */
#ifndef HARNESS_RESULT_H
#define HARNESS_RESULT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/options.h"
#include "core/probe.h"
#include "core/registry.h"
#include "stats/stats.h"

struct bench__change;

/* ---- results ---- */

typedef enum bench__status {
    BENCH__OK = 0,
    BENCH__SKIPPED,
    BENCH__FAILED,
} bench__status;

/** How a failed benchmark failed (the manager contains the last three in its worker processes). */
typedef enum bench__failure {
    BENCH__FAIL_NONE = 0,
    BENCH__FAIL_ERROR,     /* the benchmark reported it (bench_fail) or the harness found a fault */
    BENCH__FAIL_CRASHED,   /* its process died of a signal; failure_code is the signal */
    BENCH__FAIL_EXITED,    /* its process exited (exit()) before finishing; failure_code the code */
    BENCH__FAIL_TIMED_OUT, /* its process ran past --timeout and was killed */
} bench__failure;

/** "error", "crashed", "exited", "timed out" ("" for none). */
const char *bench__failure_name(bench__failure f);

/** Between-run noise of a benchmark, measured by calibration (--calibrate). */
typedef struct bench__noise {
    int runs;        /* separate processes measured; 0: not calibrated */
    double log_mean; /* mean over the runs of ln(median ns per iteration) */
    double log_sd;   /* sample standard deviation of those logs */
} bench__noise;

/** What one worker process said about itself (worker.c): where it ran, its layout, its page
 * faults; the spread between processes is explained only by what was recorded here. */
typedef struct bench__proc_info {
    bool known;      /* the process sent its PROC line */
    int cpu;         /* CPU it took its last sample on; -1 unknown */
    bool layout;     /* its layout was randomised (layout.c) */
    unsigned stack;  /* layout offsets, bytes */
    unsigned heap;
    unsigned env;
    double minflt;   /* minor page faults of the whole process */
    double majflt;   /* major page faults */
} bench__proc_info;

/** Span names one benchmark may mark (bench_span_begin); more fail the benchmark. */
#define BENCH__MAX_SPANS 16

/** A phase the body marked with bench_span_begin / bench_span_end, under --trace: its time
 * in each measured sample of every process (on the body's first thread). */
typedef struct bench__span_total {
    char name[64];
    double ns;      /* summed over the measured samples */
    uint64_t count; /* times it ran in them */
    double *ratios; /* per measured sample: its ns in the sample over the sample's ns (owned) */
    size_t nratios, cap;
} bench__span_total;

/** Everything measured and estimated for one benchmark instance. */
/** How --explain explains a change (run/explain.c; --instructions selects counts). */
typedef enum bench__explain_mode {
    BENCH__EXPLAIN_OFF = 0,
    BENCH__EXPLAIN_TIME,         /* perf record's samples, scaled by the time per iteration */
    BENCH__EXPLAIN_INSTRUCTIONS, /* callgrind's exact counts per iteration */
} bench__explain_mode;

/** The most functions named in one explanation. */
#define BENCH__EXPLAIN_TOP 5
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

/** One folded call stack of --explain's two profiles (time mode): how many samples each
 * program's timed loop spent in it. */
typedef struct bench__explained_stack {
    char *frames;       /* "root;...;leaf" (owned) */
    double old_samples; /* samples of the old program (A) */
    double new_samples; /* ... of the new program (B) */
} bench__explained_stack;

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
    double machine_samples[2];  /* ... of them in the machine's kernel work (interrupts,
                                 * context switches): attributed to no function */
    size_t pairs;               /* time mode: worker pairs profiled */
    double seconds;             /* wall time the explanation took, s */
    double z;                   /* time mode: named beyond z sd of the noise; 0: exact counts */
    bench__explained_stack *stacks; /* time mode: the folded stacks of both profiles, the
                                     * weightiest first (owned; NULL none) */
    size_t nstacks;
    char how[160];              /* the profiler as run, e.g. "perf record -e cpu-clock -F ..." */
} bench__explanation;

/** Frees an explanation and its stacks; NULL is a no-op. */
void bench__explanation_free(bench__explanation *e);

typedef struct bench__result {
    const bench__instance *inst;
    bench__status status;
    char message[512];      /* reason for skip or failure */
    bench__settings settings;
    bench_sampling sampling_used; /* LINEAR or FLAT */
    const char *stop_reason;      /* "precision", "time budget", "sample size" */
    size_t nsamples;
    double *iters;          /* per sample: iterations */
    double *totals_ns;      /* per sample: total wall time, ns */
    uint64_t warm_up_iters; /* iterations run during warm-up */
    double warm_up_ns;      /* ns spent in warm-up samples */
    double measure_wall_s;  /* s of sampling, bookkeeping included, summed over rounds */
    unsigned rounds;        /* rounds the samples came from (runner.c) */
    uint64_t total_iters;   /* iterations over all samples */
    bench__estimates est;   /* ns per iteration */
    bench__outliers outliers;
    size_t nresamples;
    double confidence_level;
    bench__noise noise;     /* set by calibration; saved with baselines */
    const struct bench__change *change; /* comparison with the baseline, when there is one */
    bench__explanation *explanation; /* --explain's, when its change was explained (owned) */
    size_t nmetrics;        /* per-sample metrics from probes, beside the time */
    bench__metric metrics[BENCH__MAX_METRICS];
    struct bench__change *metric_changes; /* per metric, when compared (owned); else NULL */
    size_t nfacts;
    bench__fact facts[BENCH__MAX_FACTS];
    uint64_t profile_iters; /* profile mode: iterations run */
    double profile_ns;      /* profile mode: ns spent in them */
    /* The benchmark's code identity (sys/code_id.h): lowercase hex SHA-256 of the machine code
     * its body runs, placement masked; "" unknown (no objdump, a stripped program). */
    char code_hash[65];
    bench__failure failure; /* when status is BENCH__FAILED: how */
    int failure_code;       /* the signal (crashed) or exit code (exited); 0 otherwise */
    /* Isolated measurement: the processes the samples came from (0: measured in this process),
     * each sample's process (0 .. processes - 1; NULL in-process), and the coefficient of
     * variation of the per-process medians (NaN with fewer than 2 processes). */
    unsigned processes;
    uint32_t *process;
    double process_cv;
    double process_log_sd; /* sd of ln(per-process median); NaN with fewer than 2 processes */
    bench__proc_info *proc_info; /* per process (processes of them), or NULL */
    /* With 2 or more processes: the speed groups of the per-process medians, and what their
     * spread can be blamed on from what the processes recorded (stats.h). groups 0: none. */
    bench__modes modes;
    bench__spread_cause spread_cause;
    /* The plan the warm-up made (with sampling_used): linear d or flat count, the per-iteration
     * estimate it rests on (ns), and the rounds (processes) the budget fits. */
    uint64_t plan_step;
    double plan_est_ns;
    unsigned plan_rounds;
    /* A threaded benchmark (bench__instance.threads > 1): the threads its body ran on, and per
     * thread the CPUs it was seen on at sample boundaries, a bit set of BENCH__CPU_WORDS words
     * (thread t's CPU c: bit c % 64 of thread_cpus[t * BENCH__CPU_WORDS + c / 64]), or NULL.
     * 0 threads: the usual one, nothing recorded. */
    unsigned threads;
    uint64_t *thread_cpus;
    /* Spans of the body (--trace only): totals per name, in the order first seen. */
    size_t nspans;
    bench__span_total spans[BENCH__MAX_SPANS];
} bench__result;

/** Words of a thread's CPU set in bench__result.thread_cpus: CPUs 0 .. 1023 are recorded. */
#define BENCH__CPU_WORDS 16
/** Per-thread metrics of a threaded benchmark: thread_0 .. thread_{K-1}, K at most this, then,
 * only with more threads than this, fastest_thread (unit ns, source "threads"). */
#define BENCH__THREAD_METRICS 16

/** What the per-thread metrics of a threaded result say (bench__threads_summary). */
typedef struct bench__threads_summary {
    unsigned count;        /* threads the body ran on */
    size_t nper;           /* per-thread medians in per_thread: min(count, BENCH__THREAD_METRICS) */
    double per_thread[BENCH__THREAD_METRICS]; /* median ns per iteration of thread 0, 1, ... */
    double slowest_ns;     /* the largest per-thread median, ns per iteration */
    double fastest_ns;     /* the smallest (fastest_thread's median when it is smaller) */
    double spread;         /* (slowest - fastest) / slowest; 0 when slowest is 0 */
    double total_ips;      /* iterations of all threads per second: count / the time's median */
} bench__threads_summary;

/**
 * Fills *out from a threaded result's per-thread metrics and its time's median; returns 1, or
 * 0 (out untouched) when r ran on one thread or lacks the metrics (skipped, failed).
 */
int bench__threads_summary_of(const bench__result *r, bench__threads_summary *out);
/** Whether CPU c is in thread t's set of r (false beyond the recorded threads and CPUs). */
bool bench__thread_ran_on(const bench__result *r, unsigned t, unsigned c);
/**
 * r's CPU sets of `threads` threads (thread_cpus), made empty on first use; NULL when out of
 * memory. Writers OR their CPUs into thread t's BENCH__CPU_WORDS words.
 */
uint64_t *bench__thread_cpus(bench__result *r, unsigned threads);

/**
 * Adds a metric to r with room for its samples; returns its index, or -1 (r is then failed with
 * the reason: too many metrics, or out of memory).
 */
int bench__metric_add(struct bench__result *r, const char *name, const char *unit,
                      const char *source);
/** Adds (or replaces) a fact of r; silently drops it when r has BENCH__MAX_FACTS already. */
void bench__fact_add(struct bench__result *r, const char *name, const char *unit, double value);
/** The fact of r with this name, or NULL. */
/** Span `name` of r ran `count` times for ns in a measured sample of sample_ns (a new name is
 * appended); false when r has BENCH__MAX_SPANS names already or memory ran out. */
bool bench__span_sample(struct bench__result *r, const char *name, double ns, uint64_t count,
                        double sample_ns);

/** Span i's share of the time per iteration: the median over the measured samples of its time
 * in the sample over the sample's (a median, so that a sample the system interrupted inside
 * one span moves it no more than any other sample); NaN without samples. */
double bench__span_share(const struct bench__result *r, size_t i);

const bench__fact *bench__fact_find(const struct bench__result *r, const char *name);
/** The metric of r with this name, or NULL. */
const bench__metric *bench__metric_find(const struct bench__result *r, const char *name);
/** Sets r's status (failed or skipped) and reason unless it has one already: the first wins. */
void bench__result_vstatus(struct bench__result *r, bench__status st, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/** Marks r failed with a reason unless it has a status already: the first reason wins. */
void bench__result_fail(struct bench__result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/** Marks r skipped with a reason (before its body ran); the first reason wins. */
void bench__result_skip(struct bench__result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Frees what a result owns (not the struct itself); safe on a zeroed result. */
void bench__result_destroy(bench__result *r);
/** "ok", "skipped" or "failed". */
const char *bench__status_name(bench__status s);

/**
 * Time per iteration, ns, below which no machine runs a loop iteration: one cycle of a 10 GHz
 * clock. A median below it means the compiler removed the body's work (and the loop): an empty
 * body once reported 0.000 ps over 107423901668435 iterations.
 */
#define BENCH__FASTEST_ITERATION_NS 0.1
/** Whether r was measured faster than BENCH__FASTEST_ITERATION_NS per iteration. */
bool bench__optimised_away(const bench__result *r);
/** What every output says of such a result, with the remedy (one line, no newline). */
extern const char bench__optimised_away_note[];

/** A coefficient of variation of the per-process medians above this is reported as large. */
#define BENCH__LARGE_PROCESS_CV 0.05

/** One growth series of a run and its complexity fit (bench__growths). */
typedef struct bench__growth {
    const bench__instance *at; /* its first instance: the BENCH_FN, and the values of the grid's
                                  other axes, fixed along the series */
    int axis;                  /* the grid axis swept (an index of at->args); -1: BENCH_PARAMS */
    size_t parameters;         /* instances in the series */
    bench__complexity fit;
} bench__growth;

/**
 * The growth of every series of the results (n of them, in id order) with at least 3 instances
 * of which at least 3 measured with values above 1: a BENCH_PARAMS list, or a grid axis of
 * integers with the other axes held at each combination of their values. Each series' medians
 * are fitted against its value (bench__complexity_fit). *out is a malloc'd array (caller frees;
 * NULL when *count is 0). Returns 0, or BENCH_ENOMEM with nothing out.
 */
int bench__growths(const bench__result *all, size_t n, bench__growth **out, size_t *count);

#endif /* HARNESS_RESULT_H */
