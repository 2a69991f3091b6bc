/*
 * calibrate.c: measures each benchmark's between-run noise (an A/A experiment) by running the
 * selected benchmarks in several separate processes of this same program, reading back their
 * JSON results, and combining them with the current process's own run.
 *
 * Separate processes matter: on a shared machine most of the variance of a benchmark's median
 * is between processes (placement in memory, neighbours, clock state), which repetitions inside
 * one process cannot see.
 */
#include <math.h>
#include <stdlib.h>

#include "core/base.h"
#include "core/result.h"
#include "run/run.h"
#include "stats/stats.h"
#include "store/store.h"
#include "sys/proc.h"

int bench__run_self(char *const *argv, char *msg, size_t msglen)
{
    char self[4096];
    if (bench__proc_self(self, sizeof self, msg, msglen) != 0)
        return BENCH_EIO;
    bench__proc_interrupts_install();
    bench__proc p;
    bench__proc_spec spec = {.path = self, .argv = argv, .channel = BENCH__PROC_NONE};
    if (bench__proc_start(&p, &spec, msg, msglen) != 0)
        return BENCH_EIO;
    bench__proc_end end = bench__proc_wait(&p, 0);
    if (bench__proc_interrupted()) {
        bench__msg(msg, msglen, "interrupted by %s",
                   bench__signal_name(bench__proc_interrupted()));
        return BENCH_EIO;
    }
    if (end == BENCH__PROC_EXITED && p.code == 0)
        return 0;
    char how[128];
    bench__proc_describe(&p, 0, how, sizeof how);
    bench__msg(msg, msglen, "a run %s", how);
    return BENCH_EIO;
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
