/*
 * changepoint.c: change points (binary segmentation, pooled t-test, Bonferroni over the splits
 * of the series) and trends (Mann-Kendall test, Theil-Sen slope, Bonferroni over the series
 * tested together) in a series of log run medians;
 * changepoint.h says how they are told apart. Pure: what it allocates is freed before return.
 *
 * Why these methods: a run's median already averages its processes (the geometric mean of the
 * per-process medians), so what is left between runs is run-to-run noise, roughly normal in the
 * log. Each split is tested with Student's t on the logs of the two sides, the variance pooled
 * over both: Welch's unpooled test was tried first, and with sides as small as 5 runs a side
 * whose few runs happened to agree closely gave spurious splits and misplaced steps (13 of 100
 * seeded series with a 3% step at run 25 went wrong, against 3 of 100 pooled). The pooled test
 * takes the noise to be the same before and after a change; a change of noise alone is not
 * reported. Each side has at least BENCH__CP_MIN_SEGMENT runs, so one outlying run cannot make
 * a segment of its own: it widens the spread of the side it sits in instead. The step's
 * interval is the t interval of the difference of the sides' mean logs (not widened for having
 * searched for the split). Apache Otava (Hunter) uses E-divisive means with a t-test for
 * significance; binary segmentation with a t-test is the same search with a closed-form test
 * in place of permutations.
 *
 * One disturbed run is not a step: a run whose processes were all slowed by other work (a run
 * of a 2 us benchmark read 83 us at load 8, between runs of 2 and 4 us) sat on the first run of
 * a real 2x step, so both sides' spreads swelled and no change point was found. Before testing,
 * each run but the newest is set to the median of the five runs around it when it lies further
 * from that median than OUTLIER_SDS robust sds of the run-to-run noise (from successive
 * differences, which a step moves once) and than OUTLIER_MIN_LOG: a lone outlier goes, a step
 * stays (the median of five around any run of a step of three or more runs is on its side).
 * Runs are moved one at a time, the furthest first, each judged on the series as moved so far:
 * an outlier two runs before a step must not pull the step's last run across it. The
 * gate's test of the newest run as a step of its own never moves that run; the search for
 * change points does (against the five newest runs): a step needs BENCH__CP_MIN_SEGMENT runs on
 * each side, so a newest run cannot be one, and left as it was a disturbed newest run (a 2 us
 * benchmark read 115 us at load 19, after five runs of a real 2x step) swelled the spread of
 * the newest side until the step was not found at all.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/changepoint.h"
#include "stats/stats.h"

/* A run moved to the median of the five around it only beyond both (see the top of the file). */
#define OUTLIER_SDS 6.0
#define OUTLIER_MIN_LOG 0.0953 /* ln 1.1: a tenth faster or slower */
#define OUTLIER_WINDOW 5

/* How far out[i] lies from the median of the OUTLIER_WINDOW runs of out around it (the window
 * kept inside the series), and that median. */
static double window_deviation(const double *out, size_t n, size_t i, double *med)
{
    size_t a = i >= OUTLIER_WINDOW / 2 ? i - OUTLIER_WINDOW / 2 : 0;
    if (a + OUTLIER_WINDOW > n)
        a = n - OUTLIER_WINDOW;
    double w[OUTLIER_WINDOW];
    memcpy(w, out + a, sizeof w);
    *med = bench__median_inplace(w, OUTLIER_WINDOW);
    return fabs(out[i] - *med);
}

void bench__cp_clip_outliers(const double *logs, size_t n, bool newest, double *out)
{
    memcpy(out, logs, n * sizeof *out);
    if (n < OUTLIER_WINDOW + 1)
        return;
    /* The noise from successive differences: sd = median |d| / (0.6745 sqrt 2) for normal
     * noise, and a step changes only one difference. */
    double d[BENCH__TREND_MAX_POINTS];
    size_t m = n - 1 < BENCH__TREND_MAX_POINTS ? n - 1 : BENCH__TREND_MAX_POINTS;
    for (size_t i = 0; i < m; i++)
        d[i] = fabs(logs[n - m + i] - logs[n - m + i - 1]);
    double sd = bench__median_inplace(d, m) / (0.6745 * sqrt(2.0));
    double limit = fmax(OUTLIER_SDS * sd, OUTLIER_MIN_LOG);
    /* One run at a time, the furthest first, each judged on the series clipped so far: judged
     * all at once, an outlier two runs before a step pulled the median of the five around the
     * step's last run before it to the new level, and that run was moved across the step. */
    size_t last = newest ? n : n - 1;
    for (size_t round = 0; round < last; round++) {
        size_t worst = n;
        double worst_dev = limit, worst_med = 0;
        for (size_t i = 0; i < last; i++) {
            double med, dev = window_deviation(out, n, i, &med);
            if (dev > worst_dev) {
                worst = i;
                worst_dev = dev;
                worst_med = med;
            }
        }
        if (worst == n)
            break;
        out[worst] = worst_med;
    }
}

/* The best split of y[a..b) (prefix sums s1, s2 of y and y^2 over the whole series): its index,
 * two-sided p, degrees of freedom, difference of the means and its standard error. False when
 * no split leaves BENCH__CP_MIN_SEGMENT points on each side. */
typedef struct split {
    size_t k;
    double p, df, d, se;
} split;

/* Student's t test of y[a..k) against y[k..b) (a < k < b, at least 3 points), the variance
 * pooled over both sides (see the top of the file). */
static split test_split(const double *s1, const double *s2, size_t a, size_t k, size_t b)
{
    double n1 = (double)(k - a), n2 = (double)(b - k);
    double m1 = (s1[k] - s1[a]) / n1, m2 = (s1[b] - s1[k]) / n2;
    double ss1 = fmax(0, s2[k] - s2[a] - n1 * m1 * m1);
    double ss2 = fmax(0, s2[b] - s2[k] - n2 * m2 * m2);
    double df = n1 + n2 - 2, se = sqrt((ss1 + ss2) / df * (1 / n1 + 1 / n2)), d = m2 - m1;
    /* Both sides constant: a change exactly when their values differ. */
    double p = se > 0 ? bench__t_two_sided_p(d / se, df) : d != 0 ? 0 : 1;
    return (split){k, p, df, d, se};
}

static bool best_split(const double *s1, const double *s2, size_t a, size_t b, split *out)
{
    const size_t m = BENCH__CP_MIN_SEGMENT;
    bool any = false;
    for (size_t k = a + m; k + m <= b; k++) {
        split s = test_split(s1, s2, a, k, b);
        if (!any || s.p < out->p) {
            *out = s;
            any = true;
        }
    }
    return any;
}

/* The change point of split s, its interval at 1 - alpha. */
static bench__cp make_cp(const split *s, double alpha, double adjusted)
{
    double t = s->se > 0 ? bench__t_quantile(1 - alpha / 2, s->df) : 0;
    return (bench__cp){
        .index = s->k,
        .index_lower = s->k,
        .index_upper = s->k,
        .step = expm1(s->d),
        .step_lower = expm1(s->d - t * s->se),
        .step_upper = expm1(s->d + t * s->se),
        .p_adjusted = adjusted,
    };
}

static int cmp_cp(const void *x, const void *y)
{
    size_t a = ((const bench__cp *)x)->index, b = ((const bench__cp *)y)->index;
    return (a > b) - (a < b);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The splits a series of n points has (at least 1): segment()'s Bonferroni factor. */
static double splits(size_t n)
{
    return n > 2 * BENCH__CP_MIN_SEGMENT ? (double)(n - 2 * BENCH__CP_MIN_SEGMENT + 1) : 1;
}

/* Binary segmentation over y[0..n); s1, s2 are the prefix sums (n + 1 each). */
static void segment(const double *s1, const double *s2, size_t n, double alpha,
                    bench__cp_result *out)
{
    size_t stack[2 * BENCH__CP_MAX + 2][2], top = 0;
    stack[top][0] = 0;
    stack[top++][1] = n;
    while (top > 0 && out->ncp < BENCH__CP_MAX) {
        top--;
        size_t a = stack[top][0], b = stack[top][1];
        split s;
        if (!best_split(s1, s2, a, b, &s))
            continue;
        /* Bonferroni over every split the whole series has, in every segment: a segment found
         * inside another is held to the same standard as the first. */
        double adjusted = fmin(1, s.p * splits(n));
        if (!(adjusted < alpha))
            continue;
        out->cp[out->ncp++] = make_cp(&s, alpha, adjusted);
        stack[top][0] = a;
        stack[top++][1] = s.k;
        stack[top][0] = s.k;
        stack[top++][1] = b;
    }
    qsort(out->cp, out->ncp, sizeof out->cp[0], cmp_cp);
}

/* The residual sum of squares of y[a..b) about its mean (prefix sums s1, s2). */
static double rss(const double *s1, const double *s2, size_t a, size_t b)
{
    double m = (double)(b - a), d = s1[b] - s1[a];
    return fmax(0, s2[b] - s2[a] - d * d / m);
}

/* The location interval of every change point of r, each between its neighbours (see
 * changepoint.h): the splits k whose two-segment residual sum of squares exceeds the change
 * point's own by at most z(1 - alpha/2)^2 times the residual variance, and the points on either
 * side of it. */
static void locate(const double *s1, const double *s2, size_t n, double alpha,
                   bench__cp_result *r)
{
    double z = bench__norm_quantile(1 - alpha / 2);
    for (size_t c = 0; c < r->ncp; c++) {
        bench__cp *cp = &r->cp[c];
        size_t a = c > 0 ? r->cp[c - 1].index : 0, b = c + 1 < r->ncp ? r->cp[c + 1].index : n;
        size_t k = cp->index, lo = k > a + 1 ? k - 1 : k, hi = k + 1 < b ? k + 1 : k;
        double best = rss(s1, s2, a, k) + rss(s1, s2, k, b);
        double limit = best + z * z * best / (double)(b - a - 2);
        for (size_t j = a + 1; j < b; j++)
            if (rss(s1, s2, a, j) + rss(s1, s2, j, b) <= limit) {
                lo = j < lo ? j : lo;
                hi = j > hi ? j : hi;
            }
        cp->index_lower = lo;
        cp->index_upper = hi;
    }
}

/* Mann-Kendall and Theil-Sen over y[0..n) (n >= 3) into *t, one of `series` tests
 * (Bonferroni: p_adjusted, and Sen's interval at 1 - alpha / series). -1 when memory runs out. */
static int trend(const double *y, size_t n, double alpha, double series, bench__trend *t)
{
    size_t npairs = n * (n - 1) / 2, k = 0;
    double *slopes = malloc(npairs * sizeof *slopes), *work = malloc(n * sizeof *work);
    if (!slopes || !work) {
        free(slopes);
        free(work);
        return -1;
    }
    double s = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double d = y[j] - y[i];
            s += (d > 0) - (d < 0);
            slopes[k++] = d / (double)(j - i);
        }
    double dn = (double)n, var = dn * (dn - 1) * (2 * dn + 5) / 18;
    /* Continuity-corrected normal approximation of S (ties ignored: medians are continuous). */
    double z = s == 0 ? 0 : (s - (s > 0 ? 1 : -1)) / sqrt(var);
    t->p = erfc(fabs(z) / sqrt(2));
    t->p_adjusted = fmin(1, t->p * series);
    qsort(slopes, npairs, sizeof *slopes, cmp_double);
    double slope = bench__quantile_sorted(slopes, npairs, 0.5);
    /* Sen's interval: the slopes of ranks (N -+ C) / 2, C = z(1 - alpha/2) sqrt(Var S). */
    double c = bench__norm_quantile(1 - alpha / series / 2) * sqrt(var);
    double lo = floor(((double)npairs - c) / 2), hi = ceil(((double)npairs + c) / 2);
    lo = fmax(0, fmin(lo, (double)npairs - 1));
    hi = fmax(0, fmin(hi, (double)npairs - 1));
    t->per_point = expm1(slope);
    t->lower = expm1(slopes[(size_t)lo]);
    t->upper = expm1(slopes[(size_t)hi]);
    t->points = n;
    for (size_t i = 0; i < n; i++)
        work[i] = y[i] - slope * (double)i;
    t->start = bench__median_inplace(work, n);
    free(slopes);
    free(work);
    return 0;
}

/* Prefix sums *s1, *s2 (n + 1 each, caller frees) of logs[i] - logs[0] and of its square;
 * -1 when memory runs out. */
static int prefix_sums(const double *logs, size_t n, double **s1, double **s2)
{
    *s1 = malloc((n + 1) * sizeof **s1);
    *s2 = malloc((n + 1) * sizeof **s2);
    if (!*s1 || !*s2) {
        free(*s1);
        free(*s2);
        return -1;
    }
    /* Centred first, so the sums of squares keep their precision (logs of ns are ~10 while
     * the noise is ~0.01). */
    (*s1)[0] = (*s2)[0] = 0;
    for (size_t i = 0; i < n; i++) {
        double y = logs[i] - logs[0];
        (*s1)[i + 1] = (*s1)[i] + y;
        (*s2)[i + 1] = (*s2)[i] + y * y;
    }
    return 0;
}

/* The series with its lone outliers clipped (bench__cp_clip_outliers, the newest run too when
 * `newest`) into *y (malloc'd; NULL: not kept), and its prefix sums. 0, or -1 when out of
 * memory (nothing allocated then). */
static int clipped_sums(const double *logs, size_t n, bool newest, double **y, double **s1,
                        double **s2)
{
    double *c = malloc(n * sizeof *c);
    if (!c)
        return -1;
    bench__cp_clip_outliers(logs, n, newest, c);
    int rc = prefix_sums(c, n, s1, s2);
    if (rc != 0 || !y)
        free(c);
    else
        *y = c;
    return rc;
}

int bench__cp_newest_step(const double *logs, size_t n, double alpha, double tests,
                          bench__cp *out)
{
    if (!out || !logs || n < 3 || !(alpha > 0 && alpha < 1) || !(tests >= 1))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(logs[i]))
            return -1;
    double *s1, *s2;
    if (clipped_sums(logs, n, false, NULL, &s1, &s2) != 0)
        return -1;
    /* The newest point is a side of its own: the spread comes from the earlier points alone. */
    split s = test_split(s1, s2, 0, n - 1, n);
    *out = make_cp(&s, alpha / tests, fmin(1, s.p * tests));
    free(s1);
    free(s2);
    return 0;
}

int bench__changepoints(const double *logs, size_t n, double alpha, double series,
                        bench__cp_result *out)
{
    if (!out || (n > 0 && !logs) || !(alpha > 0 && alpha < 1) || !(series >= 1))
        return -1;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(logs[i]))
            return -1;
    if (n < 3)
        return 0;
    double *s1, *s2, *y;
    if (clipped_sums(logs, n, true, &y, &s1, &s2) != 0)
        return -1;
    logs = y; /* from here on, the runs with lone outliers set to their neighbours' median */
    double centre = logs[0];
    segment(s1, s2, n, alpha, out);
    locate(s1, s2, n, alpha, out);
    /* The trend over the newest points, and whether a line fits them as well as the steps. */
    size_t first = n > BENCH__TREND_MAX_POINTS ? n - BENCH__TREND_MAX_POINTS : 0;
    int rc = trend(logs + first, n - first, alpha, series, &out->trend);
    if (rc == 0 && out->trend.p_adjusted < alpha) {
        double slope = log1p(out->trend.per_point), rss_line = 0, rss_steps = 0;
        for (size_t i = first; i < n; i++) {
            double r = logs[i] - out->trend.start - slope * (double)(i - first);
            rss_line += r * r;
        }
        size_t a = 0;
        for (size_t c = 0; c <= out->ncp; c++) {
            size_t b = c < out->ncp ? out->cp[c].index : n;
            double mean = (s1[b] - s1[a]) / (double)(b - a);
            for (size_t i = a; i < b; i++) {
                double r = logs[i] - centre - mean;
                if (i >= first)
                    rss_steps += r * r;
            }
            a = b;
        }
        if (out->ncp == 0 || rss_line <= rss_steps) {
            out->trend.found = true;
            out->nabsorbed = out->ncp;
            out->ncp = 0;
        }
    }
    free(s1);
    free(s2);
    free(y);
    return rc;
}

int bench__cp_place(const double *logs, size_t n, double alpha, bench__cp_result *r, size_t c,
                    size_t index)
{
    if (!logs || !r || c >= r->ncp || r->ncp > BENCH__CP_MAX || !(alpha > 0 && alpha < 1))
        return -1;
    size_t a = c > 0 ? r->cp[c - 1].index : 0, b = c + 1 < r->ncp ? r->cp[c + 1].index : n;
    if (b > n || !(a < index && index < b) || b - a < 3)
        return -1;
    double *s1, *s2;
    if (clipped_sums(logs, n, true, NULL, &s1, &s2) != 0) /* bench__changepoints' series */
        return -1;
    split s = test_split(s1, s2, a, index, b);
    /* The same Bonferroni factor as segment()'s: the split was chosen by the search first. */
    r->cp[c] = make_cp(&s, alpha, fmin(1, s.p * splits(n)));
    free(s1);
    free(s2);
    return 0;
}
