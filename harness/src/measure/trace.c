/*
 * trace.c: --trace FILE, the run as a timeline in the Chrome trace event format (trace.h says
 * who sends what). The recorder keeps every event in memory, in the order it learnt them, and
 * writes the document once, at the end of the run, through store/files.c's atomic write: the
 * file appears whole or not at all, and a run that was interrupted leaves none.
 *
 * The document: {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}. Timestamps
 * ("ts") and durations ("dur") are microseconds since the run began, from CLOCK_MONOTONIC, which
 * every process of the machine shares. Process ids are the trace's own (1: the manager, 2, 3,
 * ...: each worker process in the order it started; its operating-system pid is in its name),
 * so that no two tracks share an id whatever the system reuses. Tracks:
 *   - the manager (pid 1): its waits for each worker, analysis, confirmations, A/B pairs as
 *     complete slices ("ph": "X"), and each benchmark's estimate as an instant ("ph": "i") with
 *     its interval in args;
 *   - a worker process: named "ID #j/n pid P (cpu C)"; its thread 0 holds a slice for the whole
 *     process (args: how it ended), each sample as a slice (args: iterations, total_ns,
 *     ns_per_iter, phase), warm-up, planning and clock calibration, and the body's spans; a
 *     threaded body's other threads are tids 1 .. n-1, named with the CPUs they ran on; each
 *     probe metric is a counter ("ph": "C", its value per iteration at each measured sample),
 *     and so is each reading of a device's state a probe took (TC lines: the GPU's clocks,
 *     temperature, power and throttling, at the time it was read);
 *     an instant marks how the process ended ("end: ok", "end: killed by signal 11 ...").
 * Only complete events are written, so every slice is closed, also for a worker that crashed.
 *
 * The bound: the document may not pass BENCH__TRACE_MAX_BYTES (BENCH_TRACE_MAX_BYTES). Past it,
 * coarsening by a factor f = 2, 4, 8, ...: each process's consecutive samples of one phase are
 * merged f at a time (iterations and times summed), and only every f-th span slice and counter
 * value is kept, until the document fits; otherData.coarsened says f, and stderr says so too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "core/registry.h"
#include "core/result.h"
#include "measure/trace.h"
#include "measure/trace_doc.h"
#include "store/store.h"

/* ---- the measuring side ---- */

int bench__spans_on; /* bench.h: the span macros' branch */

static FILE *channel;  /* a worker's: where its trace lines go */
static bool recording; /* this process is the recorder */

void bench__trace_worker(FILE *out)
{
    channel = out;
    bench__spans_on = 1;
}

bool bench__trace_to_channel(void)
{
    return channel != NULL;
}

bool bench__trace_on(void)
{
    return channel || recording;
}

void bench__trace_emit(const bench__wire_line *l)
{
    char why[256];
    if (channel) {
        /* A line that cannot be said is left out: the trace loses a slice, the run nothing. */
        if (bench__wire_write(channel, l, why, sizeof why) == 0)
            fflush(channel); /* a crash later keeps what was sent */
    } else if (recording) {
        bench__trace_take(l);
    }
}

void bench__trace_span(unsigned thread, const char *name, int64_t start_ns)
{
    bench__wire_line l = {.kind = BENCH__WIRE_TSPAN, .tspan.thread = thread};
    l.tspan.what = BENCH__TRACE_HARNESS;
    int64_t now = bench__now_ns();
    l.tspan.start_ns = start_ns > 0 ? (uint64_t)start_ns : 0;
    l.tspan.dur_ns = now > start_ns ? (uint64_t)(now - start_ns) : 0;
    bench__msg(l.tspan.name, sizeof l.tspan.name, "%s", name);
    bench__trace_emit(&l);
}

/* ---- the recorder ---- */

typedef enum ev_kind { EV_SLICE, EV_SAMPLE, EV_SPAN, EV_COUNTER, EV_INSTANT } ev_kind;

typedef struct ev {
    ev_kind kind;
    unsigned pid, tid;
    int64_t ts_ns, dur_ns;
    char *name;
    char *args;      /* the args object's members, as JSON text, or NULL */
    char *end;       /* a process's slice: how it ended (args.end), or NULL */
    unsigned phase;  /* EV_SAMPLE */
    bool merged;     /* EV_SAMPLE: drawn inside an earlier one (while rendering) */
    bool reading;    /* EV_COUNTER: a probe's reading of a device (TC line), not a metric */
    uint64_t count;  /* EV_SAMPLE: samples the worker merged into it (warm-up ones) */
    double iters, total_ns; /* EV_SAMPLE; EV_COUNTER: value */
} ev;

#define MAX_THREADS 64
#define MAX_OPEN 16

typedef struct tproc {
    char *label;
    int cpu;
    int64_t start_ns;
    size_t slice;             /* its whole-process slice's event */
    unsigned nmetrics;
    char metric[BENCH__MAX_METRICS][sizeof(((bench__metric *)0)->name)];
    size_t nmeasured;         /* measured TS lines so far */
    int64_t *measured_at;     /* their starts, for the S lines' counters */
    size_t measured_cap;
    size_t ncounted;          /* S lines so far */
    char *failed;             /* its END line's status and message when not ok, or NULL */
    unsigned threads;         /* thread tracks named */
    char *thread_label[MAX_THREADS];
} tproc;

static struct {
    const char *path;
    int64_t t0;
    ev *ev;
    size_t n, cap;
    tproc *proc;
    size_t nproc, proc_cap;
    long cur;                  /* the running process's index, -1: none */
    size_t open[MAX_OPEN];     /* the manager's open slices (event indices) */
    unsigned depth;
    bool oom;
} T = {.cur = -1};

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s)
        T.oom = true;
    return s;
}

/* A new event (zeroed but for its kind, pid, tid, start), or NULL out of memory. */
static ev *add(ev_kind kind, unsigned pid, unsigned tid, int64_t ts_ns)
{
    if (T.n == T.cap) {
        size_t cap = T.cap ? 2 * T.cap : 1024;
        ev *p = realloc(T.ev, cap * sizeof *p);
        if (!p) {
            T.oom = true;
            return NULL;
        }
        T.ev = p;
        T.cap = cap;
    }
    ev *e = &T.ev[T.n++];
    *e = (ev){.kind = kind, .pid = pid, .tid = tid, .ts_ns = ts_ns};
    return e;
}

void bench__trace_start(const char *path)
{
    T.path = path;
    T.t0 = bench__now_ns();
    recording = true;
    bench__spans_on = 1;
}

/* The running process's trace pid (its index + 2), or 1, the manager, for none. */
static unsigned cur_pid(void)
{
    return T.cur >= 0 ? (unsigned)T.cur + 2 : 1;
}

void bench__trace_process_begin(const char *id, unsigned proc, unsigned count, long pid)
{
    if (!recording)
        return;
    if (T.nproc == T.proc_cap) {
        size_t cap = T.proc_cap ? 2 * T.proc_cap : 64;
        tproc *p = realloc(T.proc, cap * sizeof *p);
        if (!p) {
            T.oom = true;
            T.cur = -1;
            return;
        }
        T.proc = p;
        T.proc_cap = cap;
    }
    tproc *p = &T.proc[T.nproc];
    memset(p, 0, sizeof *p);
    p->cpu = -1;
    p->start_ns = bench__now_ns();
    p->label = dupf("%s #%u/%u pid %ld", id, proc + 1, count, pid);
    T.cur = (long)T.nproc++;
    ev *e = add(EV_SLICE, cur_pid(), 0, p->start_ns);
    if (e) {
        e->name = dupf("process %u of %u", proc + 1, count);
        p->slice = T.n - 1;
    }
}

/* A TS line: the sample as a slice on thread 0. */
static void take_sample(tproc *p, const bench__wire_line *l)
{
    static const char *const phases[] = {"warm-up", "re-warm-up", "measure"};
    ev *e = add(EV_SAMPLE, cur_pid(), 0, (int64_t)l->tsample.start_ns);
    if (!e)
        return;
    e->dur_ns = (int64_t)llround(l->tsample.total_ns);
    e->phase = l->tsample.phase;
    e->iters = l->tsample.iters;
    e->total_ns = l->tsample.total_ns;
    e->count = l->tsample.count;
    if (e->count > 1)
        e->name = dupf("%s samples", phases[l->tsample.phase]);
    else
        e->name = dupf("%s sample", phases[l->tsample.phase]);
    if (l->tsample.phase == BENCH__TRACE_MEASURE) {
        if (p->nmeasured == p->measured_cap) {
            size_t cap = p->measured_cap ? 2 * p->measured_cap : 128;
            int64_t *a = realloc(p->measured_at, cap * sizeof *a);
            if (!a) {
                T.oom = true;
                return;
            }
            p->measured_at = a;
            p->measured_cap = cap;
        }
        p->measured_at[p->nmeasured++] = (int64_t)l->tsample.start_ns;
    }
}

/* An S line: each metric's value per iteration as a counter, at its sample's start. */
static void take_counters(tproc *p, const bench__wire_line *l)
{
    size_t k = p->ncounted++;
    if (k >= p->nmeasured)
        return; /* no TS line for it (a worker of an older build) */
    for (size_t m = 0; m < l->sample.nvalues && m < p->nmetrics; m++) {
        double v = l->sample.values[m] / l->sample.iters;
        if (!isfinite(v))
            continue;
        ev *e = add(EV_COUNTER, cur_pid(), 0, p->measured_at[k]);
        if (e) {
            e->name = dupf("%s", p->metric[m]);
            e->iters = v;
        }
    }
}

/* A THREAD line: thread index's track, named with its CPUs. */
static void take_thread(tproc *p, const bench__wire_line *l)
{
    unsigned t = l->thread.index;
    if (t >= MAX_THREADS || p->thread_label[t])
        return;
    char cpus[256] = "";
    size_t at = 0;
    for (unsigned c = 0; c < 64 * BENCH__CPU_WORDS && at + 8 < sizeof cpus; c++)
        if (l->thread.cpus[c / 64] >> (c % 64) & 1)
            at += (size_t)snprintf(cpus + at, sizeof cpus - at, "%s%u", at ? "," : "", c);
    p->thread_label[t] = dupf("thread %u (cpu %s)", t, at ? cpus : "?");
    if (t + 1 > p->threads)
        p->threads = t + 1;
}

void bench__trace_take(const bench__wire_line *l)
{
    if (!recording || T.cur < 0)
        return;
    tproc *p = &T.proc[T.cur];
    switch (l->kind) {
    case BENCH__WIRE_TSAMPLE:
        take_sample(p, l);
        return;
    case BENCH__WIRE_TSPAN: {
        ev_kind k = l->tspan.what == BENCH__TRACE_SPAN   ? EV_SPAN
                    : l->tspan.what == BENCH__TRACE_NOTE ? EV_INSTANT
                                                         : EV_SLICE;
        ev *e = add(k, cur_pid(), l->tspan.thread, (int64_t)l->tspan.start_ns);
        if (e) {
            e->dur_ns = (int64_t)l->tspan.dur_ns;
            e->name = dupf("%s", l->tspan.name);
        }
        return;
    }
    case BENCH__WIRE_TCOUNTER: {
        ev *e = add(EV_COUNTER, cur_pid(), 0, (int64_t)l->tcounter.at_ns);
        if (e) {
            e->name = dupf("%s", l->tcounter.name);
            e->iters = l->tcounter.value;
            e->reading = true;
        }
        return;
    }
    case BENCH__WIRE_METRIC:
        if (p->nmetrics < BENCH__MAX_METRICS)
            bench__msg(p->metric[p->nmetrics++], sizeof p->metric[0], "%s", l->metric.name);
        return;
    case BENCH__WIRE_SAMPLE:
        take_counters(p, l);
        return;
    case BENCH__WIRE_THREAD:
        take_thread(p, l);
        return;
    case BENCH__WIRE_PROC:
        p->cpu = l->proc.cpu;
        return;
    case BENCH__WIRE_END:
        if (l->end.status != BENCH__OK && !p->failed)
            p->failed = dupf("%s: %s", bench__status_name(l->end.status), l->end.message);
        return;
    default:
        return;
    }
}

void bench__trace_process_end(const char *how)
{
    if (!recording || T.cur < 0)
        return;
    tproc *p = &T.proc[T.cur];
    int64_t now = bench__now_ns();
    if (!how)
        how = p->failed ? p->failed : "ok";
    if (p->slice < T.n && T.ev[p->slice].kind == EV_SLICE) {
        ev *s = &T.ev[p->slice];
        s->dur_ns = now - s->ts_ns;
        s->end = dupf("%s", how);
    }
    ev *e = add(EV_INSTANT, cur_pid(), 0, now);
    if (e)
        e->name = dupf("end: %s", how);
    T.cur = -1;
}

void bench__trace_begin(const char *name)
{
    bench__trace_begin_at(name, bench__now_ns());
}

void bench__trace_beginf(const char *fmt, ...)
{
    if (!recording)
        return;
    char name[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    bench__trace_begin(name);
}

void bench__trace_begin_at(const char *name, int64_t start_ns)
{
    if (!recording || T.depth == MAX_OPEN)
        return;
    ev *e = add(EV_SLICE, 1, 0, start_ns);
    if (e) {
        e->name = dupf("%s", name);
        T.open[T.depth++] = T.n - 1;
    }
}

void bench__trace_end(void)
{
    if (!recording || T.depth == 0)
        return;
    ev *e = &T.ev[T.open[--T.depth]];
    e->dur_ns = bench__now_ns() - e->ts_ns;
}

void bench__trace_estimate(const bench__result *r)
{
    if (!recording || r->status != BENCH__OK || r->nsamples == 0)
        return;
    ev *e = add(EV_INSTANT, 1, 0, bench__now_ns());
    if (!e)
        return;
    e->name = dupf("estimate %s", r->inst->id);
    e->args = dupf("\"median_ns\":%.6g,\"lower_ns\":%.6g,\"upper_ns\":%.6g,\"confidence\":%g",
                   r->est.median.point, r->est.median.lower, r->est.median.upper,
                   r->confidence_level);
}

/* ---- the document ---- */

/* The items at coarsening factor f (into *items, malloc'd; *n of them): consecutive samples of
 * a process and phase merged f at a time, every f-th span and counter value kept. False when
 * memory ran out. */
static bool items_at(unsigned f, bench__trace_item **items, size_t *n)
{
    bench__trace_item *it = malloc((T.n ? T.n : 1) * sizeof *it);
    if (!it)
        return false;
    size_t k = 0, nspan = 0, ncounter = 0;
    for (size_t i = 0; i < T.n; i++) {
        const ev *e = &T.ev[i];
        if ((e->kind == EV_SPAN && f > 1 && nspan++ % f != 0) ||
            (e->kind == EV_COUNTER && ncounter++ % f != 0) || (e->kind == EV_SAMPLE && e->merged))
            continue;
        static const bench__trace_kind kinds[] = {BENCH__TI_SLICE, BENCH__TI_SAMPLE,
                                                  BENCH__TI_SPAN, BENCH__TI_COUNTER,
                                                  BENCH__TI_INSTANT};
        bench__trace_item x = {.kind = kinds[e->kind], .pid = e->pid, .tid = e->tid,
                               .ts_ns = e->ts_ns - T.t0, .dur_ns = e->dur_ns < 0 ? 0 : e->dur_ns,
                               .name = e->name ? e->name : "?", .args = e->args, .end = e->end,
                               .iters = e->iters, .total_ns = e->total_ns, .merged = e->count,
                               .value = e->iters, .reading = e->reading};
        if (e->kind == EV_SAMPLE) {
            /* Samples of the same process and phase in a row, f at a time. */
            size_t m = 1, last = i;
            for (size_t j = i + 1; j < T.n && m < f; j++) {
                ev *y = &T.ev[j];
                if (y->pid != e->pid || y->kind == EV_SLICE || y->kind == EV_INSTANT)
                    break;
                if (y->kind != EV_SAMPLE)
                    continue;
                if (y->phase != e->phase)
                    break;
                x.iters += y->iters;
                x.total_ns += y->total_ns;
                x.merged += y->count;
                y->merged = true;
                last = j;
                m++;
            }
            x.dur_ns = T.ev[last].ts_ns + T.ev[last].dur_ns - e->ts_ns;
        }
        it[k++] = x;
    }
    for (size_t i = 0; i < T.n; i++)
        T.ev[i].merged = false;
    *items = it;
    *n = k;
    return true;
}

/* The processes of the trace, the manager first (*procs, malloc'd). */
static bool procs_of(bench__trace_proc **procs, char labels[][512])
{
    bench__trace_proc *p = malloc((T.nproc + 1) * sizeof *p);
    if (!p)
        return false;
    p[0] = (bench__trace_proc){.pid = 1, .name = "bench (manager)"};
    for (size_t i = 0; i < T.nproc; i++) {
        const tproc *q = &T.proc[i];
        if (q->cpu >= 0)
            bench__msg(labels[i], 512, "%s (cpu %d)", q->label ? q->label : "?", q->cpu);
        else
            bench__msg(labels[i], 512, "%s", q->label ? q->label : "?");
        p[i + 1] = (bench__trace_proc){.pid = (unsigned)i + 2, .name = labels[i],
                                       .nthreads = q->threads, .threads = q->thread_label};
    }
    *procs = p;
    return true;
}

/* ---- the writer ---- */

typedef struct text {
    char *buf;
    size_t len, cap;
    bool oom;
} text;

static void out(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(text *t, const char *fmt, ...)
{
    for (;;) {
        if (t->oom)
            return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->oom = true;
            return;
        }
        if (t->buf && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 1 << 16;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(t->buf, cap);
        if (!p) {
            t->oom = true;
            return;
        }
        t->buf = p;
        t->cap = cap;
    }
}

/* A JSON string: quotes, backslashes and control bytes escaped; a byte >= 0x80 as the code
 * point of the same number, so any name makes valid UTF-8. */
static void out_str(text *t, const char *s)
{
    out(t, "%s", "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            out(t, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            out(t, "\\u%04x", *p);
        else
            out(t, "%c", *p);
    }
    out(t, "%s", "\"");
}

static double us(int64_t ns)
{
    return (double)ns / 1000.0;
}

/* One event's opening: {"name":..,"ph":..,"pid":..,"tid":..,"ts":.. */
static void out_head(text *t, const bench__trace_item *x, const char *ph)
{
    out(t, "%s", ",\n{\"name\":");
    out_str(t, x->name);
    out(t, ",\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f", ph, x->pid, x->tid, us(x->ts_ns));
}

static void out_meta(text *t, const char *what, unsigned pid, unsigned tid, const char *name)
{
    out(t, ",\n{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":", what,
        pid, tid);
    out_str(t, name);
    out(t, "%s", "}}");
}

/* One item as an event. */
static void out_item(text *t, const bench__trace_item *x)
{
    switch (x->kind) {
    case BENCH__TI_SLICE:
    case BENCH__TI_SPAN:
        out_head(t, x, "X");
        out(t, ",\"dur\":%.3f,\"cat\":\"%s\"", us(x->dur_ns),
            x->kind == BENCH__TI_SPAN ? "span" : "harness");
        if (x->args)
            out(t, ",\"args\":{%s}", x->args);
        if (x->end) {
            out(t, "%s", ",\"args\":{\"end\":");
            out_str(t, x->end);
            out(t, "%s", "}");
        }
        out(t, "%s", "}");
        return;
    case BENCH__TI_SAMPLE:
        out_head(t, x, "X");
        out(t, ",\"dur\":%.3f,\"cat\":\"sample\",\"args\":{\"iterations\":%.17g,\"total_ns\":"
               "%.17g,\"ns_per_iter\":%.17g", us(x->dur_ns), x->iters, x->total_ns,
            x->total_ns / x->iters);
        if (x->merged > 1)
            out(t, ",\"samples_merged\":%llu", (unsigned long long)x->merged);
        out(t, "%s", "}}");
        return;
    case BENCH__TI_COUNTER:
        out_head(t, x, "C");
        out(t, ",\"args\":{\"%s\":%.17g}}", x->reading ? "value" : "per_iteration", x->value);
        return;
    case BENCH__TI_INSTANT:
        out_head(t, x, "i");
        out(t, ",\"s\":\"%s\"", x->pid == 1 ? "g" : "p");
        if (x->args)
            out(t, ",\"args\":{%s}", x->args);
        out(t, "%s", "}");
        return;
    }
}

/* The document as Chrome trace event format JSON. */
static void render_json(text *t, const bench__trace_doc *d)
{
    out(t, "%s", "{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
                 "\"tid\":0,\"args\":{\"name\":\"bench (manager)\"}}");
    for (size_t i = 1; i < d->nprocs; i++) {
        const bench__trace_proc *p = &d->procs[i];
        out_meta(t, "process_name", p->pid, 0, p->name);
        out(t, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
               "\"args\":{\"sort_index\":%u}}", p->pid, p->pid);
        for (unsigned th = 0; th < p->nthreads; th++)
            if (p->threads[th])
                out_meta(t, "thread_name", p->pid, th, p->threads[th]);
    }
    for (size_t i = 0; i < d->n && !t->oom; i++)
        out_item(t, &d->items[i]);
    out(t, "%s", "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"bench --trace\","
                 "\"time_unit\":\"us since the run began (CLOCK_MONOTONIC)\",");
    out(t, "\"max_bytes\":%zu,\"coarsened\":%u", d->max_bytes, d->coarsened);
    out(t, "%s", "}}\n");
}

/* Whether path names a Perfetto protobuf trace (.pftrace, .perfetto-trace). */
static bool perfetto_path(const char *path)
{
    static const char *const ends[] = {".pftrace", ".perfetto-trace"};
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        if (n > strlen(ends[i]) && strcmp(path + n - strlen(ends[i]), ends[i]) == 0)
            return true;
    return false;
}

/* The file's bytes at factor f, into *t (JSON or protobuf by the path's name). */
static bool render(text *t, unsigned f, size_t bound)
{
    bench__trace_item *items = NULL;
    bench__trace_proc *procs = NULL;
    size_t n = 0;
    char(*labels)[512] = calloc(T.nproc + 1, sizeof *labels);
    bool ok = labels && items_at(f, &items, &n) && procs_of(&procs, labels);
    if (ok) {
        bench__trace_doc d = {items, n, procs, T.nproc + 1, bound, f};
        if (perfetto_path(T.path)) {
            free(t->buf);
            t->buf = NULL;
            ok = bench__trace_proto(&d, &t->buf, &t->len) == 0;
        } else {
            render_json(t, &d);
            ok = !t->oom;
        }
    }
    free(items);
    free(procs);
    free(labels);
    return ok;
}

/* The bound: BENCH_TRACE_MAX_BYTES, else the default. */
static size_t max_bytes(void)
{
    const char *v = getenv("BENCH_TRACE_MAX_BYTES");
    char *end = NULL;
    unsigned long long n = v ? strtoull(v, &end, 10) : 0;
    if (!v || end == v || *end || n < 4096)
        return BENCH__TRACE_MAX_BYTES;
    return (size_t)n;
}

/* Writes the recorded run to its file; 0 or a negative error code with the reason in msg. */
static int write_file(char *msg, size_t msglen)
{
    if (!recording)
        return 0;
    while (T.depth > 0)
        bench__trace_end();
    size_t bound = max_bytes();
    text t = {0};
    unsigned f = 1;
    bool ok;
    for (;;) {
        t.len = 0;
        ok = render(&t, f, bound);
        if (!ok || t.len <= bound || f >= (1u << 20))
            break;
        f *= 2;
    }
    if (!ok || T.oom) {
        free(t.buf);
        bench__msg(msg, msglen, "%s: out of memory for the trace", T.path);
        return BENCH_ENOMEM;
    }
    if (f > 1)
        bench__errf("--trace %s: the trace passed %zu bytes; coarsened by %u (samples merged %u "
                    "at a time, every %u-th span and counter kept)\n", T.path, bound, f, f, f);
    int rc = bench__write_atomic_bytes(T.path, t.buf, t.len, msg, msglen);
    free(t.buf);
    return rc;
}

int bench__trace_write(void)
{
    char msg[1024], shown[4 * sizeof msg]; /* the message quotes the path: escaped */
    if (write_file(msg, sizeof msg) == 0)
        return 0;
    bench__errf("--trace: %s\n", bench__escape(shown, sizeof shown, msg));
    return -1;
}
