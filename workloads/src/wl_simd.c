/*
 * Run-time choice of the SIMD path and the public kernel entry points. The path is resolved once
 * (CPU features, then the WL_SIMD environment variable) and kept in an atomic, so reading it on
 * every call costs one relaxed load. Whatever the path, results are the same bits: only speed
 * depends on this choice.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "wl_internal.h"

/* 0 = not resolved yet, otherwise a wl_simd_path. */
static atomic_int active_path;

int wl_simd_supported(wl_simd_path p)
{
    switch (p) {
    case WL_SIMD_AUTO:
    case WL_SIMD_SCALAR:
        return 1;
    case WL_SIMD_AVX2:
#if WL__HAVE_AVX2
        /* libgcc's check includes the OS enabling YMM state (XGETBV), not just CPUID. */
        return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
        return 0;
#endif
    }
    return 0;
}

static wl_simd_path best_path(void)
{
    return wl_simd_supported(WL_SIMD_AVX2) ? WL_SIMD_AVX2 : WL_SIMD_SCALAR;
}

static wl_simd_path resolve_path(void)
{
    const char *env = getenv("WL_SIMD");
    if (env != NULL) {
        if (strcmp(env, "scalar") == 0)
            return WL_SIMD_SCALAR;
        if (strcmp(env, "avx2") == 0 && wl_simd_supported(WL_SIMD_AVX2))
            return WL_SIMD_AVX2;
    }
    return best_path();
}

wl_simd_path wl_simd_active(void)
{
    int p = atomic_load_explicit(&active_path, memory_order_relaxed);
    if (p == 0) {
        /* Concurrent first calls all compute the same value, so a racing store is harmless. */
        p = (int)resolve_path();
        atomic_store_explicit(&active_path, p, memory_order_relaxed);
    }
    return (wl_simd_path)p;
}

int wl_simd_force(wl_simd_path p)
{
    if (p != WL_SIMD_AUTO && p != WL_SIMD_SCALAR && p != WL_SIMD_AVX2)
        return WL_E_INVAL;
    if (!wl_simd_supported(p))
        return WL_E_UNAVAILABLE;
    wl_simd_path chosen = p == WL_SIMD_AUTO ? best_path() : p;
    atomic_store_explicit(&active_path, (int)chosen, memory_order_relaxed);
    return 0;
}

const char *wl_simd_name(wl_simd_path p)
{
    switch (p) {
    case WL_SIMD_AUTO:
        return "auto";
    case WL_SIMD_SCALAR:
        return "scalar";
    case WL_SIMD_AVX2:
        return "avx2";
    }
    return "unknown";
}

const wl__kernels *wl__kernels_active(void)
{
#if WL__HAVE_AVX2
    if (wl_simd_active() == WL_SIMD_AVX2)
        return &wl__kernels_avx2;
#endif
    return &wl__kernels_scalar;
}

float wl_dot(const float *a, const float *b, size_t n)
{
    return wl__kernels_active()->dot(a, b, n);
}

float wl_read_probe(const float *buf, size_t n)
{
    return wl__kernels_active()->sum(buf, n);
}

float wl_compute_probe(size_t rounds)
{
    return wl__kernels_active()->probe(rounds);
}
