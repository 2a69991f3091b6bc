/*
 * since_last.h: the change since the last run (since_last.c), from the history or from the
 * last-run file kept beside the results.
 */
#ifndef HARNESS_SINCE_LAST_H
#define HARNESS_SINCE_LAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "run/pipeline.h"

/**
 * With a history (c->history_path): the block "Since the last run in the history" on o, each of
 * the n results against its newest run there that ran in two or more processes. A history that
 * cannot be read is one warning on stderr.
 */
void bench__since_history(FILE *o, const bench__request *c, const bench__context *ctx,
                          const bench__result *results, size_t n);
/**
 * The block "Since the last run (WHEN, PATH; ...)" on o: each of the n results against its
 * entry in `last`, the last-run file read from path (bench__since_open).
 */
void bench__since_kept(FILE *o, const bench__request *c, const bench__context *ctx,
                       const bench__saved *last, const char *path, const bench__result *results,
                       size_t n);
/**
 * Reads the last-run file at path into *out for bench__since_kept. 0; BENCH_EUNAVAIL, silently,
 * when there is none yet; another error code after one warning on stderr naming the file and
 * why (unreadable, not a results file of times, or none of prog's benchmarks in it).
 */
int bench__since_open(const char *path, const struct program *prog, bench__saved *out);
/**
 * Keeps the OK results among results[0..n) in the last-run file at path for the next run
 * (bench__last_keep; entries of benchmarks prog lacks are dropped). A failure is one warning on
 * stderr, unless quiet (the file was already named by a warning of this run), or another run
 * holds the file's lock. Returns 0 or the error code.
 */
int bench__since_keep(const char *path, const bench__context *ctx, const bench__result *results,
                      size_t n, const struct program *prog, bool quiet);

#endif /* HARNESS_SINCE_LAST_H */
