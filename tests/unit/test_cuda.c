/*
 * test_cuda.c: the CUDA layer's probe (harness/src/cuda.c) driven by the real runner with a fake
 * backend, so every path is tested without a GPU: a CUDA benchmark without a device is skipped
 * with the reason and its body never runs; with one, each timed block is bracketed by begin and
 * finish and its GPU time is the sample's time, the wall clock's goes to "host_wall"; settings
 * reach the backend; a CUDA error fails the benchmark and ends its loop; CPU benchmarks are left
 * alone; the context's GPU facts. Last, the real backend of this build must answer sensibly on
 * this machine (a device, or why there is none).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cuda_backend.h"
#include "internal.h"

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
    bench__cuda_config cfg;
    char range[256];
    uint64_t calls_at_begin;
} fk;

static int fake_session, fake_stream;

static void fake_query(bench__cuda_info *info)
{
    memset(info, 0, sizeof *info);
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

static int fake_begin(bench__cuda_session *s, char *msg, size_t msglen)
{
    assert_ptr_equal(s, &fake_session);
    fk.begins++;
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
    fk.l2_bytes = 50 * 1024 * 1024;
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

static void run(bench_desc *d, bench__result *r)
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

static const bench__fact *fact(const bench__result *r, const char *name)
{
    for (size_t i = 0; i < r->nfacts; i++)
        if (strcmp(r->facts[i].name, name) == 0)
            return &r->facts[i];
    return NULL;
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
    const bench__fact *before = fact(&r, "gpu_mem_used_before_bytes");
    const bench__fact *after = fact(&r, "gpu_mem_used_after_bytes");
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
        cmocka_unit_test_setup_teardown(test_real_backend_answers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
