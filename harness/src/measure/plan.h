/*
 * plan.h: what one benchmark will do before it runs (plan.c): its settings resolved from the
 * command line, BENCH_FN, BENCH_GROUP and the defaults, and what the run's plan kind means for
 * the runner.
 */
#ifndef HARNESS_PLAN_H
#define HARNESS_PLAN_H

#include <stdbool.h>

#include "core/options.h"

/**
 * What the run's plan kind means for the runner (bench__plan_for): the runner asks the plan
 * and tests no mode field of the options. Which probe gives the time is the plan's rule too
 * (probe.h): the first attached probe that can.
 */
typedef struct bench__plan {
    bench__plan_kind kind;
    bool worker_process;  /* a worker process measures one part of a benchmark (job): its
                           * rounds are the processes and its manager does the statistics */
    bool one_stretch;     /* the body runs once, in one round (fixed, profile, driven) */
    bool keeps_samples;   /* samples and their probe values go into the result (timed, fixed) */
    bool analyses;        /* this process computes the estimates (keeps samples, not a worker
                           * process) */
    bool time_only;       /* only probes that can give the time attach (driven: the A/B
                           * coordinator compares times) */
} bench__plan;

/** The plan the run options ask for (opt may be NULL: a timed run). */
void bench__plan_for(bench__plan *plan, const bench__run_options *opt);

/* The built-in settings' numbers that --help states, named so that it states the ones used;
 * rounds by default and with --quick, which favours a short run over spread samples. */
#define BENCH__DEFAULT_WARM_UP_TIME 0.3
#define BENCH__DEFAULT_MEASUREMENT_TIME 3
#define BENCH__DEFAULT_SAMPLE_SIZE 100
#define BENCH__DEFAULT_TARGET_PRECISION 0.01
#define BENCH__DEFAULT_ROUNDS 5
#define BENCH__QUICK_WARM_UP_TIME 0.05
#define BENCH__QUICK_MEASUREMENT_TIME 0.35
#define BENCH__QUICK_ROUNDS 1

/** The built-in defaults (docs/cli.md lists them). */
extern const bench__settings bench__default_settings;
extern const bench__settings bench__quick_settings;

/** Resolves settings: command line over BENCH_FN over BENCH_GROUP over defaults. */
void bench__resolve_settings(bench__settings *out, const bench__run_options *opt,
                             const bench_desc *d, const bench_group_desc *g);

#endif /* HARNESS_PLAN_H */
