/*
 * sides.h: the two sides of a comparison (sides.c): a saved entry and a result of this run as
 * the change test takes them (compare/compare.h), and the benchmarks of a saved run that this
 * side lacks.
 */
#ifndef HARNESS_SIDES_H
#define HARNESS_SIDES_H

#include <stdbool.h>
#include <stddef.h>

#include "compare/compare.h"
#include "run/pipeline.h"

/** The comparison side of a saved entry; 0, or -1 when out of memory. */
int bench__side_of_entry(const bench__request *c, const bench__entry *e, bench__side *out);
/** The comparison side of a result of this run. */
void bench__side_of_result(const bench__request *c, const bench__result *r, bench__side *out);
/**
 * The entries of `old` that the FILTERs select and that `present` does not know (removed, or
 * skipped when the old side skipped them) into ids[] and verdicts[]; their count, or -1.
 */
long bench__baseline_absent_entries(const bench__request *c, const bench__saved *old,
                               bool (*present)(const void *where, const char *id),
                               const void *where, const char **ids, bench__verdict *verdicts);

#endif /* HARNESS_SIDES_H */
