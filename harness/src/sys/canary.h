/*
 * canary.h: the drift canaries (canary.c), four short fixed probes of the machine saved with
 * every baseline and measured again by every comparison with it: how many there are, their
 * names, measuring them, the memory canary's buffer, and the drift between two runs in numbers
 * and words. The context (context.h) carries their values.
 */
#ifndef HARNESS_CANARY_H
#define HARNESS_CANARY_H

#include <stdbool.h>
#include <stddef.h>

/** Drift canaries: how many, their names in files, and in words. */
#define BENCH__NCANARIES 4
extern const char *const bench__canary_names[BENCH__NCANARIES];
extern const char *const bench__canary_words[BENCH__NCANARIES];
/** The processes the canaries are measured in, one after another (canary.c). */
#define BENCH__CANARY_PROCS 5

/** One measurement of the drift canaries. */
typedef struct bench__canaries {
    /* ns per unit of each probe's work: the median over the processes; 0 when unknown */
    double v[BENCH__NCANARIES];
    /* each process's reading, samples[k][0..n); n 0: only v is known (files of earlier
     * versions, which measured in one process) */
    double samples[BENCH__NCANARIES][BENCH__CANARY_PROCS];
    int n;
    /* where in its buffer each process's memory probe began reading (bytes): each process
     * reads on from where the one before it stopped (bench__canaries_measure; not saved) */
    size_t memory_start[BENCH__CANARY_PROCS];
} bench__canaries;

/**
 * Measures the canaries (about 0.6 s) into out, in BENCH__CANARY_PROCS processes one after
 * another (forked; in this one when fork fails), the memory probe reading a buffer of
 * memory_bytes (bench__canary_memory_plan). 0, or BENCH_ENOMEM.
 */
int bench__canaries_measure(bench__canaries *out, size_t memory_bytes);
/**
 * Whether BENCH_CANARY_QUICK (a testing aid, docs/cli.md) is set, not empty and not "0": each
 * probe then reads 3 repetitions in each process instead of 21, and the memory probe the 64 MiB
 * floor whatever the cache (bench__canary_memory_plan says so).
 */
bool bench__canary_quick(void);
/**
 * The memory canary's buffer for a largest cache of llc_kib KiB from llc_source ("sysfs" or
 * "libcpuid"; llc_kib <= 0: unknown, and the default, 64 MiB, is used): the size
 * (bench__canary_memory_bytes) and why it is that size, in words, into why.
 */
size_t bench__canary_memory_plan(int llc_kib, const char *llc_source, char *why, size_t len);
/** The memory canary's buffer for a largest last-level cache of llc_bytes (0: unknown): four
 * times it, at least 64 MiB, at most 1 GiB, in whole MiB. */
size_t bench__canary_memory_bytes(size_t llc_bytes);
/**
 * The machine's drift from `then` to `now`: drift[k] = now/then - 1 for each canary known on both
 * sides (NaN otherwise), and beyond[k]: the machine changed in that probe, not only its readings
 * from one process to the next: the drift exceeds `threshold` and every process of one run read
 * beyond every process of the other (each run's readings taken relative to its median, so that
 * the spread of a reading edited by hand still counts). Those canaries, in words ("reads from
 * memory 12.0% slower, ...") into words. Returns how many were beyond.
 */
int bench__canaries_drift(const bench__canaries *now, const bench__canaries *then,
                          double threshold, double drift[BENCH__NCANARIES],
                          bool beyond[BENCH__NCANARIES], char *words, size_t len);
/**
 * The machine's drift as one number for the change test: the smallest of the canaries' absolute
 * log ratios (drift[k] as bench__canaries_drift gives them; NaN ones skipped), NaN when none is
 * known: the drift every kind of work shared (less CPU time for this process, a slower clock).
 * What one kind alone shows is not charged to every benchmark: on a busy 2-vCPU machine the L2
 * and memory probes moved 42-44% between two runs seconds apart while the latency chain moved
 * 0.3%, and so did a latency-bound benchmark. A verdict that rests on the saved numbers alone is
 * guarded by the largest drift instead (docs/comparison.md).
 */
double bench__canaries_shared_drift(const double drift[BENCH__NCANARIES]);

#endif /* HARNESS_CANARY_H */
