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
/** The level of --history-show's change points and trends. */
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

/**
 * --history-gate: for each benchmark of run `run_id` that ran ok, tests its median as a step
 * against its last `window` earlier runs (bench__cp_newest_step, Bonferroni over the
 * benchmarks tested, family level alpha) and looks for a trend over the same runs
 * (bench__changepoints at alpha over the benchmarks). Prints one line per finding to o.
 * *regressed is set when a benchmark's step is significant and above noise_threshold, or when
 * the lower end of its slowing trend's interval, compounded over the window, is above it.
 * Reads only. 0, or a negative error code with one line in msg.
 */
int bench__history_gate(FILE *o, const char *path, long long run_id, size_t window,
                        double noise_threshold, double alpha, bool *regressed, char *msg,
                        size_t len);

/**
 * Selects the benchmark ids to show: marks selected[0..n) for ids[0..n); 0, or -1 after one
 * line on stderr.
 */
typedef int (*bench__history_selector)(const char *const *ids, size_t n, bool *selected,
                                       void *arg);

/**
 * --history-show: prints to o the runs of the database at `path`, then for each benchmark the
 * selector picks its series (run, revision, median) with its change points and trend. Reads
 * only. 0, or a negative error code with one line in msg (BENCH_EUSAGE: the selector refused
 * and already said why; msg is then "").
 */
int bench__history_show(FILE *o, const char *path, bench__history_selector select, void *arg,
                        char *msg, size_t len);

#endif /* HARNESS_HISTORY_H */
