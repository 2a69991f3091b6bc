/*
 * calibrate.c: measures each benchmark's between-run noise (an A/A experiment) by running the
 * selected benchmarks in several separate processes of this same program, reading back their
 * JSON results, and combining them with the current process's own run.
 *
 * Separate processes matter: on a shared machine most of the variance of a benchmark's median
 * is between processes (placement in memory, neighbours, clock state), which repetitions inside
 * one process cannot see.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

int bench__run_self(char *const *argv, char *msg, size_t msglen)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        bench__msg(msg, msglen, "cannot start a run: fork failed: %s", strerror(errno));
        return BENCH_EIO;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            close(null);
        }
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            bench__msg(msg, msglen, "waiting for a run failed: %s", strerror(errno));
            return BENCH_EIO;
        }
    if (WIFSIGNALED(status)) {
        bench__msg(msg, msglen, "a run was killed by signal %d", WTERMSIG(status));
        return BENCH_EIO;
    }
    if (WEXITSTATUS(status) != 0) {
        bench__msg(msg, msglen, "a run exited with code %d", WEXITSTATUS(status));
        return BENCH_EIO;
    }
    return 0;
}

double bench__entry_median(const bench__entry *e)
{
    double *y = malloc((e->nsamples ? e->nsamples : 1) * sizeof *y);
    if (!y)
        return NAN;
    for (size_t i = 0; i < e->nsamples; i++)
        y[i] = e->totals_ns[i] / e->iters[i];
    double m = bench__median_inplace(y, e->nsamples);
    free(y);
    return m;
}

void bench__noise_from_runs(bench__result *results, size_t n, const bench__saved *runs,
                            size_t nruns)
{
    double *logs = malloc((nruns + 1) * sizeof *logs);
    if (!logs)
        return;
    for (size_t i = 0; i < n; i++) {
        bench__result *r = &results[i];
        if (r->status != BENCH__OK || !(r->est.median.point > 0))
            continue;
        size_t k = 0;
        logs[k++] = log(r->est.median.point);
        for (size_t j = 0; j < nruns; j++) {
            const bench__entry *e = bench__saved_find(&runs[j], r->inst->id);
            double m = e && e->status == BENCH__OK ? bench__entry_median(e) : NAN;
            if (m > 0)
                logs[k++] = log(m);
        }
        if (k < 2)
            continue;
        r->noise.runs = (int)k;
        r->noise.log_mean = bench__mean(logs, k);
        r->noise.log_sd = bench__std_dev(logs, k);
    }
    free(logs);
}
