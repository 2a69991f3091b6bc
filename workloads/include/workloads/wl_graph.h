/*
 * The memory graph and the plain candidate matrix. A graph holds N nodes, each with a D-float
 * embedding, its precomputed L2 norm, an age and a base strength, and E weighted directed edges in
 * CSR form (offsets[N+1], targets[E], weights[E]). A matrix holds only N embeddings and norms. In
 * both, embeddings are one contiguous row-major N x D block, 64-byte aligned, and norms[i] always
 * equals sqrtf(wl_dot(row i, row i, D)). Objects are immutable after construction.
 */
#ifndef WORKLOADS_WL_GRAPH_H
#define WORKLOADS_WL_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest node (or candidate) count: ids are uint32_t and must stay below this. */
#define WL_MAX_NODES ((size_t)INT32_MAX)
/** Largest edge count: CSR offsets are uint32_t. */
#define WL_MAX_EDGES ((size_t)UINT32_MAX)

/** Opaque graph; create with wl_graph_new or wl_graph_from_edges, release with wl_graph_free. */
typedef struct wl_graph wl_graph;
/** Opaque candidate matrix; create with wl_matrix_new, release with wl_matrix_free. */
typedef struct wl_matrix wl_matrix;

/** Parameters of a random graph (see docs/workloads.md for the exact generation order). */
typedef struct wl_graph_params {
    uint64_t seed;      /* PRNG seed; same seed and sizes give the same graph everywhere */
    size_t node_count;  /* N, nodes */
    size_t edge_count;  /* E, directed edges; needs N >= 2 when E > 0 (no self loops drawn) */
    size_t dim;         /* D, floats per embedding; 0 allowed (activation-only graph) */
    float max_age_days; /* ages are uniform in [0, max_age_days), days; finite, >= 0 */
} wl_graph_params;

/** One directed edge for wl_graph_from_edges. */
typedef struct wl_edge {
    uint32_t src;  /* source node id, < N */
    uint32_t dst;  /* target node id, < N (self loops allowed here) */
    float weight;  /* finite, >= 0 */
} wl_edge;

/** Borrowed view of a graph's CSR arrays; valid while the graph lives. */
typedef struct wl_csr {
    size_t node_count;       /* N */
    size_t edge_count;       /* E */
    const uint32_t *offsets; /* N+1 entries; edges of node u are [offsets[u], offsets[u+1]) */
    const uint32_t *targets; /* E entries, target node ids */
    const float *weights;    /* E entries, edge weights */
} wl_csr;

/**
 * Borrowed view of N candidate vectors for wl_similarity_topk. Any caller may fill one from its own
 * arrays (then norms must come from wl_norms_compute for the documented results to hold).
 */
typedef struct wl_candidates {
    const float *vectors; /* count x dim floats, row-major; may be NULL if count or dim is 0 */
    const float *norms;   /* count floats, L2 norm of each row; may be NULL if count is 0 */
    size_t count;         /* N, candidates; at most WL_MAX_NODES */
    size_t dim;           /* D, floats per vector */
} wl_candidates;

/**
 * Fills *p with the reference workload's graph: 10,000 nodes, 50,000 edges, D = 768, ages up to
 * 365 days, and the given seed.
 */
void wl_graph_params_reference(wl_graph_params *p, uint64_t seed);

/**
 * Builds a random graph from *p into *out (caller owns it; free with wl_graph_free). Returns 0,
 * WL_E_INVAL (NULL pointer, edges with fewer than 2 nodes, bad max_age_days), WL_E_OVERFLOW (N or
 * E above the limits, N*D*4 bytes not representable) or WL_E_NOMEM; *out is NULL on error.
 */
int wl_graph_new(wl_graph **out, const wl_graph_params *p);

/**
 * Builds a graph with D = 0 from an explicit edge list (copied; the caller keeps edges). Ages are 0
 * and base strengths 1. CSR keeps, for each source, the edges in their order in the list. Returns
 * 0, WL_E_INVAL (NULL pointers, ids >= N, negative or non-finite weight), WL_E_OVERFLOW or
 * WL_E_NOMEM; *out is NULL on error.
 */
int wl_graph_from_edges(wl_graph **out, size_t node_count, const wl_edge *edges,
                        size_t edge_count);

/** Releases g and everything it owns. wl_graph_free(NULL) does nothing. */
void wl_graph_free(wl_graph *g);

/** Returns N. */
size_t wl_graph_node_count(const wl_graph *g);
/** Returns E. */
size_t wl_graph_edge_count(const wl_graph *g);
/** Returns D. */
size_t wl_graph_dim(const wl_graph *g);
/** Returns the N x D embedding block (64-byte aligned, owned by g; NULL only if N*D is 0). */
const float *wl_graph_embeddings(const wl_graph *g);
/** Returns the N embedding norms (owned by g). */
const float *wl_graph_norms(const wl_graph *g);
/** Returns the N ages, in days (owned by g). */
const float *wl_graph_ages(const wl_graph *g);
/** Returns the N base strengths, in (0, 1] (owned by g). */
const float *wl_graph_strengths(const wl_graph *g);
/** Returns a borrowed CSR view of g's edges. */
wl_csr wl_graph_csr(const wl_graph *g);
/** Returns a borrowed candidate view of g's embeddings and norms. */
wl_candidates wl_graph_candidates(const wl_graph *g);

/**
 * Builds a count x dim matrix of floats uniform in [-1, 1) and its norms (one copy of the data,
 * 64-byte aligned). Same seed and dim give the same rows as a graph's embeddings, so a matrix of
 * 10,000 rows equals the reference graph's embedding block. Caller owns *out (wl_matrix_free).
 * Returns 0, WL_E_INVAL, WL_E_OVERFLOW or WL_E_NOMEM; *out is NULL on error.
 */
int wl_matrix_new(wl_matrix **out, size_t count, size_t dim, uint64_t seed);

/** Releases m. wl_matrix_free(NULL) does nothing. */
void wl_matrix_free(wl_matrix *m);

/** Returns a borrowed candidate view of m (valid while m lives). */
wl_candidates wl_matrix_candidates(const wl_matrix *m);

/**
 * Writes norms[i] = sqrtf(wl_dot(row i, row i, dim)) for count rows of vectors (row-major).
 * Returns 0, WL_E_INVAL (NULL pointer with a nonzero size) or WL_E_OVERFLOW.
 */
int wl_norms_compute(const float *vectors, size_t count, size_t dim, float *norms);

#ifdef __cplusplus
}
#endif

#endif /* WORKLOADS_WL_GRAPH_H */
