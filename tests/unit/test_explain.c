/*
 * test_explain.c: the noise that decides which functions --explain names (explain.c): a
 * function's change between two profiles and its standard deviation, against values worked out
 * by hand from the binomial sd of a share, the spread of the worker pairs' changes and the
 * uncertainty of the verdict's ratio.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "run/explain.h"

static void test_binomial_noise_of_one_pair(void **state)
{
    (void)state;
    /* A: 500 of 1000 samples at 100 ns per iteration; B: 600 of 1000 at 120 ns.
     * d = 120 * 0.6 - 100 * 0.5 = 22 ns; var = 100^2 * 0.25 / 1000 + 120^2 * 0.24 / 1000
     * = 2.5 + 3.456. */
    double a[] = {500}, b[] = {600}, na[] = {1000}, nb[] = {1000}, d;
    double sd = bench__explain_diff_sd(a, b, na, nb, 1, 100, 120, 0, &d);
    assert_true(fabs(d - 22.0) < 1e-9);
    assert_true(fabs(sd - sqrt(5.956)) < 1e-9);
}

static void test_ratio_uncertainty_adds(void **state)
{
    (void)state;
    /* The same, with ln(tb / ta) known to 1%: + (120 * 0.6 * 0.01)^2 = 0.5184. */
    double a[] = {500}, b[] = {600}, na[] = {1000}, nb[] = {1000}, d;
    double sd = bench__explain_diff_sd(a, b, na, nb, 1, 100, 120, 0.01, &d);
    assert_true(fabs(sd - sqrt(5.956 + 0.5184)) < 1e-9);
}

static void test_spread_of_pairs_wins_when_larger(void **state)
{
    (void)state;
    /* Three pairs, A's share 0.1, 0.3, 0.2 and B's 0.2 each, both 100 ns: the pairs' changes
     * are 10, -10 and 0 ns (sd 10, so 100 / 3 over the pairs), larger than the pooled
     * binomial 2 * 100^2 * 0.16 / 3000; the pooled change is 0. */
    double a[] = {100, 300, 200}, b[] = {200, 200, 200};
    double na[] = {1000, 1000, 1000}, nb[] = {1000, 1000, 1000}, d;
    double sd = bench__explain_diff_sd(a, b, na, nb, 3, 100, 100, 0, &d);
    assert_true(fabs(d) < 1e-9);
    assert_true(fabs(sd - sqrt(100.0 / 3.0)) < 1e-9);
}

static void test_a_few_samples_against_none_are_noise(void **state)
{
    (void)state;
    /* 0 of 1000 against 3 of 1000 at 100 ns: d = 0.3 ns; the zero counts as one sample, so
     * var = 100^2 * 0.003 * 0.997 / 1000 + 100^2 / 1000^2, and 0.3 is under 4 sd. */
    double a[] = {0}, b[] = {3}, na[] = {1000}, nb[] = {1000}, d;
    double sd = bench__explain_diff_sd(a, b, na, nb, 1, 100, 100, 0, &d);
    assert_true(fabs(d - 0.3) < 1e-12);
    assert_true(fabs(sd - sqrt(0.029910 + 0.01)) < 1e-9);
    assert_true(fabs(d) < BENCH__EXPLAIN_Z * sd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binomial_noise_of_one_pair),
        cmocka_unit_test(test_ratio_uncertainty_adds),
        cmocka_unit_test(test_spread_of_pairs_wins_when_larger),
        cmocka_unit_test(test_a_few_samples_against_none_are_noise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
