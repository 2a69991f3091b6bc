/*
 * cuda_backend.cu: the CUDA backend of the CUDA layer (see cuda_backend.h), built with nvcc when
 * CMake finds CUDA. It times a timed block with two CUDA events on the benchmark's own stream,
 * optionally flushes the L2 cache first and holds the stream with a blocking kernel (nvbench's
 * recipe), and describes device 0 for the run context.
 *
 * Every CUDA call goes through CHECK, which turns a failure into a one-line message naming the
 * call and the CUDA error; nothing here aborts. cudart is linked statically and loads the driver
 * lazily, so on a machine without a driver the first call returns cudaErrorInsufficientDriver
 * (and cudaDriverGetVersion reports 0) instead of the program failing to start.
 *
 * It belongs to the CUDA component (libharness-cuda), not to the core library: cuda_component.c
 * hands these operations to the core when a program links the component.
 *
 * Lazy module loading (CUDA's default since 12.2) loads a kernel's module at its first launch,
 * and a load may wait for the device: behind a blocking kernel that holds the stream it waits
 * until the blocking kernel gives up. The probe sets CUDA_MODULE_LOADING=EAGER before the first
 * CUDA call unless the user chose a mode, and runs a blocking benchmark's first timed block
 * without holding the stream, so the body's kernels load there; a session loads its own kernels
 * (the blocking kernel, the L2 flush's memset) when it opens. query reports the mode in effect.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "probes/cuda_backend.h"

struct bench__cuda_session {
    cudaStream_t stream;
    cudaEvent_t start, stop;
    bool have_stream, have_start, have_stop;
    void *l2;                /* L2 scratch, l2_bytes long; NULL when hot */
    size_t l2_bytes;
    volatile int *flag;      /* host-mapped: [0] release, [1] the blocking kernel timed out */
    int *flag_dev;           /* the same two ints, as the device sees them */
    unsigned long long timeout_ns; /* blocking kernel's limit, ns */
    bool blocked;            /* a blocking kernel is queued and not yet released */
    int loading;             /* module loading in effect (BENCH__CUDA_LOADING_*) */
};

/* Writes "WHAT: error string (cudaErrorName)" and returns nonzero when err is not cudaSuccess. */
static int failed(cudaError_t err, const char *what, char *msg, size_t msglen)
{
    if (err == cudaSuccess)
        return 0;
    snprintf(msg, msglen, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
    return 1;
}

#define CHECK(call, what)                                                                          \
    do {                                                                                           \
        if (failed((call), (what), msg, msglen))                                                   \
            return -1;                                                                             \
    } while (0)

/* ---- the blocking kernel ---- */

__device__ static unsigned long long global_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/*
 * Spins until the host sets flag[0] (the timed block has been enqueued behind it) or the timeout
 * passes; then flag[1] records the timeout, so the host can tell that launch latency leaked into
 * the measurement (the block enqueued more than the launch queue holds, or the body waited for
 * the stream).
 */
__global__ void bench__cuda_block_stream(volatile int *flag, unsigned long long timeout_ns)
{
    unsigned long long t0 = global_ns();
    while (flag[0] == 0) {
        if (global_ns() - t0 > timeout_ns) {
            flag[1] = 1;
            return;
        }
    }
}

/* ---- device facts ---- */

/* The driver's module loading mode (cuModuleGetLoadingMode, through the runtime so that nothing
 * links libcuda); BENCH__CUDA_LOADING_UNKNOWN when the driver cannot say. Initialises CUDA. */
static int loading_mode(void)
{
    typedef int (*get_mode_fn)(int *); /* CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *) */
    get_mode_fn get = NULL;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuModuleGetLoadingMode", (void **)&get, 12000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess || !get) {
        (void)cudaGetLastError();
        return BENCH__CUDA_LOADING_UNKNOWN;
    }
    int mode = 0;
    if (get(&mode) != 0)
        return BENCH__CUDA_LOADING_UNKNOWN;
    return mode == BENCH__CUDA_LOADING_EAGER || mode == BENCH__CUDA_LOADING_LAZY
               ? mode
               : BENCH__CUDA_LOADING_UNKNOWN;
}

static void query(bench__cuda_info *info)
{
    memset(info, 0, sizeof *info);
    info->device_count = -1;
    info->cc_major = info->cc_minor = info->sm_count = -1;
    info->memory_bytes = -1;
    info->l2_bytes = info->bus_width_bits = info->clock_khz = info->memory_clock_khz = -1;
    info->driver_version = info->runtime_version = -1;

    int v = 0;
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        info->runtime_version = v;
    v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess)
        info->driver_version = v;
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* clear it: later calls report their own errors */
        const char *vis = getenv("CUDA_VISIBLE_DEVICES");
        if (info->driver_version == 0)
            snprintf(info->reason, sizeof info->reason,
                     "no CUDA driver: libcuda.so.1 could not be loaded (cudaGetDeviceCount: %s)",
                     cudaGetErrorName(err));
        else if (err == cudaErrorNoDevice)
            snprintf(info->reason, sizeof info->reason,
                     "no CUDA device (cudaGetDeviceCount: %s; CUDA_VISIBLE_DEVICES=%s)",
                     cudaGetErrorString(err), vis ? vis : "(unset)");
        else if (err == cudaErrorInsufficientDriver)
            snprintf(info->reason, sizeof info->reason,
                     "the CUDA driver (CUDA %d.%d) is older than the runtime built in "
                     "(CUDA %d.%d)",
                     info->driver_version / 1000, info->driver_version % 1000 / 10,
                     info->runtime_version / 1000, info->runtime_version % 1000 / 10);
        else
            snprintf(info->reason, sizeof info->reason, "cudaGetDeviceCount: %s (%s)",
                     cudaGetErrorString(err), cudaGetErrorName(err));
        return;
    }
    info->device_count = n;
    info->module_loading = loading_mode();
    if (n < 1) {
        snprintf(info->reason, sizeof info->reason, "no CUDA device (cudaGetDeviceCount: 0)");
        return;
    }
    cudaDeviceProp p;
    err = cudaGetDeviceProperties(&p, 0);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(info->reason, sizeof info->reason, "cudaGetDeviceProperties(0): %s (%s)",
                 cudaGetErrorString(err), cudaGetErrorName(err));
        return;
    }
    snprintf(info->name, sizeof info->name, "%s", p.name);
    snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "%04x:%02x:%02x.0", p.pciDomainID,
             p.pciBusID, p.pciDeviceID);
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    info->sm_count = p.multiProcessorCount;
    info->memory_bytes = (double)p.totalGlobalMem;
    info->l2_bytes = p.l2CacheSize;
    info->bus_width_bits = p.memoryBusWidth;
    /* CUDA 13 removed the clock fields from cudaDeviceProp: ask for the attributes. */
    if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, 0) == cudaSuccess)
        info->clock_khz = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, 0) == cudaSuccess)
        info->memory_clock_khz = v;
    int mode = cudaComputeModeDefault;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrComputeMode, 0) == cudaSuccess)
        mode = v;
    (void)cudaGetLastError();
    if (mode == cudaComputeModeProhibited) {
        snprintf(info->reason, sizeof info->reason,
                 "CUDA device 0 (%.180s) is in compute mode 'prohibited'", p.name);
        return;
    }
    info->available = 1;
}

static int mem_used(double *bytes, char *msg, size_t msglen)
{
    size_t free_b = 0, total_b = 0;
    *bytes = -1;
    CHECK(cudaSetDevice(0), "cudaSetDevice(0)");
    CHECK(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    *bytes = (double)(total_b - free_b);
    return 0;
}

/* ---- sessions ---- */

static void session_close(bench__cuda_session *s)
{
    if (!s)
        return;
    if (s->flag)
        s->flag[0] = 1; /* let a blocking kernel still queued finish */
    if (s->have_stream)
        (void)cudaStreamSynchronize(s->stream);
    if (s->have_start)
        (void)cudaEventDestroy(s->start);
    if (s->have_stop)
        (void)cudaEventDestroy(s->stop);
    if (s->have_stream)
        (void)cudaStreamDestroy(s->stream);
    if (s->l2)
        (void)cudaFree(s->l2);
    if (s->flag)
        (void)cudaFreeHost((void *)s->flag);
    (void)cudaGetLastError(); /* errors while tearing down are not the next benchmark's */
    free(s);
}

static int session_setup(bench__cuda_session *s, const bench__cuda_config *cfg, char *msg,
                         size_t msglen)
{
    CHECK(cudaSetDevice(0), "cudaSetDevice(0)");
    CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    s->have_stream = true;
    CHECK(cudaEventCreate(&s->start), "cudaEventCreate");
    s->have_start = true;
    CHECK(cudaEventCreate(&s->stop), "cudaEventCreate");
    s->have_stop = true;
    if (cfg->l2_flush_bytes > 0) {
        /* One scratch buffer for the whole benchmark: no allocation per sample. */
        CHECK(cudaMalloc(&s->l2, cfg->l2_flush_bytes), "cudaMalloc (L2 flush buffer)");
        s->l2_bytes = cfg->l2_flush_bytes;
    }
    if (cfg->blocking) {
        void *h = NULL, *d = NULL;
        CHECK(cudaHostAlloc(&h, 2 * sizeof(int), cudaHostAllocMapped),
              "cudaHostAlloc (blocking kernel's flag)");
        s->flag = (volatile int *)h;
        s->flag[0] = 1;
        s->flag[1] = 0;
        CHECK(cudaHostGetDevicePointer(&d, h, 0), "cudaHostGetDevicePointer");
        s->flag_dev = (int *)d;
        double t = cfg->block_timeout_s > 0 ? cfg->block_timeout_s : 10.0;
        s->timeout_ns = (unsigned long long)(t * 1e9);
    }
    s->loading = loading_mode();
    /* Load the session's own kernels now, while nothing holds the stream: cudaFuncGetAttributes
     * loads a kernel under lazy loading, and a released blocking kernel and one flush run each
     * path once. */
    if (s->flag) {
        cudaFuncAttributes attr;
        CHECK(cudaFuncGetAttributes(&attr, bench__cuda_block_stream),
              "loading the blocking kernel (cudaFuncGetAttributes)");
        bench__cuda_block_stream<<<1, 1, 0, s->stream>>>(s->flag_dev, s->timeout_ns);
        CHECK(cudaGetLastError(), "launching the blocking kernel (released)");
    }
    if (s->l2)
        CHECK(cudaMemsetAsync(s->l2, 0, s->l2_bytes, s->stream), "cudaMemsetAsync (L2 flush)");
    CHECK(cudaStreamSynchronize(s->stream), "loading the session's kernels (cudaStreamSynchronize)");
    return 0;
}

static int session_open(bench__cuda_session **out, const bench__cuda_config *cfg, char *msg,
                        size_t msglen)
{
    *out = NULL;
    bench__cuda_session *s = (bench__cuda_session *)calloc(1, sizeof *s);
    if (!s) {
        snprintf(msg, msglen, "out of memory for a CUDA session");
        return -1;
    }
    if (session_setup(s, cfg, msg, msglen) != 0) {
        session_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

static void *session_stream(bench__cuda_session *s)
{
    return s ? (void *)s->stream : NULL;
}

static int session_begin(bench__cuda_session *s, int hold, char *msg, size_t msglen)
{
    /* An error left by the body's untimed code (its own launches) is reported as such. */
    CHECK(cudaGetLastError(), "a CUDA call of the benchmark before its timed block");
    if (s->l2) /* Cold: evict the benchmark's data from L2 by writing the scratch buffer. */
        CHECK(cudaMemsetAsync(s->l2, 0, s->l2_bytes, s->stream), "cudaMemsetAsync (L2 flush)");
    if (s->flag && hold) {
        /* The blocking kernel holds the stream while the block enqueues: the GPU then runs the
         * block's launches back to back, and host launch latency stays out of the events. */
        s->flag[0] = 0;
        s->flag[1] = 0;
        bench__cuda_block_stream<<<1, 1, 0, s->stream>>>(s->flag_dev, s->timeout_ns);
        s->blocked = true;
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess) {
            s->flag[0] = 1;
            s->blocked = false;
            failed(err, "launching the blocking kernel", msg, msglen);
            return -1;
        }
    }
    /* Last action: the start event is the first thing on the stream after the set-up work. */
    CHECK(cudaEventRecord(s->start, s->stream), "cudaEventRecord (start)");
    return 0;
}

static int session_finish(bench__cuda_session *s, double *gpu_ns, char *msg, size_t msglen)
{
    *gpu_ns = 0;
    /* First action: the stop event follows the block's last launch on the stream. */
    cudaError_t rec = cudaEventRecord(s->stop, s->stream);
    if (s->blocked) {
        /* Release only now that the whole block (and the stop event) is queued. */
        __atomic_store_n((int *)s->flag, 1, __ATOMIC_RELEASE);
        s->blocked = false;
    }
    CHECK(rec, "cudaEventRecord (stop)");
    CHECK(cudaEventSynchronize(s->stop), "waiting for the timed block (cudaEventSynchronize)");
    CHECK(cudaGetLastError(), "a launch in the timed block");
    if (s->flag && s->flag[1]) {
        const char *env = getenv("CUDA_MODULE_LOADING");
        if (s->loading == BENCH__CUDA_LOADING_LAZY)
            snprintf(msg, msglen,
                     "the blocking kernel timed out after %.1f s: CUDA lazy module loading is on "
                     "(CUDA_MODULE_LOADING=%s), and a kernel launched for the first time in a "
                     "timed block waits for the device, which the blocking kernel holds: unset "
                     "CUDA_MODULE_LOADING (the harness then loads eagerly) or set it to EAGER, "
                     "and launch every kernel in the benchmark's first timed block; else the "
                     "block enqueued more work than the launch queue holds, or waited for the "
                     "stream",
                     (double)s->timeout_ns / 1e9, env ? env : "unset, the driver's default");
        else
            snprintf(msg, msglen,
                     "the blocking kernel timed out after %.1f s: the timed block enqueued more "
                     "work than the launch queue holds, or waited for the stream (not allowed "
                     "with .cuda_blocking); use BENCH_CUDA_ITER with a smaller batch",
                     (double)s->timeout_ns / 1e9);
        return -1;
    }
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, s->start, s->stop), "cudaEventElapsedTime");
    *gpu_ns = (double)ms * 1e6;
    return 0;
}

static void range_push(const char *name)
{
    nvtxRangePushA(name);
}

static void range_pop(void)
{
    nvtxRangePop();
}

extern "C" const bench__cuda_ops *bench__cuda_ops_cuda(void)
{
    static const bench__cuda_ops ops = {
        1, query, mem_used, session_open, session_close, session_stream,
        session_begin, session_finish, range_push, range_pop,
    };
    return &ops;
}
