/*
 * Top-k cosine similarity of one query against N candidate vectors: a streaming read of the
 * N x D candidate block. The result is a pure function of its inputs: scores come from the fixed
 * lane-structure dot product (identical on every SIMD path) and the ranking is a total order
 * (score descending, then id ascending), so ties and k never make the output ambiguous.
 */
#ifndef WORKLOADS_WL_SIMILARITY_H
#define WORKLOADS_WL_SIMILARITY_H

#include <stddef.h>
#include <stdint.h>

#include "workloads/wl_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One result of a similarity query. */
typedef struct wl_hit {
    uint32_t id; /* candidate index, 0-based row number */
    float score; /* cosine similarity, in [-1, 1] up to rounding; 0 for zero vectors */
} wl_hit;

/**
 * Scores every candidate i by cos_i = dot(q, c_i) / (|q| * |c_i|), where dot is wl_dot over D
 * floats, |q| = sqrtf(wl_dot(q, q, D)), |c_i| = c->norms[i], and all arithmetic is float; cos_i is
 * defined as 0 when |q| * |c_i| is 0 (a zero vector, or D = 0) or when the quotient is NaN (only
 * possible with non-finite inputs). Writes the best min(k, N) candidates to hits[], sorted by score
 * descending, ties broken by lower id, and their number to *hit_count.
 * The caller owns hits (room for k entries; may be NULL if k is 0) and query (D floats).
 * Returns 0, WL_E_INVAL (NULL where data is needed) or WL_E_OVERFLOW (count above WL_MAX_NODES).
 * Cost: reads 4ND + 4N bytes of candidates and norms (plus the 4D-byte query, cache-resident),
 * 2ND + 33N flops for the scores, O(N + m log k) comparisons for m heap insertions.
 */
int wl_similarity_topk(const wl_candidates *c, const float *query, size_t k, wl_hit *hits,
                       size_t *hit_count);

/**
 * Top-k for nq queries at once: hits[a*k .. a*k + hit_counts[a]) and hit_counts[a] are exactly,
 * bit for bit, what wl_similarity_topk(c, queries + a*D, k, ...) gives, for every a < nq. The
 * work is blocked: a block of up to WL_SIMILARITY_QUERY_BLOCK queries is scored against the
 * candidates a block of rows at a time, register-blocked over queries x rows, so each candidate
 * row is read from memory once per query block instead of once per query. That turns the
 * bandwidth-bound scan into a compute-bound one (docs/workloads.md).
 * The caller owns queries (nq x D floats, row-major), hits (room for nq x k; may be NULL if k or
 * nq is 0) and hit_counts (nq entries; may be NULL if nq is 0).
 * Returns 0, WL_E_INVAL, WL_E_OVERFLOW (as wl_similarity_topk, or nq x max(D, k) overflowing) or
 * WL_E_NOMEM (its scratch of about 16 KiB plus 4 bytes a query could not be allocated).
 * Cost: reads 4ND + 4N bytes per query block, 2ND + 33N flops per query.
 */
int wl_similarity_topk_batch(const wl_candidates *c, const float *queries, size_t nq, size_t k,
                             wl_hit *hits, size_t *hit_counts);

/** Queries scored together per pass over the candidates by wl_similarity_topk_batch. */
#define WL_SIMILARITY_QUERY_BLOCK 64

#ifdef __cplusplus
}
#endif

#endif /* WORKLOADS_WL_SIMILARITY_H */
