/*
 * wl_gpu_similarity.cu: batched top-k cosine similarity on a CUDA GPU (wl_gpu.h).
 *
 * A search is three or four kernels on the caller's stream:
 *   1. query_norms: |q| per query, one warp each (a shuffle reduction).
 *   2. dots_kernel (the default, WL_GPU_SCORES_BLOCKED): every dot product q . c, tiled like a
 *      GEMM (S = Q x C^T). A block of 128 threads computes a 64-query x 128-candidate tile over
 *      one split of D: 16-float slices of the queries and candidates are staged in shared memory
 *      (k-major, two buffers, so one barrier per slice), each thread keeps an 8 x 8 block of
 *      dot products in registers and reads its operands as float4s, and the next slices are
 *      loaded from global memory (float4s along D) while this one is multiplied. The number of
 *      splits of D (split-K) is chosen per search so that the grid fills the GPU's resident
 *      blocks in whole waves: a 64-query batch over 10,000 candidates is only 79 tiles, fewer
 *      than the SMs, and is split six ways. Each split writes its partial dot products.
 *      Or (WL_GPU_SCORES_SIMPLE, the first kernel, kept for comparison) scores_kernel: 64 x 64
 *      tiles, 32-float slices, 4 x 4 outputs per thread from scalar shared-memory reads, whose
 *      epilogue writes the cosines directly.
 *   3. topk_partial: for each query and slice of candidates, a block adds the splits' partial
 *      dot products in split order, divides by |q| |c| with the CPU's rules (score 0 for a zero
 *      denominator or a NaN quotient), keeps a sorted top-k list per thread, then merges the
 *      lists with k rounds of a block-wide "best head" reduction.
 *   4. topk_merge (when there is more than one slice): the same merge over the slices' lists.
 * The ranking is the CPU's total order (score descending, then id ascending). Every launch is
 * followed by cudaGetLastError; every CUDA call is checked and its error kept in the object.
 * Accumulation order is fixed by the code and the split count by the sizes and the GPU, so
 * results are deterministic for a given GPU and build.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "workloads/wl_error.h"
#include "workloads/wl_gpu.h"

/* Every launch goes through this macro, so that tests/workloads/gpu_emu can compile this file as
 * C++ and run the kernels on the CPU (its cuda_runtime.h defines WL_LAUNCH first). */
#ifndef WL_LAUNCH
#define WL_LAUNCH(kernel, grid, block, stream, ...)                                                \
    kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#endif

/* Score tiles: BM queries x BN candidates per block, BK floats of D per step, TM x TN per thread. */
#define BM 64
#define BN 64
#define BK 32
#define TM 4
#define TN 4
#define TX (BN / TN)      /* threads along candidates */
#define TY (BM / TM)      /* threads along queries */
#define THREADS (TX * TY) /* 256 */
#define LOAD_ROWS (THREADS / BK) /* rows a block's threads load per pass: 8 */

/* The register-blocked dot products: RB_BM queries x RB_BN candidates per block, RB_BK floats of
 * D per slice, RB_TM x RB_TN per thread; rows padded by RB_PAD floats (keeps float4 alignment,
 * halves the bank conflicts of the transposing stores). */
#define RB_BM 64
#define RB_BN 128
#define RB_BK 16
#define RB_TM 8
#define RB_TN 8
#define RB_TX (RB_BN / RB_TN)         /* 16 threads along candidates */
#define RB_TY (RB_BM / RB_TM)         /* 8 threads along queries */
#define RB_THREADS (RB_TX * RB_TY)    /* 128 */
#define RB_PAD 4
#define RB_LOAD_ROWS (RB_THREADS / 4) /* rows loaded per pass: 4 threads x float4 per row */
#define RB_MIN_SLICES 4               /* a split of D spans at least this many slices */
#define RB_MAX_SPLITS 16

#define TOPK_THREADS 128
#define TOPK_SLICE 4096     /* candidates per top-k block, when the queries fill the GPU */
#define TOPK_MIN_SLICE 1024 /* ... and at least, when they do not */
#define TOPK_BLOCKS_PER_SM 4 /* top-k blocks wanted per SM (one block per query and slice) */
#define PROBE_THREADS 256

struct wl_gpu_similarity {
    int n, d;           /* candidates, dimension */
    int k;              /* results per query */
    int max_q, q;       /* room for queries, queries set */
    int parts;          /* top-k slices per query */
    int slice;          /* candidates per slice */
    int probe_blocks;   /* blocks of the read probe */
    int kernel;         /* WL_GPU_SCORES_* */
    int slots;          /* blocks of dots_kernel the GPU holds at once (SMs x occupancy) */
    int max_splits;     /* splits of D the scores buffer has room for */
    float *cand;        /* device: n x d */
    float *cnorm;       /* device: n */
    float *query;       /* device: max_q x d */
    float *qnorm;       /* device: max_q */
    float *scores;      /* device: max_splits x max_q x n partial dot products (or cosines) */
    wl_hit *part;       /* device: max_q x parts x k (when parts > 1) */
    wl_hit *out;        /* device: max_q x k */
    float *probe_out;   /* device: probe_blocks */
    char err[256];      /* the last error's detail */
};

/* ---- errors ---- */

/* Records "WHAT: CUDA error text (name)" in buf; returns the wl error code for err (0 if none). */
static int cuda_err(cudaError_t err, const char *what, char *buf, size_t len)
{
    if (err == cudaSuccess)
        return 0;
    if (buf && len)
        snprintf(buf, len, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
    (void)cudaGetLastError();
    return err == cudaErrorMemoryAllocation ? WL_E_NOMEM : WL_E_UNAVAILABLE;
}

#define CHECK_S(s, call, what)                                                                     \
    do {                                                                                           \
        int rc_ = cuda_err((call), (what), (s)->err, sizeof (s)->err);                             \
        if (rc_ != 0)                                                                              \
            return rc_;                                                                            \
    } while (0)

static void set_msg(char *msg, size_t len, const char *text)
{
    if (msg && len)
        snprintf(msg, len, "%s", text);
}

/* ---- kernels ---- */

__device__ __forceinline__ bool better(float s1, uint32_t i1, float s2, uint32_t i2)
{
    return s1 > s2 || (s1 == s2 && i1 < i2);
}

/* The best (score, id) of the warp's 32 lanes, in lane 0 (a shuffle reduction by `better`). */
__device__ __forceinline__ void warp_best(float *s, uint32_t *id)
{
    for (int off = 16; off > 0; off >>= 1) {
        float s2 = __shfl_down_sync(0xffffffffu, *s, off);
        uint32_t i2 = __shfl_down_sync(0xffffffffu, *id, off);
        if (better(s2, i2, *s, *id)) {
            *s = s2;
            *id = i2;
        }
    }
}

/* |q| of each query: one warp per query. */
__global__ void query_norms(const float *__restrict__ q, int d, int nq, float *__restrict__ qn)
{
    int warp = (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32), lane = threadIdx.x % 32;
    if (warp >= nq)
        return; /* the whole warp leaves together */
    const float *row = q + (size_t)warp * (size_t)d;
    float s = 0.0f;
    for (int j = lane; j < d; j += 32)
        s = fmaf(row[j], row[j], s);
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0)
        qn[warp] = sqrtf(s);
}

/* Cosine scores of a BM x BN tile (see the top of the file). */
__global__ void __launch_bounds__(THREADS)
    scores_kernel(const float *__restrict__ qm, const float *__restrict__ qn, int nq,
                  const float *__restrict__ cm, const float *__restrict__ cn, int n, int d,
                  float *__restrict__ out)
{
    /* Transposed slices, [k][row]; +1 keeps the column stores free of bank conflicts. */
    __shared__ float as[BK][BM + 1];
    __shared__ float bs[BK][BN + 1];
    int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
    int lane = tid % BK, lrow = tid / BK; /* loader: a warp reads 32 consecutive floats of a row */
    int n0 = blockIdx.x * BN, q0 = blockIdx.y * BM;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            acc[i][j] = 0.0f;
    float ra[BM / LOAD_ROWS], rb[BN / LOAD_ROWS]; /* the next slices, prefetched */

#define LOAD_SLICES(k0)                                                                            \
    do {                                                                                           \
        int col_ = (k0) + lane;                                                                    \
        _Pragma("unroll") for (int m = 0; m < BM / LOAD_ROWS; m++)                                 \
        {                                                                                          \
            int r_ = q0 + lrow + LOAD_ROWS * m;                                                    \
            ra[m] = (r_ < nq && col_ < d) ? qm[(size_t)r_ * (size_t)d + col_] : 0.0f;              \
        }                                                                                          \
        _Pragma("unroll") for (int m = 0; m < BN / LOAD_ROWS; m++)                                 \
        {                                                                                          \
            int r_ = n0 + lrow + LOAD_ROWS * m;                                                    \
            rb[m] = (r_ < n && col_ < d) ? cm[(size_t)r_ * (size_t)d + col_] : 0.0f;               \
        }                                                                                          \
    } while (0)

    if (d > 0)
        LOAD_SLICES(0);
    for (int k0 = 0; k0 < d; k0 += BK) {
#pragma unroll
        for (int m = 0; m < BM / LOAD_ROWS; m++)
            as[lane][lrow + LOAD_ROWS * m] = ra[m];
#pragma unroll
        for (int m = 0; m < BN / LOAD_ROWS; m++)
            bs[lane][lrow + LOAD_ROWS * m] = rb[m];
        __syncthreads();
        if (k0 + BK < d)
            LOAD_SLICES(k0 + BK); /* in flight while this slice is multiplied */
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++)
                a[i] = as[kk][ty + TY * i];
#pragma unroll
            for (int j = 0; j < TN; j++)
                b[j] = bs[kk][tx + TX * j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#undef LOAD_SLICES

#pragma unroll
    for (int i = 0; i < TM; i++) {
        int q = q0 + ty + TY * i;
        if (q >= nq)
            continue;
        float qq = qn[q];
#pragma unroll
        for (int j = 0; j < TN; j++) {
            int c = n0 + tx + TX * j;
            if (c >= n)
                continue;
            /* The CPU's rule: 0 for a zero denominator or a NaN quotient. */
            float den = qq * cn[c];
            float s = den == 0.0f ? 0.0f : acc[i][j] / den;
            out[(size_t)q * (size_t)n + c] = isnan(s) ? 0.0f : s;
        }
    }
}

/* Four floats of row `row` (of `rows`) from column `col` (of `ncols`, the row length; the split
 * ends at `end`), zeros outside; one float4 load when `vec` (ncols % 4 == 0, so every row starts
 * 16-byte aligned, and col % 4 == 0). */
__device__ __forceinline__ float4 load4(const float *__restrict__ m, int row, int rows, int col,
                                        int end, int ncols, bool vec)
{
    float4 v;
    v.x = v.y = v.z = v.w = 0.0f;
    if (row >= rows)
        return v;
    const float *p = m + (size_t)row * (size_t)ncols + col;
    if (vec && col + 3 < end)
        return *reinterpret_cast<const float4 *>(p);
    if (col < end)
        v.x = p[0];
    if (col + 1 < end)
        v.y = p[1];
    if (col + 2 < end)
        v.z = p[2];
    if (col + 3 < end)
        v.w = p[3];
    return v;
}

/*
 * Partial dot products of a RB_BM x RB_BN tile over D[k0, k0 + kspan), split blockIdx.z (see the
 * top of the file): out[(split x nq + q) x n + c]. Thread (tx, ty) owns queries ty*4 + {0..3} and
 * 32 + ty*4 + {0..3}, candidates tx*4 + {0..3} and 64 + tx*4 + {0..3}, so that a warp's operand
 * reads are two broadcast float4s (queries) and 16 consecutive float4s (candidates).
 */
__global__ void __launch_bounds__(RB_THREADS)
    dots_kernel(const float *__restrict__ qm, int nq, const float *__restrict__ cm, int n, int d,
                int kspan, float *__restrict__ out)
{
    /* k-major slices, [buffer][k][row]: a thread's operands for one k are adjacent. */
    __shared__ __align__(16) float as[2][RB_BK][RB_BM + RB_PAD];
    __shared__ __align__(16) float bs[2][RB_BK][RB_BN + RB_PAD];
    int tid = threadIdx.x, tx = tid % RB_TX, ty = tid / RB_TX;
    int lrow = tid / 4, lcol = (tid % 4) * 4; /* loader: 4 threads read a row's 16 floats */
    int n0 = blockIdx.x * RB_BN, q0 = blockIdx.y * RB_BM;
    int k0 = blockIdx.z * kspan, k1 = min(d, k0 + kspan);
    int slices = k1 > k0 ? (k1 - k0 + RB_BK - 1) / RB_BK : 0;
    bool vec = d % 4 == 0;
    float acc[RB_TM][RB_TN];
#pragma unroll
    for (int i = 0; i < RB_TM; i++)
#pragma unroll
        for (int j = 0; j < RB_TN; j++)
            acc[i][j] = 0.0f;
    float4 ra[RB_BM / RB_LOAD_ROWS], rb[RB_BN / RB_LOAD_ROWS]; /* the next slices */

#define RB_LOAD(kb)                                                                                \
    do {                                                                                           \
        _Pragma("unroll") for (int m = 0; m < RB_BM / RB_LOAD_ROWS; m++) ra[m] =                   \
            load4(qm, q0 + lrow + RB_LOAD_ROWS * m, nq, (kb) + lcol, k1, d, vec);                  \
        _Pragma("unroll") for (int m = 0; m < RB_BN / RB_LOAD_ROWS; m++) rb[m] =                   \
            load4(cm, n0 + lrow + RB_LOAD_ROWS * m, n, (kb) + lcol, k1, d, vec);                   \
    } while (0)
#define RB_STORE(buf)                                                                              \
    do {                                                                                           \
        _Pragma("unroll") for (int m = 0; m < RB_BM / RB_LOAD_ROWS; m++)                          \
        {                                                                                          \
            int r_ = lrow + RB_LOAD_ROWS * m;                                                      \
            as[buf][lcol][r_] = ra[m].x;                                                           \
            as[buf][lcol + 1][r_] = ra[m].y;                                                       \
            as[buf][lcol + 2][r_] = ra[m].z;                                                       \
            as[buf][lcol + 3][r_] = ra[m].w;                                                       \
        }                                                                                          \
        _Pragma("unroll") for (int m = 0; m < RB_BN / RB_LOAD_ROWS; m++)                          \
        {                                                                                          \
            int r_ = lrow + RB_LOAD_ROWS * m;                                                      \
            bs[buf][lcol][r_] = rb[m].x;                                                           \
            bs[buf][lcol + 1][r_] = rb[m].y;                                                       \
            bs[buf][lcol + 2][r_] = rb[m].z;                                                       \
            bs[buf][lcol + 3][r_] = rb[m].w;                                                       \
        }                                                                                          \
    } while (0)

    if (slices > 0) {
        RB_LOAD(k0);
        RB_STORE(0);
    }
    __syncthreads();
    for (int sl = 0; sl < slices; sl++) {
        int cur = sl & 1;
        if (sl + 1 < slices)
            RB_LOAD(k0 + (sl + 1) * RB_BK); /* in flight while this slice is multiplied */
#pragma unroll
        for (int kk = 0; kk < RB_BK; kk++) {
            float4 a0 = *reinterpret_cast<const float4 *>(&as[cur][kk][ty * 4]);
            float4 a1 = *reinterpret_cast<const float4 *>(&as[cur][kk][32 + ty * 4]);
            float4 b0 = *reinterpret_cast<const float4 *>(&bs[cur][kk][tx * 4]);
            float4 b1 = *reinterpret_cast<const float4 *>(&bs[cur][kk][64 + tx * 4]);
            float a[RB_TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float b[RB_TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < RB_TM; i++)
#pragma unroll
                for (int j = 0; j < RB_TN; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        /* The other buffer was last read before the previous barrier: safe to fill. */
        if (sl + 1 < slices)
            RB_STORE(cur ^ 1);
        __syncthreads();
    }
#undef RB_LOAD
#undef RB_STORE

    float *dst = out + (size_t)blockIdx.z * (size_t)nq * (size_t)n;
#pragma unroll
    for (int i = 0; i < RB_TM; i++) {
        int q = q0 + (i < 4 ? ty * 4 + i : 32 + ty * 4 + (i - 4));
        if (q >= nq)
            continue;
        float *row = dst + (size_t)q * (size_t)n;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int c = n0 + h * 64 + tx * 4;
            if (n % 4 == 0 && c + 3 < n) {
                float4 v;
                v.x = acc[i][4 * h];
                v.y = acc[i][4 * h + 1];
                v.z = acc[i][4 * h + 2];
                v.w = acc[i][4 * h + 3];
                *reinterpret_cast<float4 *>(row + c) = v;
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++)
                    if (c + j < n)
                        row[c + j] = acc[i][4 * h + j];
            }
        }
    }
}

/*
 * The best `kout` of `count` entries (load(e, &score, &id) gives entry e) into out[0..kout), best
 * first, by a block of TOPK_THREADS threads. Each thread keeps its best k (sorted) of the entries
 * it reads; then kout rounds each take the best head over all threads (a warp shuffle, then one
 * warp over the warps' winners), and the owner of that head moves past it. Ids are unique, so the
 * winner is recognised by its id.
 */
template <typename Load>
__device__ void block_topk(int count, Load load, int k, wl_hit *out, int kout)
{
    __shared__ float wsc[TOPK_THREADS / 32];
    __shared__ uint32_t wid[TOPK_THREADS / 32];
    __shared__ uint32_t best_id;
    float ls[WL_GPU_MAX_K];
    uint32_t li[WL_GPU_MAX_K];
    int c = 0;
    for (int e = threadIdx.x; e < count; e += blockDim.x) {
        float s;
        uint32_t id;
        load(e, &s, &id);
        if (c == k) {
            if (!better(s, id, ls[k - 1], li[k - 1]))
                continue;
            c--; /* drop the worst */
        }
        int j = c;
        while (j > 0 && better(s, id, ls[j - 1], li[j - 1])) {
            ls[j] = ls[j - 1];
            li[j] = li[j - 1];
            j--;
        }
        ls[j] = s;
        li[j] = id;
        c++;
    }
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
    int ptr = 0;
    for (int r = 0; r < kout; r++) {
        float s = ptr < c ? ls[ptr] : -INFINITY;
        uint32_t id = ptr < c ? li[ptr] : UINT32_MAX;
        warp_best(&s, &id);
        if (lane == 0) {
            wsc[warp] = s;
            wid[warp] = id;
        }
        __syncthreads();
        if (warp == 0) {
            s = lane < nwarps ? wsc[lane] : -INFINITY;
            id = lane < nwarps ? wid[lane] : UINT32_MAX;
            warp_best(&s, &id);
            if (lane == 0) {
                best_id = id;
                out[r].id = id;
                out[r].score = s;
            }
        }
        __syncthreads();
        if (ptr < c && li[ptr] == best_id)
            ptr++;
    }
}

/*
 * Top k of one slice of one query's scores; unused slots of the list get a sentinel that every
 * real entry beats. With splits > 0, scores holds `splits` partial dot products per pair (split
 * s of query q at [(s x nq + q) x n]): they are added in split order and divided by |q| |c| with
 * the CPU's rules. With splits == 0 the scores are final (scores_kernel's).
 */
__global__ void __launch_bounds__(TOPK_THREADS)
    topk_partial(const float *__restrict__ scores, int splits, int nq,
                 const float *__restrict__ qn, const float *__restrict__ cn, int n, int k,
                 int slice, int parts, wl_hit *__restrict__ part)
{
    int q = blockIdx.x, p = blockIdx.y;
    int lo = p * slice, hi = min(n, lo + slice);
    int count = hi > lo ? hi - lo : 0;
    const float *row = scores + (size_t)q * (size_t)n + lo;
    size_t split_stride = (size_t)nq * (size_t)n;
    float qq = splits > 0 ? qn[q] : 0.0f;
    wl_hit *dst = part + ((size_t)q * (size_t)parts + (size_t)p) * (size_t)k;
    int kout = min(k, count);
    block_topk(
        count,
        [&](int e, float *s, uint32_t *id) {
            if (splits == 0) {
                *s = row[e];
            } else {
                float dot = row[e];
                for (int sp = 1; sp < splits; sp++)
                    dot += row[(size_t)sp * split_stride + e];
                /* The CPU's rule: 0 for a zero denominator or a NaN quotient. */
                float den = qq * cn[lo + e];
                float v = den == 0.0f ? 0.0f : dot / den;
                *s = isnan(v) ? 0.0f : v;
            }
            *id = (uint32_t)(lo + e);
        },
        k, dst, kout);
    for (int r = kout + (int)threadIdx.x; r < k; r += blockDim.x) {
        dst[r].id = UINT32_MAX;
        dst[r].score = -INFINITY;
    }
}

/* Top kout of the slices' lists of one query. */
__global__ void __launch_bounds__(TOPK_THREADS)
    topk_merge(const wl_hit *__restrict__ part, int parts, int k, int kout, wl_hit *__restrict__ out)
{
    int q = blockIdx.x;
    const wl_hit *src = part + (size_t)q * (size_t)parts * (size_t)k;
    block_topk(
        parts * k,
        [&](int e, float *s, uint32_t *id) {
            *s = src[e].score;
            *id = src[e].id;
        },
        k, out + (size_t)q * (size_t)k, kout);
}

/* Sums n4 float4s and the ntail floats after them; one partial sum per block. */
__global__ void __launch_bounds__(PROBE_THREADS)
    read_probe(const float4 *__restrict__ v, size_t n4, const float *__restrict__ tail, int ntail,
               float *__restrict__ out)
{
    __shared__ float part[PROBE_THREADS / 32];
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    /* Four independent loads in flight per thread. */
    for (; i + 3 * stride < n4; i += 4 * stride) {
        float4 a = v[i], b = v[i + stride], c = v[i + 2 * stride], e = v[i + 3 * stride];
        s0 += (a.x + a.y) + (a.z + a.w);
        s1 += (b.x + b.y) + (b.z + b.w);
        s2 += (c.x + c.y) + (c.z + c.w);
        s3 += (e.x + e.y) + (e.z + e.w);
    }
    for (; i < n4; i += stride) {
        float4 a = v[i];
        s0 += (a.x + a.y) + (a.z + a.w);
    }
    float s = (s0 + s1) + (s2 + s3);
    if (blockIdx.x == 0)
        for (int t = threadIdx.x; t < ntail; t += blockDim.x)
            s += tail[t];
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, off);
    if (threadIdx.x % 32 == 0)
        part[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int w = 0; w < PROBE_THREADS / 32; w++)
            t += part[w];
        out[blockIdx.x] = t;
    }
}

/* ---- host API ---- */

extern "C" int wl_gpu_available(char *msg, size_t msglen)
{
    int dv = 0, n = 0;
    if (cudaDriverGetVersion(&dv) != cudaSuccess)
        dv = -1;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        if (msg && msglen) {
            if (dv == 0)
                snprintf(msg, msglen,
                         "no CUDA driver: libcuda.so.1 could not be loaded (cudaGetDeviceCount: "
                         "%s)",
                         cudaGetErrorName(err));
            else
                snprintf(msg, msglen, "no usable CUDA device: cudaGetDeviceCount: %s (%s)",
                         cudaGetErrorString(err), cudaGetErrorName(err));
        }
        return WL_E_UNAVAILABLE;
    }
    if (n < 1) {
        set_msg(msg, msglen, "no CUDA device (cudaGetDeviceCount: 0)");
        return WL_E_UNAVAILABLE;
    }
    return 0;
}

extern "C" void wl_gpu_similarity_free(wl_gpu_similarity *s)
{
    if (!s)
        return;
    (void)cudaFree(s->cand);
    (void)cudaFree(s->cnorm);
    (void)cudaFree(s->query);
    (void)cudaFree(s->qnorm);
    (void)cudaFree(s->scores);
    (void)cudaFree(s->part);
    (void)cudaFree(s->out);
    (void)cudaFree(s->probe_out);
    (void)cudaGetLastError();
    free(s);
}

/* a * b, or 0 with *ovf set when it does not fit in a size_t. */
static size_t mul(size_t a, size_t b, bool *ovf)
{
    if (a != 0 && b > SIZE_MAX / a) {
        *ovf = true;
        return 0;
    }
    return a * b;
}

/* cudaMalloc of at least one byte (a zero size gives no usable pointer). */
static int dev_alloc(wl_gpu_similarity *s, void **p, size_t bytes, const char *what)
{
    char call[96];
    snprintf(call, sizeof call, "cudaMalloc (%s, %zu B)", what, bytes);
    CHECK_S(s, cudaMalloc(p, bytes ? bytes : 4), call);
    return 0;
}

/*
 * How many ways to split D for `q` queries: the fewest splits that bring the grid's waves (tiles
 * x splits over the resident blocks, rounded up) times the slices per split to its minimum, at
 * most `limit`, each split at least RB_MIN_SLICES slices long. One wave of whole tiles is the
 * ideal; a grid of 1.5 waves leaves a third of the GPU idle in its second, and a grid smaller
 * than one leaves SMs idle outright. Splits cost an extra pass over the partial dot products
 * (written here, read by the top-k), so the smallest of equally good counts wins.
 */
static int choose_splits(const wl_gpu_similarity *s, int q, int limit)
{
    long tiles = (long)((s->n + RB_BN - 1) / RB_BN) * (long)((q + RB_BM - 1) / RB_BM);
    long slices = (s->d + RB_BK - 1) / RB_BK;
    long most = slices / RB_MIN_SLICES;
    if (most > limit)
        most = limit;
    if (most > RB_MAX_SPLITS)
        most = RB_MAX_SPLITS;
    int best = 1;
    long best_cost = -1;
    for (long sp = 1; sp <= (most > 1 ? most : 1); sp++) {
        long waves = (tiles * sp + s->slots - 1) / s->slots;
        long cost = waves * ((slices + sp - 1) / sp);
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            best = (int)sp;
        }
    }
    return best;
}

static int setup(wl_gpu_similarity *s, const wl_candidates *c)
{
    bool ovf = false;
    size_t n = (size_t)s->n, d = (size_t)s->d, q = (size_t)s->max_q, k = (size_t)s->k;
    int rc;
    CHECK_S(s, cudaSetDevice(0), "cudaSetDevice(0)");
    int sms = 0, per_sm = 0;
    CHECK_S(s, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0),
            "cudaDeviceGetAttribute (SM count)");
    CHECK_S(s, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dots_kernel, RB_THREADS, 0),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor (dots_kernel)");
    s->slots = (sms > 0 ? sms : 1) * (per_sm > 0 ? per_sm : 1);
    /* Top-k slices of TOPK_SLICE candidates; more and shorter ones (down to TOPK_MIN_SLICE) when
     * a full batch's queries times slices would leave SMs idle: 64 queries over 10,000
     * candidates make 192 blocks of 4096, 9 per query make 576. The merge then reads parts x k
     * entries per query. */
    size_t want = ((size_t)(sms > 0 ? sms : 1) * TOPK_BLOCKS_PER_SM + q - 1) / q;
    size_t parts = (n + TOPK_SLICE - 1) / TOPK_SLICE;
    size_t most = (n + TOPK_MIN_SLICE - 1) / TOPK_MIN_SLICE;
    if (parts < want)
        parts = want < most ? want : most;
    if (parts < 1)
        parts = 1;
    if (parts > 65535) /* the grid's y limit */
        parts = 65535;
    s->slice = (int)((n + parts - 1) / parts);
    s->parts = n > 0 ? (int)((n + (size_t)s->slice - 1) / (size_t)s->slice) : 1;
    if (s->slice < 1)
        s->slice = 1;
    /* Room for the splits of a full batch; a smaller batch has fewer tiles and could use more,
     * but makes do with these. */
    s->max_splits = choose_splits(s, s->max_q, RB_MAX_SPLITS);
    size_t cand_b = mul(mul(n, d, &ovf), sizeof(float), &ovf);
    size_t query_b = mul(mul(q, d, &ovf), sizeof(float), &ovf);
    size_t scores_b = mul(mul(mul(q, n, &ovf), (size_t)s->max_splits, &ovf), sizeof(float), &ovf);
    size_t out_b = mul(mul(q, k, &ovf), sizeof(wl_hit), &ovf);
    size_t part_b = mul(mul(mul(q, (size_t)s->parts, &ovf), k, &ovf), sizeof(wl_hit), &ovf);
    if (ovf) {
        snprintf(s->err, sizeof s->err, "sizes overflow (N %zu, D %zu, Q %zu)", n, d, q);
        return WL_E_OVERFLOW;
    }
    s->probe_blocks = (sms > 0 ? sms : 1) * 8; /* enough threads to saturate the memory */
    if ((rc = dev_alloc(s, (void **)&s->cand, cand_b, "candidates")) != 0 ||
        (rc = dev_alloc(s, (void **)&s->cnorm, n * sizeof(float), "norms")) != 0 ||
        (rc = dev_alloc(s, (void **)&s->query, query_b, "queries")) != 0 ||
        (rc = dev_alloc(s, (void **)&s->qnorm, q * sizeof(float), "query norms")) != 0 ||
        (rc = dev_alloc(s, (void **)&s->scores, scores_b, "scores")) != 0 ||
        (rc = dev_alloc(s, (void **)&s->out, out_b, "results")) != 0 ||
        (rc = dev_alloc(s, (void **)&s->probe_out, (size_t)s->probe_blocks * sizeof(float),
                        "read probe")) != 0)
        return rc;
    if (s->parts > 1 && (rc = dev_alloc(s, (void **)&s->part, part_b, "partial top-k")) != 0)
        return rc;
    if (cand_b > 0)
        CHECK_S(s, cudaMemcpy(s->cand, c->vectors, cand_b, cudaMemcpyHostToDevice),
                "cudaMemcpy (candidates)");
    if (n > 0)
        CHECK_S(s, cudaMemcpy(s->cnorm, c->norms, n * sizeof(float), cudaMemcpyHostToDevice),
                "cudaMemcpy (norms)");
    return 0;
}

extern "C" int wl_gpu_similarity_new(wl_gpu_similarity **out, const wl_candidates *c,
                                     size_t max_queries, size_t k, char *msg, size_t msglen)
{
    if (out)
        *out = NULL;
    if (!out || !c || k < 1 || k > WL_GPU_MAX_K || max_queries < 1 ||
        max_queries > WL_GPU_MAX_QUERIES) {
        set_msg(msg, msglen, "invalid argument (NULL pointer, k or max_queries out of range)");
        return WL_E_INVAL;
    }
    if (c->count > WL_MAX_NODES || c->dim > (size_t)INT_MAX) {
        set_msg(msg, msglen, "too many candidates or too large a dimension");
        return WL_E_OVERFLOW;
    }
    if (c->count > 0 && (!c->norms || (c->dim > 0 && !c->vectors))) {
        set_msg(msg, msglen, "invalid argument (candidates without vectors or norms)");
        return WL_E_INVAL;
    }
    int rc = wl_gpu_available(msg, msglen);
    if (rc != 0)
        return rc;
    wl_gpu_similarity *s = (wl_gpu_similarity *)calloc(1, sizeof *s);
    if (!s) {
        set_msg(msg, msglen, "out of host memory");
        return WL_E_NOMEM;
    }
    s->n = (int)c->count;
    s->d = (int)c->dim;
    s->k = (int)k;
    s->max_q = (int)max_queries;
    s->kernel = WL_GPU_SCORES_BLOCKED;
    rc = setup(s, c);
    if (rc != 0) {
        set_msg(msg, msglen, s->err);
        wl_gpu_similarity_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

extern "C" int wl_gpu_similarity_set_queries(wl_gpu_similarity *s, const float *queries,
                                             size_t count)
{
    if (!s)
        return WL_E_INVAL;
    if (count < 1 || count > (size_t)s->max_q || (s->d > 0 && !queries)) {
        snprintf(s->err, sizeof s->err, "set_queries: %zu queries (room for %d) or NULL", count,
                 s->max_q);
        return WL_E_INVAL;
    }
    size_t bytes = count * (size_t)s->d * sizeof(float);
    if (bytes > 0)
        CHECK_S(s, cudaMemcpy(s->query, queries, bytes, cudaMemcpyHostToDevice),
                "cudaMemcpy (queries)");
    s->q = (int)count;
    return 0;
}

extern "C" int wl_gpu_similarity_enqueue(wl_gpu_similarity *s, void *stream)
{
    if (!s)
        return WL_E_INVAL;
    if (s->q < 1) {
        snprintf(s->err, sizeof s->err, "enqueue: no queries set");
        return WL_E_INVAL;
    }
    if (s->n == 0)
        return 0; /* nothing to rank */
    cudaStream_t st = (cudaStream_t)stream;
    int q = s->q;
    WL_LAUNCH(query_norms, dim3((unsigned)((q * 32 + 255) / 256)), dim3(256), st, s->query, s->d,
              q, s->qnorm);
    CHECK_S(s, cudaGetLastError(), "launching query_norms");
    int splits = 0; /* 0: scores_kernel wrote final cosines */
    if (s->kernel == WL_GPU_SCORES_SIMPLE) {
        dim3 grid((unsigned)((s->n + BN - 1) / BN), (unsigned)((q + BM - 1) / BM));
        WL_LAUNCH(scores_kernel, grid, dim3(THREADS), st, s->query, s->qnorm, q, s->cand,
                  s->cnorm, s->n, s->d, s->scores);
        CHECK_S(s, cudaGetLastError(), "launching scores_kernel");
    } else {
        splits = choose_splits(s, q, s->max_splits);
        int slices = (s->d + RB_BK - 1) / RB_BK;
        int kspan = ((slices + splits - 1) / splits) * RB_BK;
        dim3 grid((unsigned)((s->n + RB_BN - 1) / RB_BN), (unsigned)((q + RB_BM - 1) / RB_BM),
                  (unsigned)splits);
        WL_LAUNCH(dots_kernel, grid, dim3(RB_THREADS), st, s->query, q, s->cand, s->n, s->d,
                  kspan, s->scores);
        CHECK_S(s, cudaGetLastError(), "launching dots_kernel");
    }
    int kout = s->k < s->n ? s->k : s->n;
    wl_hit *first = s->parts > 1 ? s->part : s->out;
    WL_LAUNCH(topk_partial, dim3((unsigned)q, (unsigned)s->parts), dim3(TOPK_THREADS), st,
              s->scores, splits, q, s->qnorm, s->cnorm, s->n, s->k, s->slice, s->parts, first);
    CHECK_S(s, cudaGetLastError(), "launching topk_partial");
    if (s->parts > 1) {
        WL_LAUNCH(topk_merge, dim3((unsigned)q), dim3(TOPK_THREADS), st, s->part, s->parts, s->k,
                  kout, s->out);
        CHECK_S(s, cudaGetLastError(), "launching topk_merge");
    }
    return 0;
}

extern "C" int wl_gpu_similarity_set_scores_kernel(wl_gpu_similarity *s, int kernel)
{
    if (!s)
        return WL_E_INVAL;
    if (kernel != WL_GPU_SCORES_BLOCKED && kernel != WL_GPU_SCORES_SIMPLE) {
        snprintf(s->err, sizeof s->err, "set_scores_kernel: no kernel %d", kernel);
        return WL_E_INVAL;
    }
    s->kernel = kernel;
    return 0;
}

extern "C" int wl_gpu_similarity_results(wl_gpu_similarity *s, void *stream, wl_hit *hits,
                                         size_t *count)
{
    if (!s || !hits || !count)
        return WL_E_INVAL;
    cudaStream_t st = (cudaStream_t)stream;
    CHECK_S(s, cudaStreamSynchronize(st), "waiting for the search (cudaStreamSynchronize)");
    size_t kout = (size_t)(s->k < s->n ? s->k : s->n);
    *count = kout;
    if (kout > 0 && s->q > 0) {
        size_t bytes = (size_t)s->q * (size_t)s->k * sizeof(wl_hit);
        CHECK_S(s, cudaMemcpyAsync(hits, s->out, bytes, cudaMemcpyDeviceToHost, st),
                "cudaMemcpyAsync (results)");
        CHECK_S(s, cudaStreamSynchronize(st), "waiting for the results (cudaStreamSynchronize)");
    }
    return 0;
}

extern "C" int wl_gpu_similarity_read_probe_enqueue(wl_gpu_similarity *s, void *stream)
{
    if (!s)
        return WL_E_INVAL;
    size_t total = (size_t)s->n * (size_t)s->d;
    if (total == 0)
        return 0;
    size_t n4 = total / 4;
    int ntail = (int)(total - n4 * 4);
    WL_LAUNCH(read_probe, dim3((unsigned)s->probe_blocks), dim3(PROBE_THREADS),
              (cudaStream_t)stream, (const float4 *)s->cand, n4, (const float *)(s->cand + n4 * 4),
              ntail, s->probe_out);
    CHECK_S(s, cudaGetLastError(), "launching read_probe");
    return 0;
}

extern "C" const char *wl_gpu_similarity_error(const wl_gpu_similarity *s)
{
    return s ? s->err : "";
}

extern "C" int wl_gpu_similarity_topk_batch(const wl_candidates *c, const float *queries,
                                            size_t q, size_t k, wl_hit *hits, size_t *count,
                                            char *msg, size_t msglen)
{
    wl_gpu_similarity *s = NULL;
    int rc = wl_gpu_similarity_new(&s, c, q, k, msg, msglen);
    if (rc != 0)
        return rc;
    if ((rc = wl_gpu_similarity_set_queries(s, queries, q)) != 0 ||
        (rc = wl_gpu_similarity_enqueue(s, NULL)) != 0 ||
        (rc = wl_gpu_similarity_results(s, NULL, hits, count)) != 0)
        set_msg(msg, msglen, s->err);
    wl_gpu_similarity_free(s);
    return rc;
}
