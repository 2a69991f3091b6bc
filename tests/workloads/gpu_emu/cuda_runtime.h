/*
 * gpu_emu/cuda_runtime.h: a CPU emulation of the part of CUDA that wl_gpu_similarity.cu uses, so
 * its kernels run (slowly) and are tested on machines without a GPU: ctest
 * workloads/gpu_similarity_emulated compiles the .cu file as C++ with this header first on the
 * include path and runs tests/workloads/test_gpu_similarity.c against it.
 *
 * Model: every CUDA thread of a block is a cooperative user-level thread (started with ucontext,
 * switched with _setjmp/_longjmp, which makes no system call) with its own stack; blocks run one after another, so `__shared__` can be a function-local static. A thread
 * runs until it reaches __syncthreads or a warp shuffle, then yields; the scheduler resumes a
 * thread only when every live thread of its block (for __syncthreads) or of its warp (for a
 * shuffle) has reached the same point, which is exactly the barrier semantics the kernels rely
 * on, and a kernel that would deadlock on a GPU aborts here. Memory is host memory; "device"
 * pointers are malloc'd; streams and events do not exist (everything is synchronous). What this
 * cannot show: speed, the GPU's memory model beyond barriers, and floating-point details of the
 * GPU's own arithmetic (fmaf here is the C library's, also fused and correctly rounded).
 */
#ifndef WL_GPU_EMU_CUDA_RUNTIME_H
#define WL_GPU_EMU_CUDA_RUNTIME_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <vector>

#include <setjmp.h>
#include <ucontext.h>

using std::min;

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct emu_uint3 {
    unsigned x, y, z;
};
struct float4 {
    float x, y, z, w;
};

extern emu_uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static /* one block at a time: a static is the block's shared memory */
#define __align__(n) __attribute__((aligned(n)))

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
typedef void *cudaStream_t;
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };

inline const char *cudaGetErrorString(cudaError_t) { return "emulated CUDA error"; }
inline const char *cudaGetErrorName(cudaError_t) { return "cudaErrorEmulated"; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaDriverGetVersion(int *v) { *v = 13000; return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr, int) { *v = 2; return 0; }
/* Resident blocks per SM: $WL_GPU_EMU_BLOCKS_PER_SM, default 1. More make the emulated GPU's
 * grid of resident blocks larger, so that small searches split D as a big GPU's do. */
template <typename K>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, K, int, size_t)
{
    const char *v = getenv("WL_GPU_EMU_BLOCKS_PER_SM");
    *n = v && atoi(v) > 0 ? atoi(v) : 1;
    return cudaSuccess;
}
inline cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = malloc(bytes);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind)
{
    memcpy(d, s, n);
    return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k,
                                   cudaStream_t)
{
    return cudaMemcpy(d, s, n, k);
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

/* ---- cooperative threads ---- */

enum emu_wait { EMU_RUN, EMU_BLOCK, EMU_WARP };

struct emu_thread {
    ucontext_t ctx;       /* how the thread starts (and, under ASan, how it switches) */
    jmp_buf jb;           /* where it resumes: switching by _longjmp skips swapcontext's syscall */
    bool started;
    emu_uint3 tid;
    bool done;
    long block_syncs; /* __syncthreads reached */
    long warp_syncs;  /* warp barriers reached (two per shuffle) */
    emu_wait wait;
};

struct emu_state {
    std::vector<emu_thread> th;
    unsigned nt;
    unsigned cur;
    ucontext_t sched;
    jmp_buf sched_jb;
    float fbuf[1024];     /* shuffle exchange, one slot per thread */
    uint32_t ubuf[1024];
    void (*body)(void);   /* runs the kernel with its arguments */
};
extern emu_state emu;

/* Whether thread i may resume: every live thread of its group has reached its barrier. */
bool emu_ready(unsigned i);
/* Runs every block of a launch; entry() runs emu.body for the current thread. */
void emu_run_blocks(dim3 grid, dim3 block);

/* Back to the scheduler; returns when the scheduler resumes this thread. */
void emu_switch_to_scheduler(emu_thread &t);

inline void emu_yield(emu_wait kind)
{
    emu_thread &t = emu.th[emu.cur];
    if (kind == EMU_BLOCK)
        t.block_syncs++;
    else
        t.warp_syncs++;
    t.wait = kind;
    emu_switch_to_scheduler(t);
}

inline void __syncthreads() { emu_yield(EMU_BLOCK); }

template <typename T> T emu_shfl_down(T *buf, T v, int off)
{
    unsigned lane = threadIdx.x % 32, base = threadIdx.x - lane;
    buf[threadIdx.x] = v;
    emu_yield(EMU_WARP); /* every lane has written */
    T r = lane + off < 32 && base + lane + off < emu.nt ? buf[base + lane + off] : v;
    emu_yield(EMU_WARP); /* every lane has read */
    return r;
}
inline float __shfl_down_sync(unsigned, float v, int off) { return emu_shfl_down(emu.fbuf, v, off); }
inline uint32_t __shfl_down_sync(unsigned, uint32_t v, int off)
{
    return emu_shfl_down(emu.ubuf, v, off);
}

template <typename K, typename Tuple> struct emu_call {
    static K kernel;
    static Tuple *args;
    static void run() { std::apply(kernel, *args); }
};
template <typename K, typename Tuple> K emu_call<K, Tuple>::kernel;
template <typename K, typename Tuple> Tuple *emu_call<K, Tuple>::args;

template <typename K, typename... A> void emu_launch(K kernel, dim3 grid, dim3 block, A... args)
{
    std::tuple<A...> tuple(args...);
    emu_call<K, std::tuple<A...>>::kernel = kernel;
    emu_call<K, std::tuple<A...>>::args = &tuple;
    emu.body = &emu_call<K, std::tuple<A...>>::run;
    emu_run_blocks(grid, block);
}

/* wl_gpu_similarity.cu launches through WL_LAUNCH. */
#define WL_LAUNCH(kernel, grid, block, stream, ...) emu_launch(kernel, grid, block, __VA_ARGS__)

#endif /* WL_GPU_EMU_CUDA_RUNTIME_H */
