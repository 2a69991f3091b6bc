/*
 * stats.c: pure statistics for the harness (see stats.h for the conventions).
 *
 * Invariant: nothing here reads a clock, a file or a global; the only state is what the caller
 * passes in. The bootstrap's randomness is an explicit, seeded xoshiro256** stream.
 */
#include "stats/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void bench__rng_seed(bench__rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t bench__rng_next(bench__rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t bench__rng_below(bench__rng *r, uint64_t bound)
{
    /* Lemire's nearly divisionless method: multiply into 128 bits, reject the biased low part. */
    unsigned __int128 m = (unsigned __int128)bench__rng_next(r) * bound;
    uint64_t low = (uint64_t)m;
    if (low < bound) {
        uint64_t threshold = -bound % bound;
        while (low < threshold) {
            m = (unsigned __int128)bench__rng_next(r) * bound;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double bench__rng_uniform(bench__rng *r)
{
    return (double)(bench__rng_next(r) >> 11) * 0x1.0p-53;
}

double bench__mean(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    return sum / (double)n;
}

double bench__std_dev(const double *x, size_t n)
{
    if (n < 2)
        return 0.0;
    double m = bench__mean(x, n);
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - m) * (x[i] - m);
    return sqrt(ss / (double)(n - 1));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench__sort(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_double);
}

double bench__quantile_sorted(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return NAN;
    if (p <= 0.0)
        return sorted[0];
    if (p >= 1.0)
        return sorted[n - 1];
    double h = (double)(n - 1) * p;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return sorted[n - 1];
    double frac = h - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* Places the k-th smallest element of x[0..n) at x[k], everything before it <= it and everything
 * after it >= it (Wirth's selection algorithm). Signed indices: j may step below zero. */
static double select_kth(double *x, size_t n, size_t k)
{
    ptrdiff_t l = 0, m = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
    while (l < m) {
        double pivot = x[kk];
        ptrdiff_t i = l, j = m;
        do {
            while (x[i] < pivot)
                i++;
            while (pivot < x[j])
                j--;
            if (i <= j) {
                double t = x[i];
                x[i] = x[j];
                x[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < kk)
            l = i;
        if (kk < i)
            m = j;
    }
    return x[kk];
}

double bench__median_inplace(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    size_t half = n / 2;
    double upper = select_kth(x, n, half);
    if (n % 2 == 1)
        return upper;
    /* After selection everything in x[0..half) is <= x[half]: the lower middle is their max. */
    double lower = x[0];
    for (size_t i = 1; i < half; i++)
        if (x[i] > lower)
            lower = x[i];
    return 0.5 * (lower + upper);
}

double bench__mad(const double *x, size_t n, double center, double *work)
{
    if (n == 0)
        return NAN;
    for (size_t i = 0; i < n; i++)
        work[i] = fabs(x[i] - center);
    return 1.4826 * bench__median_inplace(work, n);
}

double bench__ols_slope(const double *x, const double *y, size_t n)
{
    double sxy = 0.0, sxx = 0.0;
    for (size_t i = 0; i < n; i++) {
        sxy += x[i] * y[i];
        sxx += x[i] * x[i];
    }
    return sxx > 0.0 ? sxy / sxx : NAN;
}

double bench__r2_origin(const double *x, const double *y, size_t n, double slope)
{
    double ss_res = 0.0, ss_tot = 0.0;
    for (size_t i = 0; i < n; i++) {
        double r = y[i] - slope * x[i];
        ss_res += r * r;
        ss_tot += y[i] * y[i];
    }
    return ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : NAN;
}

void bench__tukey(const double *x, size_t n, double *work, bench__outliers *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    memcpy(work, x, n * sizeof *x);
    bench__sort(work, n);
    double q1 = bench__quantile_sorted(work, n, 0.25);
    double q3 = bench__quantile_sorted(work, n, 0.75);
    double iqr = q3 - q1;
    out->low_severe_fence = q1 - 3.0 * iqr;
    out->low_mild_fence = q1 - 1.5 * iqr;
    out->high_mild_fence = q3 + 1.5 * iqr;
    out->high_severe_fence = q3 + 3.0 * iqr;
    for (size_t i = 0; i < n; i++) {
        if (x[i] < out->low_severe_fence)
            out->low_severe++;
        else if (x[i] < out->low_mild_fence)
            out->low_mild++;
        else if (x[i] > out->high_severe_fence)
            out->high_severe++;
        else if (x[i] > out->high_mild_fence)
            out->high_mild++;
    }
}

double bench__norm_quantile(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    const double p_low = 0.02425;
    if (!(p > 0.0 && p < 1.0))
        return p == 0.0 ? -INFINITY : p == 1.0 ? INFINITY : NAN;
    if (p < p_low) {
        double q = sqrt(-2.0 * log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    }
    if (p > 1.0 - p_low) {
        double q = sqrt(-2.0 * log(1.0 - p));
        return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    }
    double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

int bench__median_ci_sorted(const double *sorted, size_t n, double level, double *lo, double *hi)
{
    if (n == 0)
        return -1;
    /* Ranks of the order statistics whose coverage of the median is about `level`:
     * the number of samples below the median is Binomial(n, 1/2) ~ N(n/2, n/4). */
    double z = bench__norm_quantile(0.5 + level / 2.0);
    double half = z * sqrt((double)n) / 2.0;
    double l = floor((double)n / 2.0 - half);     /* 1-based rank, rounded outwards */
    double u = ceil((double)n / 2.0 + half) + 1.0; /* 1-based rank, rounded outwards */
    int ok = 0;
    if (l < 1.0) {
        l = 1.0;
        ok = -1;
    }
    if (u > (double)n) {
        u = (double)n;
        ok = -1;
    }
    *lo = sorted[(size_t)l - 1];
    *hi = sorted[(size_t)u - 1];
    return ok;
}

/* Per-iteration statistics of one (re)sample: y[i] = totals[i] / iters[i]. */
static void point_stats(const double *iters, const double *totals, const double *y, size_t n,
                        double *work, double out[5])
{
    out[0] = bench__mean(y, n);
    out[2] = bench__std_dev(y, n);
    memcpy(work, y, n * sizeof *y);
    out[1] = bench__median_inplace(work, n);
    out[3] = bench__mad(y, n, out[1], work);
    out[4] = bench__ols_slope(iters, totals, n);
}

int bench__bootstrap(const double *iters, const double *totals, size_t n, size_t nresamples,
                     double level, uint64_t seed, bench__estimates *out)
{
    if (n == 0 || nresamples == 0 || !(level > 0.0 && level < 1.0))
        return -1;
    double *y = malloc(n * sizeof *y);
    double *work = malloc(n * sizeof *work);
    double *ri = malloc(n * sizeof *ri);
    double *rt = malloc(n * sizeof *rt);
    double *ry = malloc(n * sizeof *ry);
    double *dist = malloc(5 * nresamples * sizeof *dist);
    int rc = -1;
    if (!y || !work || !ri || !rt || !ry || !dist)
        goto done;

    for (size_t i = 0; i < n; i++)
        y[i] = totals[i] / iters[i];
    double point[5];
    point_stats(iters, totals, y, n, work, point);
    out->r2 = bench__r2_origin(iters, totals, n, point[4]);
    out->min = y[0];
    for (size_t i = 1; i < n; i++)
        if (y[i] < out->min)
            out->min = y[i];

    bench__rng rng;
    bench__rng_seed(&rng, seed);
    for (size_t b = 0; b < nresamples; b++) {
        for (size_t i = 0; i < n; i++) {
            size_t k = (size_t)bench__rng_below(&rng, n);
            ri[i] = iters[k];
            rt[i] = totals[k];
            ry[i] = y[k];
        }
        double s[5];
        point_stats(ri, rt, ry, n, work, s);
        for (int j = 0; j < 5; j++)
            dist[(size_t)j * nresamples + b] = s[j];
    }

    bench__estimate *dst[5] = {&out->mean, &out->median, &out->std_dev, &out->mad, &out->slope};
    double plo = (1.0 - level) / 2.0, phi = (1.0 + level) / 2.0;
    for (int j = 0; j < 5; j++) {
        double *d = dist + (size_t)j * nresamples;
        bench__sort(d, nresamples);
        dst[j]->point = point[j];
        dst[j]->lower = bench__quantile_sorted(d, nresamples, plo);
        dst[j]->upper = bench__quantile_sorted(d, nresamples, phi);
    }
    rc = 0;
done:
    free(y);
    free(work);
    free(ri);
    free(rt);
    free(ry);
    free(dist);
    return rc;
}

int bench__process_log_medians(const double *iters, const double *totals,
                               const uint32_t *process, size_t n, unsigned p, double *out)
{
    double *y = malloc((n ? n : 1) * sizeof *y);
    if (!y)
        return -1;
    int rc = 0;
    for (unsigned j = 0; j < p && rc == 0; j++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (process[i] == j)
                y[k++] = totals[i] / iters[i];
        double med = k ? bench__median_inplace(y, k) : 0;
        if (!(med > 0))
            rc = -1; /* no sample, or a zero time, which has no logarithm */
        else
            out[j] = log(med);
    }
    free(y);
    return rc;
}

int bench__process_within(const double *iters, const double *totals, const uint32_t *process,
                          size_t n, unsigned p, double *out)
{
    double *y = malloc(2 * (n ? n : 1) * sizeof *y);
    if (!y)
        return -1;
    double *work = y + (n ? n : 1);
    int rc = 0;
    for (unsigned j = 0; j < p && rc == 0; j++) {
        size_t k = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
            if (process[i] != j)
                continue;
            double t = totals[i] / iters[i];
            if (!(t > 0))
                rc = -1;
            else
                y[k++] = log(t);
        }
        out[j] = NAN;
        if (k < 3 || rc != 0)
            continue;
        memcpy(work, y, k * sizeof *y);
        double sd = bench__mad(y, k, bench__median_inplace(work, k), work);
        out[j] = M_PI / 2.0 * sd * sd / (double)k;
    }
    free(y);
    return rc;
}

double bench__process_share(const double *logs, const double *within, unsigned k, double growth)
{
    static const double shares[] = {BENCH__PROCESS_SHARES};
    if (k < 2)
        return 1.0;
    double s = bench__std_dev(logs, k), w = 0;
    for (unsigned j = 0; j < k; j++)
        w += within[j] / (double)k;
    if (!isfinite(w) || !(s > 0) || !isfinite(s))
        return 1.0;
    double f = 1.0;
    for (size_t i = 0; i < sizeof shares / sizeof shares[0]; i++)
        if (w * (1.0 / shares[i] - 1.0) <= growth * s * s)
            f = shares[i];
    return f;
}

int bench__process_estimate(const double *iters, const double *totals, const uint32_t *process,
                            size_t n, unsigned p, double level, bench__estimate *out, double *cv,
                            double *log_sd)
{
    if (p < 2 || n < p)
        return -1;
    double *med = malloc(p * sizeof *med);
    if (!med || bench__process_log_medians(iters, totals, process, n, p, med) != 0) {
        free(med);
        return -1;
    }
    double m = bench__mean(med, p), sd = bench__std_dev(med, p);
    double half = bench__t_quantile(0.5 + level / 2.0, (double)(p - 1)) * sd / sqrt((double)p);
    out->point = exp(m);
    out->lower = exp(m - half);
    out->upper = exp(m + half);
    *log_sd = sd;
    for (unsigned j = 0; j < p; j++)
        med[j] = exp(med[j]);
    *cv = bench__std_dev(med, p) / bench__mean(med, p);
    free(med);
    return 0;
}

/* The 99.9% quantile of the widest gap between sorted neighbours (at least 2 on each side), in
 * units of the pooled sd of the two sides, among n standard normal values: n = 6 .. 40, from
 * 200000 simulated sets each (numpy, seed 7). */
static const double mode_gap_q999[] = {
    15.23, 10.94, 8.45, 6.84, 6.15, 5.29, 4.78, 4.26, 3.99, 3.76, 3.49, 3.27, 3.16, 3.01, 2.88,
    2.77, 2.62, 2.58, 2.51, 2.44, 2.37, 2.31, 2.25, 2.23, 2.20, 2.19, 2.11, 2.10, 2.09, 2.06,
    2.03, 1.99, 1.95, 1.92, 1.95,
};

void bench__find_modes(const double *x, size_t n, bench__modes *out)
{
    memset(out, 0, sizeof *out);
    out->groups = 1;
    out->count[0] = (unsigned)n;
    out->mean[0] = n ? bench__mean(x, n) : NAN;
    out->sd = n > 1 ? bench__std_dev(x, n) : 0;
    if (n < 6)
        return;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return;
    memcpy(v, x, n * sizeof *v);
    bench__sort(v, n);
    /* Prefix sums give each split's two means and sums of squares in O(1). */
    double best = 0, tot = 0, tot2 = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        tot += v[i];
        tot2 += v[i] * v[i];
    }
    double sl = 0, sl2 = 0, best_s = 0;
    for (size_t i = 1; i < n; i++) {
        sl += v[i - 1];
        sl2 += v[i - 1] * v[i - 1];
        if (i < 2 || n - i < 2)
            continue;
        double nl = (double)i, nh = (double)(n - i), sh = tot - sl, sh2 = tot2 - sl2;
        double ss = (sl2 - sl * sl / nl) + (sh2 - sh * sh / nh);
        double sd = sqrt(fmax(ss, 0) / (double)(n - 2));
        double gap = v[i] - v[i - 1];
        double ratio = sd > 0 ? gap / sd : gap > 0 ? INFINITY : 0;
        if (ratio > best) {
            best = ratio;
            best_s = sd;
            at = i;
        }
    }
    size_t k = n - 6 < sizeof mode_gap_q999 / sizeof mode_gap_q999[0]
                   ? n - 6
                   : sizeof mode_gap_q999 / sizeof mode_gap_q999[0] - 1;
    if (at > 0 && best > mode_gap_q999[k]) {
        double lo = bench__mean(v, at), hi = bench__mean(v + at, n - at);
        if (hi - lo >= log1p(BENCH__MODE_MIN_GAP)) {
            out->groups = 2;
            out->count[0] = (unsigned)at;
            out->count[1] = (unsigned)(n - at);
            out->mean[0] = lo;
            out->mean[1] = hi;
            out->sd = best_s;
        }
    }
    free(v);
}

/* Ranks of v[0..n) into r (ties get their mean rank); work has room for n indices. */
static void ranks(const double *v, size_t n, double *r, size_t *work)
{
    for (size_t i = 0; i < n; i++)
        work[i] = i;
    /* Insertion sort of the indices by value: n is a number of processes. */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[work[j - 1]] > v[work[j]]; j--) {
            size_t t = work[j];
            work[j] = work[j - 1];
            work[j - 1] = t;
        }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && v[work[j + 1]] == v[work[i]])
            j++;
        for (size_t k = i; k <= j; k++)
            r[work[k]] = 0.5 * (double)(i + j) + 1.0;
        i = j + 1;
    }
}

static double pearson(const double *x, const double *y, size_t n)
{
    double mx = bench__mean(x, n), my = bench__mean(y, n), sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0;
}

void bench__spread_cause_find(const double *logs, const int *cpu, const double *faults, size_t p,
                              bench__spread_cause *out)
{
    memset(out, 0, sizeof *out);
    double *a = malloc((p ? p : 1) * 2 * sizeof *a);
    size_t *work = malloc((p ? p : 1) * sizeof *work);
    int *cpus = malloc((p ? p : 1) * sizeof *cpus); /* the distinct CPUs */
    if (!a || !work || !cpus) {
        free(a);
        free(work);
        free(cpus);
        return;
    }
    double *b = a + p;
    /* By CPU: every pair of the CPUs the processes ran on, with at least 2 processes each; the
     * clearest difference. */
    size_t nc = 0;
    for (size_t k = 0; k < p; k++) {
        bool seen = cpu[k] < 0;
        for (size_t q = 0; q < nc && !seen; q++)
            seen = cpus[q] == cpu[k];
        if (!seen)
            cpus[nc++] = cpu[k];
    }
    double best_t = 0;
    for (size_t x = 0; x < nc; x++)
        for (size_t y = x + 1; y < nc; y++) {
            size_t n0 = 0, n1 = 0;
            for (size_t k = 0; k < p; k++) {
                if (cpu[k] == cpus[x])
                    a[n0++] = logs[k];
                else if (cpu[k] == cpus[y])
                    b[n1++] = logs[k];
            }
            if (n0 < 2 || n1 < 2)
                continue;
            double m0 = bench__mean(a, n0), m1 = bench__mean(b, n1);
            double v0 = bench__std_dev(a, n0), v1 = bench__std_dev(b, n1);
            double se = sqrt(v0 * v0 / (double)n0 + v1 * v1 / (double)n1);
            double t = se > 0 ? fabs(m1 - m0) / se : INFINITY;
            if (t > 4 && fabs(m1 - m0) >= log(1.03) && t > best_t) {
                best_t = t;
                out->by_cpu = true;
                out->cpu_fast = m0 < m1 ? cpus[x] : cpus[y];
                out->cpu_slow = m0 < m1 ? cpus[y] : cpus[x];
                out->cpu_ratio = exp(fabs(m1 - m0));
            }
        }
    /* By page faults: their ranks against the times' ranks. */
    bool known = p >= 6;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < p && known; k++) {
        known = isfinite(faults[k]);
        lo = fmin(lo, faults[k]);
        hi = fmax(hi, faults[k]);
    }
    if (known && hi >= 1.1 * lo && hi > 0) {
        ranks(faults, p, a, work);
        ranks(logs, p, b, work);
        out->faults_rho = pearson(a, b, p);
        out->by_faults = out->faults_rho >= 0.8;
    }
    free(a);
    free(work);
    free(cpus);
}

int bench__bootstrap_median(const double *iters, const double *totals, size_t n,
                            size_t nresamples, double level, uint64_t seed, bench__estimate *out)
{
    if (n == 0 || nresamples == 0 || !(level > 0.0 && level < 1.0))
        return -1;
    double *y = malloc(n * sizeof *y);
    double *ry = malloc(n * sizeof *ry);
    double *dist = malloc(nresamples * sizeof *dist);
    int rc = -1;
    if (!y || !ry || !dist)
        goto done;
    for (size_t i = 0; i < n; i++)
        y[i] = totals[i] / iters[i];
    memcpy(ry, y, n * sizeof *y);
    out->point = bench__median_inplace(ry, n);
    /* The same draws as bench__bootstrap (one index per sample, in order), so the interval is
     * the one that function gives its median. */
    bench__rng rng;
    bench__rng_seed(&rng, seed);
    for (size_t b = 0; b < nresamples; b++) {
        for (size_t i = 0; i < n; i++)
            ry[i] = y[bench__rng_below(&rng, n)];
        dist[b] = bench__median_inplace(ry, n);
    }
    bench__sort(dist, nresamples);
    out->lower = bench__quantile_sorted(dist, nresamples, (1.0 - level) / 2.0);
    out->upper = bench__quantile_sorted(dist, nresamples, (1.0 + level) / 2.0);
    rc = 0;
done:
    free(y);
    free(ry);
    free(dist);
    return rc;
}

/* ---- distributions: Student t, chi-square, the incomplete beta function ---- */

static double norm_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

/* Continued fraction of the regularised incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
    if (fabs(d) < tiny)
        d = tiny;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1.0 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1.0 / d;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1.0 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-15)
            break;
    }
    return h;
}

double bench__beta_inc(double a, double b, double x)
{
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0))
        return front * beta_cf(a, b, x) / a;
    return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

double bench__chi2_quantile(double p, double k)
{
    /* Wilson-Hilferty: (X/k)^(1/3) is close to normal with mean 1 - 2/(9k), var 2/(9k). */
    double z = bench__norm_quantile(p);
    double a = 2.0 / (9.0 * k);
    double c = 1.0 - a + z * sqrt(a);
    return k * c * c * c;
}

double bench__t_two_sided_p(double t, double df)
{
    if (!isfinite(df) || df <= 0)
        return 2.0 * (1.0 - norm_cdf(fabs(t)));
    return bench__beta_inc(df / 2.0, 0.5, df / (df + t * t));
}

/* Student's t density with df degrees of freedom at t. */
static double t_pdf(double t, double df)
{
    double lc = lgamma((df + 1.0) / 2.0) - lgamma(df / 2.0) - 0.5 * log(df * M_PI);
    return exp(lc - (df + 1.0) / 2.0 * log1p(t * t / df));
}

double bench__t_quantile(double p, double df)
{
    if (!isfinite(df) || df <= 0)
        return bench__norm_quantile(p);
    if (p == 0.5)
        return 0.0;
    /* Solve for the upper tail q = P(T > t) of |t|: Newton steps on the distribution function
     * from the normal quantile, kept inside a bracket that bisection narrows whenever a step
     * would leave it (heavy tails at few degrees of freedom). */
    double q = p > 0.5 ? 1.0 - p : p, target = 2.0 * q;
    double lo = 0.0, hi = 1.0;
    while (bench__t_two_sided_p(hi, df) > target && hi < 1e300)
        hi *= 2.0;
    double t = fmin(fmax(bench__norm_quantile(1.0 - q), lo), hi);
    for (int i = 0; i < 200; i++) {
        /* g(t) = P(T > t) - q, decreasing; g' = -pdf(t) */
        double g = 0.5 * bench__t_two_sided_p(t, df) - q;
        if (g > 0)
            lo = t;
        else
            hi = t;
        double d = t_pdf(t, df);
        double next = d > 0 ? t + g / d : NAN;
        if (!(next > lo && next < hi))
            next = 0.5 * (lo + hi);
        if (fabs(next - t) <= 1e-13 * fmax(1.0, t) || hi - lo <= 1e-13 * fmax(1.0, hi)) {
            t = next;
            break;
        }
        t = next;
    }
    return p > 0.5 ? t : -t;
}
