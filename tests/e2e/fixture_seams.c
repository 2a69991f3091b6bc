/*
 * fixture_seams.c: e2e_seams, one program with every kind of benchmark the harness offers, for
 * the seam matrix (tests/e2e/test_seams.py), which runs it through every mode and output.
 *
 * Every timed body is an x86-64 assembly loop whose instruction count per iteration is known
 * from the source (ROUND_INSNS instructions a round, plus the loop's one set-up instruction), and
 * whose time is its rounds (each round waits for the one before: a chain of multiplies).
 *
 * "Another build" is a copy of the program with the marker "E2ESLOW<N>" appended to its file
 * (fixture_marker.h). That copy has two planted changes of known size, and nothing else changes:
 * - seam/plain runs N% more rounds: N% more time and N% more instructions (a regression);
 * - seam/counted runs N% fewer rounds (an improvement) while its counter `probes` goes from 7 to
 *   8 per iteration: a mode that read a counter as the instruction count or the time would call
 *   the improvement a regression.
 * The counters are exact: probes 7 (or 8) and hits 3 (a rate counter) per iteration.
 */
#include <stdint.h>
#include <string.h>

#include <harness/bench.h>

#include "fixture_marker.h"

/* Instructions of one round of the chain below. */
enum { ROUND_INSNS = 3, PLAIN_ROUNDS = 3000, COUNTED_ROUNDS = 2000, SMALL_ROUNDS = 400 };

/* The planted change's size in percent: N of this program's marker, or 0. */
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

#if defined(__x86_64__)
/* `rounds` rounds of ROUND_INSNS instructions (imul, dec, jnz) after one mov: a dependent
 * multiply chain, so time is rounds. */
static inline uint64_t chain(uint64_t x, uint64_t rounds)
{
    __asm__ volatile("mov %2, %%rcx\n"
                     "1:\n\t"
                     "imul %1, %0\n\t"
                     "dec %%rcx\n\t"
                     "jnz 1b\n"
                     : "+r"(x)
                     : "r"((uint64_t)6364136223846793005ULL), "r"(rounds)
                     : "rcx", "cc");
    return x;
}
#define CHAIN_OK 1
#else
static inline uint64_t chain(uint64_t x, uint64_t rounds)
{
    return fixture_chain(x, (unsigned)rounds);
}
#define CHAIN_OK 0
#endif

/* Skips the benchmark where the chain is not the assembly loop (its counts would not be known). */
#define NEED_X86(b)                                                                                \
    do {                                                                                           \
        if (!CHAIN_OK) {                                                                           \
            bench_skip(b, "x86-64 only");                                                          \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* The timed loop of a body: `rounds` rounds per iteration. */
static void chain_loop(bench_t *b, uint64_t rounds)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = chain(x, rounds);
    }
    bench_black_box(x);
}

BENCH_GROUP(seam, .warm_up_time = 0.02, .measurement_time = 0.15);

/* The first planted change: N% more rounds. */
BENCH_FN(seam, plain)
{
    NEED_X86(b);
    chain_loop(b, (uint64_t)(PLAIN_ROUNDS * (1.0 + planted() / 100.0) + 0.5));
}

/* The second: N% fewer rounds, one more probe per iteration. */
BENCH_FN(seam, counted, .counters = "probes,hits")
{
    NEED_X86(b);
    uint64_t rounds = (uint64_t)(COUNTED_ROUNDS * (1.0 - planted() / 100.0) + 0.5);
    double probes = planted() > 0 ? 8 : 7;
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = chain(x, rounds);
        bench_counter(b, "probes", probes, BENCH_COUNTER_PER_ITERATION);
        bench_counter(b, "hits", 3, BENCH_COUNTER_RATE);
    }
    bench_black_box(x);
}

/* Parameters: PARAM rounds. */
BENCH_FN(seam, param, BENCH_PARAMS(500, 1000))
{
    NEED_X86(b);
    chain_loop(b, (uint64_t)bench_param(b));
}

/* An argument grid: size x load rounds. */
BENCH_FN(seam, grid, .args = "size=200,400 load=1,2")
{
    NEED_X86(b);
    chain_loop(b, (uint64_t)bench_arg(b, "size") * (uint64_t)bench_arg(b, "load"));
}

/* Two threads, each SMALL_ROUNDS rounds per iteration. */
BENCH_FN(seam, threads, .threads = 2)
{
    NEED_X86(b);
    chain_loop(b, SMALL_ROUNDS);
}

/* A batched loop: untimed set-up of each input, SMALL_ROUNDS rounds timed per input. */
BENCH_FN(seam, batched)
{
    NEED_X86(b);
    enum { MAX_BATCH = 64 };
    uint64_t input[MAX_BATCH];
    BENCH_ITER_BATCHED(b, n, MAX_BATCH) {
        for (uint64_t i = 0; i < n; i++)
            input[i] = i + 1;
        BENCH_TIMED(b) {
            for (uint64_t i = 0; i < n; i++)
                input[i] = chain(input[i], SMALL_ROUNDS);
        }
    }
    bench_black_box(input[0]);
}

/* Throughput: 4096 bytes per iteration (and SMALL_ROUNDS rounds of time). */
BENCH_FN(seam, bytes)
{
    NEED_X86(b);
    bench_set_bytes(b, 4096);
    chain_loop(b, SMALL_ROUNDS);
}

BENCH_FN(seam, skipped)
{
    bench_skip(b, "seam fixture: skipped on purpose");
    chain_loop(b, 1);
}

BENCH_FN(seam, failed)
{
    bench_fail(b, "seam fixture: failed on purpose");
    chain_loop(b, 1);
}
