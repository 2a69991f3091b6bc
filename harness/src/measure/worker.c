/*
 * worker.c: the worker side of measurement in worker processes (manager.c has the why and the
 * schedule): a worker process runs one part of one benchmark, its job, inside its random
 * layout (layout.c), and reports what it measured to the manager.
 *
 * A worker writes what it measured as lines of the worker protocol (protocol.h) on descriptor
 * 3 (its stdout goes to the manager's stderr, so a benchmark's own printing never mixes with the
 * report): the plan (process 0), settings, metrics, facts, threads, warm-up, wall time, one S
 * line per sample, where it ran (PROC), and END with its status.
 * A worker that dies of a signal, calls exit() or outlives --timeout is contained: that
 * benchmark is failed with the cause, never saved, and the run goes on with the others.
 *
 * A job is taken only from a manager: the manager names itself (its pid) beside the job, and a
 * worker whose parent is another process, or whose descriptor 3 is not a pipe, refuses the job
 * on stderr and writes nothing to descriptor 3 (set by hand, it may be open to anything: a test
 * runner's pipe, make's jobserver, a file).
 */
#define _GNU_SOURCE /* sched_getcpu */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "core/options.h"
#include "core/registry.h"
#include "core/result.h"
#include "measure/layout.h"
#include "measure/protocol.h"
#include "measure/run.h"
#include "measure/trace.h"
#include "sys/proc.h"

/* Writes one line of the protocol; false when the line cannot be said on it (a value out of
 * the reader's range, a name with a newline), with the reason in why. A failed write is the
 * manager's to see: the worker's lines end early. */
static bool put(FILE *out, const bench__wire_line *l, char *why, size_t len)
{
    return bench__wire_write(out, l, why, len) != BENCH_EINVAL;
}

/* The END line: the worker's last. */
static void put_end(FILE *out, bench__status status, const char *message)
{
    bench__wire_line l = {.kind = BENCH__WIRE_END, .end.status = status};
    char why[256];
    bench__msg(l.end.message, sizeof l.end.message, "%s", message);
    put(out, &l, why, sizeof why);
}

/* One benchmark run inside the worker's layout (bench__layout_run calls it). */
typedef struct worker_call {
    const bench__instance *inst;
    const bench__run_options *opt;
    bench__result *r;
} worker_call;

static void worker_call_run(void *arg)
{
    worker_call *w = arg;
    bench__run_instance(w->inst, w->opt, w->r);
}

/* The PROC line: where this process ran, its layout and page faults (the manager explains the
 * spread between processes only by what is recorded here). */
static void put_proc_line(FILE *out, const bench__layout *lay)
{
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    getrusage(RUSAGE_SELF, &ru);
    bench__wire_line l = {.kind = BENCH__WIRE_PROC};
    l.proc = (bench__proc_info){.known = true, .cpu = sched_getcpu(), .layout = lay->random,
                                .stack = lay->stack, .heap = lay->heap, .env = lay->env,
                                .minflt = (double)ru.ru_minflt, .majflt = (double)ru.ru_majflt};
    char why[256];
    put(out, &l, why, sizeof why);
}

/* What a measuring worker measured, as the protocol's lines: the plan (process 0 of a timed
 * plan), then settings, metrics, facts, threads, warm-up, wall time and the samples. False at
 * the first line that cannot be said, with the reason in why. */
static bool put_results(FILE *out, const bench__result *r, bool plan, char *why, size_t len)
{
    bench__wire_line l = {.kind = BENCH__WIRE_PLAN};
    if (plan) {
        l.plan.rounds = r->plan_rounds;
        l.plan.mode = r->sampling_used;
        l.plan.step = r->plan_step;
        l.plan.est_ns = r->plan_est_ns;
        if (!put(out, &l, why, len))
            return false;
    }
    l = (bench__wire_line){.kind = BENCH__WIRE_SET, .set = {r->settings.bytes_per_iter,
                                                            r->settings.elements_per_iter}};
    if (!put(out, &l, why, len))
        return false;
    for (size_t m = 0; m < r->nmetrics; m++) {
        const bench__metric *x = &r->metrics[m];
        l = (bench__wire_line){.kind = BENCH__WIRE_METRIC};
        l.metric.scaled = x->scaled;
        l.metric.min_fraction = x->min_fraction;
        bench__msg(l.metric.unit, sizeof l.metric.unit, "%s", x->unit);
        bench__msg(l.metric.source, sizeof l.metric.source, "%s", x->source);
        bench__msg(l.metric.name, sizeof l.metric.name, "%s", x->name);
        if (!put(out, &l, why, len))
            return false;
    }
    for (size_t f = 0; f < r->nfacts; f++) {
        l = (bench__wire_line){.kind = BENCH__WIRE_FACT, .fact.value = r->facts[f].value};
        bench__msg(l.fact.unit, sizeof l.fact.unit, "%s", r->facts[f].unit);
        bench__msg(l.fact.name, sizeof l.fact.name, "%s", r->facts[f].name);
        if (!put(out, &l, why, len))
            return false;
    }
    for (unsigned t = 0; r->thread_cpus && t < r->threads; t++) {
        l = (bench__wire_line){.kind = BENCH__WIRE_THREAD, .thread.index = t};
        memcpy(l.thread.cpus, &r->thread_cpus[t * BENCH__CPU_WORDS], sizeof l.thread.cpus);
        if (!put(out, &l, why, len))
            return false;
    }
    l = (bench__wire_line){.kind = BENCH__WIRE_WARM, .warm = {r->warm_up_iters, r->warm_up_ns}};
    if (!put(out, &l, why, len))
        return false;
    l = (bench__wire_line){.kind = BENCH__WIRE_WALL, .wall = {r->measure_wall_s, r->sampling_used,
                                                              r->stop_reason}};
    if (!put(out, &l, why, len))
        return false;
    for (size_t k = 0; k < r->nsamples; k++) {
        l = (bench__wire_line){.kind = BENCH__WIRE_SAMPLE};
        l.sample.iters = r->iters[k];
        l.sample.total_ns = r->totals_ns[k];
        l.sample.nvalues = r->nmetrics;
        for (size_t m = 0; m < r->nmetrics; m++)
            l.sample.values[m] = r->metrics[m].totals[k];
        if (!put(out, &l, why, len))
            return false;
    }
    return true;
}

/* A job that did not come from a manager (a user's, or a test runner's, environment) is
 * refused on stderr too: descriptor 3 may be open to anything then. */
static int refuse_job(FILE *out, const char *why)
{
    bench__errf("%s: %s (this variable is for the worker processes bench starts, not "
                "for users)\n", BENCH__JOB_ENV, why);
    put_end(out, BENCH__FAILED, why);
    fclose(out);
    return BENCH_EXIT_USAGE;
}

void bench__job_export(const char *job)
{
    char pid[32];
    bench__msg(pid, sizeof pid, "%ld", (long)getpid());
    setenv(BENCH__JOB_ENV, job, 1);
    setenv(BENCH__JOB_PARENT_ENV, pid, 1);
    setenv(BENCH__JOB_NAME_ENV, bench__prog_name(), 1);
}

void bench__job_unexport(void)
{
    unsetenv(BENCH__JOB_ENV);
    unsetenv(BENCH__JOB_PARENT_ENV);
    unsetenv(BENCH__JOB_NAME_ENV);
}

int bench__worker_verify(char *msg, size_t len)
{
    static const char users[] = "this variable is for the worker processes bench starts, not "
                                "for users";
    struct stat st;
    if (fstat(BENCH__PROC_CHANNEL_FD, &st) != 0) {
        bench__msg(msg, len, "%s is set but descriptor %d is not open: %s", BENCH__JOB_ENV,
                   BENCH__PROC_CHANNEL_FD, users);
        return BENCH_EUSAGE;
    }
    const char *parent = getenv(BENCH__JOB_PARENT_ENV);
    char *end = NULL;
    long pid = parent ? strtol(parent, &end, 10) : 0;
    if (!parent || end == parent || *end || pid != (long)getppid()) {
        bench__msg(msg, len, "%s is set but this process was not started by bench (%s is %s "
                             "its parent's process id): %s", BENCH__JOB_ENV,
                   BENCH__JOB_PARENT_ENV, parent ? "not" : "not set to", users);
        return BENCH_EUSAGE;
    }
    if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) {
        bench__msg(msg, len, "%s is set but descriptor %d is not a pipe: %s", BENCH__JOB_ENV,
                   BENCH__PROC_CHANNEL_FD, users);
        return BENCH_EUSAGE;
    }
    return 0;
}

int bench__worker_main(const bench__instance *all, size_t n, const char *job_text,
                       const bench__run_options *base)
{
    /* The caller verified the channel (bench__worker_verify). */
    FILE *out = fdopen(BENCH__PROC_CHANNEL_FD, "w");
    if (!out)
        return BENCH_EXIT_USAGE;
    /* The channel is this process's alone: a program a benchmark starts and leaves running
     * in the background must not hold it open, or the manager would wait for it. */
    fcntl(BENCH__PROC_CHANNEL_FD, F_SETFD, FD_CLOEXEC);
    bench__layout lay;
    bool layout_ok = bench__layout_take(&lay) == 0;
    bench__wire_job job;
    char why[384];
    if (bench__wire_job_parse(job_text, &job, why, sizeof why) != 0 || !layout_ok)
        return refuse_job(out, BENCH__WIRE_BAD_JOB);
    const bench__instance *inst = NULL;
    for (size_t i = 0; i < n && !inst; i++)
        if (strcmp(all[i].id, job.id) == 0)
            inst = &all[i];
    if (!inst) {
        char shown[4 * sizeof why];
        /* Not a user's mistake: a paired comparison asks an older build for what it may lack. */
        bench__msg(why, sizeof why, "%s '%s'", BENCH__WIRE_NO_BENCHMARK,
                   bench__escape(shown, sizeof shown, job.id));
        put_end(out, BENCH__FAILED, why);
        fclose(out);
        return BENCH_EXIT_USAGE;
    }
    bench__quiet_warnings = job.index > 0;
    bench__run_options opt = *base;
    opt.progress = false;
    bool driven = job.mode == BENCH__JOB_DRIVEN;
    if (driven) {
        /* A paired comparison (ab.c) decides every sample: "R iterations" on stdin, its time
         * back on the channel ("T ns"), after "READY" once the setup is done. */
        opt.plan = BENCH__PLAN_DRIVEN;
        opt.worker_in = stdin;
        opt.worker_out = out;
    } else {
        opt.job.active = true;
        opt.job.index = job.index;
        opt.job.count = job.count;
        opt.job.mode = (bench_sampling)job.mode;
        opt.job.step = job.step;
        opt.job.est_ns = job.est_ns;
        opt.job.share = job.share;
        if (opt.trace_path)
            bench__trace_worker(out); /* its samples and spans as they happen */
    }
    bench__result r;
    memset(&r, 0, sizeof r);
    worker_call call = {inst, &opt, &r};
    bench__layout_run(&lay, worker_call_run, &call);
    /* A result the protocol cannot carry fails the benchmark with the reason (an S line with
     * a NaN time, say), rather than reach the manager in part. */
    if (r.status == BENCH__OK && !driven &&
        !put_results(out, &r, job.index == 0 && opt.plan == BENCH__PLAN_TIMED, why, sizeof why))
        bench__result_fail(&r, "cannot send its results to the manager: %s", why);
    put_proc_line(out, &lay);
    put_end(out, r.status, r.message);
    bench__result_destroy(&r);
    int rc = fclose(out) == 0 ? BENCH_EXIT_OK : BENCH_EXIT_USAGE;
    return rc;
}

int bench__worker_refuse(const char *why)
{
    /* Said on stderr as well: whoever set the job hears why, whatever descriptor 3 is. */
    bench__errf("%s\n", why);
    FILE *out = fdopen(BENCH__PROC_CHANNEL_FD, "w");
    if (!out)
        return BENCH_EXIT_USAGE;
    put_end(out, BENCH__FAILED, why);
    fclose(out);
    return BENCH_EXIT_USAGE;
}

