/*
 * run.h: running benchmarks: in this process (runner.c), in worker processes (manager.c, worker.c),
 * interleaved A/B of two builds (ab.c), calibration (calibrate.c), crash reporting (crash.c).
 */
#ifndef HARNESS_RUN_H
#define HARNESS_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compare/compare.h"
#include "core/options.h"
#include "core/registry.h"
#include "core/result.h"
#include "report/report_compare.h"
#include "store/store.h"

/** Runs one benchmark instance into `r` (zeroed by the caller); its rounds, if it has several,
 * run back to back. Never fails the process. */
void bench__run_instance(const bench__instance *inst, const bench__run_options *opt,
                         bench__result *r);

/** Called by bench__run_all with each result, in list order, as soon as it is final. */
typedef void (*bench__done_fn)(size_t index, bench__result *r, void *arg);

/** What the scheduler (schedule.c) asks of a way of running benchmarks (in this process, or in
 * worker processes). */
typedef struct bench__schedule_ops {
    bool (*finished)(size_t i, void *arg); /* benchmark i has no more rounds */
    unsigned (*rounds)(size_t i, void *arg); /* rounds benchmark i takes (known after round 0) */
    int (*step)(size_t i, unsigned j, void *arg); /* round j of benchmark i; 0, else stops */
    void (*report)(size_t i, void *arg); /* benchmark i is final, and all before it */
} bench__schedule_ops;

/**
 * Takes round j of every benchmark i < n before round j + 1 of any, for j < total (every
 * benchmark's round 0; later rounds spread evenly over the total for one of fewer rounds),
 * odd rounds backwards when `alternate`; reports each benchmark in list order once it and
 * those before it are finished. Returns 0, or the first step's non-zero code.
 */
int bench__schedule(size_t n, unsigned total, bool alternate, const bench__schedule_ops *ops,
                    void *arg);

/**
 * Runs the n instances of `list` into results[0..n-1] (zeroed by the caller), in rounds: round j
 * of every instance that takes it, then round j + 1 (runner.c). `done` (may be NULL) sees each
 * result once it is final. Returns 0, or BENCH_ENOMEM before running anything.
 */
int bench__run_all(const bench__instance *const *list, size_t n, const bench__run_options *opt,
                   bench__result *results, bench__done_fn done, void *arg);

/** Computes r->est and r->outliers from r's samples (and, with several processes, the
 * median's interval over processes: bench__process_estimate). */
int bench__analyze(bench__result *r, const bench__run_options *opt);

/** The environment variable that gives a worker process its job (manager.c, worker.c, ab.c). */
#define BENCH__JOB_ENV "BENCH_WORKER_JOB"
/** The one that names the process that started the worker (its pid): a worker takes a job only
 * from its parent, so a job set by hand (descriptor 3 open to anything) is refused. */
#define BENCH__JOB_PARENT_ENV "BENCH_WORKER_PARENT"
/** The one that gives a worker the name its messages begin with: its manager's, the program's
 * name as the user invoked it (the worker's own argv[0] may be another path). */
#define BENCH__JOB_NAME_ENV "BENCH_WORKER_NAME"

/** Puts `job` in the environment for the worker this process starts next, with this process as
 * its parent and this process's name (bench__prog_name) as the name of its messages (worker.c);
 * bench__job_unexport takes them out again once it is started. */
void bench__job_export(const char *job);
void bench__job_unexport(void);

/**
 * Whether this process, which has a job, is a worker that a manager started: descriptor 3 is
 * open and a pipe or socket, and BENCH_WORKER_PARENT is its parent's pid. 0, or BENCH_EUSAGE
 * with one line in msg (nothing may then be written to descriptor 3: it is not the channel).
 */
int bench__worker_verify(char *msg, size_t len);

/* ---- isolated measurement in worker processes (manager.c, worker.c) ---- */

/** Default measuring processes per benchmark, and with --quick. */
#define BENCH__DEFAULT_PROCESSES 10
#define BENCH__QUICK_PROCESSES 3
/** Default time limit of one worker process, s. */
#define BENCH__DEFAULT_TIMEOUT 300

/**
 * Runs the n instances of `list` like bench__run_all, but each benchmark in fresh worker processes
 * of this program (exec of /proc/self/exe with argv, or of its path under opt->launcher),
 * interleaved across benchmarks: process 0 of every benchmark (which also makes the plan), then
 * process 1 of every benchmark in the opposite order, and so on (schedule.c). A crash, exit() or
 * time-out ends that benchmark's worker only; the benchmark is failed with the failure recorded
 * and the others go on. Returns 0; BENCH_ENOMEM; or BENCH_EUSAGE
 * when the run was interrupted (bench__proc_interrupted gives the signal; results are then
 * incomplete and `done` has not seen all of them).
 */
int bench__run_isolated(const bench__instance *const *list, size_t n,
                        const bench__run_options *opt, int argc, char **argv,
                        bench__result *results, bench__done_fn done, void *arg);

/**
 * The worker side: measures one part of benchmark `id` as `job` (the BENCH_WORKER_JOB
 * environment variable) says and writes what it measured on descriptor 3. Returns the exit code.
 */
int bench__worker_main(const bench__instance *all, size_t n, const char *job,
                       const bench__run_options *opt);

/** A worker process that cannot take its job (its mode could not be set up): fails the
 * benchmark with `why` for the manager to report. Returns the exit code. */
int bench__worker_refuse(const char *why);

/* ---- crash reporting ---- */

/** Installs handlers that print which benchmark crashed, then exit 3. */
void bench__crash_handlers_install(void);
/** Names the benchmark that a crash would be blamed on (NULL: none running). */
void bench__crash_set_current(const char *id);
/* An alternate signal stack for the calling thread (a follower of a threaded body), so that its
 * stack overflow is reported too; NULL when none could be made. Freed, and taken off the thread,
 * by bench__crash_thread_stack_free(stack) on the same thread before it ends. */
void *bench__crash_thread_stack(void);
void bench__crash_thread_stack_free(void *stack);

/* ---- paired comparison of two programs (ab.c) ---- */

/** Where the two workers of a pair run (--ab-schedule). */
typedef enum bench__ab_schedule {
    BENCH__AB_PINNED = 0, /* both on one CPU, taking turns; pairs go round the allowed CPUs */
    BENCH__AB_DUET,       /* at the same moment on two CPUs, swapped between samples */
    BENCH__AB_UNPINNED,   /* wherever the scheduler puts them, taking turns */
} bench__ab_schedule;

/** "pinned", "duet", "unpinned". */
const char *bench__ab_schedule_name(bench__ab_schedule s);

struct bench__ab_item;

typedef struct bench__ab_options {
    double seconds;            /* budget per benchmark on average: the comparison may spend
                                * seconds x benchmarks, on the undecided ones */
    int max_pairs;             /* most worker pairs of one benchmark: its last look */
    double sample_ms;          /* target duration of one sample, ms */
    double significance_level; /* alpha over all benchmarks and looks (Bonferroni) */
    double noise_threshold;    /* smallest relative change reported as a regression */
    bench__ab_schedule schedule;
    bool fixed_layout;         /* no layout randomisation of the workers */
    double timeout_s;          /* a worker that takes longer to answer (its setup, a sample) is
                                * stopped; <= 0: BENCH__DEFAULT_TIMEOUT (--timeout) */
    uint64_t seed;             /* layouts are drawn from it */
    bool progress;             /* live progress on stderr */
    const char *const *removed; /* ids the old build lists for the FILTERs and this one lacks */
    size_t nremoved;
    /* Called with the decided items, after their verdicts and before the summary (--explain,
     * explain.c; NULL: none); a non-zero return is the run's interruption (BENCH_EUSAGE). */
    int (*after)(const char *old_prog, const char *new_prog, const struct bench__ab_item *items,
                 size_t n, void *arg);
    void *after_arg;
} bench__ab_options;

/** The looks of the sequential design: the first at this many pairs (or max_pairs) ... */
#define BENCH__AB_FIRST_LOOK 6
/** ... each next one this many times as many, the last at max_pairs. */
#define BENCH__AB_LOOK_GROWTH 1.5
/** Defaults: seconds per benchmark, most pairs (looks at 6, 9, 14, 21, 32), sample length. */
#define BENCH__AB_DEFAULT_SECONDS 5
#define BENCH__AB_DEFAULT_MAX_PAIRS 32
#define BENCH__AB_DEFAULT_SAMPLE_MS 0.5
/** A pair measures at least this many rounds (a benchmark of long iterations takes longer). */
#define BENCH__AB_MIN_ROUNDS 10

/** The pair counts at which a benchmark is looked at, for at most max_pairs pairs, into
 * looks[0..cap); returns how many (the last is max_pairs). */
size_t bench__ab_looks(int max_pairs, size_t *looks, size_t cap);

/**
 * The paired A/B test from n >= 2 worker pairs: pair_log[i] is the median of
 * ln(new/old) over pair i's rounds. A one-sample t statistic over the pairs (n - 1 degrees of
 * freedom; the pairs are independent, the rounds of one pair are not) gives D (their mean) and
 * its standard error, decided by bench__decide with `tests` (benchmarks compared times the looks
 * of the sequential design). Fills c (old_median and new_median stay 0); with n < 2 the verdict
 * is "not compared".
 */
void bench__ab_stats(const double *pair_log, size_t n, double tests, const bench__compare_opts *o,
                     bench__change *c);

/** One benchmark of a paired comparison: its id in, its outcome out. */
typedef struct bench__ab_item {
    const char *id;
    bench__change change; /* its verdict and numbers (old_median: A's time per iteration, the
                           * geometric mean over pairs; new_median: that times the ratio) */
    int rc;               /* 0; BENCH_EINVAL: the old program lacks it; BENCH_EUNAVAIL: skipped;
                           * BENCH_EIO: a worker failed or could not start (message says why) */
    char message[512];
    size_t pairs;         /* worker pairs that measured */
    size_t rounds;        /* rounds of ABBA+BAAB over all pairs */
    size_t looks;         /* looks taken */
    uint64_t iters;       /* iterations per sample */
    double seconds;       /* wall time spent on it */
    double pair_sd;       /* sd of the pairs' ln(B/A) */
} bench__ab_item;

/** Called with each item as soon as it is decided (or failed). */
typedef void (*bench__ab_done_fn)(bench__ab_item *item, void *arg);

/**
 * Compares A with new_prog (B) on the n benchmarks items[i].id, in pairs of their worker
 * processes, spending at most o->seconds x n (one pair's overrun beyond) on those still
 * undecided. A's workers start from old_fd when it is >= 0 (a sealed copy of a saved program
 * snapshot that bench__snapshot_open checked: never from a path read again), else from
 * old_prog; old_prog names A in messages either way. B's likewise from new_fd or new_prog.
 * Fills each item; `done` (may be NULL) sees each once it is final. Returns 0, or BENCH_EUSAGE
 * when interrupted (items then incomplete), or BENCH_ENOMEM.
 */
int bench__ab_compare(const char *old_prog, int old_fd, const char *new_prog, int new_fd,
                      bench__ab_item *items, size_t n, const bench__ab_options *o,
                      bench__ab_done_fn done, void *arg);

/* The paired worker of a comparison, for --explain's profiles (explain.c). */
struct bench__proc;
struct bench__layout;
/** Starts `prog` (from exec_fd when >= 0) as the driven worker of benchmark `id`, unpinned, and
 * waits for its setup, as a pair's workers start. 0, or an error with the reason in msg. */
int bench__ab_worker_start(struct bench__proc *w, const char *prog, int exec_fd, const char *id,
                           const struct bench__layout *lay, double timeout_s, char *msg,
                           size_t msglen);
/** One sample of `iters` iterations; its time in *ns. 0, BENCH_EUSAGE, or BENCH_EIO. */
int bench__ab_worker_sample(struct bench__proc *w, uint64_t iters, int64_t deadline, double *ns);
/** Asks the worker to end, and reaps it. */
void bench__ab_worker_stop(struct bench__proc *w, double timeout_s);

/** Coordinator side of --ab: compares `other` (old) with this program (new). Exit code. */
int bench__ab_run(const char *other, const bench__instance *all, const bool *selected, size_t n,
                  const bench__ab_options *o, const bench__gate *gate, bool color);

/** The time a saved-baseline comparison gives the interleaved run that confirms its suspects
 * against the baseline's program snapshot (--confirm-time S: S per suspect): by default
 * BENCH__DEFAULT_CONFIRM_TIME per suspect, or a share of BENCH__CONFIRM_BUDGET when there are
 * more suspects than that fits, but never less than BENCH__CONFIRM_MIN_TIME each. */
#define BENCH__DEFAULT_CONFIRM_TIME 5
#define BENCH__CONFIRM_BUDGET 60
#define BENCH__CONFIRM_MIN_TIME 3

/* ---- calibration (calibrate.c) ---- */

/**
 * Runs the n instances of `list` runs - 1 times, each time in fresh worker processes (one per
 * benchmark under --in-process), and stores each benchmark's median of run r in
 * medians[r * n + i] (NAN when it did not measure). Says on stderr which run it is on. Returns
 * 0; or an error code with the reason in msg: a benchmark failed, the run was interrupted
 * (bench__proc_interrupted), or memory ran out.
 */
int bench__calibrate(const bench__instance *const *list, size_t n, const bench__run_options *opt,
                     int argc, char **argv, unsigned runs, double *medians, char *msg,
                     size_t msglen);
/**
 * Sets each OK result's noise from its own median and its medians in the nruns calibration
 * runs (medians[r * n + i]): the mean and sd of the natural logs over all of them.
 */
void bench__noise_from_medians(bench__result *results, size_t n, const double *medians,
                               size_t nruns);

#endif /* HARNESS_RUN_H */
