/*
 * gpu_suite.c: the reference suite's CUDA benchmarks (group `gpu`), beside the CPU similarity
 * benchmarks of graph_suite.c. Batched top-k cosine similarity of 64 queries against N candidates
 * of 768 floats on the GPU (workloads/wl_gpu.h), hot (L2 kept warm, sample after sample) and cold
 * (L2 flushed and the stream blocked before every single search, nvbench's cold measurement), and
 * a device read-bandwidth probe over the same candidate block, so the search's effective
 * bandwidth can be put against the device's in one run (scripts/gpu_check.sh does that). The
 * `_simple` variants run the first kernel of the dot products (WL_GPU_SCORES_SIMPLE), kept so
 * that a GPU run shows what the register-blocked default gains over it.
 *
 * Each is a CUDA benchmark: its time is GPU time between CUDA events, host wall time goes to the
 * metric "host_wall". Without a usable GPU, or in a build without CUDA, each is skipped with the
 * reason before its body runs, and the rest of the suite runs as before. They are written
 * BENCH_FN(..., .kind = BENCH_KIND_CUDA), which is exactly what BENCH_CUDA_FN expands to, so that
 * tests/e2e/test_cli.py, which reads the suite's ids from BENCH_FN lines, lists them too.
 *
 * Setup (candidates, queries, upload) is never timed; inputs are seeded.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <harness/bench.h>
#include <workloads/workloads.h>
#include <workloads/wl_gpu.h>

#include "suite_data.h"

#define DIM SUITE_DIM
#define SEED SUITE_SEED
#define QUERIES 64
#define TOP_K 10

BENCH_GROUP(gpu, .measurement_time = 2.0);

/* QUERIES x DIM floats uniform in [-1, 1), from their own seed. */
static float *make_queries(void)
{
    float *q = malloc((size_t)QUERIES * DIM * sizeof *q);
    if (!q)
        return NULL;
    wl_rng r;
    wl_rng_seed(&r, SEED + 1, 2);
    for (size_t i = 0; i < (size_t)QUERIES * DIM; i++)
        q[i] = wl_rng_float_signed(&r);
    return q;
}

/* The candidates of `count` rows on the device, with the queries set and the dot products'
 * kernel chosen; NULL after bench_fail. */
static wl_gpu_similarity *upload(bench_t *b, size_t count, int kernel)
{
    int rc = 0;
    char msg[256];
    const wl_matrix *m = suite_matrix(count, &rc);
    if (!m) {
        bench_fail(b, "cannot build %zu candidates: %s", count, wl_strerror(rc));
        return NULL;
    }
    wl_candidates c = wl_matrix_candidates(m);
    wl_gpu_similarity *s = NULL;
    rc = wl_gpu_similarity_new(&s, &c, QUERIES, TOP_K, msg, sizeof msg);
    if (rc != 0) {
        bench_fail(b, "cannot put %zu candidates on the GPU: %s", count, msg);
        return NULL;
    }
    float *q = make_queries();
    rc = q ? wl_gpu_similarity_set_queries(s, q, QUERIES) : WL_E_NOMEM;
    free(q);
    if (rc == 0)
        rc = wl_gpu_similarity_set_scores_kernel(s, kernel);
    if (rc != 0) {
        bench_fail(b, "cannot set the queries: %s (%s)", wl_strerror(rc),
                   wl_gpu_similarity_error(s));
        wl_gpu_similarity_free(s);
        return NULL;
    }
    return s;
}

/* After the timed loop: the last search's results must be well formed (ids in range, best
 * first). Correctness against the CPU is tests/workloads/test_gpu_similarity.c's job. */
static void check_results(bench_t *b, wl_gpu_similarity *s, void *stream, size_t count)
{
    static wl_hit hits[QUERIES * TOP_K];
    size_t n = 0;
    if (wl_gpu_similarity_results(s, stream, hits, &n) != 0) {
        bench_fail(b, "search failed: %s", wl_gpu_similarity_error(s));
        return;
    }
    for (size_t q = 0; q < QUERIES; q++)
        for (size_t i = 0; i < n; i++) {
            const wl_hit *h = &hits[q * TOP_K + i];
            if (h->id >= count || (i > 0 && h->score > h[-1].score)) {
                bench_fail(b, "query %zu: hit %zu (id %u, score %g) is out of place", q, i,
                           (unsigned)h->id, (double)h->score);
                return;
            }
        }
}

/* One batched search of QUERIES queries against `count` candidates per iteration. */
static void search(bench_t *b, size_t count, bool cold, int kernel)
{
    wl_gpu_similarity *s = upload(b, count, kernel);
    if (!s)
        return;
    void *stream = bench_cuda_stream(b);
    /* Inputs read once per search: the candidates and their norms, the queries. */
    bench_set_bytes(b, (uint64_t)count * DIM * 4 + (uint64_t)count * 4 +
                           (uint64_t)QUERIES * DIM * 4);
    bench_set_elements(b, (uint64_t)count * QUERIES); /* scores computed */
    bool ok = true;
    /* A failed launch fails the benchmark before leaving the loop, so no sample follows. */
    if (cold) {
        /* One search per timed block: each finds a flushed L2 and a blocked stream. */
        BENCH_CUDA_ITER(b, 1) {
            if (wl_gpu_similarity_enqueue(s, stream) != 0) {
                bench_fail(b, "search failed: %s", wl_gpu_similarity_error(s));
                ok = false;
                break;
            }
        }
    } else {
        BENCH_ITER(b) {
            if (wl_gpu_similarity_enqueue(s, stream) != 0) {
                bench_fail(b, "search failed: %s", wl_gpu_similarity_error(s));
                ok = false;
                break;
            }
        }
    }
    if (ok)
        check_results(b, s, stream, count);
    wl_gpu_similarity_free(s);
}

BENCH_FN(gpu, vector_similarity_batch, .kind = BENCH_KIND_CUDA, BENCH_PARAMS(10000, 100000))
{
    search(b, (size_t)bench_param(b), false, WL_GPU_SCORES_BLOCKED);
}

BENCH_FN(gpu, vector_similarity_batch_cold, .kind = BENCH_KIND_CUDA, .cuda_cold = 1,
         .cuda_blocking = 1, BENCH_PARAMS(10000))
{
    search(b, (size_t)bench_param(b), true, WL_GPU_SCORES_BLOCKED);
}

/* The same search with the first kernel of the dot products, for comparison. */
BENCH_FN(gpu, vector_similarity_batch_simple, .kind = BENCH_KIND_CUDA,
         BENCH_PARAMS(10000, 100000))
{
    search(b, (size_t)bench_param(b), false, WL_GPU_SCORES_SIMPLE);
}

/* The device's streaming-read bandwidth over the same candidate block (4ND bytes). */
BENCH_FN(gpu, read_probe, .kind = BENCH_KIND_CUDA, BENCH_PARAMS(10000, 100000))
{
    size_t count = (size_t)bench_param(b);
    wl_gpu_similarity *s = upload(b, count, WL_GPU_SCORES_BLOCKED);
    if (!s)
        return;
    void *stream = bench_cuda_stream(b);
    bench_set_bytes(b, (uint64_t)count * DIM * 4);
    bench_set_elements(b, count); /* rows read */
    BENCH_ITER(b) {
        if (wl_gpu_similarity_read_probe_enqueue(s, stream) != 0) {
            bench_fail(b, "read probe failed: %s", wl_gpu_similarity_error(s));
            break;
        }
    }
    wl_gpu_similarity_free(s);
}
