/*
 * trials.c: ten benchmarks of different kinds, the program scripts/trials.sh builds in variants
 * to measure how often a comparison's verdicts are right on the machine at hand: a latency chain
 * of integer and one of floating-point operations, a scan of L2-sized and one of memory-sized
 * data, memcpy, qsort, small mallocs, a branchy loop, hash probes and strlen. Each does a fixed
 * amount of work per iteration, so a variant that does N% more of it is N% slower in the chains
 * (latency-bound: time is steps) and about N% slower in the memory scan (bandwidth-bound).
 *
 * Variants are made by compile definitions (CMake cache variables of the same names):
 *   TRIAL_CHAIN_PERMILLE  steps of trial/chain, per mille of 2000 (1020: exactly 2% more)
 *   TRIAL_SCAN_PERMILLE   bytes trial/scan_mem reads, per mille of 32 MiB (1020: 2% more)
 *   TRIAL_UNRELATED_PAD   bytes of an unrelated function placed before every benchmark's code:
 *                         a build that differs only there runs the same benchmarks from other
 *                         code addresses, and must not be reported as changed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <harness/bench.h>

#ifndef TRIAL_CHAIN_PERMILLE
#define TRIAL_CHAIN_PERMILLE 1000
#endif
#ifndef TRIAL_SCAN_PERMILLE
#define TRIAL_SCAN_PERMILLE 1000
#endif
#ifndef TRIAL_UNRELATED_PAD
#define TRIAL_UNRELATED_PAD 0
#endif

#define STR2(x) #x
#define STR(x) STR2(x)

/* Never called: its size moves the code after it. Kept by `used`; the padding is plain nops.
 * `cold` puts it in .text.unlikely, which the linker places before every function of .text (the
 * benchmarks', the harness's): the compiler emits a file's functions in an order of its own, so
 * without it the padding could land after the benchmarks and move nothing. */
__attribute__((used, noinline, cold)) void trial_unrelated(void);
__attribute__((used, noinline, cold)) void trial_unrelated(void)
{
    __asm__ volatile(".skip " STR(TRIAL_UNRELATED_PAD) ", 0x90");
}

BENCH_GROUP(trial);

/* A fixed stream of pseudo-random numbers (xorshift64), so every variant sees the same data. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

__attribute__((noinline)) static uint64_t int_chain(uint64_t x, unsigned steps)
{
    for (unsigned i = 0; i < steps; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x)); /* a chain stays a chain: no closed form */
    }
    return x;
}

BENCH_FN(trial, chain)
{
    const unsigned steps = 2000u * TRIAL_CHAIN_PERMILLE / 1000u;
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = int_chain(bench_black_box(x), steps);
    }
    bench_black_box(x);
}

__attribute__((noinline)) static double fp_chain(double x, unsigned steps)
{
    for (unsigned i = 0; i < steps; i++) {
        x = x * 0.999999 + 1e-7;
        __asm__ volatile("" : "+x"(x));
    }
    return x;
}

BENCH_FN(trial, chain_fp)
{
    double x = 1.0;
    BENCH_ITER(b) {
        x = fp_chain(bench_black_box(x), 1500);
    }
    bench_black_box(x);
}

/* Sums n 32-bit values (vectorised by the compiler). */
__attribute__((noinline)) static uint64_t scan(const uint32_t *v, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

static void scan_bench(bench_t *b, size_t bytes)
{
    size_t n = bytes / sizeof(uint32_t);
    uint32_t *v = malloc(n * sizeof *v);
    if (!v) {
        bench_fail(b, "cannot allocate %zu bytes", bytes);
        return;
    }
    uint64_t seed = 7;
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)next_rand(&seed);
    bench_set_bytes(b, n * sizeof *v);
    BENCH_ITER(b) {
        uint32_t *in = bench_black_box(v); /* the data may have changed: read it every time */
        bench_black_box(scan(in, n));
    }
    free(v);
}

BENCH_FN(trial, scan_l2)
{
    scan_bench(b, 128u << 10);
}

BENCH_FN(trial, scan_mem)
{
    scan_bench(b, (size_t)(32u << 20) / 1000u * TRIAL_SCAN_PERMILLE);
}

BENCH_FN(trial, memcpy)
{
    const size_t n = 256u << 10;
    char *src = malloc(n), *dst = malloc(n);
    if (!src || !dst) {
        free(src);
        free(dst);
        bench_fail(b, "cannot allocate");
        return;
    }
    memset(src, 1, n);
    bench_set_bytes(b, n);
    BENCH_ITER(b) {
        memcpy(bench_black_box(dst), bench_black_box(src), n);
        bench_clobber();
    }
    free(src);
    free(dst);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

BENCH_FN(trial, qsort)
{
    enum { N = 1000, BATCH = 16 };
    static int data[N], work[BATCH][N];
    uint64_t seed = 11;
    for (int i = 0; i < N; i++)
        data[i] = (int)(next_rand(&seed) >> 33);
    BENCH_ITER_BATCHED(b, n, BATCH) {
        for (uint64_t i = 0; i < n; i++) /* untimed: fresh input for each iteration */
            memcpy(work[i], data, sizeof data);
        BENCH_TIMED(b) {
            for (uint64_t i = 0; i < n; i++)
                qsort(work[i], N, sizeof work[i][0], cmp_int);
        }
    }
}

BENCH_FN(trial, malloc_small)
{
    enum { N = 64 };
    void *p[N];
    size_t sizes[N];
    uint64_t seed = 3;
    for (int i = 0; i < N; i++)
        sizes[i] = 16 + (size_t)(next_rand(&seed) % 497);
    BENCH_ITER(b) {
        for (int i = 0; i < N; i++)
            p[i] = bench_black_box(malloc(sizes[i]));
        for (int i = N - 1; i >= 0; i--)
            free(p[i]);
    }
}

__attribute__((noinline)) static uint64_t branchy(const uint8_t *v, size_t n)
{
    uint64_t a = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] & 1)
            a += v[i];
        else
            c ^= (uint64_t)v[i] << (i & 15);
        if (v[i] > 200)
            a -= c;
    }
    return a + c;
}

BENCH_FN(trial, branchy)
{
    enum { N = 4096 };
    static uint8_t v[N];
    uint64_t seed = 5;
    for (int i = 0; i < N; i++)
        v[i] = (uint8_t)next_rand(&seed);
    BENCH_ITER(b) {
        const uint8_t *in = bench_black_box((const uint8_t *)v);
        bench_black_box(branchy(in, N));
    }
}

BENCH_FN(trial, hash_probe)
{
    enum { BITS = 18, SIZE = 1 << BITS, PROBES = 1024 };
    uint64_t *table = calloc(SIZE, sizeof *table);
    uint64_t *keys = malloc(PROBES * sizeof *keys);
    if (!table || !keys) {
        free(table);
        free(keys);
        bench_fail(b, "cannot allocate");
        return;
    }
    uint64_t seed = 13;
    /* Half full, open addressing with linear probing; half the probes hit. */
    for (int i = 0; i < SIZE / 2; i++) {
        uint64_t k = next_rand(&seed) | 1;
        size_t h = (size_t)(k * 0x9e3779b97f4a7c15ULL >> (64 - BITS));
        while (table[h])
            h = (h + 1) & (SIZE - 1);
        table[h] = k;
        if (i < PROBES)
            keys[i] = i % 2 ? k : next_rand(&seed) | 1;
    }
    BENCH_ITER(b) {
        uint64_t found = 0;
        for (int i = 0; i < PROBES; i++) {
            uint64_t k = keys[i];
            size_t h = (size_t)(k * 0x9e3779b97f4a7c15ULL >> (64 - BITS));
            while (table[h] && table[h] != k)
                h = (h + 1) & (SIZE - 1);
            found += table[h] == k;
        }
        bench_black_box(found);
    }
    free(table);
    free(keys);
}

BENCH_FN(trial, strlen)
{
    enum { N = 256 };
    static char buf[N][208];
    uint64_t seed = 17;
    for (int i = 0; i < N; i++) {
        size_t len = 1 + (size_t)(next_rand(&seed) % 200);
        memset(buf[i], 'a' + i % 26, len);
        buf[i][len] = '\0';
    }
    BENCH_ITER(b) {
        size_t total = 0;
        for (int i = 0; i < N; i++)
            total += strlen(bench_black_box((const char *)buf[i]));
        bench_black_box(total);
    }
}
