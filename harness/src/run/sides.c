/*
 * sides.c: what a comparison compares: a saved entry and a result of this run each become a
 * side (an estimate with its spread, over processes when there were two or more, else from the
 * samples), by the same two-level estimate, so that a saved run and this one are taken alike;
 * and the benchmarks of a saved run that the FILTERs select and this side lacks, which a
 * comparison lists as removed (or skipped).
 */
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "run/pipeline.h"
#include "run/select.h"
#include "run/sides.h"

int bench__side_of_entry(const bench__request *c, const bench__entry *e, bench__side *out)
{
    if (e->processes >= 2 &&
        bench__side_from_processes(e->iters, e->totals_ns, e->process, e->nsamples,
                                   e->processes, c->run.confidence_level, out) == 0) {
        out->noise = e->noise;
        return 0;
    }
    uint64_t seed = bench__id_seed(c->run.seed, e->id);
    if (bench__side_from_samples(e->iters, e->totals_ns, e->nsamples, c->run.nresamples,
                                 c->run.confidence_level, seed, out))
        return -1;
    out->noise = e->noise;
    return 0;
}

void bench__side_of_result(const bench__request *c, const bench__result *r, bench__side *out)
{
    /* The same two-level estimate (and speed groups) a saved entry gives. */
    if (r->processes < 2 || !r->process ||
        bench__side_from_processes(r->iters, r->totals_ns, r->process, r->nsamples, r->processes,
                                   c->run.confidence_level, out) != 0) {
        memset(out, 0, sizeof *out);
        bench__side_from_estimate(&r->est.median, c->run.confidence_level, out);
    }
    out->noise = r->noise;
}

/*
 * The entries of `old` that the filters select and that `present` does not know: the benchmarks
 * a comparison reports as removed (or skipped, when the old side skipped them). A benchmark the
 * filters do not select is not reported at all: a filtered run says nothing about the rest.
 * Fills ids[] and verdicts[] (room for old->n each) and returns their count, or -1 after one line
 * on stderr.
 */
long bench__baseline_absent_entries(const bench__request *c, const bench__saved *old,
                               bool (*present)(const void *where, const char *id),
                               const void *where, const char **ids, bench__verdict *verdicts)
{
    const char **all = calloc(old->n ? old->n : 1, sizeof *all);
    bool *sel = calloc(old->n ? old->n : 1, sizeof *sel);
    long k = -1;
    if (!all || !sel) {
        bench__errf("out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < old->n; i++)
        all[i] = old->entries[i].id;
    if (bench__select(c, all, old->n, sel) != 0)
        goto out;
    k = 0;
    for (size_t i = 0; i < old->n; i++) {
        if (!sel[i] || present(where, all[i]))
            continue;
        bench__comparable(&old->entries[i].status, NULL, &verdicts[k]);
        ids[k++] = all[i];
    }
out:
    free(all);
    free(sel);
    return k;
}
