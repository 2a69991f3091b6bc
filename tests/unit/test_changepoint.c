/*
 * test_changepoint.c: change points and trends in a series of run medians (changepoint.c), on
 * synthetic series of log medians with seeded normal noise: a 3% step at run 25 of 40 with 1%
 * noise per run (found at 25 +- 1, 3% inside its interval, nothing else), a 2% step among noisy
 * runs, a drift of 1% per run (a trend, not a scatter of steps), pure noise (change points at
 * most at the rate the level allows), and hand-worked edge cases; where a change point may be
 * (its location interval against residual sums worked directly) and a change point placed at a
 * known run; the trend test worked by hand (Mann-Kendall p alone and adjusted over 10 series),
 * and families of unchanged series that show trends tested alone but not corrected over the
 * family, while a planted drift is still found. Then the history gate
 * (bench__cp_newest_step, bench__gate_window): the newest run's step against a window worked by
 * hand (closed-form t distribution of 4 degrees of freedom), a 5% slowdown of the newest run
 * caught, a steady window passing at the rate the level allows, and a drift of 1% per run that
 * the one-step test misses named by the trend.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare/verdict.h"
#include "stats/changepoint.h"
#include "unit_helpers.h"

#define ALPHA 0.05
#define N 40

/* ln(1000 ns) plus step (a relative change) from `at` on, drift per run (relative), and normal
 * noise of sd `noise` in the log. */
static void series(double *y, size_t n, size_t at, double step, double drift, double noise,
                   uint64_t seed)
{
    bench__rng r;
    bench__rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        y[i] = log(1000.0) + (i >= at ? log1p(step) : 0) + (double)i * log1p(drift) +
               noise * normal(&r);
}

/* One seed, every claim: the step at run 25 (0-based: the first run after it), within one run,
 * its size in its interval, no other change point, no trend. */
static void test_step_one_seed(void **state)
{
    (void)state;
    double y[N];
    bench__cp_result cr;
    series(y, N, 25, 0.03, 0, 0.01, 1);
    assert_int_equal(bench__changepoints(y, N, ALPHA, 1, &cr), 0);
    assert_int_equal(cr.ncp, 1);
    assert_true(cr.cp[0].index >= 24 && cr.cp[0].index <= 26);
    assert_true(cr.cp[0].step_lower <= 0.03 && 0.03 <= cr.cp[0].step_upper);
    assert_true(cr.cp[0].step_lower > 0);
    assert_true(cr.cp[0].p_adjusted < ALPHA);
    assert_false(cr.trend.found);
}

/* Over 100 seeds: the step is found within one run of 25 with nothing else in nearly all, and
 * its interval holds 3% about as often as its level says (95%; at least 85 of 100 asked). */
static void test_step_many_seeds(void **state)
{
    (void)state;
    int exact = 0, covered = 0;
    for (uint64_t seed = 100; seed < 200; seed++) {
        double y[N];
        bench__cp_result cr;
        series(y, N, 25, 0.03, 0, 0.01, seed);
        assert_int_equal(bench__changepoints(y, N, ALPHA, 1, &cr), 0);
        if (cr.ncp == 1 && cr.cp[0].index >= 24 && cr.cp[0].index <= 26 && !cr.trend.found) {
            exact++;
            covered += cr.cp[0].step_lower <= 0.03 && 0.03 <= cr.cp[0].step_upper;
        }
    }
    print_message("3%% step: %d of 100 exact, %d covered\n", exact, covered);
    assert_true(exact >= 90);
    assert_true(covered >= 85);
}

/* A 2% step at run 20 of 40 among runs with 1% noise: found within two runs in most seeds. */
static void test_small_step(void **state)
{
    (void)state;
    int found = 0;
    for (uint64_t seed = 300; seed < 400; seed++) {
        double y[N];
        bench__cp_result cr;
        series(y, N, 20, 0.02, 0, 0.01, seed);
        assert_int_equal(bench__changepoints(y, N, ALPHA, 1, &cr), 0);
        found += cr.ncp == 1 && cr.cp[0].index >= 18 && cr.cp[0].index <= 22;
    }
    print_message("2%% step: found in %d of 100\n", found);
    assert_true(found >= 80);
}

/* A drift of 1% per run with 1% noise: a trend of about 1% per run (inside its interval), and
 * no change points. */
static void test_drift_is_a_trend(void **state)
{
    (void)state;
    int trends = 0, covered = 0;
    for (uint64_t seed = 500; seed < 600; seed++) {
        double y[N];
        bench__cp_result cr;
        series(y, N, N, 0, 0.01, 0.01, seed);
        assert_int_equal(bench__changepoints(y, N, ALPHA, 1, &cr), 0);
        if (cr.trend.found && cr.ncp == 0) {
            trends++;
            covered += cr.trend.lower <= 0.01 && 0.01 <= cr.trend.upper;
        }
        if (seed == 500) {
            assert_true(cr.trend.found);
            assert_int_equal(cr.ncp, 0);
            assert_close(cr.trend.per_point, 0.01, 0.002);
            assert_true(cr.trend.p < 1e-6);
            assert_int_equal(cr.trend.points, N);
        }
    }
    print_message("drift: a trend in %d of 100, covered %d\n", trends, covered);
    assert_int_equal(trends, 100);
    assert_true(covered >= 85);
}

/* Pure noise, 200 seeded series: the share with any change point is at most alpha (Bonferroni
 * makes it less); asked: at most 200 alpha plus three binomial standard deviations. */
static void test_noise_false_alarms(void **state)
{
    (void)state;
    int alarms = 0, trends = 0;
    const int series_count = 200;
    for (uint64_t seed = 1000; seed < 1000 + (uint64_t)series_count; seed++) {
        double y[N];
        bench__cp_result cr;
        series(y, N, N, 0, 0, 0.01, seed);
        assert_int_equal(bench__changepoints(y, N, ALPHA, 1, &cr), 0);
        alarms += cr.ncp + cr.nabsorbed > 0;
        trends += cr.trend.found;
    }
    double bound = series_count * ALPHA + 3 * sqrt(series_count * ALPHA * (1 - ALPHA));
    print_message("noise: %d of %d with a change point, %d with a trend (bound %.1f)\n", alarms,
                  series_count, trends, bound);
    assert_true(alarms <= bound);
    assert_true(trends <= bound);
}

/* Worked by hand: two constant sides are split exactly where they change, by the exact step;
 * too short a series has none; bad arguments are refused. */
static void test_edges(void **state)
{
    (void)state;
    double y[12];
    bench__cp_result cr;
    for (size_t i = 0; i < 12; i++)
        y[i] = i < 7 ? 0 : log(1.5);
    assert_int_equal(bench__changepoints(y, 12, ALPHA, 1, &cr), 0);
    assert_int_equal(cr.ncp, 1);
    assert_int_equal(cr.cp[0].index, 7);
    assert_close(cr.cp[0].step, 0.5, 1e-12);
    /* 9 points: no split leaves 5 on each side. */
    assert_int_equal(bench__changepoints(y + 3, 9, ALPHA, 1, &cr), 0);
    assert_int_equal(cr.ncp, 0);
    assert_int_equal(bench__changepoints(y, 2, ALPHA, 1, &cr), 0);
    assert_false(cr.trend.found);
    assert_int_equal(bench__changepoints(y, 12, 0, 1, &cr), -1);
    assert_int_equal(bench__changepoints(y, 12, 1, 1, &cr), -1);
    y[3] = NAN;
    assert_int_equal(bench__changepoints(y, 12, ALPHA, 1, &cr), -1);
    assert_int_equal(bench__changepoints(NULL, 0, ALPHA, 1, &cr), 0);
    assert_int_equal(cr.ncp, 0);
}

/* The residual sum of squares of y[a..b) about its mean, summed directly (no prefix sums). */
static double direct_rss(const double *y, size_t a, size_t b)
{
    double mean = 0, ss = 0;
    for (size_t i = a; i < b; i++)
        mean += y[i] / (double)(b - a);
    for (size_t i = a; i < b; i++)
        ss += (y[i] - mean) * (y[i] - mean);
    return ss;
}

/* Where a change point may be. Two constant sides: the split is exact, and the interval is the
 * point on either side of it. The seeded 3% step of test_step_one_seed: the interval is every
 * split whose residual sum of squares is within z(0.975)^2 = 3.8415 residual variances of the
 * best split's, summed here directly, and it holds the true change (25). */
static void test_location_interval(void **state)
{
    (void)state;
    double y[N];
    bench__cp_result cr;
    for (size_t i = 0; i < 20; i++)
        y[i] = i < 10 ? 0 : log(1.05);
    assert_int_equal(bench__changepoints(y, 20, ALPHA, 1, &cr), 0);
    assert_int_equal(cr.ncp, 1);
    assert_int_equal(cr.cp[0].index, 10);
    assert_int_equal(cr.cp[0].index_lower, 9);
    assert_int_equal(cr.cp[0].index_upper, 11);
    series(y, N, 25, 0.03, 0, 0.01, 1);
    assert_int_equal(bench__changepoints(y, N, ALPHA, 1, &cr), 0);
    assert_int_equal(cr.ncp, 1);
    size_t k = cr.cp[0].index, lo = k - 1, hi = k + 1;
    double best = direct_rss(y, 0, k) + direct_rss(y, k, N);
    double limit = best * (1 + 1.959963984540054 * 1.959963984540054 / (N - 2));
    for (size_t j = 1; j < N; j++)
        if (direct_rss(y, 0, j) + direct_rss(y, j, N) <= limit) {
            lo = j < lo ? j : lo;
            hi = j > hi ? j : hi;
        }
    print_message("seeded 3%% step: at %zu, within %zu..%zu\n", k, lo, hi);
    assert_int_equal(cr.cp[0].index_lower, lo);
    assert_int_equal(cr.cp[0].index_upper, hi);
    assert_true(lo <= 25 && 25 <= hi);
}

/* A change point placed where the code changed: its step is the two sides' means there,
 * worked directly, its interval that one point; a place outside its neighbours is refused. */
static void test_place(void **state)
{
    (void)state;
    double y[20];
    bench__cp_result cr;
    for (size_t i = 0; i < 20; i++)
        y[i] = (i < 10 ? 0 : log(1.05)) + 0.001 * (double)(i % 3);
    assert_int_equal(bench__changepoints(y, 20, ALPHA, 1, &cr), 0);
    assert_int_equal(cr.ncp, 1);
    assert_int_equal(bench__cp_place(y, 20, ALPHA, &cr, 0, 9), 0);
    double before = 0, after = 0;
    for (size_t i = 0; i < 20; i++)
        *(i < 9 ? &before : &after) += y[i] / (i < 9 ? 9.0 : 11.0);
    assert_int_equal(cr.cp[0].index, 9);
    assert_int_equal(cr.cp[0].index_lower, 9);
    assert_int_equal(cr.cp[0].index_upper, 9);
    assert_close(cr.cp[0].step, expm1(after - before), 1e-12);
    assert_true(cr.cp[0].step_lower < cr.cp[0].step && cr.cp[0].step < cr.cp[0].step_upper);
    assert_int_equal(bench__cp_place(y, 20, ALPHA, &cr, 0, 0), -1);
    assert_int_equal(bench__cp_place(y, 20, ALPHA, &cr, 0, 20), -1);
    assert_int_equal(bench__cp_place(y, 20, ALPHA, &cr, 1, 9), -1);
}

/* The trend test worked by hand. Logs 0.001 x (2, 0, 1, 5, 3, 4, 8, 6, 7), too few for a change
 * point: S = 30 - 6 = 24, Var S = 9 8 23 / 18 = 92, z = 23 / sqrt(92), p = erfc(z / sqrt 2) =
 * 0.016488656727670154 (Python's math.erfc); Theil-Sen's slope, the median of the 36 pairwise
 * slopes (the 18th and 19th are both 1), is 0.001. Alone it is a trend (p < 0.05); as one of
 * 10 series tested together it is not (p_adjusted = 0.16489), and Sen's interval widens to the
 * level 1 - 0.05 / 10. */
static void test_trend_by_hand(void **state)
{
    (void)state;
    const double order[9] = {2, 0, 1, 5, 3, 4, 8, 6, 7};
    double y[9];
    for (size_t i = 0; i < 9; i++)
        y[i] = 0.001 * order[i];
    bench__cp_result one, ten;
    assert_int_equal(bench__changepoints(y, 9, ALPHA, 1, &one), 0);
    assert_int_equal(bench__changepoints(y, 9, ALPHA, 10, &ten), 0);
    print_message("alone: p %.17g found %d; of 10: p_adjusted %.17g found %d, [%g, %g] vs "
                  "[%g, %g]\n", one.trend.p, one.trend.found, ten.trend.p_adjusted,
                  ten.trend.found, ten.trend.lower, ten.trend.upper, one.trend.lower,
                  one.trend.upper);
    assert_close(one.trend.p, 0.016488656727670154, 1e-12);
    assert_close(one.trend.p_adjusted, 0.016488656727670154, 1e-12);
    assert_close(ten.trend.p, 0.016488656727670154, 1e-12);
    assert_close(ten.trend.p_adjusted, 0.16488656727670154, 1e-11);
    assert_close(one.trend.per_point, expm1(0.001), 1e-12);
    assert_true(one.trend.found);
    assert_false(ten.trend.found);
    assert_true(ten.trend.lower <= one.trend.lower && one.trend.upper <= ten.trend.upper);
    assert_int_equal(bench__changepoints(y, 9, ALPHA, 0.5, &one), -1);
}

/* Families of 20 series tested together, 100 families (fixed seeds), 20 runs each with 1%
 * noise. Unchanged code: tested alone at 0.05, a family shows a trend somewhere in about
 * 1 - 0.95^20 = 64% of them; corrected over the family (Bonferroni), at most in about 5% (asked:
 * 100 alpha plus three binomial standard deviations). A drift of 1% per run planted in one
 * series of each family is still found in nearly every family. */
static void test_trend_over_series(void **state)
{
    (void)state;
    enum { FAMILIES = 100, FAMILY = 20, RUNS = 20 };
    int raw_families = 0, corrected_families = 0, planted = 0;
    for (uint64_t f = 0; f < FAMILIES; f++) {
        bool raw_any = false, corrected_any = false;
        for (uint64_t k = 0; k < FAMILY; k++) {
            double y[RUNS];
            bench__cp_result raw, corrected;
            series(y, RUNS, RUNS, 0, 0, 0.01, 5000 + f * FAMILY + k);
            assert_int_equal(bench__changepoints(y, RUNS, ALPHA, 1, &raw), 0);
            assert_int_equal(bench__changepoints(y, RUNS, ALPHA, FAMILY, &corrected), 0);
            raw_any |= raw.trend.found;
            corrected_any |= corrected.trend.found;
        }
        double y[RUNS];
        bench__cp_result drift;
        series(y, RUNS, RUNS, 0, 0.01, 0.01, 9000 + f);
        assert_int_equal(bench__changepoints(y, RUNS, ALPHA, FAMILY, &drift), 0);
        planted += drift.trend.found && drift.trend.per_point > 0;
        raw_families += raw_any;
        corrected_families += corrected_any;
    }
    double bound = FAMILIES * ALPHA + 3 * sqrt(FAMILIES * ALPHA * (1 - ALPHA));
    print_message("unchanged families with a trend: %d of %d alone, %d corrected (bound %.1f); "
                  "planted 1%%/run drift found in %d\n", raw_families, FAMILIES,
                  corrected_families, bound, planted);
    assert_true(raw_families > bound);
    assert_true(corrected_families <= bound);
    assert_true(planted >= 95);
}

/* The newest point against five earlier ones, worked by hand: earlier logs 0, +-0.01, +-0.02
 * (mean 0, sum of squares 0.001, df 4, se sqrt(0.001 / 4 (1/5 + 1))), newest 0.1. The p-value
 * and quantiles come from the closed form of Student's t with 4 degrees of freedom,
 * P(|T| < t) = sin q (1 + cos^2 q / 2) with tan q = t / 2, not from the harness's code. */
static void test_newest_step_by_hand(void **state)
{
    (void)state;
    const double base = log(1000.0);
    double y[6] = {0, 0.01, -0.01, 0.02, -0.02, 0.1};
    for (size_t i = 0; i < 6; i++)
        y[i] += base;
    bench__cp cp;
    assert_int_equal(bench__cp_newest_step(y, 6, ALPHA, 1, &cp), 0);
    assert_int_equal(cp.index, 5);
    assert_close(cp.step, 0.10517091807564763, 1e-12);
    assert_close(cp.step_lower, 0.0532815329409152, 1e-7);
    assert_close(cp.step_upper, 0.15961660767927427, 1e-7);
    assert_close(cp.p_adjusted, 0.004468575556053289, 1e-8);
    /* One of three tests: p times 3, the interval at 1 - 0.05 / 3. */
    assert_int_equal(bench__cp_newest_step(y, 6, ALPHA, 3, &cp), 0);
    assert_close(cp.step_lower, 0.03189525595340001, 1e-7);
    assert_close(cp.step_upper, 0.18364994035337237, 1e-7);
    assert_close(cp.p_adjusted, 0.013405726668159867, 1e-8);
    assert_int_equal(bench__cp_newest_step(y, 2, ALPHA, 1, &cp), -1);
    assert_int_equal(bench__cp_newest_step(y, 6, ALPHA, 0.5, &cp), -1);
    y[0] = NAN;
    assert_int_equal(bench__cp_newest_step(y, 6, ALPHA, 1, &cp), -1);
}

/* A lone outlier is set to the median of the five runs around it; steps are kept, and the
 * newest run unless asked (against the five newest: the median of 0.01, 0, -0.01, 0, x). */
static void test_clip_outliers_by_hand(void **state)
{
    (void)state;
    const double base = log(1000.0);
    double y[10] = {0, 0.01, -0.01, 0, log(40.0), 0.01, 0, -0.01, 0, 0.02}, out[10];
    for (size_t i = 0; i < 10; i++)
        y[i] += base;
    for (int newest = 0; newest < 2; newest++) {
        bench__cp_clip_outliers(y, 10, newest, out);
        for (size_t i = 0; i < 10; i++) /* median of -0.01, 0, x, 0.01, 0 */
            assert_close(out[i], i == 4 ? base : y[i], 1e-12);
    }
    /* the newest run: the gate's own test keeps it, the change-point search moves it */
    y[9] = base + log(40.0);
    bench__cp_clip_outliers(y, 10, false, out);
    assert_close(out[9], y[9], 1e-12);
    bench__cp_clip_outliers(y, 10, true, out);
    assert_close(out[9], base, 1e-12);
    /* a step of 2x over six runs is kept whole, and so is a 5% move (under ln 1.1) */
    double z[12];
    for (size_t i = 0; i < 12; i++)
        z[i] = base + (i >= 6 ? log(2.0) : 0) + (i == 3 ? 0.05 : 0) + 0.001 * (double)(i % 3);
    double zo[12];
    for (int newest = 0; newest < 2; newest++) {
        bench__cp_clip_outliers(z, 12, newest, zo);
        for (size_t i = 0; i < 12; i++)
            assert_close(zo[i], z[i], 1e-12);
    }
    /* a step over the three newest runs is kept too, the newest included */
    for (size_t i = 0; i < 12; i++)
        z[i] = base + (i >= 9 ? log(2.0) : 0) + 0.001 * (double)(i % 3);
    bench__cp_clip_outliers(z, 12, true, zo);
    for (size_t i = 0; i < 12; i++)
        assert_close(zo[i], z[i], 1e-12);
}

/* The change points of twelve observed run medians (us per iteration), one of `series` series
 * tested together; y gets their logs (of ns). */
static bench__cp_result observed(const double us[12], double series, double y[12])
{
    for (size_t i = 0; i < 12; i++)
        y[i] = log(us[i] * 1000.0);
    bench__cp_result cr;
    assert_int_equal(bench__changepoints(y, 12, ALPHA, series, &cr), 0);
    return cr;
}

/* A series e2e/history_stores recorded at load 19 (us per iteration): the program changed at
 * run 7 (index 6) and doubled the time, and the newest run was disturbed 28x. With the newest
 * run left as it was, no change point was found (a trend of +10.8% a run instead); moved to the
 * median of the five newest, the step is found at run 7. */
static void test_observed_series_with_a_disturbed_newest_run(void **state)
{
    (void)state;
    const double us[12] = {2.028, 2.124, 2.062, 2.162, 2.096, 2.037,
                           4.129, 3.962, 3.926, 3.926, 3.926, 114.7};
    double y[12];
    bench__cp_result cr = observed(us, 2, y);
    assert_int_equal(cr.ncp, 1);
    assert_int_equal(cr.cp[0].index, 6);
    assert_true(cr.cp[0].step > 0.8 && cr.cp[0].step_lower > 0.5);
    assert_false(cr.trend.found);
    /* the gate still judges that newest run as a step of its own */
    bench__cp step;
    assert_int_equal(bench__cp_newest_step(y, 12, ALPHA, 1, &step), 0);
    assert_true(step.step > 10 && step.p_adjusted < ALPHA);
}

/* A series e2e/history recorded at load 8 (us per iteration): the program changed at run 7
 * (index 6) and doubled the time, run 7 itself was disturbed 40x and run 6 1.8x. Without the
 * clipping no change point was found; with it, the step is found at run 6 or 7. */
static void test_observed_series_with_a_disturbed_run(void **state)
{
    (void)state;
    const double us[12] = {2.004, 1.980, 2.056, 1.980, 1.983, 3.565,
                           83.26, 3.922, 3.999, 3.911, 3.959, 3.911};
    double y[12];
    bench__cp_result cr = observed(us, 1, y);
    assert_int_equal(cr.ncp, 1);
    assert_true(cr.cp[0].index == 5 || cr.cp[0].index == 6);
    assert_true(cr.cp[0].step > 0.5 && cr.cp[0].step_lower > 0);
}

/* A series the kept-programs history test recorded under the sanitizers (us per iteration): the
 * program changed at run 7 (index 6) and doubled the time, and run 5 (index 4) was disturbed
 * 30x. Judged all at once, that outlier pulled the median of the five around run 6 to the new
 * level, run 6 was moved there and the step was placed at index 5; clipped one run at a time,
 * the furthest first, run 6 keeps its own level and the step is at index 6. */
static void test_observed_series_with_an_outlier_before_the_step(void **state)
{
    (void)state;
    const double us[12] = {2.191, 2.198, 1.941, 2.133, 66.20, 2.165,
                           4.253, 4.260, 4.298, 4.250, 4.367, 4.250};
    double y[12], out[12];
    bench__cp_result cr = observed(us, 1, y);
    assert_int_equal(cr.ncp, 1);
    assert_int_equal(cr.cp[0].index, 6);
    assert_true(cr.cp[0].step > 0.6 && cr.cp[0].step_lower > 0.5);
    /* only the outlier moves, to the median of its five (runs 3-7: 2.165 us) */
    bench__cp_clip_outliers(y, 12, true, out);
    for (size_t i = 0; i < 12; i++)
        assert_float_equal(out[i], i == 4 ? y[5] : y[i], 1e-12);
}

/* A 2x step at run 10 whose first run was disturbed 40x by other work. Over 20 seeds: the step found at 9-11 in every one, 2x in its 95% interval in
 * nearly all; a lone outlier on no step makes no change point in (nearly) every one (the
 * series' level is 5%). */
static void test_step_with_an_outlier_on_it(void **state)
{
    (void)state;
    int found = 0, covered = 0, quiet = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        double y[20];
        bench__cp_result cr;
        series(y, 20, 10, 1.0, 0, 0.01, seed);
        y[10] = log(1000.0) + log(40.0);
        assert_int_equal(bench__changepoints(y, 20, ALPHA, 1, &cr), 0);
        for (size_t c = 0; c < cr.ncp; c++)
            if (cr.cp[c].index >= 9 && cr.cp[c].index <= 11) {
                found++;
                covered += cr.cp[c].step_lower <= 1.0 && 1.0 <= cr.cp[c].step_upper;
                break;
            }
        series(y, 20, 20, 0, 0, 0.01, seed);
        y[7] = log(1000.0) + log(40.0);
        assert_int_equal(bench__changepoints(y, 20, ALPHA, 1, &cr), 0);
        quiet += cr.ncp == 0;
    }
    print_message("a 2x step with a 40x outlier on it: found %d of 20 (2x in its interval: %d); "
                  "a lone outlier on no step: no change point in %d of 20\n", found, covered,
                  quiet);
    assert_int_equal(found, 20);
    assert_true(covered >= 17); /* a 95% interval */
    assert_true(quiet >= 18);
}

#define GATE_K 10 /* earlier runs in the gate's window */
#define GATE_NOISE 0.005 /* sd of a run's log median, as measured between real runs here */
#define GATE_THRESHOLD 0.02 /* the default --noise-threshold */

/* The newest of 11 runs 5% slower, one of 10 benchmarks: its step fails the gate in (nearly)
 * every seed, with 5% inside the interval; no trend fails. */
static void test_gate_catches_a_step(void **state)
{
    (void)state;
    int caught = 0, covered = 0, trend_failed = 0;
    for (uint64_t seed = 2000; seed < 2100; seed++) {
        double y[GATE_K + 1];
        bench__gate_result g;
        series(y, GATE_K + 1, GATE_K, 0.05, 0, GATE_NOISE, seed);
        assert_int_equal(bench__gate_window(y, GATE_K + 1, GATE_THRESHOLD, ALPHA, 10, &g), 0);
        caught += g.step_fails;
        covered += g.step.step_lower <= 0.05 && 0.05 <= g.step.step_upper;
        trend_failed += g.trend_fails;
    }
    print_message("gate, 5%% step: caught %d of 100, covered %d, trend failed %d\n", caught,
                  covered, trend_failed);
    assert_true(caught >= 95);
    assert_true(covered >= 90);
    assert_true(trend_failed <= 5);
}

/* Hand-worked windows of 6 runs (logs of ns), at the default threshold of 2%, alone (tests
 * 1): the newest 20% above the geometric mean of five runs that spread 0.8-1.5x is above the
 * threshold, but its interval reaches below zero: unsure, not failing; the same step over
 * five runs within 0.5% fails; a newest run 1% up over the wide runs is neither (below the
 * threshold). */
static void test_gate_unsure_step(void **state)
{
    (void)state;
    const double wide[5] = {1.0, 1.5, 0.8, 1.3, 0.9}, tight[5] = {1.0, 1.005, 0.998, 1.002, 1.0};
    double y[6], mean = 0;
    bench__gate_result g;
    for (size_t i = 0; i < 5; i++) {
        y[i] = log(1000.0 * wide[i]);
        mean += y[i] / 5;
    }
    y[5] = mean + log(1.2);
    assert_int_equal(bench__gate_window(y, 6, GATE_THRESHOLD, ALPHA, 1, &g), 0);
    assert_true(g.step.step > GATE_THRESHOLD);
    assert_true(g.step.step_lower <= 0);
    assert_true(g.step_unsure);
    assert_false(g.step_fails);
    assert_int_equal(g.outcome, BENCH__GATE_PASSES);
    for (size_t i = 0; i < 5; i++)
        y[i] = log(1000.0 * tight[i]);
    assert_int_equal(bench__gate_window(y, 6, GATE_THRESHOLD, ALPHA, 1, &g), 0);
    assert_true(g.step_fails);
    assert_false(g.step_unsure);
    for (size_t i = 0; i < 5; i++)
        y[i] = log(1000.0 * wide[i]);
    y[5] = mean + log(1.01);
    assert_int_equal(bench__gate_window(y, 6, GATE_THRESHOLD, ALPHA, 1, &g), 0);
    assert_false(g.step_unsure);
    assert_false(g.step_fails);
}

/* A steady window: with no threshold the step test alone alarms at most at its level (200
 * seeds, asked: 200 alpha plus three binomial sds); with the default threshold of 2%, four
 * noise sds, never. */
static void test_gate_steady_passes(void **state)
{
    (void)state;
    int alarms = 0, failed = 0;
    const int count = 200;
    for (uint64_t seed = 3000; seed < 3000 + (uint64_t)count; seed++) {
        double y[GATE_K + 1];
        bench__gate_result g;
        series(y, GATE_K + 1, GATE_K + 1, 0, 0, GATE_NOISE, seed);
        assert_int_equal(bench__gate_window(y, GATE_K + 1, 0, ALPHA, 1, &g), 0);
        alarms += g.step.p_adjusted < ALPHA;
        assert_int_equal(bench__gate_window(y, GATE_K + 1, GATE_THRESHOLD, ALPHA, 1, &g), 0);
        failed += g.step_fails || g.trend_fails;
    }
    double bound = count * ALPHA + 3 * sqrt(count * ALPHA * (1 - ALPHA));
    print_message("gate, steady: %d of %d steps significant (bound %.1f), %d failed\n", alarms,
                  count, bound, failed);
    assert_true(alarms <= bound);
    assert_int_equal(failed, 0);
}

/* A drift of 1% per run over the window: the newest run is about 5% above the earlier runs'
 * mean, but their own spread (the drift) hides it from the one-step test; the trend names it
 * and, 10% over the window with its lower end above 2%, fails the gate. A drift of 0.1% per run
 * (1% over the window) is at most a warning. */
static void test_gate_names_a_drift(void **state)
{
    (void)state;
    int missed = 0, failed = 0, warned_small = 0, failed_small = 0;
    for (uint64_t seed = 4000; seed < 4100; seed++) {
        double y[GATE_K + 1];
        bench__gate_result g;
        series(y, GATE_K + 1, GATE_K + 1, 0, 0.01, GATE_NOISE, seed);
        assert_int_equal(bench__gate_window(y, GATE_K + 1, GATE_THRESHOLD, ALPHA, 10, &g), 0);
        missed += !g.step_fails;
        failed += g.trend_fails;
        if (seed == 4000) {
            assert_false(g.step_fails);
            assert_true(g.trend_slows && g.trend_fails);
            assert_int_equal(g.trend.points, GATE_K + 1);
            assert_close(g.trend_total, expm1(GATE_K * log1p(g.trend.per_point)), 1e-12);
            assert_true(g.trend.lower <= 0.01 && 0.01 <= g.trend.upper);
        }
        series(y, GATE_K + 1, GATE_K + 1, 0, 0.001, GATE_NOISE, seed);
        assert_int_equal(bench__gate_window(y, GATE_K + 1, GATE_THRESHOLD, ALPHA, 10, &g), 0);
        warned_small += g.trend_slows;
        failed_small += g.trend_fails || g.step_fails;
    }
    print_message("gate, 1%%/run drift: step missed %d of 100, trend failed %d; 0.1%%/run: "
                  "warned %d, failed %d\n", missed, failed, warned_small, failed_small);
    assert_true(missed >= 90);
    assert_true(failed >= 90);
    assert_int_equal(failed_small, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_one_seed),
        cmocka_unit_test(test_step_many_seeds),
        cmocka_unit_test(test_small_step),
        cmocka_unit_test(test_drift_is_a_trend),
        cmocka_unit_test(test_noise_false_alarms),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_location_interval),
        cmocka_unit_test(test_trend_by_hand),
        cmocka_unit_test(test_trend_over_series),
        cmocka_unit_test(test_place),
        cmocka_unit_test(test_newest_step_by_hand),
        cmocka_unit_test(test_clip_outliers_by_hand),
        cmocka_unit_test(test_observed_series_with_a_disturbed_run),
        cmocka_unit_test(test_observed_series_with_an_outlier_before_the_step),
        cmocka_unit_test(test_step_with_an_outlier_on_it),
        cmocka_unit_test(test_observed_series_with_a_disturbed_newest_run),
        cmocka_unit_test(test_gate_catches_a_step),
        cmocka_unit_test(test_gate_steady_passes),
        cmocka_unit_test(test_gate_unsure_step),
        cmocka_unit_test(test_gate_names_a_drift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
