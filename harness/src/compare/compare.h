/*
 * compare.h: the change test between two runs (see compare.c for the model and the verdicts).
 * Pure functions: no I/O, no globals.
 */
#ifndef HARNESS_COMPARE_H
#define HARNESS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "stats/stats.h"
#include "sys/context.h"
#include "compare/verdict.h"

/*
 * Defaults measured on the development machine (docs/comparison.md gives the numbers):
 * between-process spread of a benchmark's median was 1-3.5% (coefficient of variation), so a
 * change below 2% cannot be told from a change of machine state between two separate runs and
 * is never reported as a regression; an uncalibrated benchmark is assumed to vary 1.5% (sd of
 * ln median) from run to run.
 */
#define BENCH__DEFAULT_NOISE_THRESHOLD 0.02
/* The level of a whole comparison (--significance-level). */
#define BENCH__DEFAULT_SIGNIFICANCE_LEVEL 0.05
#define BENCH__DEFAULT_RUN_NOISE 0.015
/* Interleaving cancels the machine's drift between runs: 1% is the default threshold there. */
#define BENCH__DEFAULT_AB_NOISE_THRESHOLD 0.01

/*
 * A calibration spans a few minutes and may see less spread than the machine shows over longer
 * spans: with its point estimate, 2 of 30 A/A comparisons against a calibrated baseline flagged a
 * steady benchmark that had drifted by several percent. So a calibration only ever raises the
 * noise the test assumes above the uncalibrated default (BENCH__DEFAULT_RUN_NOISE).
 */

/** One side of a comparison: a run's median time per iteration and its uncertainty. */
typedef struct bench__side {
    double median;      /* ns per iteration */
    double lower;       /* bootstrap CI of the median, ns */
    double upper;
    double se_log;      /* standard error of ln(median): within the run, or over processes */
    bench__noise noise; /* calibrated between-run noise; runs == 0 when none */
    /* Worker processes the side was measured in; with 2 or more, median is the geometric
     * mean of the per-process medians and se_log comes from their spread (processes - 1
     * degrees of freedom), so it already holds the between-process noise. */
    unsigned processes;
    /* With 2 or more processes: their speed groups (bench__find_modes over the logs of the
     * per-process medians). */
    bench__modes modes;
} bench__side;

/**
 * Decides whether one benchmark can be compared by its numbers. `old` and `cur` are its status
 * on each side, NULL where that side lacks it. Returns true when both are ok; otherwise sets
 * *status: skipped when either side skipped it, else new when only the old side lacks it,
 * removed when only the current side lacks it, not compared when a side failed.
 */
bool bench__comparable(const bench__status *old, const bench__status *cur,
                       bench__verdict *status);

typedef struct bench__compare_opts {
    double significance_level; /* alpha, over the whole comparison (Bonferroni) */
    double noise_threshold;    /* T: smallest relative change worth reporting */
    double default_run_noise;  /* sigma_b when the old side is not calibrated */
    /* The machine's drift between the two runs as the drift canaries measured it (a log ratio
     * taken as an sd, bench__canaries_shared_drift), when drift_known (both sides have canaries):
     * in a comparison of two process-measured sides it stands for that drift instead of
     * default_run_noise. Left zero, the default stands. */
    bool drift_known;
    double drift_sd;
    bool drift_from_suite; /* drift_sd is bench__suite_drift's (set by bench__compare_all) */
    /* The changes are of exact counts (--instructions: no test, no interval): the summary
     * gives old -> new per row and the threshold, and no sentences or drift notes. */
    bool exact;
} bench__compare_opts;

/*
 * The drift between two runs as the benchmarks themselves show it: the delta for which the
 * median over benchmarks of D_i^2 / (se_old_i^2 + se_new_i^2 + delta^2) equals the median of a
 * chi-square with one degree of freedom (0.4549), i.e. how much more the benchmarks moved
 * between the runs than their processes vary within each run; 0 when they moved no more than
 * that. Only benchmarks measured in at least 2 processes on both sides (and not calibrated)
 * count; with fewer than BENCH__SUITE_DRIFT_MIN of them, returns NaN (too few to tell). The
 * median makes it robust: fewer than half the benchmarks changing cannot inflate it.
 */
#define BENCH__SUITE_DRIFT_MIN 5
double bench__suite_drift(const bench__side *old, const bench__side *cur, size_t n);

/** The outcome for one benchmark. Ratios are new / old. */
typedef struct bench__change {
    bench__verdict verdict;
    double old_median;  /* ns per iteration (the calibrated reference when calibrated) */
    double new_median;  /* ns per iteration */
    double ratio;       /* point estimate of new / old */
    double ratio_lower; /* 1 - alpha interval of the ratio, run-to-run noise included */
    double ratio_upper;
    double log_change;  /* D = ln(new) - ln(old) */
    double log_se;      /* standard error of D */
    double p;           /* two-sided p of H0: no change */
    double p_adjusted;  /* p times `tests` (at most 1): below alpha exactly when the interval
                         * excludes 0 */
    double tests;       /* the Bonferroni factor the interval's level divides alpha by:
                         * benchmarks compared, times looks of a sequential design */
    double mde;         /* minimum detectable effect (relative, e.g. 0.012): the true change
                         * this comparison would call regressed with 80% power */
    double run_noise;   /* sigma_b used (sd of ln median between runs) */
    double df;          /* degrees of freedom of the reference t (infinite: normal) */
    bool calibrated;    /* sigma_b came from calibration */
    bool drift_measured; /* sigma_b is the drift the canaries measured between the runs */
    bool interleaved;    /* an interleaved A/B: run_noise is the pair-to-pair sd of ln(B/A) */
    bool drift_from_suite; /* ... and it came from bench__suite_drift, larger than the canaries' */
    /* How a saved-baseline verdict was settled beyond the saved numbers (cli.c): by an
     * interleaved run against the baseline's program snapshot, or because the program is the
     * very one the baseline measured (any change is then the machine's, not the code's). */
    bool confirmed;
    bool same_program;
    /* The benchmark's code identity (its code_hash) is the same on both sides: a change the
     * numbers show is placement's or the machine's, not the code's (bench__verdict_same_code). */
    bool same_code;
    /* Speed groups (bench__find_modes): both sides had two, and D compares group with group (the
     * mean of the two groups' logs on each side, so the share of processes that landed in each
     * group is no change); or the sides have different numbers of groups, and D is over all
     * processes. */
    bool modes_compared;
    bool modes_differ;
    /* The metric whose change this verdict is (--instructions: "instructions", its numbers in
     * the result's metric_changes); NULL: the time's. */
    const char *metric;
} bench__change;

/** Most bootstrap draws (samples x resamples) one comparison side may cost (about 0.3 s). */
#define BENCH__COMPARE_MAX_DRAWS (1u << 25)

/**
 * A comparison side from raw samples: the median and its bootstrap interval at `level`; when
 * n x nresamples exceeds BENCH__COMPARE_MAX_DRAWS, the order-statistic interval of the median
 * instead (same coverage, O(n log n)), so a file of huge entries cannot stall a comparison.
 */
int bench__side_from_samples(const double *iters, const double *totals, size_t n,
                             size_t nresamples, double level, uint64_t seed, bench__side *out);

/**
 * A comparison side from samples measured in p >= 2 worker processes (process[i] is sample i's):
 * the two-level estimate of bench__process_estimate. Returns 0, or -1 (see there).
 */
int bench__side_from_processes(const double *iters, const double *totals,
                               const uint32_t *process, size_t n, unsigned p, double level,
                               bench__side *out);

/**
 * Fills a side's median, interval and se_log from a median estimate whose interval is at
 * `level` (the noise field is left as it is).
 */
void bench__side_from_estimate(const bench__estimate *median, double level, bench__side *out);

/**
 * The between-run noise a calibration gives the test: the 90% upper confidence bound of its sd
 * (runs >= 2), and never less than `floor`.
 */
double bench__noise_used(const bench__noise *n, double floor);

/** Compares one benchmark, as if it were compared alone (tests = 1). */
void bench__compare_one(const bench__side *old, const bench__side *cur,
                        const bench__compare_opts *o, bench__change *c);

/** Compares n benchmarks, each interval at the family level 1 - alpha/m (m: those compared),
 * after the suite's own drift (bench__suite_drift) widened them. 0 or -1 (memory). */
int bench__compare_all(const bench__side *old, const bench__side *cur, size_t n,
                       const bench__compare_opts *o, bench__change *out);

#endif /* HARNESS_COMPARE_H */
