/*
 * The full profiling workload. Each phase is its own out-of-line function (wl__profile_phase_*) so
 * a sampling profiler attributes time by phase, and each folds its results into the checksum in a
 * fixed order (documented in docs/workloads.md). Invariant: the checksum depends only on the
 * parameters, never on timing, allocation addresses or the SIMD path.
 */
#define _POSIX_C_SOURCE 199309L

#include <stdlib.h>
#include <time.h>

#include "wl_internal.h"

/* Random streams of the profile's own draws (the graph uses streams 1-3). */
#define STREAM_ACTIVATION_SOURCES 10
#define STREAM_SIMILARITY_QUERIES 11

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Checksum step: h' = mix64(h ^ v) + golden ratio constant. */
static inline void fold(uint64_t *h, uint64_t v)
{
    *h = wl_mix64(*h ^ v) + UINT64_C(0x9E3779B97F4A7C15);
}

/* A float quantised to a multiple of 2^-20, rounded half away from zero, as a 64-bit integer.
 * Exact in double for |x| < 2^32, which all workload values are. */
static inline uint64_t quant(float x)
{
    double y = (double)x * 1048576.0;
    int64_t q = (int64_t)(y >= 0.0 ? y + 0.5 : y - 0.5);
    return (uint64_t)q;
}

/* Sum over v of floor(a[v] * 2^20) * (2v + 1), mod 2^64: position-weighted, branch-free and
 * cheap next to the query itself. a[v] * 2^20 is exact in float and below 2^31 (a[v] <= 1). */
static uint64_t activation_digest(const float *act, size_t n)
{
    uint64_t s = 0;
    for (size_t v = 0; v < n; v++)
        s += (uint64_t)(uint32_t)(act[v] * 1048576.0f) * (2 * (uint64_t)v + 1);
    return s;
}

void wl_profile_params_default(wl_profile_params *p, uint64_t seed)
{
    wl_graph_params_reference(&p->graph, seed);
    p->activation_queries = 1000;
    p->activation.decay = 0.5f;
    p->activation.threshold = 0.01f;
    p->activation.max_iterations = 8;
    p->similarity_queries = 1000;
    p->top_k = 10;
    p->similarity_batch = 64;
    p->decay_tau_days = 1.0f;
    p->phase = NULL;
    p->phase_arg = NULL;
}

/* The phase hook, when there is one. */
static void phase(const wl_profile_params *p, const char *name, int begin)
{
    if (p->phase)
        p->phase(p->phase_arg, name, begin);
}

WL__NOINLINE int wl__profile_phase_build(const wl_profile_params *p, wl_graph **g)
{
    return wl_graph_new(g, &p->graph);
}

WL__NOINLINE int wl__profile_phase_activation(const wl_graph *g, const wl_profile_params *p,
                                              uint64_t *h, wl_profile_result *out)
{
    size_t n = g->node_count;
    if (p->activation_queries == 0)
        return 0;
    if (n == 0)
        return WL_E_INVAL;
    wl_activation_ws *ws = NULL;
    int rc = wl_activation_ws_new(&ws, n);
    if (rc != 0)
        return rc;
    float *act = malloc(n * sizeof(float));
    if (act == NULL) {
        wl_activation_ws_free(ws);
        return WL_E_NOMEM;
    }
    wl_rng r;
    wl_rng_seed(&r, p->graph.seed, STREAM_ACTIVATION_SOURCES);
    for (size_t q = 0; q < p->activation_queries && rc == 0; q++) {
        uint32_t source = (uint32_t)wl_rng_below(&r, n);
        wl_activation_result res;
        rc = wl_activation_spread(g, source, &p->activation, ws, act, &res);
        if (rc != 0)
            break;
        fold(h, source);
        fold(h, res.iterations);
        fold(h, res.fired);
        fold(h, res.edges_traversed);
        fold(h, activation_digest(act, n));
        out->edges_traversed += res.edges_traversed;
        out->nodes_fired += res.fired;
    }
    free(act);
    wl_activation_ws_free(ws);
    return rc;
}

/*
 * Similarity queries in batches of p->similarity_batch (1: one wl_similarity_topk call each). The
 * queries and the checksum see the same draws and folds in the same order whatever the batch. The
 * batch's scores (fused multiply-add) agree with the single query's only to a tolerance, so the
 * checksum has one value for single queries and another for batches; it does not depend on the
 * batch size, since a batch's scores do not.
 */
WL__NOINLINE int wl__profile_phase_similarity(const wl_graph *g, const wl_profile_params *p,
                                              uint64_t *h)
{
    size_t n = g->node_count, d = g->dim, k = p->top_k;
    if (p->similarity_queries == 0)
        return 0;
    if (n == 0)
        return WL_E_INVAL;
    size_t batch = p->similarity_batch > 1 ? p->similarity_batch : 1;
    if (batch > p->similarity_queries)
        batch = p->similarity_queries;
    if ((d > 0 && batch > SIZE_MAX / sizeof(float) / d) ||
        batch > SIZE_MAX / sizeof(wl_hit) / (k > 0 ? k : 1))
        return WL_E_OVERFLOW;
    float *query = wl__alloc_aligned(batch * d * sizeof(float));
    wl_hit *hits = malloc(batch * (k > 0 ? k : 1) * sizeof(wl_hit));
    size_t *target = malloc(batch * sizeof(size_t)), *count = malloc(batch * sizeof(size_t));
    if (query == NULL || hits == NULL || target == NULL || count == NULL) {
        free(query);
        free(hits);
        free(target);
        free(count);
        return WL_E_NOMEM;
    }
    wl_candidates cand = wl_graph_candidates(g);
    wl_rng r;
    wl_rng_seed(&r, p->graph.seed, STREAM_SIMILARITY_QUERIES);
    int rc = 0;
    for (size_t q0 = 0; q0 < p->similarity_queries && rc == 0; q0 += batch) {
        size_t nb = p->similarity_queries - q0 < batch ? p->similarity_queries - q0 : batch;
        for (size_t a = 0; a < nb; a++) {
            /* A noisy copy of one stored memory: retrieval should rank that memory first. */
            target[a] = (size_t)wl_rng_below(&r, n);
            for (size_t j = 0; j < d; j++)
                query[a * d + j] = g->embeddings[target[a] * d + j] + wl__rng_float_signed(&r);
        }
        if (batch == 1)
            rc = wl_similarity_topk(&cand, query, k, hits, &count[0]);
        else
            rc = wl_similarity_topk_batch(&cand, query, nb, k, hits, count);
        for (size_t a = 0; a < nb && rc == 0; a++) {
            fold(h, target[a]);
            fold(h, count[a]);
            for (size_t i = 0; i < count[a]; i++) {
                fold(h, hits[a * k + i].id);
                fold(h, quant(hits[a * k + i].score));
            }
        }
    }
    free(query);
    free(hits);
    free(target);
    free(count);
    return rc;
}

WL__NOINLINE int wl__profile_phase_decay(const wl_graph *g, const wl_profile_params *p,
                                         uint64_t *h)
{
    size_t n = g->node_count;
    float *strength = malloc((n > 0 ? n : 1) * sizeof(float));
    if (strength == NULL)
        return WL_E_NOMEM;
    int rc = wl_graph_decay(g, p->decay_tau_days, strength);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            fold(h, quant(strength[i]));
    }
    free(strength);
    return rc;
}

int wl_profile_run_params(const wl_profile_params *p, wl_profile_result *out)
{
    if (p == NULL || out == NULL)
        return WL_E_INVAL;
    wl_profile_result res = {0};
    res.simd = wl_simd_name(wl_simd_active());
    uint64_t h = UINT64_C(0x243F6A8885A308D3);
    double t0 = now_s();

    wl_graph *g = NULL;
    phase(p, "build", 1);
    int rc = wl__profile_phase_build(p, &g);
    phase(p, "build", 0);
    double t1 = now_s();
    if (rc != 0)
        return rc;
    fold(&h, g->node_count);
    fold(&h, g->edge_count);
    fold(&h, g->dim);

    phase(p, "activation", 1);
    rc = wl__profile_phase_activation(g, p, &h, &res);
    phase(p, "activation", 0);
    double t2 = now_s();
    if (rc == 0) {
        phase(p, "similarity", 1);
        rc = wl__profile_phase_similarity(g, p, &h);
        phase(p, "similarity", 0);
    }
    double t3 = now_s();
    if (rc == 0) {
        phase(p, "decay", 1);
        rc = wl__profile_phase_decay(g, p, &h);
        phase(p, "decay", 0);
    }
    double t4 = now_s();
    wl_graph_free(g);
    if (rc != 0)
        return rc;

    res.build_s = t1 - t0;
    res.activation_s = t2 - t1;
    res.similarity_s = t3 - t2;
    res.decay_s = t4 - t3;
    res.total_s = now_s() - t0;
    res.checksum = h;
    *out = res;
    return 0;
}

int wl_profile_run(uint64_t seed, wl_profile_result *out)
{
    wl_profile_params p;
    wl_profile_params_default(&p, seed);
    return wl_profile_run_params(&p, out);
}
