/*
 * The full profiling workload: build the reference graph, run spreading-activation queries,
 * similarity queries and one decay pass, and fold every result into a 64-bit checksum. Each phase
 * is a separate non-inlined function so a sampling profiler attributes time per phase. The checksum
 * is a pure function of the parameters: identical across runs, builds with the documented flags,
 * and SIMD paths (the batched and the one-query-per-call similarity phase give two different
 * values, see similarity_batch). Changing any workload semantics changes it, and the pinned value in
 * tests/workloads/test_profile.c must then be updated deliberately.
 */
#ifndef WORKLOADS_WL_PROFILE_H
#define WORKLOADS_WL_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "workloads/wl_activation.h"
#include "workloads/wl_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Sizes and parameters of a profiling run. */
typedef struct wl_profile_params {
    wl_graph_params graph;               /* graph to build */
    size_t activation_queries;           /* spreading-activation queries, sources drawn at random */
    wl_activation_params activation;     /* parameters of every activation query */
    size_t similarity_queries;           /* similarity queries over the graph's embeddings */
    size_t top_k;                        /* results per similarity query */
    size_t similarity_batch;             /* queries per wl_similarity_topk_batch call; 0 or 1:
                                            one wl_similarity_topk call per query (its own
                                            checksum: the batch fuses multiply and add) */
    float decay_tau_days;                /* decay time scale, days */
    /* Told each phase's start (begin 1) and end (begin 0), named "build", "activation",
     * "similarity" and "decay", so a caller can mark them (a benchmark's spans, bench.h);
     * NULL: none. It must not change anything the checksum depends on. */
    void (*phase)(void *arg, const char *name, int begin);
    void *phase_arg;                     /* phase's first argument */
} wl_profile_params;

/** Outcome of a profiling run. Times are wall-clock (CLOCK_MONOTONIC), in seconds. */
typedef struct wl_profile_result {
    uint64_t checksum;        /* fold of all results; see docs/workloads.md */
    double build_s;           /* graph generation, CSR build, norms; seconds */
    double activation_s;      /* all activation queries, including their checksum fold; seconds */
    double similarity_s;      /* all similarity queries, including their checksum fold; seconds */
    double decay_s;           /* the decay pass, including its checksum fold; seconds */
    double total_s;           /* whole run, including setup and teardown; seconds */
    uint64_t edges_traversed; /* sum over activation queries, edges */
    uint64_t nodes_fired;     /* sum over activation queries, nodes */
    const char *simd;         /* name of the SIMD path used (static string) */
} wl_profile_result;

/**
 * Fills *p with the reference workload for seed: the 10k-node, 50k-edge, D = 768 graph; 1000
 * activation queries (decay 0.5, threshold 0.01, at most 8 iterations); 1000 similarity queries,
 * top 10 of 10,000, in batches of 64; decay with tau = 1 day over all nodes. No phase hook.
 */
void wl_profile_params_default(wl_profile_params *p, uint64_t seed);

/**
 * Runs the workload described by *p and fills *out. Returns 0 or a negative wl_error code
 * (WL_E_INVAL for activation queries on an empty graph, or any error of the phases).
 */
int wl_profile_run_params(const wl_profile_params *p, wl_profile_result *out);

/** Runs the reference workload (wl_profile_params_default) for seed. Returns as above. */
int wl_profile_run(uint64_t seed, wl_profile_result *out);

#ifdef __cplusplus
}
#endif

#endif /* WORKLOADS_WL_PROFILE_H */
