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
 * Top-k for nq queries at once: hits[a*k .. a*k + hit_counts[a]) and hit_counts[a] for query a
 * (queries + a*D), for every a < nq, defined as wl_similarity_topk's except that each element of
 * the dot product is fused into its partial sum (p[j % 32] = fmaf(q[j], c[j], p[j % 32]), one
 * rounding where wl_dot has two). The result is the same on every SIMD path and whatever nq or
 * the query's position in the batch. Against wl_similarity_topk, for finite inputs: the counts
 * are equal; every score, and so the score at every rank, is within
 * WL_SIMILARITY_BATCH_TOLERANCE(D); the ids at a rank differ only at a near-tie, where the single
 * query's own score of the batch's candidate is within twice that of the single query's score at
 * that rank. The work is blocked: a block of up to WL_SIMILARITY_QUERY_BLOCK queries is scored against the
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

/**
 * Bound on |batch score - single-query score| of one candidate at dimension D: (2 * ceil(D/32) +
 * 16) * 2^-24, about 3.8e-6 at D = 768. Both dot products carry a rounding error of at most
 * gamma(ceil(D/32) + 5) * sum |q_j c_j| (a partial sum of ceil(D/32) terms, then the 5 levels
 * of the combining tree), and sum |q_j c_j| <= |q| |c| (Cauchy-Schwarz), so the two cosines differ
 * by at most about 2 (ceil(D/32) + 5) + 2 units of 2^-24 (the last 2: the division); 4 more
 * cover the second-order terms. Assumes finite inputs and no underflow.
 */
#define WL_SIMILARITY_BATCH_TOLERANCE(D) \
    ((float)(2 * (((D) + 31) / 32) + 16) * 0x1.0p-24f)

#ifdef __cplusplus
}
#endif

#endif /* WORKLOADS_WL_SIMILARITY_H */
