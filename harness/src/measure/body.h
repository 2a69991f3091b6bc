/*
 * body.h: the state of one benchmark's body while it runs in this process (struct bench, the
 * bench_t users receive): what the runner (runner.c) plans and records, and what the
 * accessors a body calls (accessors.c) read and set. Private to run/.
 */
#ifndef HARNESS_BODY_H
#define HARNESS_BODY_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/options.h"
#include "core/probe.h"
#include "core/registry.h"
#include "core/result.h"
#include "measure/plan.h"
#include "measure/run.h"
#include "sys/clock.h"

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
    uint64_t cold_iters;  /* iterations of the first warm-up sample, the cold one */
    double cold_ns;       /* ns of the first warm-up sample */
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

    /*
     * Threaded benchmarks (inst->threads > 1, team.c): the team this body's threads share, NULL
     * otherwise. The leader is the bench_t above, running on the calling thread with the probes
     * and the plan; each follower is a bench_t of its own with `team` set, `follower` true and
     * its own clock (clock, clock_start, clock_stop, clock_out), nothing else of the above.
     * The single-thread path tests `team` only after its clock and probes stopped.
     */
    struct bench__team *team;
    bool follower;
    const struct bench *leader; /* a follower's: its team's leader (team.c); NULL otherwise */
    unsigned thread_index; /* 0: the leader; 1 .. threads - 1: followers */
    /* --trace (runner.c): warm-up samples past the first few of a phase, merged into one line */
    struct {
        unsigned sent;     /* warm-up samples of the phase sent one by one */
        unsigned phase;    /* BENCH__TRACE_WARM_UP or _REWARM of the pending ones */
        uint64_t n;        /* pending samples, 0: none */
        int64_t start_ns;  /* the first pending one's start */
        double iters, ns;  /* their sums */
    } trace_warm;
    struct bench__spans *spans; /* this thread's spans under --trace (span.c), or NULL */
    int thread_metric;     /* the leader's: metric index of thread_0 in r (fastest_thread, beyond
                              BENCH__THREAD_METRICS threads, follows them); -1: none */
};

/**
 * Runs the body once, the first round of b or its next (runner.c): the samples the plan asks
 * for, then the checks that the body ran its timed loop to the end. Sets b->finished when no
 * round is left. instance.c sets b up before the first round and finishes it after the last.
 */
void bench__instance_round(bench_t *b);

/*
 * The team of a threaded body (team.c), used by the runner (runner.c) and the accessors.
 *
 * bench__team_run runs one call of the body on inst->threads threads: the followers on threads of
 * their own, the leader (b) on the calling thread; it returns once all have returned. When a
 * thread cannot start, no body runs and the benchmark fails with the reason.
 *
 * A sample boundary (bench__loop_next, after the calling thread's clock stopped; `stopped`: a
 * sample was running) is passed by all threads together. A follower's is bench__team_follow, the
 * whole of it but the clock's start. The leader's is bench__team_gather (its elapsed ns in, the
 * followers' in; their probe values added into b->acc, a follower's failure or skip into b->r;
 * then every thread's elapsed ns of the sample are in elapsed[0 .. threads - 1], and *span_ns is
 * the team's: from the first thread's clock start to the last one's stop), the runner's
 * bookkeeping, and bench__team_publish (the next sample's iterations out, 0: done).
 */
void bench__team_run(bench_t *b);
uint64_t bench__team_follow(bench_t *b, bool stopped);
const double *bench__team_gather(bench_t *b, bool stopped, double own_ns, double *span_ns);
void bench__team_publish(bench_t *b, uint64_t n);
/* bench_fail / bench_skip (st) on a follower, bench_set_bytes / bench_set_elements (NULL: leave
 * it) on any thread of a team (accessors.c). */
void bench__team_status(bench_t *b, bench__status st, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
void bench__team_set_work(bench_t *b, const uint64_t *bytes, const uint64_t *elements);

#endif /* HARNESS_BODY_H */
