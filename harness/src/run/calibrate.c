/*
 * calibrate.c: each benchmark's between-run noise (--calibrate N, an A/A experiment): the selected
 * benchmarks are run N - 1 more times before the run itself, each time by the manager in fresh
 * worker processes (manager.c), and each benchmark's medians over those runs and the run itself
 * give the spread of its median from one run to the next, saved with the baseline.
 *
 * Separate processes matter: on a shared machine most of the variance of a benchmark's median
 * is between processes (placement in memory, neighbours, clock state), which repetitions inside
 * one process cannot see. A calibration run is what a whole run of the program measured before,
 * without starting the whole program again and reading its results back from a file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/result.h"
#include "run/calibrate.h"
#include "measure/run.h"
#include "stats/stats.h"
#include "sys/proc.h"

int bench__calibrate(const bench__instance *const *list, size_t n, const bench__run_options *opt,
                     int argc, char **argv, unsigned runs, double *medians, char *msg,
                     size_t msglen)
{
    bench__run_options o = *opt;
    if (o.in_process) {
        /* --in-process measures the run itself in this process; each calibration run is still
         * a separate process, one per benchmark, as a separate run of the program would be. */
        o.in_process = false;
        o.processes = 1;
    }
    bench__result *rs = calloc(n ? n : 1, sizeof *rs);
    if (!rs) {
        bench__msg(msg, msglen, "out of memory");
        return BENCH_ENOMEM;
    }
    int rc = 0;
    for (unsigned r = 0; r + 1 < runs && rc == 0; r++) {
        bench__errf("calibration run %u of %u (worker processes)\n", r + 1, runs);
        memset(rs, 0, n * sizeof *rs);
        rc = bench__run_isolated(list, n, &o, argc, argv, rs, NULL, NULL);
        if (rc == BENCH_EUSAGE && bench__proc_interrupted())
            bench__msg(msg, msglen, "interrupted by %s",
                       bench__signal_name(bench__proc_interrupted()));
        else if (rc != 0)
            bench__msg(msg, msglen, "out of memory");
        for (size_t i = 0; i < n; i++) {
            if (rc == 0 && rs[i].status == BENCH__FAILED) {
                bench__msg(msg, msglen, "calibration run %u: benchmark '%s' failed: %s", r + 1,
                           list[i]->id, rs[i].message);
                rc = BENCH_EIO;
            }
            medians[r * n + i] = rs[i].status == BENCH__OK ? rs[i].est.median.point : NAN;
            bench__result_destroy(&rs[i]);
        }
    }
    if (rc == 0)
        bench__errf("calibration run %u of %u (this run)\n", runs, runs);
    free(rs);
    return rc;
}

void bench__noise_from_medians(bench__result *results, size_t n, const double *medians,
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
        for (size_t j = 0; j < nruns; j++)
            if (medians[j * n + i] > 0)
                logs[k++] = log(medians[j * n + i]);
        if (k < 2)
            continue;
        r->noise.runs = (int)k;
        r->noise.log_mean = bench__mean(logs, k);
        r->noise.log_sd = bench__std_dev(logs, k);
    }
    free(logs);
}
