/*
 * fixture_more.c: the second file of e2e_fixture (see fixture_benches.c). It adds one more
 * benchmark to group `fix`, a group `more` with element throughput given as a setting, a group
 * `clock` whose time per iteration has a known lower bound, and the group `trouble`: benchmarks
 * that skip, fail, crash (bad access, abort, stack overflow) or misuse the timed loop. The tests
 * select those by exact id only (a run of everything would stop at the first crash); the group
 * sorts after the good ones, so a good benchmark can run, and report, before a crash.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <harness/bench.h>

#include "fixture_marker.h"

/* Defined in this file although group `fix` has its BENCH_GROUP in fixture_benches.c. */
BENCH_FN(fix, b)
{
    uint64_t x = 5;
    BENCH_ITER(b) {
        x = bench_black_box(x * 3 + 1);
    }
    bench_black_box(x);
}

/* Ten elements per iteration, declared as a setting rather than by a call. */
BENCH_FN(more, elements, .elements_per_iter = 10, .warm_up_time = 0.02,
         .measurement_time = 0.1)
{
    uint64_t v[10] = {0};
    BENCH_ITER(b) {
        for (int i = 0; i < 10; i++)
            v[i] = bench_black_box(v[i] + (uint64_t)i);
    }
    bench_black_box(v[9]);
}

/* At least 2 µs an iteration on any machine: each iteration waits on CLOCK_MONOTONIC, the clock
 * the harness times with, so no sample's time per iteration, and no median, can be below 2000 ns.
 * For tests of output whose layout depends on a number's size (thousands separators). */
BENCH_FN(clock, at_least_2us, .warm_up_time = 0.01, .measurement_time = 0.05)
{
    BENCH_ITER(b) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
            clock_gettime(CLOCK_MONOTONIC, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 2000);
    }
}

/* Skips before its timed loop, which must then run no iteration. */
BENCH_FN(trouble, skip)
{
    uint64_t iterations = 0;
    bench_skip(b, "needs a frobnicator (e2e skip reason %d)", 42);
    BENCH_ITER(b) {
        iterations++;
    }
    fprintf(stderr, "e2e_fixture: %s iterations=%" PRIu64 "\n", bench_id(b), iterations);
}

/* Fails inside its timed loop; the loop must stop and the other benchmarks still run. */
BENCH_FN(trouble, fail)
{
    uint64_t iterations = 0;
    BENCH_ITER(b) {
        if (++iterations == 3)
            bench_fail(b, "deliberate failure: checksum %d != %d", 1, 2);
    }
}

/* Crashes with a real invalid memory access (not a raise()): the harness must name it. */
BENCH_FN(trouble, crash)
{
    volatile int *volatile wild = (volatile int *)(uintptr_t)64;
    BENCH_ITER(b) {
        *wild = 1;
    }
}

/* Aborts, as a failed assert() would. */
BENCH_FN(trouble, abort)
{
    BENCH_ITER(b) {
        abort();
    }
}

/* Recursion far deeper than any stack: 512 bytes a frame, a billion frames. */
static int deep(int n)
{
    volatile char pad[512];
    memset((char *)pad, n & 0x7f, sizeof pad);
    if (n > 1000000000)
        return 0;
    return deep(n + 1) + pad[n % 512];
}

/* Overflows the stack: the handler must still report it (it runs on an alternate stack). */
BENCH_FN(trouble, stack_overflow)
{
    int r = 0;
    BENCH_ITER(b) {
        r += deep(1);
    }
    bench_black_box(r);
}

/* Calls exit(0) inside the timed loop, as a library under test might on an error path: in worker
 * processes this ends the worker only, and the benchmark is reported as exited. */
BENCH_FN(trouble, exits)
{
    BENCH_ITER(b) {
        fflush(stdout);
        exit(0);
    }
}

/* Never finishes a sample (an endless wait for something that never comes): --timeout stops it. */
BENCH_FN(trouble, hang)
{
    BENCH_ITER(b) {
        for (;;)
            sleep(60);
    }
}

/* Never runs a timed loop. */
BENCH_FN(trouble, no_iter)
{
    bench_black_box(b);
}

/* Runs the timed loop twice: misuse the harness must report. */
BENCH_FN(trouble, iter_twice)
{
    uint64_t x = 0;
    BENCH_ITER(b) {
        x = bench_black_box(x + 1);
    }
    BENCH_ITER(b) {
        x = bench_black_box(x + 1);
    }
}

/* A latency-bound chain whose length the environment can stretch (E2E_SLOWDOWN_PERCENT), so a
 * comparison test can make exactly this benchmark slower or faster than its baseline. */
BENCH_GROUP(cmp, .warm_up_time = 0.05, .measurement_time = 0.3);

/*
 * The chain's slowdown in percent: E2E_SLOWDOWN_PERCENT, plus N when the program file ends with
 * the marker "E2ESLOW<N>\n". A copy of this program with that appended is "a new build" that is
 * N% slower, and stays so when copied again (a baseline's program snapshot), while the original,
 * run beside it, is not.
 */
static double slowdown_percent(void)
{
    const char *pct = getenv("E2E_SLOWDOWN_PERCENT");
    char tail[33];
    fixture_tail(tail);
    return (pct ? atof(pct) : 0.0) + fixture_slow_percent(tail);
}

BENCH_FN(cmp, chain)
{
    unsigned steps = (unsigned)(2000.0 * (1.0 + slowdown_percent() / 100.0));
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = fixture_chain(x, steps);
    }
    bench_black_box(x);
}

BENCH_FN(cmp, steady)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = fixture_chain(x, 500);
    }
    bench_black_box(x);
}

/*
 * Group `heap`: selection independence. heap/a_leaves_state allocates and frees a 16 MiB block
 * per iteration: glibc serves it with mmap and, when it is freed, raises its mmap threshold to
 * 16 MiB and its trim threshold to twice that, for the rest of the process. heap/b_sensitive
 * allocates 4 MiB in blocks of 64 KiB (from the heap, below any mmap threshold), touches and
 * frees them per iteration: with glibc's default trim threshold (128 KiB) the freed top of the
 * heap goes back to the system and the next iteration faults its 1024 pages in again; after
 * heap/a_leaves_state in the same process nothing is trimmed and the pages stay. Measured in its
 * own processes it must not care which benchmark ran before it.
 */
BENCH_GROUP(heap, .warm_up_time = 0.02, .measurement_time = 0.1);

#define HEAP_BLOCK ((size_t)64 << 10)

BENCH_FN(heap, a_leaves_state)
{
    BENCH_ITER(b) {
        char *p = malloc((size_t)16 << 20);
        if (p)
            p[0] = 1;
        bench_black_box(p);
        free(p);
    }
}

BENCH_FN(heap, b_sensitive)
{
    enum { N = 64 };
    char *blocks[N];
    BENCH_ITER(b) {
        for (size_t i = 0; i < N; i++) {
            blocks[i] = malloc(HEAP_BLOCK);
            for (size_t k = 0; blocks[i] && k < HEAP_BLOCK; k += 4096)
                blocks[i][k] = (char)k;
        }
        bench_black_box(blocks[0]);
        for (size_t i = N; i-- > 0;)
            free(blocks[i]);
    }
}
