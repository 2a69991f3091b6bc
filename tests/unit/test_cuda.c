/*
 * test_cuda.c: the CUDA layer's probe (harness/src/probes/cuda.c) driven by the real runner with a fake
 * backend, so every path is tested without a GPU: a CUDA benchmark without a device is skipped
 * with the reason and its body never runs; with one, each timed block is bracketed by begin and
 * finish and its GPU time is the sample's time, the wall clock's goes to "host_wall"; settings
 * reach the backend; a CUDA error fails the benchmark and ends its loop; CPU benchmarks are left
 * alone; the context's GPU facts. Module loading: CUDA_MODULE_LOADING=EAGER is set before the
 * backend's first call unless the user chose, and a session's first timed block does not hold
 * the stream. Samples are long enough for CUDA events. GPU state comes from a fake libnvidia-ml
 * (fake_nvml.c, FAKE_NVML_PATH): per-sample clock, energy and slowdown metrics, throttled samples
 * left out of the estimate, clock notes for comparisons, clock locking. Last, the real backend
 * of this build must answer sensibly on this machine (a device, or why there is none).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/internal.h"
#include "probes/cuda.h"
#include "probes/cuda_backend.h"
#include "probes/probes.h"
#include "measure/trace.h"
#include "store/store.h"
#include "unit_helpers.h"

#include <cjson/cJSON.h>

/* ---- benchmarks ---- */

static uint64_t calls;   /* iterations run by the bodies */
static int bodies;       /* bodies entered */
static void *seen_stream;

BENCH_GROUP(tc, .warm_up_time = 0.01, .measurement_time = 0.05);

BENCH_CUDA_FN(tc, plain)
{
    bodies++;
    seen_stream = bench_cuda_stream(b);
    BENCH_ITER(b) {
        calls++;
        bench_clobber();
    }
}

BENCH_CUDA_FN(tc, cold_blocking, .cuda_cold = 1, .cuda_blocking = 1)
{
    bodies++;
    BENCH_CUDA_ITER(b, 1) {
        calls++;
        bench_clobber();
    }
}

BENCH_CUDA_FN(tc, batched, .sample_size = 10)
{
    bodies++;
    BENCH_CUDA_ITER(b, 3) {
        calls++;
        bench_clobber();
    }
}

BENCH_FN(tc, cpu)
{
    bodies++;
    BENCH_ITER(b) {
        calls++;
        bench_clobber();
    }
}

BENCH_FN(tc, cpu_asks_stream)
{
    bodies++;
    seen_stream = bench_cuda_stream(b);
    BENCH_ITER(b) {
        calls++;
    }
}

/* ---- the fake backend: GPU time is 500 ns per iteration run between begin and finish ---- */

static struct {
    int available;
    int l2_bytes;
    bool open_fails;
    int finish_fails_at; /* the n-th finish fails (0: never) */
    int begin_fails_at;
    int opens, closes, begins, finishes, pushes, pops, mem_calls;
    int holds;               /* begins asked to hold the stream */
    int first_hold;          /* the first begin's hold (-1 before any) */
    char loading_seen[16];   /* CUDA_MODULE_LOADING when query ran ("(unset)" if unset) */
    bench__cuda_config cfg;
    char range[256];
    uint64_t calls_at_begin;
} fk;

static int fake_session, fake_stream;

static void fake_query(bench__cuda_info *info)
{
    const char *env = getenv("CUDA_MODULE_LOADING");
    snprintf(fk.loading_seen, sizeof fk.loading_seen, "%s", env ? env : "(unset)");
    memset(info, 0, sizeof *info);
    /* As CUDA does: the mode the variable asks for, lazy by default. */
    info->module_loading = env && strcmp(env, "EAGER") == 0 ? BENCH__CUDA_LOADING_EAGER
                                                            : BENCH__CUDA_LOADING_LAZY;
    snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "0000:19:00.0");
    info->available = fk.available;
    if (!fk.available)
        snprintf(info->reason, sizeof info->reason, "no CUDA device (fake)");
    info->device_count = fk.available ? 1 : 0;
    snprintf(info->name, sizeof info->name, "%s", fk.available ? "Fake GPU" : "");
    info->cc_major = 9;
    info->cc_minor = 0;
    info->sm_count = 132;
    info->memory_bytes = 80e9;
    info->l2_bytes = fk.l2_bytes;
    info->bus_width_bits = 5120;
    info->clock_khz = 1980000;
    info->memory_clock_khz = 2619000;
    info->driver_version = 13000;
    info->runtime_version = 13000;
}

static int fake_mem_used(double *bytes, char *msg, size_t msglen)
{
    (void)msg;
    (void)msglen;
    fk.mem_calls++;
    *bytes = 1e9 + fk.mem_calls;
    return 0;
}

static int fake_open(bench__cuda_session **out, const bench__cuda_config *cfg, char *msg,
                     size_t msglen)
{
    fk.cfg = *cfg;
    if (fk.open_fails) {
        *out = NULL;
        snprintf(msg, msglen, "cudaMalloc (L2 flush buffer): out of memory (fake)");
        return -1;
    }
    fk.opens++;
    *out = (bench__cuda_session *)&fake_session;
    return 0;
}

static void fake_close(bench__cuda_session *s)
{
    assert_ptr_equal(s, &fake_session);
    fk.closes++;
}

static void *fake_stream_of(bench__cuda_session *s)
{
    assert_ptr_equal(s, &fake_session);
    return &fake_stream;
}

static int fake_begin(bench__cuda_session *s, int hold, char *msg, size_t msglen)
{
    assert_ptr_equal(s, &fake_session);
    fk.begins++;
    fk.holds += hold;
    if (fk.first_hold < 0)
        fk.first_hold = hold;
    fk.calls_at_begin = calls;
    if (fk.begins == fk.begin_fails_at) {
        snprintf(msg, msglen, "cudaEventRecord (start): fake failure");
        return -1;
    }
    return 0;
}

static int fake_finish(bench__cuda_session *s, double *gpu_ns, char *msg, size_t msglen)
{
    assert_ptr_equal(s, &fake_session);
    fk.finishes++;
    *gpu_ns = 500.0 * (double)(calls - fk.calls_at_begin);
    if (fk.finishes == fk.finish_fails_at) {
        snprintf(msg, msglen, "waiting for the timed block: an illegal memory access (fake)");
        return -1;
    }
    return 0;
}

static void fake_push(const char *name)
{
    fk.pushes++;
    snprintf(fk.range, sizeof fk.range, "%s", name);
}

static void fake_pop(void)
{
    fk.pops++;
}

static const bench__cuda_ops fake_ops = {
    .cuda_runtime = 1,
    .query = fake_query,
    .mem_used = fake_mem_used,
    .open = fake_open,
    .close = fake_close,
    .stream = fake_stream_of,
    .begin = fake_begin,
    .finish = fake_finish,
    .range_push = fake_push,
    .range_pop = fake_pop,
};

/* ---- running a benchmark with the CUDA probe ---- */

static int setup(void **state)
{
    (void)state;
    memset(&fk, 0, sizeof fk);
    fk.available = 1;
    fk.first_hold = -1;
    fk.l2_bytes = 50 * 1024 * 1024;
    /* No NVML unless a test asks for the fake one. */
    setenv("BENCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    calls = 0;
    bodies = 0;
    seen_stream = NULL;
    bench__cuda_set_ops(&fake_ops);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    bench__cuda_set_ops(NULL);
    return 0;
}

static void run(const bench_desc *d, bench__result *r)
{
    bench__probe *probes[] = {bench__cuda_probe()};
    bench__run_options o;
    memset(&o, 0, sizeof o);
    o.nresamples = 200;
    o.confidence_level = 0.95;
    o.seed = 1;
    o.probes = probes;
    o.nprobes = 1;
    bench__instance in;
    memset(&in, 0, sizeof in);
    in.desc = d;
    in.group = &bench__group_tc;
    snprintf(in.id, sizeof in.id, "tc/%s", d->name);
    memset(r, 0, sizeof *r);
    bench__run_instance(&in, &o, r);
    r->inst = NULL; /* `in` dies here */
}

static void test_skipped_without_device(void **state)
{
    (void)state;
    fk.available = 0;
    bench__cuda_set_ops(&fake_ops); /* forget the cached query */
    bench__result r;
    run(&bench__desc_tc__plain, &r);
    assert_int_equal(r.status, BENCH__SKIPPED);
    assert_string_equal(r.message, "no CUDA device (fake)");
    assert_int_equal(bodies, 0); /* the body never ran */
    assert_int_equal(fk.opens, 0);
    assert_int_equal(fk.pushes, 0);
    bench__result_destroy(&r);
}

static void test_gpu_time_is_the_sample_time(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_tc__plain, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_int_equal(bodies, 1);
    assert_ptr_equal(seen_stream, &fake_stream);
    assert_true(r.nsamples >= 3);
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(r.totals_ns[i] == 500.0 * r.iters[i]);
    assert_true(r.est.median.point == 500.0);
    const bench__metric *hw = bench__metric_find(&r, "host_wall");
    assert_non_null(hw);
    assert_string_equal(hw->unit, "ns");
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(hw->totals[i] > 0);
    /* one begin and one finish per timed block (warm-up and samples), one session */
    assert_int_equal(fk.begins, fk.finishes);
    assert_true((size_t)fk.begins > r.nsamples);
    assert_int_equal(fk.opens, 1);
    assert_int_equal(fk.closes, 1);
    assert_int_equal(fk.pushes, 1);
    assert_int_equal(fk.pops, 1);
    assert_string_equal(fk.range, "tc/plain");
    assert_true(fk.cfg.l2_flush_bytes == 0);
    assert_int_equal(fk.cfg.blocking, 0);
    const bench__fact *before = bench__fact_find(&r, "gpu_mem_used_before_bytes");
    const bench__fact *after = bench__fact_find(&r, "gpu_mem_used_after_bytes");
    assert_non_null(before);
    assert_non_null(after);
    assert_string_equal(before->unit, "B");
    assert_true(before->value == 1e9 + 1 && after->value == 1e9 + 2);
    bench__result_destroy(&r);
}

static void test_cold_and_blocking_reach_the_backend(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_tc__cold_blocking, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_true(fk.cfg.l2_flush_bytes == (size_t)fk.l2_bytes);
    assert_int_equal(fk.cfg.blocking, 1);
    assert_true(fk.cfg.block_timeout_s >= 2.0);
    /* BENCH_CUDA_ITER(b, 1): one timed block per iteration */
    assert_true((uint64_t)fk.begins == calls);
    assert_true(r.est.median.point == 500.0);
    bench__result_destroy(&r);
}

static void test_batches_add_up(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_tc__batched, &r);
    assert_int_equal(r.status, BENCH__OK);
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(r.totals_ns[i] == 500.0 * r.iters[i]);
    /* batches of at most 3: at least calls / 3 timed blocks */
    assert_true((uint64_t)fk.begins * 3 >= calls);
    bench__result_destroy(&r);
}

static void test_error_mid_run_fails_and_stops(void **state)
{
    (void)state;
    fk.finish_fails_at = 4;
    bench__result r;
    run(&bench__desc_tc__plain, &r);
    assert_int_equal(r.status, BENCH__FAILED);
    assert_string_equal(r.message,
                        "CUDA error: waiting for the timed block: an illegal memory access (fake)");
    assert_int_equal(fk.finishes, 4); /* no timed block after the failure */
    assert_int_equal(fk.begins, 4);
    assert_int_equal(fk.closes, 1);   /* still cleaned up */
    assert_int_equal(fk.pops, 1);
    bench__result_destroy(&r);
}

static void test_error_at_begin_fails(void **state)
{
    (void)state;
    fk.begin_fails_at = 2;
    bench__result r;
    run(&bench__desc_tc__plain, &r);
    assert_int_equal(r.status, BENCH__FAILED);
    assert_string_equal(r.message, "CUDA error: cudaEventRecord (start): fake failure");
    assert_int_equal(fk.finishes, 1); /* the failed block is not waited for */
    assert_int_equal(fk.closes, 1);
    bench__result_destroy(&r);
}

static void test_open_error_fails_before_the_body(void **state)
{
    (void)state;
    fk.open_fails = true;
    bench__result r;
    run(&bench__desc_tc__cold_blocking, &r);
    assert_int_equal(r.status, BENCH__FAILED);
    assert_string_equal(r.message,
                        "CUDA error: cudaMalloc (L2 flush buffer): out of memory (fake)");
    assert_int_equal(bodies, 0);
    assert_int_equal(fk.pushes, 0);
    bench__result_destroy(&r);
}

static void test_unknown_l2_size_fails_cold(void **state)
{
    (void)state;
    fk.l2_bytes = -1;
    bench__cuda_set_ops(&fake_ops);
    bench__result r;
    run(&bench__desc_tc__cold_blocking, &r);
    assert_int_equal(r.status, BENCH__FAILED);
    assert_non_null(strstr(r.message, "L2"));
    assert_int_equal(fk.opens, 0);
    bench__result_destroy(&r);
}

static void test_cpu_benchmarks_are_left_alone(void **state)
{
    (void)state;
    fk.available = 0; /* even without a GPU */
    bench__cuda_set_ops(&fake_ops);
    bench__result r;
    run(&bench__desc_tc__cpu, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_int_equal(r.nmetrics, 0); /* no host_wall: the wall clock is the time */
    assert_int_equal(r.nfacts, 0);
    assert_int_equal(fk.opens + fk.begins + fk.mem_calls, 0);
    bench__result_destroy(&r);
}

static void test_stream_in_cpu_benchmark_fails(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_tc__cpu_asks_stream, &r);
    assert_int_equal(r.status, BENCH__FAILED);
    assert_null(seen_stream);
    assert_non_null(strstr(r.message, "bench_cuda_stream: 'tc/cpu_asks_stream' has no CUDA"));
    assert_true(calls == 0);
    bench__result_destroy(&r);
}

static void test_context_from_backend(void **state)
{
    (void)state;
    bench__gpu g;
    bench__cuda_context_collect(&g);
    assert_true(g.available);
    assert_string_equal(g.reason, "");
    assert_string_equal(g.name, "Fake GPU");
    assert_int_equal(g.sm_count, 132);
    /* 2 x 2619 MHz x 5120 bit / 8 = 3352.32 GB/s */
    assert_true(g.bandwidth_bytes_per_s > 3352.31e9 && g.bandwidth_bytes_per_s < 3352.33e9);
    assert_string_equal(g.driver_version, "13.0");
    assert_string_equal(g.runtime_version, "13.0");

    fk.available = 0;
    bench__cuda_set_ops(&fake_ops);
    bench__cuda_context_collect(&g);
    assert_false(g.available);
    assert_string_equal(g.reason, "no CUDA device (fake)");
}

/* ---- module loading ---- */

/* Unset, the harness asks for eager loading before the backend's first call (query). */
static void test_eager_loading_set_before_the_first_call(void **state)
{
    (void)state;
    unsetenv("CUDA_MODULE_LOADING");
    bench__cuda_set_ops(&fake_ops); /* a fresh process, as far as the probe knows */
    bench__gpu g;
    bench__cuda_context_collect(&g);
    assert_string_equal(fk.loading_seen, "EAGER");
    assert_string_equal(g.module_loading, "eager");
    assert_true(g.module_loading_set);
    unsetenv("CUDA_MODULE_LOADING");
}

/* The user's choice stands, and the context says which mode is in effect. */
static void test_users_loading_mode_is_kept(void **state)
{
    (void)state;
    setenv("CUDA_MODULE_LOADING", "LAZY", 1);
    bench__cuda_set_ops(&fake_ops);
    bench__gpu g;
    bench__cuda_context_collect(&g);
    assert_string_equal(fk.loading_seen, "LAZY");
    assert_string_equal(getenv("CUDA_MODULE_LOADING"), "LAZY");
    assert_string_equal(g.module_loading, "lazy");
    assert_false(g.module_loading_set);
    unsetenv("CUDA_MODULE_LOADING");
}

/* A backend without the CUDA runtime (the none twin) leaves the environment alone. */
static void test_no_runtime_no_variable(void **state)
{
    (void)state;
    unsetenv("CUDA_MODULE_LOADING");
    bench__cuda_ops no_runtime = fake_ops;
    no_runtime.cuda_runtime = 0;
    bench__cuda_set_ops(&no_runtime);
    bench__gpu g;
    bench__cuda_context_collect(&g);
    assert_string_equal(fk.loading_seen, "(unset)");
    assert_null(getenv("CUDA_MODULE_LOADING"));
    assert_false(g.module_loading_set);
}

/* The first timed block of a session does not hold the stream (it loads the body's kernels
 * under lazy loading); every later one does. */
static void test_first_block_does_not_hold(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_tc__cold_blocking, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_true(fk.begins >= 3);
    assert_int_equal(fk.first_hold, 0);
    assert_int_equal(fk.holds, fk.begins - 1);
    bench__result_destroy(&r);
}

/* ---- samples long enough for CUDA events ---- */

static void test_samples_are_long_enough_for_events(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_tc__plain, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_true(r.nsamples >= 3);
    for (size_t i = 0; i < r.nsamples; i++) /* 1 ms of GPU time at least, whatever the clock */
        assert_true(r.totals_ns[i] >= 1e6);
    bench__result_destroy(&r);
    memset(&fk, 0, sizeof fk);
    fk.available = 1;
    fk.first_hold = -1;
    fk.l2_bytes = 50 * 1024 * 1024;
    run(&bench__desc_tc__cold_blocking, &r); /* blocking: 0.25 ms, so a block fits the queue */
    assert_int_equal(r.status, BENCH__OK);
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(r.totals_ns[i] >= 2.5e5);
    bench__result_destroy(&r);
}

/* ---- GPU state through NVML (the fake libnvidia-ml) ---- */

static void use_fake_nvml(const char *sm_mhz)
{
    setenv("BENCH_NVML_LIBRARY", FAKE_NVML_PATH, 1);
    setenv("FAKE_NVML_SM_MHZ", sm_mhz, 1);
    setenv("FAKE_NVML_MEM_MHZ", "2619", 1);
    setenv("FAKE_NVML_POWER_MW", "300000", 1);
    setenv("FAKE_NVML_TEMP_C", "45,47,46", 1);
    setenv("FAKE_NVML_REASONS", "0", 1);
    unsetenv("FAKE_NVML_LOCK");
    unsetenv("FAKE_NVML_LOG");
    bench__cuda_set_ops(&fake_ops); /* forgets the NVML of an earlier test */
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b) + 1e-9;
}

static void test_gpu_state_per_sample(void **state)
{
    (void)state;
    use_fake_nvml("1980");
    bench__result r;
    run(&bench__desc_tc__plain, &r);
    assert_int_equal(r.status, BENCH__OK);
    const bench__metric *sm = bench__metric_find(&r, "gpu_sm_cycles");
    const bench__metric *mem = bench__metric_find(&r, "gpu_mem_cycles");
    const bench__metric *en = bench__metric_find(&r, "gpu_energy");
    const bench__metric *slow = bench__metric_find(&r, "gpu_slowdown_ns");
    assert_true(sm && mem && en && slow);
    assert_string_equal(sm->unit, "cycles");
    assert_string_equal(en->unit, "J");
    for (size_t i = 0; i < r.nsamples; i++) {
        /* clock x GPU time: 1980 MHz over t ns is 1.98 t cycles; 300 W over t ns is 3e-7 t J */
        assert_true(near(sm->totals[i], 1.98 * r.totals_ns[i]));
        assert_true(near(mem->totals[i], 2.619 * r.totals_ns[i]));
        assert_true(near(en->totals[i], 3e-7 * r.totals_ns[i]));
        assert_true(slow->totals[i] == 0);
    }
    assert_true(bench__fact_find(&r, "gpu_sm_clock_reference_mhz")->value == 1980);
    assert_true(bench__fact_find(&r, "gpu_temperature_max_c")->value >= 45);
    assert_true(bench__fact_find(&r, "gpu_throttled_samples")->value == 0);
    assert_true(near(bench__fact_find(&r, "gpu_sm_clock_mhz")->value, 1980));
    assert_true(near(bench__fact_find(&r, "gpu_mem_clock_mhz")->value, 2619));
    assert_true(near(bench__fact_find(&r, "gpu_power_w")->value, 300));
    bench__result_destroy(&r);
}

/* Every sample below 75% of the default clock: all are flagged, and all stay (nothing else to
 * estimate from). A slowdown reason is recorded as time under it. */
static void test_all_samples_throttled(void **state)
{
    (void)state;
    use_fake_nvml("900");
    setenv("FAKE_NVML_REASONS", "0x20", 1); /* thermal slowdown (software) */
    bench__cuda_set_ops(&fake_ops);
    bench__result r;
    run(&bench__desc_tc__plain, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_true(r.nsamples >= 3);
    assert_true(bench__fact_find(&r, "gpu_throttled_samples")->value == (double)r.nsamples);
    assert_true(near(bench__fact_find(&r, "gpu_sm_clock_threshold_mhz")->value, 0.75 * 1980));
    const bench__metric *slow = bench__metric_find(&r, "gpu_slowdown_ns");
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(slow->totals[i] == r.totals_ns[i]);
    bench__result_destroy(&r);
}

/* Without NVML: no GPU-state metrics, and the context says why. */
static void test_nvml_unavailable(void **state)
{
    (void)state;
    bench__result r;
    run(&bench__desc_tc__plain, &r);
    assert_int_equal(r.status, BENCH__OK);
    assert_null(bench__metric_find(&r, "gpu_sm_cycles"));
    assert_null(bench__fact_find(&r, "gpu_throttled_samples"));
    bench__result_destroy(&r);
    bench__gpu g;
    bench__cuda_context_collect(&g);
    assert_false(g.nvml_available);
    assert_non_null(strstr(g.nvml_reason, "could not be loaded"));
    assert_int_equal(g.sm_clock_default_mhz, -1);
}

/* A result of six samples (two processes of three) with these mean SM clocks. */
static void throttle_case(bench__result *r, const double *mhz, const uint32_t *proc, size_t n,
                          unsigned nproc)
{
    memset(r, 0, sizeof *r);
    r->settings.sample_size = (int)n;
    r->iters = malloc(n * sizeof *r->iters);
    r->totals_ns = malloc(n * sizeof *r->totals_ns);
    r->process = malloc(n * sizeof *r->process);
    assert_true(r->iters && r->totals_ns && r->process);
    assert_int_equal(bench__metric_add(r, "gpu_sm_cycles", "cycles", "nvml"), 0);
    for (size_t i = 0; i < n; i++) {
        r->iters[i] = 10;
        r->totals_ns[i] = 1e6 + (double)i; /* sample i is recognisable by its time */
        r->metrics[0].totals[i] = mhz[i] * r->totals_ns[i] * 1e-3;
        r->process[i] = proc[i];
        r->total_iters += 10;
    }
    r->nsamples = n;
    r->processes = nproc;
    bench__fact_add(r, "gpu_sm_clock_reference_mhz", "MHz", 1980);
}

/* Samples below 0.75 x 1980 = 1485 MHz leave; the rest stay in order; a process left with no
 * sample is dropped from the numbering. */
static void test_throttled_samples_left_out(void **state)
{
    (void)state;
    const double mhz[] = {1980, 1975, 1000, 1980, 1400, 1500};
    const uint32_t proc[] = {0, 0, 1, 2, 2, 3};
    bench__result r;
    throttle_case(&r, mhz, proc, 6, 4);
    bench__cuda_analyze(&r);
    assert_int_equal(r.nsamples, 4);
    const double kept[] = {0, 1, 3, 5};
    const uint32_t kept_proc[] = {0, 0, 1, 2};
    for (size_t i = 0; i < 4; i++) {
        assert_true(r.totals_ns[i] == 1e6 + kept[i]);
        assert_true(near(r.metrics[0].totals[i], mhz[(size_t)kept[i]] * r.totals_ns[i] * 1e-3));
        assert_int_equal(r.process[i], kept_proc[i]);
    }
    assert_int_equal(r.processes, 3);
    assert_true(r.total_iters == 40);
    assert_true(bench__fact_find(&r, "gpu_throttled_samples")->value == 2);
    assert_true(near(bench__fact_find(&r, "gpu_sm_clock_threshold_mhz")->value, 1485));
    /* done once: a second call changes nothing */
    bench__cuda_analyze(&r);
    assert_int_equal(r.nsamples, 4);
    assert_true(bench__fact_find(&r, "gpu_throttled_samples")->value == 2);
    bench__result_destroy(&r);
}

/* The baseline's mean SM clock, as the pipeline reads it from a saved entry. */
static double baseline_mhz(const bench__entry *e)
{
    return 1e3 * bench__entry_rate(e, BENCH__GPU_SM_CYCLES);
}

/* A comparison says so when its sides ran at different SM clocks (more than 2% apart). */
static void test_clock_note(void **state)
{
    (void)state;
    const double fast[] = {1980, 1980, 1980, 1980, 1980, 1980};
    const uint32_t proc[] = {0, 0, 0, 1, 1, 1};
    bench__result r;
    throttle_case(&r, fast, proc, 6, 2);
    double cycles[6], ns[6];
    bench__saved_metric m = {.name = "gpu_sm_cycles", .unit = "cycles", .totals = cycles};
    bench__entry e = {.nsamples = 6, .totals_ns = ns, .nmetrics = 1, .metrics = &m};
    for (size_t i = 0; i < 6; i++) {
        ns[i] = 2e6;
        cycles[i] = 1755 * ns[i] * 1e-3; /* the baseline ran at 1755 MHz */
    }
    char note[256];
    assert_int_equal(bench__cuda_clock_note(&r, baseline_mhz(&e), note, sizeof note), 1);
    assert_non_null(strstr(note, "1980 MHz"));
    assert_non_null(strstr(note, "1755 MHz"));
    for (size_t i = 0; i < 6; i++)
        cycles[i] = 1960 * ns[i] * 1e-3; /* 1% apart: no note */
    assert_int_equal(bench__cuda_clock_note(&r, baseline_mhz(&e), note, sizeof note), 0);
    e.nmetrics = 0; /* a baseline without clocks: nothing to say */
    assert_int_equal(bench__cuda_clock_note(&r, baseline_mhz(&e), note, sizeof note), 0);
    bench__result_destroy(&r);
}

/* Locking goes through NVML and is undone; the lock is the throttle rule's reference and the
 * context's; where NVML refuses, the reason comes back and nothing is locked. */
static void test_clock_locking(void **state)
{
    (void)state;
    char log[] = "/tmp/test_cuda_nvml_XXXXXX";
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    use_fake_nvml("1500");
    setenv("FAKE_NVML_LOG", log, 1);
    char msg[256];
    assert_int_equal(bench__cuda_lock_clocks(1500, msg, sizeof msg), 0);
    bench__gpu g;
    bench__cuda_context_collect(&g);
    assert_int_equal(g.sm_clock_locked_mhz, 1500);
    assert_true(g.nvml_available);
    assert_int_equal(g.sm_clock_default_mhz, 1980);
    bench__result r;
    run(&bench__desc_tc__plain, &r); /* at the locked 1500 MHz: not throttled */
    assert_true(bench__fact_find(&r, "gpu_throttled_samples")->value == 0);
    bench__result_destroy(&r);
    bench__cuda_unlock_clocks();
    bench__cuda_context_collect(&g);
    assert_int_equal(g.sm_clock_locked_mhz, -1);
    setenv("FAKE_NVML_LOCK", "denied", 1);
    assert_int_equal(bench__cuda_lock_clocks(1200, msg, sizeof msg), BENCH_EUNAVAIL);
    assert_non_null(strstr(msg, "Insufficient Permissions"));
    bench__cuda_unlock_clocks(); /* nothing locked: no call */
    char text[512] = "";
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = '\0';
    unlink(log);
    assert_non_null(strstr(text, "device 0000:19:00.0\n")); /* found by PCI bus id */
    assert_non_null(strstr(text, "lock 1500 1500\nreset\nlock 1200 1200\n"));
    assert_null(strstr(text, "lock 1200 1200\nreset"));
}

/* The saved entry's rate for bench__probes_compare_note, as the pipeline gives it. */
static double saved_rate(const void *saved, const char *metric)
{
    return bench__entry_rate(saved, metric);
}

/* The pipeline reaches the CUDA probe only through the table: the context's GPU part, clock
 * locking and the note on a comparison's clocks come out as from the probe itself. */
static void test_table_hooks(void **state)
{
    (void)state;
    use_fake_nvml("1500");
    bench__context ctx;
    memset(&ctx, 0, sizeof ctx);
    bench__probes_context(&ctx);
    bench__gpu g;
    bench__cuda_context_collect(&g);
    assert_memory_equal(&ctx.gpu, &g, sizeof g);
    char msg[256];
    assert_int_equal(bench__probes_lock_clocks(1500, msg, sizeof msg), 0);
    bench__probes_context(&ctx);
    assert_int_equal(ctx.gpu.sm_clock_locked_mhz, 1500);
    bench__probes_unlock_clocks();
    bench__probes_context(&ctx);
    assert_int_equal(ctx.gpu.sm_clock_locked_mhz, -1);
    setenv("FAKE_NVML_LOCK", "denied", 1);
    assert_int_equal(bench__probes_lock_clocks(1200, msg, sizeof msg), BENCH_EUNAVAIL);
    assert_non_null(strstr(msg, "Insufficient Permissions"));

    const double fast[] = {1980, 1980, 1980, 1980, 1980, 1980};
    const uint32_t proc[] = {0, 0, 0, 1, 1, 1};
    bench__result r;
    throttle_case(&r, fast, proc, 6, 2);
    double cycles[6], ns[6];
    bench__saved_metric m = {.name = "gpu_sm_cycles", .unit = "cycles", .totals = cycles};
    bench__entry e = {.nsamples = 6, .totals_ns = ns, .nmetrics = 1, .metrics = &m};
    for (size_t i = 0; i < 6; i++) {
        ns[i] = 2e6;
        cycles[i] = 1755 * ns[i] * 1e-3; /* the baseline ran at 1755 MHz */
    }
    char note[256], direct[256];
    assert_int_equal(bench__probes_compare_note(&r, saved_rate, &e, note, sizeof note), 1);
    assert_int_equal(bench__cuda_clock_note(&r, baseline_mhz(&e), direct, sizeof direct), 1);
    assert_string_equal(note, direct);
    e.nmetrics = 0; /* a baseline without clocks: nothing to say */
    assert_int_equal(bench__probes_compare_note(&r, saved_rate, &e, note, sizeof note), 0);
    bench__result_destroy(&r);
}

/*
 * --trace: each reading of the GPU's state is a counter of the process's track: SM and memory
 * clocks, temperature, power, and throttling (1 when a slowdown reason was set), all at the time
 * of their reading, with the values the fake NVML gave that reading (its lists go round in step:
 * the SM clock 1500 comes with the thermal slowdown, 1980 with none). Last of the tests: the
 * trace's recorder stays on in this process.
 */
static void test_readings_are_trace_counters(void **state)
{
    (void)state;
    use_fake_nvml("1980,1500");
    setenv("FAKE_NVML_REASONS", "0,0x20", 1);
    bench__cuda_set_ops(&fake_ops);
    char dir[] = "/tmp/test-cuda-trace-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/t.json", dir);
    bench__trace_start(path);
    bench__result r;
    run(&bench__desc_tc__plain, &r); /* each round a track of its own (pid 2, 3, ...) */
    assert_int_equal(r.status, BENCH__OK);
    assert_int_equal(bench__trace_write(), 0);
    bench__result_destroy(&r);

    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    unlink(path);
    rmdir(dir);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    /* The readings by time: seen[i] holds which of the five came at ts[i], v[i] their values. */
    static const char *const names[] = {"gpu_sm_clock_mhz", "gpu_mem_clock_mhz",
                                        "gpu_temperature_c", "gpu_power_w", "gpu_throttled"};
    enum { NAMES = 5, MAX_READINGS = 256 };
    double ts[MAX_READINGS], v[MAX_READINGS][NAMES];
    int seen[MAX_READINGS] = {0};
    size_t nts = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "traceEvents"))
    {
        if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "C") != 0)
            continue;
        const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
        size_t k = 0;
        while (k < NAMES && strcmp(names[k], name) != 0)
            k++;
        assert_true(k < NAMES); /* no other counter in this run */
        assert_true(cJSON_GetObjectItem(e, "pid")->valueint >= 2); /* a round's, not pid 1 */
        const cJSON *value = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "value");
        assert_non_null(value);
        double t = cJSON_GetObjectItem(e, "ts")->valuedouble;
        size_t i = 0;
        while (i < nts && ts[i] != t)
            i++;
        if (i == nts) {
            assert_true(nts < MAX_READINGS);
            ts[nts++] = t;
        }
        assert_false(seen[i] & (1 << k)); /* once per reading */
        seen[i] |= 1 << k;
        v[i][k] = value->valuedouble;
    }
    cJSON_Delete(doc);
    assert_true(nts >= 1);
    for (size_t i = 0; i < nts; i++) {
        assert_int_equal(seen[i], (1 << NAMES) - 1);
        assert_true(v[i][0] == 1980 || v[i][0] == 1500);
        assert_true(v[i][1] == 2619);
        assert_true(v[i][2] == 45 || v[i][2] == 47 || v[i][2] == 46);
        assert_true(near(v[i][3], 300));
        assert_true(v[i][4] == (v[i][0] == 1500 ? 1 : 0));
    }
    print_message("%zu GPU readings drawn as counters\n", nts);
}

/* The real backend of this build: a device with its facts, or a reason. Never a crash. */
static void test_real_backend_answers(void **state)
{
    (void)state;
    bench__cuda_set_ops(NULL);
    bench__gpu g;
    bench__cuda_context_collect(&g);
    if (g.available) {
        assert_true(g.device_count >= 1);
        assert_true(g.name[0] != '\0');
        assert_true(g.sm_count > 0 && g.l2_bytes > 0);
        print_message("GPU: %s (compute capability %d.%d)\n", g.name, g.cc_major, g.cc_minor);
    } else {
        assert_true(g.reason[0] != '\0');
        assert_int_equal(g.sm_count, -1);
        print_message("no usable GPU here: %s\n", g.reason);
    }
#ifdef HARNESS_TEST_NO_CUDA
    assert_false(g.available);
    assert_string_equal(g.runtime_version, "");
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_skipped_without_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpu_time_is_the_sample_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cold_and_blocking_reach_the_backend, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_batches_add_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_mid_run_fails_and_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_at_begin_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_error_fails_before_the_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_l2_size_fails_cold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_benchmarks_are_left_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_in_cpu_benchmark_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_context_from_backend, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eager_loading_set_before_the_first_call, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_users_loading_mode_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_runtime_no_variable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_block_does_not_hold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_samples_are_long_enough_for_events, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gpu_state_per_sample, setup, teardown),
        cmocka_unit_test_setup_teardown(test_all_samples_throttled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nvml_unavailable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_throttled_samples_left_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_note, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_locking, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_hooks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_backend_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readings_are_trace_counters, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
