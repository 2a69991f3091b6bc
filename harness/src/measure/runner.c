/*
 * runner.c: drives one benchmark from warm-up to its last sample.
 *
 * The body of a BENCH_FN runs once; its timed loop calls bench__loop_next (or bench__batch_next)
 * between samples. Each call stops the clock as its first action, does the bookkeeping (record
 * the sample, plan the next, decide whether to stop, draw progress) and starts the clock as its
 * last action, so only the loop body is inside a sample.
 *
 * Plan: warm-up doubles the iteration count until the warm-up time has passed and yields an
 * estimate t of one iteration from the warm-up samples after the first: the first call in a
 * process can be many times slower (page faults, lazy binding, cold caches), and an estimate
 * from it alone planned 1 iteration per sample and a tenth of the budget. So the warm-up takes
 * a second sample even when the first outlasted the warm-up time, unless the first took half
 * the measurement time (a second would cost as much again). Sampling is then linear (sample k runs k*d iterations, d chosen so
 * that sample_size samples fill the measurement time) or, when even d = 1 would overrun the
 * budget, flat (every sample the same count). No sample is shorter than the clock's minimum
 * sample time. Sampling stops at whichever comes first: sample_size samples; the time budget
 * (after at least 3 samples, 2 with --quick); or, after at least 10 samples spanning a third of
 * the budget, a distribution-free confidence interval of the median narrower than the target
 * precision.
 *
 * Rounds: on a shared machine the speed changes for seconds at a time, so samples taken in one
 * stretch see one state of the machine and the next run sees another. With rounds R > 1
 * (the default outside --quick), bench__run_all runs every benchmark's body R times, interleaved
 * with the other benchmarks': round j of every benchmark, then round j + 1. Each round warms up
 * for 1/R of the warm-up time and takes every R-th sample of the plan (sample indices j, j + R,
 * ...) within 1/R of the budget; the samples pool into one analysis. The plan comes from the
 * first round's warm-up. A benchmark whose shortest sample does not fit R times in the budget
 * takes fewer rounds, spread over the R; one with probes attached (counters, allocations, GPU
 * events) takes one, because probes measure and report per stretch. With R > 1 the precision
 * is checked between rounds, once a third of them are done.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "core/options.h"
#include "core/probe.h"
#include "core/registry.h"
#include "core/result.h"
#include "probes/measure.h"
#include "measure/body.h"
#include "measure/plan.h"
#include "measure/protocol.h"
#include "measure/run.h"
#include "measure/trace.h"
#include "probes/probes.h"
#include "stats/stats.h"
#include "sys/clock.h"

/* No sample runs more iterations than this: keeps k*d far from overflow and an empty body's
 * warm-up finite. */
#define MAX_SAMPLE_ITERS (UINT64_C(1) << 40)
/* Samples needed before the time budget may stop sampling (2 with --quick), and before the
 * precision may. */
#define MIN_SAMPLES_BUDGET 3
#define MIN_SAMPLES_BUDGET_QUICK 2
#define MIN_SAMPLES_PRECISION 10
/*
 * The precision may stop sampling only once the samples span this fraction of the budget. On a
 * shared machine the speed changes from one tenth of a second to the next (a 2x swing was seen
 * on the development VM); samples from a few milliseconds all see one state, and their interval
 * then claims a precision that the next run contradicts.
 */
#define PRECISION_MIN_SPAN 0.33
/* The budget may be overrun by this fraction rather than drop a planned sample. */
#define BUDGET_SLACK 0.10
static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* ---- progress ---- */

static void progress(bench_t *b, int64_t now)
{
    if (!b->opt->progress || now - b->bench_start_ns < 1000000000 ||
        now - b->last_progress_ns < 100000000)
        return;
    b->last_progress_ns = now;
    b->progress_shown = true;
    char round[48] = "";
    if (b->rounds > 1)
        snprintf(round, sizeof round, ", round %u of %u", b->rounds_done + 1, b->rounds);
    if (b->phase == PH_WARMUP || b->phase == PH_REWARM)
        fprintf(stderr, "\r%s: warming up (%.1f s%s)\033[K", b->inst->id,
                (double)(now - b->bench_start_ns) / 1e9, round);
    else
        fprintf(stderr, "\r%s: collecting samples (%zu of at most %d%s)\033[K", b->inst->id,
                b->r->nsamples, b->r->settings.sample_size, round);
    fflush(stderr);
}

static void progress_clear(bench_t *b)
{
    if (b->progress_shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
}

/* ---- planning ---- */

/* Time of one iteration in the warm-up so far: from the samples after the first, cold one when
 * there are any; 0 before the first. */
static double warm_per_iter(const bench_t *b)
{
    const bench__result *r = b->r;
    if (r->warm_up_iters > b->cold_iters)
        return (r->warm_up_ns - b->cold_ns) / (double)(r->warm_up_iters - b->cold_iters);
    return r->warm_up_iters ? r->warm_up_ns / (double)r->warm_up_iters : 0.0;
}

static void plan(bench_t *b)
{
    bench__result *r = b->r;
    const bench__settings *s = &r->settings;
    double n = (double)s->sample_size;
    double budget = s->measurement_time * 1e9;
    double t = r->warm_up_iters ? warm_per_iter(b) : 1.0;
    if (!(t > 1e-6))
        t = 1e-6; /* an empty body: the plan is then bounded by MAX_SAMPLE_ITERS */
    b->est_ns = t;
    /* The primary probe may need longer samples than the clock (CUDA events: probe.h). */
    double min_ns = b->clk->min_sample_ns;
    if (b->primary && b->primary->min_sample_ns > min_ns)
        min_ns = b->primary->min_sample_ns;
    double min_iters = ceil(min_ns / t);
    if (min_iters < 1)
        min_iters = 1;

    bench_sampling mode = s->sampling;
    double linear_d = budget / (t * n * (n + 1) / 2);
    if (mode == BENCH_SAMPLING_AUTO)
        mode = linear_d < 1.0 ? BENCH_SAMPLING_FLAT : BENCH_SAMPLING_LINEAR;
    double step;
    if (mode == BENCH_SAMPLING_LINEAR)
        step = fmax(min_iters, ceil(linear_d));
    else
        step = fmax(min_iters, floor(budget / (n * t)));
    r->sampling_used = mode;
    b->step = (uint64_t)clampd(step, 1, (double)MAX_SAMPLE_ITERS);
    b->next_check = MIN_SAMPLES_PRECISION;
    /* Each round takes at least one sample: no more rounds than shortest samples fit in the
     * budget. */
    double fit = floor(budget / ((double)b->step * t));
    if (fit < (double)b->rounds)
        b->rounds = fit < 1 ? 1 : (unsigned)fit;
}

/* Samples a round must take before its share of the budget may end it: the budget's minimum
 * spread over the rounds. */
static size_t min_round_samples(const bench_t *b)
{
    size_t need = b->opt->is_quick ? MIN_SAMPLES_BUDGET_QUICK : MIN_SAMPLES_BUDGET;
    return (need + b->rounds - 1) / b->rounds;
}

/* The per-iteration times of samples [from, to) into y, sorted; returns how many. */
static size_t sorted_times(const bench__result *r, size_t from, size_t to, double *y)
{
    for (size_t i = from; i < to; i++)
        y[i - from] = r->totals_ns[i] / r->iters[i];
    bench__sort(y, to - from);
    return to - from;
}

/*
 * Whether the median's interval is already as narrow as the target precision asks. With
 * rounds, each finished round's median must also lie within twice the target of the pooled
 * median: when the machine's speed changed between rounds, the pooled samples still give a
 * narrow interval, and the next run would contradict it.
 */
static bool precise_enough(bench_t *b)
{
    bench__result *r = b->r;
    size_t n = r->nsamples;
    double *y = malloc(n * sizeof *y);
    if (!y)
        return false;
    sorted_times(r, 0, n, y);
    double lo, hi, med = 0, target = r->settings.target_precision;
    bool ok = false;
    if (bench__median_ci_sorted(y, n, b->opt->confidence_level, &lo, &hi) == 0) {
        med = bench__quantile_sorted(y, n, 0.5);
        ok = med > 0 && (hi - lo) / 2.0 <= target * med;
    }
    size_t from = 0;
    for (unsigned j = 0; ok && b->rounds > 1 && j < b->rounds_done; j++) {
        size_t to = b->round_end[j];
        size_t m = sorted_times(r, from, to, y);
        if (m > 0)
            ok = fabs(bench__quantile_sorted(y, m, 0.5) - med) <= 2.0 * target * med;
        from = to;
    }
    free(y);
    return ok;
}

static uint64_t sample_iters(const bench_t *b, size_t k)
{
    if (b->r->sampling_used == BENCH_SAMPLING_FLAT)
        return b->step;
    double v = (double)(k + 1) * (double)b->step;
    return v > (double)MAX_SAMPLE_ITERS ? MAX_SAMPLE_ITERS : (uint64_t)v;
}

/* --trace: warm-up samples of a phase sent one by one; the rest are merged into one line. */
#define TRACE_WARM_SAMPLES 16

/* --trace: the merged warm-up samples, if any, as one TS line. */
static void trace_warm_flush(bench_t *b)
{
    if (b->trace_warm.n == 0)
        return;
    bench__wire_line l = {.kind = BENCH__WIRE_TSAMPLE};
    l.tsample.phase = b->trace_warm.phase;
    l.tsample.start_ns = (uint64_t)b->trace_warm.start_ns;
    l.tsample.iters = b->trace_warm.iters;
    l.tsample.total_ns = b->trace_warm.ns;
    l.tsample.count = b->trace_warm.n;
    bench__trace_emit(&l);
    b->trace_warm.n = 0;
}

/* --trace: a slice of this thread, from start_ns to now (TSPAN line); it ends a warm-up phase
 * when it is one (the pending warm-up samples go first). */
static void trace_slice(bench_t *b, const char *name, int64_t start_ns)
{
    trace_warm_flush(b);
    b->trace_warm.sent = 0;
    bench__trace_span(b->thread_index, name, start_ns);
}

/* --trace: the devices' states that the probes read (the GPU's clocks, temperature, power and
 * throttling, at most every few ms), one TC line each, drawn as counters. */
static void trace_readings(void)
{
    bench__probe_reading rd[16];
    size_t n = bench__probes_readings(rd, sizeof rd / sizeof rd[0]);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(rd[i].value))
            continue;
        bench__wire_line l = {.kind = BENCH__WIRE_TCOUNTER};
        l.tcounter.at_ns = rd[i].at_ns > 0 ? (uint64_t)rd[i].at_ns : 0;
        l.tcounter.value = rd[i].value;
        bench__msg(l.tcounter.name, sizeof l.tcounter.name, "%s", rd[i].name);
        bench__trace_emit(&l);
    }
}

/* --trace: the sample that just ended (its start: now less its time), and the body's spans.
 * A measured sample is one line each; a warm-up phase's first TRACE_WARM_SAMPLES are too, its
 * later ones are merged (a tiny body warms up in thousands of samples). */
__attribute__((noinline)) static void trace_sample(bench_t *b, uint64_t iters, double total_ns)
{
    if (b->plan.kind == BENCH__PLAN_DRIVEN || b->plan.kind == BENCH__PLAN_PROFILE ||
        b->phase == PH_INIT || b->phase == PH_DONE)
        return;
    bench__wire_line l = {.kind = BENCH__WIRE_TSAMPLE};
    l.tsample.phase = b->phase == PH_WARMUP   ? BENCH__TRACE_WARM_UP
                      : b->phase == PH_REWARM ? BENCH__TRACE_REWARM
                                              : BENCH__TRACE_MEASURE;
    if (l.tsample.phase == BENCH__TRACE_MEASURE && b->r->nsamples >= b->capacity)
        return; /* not kept (sample_done) */
    int64_t start = bench__now_ns() - (int64_t)llround(total_ns);
    l.tsample.start_ns = start > 0 ? (uint64_t)start : 0;
    l.tsample.iters = (double)iters;
    l.tsample.total_ns = total_ns;
    l.tsample.count = 1;
    if (l.tsample.phase != BENCH__TRACE_MEASURE && b->trace_warm.sent >= TRACE_WARM_SAMPLES) {
        if (b->trace_warm.n++ == 0) {
            b->trace_warm.phase = l.tsample.phase;
            b->trace_warm.start_ns = (int64_t)l.tsample.start_ns;
            b->trace_warm.iters = b->trace_warm.ns = 0;
        }
        b->trace_warm.iters += (double)iters;
        b->trace_warm.ns += total_ns;
    } else {
        trace_warm_flush(b);
        b->trace_warm.sent += l.tsample.phase != BENCH__TRACE_MEASURE;
        bench__trace_emit(&l);
    }
    if (l.tsample.phase == BENCH__TRACE_MEASURE)
        bench__spans_sample(b, total_ns); /* each span's time in it, after its TS line */
    bench__spans_flush(b);
    trace_readings();
}

/* Records a finished sample. */
static void sample_done(bench_t *b, uint64_t iters, double total_ns)
{
    bench__result *r = b->r;
    if (bench__spans_on)
        trace_sample(b, iters, total_ns);
    if (b->plan.kind == BENCH__PLAN_DRIVEN) {
        /* A/B worker: the coordinator keeps the samples. A time it cannot be sent (not finite,
         * negative) ends the samples, and the coordinator hears why on the END line. */
        char msg[128];
        bench__wire_line l = {.kind = BENCH__WIRE_TIME, .time.ns = total_ns};
        if (bench__wire_write(b->opt->worker_out, &l, msg, sizeof msg) != 0)
            bench__result_fail(r, "%s", msg);
        fflush(b->opt->worker_out);
        return;
    }
    if (b->plan.kind == BENCH__PLAN_PROFILE) {
        r->profile_iters += iters;
        r->profile_ns += total_ns;
    } else if (b->phase == PH_WARMUP || b->phase == PH_REWARM) {
        if (b->phase == PH_WARMUP && r->warm_up_iters == 0) {
            b->cold_iters = iters;
            b->cold_ns = total_ns;
        }
        r->warm_up_iters += iters;
        r->warm_up_ns += total_ns;
    } else if (b->phase == PH_MEASURE && r->nsamples < b->capacity) {
        r->iters[r->nsamples] = (double)iters;
        r->totals_ns[r->nsamples] = total_ns;
        r->nsamples++;
        r->total_iters += iters;
    }
}

/* A/B worker: the coordinator decides every sample ("R iterations" or "Q"). */
static uint64_t worker_next(bench_t *b)
{
    char msg[128];
    if (b->phase == PH_INIT) {
        bench__wire_write(b->opt->worker_out, &(bench__wire_line){.kind = BENCH__WIRE_READY},
                          msg, sizeof msg);
        fflush(b->opt->worker_out);
        b->phase = PH_MEASURE;
    }
    /* Anything but a sample to run (Q, the end of stdin, a malformed line) ends the samples. */
    bench__wire_line l;
    if (bench__wire_getline(b->opt->worker_in, &l, msg, sizeof msg) == 1 &&
        l.kind == BENCH__WIRE_RUN && l.run.iters <= MAX_SAMPLE_ITERS)
        return l.run.iters;
    b->phase = PH_DONE;
    return 0;
}

/* Profile mode: no statistics, only iterations for an outside profiler to see. Doubling
 * samples up to about 50 ms each until the profile time has passed. */
static uint64_t profile_next(bench_t *b, int64_t now)
{
    bench__result *r = b->r;
    if (b->phase == PH_INIT) {
        b->phase = PH_MEASURE;
        b->bench_start_ns = b->meas_start_ns = now;
        b->warm_next = 1;
    }
    double elapsed = (double)(now - b->meas_start_ns);
    if (elapsed >= b->opt->profile_time * 1e9) {
        r->stop_reason = "profile time";
        r->measure_wall_s = elapsed / 1e9;
        b->phase = PH_DONE;
        return 0;
    }
    uint64_t n = b->warm_next;
    double per = r->profile_iters ? r->profile_ns / (double)r->profile_iters : 0;
    if (per > 0 && (double)n * per > 5e7)
        n = (uint64_t)fmax(1.0, 5e7 / per);
    else if (b->warm_next < MAX_SAMPLE_ITERS)
        b->warm_next *= 2;
    progress(b, now);
    return n;
}

/* Fixed plan: exactly the given iteration counts, no timed warm-up, no stopping rule. With
 * fixed_warm_up the first count is a warm-up sample (kept as the warm-up by sample_done, seen by
 * the probes like any sample), the rest are the samples. */
static uint64_t fixed_next(bench_t *b, int64_t now)
{
    bench__result *r = b->r;
    size_t first = b->opt->fixed_warm_up && b->opt->nfixed > 0 ? 1 : 0;
    uint64_t n;
    if (b->phase == PH_INIT) {
        b->bench_start_ns = b->meas_start_ns = now;
        r->sampling_used = BENCH_SAMPLING_FLAT;
        b->phase = first ? PH_WARMUP : PH_MEASURE;
        if (first) {
            n = b->opt->fixed_iters[0];
            return n < 1 ? 1 : n > MAX_SAMPLE_ITERS ? MAX_SAMPLE_ITERS : n;
        }
    } else if (b->phase == PH_WARMUP) {
        b->phase = PH_MEASURE;
        b->meas_start_ns = now;
    }
    size_t k = r->nsamples + first;
    if (b->phase != PH_MEASURE || k >= b->opt->nfixed || r->nsamples >= b->capacity) {
        r->stop_reason = "fixed plan";
        r->measure_wall_s = (double)(now - b->meas_start_ns) / 1e9;
        b->phase = PH_DONE;
        return 0;
    }
    n = b->opt->fixed_iters[k];
    return n < 1 ? 1 : n > MAX_SAMPLE_ITERS ? MAX_SAMPLE_ITERS : n;
}

/*
 * Ends the running round; `why` is what ended it. The benchmark is finished after its last
 * round, once it has every sample, or (several rounds) once a third of the rounds are done and
 * the median is as precise as asked.
 */
static void end_round(bench_t *b, int64_t now, const char *why)
{
    bench__result *r = b->r;
    b->meas_ns += (double)(now - b->round_start_ns);
    r->measure_wall_s = b->meas_ns / 1e9;
    if (b->round_end)
        b->round_end[b->rounds_done] = r->nsamples;
    b->rounds_done++;
    b->phase = PH_DONE;
    bool all = r->nsamples >= (size_t)r->settings.sample_size;
    if (b->rounds == 1 || b->plan.worker_process) {
        r->stop_reason = why;
        b->finished = true;
    } else if (all || b->rounds_done >= b->rounds) {
        r->stop_reason = all ? "sample size" : "time budget";
        b->finished = true;
    } else if (r->settings.target_precision > 0 && r->nsamples >= MIN_SAMPLES_PRECISION &&
               b->rounds_done >= (unsigned)ceil(PRECISION_MIN_SPAN * b->rounds) &&
               precise_enough(b)) {
        r->stop_reason = "precision";
        b->finished = true;
    }
}

/* Iterations of the next sample, or 0 when sampling is over. */
static uint64_t next_sample(bench_t *b)
{
    bench__result *r = b->r;
    int64_t now = bench__now_ns();
    if (r->status != BENCH__OK) {
        b->phase = PH_DONE;
        return 0;
    }
    switch (b->plan.kind) {
    case BENCH__PLAN_DRIVEN:
        return worker_next(b);
    case BENCH__PLAN_PROFILE:
        return profile_next(b, now);
    case BENCH__PLAN_FIXED:
        return fixed_next(b, now);
    case BENCH__PLAN_TIMED:
        break;
    }
    if (b->phase == PH_INIT) {
        b->phase = PH_WARMUP;
        b->bench_start_ns = b->warm_start_ns = now;
        b->warm_next = 1;
    }
    /* The warm-up time is spread over the rounds like the budget. */
    double warm = r->settings.warm_up_time * 1e9 / (double)b->rounds;
    if (b->phase == PH_WARMUP) {
        double elapsed = (double)(now - b->warm_start_ns);
        /* Only the cold first sample so far: one more gives the warm time (see the top). */
        bool cold_only = r->warm_up_iters > 0 && r->warm_up_iters == b->cold_iters &&
                         b->cold_ns < 0.5 * r->settings.measurement_time * 1e9;
        if (r->warm_up_iters == 0 || cold_only || elapsed < warm) {
            uint64_t n = b->warm_next;
            double per = warm_per_iter(b);
            if (per > 0) {
                /* Do not let one doubling overshoot the warm-up by more than its remainder. */
                double fit = (warm - elapsed) / per;
                if ((double)n > fit)
                    n = fit < 1 ? 1 : (uint64_t)fit;
            }
            if (b->warm_next < MAX_SAMPLE_ITERS)
                b->warm_next *= 2;
            progress(b, now);
            return n;
        }
        if (bench__spans_on)
            trace_slice(b, "warm-up", b->warm_start_ns);
        int64_t planning = bench__now_ns();
        plan(b);
        if (bench__spans_on)
            trace_slice(b, "planning", planning);
        b->phase = PH_MEASURE;
        b->round_start_ns = now;
    }
    if (b->phase == PH_REWARM) {
        /* A later round in this process (--in-process): caches and predictors served other
         * benchmarks since the last one. Samples of the plan's shortest size, as many as fit in
         * the round's warm-up time (none when one does not: a sample that long warms itself
         * up). */
        if (b->warm_start_ns == 0)
            b->warm_start_ns = now;
        double elapsed = (double)(now - b->warm_start_ns);
        double shortest = (double)b->step * b->est_ns;
        /* A fresh worker process has cold caches, unfaulted pages and unresolved symbols: it
         * discards one sample first, unless that would take half its budget, and no more: more
         * warm-up bought no precision (docs/measurement.md, "Worker processes"). */
        bool fresh = b->plan.worker_process && b->rewarm_samples == 0 &&
                     shortest <= 0.5 * r->settings.measurement_time * 1e9 / (double)b->rounds;
        bool between_rounds = !b->plan.worker_process && elapsed + shortest <= warm;
        if (fresh || between_rounds) {
            b->rewarm_samples++;
            progress(b, now);
            return b->step;
        }
        if (bench__spans_on)
            trace_slice(b, "re-warm-up", b->warm_start_ns);
        b->phase = PH_MEASURE;
        b->round_start_ns = now;
    }
    if (b->phase != PH_MEASURE)
        return 0;

    /* This round takes the plan's samples j, j + R, j + 2R, ... (R rounds, j of them done). */
    size_t k = r->nsamples;
    size_t g = b->rounds_done + b->round_samples * b->rounds;
    const char *stop = NULL;
    double elapsed = (double)(now - b->round_start_ns);
    double budget = r->settings.measurement_time * 1e9 / (double)b->rounds;
    uint64_t next = sample_iters(b, g);
    if (k >= (size_t)r->settings.sample_size || g >= (size_t)r->settings.sample_size) {
        stop = "sample size";
    } else if (b->round_samples >= min_round_samples(b)) {
        double per_iter_wall = (b->meas_ns + elapsed) / (double)r->total_iters;
        if (elapsed + (double)next * per_iter_wall > budget * (1.0 + BUDGET_SLACK))
            stop = "time budget";
    }
    if (!stop && b->rounds == 1 && !b->plan.worker_process && r->settings.target_precision > 0 &&
        k >= b->next_check &&
        elapsed >= PRECISION_MIN_SPAN * budget) {
        b->next_check = k + (k / 10 > 1 ? k / 10 : 1);
        if (precise_enough(b))
            stop = "precision";
    }
    if (stop) {
        end_round(b, now, stop);
        return 0;
    }
    b->round_samples++;
    progress(b, now);
    return next;
}

/* ---- probes around samples ---- */

/* Starts the probes attached before the wall clock, in order. */
static void probes_start(bench_t *b)
{
    for (size_t i = 0; i < b->nouter; i++)
        b->probes[i]->start(b->probes[i]);
}

/* After the wall clock stopped: stops the other probes (reverse order), adds every value but
 * the time to the running sample's; returns the sample part's time (the primary probe's). */
static double probes_stop(bench_t *b)
{
    for (size_t i = b->nouter; i-- > 0;) {
        double f = 1.0;
        b->probes[i]->stop(b->probes[i], b->vals + b->probe_first[i], &f);
        if (f < b->frac[i] && b->phase == PH_MEASURE)
            b->frac[i] = f;
    }
    for (size_t j = 0; j < b->nvals; j++)
        if (j != b->time_slot)
            b->acc[j] += b->vals[j];
    return b->vals[b->time_slot];
}

/* Records the running sample's probe values into their metrics (kept samples only) and clears
 * the accumulators. */
static void probes_record(bench_t *b)
{
    bench__result *r = b->r;
    if (b->nouter && b->phase == PH_MEASURE && b->plan.keeps_samples && r->nsamples > 0) {
        size_t k = r->nsamples - 1;
        for (size_t j = 0; j < b->nvals; j++)
            if (b->metric_of[j] >= 0)
                r->metrics[b->metric_of[j]].totals[k] = b->acc[j];
    }
    memset(b->acc, 0, sizeof b->acc);
}

/* ---- threaded bodies (team.c has the threads and the gate) ---- */

/* The per-thread metrics of a kept sample: each thread's elapsed ns (the first
 * BENCH__THREAD_METRICS threads), then, with more threads than that, the fastest thread's. */
static void threads_record(bench_t *b, const double *elapsed, unsigned n, double fastest)
{
    bench__result *r = b->r;
    if (b->thread_metric < 0 || b->phase != PH_MEASURE || !b->plan.keeps_samples ||
        r->nsamples == 0)
        return;
    size_t k = r->nsamples - 1, first = (size_t)b->thread_metric;
    unsigned kept = n < BENCH__THREAD_METRICS ? n : BENCH__THREAD_METRICS;
    for (unsigned i = 0; i < kept; i++)
        r->metrics[first + i].totals[k] = elapsed[i];
    if (n > kept)
        r->metrics[first + kept].totals[k] = fastest;
}

/*
 * bench__loop_next of a threaded body, entered after the calling thread's clock stopped
 * and, on the leader, its other probes stopped (stopped: a sample was running). Every thread
 * passes the boundary together (team.c); the leader records the sample with the team's span
 * (the first thread's start to the last one's stop), plans the next and starts its probes after
 * the wait. Each thread starts its clock as its last action. Not inlined: the single-thread path
 * keeps its code.
 */
__attribute__((noinline)) static uint64_t team_next(bench_t *b, bool stopped)
{
    uint64_t n;
    if (b->follower) {
        n = bench__team_follow(b, stopped);
    } else if (!stopped && b->phase == PH_DONE) {
        /* The followers have left the boundaries: none is waited for. */
        bench_fail(b, "the timed loop ran more than once in one body");
        return 0;
    } else {
        double own = 0;
        if (stopped) {
            own = *b->clock_out; /* its other probes stopped in bench__loop_next */
            b->in_sample = false;
        }
        unsigned nt = (unsigned)b->inst->threads;
        double span = 0;
        const double *el = bench__team_gather(b, stopped, own, &span);
        if (stopped) {
            double fast = el[0];
            for (unsigned i = 1; i < nt; i++)
                fast = el[i] < fast ? el[i] : fast;
            sample_done(b, b->cur_iters, span);
            threads_record(b, el, nt, fast);
            probes_record(b);
        }
        n = next_sample(b);
        bench__team_publish(b, n);
        if (n == 0)
            return 0;
        b->cur_iters = n;
        b->in_sample = true;
        if (b->nouter)
            probes_start(b);
    }
    if (n != 0)
        b->clock_start(b->clock); /* last action: the loop body follows */
    return n;
}

/* BENCH_ITER_BATCHED on a thread of a team: not supported, the benchmark fails. */
__attribute__((noinline)) static uint64_t team_batched(bench_t *b)
{
    bench_fail(b, "%s: BENCH_ITER_BATCHED cannot run on several threads (.threads = %d): use "
                  "BENCH_ITER", b->inst->id, b->inst->threads);
    return 0;
}

uint64_t bench__loop_next(bench_t *b)
{
    if (b->in_sample) {
        if (b->completer)
            b->completer->complete(b->completer);
        /* First action: stop the clock, so the bookkeeping below is not timed. */
        b->clock_stop(b->clock, b->clock_out, &b->clock_frac);
        double t = b->nouter ? probes_stop(b) : *b->clock_out;
        /* After every probe stopped: an instruction count does not see this test either. */
        if (b->team)
            return team_next(b, true);
        b->in_sample = false;
        sample_done(b, b->cur_iters, t);
        probes_record(b);
    } else if (b->team) {
        return team_next(b, false);
    } else if (b->phase == PH_DONE) {
        bench_fail(b, "the timed loop ran more than once in one body");
        return 0;
    }
    uint64_t n = next_sample(b);
    if (n == 0)
        return 0;
    b->cur_iters = n;
    b->in_sample = true;
    if (b->nouter)
        probes_start(b);
    /* Last action: start the clock; the caller's next instruction is the loop body. */
    b->clock_start(b->clock);
    return n;
}

uint64_t bench__batch_next(bench_t *b, uint64_t max_batch)
{
    if (b->team)
        return team_batched(b);
    if (max_batch == 0)
        max_batch = 1;
    if (b->in_sample && b->batch_left == 0) {
        b->in_sample = false;
        sample_done(b, b->cur_iters, b->accum_ns);
        probes_record(b);
    } else if (!b->in_sample && b->phase == PH_DONE) {
        bench_fail(b, "the timed loop ran more than once in one body");
        return 0;
    }
    if (!b->in_sample) {
        uint64_t n = next_sample(b);
        if (n == 0)
            return 0;
        b->cur_iters = b->batch_left = n;
        b->accum_ns = 0;
        b->in_sample = true;
    }
    if (b->r->status != BENCH__OK) {
        b->in_sample = false;
        b->phase = PH_DONE;
        return 0;
    }
    uint64_t k = b->batch_left < max_batch ? b->batch_left : max_batch;
    b->batch_left -= k;
    return k;
}

int bench__timed_begin(bench_t *b)
{
    if (b->nouter)
        probes_start(b);
    b->clock_start(b->clock); /* last action: the timed block follows */
    return 1;
}

int bench__timed_end(bench_t *b)
{
    if (b->completer)
        b->completer->complete(b->completer);
    b->clock_stop(b->clock, b->clock_out, &b->clock_frac); /* first action */
    /* Each timed block pays for about one clock read; remove it so per-batch timing is unbiased. */
    double *wall = b->clock_out;
    *wall -= b->clk->cost_ns;
    if (*wall < 0)
        *wall = 0;
    b->accum_ns += b->nouter ? probes_stop(b) : *wall;
    return 0;
}

/* ---- one round of an instance (instance.c sets it up and finishes it) ---- */

void bench__instance_round(bench_t *b)
{
    bench__result *r = b->r;
    if (b->rounds_done > 0) {
        b->phase = PH_REWARM;
        b->warm_start_ns = 0;
        b->round_samples = 0;
        b->rewarm_samples = 0;
        b->bench_start_ns = bench__now_ns();
    }
    bench__crash_set_current(b->inst->id);
    if (b->inst->threads > 1)
        bench__team_run(b);
    else
        b->inst->desc->fn(b);
    bench__crash_set_current(NULL);
    if (bench__spans_on) {
        char why[256];
        trace_warm_flush(b);
        if (bench__spans_finish(b, why, sizeof why) && r->status == BENCH__OK)
            bench_fail(b, "%s", why);
    }
    progress_clear(b);
    if (r->status == BENCH__OK && b->in_sample)
        bench_fail(b, "the body left its timed loop early (return or goto inside BENCH_ITER)");
    if (r->status == BENCH__OK && (b->phase == PH_INIT || b->phase == PH_REWARM))
        bench_fail(b, "the body ran no timed loop (BENCH_ITER or BENCH_ITER_BATCHED)");
    /* Worker, profile and fixed plans end with their one call; the timed plan in end_round. */
    if (r->status != BENCH__OK || b->plan.one_stretch)
        b->finished = true;
}
