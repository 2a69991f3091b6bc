/*
 * Tests of spreading activation, from one source and from a set of them, against a naive
 * reference written straight from the definition: every iteration scans all nodes for the firing
 * set, then all edges of the plain edge list once per firing node in ascending id, summing
 * (decay * a[u]) * w into a fresh incoming array, then applies a[v] = min(1, a[v] + in[v]) to
 * every node. Random graphs from 50 seeds (duplicate edges,
 * self loops, isolated nodes, zero weights) must match bit for bit, with the same iteration,
 * firing and edge counts. Hand-worked chains check the numbers themselves, and edge cases cover
 * thresholds above every activation, max_iterations 0, isolated sources and bad arguments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/workloads.h"

static void ref_spread_multi(size_t n, const wl_edge *edges, size_t ne, const uint32_t *sources,
                             size_t nsources, const wl_activation_params *p, float *a,
                             wl_activation_result *res)
{
    unsigned char *fired = calloc(n, 1), *fire = calloc(n, 1);
    float *in = calloc(n, sizeof(float));
    assert_non_null(fired);
    assert_non_null(fire);
    assert_non_null(in);
    for (size_t v = 0; v < n; v++)
        a[v] = 0.0f;
    for (size_t i = 0; i < nsources; i++)
        a[sources[i]] = 1.0f;
    memset(res, 0, sizeof(*res));
    for (uint32_t it = 0; it < p->max_iterations; it++) {
        size_t nfire = 0;
        for (size_t u = 0; u < n; u++) {
            fire[u] = !fired[u] && a[u] >= p->threshold;
            nfire += fire[u];
        }
        if (nfire == 0)
            break;
        for (size_t v = 0; v < n; v++)
            in[v] = 0.0f;
        for (size_t u = 0; u < n; u++) {
            if (!fire[u])
                continue;
            for (size_t e = 0; e < ne; e++) {
                if (edges[e].src == u) {
                    in[edges[e].dst] += (p->decay * a[u]) * edges[e].weight;
                    res->edges_traversed++;
                }
            }
        }
        for (size_t v = 0; v < n; v++) {
            float x = a[v] + in[v];
            a[v] = x < 1.0f ? x : 1.0f;
            if (fire[v])
                fired[v] = 1;
        }
        res->iterations++;
        res->fired += (uint32_t)nfire;
    }
    free(fired);
    free(fire);
    free(in);
}

static void ref_spread(size_t n, const wl_edge *edges, size_t ne, uint32_t source,
                       const wl_activation_params *p, float *a, wl_activation_result *res)
{
    ref_spread_multi(n, edges, ne, &source, 1, p, a, res);
}

static void test_random_against_naive(void **state)
{
    (void)state;
    enum { MAXN = 60, MAXE = 400 };
    wl_edge edges[MAXE];
    float got[MAXN], want[MAXN];
    wl_activation_ws *ws = NULL;
    assert_int_equal(wl_activation_ws_new(&ws, MAXN), 0);
    for (uint64_t seed = 0; seed < 50; seed++) {
        wl_rng r;
        wl_rng_seed(&r, seed, 500);
        size_t n = 1 + (size_t)wl_rng_below(&r, MAXN);
        size_t ne = (size_t)wl_rng_below(&r, MAXE + 1);
        /* Some nodes only ever receive: they are isolated as sources. */
        size_t sources = 1 + (size_t)wl_rng_below(&r, n);
        for (size_t e = 0; e < ne; e++) {
            edges[e].src = (uint32_t)wl_rng_below(&r, sources);
            edges[e].dst = (uint32_t)wl_rng_below(&r, n);
            edges[e].weight = wl_rng_below(&r, 20) == 0 ? 0.0f : 2.0f * wl_rng_float(&r);
        }
        wl_graph *g = NULL;
        assert_int_equal(wl_graph_from_edges(&g, n, edges, ne), 0);
        for (int q = 0; q < 10; q++) {
            wl_activation_params p = {
                .decay = wl_rng_float(&r),
                .threshold = 0.001f + 0.5f * wl_rng_float(&r),
                .max_iterations = (uint32_t)wl_rng_below(&r, 12),
            };
            uint32_t src = (uint32_t)wl_rng_below(&r, n);
            wl_activation_result rg, rw;
            /* Alternate the caller's workspace and the internal one. */
            assert_int_equal(wl_activation_spread(g, src, &p, q % 2 ? ws : NULL, got, &rg), 0);
            ref_spread(n, edges, ne, src, &p, want, &rw);
            assert_memory_equal(got, want, n * sizeof(float));
            assert_int_equal(rg.iterations, rw.iterations);
            assert_int_equal(rg.fired, rw.fired);
            assert_int_equal(rg.edges_traversed, rw.edges_traversed);
            for (size_t v = 0; v < n; v++)
                assert_true(got[v] >= 0.0f && got[v] <= 1.0f);
        }
        wl_graph_free(g);
    }
    wl_activation_ws_free(ws);
}

/* Same comparison on generated graphs (the CSR of wl_graph_new, edges rebuilt from it). */
static void test_generated_graph_against_naive(void **state)
{
    (void)state;
    wl_graph_params gp = {
        .seed = 8, .node_count = 300, .edge_count = 1500, .dim = 0, .max_age_days = 1.0f};
    wl_graph *g = NULL;
    assert_int_equal(wl_graph_new(&g, &gp), 0);
    wl_csr c = wl_graph_csr(g);
    wl_edge *edges = malloc(c.edge_count * sizeof(wl_edge));
    float *got = malloc(300 * sizeof(float)), *want = malloc(300 * sizeof(float));
    assert_non_null(edges);
    for (uint32_t u = 0; u < c.node_count; u++)
        for (uint32_t e = c.offsets[u]; e < c.offsets[u + 1]; e++)
            edges[e] = (wl_edge){u, c.targets[e], c.weights[e]};
    wl_activation_params p = {.decay = 0.6f, .threshold = 0.02f, .max_iterations = 10};
    size_t total_fired = 0;
    for (uint32_t src = 0; src < 300; src += 7) {
        wl_activation_result rg, rw;
        assert_int_equal(wl_activation_spread(g, src, &p, NULL, got, &rg), 0);
        ref_spread(300, edges, c.edge_count, src, &p, want, &rw);
        assert_memory_equal(got, want, 300 * sizeof(float));
        assert_int_equal(rg.fired, rw.fired);
        assert_int_equal(rg.edges_traversed, rw.edges_traversed);
        total_fired += rg.fired;
    }
    assert_true(total_fired > 100); /* the test exercised real propagation */
    free(edges);
    free(got);
    free(want);
    wl_graph_free(g);
}

/* Several sources at once, in any order and with repeats, against the naive definition; one
 * source gives exactly wl_activation_spread's result. */
static void test_multi_source_against_naive(void **state)
{
    (void)state;
    wl_graph_params gp = {
        .seed = 9, .node_count = 500, .edge_count = 2500, .dim = 0, .max_age_days = 1.0f};
    wl_graph *g = NULL;
    assert_int_equal(wl_graph_new(&g, &gp), 0);
    wl_csr c = wl_graph_csr(g);
    wl_edge *edges = malloc(c.edge_count * sizeof(wl_edge));
    float *got = malloc(500 * sizeof(float)), *want = malloc(500 * sizeof(float));
    assert_non_null(edges);
    assert_non_null(got);
    assert_non_null(want);
    for (uint32_t u = 0; u < c.node_count; u++)
        for (uint32_t e = c.offsets[u]; e < c.offsets[u + 1]; e++)
            edges[e] = (wl_edge){u, c.targets[e], c.weights[e]};
    wl_activation_ws *ws = NULL;
    assert_int_equal(wl_activation_ws_new(&ws, 500), 0);
    wl_rng r;
    wl_rng_seed(&r, 77, 501);
    for (int q = 0; q < 20; q++) {
        uint32_t src[40];
        size_t ns = (size_t)wl_rng_below(&r, 40);
        for (size_t i = 0; i < ns; i++) /* unsorted; every third among 8 ids: repeats */
            src[i] = (uint32_t)wl_rng_below(&r, i % 3 ? 500 : 8);
        wl_activation_params p = {.decay = 0.5f, .threshold = 0.001f + 0.05f * wl_rng_float(&r),
                                  .max_iterations = (uint32_t)wl_rng_below(&r, 20)};
        wl_activation_result rg, rw;
        assert_int_equal(wl_activation_spread_multi(g, src, ns, &p, q % 2 ? ws : NULL, got, &rg),
                         0);
        ref_spread_multi(500, edges, c.edge_count, src, ns, &p, want, &rw);
        assert_memory_equal(got, want, 500 * sizeof(float));
        assert_int_equal(rg.iterations, rw.iterations);
        assert_int_equal(rg.fired, rw.fired);
        assert_int_equal(rg.edges_traversed, rw.edges_traversed);
        if (ns > 0) {
            wl_activation_result r1, rm;
            assert_int_equal(wl_activation_spread(g, src[0], &p, ws, want, &r1), 0);
            assert_int_equal(wl_activation_spread_multi(g, src, 1, &p, ws, got, &rm), 0);
            assert_memory_equal(got, want, 500 * sizeof(float));
            assert_int_equal(r1.edges_traversed, rm.edges_traversed);
        }
    }
    /* No source: nothing fires, every activation is 0. */
    wl_activation_params p = {.decay = 0.5f, .threshold = 0.01f, .max_iterations = 10};
    wl_activation_result rz;
    assert_int_equal(wl_activation_spread_multi(g, NULL, 0, &p, ws, got, &rz), 0);
    assert_int_equal(rz.fired, 0);
    assert_int_equal(rz.edges_traversed, 0);
    for (size_t v = 0; v < 500; v++)
        assert_true(got[v] == 0.0f);
    /* Bad sources. */
    uint32_t bad[] = {3, 500};
    assert_int_equal(wl_activation_spread_multi(g, bad, 2, &p, ws, got, &rz), WL_E_INVAL);
    assert_int_equal(wl_activation_spread_multi(g, NULL, 1, &p, ws, got, &rz), WL_E_INVAL);
    wl_activation_ws_free(ws);
    free(edges);
    free(got);
    free(want);
    wl_graph_free(g);
}

static void test_hand_worked_chain(void **state)
{
    (void)state;
    /* 0 -> 1 (w 1), 1 -> 2 (w 0.5), 0 -> 2 (w 1), 2 -> 0 (w 1), node 3 isolated. */
    const wl_edge edges[] = {{0, 1, 1.0f}, {1, 2, 0.5f}, {0, 2, 1.0f}, {2, 0, 1.0f}};
    wl_graph *g = NULL;
    assert_int_equal(wl_graph_from_edges(&g, 4, edges, 4), 0);
    float a[4];
    wl_activation_result r;
    wl_activation_params p = {.decay = 0.5f, .threshold = 0.1f, .max_iterations = 100};
    assert_int_equal(wl_activation_spread(g, 0, &p, NULL, a, &r), 0);
    /* it 1: 0 fires: a1 = .5, a2 = .5. it 2: 1 and 2 fire (from .5): a2 += .125, a0 =
     * min(1, 1 + .25) = 1. it 3: nobody new fires, stop. */
    assert_true(a[0] == 1.0f);
    assert_true(a[1] == 0.5f);
    assert_true(a[2] == 0.625f);
    assert_true(a[3] == 0.0f);
    assert_int_equal(r.iterations, 2);
    assert_int_equal(r.fired, 3);
    assert_int_equal(r.edges_traversed, 4);

    /* max_iterations 1 stops after the first wave. */
    p.max_iterations = 1;
    assert_int_equal(wl_activation_spread(g, 0, &p, NULL, a, &r), 0);
    assert_true(a[0] == 1.0f && a[1] == 0.5f && a[2] == 0.5f);
    assert_int_equal(r.iterations, 1);

    /* max_iterations 0: only the source is active. */
    p.max_iterations = 0;
    assert_int_equal(wl_activation_spread(g, 0, &p, NULL, a, &r), 0);
    assert_true(a[0] == 1.0f && a[1] == 0.0f && a[2] == 0.0f && a[3] == 0.0f);
    assert_int_equal(r.iterations, 0);
    assert_int_equal(r.fired, 0);

    /* Threshold above every activation: the source (1.0) never fires. */
    p.max_iterations = 100;
    p.threshold = 1.5f;
    assert_int_equal(wl_activation_spread(g, 0, &p, NULL, a, &r), 0);
    assert_true(a[0] == 1.0f && a[1] == 0.0f && a[2] == 0.0f);
    assert_int_equal(r.iterations, 0);

    /* Threshold between waves: the source fires, its neighbours (0.5) do not. */
    p.threshold = 0.75f;
    assert_int_equal(wl_activation_spread(g, 0, &p, NULL, a, &r), 0);
    assert_true(a[1] == 0.5f && a[2] == 0.5f);
    assert_int_equal(r.iterations, 1);
    assert_int_equal(r.fired, 1);

    /* Activation exactly at the threshold fires (>=). */
    p.threshold = 0.5f;
    assert_int_equal(wl_activation_spread(g, 0, &p, NULL, a, &r), 0);
    assert_int_equal(r.fired, 3);
    assert_true(a[2] == 0.625f);

    /* Isolated source: fires, reaches nobody. */
    p.threshold = 0.1f;
    assert_int_equal(wl_activation_spread(g, 3, &p, NULL, a, &r), 0);
    assert_true(a[3] == 1.0f && a[0] == 0.0f && a[1] == 0.0f && a[2] == 0.0f);
    assert_int_equal(r.fired, 1);
    assert_int_equal(r.edges_traversed, 0);

    /* decay 0: contributions are 0, so nobody but the source fires. */
    p.decay = 0.0f;
    assert_int_equal(wl_activation_spread(g, 0, &p, NULL, a, &r), 0);
    assert_true(a[1] == 0.0f && a[2] == 0.0f);
    assert_int_equal(r.fired, 1);
    wl_graph_free(g);
}

static void test_cap_at_one(void **state)
{
    (void)state;
    /* Three parallel heavy edges into node 1: 3 * 0.9 * 1 * 1 would be 2.7; capped to 1. */
    const wl_edge edges[] = {{0, 1, 1.0f}, {0, 1, 1.0f}, {0, 1, 1.0f}};
    wl_graph *g = NULL;
    assert_int_equal(wl_graph_from_edges(&g, 2, edges, 3), 0);
    float a[2];
    wl_activation_params p = {.decay = 0.9f, .threshold = 0.5f, .max_iterations = 5};
    assert_int_equal(wl_activation_spread(g, 0, &p, NULL, a, NULL), 0);
    assert_true(a[1] == 1.0f);
    wl_graph_free(g);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    const wl_edge edges[] = {{0, 1, 1.0f}};
    wl_graph *g = NULL, *empty = NULL;
    assert_int_equal(wl_graph_from_edges(&g, 3, edges, 1), 0);
    assert_int_equal(wl_graph_from_edges(&empty, 0, NULL, 0), 0);
    float a[3];
    wl_activation_params p = {.decay = 0.5f, .threshold = 0.1f, .max_iterations = 5};
    assert_int_equal(wl_activation_spread(NULL, 0, &p, NULL, a, NULL), WL_E_INVAL);
    assert_int_equal(wl_activation_spread(g, 0, NULL, NULL, a, NULL), WL_E_INVAL);
    assert_int_equal(wl_activation_spread(g, 0, &p, NULL, NULL, NULL), WL_E_INVAL);
    assert_int_equal(wl_activation_spread(g, 3, &p, NULL, a, NULL), WL_E_INVAL);
    assert_int_equal(wl_activation_spread(empty, 0, &p, NULL, a, NULL), WL_E_INVAL);
    wl_activation_params bad = p;
    bad.decay = 1.5f;
    assert_int_equal(wl_activation_spread(g, 0, &bad, NULL, a, NULL), WL_E_INVAL);
    bad.decay = NAN;
    assert_int_equal(wl_activation_spread(g, 0, &bad, NULL, a, NULL), WL_E_INVAL);
    bad = p;
    bad.threshold = 0.0f;
    assert_int_equal(wl_activation_spread(g, 0, &bad, NULL, a, NULL), WL_E_INVAL);
    bad.threshold = INFINITY;
    assert_int_equal(wl_activation_spread(g, 0, &bad, NULL, a, NULL), WL_E_INVAL);
    bad.threshold = NAN;
    assert_int_equal(wl_activation_spread(g, 0, &bad, NULL, a, NULL), WL_E_INVAL);

    wl_activation_ws *small = NULL;
    assert_int_equal(wl_activation_ws_new(&small, 2), 0);
    assert_int_equal(wl_activation_spread(g, 0, &p, small, a, NULL), WL_E_INVAL);
    wl_activation_ws_free(small);
    wl_activation_ws_free(NULL);
    assert_int_equal(wl_activation_ws_new(NULL, 2), WL_E_INVAL);
    assert_int_equal(wl_activation_ws_new(&small, WL_MAX_NODES + 1), WL_E_OVERFLOW);
    assert_null(small);
    wl_graph_free(g);
    wl_graph_free(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_naive),
        cmocka_unit_test(test_generated_graph_against_naive),
        cmocka_unit_test(test_multi_source_against_naive),
        cmocka_unit_test(test_hand_worked_chain),
        cmocka_unit_test(test_cap_at_one),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
