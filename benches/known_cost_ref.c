/*
 * known_cost_ref.c: an independent stopwatch for known_cost_chain, sharing no code with the
 * harness. It times blocks of calls with clock_gettime around the whole block and prints the
 * median over blocks of ns per call, which scripts/known_cost_check.sh puts next to what the
 * harness reports for harness/known_cost_chain_1000.
 *
 * Usage: known_cost_ref [BLOCKS] [SECONDS_PER_BLOCK]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "known_cost.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int blocks = argc > 1 ? atoi(argv[1]) : 11;
    double secs = argc > 2 ? atof(argv[2]) : 0.2;
    if (blocks < 1 || blocks > 1000 || !(secs > 0 && secs < 60)) {
        fprintf(stderr, "usage: known_cost_ref [BLOCKS 1..1000] [SECONDS_PER_BLOCK]\n");
        return 2;
    }
    uint64_t x = 1;
    /* calibrate the number of calls per block */
    long calls = 1;
    for (;;) {
        double t0 = now_s();
        for (long i = 0; i < calls; i++)
            x = known_cost_chain(x, 1000);
        if (now_s() - t0 > secs / 4)
            break;
        calls *= 2;
    }
    calls *= 4;
    double *per = malloc((size_t)blocks * sizeof *per);
    if (!per)
        return 1;
    for (int b = 0; b < blocks; b++) {
        double t0 = now_s();
        for (long i = 0; i < calls; i++)
            x = known_cost_chain(x, 1000);
        per[b] = (now_s() - t0) * 1e9 / (double)calls;
    }
    qsort(per, (size_t)blocks, sizeof *per, cmp);
    printf("%.4f\n", per[blocks / 2]);
    fprintf(stderr, "known_cost_ref: %d blocks of %ld calls, checksum %llu\n", blocks, calls,
            (unsigned long long)x);
    free(per);
    return 0;
}
