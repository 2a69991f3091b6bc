/*
 * clock.c: the monotonic clock, and the start-up calibration of its cost and resolution.
 *
 * The runner never lets a sample be shorter than 1000 times the larger of the clock's read cost
 * and its resolution, so neither can distort a sample by more than 0.1%. Calibration is measured,
 * not assumed: on a VM the cost of clock_gettime varies with the clocksource.
 */
#include <time.h>

#include "sys/clock.h"

int64_t bench__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bench__clock_info clock_info;

const bench__clock_info *bench__clock_calibrate(void)
{
    if (clock_info.name)
        return &clock_info;
    enum { READS = 1000, ROUNDS = 20, STEPS = 20000 };

    /* Cost: back-to-back reads, best of several rounds (the least disturbed one). */
    double best = 1e18;
    for (int r = 0; r < ROUNDS; r++) {
        int64_t t0 = bench__now_ns();
        for (int i = 0; i < READS; i++)
            (void)bench__now_ns();
        int64_t t1 = bench__now_ns();
        double per = (double)(t1 - t0) / (READS + 1);
        if (per < best)
            best = per;
    }

    /* Resolution: the smallest non-zero step between consecutive reads, and never below what
     * the kernel declares. */
    struct timespec res;
    double declared = clock_getres(CLOCK_MONOTONIC, &res) == 0
                          ? (double)res.tv_sec * 1e9 + (double)res.tv_nsec
                          : 1.0;
    double step = 1e18;
    int64_t prev = bench__now_ns();
    for (int i = 0; i < STEPS; i++) {
        int64_t now = bench__now_ns();
        if (now > prev && (double)(now - prev) < step)
            step = (double)(now - prev);
        prev = now;
    }
    if (step > 1e17)
        step = declared;
    if (step < declared)
        step = declared;

    clock_info.cost_ns = best;
    clock_info.resolution_ns = step;
    double worst = best > step ? best : step;
    clock_info.min_sample_ns = 1000.0 * worst;
    clock_info.name = "CLOCK_MONOTONIC";
    return &clock_info;
}
