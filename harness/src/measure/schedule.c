/*
 * schedule.c: the one scheduler of the harness: in which order the rounds of the benchmarks of
 * a run are taken, in this process (runner.c's rounds) and in worker processes (the manager's
 * processes, one round each).
 *
 * Round j of every benchmark comes before round j + 1 of any, so that a slow stretch of the
 * machine spreads over all benchmarks instead of landing on one. A benchmark that takes fewer
 * rounds than the run's most (total) takes them spread evenly over the total (takes_round). With
 * `alternate`, odd rounds go through the benchmarks backwards, so that no benchmark always
 * follows the same neighbour, whose after-effects on caches and clocks would then always land on
 * it. Results are handed on in list order, each as soon as it and those before it are finished.
 */
#include <stddef.h>

#include "measure/run.h"

/* Whether a benchmark of e rounds takes one in round j of `total`: its rounds spread evenly. */
static bool takes_round(unsigned e, unsigned j, unsigned total)
{
    unsigned long long a = ((unsigned long long)j * e + total - 1) / total;
    unsigned long long z = ((unsigned long long)(j + 1) * e + total - 1) / total;
    return z > a;
}

int bench__schedule(size_t n, unsigned total, bool alternate, const bench__schedule_ops *ops,
                    void *arg)
{
    int rc = 0;
    size_t reported = 0;
    for (unsigned j = 0; j < total && rc == 0; j++) {
        for (size_t t = 0; t < n && rc == 0; t++) {
            size_t i = alternate && j % 2 ? n - 1 - t : t;
            if (!ops->finished(i, arg) && (j == 0 || takes_round(ops->rounds(i, arg), j, total)))
                rc = ops->step(i, j, arg);
            while (rc == 0 && reported < n && ops->finished(reported, arg))
                ops->report(reported++, arg);
        }
    }
    return rc;
}
