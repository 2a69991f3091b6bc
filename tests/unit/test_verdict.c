/*
 * test_verdict.c: the verdict rules (verdict.c), which every comparison shares. Hand-worked
 * cases for each verdict from an interval worked out here, the threshold band in percent at its
 * edges, the minimum detectable effect by hand and by simulation (a true change of exactly that
 * size is called regressed in about 80% of repetitions), the drift guard of saved-number
 * verdicts, and the exact rule of counts.
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
#include "unit_helpers.h"

static const bench__compare_opts opts = {.significance_level = 0.05, .noise_threshold = 0.02};

static bench__verdict decide(double d, double se, double df, double tests)
{
    bench__change c;
    memset(&c, 0, sizeof c);
    bench__decide(&c, d, se, df, tests, &opts);
    return c.verdict;
}

/*
 * Normal reference (df infinite), one test: the interval is d +- 1.959964 se; tau = ln 1.02 =
 * 0.0198026. Each verdict from an interval worked out by hand:
 */
static void test_each_verdict(void **state)
{
    (void)state;
    /* d = 0.05, se = 0.01: [0.0304, 0.0696] above 0, d beyond tau: regressed. */
    assert_int_equal(decide(0.05, 0.01, INFINITY, 1), BENCH__V_REGRESSED);
    assert_int_equal(decide(-0.05, 0.01, INFINITY, 1), BENCH__V_IMPROVED);
    /* d = 0.025, se = 0.01: [0.0054, 0.0446]: above 0 and d beyond tau: regressed, although
     * the interval reaches inside the threshold (the estimate decides the size). */
    assert_int_equal(decide(0.025, 0.01, INFINITY, 1), BENCH__V_REGRESSED);
    /* d = 0, se = 0.005: [-0.0098, 0.0098] inside +-tau, holding 0: no change. */
    assert_int_equal(decide(0, 0.005, INFINITY, 1), BENCH__V_NO_CHANGE);
    /* d = 0.012, se = 0.003: [0.00612, 0.01788] inside +-tau, above 0: within noise. */
    assert_int_equal(decide(0.012, 0.003, INFINITY, 1), BENCH__V_WITHIN_NOISE);
    /* d = 0, se = 0.2 (a +-50% interval): it says nothing: inconclusive, never no change. */
    assert_int_equal(decide(0, 0.2, INFINITY, 1), BENCH__V_INCONCLUSIVE);
    /* d = 0.015, se = 0.005: [0.0052, 0.0248]: a real change, d within tau, but the interval
     * reaches beyond it: inconclusive. */
    assert_int_equal(decide(0.015, 0.005, INFINITY, 1), BENCH__V_INCONCLUSIVE);
    /* d = 0.03, se = 0.02: [-0.0092, 0.0692] holds 0: inconclusive, however large d is. */
    assert_int_equal(decide(0.03, 0.02, INFINITY, 1), BENCH__V_INCONCLUSIVE);
    /* The same d = 0.025, se = 0.01 with 10 tests: z(1 - 0.0025) = 2.807034, [-0.0031, 0.0531]
     * holds 0: inconclusive. */
    assert_int_equal(decide(0.025, 0.01, INFINITY, 10), BENCH__V_INCONCLUSIVE);
    /* And with 4 degrees of freedom, one test: t(0.975; 4) = 2.776445, the same interval:
     * inconclusive where the normal said regressed. */
    assert_int_equal(decide(0.025, 0.01, 4, 1), BENCH__V_INCONCLUSIVE);
    /* Not a number: not compared. */
    assert_int_equal(decide(NAN, 0.01, INFINITY, 1), BENCH__V_INCOMPARABLE);
    assert_int_equal(decide(0.01, NAN, INFINITY, 1), BENCH__V_INCOMPARABLE);
    /* se = 0: every process agreed: the point itself decides. */
    assert_int_equal(decide(0, 0, INFINITY, 1), BENCH__V_NO_CHANGE);
    assert_int_equal(decide(0.05, 0, INFINITY, 1), BENCH__V_REGRESSED);
    assert_int_equal(decide(0.01, 0, INFINITY, 1), BENCH__V_WITHIN_NOISE);
}

/*
 * The threshold is a band in percent, [1 - T, 1 + T], as the reports print it: with T = 2% the
 * log band is [ln 0.98, ln 1.02] = [-0.0202027, 0.0198026], not +-0.0198026.
 */
static void test_threshold_in_percent(void **state)
{
    (void)state;
    double d = log(0.996); /* -0.40%: -0.0040080 */
    /* se = 0.0081: [-0.0198837, 0.0118677], printed -0.40% [-1.97%, +1.19%]: inside the band
     * (ln 0.98 = -0.0202027), holding 0: no change (a log-symmetric rule said inconclusive). */
    assert_int_equal(decide(d, 0.0081, INFINITY, 1), BENCH__V_NO_CHANGE);
    /* se = 0.0083: lower end -0.0202758, -2.01%: beyond the band: inconclusive. */
    assert_int_equal(decide(d, 0.0083, INFINITY, 1), BENCH__V_INCONCLUSIVE);
    /* -1.95% with se = 0.0002: [-0.0200855, -0.0193015], -1.99% to -1.91%: within noise. */
    assert_int_equal(decide(log(0.9805), 0.0002, INFINITY, 1), BENCH__V_WITHIN_NOISE);
    /* -2.05% with se = 0.0002: [-0.0211054, -0.0203213]: below 0 and the estimate beyond -2%:
     * improved. */
    assert_int_equal(decide(log(0.9795), 0.0002, INFINITY, 1), BENCH__V_IMPROVED);
    /* +1.99% with se = 0.0002: [0.0193117, 0.0200957], +1.95% to +2.03%: inconclusive. */
    assert_int_equal(decide(log(1.0199), 0.0002, INFINITY, 1), BENCH__V_INCONCLUSIVE);
    /* The helper the reports use, and the exact rule of counts, draw the same band. */
    assert_false(bench__beyond_threshold(log(0.9805), 0.02));
    assert_true(bench__beyond_threshold(log(0.9795), 0.02));
    assert_false(bench__beyond_threshold(log(1.0195), 0.02));
    assert_true(bench__beyond_threshold(log(1.0205), 0.02));
    assert_int_equal(bench__verdict_exact(100.0, 98.05, 0.02), BENCH__V_NO_CHANGE);
    assert_int_equal(bench__verdict_exact(100.0, 97.95, 0.02), BENCH__V_IMPROVED);
}

/* The numbers beside the verdict: interval, p and p_adjusted from the same statistic. */
static void test_numbers(void **state)
{
    (void)state;
    bench__change c;
    memset(&c, 0, sizeof c);
    bench__decide(&c, 0.025, 0.01, INFINITY, 10, &opts);
    assert_close(log(c.ratio), 0.025, 1e-15);
    assert_close(log(c.ratio_lower), 0.025 - 2.8070338 * 0.01, 1e-8);
    assert_close(log(c.ratio_upper), 0.025 + 2.8070338 * 0.01, 1e-8);
    /* z = 2.5: two-sided p = 0.0124193; times 10 tests. */
    assert_close(c.p, 0.012419330651552, 1e-9);
    assert_close(c.p_adjusted, 0.12419330651552, 1e-8);
    assert_close(c.tests, 10, 0);
    memset(&c, 0, sizeof c);
    bench__decide(&c, 0.2, 0.01, INFINITY, 10, &opts);
    assert_close(c.p_adjusted, fmin(1.0, 10 * c.p), 1e-15);
    bench__decide(&c, 0.0, 0.01, INFINITY, 10, &opts);
    assert_close(c.p_adjusted, 1.0, 0);
}

/*
 * The minimum detectable effect, by hand: se = 0.005, normal, one test: t_crit se = 0.0098 is
 * below tau = 0.0198026, so MDE = tau + z(0.8) se = 0.0198026 + 0.8416212 * 0.005 = 0.0240107
 * (log), 2.4301% as a ratio. With se = 0.02: t_crit se = 0.0391993 beyond tau, MDE = 0.0391993 +
 * 0.0168324 = 0.0560317 (log) = 5.7631%.
 */
static void test_mde_by_hand(void **state)
{
    (void)state;
    assert_close(bench__mde(0.005, INFINITY, 1, &opts), expm1(0.0240107), 1e-6);
    assert_close(bench__mde(0.02, INFINITY, 1, &opts), expm1(0.0560317), 1e-6);
    assert_true(isinf(bench__mde(INFINITY, 5, 1, &opts)));
    /* More tests or fewer degrees of freedom: never more sensitive. */
    assert_true(bench__mde(0.02, INFINITY, 10, &opts) > bench__mde(0.02, INFINITY, 1, &opts));
    assert_true(bench__mde(0.02, 5, 1, &opts) > bench__mde(0.02, INFINITY, 1, &opts));
    /* With no spread at all the threshold is what it takes. */
    assert_close(bench__mde(0, INFINITY, 1, &opts), 0.02, 1e-15);
}

/*
 * The MDE means what it says: estimates drawn around a true change of exactly the MDE (normal,
 * and t with 7 degrees of freedom as a paired run of 8 pairs has) are called regressed in about
 * 80% of 20000 repetitions (between 78% and 82%: the binomial sd is 0.3%).
 */
static void test_mde_has_its_power(void **state)
{
    (void)state;
    static const double dfs[] = {INFINITY, 7};
    for (size_t k = 0; k < 2; k++) {
        bench__rng r;
        bench__rng_seed(&r, 99 + k);
        double se = 0.01, tests = 5, df = dfs[k];
        double true_d = log1p(bench__mde(se, df, tests, &opts));
        int regressed = 0, n = 20000;
        for (int i = 0; i < n; i++) {
            double z = normal(&r);
            if (isfinite(df)) {
                /* Student's t: z / sqrt(chi2_df / df), the estimated se's own noise. */
                double c = 0;
                for (int j = 0; j < (int)df; j++) {
                    double y = normal(&r);
                    c += y * y;
                }
                z /= sqrt(c / df);
            }
            regressed += decide(true_d + se * z, se, df, tests) == BENCH__V_REGRESSED;
        }
        double rate = (double)regressed / n;
        print_message("df %g: a true change of the MDE called regressed in %.4f\n", df, rate);
        assert_true(rate > 0.78 && rate < 0.82);
    }
}

static void test_drift_guard(void **state)
{
    (void)state;
    bench__change c;
    memset(&c, 0, sizeof c);
    bench__decide(&c, log(1.10), 0.01, INFINITY, 1, &opts); /* [+7.8%, +12.3%] */
    assert_int_equal(c.verdict, BENCH__V_REGRESSED);
    bench__change g = c;
    bench__verdict_drift_guard(&g, 0.05); /* the whole interval beyond a 5% drift: stays */
    assert_int_equal(g.verdict, BENCH__V_REGRESSED);
    g = c;
    bench__verdict_drift_guard(&g, 0.09); /* a 9% drift could explain it */
    assert_int_equal(g.verdict, BENCH__V_INCONCLUSIVE);
    bench__decide(&c, log(0.90), 0.01, INFINITY, 1, &opts);
    g = c;
    bench__verdict_drift_guard(&g, 0.09);
    assert_int_equal(g.verdict, BENCH__V_INCONCLUSIVE);
    bench__decide(&c, 0, 0.005, INFINITY, 1, &opts); /* no change stays what it is */
    bench__verdict_drift_guard(&c, 0.5);
    assert_int_equal(c.verdict, BENCH__V_NO_CHANGE);
}

/* A saved-numbers verdict is clear when its interval's near end lies beyond the threshold by
 * three times the noise given. +30% with se 1%: the interval's lower end is
 * exp(ln 1.3 - 1.959964 * 0.01) = 1.2748 (ln 0.24276), against ln 1.02 = 0.019803 plus 3 x noise:
 * clear up to a noise of (0.24276 - 0.019803) / 3 = 0.07432, not above. */
static void test_clear_verdicts(void **state)
{
    (void)state;
    bench__change c;
    memset(&c, 0, sizeof c);
    bench__decide(&c, log(1.30), 0.01, INFINITY, 1, &opts);
    assert_int_equal(c.verdict, BENCH__V_REGRESSED);
    assert_true(fabs(log(c.ratio_lower) - 0.24276) < 1e-4);
    assert_true(bench__verdict_clear(&c, 0.02, 0.015));
    assert_true(bench__verdict_clear(&c, 0.02, 0.0743));
    assert_false(bench__verdict_clear(&c, 0.02, 0.0745));
    assert_false(bench__verdict_clear(&c, 0.02, NAN));
    assert_false(bench__verdict_clear(&c, 0.02, INFINITY));
    /* The same distance below: upper end exp(ln 0.7 + 0.0196) = 0.7139 (ln -0.33707), against
     * ln 0.98 = -0.020203 minus 3 x noise: clear up to (0.33707 - 0.020203) / 3 = 0.10562. */
    bench__decide(&c, log(0.70), 0.01, INFINITY, 1, &opts);
    assert_int_equal(c.verdict, BENCH__V_IMPROVED);
    assert_true(bench__verdict_clear(&c, 0.02, 0.1055));
    assert_false(bench__verdict_clear(&c, 0.02, 0.1058));
    /* A regression just beyond the threshold is a verdict, but not a clear one. */
    bench__decide(&c, log(1.06), 0.01, INFINITY, 1, &opts); /* [+3.9%, +8.1%] */
    assert_int_equal(c.verdict, BENCH__V_REGRESSED);
    assert_false(bench__verdict_clear(&c, 0.02, 0.015));
    /* A run that spread the benchmark's processes widely: +120% with se 0.2, its interval
     * [+48.6%, +225%] (lower end ln 0.3960) far beyond 1.02 e^(3 x 0.015), but not beyond the
     * change's own se taken as the noise: ln 1.02 + 3 x 0.2 = 0.6198. Not clear: confirmed. */
    bench__decide(&c, log(2.2), 0.2, INFINITY, 1, &opts);
    assert_int_equal(c.verdict, BENCH__V_REGRESSED);
    assert_true(fabs(log(c.ratio_lower) - 0.3960) < 1e-3);
    assert_false(bench__verdict_clear(&c, 0.02, 0.015));
    /* Undecided and unchanged verdicts are never clear: they are not claims of a change. */
    bench__decide(&c, log(1.30), 0.2, INFINITY, 1, &opts);
    assert_int_equal(c.verdict, BENCH__V_INCONCLUSIVE);
    assert_false(bench__verdict_clear(&c, 0.02, 0));
    bench__decide(&c, 0, 0.001, INFINITY, 1, &opts);
    assert_int_equal(c.verdict, BENCH__V_NO_CHANGE);
    assert_false(bench__verdict_clear(&c, 0.02, 0));
}

static void test_exact_and_names(void **state)
{
    (void)state;
    assert_int_equal(bench__verdict_exact(1000, 1011, 0.01), BENCH__V_REGRESSED);
    assert_int_equal(bench__verdict_exact(1000, 1009, 0.01), BENCH__V_NO_CHANGE);
    assert_int_equal(bench__verdict_exact(1000, 989, 0.01), BENCH__V_IMPROVED);
    assert_int_equal(bench__verdict_exact(0, 5, 0.01), BENCH__V_INCOMPARABLE);
    assert_string_equal(bench__verdict_name(BENCH__V_INCONCLUSIVE), "inconclusive");
    assert_true(bench__verdict_suspect(BENCH__V_INCONCLUSIVE));
    assert_true(bench__verdict_suspect(BENCH__V_REGRESSED));
    assert_false(bench__verdict_suspect(BENCH__V_NO_CHANGE));
    assert_true(bench__verdict_decided(BENCH__V_WITHIN_NOISE));
    assert_false(bench__verdict_decided(BENCH__V_INCONCLUSIVE));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_verdict),
        cmocka_unit_test(test_threshold_in_percent),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_mde_by_hand),
        cmocka_unit_test(test_mde_has_its_power),
        cmocka_unit_test(test_drift_guard),
        cmocka_unit_test(test_clear_verdicts),
        cmocka_unit_test(test_exact_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
