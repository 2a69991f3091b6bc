/*
 * probe.h: the one interface of every measurement around a sample (the wall clock, perf
 * counters, allocation counts, CUDA events, instruction counts): probes, the metrics and facts
 * they record, and the constructors of the probes (the wall clock's and the optional layers').
 */
#ifndef HARNESS_PROBE_H
#define HARNESS_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stats/stats.h"

struct bench__result;

/* ---- probes: extra measurements around every sample (perf counters, allocations, GPU) ---- */

/** Most metrics (values recorded per sample beside the time) and facts one benchmark has. */
#define BENCH__MAX_METRICS 40
#define BENCH__MAX_FACTS 16

/**
 * A quantity a probe records for every sample beside the time: the sample's total, divided by
 * the sample's iterations for the per-iteration estimate.
 */
typedef struct bench__metric {
    char name[64];       /* e.g. "task-clock", "allocations", "host_wall" */
    char unit[16];       /* unit of one value, e.g. "ns", "events", "B" */
    char source[16];     /* the probe that recorded it: "perf", "alloc", "cuda", ... */
    double *totals;      /* per sample: total over the sample (same samples as r->iters) */
    bool scaled;         /* some value was estimated from a part of the sample (multiplexing) */
    double min_fraction; /* smallest fraction of a sample the value was counted for (1: all) */
    bench__estimates est; /* per iteration, like the time's */
} bench__metric;

/** A per-benchmark figure that is not per sample (peak heap, max RSS, ...). */
typedef struct bench__fact {
    char name[64];
    char unit[16];
    double value;
} bench__fact;

/**
 * A probe measures something around every sample: the wall clock, perf counters, allocation
 * counts, CUDA events, instruction counts. The runner attaches each probe of the run to each
 * benchmark before its body runs, then the wall clock's probe (bench__wall_probe) last; it
 * starts attached probes before a sample (in order, so the wall clock last) and stops them after
 * it (the wall clock first, then in reverse order), so their own cost stays out of the time and
 * the time's out of theirs. Start and stop run once per sample (or timed block), never inside
 * the iteration loop; they must not allocate and must be cheap; a probe that cannot be cheap
 * (e.g. synchronising a GPU) says so in its documentation.
 *
 * Which probe gives the sample's time is the plan's rule, not a mode's: of the attached probes
 * that can (`primary`), the first one does; the wall clock, attached last, is the default. A
 * later one that can give a time records it as its metric `time_metric` instead (the wall
 * clock's is "host_wall"); one without a `time_metric` fails the benchmark.
 */
typedef struct bench__probe {
    const char *name;
    /*
     * Before the body: registers the probe's metrics on r with bench__metric_add (it records
     * them in that order) and returns 0 to measure this benchmark; returns 1 to leave this
     * benchmark alone; or sets r to skipped (bench__result_skip) and returns 1 when the benchmark
     * cannot run at all (e.g. a GPU benchmark without a GPU).
     */
    int (*attach)(struct bench__probe *p, struct bench__result *r);
    void (*start)(struct bench__probe *p);
    /* Writes the sample's values, one per metric it registered, in registration order; sets
     * *fraction to the part of the sample they were counted for (1.0 unless multiplexed). */
    void (*stop)(struct bench__probe *p, double *values, double *fraction);
    /* Optional, primary probes only: called, when this probe gives the time, just before the
     * wall clock stops, so the host wall time covers the work's completion (a CUDA probe waits
     * for its stop event here). */
    void (*complete)(struct bench__probe *p);
    /* Optional: after the body: may add facts (bench__fact_add); releases per-benchmark
     * resources. */
    void (*detach)(struct bench__probe *p, struct bench__result *r);
    /*
     * The probe can give the sample's time: its first value, in ns, comes before the values of
     * the metrics it registered (CUDA events: GPU time; the wall clock: elapsed time).
     */
    bool primary;
    /* A primary probe's metric name for its time when another probe gives the time (the wall
     * clock's "host_wall", unit ns); NULL: it cannot stand aside. */
    const char *time_metric;
    /* A primary probe's shortest useful sample for the benchmark it attached to last, ns, set
     * by attach (its timer's resolution and fixed costs: CUDA events); 0: the clock's. The
     * planner takes the larger of this and the clock's min_sample_ns. */
    double min_sample_ns;
    void *state; /* the probe's own */
    /* At the end of the run: releases the probe (may be NULL). */
    void (*destroy)(struct bench__probe *p);
    /*
     * Optional, threaded benchmarks (bench_desc.threads > 1, measure/team.c): called on each thread
     * but the leader at every sample boundary, after that thread's clock stopped: adds what the
     * probe counted on this thread since the last call into values (stop's layout) and clears
     * it; values NULL: only clears. The leader adds them to its own values of the sample. A
     * probe without it measures the leader thread only (perf counters, allocations, rusage).
     */
    void (*thread_take)(struct bench__probe *p, double *values);
} bench__probe;

/* ---- kinds of probe: the lines of the table (probes/probes.h) ---- */

/** One reading of a device's state that a probe took, for --trace's counter tracks. */
typedef struct bench__probe_reading {
    const char *name; /* static; ends with its unit ("gpu_sm_clock_mhz", "gpu_temperature_c") */
    double value;     /* in that unit */
    int64_t at_ns;    /* CLOCK_MONOTONIC when it was read */
} bench__probe_reading;

/** Most kinds of probe the table holds. */
#define BENCH__MAX_PROBE_KINDS 8

/**
 * A kind of probe: one line of the table in probes/probes.c, defined in the probe's own file
 * with BENCH__PROBE_KIND(name). The command line asks for it by `--probe NAME[=ARG]` (or its
 * own option), the pipeline creates it through `create`, and the analysis calls `analyze`.
 */
typedef struct bench__probe_kind {
    const char *name; /* --probe NAME */
    const char *flag; /* an option of its own that also asks for it ("--perf-events"); NULL */
    bool always;      /* in every run, asked or not (CUDA: it gives BENCH_CUDA_FNs their time) */
    bool takes_arg;   /* NAME=ARG (required); else NAME alone */
    /* Makes the probe (arg: NULL for an always probe not asked for); 0, or an error code with
     * the reason in msg. The probe is released by its destroy hook. */
    int (*create)(const char *arg, bench__probe **out, char *msg, size_t msglen);
    /* Optional: before a result's estimates are computed from its pooled samples (in the
     * manager), e.g. to leave out samples the probe knows are not representative. */
    void (*analyze)(struct bench__result *r);
    /* Optional, for the whole run: locks the clock of the device the probe times at mhz
     * (--gpu-lock-clocks) until unlock_clocks; 0, or BENCH_EUNAVAIL with the reason in msg. */
    int (*lock_clocks)(unsigned mhz, char *msg, size_t msglen);
    /* Undoes lock_clocks (a warning on stderr if that fails); no-op without a lock. */
    void (*unlock_clocks)(void);
    /* Optional, after a comparison with a saved entry: when r ran differently from the saved
     * run in a way the probe sees (a GPU's clock), one line saying so into buf and 1; else 0.
     * then_rate is the saved run's per-ns rate of the metric note_metric (not above 0:
     * unknown). */
    int (*compare_note)(const struct bench__result *r, double then_rate, char *buf, size_t len);
    const char *note_metric;
    /* Optional: the readings of a device's state (a GPU's clocks, temperature, power,
     * throttling) taken since the last call, at most max into out; returns how many (0: none
     * new, or no device). Only the known ones: a query the device does not answer gives none. */
    size_t (*readings)(bench__probe_reading *out, size_t max);
} bench__probe_kind;

/** Defines a probe kind in its own file: BENCH__PROBE_KIND(rusage) = {.name = "rusage", ...}; */
#define BENCH__PROBE_KIND(id)                                                                      \
    extern const bench__probe_kind bench__probe_kind_##id;                                         \
    const bench__probe_kind bench__probe_kind_##id

#endif /* HARNESS_PROBE_H */
