/*
 * AVX2 kernels, compiled with a per-function target attribute (the rest of the build stays
 * baseline x86-64, so the library runs anywhere, valgrind included) and selected at run time.
 * Invariant: each kernel returns exactly what its twin in wl_kernels_scalar.c returns. Four 8-float
 * accumulators hold p[0..31]; a chunk of 32 elements adds element j to accumulator (j % 32) / 8,
 * lane j % 8, with a separate multiply and add (no FMA); a tail of fewer than 32 elements is
 * copied into a zero-padded chunk (adding +0 leaves an accumulator unchanged, since one that
 * starts at +0 can never hold -0); the combining tree is the one in wl__combine32. Two kernels
 * fuse multiply and add where the CPU has FMA: the compute probe, since only its rate matters,
 * and the batched dot products (dots_multi), whose portable twin fuses too (fmaf), so the two
 * paths still agree bit for bit.
 */
#include "wl_internal.h"

#if WL__HAVE_AVX2

#include <immintrin.h>
#include <string.h>

#define WL__AVX2 __attribute__((target("avx2")))

/* ((a0 + a1) + (a2 + a3)), then lanes l + l+4, l + l+2, and the last pair: wl__combine32. */
WL__AVX2 static inline float combine_avx2(__m256 a0, __m256 a1, __m256 a2, __m256 a3)
{
    __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    __m128 t = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    __m128 u = _mm_add_ps(t, _mm_movehl_ps(t, t));
    __m128 r = _mm_add_ss(u, _mm_shuffle_ps(u, u, 1));
    return _mm_cvtss_f32(r);
}

WL__AVX2 static inline float dot_avx2_inline(const float *a, const float *b, size_t n)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
    size_t j = 0;
    for (; j + WL__LANES <= n; j += WL__LANES) {
        acc0 = _mm256_add_ps(acc0, _mm256_mul_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j)));
        acc1 = _mm256_add_ps(acc1,
                             _mm256_mul_ps(_mm256_loadu_ps(a + j + 8), _mm256_loadu_ps(b + j + 8)));
        acc2 = _mm256_add_ps(acc2, _mm256_mul_ps(_mm256_loadu_ps(a + j + 16),
                                                 _mm256_loadu_ps(b + j + 16)));
        acc3 = _mm256_add_ps(acc3, _mm256_mul_ps(_mm256_loadu_ps(a + j + 24),
                                                 _mm256_loadu_ps(b + j + 24)));
    }
    if (j < n) {
        float ta[WL__LANES] = {0}, tb[WL__LANES] = {0};
        memcpy(ta, a + j, (n - j) * sizeof(float));
        memcpy(tb, b + j, (n - j) * sizeof(float));
        acc0 = _mm256_add_ps(acc0, _mm256_mul_ps(_mm256_loadu_ps(ta), _mm256_loadu_ps(tb)));
        acc1 = _mm256_add_ps(acc1, _mm256_mul_ps(_mm256_loadu_ps(ta + 8), _mm256_loadu_ps(tb + 8)));
        acc2 = _mm256_add_ps(acc2,
                             _mm256_mul_ps(_mm256_loadu_ps(ta + 16), _mm256_loadu_ps(tb + 16)));
        acc3 = _mm256_add_ps(acc3,
                             _mm256_mul_ps(_mm256_loadu_ps(ta + 24), _mm256_loadu_ps(tb + 24)));
    }
    return combine_avx2(acc0, acc1, acc2, acc3);
}

WL__AVX2 static float dot_avx2(const float *a, const float *b, size_t n)
{
    return dot_avx2_inline(a, b, n);
}

WL__AVX2 static float sum_avx2(const float *buf, size_t n)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
    size_t j = 0;
    for (; j + WL__LANES <= n; j += WL__LANES) {
        acc0 = _mm256_add_ps(acc0, _mm256_loadu_ps(buf + j));
        acc1 = _mm256_add_ps(acc1, _mm256_loadu_ps(buf + j + 8));
        acc2 = _mm256_add_ps(acc2, _mm256_loadu_ps(buf + j + 16));
        acc3 = _mm256_add_ps(acc3, _mm256_loadu_ps(buf + j + 24));
    }
    if (j < n) {
        float t[WL__LANES] = {0};
        memcpy(t, buf + j, (n - j) * sizeof(float));
        acc0 = _mm256_add_ps(acc0, _mm256_loadu_ps(t));
        acc1 = _mm256_add_ps(acc1, _mm256_loadu_ps(t + 8));
        acc2 = _mm256_add_ps(acc2, _mm256_loadu_ps(t + 16));
        acc3 = _mm256_add_ps(acc3, _mm256_loadu_ps(t + 24));
    }
    return combine_avx2(acc0, acc1, acc2, acc3);
}

WL__AVX2 static void dots_avx2(const float *q, const float *rows, size_t count, size_t dim,
                               float *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = dot_avx2_inline(q, rows + i * dim, dim);
}

/*
 * The batched dot products, fused: the lane structure of dot_avx2_inline (element j into
 * accumulator (j % 32) / 8, lane j % 8, in increasing j; the combining tree of wl__combine32),
 * but each step is one FMA, acc = fma(q, r, acc), rounded once instead of after the multiply and
 * after the add. So a score differs from the single query's in the last bits (docs/workloads.md
 * gives the bound); every pair is computed the same way whatever the block it falls in, so the
 * result does not depend on how the queries are batched, and it equals the portable twin
 * (wl_kernels_scalar.c, fmaf) bit for bit.
 *
 * Register blocking over 3 queries x 3 rows. Each of the four accumulators of a pair is a chain
 * of its own, so the four are computed one after another: pass g walks the chunks with a stride
 * of 32 floats and keeps one accumulator per pair, 9 in all, in registers beside the 3 query
 * vectors and 1 row vector (14 of the 16 ymm registers). A step is 6 loads and 9 FMAs (15
 * instructions where multiply then add took 24), so the two FMA pipes, not instruction issue,
 * set the pace; the 3 query rows and 3 candidate rows (6 x 4D bytes) stay in L1 across the four
 * passes.
 */
#define WL__FMA __attribute__((target("avx2,fma")))

WL__FMA static void micro_3x3(const float *const qv[3], const float *const rv[3], size_t full,
                              float p[9][WL__LANES])
{
    const float *q0 = qv[0], *q1 = qv[1], *q2 = qv[2];
    const float *r0 = rv[0], *r1 = rv[1], *r2 = rv[2];
    for (size_t g = 0; g < 4; g++) {
        __m256 a00 = _mm256_setzero_ps(), a01 = _mm256_setzero_ps(), a02 = _mm256_setzero_ps();
        __m256 a10 = _mm256_setzero_ps(), a11 = _mm256_setzero_ps(), a12 = _mm256_setzero_ps();
        __m256 a20 = _mm256_setzero_ps(), a21 = _mm256_setzero_ps(), a22 = _mm256_setzero_ps();
        for (size_t j = 8 * g; j < full; j += WL__LANES) {
            __m256 x0 = _mm256_loadu_ps(q0 + j), x1 = _mm256_loadu_ps(q1 + j);
            __m256 x2 = _mm256_loadu_ps(q2 + j);
            __m256 y = _mm256_loadu_ps(r0 + j);
            a00 = _mm256_fmadd_ps(x0, y, a00);
            a10 = _mm256_fmadd_ps(x1, y, a10);
            a20 = _mm256_fmadd_ps(x2, y, a20);
            y = _mm256_loadu_ps(r1 + j);
            a01 = _mm256_fmadd_ps(x0, y, a01);
            a11 = _mm256_fmadd_ps(x1, y, a11);
            a21 = _mm256_fmadd_ps(x2, y, a21);
            y = _mm256_loadu_ps(r2 + j);
            a02 = _mm256_fmadd_ps(x0, y, a02);
            a12 = _mm256_fmadd_ps(x1, y, a12);
            a22 = _mm256_fmadd_ps(x2, y, a22);
        }
        size_t o = 8 * g;
        _mm256_storeu_ps(p[0] + o, a00);
        _mm256_storeu_ps(p[1] + o, a01);
        _mm256_storeu_ps(p[2] + o, a02);
        _mm256_storeu_ps(p[3] + o, a10);
        _mm256_storeu_ps(p[4] + o, a11);
        _mm256_storeu_ps(p[5] + o, a12);
        _mm256_storeu_ps(p[6] + o, a20);
        _mm256_storeu_ps(p[7] + o, a21);
        _mm256_storeu_ps(p[8] + o, a22);
    }
}

/* One pair, fused, into p[0..31] (the full chunks only): for the queries left over when a block
 * is not a multiple of three. Loads, not the FMAs, set its pace, but a triple that repeated its
 * last query would compute three pairs for every one it keeps. */
WL__FMA static void pair_fused(const float *q, const float *r, size_t full, float p[WL__LANES])
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
    for (size_t j = 0; j < full; j += WL__LANES) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + j), _mm256_loadu_ps(r + j), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + j + 8), _mm256_loadu_ps(r + j + 8), acc1);
        acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + j + 16), _mm256_loadu_ps(r + j + 16), acc2);
        acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + j + 24), _mm256_loadu_ps(r + j + 24), acc3);
    }
    _mm256_storeu_ps(p, acc0);
    _mm256_storeu_ps(p + 8, acc1);
    _mm256_storeu_ps(p + 16, acc2);
    _mm256_storeu_ps(p + 24, acc3);
}

/* A partial last chunk (dim not a multiple of 32), fused lane by lane, then the tree. */
WL__FMA static inline float finish_fused(float *pp, const float *q, const float *r, size_t full,
                                         size_t dim)
{
    for (size_t m = 0; full + m < dim; m++)
        pp[m] = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(q[full + m]), _mm_set_ss(r[full + m]),
                                           _mm_set_ss(pp[m])));
    return combine_avx2(_mm256_loadu_ps(pp), _mm256_loadu_ps(pp + 8), _mm256_loadu_ps(pp + 16),
                        _mm256_loadu_ps(pp + 24));
}

/*
 * out[a*ldo + i] for a block of queries and rows. Query triples in the outer loop, row triples in
 * the inner one: a triple's queries stay in L1 while the rows (which the caller keeps to a block
 * that fits L2 together with the queries) stream past, and each row crosses from memory once per
 * call. An edge row triple repeats its last row and drops the extra results; one or two queries
 * left over are scored a pair at a time. The caller's next block of rows is prefetched into L2
 * meanwhile.
 */
WL__FMA static void dots_multi_avx2(const float *qs, size_t nq, const float *rows, size_t count,
                                    size_t dim, float *out, size_t ldo, const float *next,
                                    size_t next_count)
{
    size_t full = dim - dim % WL__LANES;
    float p[9][WL__LANES];
    /* The next block's lines, spread evenly over this call's register blocks. */
    const char *pf = (const char *)next;
    size_t pf_lines = next ? (next_count * dim * sizeof(float) + 63) / 64 : 0, pf_done = 0;
    size_t calls = ((nq + 2) / 3) * ((count + 2) / 3), per = pf_lines / (calls ? calls : 1) + 1;
    for (size_t a = 0; a < nq; a += 3) {
        size_t na = nq - a < 3 ? nq - a : 3;
        const float *qv[3];
        for (size_t u = 0; u < 3; u++)
            qv[u] = qs + (a + (u < na ? u : na - 1)) * dim; /* only the first na are used */
        for (size_t i = 0; i < count; i += 3) {
            size_t ni = count - i < 3 ? count - i : 3;
            const float *rv[3];
            for (size_t v = 0; v < 3; v++)
                rv[v] = rows + (i + (v < ni ? v : ni - 1)) * dim;
            if (na == 3) {
                micro_3x3(qv, rv, full, p);
            } else {
                for (size_t u = 0; u < na; u++)
                    for (size_t v = 0; v < ni; v++)
                        pair_fused(qv[u], rv[v], full, p[3 * u + v]);
            }
            /* Into L2 while this block computes: without it the first query triple to reach
             * a row waits on L3 or DRAM, which cost a third of the kernel's speed at 30 MB. */
            for (size_t z = 0; z < per && pf_done < pf_lines; z++, pf_done++)
                _mm_prefetch(pf + 64 * pf_done, _MM_HINT_T1);
            for (size_t u = 0; u < na; u++)
                for (size_t v = 0; v < ni; v++)
                    out[(a + u) * ldo + i + v] =
                        finish_fused(p[3 * u + v], qv[u], rv[v], full, dim);
        }
    }
}

/* The batch on an AVX2 CPU without FMA (none is known, but the CPU flags are separate): the
 * portable kernel, which computes the same fused values with fmaf. */
static void dots_multi_select_avx2(const float *qs, size_t nq, const float *rows, size_t count,
                                   size_t dim, float *out, size_t ldo, const float *next,
                                   size_t next_count)
{
    if (__builtin_cpu_supports("fma"))
        dots_multi_avx2(qs, nq, rows, count, dim, out, ldo, next, next_count);
    else
        wl__kernels_scalar.dots_multi(qs, nq, rows, count, dim, out, ldo, next, next_count);
}

/* The compute probe with FMA: WL__PROBE_CHAINS chains, so that the FMA units, not the latency
 * of one chain (4 cycles on Zen), set the pace; 12 covers 2 units x 4 cycles with room. */
WL__FMA static float probe_fma(size_t rounds)
{
    const __m256 m = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
    __m256 acc[WL__PROBE_CHAINS];
    for (int k = 0; k < WL__PROBE_CHAINS; k++)
        acc[k] = _mm256_set1_ps((float)k * 0x1.0p-4f);
    for (size_t r = 0; r < rounds; r++)
        for (int k = 0; k < WL__PROBE_CHAINS; k++)
            acc[k] = _mm256_fmadd_ps(acc[k], m, c);
    __m256 s = acc[0];
    for (int k = 1; k < WL__PROBE_CHAINS; k++)
        s = _mm256_add_ps(s, acc[k]);
    return combine_avx2(s, _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps());
}

/* The same chains with a separate multiply and add, for an AVX2 CPU without FMA. */
WL__AVX2 static float probe_muladd(size_t rounds)
{
    const __m256 m = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
    __m256 acc[WL__PROBE_CHAINS];
    for (int k = 0; k < WL__PROBE_CHAINS; k++)
        acc[k] = _mm256_set1_ps((float)k * 0x1.0p-4f);
    for (size_t r = 0; r < rounds; r++)
        for (int k = 0; k < WL__PROBE_CHAINS; k++)
            acc[k] = _mm256_add_ps(_mm256_mul_ps(acc[k], m), c);
    __m256 s = acc[0];
    for (int k = 1; k < WL__PROBE_CHAINS; k++)
        s = _mm256_add_ps(s, acc[k]);
    return combine_avx2(s, _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps());
}

static float probe_avx2(size_t rounds)
{
    return __builtin_cpu_supports("fma") ? probe_fma(rounds) : probe_muladd(rounds);
}

WL__AVX2 static void decay_avx2(const float *base, const float *age, float *out, size_t n,
                                float tau)
{
    const __m256 one = _mm256_set1_ps(1.0f), vtau = _mm256_set1_ps(tau);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        /* Same operations, same order, as the scalar base / sqrtf(1 + age / tau): all are
         * correctly rounded IEEE operations, so each lane equals the scalar result. */
        __m256 x = _mm256_add_ps(one, _mm256_div_ps(_mm256_loadu_ps(age + i), vtau));
        _mm256_storeu_ps(out + i, _mm256_div_ps(_mm256_loadu_ps(base + i), _mm256_sqrt_ps(x)));
    }
    for (; i < n; i++) {
        __m128 x = _mm_add_ss(_mm_set_ss(1.0f), _mm_div_ss(_mm_set_ss(age[i]), _mm_set_ss(tau)));
        out[i] = _mm_cvtss_f32(_mm_div_ss(_mm_set_ss(base[i]), _mm_sqrt_ss(x)));
    }
}

const wl__kernels wl__kernels_avx2 = {
    .dot = dot_avx2,
    .sum = sum_avx2,
    .dots = dots_avx2,
    .dots_multi = dots_multi_select_avx2,
    .probe = probe_avx2,
    .decay = decay_avx2,
};

#else

/* Not x86-64: no AVX2 kernels; keeps this translation unit non-empty. */
typedef int wl__kernels_avx2_unavailable;

#endif
