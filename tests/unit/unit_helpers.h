/*
 * unit_helpers.h: what the unit tests share: a closeness assertion that prints both numbers,
 * standard normal draws from the harness's own seeded generator (so a simulation is the same on
 * every machine), and a result's fact by name. Include after <cmocka.h>.
 */
#ifndef TESTS_UNIT_HELPERS_H
#define TESTS_UNIT_HELPERS_H

#include <math.h>
#include <string.h>

#include "core/result.h"
#include "stats/stats.h"

/* Fails the test unless |got - want| <= tol, naming both. */
static inline void assert_close(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol)) {
        print_error("got %.17g, want %.17g (tol %g)\n", got, want, tol);
        fail();
    }
}

/* A standard normal draw (Box-Muller). */
static inline double normal(bench__rng *r)
{
    double u1 = 1.0 - bench__rng_uniform(r), u2 = bench__rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

#endif /* TESTS_UNIT_HELPERS_H */
