/*
 * Umbrella header of the reference graph workload library (prefix wl_). It depends on nothing but
 * the C library and libm, and in particular not on the benchmark harness: the harness measures it.
 */
#ifndef WORKLOADS_WORKLOADS_H
#define WORKLOADS_WORKLOADS_H

#include "workloads/wl_activation.h"
#include "workloads/wl_decay.h"
#include "workloads/wl_error.h"
#include "workloads/wl_graph.h"
#include "workloads/wl_profile.h"
#include "workloads/wl_rng.h"
#include "workloads/wl_similarity.h"
#include "workloads/wl_simd.h"

#endif /* WORKLOADS_WORKLOADS_H */
