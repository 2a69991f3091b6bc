/*
 * verdict.c: the one place where a comparison's numbers become a verdict. Every comparison (a
 * run against a saved baseline, an interleaved A/B of two builds, the interleaved run that
 * confirms a saved-baseline suspect, exact instruction counts) ends here; none holds a rule of
 * its own.
 *
 * The input is a change D = ln(new/old) with its standard error s on df degrees of freedom
 * (Student's t; infinite df: normal), and the number of tests the comparison makes (`tests`:
 * benchmarks compared, times the looks a sequential design takes at each). One interval, at the
 * family level 1 - alpha/tests (Bonferroni), gives everything, so no printed number can
 * contradict the verdict beside it:
 *   regressed     the interval lies above 0 and the estimate is more than T slower;
 *   improved      the interval lies below 0 and the estimate is more than T faster;
 *   no change     the interval lies inside +-T and holds 0;
 *   within noise  the interval lies inside +-T and excludes 0 (a real change smaller than T);
 *   inconclusive  anything else: the interval reaches beyond +-T and the data cannot say on
 *                 which side of it the change lies (measure longer, or confirm by interleaving).
 * +-T is in percent, as every report prints it: the ratio band [1 - T, 1 + T], so a printed
 * -1.97% lies beyond a printed 2.00% threshold and -1.99% inside it (in log space the band is
 * [ln(1 - T), ln(1 + T)], not symmetric). The exact rule of counts uses the same band.
 * "No change" is a claim that any change is smaller than T, so it needs an interval that says
 * so: an interval of [-74%, +35%] is inconclusive, never "no change". The p-value printed is the
 * same t statistic's, times `tests` (at most 1): below alpha exactly when the interval excludes 0.
 *
 * With each verdict goes the minimum detectable effect: the smallest true change that this
 * comparison, with its standard error, degrees of freedom and family level, calls regressed in
 * at least 80% of repetitions (BENCH__MDE_POWER). A "no change" is only as good as it.
 *
 * The other decisions that turn numbers into a verdict live here too, each beside the rule it
 * shares: a suspect verdict between two measurements of the same program is the machine's, not
 * the code's; the history gate's step and trend (the step by the rule of "regressed" above);
 * what a paired run says of a history step; the exit code of a finished comparison; and how
 * large a change a benchmark's spread between processes lets a saved comparison see.
 */
#include <math.h>
#include <string.h>

#include "compare/compare.h"
#include "compare/verdict.h"
#include "core/base.h"

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
    case BENCH__V_INCONCLUSIVE:
        return "inconclusive";
    case BENCH__V_INCOMPARABLE:
        return "not compared";
    case BENCH__V_SKIPPED:
        return "skipped";
    case BENCH__V_NEW:
        return "new";
    case BENCH__V_REMOVED:
        return "removed";
    }
    return "?";
}

bool bench__verdict_has_numbers(bench__verdict v)
{
    return v == BENCH__V_REGRESSED || v == BENCH__V_IMPROVED || v == BENCH__V_NO_CHANGE ||
           v == BENCH__V_WITHIN_NOISE || v == BENCH__V_INCONCLUSIVE;
}

bool bench__verdict_decided(bench__verdict v)
{
    return v == BENCH__V_REGRESSED || v == BENCH__V_IMPROVED || v == BENCH__V_NO_CHANGE ||
           v == BENCH__V_WITHIN_NOISE;
}

bool bench__verdict_suspect(bench__verdict v)
{
    return v == BENCH__V_REGRESSED || v == BENCH__V_IMPROVED || v == BENCH__V_INCONCLUSIVE;
}

bool bench__verdict_same_code(bench__change *c, const char *old_code, const char *new_code)
{
    /* The same machine code on both sides, placed elsewhere: what moved is where it sits (its
     * alignment against caches, branch predictors and the code that did not move) or the
     * machine, and no change of the code can be blamed for it. Counts (--instructions) are
     * not times: the code's data may still differ, and they are left alone. */
    if (!old_code || !new_code || !old_code[0] || strcmp(old_code, new_code) != 0 || c->metric ||
        !bench__verdict_suspect(c->verdict))
        return false;
    c->verdict = BENCH__V_NO_CHANGE;
    c->same_code = true;
    return true;
}

double bench__mde(double se, double df, double tests, const bench__compare_opts *o)
{
    if (!(se >= 0) || !isfinite(se))
        return INFINITY;
    double tau = log1p(o->noise_threshold);
    double tq = bench__t_quantile(1.0 - o->significance_level / (2.0 * tests), df);
    double tp = bench__t_quantile(BENCH__MDE_POWER, df);
    return expm1(fmax(tau, tq * se) + tp * se);
}

bool bench__beyond_threshold(double log_change, double threshold)
{
    return log_change > log1p(threshold) || log_change < log1p(-threshold);
}

/* The verdict an interval [lo, hi] around the estimate d gives (log scale, T the threshold). */
static bench__verdict from_interval(double d, double lo, double hi, double threshold)
{
    double up = log1p(threshold), down = log1p(-threshold); /* ln(1 + T), ln(1 - T) */
    if (lo > 0 && d > up)
        return BENCH__V_REGRESSED;
    if (hi < 0 && d < down)
        return BENCH__V_IMPROVED;
    if (lo >= down && hi <= up)
        return lo > 0 || hi < 0 ? BENCH__V_WITHIN_NOISE : BENCH__V_NO_CHANGE;
    return BENCH__V_INCONCLUSIVE;
}

void bench__decide(bench__change *c, double d, double se, double df, double tests,
                   const bench__compare_opts *o)
{
    if (!(tests >= 1))
        tests = 1;
    c->log_change = d;
    c->log_se = se;
    c->df = df;
    c->tests = tests;
    c->p = 1.0;
    c->p_adjusted = 1.0;
    if (!isfinite(d) || !(se >= 0)) {
        c->verdict = BENCH__V_INCOMPARABLE;
        c->ratio = c->ratio_lower = c->ratio_upper = NAN;
        c->mde = INFINITY;
        return;
    }
    double tq = bench__t_quantile(1.0 - o->significance_level / (2.0 * tests), df);
    double half = isfinite(se) ? tq * se : INFINITY;
    double lo = d - half, hi = d + half;
    c->ratio = exp(d);
    c->ratio_lower = exp(lo);
    c->ratio_upper = exp(hi);
    /* se == 0 (every process agreed exactly): any change other than 0 is certain, and 0 is no
     * evidence either way. */
    double t = se > 0 ? d / se : d == 0 ? 0.0 : copysign(INFINITY, d);
    c->p = isfinite(se) ? bench__t_two_sided_p(t, df) : 1.0;
    c->p_adjusted = fmin(1.0, c->p * tests);
    c->mde = bench__mde(se, df, tests, o);
    c->verdict = from_interval(d, lo, hi, o->noise_threshold);
}

void bench__verdict_drift_guard(bench__change *c, double drift)
{
    /* Saved numbers alone: a claimed change that the machine's own drift since the save could
     * explain is not a confident one. */
    if (!(drift > 0))
        return;
    if ((c->verdict == BENCH__V_REGRESSED && c->ratio_lower - 1.0 <= drift) ||
        (c->verdict == BENCH__V_IMPROVED && 1.0 - c->ratio_upper <= drift))
        c->verdict = BENCH__V_INCONCLUSIVE;
}

bool bench__verdict_clear(const bench__change *c, double threshold, double noise)
{
    if (!(noise >= 0) || !isfinite(noise))
        return false;
    /* The change's own standard error is noise the comparison knows of too: a run disturbed
     * enough to spread one benchmark's processes widely (+120% [+49%, +225%]) says nothing of
     * how far that benchmark drifted between the runs, however far its interval lies. */
    if (isfinite(c->log_se))
        noise = fmax(noise, c->log_se);
    double margin = BENCH__CLEAR_MARGIN * noise;
    if (c->verdict == BENCH__V_REGRESSED)
        return log(c->ratio_lower) >= log1p(threshold) + margin;
    if (c->verdict == BENCH__V_IMPROVED)
        return log(c->ratio_upper) <= log1p(-threshold) - margin;
    return false;
}

bool bench__verdict_futile(const bench__change *c, double pair_sd, size_t pairs,
                           double cap_pairs, const bench__compare_opts *o)
{
    if (bench__verdict_decided(c->verdict) || pairs < 2 || !(cap_pairs > (double)pairs) ||
        !isfinite(cap_pairs) || !(pair_sd >= 0) || !isfinite(pair_sd) ||
        !isfinite(c->log_change))
        return false;
    double tests = c->tests >= 1 ? c->tests : 1;
    double tq = bench__t_quantile(1.0 - o->significance_level / (2.0 * tests), cap_pairs - 1);
    double h = tq * pair_sd / sqrt(cap_pairs);
    double slack = BENCH__FUTILITY_MARGIN * pair_sd / sqrt((double)pairs);
    double a = c->log_change - slack, b = c->log_change + slack;
    double up = log1p(o->noise_threshold), down = log1p(-o->noise_threshold);
    /* Where a centre of the projected interval gives a verdict (from_interval's rules). */
    if (b > fmax(up, h) || a < fmin(down, -h))
        return false;
    double in_lo = down + h, in_hi = up - h;
    return !(in_lo <= in_hi && b >= in_lo && a <= in_hi);
}

bench__verdict bench__verdict_exact(double old, double cur, double threshold)
{
    /* Exact counts have no noise: the change itself against the threshold. */
    if (!(old > 0) || !isfinite(old) || !isfinite(cur))
        return BENCH__V_INCOMPARABLE;
    double ratio = cur / old;
    if (ratio - 1.0 > threshold)
        return BENCH__V_REGRESSED;
    if (1.0 - ratio > threshold)
        return BENCH__V_IMPROVED;
    return BENCH__V_NO_CHANGE;
}

/* ---- the same program measured twice ---- */

bool bench__same_program(const char *then_hash, const char *now_hash)
{
    return then_hash && now_hash && then_hash[0] && strcmp(then_hash, now_hash) == 0;
}

bool bench__verdict_machine_moved(bench__verdict v, bool same)
{
    return same && bench__verdict_suspect(v);
}

void bench__verdict_settle_same(bench__change *c)
{
    if (!bench__verdict_suspect(c->verdict))
        return;
    c->verdict = BENCH__V_NO_CHANGE;
    c->same_program = true;
}

/* ---- the exit code of a finished comparison ---- */

bool bench__gate_undecided(const bench__gate *gate, bench__verdict v)
{
    return gate->fail_on_inconclusive && v == BENCH__V_INCONCLUSIVE;
}

bool bench__verdict_strict(bench__verdict v)
{
    return v == BENCH__V_NEW || v == BENCH__V_REMOVED;
}

int bench__gate_exit(const bench__change *ch, size_t n, const bench__gate *gate)
{
    bool regressed = false, undecided = false, violated = false;
    for (size_t i = 0; i < n; i++) {
        regressed |= ch[i].verdict == BENCH__V_REGRESSED;
        undecided |= bench__gate_undecided(gate, ch[i].verdict);
        violated |= gate->strict && bench__verdict_strict(ch[i].verdict);
    }
    if ((gate->fail_on_regression && regressed) || undecided)
        return BENCH_EXIT_REGRESSION;
    return violated ? BENCH_EXIT_USAGE : BENCH_EXIT_OK;
}

/* ---- the history gate ---- */

int bench__gate_window(const double *logs, size_t n, double noise_threshold, double alpha,
                       double tests, bench__gate_result *out)
{
    if (!out || !(noise_threshold >= 0))
        return -1;
    memset(out, 0, sizeof *out);
    bench__cp_result cr;
    if (bench__cp_newest_step(logs, n, alpha, tests, &out->step) != 0 ||
        bench__changepoints(logs, n, alpha / tests, 1, &cr) != 0)
        return -1;
    /* The rule of a comparison's "regressed" (from_interval): the interval above zero and the
     * estimate above the noise threshold. */
    out->step_fails = out->step.step_lower > 0 && out->step.step > noise_threshold;
    /* A comparison's "inconclusive": slower beyond the threshold by the estimate, but the
     * earlier runs spread too wide to tell it from none. It passes, and says so. */
    out->step_unsure = !out->step_fails && out->step.step > noise_threshold;
    out->trend = cr.trend;
    double steps = (double)(n - 1);
    out->trend_total = expm1(steps * log1p(cr.trend.per_point));
    out->trend_total_lower = expm1(steps * log1p(cr.trend.lower));
    out->trend_slows = cr.trend.found && cr.trend.per_point > 0;
    out->trend_fails = out->trend_slows && out->trend_total_lower > noise_threshold;
    out->outcome = out->trend_fails  ? BENCH__GATE_TREND_FAILS
                   : out->step_fails ? BENCH__GATE_STEP_FAILS
                                     : BENCH__GATE_PASSES;
    return 0;
}

bool bench__gate_paired_fails(bench__verdict v)
{
    return v == BENCH__V_REGRESSED || v == BENCH__V_INCONCLUSIVE;
}

bench__step_check bench__verdict_step_check(const bench__change *paired, double step)
{
    bench__verdict v = paired->verdict;
    bool same_way = (paired->ratio > 1.0) == (step > 0);
    if (v == BENCH__V_REGRESSED || v == BENCH__V_IMPROVED)
        return same_way ? BENCH__STEP_CONFIRMED : BENCH__STEP_OTHER_WAY;
    if (v == BENCH__V_NO_CHANGE || v == BENCH__V_WITHIN_NOISE)
        return BENCH__STEP_ALIKE;
    return BENCH__STEP_UNDECIDED;
}

/* ---- what a spread lets a comparison see, and a suite that moved together ---- */

bool bench__spread_hides_changes(unsigned processes, double process_log_sd, double tests,
                                 const bench__compare_opts *cmp, double *mde)
{
    const bench__compare_opts def = {.significance_level = BENCH__DEFAULT_SIGNIFICANCE_LEVEL,
                                     .noise_threshold = BENCH__DEFAULT_NOISE_THRESHOLD};
    const bench__compare_opts *set = cmp ? cmp : &def;
    *mde = INFINITY;
    if (processes < 2 || !(process_log_sd >= 0) || !isfinite(process_log_sd))
        return false;
    double k = tests >= 1 ? tests : 1;
    /* Two saved runs of this spread, `processes` processes each: the difference of their means
     * has se sqrt(2 / p) sd, and Welch's degrees of freedom for two equal sides, 2 (p - 1), as
     * compare.c's test over processes takes them. The machine's drift between the runs only
     * adds to it: what is said here is the least a comparison will miss. */
    double se = sqrt(2.0 / (double)processes) * process_log_sd;
    double df = 2.0 * ((double)processes - 1.0);
    *mde = bench__mde(se, df, k, set);
    /* The threshold aside, the smallest change this spread lets the test call at its family
     * level with BENCH__MDE_POWER: above the threshold, a change of the threshold is missed
     * more often than not. (bench__mde itself is never below the threshold: it cannot say.) */
    double tq = bench__t_quantile(1.0 - set->significance_level / (2.0 * k), df);
    double tp = bench__t_quantile(BENCH__MDE_POWER, df);
    return (tq + tp) * se > log1p(set->noise_threshold);
}

bool bench__verdict_moved_together(double med_log, size_t same, size_t n, double threshold)
{
    return n >= 4 && bench__beyond_threshold(med_log, threshold) &&
           (double)same >= 0.75 * (double)n;
}
