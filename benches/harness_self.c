/*
 * harness_self.c: benchmarks of the harness itself. An empty body shows what a removed loop
 * looks like: in a release build the compiler deletes the empty timed loop, so it measures 0 and
 * is reported as optimised away (it is not the loop's cost: harness/black_box_x64 keeps a body,
 * 64 black-box passes); a known-cost body shows that the harness agrees with an independent
 * stopwatch; the clocks show what a timer read costs here; the rest exercise parameters,
 * throughput and batching.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <harness/bench.h>

#include "known_cost.h"

BENCH_GROUP(harness, .measurement_time = 1.0);

/* Not the timed loop's cost: the compiler deletes the empty loop, and every output says the
 * body was optimised away (under 0.1 ns per iteration), as it would of a user's. */
BENCH_FN(harness, empty)
{
    BENCH_ITER(b) {
    }
}

/* 64 black-box passes of a value that depends on the previous one: what bench_black_box costs
 * on top of the add it guards (divide by 64 for one call). A single call takes under a
 * nanosecond, where one cycle more or less from code or stack placement is tens of percent
 * between processes; 64 in a chain are measured stably. */
BENCH_FN(harness, black_box_x64)
{
    uint64_t x = 0;
    BENCH_ITER(b) {
        for (int i = 0; i < 64; i++)
            x = bench_black_box(x + 1);
    }
    bench_black_box(x);
}

/* 1000 dependent multiply-add steps: about 4 cycles each on current x86-64 cores. The CI gate's
 * own test builds the suite with -DKNOWN_COST_STEPS=N to inject an exact slowdown here. */
#ifndef KNOWN_COST_STEPS
#define KNOWN_COST_STEPS 1000
#endif
/* Built with -DKNOWN_COST_SPANS=1 the chain is a span: paired against a build without, the cost
 * of a span when no trace is asked for (docs/trace.md#spans). */
#ifndef KNOWN_COST_SPANS
#define KNOWN_COST_SPANS 0
#endif
BENCH_FN(harness, known_cost_chain_1000)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
#if KNOWN_COST_SPANS
        bench_span_begin(b, "chain");
#endif
        x = known_cost_chain(x, KNOWN_COST_STEPS);
#if KNOWN_COST_SPANS
        bench_span_end(b, "chain");
#endif
    }
    bench_black_box(x);
}

BENCH_FN(harness, clock_monotonic)
{
    struct timespec ts;
    BENCH_ITER(b) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        bench_black_box(ts.tv_nsec);
    }
}

BENCH_FN(harness, clock_process_cputime)
{
    struct timespec ts;
    BENCH_ITER(b) {
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        bench_black_box(ts.tv_nsec);
    }
}

/* memset over buffers of several sizes: parameters and byte throughput. */
BENCH_FN(harness, memset, BENCH_PARAMS(4096, 262144, 8388608))
{
    size_t n = (size_t)bench_param(b);
    char *buf = malloc(n);
    if (!buf) {
        bench_fail(b, "cannot allocate %zu bytes", n);
        return;
    }
    bench_set_bytes(b, n);
    BENCH_ITER(b) {
        memset(buf, (int)(n & 0x7f), n);
        bench_clobber();
    }
    free(buf);
}

static int cmp_int(const void *a, const void *c)
{
    int x = *(const int *)a, y = *(const int *)c;
    return (x > y) - (x < y);
}

/* Sorting destroys its input: each iteration needs a fresh copy, made outside the timing. */
BENCH_FN(harness, qsort_1k_batched)
{
    enum { N = 1000, BATCH = 64 };
    int *src = malloc(N * sizeof *src);
    int *work = malloc((size_t)BATCH * N * sizeof *work);
    if (!src || !work) {
        free(src);
        free(work);
        bench_fail(b, "out of memory");
        return;
    }
    uint32_t s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        src[i] = (int)(s >> 8);
    }
    bench_set_elements(b, N);
    BENCH_ITER_BATCHED(b, n, BATCH) {
        for (uint64_t i = 0; i < n; i++)
            memcpy(work + i * N, src, N * sizeof *src);
        BENCH_TIMED(b) {
            for (uint64_t i = 0; i < n; i++)
                qsort(work + i * N, N, sizeof *work, cmp_int);
        }
    }
    free(src);
    free(work);
}
