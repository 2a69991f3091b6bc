/*
 * cuda.h: the CUDA layer's probe (cuda.c): CUDA events as the time of BENCH_CUDA_FNs, the GPU's
 * state and throttled samples, the GPU clocks of a comparison and their locking, and the GPU part
 * of the context. Its backend is probes/cuda_backend.h's.
 */
#ifndef HARNESS_CUDA_H
#define HARNESS_CUDA_H

#include <stddef.h>

#include "core/probe.h"
#include "probes/cuda_backend.h"
#include "sys/context.h"

/**
 * The CUDA layer's probe (cuda.c): attaches to CUDA benchmarks only (times them with CUDA
 * events: a primary probe), and skips them with the reason when there is no CUDA build, device
 * or driver. Always present; first in the run's probe list.
 */
bench__probe *bench__cuda_probe(void);

/**
 * Before a CUDA benchmark's estimate (called by bench__analyze): leaves out the samples that ran
 * throttled, those whose mean SM clock (metric gpu_sm_cycles over the GPU time) is below 75% of
 * the reference clock (fact gpu_sm_clock_reference_mhz, or the clock this process locked); all
 * stay when all are throttled. Adds the facts gpu_throttled_samples, gpu_sm_clock_threshold_mhz
 * and the kept samples' mean gpu_sm_clock_mhz, gpu_mem_clock_mhz and gpu_power_w. Does nothing
 * to a benchmark without GPU-state metrics.
 */
void bench__cuda_analyze(struct bench__result *r);

/** The CUDA probe's metric of SM cycles per sample (its mean clock is cycles over GPU time). */
#define BENCH__GPU_SM_CYCLES "gpu_sm_cycles"
/**
 * When r has GPU clocks and its mean SM clock differs from the baseline's (then_mhz, from its
 * saved samples; not above 0: unknown) by more than 2%: writes a one-line note saying so into
 * buf and returns 1; else 0.
 */
int bench__cuda_clock_note(const struct bench__result *r, double then_mhz, char *buf, size_t len);

/**
 * Locks device 0's SM clock at mhz through NVML (--gpu-lock-clocks) until
 * bench__cuda_unlock_clocks. 0; or BENCH_EUNAVAIL with the reason in msg (no GPU, no NVML, not
 * permitted: NVML needs root for it).
 */
int bench__cuda_lock_clocks(unsigned mhz, char *msg, size_t msglen);
/** Undoes bench__cuda_lock_clocks (a warning on stderr if that fails); no-op without a lock. */
void bench__cuda_unlock_clocks(void);

/** Replaces the probe's backend (tests); NULL restores the default. Forgets the cached query. */
void bench__cuda_set_ops(const bench__cuda_ops *ops);

/** Fills the run context's GPU part from the backend's query. */
void bench__cuda_context_collect(bench__gpu *g);

#endif /* HARNESS_CUDA_H */
