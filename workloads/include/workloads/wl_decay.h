/*
 * Memory decay: the strength of each memory as a function of its age, by a power law with the
 * ACT-R default exponent 1/2, s = s0 / sqrt(1 + age / tau). Exponent 1/2 needs only IEEE division
 * and square root, which are correctly rounded, so results are bit-identical on every machine and
 * SIMD path (docs/workloads.md explains the choice over an exponential).
 */
#ifndef WORKLOADS_WL_DECAY_H
#define WORKLOADS_WL_DECAY_H

#include <stddef.h>

#include "workloads/wl_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Writes out[i] = base[i] / sqrtf(1.0f + age[i] / tau_days) for i in [0, n), each operation in
 * float and rounded as written (ages in days, >= 0; tau_days the time scale in days, finite and
 * > 0). out may alias base or age exactly, not partially. All arrays are caller-owned.
 * Returns 0 or WL_E_INVAL (NULL array with n > 0, bad tau_days).
 * Cost: reads 8n bytes, writes 4n bytes; per element 2 divisions, 1 add, 1 square root.
 */
int wl_decay_apply(const float *base, const float *age, float *out, size_t n, float tau_days);

/**
 * Applies wl_decay_apply to every node of g (its base strengths and ages) into out[N]
 * (caller-owned). Returns 0 or WL_E_INVAL.
 */
int wl_graph_decay(const wl_graph *g, float tau_days, float *out);

#ifdef __cplusplus
}
#endif

#endif /* WORKLOADS_WL_DECAY_H */
