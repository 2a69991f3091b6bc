/*
 * run.h: running benchmarks: in this process (runner.c), in worker processes (isolate.c),
 * interleaved A/B of two builds (ab.c), calibration (calibrate.c), crash reporting (crash.c).
 */
#ifndef HARNESS_RUN_H
#define HARNESS_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "registry.h"
#include "result.h"
#include "store.h"

/** Runs one benchmark instance into `r` (zeroed by the caller); its rounds, if it has several,
 * run back to back. Never fails the process. */
void bench__run_instance(const bench__instance *inst, const bench__run_options *opt,
                         bench__result *r);

/** Called by bench__run_all with each result, in list order, as soon as it is final. */
typedef void (*bench__done_fn)(size_t index, bench__result *r, void *arg);

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

/* ---- isolated measurement in worker processes (isolate.c) ---- */

/** Most worker processes per benchmark (--processes, and in files). */
#define BENCH__MAX_PROCESSES 1000
/** Default measuring processes per benchmark, and with --quick. */
#define BENCH__DEFAULT_PROCESSES 10
#define BENCH__QUICK_PROCESSES 3
/** A coefficient of variation of the per-process medians above this is reported as large. */
#define BENCH__LARGE_PROCESS_CV 0.05
/** Default time limit of one worker process, s. */
#define BENCH__DEFAULT_TIMEOUT 300.0

/**
 * Runs the n instances of `list` like bench__run_all, but each benchmark in fresh worker processes
 * of this program (exec of /proc/self/exe with argv, or of its path under opt->launcher),
 * interleaved across benchmarks: process 0 of every benchmark (which also makes the plan), then
 * process 1 of every benchmark in the opposite order, and so on. A crash, exit() or time-out ends that benchmark's worker only; the benchmark is
 * failed with the failure recorded and the others go on. Returns 0; BENCH_ENOMEM; or BENCH_EUSAGE
 * when the run was interrupted (bench__proc_interrupted gives the signal; results are then
 * incomplete and `done` has not seen all of them).
 */
int bench__run_isolated(const bench__instance *const *list, size_t n,
                        const bench__run_options *opt, int argc, char **argv,
                        bench__result *results, bench__done_fn done, void *arg);

/**
 * Set in a worker process that is not its benchmark's first: warnings the first one already
 * gave (a counter that cannot open) are not repeated once per process.
 */
extern bool bench__quiet_warnings;

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

/* ---- interleaved A/B of two builds (ab.c) ---- */

typedef struct bench__ab_options {
    double seconds;            /* per benchmark, all pairs together */
    int pairs;                 /* worker pairs started one after another per benchmark */
    double sample_ms;          /* target duration of one sample, ms */
    double significance_level; /* alpha over all compared benchmarks (Bonferroni) */
    double noise_threshold;    /* smallest relative change reported as a regression */
    bool strict;               /* --baseline-strict: new and removed benchmarks are an error */
    double timeout_s;          /* a worker that takes longer to answer (its setup, a sample)
                                  is stopped; <= 0: BENCH__DEFAULT_TIMEOUT (--timeout) */
    const char *const *removed; /* ids the old build lists for the FILTERs and this one lacks */
    size_t nremoved;
} bench__ab_options;

/** Worker side of --ab: runs benchmark `id` driven over stdin/stdout. Returns the exit code. */
int bench__ab_worker_main(const bench__instance *all, size_t n, const char *id,
                          const bench__run_options *opt);
/** Coordinator side of --ab: compares `other` (old) with this program (new). Exit code. */
int bench__ab_run(const char *other, const bench__instance *all, const bool *selected, size_t n,
                  const bench__ab_options *o, bool fail_on_regression, bool color);

/**
 * Confirms one benchmark's change by an interleaved A/B run of a saved program snapshot (A)
 * against this program (B), as --ab measures (o: time, pairs and each worker's time-out; m:
 * benchmarks confirmed together, for Bonferroni). A's workers start from old_fd, the sealed copy
 * bench__snapshot_open checked (old_prog only names it in messages): never from a path read
 * again. Fills *out with the paired estimate, interval, p and verdict. Returns 0; BENCH_EINVAL
 * when the snapshot lacks or skips the benchmark; BENCH_EIO when a worker failed, timed out or
 * the snapshot cannot run; msg says why.
 */
int bench__ab_confirm(const char *old_prog, int old_fd, const char *id,
                      const bench__ab_options *o, size_t m, struct bench__change *out, char *msg,
                      size_t msglen);

/** Seconds and worker pairs of the interleaved run that confirms a suspect change against a
 * baseline's program snapshot (--confirm-time). Without --confirm-time, each suspect gets
 * BENCH__DEFAULT_CONFIRM_TIME seconds, or its share of BENCH__CONFIRM_BUDGET when there are more
 * suspects than that fits, but never less than BENCH__CONFIRM_MIN_TIME: on a busy machine
 * every benchmark of a suite can be a suspect, and 22 of them at 10 s each made a whole-suite
 * comparison take 5.4 minutes. */
#define BENCH__DEFAULT_CONFIRM_TIME 10.0
#define BENCH__CONFIRM_BUDGET 90.0
#define BENCH__CONFIRM_MIN_TIME 4.0
#define BENCH__CONFIRM_PAIRS 5

/* ---- calibration (calibrate.c) ---- */

/**
 * Runs this program (/proc/self/exe) with argv, stdout discarded, and waits. Returns 0 when it
 * exited 0, else BENCH_EIO with the reason in msg.
 */
int bench__run_self(char *const *argv, char *msg, size_t msglen);
/** Median ns per iteration of a saved entry's samples. */
double bench__entry_median(const bench__entry *e);
/**
 * Sets each OK result's noise from its own median and the medians of the same id in `runs`
 * (separate processes): the mean and sd of the natural logs over all of them.
 */
void bench__noise_from_runs(bench__result *results, size_t n, const bench__saved *runs,
                            size_t nruns);

#endif /* HARNESS_RUN_H */
