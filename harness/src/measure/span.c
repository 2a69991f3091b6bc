/*
 * span.c: the spans a body marks inside itself (bench_span_begin, bench_span_end, BENCH_SPAN in
 * bench.h), recorded under --trace only.
 *
 * Without --trace, bench__spans_on is 0 and a span is one predicted branch in the body; nothing
 * here runs. With it, each thread of a body keeps a stack of its open spans in its bench_t
 * (allocated at its first span): a begin reads the clock and pushes; an end reads the clock,
 * checks that it closes the span begun last (by name), pops, and
 *   - adds the span's time to its name's total in the running sample when that is a measured
 *     one (on the body's first thread; the others' spans are drawn only); at the sample's end
 *     each name's time in it is handed on (a TSHARE line, or straight into the result in an
 *     --in-process run), for the shares;
 *   - keeps the slice for the trace in a buffer sent at the next sample boundary (sending inside
 *     a sample would time the pipe): the first BUFFERED spans of each sample, at most
 *     BENCH__TRACE_SPANS_DRAWN per thread, so that the drawn ones spread over the whole run and
 *     the trace stays small whatever the iteration count.
 * A misuse (an end without its begin, ends out of order, a span left open when the body returns,
 * too deep or too many names) stops the spans of that thread's body and fails the benchmark when
 * the body returns, with one line naming the span (the runner, or the team for another thread,
 * fails it: span.c calls nothing of theirs); the trace stays whole.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/result.h"
#include "measure/body.h"
#include "measure/trace.h"

/* Deepest nesting of spans on one thread. */
#define MAX_DEPTH 16
/* Slices drawn per sample (the first ones of it), so that the drawn ones spread over the run. */
#define BUFFERED 8

typedef struct span_slice {
    const char *name;
    int64_t start_ns, dur_ns;
} span_slice;

struct bench__spans {
    span_slice open[MAX_DEPTH]; /* the open spans, outermost first (dur_ns unused) */
    unsigned depth;
    span_slice buf[BUFFERED]; /* finished, not yet sent */
    unsigned nbuf;
    uint64_t drawn;    /* slices sent or buffered */
    uint64_t undrawn;  /* finished but not drawn (past the bound) */
    bool broken;       /* a misuse: record nothing more; the body fails at its end */
    char why[256];     /* the misuse, one line naming the span */
    size_t ntot;
    struct {
        const char *name;
        double ns;      /* in the running sample */
        uint64_t count; /* in the running sample */
    } tot[BENCH__MAX_SPANS];
};

/* A span state could not be allocated (the body fails at its end). */
static bool out_of_memory;

static struct bench__spans *state(bench_t *b)
{
    if (!b->spans) {
        b->spans = calloc(1, sizeof *b->spans);
        out_of_memory |= b->spans == NULL;
    }
    return b->spans;
}

/* Whether the thread is inside a measured sample. A follower asks its leader's phase, which
 * changes only while every thread waits at a sample boundary. */
static bool measuring(const bench_t *b)
{
    if (b->follower)
        return b->leader->phase == PH_MEASURE;
    return b->phase == PH_MEASURE && b->in_sample;
}

static bool same(const char *a, const char *b)
{
    return a == b || strcmp(a, b) == 0;
}

/* A misuse: said once, then nothing more is recorded for this body. */
static void broken(struct bench__spans *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void broken(struct bench__spans *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
    s->broken = true;
    s->depth = 0;
}

void bench__span_begin(bench_t *b, const char *name)
{
    struct bench__spans *s = state(b);
    if (!s || s->broken)
        return;
    if (s->depth == MAX_DEPTH) {
        broken(s, "span '%s' is nested more than %d deep", name, MAX_DEPTH);
        return;
    }
    s->open[s->depth].name = name;
    s->open[s->depth].start_ns = bench__now_ns(); /* last: the span's work follows */
    s->depth++;
}

/* The span's time into its name's total; false when the names are too many. */
static bool add_total(struct bench__spans *s, const char *name, double ns)
{
    size_t i = 0;
    while (i < s->ntot && !same(s->tot[i].name, name))
        i++;
    if (i == s->ntot) {
        if (s->ntot == BENCH__MAX_SPANS)
            return false;
        s->tot[s->ntot].name = name;
        s->tot[s->ntot].ns = 0;
        s->tot[s->ntot++].count = 0;
    }
    s->tot[i].ns += ns;
    s->tot[i].count++;
    return true;
}

void bench__span_end(bench_t *b, const char *name)
{
    int64_t now = bench__now_ns(); /* first: the span's work is over */
    struct bench__spans *s = state(b);
    if (!s || s->broken)
        return;
    if (s->depth == 0) {
        broken(s, "span '%s' ended but not begun (bench_span_end without bench_span_begin)",
               name);
        return;
    }
    span_slice *top = &s->open[s->depth - 1];
    if (!same(top->name, name)) {
        broken(s, "span '%s' ended inside span '%s', which is still open (spans must nest)",
               name, top->name);
        return;
    }
    s->depth--;
    int64_t dur = now - top->start_ns;
    if (!b->follower && measuring(b) && !add_total(s, name, (double)dur)) {
        broken(s, "span '%s' is one name more than the %d a benchmark may have", name,
               BENCH__MAX_SPANS);
        return;
    }
    if (s->nbuf < BUFFERED && s->drawn < BENCH__TRACE_SPANS_DRAWN) {
        s->buf[s->nbuf++] = (span_slice){name, top->start_ns, dur};
        s->drawn++;
    } else {
        s->undrawn++;
    }
}

void bench__spans_flush(bench_t *b)
{
    struct bench__spans *s = b->spans;
    if (!s)
        return;
    for (unsigned i = 0; i < s->nbuf; i++) {
        bench__wire_line l = {.kind = BENCH__WIRE_TSPAN};
        l.tspan.thread = b->thread_index;
        l.tspan.what = BENCH__TRACE_SPAN;
        l.tspan.start_ns = (uint64_t)s->buf[i].start_ns;
        l.tspan.dur_ns = (uint64_t)s->buf[i].dur_ns;
        bench__msg(l.tspan.name, sizeof l.tspan.name, "%s", s->buf[i].name);
        for (char *p = l.tspan.name; *p; p++)
            if (*p == '\n')
                *p = ' '; /* a name is one line on the wire */
        if (!l.tspan.name[0])
            bench__msg(l.tspan.name, sizeof l.tspan.name, "%s", "(unnamed)");
        bench__trace_emit(&l);
    }
    s->nbuf = 0;
}

void bench__spans_sample(bench_t *b, double total_ns)
{
    struct bench__spans *s = b->spans;
    if (!s || s->broken)
        return;
    for (size_t i = 0; i < s->ntot; i++) {
        if (bench__trace_to_channel()) {
            bench__wire_line l = {.kind = BENCH__WIRE_TSHARE};
            l.tshare.ns = s->tot[i].ns;
            l.tshare.count = s->tot[i].count;
            bench__msg(l.tshare.name, sizeof l.tshare.name, "%s", s->tot[i].name);
            for (char *p = l.tshare.name; *p; p++)
                if (*p == '\n')
                    *p = ' ';
            if (!l.tshare.name[0])
                bench__msg(l.tshare.name, sizeof l.tshare.name, "%s", "(unnamed)");
            bench__trace_emit(&l);
        } else if (!bench__span_sample(b->r, s->tot[i].name, s->tot[i].ns, s->tot[i].count,
                                       total_ns)) {
            broken(s, "span '%s': out of memory for its shares", s->tot[i].name);
            return;
        }
        s->tot[i].ns = 0;
        s->tot[i].count = 0;
    }
}

bool bench__spans_finish(bench_t *b, char *why, size_t len)
{
    struct bench__spans *s = b->spans;
    if (!s) {
        if (out_of_memory)
            bench__msg(why, len, "%s", "out of memory for the body's spans");
        return out_of_memory;
    }
    if (!s->broken && s->depth > 0)
        broken(s, "span '%s' begun but not ended when the body returned (bench_span_begin "
                  "without bench_span_end)", s->open[s->depth - 1].name);
    bool failed = s->broken;
    if (failed)
        bench__msg(why, len, "%s", s->why);
    bench__spans_flush(b);
    if (s->undrawn > 0) {
        bench__wire_line l = {.kind = BENCH__WIRE_TSPAN, .tspan.thread = b->thread_index};
        l.tspan.what = BENCH__TRACE_NOTE;
        l.tspan.start_ns = (uint64_t)bench__now_ns();
        bench__msg(l.tspan.name, sizeof l.tspan.name, "%llu more spans not drawn",
                   (unsigned long long)s->undrawn);
        bench__trace_emit(&l);
    }
    free(s);
    b->spans = NULL;
    return failed;
}
