/*
 * The two float kernels everything else is built on (a dot product and a plain sum used as a
 * read-bandwidth probe) and the run-time choice of their instruction set. Both kernels have one
 * fixed lane structure: element j is accumulated into partial sum p[j % 32] in increasing j, with
 * separate multiply and add (no FMA), and the 32 partial sums are combined in one fixed tree order.
 * The AVX2 path and the portable path implement exactly that structure, so they return
 * bit-identical results; which path runs can change speed but never a result. (The batched
 * similarity, wl_similarity.h, fuses each multiply and add of its dot products, on both paths
 * alike: the same bits on both, a few ulps from wl_dot.)
 */
#ifndef WORKLOADS_WL_SIMD_H
#define WORKLOADS_WL_SIMD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Instruction-set paths for the float kernels. */
typedef enum wl_simd_path {
    WL_SIMD_AUTO = 0,   /* best path this CPU supports (AVX2 if present, else scalar) */
    WL_SIMD_SCALAR = 1, /* portable C; the compiler may vectorise it, results are unchanged */
    WL_SIMD_AVX2 = 2,   /* x86-64 AVX2 intrinsics, chosen at run time; never AVX-512 */
} wl_simd_path;

/**
 * Returns the path the kernels use now. On first use it is resolved once: the environment
 * variable WL_SIMD ("scalar", "avx2" or "auto") is honoured when the CPU supports it, otherwise the
 * best supported path is taken. Never returns WL_SIMD_AUTO.
 */
wl_simd_path wl_simd_active(void);

/**
 * Forces the kernels onto path p (WL_SIMD_AUTO re-selects the best supported path, ignoring
 * WL_SIMD). Returns 0, or WL_E_UNAVAILABLE if the CPU or build lacks p (the active path is then
 * unchanged), or WL_E_INVAL for an unknown value. Meant for tests and benchmarks; it is a process
 * global, so do not change it while other threads run kernels.
 */
int wl_simd_force(wl_simd_path p);

/** Returns 1 if path p can run on this CPU and build, else 0 (AUTO and SCALAR: always 1). */
int wl_simd_supported(wl_simd_path p);

/** Returns a static name for p: "auto", "scalar", "avx2", or "unknown". Owned by the library. */
const char *wl_simd_name(wl_simd_path p);

/**
 * Returns the dot product of a[0..n) and b[0..n) with the fixed lane structure described above.
 * Neither pointer needs alignment; both may be NULL when n is 0. Reads 8n bytes, 2n+31 flops.
 */
float wl_dot(const float *a, const float *b, size_t n);

/**
 * Returns the sum of buf[0..n) with the same lane structure as wl_dot (element j into p[j % 32],
 * same combining tree). A read-bandwidth probe: it streams 4n bytes at the same access pattern as a
 * similarity scan, so a benchmark can set the scan's bytes/s against raw reads of an equal buffer.
 */
float wl_read_probe(const float *buf, size_t n);

/**
 * The compute probe: `rounds` rounds of 12 independent 8-lane float multiply-add chains, fused
 * (one FMA instruction each) on the AVX2 path when the CPU has FMA; separate multiply and add on
 * the portable path. Enough independent chains that the FMA units' throughput, not one chain's
 * latency, sets the pace: its rate is the peak flop rate of one core at the kernels' vector width
 * (8 floats; never AVX-512), against which a compute-bound kernel is held. Returns a value that
 * depends on every chain (keep it, so the loop is not removed). Flops:
 * WL_COMPUTE_PROBE_FLOPS_PER_ROUND x rounds, counting an FMA as 2; reads no memory.
 */
float wl_compute_probe(size_t rounds);

/** Flops of one round of wl_compute_probe: 12 chains x 8 lanes x 2. */
#define WL_COMPUTE_PROBE_FLOPS_PER_ROUND 192

#ifdef __cplusplus
}
#endif

#endif /* WORKLOADS_WL_SIMD_H */
