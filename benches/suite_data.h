/*
 * suite_data.h: inputs the reference suite's benchmark files share.
 */
#ifndef BENCHES_SUITE_DATA_H
#define BENCHES_SUITE_DATA_H

#include <stddef.h>

#include <workloads/workloads.h>

/* Dimension of the embeddings and the seed of every input of the suite. */
#define SUITE_DIM 768
#define SUITE_SEED 42

/*
 * The seeded candidate matrix of `count` rows of SUITE_DIM floats, built on first use and kept
 * for the rest of the run (read-only: the CPU and GPU similarity benchmarks and the read probes
 * of one size share one, 300 MB at 100k). NULL with *rc set when it cannot be built.
 */
const wl_matrix *suite_matrix(size_t count, int *rc);

#endif /* BENCHES_SUITE_DATA_H */
