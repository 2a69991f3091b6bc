/*
 * test_runner.c: the runner's behaviour, driven with real benchmark bodies on the real clock:
 * iteration accounting, the shape of the sampling plans, the stop rules, batching, settings
 * precedence, every way a body can skip or fail, and rounds (interleaved runs of the bodies).
 * No assertion depends on how fast the machine is; only on counts and on which rule stopped
 * sampling.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>
#include <time.h>

#include "cli/internal.h"
#include "probes/measure.h"
#include "measure/plan.h"

static uint64_t calls, setups, max_batch_seen;

BENCH_GROUP(rt, .warm_up_time = 0.01, .measurement_time = 0.05);

BENCH_FN(rt, counter)
{
    BENCH_ITER(b) {
        calls++;
        bench_clobber();
    }
}

BENCH_FN(rt, flat, .sampling = BENCH_SAMPLING_FLAT)
{
    BENCH_ITER(b) {
        bench_black_box(calls);
    }
}

BENCH_FN(rt, sleepy, .measurement_time = 0.1, .warm_up_time = 0.001)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    BENCH_ITER(b) {
        nanosleep(&ts, NULL);
    }
}

BENCH_FN(rt, batched)
{
    BENCH_ITER_BATCHED(b, n, 7) {
        setups++;
        if (n > max_batch_seen)
            max_batch_seen = n;
        BENCH_TIMED(b) {
            for (uint64_t i = 0; i < n; i++) {
                calls++;
                bench_clobber();
            }
        }
    }
}

BENCH_FN(rt, skipper)
{
    bench_skip(b, "no %s here", "widget");
    BENCH_ITER(b) {
        calls++;
    }
}

BENCH_FN(rt, failer)
{
    BENCH_ITER(b) {
        if (++calls > 1000)
            bench_fail(b, "gave up after %d", 1000);
    }
}

BENCH_FN(rt, no_loop)
{
    calls++;
}

BENCH_FN(rt, early_return)
{
    BENCH_ITER(b) {
        return;
    }
}

BENCH_FN(rt, twice)
{
    BENCH_ITER(b) {
        calls++;
    }
    BENCH_ITER(b) {
        calls++;
    }
}

BENCH_FN(rt, precise, .target_precision = 0.5, .measurement_time = 5.0, .sample_size = 1000)
{
    BENCH_ITER(b) {
        bench_black_box(calls);
    }
}

BENCH_FN(rt, precise_loose, .target_precision = 0.9, .measurement_time = 5.0, .sample_size = 1000)
{
    BENCH_ITER(b) {
        bench_black_box(calls);
    }
}

BENCH_FN(rt, capped, .sample_size = 5, .target_precision = -1)
{
    BENCH_ITER(b) {
        bench_black_box(calls);
    }
}

BENCH_FN(rt, param, BENCH_PARAMS(3, 5), .bytes_per_iter = 1)
{
    bench_set_bytes(b, (uint64_t)bench_param(b) * 10);
    BENCH_ITER(b) {
        calls++;
    }
}

/* Rounds: each call of these bodies appends its letter to `trace`, so the order of the rounds
 * is visible. */
static char trace[64];
static size_t ntrace;

static void mark(char c)
{
    if (ntrace + 1 < sizeof trace) {
        trace[ntrace++] = c;
        trace[ntrace] = '\0';
    }
}

/* One round of a counting body that marks its letter. */
static void marked_round(bench_t *b, char letter)
{
    mark(letter);
    BENCH_ITER(b) {
        calls++;
        bench_clobber();
    }
}

BENCH_FN(rt, round_a, .rounds = 2, .target_precision = -1)
{
    marked_round(b, 'A');
}

BENCH_FN(rt, round_b, .rounds = 4, .target_precision = -1)
{
    marked_round(b, 'B');
}

BENCH_FN(rt, round_c, .rounds = 1, .target_precision = -1)
{
    marked_round(b, 'C');
}

/* 20 ms an iteration, 0.1 s of budget: at most 5 samples fit, so at most 5 rounds. */
BENCH_FN(rt, sleepy_rounds, .measurement_time = 0.1, .warm_up_time = 0.001, .rounds = 10)
{
    mark('S');
    struct timespec ts = {0, 20 * 1000 * 1000};
    BENCH_ITER(b) {
        nanosleep(&ts, NULL);
    }
}

/* Runs its timed loop in the first round only. */
BENCH_FN(rt, loop_once, .rounds = 3)
{
    mark('L');
    if (ntrace > 1)
        return;
    BENCH_ITER(b) {
        calls++;
    }
}

/* Its second round does 16 times the work per iteration: a machine that slowed down far more
 * than this VM's own 2x swings. */
static int shift_calls;

BENCH_FN(rt, shifting, .target_precision = 0.5, .measurement_time = 1.0, .sample_size = 1000)
{
    unsigned work = ++shift_calls == 2 ? 1600 : 100;
    BENCH_ITER(b) {
        for (unsigned i = 0; i < work; i++)
            bench_black_box(i);
    }
}

/* The tests before the rounds tests pin one stretch (--rounds 1): their assertions are about
 * one plan's shape in sample order. */
static bench__run_options options(void)
{
    bench__run_options o;
    memset(&o, 0, sizeof o);
    o.nresamples = 200;
    o.confidence_level = 0.95;
    o.seed = 1;
    o.cli.rounds = 1;
    return o;
}

static bench__instance instance(const bench_desc *d, bool has_param, int64_t param)
{
    bench__instance in;
    memset(&in, 0, sizeof in);
    in.desc = d;
    in.group = &bench__group_rt;
    in.has_param = has_param;
    in.param = param;
    snprintf(in.id, sizeof in.id, "rt/%s", d->name);
    return in;
}

static void run(const bench_desc *d, bench__result *r)
{
    bench__run_options o = options();
    bench__instance in = instance(d, false, 0);
    memset(r, 0, sizeof *r);
    bench__run_instance(&in, &o, r);
    r->inst = NULL; /* `in` dies here */
}

static void test_every_iteration_accounted(void **state)
{
    (void)state;
    bench__result r;
    calls = 0;
    run(&bench__desc_rt__counter, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_true(r.nsamples >= 3);
    assert_true(r.warm_up_iters >= 1);
    assert_true(calls == r.warm_up_iters + r.total_iters);
    uint64_t sum = 0;
    for (size_t i = 0; i < r.nsamples; i++)
        sum += (uint64_t)r.iters[i];
    assert_true(sum == r.total_iters);
    bench__result_destroy(&r);
}

static void test_linear_plan_shape(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_rt__counter, &r);
    assert_int_equal(r.sampling_used, BENCH_SAMPLING_LINEAR);
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(r.iters[i] == (double)(i + 1) * r.iters[0]);
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(r.totals_ns[i] > 0);
    bench__result_destroy(&r);
}

static void test_flat_plan_shape(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_rt__flat, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_int_equal(r.sampling_used, BENCH_SAMPLING_FLAT);
    for (size_t i = 1; i < r.nsamples; i++)
        assert_true(r.iters[i] == r.iters[0]);
    bench__result_destroy(&r);
}

/* A 20 ms iteration with a 0.1 s budget cannot use the linear plan (100 samples would need
 * 5050 iterations): flat sampling, one iteration per sample, stopped by the budget after the
 * minimum of 3 samples and before the budget is overrun by more than one sample. */
static void test_long_iteration_goes_flat_and_stops_at_budget(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_rt__sleepy, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_int_equal(r.sampling_used, BENCH_SAMPLING_FLAT);
    assert_string_equal(r.stop_reason, "time budget");
    assert_true(r.nsamples >= 3 && r.nsamples <= 6);
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(r.iters[i] == 1);
    bench__result_destroy(&r);
}

static void test_batched_accounting(void **state)
{
    (void)state;
    bench__result r;
    calls = setups = max_batch_seen = 0;
    run(&bench__desc_rt__batched, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_true(calls == r.warm_up_iters + r.total_iters);
    assert_true(max_batch_seen == 7);
    assert_true(setups >= (calls + 6) / 7);
    bench__result_destroy(&r);
}

static void test_skip(void **state)
{
    (void)state;
    bench__result r;
    calls = 0;
    run(&bench__desc_rt__skipper, &r);
    assert_int_equal(r.status, BENCH__SKIPPED);
    assert_string_equal(r.message, "no widget here");
    assert_true(calls == 0);
    bench__result_destroy(&r);
}

static void test_fail_stops_the_loop(void **state)
{
    (void)state;
    bench__result r;
    calls = 0;
    run(&bench__desc_rt__failer, &r);
    assert_int_equal(r.status, BENCH__FAILED);
    assert_string_equal(r.message, "gave up after 1000");
    /* the loop stops at the end of the sample in progress, not at the end of the budget */
    assert_true(calls < 1000000);
    bench__result_destroy(&r);
}

static void test_misused_bodies_fail(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_rt__no_loop, &r);
    assert_int_equal(r.status, BENCH__FAILED);
    assert_non_null(strstr(r.message, "no timed loop"));
    bench__result_destroy(&r);

    run(&bench__desc_rt__early_return, &r);
    assert_int_equal(r.status, BENCH__FAILED);
    assert_non_null(strstr(r.message, "early"));
    bench__result_destroy(&r);

    run(&bench__desc_rt__twice, &r);
    assert_int_equal(r.status, BENCH__FAILED);
    assert_non_null(strstr(r.message, "more than once"));
    bench__result_destroy(&r);
}

static void test_precision_stop(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_rt__precise, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_string_equal(r.stop_reason, "precision");
    assert_true(r.nsamples >= 10 && r.nsamples < 1000);
    bench__result_destroy(&r);
}

static void test_sample_size_cap(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_rt__capped, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_true(r.nsamples >= 3 && r.nsamples <= 5);
    assert_true(strcmp(r.stop_reason, "sample size") == 0 ||
                strcmp(r.stop_reason, "time budget") == 0);
    bench__result_destroy(&r);
}

static void test_param_and_throughput(void **state)
{
    (void)state;
    bench__run_options o = options();
    bench__instance in = instance(&bench__desc_rt__param, true, 5);
    bench__result r;
    memset(&r, 0, sizeof r);
    bench__run_instance(&in, &o, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_true(r.settings.bytes_per_iter == 50); /* set at run time, over the static 1 */
    bench__result_destroy(&r);
}

static void test_settings_precedence(void **state)
{
    (void)state;
    bench_group_desc g;
    memset(&g, 0, sizeof g);
    g.measurement_time = 2.0;
    g.sample_size = 40;
    g.warm_up_time = 0.2;
    bench_desc d;
    memset(&d, 0, sizeof d);
    d.sample_size = 60;
    bench__run_options o = options();
    o.cli.warm_up_time = 0.3;
    bench__settings s;

    bench__resolve_settings(&s, &o, &d, &g);
    assert_true(s.warm_up_time == 0.3);     /* command line */
    assert_true(s.sample_size == 60);       /* BENCH_FN over BENCH_GROUP */
    assert_true(s.measurement_time == 2.0); /* BENCH_GROUP over default */
    assert_true(s.target_precision == bench__default_settings.target_precision);

    o.is_quick = true;
    bench__resolve_settings(&s, &o, &d, &g);
    assert_true(s.measurement_time == bench__quick_settings.measurement_time); /* capped */
    assert_true(s.warm_up_time == 0.3);  /* an explicit flag beats --quick */
    assert_true(s.sample_size == bench__quick_settings.sample_size);
    assert_true(s.target_precision == bench__quick_settings.target_precision);

    d.target_precision = -1; /* "never stop early" survives --quick */
    bench__resolve_settings(&s, &o, &d, &g);
    assert_true(s.target_precision < 0);

    /* rounds: default, --quick, group, BENCH_FN, command line, and never above the samples */
    o = options();
    o.cli.rounds = 0;
    memset(&d, 0, sizeof d);
    memset(&g, 0, sizeof g);
    bench__resolve_settings(&s, &o, &d, &g);
    assert_int_equal(s.rounds, bench__default_settings.rounds);
    assert_true(s.rounds > 1);
    o.is_quick = true;
    bench__resolve_settings(&s, &o, &d, &g);
    assert_int_equal(s.rounds, 1);
    o.is_quick = false;
    g.rounds = 3;
    bench__resolve_settings(&s, &o, &d, &g);
    assert_int_equal(s.rounds, 3);
    d.rounds = 7;
    bench__resolve_settings(&s, &o, &d, &g);
    assert_int_equal(s.rounds, 7);
    o.cli.rounds = 2;
    bench__resolve_settings(&s, &o, &d, &g);
    assert_int_equal(s.rounds, 2);
    o.cli.rounds = 50;
    d.sample_size = 10;
    bench__resolve_settings(&s, &o, &d, &g);
    assert_int_equal(s.rounds, 10);
    o.cli.rounds = 4; /* A/B workers, fixed plans and profiling run one stretch */
    o.plan = BENCH__PLAN_FIXED;
    o.nfixed = 1;
    bench__resolve_settings(&s, &o, &d, &g);
    assert_int_equal(s.rounds, 1);
}

/* ---- probes: a probe that reads the `calls` counter, so its per-sample values are known ---- */

typedef struct counting_probe {
    bench__probe p;
    uint64_t at_start;
    int starts, stops, attaches, detaches;
    bool primary_ns;   /* primary: reports 1000 ns per call as the sample's time */
    bool skip_it;      /* attach skips the benchmark */
    const char *names[2]; /* its two metrics' names (a result's metric names are unique) */
} counting_probe;

static int cp_attach(bench__probe *p, bench__result *r)
{
    counting_probe *c = (counting_probe *)p;
    c->attaches++;
    if (c->skip_it) {
        bench__result_skip(r, "no device for %s", "counting");
        return 1;
    }
    if (bench__metric_add(r, c->names[0], "calls", "test") < 0 ||
        bench__metric_add(r, c->names[1], "calls", "test") < 0)
        return 1;
    return 0;
}

static void cp_start(bench__probe *p)
{
    counting_probe *c = (counting_probe *)p;
    c->starts++;
    c->at_start = calls;
}

static void cp_stop(bench__probe *p, double *values, double *fraction)
{
    counting_probe *c = (counting_probe *)p;
    c->stops++;
    double d = (double)(calls - c->at_start);
    size_t k = 0;
    if (c->primary_ns)
        values[k++] = 1000.0 * d;
    values[k++] = d;
    values[k++] = 2 * d;
    *fraction = 0.5;
}

static void cp_detach(bench__probe *p, bench__result *r)
{
    counting_probe *c = (counting_probe *)p;
    c->detaches++;
    bench__fact_add(r, "starts", "count", c->starts);
}

static counting_probe counting(void)
{
    counting_probe c;
    memset(&c, 0, sizeof c);
    c.p.name = "counting";
    c.names[0] = "calls";
    c.names[1] = "twice";
    c.p.attach = cp_attach;
    c.p.start = cp_start;
    c.p.stop = cp_stop;
    c.p.detach = cp_detach;
    return c;
}

static void run_with(const bench_desc *d, bench__run_options *o, bench__result *r)
{
    bench__instance in = instance(d, false, 0);
    memset(r, 0, sizeof *r);
    bench__run_instance(&in, o, r);
    r->inst = NULL;
}

static void check_counted(const bench__result *r, size_t first)
{
    assert_int_equal(r->status, BENCH__OK);
    assert_true(r->nsamples >= 3);
    const bench__metric *m = &r->metrics[first];
    assert_true(strcmp(m->name, "calls") == 0 || strcmp(m->name, "second_calls") == 0);
    for (size_t i = 0; i < r->nsamples; i++) {
        assert_true(m->totals[i] == r->iters[i]);              /* one call per iteration */
        assert_true(r->metrics[first + 1].totals[i] == 2 * r->iters[i]);
    }
    assert_true(m->est.median.point == 1.0);
    assert_true(m->est.median.lower == 1.0 && m->est.median.upper == 1.0);
    assert_true(r->metrics[first + 1].est.median.point == 2.0);
    assert_true(m->scaled && m->min_fraction == 0.5);
}

static void test_probe_values_per_sample(void **state)
{
    (void)state;
    counting_probe c = counting();
    bench__probe *list[] = {&c.p};
    bench__run_options o = options();
    o.probes = list;
    o.nprobes = 1;
    bench__result r;
    run_with(&bench__desc_rt__counter, &o, &r);
    assert_int_equal(r.nmetrics, 2);
    check_counted(&r, 0);
    /* started for warm-up and every sample, stopped as often; attached and detached once */
    assert_int_equal(c.starts, c.stops);
    assert_true((size_t)c.starts > r.nsamples);
    assert_int_equal(c.attaches, 1);
    assert_int_equal(c.detaches, 1);
    assert_int_equal(r.nfacts, 1);
    assert_string_equal(r.facts[0].name, "starts");
    assert_true(r.facts[0].value == c.starts);
    bench__result_destroy(&r);

    /* batched: the probe brackets every timed block; values add up over a sample's batches */
    c = counting();
    run_with(&bench__desc_rt__batched, &o, &r);
    check_counted(&r, 0);
    bench__result_destroy(&r);
}

static void test_primary_probe_gives_the_time(void **state)
{
    (void)state;
    counting_probe c = counting();
    c.p.primary = true;
    c.primary_ns = true;
    bench__probe *list[] = {&c.p};
    bench__run_options o = options();
    o.probes = list;
    o.nprobes = 1;
    bench__result r;
    run_with(&bench__desc_rt__counter, &o, &r);
    check_counted(&r, 0);
    assert_int_equal(r.nmetrics, 3);
    assert_string_equal(r.metrics[2].name, "host_wall");
    for (size_t i = 0; i < r.nsamples; i++) {
        assert_true(r.totals_ns[i] == 1000.0 * r.iters[i]);
        assert_true(r.metrics[2].totals[i] > 0);
    }
    assert_true(r.est.median.point == 1000.0);
    bench__result_destroy(&r);
}

/* The wall clock alone gives the time and records no metric: a time run's results have none. */
static void test_wall_clock_is_the_default_primary_probe(void **state)
{
    (void)state;
    bench__probe *w = bench__wall_probe();
    assert_true(w->primary);
    assert_string_equal(w->time_metric, "host_wall");
    bench__run_options o = options();
    bench__result r;
    run_with(&bench__desc_rt__counter, &o, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_int_equal(r.nmetrics, 0);
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(r.totals_ns[i] > 0);
    bench__result_destroy(&r);
}

/* The first attached probe that can give the time does; a later one records its time as its
 * time_metric, or fails the benchmark when it has none. */
static void test_second_primary_probe(void **state)
{
    (void)state;
    counting_probe a = counting(), c = counting();
    a.p.primary = c.p.primary = true;
    a.primary_ns = c.primary_ns = true;
    c.p.name = "second";
    c.names[0] = "second_calls";
    c.names[1] = "second_twice";
    bench__probe *list[] = {&a.p, &c.p};
    bench__run_options o = options();
    o.probes = list;
    o.nprobes = 2;
    bench__result r;
    run_with(&bench__desc_rt__counter, &o, &r);
    assert_int_equal(r.status, BENCH__FAILED);
    assert_string_equal(r.message, "two primary probes ('counting' and 'second')");
    assert_int_equal(a.detaches, 1);
    assert_int_equal(c.detaches, 1);
    bench__result_destroy(&r);

    a = counting();
    c = counting();
    a.p.primary = c.p.primary = true;
    a.primary_ns = c.primary_ns = true;
    c.p.name = "second";
    c.names[0] = "second_calls";
    c.names[1] = "second_twice";
    c.p.time_metric = "second_time";
    run_with(&bench__desc_rt__counter, &o, &r);
    check_counted(&r, 0);
    check_counted(&r, 2);
    /* a's metrics, c's metrics, then c's time, then the wall clock's */
    assert_int_equal(r.nmetrics, 6);
    assert_string_equal(r.metrics[4].name, "second_time");
    assert_string_equal(r.metrics[4].source, "second");
    assert_string_equal(r.metrics[5].name, "host_wall");
    assert_string_equal(r.metrics[5].source, "wall");
    for (size_t i = 0; i < r.nsamples; i++) {
        assert_true(r.totals_ns[i] == 1000.0 * r.iters[i]);
        assert_true(r.metrics[4].totals[i] == 1000.0 * r.iters[i]);
        assert_true(r.metrics[5].totals[i] > 0);
    }
    /* a probe's time metric shares its fraction (the counting probe says half) */
    assert_true(r.metrics[4].scaled && r.metrics[4].min_fraction == 0.5);
    assert_true(!r.metrics[5].scaled && r.metrics[5].min_fraction == 1.0);
    bench__result_destroy(&r);
}

/* The plan is all the runner asks of the run's mode. */
static void test_plan_for_modes(void **state)
{
    (void)state;
    bench__plan p;
    bench__plan_for(&p, NULL);
    assert_int_equal(p.kind, BENCH__PLAN_TIMED);
    assert_true(!p.one_stretch && p.keeps_samples && p.analyses && !p.time_only);
    bench__run_options o = options();
    o.job.active = true;
    bench__plan_for(&p, &o);
    assert_int_equal(p.kind, BENCH__PLAN_TIMED);
    assert_true(p.worker_process && p.keeps_samples && !p.analyses);
    /* The client sets the kind; the plan follows it, whatever else the options hold. */
    o = options();
    static const uint64_t fixed[] = {1, 2};
    o.fixed_iters = fixed;
    o.nfixed = 2;
    bench__plan_for(&p, &o);
    assert_int_equal(p.kind, BENCH__PLAN_TIMED);
    o.plan = BENCH__PLAN_FIXED;
    bench__plan_for(&p, &o);
    assert_int_equal(p.kind, BENCH__PLAN_FIXED);
    assert_true(p.one_stretch && p.keeps_samples && p.analyses && !p.time_only);
    o.plan = BENCH__PLAN_PROFILE;
    o.profile_time = 1.0;
    bench__plan_for(&p, &o);
    assert_int_equal(p.kind, BENCH__PLAN_PROFILE);
    assert_true(p.one_stretch && !p.keeps_samples && !p.analyses);
    o.plan = BENCH__PLAN_DRIVEN;
    o.worker_in = stdin;
    bench__plan_for(&p, &o);
    assert_int_equal(p.kind, BENCH__PLAN_DRIVEN);
    assert_true(p.one_stretch && !p.keeps_samples && !p.analyses && p.time_only);
}

static void test_probe_skips_benchmark(void **state)
{
    (void)state;
    counting_probe c = counting();
    c.skip_it = true;
    bench__probe *list[] = {&c.p};
    bench__run_options o = options();
    o.probes = list;
    o.nprobes = 1;
    bench__result r;
    calls = 0;
    run_with(&bench__desc_rt__counter, &o, &r);
    assert_int_equal(r.status, BENCH__SKIPPED);
    assert_string_equal(r.message, "no device for counting");
    assert_true(calls == 0); /* the body never ran */
    assert_int_equal(c.detaches, 0);
    bench__result_destroy(&r);
}

static void test_fixed_plan(void **state)
{
    (void)state;
    static const uint64_t plan[] = {5, 10, 20};
    bench__run_options o = options();
    o.plan = BENCH__PLAN_FIXED;
    o.fixed_iters = plan;
    o.nfixed = 3;
    o.cli.sample_size = 2; /* the plan is longer: it gets room all the same */
    bench__result r;
    calls = 0;
    run_with(&bench__desc_rt__counter, &o, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_int_equal(r.nsamples, 3);
    assert_int_equal(r.settings.sample_size, 3);
    assert_true(r.iters[0] == 5 && r.iters[1] == 10 && r.iters[2] == 20);
    assert_true(r.warm_up_iters == 0);
    assert_true(r.total_iters == 35);
    assert_true(calls == 35);
    assert_string_equal(r.stop_reason, "fixed plan");
    bench__result_destroy(&r);

    /* With a warm-up sample: the first count runs through the probes like the others, then
     * becomes the warm-up, and the probes' values move with the samples. */
    counting_probe c = counting();
    bench__probe *list[] = {&c.p};
    o.probes = list;
    o.nprobes = 1;
    o.fixed_warm_up = true;
    calls = 0;
    run_with(&bench__desc_rt__counter, &o, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_int_equal(c.stops, 3);
    assert_int_equal(r.nsamples, 2);
    assert_true(r.iters[0] == 10 && r.iters[1] == 20);
    assert_true(r.warm_up_iters == 5 && r.warm_up_ns > 0);
    assert_true(r.total_iters == 30);
    assert_true(calls == 35);
    assert_int_equal(r.nmetrics, 2);
    assert_true(r.metrics[0].totals[0] == 10 && r.metrics[0].totals[1] == 20);
    assert_true(r.metrics[1].totals[0] == 20 && r.metrics[1].totals[1] == 40);
    /* the samples' elapsed time, the warm-up sample's not included */
    assert_true(r.measure_wall_s * 1e9 >= r.totals_ns[0] + r.totals_ns[1]);
    bench__result_destroy(&r);
}

static void test_profile_mode(void **state)
{
    (void)state;
    bench__run_options o = options();
    o.plan = BENCH__PLAN_PROFILE;
    o.profile_time = 0.05;
    bench__result r;
    calls = 0;
    run_with(&bench__desc_rt__counter, &o, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_int_equal(r.nsamples, 0);
    assert_true(r.profile_iters > 0 && r.profile_iters == calls);
    assert_true(r.measure_wall_s >= 0.05);
    assert_string_equal(r.stop_reason, "profile time");
    bench__result_destroy(&r);
}

/* ---- rounds ---- */

typedef struct done_log {
    size_t order[8];
    size_t trace_len[8]; /* how many body calls had happened when each result was reported */
    size_t n;
} done_log;

static void log_done(size_t index, bench__result *r, void *arg)
{
    done_log *d = arg;
    assert_non_null(r);
    if (d->n < 8) {
        d->order[d->n] = index;
        d->trace_len[d->n] = ntrace;
        d->n++;
    }
}

/* Runs `n` descriptors through bench__run_all. */
static void run_list(const bench_desc **ds, size_t n, bench__run_options *o, bench__result *rs,
                     done_log *log)
{
    bench__instance in[4];
    const bench__instance *list[4];
    assert_true(n <= 4);
    for (size_t i = 0; i < n; i++) {
        in[i] = instance(ds[i], false, 0);
        list[i] = &in[i];
        memset(&rs[i], 0, sizeof rs[i]);
    }
    ntrace = 0;
    trace[0] = '\0';
    assert_int_equal(bench__run_all(list, n, o, rs, log ? log_done : NULL, log), 0);
    for (size_t i = 0; i < n; i++)
        rs[i].inst = NULL;
}

/* Runs one benchmark through bench__run_all with the given rounds (0: its own setting) and
 * target precision (0: its own). */
static void run_rounds(const bench_desc *d, int rounds, double precision, bench__result *r)
{
    const bench_desc *ds[] = {d};
    bench__run_options o = options();
    o.cli.rounds = rounds;
    o.cli.target_precision = precision;
    run_list(ds, 1, &o, r, NULL);
}

/* Round j of every benchmark before round j + 1; fewer rounds spread out; results reported in
 * list order as soon as they are final; every iteration accounted for. */
static void test_rounds_interleave(void **state)
{
    (void)state;
    const bench_desc *ds[] = {&bench__desc_rt__round_a, &bench__desc_rt__round_b,
                        &bench__desc_rt__round_c};
    bench__run_options o = options();
    o.cli.rounds = 0; /* each benchmark's own: 2, 4 and 1 */
    bench__result rs[3];
    done_log log;
    memset(&log, 0, sizeof log);
    calls = 0;
    run_list(ds, 3, &o, rs, &log);
    /* rounds 0..3: A B C | B | A B | B  (A's two rounds spread over the four) */
    assert_string_equal(trace, "ABCBABB");
    assert_int_equal(log.n, 3);
    assert_true(log.order[0] == 0 && log.order[1] == 1 && log.order[2] == 2);
    assert_int_equal(log.trace_len[0], 5); /* A: right after its second round */
    assert_int_equal(log.trace_len[1], 7); /* B: after its fourth ... */
    assert_int_equal(log.trace_len[2], 7); /* ... and C, finished long before, after B */
    uint64_t sum = 0;
    unsigned want[] = {2, 4, 1};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(rs[i].status, BENCH__OK);
        assert_int_equal(rs[i].rounds, want[i]);
        sum += rs[i].warm_up_iters + rs[i].total_iters;
    }
    assert_true(sum == calls);

    /* A's samples: the linear plan's multiples of d, each used once; the first round takes the
     * odd ones (plan indices 0, 2, 4, ...), in order. */
    const bench__result *a = &rs[0];
    assert_int_equal(a->sampling_used, BENCH_SAMPLING_LINEAR);
    assert_true(a->nsamples >= 4);
    double d = a->iters[0];
    bool seen[101] = {false};
    for (size_t i = 0; i < a->nsamples; i++) {
        double m = a->iters[i] / d;
        assert_true(m == floor(m) && m >= 1 && m <= 100);
        assert_false(seen[(int)m]);
        seen[(int)m] = true;
    }
    assert_true(a->iters[1] == 3 * d);
    for (size_t i = 0; i < 3; i++)
        bench__result_destroy(&rs[i]);
}

/* A benchmark whose samples are long takes no more rounds than samples fit in its budget. */
static void test_rounds_fewer_when_samples_are_long(void **state)
{
    (void)state;
    bench__result r;
    run_rounds(&bench__desc_rt__sleepy_rounds, 0, 0, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_true(r.rounds >= 1 && r.rounds <= 5);
    assert_int_equal(strlen(trace), r.rounds); /* one body call per round */
    assert_true(r.nsamples >= r.rounds);
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(r.iters[i] == 1);
    bench__result_destroy(&r);
}

/* Probes measure per stretch: a benchmark with one attached takes one round. */
static void test_rounds_one_with_probes(void **state)
{
    (void)state;
    counting_probe c = counting();
    bench__probe *plist[] = {&c.p};
    const bench_desc *ds[] = {&bench__desc_rt__round_b};
    bench__run_options o = options();
    o.cli.rounds = 0;
    o.probes = plist;
    o.nprobes = 1;
    bench__result r;
    run_list(ds, 1, &o, &r, NULL);
    check_counted(&r, 0);
    assert_int_equal(r.rounds, 1);
    assert_string_equal(trace, "B");
    assert_int_equal(c.attaches, 1);
    assert_int_equal(c.detaches, 1);
    bench__result_destroy(&r);
}

/* A body that skips its timed loop in a later round fails, and gets no further round. */
static void test_rounds_later_round_misuse(void **state)
{
    (void)state;
    bench__result r;
    run_rounds(&bench__desc_rt__loop_once, 0, -1, &r);
    assert_int_equal(r.status, BENCH__FAILED);
    assert_non_null(strstr(r.message, "no timed loop"));
    assert_string_equal(trace, "LL");
    bench__result_destroy(&r);
}

/* With rounds, precision is checked between rounds, from a third of them on. (A target of 90%
 * lets round medians differ by up to 180%: this VM's 2x speed swings between rounds pass.) */
static void test_rounds_precision_between_rounds(void **state)
{
    (void)state;
    bench__result r;
    run_rounds(&bench__desc_rt__precise_loose, 6, 0, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_string_equal(r.stop_reason, "precision");
    assert_true(r.rounds >= 2 && r.rounds < 6);
    assert_true(r.nsamples >= 10);
    bench__result_destroy(&r);
}

/* ... but not while the rounds disagree: a round whose median is off the pooled one by more
 * than twice the target keeps the benchmark going to its last round. */
static void test_rounds_disagreeing_rounds_do_not_stop_early(void **state)
{
    (void)state;
    bench__result r;
    shift_calls = 0;
    run_rounds(&bench__desc_rt__shifting, 6, 0, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_int_equal(shift_calls, 6);
    assert_int_equal(r.rounds, 6);
    assert_string_not_equal(r.stop_reason, "precision");
    bench__result_destroy(&r);
}

/* bench__run_instance runs a benchmark's rounds back to back. */
static void test_rounds_single_instance(void **state)
{
    (void)state;
    bench__run_options o = options();
    o.cli.rounds = 3;
    o.cli.target_precision = -1;
    bench__result r;
    calls = 0;
    run_with(&bench__desc_rt__counter, &o, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_int_equal(r.rounds, 3);
    assert_true(calls == r.warm_up_iters + r.total_iters);
    bench__result_destroy(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_iteration_accounted),
        cmocka_unit_test(test_linear_plan_shape),
        cmocka_unit_test(test_flat_plan_shape),
        cmocka_unit_test(test_long_iteration_goes_flat_and_stops_at_budget),
        cmocka_unit_test(test_batched_accounting),
        cmocka_unit_test(test_skip),
        cmocka_unit_test(test_fail_stops_the_loop),
        cmocka_unit_test(test_misused_bodies_fail),
        cmocka_unit_test(test_precision_stop),
        cmocka_unit_test(test_sample_size_cap),
        cmocka_unit_test(test_param_and_throughput),
        cmocka_unit_test(test_settings_precedence),
        cmocka_unit_test(test_probe_values_per_sample),
        cmocka_unit_test(test_primary_probe_gives_the_time),
        cmocka_unit_test(test_wall_clock_is_the_default_primary_probe),
        cmocka_unit_test(test_second_primary_probe),
        cmocka_unit_test(test_plan_for_modes),
        cmocka_unit_test(test_probe_skips_benchmark),
        cmocka_unit_test(test_fixed_plan),
        cmocka_unit_test(test_profile_mode),
        cmocka_unit_test(test_rounds_interleave),
        cmocka_unit_test(test_rounds_fewer_when_samples_are_long),
        cmocka_unit_test(test_rounds_one_with_probes),
        cmocka_unit_test(test_rounds_later_round_misuse),
        cmocka_unit_test(test_rounds_precision_between_rounds),
        cmocka_unit_test(test_rounds_disagreeing_rounds_do_not_stop_early),
        cmocka_unit_test(test_rounds_single_instance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
