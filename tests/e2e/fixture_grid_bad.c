/*
 * fixture_grid_bad.c: a program whose only benchmark has a malformed argument grid: it must stop
 * before running anything, exit 2, and name the benchmark, its file and what is wrong (e2e/grid).
 */
#include "harness/bench.h"

BENCH_FN(bad, grid, .args = "size=1..64")
{
    BENCH_ITER(b) {
        bench_clobber();
    }
}
