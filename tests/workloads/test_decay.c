/*
 * Tests of power-law memory decay: outputs equal the documented float expression bit for bit on
 * every SIMD path (odd lengths exercise the vector tail), agree with a double-precision power law,
 * decrease with age, follow the power law's signature (four times the age at large ages roughly
 * halves the strength), allow exact in-place use, and reject bad arguments.
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

static void test_matches_formula_on_all_paths(void **state)
{
    (void)state;
    enum { MAXN = 203 };
    float base[MAXN], age[MAXN], out[MAXN], want[MAXN];
    static const wl_simd_path ps[] = {WL_SIMD_SCALAR, WL_SIMD_AVX2};
    int paths = 0;
    for (size_t pi = 0; pi < 2; pi++) {
        if (wl_simd_force(ps[pi]) != 0)
            continue;
        paths++;
        for (uint64_t seed = 0; seed < 50; seed++) {
            wl_rng r;
            wl_rng_seed(&r, seed, 600);
            size_t n = (size_t)wl_rng_below(&r, MAXN + 1);
            float tau = 0.01f + 100.0f * wl_rng_float(&r);
            for (size_t i = 0; i < n; i++) {
                base[i] = 1.0f - wl_rng_float(&r);
                age[i] = 1000.0f * wl_rng_float(&r);
                want[i] = base[i] / sqrtf(1.0f + age[i] / tau);
            }
            assert_int_equal(wl_decay_apply(base, age, out, n, tau), 0);
            assert_memory_equal(out, want, n * sizeof(float));
            for (size_t i = 0; i < n; i++) {
                double exact = base[i] * pow(1.0 + (double)age[i] / tau, -0.5);
                assert_true(fabs(out[i] - exact) <= 1e-6 * exact);
            }
        }
    }
    assert_true(paths >= 1);
    wl_simd_force(WL_SIMD_AUTO);
}

static void test_shape(void **state)
{
    (void)state;
    enum { N = 64 };
    float base[N], age[N], out[N];
    for (int i = 0; i < N; i++) {
        base[i] = 1.0f;
        age[i] = (float)i * 10.0f;
    }
    assert_int_equal(wl_decay_apply(base, age, out, N, 1.0f), 0);
    assert_true(out[0] == 1.0f); /* age 0: full strength */
    for (int i = 1; i < N; i++)
        assert_true(out[i] < out[i - 1]);
    /* Power law, not exponential: quadrupling a large age halves the strength. */
    float a[2] = {10000.0f, 40000.0f}, b[2] = {1.0f, 1.0f}, s[2];
    assert_int_equal(wl_decay_apply(b, a, s, 2, 1.0f), 0);
    assert_true(fabsf(s[1] / s[0] - 0.5f) < 1e-4f);
}

static void test_in_place_and_graph(void **state)
{
    (void)state;
    float base[9] = {1, .5f, .25f, 1, 1, 1, 1, 1, 1};
    float age[9] = {3, 3, 3, 0, 1, 2, 3, 4, 5}, copy[9], want[9];
    memcpy(copy, base, sizeof(base));
    assert_int_equal(wl_decay_apply(copy, age, want, 9, 2.0f), 0);
    assert_int_equal(wl_decay_apply(base, age, base, 9, 2.0f), 0); /* out aliases base */
    assert_memory_equal(base, want, sizeof(want));

    wl_graph_params gp = {
        .seed = 4, .node_count = 500, .edge_count = 0, .dim = 0, .max_age_days = 100.0f};
    wl_graph *g = NULL;
    assert_int_equal(wl_graph_new(&g, &gp), 0);
    float *out = malloc(500 * sizeof(float)), *ref = malloc(500 * sizeof(float));
    assert_int_equal(wl_graph_decay(g, 7.0f, out), 0);
    assert_int_equal(wl_decay_apply(wl_graph_strengths(g), wl_graph_ages(g), ref, 500, 7.0f), 0);
    assert_memory_equal(out, ref, 500 * sizeof(float));
    for (int i = 0; i < 500; i++)
        assert_true(out[i] > 0.0f && out[i] <= wl_graph_strengths(g)[i]);
    free(out);
    free(ref);
    wl_graph_free(g);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    float x[1] = {1}, y[1] = {1}, z[1];
    assert_int_equal(wl_decay_apply(x, y, z, 1, 0.0f), WL_E_INVAL);
    assert_int_equal(wl_decay_apply(x, y, z, 1, -1.0f), WL_E_INVAL);
    assert_int_equal(wl_decay_apply(x, y, z, 1, NAN), WL_E_INVAL);
    assert_int_equal(wl_decay_apply(x, y, z, 1, INFINITY), WL_E_INVAL);
    assert_int_equal(wl_decay_apply(NULL, y, z, 1, 1.0f), WL_E_INVAL);
    assert_int_equal(wl_decay_apply(x, NULL, z, 1, 1.0f), WL_E_INVAL);
    assert_int_equal(wl_decay_apply(x, y, NULL, 1, 1.0f), WL_E_INVAL);
    assert_int_equal(wl_decay_apply(NULL, NULL, NULL, 0, 1.0f), 0);
    assert_int_equal(wl_graph_decay(NULL, 1.0f, z), WL_E_INVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_formula_on_all_paths),
        cmocka_unit_test(test_shape),
        cmocka_unit_test(test_in_place_and_graph),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
