/*
 * alloc_shim.h: the interface between the allocation-counting shim (alloc_shim.c, built as
 * libharness_alloc.so and loaded with LD_PRELOAD) and the harness library (alloc.c), which finds
 * it at run time with dlsym: the library itself never defines malloc.
 */
#ifndef HARNESS_ALLOC_SHIM_H
#define HARNESS_ALLOC_SHIM_H

#include <stdint.h>

/* Bumped whenever the struct below changes: a library only uses a shim of its own version. */
#define BENCH__ALLOC_SHIM_ABI 1

/* The symbol the library looks up (dlsym(RTLD_DEFAULT, ...)) to find a loaded shim. */
#define BENCH__ALLOC_SHIM_SYMBOL "bench__alloc_shim_api"

/** The counters of the shim. All functions are async-signal-safe and never allocate. */
typedef struct bench__alloc_counters {
    int abi; /* BENCH__ALLOC_SHIM_ABI */
    /* Turns counting on (1) or off (0) for every thread. */
    void (*set_counting)(int on);
    /* Since the process started, counted while counting was on: successful allocations and the
     * bytes they asked for. */
    void (*read)(uint64_t *allocs, uint64_t *bytes);
    /* Sets the live-heap level and its peak to 0 (the level at a benchmark's attach). */
    void (*reset_live)(void);
    /* The highest live heap above the level at reset_live, in usable bytes (>= 0). */
    long long (*peak)(void);
} bench__alloc_counters;

/** Defined by the shim only. */
const bench__alloc_counters *bench__alloc_shim_api(void);

#endif /* HARNESS_ALLOC_SHIM_H */
