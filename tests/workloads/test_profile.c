/*
 * Tests of the profiling workload's checksum. The full reference workload (seed 42) and a small
 * one are pinned to hard-coded values, on every available SIMD path for the small one: a change in
 * PRNG, graph generation, any operation's semantics or the checksum fold shows up here. If such a
 * change is intended, recompute the values (run wl_profile, and this test prints the values on
 * failure) and update them together with docs/workloads.md.
 *
 * Each workload has two pinned values: one for the similarity phase answered one
 * wl_similarity_topk call per query (similarity_batch 0 or 1), one for it answered in batches
 * (any similarity_batch above 1, the default 64). The batch fuses multiply and add in its dot
 * products, so its scores differ from the single query's in the last bits; the checksum folds
 * each score quantised to 2^-20, and any quantisation has boundaries such a difference can cross
 * (a near-tie can also swap two ids), so no fold of the scores could be the same for both. Within
 * each mode the value is exact: the batch's scores do not depend on the batch size or the path.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "workloads/workloads.h"

/* wl_profile_run(42): the reference workload (10k nodes, 50k edges, D = 768), batched (the
 * default), and the same with one wl_similarity_topk call per query. */
#define PINNED_FULL_SEED 42
#define PINNED_FULL_CHECKSUM UINT64_C(0x908495d365459e31)
#define PINNED_FULL_SINGLE_CHECKSUM UINT64_C(0xd5e70e3e15dd0ec6)
/* small_params(7), below: batched (the default), and one query per call. */
#define PINNED_SMALL_CHECKSUM UINT64_C(0xc95094f3eba3a835)
#define PINNED_SMALL_SINGLE_CHECKSUM UINT64_C(0xd84f414e0b6006ab)

static wl_profile_params small_params(uint64_t seed)
{
    wl_profile_params p;
    wl_profile_params_default(&p, seed);
    p.graph.node_count = 500;
    p.graph.edge_count = 2500;
    p.graph.dim = 72;
    p.activation_queries = 50;
    p.similarity_queries = 50;
    p.top_k = 5;
    return p;
}

static void test_pinned_full_workload(void **state)
{
    (void)state;
    wl_profile_result r;
    assert_int_equal(wl_profile_run(PINNED_FULL_SEED, &r), 0);
    if (r.checksum != PINNED_FULL_CHECKSUM)
        print_error("full workload checksum 0x%016" PRIx64 " (path %s)\n", r.checksum, r.simd);
    assert_int_equal(r.checksum, PINNED_FULL_CHECKSUM);
    assert_true(r.edges_traversed > 0 && r.nodes_fired >= 1000);
    assert_true(r.build_s > 0 && r.similarity_s > 0 && r.total_s >= r.similarity_s);

    wl_profile_params p;
    wl_profile_params_default(&p, PINNED_FULL_SEED);
    p.similarity_batch = 1;
    assert_int_equal(wl_profile_run_params(&p, &r), 0);
    if (r.checksum != PINNED_FULL_SINGLE_CHECKSUM)
        print_error("full workload, one query per call: checksum 0x%016" PRIx64 " (path %s)\n",
                    r.checksum, r.simd);
    assert_int_equal(r.checksum, PINNED_FULL_SINGLE_CHECKSUM);
}

static void test_pinned_small_on_all_paths(void **state)
{
    (void)state;
    static const wl_simd_path ps[] = {WL_SIMD_SCALAR, WL_SIMD_AVX2};
    wl_profile_params p = small_params(7), single = small_params(7);
    single.similarity_batch = 1;
    int paths = 0;
    for (size_t i = 0; i < 2; i++) {
        if (wl_simd_force(ps[i]) != 0)
            continue;
        paths++;
        wl_profile_result r;
        assert_int_equal(wl_profile_run_params(&p, &r), 0);
        assert_string_equal(r.simd, wl_simd_name(ps[i]));
        if (r.checksum != PINNED_SMALL_CHECKSUM)
            print_error("small workload checksum 0x%016" PRIx64 " (path %s)\n", r.checksum,
                        r.simd);
        assert_int_equal(r.checksum, PINNED_SMALL_CHECKSUM);
        assert_int_equal(wl_profile_run_params(&single, &r), 0);
        if (r.checksum != PINNED_SMALL_SINGLE_CHECKSUM)
            print_error("small workload, one query per call: checksum 0x%016" PRIx64
                        " (path %s)\n",
                        r.checksum, r.simd);
        assert_int_equal(r.checksum, PINNED_SMALL_SINGLE_CHECKSUM);
    }
    assert_true(paths >= 1);
    wl_simd_force(WL_SIMD_AUTO);
}

/* The batch size changes how the similarity phase runs, not the checksum beyond the choice of
 * single query (0, 1) or batch (above 1): a batch of 7 does not divide the 50 queries and leaves
 * one alone in the last call, 64 takes all of them, 50 exactly all of them. */
static void test_checksum_independent_of_batch(void **state)
{
    (void)state;
    static const size_t batches[] = {0, 1, 7, 64, 50};
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
        wl_profile_params p = small_params(7);
        p.similarity_batch = batches[i];
        uint64_t want = batches[i] > 1 ? PINNED_SMALL_CHECKSUM : PINNED_SMALL_SINGLE_CHECKSUM;
        wl_profile_result r;
        assert_int_equal(wl_profile_run_params(&p, &r), 0);
        if (r.checksum != want)
            print_error("batch %zu: checksum 0x%016" PRIx64 "\n", batches[i], r.checksum);
        assert_int_equal(r.checksum, want);
    }
}

static void test_checksum_sensitivity(void **state)
{
    (void)state;
    wl_profile_params p = small_params(7);
    wl_profile_result a, b;
    assert_int_equal(wl_profile_run_params(&p, &a), 0);
    assert_int_equal(wl_profile_run_params(&p, &b), 0);
    assert_int_equal(a.checksum, b.checksum);
    assert_int_equal(a.edges_traversed, b.edges_traversed);

    /* Each ingredient reaches the checksum. */
    wl_profile_params q = small_params(8);
    assert_int_equal(wl_profile_run_params(&q, &b), 0);
    assert_int_not_equal(a.checksum, b.checksum);
    q = small_params(7);
    q.activation.threshold = 0.02f;
    assert_int_equal(wl_profile_run_params(&q, &b), 0);
    assert_int_not_equal(a.checksum, b.checksum);
    q = small_params(7);
    q.top_k = 4;
    assert_int_equal(wl_profile_run_params(&q, &b), 0);
    assert_int_not_equal(a.checksum, b.checksum);
    q = small_params(7);
    q.decay_tau_days = 2.0f;
    assert_int_equal(wl_profile_run_params(&q, &b), 0);
    assert_int_not_equal(a.checksum, b.checksum);
}

static void test_errors(void **state)
{
    (void)state;
    wl_profile_result r;
    wl_profile_params p = small_params(1);
    assert_int_equal(wl_profile_run_params(NULL, &r), WL_E_INVAL);
    assert_int_equal(wl_profile_run_params(&p, NULL), WL_E_INVAL);
    p.graph.node_count = 0;
    p.graph.edge_count = 0;
    assert_int_equal(wl_profile_run_params(&p, &r), WL_E_INVAL);
    p.activation_queries = 0;
    p.similarity_queries = 0;
    assert_int_equal(wl_profile_run_params(&p, &r), 0); /* decay over nothing is fine */
    p = small_params(1);
    p.decay_tau_days = 0.0f;
    assert_int_equal(wl_profile_run_params(&p, &r), WL_E_INVAL);
    p = small_params(1);
    p.graph.node_count = 1;
    assert_int_equal(wl_profile_run_params(&p, &r), WL_E_INVAL); /* edges need 2 nodes */
}

/* "full" runs only the pinned reference workload (its own ctest entry, the slow one); no
 * argument runs the small, fast tests. */
int main(int argc, char **argv)
{
    const struct CMUnitTest full[] = {
        cmocka_unit_test(test_pinned_full_workload),
    };
    const struct CMUnitTest fast[] = {
        cmocka_unit_test(test_pinned_small_on_all_paths),
        cmocka_unit_test(test_checksum_independent_of_batch),
        cmocka_unit_test(test_checksum_sensitivity),
        cmocka_unit_test(test_errors),
    };
    if (argc > 1 && strcmp(argv[1], "full") == 0)
        return cmocka_run_group_tests(full, NULL, NULL);
    return cmocka_run_group_tests(fast, NULL, NULL);
}
