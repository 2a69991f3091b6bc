/*
 * layout.h: where a worker process's stack and heap start (layout.c), drawn at random per
 * process so that layout luck averages out over processes instead of becoming a verdict.
 */
#ifndef HARNESS_LAYOUT_H
#define HARNESS_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats/stats.h"

/** Offsets are multiples of this many bytes (the stack's alignment). */
#define BENCH__LAYOUT_STEP 16
/** Offsets are drawn below this many bytes: one page, the span within which the kernel's own
 * randomisation (whole pages for the heap, code and libraries) leaves placement fixed. */
#define BENCH__LAYOUT_SPAN 4096

/** A worker process's layout: what it shifts before running its benchmark. */
typedef struct bench__layout {
    bool random;     /* drawn (false: the program's own layout, nothing shifted) */
    unsigned stack;  /* bytes of stack taken before the benchmark's frame */
    unsigned heap;   /* bytes of heap allocated (and held) before the benchmark's first malloc */
    unsigned env;    /* bytes of padding in the environment (moves argv/env strings) */
} bench__layout;

/** Draws a layout: each offset uniform over [0, BENCH__LAYOUT_SPAN) in BENCH__LAYOUT_STEP steps. */
void bench__layout_draw(bench__rng *rng, bench__layout *out);

/**
 * Manager side, around starting one worker: puts the layout into this process's environment for
 * the child to inherit (BENCH_WORKER_LAYOUT, and the padding variable BENCH_WORKER_PAD);
 * bench__layout_unexport removes them again. A layout that is not random exports nothing.
 */
void bench__layout_export(const bench__layout *l);
void bench__layout_unexport(void);

/**
 * Worker side: reads the layout the manager exported (none: not random) and removes the
 * variables, so that the benchmark's own environment is the user's. Returns 0, or -1 when the
 * variable is malformed (then *out is not random).
 */
int bench__layout_take(bench__layout *out);

/**
 * Runs fn(arg) with the layout applied: its heap offset allocated and held, its stack offset
 * taken below this frame. Both stay for the whole call and are released after it.
 */
void bench__layout_run(const bench__layout *l, void (*fn)(void *), void *arg);

#endif /* HARNESS_LAYOUT_H */
