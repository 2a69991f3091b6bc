/*
 * manager.c: measurement in worker processes, the default way a run measures: the manager
 * side, which starts the workers (sys/proc.c), reads their lines and pools their samples.
 *
 * Why. On a shared machine most of the variance of a benchmark's median lies between processes
 * (placement in memory, heap state left by earlier benchmarks, transparent huge pages, cache
 * colouring), and samples inside one process cannot see it: an interval built from them is far
 * narrower than the difference between two runs. So each benchmark is measured in P fresh
 * processes of this same program, exec'd with the same arguments and told their job through the
 * BENCH_WORKER_JOB environment variable, one benchmark per process: no benchmark inherits the
 * heap, caches or page tables another one left behind.
 *
 * How. The manager (this process) measures nothing. Process 0 of a benchmark warms up, makes the
 * plan (sampling mode, iteration counts, and how many processes the budget fits) and measures the
 * first share of it; processes 1 .. P-1 reuse that plan, so their values are comparable, and each
 * takes every P-th sample of it after one discarded sample of its own. The processes of different
 * benchmarks are interleaved in time (process 0 of every benchmark, then process 1 of every
 * benchmark in the opposite order, ...), so that a slow minute of the machine spreads over all
 * benchmarks instead of landing on one. No process stops early on a precision target: every
 * benchmark gets its P processes, so the interval over them is not biased by optional stopping.
 * Only how long the later ones measure is decided on what the first ones showed, from spreads
 * alone (plan_stage_two): sampling inside a process that adds little to the spread between
 * processes buys no precision, and those processes measure for a shorter share of the budget.
 *
 * Every measuring mode measures here: the plan kind and the probes are its client's
 * (client.h), set alike in the manager and in each worker. A timed plan is made by process 0
 * and shared as above; a fixed plan (--instructions) needs no PLAN line and runs in one process,
 * which starts under the plan's launcher (valgrind) instead of directly.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/base.h"
#include "core/options.h"
#include "core/registry.h"
#include "core/result.h"
#include "measure/layout.h"
#include "measure/plan.h"
#include "measure/protocol.h"
#include "measure/run.h"
#include "measure/trace.h"
#include "sys/progress.h"
#include "stats/stats.h"
#include "sys/clock.h"
#include "sys/proc.h"

/* What a worker process costs besides its warm-up and measurement, for the progress line's
 * first estimate (s): start, the program's start-up, the benchmark's setup (docs/measurement.md,
 * "Cost": about 8 to 30 ms). */
#define PROCESS_START_S 0.02

/* The two-stage rule: the first STAGE_PROCESSES processes of a benchmark take their whole share
 * of the budget; the later ones a shorter share where that adds at most STAGE_GROWTH to the
 * variance of a process median (10%: the interval over processes about 5% wider at most). */
#define STAGE_PROCESSES 3
#define STAGE_GROWTH 0.1

/* One benchmark's progress through its processes. */
typedef struct iso {
    unsigned count;   /* processes it is measured in (known after process 0) */
    unsigned done;    /* processes finished */
    bool finished;
    bench_sampling mode;
    uint64_t step;
    double est_ns;
    double share;     /* of its measurement time, each process after the first stage takes */
    size_t capacity;  /* room for samples in the result's arrays */
    size_t metrics_seen; /* METRIC lines of the running process */
    unsigned info_capacity; /* room in the result's proc_info */
    double traced_ns;     /* --trace: the last measured sample's ns (its TS line) */
} iso;

static void fail(bench__result *r, bench__failure how, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void fail(bench__result *r, bench__failure how, int code, const char *fmt, ...)
{
    if (r->status == BENCH__FAILED)
        return; /* the first reason wins */
    r->status = BENCH__FAILED;
    r->failure = how;
    r->failure_code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

/* A THREAD line: the CPUs thread l->index of a threaded body was seen on. */
static bool take_thread(bench__result *r, const bench__wire_line *l)
{
    unsigned threads = r->inst->threads > 1 ? (unsigned)r->inst->threads : 0;
    if (l->thread.index >= threads)
        return false;
    if (!bench__thread_cpus(r, threads)) {
        fail(r, BENCH__FAIL_ERROR, 0, "%s", "out of memory for the threads' CPUs");
        return true;
    }
    for (unsigned w = 0; w < BENCH__CPU_WORDS; w++)
        r->thread_cpus[l->thread.index * BENCH__CPU_WORDS + w] |= l->thread.cpus[w];
    return true;
}

/* A METRIC line: process 0 registers the metric, the others must name the same in turn. */
static bool take_metric(bench__result *r, iso *s, unsigned proc, const bench__wire_line *l)
{
    size_t m = s->metrics_seen++;
    if (proc == 0) {
        if (bench__metric_add(r, l->metric.name, l->metric.unit, l->metric.source) < 0)
            return true; /* r is failed with the reason */
    } else if (m >= r->nmetrics || strcmp(r->metrics[m].name, l->metric.name) != 0) {
        return false;
    }
    bench__metric *x = &r->metrics[m];
    x->scaled |= l->metric.scaled;
    if (l->metric.min_fraction < x->min_fraction)
        x->min_fraction = l->metric.min_fraction;
    return true;
}

/* An S line: one sample, with one total per metric. */
static bool take_sample(bench__result *r, iso *s, unsigned proc, const bench__wire_line *l)
{
    if (r->nsamples >= s->capacity || l->sample.nvalues != r->nmetrics)
        return false;
    size_t k = r->nsamples;
    for (size_t m = 0; m < r->nmetrics; m++)
        r->metrics[m].totals[k] = l->sample.values[m];
    r->iters[k] = l->sample.iters;
    r->totals_ns[k] = l->sample.total_ns;
    r->process[k] = proc;
    r->total_iters += (uint64_t)l->sample.iters;
    r->nsamples++;
    return true;
}

/* Takes one parsed line of process `proc` into r (the protocol's reader checked its fields;
 * this checks them against the benchmark); false on a line that does not fit it. */
static bool take(bench__result *r, iso *s, unsigned proc, const bench__wire_line *l,
                 bool *ended)
{
    bench__trace_take(l); /* --trace: every line is the trace's too (trace.c) */
    switch (l->kind) {
    case BENCH__WIRE_PLAN:
        if (proc != 0 || l->plan.rounds > s->count)
            return false;
        s->count = l->plan.rounds;
        s->mode = l->plan.mode;
        s->step = l->plan.step;
        s->est_ns = l->plan.est_ns;
        r->sampling_used = s->mode;
        return true;
    case BENCH__WIRE_SET:
        r->settings.bytes_per_iter = l->set.bytes;
        r->settings.elements_per_iter = l->set.elements;
        return true;
    case BENCH__WIRE_METRIC:
        return take_metric(r, s, proc, l);
    case BENCH__WIRE_FACT: {
        /* Facts are per process (peak heap, ...): the largest over the processes is kept. */
        const bench__fact *old = bench__fact_find(r, l->fact.name);
        if (!old || old->value < l->fact.value)
            bench__fact_add(r, l->fact.name, l->fact.unit, l->fact.value);
        return true;
    }
    case BENCH__WIRE_THREAD:
        return take_thread(r, l);
    case BENCH__WIRE_WARM:
        r->warm_up_iters += l->warm.iters;
        r->warm_up_ns += l->warm.ns;
        return true;
    case BENCH__WIRE_WALL:
        r->measure_wall_s += l->wall.seconds;
        r->sampling_used = l->wall.mode;
        if (l->wall.reason)
            r->stop_reason = l->wall.reason;
        return true;
    case BENCH__WIRE_SAMPLE:
        return take_sample(r, s, proc, l);
    case BENCH__WIRE_TSAMPLE:
        if (l->tsample.phase == BENCH__TRACE_MEASURE)
            s->traced_ns = l->tsample.total_ns;
        return true; /* the trace's (trace.c took it) */
    case BENCH__WIRE_TSPAN:
    case BENCH__WIRE_TCOUNTER:
        return true;
    case BENCH__WIRE_TSHARE: /* a span's time in the sample of the last TS line */
        if (!bench__span_sample(r, l->tshare.name, l->tshare.ns, l->tshare.count, s->traced_ns))
            fail(r, BENCH__FAIL_ERROR, 0, "span '%s': too many span names (at most %d) or out "
                                          "of memory", l->tshare.name, BENCH__MAX_SPANS);
        return true;
    case BENCH__WIRE_PROC:
        if (r->proc_info && proc < s->info_capacity)
            r->proc_info[proc] = l->proc;
        return true;
    case BENCH__WIRE_END:
        *ended = true;
        if (l->end.status == BENCH__SKIPPED)
            bench__result_skip(r, "%s", l->end.message);
        else if (l->end.status == BENCH__FAILED)
            fail(r, BENCH__FAIL_ERROR, 0, "%s", l->end.message);
        return true;
    default: /* a driven worker's lines, or commands: not from a measuring worker */
        return false;
    }
}

/* The launcher's program name, without its directory. */
static const char *launcher_name(const bench__run_options *opt)
{
    const char *slash = strrchr(opt->launcher[0], '/');
    return slash ? slash + 1 : opt->launcher[0];
}

/* --trace: the manager's wait for a worker it started at started_ns, and the worker's track. */
static void trace_begin(const bench__result *r, const iso *s, unsigned proc, const bench__proc *p,
                        int64_t started_ns)
{
    char waiting[256];
    bench__msg(waiting, sizeof waiting, "wait: %s process %u of %u", r->inst->id, proc + 1,
               s->count);
    bench__trace_begin_at(waiting, started_ns);
    bench__trace_process_begin(r->inst->id, proc, s->count, (long)p->pid);
}

/* --trace: how the worker process ended, on its track, and the manager's wait for it. */
static void trace_end(bench__proc *p, bench__proc_end end, bool ended, double timeout)
{
    char how[128];
    bool normal = end == BENCH__PROC_EXITED && ended;
    if (!normal)
        bench__proc_describe(p, timeout, how, sizeof how);
    bench__trace_process_end(normal ? NULL : how);
    bench__trace_end();
}

/* Runs process `proc` of benchmark r; returns BENCH_EUSAGE when the run was interrupted. */
static int run_process(int argc, char **argv, const bench__run_options *opt,
                       bench__result *r, iso *s, unsigned proc)
{
    char job[384], msg[512];
    bench__wire_job wj = {proc, s->count, (int)s->mode, s->step, s->est_ns, s->share,
                          r->inst->id};
    if (bench__wire_job_format(job, sizeof job, &wj, msg, sizeof msg) < 0) {
        fail(r, BENCH__FAIL_ERROR, 0, "%s", msg);
        return 0;
    }
    char **wargv = calloc(opt->nlauncher + (size_t)argc + 2, sizeof *wargv);
    if (!wargv) {
        fail(r, BENCH__FAIL_ERROR, 0, "%s", "out of memory");
        return 0;
    }
    /* The running executable itself, even when its file was replaced or deleted since (a
     * rebuild during the run): the kernel resolves /proc/self/exe in the child to the file
     * this process was started from. Under a launcher, which would see its own executable
     * there, the program goes by its path. */
    char exe[4096];
    const char *path = "/proc/self/exe";
    size_t k = 0;
    if (opt->nlauncher > 0) {
        if (bench__proc_self(exe, sizeof exe, msg, sizeof msg) != 0) {
            free(wargv);
            fail(r, BENCH__FAIL_ERROR, 0, "%s", msg);
            return 0;
        }
        path = opt->launcher[0];
        for (size_t i = 0; i < opt->nlauncher; i++)
            wargv[k++] = (char *)opt->launcher[i];
        wargv[k++] = exe;
        for (int i = 1; i < argc; i++)
            wargv[k++] = argv[i];
    } else {
        for (int i = 0; i < argc; i++)
            wargv[k++] = argv[i];
    }
    bench__proc p;
    bench__proc_spec spec = {.path = path, .argv = wargv, .channel = BENCH__PROC_FD3};
    /* The job travels in the environment: a program with its own main() passes its argv on
     * to bench_main as it likes, and the workers still find their job. So does the process's
     * layout, drawn anew for each (layout.c). */
    bench__layout lay = {0};
    /* Timed plans only: a count of instructions (the fixed plan) must not depend on where the
     * heap happened to start. */
    if (!opt->fixed_layout && opt->plan == BENCH__PLAN_TIMED) {
        bench__rng rng;
        bench__rng_seed(&rng, bench__id_seed(opt->seed ^ (0x9e3779b97f4a7c15ULL * (proc + 1)),
                                             r->inst->id));
        bench__layout_draw(&rng, &lay);
    }
    bench__job_export(job);
    bench__layout_export(&lay);
    int64_t started = bench__now_ns();
    int rc = bench__proc_start(&p, &spec, msg, sizeof msg);
    bench__layout_unexport();
    bench__job_unexport();
    free(wargv);
    if (rc != 0) {
        fail(r, BENCH__FAIL_ERROR, 0, "%s", msg);
        return 0;
    }
    trace_begin(r, s, proc, &p, started);
    double timeout = opt->timeout_s > 0 ? opt->timeout_s : BENCH__DEFAULT_TIMEOUT;
    int64_t deadline = bench__now_ns() + (int64_t)(timeout * 1e9);
    bench__wire_line line;
    bool ended = false, bad = false;
    s->metrics_seen = 0;
    /* Up to the END line, not the end of the channel: a process the benchmark started may
     * hold it open long after the worker exited. Then the worker's own exit, by the deadline.
     * After a malformed line the rest is read and dropped, so the worker is not blocked. */
    char why[256] = "";
    while (!ended && ((rc = bench__wire_read(&p, deadline, &line, msg, sizeof msg)) == 1 ||
                      rc == BENCH_EINVAL)) {
        if (bad)
            continue;
        if (rc == BENCH_EINVAL)
            bench__msg(why, sizeof why, "%s", msg);
        else if (!take(r, s, proc, &line, &ended))
            bench__msg(why, sizeof why, "a %s line that does not fit the benchmark",
                       bench__wire_word(line.kind));
        bad = why[0] != '\0';
    }
    if (rc == BENCH_EUSAGE) {
        bench__proc_kill(&p);
        return BENCH_EUSAGE;
    }
    bench__proc_end end = bench__proc_wait(&p, deadline);
    trace_end(&p, end, ended, timeout);
    if (proc == 0 && ended && r->status == BENCH__OK && s->step == 0 &&
        opt->plan == BENCH__PLAN_TIMED)
        bad = true; /* process 0 of a timed plan must send it */
    if (bench__proc_interrupted())
        return BENCH_EUSAGE;
    char how[128];
    bench__proc_describe(&p, timeout, how, sizeof how);
    char where[64] = "";
    if (s->count > 1)
        bench__msg(where, sizeof where, " (process %u of %u)", proc + 1, s->count);
    if (end == BENCH__PROC_SIGNALED)
        fail(r, BENCH__FAIL_CRASHED, p.code, "%s%s", how, where);
    else if (end == BENCH__PROC_TIMED_OUT)
        fail(r, BENCH__FAIL_TIMED_OUT, 0, "%s%s", how, where);
    else if (!ended && end == BENCH__PROC_EXITED && opt->nlauncher > 0)
        fail(r, BENCH__FAIL_EXITED, p.code, "%s before the benchmark finished (exit() inside "
                                            "it, or %s failed: see its messages above)%s",
             how, launcher_name(opt), where);
    else if (!ended && end == BENCH__PROC_EXITED)
        fail(r, BENCH__FAIL_EXITED, p.code, "%s before the benchmark finished (exit() inside "
                                            "it?)%s", how, where);
    else if (bad)
        fail(r, BENCH__FAIL_ERROR, 0, "its worker process sent a malformed line (%s)%s",
             why[0] ? why : "no PLAN line", where);
    else if (!ended)
        fail(r, BENCH__FAIL_ERROR, 0, "its worker process %s%s", how, where);
    return 0;
}

/* Sets a result up for its processes: settings, sample arrays; false when that fails. */
static bool prepare(bench__result *r, iso *s, const bench__instance *inst,
                    const bench__run_options *opt)
{
    r->inst = inst;
    r->status = BENCH__OK;
    r->nresamples = opt->nresamples;
    r->confidence_level = opt->confidence_level;
    r->process_cv = NAN;
    r->process_log_sd = NAN;
    bench__resolve_settings(&r->settings, opt, inst->desc, inst->group);
    unsigned want = opt->processes ? opt->processes
                    : opt->is_quick ? BENCH__QUICK_PROCESSES
                                    : BENCH__DEFAULT_PROCESSES;
    /* Each process takes at least one of the plan's samples. */
    if (want > (unsigned)r->settings.sample_size)
        want = (unsigned)r->settings.sample_size;
    s->count = want;
    s->share = 1.0;
    s->capacity = (size_t)r->settings.sample_size;
    r->iters = calloc(s->capacity, sizeof *r->iters);
    r->totals_ns = calloc(s->capacity, sizeof *r->totals_ns);
    r->process = calloc(s->capacity, sizeof *r->process);
    r->proc_info = calloc(want ? want : 1, sizeof *r->proc_info);
    s->info_capacity = want;
    if (!r->iters || !r->totals_ns || !r->process || !r->proc_info) {
        fail(r, BENCH__FAIL_ERROR, 0, "out of memory for %zu samples", s->capacity);
        return false;
    }
    return true;
}

/* The end of the first stage (STAGE_PROCESSES done, the default count): the share of its
 * measurement time each later process takes, from how much sampling inside the first ones adds
 * to the spread between them (bench__process_share; docs/measurement.md, "Worker processes").
 * The spread alone decides, not where the medians lie, so the interval is not bent by it. */
static void plan_stage_two(bench__result *r, iso *s, const bench__run_options *opt)
{
    if (opt->processes || opt->plan != BENCH__PLAN_TIMED || s->done != STAGE_PROCESSES ||
        s->count <= STAGE_PROCESSES || r->status != BENCH__OK)
        return;
    double logs[STAGE_PROCESSES], within[STAGE_PROCESSES];
    if (bench__process_log_medians(r->iters, r->totals_ns, r->process, r->nsamples,
                                   STAGE_PROCESSES, logs) == 0 &&
        bench__process_within(r->iters, r->totals_ns, r->process, r->nsamples, STAGE_PROCESSES,
                              within) == 0)
        s->share = bench__process_share(logs, within, STAGE_PROCESSES, STAGE_GROWTH);
}

/* The last process of a benchmark is done: its samples become estimates. */
static void finish(bench__result *r, iso *s, const bench__run_options *opt)
{
    s->finished = true;
    r->processes = s->done;
    r->rounds = s->done;
    r->settings.rounds = (int)s->count;
    if (r->status != BENCH__OK)
        return;
    if (r->nsamples == 0) {
        fail(r, BENCH__FAIL_ERROR, 0, "%s", "no sample was taken");
        return;
    }
    bench__trace_begin("analysis");
    if (bench__analyze(r, opt) != 0)
        fail(r, BENCH__FAIL_ERROR, 0, "%s", "statistics failed (out of memory?)");
    bench__trace_end();
    bench__trace_estimate(r);
}

/* The manager's side of the scheduler (schedule.c): a round is one worker process. */
typedef struct managed {
    iso *st;
    const bench__run_options *opt;
    int argc;
    char **argv;
    bench__result *results;
    bench__done_fn done;
    void *arg;
    size_t n;              /* benchmarks in the run */
    size_t processes_done; /* worker processes finished, all benchmarks */
    bench__progress progress; /* the line on a terminal (sys/progress.h) */
} managed;

static bool m_finished(size_t i, void *arg)
{
    return ((managed *)arg)->st[i].finished;
}

static unsigned m_rounds(size_t i, void *arg)
{
    return ((managed *)arg)->st[i].count;
}

static int m_step(size_t i, unsigned j, void *arg)
{
    (void)j;
    managed *m = arg;
    iso *s = &m->st[i];
    bench__result *r = &m->results[i];
    /* Processes of the run in all: a benchmark's count is known once its process 0 planned. */
    m->progress.total = 0;
    for (size_t t = 0; t < m->n; t++)
        m->progress.total += m->st[t].finished ? m->st[t].done : m->st[t].count;
    bench__progress_step(&m->progress, m->processes_done, "benchmark %zu of %zu, process %u of %u",
                         i + 1, m->n, s->done + 1, s->count);
    int rc = run_process(m->argc, m->argv, m->opt, r, s, s->done);
    s->done++;
    m->processes_done++;
    if (rc == 0)
        plan_stage_two(r, s, m->opt);
    if (rc == 0 && (r->status != BENCH__OK || s->done >= s->count))
        finish(r, s, m->opt);
    return rc;
}

static void m_report(size_t i, void *arg)
{
    managed *m = arg;
    bench__progress_clear(&m->progress);
    if (m->done)
        m->done(i, &m->results[i], m->arg);
}

int bench__run_isolated(const bench__instance *const *list, size_t n,
                        const bench__run_options *opt, int argc, char **argv,
                        bench__result *results, bench__done_fn done, void *arg)
{
    char msg[512];
    iso *st = calloc(n ? n : 1, sizeof *st);
    if (!st)
        return BENCH_ENOMEM;
    if (access("/proc/self/exe", X_OK) != 0) {
        bench__msg(msg, sizeof msg, "cannot start worker processes: /proc/self/exe: %s (is "
                                    "/proc mounted? --in-process measures without them)",
                   strerror(errno));
        for (size_t i = 0; i < n; i++) {
            results[i].inst = list[i];
            fail(&results[i], BENCH__FAIL_ERROR, 0, "%s", msg);
            if (done)
                done(i, &results[i], arg);
        }
        free(st);
        return 0;
    }
    bench__proc_interrupts_install();
    unsigned total = 1;
    double est_s = 0; /* the run's expected length: warm-up and budget, a start per process */
    for (size_t i = 0; i < n; i++) {
        if (!prepare(&results[i], &st[i], list[i], opt))
            st[i].finished = true;
        if (st[i].count > total)
            total = st[i].count;
        est_s += results[i].settings.warm_up_time + results[i].settings.measurement_time +
                 PROCESS_START_S * st[i].count;
    }
    /* Odd rounds go backwards (alternate), so no benchmark always follows the same neighbour. */
    static const bench__schedule_ops ops = {m_finished, m_rounds, m_step, m_report};
    managed mg = {st, opt, argc, argv, results, done, arg, n, 0, {0}};
    bench__progress_start(&mg.progress, opt->progress, 0, est_s, false);
    int rc = bench__schedule(n, total, true, &ops, &mg);
    bench__progress_finish(&mg.progress);
    free(st);
    return rc;
}
