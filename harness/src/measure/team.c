/*
 * team.c: a threaded body (bench_desc.threads > 1, Google Benchmark's Threads(N)). One call of
 * the body runs on N threads at once: the leader on the calling thread, with the probes, the plan
 * and the result (runner.c), and N - 1 followers on threads of their own, each with a bench_t and
 * a clock of its own and nothing else.
 *
 * Invariant: every thread runs the same iteration count in every sample, warm-up included, and
 * all start a sample together. At a sample boundary each thread first stops its own clock, then
 * stores its elapsed ns and waits at the gate; the leader records the sample (its time is the
 * team's span: the earliest start to the latest stop), decides the next count and publishes
 * it; all pass the gate a second time, and each starts its clock as its last action. So the
 * barrier waits are never timed.
 *
 * A thread whose body leaves its loop early, or never enters one, keeps passing the boundaries
 * without running anything until the leader publishes 0, so no thread waits for it forever; the
 * benchmark is then failed with the reason. A follower's bench_fail or bench_skip is kept here
 * and becomes the result's at the next boundary, where the leader reads it: the result itself
 * is the leader's alone while the threads run.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/result.h"
#include "probes/measure.h"
#include "measure/body.h"
#include "measure/run.h"
#include "measure/trace.h"
#include "sys/clock.h"

/* One thread of the team. Cache-line aligned: each thread writes its own only. */
typedef struct member {
    bench_t b;                           /* a follower's handle (member 0: unused) */
    pthread_t tid;
    bool started;                        /* its thread was created */
    int64_t t0;                          /* its clock's start, ns */
    bench__probe clock;                  /* its clock; state: &t0 */
    double clock_out;                    /* its clock's last value, ns */
    double elapsed;                      /* its time of the last sample, ns */
    double vals[BENCH__MAX_METRICS + 2]; /* its probes' share of the last sample */
    uint64_t cpus[BENCH__CPU_WORDS];     /* CPUs it was seen on at boundaries */
} __attribute__((aligned(64))) member;

typedef struct bench__team bench__team;

struct bench__team {
    unsigned n;              /* threads, the leader included */
    bench_t *leader;
    pthread_barrier_t gate;  /* the sample boundary, passed twice */
    pthread_mutex_t lock;    /* go, status, message, the result's settings */
    pthread_cond_t wake;     /* go changed */
    int go;                  /* 0: wait, 1: run the body, -1: do not (a thread failed to start) */
    bench__status status;    /* the first follower's bench_fail / bench_skip */
    char message[512];
    uint64_t next;           /* the next sample's iterations (0: done); written between passes */
    bool done;               /* the leader published 0 */
    double *elapsed;         /* per thread: elapsed ns of the last sample (the leader's) */
    member *m;               /* per thread */
};

static void follower_clock_start(bench__probe *p)
{
    *(int64_t *)p->state = bench__now_ns(); /* last action: the sample follows */
}

static void follower_clock_stop(bench__probe *p, double *values, double *fraction)
{
    int64_t t1 = bench__now_ns(); /* first action: nothing after the last iteration is timed */
    values[0] = (double)(t1 - *(int64_t *)p->state);
    *fraction = 1.0;
}

/* The first failure or skip of any follower wins; the leader's own goes straight to r. */
static void team_set(bench__team *t, bench__status st, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void team_set(bench__team *t, bench__status st, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&t->lock);
    if (t->status == BENCH__OK) {
        t->status = st;
        vsnprintf(t->message, sizeof t->message, fmt, ap);
    }
    pthread_mutex_unlock(&t->lock);
}

static void team_fail(bench__team *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void team_fail(bench__team *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    team_set(t, BENCH__FAILED, fmt, ap);
    va_end(ap);
}

void bench__team_status(bench_t *b, bench__status st, const char *fmt, va_list ap)
{
    team_set(b->team, st, fmt, ap);
}

void bench__team_set_work(bench_t *b, const uint64_t *bytes, const uint64_t *elements)
{
    bench__team *t = b->team;
    bench__settings *s = &t->leader->r->settings;
    pthread_mutex_lock(&t->lock);
    if (bytes)
        s->bytes_per_iter = *bytes;
    if (elements)
        s->elements_per_iter = *elements;
    pthread_mutex_unlock(&t->lock);
}

/* A follower's failure or skip becomes the result's, unless the result has a reason already. */
static void fold_status(bench__team *t)
{
    bench__result *r = t->leader->r;
    pthread_mutex_lock(&t->lock);
    if (t->status != BENCH__OK && r->status == BENCH__OK) {
        r->status = t->status;
        bench__msg(r->message, sizeof r->message, "%s", t->message);
    }
    pthread_mutex_unlock(&t->lock);
}

static void note_cpu(member *m)
{
    int c = sched_getcpu();
    if (c >= 0 && c < 64 * BENCH__CPU_WORDS)
        m->cpus[c / 64] |= UINT64_C(1) << (c % 64);
}

static void pass_gate(bench__team *t)
{
    pthread_barrier_wait(&t->gate);
}

uint64_t bench__team_follow(bench_t *b, bool stopped)
{
    bench__team *t = b->team;
    member *m = &t->m[b->thread_index];
    if (b->phase == PH_DONE) {
        /* The leader has left the boundaries: no gate may be waited at. */
        team_fail(t, "the timed loop ran more than once in one body (thread %u)", b->thread_index);
        return 0;
    }
    const bench_t *l = t->leader;
    for (size_t i = 0; i < l->nouter; i++) {
        bench__probe *p = l->probes[i];
        if (p->thread_take)
            p->thread_take(p, stopped ? m->vals + l->probe_first[i] : NULL);
    }
    if (stopped) {
        m->elapsed = m->clock_out;
        b->in_sample = false;
    }
    note_cpu(m);
    pass_gate(t);
    pass_gate(t); /* the leader published the next count in between */
    uint64_t n = t->next;
    if (n == 0) {
        b->phase = PH_DONE;
        return 0;
    }
    b->phase = PH_MEASURE;
    b->in_sample = true;
    return n;
}

const double *bench__team_gather(bench_t *b, bool stopped, double own_ns, double *span_ns)
{
    bench__team *t = b->team;
    t->m[0].elapsed = own_ns;
    t->m[0].t0 = bench__wall_started_ns(); /* the leader's clock is the wall clock */
    note_cpu(&t->m[0]);
    pass_gate(t);
    /* The followers wrote their part before the gate and wait at the next: it is ours to read.
     * The span runs from the earliest start to the latest stop: a thread that waited for a CPU
     * after the gate opened started late, and that wait is the team's time too (one clock,
     * CLOCK_MONOTONIC, for every thread). A thread that ran nothing (elapsed 0) is left out. */
    int64_t first = 0, last = 0;
    bool any = false;
    for (unsigned i = 0; i < t->n; i++) {
        const member *mi = &t->m[i];
        if (stopped && mi->elapsed > 0) {
            int64_t stop = mi->t0 + (int64_t)mi->elapsed;
            first = !any || mi->t0 < first ? mi->t0 : first;
            last = !any || stop > last ? stop : last;
            any = true;
        }
    }
    *span_ns = any ? (double)(last - first) : own_ns;
    for (unsigned i = 0; i < t->n; i++) {
        t->elapsed[i] = t->m[i].elapsed;
        if (i == 0 || !stopped)
            continue;
        for (size_t j = 0; j < b->nvals; j++)
            if (j != b->time_slot) {
                b->acc[j] += t->m[i].vals[j];
                t->m[i].vals[j] = 0;
            }
    }
    fold_status(t);
    return t->elapsed;
}

void bench__team_publish(bench_t *b, uint64_t n)
{
    bench__team *t = b->team;
    t->next = n;
    t->done = n == 0;
    pass_gate(t);
}

static void follow(member *m);

static void *follower_main(void *arg)
{
    member *m = arg;
    void *alt = bench__crash_thread_stack();
    follow(m);
    bench__crash_thread_stack_free(alt);
    return NULL;
}

static void follow(member *m)
{
    bench_t *b = &m->b;
    bench__team *t = b->team;
    pthread_mutex_lock(&t->lock);
    while (t->go == 0)
        pthread_cond_wait(&t->wake, &t->lock);
    int go = t->go;
    pthread_mutex_unlock(&t->lock);
    if (go < 0)
        return;
    b->inst->desc->fn(b);
    if (b->phase == PH_DONE)
        return;
    /* The body returned before the leader ended sampling: pass the boundaries, running nothing,
     * until it does. */
    if (b->in_sample)
        team_fail(t, "the body left its timed loop early on thread %u (return or goto inside "
                     "BENCH_ITER)", b->thread_index);
    else
        team_fail(t, "the body ran no timed loop on thread %u (BENCH_ITER)", b->thread_index);
    b->in_sample = false;
    do {
        m->elapsed = 0;
        pass_gate(t);
        pass_gate(t);
    } while (t->next != 0);
    b->phase = PH_DONE;
}

/* Member i's handle: the leader's benchmark, its own clock, nothing of the leader's state. */
static void follower_init(bench__team *t, unsigned i)
{
    member *m = &t->m[i];
    bench_t *b = &m->b;
    memset(b, 0, sizeof *b);
    b->inst = t->leader->inst;
    b->opt = t->leader->opt;
    b->clk = t->leader->clk;
    b->team = t;
    b->follower = true;
    b->leader = t->leader;
    b->thread_index = i;
    b->thread_metric = -1;
    b->phase = PH_INIT;
    m->clock = (bench__probe){.name = "wall", .state = &m->t0, .start = follower_clock_start,
                              .stop = follower_clock_stop, .primary = true};
    b->clock = &m->clock;
    b->clock_start = follower_clock_start;
    b->clock_stop = follower_clock_stop;
    b->clock_out = &m->clock_out;
    b->clock_frac = 1.0;
}

/* The CPUs each thread was seen on, added to the result's (rounds and processes add up). */
static void keep_placement(bench__team *t, bench__result *r)
{
    if (!bench__thread_cpus(r, t->n))
        return;
    for (unsigned i = 0; i < t->n && i < r->threads; i++)
        for (size_t w = 0; w < BENCH__CPU_WORDS; w++)
            r->thread_cpus[(size_t)i * BENCH__CPU_WORDS + w] |= t->m[i].cpus[w];
}

void bench__team_run(bench_t *b)
{
    bench__result *r = b->r;
    unsigned n = (unsigned)b->inst->threads;
    bench__team *t = calloc(1, sizeof *t);
    member *m = t ? aligned_alloc(64, n * sizeof *m) : NULL;
    double *el = calloc(n, sizeof *el);
    if (!t || !m || !el) {
        bench__result_fail(r, "out of memory for %u threads", n);
        free(t);
        free(m);
        free(el);
        return;
    }
    memset(m, 0, n * sizeof *m);
    *t = (bench__team){.n = n, .leader = b, .elapsed = el, .m = m};
    int e1 = pthread_barrier_init(&t->gate, NULL, n);
    int e2 = e1 ? e1 : pthread_mutex_init(&t->lock, NULL);
    int e3 = e2 ? e2 : pthread_cond_init(&t->wake, NULL);
    if (e3) {
        bench__result_fail(r, "%s: cannot set up %u threads: %s", b->inst->id, n, strerror(e3));
        if (!e2)
            pthread_mutex_destroy(&t->lock);
        if (!e1)
            pthread_barrier_destroy(&t->gate);
        free(t);
        free(m);
        free(el);
        return;
    }
    b->team = t;
    b->thread_index = 0;

    int err = 0;
    unsigned made = 1;
    for (; made < n; made++) {
        follower_init(t, made);
        err = pthread_create(&m[made].tid, NULL, follower_main, &m[made]);
        if (err != 0)
            break;
        m[made].started = true;
    }
    pthread_mutex_lock(&t->lock);
    t->go = err == 0 ? 1 : -1;
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->lock);

    if (err == 0) {
        b->inst->desc->fn(b);
        if (!t->done) {
            /* The leader's body left its loop early or ran none (the runner says which): the
             * followers pass the boundary once more and are told that sampling is over. */
            pass_gate(t);
            bench__team_publish(b, 0);
        }
    } else {
        bench__result_fail(r, "%s: thread %u of %u could not start: %s", b->inst->id, made + 1, n,
                    strerror(err));
    }
    for (unsigned i = 1; i < n; i++)
        if (m[i].started)
            pthread_join(m[i].tid, NULL);
    for (unsigned i = 1; i < n; i++) { /* --trace: the followers' spans (span.c) */
        char why[256];
        if (bench__spans_finish(&m[i].b, why, sizeof why) && r->status == BENCH__OK)
            bench__result_fail(r, "thread %u: %s", i, why);
    }
    fold_status(t); /* a follower's failure after the last boundary */
    keep_placement(t, r);
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->lock);
    pthread_barrier_destroy(&t->gate);
    b->team = NULL;
    free(el);
    free(m);
    free(t);
}
