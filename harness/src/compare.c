/*
 * compare.c: the change test between two runs of the same benchmarks, as pure functions.
 *
 * The model. On a shared machine most of the variance of a benchmark's headline (the median
 * time per iteration) is between processes, not between samples of one process: placement in
 * memory, neighbours and clock state differ from run to run and stay put within a run. So
 *     ln(median of a run) = code effect + run effect (sd sigma_b) + within-run error (se_w),
 * and the difference D of two runs' log-medians has variance
 *     se_w(old)^2 + se_w(new)^2 + 2 sigma_b^2,
 * or, when the old side is the mean of K calibration runs, sigma_b^2 / K + se_w(new)^2 +
 * sigma_b^2. se_w comes from each run's bootstrap interval of the median; sigma_b from
 * calibration (an upper confidence bound of the A/A spread), or a default measured on the
 * development machine. A test that used only the within-run samples (Welch, Mann-Whitney)
 * would call most A/A comparisons significant here, because the samples of one process are
 * not independent draws from the run-to-run distribution.
 *
 * Verdicts. T is the noise threshold (the smallest change worth reporting), alpha the
 * significance level applied to the whole comparison (Holm's step-down over all benchmarks):
 *   regressed / improved  |D| > ln(1+T) is established: Holm-adjusted p of H0 |D| <= ln(1+T)
 *                         below alpha;
 *   within noise          otherwise, |D| <= ln(1+T) but D != 0 is significant at alpha;
 *   no change             otherwise, |D| <= ln(1+T) and D is not significant;
 *   ambiguous             otherwise: the estimate is beyond the threshold, not established.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

static double norm_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

double bench__chi2_quantile(double p, double k)
{
    /* Wilson-Hilferty: (X/k)^(1/3) is close to normal with mean 1 - 2/(9k), var 2/(9k). */
    double z = bench__norm_quantile(p);
    double a = 2.0 / (9.0 * k);
    double c = 1.0 - a + z * sqrt(a);
    return k * c * c * c;
}

double bench__noise_upper(const bench__noise *n)
{
    if (n->runs < 2)
        return NAN;
    /* 90% upper confidence bound of sigma from a sample sd with runs - 1 degrees of freedom. */
    double df = (double)(n->runs - 1);
    double ucb = n->log_sd * sqrt(df / bench__chi2_quantile(0.10, df));
    return ucb > BENCH__MIN_RUN_NOISE ? ucb : BENCH__MIN_RUN_NOISE;
}

int bench__side_from_samples(const double *iters, const double *totals, size_t n,
                             size_t nresamples, double level, uint64_t seed, bench__side *out)
{
    memset(out, 0, sizeof *out);
    bench__estimates e;
    if (bench__bootstrap(iters, totals, n, nresamples, level, seed, &e) != 0)
        return -1;
    out->median = e.median.point;
    out->lower = e.median.lower;
    out->upper = e.median.upper;
    double z = bench__norm_quantile(0.5 + level / 2.0);
    out->se_log = out->lower > 0 && out->upper > 0 ? (log(out->upper) - log(out->lower)) / (2 * z)
                                                   : NAN;
    return 0;
}

const char *bench__verdict_name(bench__verdict v)
{
    switch (v) {
    case BENCH__V_REGRESSED:
        return "regressed";
    case BENCH__V_IMPROVED:
        return "improved";
    case BENCH__V_NO_CHANGE:
        return "no change";
    case BENCH__V_WITHIN_NOISE:
        return "within noise";
    case BENCH__V_AMBIGUOUS:
        return "ambiguous";
    case BENCH__V_INCOMPARABLE:
        return "not compared";
    }
    return "?";
}

typedef struct holm_item {
    double p;
    size_t index;
} holm_item;

static int cmp_holm(const void *a, const void *b)
{
    double x = ((const holm_item *)a)->p, y = ((const holm_item *)b)->p;
    return (x > y) - (x < y);
}

int bench__holm(const double *p, size_t n, double *adjusted)
{
    holm_item *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++) {
        v[i].p = p[i];
        v[i].index = i;
    }
    qsort(v, n, sizeof *v, cmp_holm);
    double running = 0.0;
    for (size_t i = 0; i < n; i++) {
        double a = (double)(n - i) * v[i].p;
        if (a > 1.0)
            a = 1.0;
        if (a > running)
            running = a; /* adjusted p-values are monotone in the sorted order */
        adjusted[v[i].index] = running;
    }
    free(v);
    return 0;
}

void bench__compare_one(const bench__side *old, const bench__side *cur,
                        const bench__compare_opts *o, bench__change *c)
{
    memset(c, 0, sizeof *c);
    c->old_median = old->median;
    c->new_median = cur->median;
    c->p_threshold = 1.0;
    if (!(old->median > 0) || !(cur->median > 0) || !isfinite(old->se_log) ||
        !isfinite(cur->se_log)) {
        c->verdict = BENCH__V_INCOMPARABLE;
        return;
    }
    bool calibrated = old->noise.runs >= 2;
    double sigma = calibrated ? bench__noise_upper(&old->noise) : o->default_run_noise;
    double ref = calibrated ? old->noise.log_mean : log(old->median);
    double var_old = calibrated ? sigma * sigma / old->noise.runs
                                : old->se_log * old->se_log + sigma * sigma;
    double var_new = cur->se_log * cur->se_log + sigma * sigma;
    double d = log(cur->median) - ref;
    double s = sqrt(var_old + var_new);
    double tau = log1p(o->noise_threshold);
    double zc = bench__norm_quantile(1.0 - o->significance_level / 2.0);

    c->calibrated = calibrated;
    c->run_noise = sigma;
    c->log_change = d;
    c->log_se = s;
    c->ratio = exp(d);
    c->ratio_lower = exp(d - zc * s);
    c->ratio_upper = exp(d + zc * s);
    c->p_zero = s > 0 ? 2.0 * (1.0 - norm_cdf(fabs(d) / s)) : (d == 0 ? 1.0 : 0.0);
    double pt = s > 0 ? 2.0 * (1.0 - norm_cdf((fabs(d) - tau) / s)) : (fabs(d) > tau ? 0 : 1);
    c->p_threshold = pt > 1.0 ? 1.0 : pt;
    c->p_adjusted = c->p_threshold;
}

/* Classifies one change once its adjusted p is known. */
static void classify(bench__change *c, const bench__compare_opts *o)
{
    if (c->verdict == BENCH__V_INCOMPARABLE)
        return;
    double tau = log1p(o->noise_threshold);
    if (c->p_adjusted < o->significance_level)
        c->verdict = c->log_change > 0 ? BENCH__V_REGRESSED : BENCH__V_IMPROVED;
    else if (fabs(c->log_change) <= tau)
        c->verdict = c->p_zero < o->significance_level ? BENCH__V_WITHIN_NOISE
                                                       : BENCH__V_NO_CHANGE;
    else
        c->verdict = BENCH__V_AMBIGUOUS;
}

int bench__compare_all(const bench__side *old, const bench__side *cur, size_t n,
                       const bench__compare_opts *o, bench__change *out)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    double *adj = malloc((n ? n : 1) * sizeof *adj);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!p || !adj || !idx) {
        free(p);
        free(adj);
        free(idx);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        bench__compare_one(&old[i], &cur[i], o, &out[i]);
        if (out[i].verdict != BENCH__V_INCOMPARABLE) {
            p[m] = out[i].p_threshold;
            idx[m++] = i;
        }
    }
    int rc = bench__holm(p, m, adj);
    for (size_t k = 0; rc == 0 && k < m; k++)
        out[idx[k]].p_adjusted = adj[k];
    for (size_t i = 0; rc == 0 && i < n; i++)
        classify(&out[i], o);
    free(p);
    free(adj);
    free(idx);
    return rc;
}
