/*
 * report_metrics.c: the metrics block of the pretty reporter. Under a result's time it prints
 * what the probes recorded beside the time (perf counters, allocation counts, ...), one line per
 * metric, per iteration like the time (the median of the samples' totals divided by their
 * iterations, with its bootstrap interval), then the result's facts (IPC and the miss rates
 * derived from the counters, peak heap, ...). Pure formatting: reads a bench__result only.
 * Names and units come from probes and users: they are printed escaped (bench__escape).
 */
#include <math.h>
#include <string.h>

#include "core/base.h"
#include "core/probe.h"
#include "core/result.h"
#include "report/report_metrics.h"

/* The detail lines of the pretty reporter start in this column (its ID_WIDTH). */
#define INDENT 24
/* Metric names wider than this do not widen the name column. */
#define NAME_COL_MAX 24

void bench__fmt_count(char *buf, size_t len, double v)
{
    static const char *const prefix[] = {"", " k", " M", " G", " T", " P"};
    if (!isfinite(v)) {
        bench__msg(buf, len, "%s", "n/a");
        return;
    }
    double a = fabs(v);
    if (a == 0) {
        bench__msg(buf, len, "%s", "0");
        return;
    }
    if (a < 1) {
        bench__msg(buf, len, "%.4g", v);
        return;
    }
    size_t k = 0;
    /* 999.96 rounds to "1000": move to the next prefix before rounding does. */
    while (a >= 999.95 && k + 1 < sizeof prefix / sizeof prefix[0]) {
        a /= 1000;
        v /= 1000;
        k++;
    }
    int decimals = a >= 99.995 ? 1 : a >= 9.9995 ? 2 : 3;
    bench__msg(buf, len, "%.*f%s", decimals, v, prefix[k]);
}

void bench__fmt_metric(char *buf, size_t len, double v, const char *unit)
{
    if (strcmp(unit, "ns") == 0) {
        bench__fmt_time(buf, len, v);
        return;
    }
    char num[32];
    bench__fmt_count(num, sizeof num, v);
    if (strcmp(unit, "events") == 0 || unit[0] == '\0') {
        bench__msg(buf, len, "%s", num);
        return;
    }
    /* "1.234 k" + "B" -> "1.234 kB"; "512.0" + "B" -> "512.0 B". */
    bool has_prefix = strchr(num, ' ') != NULL;
    bench__msg(buf, len, "%s%s%s", num, has_prefix ? "" : " ", unit);
}

void bench__print_metrics(FILE *o, const bench__result *r, bool color)
{
    if (r->status != BENCH__OK || (r->nmetrics == 0 && r->nfacts == 0))
        return;
    const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "";
    const char *yellow = color ? "\033[33m" : "";
    int w = 0;
    char esc[4 * sizeof r->metrics[0].name], unit[4 * sizeof r->metrics[0].unit];
    for (size_t i = 0; i < r->nmetrics; i++) {
        int l = (int)strlen(bench__escape(esc, sizeof esc, r->metrics[i].name)) + 1;
        if (l > w && l <= NAME_COL_MAX)
            w = l;
    }
    for (size_t i = 0; i < r->nfacts; i++) {
        int l = (int)strlen(bench__escape(esc, sizeof esc, r->facts[i].name)) + 1;
        if (l > w && l <= NAME_COL_MAX)
            w = l;
    }
    for (size_t i = 0; i < r->nmetrics; i++) {
        const bench__metric *m = &r->metrics[i];
        char name[sizeof esc + 2], mid[96], lo[96], hi[96];
        bench__msg(name, sizeof name, "%s:", bench__escape(esc, sizeof esc, m->name));
        bench__escape(unit, sizeof unit, m->unit);
        bench__fmt_metric(mid, sizeof mid, m->est.median.point, unit);
        bench__fmt_metric(lo, sizeof lo, m->est.median.lower, unit);
        bench__fmt_metric(hi, sizeof hi, m->est.median.upper, unit);
        fprintf(o, "%*s%-*s %s%s/iter%s [%s %s]", INDENT, "", w, name, bold, mid, reset, lo, hi);
        if (strcmp(m->source, "counter/s") == 0 && r->est.median.point > 0) {
            /* A counter asked for as a rate: its count per second of the time per iteration. */
            char rate[96];
            bench__fmt_metric(rate, sizeof rate, 1e9 * m->est.median.point / r->est.median.point,
                              unit);
            fprintf(o, " = %s/s", rate);
        }
        if (m->scaled)
            fprintf(o, " %s(scaled: counted %.0f%% of the time)%s", yellow,
                    100.0 * m->min_fraction, reset);
        fputc('\n', o);
    }
    for (size_t i = 0; i < r->nfacts; i++) {
        const bench__fact *f = &r->facts[i];
        char name[sizeof esc + 2], val[96];
        bench__msg(name, sizeof name, "%s:", bench__escape(esc, sizeof esc, f->name));
        bench__escape(unit, sizeof unit, f->unit);
        if (bench__starts_with(unit, "misses/") && isfinite(f->value))
            bench__msg(val, sizeof val, "%.2f%% (%s)", 100.0 * f->value, unit);
        else if (strcmp(unit, "instr/cycle") == 0 && isfinite(f->value))
            bench__msg(val, sizeof val, "%.3f %s", f->value, unit);
        else
            bench__fmt_metric(val, sizeof val, f->value, unit);
        fprintf(o, "%*s%-*s %s\n", INDENT, "", w, name, val);
    }
}
