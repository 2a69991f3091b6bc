/*
 * Public entry points of the PRNG (xoshiro256** seeded by splitmix64). They wrap the inline core in
 * wl_internal.h, which the generators inside the library call directly; both are one definition, so
 * the sequence a caller sees is the one the graph builder consumes.
 */
#include "wl_internal.h"

void wl_rng_seed(wl_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * UINT64_C(0xD1B54A32D192ED03));
    for (int i = 0; i < 4; i++)
        r->s[i] = wl__splitmix64(&x);
}

uint64_t wl_rng_next(wl_rng *r)
{
    return wl__rng_next(r);
}

float wl_rng_float(wl_rng *r)
{
    return wl__rng_float(r);
}

float wl_rng_float_signed(wl_rng *r)
{
    return wl__rng_float_signed(r);
}

uint64_t wl_rng_below(wl_rng *r, uint64_t n)
{
    if (n <= 1) {
        (void)wl__rng_next(r);
        return 0;
    }
    /* Outputs below 2^64 mod n would make small remainders more likely: reject them. */
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        uint64_t x = wl__rng_next(r);
        if (x >= threshold)
            return x % n;
    }
}

uint64_t wl_mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}
