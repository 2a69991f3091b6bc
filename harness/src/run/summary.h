/*
 * summary.h: the end of a finished comparison (summary.c): its summary printed (report/) and
 * its exit code under the command line's gate.
 */
#ifndef HARNESS_SUMMARY_H
#define HARNESS_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compare/compare.h"
#include "run/pipeline.h"
#include "sys/context.h"

struct bench__client;

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

#endif /* HARNESS_SUMMARY_H */
