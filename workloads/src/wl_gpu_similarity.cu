/*
 * wl_gpu_similarity.cu: batched top-k cosine similarity on a CUDA GPU (wl_gpu.h).
 *
 * A search is three or four kernels on the caller's stream:
 *   1. query_norms: |q| per query, one warp each (a shuffle reduction).
 *   2. scores: cos(q, c) for every query and candidate, tiled like a GEMM (S = Q x C^T): a block
 *      computes a 64 x 64 tile of scores from 32-float slices of 64 queries and 64 candidates
 *      staged in shared memory, each thread a 4 x 4 block of it in registers, and prefetches the
 *      next slices into registers while it computes, so the candidate block is streamed once per
 *      64 queries. The epilogue divides by |q| |c| with the CPU's rules (0 for a zero denominator
 *      or a NaN quotient) and writes the Q x N scores.
 *   3. topk_partial: for each query and slice of 4096 candidates, a block keeps a sorted top-k
 *      list per thread, then merges them with k rounds of a block-wide "best head" reduction.
 *   4. topk_merge (when there is more than one slice): the same merge over the slices' lists.
 * The ranking is the CPU's total order (score descending, then id ascending). Every launch is
 * followed by cudaGetLastError; every CUDA call is checked and its error kept in the object.
 * Accumulation order is fixed by the code, so results are deterministic for a given GPU and build.
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

#define TOPK_THREADS 128
#define TOPK_SLICE 4096 /* candidates per top-k block (at least) */
#define PROBE_THREADS 256

struct wl_gpu_similarity {
    int n, d;           /* candidates, dimension */
    int k;              /* results per query */
    int max_q, q;       /* room for queries, queries set */
    int parts;          /* top-k slices per query */
    int slice;          /* candidates per slice */
    int probe_blocks;   /* blocks of the read probe */
    float *cand;        /* device: n x d */
    float *cnorm;       /* device: n */
    float *query;       /* device: max_q x d */
    float *qnorm;       /* device: max_q */
    float *scores;      /* device: max_q x n */
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

/* Top k of one slice of one query's scores; unused slots of the list get a sentinel that every
 * real entry beats. */
__global__ void __launch_bounds__(TOPK_THREADS)
    topk_partial(const float *__restrict__ scores, int n, int k, int slice, int parts,
                 wl_hit *__restrict__ part)
{
    int q = blockIdx.x, p = blockIdx.y;
    int lo = p * slice, hi = min(n, lo + slice);
    int count = hi > lo ? hi - lo : 0;
    const float *row = scores + (size_t)q * (size_t)n + lo;
    wl_hit *dst = part + ((size_t)q * (size_t)parts + (size_t)p) * (size_t)k;
    int kout = min(k, count);
    block_topk(
        count,
        [&](int e, float *s, uint32_t *id) {
            *s = row[e];
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

static int setup(wl_gpu_similarity *s, const wl_candidates *c)
{
    bool ovf = false;
    size_t n = (size_t)s->n, d = (size_t)s->d, q = (size_t)s->max_q, k = (size_t)s->k;
    size_t cand_b = mul(mul(n, d, &ovf), sizeof(float), &ovf);
    size_t query_b = mul(mul(q, d, &ovf), sizeof(float), &ovf);
    size_t scores_b = mul(mul(q, n, &ovf), sizeof(float), &ovf);
    size_t part_b = mul(mul(mul(q, (size_t)s->parts, &ovf), k, &ovf), sizeof(wl_hit), &ovf);
    size_t out_b = mul(mul(q, k, &ovf), sizeof(wl_hit), &ovf);
    if (ovf) {
        snprintf(s->err, sizeof s->err, "sizes overflow (N %zu, D %zu, Q %zu)", n, d, q);
        return WL_E_OVERFLOW;
    }
    int rc;
    CHECK_S(s, cudaSetDevice(0), "cudaSetDevice(0)");
    int sms = 0;
    CHECK_S(s, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0),
            "cudaDeviceGetAttribute (SM count)");
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
    /* Slices of at least TOPK_SLICE candidates, at most 65535 of them (the grid's y limit). */
    size_t slice = TOPK_SLICE;
    if (c->count / 65535 + 1 > slice)
        slice = c->count / 65535 + 1;
    s->slice = (int)slice;
    s->parts = c->count > 0 ? (int)((c->count + slice - 1) / slice) : 1;
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
    dim3 grid((unsigned)((s->n + BN - 1) / BN), (unsigned)((q + BM - 1) / BM));
    WL_LAUNCH(scores_kernel, grid, dim3(THREADS), st, s->query, s->qnorm, q, s->cand, s->cnorm,
              s->n, s->d, s->scores);
    CHECK_S(s, cudaGetLastError(), "launching scores_kernel");
    int kout = s->k < s->n ? s->k : s->n;
    wl_hit *first = s->parts > 1 ? s->part : s->out;
    WL_LAUNCH(topk_partial, dim3((unsigned)q, (unsigned)s->parts), dim3(TOPK_THREADS), st,
              s->scores, s->n, s->k, s->slice, s->parts, first);
    CHECK_S(s, cudaGetLastError(), "launching topk_partial");
    if (s->parts > 1) {
        WL_LAUNCH(topk_merge, dim3((unsigned)q), dim3(TOPK_THREADS), st, s->part, s->parts, s->k,
                  kout, s->out);
        CHECK_S(s, cudaGetLastError(), "launching topk_merge");
    }
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
