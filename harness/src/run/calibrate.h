/*
 * calibrate.h: between-run noise from separate runs of the program (calibrate.c, --calibrate):
 * the benchmarks run again in fresh worker processes, and each one's spread of medians.
 */
#ifndef HARNESS_RUN_CALIBRATE_H
#define HARNESS_RUN_CALIBRATE_H

#include <stddef.h>

#include "core/options.h"
#include "core/registry.h"
#include "core/result.h"

/**
 * Runs the n instances of `list` runs - 1 times, each time in fresh worker processes (one per
 * benchmark under --in-process), and stores each benchmark's median of run r in
 * medians[r * n + i] (NAN when it did not measure). Says on stderr which run it is on. Returns
 * 0; or an error code with the reason in msg: a benchmark failed, the run was interrupted
 * (bench__proc_interrupted), or memory ran out.
 */
int bench__calibrate(const bench__instance *const *list, size_t n, const bench__run_options *opt,
                     int argc, char **argv, unsigned runs, double *medians, char *msg,
                     size_t msglen);
/**
 * Sets each OK result's noise from its own median and its medians in the nruns calibration
 * runs (medians[r * n + i]): the mean and sd of the natural logs over all of them.
 */
void bench__noise_from_medians(bench__result *results, size_t n, const double *medians,
                               size_t nruns);

#endif /* HARNESS_RUN_CALIBRATE_H */
