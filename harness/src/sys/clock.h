/*
 * clock.h: the monotonic clock every part of the harness reads (clock.c), and what start-up
 * calibration measured about it. It sits in sys/ because everything above reads it: the context
 * records its calibration, processes time out by it, stores date their files by it, the runner
 * times samples with it (through the wall clock probe).
 */
#ifndef HARNESS_CLOCK_H
#define HARNESS_CLOCK_H

#include <stdint.h>

/** What start-up calibration measured about the clock. */
typedef struct bench__clock_info {
    const char *name;     /* e.g. "CLOCK_MONOTONIC" */
    double cost_ns;       /* ns per read, back to back */
    double resolution_ns; /* smallest step observed between reads (at least clock_getres) */
    double min_sample_ns; /* shortest allowed sample: 1000 x max(cost, resolution) */
} bench__clock_info;

/** Reads the monotonic clock in ns. */
int64_t bench__now_ns(void);
/** Measures the clock's cost and resolution (about 2 ms); idempotent. */
const bench__clock_info *bench__clock_calibrate(void);

#endif /* HARNESS_CLOCK_H */
