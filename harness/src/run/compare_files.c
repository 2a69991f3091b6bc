/*
 * compare_files.c: --load-baseline NAME --baseline OTHER: two saved runs compared without
 * measuring anything, by the same rules (the mode's client, the family level, the summary and
 * the exit code) a run compared with its baseline gets.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "run/baselines.h"
#include "run/client.h"
#include "run/compare_files.h"
#include "run/instr.h"
#include "run/pipeline.h"
#include "run/select.h"
#include "run/sides.h"
#include "run/summary.h"

/* Whether a saved run has a benchmark: the "is it still there" test of
 * bench__baseline_absent_entries. */
static bool in_saved(const void *where, const char *id)
{
    return bench__saved_find(where, id) != NULL;
}

/* --load-baseline NEW --baseline OLD: compares two files, runs nothing. The files' mode
 * chooses the client: counts compare by counts. */
int bench__compare_files(const bench__request *cli)
{
    bench__saved cur, old;
    if (bench__baseline_load_named(cli, bench__client_for(cli), cli->load_baseline, &cur) != 0)
        return BENCH_EXIT_USAGE;
    if (bench__baseline_load_named(cli, bench__client_for(cli), cli->baseline, &old) != 0) {
        bench__saved_destroy(&cur);
        return BENCH_EXIT_USAGE;
    }
    bench__request copy = *cli, *c = &copy;
    const bench__client *cl = bench__client_of_mode(cur.ctx.mode);
    if (cl->configure)
        cl->configure(c);
    int exit_code = BENCH_EXIT_OK;
    /* Rows: cur.n benchmarks of NEW, then old.n at most that only OLD has. */
    size_t cap = cur.n + old.n;
    const char **ids = calloc(cur.n ? cur.n : 1, sizeof *ids);
    bool *sel = calloc(cur.n ? cur.n : 1, sizeof *sel);
    bench__side *a = calloc(cur.n ? cur.n : 1, sizeof *a);
    bench__side *b = calloc(cur.n ? cur.n : 1, sizeof *b);
    bench__change *ch = calloc(cap ? cap : 1, sizeof *ch);
    const char **cids = calloc(cap ? cap : 1, sizeof *cids);
    const char **sids = calloc(cap ? cap : 1, sizeof *sids);
    bench__verdict *sv = calloc(cap ? cap : 1, sizeof *sv);
    if (!ids || !sel || !a || !b || !ch || !cids || !sids || !sv) {
        bench__errf("out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0; i < cur.n; i++)
        ids[i] = cur.entries[i].id;
    if (bench__select(c, ids, cur.n, sel) != 0) {
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    if (bench__instr_is_mode(cur.ctx.mode) != bench__instr_is_mode(old.ctx.mode)) {
        bool cur_counts = bench__instr_is_mode(cur.ctx.mode);
        bench__errf("baseline '%s' holds %s but baseline '%s' holds %s: they cannot "
                    "be compared\n", c->load_baseline,
                    cur_counts ? "instruction counts" : "times", c->baseline,
                    cur_counts ? "times" : "instruction counts");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    /* Statuses first: NEW's benchmarks that cannot be compared by numbers, then OLD's that NEW
     * lacks. */
    size_t m = 0, ns = 0;
    for (size_t i = 0; i < cur.n; i++) {
        const bench__entry *e = &cur.entries[i];
        const bench__entry *o = sel[i] ? bench__saved_find(&old, e->id) : NULL;
        if (sel[i] && !bench__comparable(o ? &o->status : NULL, &e->status, &sv[ns]))
            sids[ns++] = e->id;
    }
    long nabsent = bench__baseline_absent_entries(c, &old, in_saved, &cur, sids + ns, sv + ns);
    if (nabsent < 0) {
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    ns += (size_t)nabsent;
    bench__context_change context;
    if (cl->times)
        bench__baseline_warn_context(&cur.ctx, &old.ctx, c->baseline, &context);
    for (size_t i = 0; i < cur.n; i++) {
        const bench__entry *e = &cur.entries[i];
        const bench__entry *o = sel[i] ? bench__saved_find(&old, e->id) : NULL;
        bench__verdict st;
        if (!sel[i] || !bench__comparable(o ? &o->status : NULL, &e->status, &st))
            continue;
        if (cl->compare_saved) {
            cl->compare_saved(c, o, e, &ch[m]);
        } else if (bench__side_of_entry(c, o, &a[m]) ||
                   bench__side_of_entry(c, e, &b[m])) {
            bench__errf("out of memory\n");
            exit_code = BENCH_EXIT_USAGE;
            goto out;
        }
        cids[m++] = e->id;
    }
    if (m + ns == 0) {
        bench__errf("nothing to compare: no selected benchmark in '%s' or '%s'\n",
                    c->load_baseline, c->baseline);
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    if (!cl->compare_saved && bench__compare_all(a, b, m, &c->cmp, ch) != 0) {
        bench__errf("out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    for (size_t j = 0; j < ns; j++) {
        ch[m + j].verdict = sv[j];
        cids[m + j] = sids[j];
    }
    char what[128];
    bench__msg(what, sizeof what, "baseline '%s'", c->baseline);
    exit_code = bench__finish_stdout(bench__summarize(
        c, cl, stdout, what, cids, ch, m + ns, cl->times ? &context : NULL,
        bench__use_color(c->color)));
out:
    free(ids);
    free(sel);
    free(a);
    free(b);
    free(ch);
    free(cids);
    free(sids);
    free(sv);
    bench__saved_destroy(&cur);
    bench__saved_destroy(&old);
    return exit_code;
}
