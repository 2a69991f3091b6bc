/*
 * Batched top-k cosine similarity on a CUDA GPU: Q queries against the same N candidates at once,
 * the GPU version of wl_similarity_topk. The candidates are uploaded once; a search enqueues its
 * kernels on a caller's CUDA stream and does not wait, so a benchmark can time it with events.
 * C-callable; the implementation (wl_gpu_similarity.cu) is compiled by nvcc only when CMake finds
 * CUDA, and a twin (wl_gpu_none.c) answers WL_E_UNAVAILABLE otherwise.
 *
 * Results are the CPU definition (docs/workloads.md) up to float rounding: the GPU sums the dot
 * products in another order (and with fused multiply-adds), so a score may differ from the CPU's
 * by the bound documented in docs/gpu.md, and the order of two hits whose scores are that close
 * may differ. The ranking is the same total order (score descending, then id ascending), and a
 * run is deterministic: the same inputs give bit-identical results on the same GPU and build.
 */
#ifndef WORKLOADS_WL_GPU_H
#define WORKLOADS_WL_GPU_H

#include <stddef.h>

#include "workloads/wl_graph.h"
#include "workloads/wl_similarity.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest k of a GPU search. */
#define WL_GPU_MAX_K 32
/** Most queries of one GPU search object. */
#define WL_GPU_MAX_QUERIES 65535

/**
 * Whether a CUDA device (device 0) is usable: returns 0, or WL_E_UNAVAILABLE with the reason in
 * msg (a build without CUDA, no driver, no device). msg may be NULL when msglen is 0.
 */
int wl_gpu_available(char *msg, size_t msglen);

/** Opaque: the candidates, norms, queries and scratch of batched searches, on the device. */
typedef struct wl_gpu_similarity wl_gpu_similarity;

/**
 * Uploads the N x D candidates of c and their norms to device 0 (synchronously), with room for up
 * to max_queries queries (1..WL_GPU_MAX_QUERIES) of k results each (1..WL_GPU_MAX_K). The caller
 * owns *out (wl_gpu_similarity_free); c may be freed afterwards. Returns 0; WL_E_INVAL (NULL
 * pointers, k or max_queries out of range); WL_E_OVERFLOW (N above WL_MAX_NODES, sizes overflow);
 * WL_E_NOMEM (host or device memory); WL_E_UNAVAILABLE (no usable CUDA, or a CUDA call failed).
 * On failure *out is NULL and msg says why (the CUDA call and error).
 * Device memory: 4ND + 4N (candidates, norms) + 4QD + 4Q (queries, norms) + 4PQN (partial dot
 * products: P splits of D, 1 when Q x N fills the GPU, at most 16) + small.
 */
int wl_gpu_similarity_new(wl_gpu_similarity **out, const wl_candidates *c, size_t max_queries,
                          size_t k, char *msg, size_t msglen);

/** Releases s and its device memory. wl_gpu_similarity_free(NULL) does nothing. */
void wl_gpu_similarity_free(wl_gpu_similarity *s);

/**
 * Copies count queries (count x D floats, row-major, caller-owned) to the device, synchronously;
 * they are used by every later search. Returns 0, WL_E_INVAL (count 0 or above max_queries, NULL
 * queries with D > 0) or WL_E_UNAVAILABLE (a CUDA error; see wl_gpu_similarity_error).
 */
int wl_gpu_similarity_set_queries(wl_gpu_similarity *s, const float *queries, size_t count);

/**
 * Enqueues one search of the queries set on stream (a cudaStream_t; NULL is the legacy default
 * stream) and returns without waiting: query norms, all Q x N dot products (a tiled, GEMM-like
 * pass that reads the candidate block once per 64 queries, D split in P parts when the grid
 * would not fill the GPU), then the cosines' top k of each query. Every launch is checked
 * (cudaGetLastError). Returns 0, WL_E_INVAL (no queries set) or WL_E_UNAVAILABLE (a launch
 * failed; see wl_gpu_similarity_error).
 * Cost: reads 4ND + 4N + 4QD bytes of inputs, writes and reads 4PQN bytes of partial dot
 * products, 2QND flops.
 */
int wl_gpu_similarity_enqueue(wl_gpu_similarity *s, void *stream);

/** The kernels that compute a search's dot products (wl_gpu_similarity_set_scores_kernel). */
enum {
    WL_GPU_SCORES_BLOCKED = 0, /* the default: 64 x 128 tiles, 8 x 8 per thread, split-K */
    WL_GPU_SCORES_SIMPLE = 1,  /* the first kernel, for comparison: 64 x 64 tiles, 4 x 4 */
};

/**
 * Chooses the kernel of later searches' dot products (docs/gpu.md): WL_GPU_SCORES_BLOCKED (the
 * default) or WL_GPU_SCORES_SIMPLE. The results agree within the documented error bound, not
 * bit for bit (the sums run in another order). Returns 0 or WL_E_INVAL (unknown kernel).
 */
int wl_gpu_similarity_set_scores_kernel(wl_gpu_similarity *s, int kernel);

/**
 * Waits for stream, then copies the last search's results to hits (caller-owned, room for
 * Q x k): query i's hits are hits[i*k .. i*k + *count), best first, *count = min(k, N). Returns 0
 * or WL_E_UNAVAILABLE (a CUDA error, also one of the search's kernels; see
 * wl_gpu_similarity_error).
 */
int wl_gpu_similarity_results(wl_gpu_similarity *s, void *stream, wl_hit *hits, size_t *count);

/**
 * Enqueues a read-bandwidth probe over the same device candidate block (4ND bytes, summed with
 * vector loads, a result nobody reads): the device's streaming-read limit for this buffer, to put
 * the search's effective bandwidth against. Returns like wl_gpu_similarity_enqueue.
 */
int wl_gpu_similarity_read_probe_enqueue(wl_gpu_similarity *s, void *stream);

/** The detail of the most recent failure on s (the CUDA call and error), "" if none yet. Owned
 * by s; a later success does not clear it. */
const char *wl_gpu_similarity_error(const wl_gpu_similarity *s);

/**
 * One whole search, for tests and simple callers: upload, search, wait, copy back, free. hits has
 * room for q x k; *count = min(k, N). Returns as the functions above, with the reason in msg.
 */
int wl_gpu_similarity_topk_batch(const wl_candidates *c, const float *queries, size_t q, size_t k,
                                 wl_hit *hits, size_t *count, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif

#endif /* WORKLOADS_WL_GPU_H */
