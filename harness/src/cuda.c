/*
 * cuda.c: the CUDA layer's probe. Placeholder until the CUDA layer lands: no benchmark is a
 * CUDA benchmark yet, so it attaches to none.
 */
#include "internal.h"

static int cuda_attach(bench__probe *p, bench__result *r)
{
    (void)p;
    (void)r;
    return 1;
}

static void cuda_start(bench__probe *p)
{
    (void)p;
}

static void cuda_stop(bench__probe *p, double *values, double *fraction)
{
    (void)p;
    (void)values;
    *fraction = 1.0;
}

static void cuda_detach(bench__probe *p, bench__result *r)
{
    (void)p;
    (void)r;
}

bench__probe *bench__cuda_probe(void)
{
    static bench__probe probe = {
        .name = "cuda",
        .attach = cuda_attach,
        .start = cuda_start,
        .stop = cuda_stop,
        .detach = cuda_detach,
        .primary = true,
    };
    return &probe;
}
