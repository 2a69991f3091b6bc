/*
 * plan.c: what one benchmark will do before it runs: its settings resolved (the command line
 * over BENCH_FN over BENCH_GROUP over the defaults, then --quick's caps and the plan's own
 * rules) and the plan of the run's mode (timed, fixed iteration counts, driven by a paired
 * comparison, or profiling). Nothing here measures; the runner (runner.c) carries it out.
 */
#include <string.h>

#include "core/options.h"
#include "core/registry.h"
#include "measure/plan.h"
#include "measure/run.h"

const bench__settings bench__default_settings = {
    .warm_up_time = BENCH__DEFAULT_WARM_UP_TIME,
    .measurement_time = BENCH__DEFAULT_MEASUREMENT_TIME,
    .sample_size = BENCH__DEFAULT_SAMPLE_SIZE,
    .target_precision = BENCH__DEFAULT_TARGET_PRECISION,
    .sampling = BENCH_SAMPLING_AUTO,
    .rounds = BENCH__DEFAULT_ROUNDS,
};

const bench__settings bench__quick_settings = {
    .warm_up_time = BENCH__QUICK_WARM_UP_TIME,
    .measurement_time = BENCH__QUICK_MEASUREMENT_TIME,
    .sample_size = 50,
    .target_precision = 0.02,
    .sampling = BENCH_SAMPLING_AUTO,
    .rounds = BENCH__QUICK_ROUNDS,
};

void bench__plan_for(bench__plan *plan, const bench__run_options *opt)
{
    memset(plan, 0, sizeof *plan);
    plan->kind = opt ? opt->plan : BENCH__PLAN_TIMED;
    plan->worker_process = opt && opt->job.active;
    plan->one_stretch = plan->kind != BENCH__PLAN_TIMED;
    plan->keeps_samples = plan->kind == BENCH__PLAN_TIMED || plan->kind == BENCH__PLAN_FIXED;
    plan->analyses = plan->keeps_samples && !plan->worker_process;
    plan->time_only = plan->kind == BENCH__PLAN_DRIVEN;
}

void bench__resolve_settings(bench__settings *out, const bench__run_options *opt,
                             const bench_desc *d, const bench_group_desc *g)
{
    const bench__settings *base = &bench__default_settings;
    *out = *base;
#define PICK(field)                                                                                \
    do {                                                                                           \
        if (opt && opt->cli.field)                                                                 \
            out->field = opt->cli.field;                                                           \
        else if (d && d->field)                                                                    \
            out->field = d->field;                                                                 \
        else if (g && g->field)                                                                    \
            out->field = g->field;                                                                 \
    } while (0)
    PICK(warm_up_time);
    PICK(measurement_time);
    PICK(sample_size);
    PICK(target_precision);
    PICK(sampling);
    if (opt && opt->sampling_set)
        out->sampling = opt->cli.sampling;
    PICK(bytes_per_iter);
    PICK(elements_per_iter);
    PICK(rounds);
#undef PICK
    if (opt && opt->is_quick) {
        /* --quick caps the time and loosens the precision, whatever the code asked for. */
        const bench__settings *q = &bench__quick_settings;
        if (!opt->cli.warm_up_time && out->warm_up_time > q->warm_up_time)
            out->warm_up_time = q->warm_up_time;
        if (!opt->cli.measurement_time && out->measurement_time > q->measurement_time)
            out->measurement_time = q->measurement_time;
        if (!opt->cli.sample_size && out->sample_size > q->sample_size)
            out->sample_size = q->sample_size;
        if (!opt->cli.target_precision && out->target_precision > 0 &&
            out->target_precision < q->target_precision)
            out->target_precision = q->target_precision;
        if (!opt->cli.rounds && out->rounds > q->rounds)
            out->rounds = q->rounds;
    }
    bench__plan pl;
    bench__plan_for(&pl, opt);
    if (pl.one_stretch)
        out->rounds = 1; /* A/B workers, fixed plans and profiling run one stretch */
    else if (pl.worker_process)
        out->rounds = (int)opt->job.count; /* a worker process is one round of its benchmark */
    if (out->rounds < 1)
        out->rounds = 1;
    if (out->sample_size < 2)
        out->sample_size = 2;
    /* A fixed plan takes all its samples, whatever BENCH_FN asked. */
    size_t fixed = pl.kind != BENCH__PLAN_FIXED ? 0
                   : opt->fixed_warm_up && opt->nfixed > 0 ? opt->nfixed - 1
                                                           : opt->nfixed;
    if (fixed > (size_t)out->sample_size)
        out->sample_size = (int)fixed;
    if (out->rounds > out->sample_size && !pl.worker_process)
        out->rounds = out->sample_size;
    if (out->warm_up_time < 0)
        out->warm_up_time = 0;
    if (!(out->measurement_time > 0))
        out->measurement_time = base->measurement_time;
}
