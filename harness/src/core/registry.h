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

/* Argument grids (.args): the most axes, characters of a name or value with its terminator,
 * and combinations of one BENCH_FN. */
#define BENCH__MAX_AXES 8
#define BENCH__ARG_LEN 32
#define BENCH__MAX_VARIANTS 1024

/** One axis's value in one combination of an argument grid. */
typedef struct bench__arg {
    char name[BENCH__ARG_LEN];
    char value[BENCH__ARG_LEN]; /* as written in .args, or a range's value in decimal */
} bench__arg;

/**
 * One runnable benchmark: a descriptor and, for parameterised ones, one parameter value or one
 * combination of its argument grid.
 */
typedef struct bench__instance {
    const bench_desc *desc;
    const bench_group_desc *group; /* NULL when the group has no BENCH_GROUP */
    bool has_param;
    int64_t param;
    int threads;    /* threads the body runs on, resolved: desc->threads, BENCH_THREADS_CPUS as
                       the online CPUs, 0 or less as 1. The runtime reads only this, never
                       desc->threads; above BENCH_MAX_THREADS the benchmark fails when run */
    unsigned variant;                    /* its place in the grid's order (0 without a grid) */
    size_t nargs;                        /* axes of its grid; 0: none */
    bench__arg args[BENCH__MAX_AXES];
    char id[256];
} bench__instance;

/**
 * Expands an argument grid (bench.h, BENCH_FN's comment) into its combinations: *out (malloc'd,
 * caller frees) holds *n rows of *naxes args each, in the grid's order. Fails with BENCH_EINVAL
 * and a message naming the axis or value at fault, or BENCH_ENOMEM.
 */
int bench__grid_expand(const char *spec, bench__arg **out, size_t *n, size_t *naxes, char *msg,
                       size_t msglen);

/** The value of axis `name` of in's grid as written, or NULL when it has no such axis. */
const char *bench__instance_arg(const bench__instance *in, const char *name);

/**
 * The thread count a descriptor's `threads` asks for: BENCH_THREADS_CPUS is `cpus` (the online
 * CPUs; 1 when unknown, i.e. below 1), 0 or less is 1, anything else itself (not capped: the
 * runner fails a count above BENCH_MAX_THREADS with a message).
 */
int bench__threads_resolve(int threads, long cpus);

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
