/*
 * test_instr.c: the pure parts of instruction-count mode (instr.c): the count per iteration from
 * samples of N and 2N iterations, which must cancel a constant cost per sample exactly, and the
 * threshold verdicts of the comparison.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "run/instr.h"

static void test_difference_cancels_the_constant(void **state)
{
    (void)state;
    /* 6003 per iteration plus 41 per sample (toggles, timer reads). */
    double iters[] = {2048, 4096};
    double totals[] = {2048 * 6003.0 + 41, 4096 * 6003.0 + 41};
    assert_true(bench__instr_per_iter(iters, totals, 2) == 6003.0);
}

static void test_large_counts_stay_exact(void **state)
{
    (void)state;
    /* 4.8e9 instructions per iteration, N = 1: still exact in a double. */
    double iters[] = {1, 2};
    double totals[] = {4807544404.0 + 113, 2 * 4807544404.0 + 113};
    assert_true(bench__instr_per_iter(iters, totals, 2) == 4807544404.0);
}

static void test_more_samples_fit_a_line(void **state)
{
    (void)state;
    double iters[] = {10, 20, 40};
    double totals[] = {10 * 7.0 + 5, 20 * 7.0 + 5, 40 * 7.0 + 5};
    assert_true(fabs(bench__instr_per_iter(iters, totals, 3) - 7.0) < 1e-12);
}

static void test_degenerate_samples(void **state)
{
    (void)state;
    double iters[] = {10, 10};
    double totals[] = {100, 100};
    assert_true(isnan(bench__instr_per_iter(iters, totals, 2)));
    assert_true(isnan(bench__instr_per_iter(iters, totals, 1)));
}

static void test_verdicts(void **state)
{
    (void)state;
    double t = BENCH__INSTR_DEFAULT_THRESHOLD;
    assert_int_equal(bench__verdict_exact(3003, 3003, t), BENCH__V_NO_CHANGE);
    assert_int_equal(bench__verdict_exact(3003, 3033, t), BENCH__V_REGRESSED); /* +1% */
    assert_int_equal(bench__verdict_exact(3003, 2973, t), BENCH__V_IMPROVED);  /* -1% */
    assert_int_equal(bench__verdict_exact(10000, 10010, t), BENCH__V_NO_CHANGE); /* 0.1% */
    assert_int_equal(bench__verdict_exact(10000, 10011, t), BENCH__V_REGRESSED);
    assert_int_equal(bench__verdict_exact(10000, 9989, t), BENCH__V_IMPROVED);
    assert_int_equal(bench__verdict_exact(100, 101, 0.02), BENCH__V_NO_CHANGE);
    assert_int_equal(bench__verdict_exact(100, 100.5, 0), BENCH__V_REGRESSED);
    assert_int_equal(bench__verdict_exact(0, 100, t), BENCH__V_INCOMPARABLE);
    assert_int_equal(bench__verdict_exact(100, NAN, t), BENCH__V_INCOMPARABLE);
}

static void test_mode_names(void **state)
{
    (void)state;
    assert_true(bench__instr_is_mode("instructions"));
    assert_false(bench__instr_is_mode(""));
    assert_false(bench__instr_is_mode("time"));
    assert_false(bench__instr_is_mode(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_difference_cancels_the_constant),
        cmocka_unit_test(test_large_counts_stay_exact),
        cmocka_unit_test(test_more_samples_fit_a_line),
        cmocka_unit_test(test_degenerate_samples),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_mode_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
