/*
 * counters.c: the user's own counters (bench_counter, declared with BENCH_FN's .counters), as a
 * probe of the table. At attach the declared names become metrics of the result (source
 * "counter", or "counter/s" once bench_counter asked for a rate); bench_counter adds to the
 * running sample's sum, and the probe's stop hands the sums over like any probe's values, so a
 * counter gets per-iteration estimates, its place in every output and its comparison with a
 * baseline from the code every metric goes through. One benchmark runs at a time in a process,
 * so the state is this file's. The sums are each thread's own (thread-local): in a threaded
 * benchmark (bench_desc.threads) every thread counts without a lock or an atomic in its timed
 * loop, and the leader adds the others' sums to its own at each sample boundary (thread_take).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/base.h"
#include "core/probe.h"
#include "core/result.h"

typedef struct counter_state {
    const bench_desc *attached;            /* the benchmark attached, NULL: none */
    const bench_desc *desc;                /* the same when it declares counters, else NULL */
    size_t n;                              /* counters declared */
    char names[BENCH_MAX_COUNTERS][64];    /* their names */
    int metric[BENCH_MAX_COUNTERS];        /* their metrics in r */
    atomic_uint rate;                      /* counter i asked for as a rate by another thread:
                                              bit i */
} counter_state;

/* What one thread counted: the running sample's sums, its last name pointers, its rate bits.
 * Initial-exec: the address is one load of a thread-pointer offset, no call. */
typedef struct counter_thread {
    double sum[BENCH_MAX_COUNTERS];       /* the running sample's sums */
    const char *last[BENCH_MAX_COUNTERS]; /* the last name pointer each was found by */
    unsigned rate;                        /* bench_counter asked for counter i as a rate: bit i */
    bool failed;                          /* this thread has failed the benchmark for a name */
} counter_thread;

static counter_state cs;
static _Thread_local counter_thread ct __attribute__((tls_model("initial-exec")));

/* The names of a .counters list into cs; 0, or -1 with the reason in why. */
static int parse_names(const char *list, char *why, size_t len)
{
    cs.n = 0;
    const char *p = list;
    while (*p) {
        size_t l = strcspn(p, ",");
        if (l == 0 || l >= sizeof cs.names[0]) {
            bench__msg(why, len, "BENCH_FN's .counters \"%.60s\" has an empty or over-long name "
                                 "(1 to 63 characters, separated by commas)", list);
            return -1;
        }
        if (cs.n == BENCH_MAX_COUNTERS) {
            bench__msg(why, len, "BENCH_FN's .counters declares more than %d counters",
                       BENCH_MAX_COUNTERS);
            return -1;
        }
        memcpy(cs.names[cs.n], p, l);
        cs.names[cs.n][l] = '\0';
        for (size_t i = 0; i < cs.n; i++)
            if (strcmp(cs.names[i], cs.names[cs.n]) == 0) {
                bench__msg(why, len, "BENCH_FN's .counters names '%s' twice", cs.names[i]);
                return -1;
            }
        cs.n++;
        p += l + (p[l] == ',');
    }
    return 0;
}

static int counters_attach(bench__probe *p, bench__result *r)
{
    (void)p;
    const bench_desc *d = r->inst ? r->inst->desc : NULL;
    cs.desc = NULL;
    cs.n = 0;
    /* Every benchmark, declaring or not: bench_counter fails one that declares no name. */
    cs.attached = d;
    memset(&ct, 0, sizeof ct); /* the attaching thread is the leader: new threads start clear */
    atomic_store(&cs.rate, 0);
    if (!d || !d->counters || !d->counters[0])
        return 1; /* nothing declared: no metric, no sample work */
    char why[160];
    if (parse_names(d->counters, why, sizeof why) != 0) {
        bench__result_fail(r, "%s", why);
        return 1;
    }
    for (size_t i = 0; i < cs.n; i++)
        if ((cs.metric[i] = bench__metric_add(r, cs.names[i], "events", "counter")) < 0)
            return 1; /* r is failed with the reason */
    cs.desc = d;
    return 0;
}

static void counters_start(bench__probe *p)
{
    (void)p;
    memset(ct.sum, 0, sizeof ct.sum);
}

static void counters_stop(bench__probe *p, double *values, double *fraction)
{
    (void)p;
    for (size_t i = 0; i < cs.n; i++)
        values[i] = ct.sum[i];
    *fraction = 1.0;
}

/* On a follower thread at a sample boundary: its sums into values, then cleared. */
static void counters_thread_take(bench__probe *p, double *values)
{
    (void)p;
    for (size_t i = 0; values && i < cs.n; i++)
        values[i] += ct.sum[i];
    memset(ct.sum, 0, sizeof ct.sum);
    if (ct.rate)
        atomic_fetch_or(&cs.rate, ct.rate);
}

static void counters_detach(bench__probe *p, bench__result *r)
{
    (void)p;
    /* Once, here, not on every call in the timed loop: the metrics asked for as rates (by
     * this thread, the leader, or another). */
    unsigned rate = ct.rate | atomic_load(&cs.rate);
    for (size_t i = 0; cs.desc && i < cs.n; i++)
        if ((rate >> i & 1) && cs.metric[i] >= 0 && (size_t)cs.metric[i] < r->nmetrics)
            bench__msg(r->metrics[cs.metric[i]].source, sizeof r->metrics[cs.metric[i]].source,
                       "counter/s");
    cs.desc = NULL;
    cs.attached = NULL; /* a call after this benchmark counts for none: it returns at once */
    cs.n = 0;
}

void bench_counter(bench_t *b, const char *name, double value, unsigned flags)
{
    if (!cs.attached)
        return; /* no benchmark attached: a run without the probe */
    for (size_t i = 0; i < cs.n; i++) {
        /* A string literal is the same pointer every call: the compare is then skipped. */
        if (ct.last[i] == name || (name && strcmp(cs.names[i], name) == 0)) {
            ct.last[i] = name;
            ct.sum[i] += value;
            ct.rate |= (unsigned)((flags & BENCH_COUNTER_RATE) != 0) << i;
            return;
        }
    }
    /* cs is left as it is: other threads of a threaded benchmark read it. The first failure's
     * reason is the one kept; this thread reports it once (a follower's goes through the
     * team's lock), however often the loop calls. */
    if (ct.failed)
        return;
    ct.failed = true;
    char shown[200];
    bench__escape(shown, sizeof shown, name ? name : "(null)");
    if (cs.desc)
        bench_fail(b, "bench_counter: '%s' is not one of BENCH_FN's .counters (\"%s\")", shown,
                   cs.desc->counters);
    else
        bench_fail(b, "bench_counter: '%s' is not declared: BENCH_FN has no .counters (declare "
                      "it with .counters = \"%s\")", shown, shown);
}

static int counters_create(const char *arg, bench__probe **out, char *msg, size_t msglen)
{
    (void)arg;
    (void)msg;
    (void)msglen;
    static bench__probe probe = {
        .name = "counters",
        .attach = counters_attach,
        .start = counters_start,
        .stop = counters_stop,
        .detach = counters_detach,
        .thread_take = counters_thread_take,
    };
    *out = &probe;
    return 0;
}

BENCH__PROBE_KIND(counters) = {.name = "counters", .always = true, .create = counters_create};
