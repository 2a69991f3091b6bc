/*
 * run.h: running benchmarks: in this process (runner.c), in worker processes (manager.c, worker.c),
 * crash reporting (crash.c). The paired A/B of two builds is ab.h's, calibration calibrate.h's.
 */
#ifndef HARNESS_RUN_H
#define HARNESS_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/options.h"
#include "core/registry.h"
#include "core/result.h"
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

#endif /* HARNESS_RUN_H */
