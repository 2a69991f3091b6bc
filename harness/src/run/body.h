/*
 * body.h: the state of one benchmark's body while it runs in this process (struct bench, the
 * bench_t users receive): what the runner (runner.c) plans and records, and what the
 * accessors a body calls (accessors.c) read and set. Private to run/.
 */
#ifndef HARNESS_BODY_H
#define HARNESS_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/options.h"
#include "core/probe.h"
#include "core/registry.h"
#include "core/result.h"
#include "run/run.h"

/* PH_REWARM: a later round's warm-up; PH_DONE: this call of the body has no more samples. */
enum phase { PH_INIT, PH_WARMUP, PH_REWARM, PH_MEASURE, PH_DONE };

struct bench {
    const bench__instance *inst;
    const bench__run_options *opt;
    bench__result *r;
    const bench__clock_info *clk;
    bench__plan plan; /* what the run's mode needs */

    /*
     * Probes attached to this benchmark, the wall clock's last (probes[nouter]), their first
     * value's index in vals, and the values. The wall clock is started and stopped through
     * copies of its probe's functions (no probe-list walk inside the timed block). Its stop
     * takes the probe interface's arguments: preparing them and the callee's prologue put
     * about five instructions before the clock read that a bare clock call did not have
     * (objdump, -O3), a constant of a few ns per sample, not per iteration.
     */
    bench__probe *probes[BENCH__MAX_METRICS + 1];
    size_t probe_first[BENCH__MAX_METRICS + 1];
    size_t nprobes;         /* attached, the wall clock included */
    size_t nouter;          /* attached before the wall clock (started before it) */
    bench__probe *clock;    /* the wall clock's probe, innermost */
    void (*clock_start)(bench__probe *p);
    void (*clock_stop)(bench__probe *p, double *values, double *fraction);
    double *clock_out;      /* its value's place in vals */
    double clock_frac;      /* its fraction (always 1) */
    bench__probe *primary;  /* gives the time: the first attached probe that can */
    bench__probe *completer; /* the primary probe when it has a complete hook; else NULL */
    size_t time_slot;       /* the primary's time's index in vals */
    size_t nvals;           /* values per sample over all attached probes */
    int metric_of[BENCH__MAX_METRICS + 2]; /* per value: its metric in r; -1: the time */
    double vals[BENCH__MAX_METRICS + 2];  /* the last stop's values */
    double acc[BENCH__MAX_METRICS + 2];   /* accumulated over the running sample's batches */
    double frac[BENCH__MAX_METRICS + 1];  /* per probe: smallest counted fraction of the sample */

    enum phase phase;
    bool in_sample;      /* a sample is running (its clock started) */
    uint64_t cur_iters;  /* iterations of the running sample */
    uint64_t batch_left; /* batched mode: iterations of the sample not yet handed out */
    double accum_ns;     /* batched mode: timed ns accumulated in the running sample */
    size_t capacity;     /* room in r->iters / r->totals_ns */

    int64_t bench_start_ns;
    int64_t warm_start_ns; /* the running warm-up's start; 0: a later round's not begun yet */
    uint64_t warm_next;   /* iterations of the next warm-up sample */
    int64_t meas_start_ns;
    double est_ns;        /* per-iteration estimate from the warm-up */
    uint64_t step;        /* linear: d; flat: iterations per sample */
    size_t next_check;    /* sample count at which precision is checked next */

    /* rounds: the body runs once per round; the samples pool */
    unsigned rounds;         /* rounds this benchmark takes (settings.rounds until the plan) */
    unsigned rounds_done;    /* rounds finished */
    size_t round_samples;    /* samples taken in the running round */
    int64_t round_start_ns;  /* the running round's sampling start */
    double meas_ns;          /* sampling time of the finished rounds */
    size_t *round_end;       /* per finished round: the sample count at its end */
    unsigned rewarm_samples; /* warm-up samples of the running later round */
    bool finished;           /* no more rounds: ready to report */

    int64_t last_progress_ns;
    bool progress_shown;
};

#endif /* HARNESS_BODY_H */
