/*
 * runner.c: drives one benchmark from warm-up to its last sample.
 *
 * The body of a BENCH_FN runs once; its timed loop calls bench__loop_next (or bench__batch_next)
 * between samples. Each call stops the clock as its first action, does the bookkeeping (record
 * the sample, plan the next, decide whether to stop, draw progress) and starts the clock as its
 * last action, so only the loop body is inside a sample.
 *
 * Plan: warm-up doubles the iteration count until the warm-up time has passed and yields an
 * estimate t of one iteration. Sampling is then linear (sample k runs k*d iterations, d chosen so
 * that sample_size samples fill the measurement time) or, when even d = 1 would overrun the
 * budget, flat (every sample the same count). No sample is shorter than the clock's minimum
 * sample time. Sampling stops at whichever comes first: sample_size samples; the time budget
 * (after at least 3 samples, 2 with --quick); or, after at least 10 samples, a distribution-free
 * confidence interval of the median narrower than the target precision.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* No sample runs more iterations than this: keeps k*d far from overflow and an empty body's
 * warm-up finite. */
#define MAX_SAMPLE_ITERS (UINT64_C(1) << 40)
/* Samples needed before the time budget may stop sampling (2 with --quick), and before the
 * precision may. */
#define MIN_SAMPLES_BUDGET 3
#define MIN_SAMPLES_BUDGET_QUICK 2
#define MIN_SAMPLES_PRECISION 10
/* The budget may be overrun by this fraction rather than drop a planned sample. */
#define BUDGET_SLACK 0.10

const bench__settings bench__default_settings = {
    .warm_up_time = 0.3,
    .measurement_time = 3.0,
    .sample_size = 100,
    .target_precision = 0.01,
    .sampling = BENCH_SAMPLING_AUTO,
};

const bench__settings bench__quick_settings = {
    .warm_up_time = 0.1,
    .measurement_time = 0.5,
    .sample_size = 50,
    .target_precision = 0.02,
    .sampling = BENCH_SAMPLING_AUTO,
};

enum phase { PH_INIT, PH_WARMUP, PH_MEASURE, PH_DONE };

struct bench {
    const bench__instance *inst;
    const bench__run_options *opt;
    bench__result *r;
    const bench__clock_info *clk;
    bench__meas wall;

    enum phase phase;
    bool in_sample;      /* a sample is running (its clock started) */
    uint64_t cur_iters;  /* iterations of the running sample */
    uint64_t batch_left; /* batched mode: iterations of the sample not yet handed out */
    double accum_ns;     /* batched mode: timed ns accumulated in the running sample */
    size_t capacity;     /* room in r->iters / r->totals_ns */

    int64_t bench_start_ns;
    int64_t warm_start_ns;
    uint64_t warm_next;   /* iterations of the next warm-up sample */
    int64_t meas_start_ns;
    double est_ns;        /* per-iteration estimate from the warm-up */
    uint64_t step;        /* linear: d; flat: iterations per sample */
    size_t next_check;    /* sample count at which precision is checked next */

    int64_t last_progress_ns;
    bool progress_shown;
};

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
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
    }
    if (out->sample_size < 2)
        out->sample_size = 2;
    if (out->warm_up_time < 0)
        out->warm_up_time = 0;
    if (!(out->measurement_time > 0))
        out->measurement_time = base->measurement_time;
}

/* ---- progress ---- */

static void progress(bench_t *b, int64_t now)
{
    if (!b->opt->progress || now - b->bench_start_ns < 1000000000 ||
        now - b->last_progress_ns < 100000000)
        return;
    b->last_progress_ns = now;
    b->progress_shown = true;
    if (b->phase == PH_WARMUP)
        fprintf(stderr, "\r%s: warming up (%.1f s)\033[K", b->inst->id,
                (double)(now - b->bench_start_ns) / 1e9);
    else
        fprintf(stderr, "\r%s: collecting samples (%zu of at most %d, %.1f s)\033[K", b->inst->id,
                b->r->nsamples, b->r->settings.sample_size,
                (double)(now - b->meas_start_ns) / 1e9);
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

static void plan(bench_t *b)
{
    bench__result *r = b->r;
    const bench__settings *s = &r->settings;
    double n = (double)s->sample_size;
    double budget = s->measurement_time * 1e9;
    double t = r->warm_up_iters ? r->warm_up_ns / (double)r->warm_up_iters : 1.0;
    if (!(t > 1e-6))
        t = 1e-6; /* an empty body: the plan is then bounded by MAX_SAMPLE_ITERS */
    b->est_ns = t;
    double min_iters = ceil(b->clk->min_sample_ns / t);
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
}

/* Whether the median's interval is already as narrow as the target precision asks. */
static bool precise_enough(bench_t *b)
{
    bench__result *r = b->r;
    size_t n = r->nsamples;
    double *y = malloc(n * sizeof *y);
    if (!y)
        return false;
    for (size_t i = 0; i < n; i++)
        y[i] = r->totals_ns[i] / r->iters[i];
    bench__sort(y, n);
    double lo, hi;
    bool ok = false;
    if (bench__median_ci_sorted(y, n, b->opt->confidence_level, &lo, &hi) == 0) {
        double med = bench__quantile_sorted(y, n, 0.5);
        ok = med > 0 && (hi - lo) / 2.0 <= r->settings.target_precision * med;
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

/* Records a finished sample. */
static void sample_done(bench_t *b, uint64_t iters, double total_ns)
{
    bench__result *r = b->r;
    if (b->opt->worker_out) {
        /* A/B worker: the coordinator keeps the samples. */
        fprintf(b->opt->worker_out, "T %.17g\n", total_ns);
        fflush(b->opt->worker_out);
        return;
    }
    if (b->phase == PH_WARMUP) {
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
    if (b->phase == PH_INIT) {
        fputs("READY\n", b->opt->worker_out);
        fflush(b->opt->worker_out);
        b->phase = PH_MEASURE;
    }
    char line[64];
    unsigned long long n;
    if (fgets(line, sizeof line, b->opt->worker_in) && sscanf(line, "R %llu", &n) == 1 && n > 0 &&
        n <= MAX_SAMPLE_ITERS)
        return (uint64_t)n;
    b->phase = PH_DONE;
    return 0;
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
    if (b->opt->worker_in)
        return worker_next(b);
    if (b->phase == PH_INIT) {
        b->phase = PH_WARMUP;
        b->bench_start_ns = b->warm_start_ns = now;
        b->warm_next = 1;
    }
    if (b->phase == PH_WARMUP) {
        double elapsed = (double)(now - b->warm_start_ns);
        double warm = r->settings.warm_up_time * 1e9;
        if (r->warm_up_iters == 0 || elapsed < warm) {
            uint64_t n = b->warm_next;
            if (r->warm_up_iters > 0 && r->warm_up_ns > 0) {
                /* Do not let one doubling overshoot the warm-up by more than its remainder. */
                double per = r->warm_up_ns / (double)r->warm_up_iters;
                double fit = (warm - elapsed) / per;
                if ((double)n > fit)
                    n = fit < 1 ? 1 : (uint64_t)fit;
            }
            if (b->warm_next < MAX_SAMPLE_ITERS)
                b->warm_next *= 2;
            progress(b, now);
            return n;
        }
        plan(b);
        b->phase = PH_MEASURE;
        b->meas_start_ns = now;
    }
    if (b->phase != PH_MEASURE)
        return 0;

    size_t k = r->nsamples;
    const char *stop = NULL;
    double elapsed = (double)(now - b->meas_start_ns);
    uint64_t next = sample_iters(b, k);
    if (k >= (size_t)r->settings.sample_size) {
        stop = "sample size";
    } else if (k >= (b->opt->is_quick ? MIN_SAMPLES_BUDGET_QUICK : MIN_SAMPLES_BUDGET)) {
        double per_iter_wall = elapsed / (double)r->total_iters;
        double budget = r->settings.measurement_time * 1e9;
        if (elapsed + (double)next * per_iter_wall > budget * (1.0 + BUDGET_SLACK))
            stop = "time budget";
    }
    if (!stop && r->settings.target_precision > 0 && k >= b->next_check) {
        b->next_check = k + (k / 10 > 1 ? k / 10 : 1);
        if (precise_enough(b))
            stop = "precision";
    }
    if (stop) {
        r->stop_reason = stop;
        r->measure_wall_s = elapsed / 1e9;
        b->phase = PH_DONE;
        return 0;
    }
    progress(b, now);
    return next;
}

uint64_t bench__loop_next(bench_t *b)
{
    if (b->in_sample) {
        /* First action: stop the clock, so the bookkeeping below is not timed. */
        double t = b->wall.stop(&b->wall);
        b->in_sample = false;
        sample_done(b, b->cur_iters, t);
    } else if (b->phase == PH_DONE) {
        bench_fail(b, "the timed loop ran more than once in one body");
        return 0;
    }
    uint64_t n = next_sample(b);
    if (n == 0)
        return 0;
    b->cur_iters = n;
    b->in_sample = true;
    /* Last action: start the clock; the caller's next instruction is the loop body. */
    b->wall.start(&b->wall);
    return n;
}

uint64_t bench__batch_next(bench_t *b, uint64_t max_batch)
{
    if (max_batch == 0)
        max_batch = 1;
    if (b->in_sample && b->batch_left == 0) {
        b->in_sample = false;
        sample_done(b, b->cur_iters, b->accum_ns);
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
    b->wall.start(&b->wall); /* last action: the timed block follows */
    return 1;
}

int bench__timed_end(bench_t *b)
{
    double t = b->wall.stop(&b->wall); /* first action */
    /* Each timed block pays for about one clock read; remove it so per-batch timing is unbiased. */
    t -= b->clk->cost_ns;
    b->accum_ns += t > 0 ? t : 0;
    return 0;
}

/* ---- accessors used by bodies ---- */

int64_t bench_param(const bench_t *b)
{
    return b->inst->param;
}

const char *bench_id(const bench_t *b)
{
    return b->inst->id;
}

void bench_set_bytes(bench_t *b, uint64_t bytes_per_iter)
{
    b->r->settings.bytes_per_iter = bytes_per_iter;
}

void bench_set_elements(bench_t *b, uint64_t elements_per_iter)
{
    b->r->settings.elements_per_iter = elements_per_iter;
}

static void set_status(bench_t *b, bench__status st, const char *fmt, va_list ap)
{
    if (b->r->status != BENCH__OK)
        return; /* the first reason wins */
    b->r->status = st;
    vsnprintf(b->r->message, sizeof b->r->message, fmt, ap);
}

void bench_skip(bench_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_status(b, BENCH__SKIPPED, fmt, ap);
    va_end(ap);
}

void bench_fail(bench_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_status(b, BENCH__FAILED, fmt, ap);
    va_end(ap);
}

/* ---- one instance ---- */

void bench__result_destroy(bench__result *r)
{
    free(r->iters);
    free(r->totals_ns);
    r->iters = r->totals_ns = NULL;
    r->nsamples = 0;
}

void bench__run_instance(const bench__instance *inst, const bench__run_options *opt,
                         bench__result *r)
{
    bench_t b;
    memset(&b, 0, sizeof b);
    b.inst = inst;
    b.opt = opt;
    b.r = r;
    b.clk = bench__clock_calibrate();
    bench__meas_wall_init(&b.wall);

    r->inst = inst;
    r->status = BENCH__OK;
    r->nresamples = opt->nresamples;
    r->confidence_level = opt->confidence_level;
    bench__resolve_settings(&r->settings, opt, inst->desc, inst->group);
    b.capacity = (size_t)r->settings.sample_size;
    r->iters = calloc(b.capacity, sizeof *r->iters);
    r->totals_ns = calloc(b.capacity, sizeof *r->totals_ns);
    if (!r->iters || !r->totals_ns) {
        r->status = BENCH__FAILED;
        bench__msg(r->message, sizeof r->message, "out of memory for %zu samples", b.capacity);
        return;
    }

    bench__crash_set_current(inst->id);
    inst->desc->fn(&b);
    bench__crash_set_current(NULL);
    progress_clear(&b);

    if (r->status == BENCH__OK && b.in_sample)
        bench_fail(&b, "the body left its timed loop early (return or goto inside BENCH_ITER)");
    if (r->status == BENCH__OK && b.phase == PH_INIT)
        bench_fail(&b, "the body ran no timed loop (BENCH_ITER or BENCH_ITER_BATCHED)");
    if (opt->worker_in)
        return; /* an A/B worker keeps no samples: the coordinator analyses them */
    if (r->status == BENCH__OK && r->nsamples == 0)
        bench_fail(&b, "no sample was taken");
    if (r->status != BENCH__OK)
        return;
    if (bench__analyze(r, opt) != 0) {
        r->status = BENCH__FAILED;
        bench__msg(r->message, sizeof r->message, "%s", "statistics failed (out of memory?)");
    }
}

int bench__analyze(bench__result *r, const bench__run_options *opt)
{
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
    return 0;
}
