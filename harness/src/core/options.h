/*
 * options.h: the settings of one benchmark and the run-wide options the runner and the
 * analysis read (what the command line asked for, resolved over BENCH_FN and BENCH_GROUP).
 */
#ifndef HARNESS_OPTIONS_H
#define HARNESS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "harness/bench.h"

struct bench__probe;

/* ---- settings ---- */

/** Resolved settings of one benchmark run. */
typedef struct bench__settings {
    double warm_up_time;      /* s */
    double measurement_time;  /* s */
    int sample_size;          /* most samples */
    double target_precision;  /* relative CI half-width for the early stop; <= 0: off */
    bench_sampling sampling;
    uint64_t bytes_per_iter;    /* B per iteration; 0: none */
    uint64_t elements_per_iter; /* elements per iteration; 0: none */
    int rounds;                 /* rounds the samples are spread over (runner.c) */
} bench__settings;

/** How a benchmark's samples are planned: the mode's one difference to the runner; the mode
 * (its client of the run pipeline) sets it in bench__run_options.plan. */
typedef enum bench__plan_kind {
    BENCH__PLAN_TIMED,   /* warm-up, the sampling plan, the stopping rules, rounds */
    BENCH__PLAN_FIXED,   /* exactly fixed_iters, no timed warm-up (instruction counting) */
    BENCH__PLAN_PROFILE, /* --profile-time: iterations for an outside profiler, no statistics */
    BENCH__PLAN_DRIVEN,  /* A/B worker: each sample as worker_in says, its time to worker_out */
} bench__plan_kind;

/** Run-wide options from the command line that the runner and analysis need. */
typedef struct bench__run_options {
    bench__settings cli;     /* command-line settings; zero fields are not set */
    bench__settings quick;   /* defaults that --quick replaces the built-in ones with */
    bool is_quick;
    bool sampling_set;       /* --sampling was given (its AUTO is 0, so cli.sampling can't say) */
    size_t nresamples;       /* bootstrap resamples */
    double confidence_level; /* e.g. 0.95 */
    uint64_t seed;           /* bootstrap seed */
    bool progress;           /* live progress on stderr */
    FILE *worker_in;         /* BENCH__PLAN_DRIVEN (A/B worker): sample commands come from
                              * here ... */
    FILE *worker_out;        /* ... and sample times go here (see ab.c) */
    struct bench__probe **probes; /* attached to every benchmark, in this order */
    size_t nprobes;
    /* The plan the run's mode chose (its client sets it; zero: a timed run). */
    bench__plan_kind plan;
    /*
     * BENCH__PLAN_FIXED: no timed warm-up and no stopping rule; the samples run exactly
     * fixed_iters[0..nfixed-1] iterations. With fixed_warm_up, the first of them is a warm-up
     * sample: measured through the probes like the others (a probe may size the later counts
     * from it: the runner reads fixed_iters one sample at a time), then kept as the warm-up
     * rather than as a sample.
     */
    const uint64_t *fixed_iters;
    size_t nfixed;
    bool fixed_warm_up;
    /* BENCH__PLAN_PROFILE (--profile-time): each benchmark runs for this many seconds, with no
     * statistics. */
    double profile_time;
    /* Worker processes start under this command (its arguments; the program's path and
     * arguments follow them), or directly when nlauncher is 0: --instructions starts them
     * under valgrind. */
    const char *const *launcher;
    size_t nlauncher;
    /* Isolated measurement (manager.c): measuring processes per benchmark (0: the default),
     * the time limit of one process (s), and --in-process (no worker processes at all). */
    unsigned processes;
    double timeout_s;
    bool in_process;
    /* Worker processes keep the program's own layout: no random stack, heap and environment
     * offsets (layout.c; --fixed-layout). */
    bool fixed_layout;
    /* --trace FILE (measure/trace.c): the run as a timeline; NULL: none. */
    const char *trace_path;
    /* Worker side: this process measures one part of one benchmark (worker.c). */
    struct bench__job {
        bool active;
        unsigned index;  /* which of the benchmark's processes this is; 0 makes the plan */
        unsigned count;  /* processes the benchmark is measured in */
        /* the plan process 0 made (index > 0 only) */
        bench_sampling mode;
        uint64_t step;   /* iterations: linear d, or flat per-sample count */
        double est_ns;   /* per-iteration estimate from the warm-up, ns */
        double share;    /* the share of its measurement time this process takes, (0, 1] */
    } job;
} bench__run_options;

/** The statistics' defaults: bootstrap resamples (--nresamples), the confidence level of
 * intervals (--confidence-level), the bootstrap seed (--seed). */
#define BENCH__DEFAULT_NRESAMPLES 10000
#define BENCH__DEFAULT_CONFIDENCE_LEVEL 0.95
#define BENCH__DEFAULT_SEED 1

/** The name of a sampling plan ("auto", "linear", "flat"). */
const char *bench__sampling_name(bench_sampling s);

/** Most worker processes per benchmark (--processes, and in files). */
#define BENCH__MAX_PROCESSES 1000

/**
 * Set in a worker process that is not its benchmark's first: warnings the first one already
 * gave (a counter that cannot open) are not repeated once per process.
 */
extern bool bench__quiet_warnings;

#endif /* HARNESS_OPTIONS_H */
