/*
 * The seeded pseudo-random generator every workload draws from: xoshiro256** (Blackman and Vigna),
 * its 256-bit state filled by four successive outputs of splitmix64. Only integer arithmetic is
 * used, so one seed yields the same sequence, and therefore the same graph, on any machine.
 * Floats are built from the top 24 bits of one 64-bit output, which makes them exact and portable.
 */
#ifndef WORKLOADS_WL_RNG_H
#define WORKLOADS_WL_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Generator state. A plain value: copy it to fork a stream; no resources to free. */
typedef struct wl_rng {
    uint64_t s[4]; /* xoshiro256** state; never all zero once seeded */
} wl_rng;

/**
 * Seeds r from (seed, stream): a splitmix64 generator starts at
 * x = seed ^ (stream * 0xD1B54A32D192ED03) and its first four outputs become s[0..3].
 * Distinct streams of one seed give independent sequences (used so that, for example, a graph's
 * edges do not depend on its embedding dimension).
 */
void wl_rng_seed(wl_rng *r, uint64_t seed, uint64_t stream);

/** Returns the next 64-bit output of xoshiro256** and advances r. */
uint64_t wl_rng_next(wl_rng *r);

/** Returns a float uniform in [0, 1): (next >> 40) * 2^-24, exact, 2^24 equally likely values. */
float wl_rng_float(wl_rng *r);

/** Returns a float uniform in [-1, 1): (next >> 40) * 2^-23 - 1, exact (one output consumed). */
float wl_rng_float_signed(wl_rng *r);

/**
 * Returns an integer uniform in [0, n) without bias (rejects outputs below 2^64 mod n, then takes
 * the remainder). Returns 0 when n is 0 or 1 (and still consumes one output).
 */
uint64_t wl_rng_below(wl_rng *r, uint64_t n);

/** Returns splitmix64's finaliser applied to x: a fixed bijective 64-bit mix (for checksums). */
uint64_t wl_mix64(uint64_t x);

#ifdef __cplusplus
}
#endif

#endif /* WORKLOADS_WL_RNG_H */
