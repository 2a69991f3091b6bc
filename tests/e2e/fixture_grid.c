/*
 * fixture_grid.c: benchmarks with argument grids (.args), for e2e/grid. map is a 3x2 grid whose
 * time grows with both axes in a known way (size x load steps of a latency-bound chain); mode
 * reads a string axis; tuples lists explicit combinations; sweep is a one-axis range whose time
 * is linear in n (its complexity fit must say O(N)); wrong_axis and not_a_number read an axis
 * wrongly and must fail, named.
 */
#include <stdint.h>
#include <string.h>

#include "harness/bench.h"
#include "fixture_marker.h"

/* fixture_chain_loop that also counts its steps (the counter "steps"): what e2e/grid reads to
 * see that each combination's values reached the body, exactly, whatever the machine's load. */
static void counted_loop(bench_t *b, unsigned steps)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = fixture_chain(x, steps);
        bench_counter(b, "steps", (double)steps, BENCH_COUNTER_PER_ITERATION);
    }
    bench_black_box(x);
}

BENCH_FN(grid, map, .args = "size=256..4096*4 load=0.5,0.9", .warm_up_time = 0.02,
         .measurement_time = 0.1, .counters = "steps")
{
    int64_t size = bench_arg(b, "size");
    double load = bench_arg_double(b, "load");
    unsigned steps = (unsigned)((double)size * load);
    bench_set_elements(b, (uint64_t)size);
    counted_loop(b, steps);
}

BENCH_FN(grid, mode, .args = "mode=short,long", .warm_up_time = 0.02, .measurement_time = 0.1,
         .counters = "steps")
{
    const char *mode = bench_arg_str(b, "mode");
    unsigned steps = strcmp(mode, "long") == 0 ? 4000 : 400;
    counted_loop(b, steps);
}

BENCH_FN(grid, tuples, .args = "n=100 m=2 | n=300 m=1", .warm_up_time = 0.02,
         .measurement_time = 0.1, .counters = "steps")
{
    unsigned steps = (unsigned)(bench_arg(b, "n") * bench_arg(b, "m"));
    counted_loop(b, steps);
}

BENCH_FN(grid, sweep, .args = "n=512..8192*2", .warm_up_time = 0.02, .measurement_time = 0.12)
{
    unsigned steps = (unsigned)bench_arg(b, "n");
    fixture_chain_loop(b, steps);
}

BENCH_FN(grid, wrong_axis, .args = "n=1", .warm_up_time = 0.01, .measurement_time = 0.02)
{
    unsigned steps = (unsigned)bench_arg(b, "size");
    fixture_chain_loop(b, steps + 1);
}

BENCH_FN(grid, not_a_number, .args = "kind=fast", .warm_up_time = 0.01, .measurement_time = 0.02)
{
    unsigned steps = (unsigned)bench_arg(b, "kind");
    fixture_chain_loop(b, steps + 1);
}
