/*
 * fixture_gpu.c: the benchmark program e2e_gpu_fixture, plain C and built with or without CUDA,
 * driven by test_gpu.py. Group `cuda` holds BENCH_CUDA_FNs whose bodies enqueue nothing (an empty
 * timed block still has a GPU time: the gap between its two events); each body prints one line
 * "e2e_gpu_fixture: ID ran stream=yes|no" on stderr, so the test can tell that a skipped
 * benchmark's body never ran. Group `cpu` is an ordinary benchmark that must run whatever happens
 * to the GPU ones. Group `misuse` asks for a CUDA stream from a CPU benchmark (a failure, exit 3).
 */
#include <stdint.h>
#include <stdio.h>

#include <harness/bench.h>

BENCH_GROUP(cuda, .warm_up_time = 0.02, .measurement_time = 0.1);

static void ran(bench_t *b, const void *stream)
{
    fprintf(stderr, "e2e_gpu_fixture: %s ran stream=%s\n", bench_id(b), stream ? "yes" : "no");
}

/* Hot, one timed block per sample. */
BENCH_CUDA_FN(cuda, plain)
{
    void *stream = bench_cuda_stream(b);
    ran(b, stream);
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = bench_black_box(x + 1);
    }
}

/* Cold and blocking, one iteration per timed block; settings given with BENCH_CUDA_FN. */
BENCH_CUDA_FN(cuda, cold_blocking, .cuda_cold = 1, .cuda_blocking = 1, .sample_size = 10)
{
    void *stream = bench_cuda_stream(b);
    ran(b, stream);
    uint64_t x = 1;
    BENCH_CUDA_ITER(b, 1) {
        x = bench_black_box(x + 1);
    }
}

/* Parameterised: one id per value, each skipped or run on its own. */
BENCH_CUDA_FN(cuda, sized, BENCH_PARAMS(1, 2))
{
    ran(b, bench_cuda_stream(b));
    BENCH_CUDA_ITER(b, 4) {
        bench_clobber();
    }
}

BENCH_FN(cpu, spin, .warm_up_time = 0.02, .measurement_time = 0.1)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = bench_black_box(x * 3 + 1);
    }
}

/* A CPU benchmark has no CUDA stream: asking for one fails it. */
BENCH_FN(misuse, stream_in_cpu_benchmark, .warm_up_time = 0.02, .measurement_time = 0.1)
{
    void *stream = bench_cuda_stream(b);
    fprintf(stderr, "e2e_gpu_fixture: %s stream=%s\n", bench_id(b), stream ? "yes" : "no");
    BENCH_ITER(b) {
        bench_clobber();
    }
}
