/*
 * alloc.h: the allocation statistics probe (alloc.c, --alloc-stats) and the preload of its
 * shim. Its create function follows the rule of perf.h's.
 */
#ifndef HARNESS_ALLOC_H
#define HARNESS_ALLOC_H

#include <stddef.h>

#include "core/probe.h"

/**
 * Allocation statistics: the malloc family counted per iteration (alloc.c) by the preload
 * library libharness_alloc.so; BENCH_EUNAVAIL (reason in msg) when it is not loaded.
 */
int bench__alloc_probe_create(bench__probe **out, char *msg, size_t msglen);
/**
 * Makes sure the allocation shim is loaded: returns 0 when it is; otherwise re-executes the
 * program (/proc/self/exe with argv[0..argc)) with the shim first in LD_PRELOAD, and does not
 * return. BENCH_EUNAVAIL with the reason in msg when that cannot work: a statically linked
 * program, the shim not found, already re-executed without success, under valgrind.
 */
int bench__alloc_preload(int argc, char **argv, char *msg, size_t msglen);

#endif /* HARNESS_ALLOC_H */
