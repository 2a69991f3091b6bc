/*
 * report_text.c: the human-readable reporters: pretty (terminal, modelled on Criterion.rs), CSV
 * and Markdown. Each consumes bench__result values; none reads a clock or a file.
 *
 * Pretty output streams one block per benchmark as it finishes; CSV prints its table at the end
 * (one row per benchmark; each metric's columns are known only once every row is); Markdown
 * prints its table at the end, with a change column (verdict or status) and
 * a row per removed benchmark when the run is compared with a baseline. Ids, names and messages
 * are untrusted text: each goes through bench__escape (control characters shown as \xNN), and CSV
 * text cells that a spreadsheet would take for a formula get the OWASP guard.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "compare/verdict.h"
#include "core/base.h"
#include "core/options.h"
#include "core/probe.h"
#include "core/result.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "report/report_metrics.h"
#include "stats/stats.h"
#include "sys/context.h"
#include "sys/user_build.h"

#define ID_WIDTH 24

static const char *sgr(const bench__reporter *rep, const char *code)
{
    return rep->color ? code : "";
}

/* Throughput per second from ns per iteration; the lower time gives the higher rate. */
static double rate(double per_iter, double ns)
{
    return ns > 0 ? per_iter * 1e9 / ns : NAN;
}

/* The cause of the spread between processes, when one was measured: " (processes on CPU 1 were
 * 12.0% slower than on CPU 0)"; "" otherwise. */
static const char *spread_cause_text(const bench__result *r, char *buf, size_t len)
{
    const bench__spread_cause *c = &r->spread_cause;
    if (c->by_cpu)
        snprintf(buf, len, " (processes on CPU %d were %.1f%% slower than on CPU %d)",
                 c->cpu_slow, 100.0 * (c->cpu_ratio - 1.0), c->cpu_fast);
    else if (c->by_faults)
        snprintf(buf, len, " (the processes with more page faults were slower: rank correlation "
                           "%.2f)", c->faults_rho);
    else
        buf[0] = '\0';
    return buf;
}

/*
 * What the spread between r's processes means for the user, said only where it changes what they
 * should do: two speed groups (a headline that no process ran at), or a spread so wide that a
 * saved comparison of this run cannot see a change of the threshold (bench__spread_hides_changes:
 * the run's own threshold and significance level, cmp, NULL the defaults; its processes; and the
 * `tests` benchmarks such a comparison would take together). A cause is
 * named only when the processes' records show one (CPU, page faults). Not for a benchmark whose
 * iterations take under a nanosecond: it measures the loop, not code.
 */
static void print_spread(FILE *o, const bench__result *r, const bench__compare_opts *cmp,
                         size_t tests, const char *yellow, const char *reset)
{
    char cause[160];
    spread_cause_text(r, cause, sizeof cause);
    const bench__modes *m = &r->modes;
    if (m->groups == 2) {
        char lo[32], hi[32];
        bench__fmt_time(lo, sizeof lo, exp(m->mean[0]));
        bench__fmt_time(hi, sizeof hi, exp(m->mean[1]));
        fprintf(o, "%*s%sTwo speed groups among its %u processes: %u at %s, %u at %s (+%.0f%%)%s;"
                   "\n%*sthe time above lies between them, and comparisons take them group by "
                   "group%s\n",
                ID_WIDTH, "", yellow, r->processes, m->count[0], lo, m->count[1], hi,
                100.0 * expm1(m->mean[1] - m->mean[0]), cause, ID_WIDTH, "", reset);
        return;
    }
    if (!(r->process_cv > BENCH__LARGE_PROCESS_CV) || !(r->est.median.point >= 1.0))
        return;
    double mde;
    if (!bench__spread_hides_changes(r->processes, r->process_log_sd, (double)tests, cmp, &mde))
        return;
    fprintf(o, "%*s%sSpread between processes %.1f%%%s:\n%*sa saved comparison sees changes "
               "above about %.0f%%; --ab pairs the processes and sees less%s\n",
            ID_WIDTH, "", yellow, 100.0 * r->process_cv, cause, ID_WIDTH, "", 100.0 * mde, reset);
}

/* The body's spans (--trace): each one's share of the time per iteration, and its time. */
static void print_spans(FILE *o, const bench__result *r)
{
    if (r->nspans == 0)
        return;
    fprintf(o, "%*sspans:", ID_WIDTH, "");
    for (size_t i = 0; i < r->nspans; i++) {
        char name[4 * sizeof r->spans[i].name], t[32];
        bench__escape(name, sizeof name, r->spans[i].name);
        double share = bench__span_share(r, i);
        bench__fmt_time(t, sizeof t, share * r->est.median.point);
        fprintf(o, "%s %s %.1f%% (%s)", i ? "," : "", name, 100.0 * share, t);
    }
    fputs(" of the time per iteration\n", o);
}

static void pretty_result(bench__reporter *rep, const bench__result *r)
{
    FILE *o = rep->out;
    const char *bold = sgr(rep, "\033[1m"), *reset = sgr(rep, "\033[0m");
    const char *green = sgr(rep, "\033[32m"), *yellow = sgr(rep, "\033[33m");
    const char *red = sgr(rep, "\033[31m"), *dim = sgr(rep, "\033[2m");
    char id[BENCH__ESCAPED_ID], message[4 * sizeof r->message];
    bench__escape(id, sizeof id, r->inst->id);
    bench__escape(message, sizeof message, r->message);
    size_t idlen = strlen(id);

    if (r->status == BENCH__SKIPPED) {
        fprintf(o, "%s%-*s%s %sskipped:%s %s\n", green, ID_WIDTH - 1, id, reset, yellow, reset,
                message);
        return;
    }
    if (r->status == BENCH__FAILED) {
        fprintf(o, "%s%-*s%s %sFAILED:%s %s\n", green, ID_WIDTH - 1, id, reset, red, reset,
                message);
        return;
    }
    if (idlen >= ID_WIDTH)
        fprintf(o, "%s%s%s\n%*s", green, id, reset, ID_WIDTH, "");
    else
        fprintf(o, "%s%-*s%s", green, ID_WIDTH, id, reset);

    const bench__estimate *m = &r->est.median;
    char lo[32], mid[32], hi[32];
    bench__fmt_time(lo, sizeof lo, m->lower);
    bench__fmt_time(mid, sizeof mid, m->point);
    bench__fmt_time(hi, sizeof hi, m->upper);
    fprintf(o, "time:   [%s %s%s%s %s]\n", lo, bold, mid, reset, hi);

    uint64_t per[2] = {r->settings.bytes_per_iter, r->settings.elements_per_iter};
    const char *unit[2] = {"B", "elem"};
    for (int k = 0; k < 2; k++) {
        if (!per[k])
            continue;
        bench__fmt_rate(lo, sizeof lo, rate((double)per[k], m->upper), unit[k]);
        bench__fmt_rate(mid, sizeof mid, rate((double)per[k], m->point), unit[k]);
        bench__fmt_rate(hi, sizeof hi, rate((double)per[k], m->lower), unit[k]);
        fprintf(o, "%*sthrpt:  [%s %s%s%s %s]\n", ID_WIDTH, "", lo, bold, mid, reset, hi);
    }
    bench__threads_summary ts;
    if (bench__threads_summary_of(r, &ts)) {
        /* The time above is the team's span; all threads' iterations make the total. */
        bench__fmt_rate(mid, sizeof mid, ts.total_ips, "iter");
        fprintf(o, "%*s%u threads: total %s, per-thread spread %.0f%%\n", ID_WIDTH, "",
                ts.count, mid, 100.0 * ts.spread);
    }

    char slope[32], mean[32], fastest[32];
    bench__fmt_time(slope, sizeof slope, r->est.slope.point);
    bench__fmt_time(mean, sizeof mean, r->est.mean.point);
    bench__fmt_time(fastest, sizeof fastest, r->est.min);
    char rounds[32] = "";
    if (r->processes > 0)
        snprintf(rounds, sizeof rounds, " in %u process%s", r->processes,
                 r->processes == 1 ? "" : "es");
    else if (r->rounds > 1)
        snprintf(rounds, sizeof rounds, " in %u rounds", r->rounds);
    fprintf(o, "%*s%smean %s, slope %s (R\xc2\xb2 %.4f), fastest %s; %zu samples%s, %llu "
               "iterations, %s, stopped at %s%s\n",
            ID_WIDTH, "", dim, mean, slope, r->est.r2, fastest, r->nsamples, rounds,
            (unsigned long long)r->total_iters, bench__sampling_name(r->sampling_used),
            r->stop_reason ? r->stop_reason : "?", reset);
    if (bench__optimised_away(r)) /* a rate no machine reaches: the loop is gone */
        fprintf(o, "%*s%s%s%s\n", ID_WIDTH, "", red, bench__optimised_away_note, reset);
    bench__print_metrics(o, r, rep->color);
    print_spans(o, r);
    if (r->processes >= 2)
        print_spread(o, r, rep->cmp, rep->tests, yellow, reset);
    else if (r->processes == 1)
        fprintf(o, "%sOne process only (its samples are too long for more in the budget): the "
                   "interval cannot include the spread between processes%s\n", yellow, reset);

    const bench__outliers *ol = &r->outliers;
    size_t total = ol->low_severe + ol->low_mild + ol->high_mild + ol->high_severe;
    if (total > 0) {
        double n = (double)r->nsamples;
        fprintf(o, "%sFound %zu outlier%s among %zu measurements (%.2f%%)%s\n", yellow, total,
                total == 1 ? "" : "s",
                r->nsamples, 100.0 * (double)total / n, reset);
        const size_t counts[4] = {ol->low_severe, ol->low_mild, ol->high_mild, ol->high_severe};
        const char *names[4] = {"low severe", "low mild", "high mild", "high severe"};
        for (int k = 0; k < 4; k++)
            if (counts[k])
                fprintf(o, "  %zu (%.2f%%) %s\n", counts[k], 100.0 * (double)counts[k] / n,
                        names[k]);
    }
    fflush(o);
}

static void pretty_begin(bench__reporter *rep, const bench__context *ctx)
{
    (void)rep;
    (void)ctx;
}

static int pretty_end(bench__reporter *rep, const bench__context *ctx, const bench__result *all,
                      size_t n)
{
    (void)ctx;
    size_t ok = 0, skipped = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (all[i].status == BENCH__OK)
            ok++;
        else if (all[i].status == BENCH__SKIPPED)
            skipped++;
        else
            failed++;
    }
    /* The growth of each series with three or more values measured. */
    bench__growth *growth = NULL;
    size_t ngrowth = 0;
    if (bench__growths(all, n, &growth, &ngrowth) != 0)
        fputs("\n(complexity: out of memory)", rep->out);
    for (size_t i = 0; i < ngrowth; i++) {
        const bench__growth *gr = &growth[i];
        const bench__complexity *cx = &gr->fit;
        char g[BENCH__ESCAPED_ID], nm[BENCH__ESCAPED_ID], coef[32], along[320] = "";
        const bench_desc *d = gr->at->desc;
        bench__big_o next = cx->next;
        bench__fmt_time(coef, sizeof coef, cx->coefficient[cx->best]);
        if (gr->axis >= 0) {
            /* " along size (load=0.5/mode=x)": the axis, and the others as they are held */
            size_t len = (size_t)snprintf(along, sizeof along, " along %s",
                                          gr->at->args[gr->axis].name);
            for (size_t a = 0, k = 0; a < gr->at->nargs && len < sizeof along; a++)
                if ((int)a != gr->axis)
                    len += (size_t)snprintf(along + len, sizeof along - len, "%s%s=%s",
                                            k++ ? "/" : " (", gr->at->args[a].name,
                                            gr->at->args[a].value);
            if (gr->at->nargs > 1 && len < sizeof along)
                snprintf(along + len, sizeof along - len, ")");
        }
        const char *x = gr->axis >= 0 ? gr->at->args[gr->axis].name : "N";
        const char *unit = gr->axis >= 0 ? "values" : "parameters";
        bench__escape(g, sizeof g, d->group);
        bench__escape(nm, sizeof nm, d->name);
        if (cx->named)
            fprintf(rep->out, "\n%s/%s%s: complexity %s, %s x f(%s), rms %.1f%% (over %zu %s; "
                              "next best %s, rms %.1f%%)",
                    g, nm, along, bench__big_o_name(cx->best), coef, x, 100 * cx->rms[cx->best],
                    gr->parameters, unit, bench__big_o_name(next), 100 * cx->rms[next]);
        else /* never a class the sweep does not show (docs/measurement.md#complexity) */
            fprintf(rep->out, "\n%s/%s%s: no complexity class fits (%s; best %s, rms %.1f%% over "
                              "%zu %s)",
                    g, nm, along, cx->why_not, bench__big_o_name(cx->best),
                    100 * cx->rms[cx->best], gr->parameters, unit);
    }
    free(growth);
    fprintf(rep->out, "\n%zu benchmark%s: %zu measured, %zu skipped, %zu failed\n", n,
            n == 1 ? "" : "s", ok, skipped, failed);
    return 0;
}

void bench__reporter_pretty(bench__reporter *rep, FILE *out, bool color)
{
    memset(rep, 0, sizeof *rep);
    rep->begin = pretty_begin;
    rep->result = pretty_result;
    rep->end = pretty_end;
    rep->out = out;
    rep->color = color;
}

/* ---- CSV (RFC 4180) ---- */

/* A text cell: escaped, guarded against formula injection, quoted (quotes doubled). */
static void csv_string(FILE *o, const char *s)
{
    char buf[4 * sizeof ((bench__result *)0)->message];
    bench__escape(buf, sizeof buf, s);
    fputc('"', o);
    if (bench__csv_needs_guard(buf))
        fputc('\'', o);
    for (const char *p = buf; *p; p++) {
        if (*p == '"')
            fputc('"', o);
        fputc(*p, o);
    }
    fputc('"', o);
}

/* The part of a list cell that names a metric or fact: escaped, quotes doubled. */
static void csv_name(FILE *o, const char *s)
{
    char buf[4 * sizeof ((bench__metric *)0)->name];
    bench__escape(buf, sizeof buf, s);
    for (const char *p = buf; *p; p++) {
        if (*p == '"')
            fputc('"', o);
        fputc(*p, o);
    }
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of the metrics of the ok results, each once, sorted (strcmp): the metric columns.
 * Returns their number (the pointers point into the results), or -1 when out of memory. */
static ptrdiff_t csv_metric_names(const bench__result *all, size_t n, const char ***out)
{
    size_t cap = 0;
    for (size_t i = 0; i < n; i++)
        if (all[i].status == BENCH__OK)
            cap += all[i].nmetrics;
    const char **names = malloc((cap ? cap : 1) * sizeof *names);
    if (!names)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; all[i].status == BENCH__OK && j < all[i].nmetrics; j++)
            names[k++] = all[i].metrics[j].name;
    qsort(names, k, sizeof *names, cmp_names);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || strcmp(names[u - 1], names[i]) != 0)
            names[u++] = names[i];
    *out = names;
    return (ptrdiff_t)u;
}

/* Each metric's columns: its median per iteration, the interval, the unit and the smallest
 * part of a sample it was counted for. */
static const char *const metric_cols[] = {"", "_lower", "_upper", "_unit", "_min_fraction"};
#define NMETRIC_COLS (sizeof metric_cols / sizeof metric_cols[0])

static void csv_header(FILE *o, const char *const *names, size_t nnames)
{
    fputs("id,group,name,param,status,samples,iterations,median_ns,median_lower_ns,"
          "median_upper_ns,mean_ns,mean_lower_ns,mean_upper_ns,std_dev_ns,mad_ns,slope_ns,"
          "slope_lower_ns,slope_upper_ns,r2,outliers,bytes_per_iteration,"
          "elements_per_iteration,message,min_ns,facts",
          o);
    for (size_t i = 0; i < nnames; i++)
        for (size_t c = 0; c < NMETRIC_COLS; c++) {
            char col[4 * sizeof ((bench__metric *)0)->name + 16];
            bench__msg(col, sizeof col, "%s%s", names[i], metric_cols[c]);
            fputc(',', o);
            csv_string(o, col);
        }
    fputc('\n', o);
}

static void csv_row(FILE *o, const bench__result *r, const char *const *names, size_t nnames)
{
    csv_string(o, r->inst->id);
    fputc(',', o);
    csv_string(o, r->inst->desc->group);
    fputc(',', o);
    csv_string(o, r->inst->desc->name);
    if (r->inst->has_param)
        fprintf(o, ",%lld", (long long)r->inst->param);
    else
        fputc(',', o);
    fprintf(o, ",%s,%zu,%llu", bench__status_name(r->status), r->nsamples,
            (unsigned long long)r->total_iters);
    bool ok = r->status == BENCH__OK;
    if (ok) {
        const bench__estimates *e = &r->est;
        const bench__outliers *ol = &r->outliers;
        fprintf(o, ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6f,%zu",
                e->median.point, e->median.lower, e->median.upper, e->mean.point, e->mean.lower,
                e->mean.upper, e->std_dev.point, e->mad.point, e->slope.point, e->slope.lower,
                e->slope.upper, e->r2,
                ol->low_severe + ol->low_mild + ol->high_mild + ol->high_severe);
    } else {
        fputs(",,,,,,,,,,,,,", o);
    }
    fprintf(o, ",%llu,%llu,", (unsigned long long)r->settings.bytes_per_iter,
            (unsigned long long)r->settings.elements_per_iter);
    /* An OK result has no message: the note that its body was optimised away goes there. */
    csv_string(o, bench__optimised_away(r) ? bench__optimised_away_note : r->message);
    /* The fastest sample, then the facts, a space-separated list name=value in one cell (the
     * guard is decided on the cell's first name, the only part that can start it). */
    if (ok)
        fprintf(o, ",%.6g,\"", r->est.min);
    else
        fputs(",,\"", o);
    if (ok && r->nfacts > 0 && bench__csv_needs_guard(r->facts[0].name))
        fputc('\'', o);
    for (size_t i = 0; ok && i < r->nfacts; i++) {
        fputs(i ? " " : "", o);
        csv_name(o, r->facts[i].name);
        fprintf(o, "=%.6g", r->facts[i].value);
    }
    fputc('"', o);
    /* The metrics' columns: empty where this row has no such metric. */
    for (size_t i = 0; i < nnames; i++) {
        const bench__metric *m = ok ? bench__metric_find(r, names[i]) : NULL;
        if (!m) {
            for (size_t c = 0; c < NMETRIC_COLS; c++)
                fputc(',', o);
            continue;
        }
        fprintf(o, ",%.6g,%.6g,%.6g,", m->est.median.point, m->est.median.lower,
                m->est.median.upper);
        csv_string(o, m->unit);
        fprintf(o, ",%.6g", m->min_fraction);
    }
    fputc('\n', o);
}

static void csv_begin(bench__reporter *rep, const bench__context *ctx)
{
    (void)rep;
    (void)ctx;
}

static void csv_result(bench__reporter *rep, const bench__result *r)
{
    (void)rep;
    (void)r;
}

/* The whole table at the end: its metric columns are those of every row. */
static int csv_end(bench__reporter *rep, const bench__context *ctx, const bench__result *all,
                   size_t n)
{
    (void)ctx;
    const char **names = NULL;
    ptrdiff_t nnames = csv_metric_names(all, n, &names);
    if (nnames < 0)
        return BENCH_ENOMEM;
    csv_header(rep->out, names, (size_t)nnames);
    for (size_t i = 0; i < n; i++)
        csv_row(rep->out, &all[i], names, (size_t)nnames);
    free(names);
    fflush(rep->out);
    return 0;
}

void bench__reporter_csv(bench__reporter *rep, FILE *out)
{
    memset(rep, 0, sizeof *rep);
    rep->begin = csv_begin;
    rep->result = csv_result;
    rep->end = csv_end;
    rep->out = out;
}

/* ---- Markdown ---- */

/* Escaped (control characters as \xNN), then Markdown's own characters backslashed. */
static void md_text(FILE *o, const char *s)
{
    char buf[4 * sizeof ((bench__result *)0)->message];
    bench__escape(buf, sizeof buf, s);
    for (const char *p = buf; *p; p++) {
        if (*p == '|' || *p == '\\' || *p == '*' || *p == '_' || *p == '`' || *p == '<' ||
            *p == '[')
            fputc('\\', o);
        fputc(*p, o);
    }
}

/* The change column's cell: "+1.23% [+0.80%, +1.66%] (regressed; detectable 0.95%)", "+9.10%
 * (no change: same program)" where the program's identity settled it, or the status alone
 * ("skipped", "new"). */
static void md_change(FILE *o, const bench__change *c)
{
    if (!c)
        fputs(" |", o);
    else if (c->same_program)
        fprintf(o, " %+.2f%% (%s: same program) |", (c->ratio - 1.0) * 100.0,
                bench__verdict_name(c->verdict));
    else if (c->same_code) {
        char text[96];
        bench__same_code_text(text, sizeof text, c);
        fprintf(o, " %+.2f%% [%+.2f%%, %+.2f%%] (%s: %s) |", (c->ratio - 1.0) * 100.0,
                (c->ratio_lower - 1.0) * 100.0, (c->ratio_upper - 1.0) * 100.0,
                bench__verdict_name(c->verdict), text);
    }
    else if (bench__verdict_has_numbers(c->verdict) && isfinite(c->mde))
        fprintf(o, " %+.2f%% [%+.2f%%, %+.2f%%] (%s; detectable %.2f%%) |",
                (c->ratio - 1.0) * 100.0, (c->ratio_lower - 1.0) * 100.0,
                (c->ratio_upper - 1.0) * 100.0, bench__verdict_name(c->verdict), c->mde * 100.0);
    else if (bench__verdict_has_numbers(c->verdict))
        fprintf(o, " %+.2f%% (%s) |", (c->ratio - 1.0) * 100.0, bench__verdict_name(c->verdict));
    else
        fprintf(o, " %s |", bench__verdict_name(c->verdict));
}

static int md_end(bench__reporter *rep, const bench__context *ctx, const bench__result *all,
                  size_t n)
{
    FILE *o = rep->out;
    /* One more column per metric name any result has: its median per iteration. */
    const char *names[BENCH__MAX_METRICS];
    size_t nnames = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; all[i].status == BENCH__OK && j < all[i].nmetrics; j++) {
            size_t k = 0;
            while (k < nnames && strcmp(names[k], all[i].metrics[j].name) != 0)
                k++;
            if (k == nnames && nnames < BENCH__MAX_METRICS)
                names[nnames++] = all[i].metrics[j].name;
        }
    /* With --baseline, a last column: the change against it, or the comparison status. */
    const bench__comparison *cmp = ctx->comparison;
    fprintf(o, "| Benchmark | Time (median) | %.0f%% CI | Throughput | Samples | Outliers |",
            ctx->confidence_level * 100.0);
    for (size_t k = 0; k < nnames; k++) {
        fputc(' ', o);
        md_text(o, names[k]);
        fputs(" /iter |", o);
    }
    if (cmp) {
        fputs(" Change vs ", o);
        md_text(o, cmp->baseline);
        fputs(" |", o);
    }
    fputs("\n|---|---:|---|---:|---:|---:|", o);
    for (size_t k = 0; k < nnames; k++)
        fputs("---:|", o);
    if (cmp)
        fputs("---|", o);
    fputc('\n', o);
    for (size_t i = 0; i < n; i++) {
        const bench__result *r = &all[i];
        fputs("| ", o);
        md_text(o, r->inst->id);
        if (r->status != BENCH__OK) {
            fprintf(o, " | %s | ", bench__status_name(r->status));
            md_text(o, r->message);
            fputs(" | | | |", o);
            for (size_t k = 0; k < nnames; k++)
                fputs(" |", o);
            if (cmp)
                md_change(o, r->change);
            fputc('\n', o);
            continue;
        }
        char mid[32], lo[32], hi[32], thr[96] = "";
        bench__fmt_time(mid, sizeof mid, r->est.median.point);
        bench__fmt_time(lo, sizeof lo, r->est.median.lower);
        bench__fmt_time(hi, sizeof hi, r->est.median.upper);
        if (r->settings.bytes_per_iter)
            bench__fmt_rate(thr, sizeof thr, rate((double)r->settings.bytes_per_iter,
                                                  r->est.median.point), "B");
        else if (r->settings.elements_per_iter)
            bench__fmt_rate(thr, sizeof thr, rate((double)r->settings.elements_per_iter,
                                                  r->est.median.point), "elem");
        bench__threads_summary ts;
        if (bench__threads_summary_of(r, &ts)) {
            /* A threaded body: all its threads' iterations per second, as the pretty line. */
            char total[32];
            size_t len = strlen(thr);
            bench__fmt_rate(total, sizeof total, ts.total_ips, "iter");
            snprintf(thr + len, sizeof thr - len, "%s%u threads: total %s", len ? "; " : "",
                     ts.count, total);
        }
        const bench__outliers *ol = &r->outliers;
        fprintf(o, " | %s | [%s, %s] | %s | %zu | %zu |", mid, lo, hi, thr, r->nsamples,
                ol->low_severe + ol->low_mild + ol->high_mild + ol->high_severe);
        for (size_t k = 0; k < nnames; k++) {
            const bench__metric *m = bench__metric_find(r, names[k]);
            char cell[48] = "";
            if (m)
                bench__fmt_metric(cell, sizeof cell, m->est.median.point, m->unit);
            fprintf(o, " %s%s |", cell, m && m->scaled ? " (scaled)" : "");
        }
        if (cmp)
            md_change(o, r->change);
        fputc('\n', o);
    }
    /* Benchmarks the baseline has and this program does not: a row each, nothing measured. */
    for (size_t i = 0; cmp && i < cmp->nremoved; i++) {
        fputs("| ", o);
        md_text(o, cmp->removed[i]);
        fputs(" | | | | | |", o);
        for (size_t k = 0; k < nnames; k++)
            fputs(" |", o);
        fputs(" removed |\n", o);
    }
    /* Rows no machine could have measured: a note under the table says so, with the remedy. */
    for (size_t i = 0; i < n; i++) {
        if (!bench__optimised_away(&all[i]))
            continue;
        fputs("\n> **Note:** ", o);
        md_text(o, all[i].inst->id);
        fputs(": ", o);
        md_text(o, bench__optimised_away_note);
        fputc('\n', o);
    }
    /* A table of unoptimised benchmarks travels without the run's stderr: it says so itself. */
    char warning[256];
    if (bench__user_builds_warning(ctx->user_builds, warning, sizeof warning)) {
        fputs("\n> **Warning:** ", o);
        md_text(o, warning);
        fputc('\n', o);
    }
    return 0;
}

void bench__reporter_markdown(bench__reporter *rep, FILE *out)
{
    bench__reporter_at_end(rep, out, md_end);
}
