/*
 * fixture_signed.c: a user's counter that adds negative values (bench_counter, docs/api.md), for
 * test_user_counters.py (built as e2e_signed).
 *
 * - signed/balance: a short chain of multiply-adds per iteration, and its counter `balance` adds
 *   -2.5 each iteration (a balance drawn down): every estimate of it per iteration is exactly
 *   -2.5, below 0, where a time or an event count can never be.
 */
#include <stdint.h>

#include <harness/bench.h>

BENCH_FN(signed, balance, .counters = "balance")
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        for (unsigned i = 0; i < 100; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            __asm__ volatile("" : "+r"(x));
        }
        bench_counter(b, "balance", -2.5, BENCH_COUNTER_PER_ITERATION);
    }
    bench_black_box(x);
}
