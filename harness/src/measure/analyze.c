/*
 * analyze.c: the analysis stage of the pipeline: one benchmark's samples, pooled over its worker
 * processes, become estimates (bootstrap intervals, the interval over processes), its processes'
 * speed groups and the cause of their spread; probes that filter samples (the CUDA probe's
 * throttled samples) act first. Pure computation over a result: no processes, no files.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/options.h"
#include "core/probe.h"
#include "core/registry.h"
#include "core/result.h"
#include "probes/probes.h"
#include "measure/run.h"
#include "stats/stats.h"

/* The speed groups of r's processes, and what their spread can be blamed on (stats.h). */
static void explain_processes(bench__result *r)
{
    unsigned p = r->processes;
    double *logs = malloc(p * sizeof *logs), *faults = malloc(p * sizeof *faults);
    int *cpu = malloc(p * sizeof *cpu);
    if (logs && faults && cpu &&
        bench__process_log_medians(r->iters, r->totals_ns, r->process, r->nsamples, p, logs) ==
            0) {
        bench__find_modes(logs, p, &r->modes);
        for (unsigned j = 0; j < p; j++) {
            bool known = r->proc_info && r->proc_info[j].known;
            cpu[j] = known ? r->proc_info[j].cpu : -1;
            faults[j] = known ? r->proc_info[j].minflt + r->proc_info[j].majflt : NAN;
        }
        bench__spread_cause_find(logs, cpu, faults, p, &r->spread_cause);
    }
    free(logs);
    free(faults);
    free(cpu);
}

int bench__analyze(bench__result *r, const bench__run_options *opt)
{
    bench__probes_analyze(r); /* probes act first: throttled GPU samples are left out (cuda.c) */
    size_t n = r->nsamples;
    uint64_t seed = bench__id_seed(opt->seed, r->inst ? r->inst->id : "");
    if (bench__bootstrap(r->iters, r->totals_ns, n, opt->nresamples, opt->confidence_level, seed,
                         &r->est) != 0)
        return BENCH_ENOMEM;
    double *y = malloc(n * sizeof *y), *work = malloc(n * sizeof *work);
    if (!y || !work) {
        free(y);
        free(work);
        return BENCH_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        y[i] = r->totals_ns[i] / r->iters[i];
    bench__tukey(y, n, work, &r->outliers);
    free(y);
    free(work);
    for (size_t i = 0; i < r->nmetrics; i++) {
        bench__metric *m = &r->metrics[i];
        if (bench__bootstrap(r->iters, m->totals, n, opt->nresamples, opt->confidence_level,
                             bench__id_seed(seed, m->name), &m->est) != 0)
            return BENCH_ENOMEM;
    }
    r->process_cv = NAN;
    r->process_log_sd = NAN;
    /* Measured in several processes: the headline's interval is over processes, since the
     * samples of one process share its placement in memory and are not independent draws. */
    if (r->process && r->processes >= 2) {
        bench__estimate e;
        double cv, lsd;
        if (bench__process_estimate(r->iters, r->totals_ns, r->process, n, r->processes,
                                    opt->confidence_level, &e, &cv, &lsd) == 0) {
            r->est.median = e;
            r->process_cv = cv;
            r->process_log_sd = lsd;
        }
        explain_processes(r);
    }
    return 0;
}
