/*
 * reporters.c: what reporters share: the reporter that writes everything once the whole run is
 * known (JSON, Markdown, bencher), the JSON format's reporter, which prints what the results
 * file holds (store/json_write.c makes the document), and the bencher Metric Format's, which
 * prints each ok benchmark's median and interval (store/json_write.c writes it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "report/report.h"
#include "store/store.h"

static int json_end(bench__reporter *rep, const bench__context *ctx, const bench__result *all,
                    size_t n)
{
    return bench__json_print(rep->out, ctx, all, n);
}

void bench__reporter_json(bench__reporter *rep, FILE *out)
{
    bench__reporter_at_end(rep, out, json_end);
}

/* The bencher Metric Format: the benchmarks that ran ok, their medians and intervals. */
static int bmf_end(bench__reporter *rep, const bench__context *ctx, const bench__result *all,
                   size_t n)
{
    (void)ctx;
    bench__bmf_entry *e = calloc(n ? n : 1, sizeof *e);
    if (!e)
        return BENCH_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (all[i].status == BENCH__OK)
            e[k++] = (bench__bmf_entry){all[i].inst->id, all[i].est.median.point,
                                        all[i].est.median.lower, all[i].est.median.upper};
    int rc = bench__bmf_print(rep->out, e, k);
    free(e);
    return rc;
}

void bench__reporter_bmf(bench__reporter *rep, FILE *out)
{
    bench__reporter_at_end(rep, out, bmf_end);
}

static void at_end_begin(bench__reporter *rep, const bench__context *ctx)
{
    (void)rep;
    (void)ctx;
}

static void at_end_result(bench__reporter *rep, const bench__result *r)
{
    (void)rep;
    (void)r;
}

void bench__reporter_at_end(bench__reporter *rep, FILE *out,
                            int (*end)(bench__reporter *rep, const bench__context *ctx,
                                       const bench__result *all, size_t n))
{
    memset(rep, 0, sizeof *rep);
    rep->begin = at_end_begin;
    rep->result = at_end_result;
    rep->end = end;
    rep->out = out;
}

bool bench__use_color(int mode)
{
    if (mode >= 0)
        return mode == 1;
    const char *no_color = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    if (no_color && *no_color)
        return false;
    if (term && strcmp(term, "dumb") == 0)
        return false;
    return isatty(STDOUT_FILENO);
}
