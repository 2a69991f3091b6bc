/*
 * changepoint.h: change points and trends in a series of run medians (the run history,
 * history.c; docs/results-format.md). Pure functions over arrays, like stats.h: no I/O, no
 * globals, deterministic.
 *
 * The series is the natural log of each run's median time per iteration, oldest first. Change
 * points are found by binary segmentation: in a segment, every split that leaves at least
 * BENCH__CP_MIN_SEGMENT runs on each side is tested with Student's t-test (variance pooled over
 * the two sides) on the log medians; the best split counts when its p-value times the number
 * of splits the whole series has (Bonferroni) is below alpha, and then both sides are searched
 * again. A series of pure noise therefore reports a change point with probability at most
 * about alpha (per series). Where a change point is, is uncertain by a run or more: its
 * location interval holds every split between its neighbouring change points whose residual
 * sum of squares is within z(1 - alpha/2)^2 residual variances of the best split's (the
 * likelihood-ratio set of the split under normal noise), widened to at least one point on
 * either side of it. A steady drift is told apart from steps: when the Mann-Kendall test finds
 * a monotonic trend (its p times the series tested together below alpha) and a straight line
 * (Theil-Sen) fits the series at least as well as the steps found (residual sum of squares),
 * the series is reported as a trend and its steps are dropped. The trend test is one per
 * series, so over the series tested together it is corrected by Bonferroni: unchanged series
 * show a trend in any of them at rate about alpha.
 */
#ifndef HARNESS_CHANGEPOINT_H
#define HARNESS_CHANGEPOINT_H

#include <stdbool.h>
#include <stddef.h>

/** Fewest runs on each side of a change point. */
#define BENCH__CP_MIN_SEGMENT 5
/** Most change points reported for one series. */
#define BENCH__CP_MAX 32
/** The trend is estimated over the newest this many points (Theil-Sen takes all pairs). */
#define BENCH__TREND_MAX_POINTS 1000

/** One change point. */
typedef struct bench__cp {
    size_t index;       /* the first point after the change (0-based) */
    size_t index_lower; /* where the change may be: the first point after it is one of */
    size_t index_upper; /* index_lower..index_upper (bench__changepoints says how) */
    double step;        /* relative change of the median: exp(mean after - mean before) - 1 */
    double step_lower;  /* its 1 - alpha t interval, relative */
    double step_upper;
    double p_adjusted;  /* t-test p times the splits of the series (at most 1) */
} bench__cp;

/** A monotonic trend. */
typedef struct bench__trend {
    bool found;         /* p_adjusted < alpha and a line fits as well as the steps */
    double per_point;   /* relative change per point: exp(Theil-Sen slope of the logs) - 1 */
    double lower;       /* its 1 - alpha / series interval (Sen's), relative per point */
    double upper;
    double p;           /* Mann-Kendall two-sided p (normal approximation) */
    double p_adjusted;  /* p times the series tested (Bonferroni), at most 1 */
    double start;       /* the line's log at the first of its points (exp: ns per iteration) */
    size_t points;      /* points it was estimated over (the newest ones) */
} bench__trend;

/** What a series holds. */
typedef struct bench__cp_result {
    size_t ncp;                  /* change points, by index */
    bench__cp cp[BENCH__CP_MAX];
    size_t nabsorbed;            /* steps found but explained by the trend (not in cp) */
    bench__trend trend;
} bench__cp_result;

/**
 * Finds the change points and trend of logs[0..n) (natural logs of run medians, oldest first)
 * at level alpha (0 < alpha < 1) into *out, the series one of `series` (>= 1) whose trends are
 * tested together: the trend counts when its p times `series` (Bonferroni) is below alpha, and
 * its interval is at 1 - alpha / series, so the chance of a trend in any of them where none
 * is stays about alpha (the change points are already held to alpha within the series by
 * their Bonferroni over its splits). Returns 0, or -1 on bad arguments or when memory runs out.
 * Fewer than 2 * BENCH__CP_MIN_SEGMENT points have no change point; fewer than 3, no trend.
 */
int bench__changepoints(const double *logs, size_t n, double alpha, double series,
                        bench__cp_result *out);

/**
 * Places change point c of r (found by bench__changepoints over the same logs[0..n) at the same
 * alpha) at `index` instead, where the change is known to be (a program change a paired run
 * confirmed): its step, interval and p are those of the split at `index` between its
 * neighbouring change points (or the ends of the series), and its location interval is that
 * one point. Returns 0, or -1 on bad arguments (index not strictly between the neighbours, fewer
 * than 3 points between them) or when memory runs out.
 */
int bench__cp_place(const double *logs, size_t n, double alpha, bench__cp_result *r, size_t c,
                    size_t index);

/**
 * Tests the newest point logs[n - 1] as a step against the earlier logs[0..n - 1) (n >= 3),
 * with the same pooled t-test as a change point (the spread is the earlier points'), one of
 * `tests` tests (Bonferroni): out->index is n - 1, out->p_adjusted is p times tests (at most
 * 1) and the step's interval is at level 1 - alpha / tests. Returns 0, or -1 on bad arguments
 * or when memory runs out.
 */
int bench__cp_newest_step(const double *logs, size_t n, double alpha, double tests,
                          bench__cp *out);

/**
 * The series logs[0..n) with each lone outlying run set to the median of the five runs around
 * it, into out[0..n): one further from that median than 6 robust sds of the run-to-run noise
 * (from successive differences) and than ln 1.1. Steps of three or more runs are kept. The
 * newest run is moved only when `newest` (then against the five newest runs). The change-point
 * and placing functions test this series with `newest`, the newest-step test without.
 */
void bench__cp_clip_outliers(const double *logs, size_t n, bool newest, double *out);

#endif /* HARNESS_CHANGEPOINT_H */
