/*
 * rusage.c: context switches per iteration (--probe rusage), from getrusage(RUSAGE_THREAD)
 * around every sample: voluntary switches (the benchmark waited: a lock, I/O, sleep) and
 * involuntary ones (the scheduler took the CPU away: other work on a busy machine). It needs
 * no privilege and no PMU, so it works where perf_event counters do not.
 */
#define _GNU_SOURCE
#include <sys/resource.h>

#include "core/base.h"
#include "core/probe.h"
#include "core/result.h"

typedef struct rusage_state {
    long nvcsw, nivcsw; /* at the sample's start */
} rusage_state;

static void read_switches(long *vol, long *invol)
{
    struct rusage u;
    if (getrusage(RUSAGE_THREAD, &u) != 0) {
        *vol = *invol = 0;
        return;
    }
    *vol = u.ru_nvcsw;
    *invol = u.ru_nivcsw;
}

static int rusage_attach(bench__probe *p, bench__result *r)
{
    (void)p;
    if (bench__metric_add(r, "voluntary_switches", "events", "rusage") < 0 ||
        bench__metric_add(r, "involuntary_switches", "events", "rusage") < 0)
        return 1;
    return 0;
}

static void rusage_start(bench__probe *p)
{
    rusage_state *s = p->state;
    read_switches(&s->nvcsw, &s->nivcsw); /* last: the sample starts after it */
}

static void rusage_stop(bench__probe *p, double *values, double *fraction)
{
    rusage_state *s = p->state;
    long vol, invol;
    read_switches(&vol, &invol); /* first: the sample ended before it */
    values[0] = (double)(vol - s->nvcsw);
    values[1] = (double)(invol - s->nivcsw);
    *fraction = 1.0;
}

static int rusage_create(const char *arg, bench__probe **out, char *msg, size_t msglen)
{
    (void)arg;
    (void)msg;
    (void)msglen;
    static rusage_state state;
    static bench__probe probe = {
        .name = "rusage",
        .attach = rusage_attach,
        .start = rusage_start,
        .stop = rusage_stop,
        .state = &state,
    };
    *out = &probe;
    return 0;
}

BENCH__PROBE_KIND(rusage) = {.name = "rusage", .create = rusage_create};
