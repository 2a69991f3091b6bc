/*
 * Tests of the float kernels and the SIMD path choice. The reference here is written from the
 * documented lane structure alone (element j into p[j % 32], then the fixed tree), and every
 * available path must reproduce it bit for bit on random inputs of many sizes, alignments and
 * magnitudes; the scalar and AVX2 paths are also compared with each other directly. A looser
 * double-precision check makes sure that structure is still a correct dot product.
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

static const wl_simd_path all_paths[] = {WL_SIMD_SCALAR, WL_SIMD_AVX2};

static float ref_sum(const float *a, size_t n)
{
    float p[32] = {0};
    for (size_t j = 0; j < n; j++)
        p[j % 32] += a[j];
    return ref_combine(p);
}

static int same_bits(float x, float y)
{
    return memcmp(&x, &y, sizeof(float)) == 0;
}

/* Uniform [-1, 1) scaled by 2^e with e in [-12, 12]: mixes magnitudes so rounding order matters. */
static void fill_mixed(wl_rng *r, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = ldexpf(wl_rng_float_signed(r), (int)wl_rng_below(r, 25) - 12);
}

static const size_t sizes[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 63, 64, 65,
                               95, 96, 97, 127, 128, 129, 255, 767, 768, 769, 1000};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void test_names_and_force(void **state)
{
    (void)state;
    assert_string_equal(wl_simd_name(WL_SIMD_AUTO), "auto");
    assert_string_equal(wl_simd_name(WL_SIMD_SCALAR), "scalar");
    assert_string_equal(wl_simd_name(WL_SIMD_AVX2), "avx2");
    assert_string_equal(wl_simd_name((wl_simd_path)99), "unknown");
    assert_int_equal(wl_simd_force((wl_simd_path)99), WL_E_INVAL);
    assert_true(wl_simd_supported(WL_SIMD_SCALAR));

    assert_int_equal(wl_simd_force(WL_SIMD_SCALAR), 0);
    assert_int_equal(wl_simd_active(), WL_SIMD_SCALAR);
    if (wl_simd_supported(WL_SIMD_AVX2)) {
        assert_int_equal(wl_simd_force(WL_SIMD_AVX2), 0);
        assert_int_equal(wl_simd_active(), WL_SIMD_AVX2);
    } else {
        assert_int_equal(wl_simd_force(WL_SIMD_AVX2), WL_E_UNAVAILABLE);
        assert_int_equal(wl_simd_active(), WL_SIMD_SCALAR);
    }
    assert_int_equal(wl_simd_force(WL_SIMD_AUTO), 0);
    assert_int_equal(wl_simd_active(),
                     wl_simd_supported(WL_SIMD_AVX2) ? WL_SIMD_AVX2 : WL_SIMD_SCALAR);
    assert_string_equal(wl_strerror(WL_E_UNAVAILABLE),
                        "capability unavailable on this CPU or build");
    assert_string_equal(wl_strerror(12345), "unknown error");
}

/* Every path equals the reference built from the documented structure, bit for bit. */
static void test_kernels_match_documented_structure(void **state)
{
    (void)state;
    enum { MAXN = 1000, PAD = 8 };
    float *a = malloc((MAXN + PAD) * sizeof(float)), *b = malloc((MAXN + PAD) * sizeof(float));
    assert_non_null(a);
    assert_non_null(b);
    int checked_paths = 0;
    for (size_t pi = 0; pi < 2; pi++) {
        if (wl_simd_force(all_paths[pi]) != 0)
            continue;
        checked_paths++;
        for (uint64_t seed = 0; seed < 50; seed++) {
            wl_rng r;
            wl_rng_seed(&r, seed, 100);
            for (size_t si = 0; si < NSIZES; si++) {
                size_t n = sizes[si];
                size_t off = (size_t)wl_rng_below(&r, PAD); /* unaligned starts too */
                fill_mixed(&r, a, MAXN + PAD);
                fill_mixed(&r, b, MAXN + PAD);
                float want = ref_dot(a + off, b + off, n);
                float got = wl_dot(a + off, b + off, n);
                assert_true(same_bits(got, want));
                assert_true(same_bits(wl_read_probe(a + off, n), ref_sum(a + off, n)));
            }
        }
    }
    assert_true(checked_paths >= 1);
    wl_simd_force(WL_SIMD_AUTO);
    free(a);
    free(b);
}

/* The scalar and AVX2 paths give identical bits on random inputs (skipped without AVX2). */
static void test_paths_bitwise_equal(void **state)
{
    (void)state;
    if (!wl_simd_supported(WL_SIMD_AVX2))
        skip();
    enum { MAXN = 2048 };
    float *a = malloc(MAXN * sizeof(float)), *b = malloc(MAXN * sizeof(float));
    assert_non_null(a);
    assert_non_null(b);
    for (uint64_t seed = 0; seed < 50; seed++) {
        wl_rng r;
        wl_rng_seed(&r, seed, 200);
        for (int rep = 0; rep < 20; rep++) {
            size_t n = (size_t)wl_rng_below(&r, MAXN + 1);
            fill_mixed(&r, a, n);
            fill_mixed(&r, b, n);
            assert_int_equal(wl_simd_force(WL_SIMD_SCALAR), 0);
            float ds = wl_dot(a, b, n), ss = wl_read_probe(a, n);
            assert_int_equal(wl_simd_force(WL_SIMD_AVX2), 0);
            float dv = wl_dot(a, b, n), sv = wl_read_probe(a, n);
            assert_true(same_bits(ds, dv));
            assert_true(same_bits(ss, sv));
        }
    }
    wl_simd_force(WL_SIMD_AUTO);
    free(a);
    free(b);
}

/* The lane structure is still a dot product: within the worst-case rounding bound of a
 * double-precision sum, (777/32 + 1 + 5) roundings of 2^-24 relative to sum |a_i b_i|. */
static void test_dot_accuracy(void **state)
{
    (void)state;
    enum { N = 777 };
    float a[N], b[N];
    for (uint64_t seed = 0; seed < 50; seed++) {
        wl_rng r;
        wl_rng_seed(&r, seed, 300);
        for (size_t i = 0; i < N; i++) {
            a[i] = wl_rng_float_signed(&r);
            b[i] = wl_rng_float_signed(&r);
        }
        double exact = 0.0, mag = 0.0, sum = 0.0, smag = 0.0;
        for (size_t i = 0; i < N; i++) {
            exact += (double)a[i] * b[i];
            mag += fabs((double)a[i] * b[i]);
            sum += a[i];
            smag += fabs(a[i]);
        }
        assert_true(fabs(wl_dot(a, b, N) - exact) <= 2e-6 * mag);
        assert_true(fabs(wl_read_probe(a, N) - sum) <= 2e-6 * smag);
    }
    /* Small exact cases. */
    float x[3] = {1, 2, 3}, y[3] = {4, 5, 6};
    assert_true(wl_dot(x, y, 3) == 32.0f);
    assert_true(wl_read_probe(x, 3) == 6.0f);
    assert_true(wl_dot(NULL, NULL, 0) == 0.0f);
    assert_true(wl_read_probe(NULL, 0) == 0.0f);
}

/* Negative zeros and zero padding: every path returns +0 for an all-(-0) product sum. */
static void test_signed_zeros(void **state)
{
    (void)state;
    float a[45], b[45];
    for (int i = 0; i < 45; i++) {
        a[i] = -0.0f;
        b[i] = 1.0f;
    }
    for (size_t pi = 0; pi < 2; pi++) {
        if (wl_simd_force(all_paths[pi]) != 0)
            continue;
        for (size_t n = 1; n <= 45; n++) {
            assert_true(same_bits(wl_dot(a, b, n), ref_dot(a, b, n)));
            assert_true(same_bits(wl_read_probe(a, n), ref_sum(a, n)));
            assert_false(signbit(wl_dot(a, b, n)));
        }
    }
    wl_simd_force(WL_SIMD_AUTO);
}

/* Run as "expect-scalar" with WL_SIMD=scalar in the environment: the first resolution of the
 * path honours the variable. */
static void test_env_selects_scalar(void **state)
{
    (void)state;
    assert_int_equal(wl_simd_active(), WL_SIMD_SCALAR);
    assert_string_equal(wl_simd_name(wl_simd_active()), "scalar");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest env[] = {
        cmocka_unit_test(test_env_selects_scalar),
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_force),
        cmocka_unit_test(test_kernels_match_documented_structure),
        cmocka_unit_test(test_paths_bitwise_equal),
        cmocka_unit_test(test_dot_accuracy),
        cmocka_unit_test(test_signed_zeros),
    };
    if (argc > 1 && strcmp(argv[1], "expect-scalar") == 0)
        return cmocka_run_group_tests(env, NULL, NULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
