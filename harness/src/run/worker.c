/*
 * worker.c: the worker side of measurement in worker processes (manager.c has the why and the
 * schedule): a worker process runs one part of one benchmark, its job, inside its random
 * layout (layout.c), and reports what it measured to the manager.
 *
 * A worker writes what it measured as lines on descriptor 3 (its stdout goes to the manager's
 * stderr, so a benchmark's own printing never mixes with the report):
 *     PLAN rounds mode step est_ns       process 0: the plan for the others
 *     SET bytes elements                 per-iteration work the body declared
 *     METRIC scaled min_fraction unit source name
 *     FACT value unit name
 *     PROC cpu layout stack heap env minflt majflt   where it ran, its layout, its page faults
 *     THREAD index cpu,cpu,...|-         a threaded body's thread: the CPUs it was seen on
 *     WARM iterations ns                 warm-up totals
 *     WALL seconds sampling reason       sampling wall time, mode and why it stopped
 *     S iterations total_ns [metric totals...]   one sample
 *     END ok|skipped|failed message
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
#include "run/layout.h"
#include "run/run.h"
#include "sys/proc.h"

/* Writes a message on one line, exactly: a newline travels as \n and a backslash as \\
 * (the manager's get_message undoes it); every other byte as it is, for the reporters to escape. */
static void put_message(FILE *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '\n')
            fputs("\\n", o);
        else if (*s == '\\')
            fputs("\\\\", o);
        else
            fputc(*s, o);
    }
    fputc('\n', o);
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
    fprintf(out, "PROC %d %d %u %u %u %ld %ld\n", sched_getcpu(), lay->random ? 1 : 0,
            lay->stack, lay->heap, lay->env, ru.ru_minflt, ru.ru_majflt);
}

/* A job that did not come from a manager (a user's, or a test runner's, environment) is
 * refused on stderr too: descriptor 3 may be open to anything then. */
static int refuse_job(FILE *out, const char *why)
{
    bench__errf("%s: %s (this variable is for the worker processes bench starts, not "
                "for users)\n", BENCH__JOB_ENV, why);
    fputs("END failed ", out);
    put_message(out, why);
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

int bench__worker_main(const bench__instance *all, size_t n, const char *job,
                       const bench__run_options *base)
{
    /* The caller verified the channel (bench__worker_verify). */
    FILE *out = fdopen(BENCH__PROC_CHANNEL_FD, "w");
    if (!out)
        return BENCH_EXIT_USAGE;
    /* The channel is this process's alone: a program a benchmark starts and leaves running
     * in the background must not hold it open, or the manager would wait for it. */
    fcntl(BENCH__PROC_CHANNEL_FD, F_SETFD, FD_CLOEXEC);
    unsigned index, count;
    int mode;
    unsigned long long step;
    double est;
    int off = 0;
    bench__layout lay;
    bool layout_ok = bench__layout_take(&lay) == 0;
    if (sscanf(job, "%u %u %d %llu %lg %n", &index, &count, &mode, &step, &est, &off) != 5 ||
        off == 0 || count < 1 || index >= count || mode < 0 || mode > BENCH__JOB_DRIVEN ||
        !layout_ok)
        return refuse_job(out, "malformed worker job");
    const char *id = job + off;
    const bench__instance *inst = NULL;
    for (size_t i = 0; i < n && !inst; i++)
        if (strcmp(all[i].id, id) == 0)
            inst = &all[i];
    if (!inst) {
        char why[384], shown[4 * sizeof why];
        /* Not a user's mistake: a paired comparison asks an older build for what it may lack. */
        fputs("END failed ", out);
        bench__msg(why, sizeof why, "this program has no benchmark '%s'",
                   bench__escape(shown, sizeof shown, id));
        put_message(out, why);
        fclose(out);
        return BENCH_EXIT_USAGE;
    }
    bench__quiet_warnings = index > 0;
    bench__run_options opt = *base;
    opt.progress = false;
    bool driven = mode == BENCH__JOB_DRIVEN;
    if (driven) {
        /* A paired comparison (ab.c) decides every sample: "R iterations" on stdin, its time
         * back on the channel ("T ns"), after "READY" once the setup is done. */
        opt.plan = BENCH__PLAN_DRIVEN;
        opt.worker_in = stdin;
        opt.worker_out = out;
    } else {
        opt.job.active = true;
        opt.job.index = index;
        opt.job.count = count;
        opt.job.mode = (bench_sampling)mode;
        opt.job.step = step;
        opt.job.est_ns = est;
    }
    bench__result r;
    memset(&r, 0, sizeof r);
    worker_call call = {inst, &opt, &r};
    bench__layout_run(&lay, worker_call_run, &call);
    if (r.status == BENCH__OK && !driven) {
        if (index == 0 && opt.plan == BENCH__PLAN_TIMED)
            fprintf(out, "PLAN %u %d %llu %.17g\n", r.plan_rounds, (int)r.sampling_used,
                    (unsigned long long)r.plan_step, r.plan_est_ns);
        fprintf(out, "SET %llu %llu\n", (unsigned long long)r.settings.bytes_per_iter,
                (unsigned long long)r.settings.elements_per_iter);
        for (size_t m = 0; m < r.nmetrics; m++)
            fprintf(out, "METRIC %d %.17g %s %s %s\n", r.metrics[m].scaled ? 1 : 0,
                    r.metrics[m].min_fraction, r.metrics[m].unit, r.metrics[m].source,
                    r.metrics[m].name);
        for (size_t f = 0; f < r.nfacts; f++)
            fprintf(out, "FACT %.17g %s %s\n", r.facts[f].value, r.facts[f].unit,
                    r.facts[f].name);
        for (unsigned t = 0; r.thread_cpus && t < r.threads; t++) {
            fprintf(out, "THREAD %u ", t);
            int seen = 0;
            for (unsigned c = 0; c < 64 * BENCH__CPU_WORDS; c++)
                if (bench__thread_ran_on(&r, t, c))
                    fprintf(out, "%s%u", seen++ ? "," : "", c);
            fputs(seen ? "\n" : "-\n", out);
        }
        fprintf(out, "WARM %llu %.17g\n", (unsigned long long)r.warm_up_iters, r.warm_up_ns);
        fprintf(out, "WALL %.17g %d %s\n", r.measure_wall_s, (int)r.sampling_used,
                r.stop_reason ? r.stop_reason : "");
        for (size_t k = 0; k < r.nsamples; k++) {
            fprintf(out, "S %.17g %.17g", r.iters[k], r.totals_ns[k]);
            for (size_t m = 0; m < r.nmetrics; m++)
                fprintf(out, " %.17g", r.metrics[m].totals[k]);
            fputc('\n', out);
        }
    }
    put_proc_line(out, &lay);
    fprintf(out, "END %s ", bench__status_name(r.status));
    put_message(out, r.message);
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
    fputs("END failed ", out);
    put_message(out, why);
    fclose(out);
    return BENCH_EXIT_USAGE;
}

