/*
 * measure.h: the wall clock as a probe (measure.c), the one probe the runner attaches by name:
 * innermost around every sample, the time's default source.
 */
#ifndef HARNESS_MEASURE_H
#define HARNESS_MEASURE_H

#include <stdint.h>

#include "core/probe.h"

/**
 * The wall clock (CLOCK_MONOTONIC, ns; measure.c): the default primary probe, attached by the
 * runner to every benchmark, innermost. Its value is the sample's elapsed time, or the metric
 * "host_wall" when another probe gives the time. One benchmark runs at a time: a single probe.
 */
bench__probe *bench__wall_probe(void);
/** When the wall clock last started (CLOCK_MONOTONIC, ns): with its value, the sample's span. */
int64_t bench__wall_started_ns(void);

#endif /* HARNESS_MEASURE_H */
