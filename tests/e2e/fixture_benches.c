/*
 * fixture_benches.c: the well-behaved half of e2e_fixture, the program that tests/e2e/test_cli.py
 * drives. Together with fixture_more.c (a second file, to show that several files add benchmarks
 * to one program with no main() of their own) it registers benchmarks whose behaviour is known,
 * so the tests can check what the real bench program reports about them.
 *
 * Group `fix`: fast benchmarks that always succeed. fix/copy is parameterised (8, 64, 1024: the
 * numeric order differs from the string order, to check how ids sort) and declares one byte per
 * parameter unit as throughput. fix/counted and fix/batched count the iterations they really ran
 * and print the counts as one line on stderr (`e2e_fixture: ID key=value ...`), so a test can
 * compare them with the iteration counts in the JSON results.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <harness/bench.h>

/* Short defaults, so a run without timing flags stays short too; the tests still pass flags. */
BENCH_GROUP(fix, .warm_up_time = 0.02, .measurement_time = 0.1);

/* A dependent chain of black-boxed additions: a few dozen ns that the compiler cannot remove. */
static uint64_t chain(uint64_t x, int steps)
{
    for (int i = 0; i < steps; i++)
        x = bench_black_box(x + (uint64_t)i);
    return x;
}

BENCH_FN(fix, a)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = chain(x, 8);
    }
    bench_black_box(x);
}

BENCH_FN(fix, add)
{
    uint64_t x = 2;
    BENCH_ITER(b) {
        x = bench_black_box(x + 3);
    }
    bench_black_box(x);
}

/* Copies PARAM bytes per iteration and says so: throughput in B/s equal to the parameter. */
BENCH_FN(fix, copy, BENCH_PARAMS(8, 64, 1024))
{
    size_t n = (size_t)bench_param(b);
    char *src = malloc(n), *dst = malloc(n);
    if (!src || !dst) {
        free(src);
        free(dst);
        bench_fail(b, "cannot allocate 2 x %zu bytes", n);
        return;
    }
    memset(src, 0x5a, n);
    bench_set_bytes(b, n);
    BENCH_ITER(b) {
        memcpy(dst, src, n);
        bench_clobber();
    }
    free(src);
    free(dst);
}

/* Counts every iteration the timed loop runs (warm-up included). */
BENCH_FN(fix, counted)
{
    uint64_t iterations = 0, x = 3;
    BENCH_ITER(b) {
        x = chain(x, 4);
        iterations++;
    }
    bench_black_box(x);
    fprintf(stderr, "e2e_fixture: %s iterations=%" PRIu64 "\n", bench_id(b), iterations);
}

/* Counts the routine calls, batches and setups of a batched loop (warm-up included). */
BENCH_FN(fix, batched)
{
    enum { MAX_BATCH = 16 };
    uint64_t input[MAX_BATCH];
    uint64_t routine_calls = 0, batches = 0, setups = 0, largest = 0, smallest = UINT64_MAX;
    BENCH_ITER_BATCHED(b, n, MAX_BATCH) {
        batches++;
        largest = n > largest ? n : largest;
        smallest = n < smallest ? n : smallest;
        for (uint64_t i = 0; i < n && i < MAX_BATCH; i++) {
            input[i] = i + batches; /* untimed setup of one input */
            setups++;
        }
        BENCH_TIMED(b) {
            for (uint64_t i = 0; i < n && i < MAX_BATCH; i++) {
                input[i] = chain(input[i], 16);
                routine_calls++;
            }
        }
    }
    bench_black_box(input[0]);
    fprintf(stderr,
            "e2e_fixture: %s routine_calls=%" PRIu64 " batches=%" PRIu64 " setups=%" PRIu64
            " largest_batch=%" PRIu64 " smallest_batch=%" PRIu64 " max_batch=%d\n",
            bench_id(b), routine_calls, batches, setups, largest, batches ? smallest : 0,
            MAX_BATCH);
}
