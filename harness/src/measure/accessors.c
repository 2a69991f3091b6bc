/*
 * accessors.c: the public functions a benchmark body calls on its bench_t (bench.h): its
 * parameter, argument-grid values and id, the bytes and elements one iteration handles, and
 * skipping or failing it with a reason. They touch the running benchmark's state only (body.h),
 * never the clock. On a follower thread of a threaded body (team.c) they go through the team:
 * the result is the leader's alone while the threads run.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/base.h"
#include "core/result.h"
#include "measure/body.h"

int64_t bench_param(const bench_t *b)
{
    return b->inst->param;
}

const char *bench_arg_str(const bench_t *b, const char *name)
{
    return bench__instance_arg(b->inst, name);
}

/* The axis's value, or NULL with the benchmark failed saying why. */
static const char *arg_value(bench_t *b, const char *name)
{
    const char *v = bench__instance_arg(b->inst, name);
    if (!v)
        bench_fail(b, "bench_arg: '%s' is not an axis of this benchmark's .args%s",
                   name ? name : "(null)", b->inst->nargs ? "" : " (it has none)");
    return v;
}

int64_t bench_arg(bench_t *b, const char *name)
{
    const char *v = arg_value(b, name);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0') {
        bench_fail(b, "bench_arg: axis '%s' is '%s' here, not an integer (bench_arg_str reads "
                      "it as written)", name, v);
        return 0;
    }
    return (int64_t)x;
}

double bench_arg_double(bench_t *b, const char *name)
{
    const char *v = arg_value(b, name);
    if (!v)
        return 0;
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || !isfinite(x)) {
        bench_fail(b, "bench_arg_double: axis '%s' is '%s' here, not a number", name, v);
        return 0;
    }
    return x;
}

const char *bench_id(const bench_t *b)
{
    return b->inst->id;
}

int bench_thread_index(const bench_t *b)
{
    return (int)b->thread_index;
}

int bench_threads(const bench_t *b)
{
    return b->inst->threads > 1 ? b->inst->threads : 1;
}

void bench_set_bytes(bench_t *b, uint64_t bytes_per_iter)
{
    if (b->team)
        bench__team_set_work(b, &bytes_per_iter, NULL); /* any thread may: under the team's lock */
    else
        b->r->settings.bytes_per_iter = bytes_per_iter;
}

void bench_set_elements(bench_t *b, uint64_t elements_per_iter)
{
    if (b->team)
        bench__team_set_work(b, NULL, &elements_per_iter);
    else
        b->r->settings.elements_per_iter = elements_per_iter;
}

static void set_status(bench_t *b, bench__status st, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void set_status(bench_t *b, bench__status st, const char *fmt, va_list ap)
{
    if (b->follower) {
        bench__team_status(b, st, fmt, ap); /* the leader takes it at the next sample boundary */
        return;
    }
    bench__result_vstatus(b->r, st, fmt, ap);
}

void bench_skip(bench_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_status(b, BENCH__SKIPPED, fmt, ap);
    va_end(ap);
}

void bench_fail(bench_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_status(b, BENCH__FAILED, fmt, ap);
    va_end(ap);
}
