/*
 * known_cost.c: a dependent arithmetic chain. Each step needs the previous result, so it costs
 * one multiply latency plus one add latency whatever the compiler does; never inlined, so the
 * harness and the reference stopwatch (benches/known_cost_ref.c) run the same machine code.
 */
#include "known_cost.h"

__attribute__((noinline)) uint64_t known_cost_chain(uint64_t x, unsigned steps)
{
    for (unsigned i = 0; i < steps; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x)); /* keep the chain a chain: no unrolled closed form */
    }
    return x;
}
