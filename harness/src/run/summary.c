/*
 * summary.c: a finished comparison (a saved baseline, two saved files, a hand-off) closed the
 * one way: its rows sorted worst first and summarised by report/report_compare.c, and its exit
 * code taken from compare/verdict.c's bench__gate_exit under the gate's flags of the command
 * line (bench__request_gate): 1 for a regression with --fail-on-regression; otherwise 2 when
 * --baseline-strict meets a new or removed benchmark (each named on stderr); else 0. Skipped
 * benchmarks never change it.
 */
#include "compare/compare.h"
#include "report/report_compare.h"
#include "run/client.h"
#include "run/pipeline.h"
#include "run/summary.h"

int bench__request_compare_exit(const bench__request *c, const char *const *ids,
                                const bench__change *ch, size_t n, const char *against)
{
    bench__gate gate = bench__request_gate(c);
    return bench__compare_exit(ids, ch, n, &gate, against);
}

int bench__summarize(const bench__request *c, const bench__client *cl, FILE *o,
                     const char *what, const char **ids, bench__change *ch, size_t n,
                     const bench__context_change *context, bool color)
{
    if (bench__sort_changes(ids, ch, n) != 0 ||
        bench__print_compare_summary(o, what, ids, ch, n, &c->cmp, cl->method, context,
                                     color) != 0) {
        bench__errf("out of memory\n");
        return BENCH_EXIT_USAGE;
    }
    return bench__request_compare_exit(c, ids, ch, n, what);
}
