/*
 * result.c: the lifetime of a benchmark's result (result.h): the metrics and facts probes add
 * to it, skipping it with a reason, and freeing what it owns. Every layer that fills a result
 * (the runner, the probes, the JSON reader) goes through these, so a result is always freed the
 * same way.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/probe.h"
#include "core/result.h"
#include "stats/stats.h"

const char bench__optimised_away_note[] =
    "the body was optimised away: under 0.1 ns per iteration is more than one iteration per "
    "cycle of a 10 GHz clock, which no machine runs; keep its work with bench_black_box(value)";

bool bench__optimised_away(const bench__result *r)
{
    return r->status == BENCH__OK && r->est.median.point >= 0 &&
           r->est.median.point < BENCH__FASTEST_ITERATION_NS;
}

void bench__explanation_free(bench__explanation *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nstacks; i++)
        free(e->stacks[i].frames);
    free(e->stacks);
    free(e);
}

void bench__result_destroy(bench__result *r)
{
    free(r->iters);
    free(r->totals_ns);
    for (size_t i = 0; i < r->nspans; i++)
        free(r->spans[i].ratios);
    r->nspans = 0;
    free(r->process);
    free(r->proc_info);
    r->iters = r->totals_ns = NULL;
    r->process = NULL;
    r->proc_info = NULL;
    free(r->thread_cpus);
    r->thread_cpus = NULL;
    for (size_t i = 0; i < r->nmetrics; i++) {
        free(r->metrics[i].totals);
        r->metrics[i].totals = NULL;
    }
    free(r->metric_changes);
    r->metric_changes = NULL;
    bench__explanation_free(r->explanation);
    r->explanation = NULL;
    r->nmetrics = 0;
    r->nsamples = 0;
}

int bench__metric_add(bench__result *r, const char *name, const char *unit, const char *source)
{
    if (r->nmetrics >= BENCH__MAX_METRICS) {
        bench__result_fail(r, "more than %d metrics per benchmark (metric '%s')",
                           BENCH__MAX_METRICS, name);
        return -1;
    }
    /* A name is one metric's: the files key metrics by name, and a comparison finds a metric
     * by it, so a benchmark's own counter must not shadow a metric the harness records. */
    for (size_t i = 0; i < r->nmetrics; i++)
        if (strcmp(r->metrics[i].name, name) == 0) {
            bool counter = bench__starts_with(source, "counter") ||
                           bench__starts_with(r->metrics[i].source, "counter");
            bench__result_fail(r, "'%s' names two metrics (of %s and of %s): %s", name,
                               r->metrics[i].source, source,
                               counter ? "a name in BENCH_FN's .counters must not be one of "
                                         "the harness's metrics"
                                       : "a metric's name must be unique in a benchmark");
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
        bench__result_fail(r, "out of memory for metric '%s'", name);
        return -1;
    }
    bench__msg(m->name, sizeof m->name, "%s", name);
    bench__msg(m->unit, sizeof m->unit, "%s", unit);
    bench__msg(m->source, sizeof m->source, "%s", source);
    m->min_fraction = 1.0;
    return (int)r->nmetrics++;
}

int bench__threads_summary_of(const bench__result *r, bench__threads_summary *out)
{
    if (r->threads < 2 || r->status != BENCH__OK)
        return 0;
    bench__threads_summary s = {.count = r->threads};
    s.nper = r->threads < BENCH__THREAD_METRICS ? r->threads : BENCH__THREAD_METRICS;
    for (size_t t = 0; t < s.nper; t++) {
        char name[32];
        bench__msg(name, sizeof name, "thread_%zu", t);
        const bench__metric *m = bench__metric_find(r, name);
        if (!m)
            return 0;
        double v = m->est.median.point;
        s.per_thread[t] = v;
        if (t == 0 || v > s.slowest_ns)
            s.slowest_ns = v;
        if (t == 0 || v < s.fastest_ns)
            s.fastest_ns = v;
    }
    /* Beyond BENCH__THREAD_METRICS threads only the fastest of every sample is kept. */
    const bench__metric *fast = bench__metric_find(r, "fastest_thread");
    if (fast && r->threads > s.nper && fast->est.median.point < s.fastest_ns)
        s.fastest_ns = fast->est.median.point;
    s.spread = s.slowest_ns > 0 ? (s.slowest_ns - s.fastest_ns) / s.slowest_ns : 0;
    double t = r->est.median.point;
    s.total_ips = t > 0 ? (double)r->threads * 1e9 / t : 0;
    *out = s;
    return 1;
}

uint64_t *bench__thread_cpus(bench__result *r, unsigned threads)
{
    if (!r->thread_cpus) {
        r->thread_cpus = calloc((size_t)threads * BENCH__CPU_WORDS, sizeof *r->thread_cpus);
        if (r->thread_cpus)
            r->threads = threads;
    }
    return r->thread_cpus;
}

bool bench__thread_ran_on(const bench__result *r, unsigned t, unsigned c)
{
    if (!r->thread_cpus || t >= r->threads || c >= 64 * BENCH__CPU_WORDS)
        return false;
    return (r->thread_cpus[(size_t)t * BENCH__CPU_WORDS + c / 64] >> (c % 64)) & 1;
}

const bench__metric *bench__metric_find(const bench__result *r, const char *name)
{
    for (size_t i = 0; i < r->nmetrics; i++)
        if (strcmp(r->metrics[i].name, name) == 0)
            return &r->metrics[i];
    return NULL;
}

bool bench__span_sample(bench__result *r, const char *name, double ns, uint64_t count,
                        double sample_ns)
{
    size_t i = 0;
    while (i < r->nspans && strcmp(r->spans[i].name, name) != 0)
        i++;
    if (i == r->nspans) {
        if (r->nspans == BENCH__MAX_SPANS)
            return false;
        r->nspans++;
        memset(&r->spans[i], 0, sizeof r->spans[i]);
        bench__msg(r->spans[i].name, sizeof r->spans[i].name, "%s", name);
    }
    bench__span_total *s = &r->spans[i];
    s->ns += ns;
    s->count += count;
    if (!(sample_ns > 0))
        return true;
    if (s->nratios == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        double *p = realloc(s->ratios, cap * sizeof *p);
        if (!p)
            return false;
        s->ratios = p;
        s->cap = cap;
    }
    s->ratios[s->nratios++] = ns / sample_ns;
    return true;
}

double bench__span_share(const bench__result *r, size_t i)
{
    if (i >= r->nspans || r->spans[i].nratios == 0)
        return NAN;
    const bench__span_total *s = &r->spans[i];
    double *copy = malloc(s->nratios * sizeof *copy);
    if (!copy)
        return NAN;
    memcpy(copy, s->ratios, s->nratios * sizeof *copy);
    double m = bench__median_inplace(copy, s->nratios);
    free(copy);
    return m;
}

const bench__fact *bench__fact_find(const bench__result *r, const char *name)
{
    for (size_t i = 0; i < r->nfacts; i++)
        if (strcmp(r->facts[i].name, name) == 0)
            return &r->facts[i];
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

void bench__result_vstatus(bench__result *r, bench__status st, const char *fmt, va_list ap)
{
    if (r->status != BENCH__OK)
        return; /* the first reason wins */
    r->status = st;
    vsnprintf(r->message, sizeof r->message, fmt, ap);
}

void bench__result_fail(bench__result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bench__result_vstatus(r, BENCH__FAILED, fmt, ap);
    va_end(ap);
}

void bench__result_skip(bench__result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bench__result_vstatus(r, BENCH__SKIPPED, fmt, ap);
    va_end(ap);
}

/* The x of an instance in a growth series along `axis`: its parameter (axis -1), or the integer
 * value of that axis of its grid. */
static bool series_x(const bench__instance *in, int axis, double *x)
{
    if (axis < 0) {
        *x = (double)in->param;
        return in->has_param;
    }
    if ((size_t)axis >= in->nargs)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(in->args[axis].value, &end, 10);
    *x = (double)v;
    return errno == 0 && end != in->args[axis].value && *end == '\0';
}

/* Whether a and b have the same values on every axis but `axis`. */
static bool same_others(const bench__instance *a, const bench__instance *b, int axis)
{
    for (size_t i = 0; i < a->nargs; i++)
        if ((int)i != axis && strcmp(a->args[i].value, b->args[i].value) != 0)
            return false;
    return true;
}

/* Fits the series of the `k` results all[idx[..]] along `axis` and appends it to *g. */
static int add_growth(const bench__result *all, const size_t *idx, size_t k, int axis,
                      bench__growth **g, size_t *ng)
{
    if (k < 3)
        return 0;
    double *x = malloc(k * sizeof *x), *y = malloc(k * sizeof *y), v;
    size_t m = 0;
    for (size_t i = 0; x && y && i < k; i++) {
        const bench__result *r = &all[idx[i]];
        if (r->status == BENCH__OK && series_x(r->inst, axis, &v) && v > 1 &&
            r->est.median.point > 0) {
            x[m] = v;
            y[m++] = r->est.median.point;
        }
    }
    bench__complexity cx;
    int rc = x && y ? 0 : BENCH_ENOMEM;
    if (rc == 0 && bench__complexity_fit(x, y, m, &cx) == 0) {
        bench__growth *p = realloc(*g, (*ng + 1) * sizeof *p);
        if (p) {
            p[*ng] = (bench__growth){.at = all[idx[0]].inst, .axis = axis, .parameters = k,
                                     .fit = cx};
            *g = p;
            ++*ng;
        } else {
            rc = BENCH_ENOMEM;
        }
    }
    free(x);
    free(y);
    return rc;
}

/* The series of one BENCH_FN's results, all[first .. first+k): its parameter list, or one per
 * grid axis and combination of the other axes' values. */
static int block_growths(const bench__result *all, size_t first, size_t k, bench__growth **g,
                         size_t *ng)
{
    const bench__instance *in = all[first].inst;
    size_t *idx = malloc(k * sizeof *idx);
    bool *used = calloc(k, sizeof *used);
    int rc = idx && used ? 0 : BENCH_ENOMEM;
    if (rc == 0 && in->has_param) {
        for (size_t i = 0; i < k; i++)
            idx[i] = first + i;
        rc = add_growth(all, idx, k, -1, g, ng);
    }
    for (int a = 0; rc == 0 && !in->has_param && (size_t)a < in->nargs; a++) {
        /* Time against the thread count is contention, not a complexity class. */
        if (strcmp(in->args[a].name, "threads") == 0)
            continue;
        memset(used, 0, k * sizeof *used);
        for (size_t s = 0; rc == 0 && s < k; s++) {
            if (used[s])
                continue;
            size_t m = 0;
            for (size_t t = s; t < k; t++)
                if (!used[t] && same_others(all[first + s].inst, all[first + t].inst, a)) {
                    used[t] = true;
                    idx[m++] = first + t;
                }
            rc = add_growth(all, idx, m, a, g, ng);
        }
    }
    free(idx);
    free(used);
    return rc;
}

int bench__growths(const bench__result *all, size_t n, bench__growth **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n;) {
        size_t k = 1;
        while (all[i].inst && i + k < n && all[i + k].inst &&
               all[i + k].inst->desc == all[i].inst->desc)
            k++;
        if (all[i].inst)
            rc = block_growths(all, i, k, out, count);
        i += k;
    }
    if (rc) {
        free(*out);
        *out = NULL;
        *count = 0;
    }
    return rc;
}
