/*
 * report_compare.c: how a comparison with a baseline reads in the terminal: the change line under
 * each benchmark (as Criterion prints it), the verdict sentences, the closing summary that
 * counts verdicts and lists the worst changes first (of times, or of --instructions' exact
 * counts), and the comparison's exit code. Benchmarks with a status instead of numbers
 * (skipped, new, removed, not compared) are listed by name after the others and counted; they
 * never count as a change. Ids and metric names may come from files: they are printed escaped
 * (bench__escape). --explain's heading ("ID: VERDICT") and its finding under it (run/explain.c)
 * read here too.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "compare/verdict.h"
#include "core/base.h"
#include "core/result.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "report/report_metrics.h"
#include "stats/stats.h"
#include "sys/context.h"

#define INDENT 24

static const char *paint(bool color, const char *code)
{
    return color ? code : "";
}

/* A percentage as printed: two decimals, or three significant figures from a million percent
 * on. An interval from two worker pairs that disagreed by 145% reached +8.2e29%: its 30 digits
 * overflowed the line's buffer and lost the percent sign. */
static void percent(char *buf, size_t len, const char *sign, double p)
{
    if (fabs(p) < 1e6)
        snprintf(buf, len, *sign ? "%+.2f%%" : "%.2f%%", p);
    else
        snprintf(buf, len, *sign ? "%+.3g%%" : "%.3g%%", p);
}

static void pct(char *buf, size_t len, double ratio)
{
    percent(buf, len, "+", (ratio - 1.0) * 100.0);
}

/* A metric's change as printed: as pct, but what prints as zero is "0.00%", without a sign. A
 * count that did not change has bounds a rounding error off 1, which pct would show as "-0.00%"
 * or "+0.00%", a direction it does not have. */
static void metric_pct(char *buf, size_t len, double ratio)
{
    if (fabs((ratio - 1.0) * 100.0) < 0.005)
        snprintf(buf, len, "0.00%%");
    else
        pct(buf, len, ratio);
}

/* The minimum detectable effect as printed: "1.23%", or "-" when the comparison has none. */
static const char *mde_text(const bench__change *c)
{
    static char buf[32];
    if (isfinite(c->mde) && c->mde > 0)
        percent(buf, sizeof buf, "", c->mde * 100.0);
    else
        snprintf(buf, sizeof buf, "-");
    return buf;
}

void bench__print_change_line(FILE *o, const bench__change *c, bool color)
{
    if (!bench__verdict_has_numbers(c->verdict)) {
        /* Under a measured result: a skip can only be the baseline's. */
        const char *why = c->verdict == BENCH__V_SKIPPED ? "skipped in the baseline"
                          : c->verdict == BENCH__V_NEW   ? "new: the baseline has no measurement"
                                                         : "not compared (no usable estimate on "
                                                           "one side)";
        fprintf(o, "%*schange: %s\n", INDENT, "", why);
        return;
    }
    char lo[32], mid[32], hi[32];
    pct(lo, sizeof lo, c->ratio_lower);
    pct(mid, sizeof mid, c->ratio);
    pct(hi, sizeof hi, c->ratio_upper);
    char noise[96] = "";
    if (c->run_noise > 0 && !c->interleaved) /* --ab prints its pair-to-pair sd itself */
        snprintf(noise, sizeof noise, "; %s %.2f%%",
                 c->calibrated         ? "run-to-run noise (calibrated)"
                 : c->drift_from_suite ? "machine drift allowed (what the benchmarks showed)"
                 : c->drift_measured   ? "machine drift allowed (the canaries' smallest)"
                                       : "run-to-run noise (default)",
                 c->run_noise * 100.0);
    const char *groups = c->modes_compared ? "; two speed groups on both sides, compared group "
                                             "with group"
                         : c->modes_differ ? "; the sides have different speed groups: compared "
                                             "over all processes"
                                           : "";
    /* Against saved numbers the line is this benchmark's alone, before the suite's drift, the
     * family level and any confirmation: the summary settles it, and says so. */
    bool saved = !c->interleaved && !c->confirmed && c->tests <= 1;
    fprintf(o, "%*schange: [%s %s%s%s %s] (%sp = %.4f; detectable change %s%s%s)%s\n", INDENT, "",
            lo, paint(color, "\033[1m"), mid, paint(color, "\033[0m"), hi,
            saved ? "saved numbers, this benchmark alone: " : "", c->p, mde_text(c), noise,
            groups, saved ? "; the summary settles it" : "");
}

static const char *sentence(bench__verdict v)
{
    switch (v) {
    case BENCH__V_REGRESSED:
        return "Performance has regressed.";
    case BENCH__V_IMPROVED:
        return "Performance has improved.";
    case BENCH__V_NO_CHANGE:
        return "No change in performance detected.";
    case BENCH__V_WITHIN_NOISE:
        return "Change within noise threshold.";
    case BENCH__V_INCONCLUSIVE:
        return "Inconclusive: the interval reaches beyond the noise threshold, so the change "
               "may or may not exceed it; measure longer.";
    default:
        return "Not compared.";
    }
}

static const char *verdict_color(bench__verdict v)
{
    return v == BENCH__V_REGRESSED ? "\033[31m"
           : v == BENCH__V_IMPROVED ? "\033[32m"
           : v == BENCH__V_INCONCLUSIVE ? "\033[33m"
                                     : "";
}

typedef struct row {
    const char *id;
    const bench__change *c;
} row;

/* Worst first: regressions by size, then inconclusive, improvements, the rest; the statuses
 * last. */
static int rank(const bench__change *c)
{
    switch (c->verdict) {
    case BENCH__V_REGRESSED:
        return 0;
    case BENCH__V_INCONCLUSIVE:
        return 1;
    case BENCH__V_IMPROVED:
        return 2;
    case BENCH__V_WITHIN_NOISE:
        return 3;
    case BENCH__V_NO_CHANGE:
        return 4;
    case BENCH__V_INCOMPARABLE:
        return 5;
    case BENCH__V_NEW:
        return 6;
    case BENCH__V_REMOVED:
        return 7;
    case BENCH__V_SKIPPED:
        return 8;
    }
    return 9;
}

int bench__change_order(const char *ida, const bench__change *a, const char *idb,
                        const bench__change *b)
{
    int ra = rank(a), rb = rank(b);
    if (ra != rb)
        return ra - rb;
    double da = fabs(a->log_change), db = fabs(b->log_change);
    if (da != db)
        return da < db ? 1 : -1;
    return strcmp(ida, idb);
}

static int cmp_row(const void *a, const void *b)
{
    const row *x = a, *y = b;
    return bench__change_order(x->id, x->c, y->id, y->c);
}

int bench__sort_changes(const char **ids, bench__change *ch, size_t n)
{
    row *rows = malloc((n ? n : 1) * sizeof *rows);
    bench__change *copy = malloc((n ? n : 1) * sizeof *copy);
    if (!rows || !copy) {
        free(rows);
        free(copy);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        copy[i] = ch[i];
        rows[i] = (row){ids[i], &copy[i]};
    }
    qsort(rows, n, sizeof *rows, cmp_row);
    for (size_t i = 0; i < n; i++) {
        ids[i] = rows[i].id;
        ch[i] = *rows[i].c;
    }
    free(rows);
    free(copy);
    return 0;
}

/*
 * Nearly all benchmarks moved the same way: something they all share changed. Only the recorded
 * machine facts can say it was the machine; a different compiler, its flags or the code is a
 * change of the build, and interleaved runs (--ab, context NULL) share one machine by design.
 */
static void print_moved_together(FILE *o, const bench__context_change *context, size_t same,
                                 size_t n, double median_log, bool color)
{
    bool machine = context && context->machine[0];
    fprintf(o, "%s%s:%s %zu of %zu benchmarks moved the same way (median change %+.2f%%)",
            paint(color, "\033[33m"), machine ? "warning" : "note", paint(color, "\033[0m"),
            same, n, expm1(median_log) * 100.0);
    if (!context)
        fputs(": A and B ran interleaved on one machine, so this is a difference between the "
              "builds that all of them share (compiler, flags or common code)\n", o);
    else if (machine)
        fprintf(o, " and the machine changed between the runs (%s): the machine is a likelier "
                   "cause than the code\n", context->machine);
    else if (context->build[0])
        fprintf(o, " and the build changed between the runs (%s): a change of the build that "
                   "all of them share is the likelier cause\n", context->build);
    else
        fputs("; the recorded machine and build are the same: look for a change that all of "
              "them share\n", o);
}

/* The summary's header: what it compares with, how, over how many benchmarks. */
static void print_summary_header(FILE *o, const char *baseline, const char *method,
                                 size_t ncompared, const bench__compare_opts *opt, bool color)
{
    const char *reset = paint(color, "\033[0m"), *bold = paint(color, "\033[1m");
    if (opt->exact)
        fprintf(o, "\n%sComparison with %s%s (%s; threshold %.2f%%)\n", bold, baseline, reset,
                method, opt->noise_threshold * 100.0);
    else if (ncompared == 0)
        /* No family to correct over: a significance "over all 0 compared" said nothing. */
        fprintf(o, "\n%sComparison with %s%s (no benchmark compared; noise threshold %.2f%%)\n",
                bold, baseline, reset, opt->noise_threshold * 100.0);
    else
        fprintf(o, "\n%sComparison with %s%s (significance %.3g over all %zu compared, %s; "
                   "noise threshold %.2f%%)\n",
                bold, baseline, reset, opt->significance_level, ncompared, method,
                opt->noise_threshold * 100.0);
}

int bench__print_compare_summary(FILE *o, const char *baseline, const char *const *ids,
                                 const bench__change *changes, size_t n,
                                 const bench__compare_opts *opt, const char *method,
                                 const bench__context_change *context, bool color)
{
    size_t count[BENCH__NVERDICTS] = {0};
    row *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows)
        return -1;
    double *logs = malloc((n ? n : 1) * sizeof *logs);
    size_t nlogs = 0, up = 0, down = 0, ncompared = 0;
    for (size_t i = 0; i < n; i++) {
        rows[i].id = ids[i];
        rows[i].c = &changes[i];
        count[changes[i].verdict]++;
        ncompared += bench__verdict_has_numbers(changes[i].verdict);
        if (bench__verdict_has_numbers(changes[i].verdict) && logs) {
            logs[nlogs++] = changes[i].log_change;
            /* Only a decided change counts as having moved: an inconclusive +40% [-64%, +269%]
             * is no evidence of a shared cause. */
            up += changes[i].verdict == BENCH__V_REGRESSED;
            down += changes[i].verdict == BENCH__V_IMPROVED;
        }
    }
    qsort(rows, n, sizeof *rows, cmp_row);
    const char *reset = paint(color, "\033[0m");
    print_summary_header(o, baseline, method, ncompared, opt, color);
    char id[BENCH__ESCAPED_ID];
    for (size_t i = 0; i < n; i++) {
        const bench__change *c = rows[i].c;
        char lo[32], mid[32], hi[32];
        bench__escape(id, sizeof id, rows[i].id);
        pct(lo, sizeof lo, c->ratio_lower);
        pct(mid, sizeof mid, c->ratio);
        pct(hi, sizeof hi, c->ratio_upper);
        if (!bench__verdict_has_numbers(c->verdict))
            fprintf(o, "  %-13s %s\n", bench__verdict_name(c->verdict), id);
        else if (c->same_program)
            /* The verdict rests on the program's identity, not on the numbers: no interval,
             * which would read as evidence (a "no change" beside [-98%, +2511%]). */
            fprintf(o, "  %s%-13s%s %-40s %8s (same program: the numbers moved, the code did "
                       "not)\n",
                    paint(color, verdict_color(c->verdict)), bench__verdict_name(c->verdict),
                    reset, id, mid);
        else if (c->same_code) {
            /* Measured, and kept with its interval, but no verdict on the code. */
            char text[96];
            bench__same_code_text(text, sizeof text, c);
            fprintf(o, "  %s%-13s%s %-40s %8s [%s, %s] (%s)\n",
                    paint(color, verdict_color(c->verdict)), bench__verdict_name(c->verdict),
                    reset, id, mid, lo, hi, text);
        } else if (opt->exact)
            fprintf(o, "  %s%-13s%s %-40s %+8.3f%% (%.1f -> %.1f)\n",
                    paint(color, verdict_color(c->verdict)), bench__verdict_name(c->verdict),
                    reset, id, (c->ratio - 1.0) * 100.0, c->old_median, c->new_median);
        else
            fprintf(o, "  %s%-13s%s %-40s %8s [%s, %s] p=%.4f detectable %s%s\n",
                    paint(color, verdict_color(c->verdict)), bench__verdict_name(c->verdict),
                    reset, id, mid, lo, hi, c->p_adjusted, mde_text(c),
                    c->confirmed ? " (confirmed, paired)" : "");
    }
    if (opt->exact) {
        /* Exact counts: the numbers say it all; nothing drifts between two counts. */
        fprintf(o, "%zu regressed, %zu improved, %zu no change", count[BENCH__V_REGRESSED],
                count[BENCH__V_IMPROVED], count[BENCH__V_NO_CHANGE]);
        for (int v = BENCH__V_INCOMPARABLE; v < BENCH__NVERDICTS; v++)
            if (count[v])
                fprintf(o, ", %zu %s", count[v], bench__verdict_name((bench__verdict)v));
        fputc('\n', o);
        free(logs);
        free(rows);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (rows[i].c->verdict == BENCH__V_REGRESSED || rows[i].c->verdict == BENCH__V_IMPROVED)
            fprintf(o, "%s: %s%s%s\n", bench__escape(id, sizeof id, rows[i].id),
                    paint(color, verdict_color(rows[i].c->verdict)),
                    sentence(rows[i].c->verdict), reset);
    fprintf(o, "%zu regressed, %zu improved, %zu unchanged (%zu no change, %zu within noise), "
               "%zu inconclusive",
            count[BENCH__V_REGRESSED], count[BENCH__V_IMPROVED],
            count[BENCH__V_NO_CHANGE] + count[BENCH__V_WITHIN_NOISE], count[BENCH__V_NO_CHANGE],
            count[BENCH__V_WITHIN_NOISE], count[BENCH__V_INCONCLUSIVE]);
    for (int v = BENCH__V_INCOMPARABLE; v < BENCH__NVERDICTS; v++)
        if (count[v])
            fprintf(o, ", %zu %s", count[v], bench__verdict_name((bench__verdict)v));
    fputc('\n', o);
    for (size_t i = 0; i < n; i++) {
        const bench__change *c = &changes[i];
        if (!bench__verdict_has_numbers(c->verdict) || !c->drift_from_suite)
            continue;
        fprintf(o, "The benchmarks moved between the runs more than their processes vary: the "
                   "intervals allow %.2f%% for the machine's drift (docs/comparison.md)",
                c->run_noise * 100.0);
        if (opt->drift_known)
            fprintf(o, "; the drift canaries showed %.2f%%", opt->drift_sd * 100.0);
        fputs("\n", o);
        break;
    }

    if (logs && nlogs >= 4) {
        bench__sort(logs, nlogs);
        double med = bench__quantile_sorted(logs, nlogs, 0.5);
        size_t same = med > 0 ? up : down;
        if (bench__verdict_moved_together(med, same, nlogs, opt->noise_threshold))
            print_moved_together(o, context, same, nlogs, med, color);
    }
    free(logs);
    free(rows);
    return 0;
}

int bench__compare_exit(const char *const *ids, const bench__change *ch, size_t n,
                        const bench__gate *gate, const char *against)
{
    /* Each row that fails the comparison named on stderr; the verdicts decide (verdict.c). */
    for (size_t i = 0; i < n; i++) {
        if (bench__gate_undecided(gate, ch[i].verdict))
            bench__errf("--fail-on-inconclusive: '%s' is inconclusive against %s "
                        "(%+.2f%% [%+.2f%%, %+.2f%%]: it could have changed by more than the "
                        "noise threshold)\n",
                        ids[i], against, (ch[i].ratio - 1.0) * 100.0,
                        (ch[i].ratio_lower - 1.0) * 100.0, (ch[i].ratio_upper - 1.0) * 100.0);
        if (gate->strict)
            bench__strict_violation(ids[i], ch[i].verdict, against);
    }
    return bench__gate_exit(ch, n, gate);
}

bool bench__strict_violation(const char *id, bench__verdict v, const char *against)
{
    if (v == BENCH__V_NEW)
        bench__errf("--baseline-strict: '%s' is new: %s has no measurement of it\n",
                    id, against);
    else if (v == BENCH__V_REMOVED)
        bench__errf("--baseline-strict: '%s' was removed: only %s has it\n", id,
                    against);
    return bench__verdict_strict(v);
}

void bench__same_code_text(char *buf, size_t len, const bench__change *c)
{
    double d = (c->ratio - 1.0) * 100.0;
    if (fabs(d) < 0.005)
        snprintf(buf, len, "same code: measured no different (placement or machine)");
    else
        snprintf(buf, len, "same code: measured %.2f%% %s (placement or machine)", fabs(d),
                 d > 0 ? "slower" : "faster");
}

void bench__print_verdict(FILE *o, const bench__change *c, bool color)
{
    if (c->same_code) {
        /* The numbers stand, but the code did not change: no sentence about performance. */
        char text[96];
        bench__same_code_text(text, sizeof text, c);
        fprintf(o, "%*s%s%s: not a change of the code.%s\n", INDENT, "",
                paint(color, verdict_color(c->verdict)), text, paint(color, "\033[0m"));
        return;
    }
    fprintf(o, "%*s%s%s%s\n", INDENT, "", paint(color, verdict_color(c->verdict)),
            sentence(c->verdict), paint(color, "\033[0m"));
}

/* Metrics that count work done rather than time taken: when time moved and these did not, the
 * environment changed more likely than the code. */
static bool counts_work(const char *name)
{
    return bench__starts_with(name, "instructions") || bench__starts_with(name, "cycles") ||
           bench__starts_with(name, "INST_RETIRED") || strcmp(name, "allocations") == 0;
}

void bench__print_metric_changes(FILE *o, const bench__result *r, const bench__compare_opts *opt,
                                 bool color)
{
    if (!r->metric_changes)
        return;
    const bench__change *t = r->change;
    double T = opt->noise_threshold;
    bool time_moved = t && bench__verdict_has_numbers(t->verdict) && fabs(t->ratio - 1.0) > T;
    for (size_t i = 0; i < r->nmetrics; i++) {
        const bench__change *c = &r->metric_changes[i];
        char name[4 * sizeof r->metrics[i].name];
        bench__escape(name, sizeof name, r->metrics[i].name);
        if (!bench__verdict_has_numbers(c->verdict)) {
            /* A user's counter may be 0 or below (bench_counter adds any value), where a
             * ratio means nothing: say so rather than leave the counter out unexplained. */
            if (c->verdict == BENCH__V_INCOMPARABLE &&
                bench__starts_with(r->metrics[i].source, "counter") &&
                (c->old_median <= 0 || r->metrics[i].est.median.point <= 0)) {
                char was[32], now[32];
                bench__fmt_count(was, sizeof was, c->old_median);
                bench__fmt_count(now, sizeof now, r->metrics[i].est.median.point);
                fprintf(o, "%*s%s: not compared (%s/iter in the baseline, %s/iter now: a ratio "
                           "needs both above 0)\n",
                        INDENT + 2, "", name, was, now);
            }
            continue;
        }
        char mid[32], lo[32], hi[32];
        metric_pct(lo, sizeof lo, c->ratio_lower);
        metric_pct(mid, sizeof mid, c->ratio);
        metric_pct(hi, sizeof hi, c->ratio_upper);
        fprintf(o, "%*s%s: [%s %s %s] (%s)\n", INDENT + 2, "", name, lo, mid, hi,
                bench__verdict_name(c->verdict));
        /* Same work within a quarter of the threshold: say so next to the time's verdict. */
        if (time_moved && counts_work(r->metrics[i].name) && fabs(c->ratio - 1.0) < T / 4) {
            char tp[32];
            pct(tp, sizeof tp, t->ratio);
            fprintf(o, "%*s%snote: time %s, %s %s: the same work took a different time; a "
                       "change of environment (frequency, contention) is likelier than a code "
                       "change%s\n",
                    INDENT + 2, "", paint(color, "\033[33m"), tp, name, mid,
                    paint(color, "\033[0m"));
        }
    }
}

/* ---- --explain's lines under a verdict (run/explain.c) ---- */

/* A signed amount per iteration: a time, or a count. */
static void fmt_amount(char *buf, size_t len, double v, bool time)
{
    if (time) {
        char t[32];
        bench__fmt_time(t, sizeof t, fabs(v));
        bench__msg(buf, len, "%s%s", v < 0 ? "-" : "+", t);
    } else {
        bench__msg(buf, len, "%+.0f", v);
    }
}

void bench__print_explained_heading(FILE *out, const char *id, bench__verdict v)
{
    char shown[BENCH__ESCAPED_ID];
    fprintf(out, "%s: %s\n", bench__escape(shown, sizeof shown, id), bench__verdict_name(v));
}

void bench__print_explanation(FILE *out, const bench__explanation *e)
{
    const char *pad = "                        ";
    if (e->status != 0) {
        char why[4 * sizeof e->message];
        fprintf(out, "%snot explained: %s\n", pad,
                bench__escape(why, sizeof why, e->message));
        return;
    }
    bool time = e->mode == BENCH__EXPLAIN_TIME;
    double rel = e->old_value > 0 ? 100.0 * e->change / e->old_value : NAN;
    fprintf(out, "%s%s%+.1f%%", pad, time ? "" : "instructions ", rel);
    if (!time)
        fprintf(out, " (%.0f -> %.0f per iteration)", e->old_value, e->new_value);
    if (e->nfns == 0) {
        fprintf(out, ": no function changed beyond noise%s\n",
                time ? " (the change is not attributed)" : "");
    } else {
        for (size_t i = 0; i < e->nfns; i++) {
            const bench__explained_fn *f = &e->fns[i];
            char a[48], name[4 * sizeof f->name];
            fmt_amount(a, sizeof a, f->self_delta, time);
            fprintf(out, "%s`%s` %s%s", i ? ", " : ": ", bench__escape(name, sizeof name, f->name),
                    a, i ? "" : time ? " per iteration (self)" : " instructions per iteration "
                                                                 "(self)");
        }
        fprintf(out, "; %.0f%% of the change attributed", 100.0 * e->attributed);
        if (fabs(1 - e->attributed) >= 0.005)
            fprintf(out, " (unattributed: %+.0f%%)", 100.0 * (1 - e->attributed));
        if (e->nbeyond > e->nfns)
            fprintf(out, " (%zu more functions changed)", e->nbeyond - e->nfns);
        fputc('\n', out);
        if (isfinite(e->fns[0].total_delta)) {
            char a[48], name[4 * sizeof e->fns[0].name];
            fmt_amount(a, sizeof a, e->fns[0].total_delta, time);
            fprintf(out, "%s`%s` with what it calls: %s\n", pad,
                    bench__escape(name, sizeof name, e->fns[0].name), a);
        }
    }
    if (time)
        fprintf(out, "%s%s: %zu worker pairs, %.0f (A) + %.0f (B) samples of the timed loop, "
                     "%.0f + %.0f of them the machine's (interrupts, context switches: not "
                     "attributed); named beyond %.0f sd of the profiles' noise; %.1f s\n",
                pad, e->how, e->pairs, e->samples[0], e->samples[1], e->machine_samples[0],
                e->machine_samples[1], e->z, e->seconds);
    else
        fprintf(out, "%s%s, exact; %.1f s\n", pad, e->how, e->seconds);
    if (e->message[0]) {
        char why[4 * sizeof e->message];
        fprintf(out, "%snote: %s\n", pad, bench__escape(why, sizeof why, e->message));
    }
}

/* ---- the verdicts of paired runs and of exact counts ---- */

void bench__print_paired_item(FILE *o, const char *id, const bench__change *c, const char *why,
                              const bench__paired_stats *st, bool color)
{
    char shown[BENCH__ESCAPED_ID];
    fprintf(o, "%s\n", bench__escape(shown, sizeof shown, id));
    if (why) {
        char text[4 * 512];
        fprintf(o, "%24s%s: %s\n", "", bench__verdict_name(c->verdict),
                bench__escape(text, sizeof text, why));
        return;
    }
    char a[32], b[32];
    bench__fmt_time(a, sizeof a, c->old_median);
    bench__fmt_time(b, sizeof b, c->new_median);
    fprintf(o, "%24sA (old): %s  B (new): %s per iteration (B is A times the paired ratio)\n", "",
            a, b);
    fprintf(o, "%24s%zu worker pairs, %zu rounds of ABBA+BAAB, pair-to-pair sd %.2f%%, %llu "
               "iterations a sample, %.1f s\n",
            "", st->pairs, st->rounds, st->pair_sd * 100.0, st->iters, st->seconds);
    bench__print_change_line(o, c, color);
    if (st->futile)
        fprintf(o, "%24sstopped at look %zu: even %.0f pairs, what the budget left could give "
                   "it, would leave its interval across the +-%.2f%% band\n",
                "", st->looks, st->reach, st->threshold * 100.0);
    bench__print_verdict(o, c, color);
}

void bench__print_confirmed(const char *id, bench__verdict before, const bench__change *paired,
                            size_t pairs, double futile_reach)
{
    char shown[BENCH__ESCAPED_ID], futile[96] = "";
    if (futile_reach > 0)
        snprintf(futile, sizeof futile, "; stopped: even %.0f pairs could not decide it",
                 futile_reach);
    bench__errf("confirmed %s: %s -> %s, %+.2f%% [%+.2f%%, %+.2f%%] paired (%zu worker "
                "pairs%s)\n",
                bench__escape(shown, sizeof shown, id), bench__verdict_name(before),
                bench__verdict_name(paired->verdict), 100.0 * (paired->ratio - 1.0),
                100.0 * (paired->ratio_lower - 1.0), 100.0 * (paired->ratio_upper - 1.0), pairs,
                futile);
}

/* A count's verdict in colour: a regression red, an improvement green (exact counts are never
 * inconclusive). */
static const char *count_color(bench__verdict v)
{
    return v == BENCH__V_REGRESSED ? "\033[31m" : v == BENCH__V_IMPROVED ? "\033[32m" : "";
}

void bench__print_count_change(FILE *o, const bench__change *ch, bool color)
{
    if (ch->verdict == BENCH__V_INCOMPARABLE)
        fprintf(o, "%-40s change: not compared (no count in the baseline)\n", "");
    else
        fprintf(o, "%-40s change: %+.3f%% (%.1f -> %.1f): %s%s%s\n", "",
                (ch->ratio - 1.0) * 100.0, ch->old_median, ch->new_median,
                color ? count_color(ch->verdict) : "", bench__verdict_name(ch->verdict),
                color ? "\033[0m" : "");
}
