/*
 * trace_proto.c: a trace (trace_doc.h) as Perfetto's protobuf, for --trace FILE.pftrace or
 * FILE.perfetto-trace: a small encoder of the few messages needed, no protobuf library.
 * tests/e2e/perfetto_trace.proto declares exactly these messages and fields (their numbers are
 * Perfetto's), and e2e/trace decodes a file with `protoc --decode` against it.
 *
 * The file is a Trace: repeated TracePacket packet = 1. Every packet is on trusted sequence 1
 * (the first one says its incremental state is cleared); first a TrackDescriptor per track:
 *   - a process track per process (ProcessDescriptor: pid, name), uuid = pid;
 *   - under it, per thread, a track of the harness's slices and samples, and one of the body's
 *     spans (so the spans, which may enclose several samples, nest on a track of their own);
 *   - under it, a counter track per probe metric (CounterDescriptor);
 * then the TrackEvents, in time order: a slice as a SLICE_BEGIN and a SLICE_END (its sample's
 * iterations and times as debug annotations), an instant as INSTANT, a counter value as COUNTER
 * with double_counter_value. Timestamps are ns since the run began.
 */
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "measure/trace_doc.h"

/* Field numbers of the messages used (Perfetto's protos/perfetto/trace). */
enum {
    TRACE_PACKET = 1,
    PACKET_TIMESTAMP = 8, PACKET_SEQUENCE = 10, PACKET_TRACK_EVENT = 11, PACKET_FLAGS = 13,
    PACKET_TRACK_DESCRIPTOR = 60,
    TRACK_UUID = 1, TRACK_NAME = 2, TRACK_PROCESS = 3, TRACK_PARENT = 5, TRACK_COUNTER = 8,
    PROCESS_PID = 1, PROCESS_NAME = 6,
    EVENT_ANNOTATION = 4, EVENT_TYPE = 9, EVENT_TRACK = 11, EVENT_CATEGORY = 22, EVENT_NAME = 23,
    EVENT_DOUBLE_COUNTER = 44,
    ANNOTATION_DOUBLE = 5, ANNOTATION_STRING = 6, ANNOTATION_NAME = 10,
};
enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3, COUNTER = 4 };
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1 };

/* A growing byte buffer. */
typedef struct buf {
    char *p;
    size_t len, cap;
    bool oom;
} buf;

static void put(buf *b, const void *data, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void varint(buf *b, uint64_t v)
{
    unsigned char out[10];
    size_t n = 0;
    do {
        out[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        out[n++] |= v ? 0x80 : 0;
    } while (v);
    put(b, out, n);
}

static void field_uint(buf *b, unsigned field, uint64_t v)
{
    varint(b, (uint64_t)field << 3 | 0);
    varint(b, v);
}

static void field_double(buf *b, unsigned field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    unsigned char out[8];
    for (int i = 0; i < 8; i++)
        out[i] = (unsigned char)(bits >> (8 * i)); /* little-endian, as the wire has it */
    varint(b, (uint64_t)field << 3 | 1);
    put(b, out, sizeof out);
}

static void field_bytes(buf *b, unsigned field, const void *data, size_t n)
{
    varint(b, (uint64_t)field << 3 | 2);
    varint(b, n);
    put(b, data, n);
}

static void field_string(buf *b, unsigned field, const char *s)
{
    field_bytes(b, field, s, strlen(s));
}

/* A nested message: its bytes (sub) as field `field` of b, then sub emptied. */
static void field_message(buf *b, unsigned field, buf *sub)
{
    b->oom |= sub->oom;
    field_bytes(b, field, sub->p ? sub->p : "", sub->len);
    sub->len = 0;
}

/* The tracks: uuids. A thread's harness track and spans track, a process's counter track. */
static uint64_t thread_track(unsigned pid, unsigned tid, bool spans)
{
    return (uint64_t)pid << 32 | (uint64_t)tid << 1 | (spans ? 1 : 0);
}

static uint64_t counter_track(unsigned pid, size_t name_index)
{
    return UINT64_C(1) << 62 | (uint64_t)pid << 32 | name_index;
}

/* One packet around its payload (a descriptor or an event, already in sub). */
static void packet(buf *out, buf *pk, unsigned field, buf *sub, int64_t ts_ns, bool first)
{
    if (ts_ns >= 0)
        field_uint(pk, PACKET_TIMESTAMP, (uint64_t)ts_ns);
    field_uint(pk, PACKET_SEQUENCE, 1);
    if (first)
        field_uint(pk, PACKET_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    field_message(pk, field, sub);
    field_message(out, TRACE_PACKET, pk);
}

/* A track descriptor packet. */
static void describe(buf *out, buf *pk, buf *sub, buf *inner, uint64_t uuid, uint64_t parent,
                     const char *name, unsigned pid, bool counter, bool *first)
{
    field_uint(sub, TRACK_UUID, uuid);
    if (parent)
        field_uint(sub, TRACK_PARENT, parent);
    if (pid) {
        field_uint(inner, PROCESS_PID, pid);
        field_string(inner, PROCESS_NAME, name);
        field_message(sub, TRACK_PROCESS, inner);
    } else {
        field_string(sub, TRACK_NAME, name);
    }
    if (counter)
        field_message(sub, TRACK_COUNTER, inner); /* an empty CounterDescriptor */
    packet(out, pk, PACKET_TRACK_DESCRIPTOR, sub, -1, *first);
    *first = false;
}

/* An event of the time-ordered list: the item and whether it is the end of its slice. */
typedef struct timed {
    int64_t ts;
    int64_t order; /* at the same ts: ends first (the shorter slice's first), then begins */
    const bench__trace_item *x;
    bool end;
} timed;

static int by_time(const void *a, const void *b)
{
    const timed *p = a, *q = b;
    if (p->ts != q->ts)
        return p->ts < q->ts ? -1 : 1;
    return p->order < q->order ? -1 : p->order > q->order;
}

/* The distinct counters (process and name: the first item of each), *n of them; an index is
 * a track's. */
static size_t counter_index(const bench__trace_item **seen, size_t *n,
                            const bench__trace_item *x)
{
    for (size_t i = 0; i < *n; i++)
        if (seen[i]->pid == x->pid && strcmp(seen[i]->name, x->name) == 0)
            return i;
    seen[*n] = x;
    return (*n)++;
}

/* The event of t (a begin, end, instant or counter) as a TrackEvent in sub. */
static void event(buf *sub, buf *inner, const timed *t, uint64_t track)
{
    const bench__trace_item *x = t->x;
    bool slice = x->kind != BENCH__TI_INSTANT && x->kind != BENCH__TI_COUNTER;
    field_uint(sub, EVENT_TYPE, slice ? (t->end ? SLICE_END : SLICE_BEGIN)
                                : x->kind == BENCH__TI_INSTANT ? INSTANT : COUNTER);
    field_uint(sub, EVENT_TRACK, track);
    if (x->kind == BENCH__TI_COUNTER) {
        field_double(sub, EVENT_DOUBLE_COUNTER, x->value);
        return;
    }
    if (t->end)
        return;
    field_string(sub, EVENT_NAME, x->name);
    static const char *const cats[] = {"harness", "sample", "span", "counter", "harness"};
    field_string(sub, EVENT_CATEGORY, cats[x->kind]);
    if (x->kind == BENCH__TI_SAMPLE) {
        const char *names[] = {"iterations", "total_ns", "ns_per_iter", "samples_merged"};
        double v[] = {x->iters, x->total_ns, x->total_ns / x->iters, (double)x->merged};
        for (int i = 0; i < 4; i++) {
            field_string(inner, ANNOTATION_NAME, names[i]);
            field_double(inner, ANNOTATION_DOUBLE, v[i]);
            field_message(sub, EVENT_ANNOTATION, inner);
        }
    }
    const char *text[] = {x->end, x->args};
    const char *what[] = {"end", "args"};
    for (int i = 0; i < 2; i++) {
        if (!text[i])
            continue;
        field_string(inner, ANNOTATION_NAME, what[i]);
        field_string(inner, ANNOTATION_STRING, text[i]);
        field_message(sub, EVENT_ANNOTATION, inner);
    }
}

int bench__trace_proto(const bench__trace_doc *d, char **out_p, size_t *len)
{
    buf out = {0}, pk = {0}, sub = {0}, inner = {0};
    timed *ts = malloc((2 * d->n + 1) * sizeof *ts);
    const bench__trace_item **counters = malloc((d->n + 1) * sizeof *counters);
    size_t ncounters = 0, k = 0;
    bool first = true;
    if (!ts || !counters)
        out.oom = true;
    for (size_t i = 0; i < d->nprocs && !out.oom; i++) {
        const bench__trace_proc *p = &d->procs[i];
        describe(&out, &pk, &sub, &inner, p->pid, 0, p->name, p->pid, false, &first);
        if (p->pid == 1)
            continue; /* the manager's slices are on its process track */
        unsigned threads = p->nthreads ? p->nthreads : 1;
        for (unsigned t = 0; t < threads; t++) {
            char name[600];
            const char *tn = t < p->nthreads && p->threads[t] ? p->threads[t] : NULL;
            bench__msg(name, sizeof name, "%s%s", tn ? tn : "thread ", tn ? "" : "0");
            describe(&out, &pk, &sub, &inner, thread_track(p->pid, t, false), p->pid, name, 0,
                     false, &first);
            bench__msg(name, sizeof name, "spans of %s%s", tn ? tn : "thread ", tn ? "" : "0");
            describe(&out, &pk, &sub, &inner, thread_track(p->pid, t, true), p->pid, name, 0,
                     false, &first);
        }
    }
    for (size_t i = 0; i < d->n && !out.oom; i++) {
        const bench__trace_item *x = &d->items[i];
        bool slice = x->kind != BENCH__TI_INSTANT && x->kind != BENCH__TI_COUNTER;
        ts[k++] = (timed){x->ts_ns, slice ? 1 - x->dur_ns : 1, x, false};
        if (slice)
            ts[k++] = (timed){x->ts_ns + x->dur_ns, x->dur_ns - INT64_MAX, x, true};
        if (x->kind == BENCH__TI_COUNTER) {
            size_t before = ncounters, c = counter_index(counters, &ncounters, x);
            if (ncounters > before)
                describe(&out, &pk, &sub, &inner, counter_track(x->pid, c), x->pid, x->name, 0,
                         true, &first);
        }
    }
    if (!out.oom)
        qsort(ts, k, sizeof *ts, by_time);
    for (size_t i = 0; i < k && !out.oom; i++) {
        const bench__trace_item *x = ts[i].x;
        uint64_t track = x->kind == BENCH__TI_COUNTER
                             ? counter_track(x->pid, counter_index(counters, &ncounters, x))
                         : x->pid == 1 ? 1
                                       : thread_track(x->pid, x->tid, x->kind == BENCH__TI_SPAN);
        event(&sub, &inner, &ts[i], track);
        packet(&out, &pk, PACKET_TRACK_EVENT, &sub, ts[i].ts, first);
        first = false;
    }
    bool oom = out.oom || pk.oom || sub.oom || inner.oom;
    free(ts);
    free(counters);
    free(pk.p);
    free(sub.p);
    free(inner.p);
    if (oom) {
        free(out.p);
        return BENCH_ENOMEM;
    }
    *out_p = out.p;
    *len = out.len;
    return 0;
}
