/*
 * Spreading activation over the memory graph: synchronous, fire-once propagation from one source
 * node (or a set of them) with a per-hop decay factor, a firing threshold and an activation cap of
 * 1.0. Each node fires at most once, so one call traverses every edge at most once and always
 * terminates; the float additions happen in a fixed order (firing nodes by ascending id, each
 * node's edges in CSR order), so the result is bit-reproducible. The full definition is in
 * docs/workloads.md.
 */
#ifndef WORKLOADS_WL_ACTIVATION_H
#define WORKLOADS_WL_ACTIVATION_H

#include <stddef.h>
#include <stdint.h>

#include "workloads/wl_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Parameters of one spreading-activation query. */
typedef struct wl_activation_params {
    float decay;             /* per-hop factor in [0, 1]: a firing node u sends decay*a[u]*w */
    float threshold;         /* a node fires when its activation >= threshold; finite, > 0 */
    uint32_t max_iterations; /* upper bound on synchronous iterations; 0 means no propagation */
} wl_activation_params;

/** What one query did. */
typedef struct wl_activation_result {
    uint32_t iterations;      /* iterations in which at least one node fired */
    uint32_t fired;           /* nodes that fired (each at most once) */
    uint64_t edges_traversed; /* out-edges of fired nodes, i.e. contributions added */
} wl_activation_result;

/** Opaque scratch space for wl_activation_spread, reusable across calls (one per thread). */
typedef struct wl_activation_ws wl_activation_ws;

/**
 * Creates scratch space for graphs of up to node_count nodes (caller owns *out; free with
 * wl_activation_ws_free). Returns 0, WL_E_INVAL, WL_E_OVERFLOW or WL_E_NOMEM.
 */
int wl_activation_ws_new(wl_activation_ws **out, size_t node_count);

/** Releases ws. wl_activation_ws_free(NULL) does nothing. */
void wl_activation_ws_free(wl_activation_ws *ws);

/**
 * Spreads activation from node source. Start: a[source] = 1, all others 0, nobody fired.
 * Iteration (at most p->max_iterations of them): the firing set F is every node that has not
 * fired yet and has a >= threshold; if F is empty, stop. Otherwise, from the activations at the
 * start of the iteration, in[v] = sum over u in F (ascending id), over u's edges (u, v, w) in CSR
 * order, of (decay * a[u]) * w, each sum starting from 0; then a[v] = fminf(1, a[v] + in[v]) for
 * every v that received a contribution, and the nodes of F are marked fired.
 * Writes the final N activations to activation[] (caller-owned, N floats) and, if res is not NULL,
 * a summary to *res. ws may be NULL (scratch is then allocated and freed inside the call) or must
 * have been created for at least N nodes.
 * Returns 0, WL_E_INVAL (NULL graph/params/activation, source >= N, decay outside [0, 1],
 * threshold not finite and > 0, ws too small) or WL_E_NOMEM.
 * Cost: writes 5N bytes to reset state; per fired node reads 8 bytes of offsets; per traversed edge
 * reads 8 bytes (target, weight) and read-modify-writes one 4-byte in[] entry (random access),
 * 2 flops; per touched node 1 add and 1 min.
 */
int wl_activation_spread(const wl_graph *g, uint32_t source, const wl_activation_params *p,
                         wl_activation_ws *ws, float *activation, wl_activation_result *res);

/**
 * Spreads activation from a set of sources at once: exactly wl_activation_spread, except that at
 * the start a[s] = 1 for every s in sources[0..nsources-1] (any order; a repeated source counts
 * once), so every source fires in the first iteration. One source gives the same result as
 * wl_activation_spread. nsources 0: nothing fires (sources may then be NULL).
 * Returns 0, WL_E_INVAL (as wl_activation_spread, or sources NULL with nsources > 0, or a source
 * >= N) or WL_E_NOMEM.
 * Cost: that of wl_activation_spread, plus one bitmap write per source and a scan of the bitmap
 * words between the lowest and the highest source.
 */
int wl_activation_spread_multi(const wl_graph *g, const uint32_t *sources, size_t nsources,
                               const wl_activation_params *p, wl_activation_ws *ws,
                               float *activation, wl_activation_result *res);

#ifdef __cplusplus
}
#endif

#endif /* WORKLOADS_WL_ACTIVATION_H */
