/*
 * since_last.c: Criterion's "change since the last run", the block that ends the pretty output
 * of a run of times that names no baseline, and the last-run file (store/last.c) each such run
 * keeps for the next one. The last run is the newest run in the history when there is one
 * (--history, BENCH_HISTORY), else that file. Either way the block compares each benchmark's
 * per-process medians with this run's, at the family level over the benchmarks listed, by the
 * verdict rules of a baseline comparison (compare/), and report/report_since_last.c prints one
 * line per benchmark in one format. It is information only: it never changes the exit code, and
 * nothing here stops the run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "compare/verdict.h"
#include "report/report_since_last.h"
#include "run/baselines.h"
#include "run/pipeline.h"
#include "run/programs.h"
#include "run/sides.h"
#include "run/since_last.h"
#include "store/history.h"

/* A benchmark of this run that its last run also measured. */
typedef struct since_row {
    size_t i;                 /* its result */
    bench__side old;          /* the last run's side, over its processes */
    char against[320];        /* what the last run is called on the line */
    const char *program_hash; /* the program that measured it then; "" unknown */
} since_row;

/* The comparison of rows[0..m) with this run's results, printed as the block (report/): a
 * blank line, "WHAT (WHERE; --no-last hides this):" and a line per row. Nothing when m is 0. */
static void compare_since(FILE *o, const bench__request *c, const bench__context *ctx,
                        const bench__result *results, const since_row *rows, size_t m,
                        const char *what, const char *where)
{
    bench__side *old = calloc(m ? m : 1, sizeof *old), *cur = calloc(m ? m : 1, sizeof *cur);
    bench__change *ch = calloc(m ? m : 1, sizeof *ch);
    bench__since_line *lines = calloc(m ? m : 1, sizeof *lines);
    if (!old || !cur || !ch || !lines || m == 0)
        goto out;
    for (size_t j = 0; j < m; j++) {
        old[j] = rows[j].old;
        bench__side_of_result(c, &results[rows[j].i], &cur[j]);
    }
    if (bench__compare_all(old, cur, m, &c->cmp, ch) != 0)
        goto out;
    for (size_t j = 0; j < m; j++) {
        /* The same program as then: whatever moved is the machine's, as a same-program row of
         * a baseline comparison says. */
        bool same = bench__same_program(rows[j].program_hash, ctx->program_hash);
        lines[j] = (bench__since_line){results[rows[j].i].inst->id, rows[j].against, &ch[j],
                                       bench__verdict_machine_moved(ch[j].verdict, same)};
    }
    bench__report_since(o, what, where, lines, m, c->cmp.noise_threshold);
out:
    free(old);
    free(cur);
    free(ch);
    free(lines);
}

void bench__since_history(FILE *o, const bench__request *c, const bench__context *ctx,
                          const bench__result *results, size_t n)
{
    const char **ids = calloc(n ? n : 1, sizeof *ids);
    bench__history_last *last = calloc(n ? n : 1, sizeof *last);
    since_row *rows = calloc(n ? n : 1, sizeof *rows);
    char msg[512], shown[4 * sizeof msg];
    if (!ids || !last || !rows)
        goto out;
    for (size_t i = 0; i < n; i++)
        ids[i] = results[i].inst->id;
    if (bench__history_last_runs(c->history, ctx, ids, n, last, msg, sizeof msg) != 0) {
        bench__errf("warning: no change since the last run: %s\n",
                    bench__escape(shown, sizeof shown, msg));
        goto out;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const bench__result *r = &results[i];
        if (r->status != BENCH__OK || last[i].run == 0 || r->processes < 2)
            continue;
        /* Each saved per-process median is one "sample" of one iteration in its own process. */
        size_t k = last[i].n;
        double *ones = malloc(k * sizeof *ones);
        uint32_t *proc = malloc(k * sizeof *proc);
        int rc = ones && proc ? 0 : -1;
        for (size_t j = 0; rc == 0 && j < k; j++) {
            ones[j] = 1.0;
            proc[j] = (uint32_t)j;
        }
        if (rc == 0)
            rc = bench__side_from_processes(ones, last[i].medians, proc, k, (unsigned)k,
                                            c->run.confidence_level, &rows[m].old);
        free(ones);
        free(proc);
        if (rc != 0)
            continue;
        rows[m].i = i;
        rows[m].program_hash = last[i].program_hash;
        bench__msg(rows[m].against, sizeof rows[m].against, "run %lld, %s", last[i].run,
                   last[i].revision);
        m++;
    }
    compare_since(o, c, ctx, results, rows, m, "Since the last run in the history",
                bench__escape(shown, sizeof shown, bench__history_name(c->history)));
out:
    if (last)
        bench__history_last_free(last, n);
    free(ids);
    free(last);
    free(rows);
}

void bench__since_kept(FILE *o, const bench__request *c, const bench__context *ctx,
                       const bench__saved *last, const char *path, const bench__result *results,
                       size_t n)
{
    since_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const bench__result *r = &results[i];
        const bench__entry *e = bench__saved_find(last, r->inst->id);
        /* Over processes on both sides, as the history's per-process medians are. */
        if (r->status != BENCH__OK || r->processes < 2 || !e || e->status != BENCH__OK ||
            e->processes < 2 || !e->process || bench__side_of_entry(c, e, &rows[m].old) != 0)
            continue;
        rows[m].i = i;
        /* An entry names its program and the run that measured it; one the file's newest run
         * measured has its revision. Files from before entries named their run: the program
         * tells, unless a run of a subset kept it from a run of the same program. */
        rows[m].program_hash = e->program_hash[0] ? e->program_hash : last->ctx.program_hash;
        bool newest = e->timestamp[0] ? strcmp(e->timestamp, last->ctx.timestamp) == 0
                                      : strcmp(rows[m].program_hash, last->ctx.program_hash) == 0;
        if (!newest) /* report/ escapes it */
            bench__msg(rows[m].against, sizeof rows[m].against, "an earlier run%s%s",
                       e->timestamp[0] ? ", " : "", e->timestamp);
        else
            bench__msg(rows[m].against, sizeof rows[m].against, "%s",
                       last->ctx.git_revision[0] ? last->ctx.git_revision : "the last run");
        m++;
    }
    char where[8192], when[4 * sizeof last->ctx.timestamp], file[4 * 4096];
    bench__msg(where, sizeof where, "%s, %s",
               bench__escape(when, sizeof when, last->ctx.timestamp[0] ? last->ctx.timestamp
                                                                        : "when unknown"),
               bench__escape(file, sizeof file, path));
    compare_since(o, c, ctx, results, rows, m, "Since the last run", where);
    free(rows);
}

/* How many of the saved run's entries are benchmarks of this program. */
static size_t count_in_program(const bench__saved *s, const struct program *prog)
{
    size_t k = 0;
    for (size_t j = 0; j < s->n; j++)
        k += bench__in_program(prog, s->entries[j].id);
    return k;
}

int bench__since_open(const char *path, const struct program *prog, bench__saved *out)
{
    char msg[1024], shown[4 * sizeof msg];
    int rc = bench__last_load(path, out, msg, sizeof msg);
    if (rc == BENCH_EUNAVAIL)
        return rc;
    if (rc == 0 && out->n > 0 && count_in_program(out, prog) == 0) {
        /* A file of another program (copied there, or a collision of names): not this one's
         * numbers. The next save drops its entries. */
        bench__msg(msg, sizeof msg, "%s: holds none of this program's benchmarks (another "
                                    "program's file?)", path);
        bench__saved_destroy(out);
        rc = BENCH_EINVAL;
    }
    if (rc != 0)
        bench__errf("warning: no change since the last run: %s\n",
                    bench__escape(shown, sizeof shown, msg));
    return rc;
}

int bench__since_keep(const char *path, const bench__context *ctx, const bench__result *results,
                      size_t n, const struct program *prog, bool quiet)
{
    size_t k = 0;
    bench__result *ok = bench__ok_results(results, n, &k);
    char msg[1024], shown[4 * sizeof msg];
    int rc = ok ? 0 : BENCH_ENOMEM;
    if (!ok)
        bench__msg(msg, sizeof msg, "out of memory");
    /* Nothing measured: the file stays as it was. */
    if (rc == 0 && k > 0) {
        bench__context sctx = *ctx;
        sctx.comparison = NULL;
        rc = bench__last_keep(path, &sctx, ok, k, bench__in_program, prog, msg, sizeof msg);
    }
    free(ok);
    /* Another run saving the same file at this moment: its results are as recent. */
    if (rc != 0 && rc != BENCH_EUNAVAIL && !quiet)
        bench__errf("warning: the last run is not kept for the next: %s\n",
                    bench__escape(shown, sizeof shown, msg));
    return rc;
}
