/*
 * complexity.c: the asymptotic complexity of a parameter sweep (stats.h): each class from O(1)
 * to O(N^3) fitted through the origin to the times, and a class named only when it fits within
 * the stated rms bound, clearly better than the next class and over enough parameters.
 *
 * Invariant, as in stats.c: nothing here reads a clock, a file or a global.
 */
#include "stats/stats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *bench__big_o_name(bench__big_o o)
{
    static const char *const names[BENCH__NBIG_O] = {"O(1)",       "O(log N)", "O(N)",
                                                     "O(N log N)", "O(N^2)",   "O(N^3)"};
    return (unsigned)o < BENCH__NBIG_O ? names[o] : "?";
}

double bench__big_o_f(bench__big_o o, double n)
{
    switch (o) {
    case BENCH__O_1:
        return 1.0;
    case BENCH__O_LOG_N:
        return log2(n);
    case BENCH__O_N:
        return n;
    case BENCH__O_N_LOG_N:
        return n * log2(n);
    case BENCH__O_N2:
        return n * n;
    case BENCH__O_N3:
        return n * n * n;
    }
    return NAN;
}

int bench__complexity_fit(const double *n, const double *t, size_t k, bench__complexity *out)
{
    if (k < 3)
        return -1;
    bool distinct = false;
    for (size_t i = 0; i < k; i++) {
        if (!(n[i] > 1) || !(t[i] > 0) || !isfinite(n[i]) || !isfinite(t[i]))
            return -1;
        distinct = distinct || n[i] != n[0];
    }
    if (!distinct)
        return -1;
    bench__complexity c;
    c.best = BENCH__O_1;
    for (int o = 0; o < BENCH__NBIG_O; o++) {
        /* Least squares of the relative residuals (t - c f) / t: every parameter counts alike,
         * whatever its time, so a sweep over decades is fitted over all of it and not only at
         * its largest N (where plain least squares puts nearly all the weight). */
        double sq = 0, s = 0;
        for (size_t i = 0; i < k; i++) {
            double q = bench__big_o_f((bench__big_o)o, n[i]) / t[i];
            s += q;
            sq += q * q;
        }
        c.coefficient[o] = s / sq;
        double ss = 0;
        for (size_t i = 0; i < k; i++) {
            double r = 1 - c.coefficient[o] * bench__big_o_f((bench__big_o)o, n[i]) / t[i];
            ss += r * r;
        }
        c.rms[o] = sqrt(ss / (double)k);
        if (c.rms[o] < c.rms[c.best])
            c.best = (bench__big_o)o;
    }
    c.next = c.best == BENCH__O_1 ? BENCH__O_LOG_N : BENCH__O_1;
    for (int o = 0; o < BENCH__NBIG_O; o++)
        if (o != (int)c.best && c.rms[o] < c.rms[c.next])
            c.next = (bench__big_o)o;
    /* A class is named only where it describes the sweep and no other class nearly does. */
    double best = c.rms[c.best], next = c.rms[c.next];
    c.why_not[0] = '\0';
    if (k < BENCH__COMPLEXITY_MIN_POINTS)
        snprintf(c.why_not, sizeof c.why_not, "%zu parameters, fewer than %d", k,
                 BENCH__COMPLEXITY_MIN_POINTS);
    else if (!(best <= BENCH__COMPLEXITY_MAX_RMS))
        snprintf(c.why_not, sizeof c.why_not, "rms %.1f%%, above %.0f%%", 100 * best,
                 100 * BENCH__COMPLEXITY_MAX_RMS);
    else if (!(next >= BENCH__COMPLEXITY_MARGIN * best))
        snprintf(c.why_not, sizeof c.why_not, "%s fits nearly as well (rms %.1f%%, under "
                 "%.1fx)", bench__big_o_name(c.next), 100 * next, BENCH__COMPLEXITY_MARGIN);
    c.named = c.why_not[0] == '\0';
    *out = c;
    return 0;
}
