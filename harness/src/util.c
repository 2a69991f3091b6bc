/*
 * util.c: small helpers shared by the harness: the error table's messages, bounded message
 * formatting, and the human formatting of times and rates used by every text reporter.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *bench_version(void)
{
    return HARNESS_VERSION;
}

const char *bench__strerror(int code)
{
    switch (code) {
#define BENCH__ERR_CASE(name, value, text)                                                         \
    case value:                                                                                    \
        return text;
        BENCH__ERRORS(BENCH__ERR_CASE)
#undef BENCH__ERR_CASE
    default:
        return "unknown error";
    }
}

void bench__msg(char *buf, size_t len, const char *fmt, ...)
{
    if (!buf || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n < 0)
        buf[0] = '\0';
}

/* Writes v with 4 significant digits (trailing zeros kept, as Criterion prints). */
static void fmt_sig4(char *buf, size_t len, double v, const char *unit)
{
    int decimals = 3;
    double a = fabs(v);
    if (a >= 1000.0)
        decimals = 0;
    else if (a >= 100.0)
        decimals = 1;
    else if (a >= 10.0)
        decimals = 2;
    snprintf(buf, len, "%.*f %s", decimals, v, unit);
}

void bench__fmt_time(char *buf, size_t len, double ns)
{
    if (!isfinite(ns)) {
        snprintf(buf, len, "%s", "n/a");
        return;
    }
    /* Thresholds sit where 4 significant digits would round up to 1000 of the smaller unit. */
    double a = fabs(ns);
    if (a < 0.99995)
        fmt_sig4(buf, len, ns * 1e3, "ps");
    else if (a < 999.95)
        fmt_sig4(buf, len, ns, "ns");
    else if (a < 999.95e3)
        fmt_sig4(buf, len, ns / 1e3, "\xc2\xb5s");
    else if (a < 999.95e6)
        fmt_sig4(buf, len, ns / 1e6, "ms");
    else
        fmt_sig4(buf, len, ns / 1e9, "s");
}

void bench__fmt_rate(char *buf, size_t len, double per_s, const char *unit)
{
    static const char *const prefix[] = {"", "K", "M", "G", "T", "P"};
    if (!isfinite(per_s)) {
        snprintf(buf, len, "%s", "n/a");
        return;
    }
    int p = 0;
    while (fabs(per_s) >= 999.95 && p < 5) {
        per_s /= 1000.0;
        p++;
    }
    char u[32];
    snprintf(u, sizeof u, "%s%s/s", prefix[p], unit);
    fmt_sig4(buf, len, per_s, u);
}

const char *bench__status_name(bench__status s)
{
    return s == BENCH__OK ? "ok" : s == BENCH__SKIPPED ? "skipped" : "failed";
}

const char *bench__failure_name(bench__failure f)
{
    switch (f) {
    case BENCH__FAIL_NONE:
        return "";
    case BENCH__FAIL_ERROR:
        return "error";
    case BENCH__FAIL_CRASHED:
        return "crashed";
    case BENCH__FAIL_EXITED:
        return "exited";
    case BENCH__FAIL_TIMED_OUT:
        return "timed out";
    }
    return "";
}

uint64_t bench__id_seed(uint64_t seed, const char *id)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (; *id; id++)
        h = (h ^ (unsigned char)*id) * 0x100000001b3ULL;
    return seed ^ h;
}

const char *bench__sampling_name(bench_sampling s)
{
    switch (s) {
    case BENCH_SAMPLING_LINEAR:
        return "linear";
    case BENCH_SAMPLING_FLAT:
        return "flat";
    default:
        return "auto";
    }
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
