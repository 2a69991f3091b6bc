/*
 * fixture_placement.c: e2e_placement*, two benchmarks for the code identity (test_placement.py).
 * place/isort sorts a small array with an out-of-line insertion sort (a callee), place/sum sums
 * one. Built three times from this file: as is (e2e_placement); with PLACEMENT_PAD bytes of
 * unrelated code before the benchmarks' code (e2e_placement_pad: the same code, placed that much
 * later); and with PLACEMENT_CHANGED (e2e_placement_changed), where the insertion sort orders by
 * another key: a real change in a callee of place/isort only.
 */
#include <stddef.h>
#include <stdint.h>

#include <harness/bench.h>

#define STR_(x) #x
#define STR(x) STR_(x)

#ifdef PLACEMENT_PAD
/* Unrelated code before the benchmarks': every function after it moves by PLACEMENT_PAD bytes. */
__attribute__((used, noinline)) static void placement_pad(void)
{
    __asm__ volatile(".fill " STR(PLACEMENT_PAD) ", 1, 0x90");
}
#endif

#ifdef PLACEMENT_CHANGED
#define KEY(v) ((v) ^ 1u)
#else
#define KEY(v) (v)
#endif

enum { N = 48 };

__attribute__((noinline)) static void isort(uint32_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t v = a[i];
        size_t j = i;
        while (j > 0 && KEY(a[j - 1]) > KEY(v)) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

__attribute__((noinline)) static uint64_t sum(const uint32_t *a, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i];
    return s;
}

BENCH_GROUP(place, .warm_up_time = 0.01, .measurement_time = 0.05);

BENCH_FN(place, isort)
{
    uint32_t a[N];
    uint32_t x = 12345;
    BENCH_ITER(b) {
        for (size_t i = 0; i < N; i++)
            a[i] = x = x * 1103515245u + 12345u;
        isort(a, N);
        bench_black_box(a[0]);
    }
}

BENCH_FN(place, sum)
{
    uint32_t a[N];
    for (size_t i = 0; i < N; i++)
        a[i] = (uint32_t)(i * 7);
    uint32_t *p = a;
    BENCH_ITER(b) {
        p = bench_black_box(p);
        uint64_t s = sum(p, N);
        bench_black_box(s);
    }
}
