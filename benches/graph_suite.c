/*
 * graph_suite.c: the reference suite over the graph workload (workloads/). The named benchmarks
 * of the workload, its scaling variants with throughput, and a read-bandwidth probe over buffers
 * of the same sizes, so a kernel's effective bandwidth can be put against the machine's in one
 * run (scripts/bandwidth_check.sh does that from the JSON results).
 *
 * Setup (building graphs and candidate matrices) is never timed; every input is seeded, so the
 * same build measures the same work on every run.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <harness/bench.h>
#include <workloads/workloads.h>

#include "suite_data.h"

#define DIM SUITE_DIM
#define SEED SUITE_SEED

BENCH_GROUP(workload, .measurement_time = 2.0);
BENCH_GROUP(scaling, .measurement_time = 1.5);

/* `count` query vectors of DIM floats each, drawn from their own seed. */
static float *make_queries(uint64_t seed, size_t count)
{
    float *q = malloc(count * DIM * sizeof *q);
    if (!q)
        return NULL;
    wl_rng r;
    wl_rng_seed(&r, seed, 1);
    for (size_t i = 0; i < count * DIM; i++)
        q[i] = wl_rng_float_signed(&r);
    return q;
}

static float *make_query(uint64_t seed)
{
    return make_queries(seed, 1);
}

/* One query against `count` candidates, top 10: the streaming read of count x DIM floats. */
static void similarity(bench_t *b, size_t count)
{
    int rc = 0;
    float *q = make_query(SEED + 1);
    const wl_matrix *m = q ? suite_matrix(count, &rc) : NULL;
    if (!m) {
        free(q);
        bench_fail(b, "cannot build %zu candidates: %s", count, wl_strerror(q ? rc : WL_E_NOMEM));
        return;
    }
    wl_candidates c = wl_matrix_candidates(m);
    wl_hit hits[10];
    size_t nhits = 0;
    bench_set_bytes(b, (uint64_t)count * DIM * sizeof(float));
    bench_set_elements(b, count); /* candidates scored */
    BENCH_ITER(b) {
        wl_similarity_topk(&c, q, 10, hits, &nhits);
        bench_clobber();
    }
    free(q);
}

BENCH_FN(workload, vector_similarity_1000)
{
    similarity(b, 1000);
}

BENCH_FN(scaling, similarity, BENCH_PARAMS(1000, 10000, 100000))
{
    similarity(b, (size_t)bench_param(b));
}

/*
 * Q queries at once against the profile's 10,000 candidates (30.7 MB), top 10 each, with the
 * blocked kernel: per query the same work as scaling/similarity/10000 (the first query is the
 * same vector), but each candidate row is read once per block of 64 queries. Elements: candidates
 * scored (Q x 10,000), so elem/s compares directly with scaling/similarity/10000 and the flop rate
 * is 2 x 768 flops per element (docs/workloads.md), held against scaling/compute_probe.
 */
BENCH_FN(scaling, similarity_batch, BENCH_PARAMS(1, 8, 64))
{
    enum { COUNT = 10000, K = 10 };
    size_t nq = (size_t)bench_param(b);
    int rc = 0;
    float *q = make_queries(SEED + 1, nq);
    wl_hit *hits = malloc(nq * K * sizeof *hits);
    size_t *counts = malloc(nq * sizeof *counts);
    const wl_matrix *m = q && hits && counts ? suite_matrix(COUNT, &rc) : NULL;
    if (!m) {
        bench_fail(b, "cannot build %d candidates: %s", COUNT,
                   wl_strerror(q && hits && counts ? rc : WL_E_NOMEM));
        goto done;
    }
    wl_candidates c = wl_matrix_candidates(m);
    bench_set_elements(b, (uint64_t)nq * COUNT);
    BENCH_ITER(b) {
        wl_similarity_topk_batch(&c, q, nq, K, hits, counts);
        bench_clobber();
    }
done:
    free(q);
    free(hits);
    free(counts);
}

/*
 * The core's peak flop rate at the kernels' vector width: independent 8-lane FMA chains, no
 * memory (wl_compute_probe). Elements: flops, so elem/s is flop/s. It anchors the batched
 * similarity's flop rate the way read_probe anchors the bandwidth of the single-query scan.
 */
BENCH_FN(scaling, compute_probe)
{
    enum { ROUNDS = 4096 };
    bench_set_elements(b, (uint64_t)ROUNDS * WL_COMPUTE_PROBE_FLOPS_PER_ROUND);
    size_t rounds = ROUNDS;
    BENCH_ITER(b) {
        /* An opaque round count, so the compiler cannot specialise the call to a constant. */
        rounds = bench_black_box(rounds);
        bench_black_box(wl_compute_probe(rounds));
    }
}

/* The single-core read bandwidth over a buffer of count x DIM floats, read the same way. */
BENCH_FN(scaling, read_probe, BENCH_PARAMS(1000, 10000, 100000))
{
    size_t count = (size_t)bench_param(b);
    int rc = 0;
    const wl_matrix *m = suite_matrix(count, &rc);
    if (!m) {
        bench_fail(b, "cannot build %zu rows: %s", count, wl_strerror(rc));
        return;
    }
    wl_candidates c = wl_matrix_candidates(m);
    bench_set_bytes(b, (uint64_t)count * DIM * sizeof(float));
    bench_set_elements(b, count); /* rows read */
    BENCH_ITER(b) {
        bench_black_box(wl_read_probe(c.vectors, count * DIM));
    }
}

/*
 * Spreading activation over a graph of `nodes` nodes and 5 x nodes edges, from one source in every
 * `spacing` nodes (ids 0, spacing, 2 spacing, ...) at once. Elements: the edges one iteration
 * traverses.
 */
static void activation(bench_t *b, size_t nodes, size_t spacing, uint32_t max_iterations)
{
    wl_graph_params gp;
    memset(&gp, 0, sizeof gp);
    gp.seed = SEED;
    gp.node_count = nodes;
    gp.edge_count = 5 * nodes;
    gp.dim = 0;
    gp.max_age_days = 365.0f;
    wl_graph *g = NULL;
    wl_activation_ws *ws = NULL;
    float *act = malloc(nodes * sizeof *act);
    size_t nsources = (nodes + spacing - 1) / spacing;
    uint32_t *sources = malloc(nsources * sizeof *sources);
    for (size_t i = 0; sources && i < nsources; i++)
        sources[i] = (uint32_t)(i * spacing);
    int rc = act && sources ? wl_graph_new(&g, &gp) : WL_E_NOMEM;
    if (rc == 0)
        rc = wl_activation_ws_new(&ws, nodes);
    if (rc != 0) {
        bench_fail(b, "cannot build a graph of %zu nodes: %s", nodes, wl_strerror(rc));
        goto done;
    }
    wl_activation_params ap = {.decay = 0.5f, .threshold = 0.001f,
                               .max_iterations = max_iterations};
    wl_activation_result res;
    /* One untimed run tells how many edges a query traverses: the throughput unit. */
    rc = wl_activation_spread_multi(g, sources, nsources, &ap, ws, act, &res);
    if (rc != 0) {
        bench_fail(b, "activation failed: %s", wl_strerror(rc));
        goto done;
    }
    bench_set_elements(b, res.edges_traversed);
    BENCH_ITER(b) {
        wl_activation_spread_multi(g, sources, nsources, &ap, ws, act, &res);
        bench_clobber();
    }
done:
    wl_activation_ws_free(ws);
    wl_graph_free(g);
    free(sources);
    free(act);
}

/* One query from node 0 of a 1000-node graph. */
BENCH_FN(workload, spreading_activation_1000)
{
    activation(b, 1000, 1000, 100);
}

/*
 * The work grows with the graph: one source in every 100 nodes starts a wave that reaches nearly
 * all of it (98% of the nodes fire), so an iteration traverses 4.9 edges per node at every size
 * (4908, 49263 and 491799 edges). From a single source the wave's reach depends on that node's
 * neighbourhood, not on the graph's size (4099, 1234 and 35629 edges from node 0): such a series
 * says nothing about scaling. tests/e2e/test_scaling.py holds the elements to the parameter.
 */
BENCH_FN(scaling, activation, BENCH_PARAMS(1000, 10000, 100000))
{
    activation(b, (size_t)bench_param(b), 100, 100);
}

BENCH_FN(workload, decay_10k_memories)
{
    enum { N = 10000 };
    float *base = malloc(N * sizeof *base), *age = malloc(N * sizeof *age);
    float *out = malloc(N * sizeof *out);
    if (!base || !age || !out) {
        bench_fail(b, "out of memory");
        goto done;
    }
    wl_rng r;
    wl_rng_seed(&r, SEED, 2);
    for (size_t i = 0; i < N; i++) {
        base[i] = wl_rng_float(&r);
        age[i] = 365.0f * wl_rng_float(&r); /* ages from 0 to a year, in days */
    }
    bench_set_elements(b, N);
    BENCH_ITER(b) {
        wl_decay_apply(base, age, out, N, 1.0f);
        bench_clobber();
    }
done:
    free(base);
    free(age);
    free(out);
}

/* The workload's phases as the body's spans (--trace shows them and their shares). */
static void mark_phase(void *b, const char *name, int begin)
{
    if (begin)
        bench_span_begin((bench_t *)b, name);
    else
        bench_span_end((bench_t *)b, name);
}

/* The full profiling workload: build the 10k/50k graph, 1000 activation queries, 1000
 * similarity queries (top 10 of 10,000), decay over all memories, each phase a span. About 2 s
 * an iteration here: flat sampling, a few samples. The checksum must never change between
 * iterations. Its 6 s budget is what gives it several worker processes (one sample each): with
 * the group's 2 s it got one process on a loaded machine (1.2-2.4 s an iteration), so no interval
 * over processes at all, and would get 3 on a quiet one (0.6 s), an interval about three times
 * as wide as 8 give; under load it saved no time either, its 3 samples overrunning the 2 s
 * (docs/measurement.md, "Worker processes"). */
BENCH_FN(workload, profiling_workload, .warm_up_time = 0.01, .measurement_time = 6.0,
         .sample_size = 10)
{
    wl_profile_result res;
    wl_profile_params params;
    wl_profile_params_default(&params, SEED);
    params.phase = mark_phase;
    params.phase_arg = b;
    uint64_t first = 0, bad = 0;
    bool have = false;
    BENCH_ITER(b) {
        if (wl_profile_run_params(&params, &res) != 0)
            bad = 1;
        if (!have) {
            first = res.checksum;
            have = true;
        }
        bad |= res.checksum ^ first;
    }
    if (bad)
        bench_fail(b, "the workload failed or its checksum changed between iterations "
                      "(first %016llx)", (unsigned long long)first);
}
