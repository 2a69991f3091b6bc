/*
 * Tests of top-k cosine similarity against an obviously-right reference: score every candidate
 * with the documented formula, sort all of them with qsort by (score descending, id ascending),
 * keep the first min(k, N). Random inputs from 50 seeds (small N and D, duplicated rows to force
 * ties, zero rows), on every available SIMD path, must match ids and score bits exactly; the
 * scores must also agree with a double-precision cosine. Edge cases: k > N, k = 0, N = 0, D = 0,
 * zero query, bad arguments. The batch fuses multiply and add: it must equal, bit for bit, the same
 * reference with fused dot products (on every path), and the single query to within
 * WL_SIMILARITY_BATCH_TOLERANCE, ids differing only at near-ties.
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
#include "wl_reference.h"

/* The documented dot product (ref_dot, wl_reference.h) with each element fused into its partial
 * sum: the batch's dot product. */
static float ref_dot_fused(const float *a, const float *b, size_t n)
{
    float p[32] = {0};
    for (size_t j = 0; j < n; j++)
        p[j % 32] = fmaf(a[j], b[j], p[j % 32]);
    return ref_combine(p);
}

/* The documented score of candidate row c for query q (norms with the unfused dot, as the
 * library's), its dot product fused or not. */
static float ref_score(const float *q, const float *c, size_t d, int fused)
{
    float qn = sqrtf(ref_dot(q, q, d)), cn = sqrtf(ref_dot(c, c, d));
    float den = qn * cn, s = 0.0f;
    if (den != 0.0f) {
        s = (fused ? ref_dot_fused(q, c, d) : ref_dot(q, c, d)) / den;
        if (isnan(s))
            s = 0.0f;
    }
    return s;
}

static int by_rank(const void *pa, const void *pb)
{
    const wl_hit *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return a->id < b->id ? -1 : (a->id > b->id);
}

/* Brute force: all scores (dot products fused or not), full sort, first min(k, n). Returns the
 * number of hits. */
static size_t ref_topk_as(const float *vecs, size_t n, size_t d, const float *q, size_t k,
                          wl_hit *out, int fused)
{
    wl_hit *all = malloc((n + 1) * sizeof(wl_hit));
    assert_non_null(all);
    for (size_t i = 0; i < n; i++) {
        all[i].id = (uint32_t)i;
        all[i].score = ref_score(q, vecs + i * d, d, fused);
    }
    qsort(all, n, sizeof(wl_hit), by_rank);
    size_t m = k < n ? k : n;
    memcpy(out, all, m * sizeof(wl_hit));
    free(all);
    return m;
}

static size_t ref_topk(const float *vecs, size_t n, size_t d, const float *q, size_t k,
                       wl_hit *out)
{
    return ref_topk_as(vecs, n, d, q, k, out, 0);
}

/*
 * The batch's hits for query q against the single query's, under the documented tolerance tol:
 * equal counts; at every rank the two scores within tol; where the ids at a rank differ, a near
 * tie: the single query's own score of the batch's candidate within 2 tol of the single query's
 * score at that rank (each score moves by at most tol, so only two scores at most 2 tol apart can
 * change places). Returns the number of ranks whose ids differ.
 */
static size_t check_batch_vs_single(const float *vecs, size_t d, const float *q,
                                    const wl_hit *got, size_t got_count, const wl_hit *want,
                                    size_t want_count)
{
    float tol = WL_SIMILARITY_BATCH_TOLERANCE(d);
    size_t swapped = 0;
    assert_int_equal(got_count, want_count);
    for (size_t i = 0; i < want_count; i++) {
        assert_true(fabsf(got[i].score - want[i].score) <= tol);
        if (got[i].id != want[i].id) {
            float single = ref_score(q, vecs + (size_t)got[i].id * d, d, 0);
            assert_true(fabsf(single - want[i].score) <= 2 * tol);
            swapped++;
        }
    }
    return swapped;
}

static double cos_double(const float *a, const float *b, size_t d)
{
    double ab = 0, aa = 0, bb = 0;
    for (size_t j = 0; j < d; j++) {
        ab += (double)a[j] * b[j];
        aa += (double)a[j] * a[j];
        bb += (double)b[j] * b[j];
    }
    return aa == 0 || bb == 0 ? 0.0 : ab / sqrt(aa * bb);
}

static void run_random_cases(uint64_t seed_base)
{
    enum { MAXN = 300, MAXD = 100, MAXK = 320 };
    float *vecs = malloc(MAXN * MAXD * sizeof(float)), *norms = malloc(MAXN * sizeof(float));
    float q[MAXD];
    wl_hit got[MAXK], want[MAXK];
    assert_non_null(vecs);
    assert_non_null(norms);
    for (uint64_t seed = seed_base; seed < seed_base + 50; seed++) {
        wl_rng r;
        wl_rng_seed(&r, seed, 400);
        size_t n = (size_t)wl_rng_below(&r, MAXN + 1);
        size_t d = (size_t)wl_rng_below(&r, MAXD + 1);
        size_t k = (size_t)wl_rng_below(&r, MAXK + 1);
        for (size_t i = 0; i < n * d; i++)
            vecs[i] = wl_rng_float_signed(&r);
        for (size_t i = 0; i < n; i++) {
            uint64_t kind = wl_rng_below(&r, 10);
            if (kind == 0 && d > 0) /* zero row */
                memset(vecs + i * d, 0, d * sizeof(float));
            else if (kind == 1 && i > 0) /* duplicate of an earlier row: a tie */
                memcpy(vecs + i * d, vecs + wl_rng_below(&r, i) * d, d * sizeof(float));
        }
        for (size_t j = 0; j < d; j++)
            q[j] = wl_rng_float_signed(&r);
        if (wl_rng_below(&r, 10) == 0)
            memset(q, 0, sizeof(q));
        assert_int_equal(wl_norms_compute(vecs, n, d, norms), 0);

        wl_candidates c = {.vectors = vecs, .norms = norms, .count = n, .dim = d};
        size_t count = 12345;
        assert_int_equal(wl_similarity_topk(&c, q, k, got, &count), 0);
        size_t want_count = ref_topk(vecs, n, d, q, k, want);
        assert_int_equal(count, want_count);
        for (size_t i = 0; i < count; i++) {
            assert_int_equal(got[i].id, want[i].id);
            assert_memory_equal(&got[i].score, &want[i].score, sizeof(float));
            double exact = cos_double(q, vecs + (size_t)got[i].id * d, d);
            assert_true(fabs(got[i].score - exact) <= 1e-5);
        }
    }
    free(vecs);
    free(norms);
}

/* Runs cases() on each SIMD path this machine has (at least the portable one), then restores
 * the automatic choice. */
static void on_each_path(void (*cases)(void))
{
    int paths = 0;
    static const wl_simd_path ps[] = {WL_SIMD_SCALAR, WL_SIMD_AVX2};
    for (size_t i = 0; i < 2; i++) {
        if (wl_simd_force(ps[i]) != 0)
            continue;
        paths++;
        cases();
    }
    assert_true(paths >= 1);
    wl_simd_force(WL_SIMD_AUTO);
}

static void random_cases_seed0(void)
{
    run_random_cases(0);
}

static void test_random_against_bruteforce(void **state)
{
    (void)state;
    on_each_path(random_cases_seed0);
}

/* Both paths give the same hits on a larger graph-like set (skipped without AVX2). */
static void test_paths_equal_on_matrix(void **state)
{
    (void)state;
    if (!wl_simd_supported(WL_SIMD_AVX2))
        skip();
    wl_matrix *m = NULL;
    assert_int_equal(wl_matrix_new(&m, 2000, 96, 5), 0);
    wl_candidates c = wl_matrix_candidates(m);
    float q[96];
    wl_hit a[50], b[50];
    wl_rng r;
    wl_rng_seed(&r, 5, 401);
    for (int rep = 0; rep < 10; rep++) {
        for (int j = 0; j < 96; j++)
            q[j] = wl_rng_float_signed(&r);
        size_t na = 0, nb = 0;
        assert_int_equal(wl_simd_force(WL_SIMD_SCALAR), 0);
        assert_int_equal(wl_similarity_topk(&c, q, 50, a, &na), 0);
        assert_int_equal(wl_simd_force(WL_SIMD_AVX2), 0);
        assert_int_equal(wl_similarity_topk(&c, q, 50, b, &nb), 0);
        assert_int_equal(na, 50);
        assert_int_equal(nb, 50);
        assert_memory_equal(a, b, sizeof(a));
    }
    wl_simd_force(WL_SIMD_AUTO);
    wl_matrix_free(m);
}

static void test_edge_cases(void **state)
{
    (void)state;
    /* Rows: e0, zero, e0 again (tie with row 0), -e0, e1. */
    const float v[5 * 3] = {1, 0, 0, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0};
    float norms[5];
    assert_int_equal(wl_norms_compute(v, 5, 3, norms), 0);
    wl_candidates c = {.vectors = v, .norms = norms, .count = 5, .dim = 3};
    const float q[3] = {2, 0, 0};
    wl_hit h[8];
    size_t n = 99;

    /* k > N returns N results, in full rank order. */
    assert_int_equal(wl_similarity_topk(&c, q, 8, h, &n), 0);
    assert_int_equal(n, 5);
    static const uint32_t order[] = {0, 2, 1, 4, 3};
    static const float scores[] = {1.0f, 1.0f, 0.0f, 0.0f, -1.0f};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(h[i].id, order[i]);
        assert_true(h[i].score == scores[i]);
    }

    /* k = 0: no results, hits may be NULL. */
    assert_int_equal(wl_similarity_topk(&c, q, 0, NULL, &n), 0);
    assert_int_equal(n, 0);

    /* k = 1 keeps the lower id of a tie. */
    assert_int_equal(wl_similarity_topk(&c, q, 1, h, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(h[0].id, 0);

    /* Zero query: every score is 0, so rank is by id. */
    const float zq[3] = {0, 0, 0};
    assert_int_equal(wl_similarity_topk(&c, zq, 3, h, &n), 0);
    assert_int_equal(n, 3);
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(h[i].id, i);
        assert_true(h[i].score == 0.0f);
    }

    /* N = 0. */
    wl_candidates empty = {.vectors = NULL, .norms = NULL, .count = 0, .dim = 3};
    assert_int_equal(wl_similarity_topk(&empty, q, 4, h, &n), 0);
    assert_int_equal(n, 0);

    /* D = 0: all scores 0, ranked by id; vectors and query may be NULL. */
    const float zn[4] = {0, 0, 0, 0};
    wl_candidates flat = {.vectors = NULL, .norms = zn, .count = 4, .dim = 0};
    assert_int_equal(wl_similarity_topk(&flat, NULL, 2, h, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(h[0].id, 0);
    assert_int_equal(h[1].id, 1);

    /* Non-finite input: inf / inf is NaN, which is defined as score 0 (ranked with zeros). */
    const float inf_rows[2 * 3] = {INFINITY, 0, 0, 0, 1, 0};
    float inf_norms[2];
    assert_int_equal(wl_norms_compute(inf_rows, 2, 3, inf_norms), 0);
    wl_candidates withinf = {.vectors = inf_rows, .norms = inf_norms, .count = 2, .dim = 3};
    assert_int_equal(wl_similarity_topk(&withinf, q, 2, h, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(h[0].id, 0);
    assert_true(h[0].score == 0.0f && h[1].score == 0.0f);

    /* Bad arguments. */
    assert_int_equal(wl_similarity_topk(NULL, q, 1, h, &n), WL_E_INVAL);
    assert_int_equal(wl_similarity_topk(&c, q, 1, h, NULL), WL_E_INVAL);
    assert_int_equal(wl_similarity_topk(&c, NULL, 1, h, &n), WL_E_INVAL);
    assert_int_equal(wl_similarity_topk(&c, q, 1, NULL, &n), WL_E_INVAL);
    wl_candidates no_norms = c;
    no_norms.norms = NULL;
    assert_int_equal(wl_similarity_topk(&no_norms, q, 1, h, &n), WL_E_INVAL);
    wl_candidates no_vecs = c;
    no_vecs.vectors = NULL;
    assert_int_equal(wl_similarity_topk(&no_vecs, q, 1, h, &n), WL_E_INVAL);
    wl_candidates huge = c;
    huge.count = WL_MAX_NODES + 1;
    assert_int_equal(wl_similarity_topk(&huge, q, 1, h, &n), WL_E_OVERFLOW);
}

/* A noisy copy of a stored row ranks that row first (what the profile's queries rely on). */
static void test_retrieval_sanity(void **state)
{
    (void)state;
    wl_matrix *m = NULL;
    assert_int_equal(wl_matrix_new(&m, 1000, 128, 9), 0);
    wl_candidates c = wl_matrix_candidates(m);
    float q[128];
    wl_hit h[3];
    size_t n = 0;
    wl_rng r;
    wl_rng_seed(&r, 9, 402);
    for (int rep = 0; rep < 20; rep++) {
        uint32_t target = (uint32_t)wl_rng_below(&r, 1000);
        for (int j = 0; j < 128; j++)
            q[j] = c.vectors[(size_t)target * 128 + j] + wl_rng_float_signed(&r);
        assert_int_equal(wl_similarity_topk(&c, q, 3, h, &n), 0);
        assert_int_equal(h[0].id, target);
        assert_true(h[0].score > 0.5f && h[0].score > h[1].score);
    }
    wl_matrix_free(m);
}

/*
 * The batch gives, bit for bit, the hits of the brute-force reference with fused dot products, and
 * the single query's within the tolerance, on every path: random sizes that cover several query
 * blocks (WL_SIMILARITY_QUERY_BLOCK) and row blocks, batches of 1 and 2 (no register block of
 * three), D not a multiple of 32 (the kernel's partial last chunk), D = 0, k = 0 and k > N, zero
 * and duplicate rows.
 */
static void run_batch_cases(void)
{
    enum { MAXN = 260, MAXD = 100, MAXQ = 140, MAXK = 12 };
    float *vecs = malloc(MAXN * MAXD * sizeof(float)), *norms = malloc(MAXN * sizeof(float));
    float *qs = malloc(MAXQ * MAXD * sizeof(float));
    wl_hit *got = malloc(MAXQ * MAXK * sizeof(wl_hit)), want[MAXK], fused[MAXK];
    size_t counts[MAXQ];
    assert_non_null(vecs);
    assert_non_null(norms);
    assert_non_null(qs);
    assert_non_null(got);
    for (uint64_t seed = 0; seed < 40; seed++) {
        wl_rng r;
        wl_rng_seed(&r, seed, 403);
        size_t n = (size_t)wl_rng_below(&r, MAXN + 1);
        size_t d = seed == 0 ? 0 : seed == 1 ? 96 : (size_t)wl_rng_below(&r, MAXD + 1);
        size_t nq = seed == 2 ? MAXQ : (size_t)wl_rng_below(&r, MAXQ + 1);
        if (seed == 3 || seed == 4)
            nq = seed - 2; /* one query, two queries */
        size_t k = (size_t)wl_rng_below(&r, MAXK + 1);
        for (size_t i = 0; i < n * d; i++)
            vecs[i] = wl_rng_float_signed(&r);
        for (size_t i = 0; i < n; i++) {
            uint64_t kind = wl_rng_below(&r, 10);
            if (kind == 0 && d > 0)
                memset(vecs + i * d, 0, d * sizeof(float));
            else if (kind == 1 && i > 0)
                memcpy(vecs + i * d, vecs + wl_rng_below(&r, i) * d, d * sizeof(float));
        }
        for (size_t i = 0; i < nq * d; i++)
            qs[i] = wl_rng_float_signed(&r);
        if (nq > 0 && d > 0)
            memset(qs, 0, d * sizeof(float)); /* a zero query */
        assert_int_equal(wl_norms_compute(vecs, n, d, norms), 0);
        wl_candidates c = {.vectors = d ? vecs : NULL, .norms = norms, .count = n, .dim = d};
        assert_int_equal(wl_similarity_topk_batch(&c, qs, nq, k, got, counts), 0);
        for (size_t a = 0; a < nq; a++) {
            const float *q = qs + a * d;
            size_t want_count = 99;
            assert_int_equal(ref_topk_as(vecs, n, d, q, k, fused, 1), counts[a]);
            for (size_t i = 0; i < counts[a]; i++) {
                assert_int_equal(got[a * k + i].id, fused[i].id);
                assert_memory_equal(&got[a * k + i].score, &fused[i].score, sizeof(float));
            }
            assert_int_equal(wl_similarity_topk(&c, q, k, want, &want_count), 0);
            check_batch_vs_single(vecs, d, q, got + a * k, counts[a], want, want_count);
        }
    }
    free(vecs);
    free(norms);
    free(qs);
    free(got);
}

static void test_batch_against_fused_and_single(void **state)
{
    (void)state;
    on_each_path(run_batch_cases);
}

/* The reference sizes: 64 queries at D = 768 against 1000 rows, on every path, against the fused
 * brute-force reference (bit for bit) and the single query (within the tolerance). */
static void test_batch_reference_size(void **state)
{
    (void)state;
    enum { N = 1000, D = 768, Q = 64, K = 10 };
    wl_matrix *m = NULL;
    assert_int_equal(wl_matrix_new(&m, N, D, 11), 0);
    wl_candidates c = wl_matrix_candidates(m);
    float *qs = malloc((size_t)Q * D * sizeof(float));
    wl_hit *got = malloc((size_t)Q * K * sizeof(wl_hit)), want[K], single[K];
    size_t counts[Q];
    assert_non_null(qs);
    assert_non_null(got);
    wl_rng r;
    wl_rng_seed(&r, 11, 404);
    for (size_t i = 0; i < (size_t)Q * D; i++)
        qs[i] = wl_rng_float_signed(&r);
    static const wl_simd_path ps[] = {WL_SIMD_SCALAR, WL_SIMD_AVX2};
    for (size_t p = 0; p < 2; p++) {
        if (wl_simd_force(ps[p]) != 0)
            continue;
        assert_int_equal(wl_similarity_topk_batch(&c, qs, Q, K, got, counts), 0);
        for (size_t a = 0; a < Q; a++) {
            assert_int_equal(counts[a], K);
            assert_int_equal(ref_topk_as(c.vectors, N, D, qs + a * D, K, want, 1), K);
            assert_memory_equal(got + a * K, want, sizeof want);
            size_t n1 = 0;
            assert_int_equal(wl_similarity_topk(&c, qs + a * D, K, single, &n1), 0);
            check_batch_vs_single(c.vectors, D, qs + a * D, got + a * K, K, single, n1);
        }
    }
    wl_simd_force(WL_SIMD_AUTO);
    free(qs);
    free(got);
    wl_matrix_free(m);
}

/*
 * A near-tie that fusing does swap: two rows that differ in one element by one ulp, and a query
 * for which the fused and the unfused dot products order them differently (found by search over
 * seeds, deterministically). The single query must rank them one way, the batch the other, both
 * as their references say, and the check above must accept the swap as a near-tie.
 */
static void test_batch_near_tie_swaps(void **state)
{
    (void)state;
    enum { D = 64 };
    float rows[2 * D], norms[2], q[D];
    int found = 0;
    for (uint64_t seed = 0; seed < 20000 && !found; seed++) {
        wl_rng r;
        wl_rng_seed(&r, seed, 405);
        for (size_t j = 0; j < D; j++) {
            rows[j] = wl_rng_float_signed(&r);
            q[j] = wl_rng_float_signed(&r);
        }
        memcpy(rows + D, rows, D * sizeof(float));
        size_t j = (size_t)wl_rng_below(&r, D);
        rows[D + j] = nextafterf(rows[j], rows[j] > 0 ? 2.0f : -2.0f); /* |row 1| grows */
        float u0 = ref_score(q, rows, D, 0), u1 = ref_score(q, rows + D, D, 0);
        float f0 = ref_score(q, rows, D, 1), f1 = ref_score(q, rows + D, D, 1);
        found = (u0 > u1 && f1 > f0) || (u1 > u0 && f0 > f1);
    }
    assert_true(found);
    assert_int_equal(wl_norms_compute(rows, 2, D, norms), 0);
    wl_candidates c = {.vectors = rows, .norms = norms, .count = 2, .dim = D};
    wl_hit single[2], batch[2], want[2];
    size_t ns = 0, nb = 0;
    static const wl_simd_path ps[] = {WL_SIMD_SCALAR, WL_SIMD_AVX2};
    for (size_t p = 0; p < 2; p++) {
        if (wl_simd_force(ps[p]) != 0)
            continue;
        assert_int_equal(wl_similarity_topk(&c, q, 2, single, &ns), 0);
        assert_int_equal(ref_topk_as(rows, 2, D, q, 2, want, 0), 2);
        assert_memory_equal(single, want, sizeof want);
        assert_int_equal(wl_similarity_topk_batch(&c, q, 1, 2, batch, &nb), 0);
        assert_int_equal(ref_topk_as(rows, 2, D, q, 2, want, 1), 2);
        assert_memory_equal(batch, want, sizeof want);
        assert_int_equal(batch[0].id, single[1].id); /* swapped */
        assert_int_equal(batch[1].id, single[0].id);
        assert_int_equal(check_batch_vs_single(rows, D, q, batch, nb, single, ns), 2);
    }
    wl_simd_force(WL_SIMD_AUTO);
}

static void test_batch_errors(void **state)
{
    (void)state;
    const float v[2 * 3] = {1, 0, 0, 0, 1, 0};
    float norms[2];
    assert_int_equal(wl_norms_compute(v, 2, 3, norms), 0);
    wl_candidates c = {.vectors = v, .norms = norms, .count = 2, .dim = 3};
    const float q[2 * 3] = {1, 0, 0, 0, 0, 1};
    wl_hit h[4];
    size_t n[2] = {7, 7};
    assert_int_equal(wl_similarity_topk_batch(NULL, q, 2, 2, h, n), WL_E_INVAL);
    assert_int_equal(wl_similarity_topk_batch(&c, q, 2, 2, h, NULL), WL_E_INVAL);
    assert_int_equal(wl_similarity_topk_batch(&c, NULL, 2, 2, h, n), WL_E_INVAL);
    assert_int_equal(wl_similarity_topk_batch(&c, q, 2, 2, NULL, n), WL_E_INVAL);
    wl_candidates huge = c;
    huge.count = WL_MAX_NODES + 1;
    assert_int_equal(wl_similarity_topk_batch(&huge, q, 2, 2, h, n), WL_E_OVERFLOW);
    /* No queries: nothing to write, the outputs may be NULL. */
    assert_int_equal(wl_similarity_topk_batch(&c, NULL, 0, 2, NULL, NULL), 0);
    /* k = 0: counts are 0, hits may be NULL. */
    assert_int_equal(wl_similarity_topk_batch(&c, q, 2, 0, NULL, n), 0);
    assert_int_equal(n[0], 0);
    assert_int_equal(n[1], 0);
    /* Second query orthogonal to both rows: scores 0, ranked by id. */
    assert_int_equal(wl_similarity_topk_batch(&c, q, 2, 2, h, n), 0);
    assert_int_equal(n[0], 2);
    assert_int_equal(h[0].id, 0);
    assert_true(h[0].score == 1.0f);
    assert_int_equal(h[2].id, 0);
    assert_int_equal(h[3].id, 1);
    assert_true(h[2].score == 0.0f && h[3].score == 0.0f);
}

/*
 * The compute probe on every path: no rounds leave the 96 chains at their start (12 chains of 8
 * lanes starting at c/16, summing to 33); many rounds of x' = 0.999x + 0.001 draw every chain to
 * the fixed point 1, so the sum approaches 96. A probe that skipped chains or rounds fails here.
 */
static void test_compute_probe(void **state)
{
    (void)state;
    assert_int_equal(WL_COMPUTE_PROBE_FLOPS_PER_ROUND, 12 * 8 * 2);
    static const wl_simd_path ps[] = {WL_SIMD_SCALAR, WL_SIMD_AVX2};
    for (size_t i = 0; i < 2; i++) {
        if (wl_simd_force(ps[i]) != 0)
            continue;
        assert_true(wl_compute_probe(0) == 33.0f);
        float one = wl_compute_probe(1);
        assert_true(fabsf(one - (33.0f * 0.999f + 96 * 0.001f)) < 1e-4f);
        float many = wl_compute_probe(40000);
        assert_true(fabsf(many - 96.0f) < 0.01f); /* float rounding stalls just below 1 */
    }
    wl_simd_force(WL_SIMD_AUTO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_bruteforce),
        cmocka_unit_test(test_paths_equal_on_matrix),
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_retrieval_sanity),
        cmocka_unit_test(test_batch_against_fused_and_single),
        cmocka_unit_test(test_batch_reference_size),
        cmocka_unit_test(test_batch_near_tie_swaps),
        cmocka_unit_test(test_batch_errors),
        cmocka_unit_test(test_compute_probe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
