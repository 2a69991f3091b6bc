/*
 * probes.h: the table of probes (probes.c): the kinds the command line may ask for, the run's
 * probes made from it, and what the run asks of all kinds at once (analysis, clock locking,
 * notes on a comparison, the context). The pipeline and the runner reach the probes through
 * this table and the interface of core/probe.h, and never name one.
 */
#ifndef HARNESS_PROBES_H
#define HARNESS_PROBES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/probe.h"
#include "sys/context.h"

/** The table, in the order probes attach (probes.c); `n` gets its length. */
const bench__probe_kind *const *bench__probe_kinds(size_t *n);
/** The kind named `name` (its index in *index when not NULL), or NULL. */
const bench__probe_kind *bench__probe_kind_find(const char *name, size_t *index);
/**
 * Makes the run's probes: every `always` kind, and each kind k with on[k] (arg[k] its
 * argument), in table order, into out (room for BENCH__MAX_PROBE_KINDS). Returns the number
 * made, or -1 with "OPTION: reason" in msg (OPTION: the kind's own flag, else --probe NAME);
 * probes made before the failure are destroyed.
 */
int bench__probes_make(const bool *on, const char *const *arg, bench__probe **out, char *msg,
                       size_t msglen);
/** Calls every kind's analyze hook on r (bench__analyze, before the estimates). */
void bench__probes_analyze(struct bench__result *r);

/**
 * Locks the clocks of the devices the probes time at mhz (--gpu-lock-clocks), through each
 * kind's lock_clocks hook, until bench__probes_unlock_clocks. 0; or BENCH_EUNAVAIL with the
 * reason in msg (no kind can, or one could not).
 */
int bench__probes_lock_clocks(unsigned mhz, char *msg, size_t msglen);
/** Undoes bench__probes_lock_clocks; no-op without a lock. */
void bench__probes_unlock_clocks(void);
/**
 * After a comparison of r with a saved entry: the first note a kind's compare_note hook gives
 * (a GPU that ran at another clock) into buf, and 1; else 0. saved_rate(saved, metric) is the
 * saved entry's metric per ns of time (not above 0: unknown).
 */
int bench__probes_compare_note(const struct bench__result *r,
                               double (*saved_rate)(const void *saved, const char *metric),
                               const void *saved, char *buf, size_t len);
/**
 * The readings of devices' states that the kinds' probes took since the last call (through each
 * kind's readings hook: the GPU's clocks, temperature, power and throttling), at most max into
 * out; returns how many. --trace draws them as counters.
 */
size_t bench__probes_readings(bench__probe_reading *out, size_t max);
/** Fills the parts of the run context that the probes' layers know (the GPU, or why none). */
void bench__probes_context(bench__context *c);

#endif /* HARNESS_PROBES_H */
