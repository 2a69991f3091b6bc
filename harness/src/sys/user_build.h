/*
 * user_build.h: how the user's benchmark files were compiled, as BENCH_FN recorded it in each
 * translation unit (bench.h: compiler, BENCH_BUILD_* bits, source revision). The run context
 * carries the list (context.benchmark_builds in JSON), and a run warns once about benchmarks
 * compiled without optimisation: their timings say little about the optimised program.
 *
 * Invariant: one entry per distinct (file, compiler, flags, revision) among the selected
 * benchmarks, in the order of their first benchmark (the registry's sorted order), so output is
 * deterministic; descriptors made without BENCH_FN (no BENCH_BUILD_RECORDED) are left out.
 */
#ifndef HARNESS_USER_BUILD_H
#define HARNESS_USER_BUILD_H

#include "core/registry.h"
#include "sys/context.h"

/** One file's build and the ids of the selected benchmarks it defines. */
typedef struct bench__user_build {
    const char *file;     /* __FILE__ of the BENCH_FNs (the user program's static storage) */
    const char *compiler; /* e.g. "gcc 12.2.0" (the same) */
    unsigned flags;       /* BENCH_BUILD_* bits */
    const char *revision; /* BENCH_BUILD_REVISION of the file; "" unknown (the same storage) */
    const char **ids;     /* the benchmarks' ids, pointing into the instance list */
    size_t nids;
} bench__user_build;

/** Every build among a run's benchmarks. */
typedef struct bench__user_builds {
    bench__user_build *v;
    size_t n;
    const char **ids; /* storage of every entry's ids */
} bench__user_builds;

/**
 * Fills *out from the selected instances (selected NULL: all). The ids point into `all`, which
 * must outlive *out. Returns 0 or BENCH_ENOMEM; release with bench__user_builds_destroy.
 */
int bench__user_builds_init(bench__user_builds *out, const bench__instance *all,
                            const bool *selected, size_t n);
/** Releases what init allocated; safe on a zeroed or destroyed value. */
void bench__user_builds_destroy(bench__user_builds *b);

/** True when an entry's file was compiled without optimisation (-O0: no __OPTIMIZE__). */
bool bench__user_build_unoptimised(const bench__user_build *u);

/**
 * The one warning about unoptimised benchmark files, naming them ("benchmarks in bench.c were
 * compiled without optimisation (-O0): ..."), into buf; returns buf, or NULL when every file was
 * optimised (buf then empty). File names are escaped.
 */
const char *bench__user_builds_warning(const bench__user_builds *b, char *buf, size_t len);

/** Sets c->user_builds and adds the warning, if any, to the context's warnings. */
void bench__user_builds_attach(bench__context *c, const bench__user_builds *b);

/**
 * How the program at `exe` (normally "/proc/self/exe") was compiled, as its compiler recorded it
 * (program_build.c): the DWARF producer of the compilation unit of one of b's files, else the
 * .GCC.command.line section. Fills *out; flags "" and source "none" when the executable records
 * none (built without -g or -frecord-gcc-switches), whatever the harness library was built with.
 */
void bench__program_build_read(const char *exe, const bench__user_builds *b,
                               bench__program_build *out);

#endif /* HARNESS_USER_BUILD_H */
