/*
 * instr.h: instruction-count mode (--instructions, instr.c, a client of the run pipeline: its
 * client is bench__instr_client in client.h): exact instructions per iteration counted by
 * valgrind's callgrind, and the comparison of such counts.
 *
 * A run in this mode saves and reads results like a time run, with context.mode
 * "instructions" and a per-sample metric "instructions" (source "callgrind"); a baseline of one
 * mode is never compared with a run of the other.
 */
#ifndef HARNESS_INSTR_H
#define HARNESS_INSTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compare/compare.h"

/** Smallest relative change of instructions per iteration reported (0.1%). */
#define BENCH__INSTR_DEFAULT_THRESHOLD 0.001
/** context.mode of a run in this mode. */
#define BENCH__INSTR_MODE "instructions"

/** The environment variable that asks a worker to keep its callgrind dumps in a folder, one per
 * sample ("sample<k>.cg", k from 0), for --explain's per-function counts (explain.c). */
#define BENCH__INSTR_KEEP_ENV "BENCH_INSTR_KEEP"

/** Whether a saved run's context.mode is instruction mode. */
bool bench__instr_is_mode(const char *mode);

/**
 * Per-iteration count from samples of `iters` iterations and `totals` counts: the slope of a
 * line with an intercept, which cancels a constant cost per sample. With two samples,
 * (totals[1] - totals[0]) / (iters[1] - iters[0]). NAN when it cannot be computed.
 */
double bench__instr_per_iter(const double *iters, const double *totals, size_t n);


#endif /* HARNESS_INSTR_H */
