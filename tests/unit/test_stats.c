/*
 * test_stats.c: the statistics checked against values computed independently: hand-worked
 * small cases, NIST's certified through-origin regressions, published normal quantiles and
 * generator outputs, and the behaviour of the bootstrap on samples from known distributions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "unit_helpers.h"

static void test_mean_sd_hand(void **state)
{
    (void)state;
    /* mean 5; squared deviations sum to 32; sample variance 32/7 */
    const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    assert_close(bench__mean(x, 8), 5.0, 1e-15);
    assert_close(bench__std_dev(x, 8), sqrt(32.0 / 7.0), 1e-15);
    assert_close(bench__std_dev(x, 1), 0.0, 0);
    assert_true(isnan(bench__mean(x, 0)));
}

static void test_quantile_type7(void **state)
{
    (void)state;
    /* R: quantile(c(1,2,3,4), c(.25,.5,.9)) = 1.75 2.5 3.7 */
    const double x[] = {1, 2, 3, 4};
    assert_close(bench__quantile_sorted(x, 4, 0.25), 1.75, 1e-15);
    assert_close(bench__quantile_sorted(x, 4, 0.5), 2.5, 1e-15);
    assert_close(bench__quantile_sorted(x, 4, 0.9), 3.7, 1e-12);
    assert_close(bench__quantile_sorted(x, 4, 0.0), 1.0, 0);
    assert_close(bench__quantile_sorted(x, 4, 1.0), 4.0, 0);
    assert_close(bench__quantile_sorted(x, 1, 0.3), 1.0, 0);
}

static void test_median_matches_sort(void **state)
{
    (void)state;
    bench__rng r;
    bench__rng_seed(&r, 99);
    double a[101], b[101];
    for (int trial = 0; trial < 2000; trial++) {
        size_t n = 1 + (size_t)bench__rng_below(&r, 101);
        for (size_t i = 0; i < n; i++) {
            /* few distinct values in some trials, to exercise ties */
            a[i] = trial % 3 == 0 ? (double)bench__rng_below(&r, 4) : bench__rng_uniform(&r);
            b[i] = a[i];
        }
        bench__sort(b, n);
        double want = n % 2 ? b[n / 2] : 0.5 * (b[n / 2 - 1] + b[n / 2]);
        assert_close(bench__median_inplace(a, n), want, 0);
    }
}

static void test_mad_hand(void **state)
{
    (void)state;
    /* median 2; |x - 2| = 1 1 0 0 2 4 7, whose median is 1 */
    const double x[] = {1, 1, 2, 2, 4, 6, 9};
    double work[7];
    assert_close(bench__mad(x, 7, 2.0, work), 1.4826, 1e-15);
}

/* NIST StRD NoInt1 and NoInt2 (linear regression without intercept), certified values. */
static void test_ols_nist_noint(void **state)
{
    (void)state;
    double x1[11], y1[11];
    for (int i = 0; i < 11; i++) {
        x1[i] = 60 + i;
        y1[i] = 130 + i;
    }
    double b1 = bench__ols_slope(x1, y1, 11);
    assert_close(b1, 2.07438016528926, 1e-13);
    assert_close(bench__r2_origin(x1, y1, 11, b1), 0.999365492298663, 1e-13);

    const double x2[] = {4, 5, 6}, y2[] = {3, 4, 4};
    double b2 = bench__ols_slope(x2, y2, 3);
    assert_close(b2, 0.727272727272727, 1e-14);
    assert_close(bench__r2_origin(x2, y2, 3, b2), 0.993348115299335, 1e-14);
}

static void test_tukey_hand(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 30, -5, -20};
    /* sorted: -20 -5 1 2 3 4 5 6 7 8 9 10 15 30; h = 13*p
     * Q1: h = 3.25 -> 2 + 0.25*(3-2) = 2.25; Q3: h = 9.75 -> 8 + 0.75*(9-8) = 8.75; IQR 6.5 */
    double work[14];
    bench__outliers o;
    bench__tukey(x, 14, work, &o);
    assert_close(o.low_mild_fence, 2.25 - 9.75, 1e-12);
    assert_close(o.low_severe_fence, 2.25 - 19.5, 1e-12);
    assert_close(o.high_mild_fence, 8.75 + 9.75, 1e-12);
    assert_close(o.high_severe_fence, 8.75 + 19.5, 1e-12);
    /* -20 < -17.25: low severe; -5 in [-17.25, -7.5)? no: -5 >= -7.5, not an outlier.
     * 30 > 28.25: high severe; 15 <= 18.5: not an outlier. */
    assert_int_equal(o.low_severe, 1);
    assert_int_equal(o.low_mild, 0);
    assert_int_equal(o.high_mild, 0);
    assert_int_equal(o.high_severe, 1);

    const double y[] = {10, 10, 10, 10, 10, 10, 10, 10, 11, 10.2};
    bench__tukey(y, 10, work, &o); /* IQR 0: everything off 10 is severe */
    assert_int_equal(o.high_severe, 2);
    assert_int_equal(o.low_mild + o.low_severe + o.high_mild, 0);
}

static void test_norm_quantile_published(void **state)
{
    (void)state;
    assert_close(bench__norm_quantile(0.975), 1.959963984540054, 1e-8);
    assert_close(bench__norm_quantile(0.995), 2.575829303548901, 1e-8);
    assert_close(bench__norm_quantile(0.001), -3.090232306167813, 1e-8);
    assert_close(bench__norm_quantile(0.5), 0.0, 1e-15);
    assert_true(isnan(bench__norm_quantile(1.5)));
}

static void test_median_ci_ranks(void **state)
{
    (void)state;
    /* The classic distribution-free 95% interval of the median for n = 100 is
     * (x(40), x(61)) (e.g. Conover, Practical Nonparametric Statistics). */
    double x[100];
    for (int i = 0; i < 100; i++)
        x[i] = i + 1; /* x(k) = k */
    double lo, hi;
    assert_int_equal(bench__median_ci_sorted(x, 100, 0.95, &lo, &hi), 0);
    assert_close(lo, 40, 0);
    assert_close(hi, 61, 0);
    /* n = 3 is too small for 95%: the whole sample, and a -1 to say so */
    assert_int_equal(bench__median_ci_sorted(x, 3, 0.95, &lo, &hi), -1);
    assert_close(lo, 1, 0);
    assert_close(hi, 3, 0);
}

static void test_rng_reference_outputs(void **state)
{
    (void)state;
    /* Seeding with splitmix64 from 0: splitmix64's first output is the published
     * 0xe220a8397b1dcdaf; xoshiro256** outputs checked against an independent Python
     * implementation of the reference algorithm. */
    bench__rng r;
    bench__rng_seed(&r, 0);
    assert_true(r.s[0] == 0xe220a8397b1dcdafULL);
    const uint64_t want0[] = {0x99ec5f36cb75f2b4ULL, 0xbf6e1f784956452aULL,
                              0x1a5f849d4933e6e0ULL, 0x6aa594f1262d2d2cULL};
    for (int i = 0; i < 4; i++)
        assert_true(bench__rng_next(&r) == want0[i]);
    bench__rng_seed(&r, 42);
    const uint64_t want42[] = {0x15780b2e0c2ec716ULL, 0x6104d9866d113a7eULL,
                               0xae17533239e499a1ULL, 0xecb8ad4703b360a1ULL};
    for (int i = 0; i < 4; i++)
        assert_true(bench__rng_next(&r) == want42[i]);
}

static void test_rng_below_uniform(void **state)
{
    (void)state;
    /* Chi-square over 7 buckets (a bound that does not divide 2^64); 6 degrees of freedom,
     * the 0.999 critical value is 22.46. */
    bench__rng r;
    bench__rng_seed(&r, 7);
    enum { N = 700000, K = 7 };
    long count[K] = {0};
    for (int i = 0; i < N; i++) {
        uint64_t v = bench__rng_below(&r, K);
        assert_true(v < K);
        count[v]++;
    }
    double chi2 = 0, e = (double)N / K;
    for (int k = 0; k < K; k++)
        chi2 += ((double)count[k] - e) * ((double)count[k] - e) / e;
    assert_true(chi2 < 22.46);
    for (int i = 0; i < 1000; i++)
        assert_true(bench__rng_below(&r, 1) == 0);
}


static void test_bootstrap_exact_line(void **state)
{
    (void)state;
    /* Every sample costs exactly 5 per iteration: all estimates and bounds are exact. */
    double it[20], tot[20];
    for (int i = 0; i < 20; i++) {
        it[i] = (i + 1) * 3;
        tot[i] = 5.0 * it[i];
    }
    bench__estimates e;
    assert_int_equal(bench__bootstrap(it, tot, 20, 1000, 0.95, 1, &e), 0);
    assert_close(e.slope.point, 5, 1e-12);
    assert_close(e.slope.lower, 5, 1e-12);
    assert_close(e.slope.upper, 5, 1e-12);
    assert_close(e.median.point, 5, 0);
    assert_close(e.median.lower, 5, 0);
    assert_close(e.std_dev.point, 0, 1e-12);
    assert_close(e.r2, 1.0, 1e-15);
}

static void test_bootstrap_deterministic(void **state)
{
    (void)state;
    bench__rng r;
    bench__rng_seed(&r, 3);
    double it[40], tot[40];
    for (int i = 0; i < 40; i++) {
        it[i] = 1;
        tot[i] = (100 + 10 * normal(&r));
    }
    bench__estimates a, b, c;
    assert_int_equal(bench__bootstrap(it, tot, 40, 2000, 0.95, 11, &a), 0);
    assert_int_equal(bench__bootstrap(it, tot, 40, 2000, 0.95, 11, &b), 0);
    assert_int_equal(bench__bootstrap(it, tot, 40, 2000, 0.95, 12, &c), 0);
    assert_memory_equal(&a, &b, sizeof a);
    assert_true(a.mean.lower != c.mean.lower || a.mean.upper != c.mean.upper);
    assert_true(a.mean.lower <= a.mean.point && a.mean.point <= a.mean.upper);
    assert_true(a.median.lower <= a.median.point && a.median.point <= a.median.upper);
    assert_int_equal(bench__bootstrap(it, tot, 0, 2000, 0.95, 11, &a), -1);
    assert_int_equal(bench__bootstrap(it, tot, 40, 2000, 1.0, 11, &a), -1);
}

/* Coverage: over many experiments with samples from N(100, 10^2), the 95% percentile interval
 * of the mean must contain 100 about 95% of the time (the percentile bootstrap is known to
 * undercover slightly at n = 30: expect 92-95%). Its width must match the normal theory
 * 2 * 1.96 * sigma / sqrt(n) on average. Both would fail for a wrong resampler or quantile. */
static void test_bootstrap_coverage_normal(void **state)
{
    (void)state;
    enum { EXPERIMENTS = 400, N = 30 };
    bench__rng r;
    bench__rng_seed(&r, 2026);
    int covered_mean = 0, covered_median = 0;
    double width = 0;
    double it[N], tot[N];
    for (int e = 0; e < EXPERIMENTS; e++) {
        for (int i = 0; i < N; i++) {
            it[i] = 1 + (double)(i % 5);
            tot[i] = it[i] * (100 + 10 * normal(&r));
        }
        bench__estimates est;
        assert_int_equal(bench__bootstrap(it, tot, N, 1000, 0.95, (uint64_t)e, &est), 0);
        covered_mean += est.mean.lower <= 100 && 100 <= est.mean.upper;
        covered_median += est.median.lower <= 100 && 100 <= est.median.upper;
        width += est.mean.upper - est.mean.lower;
    }
    double cov = (double)covered_mean / EXPERIMENTS;
    double cov_med = (double)covered_median / EXPERIMENTS;
    print_message("coverage: mean %.3f, median %.3f\n", cov, cov_med);
    assert_true(cov > 0.90 && cov < 0.985);
    assert_true(cov_med > 0.88 && cov_med < 0.995);
    double want_width = 2 * 1.959964 * 10 / sqrt(N);
    assert_close(width / EXPERIMENTS, want_width, 0.12 * want_width);
}

/* Complexity: a hand-checked case (t = 3N exactly: O(N), c 3, rms 0) and seeded sweeps of known
 * growth with 3% noise, each class recovered; too few or bad points are refused. */
/* The rule that names a class (stats.h): values worked out here by hand from the fit's formula,
 * t = c f(N) through the origin, c = sum(q) / sum(q^2) with q = f / t. */
static void test_complexity_rule(void **state)
{
    (void)state;
    bench__complexity c;
    /* A sweep across cache levels: time per element 1, 1.3, 2.5, 6, 7 over 8x steps. O(N log N)
     * fits best at 44.3% rms, O(N) next at 56.3%: no class. */
    const double n[] = {4096, 32768, 262144, 2097152, 16777216};
    double t[5];
    const double per[] = {1, 1.3, 2.5, 6, 7};
    for (int i = 0; i < 5; i++)
        t[i] = n[i] * per[i];
    assert_int_equal(bench__complexity_fit(n, t, 5, &c), 0);
    assert_int_equal(c.best, BENCH__O_N_LOG_N);
    assert_int_equal(c.next, BENCH__O_N);
    assert_close(c.rms[c.best], 0.442833, 1e-5);
    assert_false(c.named);
    assert_string_equal(c.why_not, "rms 44.3%, above 5%");
    /* An N log N chain whose medians load bent (the smaller N the slower: x1.6, 1.3, 1.1, 1,
     * 1 over 256..65536, as a loaded run once measured them): O(N) fits best at 7.78% and
     * O(N log N) is next at 16.61%, more than 1.5x; under a 10% bound that named O(N). */
    const double b[] = {256, 1024, 4096, 16384, 65536}, bend[] = {1.6, 1.3, 1.1, 1, 1};
    double bt[5];
    for (int i = 0; i < 5; i++)
        bt[i] = b[i] * log2(b[i]) * bend[i];
    assert_int_equal(bench__complexity_fit(b, bt, 5, &c), 0);
    assert_int_equal(c.best, BENCH__O_N);
    assert_int_equal(c.next, BENCH__O_N_LOG_N);
    assert_close(c.rms[c.best], 0.0778, 1e-4);
    assert_close(c.rms[c.next], 0.1661, 1e-4);
    assert_false(c.named);
    assert_string_equal(c.why_not, "rms 7.8%, above 5%");
    /* t = N sqrt(log2 N) over 1024..8192: O(N log N) 4.87% and O(N) 4.89%, a tie. */
    const double m[] = {1024, 2048, 4096, 8192};
    double u[4];
    for (int i = 0; i < 4; i++)
        u[i] = m[i] * sqrt(log2(m[i]));
    assert_int_equal(bench__complexity_fit(m, u, 4, &c), 0);
    assert_int_equal(c.best, BENCH__O_N_LOG_N);
    assert_false(c.named);
    assert_string_equal(c.why_not, "O(N) fits nearly as well (rms 4.9%, under 1.5x)");
    /* Exact O(N) over four parameters: named. */
    const double e[] = {2, 4, 8, 16}, et[] = {6, 12, 24, 48};
    assert_int_equal(bench__complexity_fit(e, et, 4, &c), 0);
    assert_true(c.named);
    assert_string_equal(c.why_not, "");
}

static void test_complexity(void **state)
{
    (void)state;
    bench__complexity c;
    const double n3[] = {2, 4, 8}, t3[] = {6, 12, 24};
    assert_int_equal(bench__complexity_fit(n3, t3, 3, &c), 0);
    assert_int_equal(c.best, BENCH__O_N);
    assert_false(c.named); /* exact, but three parameters show too little to name a class */
    assert_string_equal(c.why_not, "3 parameters, fewer than 4");
    assert_close(c.coefficient[BENCH__O_N], 3.0, 1e-12);
    assert_close(c.rms[BENCH__O_N], 0.0, 1e-12);
    /* t = 3N against N^2: with q = f / t = N / 3, c = sum(q) / sum(q^2)
     * = (2 + 4 + 8) / 3 / ((4 + 16 + 64) / 9) = 14 * 3 / 84 = 0.5 */
    assert_close(c.coefficient[BENCH__O_N2], 0.5, 1e-12);
    assert_string_equal(bench__big_o_name(c.best), "O(N)");
    assert_int_equal(bench__complexity_fit(n3, t3, 2, &c), -1);
    const double same[] = {4, 4, 4}, bad[] = {1, 2, 3};
    assert_int_equal(bench__complexity_fit(same, t3, 3, &c), -1);
    assert_int_equal(bench__complexity_fit(bad, t3, 3, &c), -1); /* n = 1: log N is 0 */

    bench__rng rng;
    bench__rng_seed(&rng, 42);
    const bench__big_o want[] = {BENCH__O_1,      BENCH__O_LOG_N, BENCH__O_N,
                                 BENCH__O_N_LOG_N, BENCH__O_N2,    BENCH__O_N3};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        for (int trial = 0; trial < 20; trial++) {
            double n[8], t[8];
            for (int i = 0; i < 8; i++) {
                n[i] = (double)(16 << i); /* 16 .. 2048 */
                t[i] = 2.5 * bench__big_o_f(want[w], n[i]) * (1 + 0.03 * normal(&rng));
            }
            assert_int_equal(bench__complexity_fit(n, t, 8, &c), 0);
            assert_int_equal(c.best, want[w]);
            assert_true(c.named); /* 3% noise over 8 octaves: the class is plain */
            /* (worst of 2000 seeded sweeps per class in a simulation: 4.6%) */
            assert_true(fabs(c.coefficient[want[w]] / 2.5 - 1) < 0.08);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mean_sd_hand),
        cmocka_unit_test(test_quantile_type7),
        cmocka_unit_test(test_median_matches_sort),
        cmocka_unit_test(test_mad_hand),
        cmocka_unit_test(test_ols_nist_noint),
        cmocka_unit_test(test_tukey_hand),
        cmocka_unit_test(test_norm_quantile_published),
        cmocka_unit_test(test_median_ci_ranks),
        cmocka_unit_test(test_rng_reference_outputs),
        cmocka_unit_test(test_rng_below_uniform),
        cmocka_unit_test(test_bootstrap_exact_line),
        cmocka_unit_test(test_bootstrap_deterministic),
        cmocka_unit_test(test_bootstrap_coverage_normal),
        cmocka_unit_test(test_complexity),
        cmocka_unit_test(test_complexity_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
