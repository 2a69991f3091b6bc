/*
 * probe.h: the clock and the one interface of every measurement around a sample (the wall
 * clock, perf counters, allocation counts, CUDA events, instruction counts): probes, the
 * metrics and facts they record, and the constructors of the optional layers' probes.
 */
#ifndef HARNESS_PROBE_H
#define HARNESS_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stats.h"

/* ---- clock ---- */

/** What start-up calibration measured about the clock. */
typedef struct bench__clock_info {
    const char *name;     /* e.g. "CLOCK_MONOTONIC" */
    double cost_ns;       /* ns per read, back to back */
    double resolution_ns; /* smallest step observed between reads (at least clock_getres) */
    double min_sample_ns; /* shortest allowed sample: 1000 x max(cost, resolution) */
} bench__clock_info;

/** Reads the monotonic clock in ns. */
int64_t bench__now_ns(void);
/** Measures the clock's cost and resolution (about 2 ms); idempotent. */
const bench__clock_info *bench__clock_calibrate(void);

/* ---- measurement backends ---- */

/**
 * A measurement backend times or counts one sample. The runner starts every backend, innermost
 * (the wall clock) last, runs the sample, then stops them in reverse order. Start and stop must
 * be cheap and must not allocate.
 */
typedef struct bench__meas {
    const char *name; /* e.g. "wall" */
    const char *unit; /* unit of the values, e.g. "ns" */
    void (*start)(struct bench__meas *m);
    double (*stop)(struct bench__meas *m); /* the sample's total in `unit` */
    int64_t t0;                           /* backend state */
} bench__meas;

/** The wall-clock backend (CLOCK_MONOTONIC, ns). */
void bench__meas_wall_init(bench__meas *m);

struct bench__result;

/* ---- probes: extra measurements around every sample (perf counters, allocations, GPU) ---- */

/** Most metrics (values recorded per sample beside the time) and facts one benchmark has. */
#define BENCH__MAX_METRICS 24
#define BENCH__MAX_FACTS 8

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
 * A probe measures something around every sample. The runner attaches each probe of the run to
 * each benchmark before its body runs, starts attached probes before a sample (in order, the
 * wall clock last) and stops them after it (the wall clock first, then in reverse order), so
 * their own cost stays out of the time and the time's out of theirs. Start and stop must not
 * allocate and must be cheap; a probe that cannot be cheap (e.g. synchronising a GPU) says so
 * in its documentation.
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
    /* Optional, primary probes only: called just before the wall clock stops, so the host wall
     * time covers the work's completion (a CUDA probe waits for its stop event here). */
    void (*complete)(struct bench__probe *p);
    /* After the body: may add facts (bench__fact_add); releases per-benchmark resources. */
    void (*detach)(struct bench__probe *p, struct bench__result *r);
    /*
     * A primary probe's first value, in ns, is the sample's time instead of the wall clock's
     * (CUDA events: GPU time); the wall clock's time is then recorded as the metric "host_wall".
     * At most one primary probe is attached to a benchmark.
     */
    bool primary;
    void *state; /* the probe's own */
    /* At the end of the run: releases the probe (may be NULL). */
    void (*destroy)(struct bench__probe *p);
} bench__probe;

/*
 * The probes of the optional layers. Each create function returns 0 and a probe; or a negative
 * error code with a one-line reason in msg: BENCH_EINVAL for a bad request (an event name
 * nobody knows: exit 2), BENCH_EUNAVAIL when the layer is compiled out or cannot work here.
 * Warnings about parts that cannot work (an event the machine cannot count) go to stderr, once.
 */

/** perf_event counter groups for a comma-separated list of events and presets (perf.c). */
int bench__perf_probe_create(const char *spec, bench__probe **out, char *msg, size_t msglen);
/** --list-events: what libpfm4 knows on this machine and what opens; returns the exit code. */
int bench__perf_list_events(FILE *out);

/**
 * Allocation statistics: the malloc family counted per iteration (alloc.c) by the preload
 * library libharness_alloc.so; BENCH_EUNAVAIL (reason in msg) when it is not loaded.
 */
int bench__alloc_probe_create(bench__probe **out, char *msg, size_t msglen);
/**
 * Makes sure the allocation shim is loaded: returns 0 when it is; otherwise re-executes the
 * program (/proc/self/exe with argv[0..argc)) with the shim first in LD_PRELOAD, and does not
 * return. BENCH_EUNAVAIL with the reason in msg when that cannot work: a statically linked
 * program, the shim not found, already re-executed without success, under valgrind.
 */
int bench__alloc_preload(int argc, char **argv, char *msg, size_t msglen);

/**
 * The CUDA layer's probe (cuda.c): attaches to CUDA benchmarks only (times them with CUDA
 * events: a primary probe), and skips them with the reason when there is no CUDA build, device
 * or driver. Always present; first in the run's probe list.
 */
bench__probe *bench__cuda_probe(void);

#endif /* HARNESS_PROBE_H */
