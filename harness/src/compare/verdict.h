/*
 * verdict.h: where every verdict is decided (verdict.c has the rules). A caller passes numbers
 * in and gets a verdict out: a change's interval becomes regressed, improved, no change, within
 * noise or inconclusive; an exact count's change likewise; a suspect verdict between two
 * measurements of the same program becomes "not the code's"; a history window's newest run and
 * trend pass or fail the history gate; a paired run confirms a history step or not; a finished
 * comparison's verdicts give its exit code under the gate's flags; a benchmark's spread between
 * processes says how large a change a saved comparison of it can see. Printing any of them is
 * report/'s (or the mode's that drives it). Pure functions: no I/O, no globals.
 */
#ifndef HARNESS_VERDICT_H
#define HARNESS_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "stats/changepoint.h"

/* Defined in compare.h, which includes this header; the rules below take them by pointer. */
typedef struct bench__change bench__change;
typedef struct bench__compare_opts bench__compare_opts;

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

/**
 * A suspect verdict (regressed, improved, inconclusive) of times on a benchmark whose code
 * identity is the same on both sides (old_code, new_code: code hashes, NULL or "" unknown) is no
 * verdict on the code: it becomes "no change" marked same_code, its numbers kept for the reports
 * ("same code: measured X% slower"). An unknown identity on either side leaves it alone. Returns
 * whether it changed c.
 */
bool bench__verdict_same_code(bench__change *c, const char *old_code, const char *new_code);

/**
 * Whether a saved-numbers verdict of regressed or improved is clear enough to need no paired
 * confirmation: its whole interval lies beyond the threshold T by at least
 * BENCH__CLEAR_MARGIN times the largest run-to-run noise the comparison knows of (`noise`: a
 * log ratio, the largest of the drift term its interval allowed, the drift canaries' largest
 * movement and the default run-to-run noise; the caller takes the largest; the change's own
 * standard error, log_se, counts too when larger). Regressed: the
 * interval's lower end above (1 + T) e^(K noise); improved: its upper end below (1 - T)
 * e^(-K noise). Any other verdict, or a noise that is not a finite number >= 0, is never clear.
 * The caller decides first that the machine did not change (docs/comparison.md).
 */
#define BENCH__CLEAR_MARGIN 3.0
bool bench__verdict_clear(const bench__change *c, double threshold, double noise);

/**
 * Whether a sequential comparison may stop a benchmark as futile at a look: even at cap_pairs
 * pairs (what the budget left can still give it) its interval would straddle the threshold
 * band. `c` is the benchmark decided at this look (bench__decide: its log_change d and tests),
 * pair_sd the sd of its `pairs` pair values. The interval at the cap is projected from them:
 * half-width h = t(1 - alpha / (2 tests), cap_pairs - 1) pair_sd / sqrt(cap_pairs), centred
 * anywhere within d +- BENCH__FUTILITY_MARGIN pair_sd / sqrt(pairs) (where the estimate may still
 * move to). Futile when no such centre gives a decided verdict: above max(ln(1 + T), h)
 * (regressed), below min(ln(1 - T), -h) (improved), or within [ln(1 - T) + h, ln(1 + T) - h]
 * (no change, within noise). A decided verdict, a cap not beyond the pairs it has, or a spread
 * that is not a finite number, is never futile. The rule only ends a benchmark sooner as
 * inconclusive: it never makes a verdict, right or wrong.
 */
#define BENCH__FUTILITY_MARGIN 2.0
bool bench__verdict_futile(const bench__change *c, double pair_sd, size_t pairs,
                           double cap_pairs, const bench__compare_opts *o);

/**
 * Whether two program hashes name the very same program: both known (not empty) and equal.
 */
bool bench__same_program(const char *then_hash, const char *now_hash);

/**
 * Whether verdict v, between two measurements of the very same program (`same`), is the
 * machine's and not the code's: a suspect verdict (regressed, improved, inconclusive) of one
 * program measured twice.
 */
bool bench__verdict_machine_moved(bench__verdict v, bool same);

/**
 * A saved-baseline verdict of this very program, settled by that alone: a suspect verdict
 * (regressed, improved, inconclusive) becomes "no change", marked same_program; any other is
 * left as it is.
 */
void bench__verdict_settle_same(bench__change *c);

/** What makes a finished comparison fail (the gate's flags). */
typedef struct bench__gate {
    bool strict;               /* --baseline-strict: new and removed benchmarks are an error */
    bool fail_on_regression;   /* --fail-on-regression */
    bool fail_on_inconclusive; /* --fail-on-inconclusive: an undecided benchmark fails too */
} bench__gate;

/** Whether verdict v fails the comparison as undecided: inconclusive under
 * fail_on_inconclusive. */
bool bench__gate_undecided(const bench__gate *gate, bench__verdict v);

/** Whether verdict v breaks --baseline-strict (when set): a new or removed benchmark. */
bool bench__verdict_strict(bench__verdict v);

/**
 * The exit code of a finished comparison of n rows: BENCH_EXIT_REGRESSION for a regression when
 * fail_on_regression, or for an inconclusive row when fail_on_inconclusive; otherwise
 * BENCH_EXIT_USAGE when `strict` meets a new or removed row; else BENCH_EXIT_OK. Statuses
 * (skipped, not compared) never change it.
 */
int bench__gate_exit(const bench__change *ch, size_t n, const bench__gate *gate);

/** What the history gate makes of one benchmark's window of runs (bench__gate_window). */
typedef enum bench__gate_outcome {
    BENCH__GATE_PASSES = 0,
    BENCH__GATE_STEP_FAILS,  /* the newest run is a step above the others: a paired run of the
                              * programs either side may confirm it */
    BENCH__GATE_TREND_FAILS, /* a slowing trend beyond the threshold over the window */
} bench__gate_outcome;

/** What the history gate finds in one benchmark's window of runs (--history-gate). */
typedef struct bench__gate_result {
    bench__cp step;           /* the newest run against the earlier ones (bench__cp_newest_step) */
    bool step_fails;          /* step's interval above zero and step above the noise threshold */
    bool step_unsure;         /* step above the noise threshold, its interval not above zero */
    bench__trend trend;       /* over the whole window, at level alpha / tests */
    double trend_total;       /* trend.per_point compounded over the window's n - 1 steps */
    double trend_total_lower; /* trend.lower compounded likewise */
    bool trend_slows;         /* a trend was found and it is a slowdown */
    bool trend_fails;         /* trend_slows and trend_total_lower above the noise threshold */
    bench__gate_outcome outcome; /* a failing trend first, then a failing step, else passes */
} bench__gate_result;

/**
 * The history gate's judgement of logs[0..n) (n >= 3, oldest first, the newest last): the
 * newest point as a step against the others and the trend over all of them, one of `tests`
 * benchmarks judged (Bonferroni) at family level alpha, against noise_threshold (relative, as
 * --noise-threshold). A step fails when its interval is above zero and it is above the
 * threshold (a comparison's "regressed"); a trend fails when it slows and even the lower end of
 * its interval, compounded over the window, is above the threshold. Returns 0, or -1 on bad
 * arguments or when memory runs out.
 */
int bench__gate_window(const double *logs, size_t n, double noise_threshold, double alpha,
                       double tests, bench__gate_result *out);

/** Whether a history step that a paired run of the programs either side measured with verdict
 * v fails the gate: regressed, or inconclusive (the run could not clear it). */
bool bench__gate_paired_fails(bench__verdict v);

/** What a paired run of the programs either side of a history change point says of it. */
typedef enum bench__step_check {
    BENCH__STEP_CONFIRMED = 0, /* regressed or improved, the way the step went */
    BENCH__STEP_OTHER_WAY,     /* regressed or improved, the other way */
    BENCH__STEP_ALIKE,         /* no change or within noise: the step was not the code's */
    BENCH__STEP_UNDECIDED,     /* inconclusive, or not compared */
} bench__step_check;

/** The check of a history step of size `step` (a log change) by a paired comparison. */
bench__step_check bench__verdict_step_check(const bench__change *paired, double step);

/**
 * Whether a benchmark's spread between processes hides a change of the threshold from a saved
 * comparison: its processes' log medians spread by process_log_sd over `processes` (>= 2), two
 * runs like it compared over processes (Welch, 2 (processes - 1) degrees of freedom) as one of
 * `tests` benchmarks (Bonferroni; below 1: 1), at cmp's level and threshold (NULL: the defaults,
 * BENCH__DEFAULT_SIGNIFICANCE_LEVEL and BENCH__DEFAULT_NOISE_THRESHOLD). True when the change
 * the spread alone lets the test call with BENCH__MDE_POWER, (t(1 - alpha / 2 tests) +
 * t(power)) se, is above the threshold; false for no spread, or a spread small beside the
 * threshold. The comparison's minimum detectable effect (bench__mde) goes to *mde (INFINITY for
 * fewer than two processes).
 */
bool bench__spread_hides_changes(unsigned processes, double process_log_sd, double tests,
                                 const bench__compare_opts *cmp, double *mde);

/**
 * Whether a suite moved together: `same` of its n compared benchmarks changed the way of their
 * median log change med_log, at least three quarters of n (n >= 4), and that median lies beyond
 * the threshold (a drift of the machine more likely than n changes of the code).
 */
bool bench__verdict_moved_together(double med_log, size_t same, size_t n, double threshold);

#endif /* HARNESS_VERDICT_H */
