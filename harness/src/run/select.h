/*
 * select.h: which benchmarks a run's FILTERs select (select.c).
 */
#ifndef HARNESS_SELECT_H
#define HARNESS_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "run/pipeline.h"

/** Marks which of the n ids the FILTERs select; 0, or -1 after one line on stderr. */
int bench__select(const bench__request *c, const char *const *ids, size_t n, bool *selected);

#endif /* HARNESS_SELECT_H */
