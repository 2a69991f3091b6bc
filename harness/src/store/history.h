/*
 * history.h: the run history, a local SQLite database that every run of times appends to
 * (--history FILE or $BENCH_HISTORY) and that --history-show reads back as series with their
 * change points and trends (changepoint.h). The schema is in docs/results-format.md.
 *
 * Invariant: a file that is not a history database of this schema (not SQLite, empty, another
 * schema, damaged) is refused with one line naming it and is never written; a run is appended in
 * one transaction, so a reader or a concurrent writer sees all of it or none. Without SQLite at
 * build time, history_none.c answers every call with BENCH_EUNAVAIL and the reason.
 */
#ifndef HARNESS_HISTORY_H
#define HARNESS_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/base.h"
#include "core/result.h"
#include "stats/changepoint.h"
#include "sys/context.h"

/** The schema version this program writes and reads (meta.schema_version). */
#define BENCH__HISTORY_SCHEMA 1
/** The level of --history-show's change points (per series) and trends (over the series shown,
 * Bonferroni). */
#define BENCH__HISTORY_ALPHA 0.05

/**
 * Checks, before anything runs, that `path` is absent (it will be created) or a history database
 * this program can append to. Reads only. 0, or a negative error code with one line in msg.
 */
int bench__history_check(const char *path, char *msg, size_t len);

/**
 * Appends one run: its context, the n results (each with its comparison when it has one) and
 * their per-process medians, in one transaction; creates the database when `path` is absent.
 * `baseline` names the baseline the run was compared with (NULL: none). The new run's id goes
 * to *run_id (when not NULL). 0, or a negative error code with one line in msg (nothing was
 * written then).
 */
int bench__history_append(const char *path, const bench__context *ctx,
                          const bench__result *results, size_t n, const char *baseline,
                          long long *run_id, char *msg, size_t len);

/** Fewest earlier runs a benchmark needs before --history-gate tests it. */
#define BENCH__HISTORY_GATE_MIN BENCH__CP_MIN_SEGMENT

/** A benchmark the history gate found stepped up in the newest run. */
typedef struct bench__history_step {
    char *id;           /* the benchmark (owned) */
    long long prev_run; /* its newest earlier run: the program to confirm the step against */
} bench__history_step;

typedef struct bench__history_steps {
    bench__history_step *s;
    size_t n;
} bench__history_steps;

void bench__history_steps_free(bench__history_steps *s);

/**
 * --history-gate: for each benchmark of run `run_id` that ran ok, tests its median as a step
 * against its last `window` earlier runs (bench__cp_newest_step, Bonferroni over the
 * benchmarks tested, family level alpha) and looks for a trend over the same runs
 * (bench__changepoints at alpha over the benchmarks). Prints one line per finding to o.
 * *regressed is set when the lower end of a benchmark's slowing trend's interval, compounded
 * over the window, is above noise_threshold, or when its step is significant and above it; with
 * `steps` (not NULL), a benchmark that fails by its step alone goes to *steps instead (with
 * its newest earlier run), for the caller to confirm by a paired run. Reads only. 0, or a
 * negative error code with one line in msg.
 */
int bench__history_gate(FILE *o, const char *path, long long run_id, size_t window,
                        double noise_threshold, double alpha, bool *regressed,
                        bench__history_steps *steps, char *msg, size_t len);

/**
 * Selects the benchmark ids to show: marks selected[0..n) for ids[0..n); 0, or -1 after one
 * line on stderr.
 */
typedef int (*bench__history_selector)(const char *const *ids, size_t n, bool *selected,
                                       void *arg);

/** One benchmark's series as --history-show read it, with what was found in it. */
typedef struct bench__history_series {
    char *id;             /* the benchmark */
    size_t n;             /* runs where it was ok, oldest first */
    long long *runs;      /* their ids */
    char **revisions;     /* their revisions ("-" when none) */
    char **programs;      /* their programs' hashes, "sha256:HEX" ("" when none recorded) */
    double *median_ns;    /* their medians, ns per iteration */
    bench__cp_result found; /* change points (indices into the arrays) and the trend */
} bench__history_series;

/** The series one --history-show selected; bench__history_view_free releases them. */
typedef struct bench__history_view {
    bench__history_series *s;
    size_t n;
    size_t trend_tests; /* series whose trend was tested (3 or more runs): the Bonferroni factor */
} bench__history_view;

void bench__history_view_free(bench__history_view *v);

/**
 * --history-show: prints to o the runs of the database at `path`, then for each benchmark the
 * selector picks its series (run, revision, median) with its change points and trend; the
 * series also go to *view (when not NULL; zeroed first). o NULL: nothing is printed. Reads
 * only. 0, or a negative error code with one line in msg (BENCH_EUSAGE: the selector refused
 * and already said why; msg is then "").
 */
int bench__history_show(FILE *o, const char *path, bench__history_selector select, void *arg,
                        bench__history_view *view, char *msg, size_t len);

/**
 * --history-show --json FILE: writes the series of `view` (read from history `history`) with
 * their change points and trends to path, atomically (docs/results-format.md, "history
 * series"). 0, or a negative error code with one line in msg.
 */
int bench__history_view_write(const char *path, const char *history,
                              const bench__history_view *v, char *msg, size_t msglen);

/** A benchmark's newest run in a history, as a comparison reads it. */
typedef struct bench__history_last {
    long long run;    /* its run id; 0: the history has no ok run of it with process medians */
    char revision[64]; /* that run's revision ("-" when none) */
    char program_hash[80]; /* the program that measured it ("" when unknown) */
    double *medians;  /* its per-process medians, ns per iteration (owned) */
    size_t n;
} bench__history_last;

/**
 * For each of the n ids, its newest run in the history at `path` that ran ok in two or more
 * processes, into out[i] (zeroed first; bench__history_last_free releases them). Reads only;
 * a history that does not exist yet has none. 0, or a negative error code with one line in msg.
 */
int bench__history_last_runs(const char *path, const char *const *ids, size_t n,
                             bench__history_last *out, char *msg, size_t len);
void bench__history_last_free(bench__history_last *l, size_t n);

/* ---- the programs kept beside the history (FILE.programs/), for confirming steps ---- */

/** Programs kept beside a history by default (--history-programs N). */
#define BENCH__HISTORY_PROGRAMS 20

/** The directory of the programs kept beside history `path`: "PATH.programs". */
void bench__history_programs_dir(const char *path, char *dir, size_t len);

/**
 * Keeps the running program (ctx->program_hash) beside the history at `path`: copied to
 * PATH.programs/HEX.program unless it is there, signed with this user's key, and recorded in the
 * history's programs table; then only the `keep` most recently used programs stay (the others'
 * files and rows go). keep 0: nothing is kept. Copying stops after timeout_s. 0, or a negative
 * error code with one line in msg (the history's runs are untouched either way).
 */
int bench__history_keep_program(const char *path, const bench__context *ctx, size_t keep,
                                double timeout_s, char *msg, size_t len);

/**
 * The program that measured run `run_id` of the history at `path`: its hash into hash ("" when
 * the run recorded none) and this user's signature of it into mac ("" when it is not kept).
 * 0, or a negative error code with one line in msg.
 */
int bench__history_program(const char *path, long long run_id, char *hash, size_t hlen,
                           char *mac, size_t mlen, char *msg, size_t len);

#endif /* HARNESS_HISTORY_H */
