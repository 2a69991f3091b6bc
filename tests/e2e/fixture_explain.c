/*
 * fixture_explain.c: e2e_explain, benchmarks that share helper functions, for --explain
 * (tests/e2e/test_explain.py).
 *
 * Three helpers, each a latency-bound chain (fixture_marker.h: time is steps), kept out of line
 * so that profiles and callgrind see them as functions: shared_mix (used by explain/mixed and
 * explain/both), shared_hash (by explain/mixed and explain/hash) and shared_copy (by
 * explain/both and explain/hash). "Another build" is a copy of the program with the marker
 * "E2ESLOW<N>" appended to its file: in it shared_mix alone takes N% more steps, so
 * explain/mixed and explain/both change and explain/hash does not, and the change of each is
 * shared_mix's, in time and in instructions.
 */
#include <stdint.h>

#include <harness/bench.h>

#include "fixture_marker.h"

/* Chain steps of each helper per iteration (shared_mix's before the planted change). */
enum { MIX_STEPS = 2000, HASH_STEPS = 1000, COPY_STEPS = 600 };

/* N of this program's marker, or 0. */
static double planted(void)
{
    static double percent = -1;
    if (percent < 0) {
        char tail[33];
        fixture_tail(tail);
        percent = fixture_slow_percent(tail);
    }
    return percent;
}

static unsigned mix_steps;

__attribute__((noinline)) static uint64_t shared_mix(uint64_t x)
{
    return fixture_chain(x, mix_steps);
}

__attribute__((noinline)) static uint64_t shared_hash(uint64_t x)
{
    return fixture_chain(x ^ 0x9e3779b97f4a7c15ULL, HASH_STEPS);
}

__attribute__((noinline)) static uint64_t shared_copy(uint64_t x)
{
    return fixture_chain(x + 7, COPY_STEPS);
}

static void set_up(void)
{
    mix_steps = (unsigned)(MIX_STEPS * (1.0 + planted() / 100.0) + 0.5);
}

BENCH_GROUP(explain, .warm_up_time = 0.02, .measurement_time = 0.15);

/* shared_hash then shared_mix: changes with shared_mix. */
BENCH_FN(explain, mixed)
{
    set_up();
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = shared_mix(shared_hash(x));
    }
    bench_black_box(x);
}

/* shared_copy then shared_mix: changes with shared_mix. */
BENCH_FN(explain, both)
{
    set_up();
    uint64_t x = 3;
    BENCH_ITER(b) {
        x = shared_mix(shared_copy(x));
    }
    bench_black_box(x);
}

/* shared_hash then shared_copy: unchanged. */
BENCH_FN(explain, hash)
{
    set_up();
    uint64_t x = 5;
    BENCH_ITER(b) {
        x = shared_copy(shared_hash(x));
    }
    bench_black_box(x);
}
