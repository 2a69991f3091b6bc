/*
 * baselines.h: baseline files by name (baselines.c): where they live, loading and saving them,
 * a context that differs. The sides of a comparison are sides.h's, its summary and exit code
 * summary.h's, the confirmation of its suspects suspects.h's.
 */
#ifndef HARNESS_BASELINES_H
#define HARNESS_BASELINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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
#endif /* HARNESS_BASELINES_H */
