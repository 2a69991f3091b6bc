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

typedef enum bench__verdict {
    BENCH__V_REGRESSED = 0,
    BENCH__V_IMPROVED,
    BENCH__V_NO_CHANGE,
    BENCH__V_WITHIN_NOISE,
    BENCH__V_INCONCLUSIVE, /* the interval reaches beyond +-T and holds 0, or D is within T but
                            * the interval reaches beyond it: not decided */
    BENCH__V_INCOMPARABLE, /* a side has no usable estimate (zero or failed) */
    /* Statuses: nothing to compare, never an error and never a change of the exit code. */
    BENCH__V_SKIPPED, /* skipped in either run (no device, unsupported) */
    BENCH__V_NEW,     /* measured now; the baseline (or the old build) has no measurement */
    BENCH__V_REMOVED, /* selected in the baseline (or the old build); absent from this program */
} bench__verdict;

/** Number of verdicts (for arrays indexed by verdict). */
#define BENCH__NVERDICTS (BENCH__V_REMOVED + 1)

/** Whether a verdict comes with numbers (ratio, interval, p): regressed ... inconclusive. */
bool bench__verdict_has_numbers(bench__verdict v);

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

/* ---- the verdict rules (verdict.c): every comparison's verdict is decided there ---- */

/** Power at which the minimum detectable effect is computed. */
#define BENCH__MDE_POWER 0.8

/**
 * Decides a change from D = ln(new/old) (`d`), its standard error `se` on `df` degrees of
 * freedom (INFINITY: normal) and the Bonferroni factor `tests` (>= 1): fills ratio, interval (at
 * 1 - alpha/tests), p, p_adjusted, tests, mde and the verdict (see verdict.c for the rules).
 * A d or se that is not a number gives "not compared". old_median and new_median are left alone.
 */
void bench__decide(bench__change *c, double d, double se, double df, double tests,
                   const bench__compare_opts *o);

/**
 * The minimum detectable effect of a comparison with standard error se on df degrees of freedom
 * at the family level alpha/tests: max(tau, t_crit se) + t_power se, as a relative change
 * (INFINITY when se is not finite).
 */
double bench__mde(double se, double df, double tests, const bench__compare_opts *o);

/**
 * A verdict that rests on saved numbers alone: regressed or improved becomes inconclusive unless
 * its whole interval lies beyond `drift` (the largest relative drift the machine showed since the
 * save), which could explain it otherwise.
 */
void bench__verdict_drift_guard(bench__change *c, double drift);

/**
 * Whether a saved-numbers verdict of regressed or improved is clear enough to need no paired
 * confirmation: its whole interval lies beyond the threshold T by at least
 * BENCH__CLEAR_MARGIN times the largest run-to-run noise the comparison knows of (`noise`: a
 * log ratio, the largest of the drift term its interval allowed, the drift canaries' largest
 * movement and the default run-to-run noise; the caller takes the largest). Regressed: the
 * interval's lower end above (1 + T) e^(K noise); improved: its upper end below (1 - T)
 * e^(-K noise). Any other verdict, or a noise that is not a finite number >= 0, is never clear.
 * The caller decides first that the machine did not change (docs/comparison.md).
 */
#define BENCH__CLEAR_MARGIN 3.0
bool bench__verdict_clear(const bench__change *c, double threshold, double noise);

/**
 * The verdict of an exact count per iteration that went from `old` to `cur` (--instructions):
 * regressed when it grew by more than `threshold` (relative), improved when it shrank by more,
 * else no change; not compared when old is not positive or either is not a number.
 */
bench__verdict bench__verdict_exact(double old, double cur, double threshold);

/**
 * Whether a change ln(new/old) lies beyond the noise threshold T in percent, as reports print
 * it: a ratio above 1 + T or below 1 - T (the band every verdict uses).
 */
bool bench__beyond_threshold(double log_change, double threshold);

/** Whether a verdict is decided: regressed, improved, no change or within noise. */
bool bench__verdict_decided(bench__verdict v);

/** Whether a saved-numbers verdict needs confirming: regressed, improved or inconclusive. */
bool bench__verdict_suspect(bench__verdict v);

/**
 * "regressed", "improved", "no change", "within noise", "inconclusive", "not compared", "skipped",
 * "new", "removed".
 */
const char *bench__verdict_name(bench__verdict v);

#endif /* HARNESS_COMPARE_H */
