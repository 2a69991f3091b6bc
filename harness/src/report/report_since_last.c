/*
 * report_since_last.c: the block that ends the pretty output of a run of times with its change
 * since the last run (run/since_last.c compares, compare/ decides). Two runs of a shared machine
 * often differ by more than their process spreads, and the interval then spans [-70%, +140%]
 * for every line: numbers that say nothing. A row whose comparison cannot see a change of
 * SINCE_MAX_MDE (its minimum detectable effect is above it) and decides nothing prints its
 * change and the smallest change it could tell instead of the interval.
 */
#include <math.h>
#include <stdio.h>

#include "compare/verdict.h"
#include "core/base.h"
#include "report/report_since_last.h"

/* Above this minimum detectable effect (a change of half the time unseen), an undecided row
 * prints no interval. */
#define SINCE_MAX_MDE 0.5
/* A larger detectable effect is printed as this (1000%): "cannot tell changes below 1000%" stays
 * true, and no digits of a number that big mean anything. */
#define SINCE_MDE_SHOWN 10.0

void bench__report_since(FILE *o, const char *what, const char *where,
                         const bench__since_line *lines, size_t n, double noise_threshold)
{
    if (n == 0)
        return;
    fprintf(o, "\n%s (%s; --no-last hides this):\n", what, where);
    for (size_t j = 0; j < n; j++) {
        char id[BENCH__ESCAPED_ID], against[4 * 320];
        const bench__change *x = lines[j].change;
        const char *moved = lines[j].machine_moved
                                ? " (same program: the numbers moved, the code did not)"
                                : "";
        fprintf(o, "  %s (against %s): %+.2f%%", bench__escape(id, sizeof id, lines[j].id),
                bench__escape(against, sizeof against, lines[j].against),
                100.0 * (x->ratio - 1.0));
        if (bench__verdict_decided(x->verdict) || !(x->mde > SINCE_MAX_MDE)) {
            fprintf(o, " [%+.2f%%, %+.2f%%] %s%s\n", 100.0 * (x->ratio_lower - 1.0),
                    100.0 * (x->ratio_upper - 1.0), bench__verdict_name(x->verdict), moved);
            continue;
        }
        /* Why, when the machine's drift between the runs is the larger part of it. */
        char drift[96] = "";
        if (x->drift_measured && x->run_noise > noise_threshold)
            snprintf(drift, sizeof drift, " (the runs differ by about %.0f%% beyond their spread)",
                     100.0 * x->run_noise);
        fprintf(o, ", %s: cannot tell changes below %.0f%%%s%s\n",
                bench__verdict_name(x->verdict), 100.0 * fmin(x->mde, SINCE_MDE_SHOWN), drift,
                moved);
    }
}
