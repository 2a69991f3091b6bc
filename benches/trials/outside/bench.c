/*
 * bench.c: twenty benchmarks (ten routines of lib.c, two sizes each) of an outside project for
 * scripts/trials.sh outside: A/A comparisons of two builds whose library code is byte-identical
 * but placed elsewhere. The inputs are fixed pseudo-random data, the same in every build.
 *
 * Two planted changes of a known size, for comparisons that must find them (docs/comparison.md,
 * measured): OUTSIDE_CHAIN_PERMILLE scales the steps of calc/chain/2000 and OUTSIDE_FNV_PERMILLE
 * the bytes of hash/fnv1a/4096, per mille (1000: unchanged). Both are latency chains (one
 * multiply after another), so 1050 is 5% more time and 1200 20% more; the other size of each
 * and the library's code stay as they are.
 */
#include <stdlib.h>
#include <string.h>

#include <harness/bench.h>

#include "lib.h"

#ifndef OUTSIDE_CHAIN_PERMILLE
#define OUTSIDE_CHAIN_PERMILLE 1000
#endif
#ifndef OUTSIDE_FNV_PERMILLE
#define OUTSIDE_FNV_PERMILLE 1000
#endif

static uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void fill(void *p, size_t n, uint64_t seed)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(next_rand(&seed) >> 32);
}

BENCH_FN(sort, isort, BENCH_PARAMS(32, 128))
{
    enum { MAX = 128, BATCH = 16 };
    static int data[MAX], work[BATCH][MAX];
    size_t n = (size_t)bench_param(b);
    fill(data, sizeof data, 1);
    BENCH_ITER_BATCHED(b, k, BATCH) {
        for (uint64_t i = 0; i < k; i++)
            memcpy(work[i], data, n * sizeof data[0]);
        BENCH_TIMED(b) {
            for (uint64_t i = 0; i < k; i++)
                lib_isort(work[i], n);
        }
    }
}

BENCH_FN(search, lower_bound, BENCH_PARAMS(256, 4096))
{
    static int v[4096];
    size_t n = (size_t)bench_param(b);
    for (size_t i = 0; i < n; i++)
        v[i] = (int)(3 * i);
    uint64_t seed = 2;
    BENCH_ITER(b) {
        int key = (int)(next_rand(&seed) % (3 * n));
        bench_black_box(lib_lower_bound(v, n, key));
    }
}

BENCH_FN(map, lookup, BENCH_PARAMS(1024, 65536))
{
    size_t n = (size_t)bench_param(b), cap = 2 * n;
    lib_map m = {calloc(cap, 8), calloc(cap, 8), cap};
    if (!m.keys || !m.values) {
        bench_fail(b, "cannot allocate");
    } else {
        for (size_t i = 1; i <= n; i++)
            lib_map_insert(&m, i * 7919, i);
        uint64_t seed = 3, value = 0;
        BENCH_ITER(b) {
            uint64_t key = (next_rand(&seed) % n + 1) * 7919;
            lib_map_find(&m, key, &value);
            bench_black_box(value);
        }
    }
    free(m.keys);
    free(m.values);
}

BENCH_FN(tok, split, BENCH_PARAMS(64, 1024))
{
    static char text[1025];
    static size_t starts[1024];
    size_t n = (size_t)bench_param(b);
    uint64_t seed = 4;
    for (size_t i = 0; i < n; i++)
        text[i] = next_rand(&seed) % 6 == 0 ? ',' : (char)('a' + next_rand(&seed) % 26);
    text[n] = '\0';
    BENCH_ITER(b) {
        bench_black_box(lib_split(bench_black_box(&text[0]), ',', starts, 1024));
    }
}

BENCH_FN(hash, crc32, BENCH_PARAMS(64, 1024))
{
    static uint8_t buf[1024];
    size_t n = (size_t)bench_param(b);
    fill(buf, sizeof buf, 5);
    bench_set_bytes(b, n);
    BENCH_ITER(b) {
        bench_black_box(lib_crc32(bench_black_box(&buf[0]), n));
    }
}

BENCH_FN(hash, fnv1a, BENCH_PARAMS(64, 4096))
{
    static uint8_t buf[4096 * 2];
    size_t n = (size_t)bench_param(b);
    fill(buf, sizeof buf, 6);
    bench_set_bytes(b, n);
    if (n == 4096)
        n = n * OUTSIDE_FNV_PERMILLE / 1000;
    BENCH_ITER(b) {
        bench_black_box(lib_fnv1a(bench_black_box(&buf[0]), n));
    }
}

BENCH_FN(calc, chain, BENCH_PARAMS(100, 2000))
{
    unsigned steps = (unsigned)bench_param(b);
    uint64_t x = 1;
    if (steps == 2000)
        steps = steps * OUTSIDE_CHAIN_PERMILLE / 1000;
    BENCH_ITER(b) {
        x = lib_chain(bench_black_box(x), steps);
    }
    bench_black_box(x);
}

BENCH_FN(parse, atoi_sum, BENCH_PARAMS(64, 1024))
{
    static char text[1025];
    size_t n = (size_t)bench_param(b);
    uint64_t seed = 8;
    for (size_t i = 0; i < n; i++)
        text[i] = next_rand(&seed) % 5 == 0 ? ' ' : (char)('0' + next_rand(&seed) % 10);
    text[n] = '\0';
    BENCH_ITER(b) {
        bench_black_box(lib_atoi_sum(bench_black_box(&text[0])));
    }
}

BENCH_FN(scan, count_byte, BENCH_PARAMS(256, 16384))
{
    static uint8_t buf[16384];
    size_t n = (size_t)bench_param(b);
    fill(buf, sizeof buf, 9);
    bench_set_bytes(b, n);
    BENCH_ITER(b) {
        bench_black_box(lib_count_byte(bench_black_box(&buf[0]), n, 7));
    }
}

BENCH_FN(scan, memcmp_words, BENCH_PARAMS(64, 4096))
{
    static uint64_t x[4096], y[4096];
    size_t n = (size_t)bench_param(b);
    fill(x, sizeof x, 10);
    memcpy(y, x, sizeof x);
    BENCH_ITER(b) {
        bench_black_box(lib_memcmp_words(bench_black_box(&x[0]), bench_black_box(&y[0]), n));
    }
}
