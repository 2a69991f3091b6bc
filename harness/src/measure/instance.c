/*
 * instance.c: one benchmark instance set up, run round by round and finished, and the in-process
 * run of a list of them through the one scheduler (schedule.c). Setting up resolves the settings
 * and plan, makes the sample arrays and attaches the run's probes, then the wall clock
 * (innermost), and a threaded body's per-thread metrics; finishing detaches them and analyses the
 * pooled samples. Each round is the runner's (runner.c: bench__instance_round), which drives the
 * body's samples.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "core/options.h"
#include "core/probe.h"
#include "core/registry.h"
#include "core/result.h"
#include "probes/measure.h"
#include "measure/body.h"
#include "measure/plan.h"
#include "measure/run.h"
#include "measure/trace.h"
#include "sys/clock.h"

static void detach_attached(bench_t *b)
{
    for (size_t j = b->nprobes; j-- > 0;)
        if (b->probes[j]->detach)
            b->probes[j]->detach(b->probes[j], b->r);
    b->nprobes = b->nouter = 0;
    b->primary = b->completer = NULL;
}

/*
 * Attaches the run's probes to this benchmark, then the wall clock's (innermost), and picks the
 * primary probe: the first attached that can give the time. Maps each probe value to its metric.
 * False when the benchmark must not run (skipped/failed).
 */
static bool probes_attach(bench_t *b)
{
    bench__result *r = b->r;
    const bench__run_options *opt = b->opt;
    size_t nrun = opt->nprobes < BENCH__MAX_METRICS ? opt->nprobes : BENCH__MAX_METRICS;
    bench__probe *wall = bench__wall_probe();
    for (size_t i = 0; i <= nrun; i++) {
        bench__probe *p = i < nrun ? opt->probes[i] : wall;
        if (b->plan.time_only && !p->primary)
            continue; /* A/B workers measure time only (a primary probe's is the time) */
        size_t before = r->nmetrics;
        int rc = p->attach(p, r);
        if (r->status != BENCH__OK) {
            detach_attached(b);
            return false;
        }
        if (rc != 0)
            continue;
        size_t first = b->nvals, own = r->nmetrics - before;
        int time_metric = -1;
        if (p->primary && !b->primary) {
            b->primary = p;
            b->time_slot = first;
            b->completer = p->complete ? p : NULL;
        } else if (p->primary) {
            /* Another probe gives the time: this one's is a metric. */
            if (p->time_metric)
                time_metric = bench__metric_add(r, p->time_metric, "ns", p->name);
            else
                bench__result_fail(r, "two primary probes ('%s' and '%s')", b->primary->name,
                                   p->name);
            if (r->status != BENCH__OK) {
                if (p->detach)
                    p->detach(p, r);
                detach_attached(b);
                return false;
            }
        }
        /* At most BENCH__MAX_METRICS metrics (bench__metric_add fails beyond) and one time. */
        size_t nv = own + (p->primary ? 1 : 0);
        size_t k = 0;
        if (p->primary)
            b->metric_of[first + k++] = p == b->primary ? -1 : time_metric;
        for (size_t j = 0; j < own; j++)
            b->metric_of[first + k++] = (int)(before + j);
        b->probes[b->nprobes] = p;
        b->probe_first[b->nprobes] = first;
        b->frac[b->nprobes] = 1.0;
        b->nprobes++;
        b->nvals += nv;
    }
    /* The wall clock attaches to everything and last: it is innermost. */
    b->nouter = b->nprobes - 1;
    b->clock = b->probes[b->nouter];
    b->clock_out = &b->vals[b->probe_first[b->nouter]];
    b->clock_start = b->clock->start;
    b->clock_stop = b->clock->stop;
    return r->status == BENCH__OK;
}

static void probes_detach(bench_t *b)
{
    bench__result *r = b->r;
    for (size_t i = 0; i < b->nprobes; i++) {
        size_t end = i + 1 < b->nprobes ? b->probe_first[i + 1] : b->nvals;
        for (size_t j = b->probe_first[i]; j < end; j++) {
            int m = b->metric_of[j];
            if (m >= 0 && (size_t)m < r->nmetrics) {
                r->metrics[m].min_fraction = b->frac[i];
                r->metrics[m].scaled = b->frac[i] < 1.0;
            }
        }
    }
    for (size_t i = b->nprobes; i-- > 0;)
        if (b->probes[i]->detach)
            b->probes[i]->detach(b->probes[i], r);
}

/* A threaded benchmark's per-thread metrics: thread_0 .. thread_{K-1} (K threads at most
 * BENCH__THREAD_METRICS), and fastest_thread only when there are more threads than that (with
 * K threads it would repeat the fastest of thread_0 .. thread_{K-1}); false when they do not
 * fit (r failed). */
static bool threads_attach(bench_t *b)
{
    bench__result *r = b->r;
    unsigned n = (unsigned)b->inst->threads;
    unsigned kept = n < BENCH__THREAD_METRICS ? n : BENCH__THREAD_METRICS;
    unsigned nmetrics = kept + (n > kept);
    int first = -1;
    for (unsigned i = 0; i < nmetrics; i++) {
        char name[32];
        if (i < kept)
            bench__msg(name, sizeof name, "thread_%u", i);
        else
            bench__msg(name, sizeof name, "%s", "fastest_thread");
        int m = bench__metric_add(r, name, "ns", "threads");
        if (m < 0) {
            detach_attached(b);
            return false;
        }
        if (i == 0)
            first = m;
    }
    b->thread_metric = first;
    r->threads = n;
    return true;
}

/* Sets up one benchmark (settings, sample arrays, probes); false when it must not run. */
static bool instance_begin(bench_t *b, const bench__instance *inst, const bench__run_options *opt,
                           bench__result *r)
{
    memset(b, 0, sizeof *b);
    b->inst = inst;
    b->opt = opt;
    b->r = r;
    int64_t calibrating = bench__now_ns();
    b->clk = bench__clock_calibrate();
    if (bench__spans_on)
        bench__trace_span(0, "clock calibration", calibrating);
    bench__plan_for(&b->plan, opt);

    r->inst = inst;
    r->status = BENCH__OK;
    r->nresamples = opt->nresamples;
    r->confidence_level = opt->confidence_level;
    bench__resolve_settings(&r->settings, opt, inst->desc, inst->group);
    b->capacity = (size_t)r->settings.sample_size;
    r->iters = calloc(b->capacity, sizeof *r->iters);
    r->totals_ns = calloc(b->capacity, sizeof *r->totals_ns);
    if (!r->iters || !r->totals_ns) {
        bench__result_fail(r, "out of memory for %zu samples", b->capacity);
        return false;
    }
    b->thread_metric = -1;
    if (inst->threads > BENCH_MAX_THREADS) {
        bench__result_fail(r, "%s: .threads = %d is more than %d threads", inst->id,
                           inst->threads, BENCH_MAX_THREADS);
        return false;
    }
    if (inst->threads > 1 && inst->desc->kind == BENCH_KIND_CUDA) {
        bench__result_fail(r, "%s: a CUDA benchmark cannot run on several threads (.threads = %d)",
                           inst->id, inst->threads);
        return false;
    }
    if (!probes_attach(b))
        return false;
    if (inst->threads > 1 && !threads_attach(b))
        return false;
    /* In one process, probes measure and report per stretch (open counters, peak heap, GPU
     * memory); a worker process is one stretch whatever its probes. */
    b->rounds = b->plan.worker_process ? opt->job.count
                : b->nouter                ? 1
                                           : (unsigned)r->settings.rounds;
    if (b->plan.worker_process && opt->job.index > 0) {
        /* A later process of the benchmark takes the plan process 0 made. */
        r->sampling_used = opt->job.mode;
        b->step = opt->job.step;
        b->est_ns = opt->job.est_ns;
        b->rounds_done = opt->job.index;
        /* A shorter process, when the first ones showed that sampling inside a process adds
         * little to the spread between them (manager.c): its share of the budget, shortened. */
        r->settings.measurement_time *= opt->job.share;
    }
    if (b->rounds > 1) {
        b->round_end = calloc(b->rounds, sizeof *b->round_end);
        if (!b->round_end) {
            detach_attached(b);
            bench__result_fail(r, "%s", "out of memory for rounds");
            return false;
        }
    }
    return true;
}

/* Releases the probes and analyses the pooled samples. */
static void instance_finish(bench_t *b)
{
    bench__result *r = b->r;
    probes_detach(b);
    free(b->round_end);
    b->round_end = NULL;
    r->rounds = b->rounds_done;
    r->plan_step = b->step;
    r->plan_est_ns = b->est_ns;
    r->plan_rounds = b->rounds;
    if (!b->plan.keeps_samples)
        return; /* an A/B worker's coordinator analyses its samples; profile mode has none */
    if (r->status == BENCH__OK && r->nsamples == 0)
        bench_fail(b, "no sample was taken");
    if (r->status != BENCH__OK || !b->plan.analyses)
        return; /* a worker process sends its samples; its manager analyses them all */
    if (bench__analyze(r, b->opt) != 0)
        bench__result_fail(r, "%s", "statistics failed (out of memory?)");
}

void bench__run_instance(const bench__instance *inst, const bench__run_options *opt,
                         bench__result *r)
{
    bench__run_all(&inst, 1, opt, r, NULL, NULL);
}

/* The in-process run's side of the scheduler (schedule.c). */
typedef struct in_process {
    bench_t *bs;
    const bench__instance *const *list;
    const bench__run_options *opt;
    bench__result *results;
    bench__done_fn done;
    void *arg;
} in_process;

static bool ip_finished(size_t i, void *arg)
{
    return ((in_process *)arg)->bs[i].finished;
}

static unsigned ip_rounds(size_t i, void *arg)
{
    return ((in_process *)arg)->bs[i].rounds;
}

static int ip_step(size_t i, unsigned j, void *arg)
{
    in_process *ip = arg;
    bench_t *b = &ip->bs[i];
    bench__trace_process_begin(ip->list[i]->id, j, b->rounds ? b->rounds : 1, (long)getpid());
    if (j == 0 && !instance_begin(b, ip->list[i], ip->opt, &ip->results[i])) {
        b->finished = true;
        instance_finish(b);
        bench__trace_process_end(NULL);
        return 0;
    }
    bench__instance_round(b);
    bench__trace_process_end(NULL);
    if (b->finished)
        instance_finish(b);
    return 0;
}

static void ip_report(size_t i, void *arg)
{
    in_process *ip = arg;
    if (ip->done)
        ip->done(i, &ip->results[i], ip->arg);
}

int bench__run_all(const bench__instance *const *list, size_t n, const bench__run_options *opt,
                   bench__result *results, bench__done_fn done, void *arg)
{
    bench_t *bs = calloc(n ? n : 1, sizeof *bs);
    if (!bs)
        return BENCH_ENOMEM;
    /* The most rounds any benchmark asks for; its rounds_done counts its own. */
    unsigned total = 1;
    for (size_t i = 0; i < n; i++) {
        bench__settings s;
        bench__resolve_settings(&s, opt, list[i]->desc, list[i]->group);
        if ((unsigned)s.rounds > total)
            total = (unsigned)s.rounds;
    }
    static const bench__schedule_ops ops = {ip_finished, ip_rounds, ip_step, ip_report};
    in_process ip = {bs, list, opt, results, done, arg};
    bench__schedule(n, total, false, &ops, &ip);
    for (size_t i = 0; i < n; i++)
        free(bs[i].round_end); /* only an unfinished benchmark's is left */
    free(bs);
    return 0;
}
