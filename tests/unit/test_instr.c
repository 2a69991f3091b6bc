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
#include <string.h>

#include "core/result.h"
#include "run/client.h"
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

/* Under --instructions a count per iteration is the slope through the samples of 1, N and 2N
 * iterations; a time beside it (a thread's ns) is the median of its samples' ns per iteration,
 * never the slope, which its noise can make negative: samples of 2000, 1500 and 1000 ns over
 * 1, 100 and 200 iterations have a slope of -149250/29701 = -5.03 ns an iteration (by hand)
 * and per-iteration times of 2000, 15 and 5 ns, whose median is 15. */
static void test_times_are_not_slopes(void **state)
{
    (void)state;
    bench__result r;
    memset(&r, 0, sizeof r);
    double iters[] = {1, 100, 200};
    double counts[] = {6003 + 41, 100 * 6003.0 + 41, 200 * 6003.0 + 41};
    double ns[] = {2000, 1500, 1000};
    r.nsamples = 3;
    r.iters = iters;
    r.nmetrics = 2;
    strcpy(r.metrics[0].name, "instructions");
    strcpy(r.metrics[0].unit, "instructions");
    r.metrics[0].totals = counts;
    strcpy(r.metrics[1].name, "thread_1");
    strcpy(r.metrics[1].unit, "ns");
    strcpy(r.metrics[1].source, "threads");
    r.metrics[1].totals = ns;
    assert_true(fabs(bench__instr_per_iter(iters, ns, 3) - (-149250.0 / 29701.0)) < 1e-9);
    bench__instr_client.estimate(&r);
    assert_true(fabs(r.metrics[0].est.median.point - 6003.0) < 1e-9);
    assert_true(r.metrics[0].est.slope.point == r.metrics[0].est.median.point);
    assert_true(r.metrics[1].est.median.point == 15.0);
    assert_true(r.metrics[1].est.median.lower == 15.0 && r.metrics[1].est.slope.point == 15.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_difference_cancels_the_constant),
        cmocka_unit_test(test_large_counts_stay_exact),
        cmocka_unit_test(test_more_samples_fit_a_line),
        cmocka_unit_test(test_times_are_not_slopes),
        cmocka_unit_test(test_degenerate_samples),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_mode_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
