/*
 * stats.h: the statistics of the harness, as pure functions over arrays.
 *
 * No I/O, no globals, no allocation hidden from the caller except where a function says it
 * allocates. Every function is deterministic: randomness comes from an explicit bench__rng whose
 * seed the caller chooses, so the same samples and seed give the same intervals.
 *
 * Conventions: quantiles use linear interpolation between order statistics (Hyndman & Fan type 7,
 * R's default); the standard deviation is the sample one (n - 1); the MAD is scaled by 1.4826 so
 * that it estimates the standard deviation of normal data.
 */
#ifndef HARNESS_STATS_H
#define HARNESS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** xoshiro256** state, seeded through splitmix64. */
typedef struct bench__rng {
    uint64_t s[4];
} bench__rng;

/** Seeds the generator; any 64-bit seed (0 included) gives a valid state. */
void bench__rng_seed(bench__rng *r, uint64_t seed);
/** Next 64 random bits. */
uint64_t bench__rng_next(bench__rng *r);
/** Uniform integer in [0, bound) without modulo bias (Lemire's method); bound > 0. */
uint64_t bench__rng_below(bench__rng *r, uint64_t bound);
/** Uniform double in [0, 1) with 53 random bits. */
double bench__rng_uniform(bench__rng *r);

/** Arithmetic mean of x[0..n); NaN when n == 0. */
double bench__mean(const double *x, size_t n);
/** Sample standard deviation (divisor n - 1); 0 when n < 2. */
double bench__std_dev(const double *x, size_t n);
/** Quantile p in [0, 1] of an already sorted array (type 7); NaN when n == 0. */
double bench__quantile_sorted(const double *sorted, size_t n, double p);
/** Median of x[0..n); reorders x (partial selection). NaN when n == 0. */
double bench__median_inplace(double *x, size_t n);
/** Median absolute deviation times 1.4826, about `center`; reorders x's copy `work` (size n). */
double bench__mad(const double *x, size_t n, double center, double *work);
/** Sorts x[0..n) ascending. */
void bench__sort(double *x, size_t n);

/** Least-squares slope of y = b*x through the origin; NaN when sum(x^2) == 0. */
double bench__ols_slope(const double *x, const double *y, size_t n);
/**
 * Coefficient of determination of the through-origin fit y = b*x: 1 - SSres / sum(y^2).
 * Through the origin the total sum of squares is uncentred; using the centred one (as for a fit
 * with intercept) gives a wrong, possibly negative, value. NaN when sum(y^2) == 0.
 */
double bench__r2_origin(const double *x, const double *y, size_t n, double slope);

/** Tukey's fences and the counts of samples outside them. */
typedef struct bench__outliers {
    double low_severe_fence;  /* Q1 - 3 IQR */
    double low_mild_fence;    /* Q1 - 1.5 IQR */
    double high_mild_fence;   /* Q3 + 1.5 IQR */
    double high_severe_fence; /* Q3 + 3 IQR */
    size_t low_severe;        /* x < Q1 - 3 IQR */
    size_t low_mild;          /* Q1 - 3 IQR <= x < Q1 - 1.5 IQR */
    size_t high_mild;         /* Q3 + 1.5 IQR < x <= Q3 + 3 IQR */
    size_t high_severe;       /* x > Q3 + 3 IQR */
} bench__outliers;

/** Classifies x[0..n) with Tukey's fences; `work` is scratch of size n. */
void bench__tukey(const double *x, size_t n, double *work, bench__outliers *out);

/**
 * Distribution-free confidence interval for the median from order statistics (binomial, normal
 * approximation for the ranks). `sorted` is ascending. Writes the bounds; returns 0, or -1 when
 * n is too small for the level (the interval then spans the whole sample).
 */
int bench__median_ci_sorted(const double *sorted, size_t n, double level, double *lo, double *hi);

/** Standard normal quantile (Acklam's rational approximation, |error| < 1.2e-9). */
double bench__norm_quantile(double p);

/** A point estimate with its confidence interval. */
typedef struct bench__estimate {
    double point;
    double lower;
    double upper;
} bench__estimate;

/** The estimates the runner reports for one benchmark; all per iteration, in the sample unit. */
typedef struct bench__estimates {
    bench__estimate mean;
    bench__estimate median;
    bench__estimate std_dev;
    bench__estimate mad;
    bench__estimate slope; /* OLS through the origin over (iterations, sample total) */
    double r2;             /* of the slope fit, uncentred */
    double min;            /* the fastest sample's time per iteration (no interval) */
} bench__estimates;

/**
 * Point estimates and percentile-bootstrap intervals at `level` from `nresamples` resamples of
 * the n samples (iters[i], totals[i]). Resampling picks whole samples (pairs), so the slope's
 * interval respects the pairing. Returns 0, or -1 on bad arguments or allocation failure.
 */
int bench__bootstrap(const double *iters, const double *totals, size_t n, size_t nresamples,
                     double level, uint64_t seed, bench__estimates *out);

/**
 * Speed groups ("modes") among n values, the logs of per-process medians: real code can sit in
 * two speed states across processes (a cJSON parse alternated 0.72x / 1.28x), and then their
 * mean is a speed no process ran at. Two groups are reported when the widest gap between sorted
 * neighbours (at least 2 values on each side) exceeds the 99.9% quantile that gap reaches, in
 * units of the pooled sd within the two sides, among n normal values (a table simulated for n
 * = 6 .. 40; beyond 40 the value for 40), and the groups' means differ by at least
 * BENCH__MODE_MIN_GAP. Fewer than 6 values: one group.
 */
#define BENCH__MODE_MIN_GAP 0.05
typedef struct bench__modes {
    unsigned groups;   /* 1, or 2 */
    unsigned count[2]; /* values in the lower and the upper group (count[0] = n with one) */
    double mean[2];    /* mean of each group's values */
    double sd;         /* sd within the groups, pooled (with one group: of all values) */
} bench__modes;
void bench__find_modes(const double *x, size_t n, bench__modes *out);

/**
 * What the spread between p processes can be blamed on, from what each process recorded:
 * logs[j] the log of process j's median, cpu[j] the CPU it ran on (-1: unknown), faults[j] its
 * page faults (NAN: unknown). A cause is named only when measured:
 *   by_cpu     the processes of two CPUs (at least 2 each) differ by at least 3% with a Welch t
 *              above 4: cpu_slow ran slower than cpu_fast by cpu_ratio - 1;
 *   by_faults  with at least 6 processes whose faults differ by at least 10%, the rank correlation
 *              of faults and times is at least 0.8: more faults, slower.
 */
typedef struct bench__spread_cause {
    bool by_cpu;
    int cpu_fast, cpu_slow;
    double cpu_ratio; /* slow / fast */
    bool by_faults;
    double faults_rho; /* Spearman's rank correlation */
} bench__spread_cause;
void bench__spread_cause_find(const double *logs, const int *cpu, const double *faults, size_t p,
                              bench__spread_cause *out);

/**
 * The two-level estimate of a benchmark measured in p processes: the median of each process's
 * per-iteration times, then their geometric mean with a Student t interval at `level` over the logs
 * of those medians (p - 1 degrees of freedom), so that the spread between processes, not only the
 * samples of one, sets the width. process[i] (< p) is sample i's process. Writes the estimate, the
 * coefficient of variation of the process medians (*cv), and the standard deviation of their
 * natural logs (*log_sd). Returns 0; -1 when p < 2, a process has no sample, or memory runs out.
 * The simulation in tests/unit/test_process_stats.c checks its coverage.
 */
int bench__process_estimate(const double *iters, const double *totals, const uint32_t *process,
                            size_t n, unsigned p, double level, bench__estimate *out, double *cv,
                            double *log_sd);

/**
 * The variance of each of p processes' log median from its own samples, the part of the spread
 * between processes that sampling inside them adds: (pi / 2) x s^2 over their count (the
 * large-sample variance of a median), s the scaled MAD of the logs of the per-iteration times
 * (robust, like the median: a sample stretched by a preemption does not count). out[j] is NAN
 * for a process with fewer than 3 samples. Returns 0; -1 when memory runs out or a time is not
 * positive.
 */
int bench__process_within(const double *iters, const double *totals, const uint32_t *process,
                          size_t n, unsigned p, double *out);

/** The shares of its measurement time a later process may take, longest first (the last is
 * the shortest). */
#define BENCH__PROCESS_SHARES 1.0, 0.5, 0.25

/**
 * The two-stage rule of a benchmark measured in worker processes (docs/measurement.md, "When
 * sampling stops in worker processes"): from the first k processes, the share of its
 * measurement time each later process takes. logs[j] is process j's log median, within[j] its
 * variance from its own samples (bench__process_within). The spread between the k medians is
 * s2 = var(logs); their mean within variance w. The shortest share f of BENCH__PROCESS_SHARES
 * with w x (1/f - 1) <= growth x s2 is taken: shorter processes add at most `growth` to the
 * variance of a process median, so the interval over processes widens by at most about
 * growth / 2, while every benchmark keeps all its processes. A Stein-type first stage: the
 * share depends only on the k processes' spreads, never on where their medians lie. 1 when k <
 * 2, a within variance is unknown, or the spread is 0 or not finite.
 */
double bench__process_share(const double *logs, const double *within, unsigned k, double growth);

/**
 * The natural log of each of p processes' median per-iteration time into out[0..p). Returns 0;
 * -1 when a process has no sample or a zero median, or memory runs out.
 */
int bench__process_log_medians(const double *iters, const double *totals,
                               const uint32_t *process, size_t n, unsigned p, double *out);

/**
 * The median of the n samples' time per iteration and its percentile-bootstrap interval at
 * `level`: exactly the median estimate of bench__bootstrap with the same arguments, without the
 * other statistics' cost. Returns 0, or -1 on bad arguments or allocation failure.
 */
int bench__bootstrap_median(const double *iters, const double *totals, size_t n,
                            size_t nresamples, double level, uint64_t seed, bench__estimate *out);

/* Distributions (stats.c). */
/** Chi-square quantile (Wilson-Hilferty approximation), p in (0,1), k > 0 degrees. */
double bench__chi2_quantile(double p, double k);
/** Regularised incomplete beta function I_x(a, b). */
double bench__beta_inc(double a, double b, double x);
/** Two-sided p-value of Student's t with df degrees of freedom (normal when df is infinite). */
double bench__t_two_sided_p(double t, double df);
/** Quantile p of Student's t with df degrees of freedom (normal when df is infinite). */
double bench__t_quantile(double p, double df);

/* ---- asymptotic complexity over a parameter sweep (stats.c) ---- */

/** The growth classes a sweep is fitted with, as Google Benchmark names them. */
typedef enum bench__big_o {
    BENCH__O_1 = 0,
    BENCH__O_LOG_N,
    BENCH__O_N,
    BENCH__O_N_LOG_N,
    BENCH__O_N2,
    BENCH__O_N3,
} bench__big_o;
#define BENCH__NBIG_O (BENCH__O_N3 + 1)

/**
 * When a class is named (docs/measurement.md#complexity): its relative residuals' rms is at most
 * BENCH__COMPLEXITY_MAX_RMS, the next best class's is at least BENCH__COMPLEXITY_MARGIN times
 * it, and the sweep has at least BENCH__COMPLEXITY_MIN_POINTS parameters. Otherwise no class
 * fits, and the output says so with the best one's rms: a sweep across cache levels fitted
 * "O(N log N)" at 22% rms over 3 parameters, which no class describes.
 */
#define BENCH__COMPLEXITY_MAX_RMS 0.05
#define BENCH__COMPLEXITY_MARGIN 1.5
#define BENCH__COMPLEXITY_MIN_POINTS 4

/** Each class fitted to a sweep, the one that fits best, and whether it is named. */
typedef struct bench__complexity {
    bench__big_o best;                 /* the class with the smallest rms */
    bench__big_o next;                 /* the class with the second smallest rms */
    bool named;                        /* best passes the rule above: a class fits */
    char why_not[96];                  /* when !named, which part of the rule failed */
    double coefficient[BENCH__NBIG_O]; /* c of t = c f(N), ns per unit of f */
    double rms[BENCH__NBIG_O];         /* root mean square of (t - c f(N)) / t */
} bench__complexity;

/** "O(1)", "O(log N)", "O(N)", "O(N log N)", "O(N^2)", "O(N^3)". */
const char *bench__big_o_name(bench__big_o o);
/** f(n) of class o (log base 2; f of O(1) is 1). */
double bench__big_o_f(bench__big_o o, double n);
/**
 * Fits t[i] (ns per iteration at parameter n[i], k of them) with each class through the
 * origin, t = c f(n), by least squares of the relative residuals (t - c f(n)) / t, and picks the
 * class whose relative residuals have the smallest root mean square; names it (named) only when
 * it passes the rule of BENCH__COMPLEXITY_MAX_RMS and its kin, else says why not. Needs k >= 3 points with
 * n > 1 and t > 0, at least two distinct n: else -1 (out untouched). 0 otherwise.
 */
int bench__complexity_fit(const double *n, const double *t, size_t k, bench__complexity *out);

#endif /* HARNESS_STATS_H */
