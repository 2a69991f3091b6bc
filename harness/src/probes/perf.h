/*
 * perf.h: the perf_event counter groups probe (perf.c) and --list-events.
 */
#ifndef HARNESS_PERF_H
#define HARNESS_PERF_H

#include <stddef.h>
#include <stdio.h>

#include "core/probe.h"

/*
 * The probes of the optional layers (perf.h, alloc.h, cuda.h). Each create function returns 0
 * and a probe; or a negative error code with a one-line reason in msg: BENCH_EINVAL for a bad
 * request (an event name nobody knows: exit 2), BENCH_EUNAVAIL when the layer is compiled out
 * or cannot work here. Warnings about parts that cannot work (an event the machine cannot
 * count) go to stderr, once.
 */

/** perf_event counter groups for a comma-separated list of events and presets (perf.c). */
int bench__perf_probe_create(const char *spec, bench__probe **out, char *msg, size_t msglen);
/** --list-events: what libpfm4 knows on this machine and what opens; returns the exit code. */
int bench__perf_list_events(FILE *out);

#endif /* HARNESS_PERF_H */
