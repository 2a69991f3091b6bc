/*
 * Memory decay by the power law s = s0 / sqrt(1 + age / tau) (ACT-R's default exponent d = 1/2).
 * Invariant: each output is base / sqrtf(1 + age / tau) with every operation rounded in float as
 * written; the SIMD kernel performs the same correctly rounded operations, so paths agree bitwise.
 */
#include <math.h>

#include "wl_internal.h"

WL__NOINLINE int wl_decay_apply(const float *base, const float *age, float *out, size_t n,
                                float tau_days)
{
    if (!isfinite(tau_days) || !(tau_days > 0.0f))
        return WL_E_INVAL;
    if (n == 0)
        return 0;
    if (base == NULL || age == NULL || out == NULL)
        return WL_E_INVAL;
    wl__kernels_active()->decay(base, age, out, n, tau_days);
    return 0;
}

int wl_graph_decay(const wl_graph *g, float tau_days, float *out)
{
    if (g == NULL)
        return WL_E_INVAL;
    return wl_decay_apply(g->strengths, g->ages, out, g->node_count, tau_days);
}
