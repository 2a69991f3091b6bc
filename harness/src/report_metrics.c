/*
 * report_metrics.c: the metrics block of the pretty reporter. Under a result's time it prints
 * what the probes recorded beside the time (perf counters, allocation counts, ...), one line per
 * metric, per iteration like the time (the median of the samples' totals divided by their
 * iterations, with its bootstrap interval), then the result's facts (IPC and the miss rates
 * derived from the counters, peak heap, ...). Pure formatting: reads a bench__result only.
 */
#include <math.h>
#include <string.h>

#include "report_metrics.h"

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
    for (size_t i = 0; i < r->nmetrics; i++) {
        int l = (int)strlen(r->metrics[i].name) + 1;
        if (l > w && l <= NAME_COL_MAX)
            w = l;
    }
    for (size_t i = 0; i < r->nfacts; i++) {
        int l = (int)strlen(r->facts[i].name) + 1;
        if (l > w && l <= NAME_COL_MAX)
            w = l;
    }
    for (size_t i = 0; i < r->nmetrics; i++) {
        const bench__metric *m = &r->metrics[i];
        char name[80], mid[48], lo[48], hi[48];
        bench__msg(name, sizeof name, "%s:", m->name);
        bench__fmt_metric(mid, sizeof mid, m->est.median.point, m->unit);
        bench__fmt_metric(lo, sizeof lo, m->est.median.lower, m->unit);
        bench__fmt_metric(hi, sizeof hi, m->est.median.upper, m->unit);
        fprintf(o, "%*s%-*s %s%s/iter%s [%s %s]", INDENT, "", w, name, bold, mid, reset, lo, hi);
        if (m->scaled)
            fprintf(o, " %s(scaled: counted %.0f%% of the time)%s", yellow,
                    100.0 * m->min_fraction, reset);
        fputc('\n', o);
    }
    for (size_t i = 0; i < r->nfacts; i++) {
        const bench__fact *f = &r->facts[i];
        char name[80], val[48];
        bench__msg(name, sizeof name, "%s:", f->name);
        if (strncmp(f->unit, "misses/", 7) == 0 && isfinite(f->value))
            bench__msg(val, sizeof val, "%.2f%% (%s)", 100.0 * f->value, f->unit);
        else if (strcmp(f->unit, "instr/cycle") == 0 && isfinite(f->value))
            bench__msg(val, sizeof val, "%.3f %s", f->value, f->unit);
        else
            bench__fmt_metric(val, sizeof val, f->value, f->unit);
        fprintf(o, "%*s%-*s %s\n", INDENT, "", w, name, val);
    }
}
