/*
 * test_decisions.c: the decisions that callers outside compare/ hand their numbers to
 * (verdict.h): the same program measured twice, the exit code of a finished comparison under
 * the gate's flags, the history gate's outcome, a paired run's word on a history step, the
 * change a spread between processes lets a saved comparison see, and a suite that moved
 * together. Each against cases worked out here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare/compare.h"
#include "compare/verdict.h"
#include "core/base.h"
#include "unit_helpers.h"

static void test_same_program(void **state)
{
    (void)state;
    assert_true(bench__same_program("sha256:ab", "sha256:ab"));
    assert_false(bench__same_program("sha256:ab", "sha256:ac"));
    /* An unknown program is never the same as another, not even another unknown one. */
    assert_false(bench__same_program("", ""));
    assert_false(bench__same_program(NULL, "sha256:ab"));
    /* Only a suspect verdict of one program measured twice is the machine's. */
    assert_true(bench__verdict_machine_moved(BENCH__V_REGRESSED, true));
    assert_true(bench__verdict_machine_moved(BENCH__V_INCONCLUSIVE, true));
    assert_false(bench__verdict_machine_moved(BENCH__V_NO_CHANGE, true));
    assert_false(bench__verdict_machine_moved(BENCH__V_REGRESSED, false));

    bench__change c = {.verdict = BENCH__V_IMPROVED};
    bench__verdict_settle_same(&c);
    assert_int_equal(c.verdict, BENCH__V_NO_CHANGE);
    assert_true(c.same_program);
    c = (bench__change){.verdict = BENCH__V_WITHIN_NOISE};
    bench__verdict_settle_same(&c);
    assert_int_equal(c.verdict, BENCH__V_WITHIN_NOISE);
    assert_false(c.same_program);
}

static void test_gate_exit(void **state)
{
    (void)state;
    bench__change ch[3] = {{.verdict = BENCH__V_REGRESSED},
                           {.verdict = BENCH__V_INCONCLUSIVE},
                           {.verdict = BENCH__V_NEW}};
    bench__gate g = {0};
    assert_int_equal(bench__gate_exit(ch, 3, &g), BENCH_EXIT_OK);
    g = (bench__gate){.fail_on_regression = true};
    assert_int_equal(bench__gate_exit(ch, 3, &g), BENCH_EXIT_REGRESSION);
    g = (bench__gate){.strict = true};
    assert_int_equal(bench__gate_exit(ch, 3, &g), BENCH_EXIT_USAGE);
    /* An undecided row fails as a regression does, before --baseline-strict's usage error. */
    g = (bench__gate){.strict = true, .fail_on_inconclusive = true};
    assert_int_equal(bench__gate_exit(ch, 3, &g), BENCH_EXIT_REGRESSION);
    assert_true(bench__gate_undecided(&g, BENCH__V_INCONCLUSIVE));
    assert_false(bench__gate_undecided(&g, BENCH__V_REGRESSED));
    /* Statuses never change it. */
    bench__change st[2] = {{.verdict = BENCH__V_SKIPPED}, {.verdict = BENCH__V_INCOMPARABLE}};
    g = (bench__gate){.strict = true, .fail_on_regression = true, .fail_on_inconclusive = true};
    assert_int_equal(bench__gate_exit(st, 2, &g), BENCH_EXIT_OK);
    assert_true(bench__verdict_strict(BENCH__V_REMOVED));
    assert_false(bench__verdict_strict(BENCH__V_SKIPPED));
}

/* Twelve runs alike but for a little noise, then the newest: its outcome at threshold 2%. */
static bench__gate_outcome gate_of(double newest)
{
    double logs[13];
    for (int i = 0; i < 12; i++)
        logs[i] = 0.001 * (i % 3 == 0 ? 1 : i % 3 == 1 ? -1 : 0);
    logs[12] = newest;
    bench__gate_result g;
    assert_int_equal(bench__gate_window(logs, 13, 0.02, 0.05, 1, &g), 0);
    /* The outcome is the flags' order: a failing trend first, then a failing step. */
    assert_int_equal(g.outcome, g.trend_fails   ? BENCH__GATE_TREND_FAILS
                                : g.step_fails ? BENCH__GATE_STEP_FAILS
                                               : BENCH__GATE_PASSES);
    return g.outcome;
}

static void test_gate_outcome(void **state)
{
    (void)state;
    assert_int_equal(gate_of(0.0), BENCH__GATE_PASSES);
    /* ln 1.5 against a spread of 0.1%: a step far beyond the threshold. */
    assert_int_equal(gate_of(log(1.5)), BENCH__GATE_STEP_FAILS);
    /* Faster is never a failure. */
    assert_int_equal(gate_of(log(0.5)), BENCH__GATE_PASSES);

    assert_true(bench__gate_paired_fails(BENCH__V_REGRESSED));
    assert_true(bench__gate_paired_fails(BENCH__V_INCONCLUSIVE));
    assert_false(bench__gate_paired_fails(BENCH__V_IMPROVED));
    assert_false(bench__gate_paired_fails(BENCH__V_NO_CHANGE));
}

static void test_step_check(void **state)
{
    (void)state;
    bench__change c = {.verdict = BENCH__V_REGRESSED, .ratio = 1.1};
    assert_int_equal(bench__verdict_step_check(&c, 0.09), BENCH__STEP_CONFIRMED);
    assert_int_equal(bench__verdict_step_check(&c, -0.09), BENCH__STEP_OTHER_WAY);
    c = (bench__change){.verdict = BENCH__V_IMPROVED, .ratio = 0.9};
    assert_int_equal(bench__verdict_step_check(&c, -0.09), BENCH__STEP_CONFIRMED);
    c = (bench__change){.verdict = BENCH__V_WITHIN_NOISE, .ratio = 1.005};
    assert_int_equal(bench__verdict_step_check(&c, 0.09), BENCH__STEP_ALIKE);
    c = (bench__change){.verdict = BENCH__V_INCONCLUSIVE, .ratio = 1.1};
    assert_int_equal(bench__verdict_step_check(&c, 0.09), BENCH__STEP_UNDECIDED);
}

/*
 * Whether a spread hides a change of the threshold, worked by hand (t quantiles from Python,
 * Simpson's rule on Student's density and bisection, independent of stats.c):
 * 5 processes spread by sd 0.05 in the log: se = sqrt(2/5) 0.05 = 0.0316228, Welch df 2 (5 - 1)
 * = 8. The defaults (alpha 0.05, T 2%), one benchmark: t(0.975, 8) = 2.306004, t(0.8, 8) =
 * 0.888890; (2.306004 + 0.888890) se = 0.1010314 > ln 1.02 = 0.0198026: hidden. The
 * comparison's detectable change: expm1(max(ln 1.02, 2.306004 se = 0.0729222) + 0.888890 se)
 * = expm1(0.1010314) = 0.1063114.
 */
static void test_spread(void **state)
{
    (void)state;
    double mde = 0, mde_set = 0;
    assert_true(bench__spread_hides_changes(5, 0.05, 1, NULL, &mde));
    assert_close(mde, 0.1063114, 1e-6);
    const bench__compare_opts def = {.significance_level = 0.05, .noise_threshold = 0.02};
    assert_true(bench__spread_hides_changes(5, 0.05, 1, &def, &mde_set));
    assert_true(mde_set == mde);
    /* The run's own threshold and level: T 20%, alpha 0.1: t(0.95, 8) = 1.859548, (1.859548 +
     * 0.888890) se = 0.0869132 < ln 1.2 = 0.1823216: a change of 20% is seen, no warning. The
     * detectable change is the threshold's plus power: expm1(0.1823216 + 0.888890 se) =
     * expm1(0.2104310) = 0.2342096. */
    const bench__compare_opts wide = {.significance_level = 0.1, .noise_threshold = 0.2};
    assert_false(bench__spread_hides_changes(5, 0.05, 1, &wide, &mde));
    assert_close(mde, 0.2342096, 1e-6);
    /* sd 0.009: se = sqrt(2/5) 0.009 = 0.0056921. Alone: (2.306004 + 0.888890) se = 0.0181857
     * < 0.0198026, seen. As one of 2 benchmarks (Bonferroni: t(1 - 0.05/4, 8) = 2.751524):
     * (2.751524 + 0.888890) se = 0.0207216 > 0.0198026, hidden; detectable
     * expm1(max(0.0198026, 2.751524 se = 0.0156619) + 0.888890 se) = expm1(0.0248622) =
     * 0.0251739. */
    assert_false(bench__spread_hides_changes(5, 0.009, 1, NULL, &mde));
    assert_true(bench__spread_hides_changes(5, 0.009, 2, NULL, &mde));
    assert_close(mde, 0.0251739, 1e-6);
    /* No spread hides nothing; fewer than two processes say nothing of a spread. */
    assert_false(bench__spread_hides_changes(5, 0.0, 1, NULL, &mde));
    assert_false(bench__spread_hides_changes(1, 0.05, 1, NULL, &mde));
    assert_true(isinf(mde));
}

static void test_moved_together(void **state)
{
    (void)state;
    /* 3 of 4 moved the median's way (75%), and the median lies beyond 2%. */
    assert_true(bench__verdict_moved_together(0.05, 3, 4, 0.02));
    assert_false(bench__verdict_moved_together(0.05, 2, 4, 0.02));
    assert_false(bench__verdict_moved_together(0.01, 4, 4, 0.02));
    /* Fewer than 4 benchmarks say nothing of the machine. */
    assert_false(bench__verdict_moved_together(0.05, 3, 3, 0.02));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_program),  cmocka_unit_test(test_gate_exit),
        cmocka_unit_test(test_gate_outcome),  cmocka_unit_test(test_step_check),
        cmocka_unit_test(test_spread),        cmocka_unit_test(test_moved_together),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
