/*
 * fixture_growth.c: benchmarks whose work grows with their parameter in a known way, for the
 * complexity fit (e2e/growth). Each iteration runs a latency-bound chain (fixture_marker.h: each
 * step waits for the one before, so time is steps) of exactly N, N log2 N or N^2 steps, plus a
 * fixed few for the call itself (small enough beside the smallest N that each class fits within
 * the 5% rms that names it). Also the user's counters (bench_counter): exact counts per
 * iteration, a rate, a counter that was not declared, and one in a benchmark that declares none.
 */
#include <math.h>
#include <stdint.h>

#include "harness/bench.h"
#include "fixture_marker.h"

BENCH_FN(growth, linear, BENCH_PARAMS(512, 1024, 2048, 4096, 8192), .warm_up_time = 0.02,
         .measurement_time = 0.15)
{
    unsigned steps = (unsigned)bench_param(b);
    fixture_chain_loop(b, steps);
}

BENCH_FN(growth, n_log_n, BENCH_PARAMS(256, 1024, 4096, 16384, 65536), .warm_up_time = 0.02,
         .measurement_time = 0.15)
{
    double n = (double)bench_param(b);
    unsigned steps = (unsigned)(n * log2(n) / 8);
    fixture_chain_loop(b, steps);
}

BENCH_FN(growth, quadratic, BENCH_PARAMS(24, 48, 96, 192, 384), .warm_up_time = 0.02,
         .measurement_time = 0.15)
{
    unsigned n = (unsigned)bench_param(b);
    fixture_chain_loop(b, n * n);
}

BENCH_FN(count, exact, .counters = "hits,bytes_seen", .warm_up_time = 0.01,
         .measurement_time = 0.05)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = fixture_chain(x, 64);
        bench_counter(b, "hits", 3, BENCH_COUNTER_PER_ITERATION);
        bench_counter(b, "bytes_seen", 64, BENCH_COUNTER_RATE);
    }
    bench_black_box(x);
}

BENCH_FN(count, undeclared, .counters = "hits", .warm_up_time = 0.01, .measurement_time = 0.05)
{
    BENCH_ITER(b) {
        bench_counter(b, "misses", 1, 0);
    }
}

BENCH_FN(count, no_counters, .warm_up_time = 0.01, .measurement_time = 0.05)
{
    BENCH_ITER(b) {
        bench_counter(b, "hits", 1, 0);
    }
}
