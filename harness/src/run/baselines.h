/*
 * baselines.h: baselines by name (baselines.c): where they live, loading and saving them, the
 * comparison sides of their entries and of this run's results, the summary and exit code of a
 * finished comparison under the command line's gate, and the benchmarks one side lacks. The
 * confirmation of a saved comparison's suspects is suspects.h's.
 */
#ifndef HARNESS_BASELINES_H
#define HARNESS_BASELINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "report/report_compare.h"
#include "run/pipeline.h"

/** --baseline-dir, else $BENCH_BASELINE_DIR, else "baselines". */
const char *bench__baseline_dir(const bench__request *c);
/** DIR/NAME.json into buf. */
void bench__baseline_path(const bench__request *c, const char *name, char *buf, size_t len);
struct bench__client;

/** Loads baseline `name`; on failure prints one line and returns -1. */
int bench__baseline_load_named(const bench__request *c, const struct bench__client *cl,
                               const char *name, bench__saved *out);
/**
 * Saves the OK results of a run as baseline `name` at `path` in directory `dir` (created when
 * missing), without their comparison; with `snapshot`, the measured program beside it, signed
 * with this user's key (a run of times; --instructions keeps none: its counts need no
 * confirming run), copied within timeout_s seconds. A snapshot that cannot be kept is a warning,
 * and then no older one stays beside the new file. Says what it saved on stderr; on failure
 * prints one line and returns -1; also -1, silently, when the run was interrupted (nothing was
 * replaced then).
 */
int bench__save_named(const char *dir, const char *name, const char *path,
                      const bench__context *ctx, const bench__result *results, size_t n,
                      bool snapshot, double timeout_s);
/**
 * The OK results among results[0..n), without their comparison, into a new array (shallow
 * copies: the caller frees the array only) and their count into *k; NULL when out of memory.
 */
bench__result *bench__ok_results(const bench__result *results, size_t n, size_t *k);
/** Compares the contexts into *out and warns about each kind of difference on its own line. */
void bench__baseline_warn_context(const bench__context_id *now, const bench__context_id *then,
                             const char *name, bench__context_change *out);
/** The comparison side of a saved entry; 0, or -1 when out of memory. */
int bench__side_of_entry(const bench__request *c, const bench__entry *e, bench__side *out);
/** The comparison side of a result of this run. */
void bench__side_of_result(const bench__request *c, const bench__result *r, bench__side *out);
/** The gate's flags of the command line. */
bench__gate bench__request_gate(const bench__request *c);
/**
 * The exit code of a finished comparison of n rows (ids[i] names ch[i]) under the command line's
 * gate (bench__compare_exit).
 */
int bench__request_compare_exit(const bench__request *c, const char *const *ids,
                                const bench__change *ch, size_t n, const char *against);
/**
 * Prints the summary of a finished comparison of n rows (ids[i] names ch[i]) under the
 * client's heading, worst first, and returns its exit code (bench__request_compare_exit, the
 * strict messages in the summary's order). Sorts the rows in place.
 */
int bench__summarize(const bench__request *c, const struct bench__client *cl, FILE *o,
                         const char *what, const char **ids, bench__change *ch, size_t n,
                         const bench__context_change *context, bool color);
/** Whether `id` is one of the n instances. */
bool bench__has_instance(const bench__instance *all, size_t n, const char *id);
/**
 * The entries of `old` that the FILTERs select and that `present` does not know (removed, or
 * skipped when the old side skipped them) into ids[] and verdicts[]; their count, or -1.
 */
long bench__baseline_absent_entries(const bench__request *c, const bench__saved *old,
                               bool (*present)(const void *where, const char *id),
                               const void *where, const char **ids, bench__verdict *verdicts);
/** `present` for bench__baseline_absent_entries over a struct program. */
bool bench__in_program(const void *where, const char *id);
/** What `PROG --list [--exact] -- FILTER...` prints (malloc'd), or NULL. */
char *bench__ab_other_list(const bench__request *c, const char *prog);

#endif /* HARNESS_BASELINES_H */
