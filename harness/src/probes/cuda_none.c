/*
 * cuda_none.c: the core library's CUDA backend, and the hook through which the CUDA component
 * replaces it. A program that does not link the CUDA component (libharness-cuda), or a library
 * built without CUDA (the toolkit was not found, or -DHARNESS_CUDA=OFF), keeps this backend: the
 * device is always unavailable, so every CUDA benchmark is skipped with the reason; nothing else
 * can be called, but every entry answers sensibly anyway. The component's constructor calls
 * bench__cuda_register before main(), so the probe (cuda.c) sees the real backend from its
 * first call on.
 */
#include <stdio.h>
#include <string.h>

#include "probes/cuda_backend.h"

/* HARNESS_HAVE_CUDA: the CUDA component was built beside this library, so a program without
 * CUDA did not link it; otherwise no program of this build can have CUDA. */
#ifdef HARNESS_HAVE_CUDA
static const char no_cuda[] =
    "this program does not link the harness's CUDA component (harness-cuda; see docs/gpu.md)";
static const char no_cuda_feature[] = "CUDA events: not linked (the harness-cuda component)";
#else
static const char no_cuda[] =
    "this build has no CUDA support (the CUDA toolkit was not found when it was configured)";
static const char no_cuda_feature[] = "CUDA events: compiled out";
#endif

/* Set by the CUDA component's constructor; NULL: the none backend below. */
static const bench__cuda_ops *registered_ops;
static const char *registered_feature;

static void none_query(bench__cuda_info *info)
{
    memset(info, 0, sizeof *info);
    info->available = 0;
    snprintf(info->reason, sizeof info->reason, "%s", no_cuda);
    info->device_count = -1;
    info->cc_major = info->cc_minor = info->sm_count = -1;
    info->memory_bytes = -1;
    info->l2_bytes = info->bus_width_bits = info->clock_khz = info->memory_clock_khz = -1;
    info->driver_version = -1;
    info->runtime_version = -1;
    info->module_loading = 0;
}

static int none_fail(char *msg, size_t msglen)
{
    snprintf(msg, msglen, "%s", no_cuda);
    return -1;
}

static int none_mem_used(double *bytes, char *msg, size_t msglen)
{
    *bytes = -1;
    return none_fail(msg, msglen);
}

static int none_open(bench__cuda_session **out, const bench__cuda_config *cfg, char *msg,
                     size_t msglen)
{
    (void)cfg;
    *out = NULL;
    return none_fail(msg, msglen);
}

static void none_close(bench__cuda_session *s)
{
    (void)s;
}

static void *none_stream(bench__cuda_session *s)
{
    (void)s;
    return NULL;
}

static int none_begin(bench__cuda_session *s, int hold, char *msg, size_t msglen)
{
    (void)s;
    (void)hold;
    return none_fail(msg, msglen);
}

static int none_finish(bench__cuda_session *s, double *gpu_ns, char *msg, size_t msglen)
{
    (void)s;
    *gpu_ns = 0;
    return none_fail(msg, msglen);
}

static void none_range_push(const char *name)
{
    (void)name;
}

static void none_range_pop(void)
{
}

void bench__cuda_register(const bench__cuda_ops *ops, const char *feature)
{
    registered_ops = ops;
    registered_feature = feature;
}

const char *bench__cuda_feature(void)
{
    return registered_ops ? registered_feature : no_cuda_feature;
}

const bench__cuda_ops *bench__cuda_ops_default(void)
{
    if (registered_ops)
        return registered_ops;
    static const bench__cuda_ops ops = {
        .cuda_runtime = 0, /* no CUDA runtime: CUDA_MODULE_LOADING is left alone */
        .query = none_query,
        .mem_used = none_mem_used,
        .open = none_open,
        .close = none_close,
        .stream = none_stream,
        .begin = none_begin,
        .finish = none_finish,
        .range_push = none_range_push,
        .range_pop = none_range_pop,
    };
    return &ops;
}
