/*
 * test_gpu_similarity.c: the GPU batched top-k similarity (wl_gpu.h) against the CPU definition
 * (wl_similarity_topk, and wl_dot for single scores) on random inputs from several seeds and on
 * edge cases (ties, zero vectors, k above N, D not a multiple of the tile, more queries than one
 * tile, several top-k slices).
 *
 * Floats are summed in another order on the GPU (and with FMA), so scores are compared with the
 * error bound of docs/gpu.md: for query q and candidate c with S = sum |q_i c_i| (in double),
 *     |cos_gpu - cos_cpu| <= tol(q, c) = 2.2 gamma_D S / (|q| |c|) + (2 gamma_D + 8u) |cos|,
 * u = 2^-24, gamma_D = D u / (1 - D u); and, since S <= |q| |c| and |cos| <= 1, by the bound
 * eps_D = 4.2 gamma_D + 8u for every pair. The r-th best score moves by at most eps_D, so rank by
 * rank the scores must agree within eps_D, and the ids must agree wherever the CPU's r-th score is
 * more than 2 eps_D away from its neighbours (no near-tie can swap them).
 *
 * Both kernels of the dot products are checked: the default register-blocked one, which splits D
 * when the grid would not fill the GPU (the emulated GPU holds 2 blocks, so the cases of one
 * tile split in two; test_split_dimension makes it hold 16, WL_GPU_EMU_BLOCKS_PER_SM, and splits
 * three ways, with a ragged last split), and the first, simpler one (WL_GPU_SCORES_SIMPLE) on a
 * few shapes.
 *
 * Without a usable GPU (or in a build without CUDA) the program prints the reason and exits 77,
 * which ctest reports as skipped. The same file also runs against the kernels emulated on the CPU
 * (tests/workloads/gpu_emu, ctest workloads/gpu_similarity_emulated), so CI without a GPU still
 * checks the kernels' logic.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <workloads/workloads.h>
#include <workloads/wl_gpu.h>

static double max_err_seen; /* largest |cos_gpu - cos_cpu| over all checked hits */
static int kernel = WL_GPU_SCORES_BLOCKED; /* the dot products' kernel under test */
static double max_ratio_seen; /* largest error / tol */

static double gamma_d(size_t d)
{
    double u = ldexp(1.0, -24);
    return (double)d * u / (1.0 - (double)d * u);
}

static double eps_d(size_t d)
{
    return 4.2 * gamma_d(d) + 8.0 * ldexp(1.0, -24);
}

/* The CPU's score of one pair, exactly as wl_similarity_topk computes it. */
static float cpu_cos(const float *q, const wl_candidates *c, uint32_t id)
{
    size_t d = c->dim;
    if (d == 0)
        return 0.0f;
    float qn = sqrtf(wl_dot(q, q, d));
    float den = qn * c->norms[id];
    if (den == 0.0f)
        return 0.0f;
    float s = wl_dot(q, c->vectors + (size_t)id * d, d) / den;
    return isnan(s) ? 0.0f : s;
}

/* The bound tol(q, c) of the top of the file. */
static double pair_tol(const float *q, const wl_candidates *c, uint32_t id, double cos)
{
    size_t d = c->dim;
    const float *v = c->vectors + (size_t)id * d;
    double s = 0, qq = 0, vv = 0;
    for (size_t i = 0; i < d; i++) {
        s += fabs((double)q[i] * v[i]);
        qq += (double)q[i] * q[i];
        vv += (double)v[i] * v[i];
    }
    double g = gamma_d(d), u = ldexp(1.0, -24);
    double rel = qq > 0 && vv > 0 ? s / sqrt(qq * vv) : 0;
    return 2.2 * g * rel + (2 * g + 8 * u) * fabs(cos) + 1e-30;
}

static float *random_queries(size_t q, size_t d, uint64_t seed)
{
    float *v = malloc((q * d + 1) * sizeof *v);
    assert_non_null(v);
    wl_rng r;
    wl_rng_seed(&r, seed, 77);
    for (size_t i = 0; i < q * d; i++)
        v[i] = wl_rng_float_signed(&r);
    return v;
}

/* One search with the kernel under test: upload, search, copy back. Returns wl's code. */
static int search(const wl_candidates *c, const float *queries, size_t nq, size_t k, wl_hit *hits,
                  size_t *count, char *msg, size_t msglen)
{
    if (kernel == WL_GPU_SCORES_BLOCKED) /* the default: the one-call API */
        return wl_gpu_similarity_topk_batch(c, queries, nq, k, hits, count, msg, msglen);
    wl_gpu_similarity *s = NULL;
    int rc = wl_gpu_similarity_new(&s, c, nq, k, msg, msglen);
    if (rc != 0)
        return rc;
    if ((rc = wl_gpu_similarity_set_scores_kernel(s, kernel)) != 0 ||
        (rc = wl_gpu_similarity_set_queries(s, queries, nq)) != 0 ||
        (rc = wl_gpu_similarity_enqueue(s, NULL)) != 0 ||
        (rc = wl_gpu_similarity_results(s, NULL, hits, count)) != 0)
        snprintf(msg, msglen, "%s", wl_gpu_similarity_error(s));
    wl_gpu_similarity_free(s);
    return rc;
}

/* Runs the GPU search and checks every query against the CPU (see the top of the file). */
static void check_against_cpu(const wl_candidates *c, const float *queries, size_t nq, size_t k)
{
    char msg[256];
    size_t n = c->count, d = c->dim;
    wl_hit *gpu = calloc(nq * k, sizeof *gpu), *again = calloc(nq * k, sizeof *again);
    wl_hit *cpu = calloc(k + 1, sizeof *cpu);
    assert_true(gpu && again && cpu);
    size_t count = 99, count2 = 0;
    int rc = search(c, queries, nq, k, gpu, &count, msg, sizeof msg);
    if (rc != 0)
        fail_msg("GPU search failed: %s (%s)", wl_strerror(rc), msg);
    assert_int_equal(count, k < n ? k : n);
    /* Deterministic: the same search again gives the same bits. */
    rc = search(c, queries, nq, k, again, &count2, msg, sizeof msg);
    assert_int_equal(rc, 0);
    for (size_t q = 0; q < nq; q++)
        assert_memory_equal(gpu + q * k, again + q * k, count * sizeof *gpu);

    double eps = eps_d(d);
    for (size_t q = 0; q < nq; q++) {
        const float *qv = queries + q * d;
        const wl_hit *g = gpu + q * k;
        size_t ncpu = 0;
        assert_int_equal(wl_similarity_topk(c, qv, k + 1, cpu, &ncpu), 0);
        for (size_t r = 0; r < count; r++) {
            /* well formed: ids in range and distinct, total order best first */
            assert_true(g[r].id < n);
            for (size_t s = 0; s < r; s++)
                assert_true(g[s].id != g[r].id);
            if (r > 0)
                assert_true(g[r - 1].score > g[r].score ||
                            (g[r - 1].score == g[r].score && g[r - 1].id < g[r].id));
            /* each hit's score is the CPU's score of that pair, within the pair's bound */
            float want = cpu_cos(qv, c, g[r].id);
            double err = fabs((double)g[r].score - want);
            double tol = pair_tol(qv, c, g[r].id, want);
            if (err > max_err_seen)
                max_err_seen = err;
            if (err / tol > max_ratio_seen)
                max_ratio_seen = err / tol;
            if (err > tol)
                fail_msg("query %zu hit %zu id %u: GPU %.9g, CPU %.9g, error %.3g > tol %.3g", q,
                         r, g[r].id, (double)g[r].score, (double)want, err, tol);
            /* rank by rank, the scores agree within eps */
            if (fabs((double)g[r].score - cpu[r].score) > eps)
                fail_msg("query %zu rank %zu: GPU %.9g, CPU %.9g differ by more than %.3g", q, r,
                         (double)g[r].score, (double)cpu[r].score, eps);
            /* and the ids, where no near-tie can swap them */
            double gap_before = r > 0 ? (double)cpu[r - 1].score - cpu[r].score : INFINITY;
            double gap_after = r + 1 < ncpu ? (double)cpu[r].score - cpu[r + 1].score : INFINITY;
            if (gap_before > 2 * eps && gap_after > 2 * eps && g[r].id != cpu[r].id)
                fail_msg("query %zu rank %zu: GPU id %u, CPU id %u (gaps %.3g, %.3g > 2 eps)", q,
                         r, g[r].id, cpu[r].id, gap_before, gap_after);
        }
    }
    free(gpu);
    free(again);
    free(cpu);
}

static void random_case(size_t n, size_t d, size_t nq, size_t k, uint64_t seed)
{
    wl_matrix *m = NULL;
    assert_int_equal(wl_matrix_new(&m, n, d, seed), 0);
    wl_candidates c = wl_matrix_candidates(m);
    float *q = random_queries(nq, d, seed + 1000);
    check_against_cpu(&c, q, nq, k);
    free(q);
    wl_matrix_free(m);
}

/* WL_GPU_TEST_QUICK (set for the CPU emulation, which is slow): 2 seeds (1 under ASan, where the
 * emulation is slower still), smaller sizes that still cover two top-k slices, two query tiles
 * and a ragged last D slice. */
#if defined(__SANITIZE_ADDRESS__)
#define QUICK_SEEDS 1
#else
#define QUICK_SEEDS 2
#endif
static void test_random_seeds(void **state)
{
    (void)state;
    bool quick = getenv("WL_GPU_TEST_QUICK") != NULL;
    size_t d = quick ? 200 : 768;
    for (uint64_t seed = 1; seed <= (quick ? QUICK_SEEDS : 5); seed++) {
        random_case(2000, d, 16, 10, seed); /* one top-k slice */
        /* 3 slices (2 when quick), 2 query tiles, ragged tiles */
        random_case(quick ? 4099 : 10007, d, quick ? 66 : 70, 10, seed + 10);
    }
}

static void test_shapes(void **state)
{
    (void)state;
    random_case(1, 768, 1, 1, 7);      /* one candidate */
    random_case(5, 768, 3, 10, 8);     /* k above N: count is N */
    random_case(300, 100, 9, 32, 9);   /* D not a multiple of 32, largest k */
    random_case(257, 1, 65, 5, 10);    /* D = 1: scores are +-1 and ties */
    random_case(4096, 33, 64, 3, 11);  /* exactly one slice, one full query tile */
    random_case(4097, 768, 1, 1, 12);  /* one candidate into a second slice */
}

/* Equal rows get equal scores; ties go to the lower id, as on the CPU. */
static void test_ties_and_zero_vectors(void **state)
{
    (void)state;
    enum { N = 50, D = 64 };
    static float vec[N * D], norms[N], query[2 * D];
    wl_rng r;
    wl_rng_seed(&r, 3, 5);
    for (size_t i = 0; i < N * D; i++)
        vec[i] = wl_rng_float_signed(&r);
    for (size_t j = 0; j < D; j++) {
        vec[17 * D + j] = vec[5 * D + j] = vec[3 * D + j]; /* rows 3, 5 and 17 are equal */
        vec[9 * D + j] = 0.0f;                              /* row 9 is zero */
        query[j] = vec[3 * D + j];                          /* query 0: row 3 itself */
        query[D + j] = 0.0f;                                /* query 1: zero */
    }
    assert_int_equal(wl_norms_compute(vec, N, D, norms), 0);
    wl_candidates c = {.vectors = vec, .norms = norms, .count = N, .dim = D};
    wl_hit hits[2 * 4];
    size_t count = 0;
    char msg[256];
    assert_int_equal(wl_gpu_similarity_topk_batch(&c, query, 2, 4, hits, &count, msg, sizeof msg),
                     0);
    assert_int_equal(count, 4);
    assert_int_equal(hits[0].id, 3);
    assert_int_equal(hits[1].id, 5);
    assert_int_equal(hits[2].id, 17);
    assert_true(hits[0].score == hits[1].score && hits[1].score == hits[2].score);
    assert_true(fabs(hits[0].score - 1.0) < 1e-5);
    for (size_t i = 0; i < 4; i++) { /* zero query: every score 0, so ids 0, 1, 2, 3 */
        assert_int_equal(hits[4 + i].id, i);
        assert_true(hits[4 + i].score == 0.0f);
    }
    check_against_cpu(&c, query, 2, 10);
}

/* The first kernel of the dot products, kept for comparison: the same checks on shapes that
 * cover its tiles (ragged D and N, two query tiles, the largest k). */
static void test_simple_kernel(void **state)
{
    (void)state;
    kernel = WL_GPU_SCORES_SIMPLE;
    random_case(300, 100, 9, 32, 21);
    random_case(257, 33, 65, 5, 22);
    kernel = WL_GPU_SCORES_BLOCKED;
}

/* D split in parts (3 each on the emulation made to hold 16 blocks; as many as the SMs ask for on
 * a GPU), the second case with a ragged last split. The variable is read by the emulation only. */
static void test_split_dimension(void **state)
{
    (void)state;
    setenv("WL_GPU_EMU_BLOCKS_PER_SM", "8", 1);
    random_case(600, 768, 10, 10, 31);
    random_case(130, 200, 5, 7, 32);
    unsetenv("WL_GPU_EMU_BLOCKS_PER_SM");
}

static void test_api_errors(void **state)
{
    (void)state;
    wl_matrix *m = NULL;
    assert_int_equal(wl_matrix_new(&m, 100, 16, 1), 0);
    wl_candidates c = wl_matrix_candidates(m);
    wl_gpu_similarity *s = (wl_gpu_similarity *)&c;
    char msg[256];
    assert_int_equal(wl_gpu_similarity_new(&s, &c, 4, 0, msg, sizeof msg), WL_E_INVAL);
    assert_null(s);
    assert_int_equal(wl_gpu_similarity_new(&s, &c, 4, WL_GPU_MAX_K + 1, msg, sizeof msg),
                     WL_E_INVAL);
    assert_int_equal(wl_gpu_similarity_new(&s, &c, 0, 1, msg, sizeof msg), WL_E_INVAL);
    assert_int_equal(wl_gpu_similarity_new(&s, NULL, 4, 1, msg, sizeof msg), WL_E_INVAL);
    assert_int_equal(wl_gpu_similarity_new(&s, &c, 4, 3, msg, sizeof msg), 0);
    assert_non_null(s);
    assert_int_equal(wl_gpu_similarity_enqueue(s, NULL), WL_E_INVAL); /* no queries yet */
    float *q = random_queries(5, 16, 2);
    assert_int_equal(wl_gpu_similarity_set_queries(s, q, 5), WL_E_INVAL); /* room for 4 */
    assert_non_null(strstr(wl_gpu_similarity_error(s), "room for 4"));
    assert_int_equal(wl_gpu_similarity_set_queries(s, q, 4), 0);
    assert_int_equal(wl_gpu_similarity_enqueue(s, NULL), 0);
    assert_int_equal(wl_gpu_similarity_read_probe_enqueue(s, NULL), 0);
    assert_int_equal(wl_gpu_similarity_set_scores_kernel(s, 7), WL_E_INVAL); /* no such kernel */
    assert_non_null(strstr(wl_gpu_similarity_error(s), "no kernel 7"));
    wl_hit hits[4 * 3];
    size_t count = 0;
    assert_int_equal(wl_gpu_similarity_results(s, NULL, hits, &count), 0);
    assert_int_equal(count, 3);
    wl_gpu_similarity_free(s);
    wl_gpu_similarity_free(NULL);
    free(q);
    wl_matrix_free(m);
}

int main(void)
{
    char msg[256];
    int rc = wl_gpu_available(msg, sizeof msg);
    if (rc != 0) {
        /* ctest's SKIP_RETURN_CODE: reported as skipped, with this line in the output. */
        printf("SKIP: the GPU similarity needs a usable CUDA device: %s\n", msg);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_errors),
        cmocka_unit_test(test_ties_and_zero_vectors),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_split_dimension),
        cmocka_unit_test(test_simple_kernel),
        cmocka_unit_test(test_random_seeds),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    printf("largest |cos_gpu - cos_cpu| seen: %.3g (%.3g of the bound; eps_768 = %.3g)\n",
           max_err_seen, max_ratio_seen, eps_d(768));
    return failed;
}
