/*
 * wl_gpu_none.c: the GPU similarity API (wl_gpu.h) of a build without CUDA. Nothing can run:
 * every entry reports WL_E_UNAVAILABLE with the reason, so callers (tests, the reference suite)
 * compile and link the same way with and without CUDA.
 */
#include <stdio.h>

#include "workloads/wl_error.h"
#include "workloads/wl_gpu.h"

static const char no_cuda[] =
    "this build has no CUDA support (the CUDA toolkit was not found when it was configured)";

int wl_gpu_available(char *msg, size_t msglen)
{
    if (msg && msglen)
        snprintf(msg, msglen, "%s", no_cuda);
    return WL_E_UNAVAILABLE;
}

int wl_gpu_similarity_new(wl_gpu_similarity **out, const wl_candidates *c, size_t max_queries,
                          size_t k, char *msg, size_t msglen)
{
    (void)c;
    (void)max_queries;
    (void)k;
    if (out)
        *out = NULL;
    return wl_gpu_available(msg, msglen);
}

void wl_gpu_similarity_free(wl_gpu_similarity *s)
{
    (void)s;
}

int wl_gpu_similarity_set_queries(wl_gpu_similarity *s, const float *queries, size_t count)
{
    (void)s;
    (void)queries;
    (void)count;
    return WL_E_UNAVAILABLE;
}

int wl_gpu_similarity_enqueue(wl_gpu_similarity *s, void *stream)
{
    (void)s;
    (void)stream;
    return WL_E_UNAVAILABLE;
}

int wl_gpu_similarity_results(wl_gpu_similarity *s, void *stream, wl_hit *hits, size_t *count)
{
    (void)s;
    (void)stream;
    (void)hits;
    if (count)
        *count = 0;
    return WL_E_UNAVAILABLE;
}

int wl_gpu_similarity_set_scores_kernel(wl_gpu_similarity *s, int kernel)
{
    (void)s;
    (void)kernel;
    return WL_E_UNAVAILABLE;
}

int wl_gpu_similarity_read_probe_enqueue(wl_gpu_similarity *s, void *stream)
{
    (void)s;
    (void)stream;
    return WL_E_UNAVAILABLE;
}

const char *wl_gpu_similarity_error(const wl_gpu_similarity *s)
{
    (void)s;
    return no_cuda;
}

int wl_gpu_similarity_topk_batch(const wl_candidates *c, const float *queries, size_t q, size_t k,
                                 wl_hit *hits, size_t *count, char *msg, size_t msglen)
{
    (void)c;
    (void)queries;
    (void)q;
    (void)k;
    (void)hits;
    if (count)
        *count = 0;
    return wl_gpu_available(msg, msglen);
}
