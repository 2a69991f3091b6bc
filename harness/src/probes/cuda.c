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
 *
 * Module loading: before the backend's first CUDA call the probe sets CUDA_MODULE_LOADING=EAGER
 * unless it is set (lazy loading would make a kernel's first launch wait for the device, which a
 * blocking kernel holds), and a blocking benchmark's first timed block runs without the blocking
 * kernel, so that the body's kernels are loaded however the user set the variable.
 *
 * GPU state (nvml.c): where NVML can be loaded, the probe reads the device's clocks, power,
 * temperature and clock event reasons after timed blocks (at most every NVML_EVERY_NS; a block
 * is credited with the latest reading) and records, per sample, the metrics gpu_sm_cycles,
 * gpu_mem_cycles (clock x GPU time), gpu_energy (power x GPU time) and gpu_slowdown_ns (GPU time
 * under a slowdown reason). bench__cuda_analyze then leaves throttled samples out of the
 * estimate: those whose mean SM clock is below THROTTLE_FRACTION of the default SM clock
 * (nvbench's rule); docs/gpu.md. Under --trace each reading is handed on once (the kind's
 * readings hook), and the trace draws it as counters: clocks, temperature, power, throttling.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "probes/cuda.h"
#include "probes/cuda_backend.h"
#include "core/probe.h"
#include "core/result.h"
#include "probes/nvml.h"
#include "sys/clock.h"
#include "sys/context.h"

/*
 * The shortest sample of a CUDA benchmark, ns. CUDA events resolve about 0.5 us, and without the
 * blocking kernel a timed block also holds the gap between its start event and its first launch
 * (a few us of launch latency): 1 ms keeps both below 0.05% and 0.5% of a sample. With the
 * blocking kernel there is no gap, and a BENCH_ITER body puts a whole sample in one block, which
 * must fit in the launch queue: 0.25 ms (0.2% resolution).
 */
#define CUDA_MIN_SAMPLE_NS 1e6
#define CUDA_MIN_SAMPLE_BLOCKING_NS 2.5e5
/* GPU state is read at most this often, ns: clocks and power move over tens of milliseconds,
 * and a reading costs a few NVML calls. */
#define NVML_EVERY_NS 10000000
/* A sample whose mean SM clock is below this fraction of the default SM clock ran throttled
 * (nvbench's threshold). */
#define THROTTLE_FRACTION 0.75
/* The sides of a comparison ran at different clocks when their mean SM clocks differ by more
 * than this fraction. */
#define CLOCK_DIFFERENCE 0.02
/* Which GPU-state metrics the attached benchmark records (bits of cu.fields). */
enum { F_SM = 1, F_MEM = 2, F_ENERGY = 4, F_SLOWDOWN = 8 };

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
    unsigned blocks;          /* timed blocks begun in the attached benchmark's session */
    bool loading_decided;     /* CUDA_MODULE_LOADING looked at (before the first CUDA call) */
    bool loading_set;         /* ... and set to EAGER by the probe */
    /* NVML: opened once per process, at the first CUDA benchmark (or the context) */
    bool nvml_tried;
    bench__nvml *nvml;        /* NULL: unavailable, for the reason below */
    char nvml_reason[256];
    bench__gpu_clocks clocks; /* the device's reference clocks */
    unsigned locked_mhz;      /* SM clock this process locked (--gpu-lock-clocks); 0 none */
    int fields;               /* GPU-state metrics of the attached benchmark (F_*) */
    bench__gpu_state st;      /* the latest reading; -1 fields unknown */
    int64_t st_ns;            /* when it was read */
    int64_t st_given_ns;      /* the reading last handed to --trace (cuda_readings) */
    double temp_max;          /* highest temperature read for the attached benchmark, C */
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
    cu.loading_decided = false;
    cu.loading_set = false;
    bench__nvml_close(cu.nvml);
    cu.nvml = NULL;
    cu.nvml_tried = false;
}

/*
 * Before the first CUDA call of the process: eager module loading unless the user chose a mode.
 * CUDA reads the variable when it initialises, so later is too late (the context then says which
 * mode is in effect). Worker processes inherit it from the manager.
 */
static void decide_module_loading(void)
{
    if (cu.loading_decided)
        return;
    cu.loading_decided = true;
    if (ops()->cuda_runtime && !getenv("CUDA_MODULE_LOADING"))
        cu.loading_set = setenv("CUDA_MODULE_LOADING", "EAGER", 0) == 0;
}

static const bench__cuda_info *device_info(void)
{
    if (!cu.queried) {
        decide_module_loading();
        ops()->query(&cu.info);
        cu.queried = true;
    }
    return &cu.info;
}

/* NVML for device 0, opened once per process; NULL when unavailable (cu.nvml_reason says why). */
static bench__nvml *nvml(const bench__cuda_info *in)
{
    if (!cu.nvml_tried) {
        cu.nvml_tried = true;
        cu.clocks = (bench__gpu_clocks){-1, -1, -1};
        if (bench__nvml_open(&cu.nvml, in->pci_bus_id, cu.nvml_reason, sizeof cu.nvml_reason) ==
            0)
            bench__nvml_clocks(cu.nvml, &cu.clocks);
    }
    return cu.nvml;
}

/* The SM clock the throttle rule compares with, MHz: the locked one, else NVML's default
 * applications clock, else CUDA's peak clock; -1 unknown. */
static double reference_sm_mhz(const bench__cuda_info *in)
{
    if (cu.locked_mhz > 0)
        return cu.locked_mhz;
    if (cu.clocks.sm_default_mhz > 0)
        return cu.clocks.sm_default_mhz;
    return in->clock_khz > 0 ? in->clock_khz / 1000.0 : -1;
}

/* Takes a new reading of the GPU state; a field that cannot be read keeps its last value. */
static void read_state(int64_t now)
{
    bench__gpu_state t;
    bench__nvml_read(cu.nvml, &t);
    if (t.sm_clock_mhz > 0)
        cu.st.sm_clock_mhz = t.sm_clock_mhz;
    if (t.mem_clock_mhz > 0)
        cu.st.mem_clock_mhz = t.mem_clock_mhz;
    if (t.power_w >= 0)
        cu.st.power_w = t.power_w;
    if (t.reasons >= 0)
        cu.st.reasons = t.reasons;
    if (t.temperature_c >= 0) {
        cu.st.temperature_c = t.temperature_c;
        if (t.temperature_c > cu.temp_max)
            cu.temp_max = t.temperature_c;
    }
    cu.st_ns = now;
}

/*
 * Registers the GPU-state metrics that this device can give (a first reading tells which) and
 * the reference clock as a fact. Nothing without NVML. Before the session opens, so that a
 * failure to add a metric (r failed) leaves nothing to close.
 */
static void state_attach(bench__result *r, const bench__cuda_info *in)
{
    cu.fields = 0;
    cu.temp_max = -1;
    if (!nvml(in))
        return;
    cu.st = (bench__gpu_state){-1, -1, -1, -1, -1};
    read_state(bench__now_ns());
    static const struct {
        int bit;
        const char *name, *unit;
    } m[] = {
        {F_SM, "gpu_sm_cycles", "cycles"},
        {F_MEM, "gpu_mem_cycles", "cycles"},
        {F_ENERGY, "gpu_energy", "J"},
        {F_SLOWDOWN, "gpu_slowdown_ns", "ns"},
    };
    bool known[] = {cu.st.sm_clock_mhz > 0, cu.st.mem_clock_mhz > 0, cu.st.power_w >= 0,
                    cu.st.reasons >= 0};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (known[i] && bench__metric_add(r, m[i].name, m[i].unit, "nvml") >= 0)
            cu.fields |= m[i].bit;
    double ref = reference_sm_mhz(in);
    if (ref > 0 && (cu.fields & F_SM))
        bench__fact_add(r, "gpu_sm_clock_reference_mhz", "MHz", ref);
}

/* A CUDA error during the timed loop: fail the benchmark; the runner then ends its loop. */
static void broke(const char *msg)
{
    cu.broken = true;
    bench__result_fail(cu.r, "CUDA error: %s", msg);
}

/* Ends what an earlier benchmark left attached (the runner skipped its detach). */
static void drop_stale(void)
{
    cu.fields = 0;
    if (!cu.r)
        return;
    ops()->close(cu.s);
    ops()->range_pop();
    cu.s = NULL;
    cu.r = NULL;
}

static int cuda_attach(bench__probe *p, bench__result *r)
{
    p->min_sample_ns = 0;
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
        bench__result_fail(r, "CUDA error: %s", msg);
        return 1;
    }
    state_attach(r, in);
    if (r->status != BENCH__OK)
        return 1;
    bench__cuda_config cfg = {
        .l2_flush_bytes = 0,
        .blocking = d->cuda_blocking != 0,
        /* Longer than any timed block of this benchmark should take to enqueue. */
        .block_timeout_s = 2.0 + r->settings.warm_up_time + r->settings.measurement_time,
    };
    if (d->cuda_cold) {
        if (in->l2_bytes <= 0) {
            bench__result_fail(r, "cannot flush the GPU's L2 cache (.cuda_cold): its size is "
                                  "unknown");
            return 1;
        }
        cfg.l2_flush_bytes = (size_t)in->l2_bytes;
    }
    if (ops()->open(&cu.s, &cfg, msg, sizeof msg) != 0) {
        bench__result_fail(r, "CUDA error: %s", msg);
        return 1;
    }
    bench__fact_add(r, "gpu_mem_used_before_bytes", "B", before);
    ops()->range_push(r->inst->id);
    cu.r = r;
    cu.broken = false;
    cu.finished = false;
    cu.blocks = 0;
    /* The planner's shortest sample for this benchmark (see CUDA_MIN_SAMPLE_NS). */
    p->min_sample_ns = cfg.blocking ? CUDA_MIN_SAMPLE_BLOCKING_NS : CUDA_MIN_SAMPLE_NS;
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
    /* The first block does not hold the stream: under lazy module loading it loads the body's
     * kernels, which would otherwise wait behind the blocking kernel. It is a warm-up block in
     * the default plan. */
    int hold = cu.blocks > 0;
    cu.blocks++;
    if (ops()->begin(cu.s, hold, msg, sizeof msg) != 0)
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
    double ns = cu.broken ? 0.0 : cu.block_ns;
    values[0] = ns; /* the primary value: the block's GPU time, ns */
    *fraction = 1.0;
    if (!cu.fields)
        return;
    /* After the wall clock stopped: the reading is outside host_wall. */
    int64_t now = bench__now_ns();
    if (cu.r && !cu.broken && now - cu.st_ns >= NVML_EVERY_NS)
        read_state(now);
    size_t k = 1;
    if (cu.fields & F_SM)
        values[k++] = cu.st.sm_clock_mhz * ns * 1e-3; /* MHz x ns = 1e-3 cycles */
    if (cu.fields & F_MEM)
        values[k++] = cu.st.mem_clock_mhz * ns * 1e-3;
    if (cu.fields & F_ENERGY)
        values[k++] = cu.st.power_w * ns * 1e-9; /* W x s = J */
    if (cu.fields & F_SLOWDOWN)
        values[k++] = cu.st.reasons > 0 && (cu.st.reasons & BENCH__NVML_SLOWDOWN_REASONS) ? ns : 0;
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
        bench__result_fail(r, "CUDA error after the benchmark: %s", msg);
    if (cu.fields && cu.temp_max >= 0)
        bench__fact_add(r, "gpu_temperature_max_c", "C", cu.temp_max);
    cu.fields = 0;
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

/* ---- throttled samples, clocks of a comparison, clock locking ---- */

/* Mean of metric m over the samples, per ns of GPU time (sum of m / sum of time); -1 without. */
static double per_ns(const bench__metric *m, const double *totals_ns, size_t n)
{
    double a = 0, t = 0;
    for (size_t i = 0; m && i < n; i++) {
        a += m->totals[i];
        t += totals_ns[i];
    }
    return m && t > 0 ? a / t : -1;
}

/* Keeps the samples with keep[i] (in order) in every per-sample array of r; renumbers the
 * processes that still have samples. */
static void keep_samples(bench__result *r, const bool *keep)
{
    size_t n = r->nsamples, k = 0;
    uint32_t map[4096];
    bool renumber = r->process && r->processes <= sizeof map / sizeof map[0];
    if (renumber)
        for (unsigned j = 0; j < r->processes; j++)
            map[j] = UINT32_MAX;
    unsigned used = 0;
    r->total_iters = 0;
    for (size_t i = 0; i < n; i++) {
        if (!keep[i])
            continue;
        r->iters[k] = r->iters[i];
        r->totals_ns[k] = r->totals_ns[i];
        for (size_t m = 0; m < r->nmetrics; m++)
            r->metrics[m].totals[k] = r->metrics[m].totals[i];
        if (r->process) {
            uint32_t j = r->process[i];
            if (renumber && j < r->processes) {
                if (map[j] == UINT32_MAX)
                    map[j] = used++;
                j = map[j];
            }
            r->process[k] = j;
        }
        r->total_iters += (uint64_t)r->iters[k];
        k++;
    }
    r->nsamples = k;
    if (renumber)
        r->processes = used;
}

void bench__cuda_analyze(bench__result *r)
{
    const bench__metric *sm = bench__metric_find(r, "gpu_sm_cycles");
    size_t n = r->nsamples;
    if (!sm || n == 0 || bench__fact_find(r, "gpu_throttled_samples"))
        return; /* no GPU state, no samples, or done already */
    const bench__fact *ref = bench__fact_find(r, "gpu_sm_clock_reference_mhz");
    /* A lock set by this process (the manager) is the reference of every sample it gathered;
     * its workers, which did not lock, named the default clock. */
    double base = cu.locked_mhz > 0 ? (double)cu.locked_mhz : ref ? ref->value : -1;
    if (cu.locked_mhz > 0)
        bench__fact_add(r, "gpu_sm_clock_reference_mhz", "MHz", base);
    size_t throttled = 0;
    bool *keep = malloc(n * sizeof *keep);
    if (!keep)
        return;
    for (size_t i = 0; i < n; i++) {
        double mhz = r->totals_ns[i] > 0 ? 1e3 * sm->totals[i] / r->totals_ns[i] : -1;
        keep[i] = !(base > 0 && mhz >= 0 && mhz < THROTTLE_FRACTION * base);
        throttled += !keep[i];
    }
    /* Every sample throttled: nothing else to estimate from, so all stay, and the count says
     * so. */
    if (throttled > 0 && throttled < n)
        keep_samples(r, keep);
    free(keep);
    bench__fact_add(r, "gpu_throttled_samples", "samples", (double)throttled);
    if (base > 0)
        bench__fact_add(r, "gpu_sm_clock_threshold_mhz", "MHz", THROTTLE_FRACTION * base);
    static const struct {
        const char *metric, *fact, *unit;
        double scale;
    } means[] = {
        {"gpu_sm_cycles", "gpu_sm_clock_mhz", "MHz", 1e3},  /* cycles/ns x 1e3 = MHz */
        {"gpu_mem_cycles", "gpu_mem_clock_mhz", "MHz", 1e3},
        {"gpu_energy", "gpu_power_w", "W", 1e9},           /* J/ns x 1e9 = W */
    };
    for (size_t i = 0; i < sizeof means / sizeof means[0]; i++) {
        double v = per_ns(bench__metric_find(r, means[i].metric), r->totals_ns, r->nsamples);
        if (v >= 0)
            bench__fact_add(r, means[i].fact, means[i].unit, v * means[i].scale);
    }
}

/* The mean SM clock of a saved entry's samples, MHz; -1 without the metric. */
int bench__cuda_clock_note(const bench__result *r, double then, char *buf, size_t len)
{
    double now = per_ns(bench__metric_find(r, BENCH__GPU_SM_CYCLES), r->totals_ns, r->nsamples);
    if (!(now > 0) || !(then > 0))
        return 0;
    now *= 1e3;
    if (fabs(now / then - 1.0) <= CLOCK_DIFFERENCE)
        return 0;
    bench__msg(buf, len,
               "ran at a mean SM clock of %.0f MHz, the baseline at %.0f MHz (%+.1f%%): the "
               "comparison mixes GPU clocks (docs/gpu.md)",
               now, then, 100.0 * (now / then - 1.0));
    return 1;
}

int bench__cuda_lock_clocks(unsigned mhz, char *msg, size_t msglen)
{
    const bench__cuda_info *in = device_info();
    if (!in->available) {
        bench__msg(msg, msglen, "no usable GPU: %s", in->reason);
        return BENCH_EUNAVAIL;
    }
    bench__nvml *n = nvml(in);
    if (!n) {
        bench__msg(msg, msglen, "NVML is unavailable: %s", cu.nvml_reason);
        return BENCH_EUNAVAIL;
    }
    int rc = bench__nvml_lock_sm_clock(n, mhz, msg, msglen);
    if (rc == 0)
        cu.locked_mhz = mhz;
    return rc;
}

void bench__cuda_unlock_clocks(void)
{
    char msg[256];
    if (cu.locked_mhz == 0 || !cu.nvml)
        return;
    if (bench__nvml_unlock_sm_clock(cu.nvml, msg, sizeof msg) != 0)
        bench__errf("warning: the GPU's SM clock stays locked at %u MHz (%s); "
                    "'nvidia-smi -rgc' resets it\n", cu.locked_mhz, msg);
    cu.locked_mhz = 0;
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
    bench__msg(g->module_loading, sizeof g->module_loading, "%s",
               in->module_loading == BENCH__CUDA_LOADING_EAGER  ? "eager"
               : in->module_loading == BENCH__CUDA_LOADING_LAZY ? "lazy"
                                                                : "");
    g->module_loading_set = cu.loading_set;
    g->sm_clock_default_mhz = g->sm_clock_max_mhz = g->mem_clock_max_mhz = -1;
    g->sm_clock_locked_mhz = cu.locked_mhz > 0 ? (int)cu.locked_mhz : -1;
    if (!in->available) {
        bench__msg(g->nvml_reason, sizeof g->nvml_reason, "no usable GPU");
        return;
    }
    /* NVML is opened here in the manager too: its default clock is the run's context. */
    g->nvml_available = nvml(in) != NULL;
    bench__msg(g->nvml_reason, sizeof g->nvml_reason, "%s", cu.nvml ? "" : cu.nvml_reason);
    g->sm_clock_default_mhz = (int)cu.clocks.sm_default_mhz;
    g->sm_clock_max_mhz = (int)cu.clocks.sm_max_mhz;
    g->mem_clock_max_mhz = (int)cu.clocks.mem_max_mhz;
}

static int cuda_create(const char *arg, bench__probe **out, char *msg, size_t msglen)
{
    (void)arg;
    (void)msg;
    (void)msglen;
    *out = bench__cuda_probe();
    return 0;
}

/* The kind's compare_note: the saved rate is SM cycles per ns, the note's clock MHz. */
static int cuda_compare_note(const bench__result *r, double then_rate, char *buf, size_t len)
{
    return bench__cuda_clock_note(r, 1e3 * then_rate, buf, len);
}

/*
 * --trace's counters: the latest GPU state, once per reading (a reading is taken at attach and
 * then at most every NVML_EVERY_NS), only the fields the device answered. gpu_throttled is 1
 * when a clock event reason that slows the GPU down was set (BENCH__NVML_SLOWDOWN_REASONS).
 */
static size_t cuda_readings(bench__probe_reading *out, size_t max)
{
    if (!cu.r || !cu.nvml || cu.st_ns == cu.st_given_ns)
        return 0;
    cu.st_given_ns = cu.st_ns;
    const struct {
        const char *name;
        double value;
        bool known;
    } f[] = {
        {"gpu_sm_clock_mhz", cu.st.sm_clock_mhz, cu.st.sm_clock_mhz > 0},
        {"gpu_mem_clock_mhz", cu.st.mem_clock_mhz, cu.st.mem_clock_mhz > 0},
        {"gpu_temperature_c", cu.st.temperature_c, cu.st.temperature_c >= 0},
        {"gpu_power_w", cu.st.power_w, cu.st.power_w >= 0},
        {"gpu_throttled", (cu.st.reasons & BENCH__NVML_SLOWDOWN_REASONS) ? 1.0 : 0.0,
         cu.st.reasons >= 0},
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof f / sizeof f[0] && n < max; i++)
        if (f[i].known)
            out[n++] = (bench__probe_reading){f[i].name, f[i].value, cu.st_ns};
    return n;
}

BENCH__PROBE_KIND(cuda) = {.name = "cuda",
                           .always = true,
                           .create = cuda_create,
                           .analyze = bench__cuda_analyze,
                           .lock_clocks = bench__cuda_lock_clocks,
                           .unlock_clocks = bench__cuda_unlock_clocks,
                           .compare_note = cuda_compare_note,
                           .note_metric = BENCH__GPU_SM_CYCLES,
                           .readings = cuda_readings};
