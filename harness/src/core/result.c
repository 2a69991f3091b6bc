/*
 * result.c: the lifetime of a benchmark's result (result.h): the metrics and facts probes add
 * to it, skipping it with a reason, and freeing what it owns. Every layer that fills a result
 * (the runner, the probes, the JSON reader) goes through these, so a result is always freed the
 * same way.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/probe.h"
#include "core/result.h"

void bench__result_destroy(bench__result *r)
{
    free(r->iters);
    free(r->totals_ns);
    free(r->process);
    free(r->proc_info);
    r->iters = r->totals_ns = NULL;
    r->process = NULL;
    r->proc_info = NULL;
    for (size_t i = 0; i < r->nmetrics; i++) {
        free(r->metrics[i].totals);
        r->metrics[i].totals = NULL;
    }
    free(r->metric_changes);
    r->metric_changes = NULL;
    r->nmetrics = 0;
    r->nsamples = 0;
}

int bench__metric_add(bench__result *r, const char *name, const char *unit, const char *source)
{
    if (r->nmetrics >= BENCH__MAX_METRICS) {
        if (r->status == BENCH__OK) {
            r->status = BENCH__FAILED;
            bench__msg(r->message, sizeof r->message,
                       "more than %d metrics per benchmark (metric '%s')", BENCH__MAX_METRICS,
                       name);
        }
        return -1;
    }
    size_t cap = (size_t)r->settings.sample_size;
    if (cap < r->nsamples)
        cap = r->nsamples;
    if (cap < 1)
        cap = 1;
    bench__metric *m = &r->metrics[r->nmetrics];
    memset(m, 0, sizeof *m);
    m->totals = calloc(cap, sizeof *m->totals);
    if (!m->totals) {
        if (r->status == BENCH__OK) {
            r->status = BENCH__FAILED;
            bench__msg(r->message, sizeof r->message, "out of memory for metric '%s'", name);
        }
        return -1;
    }
    bench__msg(m->name, sizeof m->name, "%s", name);
    bench__msg(m->unit, sizeof m->unit, "%s", unit);
    bench__msg(m->source, sizeof m->source, "%s", source);
    m->min_fraction = 1.0;
    return (int)r->nmetrics++;
}

const bench__metric *bench__metric_find(const bench__result *r, const char *name)
{
    for (size_t i = 0; i < r->nmetrics; i++)
        if (strcmp(r->metrics[i].name, name) == 0)
            return &r->metrics[i];
    return NULL;
}

void bench__fact_add(bench__result *r, const char *name, const char *unit, double value)
{
    size_t i = 0;
    while (i < r->nfacts && strcmp(r->facts[i].name, name) != 0)
        i++;
    if (i == BENCH__MAX_FACTS)
        return;
    if (i == r->nfacts)
        r->nfacts++;
    bench__msg(r->facts[i].name, sizeof r->facts[i].name, "%s", name);
    bench__msg(r->facts[i].unit, sizeof r->facts[i].unit, "%s", unit);
    r->facts[i].value = value;
}

void bench__result_skip(bench__result *r, const char *fmt, ...)
{
    if (r->status != BENCH__OK)
        return;
    va_list ap;
    va_start(ap, fmt);
    r->status = BENCH__SKIPPED;
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

/* Releases the probes attached so far (a later one stopped the benchmark from running). */

/* The x of an instance in a growth series: its parameter, or the integer value of its grid's
 * only axis. */
static bool series_x(const bench__instance *in, double *x)
{
    if (in && in->has_param) {
        *x = (double)in->param;
        return true;
    }
    if (!in || in->nargs != 1)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(in->args[0].value, &end, 10);
    *x = (double)v;
    return errno == 0 && end != in->args[0].value && *end == '\0';
}

int bench__series_complexity(const bench__result *all, size_t n, size_t first, size_t *count,
                             bench__complexity *out)
{
    const bench__instance *in = all[first].inst;
    double v;
    size_t k = 1;
    while (series_x(in, &v) && first + k < n && all[first + k].inst &&
           all[first + k].inst->desc == in->desc && series_x(all[first + k].inst, &v))
        k++;
    *count = k;
    if (!series_x(in, &v) || k < 3)
        return 0;
    double *x = malloc(k * sizeof *x), *y = malloc(k * sizeof *y);
    size_t m = 0;
    for (size_t i = 0; x && y && i < k; i++) {
        const bench__result *r = &all[first + i];
        if (r->status == BENCH__OK && series_x(r->inst, &v) && v > 1 && r->est.median.point > 0) {
            x[m] = v;
            y[m++] = r->est.median.point;
        }
    }
    int fitted = x && y && bench__complexity_fit(x, y, m, out) == 0;
    free(x);
    free(y);
    return fitted;
}
