/*
 * test_ab_stats.c: the interleaved A/B test (bench__ab_stats). Its estimate, interval and p-value
 * come from one t statistic over the worker pairs, so they must agree: checked on a hand-worked
 * case, on degenerate inputs, and on many random inputs (fixed seeds) where the adjusted p-value
 * is below alpha exactly when the interval excludes no change, and the verdict says the same.
 * Also checks that with no change the test rejects in about alpha of comparisons.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/run.h"
#include "run/ab.h"
#include "compare/compare.h"
#include "unit_helpers.h"

/*
 * Four pairs with ln ratios .01 .02 .03 .04: mean .025, sd sqrt(.0005/3), se = sd/2 =
 * .0064549722, t = sqrt(15). With 3 degrees of freedom the t distribution has a closed form:
 * two-sided p = 1 - (2/pi) (sqrt(5)/6 + atan(sqrt(5))) = 0.0304663. t(0.975; 3) = 3.182446,
 * t(1 - 0.05/4; 3) = 4.176535 (tables).
 */
static void test_hand_case(void **state)
{
    (void)state;
    const double x[] = {0.01, 0.02, 0.03, 0.04};
    bench__compare_opts o = {.significance_level = 0.05, .noise_threshold = 0.01};
    bench__change c;

    /* One test: p = 0.0305 < 0.05, interval [0.4457%, 4.554%] (log scale) excludes 0 and the
     * estimate, 2.5%, lies beyond the 1% threshold: regressed. */
    bench__ab_stats(x, 4, 1, &o, &c);
    assert_close(c.log_change, 0.025, 1e-15);
    assert_close(c.log_se, 0.0064549722436790, 1e-12);
    assert_close(c.df, 3, 0);
    assert_close(c.p, 0.030466291662171, 1e-9);
    assert_close(c.p_adjusted, c.p, 0);
    assert_close(c.tests, 1, 0);
    assert_close(log(c.ratio_lower), 0.0044573994, 1e-6);
    assert_close(log(c.ratio_upper), 0.0455426006, 1e-6);
    assert_int_equal(c.verdict, BENCH__V_REGRESSED);
    assert_true(c.interleaved);
    /* The same pairs against a 3% threshold: a real change (the interval excludes 0) whose
     * estimate lies within the threshold, but whose interval reaches beyond it: inconclusive. */
    bench__compare_opts wide = {.significance_level = 0.05, .noise_threshold = 0.03};
    bench__ab_stats(x, 4, 1, &wide, &c);
    assert_int_equal(c.verdict, BENCH__V_INCONCLUSIVE);
    /* ... and against 5%: the whole interval inside it, and excluding 0: within noise. */
    bench__compare_opts wider = {.significance_level = 0.05, .noise_threshold = 0.05};
    bench__ab_stats(x, 4, 1, &wider, &c);
    assert_int_equal(c.verdict, BENCH__V_WITHIN_NOISE);

    /* Two tests (Bonferroni): p_adjusted = 0.0609 > 0.05 and the interval at 1 - 0.025 is
     * [-0.196%, 5.196%]: it holds 0 and reaches past 1%: inconclusive. */
    bench__ab_stats(x, 4, 2, &o, &c);
    assert_close(c.p, 0.030466291662171, 1e-9);
    assert_close(c.p_adjusted, 0.060932583324342, 1e-9);
    assert_close(log(c.ratio_lower), -0.0019594175, 1e-6);
    assert_close(log(c.ratio_upper), 0.0519594175, 1e-6);
    assert_int_equal(c.verdict, BENCH__V_INCONCLUSIVE);

    /* A large slowdown beyond the threshold on both ends: regressed; the mirror: improved. */
    const double up[] = {0.10, 0.11, 0.09, 0.10, 0.10};
    const double down[] = {-0.10, -0.11, -0.09, -0.10, -0.10};
    bench__ab_stats(up, 5, 3, &o, &c);
    assert_int_equal(c.verdict, BENCH__V_REGRESSED);
    assert_true(c.p_adjusted < 0.05);
    bench__ab_stats(down, 5, 3, &o, &c);
    assert_int_equal(c.verdict, BENCH__V_IMPROVED);
    assert_true(c.ratio_upper < 1.0);

    /* Small and centred: no change. */
    const double flat[] = {0.001, -0.001, 0.0005, -0.0005, 0.0};
    bench__ab_stats(flat, 5, 1, &o, &c);
    assert_int_equal(c.verdict, BENCH__V_NO_CHANGE);
    assert_true(c.p_adjusted >= 0.05);
}

static void test_degenerate(void **state)
{
    (void)state;
    bench__compare_opts o = {.significance_level = 0.05, .noise_threshold = 0.01};
    bench__change c;
    const double one[] = {0.2};
    bench__ab_stats(one, 1, 1, &o, &c);
    assert_int_equal(c.verdict, BENCH__V_INCOMPARABLE);
    assert_close(c.p_adjusted, 1.0, 0);

    /* Every pair agreed exactly on no change: p = 1, the interval is the point 1. */
    const double zeros[] = {0, 0, 0};
    bench__ab_stats(zeros, 3, 1, &o, &c);
    assert_close(c.p, 1.0, 0);
    assert_close(c.ratio_lower, 1.0, 0);
    assert_close(c.ratio_upper, 1.0, 0);
    assert_int_equal(c.verdict, BENCH__V_NO_CHANGE);

    /* Every pair agreed exactly on +5%: certain, p = 0, the interval is the point. */
    const double same[] = {0.05, 0.05, 0.05};
    bench__ab_stats(same, 3, 4, &o, &c);
    assert_close(c.p_adjusted, 0.0, 1e-12);
    assert_close(log(c.ratio_lower), 0.05, 1e-12);
    assert_int_equal(c.verdict, BENCH__V_REGRESSED);
}

/*
 * Random pair statistics over the whole range that matters (2 to 64 pairs, 1 to 30 benchmarks,
 * three levels, shifts from none to several standard errors): the adjusted p is below alpha
 * exactly when the interval excludes no change; a change is claimed only then; "no change" or
 * "within noise" exactly when the interval lies inside the threshold. Both outcomes must occur
 * often, or the check proves nothing.
 */
static void test_p_agrees_with_interval(void **state)
{
    (void)state;
    static const double alphas[] = {0.01, 0.05, 0.10};
    static const uint64_t seeds[] = {1, 42, 20261122};
    double x[64];
    size_t significant = 0, not_significant = 0;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        bench__rng r;
        bench__rng_seed(&r, seeds[s]);
        for (int trial = 0; trial < 3000; trial++) {
            size_t n = 2 + (size_t)bench__rng_below(&r, 63);
            size_t m = 1 + (size_t)bench__rng_below(&r, 30);
            double sd = 0.001 + 0.05 * bench__rng_uniform(&r);
            double shift = (bench__rng_uniform(&r) - 0.5) * 12.0 * sd / sqrt((double)n);
            bench__compare_opts o = {.significance_level = alphas[trial % 3],
                                     .noise_threshold = 0.02 * bench__rng_uniform(&r)};
            for (size_t i = 0; i < n; i++)
                x[i] = shift + sd * normal(&r);
            bench__change c;
            bench__ab_stats(x, n, (double)m, &o, &c);
            bool by_p = c.p_adjusted < o.significance_level;
            bool by_interval = c.ratio_lower > 1.0 || c.ratio_upper < 1.0;
            /* The band [1 - T, 1 + T] of ratios, as verdict.c draws it. */
            bool inside = log(c.ratio_lower) >= log1p(-o.noise_threshold) &&
                          log(c.ratio_upper) <= log1p(o.noise_threshold);
            /* p and interval agree; a change is claimed only where the interval excludes 0;
             * "no change" and "within noise" exactly where the interval lies inside +-T. */
            bool claims = c.verdict == BENCH__V_REGRESSED || c.verdict == BENCH__V_IMPROVED ||
                          c.verdict == BENCH__V_WITHIN_NOISE;
            bool unchanged = c.verdict == BENCH__V_NO_CHANGE ||
                             c.verdict == BENCH__V_WITHIN_NOISE;
            if (by_p != by_interval || (claims && !by_p) ||
                (c.verdict == BENCH__V_NO_CHANGE && by_p) || unchanged != inside) {
                print_error("seed %llu trial %d: n %zu m %zu p_adj %.17g alpha %g interval "
                            "[%.17g, %.17g] verdict %s\n",
                            (unsigned long long)seeds[s], trial, n, m, c.p_adjusted,
                            o.significance_level, c.ratio_lower, c.ratio_upper,
                            bench__verdict_name(c.verdict));
                fail();
            }
            assert_true(c.ratio_lower <= c.ratio && c.ratio <= c.ratio_upper);
            assert_close(c.p_adjusted, fmin(1.0, c.p * (double)m), 1e-15);
            significant += by_p;
            not_significant += !by_p;
        }
    }
    assert_true(significant > 1000);
    assert_true(not_significant > 1000);
}

/* No change and normal pair-to-pair noise: the test rejects in about alpha of comparisons (it is
 * exactly Student's t there); with 8 pairs and m = 1, 4000 trials. */
static void test_false_alarm_rate(void **state)
{
    (void)state;
    bench__rng r;
    bench__rng_seed(&r, 7);
    bench__compare_opts o = {.significance_level = 0.05, .noise_threshold = 0.01};
    double x[8];
    int rejected = 0, trials = 4000;
    for (int t = 0; t < trials; t++) {
        for (size_t i = 0; i < 8; i++)
            x[i] = 0.01 * normal(&r);
        bench__change c;
        bench__ab_stats(x, 8, 1, &o, &c);
        rejected += c.p_adjusted < o.significance_level;
    }
    double rate = (double)rejected / trials;
    if (rate < 0.035 || rate > 0.065) {
        print_error("rejected %d of %d (%.3f), wanted about 0.05\n", rejected, trials, rate);
        fail();
    }
}

/* Pair noise: normal, or Student's t with 3 degrees of freedom (heavy tails: a disturbed pair
 * now and then), scaled to sd. */
static double pair_noise(bench__rng *r, double sd, bool heavy)
{
    if (!heavy)
        return sd * normal(r);
    double c = 0;
    for (int k = 0; k < 3; k++) {
        double z = normal(r);
        c += z * z;
    }
    /* t(3) has variance 3: divide it out. */
    return sd * normal(r) / sqrt(c / 3.0) / sqrt(3.0);
}

/*
 * One simulated paired comparison as ab.c runs it: m benchmarks with true change `shift` (log),
 * pairs drawn one by one, each benchmark looked at when its pairs reach the next look, stopping at
 * the first look that decides it, decided at its last look otherwise; every interval at
 * alpha / (m x looks). Counts the benchmarks by verdict into count[].
 */
static void simulate_comparison(bench__rng *r, size_t m, double shift, double sd, bool heavy,
                                const bench__compare_opts *o, size_t count[BENCH__NVERDICTS])
{
    size_t looks[16];
    size_t nlooks = bench__ab_looks(BENCH__AB_DEFAULT_MAX_PAIRS, looks, 16);
    double tests = (double)m * (double)nlooks, x[BENCH__AB_DEFAULT_MAX_PAIRS];
    for (size_t b = 0; b < m; b++) {
        size_t n = 0;
        bench__change c;
        for (size_t k = 0; k < nlooks; k++) {
            while (n < looks[k])
                x[n++] = shift + pair_noise(r, sd, heavy);
            bench__ab_stats(x, n, tests, o, &c);
            if (bench__verdict_decided(c.verdict))
                break;
        }
        count[c.verdict]++;
    }
}

/*
 * The sequential design keeps its error control although each benchmark stops at the first
 * look that decides it: over 2000 simulated comparisons of 10 benchmarks (pair sd 1%, T = 1%,
 * alpha = 0.05), normal and heavy-tailed pair noise,
 *   - nothing changed: at most alpha of the comparisons call any benchmark regressed or improved;
 *   - every benchmark 2% slower: at most alpha of them call any benchmark "no change", "within
 *     noise" or improved (a wrong "no change" is the error a gate cannot see);
 *   - and 2% slower is found (regressed) for at least 95% of the benchmarks: the design is not
 *     so careful that it stops seeing.
 */
static void test_sequential_error_control(void **state)
{
    (void)state;
    enum { COMPARISONS = 2000, M = 10 };
    bench__compare_opts o = {.significance_level = 0.05, .noise_threshold = 0.01};
    for (int heavy = 0; heavy < 2; heavy++) {
        bench__rng r;
        bench__rng_seed(&r, 20261126 + (uint64_t)heavy);
        size_t false_alarm = 0, false_calm = 0, found = 0;
        for (int t = 0; t < COMPARISONS; t++) {
            size_t aa[BENCH__NVERDICTS] = {0}, slow[BENCH__NVERDICTS] = {0};
            simulate_comparison(&r, M, 0.0, 0.01, heavy, &o, aa);
            simulate_comparison(&r, M, log(1.02), 0.01, heavy, &o, slow);
            false_alarm += aa[BENCH__V_REGRESSED] + aa[BENCH__V_IMPROVED] > 0;
            false_calm += slow[BENCH__V_NO_CHANGE] + slow[BENCH__V_WITHIN_NOISE] +
                              slow[BENCH__V_IMPROVED] >
                          0;
            found += slow[BENCH__V_REGRESSED];
        }
        print_message("%s pair noise: A/A comparisons with a false alarm %.4f, 2%% slower with a "
                      "false calm %.4f, benchmarks found %.4f\n",
                      heavy ? "heavy-tailed" : "normal", (double)false_alarm / COMPARISONS,
                      (double)false_calm / COMPARISONS, (double)found / (COMPARISONS * M));
        assert_true(false_alarm <= 0.05 * COMPARISONS);
        assert_true(false_calm <= 0.05 * COMPARISONS);
        assert_true(found >= 0.95 * COMPARISONS * M);
    }
}

/* What one benchmark's sequential comparison ended with: its verdict, its pairs, whether the
 * futility rule stopped it. */
typedef struct seq_end {
    bench__verdict verdict;
    size_t pairs;
    bool futile;
} seq_end;

/* One benchmark through the looks (6, 9, 14, 21, 32) on the pair values x[0..32), as ab.c takes
 * them with --ab-pairs 32: bench__ab_look at each look, the futility rule projected to the 32
 * pairs the budget gives at most when `futility`, else left out (the design before it). */
static seq_end run_looks(const double *x, double tests, bool futility,
                         const bench__compare_opts *o)
{
    size_t looks[16];
    size_t nlooks = bench__ab_looks(BENCH__AB_DEFAULT_MAX_PAIRS, looks, 16);
    bench__change c;
    for (size_t k = 0; k < nlooks; k++) {
        bench__ab_step step = bench__ab_look(x, looks[k], k + 1 == nlooks, false,
                                             futility ? BENCH__AB_DEFAULT_MAX_PAIRS : 0, tests,
                                             o, &c);
        if (step != BENCH__AB_GO_ON)
            return (seq_end){c.verdict, looks[k], step == BENCH__AB_FUTILE};
    }
    fail();
    return (seq_end){BENCH__V_INCOMPARABLE, 0, false};
}

/*
 * The futility rule (bench__verdict_futile) against the design without it, on the very same
 * pair values (fixed seeds): comparisons of 20 benchmarks at T = 1%, alpha = 0.05, normal and
 * heavy-tailed pair noise, 250 comparisons a case. A benchmark the rule stops ends inconclusive,
 * so it can only take verdicts away; what must hold:
 *   - unchanged code (sd 1%, 3%, 10%): no more wrong verdicts (regressed, improved) than before;
 *   - 5% slower at sd 1%, 2%, 3%: found (regressed) exactly as often as before, and no more
 *     wrong verdicts (no change, within noise, improved);
 *   - unchanged code at sd 10% (a benchmark no budget of 32 pairs decides): most stop at an
 *     early look, which is the time the rule saves.
 */
static void test_futility_keeps_errors_and_power(void **state)
{
    (void)state;
    enum { COMPARISONS = 250, M = 20, PAIRS = BENCH__AB_DEFAULT_MAX_PAIRS };
    bench__compare_opts o = {.significance_level = 0.05, .noise_threshold = 0.01};
    size_t looks[16];
    double tests = (double)M * (double)bench__ab_looks(PAIRS, looks, 16);
    static const struct {
        double shift, sd;
    } cases[] = {{0, 0.01}, {0, 0.03}, {0, 0.10}, {0.05, 0.01}, {0.05, 0.02}, {0.05, 0.03}};
    for (int heavy = 0; heavy < 2; heavy++) {
        for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
            bench__rng r;
            bench__rng_seed(&r, 20261128 + 100 * (uint64_t)heavy + q);
            double shift = log1p(cases[q].shift), x[PAIRS];
            size_t wrong[2] = {0, 0}, found[2] = {0, 0}, pairs[2] = {0, 0}, futile = 0;
            for (int t = 0; t < COMPARISONS * M; t++) {
                for (size_t i = 0; i < PAIRS; i++)
                    x[i] = shift + pair_noise(&r, cases[q].sd, heavy);
                for (int f = 0; f < 2; f++) {
                    seq_end e = run_looks(x, tests, f == 1, &o);
                    bool is_wrong = shift == 0 ? e.verdict == BENCH__V_REGRESSED ||
                                                     e.verdict == BENCH__V_IMPROVED
                                               : e.verdict == BENCH__V_NO_CHANGE ||
                                                     e.verdict == BENCH__V_WITHIN_NOISE ||
                                                     e.verdict == BENCH__V_IMPROVED;
                    wrong[f] += is_wrong;
                    found[f] += e.verdict == BENCH__V_REGRESSED;
                    pairs[f] += e.pairs;
                    futile += f == 1 && e.futile;
                }
            }
            double all = (double)COMPARISONS * M;
            print_message("%s noise, change %+.0f%%, sd %.0f%%: wrong %zu -> %zu, found %.4f -> "
                          "%.4f, stopped as futile %.4f, mean pairs %.1f -> %.1f\n",
                          heavy ? "heavy-tailed" : "normal", 100 * cases[q].shift,
                          100 * cases[q].sd, wrong[0], wrong[1], found[0] / all,
                          found[1] / all, futile / all, pairs[0] / all, pairs[1] / all);
            assert_true(wrong[1] <= wrong[0]);
            if (shift > 0)
                assert_int_equal(found[1], found[0]);
            if (cases[q].sd >= 0.10)
                assert_true(futile >= all / 2);
        }
    }
}

/* The one budget: a benchmark reaches what the time left buys it when the benchmarks still open
 * share it equally; as others settle it reaches further; a pair starts only when it fits. */
static void test_one_budget(void **state)
{
    (void)state;
    /* 10 s left, 0.5 s a pair: 20 pairs for one benchmark alone, 4 each among 5. */
    assert_true(bench__ab_reach(6, 10e9, 0.5e9, 1) == 26.0);
    assert_true(bench__ab_reach(6, 10e9, 0.5e9, 5) == 10.0);
    assert_true(bench__ab_reach(6, 10e9, 0.5e9, 2) > bench__ab_reach(6, 10e9, 0.5e9, 5));
    assert_true(bench__ab_reach(9, 0, 0.5e9, 3) == 9.0);
    assert_true(bench__ab_reach(9, -1e9, 0.5e9, 3) == 9.0);
    assert_true(bench__ab_affords(0.5e9, 0.5e9));
    assert_false(bench__ab_affords(0.49e9, 0.5e9));
    assert_false(bench__ab_affords(0, 0));
    /* Round-robin over the budget as ab.c spends it: 20 benchmarks, 100 s, 0.4 s a pair; 19
     * settle at their first look (6 pairs) and one stays open. It gets every pair that fits in
     * what they left, and the total stays within the budget. */
    double left = 100e9, cost = 0.4e9;
    size_t n[20] = {0}, open = 20;
    bool done[20] = {false};
    while (open > 0) {
        for (size_t b = 0; b < 20; b++) {
            if (done[b])
                continue;
            if (!bench__ab_affords(left, cost)) {
                done[b] = true;
                open--;
                continue;
            }
            left -= cost;
            n[b]++;
            if (b > 0 && n[b] == 6) {
                done[b] = true;
                open--;
            }
        }
    }
    assert_true(left >= 0);
    assert_int_equal(n[1], 6);
    assert_int_equal(n[0], 250 - 19 * 6);
}

/* The looks: 6, 9, 14, 21, 32 by default; never past the most pairs; the last is the most. */
static void test_looks(void **state)
{
    (void)state;
    size_t l[16];
    assert_int_equal(bench__ab_looks(32, l, 16), 5);
    assert_int_equal(l[0], 6);
    assert_int_equal(l[1], 9);
    assert_int_equal(l[2], 14);
    assert_int_equal(l[3], 21);
    assert_int_equal(l[4], 32);
    assert_int_equal(bench__ab_looks(3, l, 16), 1);
    assert_int_equal(l[0], 3);
    assert_int_equal(bench__ab_looks(10, l, 16), 3);
    assert_int_equal(l[2], 10);
}

/*
 * Which side of a pair starts and stops first (bench__ab_pair_order). A process takes over the
 * pages that the last process to exit on its CPU freed last; pairs go round 2 CPUs, so pair p
 * inherits from pair p - 2. The side that starts first in pair p takes over the pages of the
 * side that stopped last in pair p - 2: "its own" when that is the same side. With the old fixed
 * pattern (start alternating from B, stop A then B) every even pair's B took B's pages and
 * every odd pair's A took B's: own in 1000 of 1000 even pairs, 0 of 1000 odd. Drawn, each
 * parity takes its own about half the time: 500 +- 5 sd (binomial sd sqrt(1000 / 4) = 15.8).
 * B starts the first pair, and each parity starts with B about half the time too.
 */
static void test_pair_order_breaks_inheritance(void **state)
{
    (void)state;
    bench__rng r;
    bench__rng_seed(&r, 7);
    enum { PAIRS = 2002 };
    int first[PAIRS], stop_first[PAIRS];
    for (size_t p = 0; p < PAIRS; p++) {
        bench__ab_pair_order(&r, p, &first[p], &stop_first[p]);
        assert_true(first[p] == 0 || first[p] == 1);
        assert_true(stop_first[p] == 0 || stop_first[p] == 1);
    }
    assert_int_equal(first[0], 1);
    int own[2] = {0, 0}, b_first[2] = {0, 0};
    for (size_t p = 2; p < PAIRS; p++) {
        int stopped_last = 1 - stop_first[p - 2];
        own[p % 2] += first[p] == stopped_last;
        b_first[p % 2] += first[p] == 1;
    }
    for (int parity = 0; parity < 2; parity++) {
        assert_in_range(own[parity], 500 - 79, 500 + 79);
        assert_in_range(b_first[parity], 500 - 79, 500 + 79);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_case),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_p_agrees_with_interval),
        cmocka_unit_test(test_false_alarm_rate),
        cmocka_unit_test(test_sequential_error_control),
        cmocka_unit_test(test_looks),
        cmocka_unit_test(test_futility_keeps_errors_and_power),
        cmocka_unit_test(test_one_budget),
        cmocka_unit_test(test_pair_order_breaks_inheritance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
