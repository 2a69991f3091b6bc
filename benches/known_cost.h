/*
 * known_cost.h: a computation whose cost is fixed by the CPU's latencies, used to check that the
 * harness reports what an independent stopwatch measures for the same machine code.
 */
#ifndef BENCHES_KNOWN_COST_H
#define BENCHES_KNOWN_COST_H

#include <stdint.h>

/** Runs `steps` dependent multiply-add steps starting from x and returns the result. */
uint64_t known_cost_chain(uint64_t x, unsigned steps);

#endif
