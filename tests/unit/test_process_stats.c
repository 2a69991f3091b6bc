/*
 * test_process_stats.c: the two-level estimate of a benchmark measured in several worker
 * processes (bench__process_estimate), checked by hand on a small case and by simulation.
 *
 * The simulation is the justification of the method (docs/measurement.md): samples are drawn
 * from a known two-level model, ln(time) = mu + u_process + e_sample, where u is the per-process
 * luck (memory placement, heap state: fixed for a process's life) and e the sample-to-sample
 * noise inside one process. The true long-run value is exp(mu). Over many simulated runs the
 * 95% interval over processes must contain it about 95% of the time, for the default 10
 * processes and for --quick's 3; an interval from the pooled samples, which treats them as
 * independent (what one process alone can give), falls far short. A heavy-tailed, skewed
 * process effect (regime switching: most processes lucky, some not) is checked too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static void assert_close(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol)) {
        print_error("got %.17g, want %.17g (tol %g)\n", got, want, tol);
        fail();
    }
}

/* Hand-worked: process 0 has per-iteration times 1, 2, 3 (median 2), process 1 has 4, 8
 * (median 6). Geometric mean sqrt(12); sd of the logs ln(3)/sqrt(2); t(0.975, 1) = 12.7062047;
 * half-width 12.7062047 * ln(3)/sqrt(2)/sqrt(2) = 6.9795; CV of {2, 6} = sqrt(8)/4. */
static void test_hand_case(void **state)
{
    (void)state;
    const double iters[] = {1, 2, 1, 1, 2};
    const double totals[] = {1, 4, 3, 4, 16}; /* per iteration: 1, 2, 3 | 4, 8 */
    const uint32_t proc[] = {0, 0, 0, 1, 1};
    bench__estimate e;
    double cv, lsd;
    assert_int_equal(bench__process_estimate(iters, totals, proc, 5, 2, 0.95, &e, &cv, &lsd), 0);
    double half = 12.706204736174707 * log(3.0) / 2.0;
    assert_close(e.point, sqrt(12.0), 1e-12);
    assert_close(log(e.lower), log(sqrt(12.0)) - half, 1e-6);
    assert_close(log(e.upper), log(sqrt(12.0)) + half, 1e-6);
    assert_close(cv, sqrt(8.0) / 4.0, 1e-12);
    assert_close(lsd, log(3.0) / sqrt(2.0), 1e-12);
}

static void test_refuses_what_it_cannot_estimate(void **state)
{
    (void)state;
    const double iters[] = {1, 1, 1};
    const double totals[] = {5, 6, 0};
    const uint32_t two[] = {0, 0, 1}, gap[] = {0, 0, 2};
    bench__estimate e;
    double cv, lsd;
    /* one process: no spread to measure */
    assert_int_equal(bench__process_estimate(iters, totals, two, 3, 1, 0.95, &e, &cv, &lsd), -1);
    /* process 1 has no sample */
    assert_int_equal(bench__process_estimate(iters, totals, gap, 3, 3, 0.95, &e, &cv, &lsd), -1);
    /* a zero time has no logarithm */
    assert_int_equal(bench__process_estimate(iters, totals, two, 3, 2, 0.95, &e, &cv, &lsd), -1);
}

/* ---- simulation ---- */

static double normal(bench__rng *r)
{
    double u1 = bench__rng_uniform(r), u2 = bench__rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
}

typedef enum { EFFECT_NORMAL, EFFECT_REGIMES } effect_kind;

typedef struct coverage {
    double two_level; /* fraction of intervals over processes containing the truth */
    double pooled;    /* the same for the median's interval from the pooled samples */
} coverage;

/*
 * Simulates `runs` runs of p processes with m samples each. Process effect u: normal with sd
 * sigma_b, or (regimes) +3 sigma_b with probability 0.25 and 0 otherwise. The truth is what the
 * estimate converges to over many processes, the long-run geometric mean exp(mu + E[u]).
 */
static coverage simulate(unsigned p, size_t m, double sigma_b, double sigma_w, effect_kind kind,
                         size_t runs, uint64_t seed)
{
    bench__rng rng;
    bench__rng_seed(&rng, seed);
    const double mu = log(1000.0); /* 1 us per iteration */
    double truth = kind == EFFECT_NORMAL ? exp(mu) : exp(mu + 0.25 * 3.0 * sigma_b);
    size_t n = p * m, hit2 = 0, hitp = 0;
    double *iters = malloc(n * sizeof *iters), *totals = malloc(n * sizeof *totals);
    double *y = malloc(n * sizeof *y);
    uint32_t *proc = malloc(n * sizeof *proc);
    assert_non_null(iters);
    assert_non_null(totals);
    assert_non_null(y);
    assert_non_null(proc);
    for (size_t run = 0; run < runs; run++) {
        for (unsigned j = 0; j < p; j++) {
            double u = kind == EFFECT_NORMAL ? sigma_b * normal(&rng)
                       : bench__rng_uniform(&rng) < 0.25 ? 3.0 * sigma_b
                                                         : 0.0;
            for (size_t k = 0; k < m; k++) {
                size_t i = j * m + k;
                iters[i] = 1000;
                totals[i] = 1000 * exp(mu + u + sigma_w * normal(&rng));
                proc[i] = j;
                y[i] = totals[i] / iters[i];
            }
        }
        bench__estimate e;
        double cv, lsd;
        assert_int_equal(bench__process_estimate(iters, totals, proc, n, p, 0.95, &e, &cv, &lsd),
                         0);
        hit2 += e.lower <= truth && truth <= e.upper;
        double lo, hi;
        bench__sort(y, n);
        bench__median_ci_sorted(y, n, 0.95, &lo, &hi);
        hitp += lo <= truth && truth <= hi;
    }
    free(iters);
    free(totals);
    free(y);
    free(proc);
    return (coverage){(double)hit2 / (double)runs, (double)hitp / (double)runs};
}

/* With 2000 runs the standard error of a 95% coverage is 0.5 points: the bounds allow about
 * three of them, plus the t interval's own small error on medians (not means). */
static void test_coverage_default_processes(void **state)
{
    (void)state;
    /* between-process sd 5% dominates within-process sd 2% (the development machine's mix) */
    coverage c = simulate(10, 10, 0.05, 0.02, EFFECT_NORMAL, 2000, 11);
    print_message("10 processes: two-level coverage %.3f, pooled samples %.3f\n", c.two_level,
                  c.pooled);
    assert_true(c.two_level >= 0.93 && c.two_level <= 0.97);
    assert_true(c.pooled < 0.7); /* the samples of a run are not independent draws */
}

static void test_coverage_quick(void **state)
{
    (void)state;
    coverage c = simulate(3, 16, 0.05, 0.02, EFFECT_NORMAL, 2000, 12);
    print_message("3 processes: two-level coverage %.3f, pooled samples %.3f\n", c.two_level,
                  c.pooled);
    assert_true(c.two_level >= 0.93 && c.two_level <= 0.97);
    assert_true(c.pooled < 0.6);
}

static void test_coverage_no_process_effect(void **state)
{
    (void)state;
    /* No between-process spread: the interval stays honest (it does not need one). */
    coverage c = simulate(10, 10, 0.0, 0.02, EFFECT_NORMAL, 2000, 13);
    print_message("no process effect: two-level coverage %.3f\n", c.two_level);
    assert_true(c.two_level >= 0.93 && c.two_level <= 0.975);
}

static void test_coverage_regimes(void **state)
{
    (void)state;
    /* A skewed two-regime process effect: a quarter of processes 15% slower. The t interval
     * is approximate here; it must still cover near the nominal level. */
    coverage c = simulate(10, 10, 0.05, 0.02, EFFECT_REGIMES, 2000, 14);
    print_message("regimes: two-level coverage %.3f, pooled samples %.3f\n", c.two_level,
                  c.pooled);
    assert_true(c.two_level >= 0.90);
    assert_true(c.pooled < 0.6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_case),
        cmocka_unit_test(test_refuses_what_it_cannot_estimate),
        cmocka_unit_test(test_coverage_default_processes),
        cmocka_unit_test(test_coverage_quick),
        cmocka_unit_test(test_coverage_no_process_effect),
        cmocka_unit_test(test_coverage_regimes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
