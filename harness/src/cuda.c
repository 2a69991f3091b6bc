/*
 * cuda.c: the CUDA layer's probe, which times CUDA benchmarks (BENCH_CUDA_FN) and skips them when
 * they cannot run. It is in every run's probe list and primary: attached before the wall clock, it
 * gives a CUDA benchmark's time (probe.h), the GPU time between two CUDA events on the benchmark's
 * stream, and the wall clock's probe records the host's time as the metric "host_wall". CPU
 * benchmarks are left alone. The GPU work itself is the backend's (cuda_backend.h): cuda_backend.cu
 * with CUDA, cuda_none.c without, so this file has no #ifdef and no CUDA header.
 *
 * Per CUDA benchmark: attach queries the device (once per process), skips the benchmark with the
 * reason when there is no CUDA build, driver or device, records the device memory in use, opens a
 * session (stream, events, L2 scratch for .cuda_cold, flag for .cuda_blocking) and opens an NVTX
 * range named after the benchmark; start and stop bracket every timed block; detach closes the
 * range and the session and records the memory in use again. A CUDA error fails the benchmark
 * with the CUDA error's text, after which the probe makes no more GPU calls for it.
 *
 * Cost: completing a block waits for the GPU (cudaEventSynchronize). The runner calls complete
 * just before it stops the wall clock, so host_wall is the block's enqueue plus its completion;
 * start runs before the wall clock starts; see docs/gpu.md.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "context.h"
#include "cuda_backend.h"
#include "probe.h"
#include "result.h"

/* The probe's state: one benchmark runs at a time, in the main thread. */
static struct {
    const bench__cuda_ops *ops;
    bool queried;
    bench__cuda_info info;    /* device 0, queried once per process */
    bench__result *r;         /* the CUDA benchmark attached now; NULL between benchmarks */
    bench__cuda_session *s;   /* its session */
    bool finished;            /* the running timed block was already finished (waited for) */
    double block_ns;          /* its GPU time, ns */
    bool broken;              /* a CUDA error failed the benchmark: no more GPU calls for it */
} cu;

static const bench__cuda_ops *ops(void)
{
    if (!cu.ops)
        cu.ops = bench__cuda_ops_default();
    return cu.ops;
}

void bench__cuda_set_ops(const bench__cuda_ops *o)
{
    cu.ops = o;
    cu.queried = false;
}

static const bench__cuda_info *device_info(void)
{
    if (!cu.queried) {
        ops()->query(&cu.info);
        cu.queried = true;
    }
    return &cu.info;
}

/* Marks r failed with a reason unless it already has a status; the first reason wins. */
static void fail(bench__result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(bench__result *r, const char *fmt, ...)
{
    if (r->status != BENCH__OK)
        return;
    r->status = BENCH__FAILED;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

/* A CUDA error during the timed loop: fail the benchmark; the runner then ends its loop. */
static void broke(const char *msg)
{
    cu.broken = true;
    fail(cu.r, "CUDA error: %s", msg);
}

/* Ends what an earlier benchmark left attached (the runner skipped its detach). */
static void drop_stale(void)
{
    if (!cu.r)
        return;
    ops()->close(cu.s);
    ops()->range_pop();
    cu.s = NULL;
    cu.r = NULL;
}

static int cuda_attach(bench__probe *p, bench__result *r)
{
    (void)p;
    drop_stale();
    const bench_desc *d = r->inst ? r->inst->desc : NULL;
    if (!d || d->kind != BENCH_KIND_CUDA)
        return 1; /* a CPU benchmark: not ours */
    const bench__cuda_info *in = device_info();
    if (!in->available) {
        bench__result_skip(r, "%s", in->reason);
        return 1;
    }
    char msg[256];
    double before;
    if (ops()->mem_used(&before, msg, sizeof msg) != 0) {
        fail(r, "CUDA error: %s", msg);
        return 1;
    }
    bench__cuda_config cfg = {
        .l2_flush_bytes = 0,
        .blocking = d->cuda_blocking != 0,
        /* Longer than any timed block of this benchmark should take to enqueue. */
        .block_timeout_s = 2.0 + r->settings.warm_up_time + r->settings.measurement_time,
    };
    if (d->cuda_cold) {
        if (in->l2_bytes <= 0) {
            fail(r, "cannot flush the GPU's L2 cache (.cuda_cold): its size is unknown");
            return 1;
        }
        cfg.l2_flush_bytes = (size_t)in->l2_bytes;
    }
    if (ops()->open(&cu.s, &cfg, msg, sizeof msg) != 0) {
        fail(r, "CUDA error: %s", msg);
        return 1;
    }
    bench__fact_add(r, "gpu_mem_used_before_bytes", "B", before);
    ops()->range_push(r->inst->id);
    cu.r = r;
    cu.broken = false;
    cu.finished = false;
    return 0;
}

static void cuda_start(bench__probe *p)
{
    (void)p;
    cu.finished = false;
    cu.block_ns = 0;
    if (!cu.r || cu.broken)
        return;
    char msg[256];
    if (ops()->begin(cu.s, msg, sizeof msg) != 0)
        broke(msg);
}

/*
 * Waits for the running timed block and takes its GPU time. The stop callback calls it after the
 * wall clock has stopped; a runner that calls it just before stopping the wall clock makes
 * host_wall include the block's completion too (see the top of the file and docs/gpu.md).
 */
static void cuda_complete(bench__probe *p)
{
    (void)p;
    if (!cu.r || cu.broken || cu.finished)
        return;
    cu.finished = true;
    char msg[256];
    if (ops()->finish(cu.s, &cu.block_ns, msg, sizeof msg) != 0) {
        cu.block_ns = 0;
        broke(msg);
    }
}

static void cuda_stop(bench__probe *p, double *values, double *fraction)
{
    cuda_complete(p);
    values[0] = cu.broken ? 0.0 : cu.block_ns; /* the primary value: the block's GPU time, ns */
    *fraction = 1.0;
}

static void cuda_detach(bench__probe *p, bench__result *r)
{
    (void)p;
    if (cu.r != r)
        return;
    ops()->close(cu.s);
    cu.s = NULL;
    ops()->range_pop();
    char msg[256];
    double after;
    if (ops()->mem_used(&after, msg, sizeof msg) == 0)
        bench__fact_add(r, "gpu_mem_used_after_bytes", "B", after);
    else if (!cu.broken)
        fail(r, "CUDA error after the benchmark: %s", msg);
    cu.r = NULL;
}

bench__probe *bench__cuda_probe(void)
{
    static bench__probe probe = {
        .name = "cuda",
        .attach = cuda_attach,
        .start = cuda_start,
        .stop = cuda_stop,
        .complete = cuda_complete,
        .detach = cuda_detach,
        .primary = true,
    };
    return &probe;
}

void *bench_cuda_stream(bench_t *b)
{
    if (cu.r && cu.s && !cu.broken && cu.r->inst && cu.r->inst->id == bench_id(b))
        return ops()->stream(cu.s);
    if (cu.r && cu.r->inst && cu.r->inst->id == bench_id(b))
        return NULL; /* the benchmark has already failed with a CUDA error */
    bench_fail(b,
               "bench_cuda_stream: '%s' has no CUDA stream: it is not a BENCH_CUDA_FN, or this "
               "mode runs it without CUDA timing",
               bench_id(b));
    return NULL;
}

/* "13.0" from CUDA's 13000; "" for an unknown or absent version. */
static void version_text(char *buf, size_t len, int v)
{
    if (v > 0)
        bench__msg(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
    else
        bench__msg(buf, len, "%s", "");
}

void bench__cuda_context_collect(bench__gpu *g)
{
    const bench__cuda_info *in = device_info();
    memset(g, 0, sizeof *g);
    g->available = in->available != 0;
    bench__msg(g->reason, sizeof g->reason, "%s", in->available ? "" : in->reason);
    g->device_count = in->device_count;
    bench__msg(g->name, sizeof g->name, "%s", in->name);
    bench__msg(g->pci_bus_id, sizeof g->pci_bus_id, "%s", in->pci_bus_id);
    g->cc_major = in->cc_major;
    g->cc_minor = in->cc_minor;
    g->sm_count = in->sm_count;
    g->memory_bytes = in->memory_bytes;
    g->l2_bytes = in->l2_bytes;
    g->bus_width_bits = in->bus_width_bits;
    g->clock_khz = in->clock_khz;
    g->memory_clock_khz = in->memory_clock_khz;
    /* Double data rate: two transfers per memory clock, bus width in bits. */
    g->bandwidth_bytes_per_s = in->memory_clock_khz > 0 && in->bus_width_bits > 0
                                   ? 2.0 * in->memory_clock_khz * 1e3 * in->bus_width_bits / 8.0
                                   : -1;
    version_text(g->driver_version, sizeof g->driver_version, in->driver_version);
    version_text(g->runtime_version, sizeof g->runtime_version, in->runtime_version);
}
