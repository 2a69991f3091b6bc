/*
 * Internals shared by the workload library's sources and never installed: the graph's struct, the
 * inline PRNG core (the public wl_rng_* functions wrap it), the kernel table that the run-time SIMD
 * choice selects, and the profile's phase functions. Every kernel table entry must honour the lane
 * structure documented in wl_simd.h, so that any two tables give bit-identical results.
 */
#ifndef WORKLOADS_WL_INTERNAL_H
#define WORKLOADS_WL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "workloads/workloads.h"

/* Keeps a function out of line so that a profiler attributes its time to it by name. */
#if defined(__GNUC__) || defined(__clang__)
#define WL__NOINLINE __attribute__((noinline))
#else
#define WL__NOINLINE
#endif

/* The AVX2 kernels are compiled (with a target attribute, not a global -m flag) on x86-64 only. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WL__HAVE_AVX2 1
#else
#define WL__HAVE_AVX2 0
#endif

/* Independent accumulator chains of the compute probe, and its flops per round (8 lanes,
 * 2 flops per lane per multiply-add). */
#define WL__PROBE_CHAINS 12
#define WL__PROBE_FLOPS_PER_ROUND (WL__PROBE_CHAINS * 8 * 2)
_Static_assert(WL__PROBE_FLOPS_PER_ROUND == WL_COMPUTE_PROBE_FLOPS_PER_ROUND,
               "wl_simd.h documents the probe's flops per round");

/* Alignment of every embedding block, bytes: one cache line. */
#define WL__ALIGN 64

/* Lanes in the fixed accumulation structure of wl_dot and wl_read_probe: 4 accumulators x 8. */
#define WL__LANES 32

struct wl_graph {
    size_t node_count;  /* N */
    size_t edge_count;  /* E */
    size_t dim;         /* D */
    float *embeddings;  /* N*D floats, WL__ALIGN-aligned, or NULL when N*D is 0 */
    float *norms;       /* N floats */
    float *ages;        /* N floats, days */
    float *strengths;   /* N floats, base strength in (0, 1] */
    uint32_t *offsets;  /* N+1 CSR offsets */
    uint32_t *targets;  /* E target ids */
    float *weights;     /* E weights */
};

/* Function table for one SIMD path; all entries follow the lane structure of wl_simd.h. */
typedef struct wl__kernels {
    float (*dot)(const float *a, const float *b, size_t n);
    float (*sum)(const float *buf, size_t n);
    /* out[i] = dot(q, rows + i*dim, dim) for i in [0, count) */
    void (*dots)(const float *q, const float *rows, size_t count, size_t dim, float *out);
    /* out[a*ldo + i] = the fused dot of qs + a*dim and rows + i*dim for a in [0, nq), i in
     * [0, count): dot()'s lane structure with each element fused into its partial sum
     * (p[j % 32] = fmaf(q[j], r[j], p[j % 32])), so within a few ulps of dot(), not equal; the
     * same bits on every path and whatever nq. Each row is read from memory once for all nq
     * queries (dim > 0); the next_count rows at next (NULL: none), which the caller will pass
     * next, may be prefetched meanwhile */
    void (*dots_multi)(const float *qs, size_t nq, const float *rows, size_t count, size_t dim,
                       float *out, size_t ldo, const float *next, size_t next_count);
    /* The compute probe: `rounds` rounds of WL__PROBE_CHAINS independent 8-lane multiply-add
     * chains (fused where the CPU has FMA); returns a value that depends on every chain. */
    float (*probe)(size_t rounds);
    /* out[i] = base[i] / sqrtf(1 + age[i] / tau) */
    void (*decay)(const float *base, const float *age, float *out, size_t n, float tau);
} wl__kernels;

extern const wl__kernels wl__kernels_scalar;
#if WL__HAVE_AVX2
extern const wl__kernels wl__kernels_avx2;
#endif

/* Returns the table of the active path (resolving it on first use). */
const wl__kernels *wl__kernels_active(void);

/* Combines 32 partial sums in the fixed tree order every path uses (see wl_kernels_scalar.c). */
float wl__combine32(const float p[WL__LANES]);

/* Allocates bytes (rounded up to a multiple of WL__ALIGN, at least one line) aligned to WL__ALIGN;
 * returns NULL on failure. Release with free(). */
void *wl__alloc_aligned(size_t bytes);

/* Fills count*dim floats uniform in [-1, 1) from (seed, stream 1), row-major: the one generator
 * shared by graph embeddings and candidate matrices. */
void wl__fill_embeddings(float *v, size_t count, size_t dim, uint64_t seed);

/* --- PRNG core: splitmix64 seeding xoshiro256** --- */

static inline uint64_t wl__splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static inline uint64_t wl__rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t wl__rng_next(wl_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = wl__rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = wl__rotl(s[3], 45);
    return result;
}

static inline float wl__rng_float(wl_rng *r)
{
    return (float)(wl__rng_next(r) >> 40) * 0x1.0p-24f;
}

static inline float wl__rng_float_signed(wl_rng *r)
{
    return (float)(wl__rng_next(r) >> 40) * 0x1.0p-23f - 1.0f;
}

/* --- profile phases (non-static, out of line, so profiles show them by name) --- */

int wl__profile_phase_build(const wl_profile_params *p, wl_graph **g);
int wl__profile_phase_activation(const wl_graph *g, const wl_profile_params *p, uint64_t *h,
                                 wl_profile_result *out);
int wl__profile_phase_similarity(const wl_graph *g, const wl_profile_params *p, uint64_t *h);
int wl__profile_phase_decay(const wl_graph *g, const wl_profile_params *p, uint64_t *h);

#endif /* WORKLOADS_WL_INTERNAL_H */
