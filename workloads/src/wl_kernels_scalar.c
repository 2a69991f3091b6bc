/*
 * Portable kernels: the reference definition of the lane structure. Element j of a reduction goes
 * into partial sum p[j % 32] in increasing j (multiply, then add: this file is built with
 * -ffp-contract=off so no FMA fuses them; the batched dots_multi alone fuses them, explicitly with
 * fmaf), and wl__combine32 folds p in one fixed tree. The
 * compiler may vectorise these loops, which never changes a result because the lanes stay
 * independent; the AVX2 file mirrors this structure exactly.
 */
#include <math.h>

#include "wl_internal.h"

float wl__combine32(const float p[WL__LANES])
{
    /* Accumulators 0+1 and 2+3 first, then the two pairs: s[l] for the 8 lanes. */
    float s[8];
    for (int l = 0; l < 8; l++)
        s[l] = (p[l] + p[8 + l]) + (p[16 + l] + p[24 + l]);
    /* Then lane l with lane l+4, lane l with lane l+2, and the last two. */
    float t0 = s[0] + s[4], t1 = s[1] + s[5], t2 = s[2] + s[6], t3 = s[3] + s[7];
    float u0 = t0 + t2, u1 = t1 + t3;
    return u0 + u1;
}

static float dot_scalar(const float *a, const float *b, size_t n)
{
    float p[WL__LANES];
    for (int m = 0; m < WL__LANES; m++)
        p[m] = 0.0f;
    size_t j = 0;
    for (; j + WL__LANES <= n; j += WL__LANES)
        for (size_t m = 0; m < WL__LANES; m++)
            p[m] += a[j + m] * b[j + m];
    for (size_t m = 0; j + m < n; m++)
        p[m] += a[j + m] * b[j + m];
    return wl__combine32(p);
}

static float sum_scalar(const float *buf, size_t n)
{
    float p[WL__LANES];
    for (int m = 0; m < WL__LANES; m++)
        p[m] = 0.0f;
    size_t j = 0;
    for (; j + WL__LANES <= n; j += WL__LANES)
        for (size_t m = 0; m < WL__LANES; m++)
            p[m] += buf[j + m];
    for (size_t m = 0; j + m < n; m++)
        p[m] += buf[j + m];
    return wl__combine32(p);
}

static void dots_scalar(const float *q, const float *rows, size_t count, size_t dim, float *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = dot_scalar(q, rows + i * dim, dim);
}

/*
 * The batched dot products: the same lane structure, but each element is fused into its partial
 * sum, p[j % 32] = fmaf(a[j], b[j], p[j % 32]), one rounding instead of two, as the AVX2 kernel
 * does with FMA instructions; the two agree bit for bit. fmaf is exact everywhere, but on a build
 * without FMA instructions (baseline x86-64) it is a library call per element, 20 times slower
 * than the unfused loop; so on x86-64 the same code is also compiled for FMA and chosen when the
 * CPU has it (the same exact operation, so the same bits, only faster).
 */
#if defined(__GNUC__) || defined(__clang__)
#define WL__ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define WL__ALWAYS_INLINE inline
#endif

static WL__ALWAYS_INLINE void dots_fused_body(const float *qs, size_t nq, const float *rows,
                                              size_t count, size_t dim, float *out, size_t ldo)
{
    for (size_t a = 0; a < nq; a++) {
        for (size_t i = 0; i < count; i++) {
            const float *x = qs + a * dim, *y = rows + i * dim;
            float p[WL__LANES];
            for (int m = 0; m < WL__LANES; m++)
                p[m] = 0.0f;
            size_t j = 0;
            for (; j + WL__LANES <= dim; j += WL__LANES)
                for (size_t m = 0; m < WL__LANES; m++)
                    p[m] = fmaf(x[j + m], y[j + m], p[m]);
            for (size_t m = 0; j + m < dim; m++)
                p[m] = fmaf(x[j + m], y[j + m], p[m]);
            out[a * ldo + i] = wl__combine32(p);
        }
    }
}

#if WL__HAVE_AVX2
__attribute__((target("fma"))) static void dots_fused_fma(const float *qs, size_t nq,
                                                          const float *rows, size_t count,
                                                          size_t dim, float *out, size_t ldo)
{
    dots_fused_body(qs, nq, rows, count, dim, out, ldo);
}
#endif

static void dots_multi_scalar(const float *qs, size_t nq, const float *rows, size_t count,
                              size_t dim, float *out, size_t ldo, const float *next,
                              size_t next_count)
{
    (void)next; /* a hint only; the portable path does not prefetch */
    (void)next_count;
#if WL__HAVE_AVX2
    if (__builtin_cpu_supports("fma")) {
        dots_fused_fma(qs, nq, rows, count, dim, out, ldo);
        return;
    }
#endif
    dots_fused_body(qs, nq, rows, count, dim, out, ldo);
}

/* The probe on this path: the same chains as the AVX2 probe, multiply then add (no FMA here). */
static float probe_scalar(size_t rounds)
{
    enum { N = WL__PROBE_CHAINS * 8 };
    float acc[N];
    for (int c = 0; c < N; c++)
        acc[c] = (float)(c / 8) * 0x1.0p-4f; /* chain c / 8 starts where the AVX2 one does */
    for (size_t r = 0; r < rounds; r++)
        for (int c = 0; c < N; c++)
            acc[c] = acc[c] * 0.999f + 0.001f;
    float s = 0.0f;
    for (int c = 0; c < N; c++)
        s += acc[c];
    return s;
}

static void decay_scalar(const float *base, const float *age, float *out, size_t n, float tau)
{
    for (size_t i = 0; i < n; i++)
        out[i] = base[i] / sqrtf(1.0f + age[i] / tau);
}

const wl__kernels wl__kernels_scalar = {
    .dot = dot_scalar,
    .sum = sum_scalar,
    .dots = dots_scalar,
    .dots_multi = dots_multi_scalar,
    .probe = probe_scalar,
    .decay = decay_scalar,
};
