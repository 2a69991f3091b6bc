/*
 * ab_worker.c: one driven worker of a paired comparison (ab.h): started on the worker protocol
 * with its job (plan "driven"), pinned to a CPU or not, waited for until its setup is done;
 * each sample commanded on its stdin and its time read back; the iteration count calibrated on
 * warm iterations; asked to quit and reaped. ab.c
 * pairs two of them; --explain's time mode (explain_perf.c) profiles one.
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "measure/layout.h"
#include "measure/protocol.h"
#include "measure/run.h"
#include "run/ab.h"
#include "sys/clock.h"
#include "sys/proc.h"

int bench__ab_pin(pid_t pid, int cpu)
{
    if (cpu < 0)
        return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(pid, sizeof set, &set);
}

/* Starts `prog` (from exec_fd when it is >= 0: the sealed copy of a checked snapshot) as the
 * driven worker of benchmark `id` with layout `lay`, pinned to `cpu` (-1: not), and waits (at
 * most timeout_s) until its setup is done ("READY"). Returns 0;
 * BENCH_EINVAL when prog lacks the benchmark; BENCH_EUNAVAIL when it skips it; BENCH_EUSAGE when
 * the run was interrupted; BENCH_EIO otherwise, with the reason in msg. */
int bench__ab_worker_start(bench__proc *w, const char *prog, int exec_fd, const char *id,
                           const bench__layout *lay, int cpu, double timeout_s, char *msg,
                           size_t msglen)
{
    char job[384];
    bench__wire_job wj = {.count = 1, .mode = BENCH__JOB_DRIVEN, .share = 1, .id = id};
    if (bench__wire_job_format(job, sizeof job, &wj, msg, msglen) < 0)
        return BENCH_EIO;
    /* A program that does not take the job (built with a harness without this protocol) is
     * told to list no benchmark: it ends at once instead of running its whole suite. */
    char *argv[] = {(char *)prog, "--list", "^$", NULL};
    bench__proc_spec spec = {.path = prog, .argv = argv, .channel = BENCH__PROC_FD3,
                             .commands = true, .exec_by_fd = exec_fd >= 0, .exec_fd = exec_fd};
    bench__job_export(job);
    bench__layout_export(lay);
    int rc = bench__proc_start(w, &spec, msg, msglen);
    bench__layout_unexport();
    bench__job_unexport();
    if (rc != 0)
        return BENCH_EIO;
    bench__ab_pin(w->pid, cpu);
    bench__wire_line line;
    char why[256];
    int64_t deadline = bench__now_ns() + (int64_t)(timeout_s * 1e9);
    int lr;
    /* A worker whose benchmark ends before its timed loop (skipped, failed) says where it ran
     * (PROC) before its END. */
    while ((lr = bench__wire_read(w, deadline, &line, why, sizeof why)) == 1 &&
           line.kind == BENCH__WIRE_PROC)
        ;
    if (lr == BENCH_EUSAGE) {
        bench__proc_kill(w);
        return BENCH_EUSAGE;
    }
    if (lr == 1 && line.kind == BENCH__WIRE_READY)
        return 0;
    rc = BENCH_EIO;
    const char *said = lr == 1 && line.kind == BENCH__WIRE_END ? line.end.message : NULL;
    if (said && line.end.status == BENCH__SKIPPED) {
        rc = BENCH_EUNAVAIL;
        bench__msg(msg, msglen, "skipped in %s: %s", prog, said);
    } else if (said && line.end.status == BENCH__FAILED &&
               bench__starts_with(said, BENCH__WIRE_NO_BENCHMARK)) {
        rc = BENCH_EINVAL;
        bench__msg(msg, msglen, "%s has no benchmark '%s'", prog, id);
    } else if (said && line.end.status == BENCH__FAILED &&
               strcmp(said, BENCH__WIRE_BAD_JOB) == 0) {
        bench__msg(msg, msglen, "%s does not take this version's paired comparison (built with "
                                "an older harness? rebuild it with this one)", prog);
    } else if (said) {
        bench__msg(msg, msglen, "in %s: %s %s", prog, bench__status_name(line.end.status),
                   said);
    } else if (lr == BENCH_EIO) {
        bench__msg(msg, msglen, "%s did not finish its setup within %.0f s (--timeout)", prog,
                   timeout_s);
    } else {
        bench__proc_wait(w, bench__now_ns() + (int64_t)1e9);
        char how[128];
        bench__proc_describe(w, timeout_s, how, sizeof how);
        bench__msg(msg, msglen, "%s %s before its setup was done (a build whose harness does "
                                "not take part in paired comparisons?)", prog, how);
    }
    bench__proc_kill(w);
    return rc;
}

/* Sends a driven worker one command of the protocol (R, Q). */
static int send_command(bench__proc *w, const bench__wire_line *l)
{
    char line[64], why[128];
    if (bench__wire_format(line, sizeof line, l, why, sizeof why) < 0)
        return BENCH_EIO;
    return bench__proc_send(w, line) == 0 ? 0 : BENCH_EIO;
}

int bench__ab_worker_send(bench__proc *w, uint64_t iters)
{
    return send_command(w, &(bench__wire_line){.kind = BENCH__WIRE_RUN, .run.iters = iters});
}

/* A sample's time from a driven worker: 0; BENCH_EIO when it ends instead (its channel, or
 * its PROC and END lines: a benchmark that failed); BENCH_EINVAL for any other line;
 * BENCH_EUSAGE when the run was interrupted. */
int bench__ab_worker_read(bench__proc *w, int64_t deadline, double *ns)
{
    bench__wire_line line;
    char why[256];
    int lr = bench__wire_read(w, deadline, &line, why, sizeof why);
    if (lr == BENCH_EUSAGE)
        return BENCH_EUSAGE;
    if (lr != 1 && lr != BENCH_EINVAL)
        return BENCH_EIO;
    if (lr == 1 && (line.kind == BENCH__WIRE_PROC || line.kind == BENCH__WIRE_END))
        return BENCH_EIO;
    if (lr == BENCH_EINVAL || line.kind != BENCH__WIRE_TIME)
        return BENCH_EINVAL;
    *ns = line.time.ns;
    return 0;
}

int bench__ab_worker_sample(bench__proc *w, uint64_t iters, int64_t deadline, double *ns)
{
    int rc = bench__ab_worker_send(w, iters);
    return rc ? rc : bench__ab_worker_read(w, deadline, ns);
}

/* Ends a worker: asks it to stop, reads its last lines until END, and reaps it. */
void bench__ab_worker_stop(bench__proc *w, double timeout_s)
{
    int64_t deadline = bench__now_ns() + (int64_t)(fmin(timeout_s, 10.0) * 1e9);
    bench__wire_line line;
    char why[256];
    int lr;
    if (send_command(w, &(bench__wire_line){.kind = BENCH__WIRE_QUIT}) == 0)
        while (((lr = bench__wire_read(w, deadline, &line, why, sizeof why)) == 1 &&
                line.kind != BENCH__WIRE_END) ||
               lr == BENCH_EINVAL)
            ;
    bench__proc_wait(w, deadline);
}

/* The calibration's least time on the worker, ns: a warm-up long enough for a body's first calls
 * in a fresh process to pay what later ones do not (a 34 ns lookup of two fresh 1 MiB arrays
 * took some 2 ms to fault their pages in, one page at a time). */
#define CALIBRATION_WARM_NS 10e6

/* The samples a count is checked on: the shortest of them is taken. */
#define CALIBRATION_CHECKS 3

/* The shortest of reps samples of n iterations on w, ns, into *t. Another process's time slice
 * (a few ms on a busy machine) only ever lengthens a sample, so the shortest is the body's own
 * time. 0, or bench__ab_worker_sample's error. */
static int shortest_sample(bench__proc *w, uint64_t n, int reps, double timeout_s, double *t)
{
    *t = INFINITY;
    for (int r = 0; r < reps; r++) {
        double x;
        int rc = bench__ab_worker_sample(w, n, bench__now_ns() + (int64_t)(timeout_s * 1e9), &x);
        if (rc)
            return rc;
        *t = fmin(*t, x);
    }
    return 0;
}

/* The iteration count of a benchmark's samples for a sample time of sample_ns, calibrated on a
 * driven worker w (ab.c: B's, then held for the whole comparison): doubled until a sample takes
 * an eighth of the sample time, then scaled to the sample time. A count is taken only from a
 * sample that reached an eighth after another at the same count did (the shortest sample at
 * that count sizes it), and after CALIBRATION_WARM_NS of samples: a body's first calls in a fresh process
 * may pay for what later ones do not (pages faulted in on first touch, lazy binding, cold
 * caches), and sized from them a 34 ns body got samples of 4 iterations, mostly the clock's own
 * cost, which differs between two processes laid out differently. The count chosen is then
 * checked on the shortest of CALIBRATION_CHECKS samples of its own, and scaled up while that is
 * shorter than half the sample time: sized from one sample that another process's time slice
 * had stretched, a comparison on a loaded machine ran samples of 57 us for 500 us, and its pairs
 * spread five times as wide. 0, or bench__ab_worker_sample's error. */
int bench__ab_worker_calibrate(bench__proc *w, double sample_ns, double timeout_s, uint64_t *iters)
{
    const double max_iters = (double)(UINT64_C(1) << 40);
    uint64_t n = 1;
    double t, best = INFINITY; /* the shortest sample at the count n */
    int rc;
    int64_t start = bench__now_ns();
    for (bool again = false;;) {
        if ((rc = shortest_sample(w, n, 1, timeout_s, &t)))
            return rc;
        best = fmin(best, t);
        if (n >= (UINT64_C(1) << 40))
            break;
        if (t < sample_ns / 8) {
            again = false;
            n *= 2;
            best = INFINITY;
        } else if (again && (double)(bench__now_ns() - start) >= CALIBRATION_WARM_NS) {
            break;
        } else {
            again = true; /* the same count once more */
        }
    }
    t = best;
    for (int check = 0;; check++) {
        double per = t > 0 ? t / (double)n : 1.0;
        double want = ceil(sample_ns / per);
        want = want < 1 ? 1 : want > max_iters ? max_iters : want;
        if (check == 4 || (double)n >= want) {
            *iters = (uint64_t)fmax(want, (double)n);
            return 0;
        }
        n = (uint64_t)want;
        if ((rc = shortest_sample(w, n, CALIBRATION_CHECKS, timeout_s, &t)))
            return rc;
        if (t >= sample_ns / 2) {
            *iters = n;
            return 0;
        }
    }
}
