/*
 * AVX2 kernels, compiled with a per-function target attribute (the rest of the build stays
 * baseline x86-64, so the library runs anywhere, valgrind included) and selected at run time.
 * Invariant: each kernel returns exactly what its twin in wl_kernels_scalar.c returns. Four 8-float
 * accumulators hold p[0..31]; a chunk of 32 elements adds element j to accumulator (j % 32) / 8,
 * lane j % 8, with a separate multiply and add (no FMA); a tail of fewer than 32 elements is
 * copied into a zero-padded chunk (adding +0 leaves an accumulator unchanged, since one that
 * starts at +0 can never hold -0); the combining tree is the one in wl__combine32.
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
    .decay = decay_avx2,
};

#else

/* Not x86-64: no AVX2 kernels; keeps this translation unit non-empty. */
typedef int wl__kernels_avx2_unavailable;

#endif
