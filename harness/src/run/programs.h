/*
 * programs.h: which benchmarks a program has (programs.c): this one's instances, and another
 * program's (--ab's old build) as its --list prints them.
 */
#ifndef HARNESS_PROGRAMS_H
#define HARNESS_PROGRAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/registry.h"
#include "run/pipeline.h"

/** Whether `id` is one of the n instances. */
bool bench__has_instance(const bench__instance *all, size_t n, const char *id);
/** `present` for bench__baseline_absent_entries over a struct program. */
bool bench__in_program(const void *where, const char *id);
/** What `PROG --list [--exact] -- FILTER...` prints (malloc'd), or NULL. */
char *bench__ab_other_list(const bench__request *c, const char *prog);

#endif /* HARNESS_PROGRAMS_H */
