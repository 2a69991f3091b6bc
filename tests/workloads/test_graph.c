/*
 * Tests of graph and matrix construction: bad parameters give the documented negative codes and
 * never crash (including an allocation that cannot succeed); a seed fully determines the graph;
 * the CSR arrays are well formed and keep per-source edge order; embeddings are aligned, in range,
 * and shared between a graph and a matrix of the same seed; norms are sqrtf of the dot kernel.
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

static wl_graph_params small_params(uint64_t seed)
{
    wl_graph_params p = {
        .seed = seed, .node_count = 200, .edge_count = 1000, .dim = 40, .max_age_days = 30.0f};
    return p;
}

static void test_bad_params(void **state)
{
    (void)state;
    wl_graph *g = (wl_graph *)&g; /* must be reset to NULL on error */
    wl_graph_params p = small_params(1);
    assert_int_equal(wl_graph_new(NULL, &p), WL_E_INVAL);
    assert_int_equal(wl_graph_new(&g, NULL), WL_E_INVAL);
    assert_null(g);

    p.node_count = 0;
    p.edge_count = 5;
    assert_int_equal(wl_graph_new(&g, &p), WL_E_INVAL); /* edges but no nodes */
    assert_null(g);
    p.node_count = 1;
    assert_int_equal(wl_graph_new(&g, &p), WL_E_INVAL); /* no other node to point at */

    p = small_params(1);
    p.max_age_days = -1.0f;
    assert_int_equal(wl_graph_new(&g, &p), WL_E_INVAL);
    p.max_age_days = NAN;
    assert_int_equal(wl_graph_new(&g, &p), WL_E_INVAL);

    p = small_params(1);
    p.node_count = WL_MAX_NODES + 1;
    assert_int_equal(wl_graph_new(&g, &p), WL_E_OVERFLOW);
    p = small_params(1);
    p.edge_count = WL_MAX_EDGES + 1;
    assert_int_equal(wl_graph_new(&g, &p), WL_E_OVERFLOW);
    p = small_params(1);
    p.node_count = WL_MAX_NODES;
    p.dim = SIZE_MAX / 2; /* N * D * 4 bytes overflows size_t */
    assert_int_equal(wl_graph_new(&g, &p), WL_E_OVERFLOW);
    assert_null(g);

    /* Representable but impossible: 2^52 bytes of embeddings. */
    p = small_params(1);
    p.node_count = 1024;
    p.edge_count = 0;
    p.dim = (size_t)1 << 40;
    assert_int_equal(wl_graph_new(&g, &p), WL_E_NOMEM);
    assert_null(g);

    wl_matrix *m = (wl_matrix *)&m;
    assert_int_equal(wl_matrix_new(NULL, 1, 1, 0), WL_E_INVAL);
    assert_int_equal(wl_matrix_new(&m, WL_MAX_NODES + 1, 1, 0), WL_E_OVERFLOW);
    assert_null(m);
    assert_int_equal(wl_matrix_new(&m, 1024, (size_t)1 << 40, 0), WL_E_NOMEM);
    assert_null(m);

    wl_graph_free(NULL);
    wl_matrix_free(NULL);
}

static void test_empty_and_dimensionless(void **state)
{
    (void)state;
    wl_graph_params p = small_params(3);
    p.node_count = 0;
    p.edge_count = 0;
    wl_graph *g = NULL;
    assert_int_equal(wl_graph_new(&g, &p), 0);
    assert_non_null(g);
    assert_int_equal(wl_graph_node_count(g), 0);
    assert_int_equal(wl_graph_edge_count(g), 0);
    assert_null(wl_graph_embeddings(g));
    wl_csr c = wl_graph_csr(g);
    assert_int_equal(c.offsets[0], 0);
    wl_graph_free(g);

    p = small_params(3);
    p.dim = 0;
    assert_int_equal(wl_graph_new(&g, &p), 0);
    assert_int_equal(wl_graph_dim(g), 0);
    assert_null(wl_graph_embeddings(g));
    for (size_t i = 0; i < p.node_count; i++)
        assert_true(wl_graph_norms(g)[i] == 0.0f);
    wl_graph_free(g);
}

static void check_csr(const wl_graph *g)
{
    wl_csr c = wl_graph_csr(g);
    assert_int_equal(c.node_count, wl_graph_node_count(g));
    assert_int_equal(c.edge_count, wl_graph_edge_count(g));
    assert_int_equal(c.offsets[0], 0);
    assert_int_equal(c.offsets[c.node_count], c.edge_count);
    for (size_t u = 0; u < c.node_count; u++) {
        assert_true(c.offsets[u] <= c.offsets[u + 1]);
        for (uint32_t e = c.offsets[u]; e < c.offsets[u + 1]; e++) {
            assert_true(c.targets[e] < c.node_count);
            assert_true(c.targets[e] != u); /* random graphs draw no self loops */
            assert_true(c.weights[e] > 0.0f && c.weights[e] <= 1.0f);
        }
    }
}

static void test_random_graph_properties(void **state)
{
    (void)state;
    for (uint64_t seed = 0; seed < 20; seed++) {
        wl_graph_params p = small_params(seed);
        wl_graph *g = NULL;
        assert_int_equal(wl_graph_new(&g, &p), 0);
        check_csr(g);
        const float *emb = wl_graph_embeddings(g);
        assert_int_equal((uintptr_t)emb % 64, 0);
        for (size_t i = 0; i < p.node_count * p.dim; i++)
            assert_true(emb[i] >= -1.0f && emb[i] < 1.0f);
        for (size_t i = 0; i < p.node_count; i++) {
            const float *row = emb + i * p.dim;
            float n = sqrtf(wl_dot(row, row, p.dim));
            assert_memory_equal(&wl_graph_norms(g)[i], &n, sizeof(float));
            assert_true(wl_graph_ages(g)[i] >= 0.0f && wl_graph_ages(g)[i] < p.max_age_days);
            assert_true(wl_graph_strengths(g)[i] > 0.0f && wl_graph_strengths(g)[i] <= 1.0f);
        }
        wl_candidates cand = wl_graph_candidates(g);
        assert_ptr_equal(cand.vectors, emb);
        assert_ptr_equal(cand.norms, wl_graph_norms(g));
        assert_int_equal(cand.count, p.node_count);
        assert_int_equal(cand.dim, p.dim);
        wl_graph_free(g);
    }
}

static int graphs_equal(const wl_graph *a, const wl_graph *b, int compare_embeddings)
{
    size_t n = wl_graph_node_count(a), e = wl_graph_edge_count(a), d = wl_graph_dim(a);
    if (n != wl_graph_node_count(b) || e != wl_graph_edge_count(b))
        return 0;
    wl_csr x = wl_graph_csr(a), y = wl_graph_csr(b);
    if (memcmp(x.offsets, y.offsets, (n + 1) * sizeof(uint32_t)) != 0 ||
        memcmp(x.targets, y.targets, e * sizeof(uint32_t)) != 0 ||
        memcmp(x.weights, y.weights, e * sizeof(float)) != 0 ||
        memcmp(wl_graph_ages(a), wl_graph_ages(b), n * sizeof(float)) != 0 ||
        memcmp(wl_graph_strengths(a), wl_graph_strengths(b), n * sizeof(float)) != 0)
        return 0;
    if (compare_embeddings &&
        (d != wl_graph_dim(b) ||
         memcmp(wl_graph_embeddings(a), wl_graph_embeddings(b), n * d * sizeof(float)) != 0 ||
         memcmp(wl_graph_norms(a), wl_graph_norms(b), n * sizeof(float)) != 0))
        return 0;
    return 1;
}

static void test_seed_determines_graph(void **state)
{
    (void)state;
    wl_graph_params p = small_params(11);
    wl_graph *a = NULL, *b = NULL, *c = NULL, *flat = NULL;
    assert_int_equal(wl_graph_new(&a, &p), 0);
    assert_int_equal(wl_graph_new(&b, &p), 0);
    assert_true(graphs_equal(a, b, 1));
    p.seed = 12;
    assert_int_equal(wl_graph_new(&c, &p), 0);
    assert_false(graphs_equal(a, c, 0));
    /* The topology, ages and strengths do not depend on D (separate PRNG streams). */
    p.seed = 11;
    p.dim = 0;
    assert_int_equal(wl_graph_new(&flat, &p), 0);
    assert_true(graphs_equal(a, flat, 0));
    wl_graph_free(a);
    wl_graph_free(b);
    wl_graph_free(c);
    wl_graph_free(flat);
}

static void test_matrix_matches_graph_embeddings(void **state)
{
    (void)state;
    wl_graph_params p = small_params(21);
    wl_graph *g = NULL;
    wl_matrix *m = NULL;
    assert_int_equal(wl_graph_new(&g, &p), 0);
    assert_int_equal(wl_matrix_new(&m, p.node_count, p.dim, p.seed), 0);
    wl_candidates c = wl_matrix_candidates(m);
    assert_int_equal((uintptr_t)c.vectors % 64, 0);
    assert_int_equal(c.count, p.node_count);
    assert_int_equal(c.dim, p.dim);
    assert_memory_equal(c.vectors, wl_graph_embeddings(g), p.node_count * p.dim * sizeof(float));
    assert_memory_equal(c.norms, wl_graph_norms(g), p.node_count * sizeof(float));
    wl_matrix_free(m);
    wl_graph_free(g);

    assert_int_equal(wl_matrix_new(&m, 0, 768, 1), 0);
    assert_int_equal(wl_matrix_candidates(m).count, 0);
    wl_matrix_free(m);
}

static void test_from_edges(void **state)
{
    (void)state;
    /* Node 3 is isolated; node 0 has a duplicate edge and a self loop, in list order. */
    const wl_edge edges[] = {
        {2, 1, 0.5f}, {0, 1, 0.25f}, {0, 0, 1.0f}, {4, 2, 0.0f}, {0, 1, 0.75f}, {1, 4, 2.0f},
    };
    wl_graph *g = NULL;
    assert_int_equal(wl_graph_from_edges(&g, 5, edges, 6), 0);
    wl_csr c = wl_graph_csr(g);
    static const uint32_t off[] = {0, 3, 4, 5, 5, 6};
    static const uint32_t tgt[] = {1, 0, 1, 4, 1, 2};
    static const float w[] = {0.25f, 1.0f, 0.75f, 2.0f, 0.5f, 0.0f};
    assert_memory_equal(c.offsets, off, sizeof(off));
    assert_memory_equal(c.targets, tgt, sizeof(tgt));
    assert_memory_equal(c.weights, w, sizeof(w));
    assert_int_equal(wl_graph_dim(g), 0);
    assert_true(wl_graph_strengths(g)[3] == 1.0f && wl_graph_ages(g)[3] == 0.0f);
    wl_graph_free(g);

    wl_graph *bad = (wl_graph *)&bad;
    const wl_edge out_of_range[] = {{0, 5, 1.0f}};
    assert_int_equal(wl_graph_from_edges(&bad, 5, out_of_range, 1), WL_E_INVAL);
    assert_null(bad);
    const wl_edge negative[] = {{0, 1, -1.0f}};
    assert_int_equal(wl_graph_from_edges(&bad, 5, negative, 1), WL_E_INVAL);
    const wl_edge not_finite[] = {{0, 1, INFINITY}};
    assert_int_equal(wl_graph_from_edges(&bad, 5, not_finite, 1), WL_E_INVAL);
    assert_int_equal(wl_graph_from_edges(&bad, 0, edges, 1), WL_E_INVAL);
    assert_int_equal(wl_graph_from_edges(&bad, 5, NULL, 1), WL_E_INVAL);
    assert_int_equal(wl_graph_from_edges(NULL, 5, edges, 1), WL_E_INVAL);
    assert_int_equal(wl_graph_from_edges(&bad, WL_MAX_NODES + 1, NULL, 0), WL_E_OVERFLOW);
    assert_int_equal(wl_graph_from_edges(&bad, 0, NULL, 0), 0);
    assert_int_equal(wl_graph_node_count(bad), 0);
    wl_graph_free(bad);
}

/* Folds every float's bits of v[0..n) into one 64-bit value (wl_mix64 of the running xor). */
static uint64_t float_checksum(const float *v, size_t n)
{
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &v[i], sizeof bits);
        h = wl_mix64(h ^ bits);
    }
    return h;
}

/*
 * The candidate matrices the reference suite scans are the same data, bit for bit, however
 * wl_matrix_new builds them: the pinned checksums were computed with the original builder (one
 * pass of the seed's stream 1 over all rows, then wl_norms_compute over all of them). A changed
 * value here means the suite measures other data than every earlier run did. Norms depend on the
 * dot kernel's path, so they are held against wl_norms_compute over the data, not pinned.
 */
static void test_matrix_data_pinned(void **state)
{
    (void)state;
    static const struct {
        size_t count, dim;
        uint64_t seed, checksum;
    } cases[] = {
        {1000, 768, 42, UINT64_C(0x7fa39444e1886266)},
        {10000, 768, 42, UINT64_C(0xec0c672288856238)},
        {777, 13, 7, UINT64_C(0x1abe91f74908a288)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t count = cases[i].count, dim = cases[i].dim;
        wl_matrix *m = NULL;
        assert_int_equal(wl_matrix_new(&m, count, dim, cases[i].seed), 0);
        wl_candidates c = wl_matrix_candidates(m);
        uint64_t sum = float_checksum(c.vectors, count * dim);
        if (sum != cases[i].checksum)
            print_error("matrix %zu x %zu seed %llu: checksum 0x%016llx\n", count, dim,
                        (unsigned long long)cases[i].seed, (unsigned long long)sum);
        assert_true(sum == cases[i].checksum);
        float *norms = malloc(count * sizeof *norms);
        assert_non_null(norms);
        assert_int_equal(wl_norms_compute(c.vectors, count, dim, norms), 0);
        assert_memory_equal(c.norms, norms, count * sizeof *norms);
        free(norms);
        wl_matrix_free(m);
    }
}

static void test_norms_compute(void **state)
{
    (void)state;
    const float v[6] = {3, 4, 0, 0, 0, 0};
    float n[3];
    assert_int_equal(wl_norms_compute(v, 3, 2, n), 0);
    assert_true(n[0] == 5.0f && n[1] == 0.0f && n[2] == 0.0f);
    assert_int_equal(wl_norms_compute(NULL, 3, 2, n), WL_E_INVAL);
    assert_int_equal(wl_norms_compute(v, 3, 2, NULL), WL_E_INVAL);
    assert_int_equal(wl_norms_compute(NULL, 0, 2, NULL), 0);
    assert_int_equal(wl_norms_compute(NULL, 3, 0, n), 0);
    assert_true(n[0] == 0.0f);
    assert_int_equal(wl_norms_compute(v, SIZE_MAX / 2, 4, n), WL_E_OVERFLOW);
}

static void test_reference_params(void **state)
{
    (void)state;
    wl_graph_params p;
    wl_graph_params_reference(&p, 99);
    assert_int_equal(p.seed, 99);
    assert_int_equal(p.node_count, 10000);
    assert_int_equal(p.edge_count, 50000);
    assert_int_equal(p.dim, 768);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_empty_and_dimensionless),
        cmocka_unit_test(test_random_graph_properties),
        cmocka_unit_test(test_seed_determines_graph),
        cmocka_unit_test(test_matrix_matches_graph_embeddings),
        cmocka_unit_test(test_from_edges),
        cmocka_unit_test(test_matrix_data_pinned),
        cmocka_unit_test(test_norms_compute),
        cmocka_unit_test(test_reference_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
