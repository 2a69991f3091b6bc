/*
 * report_interop.c: results in other tools' formats. Placeholder until the interop layer lands.
 */
#include "internal.h"

static void none_begin(bench__reporter *rep, const bench__context *ctx)
{
    (void)rep;
    (void)ctx;
}

static void none_result(bench__reporter *rep, const bench__result *r)
{
    (void)rep;
    (void)r;
}

static int none_end(bench__reporter *rep, const bench__context *ctx, const bench__result *all,
                    size_t n)
{
    (void)rep;
    (void)ctx;
    (void)all;
    (void)n;
    return 0;
}

void bench__reporter_bencher(bench__reporter *rep, FILE *out)
{
    rep->begin = none_begin;
    rep->result = none_result;
    rep->end = none_end;
    rep->out = out;
    rep->color = false;
}

int bench__gbench_write_file(const char *path, const bench__context *ctx, const bench__result *all,
                             size_t n, char *msg, size_t msglen)
{
    (void)ctx;
    (void)all;
    (void)n;
    bench__msg(msg, msglen, "%s: Google Benchmark export is not part of this build", path);
    return BENCH_EUNAVAIL;
}
