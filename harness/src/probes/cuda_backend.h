/*
 * cuda_backend.h: the CUDA runtime calls of the CUDA layer, behind plain C types.
 *
 * Only .cu files include CUDA headers. The probe (cuda.c, plain C) decides what happens to a
 * benchmark (attach, skip, fail, facts); a backend does the GPU work: cuda_backend.cu (nvcc, in
 * the CUDA component libharness-cuda, built when CMake finds CUDA) or cuda_none.c (its twin in the
 * core library, where every device is "unavailable"). The core uses the none backend unless the
 * program links the CUDA component, whose constructor registers the real one
 * (bench__cuda_register; docs/gpu.md says what a program links). Tests swap in a fake backend
 * with bench__cuda_set_ops. This header is C and C++.
 *
 * Invariant of a session: between begin and finish exactly one timed block runs; finish always
 * releases the blocking kernel (even when a call fails), so a failure never leaves the GPU
 * spinning. A session loads the kernels it launches itself (the blocking kernel, the L2 flush)
 * when it opens, so that neither waits for a module load while the stream is held.
 */
#ifndef HARNESS_CUDA_BACKEND_H
#define HARNESS_CUDA_BACKEND_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a backend knows about CUDA device 0; -1 or "" where unknown. */
typedef struct bench__cuda_info {
    int available;          /* 1: CUDA benchmarks can run on device 0 */
    char reason[256];       /* why not, when !available */
    int device_count;       /* devices visible */
    char name[256];
    char pci_bus_id[32];
    int cc_major, cc_minor; /* compute capability */
    int sm_count;
    double memory_bytes;    /* global memory, bytes */
    int l2_bytes;           /* L2 cache, bytes */
    int bus_width_bits;     /* memory bus width, bits */
    int clock_khz;          /* peak SM clock, kHz */
    int memory_clock_khz;   /* peak memory clock, kHz */
    int driver_version;     /* CUDA version of the driver, 1000*major + 10*minor; 0: no driver */
    int runtime_version;    /* CUDA runtime built in, same encoding; -1: built without CUDA */
    int module_loading;     /* CUDA module loading in effect: 1 eager, 2 lazy, 0 unknown */
} bench__cuda_info;

/** Values of bench__cuda_info.module_loading (CUmoduleLoadingMode's). */
enum { BENCH__CUDA_LOADING_UNKNOWN = 0, BENCH__CUDA_LOADING_EAGER = 1, BENCH__CUDA_LOADING_LAZY = 2 };

/** One CUDA benchmark's resources: its stream, two events, L2 scratch, blocking flag. */
typedef struct bench__cuda_session bench__cuda_session;

/** Settings of a session. */
typedef struct bench__cuda_config {
    size_t l2_flush_bytes; /* 0: hot (no flush); else the scratch buffer memset before a block */
    int blocking;          /* launch the blocking kernel before every timed block */
    double block_timeout_s; /* the blocking kernel gives up after this many seconds, s */
} bench__cuda_config;

/*
 * The backend. Functions that can fail return 0, or nonzero with a one-line reason (naming the
 * CUDA call and the CUDA error) in msg.
 */
typedef struct bench__cuda_ops {
    /* 1: the backend calls the CUDA runtime, which reads CUDA_MODULE_LOADING when it first
     * initialises; the probe sets that variable (docs/gpu.md) before the backend's first call. */
    int cuda_runtime;
    /* Facts about device 0 into *info. Never fails: an unusable device is info->available 0. */
    void (*query)(bench__cuda_info *info);
    /* Device-wide memory in use (total - free), bytes. Creates the CUDA context if needed. */
    int (*mem_used)(double *bytes, char *msg, size_t msglen);
    /* Creates a session on device 0. *out is NULL on failure. */
    int (*open)(bench__cuda_session **out, const bench__cuda_config *cfg, char *msg,
                size_t msglen);
    /* Releases a session (NULL: no-op); reports nothing. */
    void (*close)(bench__cuda_session *s);
    /* The session's cudaStream_t. */
    void *(*stream)(bench__cuda_session *s);
    /* Before a timed block: [L2 flush] [blocking kernel, when the session blocks and hold is
     * 1] start event, all on the stream. */
    int (*begin)(bench__cuda_session *s, int hold, char *msg, size_t msglen);
    /* After a timed block: stop event, release the blocking kernel, wait for the stop event,
     * check for errors of the block's launches; *gpu_ns gets the GPU time between the events. */
    int (*finish)(bench__cuda_session *s, double *gpu_ns, char *msg, size_t msglen);
    /* NVTX range around a benchmark, for Nsight timelines (no-ops without CUDA). */
    void (*range_push)(const char *name);
    void (*range_pop)(void);
} bench__cuda_ops;

/** The backend of this program: the registered one (CUDA component), else none (cuda_none.c). */
const bench__cuda_ops *bench__cuda_ops_default(void);

/** The backend of cuda_backend.cu (CUDA component only). Static storage. */
const bench__cuda_ops *bench__cuda_ops_cuda(void);

/**
 * Makes ops the default backend; feature is the text `bench --version` shows for it ("CUDA 13.0
 * (architectures ...)"). Both must have static storage. Called by the CUDA component's
 * constructor, before main(); the last call wins.
 */
/* Called by the CUDA component: exported beside the public API (BENCH__COMPONENT_API). */
__attribute__((visibility("default"))) void bench__cuda_register(const bench__cuda_ops *ops,
                                                                 const char *feature);

/** The `bench --version` text of the CUDA layer: "CUDA events: ...". Static storage. */
const char *bench__cuda_feature(void);

/**
 * Defined by the CUDA component only. Its link flags (harness-cuda.pc, harness::cuda) name it as
 * undefined (-Wl,--undefined=bench__cuda_component), which pulls the component's registering
 * object out of a static archive that nothing else refers to.
 */
extern const int bench__cuda_component;

#ifdef __cplusplus
}
#endif

#endif /* HARNESS_CUDA_BACKEND_H */
