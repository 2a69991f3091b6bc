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
 * sigma_b comes from calibration (the 90% upper confidence bound of the sd over K processes,
 * never below the default), or is a default measured on the development machine; the test
 * statistic is referred to the normal distribution.
 *
 * Verdicts. This file measures the change D = ln(new/old), its standard error and degrees of
 * freedom; verdict.c decides it, with one interval at the family level 1 - alpha/m (Bonferroni
 * over the m benchmarks compared), so that a suite of 20 benchmarks raises a false alarm in at
 * most alpha of comparisons, not in most, and "no change" is said only when that interval lies
 * inside the noise threshold.
 *
 * Statuses. A benchmark one side has no measurement of gets a status instead of a verdict
 * (bench__comparable): skipped (either side skipped it; this wins), new (the old side lacks it),
 * removed (the new side lacks it). They are not counted in m and are never a change.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "core/result.h"
#include "stats/stats.h"

double bench__noise_used(const bench__noise *n, double floor)
{
    /* The 90% upper confidence bound of sigma from a sample sd over `runs` processes, so that
     * a calibration that happened to see little spread does not make the test overconfident;
     * never below the floor, which stands for the drift a few minutes of calibration miss. */
    double df = (double)(n->runs - 1);
    double ucb = n->log_sd * sqrt(df / bench__chi2_quantile(0.10, df));
    return ucb > floor ? ucb : floor;
}

int bench__side_from_samples(const double *iters, const double *totals, size_t n,
                             size_t nresamples, double level, uint64_t seed, bench__side *out)
{
    memset(out, 0, sizeof *out);
    bench__estimate median;
    if ((double)n * (double)nresamples <= BENCH__COMPARE_MAX_DRAWS) {
        if (bench__bootstrap_median(iters, totals, n, nresamples, level, seed, &median) != 0)
            return -1;
    } else {
        /* Work bounded per entry: above the budget, the distribution-free interval of the
         * median from order statistics, which the bootstrap's approaches as n grows, in
         * O(n log n) whatever --nresamples asks. */
        double *y = malloc((n ? n : 1) * sizeof *y);
        if (!y)
            return -1;
        for (size_t i = 0; i < n; i++)
            y[i] = totals[i] / iters[i];
        bench__sort(y, n);
        median.point = bench__quantile_sorted(y, n, 0.5);
        bench__median_ci_sorted(y, n, level, &median.lower, &median.upper);
        free(y);
    }
    bench__side_from_estimate(&median, level, out);
    return 0;
}

int bench__side_from_processes(const double *iters, const double *totals,
                               const uint32_t *process, size_t n, unsigned p, double level,
                               bench__side *out)
{
    memset(out, 0, sizeof *out);
    bench__estimate e;
    double cv, log_sd;
    if (bench__process_estimate(iters, totals, process, n, p, level, &e, &cv, &log_sd) != 0)
        return -1;
    out->median = e.point;
    out->lower = e.lower;
    out->upper = e.upper;
    out->se_log = log_sd / sqrt((double)p);
    out->processes = p;
    double *logs = malloc(p * sizeof *logs);
    if (!logs || bench__process_log_medians(iters, totals, process, n, p, logs) != 0) {
        free(logs);
        return -1;
    }
    bench__find_modes(logs, p, &out->modes);
    free(logs);
    return 0;
}

void bench__side_from_estimate(const bench__estimate *median, double level, bench__side *out)
{
    out->median = median->point;
    out->lower = median->lower;
    out->upper = median->upper;
    /* The interval's width on the log scale gives the standard error of ln(median). */
    double z = bench__norm_quantile(0.5 + level / 2.0);
    out->se_log = out->lower > 0 && out->upper > 0 ? (log(out->upper) - log(out->lower)) / (2 * z)
                                                   : NAN;
}

bool bench__comparable(const bench__status *old, const bench__status *cur,
                       bench__verdict *status)
{
    /* A skip on either side wins: a GPU benchmark on a machine without a GPU is skipped, and
     * stays "skipped" whether or not the baseline, saved on another machine, measured it. */
    if ((old && *old == BENCH__SKIPPED) || (cur && *cur == BENCH__SKIPPED))
        *status = BENCH__V_SKIPPED;
    else if (!old && cur)
        *status = BENCH__V_NEW;
    else if (old && !cur)
        *status = BENCH__V_REMOVED;
    else if (old && cur && *old == BENCH__OK && *cur == BENCH__OK)
        return true;
    else
        *status = BENCH__V_INCOMPARABLE;
    return false;
}

/* The like-with-like log estimate of a side with two speed groups: the mean of the two groups'
 * means, so that how many processes landed in each is no part of it; its squared standard error
 * and its degrees of freedom into *var and *df. */
static double modal(const bench__side *x, double *var, double *df)
{
    const bench__modes *m = &x->modes;
    *var = 0.25 * m->sd * m->sd * (1.0 / m->count[0] + 1.0 / m->count[1]);
    *df = (double)(m->count[0] + m->count[1] - 2);
    return 0.5 * (m->mean[0] + m->mean[1]);
}

/*
 * Both sides measured in worker processes: each se_log already holds the spread between
 * processes, measured in that run, so no default stands in for it. What processes within one
 * run cannot see is the drift of the whole machine between the two runs: the drift canaries
 * measure it (drift_sd, the smallest of their absolute log ratios between the two runs: the drift
 * every kind of work shared), and so do the benchmarks themselves (bench__suite_drift, applied by
 * bench__compare_all); only when neither can be had does default_run_noise stand in. It enters
 * once, not once per side. The reference distribution is Student's t with Welch-Satterthwaite
 * degrees of freedom, since each se_log is estimated from a few processes. When both sides fell
 * into two speed groups, they are compared group with group (modal).
 */
static void compare_processes(const bench__side *old, const bench__side *cur,
                              const bench__compare_opts *o, bench__change *c)
{
    bool measured = o->drift_known && isfinite(o->drift_sd) && o->drift_sd >= 0;
    double sd = measured ? o->drift_sd : o->default_run_noise;
    double a = old->se_log * old->se_log, b = cur->se_log * cur->se_log;
    double dfa = (double)(old->processes - 1), dfb = (double)(cur->processes - 1);
    double d = log(cur->median) - log(old->median);
    bool like = old->modes.groups == 2 && cur->modes.groups == 2;
    if (like)
        d = modal(cur, &b, &dfb) - modal(old, &a, &dfa);
    double s = sqrt(a + b + sd * sd);
    if (!(s > 0))
        s = 1e-12; /* identical processes and no drift: the limit, p = 1 exactly when D = 0 */
    double den = a * a / dfa + b * b / dfb;
    /* The drift term is not estimated from these processes: it adds no uncertainty of its own
     * to their spreads, so it only widens the standard error, not the degrees of freedom. */
    double df = den > 0 ? (a + b) * (a + b) / den : INFINITY;
    if (df < 1)
        df = 1;
    c->calibrated = false;
    c->drift_measured = measured;
    c->drift_from_suite = measured && o->drift_from_suite;
    c->run_noise = sd;
    c->modes_compared = like;
    c->modes_differ = old->modes.groups != cur->modes.groups;
    bench__decide(c, d, s, df, 1, o);
}

/* Both sides have a median and a spread: comparable at all. */
static bool comparable_sides(const bench__side *old, const bench__side *cur)
{
    return old->median > 0 && cur->median > 0 && isfinite(old->se_log) && isfinite(cur->se_log);
}

/* Both sides measured in worker processes and comparable by their process spreads (the test of
 * compare_processes, and the benchmarks bench__suite_drift counts). */
static bool process_pair(const bench__side *old, const bench__side *cur)
{
    return comparable_sides(old, cur) && old->processes >= 2 && cur->processes >= 2 &&
           old->noise.runs < 2;
}

void bench__compare_one(const bench__side *old, const bench__side *cur,
                        const bench__compare_opts *o, bench__change *c)
{
    memset(c, 0, sizeof *c);
    c->old_median = old->median;
    c->new_median = cur->median;
    c->p = 1.0;
    c->p_adjusted = 1.0;
    if (!comparable_sides(old, cur)) {
        c->verdict = BENCH__V_INCOMPARABLE;
        return;
    }
    if (process_pair(old, cur)) {
        compare_processes(old, cur, o, c);
        return;
    }
    bool calibrated = old->noise.runs >= 2;
    double sigma = calibrated ? bench__noise_used(&old->noise, o->default_run_noise)
                              : o->default_run_noise;
    double ref = calibrated ? old->noise.log_mean : log(old->median);
    /* A calibrated reference is the mean of K runs, each already carrying its within-run
     * error inside sigma; an uncalibrated one is a single run. */
    double var_old = calibrated ? sigma * sigma / old->noise.runs
                                : old->se_log * old->se_log + sigma * sigma;
    double var_new = cur->se_log * cur->se_log + sigma * sigma;
    double d = log(cur->median) - ref;
    double s = sqrt(var_old + var_new);
    double df = INFINITY; /* sigma is an upper bound or a default, not an estimate */
    c->calibrated = calibrated;
    c->run_noise = sigma;
    c->old_median = exp(ref);
    bench__decide(c, d, s, df, 1, o);
}

#define CHI2_1_MEDIAN 0.45493642311957283 /* median of chi-square, 1 degree of freedom */

/* The median over k of d[k]^2 / (v[k] + delta^2); work has room for k values. */
static double scaled_median(const double *d, const double *v, size_t k, double delta,
                            double *work)
{
    for (size_t i = 0; i < k; i++) {
        double den = v[i] + delta * delta;
        work[i] = d[i] == 0 ? 0 : den > 0 ? d[i] * d[i] / den : INFINITY;
    }
    return bench__median_inplace(work, k);
}

double bench__suite_drift(const bench__side *old, const bench__side *cur, size_t n)
{
    double *d = malloc((n ? n : 1) * 3 * sizeof *d);
    if (!d)
        return NAN;
    double *v = d + n, *work = v + n, hi = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (process_pair(&old[i], &cur[i])) {
            d[k] = log(cur[i].median) - log(old[i].median);
            v[k] = old[i].se_log * old[i].se_log + cur[i].se_log * cur[i].se_log;
            hi = fmax(hi, fabs(d[k]));
            k++;
        }
    double delta = NAN;
    if (k >= BENCH__SUITE_DRIFT_MIN) {
        delta = 0;
        /* The median falls as delta grows; bisect for where it meets the chi-square's. At
         * delta = |D|max / sqrt(CHI2_1_MEDIAN) every ratio is already below it. */
        if (scaled_median(d, v, k, 0, work) > CHI2_1_MEDIAN) {
            double lo = 0;
            hi = hi / sqrt(CHI2_1_MEDIAN) + 1e-12;
            for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
                double mid = 0.5 * (lo + hi);
                if (scaled_median(d, v, k, mid, work) > CHI2_1_MEDIAN)
                    lo = mid;
                else
                    hi = mid;
            }
            delta = hi;
        }
    }
    free(d);
    return delta;
}

int bench__compare_all(const bench__side *old, const bench__side *cur, size_t n,
                       const bench__compare_opts *opts, bench__change *out)
{
    /* The machine's drift is the larger of what the canaries measured and what the benchmarks
     * themselves show beyond their process spreads (bench__suite_drift). */
    bench__compare_opts eff = *opts;
    const bench__compare_opts *o = &eff;
    double suite = bench__suite_drift(old, cur, n);
    if (isfinite(suite) && (!eff.drift_known || !(suite <= eff.drift_sd))) {
        eff.drift_known = true;
        eff.drift_sd = suite;
        eff.drift_from_suite = true;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        bench__compare_one(&old[i], &cur[i], o, &out[i]);
        m += out[i].verdict != BENCH__V_INCOMPARABLE;
    }
    /* Each interval at the family level: Bonferroni over the m benchmarks compared. */
    for (size_t i = 0; i < n; i++)
        if (out[i].verdict != BENCH__V_INCOMPARABLE)
            bench__decide(&out[i], out[i].log_change, out[i].log_se, out[i].df, (double)m, o);
    return 0;
}
