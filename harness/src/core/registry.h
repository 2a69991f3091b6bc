/*
 * registry.h: the benchmark instances BENCH_FN registered, listed and sorted (registry.c).
 */
#ifndef HARNESS_REGISTRY_H
#define HARNESS_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/bench.h"

/* ---- registry ---- */

/** One runnable benchmark: a descriptor and, for parameterised ones, one parameter value. */
typedef struct bench__instance {
    const bench_desc *desc;
    const bench_group_desc *group; /* NULL when the group has no BENCH_GROUP */
    bool has_param;
    int64_t param;
    char id[256];
} bench__instance;

/**
 * Lists every registered benchmark instance, sorted by id. On success *out is a malloc'd array
 * (caller frees) and *n its length. Fails with BENCH_EDUP (message names the id) when two
 * registrations share an id, or BENCH_EINVAL for an id that is too long.
 */
int bench__registry_list(bench__instance **out, size_t *n, char *msg, size_t msglen);

/**
 * The source revision the program's benchmark files were built from (BENCH_BUILD_REVISION, as
 * BENCH_FN recorded it in each file), when every registered BENCH_FN has one and they agree;
 * NULL otherwise (no benchmarks, a file without one, or files from different revisions). The
 * string is the program's static storage.
 */
const char *bench__registry_build_revision(void);

#endif /* HARNESS_REGISTRY_H */
