/*
 * layout.c: layout randomisation of worker processes.
 *
 * Why. Where a process's stack frames, heap blocks and environment land within a page changes
 * how its data falls on cache lines and cache sets, and which addresses alias; the kernel
 * randomises only whole pages (and the stack top within 8 KiB on x86-64). So two builds that
 * differ in an unrelated constant, or only in their file names, place the same benchmark's data
 * at other offsets: their program names and environments differ in length, and every allocation
 * the program made before the benchmark shifts the heap. A benchmark can run several percent
 * faster or slower for that alone (an unchanged small-malloc benchmark measured -5.4% between
 * two such builds), and a comparison of one layout each would report it as a change of the code.
 *
 * How. Each worker process draws its own offsets, uniformly over one page in 16-byte steps, the
 * same way for both programs of a comparison: the manager pads the worker's environment, and the
 * worker allocates a heap block and takes a piece of stack before running its benchmark. Layout
 * then varies from process to process and averages out over them, instead of siding with one
 * program; the spread it adds is measured like any other spread between processes.
 */
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/layout.h"

#define LAYOUT_ENV "BENCH_WORKER_LAYOUT"
#define PAD_ENV "BENCH_WORKER_PAD"

static unsigned draw_offset(bench__rng *rng)
{
    return (unsigned)bench__rng_below(rng, BENCH__LAYOUT_SPAN / BENCH__LAYOUT_STEP) *
           BENCH__LAYOUT_STEP;
}

void bench__layout_draw(bench__rng *rng, bench__layout *out)
{
    out->random = true;
    out->stack = draw_offset(rng);
    out->heap = draw_offset(rng);
    out->env = draw_offset(rng);
}

void bench__layout_export(const bench__layout *l)
{
    if (!l->random)
        return;
    char v[64];
    snprintf(v, sizeof v, "%u %u %u", l->stack, l->heap, l->env);
    setenv(LAYOUT_ENV, v, 1);
    char pad[BENCH__LAYOUT_SPAN + 1];
    unsigned n = l->env < BENCH__LAYOUT_SPAN ? l->env : BENCH__LAYOUT_SPAN;
    memset(pad, 'x', n);
    pad[n] = '\0';
    setenv(PAD_ENV, pad, 1);
}

void bench__layout_unexport(void)
{
    unsetenv(LAYOUT_ENV);
    unsetenv(PAD_ENV);
}

int bench__layout_take(bench__layout *out)
{
    memset(out, 0, sizeof *out);
    const char *v = getenv(LAYOUT_ENV);
    int rc = 0;
    if (v) {
        unsigned s, h, e;
        char end;
        if (sscanf(v, "%u %u %u%c", &s, &h, &e, &end) == 3 && s < BENCH__LAYOUT_SPAN &&
            h < BENCH__LAYOUT_SPAN && e <= BENCH__LAYOUT_SPAN)
            *out = (bench__layout){.random = true, .stack = s, .heap = h, .env = e};
        else
            rc = -1;
    }
    bench__layout_unexport();
    return rc;
}

__attribute__((noinline)) void bench__layout_run(const bench__layout *l, void (*fn)(void *),
                                                 void *arg)
{
    void *heap = l->random && l->heap ? malloc(l->heap) : NULL;
    /* The stack offset: the benchmark's frames start below this block. (alloca of 0 bytes may
     * take nothing; 16 more keep every offset a real allocation.) */
    volatile char *stack = alloca((l->random ? l->stack : 0) + BENCH__LAYOUT_STEP);
    stack[0] = 0;
    /* Both blocks are live until fn returns: the compiler may neither drop nor move them. */
    __asm__ volatile("" : : "r"(heap), "r"(stack) : "memory");
    fn(arg);
    __asm__ volatile("" : : "r"(heap), "r"(stack) : "memory");
    free(heap);
}
