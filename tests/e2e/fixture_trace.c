/*
 * fixture_trace.c: benchmarks for e2e/trace (test_trace.py), the --trace timeline and the spans
 * of a body. A body of two phases of known cost (1,000 and 3,000 steps of a latency chain: time
 * is steps, so their shares are 25% and 75%); the same with BENCH_SPAN; a threaded body whose
 * threads mark spans; a worker that crashes after it has taken samples; and spans used wrongly
 * (an end without its begin, a begin without its end, ends out of order), each of which must
 * fail its benchmark with one line naming the span.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "harness/bench.h"
#include "fixture_marker.h"

BENCH_FN(spans, two_phases, .warm_up_time = 0.05, .measurement_time = 0.3)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        bench_span_begin(b, "light");
        x = fixture_chain(x, 1000);
        bench_span_end(b, "light");
        bench_span_begin(b, "heavy");
        x = fixture_chain(x, 3000);
        bench_span_end(b, "heavy");
    }
    bench_black_box(x);
}

BENCH_FN(spans, scoped, .warm_up_time = 0.02, .measurement_time = 0.1)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        BENCH_SPAN(b, "outer") {
            BENCH_SPAN(b, "inner") {
                x = fixture_chain(x, 200);
            }
            x = fixture_chain(x, 200);
        }
    }
    bench_black_box(x);
}

BENCH_FN(spans, threads, .threads = 2, .warm_up_time = 0.02, .measurement_time = 0.1)
{
    uint64_t x = (uint64_t)bench_thread_index(b) + 1;
    BENCH_ITER(b) {
        BENCH_SPAN(b, "step") {
            x = fixture_chain(x, 300);
        }
    }
    bench_black_box(x);
}

/* Crashes 0.25 s after the first call of its body in the process (after its warm-up and some
 * samples), in every process. Timed from the first call, not from each call: the body is called
 * once a sample, and under load a plan of short samples never reached 0.25 s in one call. */
BENCH_FN(crash, later, .warm_up_time = 0.05, .measurement_time = 2)
{
    static struct timespec t0;
    static bool started;
    struct timespec now;
    if (!started) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        started = true;
    }
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = fixture_chain(x, 100);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > 0.25)
            raise(SIGSEGV);
    }
    bench_black_box(x);
}

BENCH_FN(unbalanced, end_without_begin, .warm_up_time = 0.01, .measurement_time = 0.02)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = fixture_chain(x, 10);
        bench_span_end(b, "orphan");
    }
    bench_black_box(x);
}

BENCH_FN(unbalanced, begin_without_end, .warm_up_time = 0.01, .measurement_time = 0.02)
{
    uint64_t x = 1;
    bench_span_begin(b, "forgotten");
    BENCH_ITER(b) {
        x = fixture_chain(x, 10);
    }
    bench_black_box(x);
}

BENCH_FN(unbalanced, misnested, .warm_up_time = 0.01, .measurement_time = 0.02)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        bench_span_begin(b, "first");
        bench_span_begin(b, "second");
        x = fixture_chain(x, 10);
        bench_span_end(b, "first");
        bench_span_end(b, "second");
    }
    bench_black_box(x);
}
