/*
 * protocol.c: the worker protocol's one writer and one reader (protocol.h has the lines, the
 * channels and who sends what). The writer and the reader walk the same fields in the same
 * order, one small function per field type, so that a line the writer makes is a line the
 * reader takes back to the same values (doubles with 17 significant digits), and the reader
 * takes nothing else.
 *
 * Invariant: the reader never trusts the line. It is copied into a buffer of its own, its
 * length checked against BENCH__WIRE_MAX_LINE, and every field is parsed with its end checked:
 * an integer is digits only (a sign where the field may be negative) and in its range, a double
 * a whole strtod of the field, a word no longer than its array, and exactly one space stands
 * between fields. A wrong line costs one line of message, never a crash or a value out of range.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "measure/protocol.h"

static const char *const words[] = {
#define BENCH__WIRE_WORD(name, word) word,
    BENCH__WIRE_KINDS(BENCH__WIRE_WORD)
#undef BENCH__WIRE_WORD
};

const char *bench__wire_word(bench__wire_kind kind)
{
    return (unsigned)kind < BENCH__WIRE_NKINDS ? words[kind] : "?";
}

/* The stop reasons a worker may send on its WALL line, as the static strings results point to. */
static const char *const reasons[] = {"precision", "time budget", "sample size", "fixed plan"};

static const char *known_reason(const char *s)
{
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (strcmp(s, reasons[i]) == 0)
            return reasons[i];
    return NULL;
}

/* ---- the writer ---- */

/* A line being written: buf so far, and the first error. */
typedef struct writer {
    char *buf;
    size_t len, at;
    const char *kind;
    char *msg;
    size_t msglen;
    bool bad;
} writer;

static void put(writer *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(writer *o, const char *fmt, ...)
{
    if (o->bad)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->at, o->len - o->at, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->len - o->at || o->at + (size_t)n > BENCH__WIRE_MAX_LINE) {
        o->bad = true;
        bench__msg(o->msg, o->msglen, "%s line longer than %zu bytes", o->kind,
                   (size_t)BENCH__WIRE_MAX_LINE);
        return;
    }
    o->at += (size_t)n;
}

static void refuse(writer *o, const char *what, const char *why)
{
    if (!o->bad)
        bench__msg(o->msg, o->msglen, "%s line: %s %s", o->kind, what, why);
    o->bad = true;
}

/* A word field: not empty, no space, no newline. */
static void put_word(writer *o, const char *what, const char *s)
{
    if (!*s || strpbrk(s, " \n"))
        refuse(o, what, "is empty or has a space or newline");
    put(o, " %s", s);
}

/* A text field at the end of a line: anything but a newline. */
static void put_text(writer *o, const char *what, const char *s)
{
    if (strchr(s, '\n'))
        refuse(o, what, "has a newline");
    put(o, " %s", s);
}

/* A message: a newline travels as \n and a backslash as \\ (get_message undoes it); every other
 * byte as it is, for the reporters to escape. */
static void put_message(writer *o, const char *s)
{
    put(o, "%s", " ");
    for (; *s && !o->bad; s++) {
        if (*s == '\n')
            put(o, "%s", "\\n");
        else if (*s == '\\')
            put(o, "%s", "\\\\");
        else
            put(o, "%c", *s);
    }
}

static void put_double(writer *o, double v)
{
    put(o, " %.17g", v);
}

static void put_line(writer *o, const bench__wire_line *l)
{
    switch (l->kind) {
    case BENCH__WIRE_PLAN:
        put(o, " %u %d %llu", l->plan.rounds, (int)l->plan.mode,
            (unsigned long long)l->plan.step);
        put_double(o, l->plan.est_ns);
        break;
    case BENCH__WIRE_SET:
        put(o, " %llu %llu", (unsigned long long)l->set.bytes,
            (unsigned long long)l->set.elements);
        break;
    case BENCH__WIRE_METRIC:
        put(o, " %d", l->metric.scaled ? 1 : 0);
        put_double(o, l->metric.min_fraction);
        put_word(o, "unit", l->metric.unit);
        put_word(o, "source", l->metric.source);
        put_text(o, "name", l->metric.name);
        break;
    case BENCH__WIRE_FACT:
        put_double(o, l->fact.value);
        put_word(o, "unit", l->fact.unit);
        put_text(o, "name", l->fact.name);
        break;
    case BENCH__WIRE_THREAD: {
        put(o, " %u ", l->thread.index);
        int seen = 0;
        for (unsigned c = 0; c < 64 * BENCH__CPU_WORDS; c++)
            if (l->thread.cpus[c / 64] >> (c % 64) & 1)
                put(o, "%s%u", seen++ ? "," : "", c);
        if (!seen)
            put(o, "%s", "-");
        break;
    }
    case BENCH__WIRE_WARM:
        put(o, " %llu", (unsigned long long)l->warm.iters);
        put_double(o, l->warm.ns);
        break;
    case BENCH__WIRE_WALL:
        put_double(o, l->wall.seconds);
        put(o, " %d ", (int)l->wall.mode);
        put(o, "%s", l->wall.reason ? l->wall.reason : "");
        break;
    case BENCH__WIRE_SAMPLE:
        put_double(o, l->sample.iters);
        put_double(o, l->sample.total_ns);
        if (l->sample.nvalues > BENCH__MAX_METRICS)
            refuse(o, "values", "are more than one per metric can be");
        for (size_t m = 0; m < l->sample.nvalues && !o->bad; m++)
            put_double(o, l->sample.values[m]);
        break;
    case BENCH__WIRE_PROC:
        put(o, " %d %d %u %u %u", l->proc.cpu, l->proc.layout ? 1 : 0, l->proc.stack,
            l->proc.heap, l->proc.env);
        put_double(o, l->proc.minflt);
        put_double(o, l->proc.majflt);
        break;
    case BENCH__WIRE_END:
        put(o, " %s", bench__status_name(l->end.status));
        put_message(o, l->end.message);
        break;
    case BENCH__WIRE_TIME:
        put_double(o, l->time.ns);
        break;
    case BENCH__WIRE_RUN:
        put(o, " %llu", (unsigned long long)l->run.iters);
        break;
    case BENCH__WIRE_TSAMPLE:
        put(o, " %u %llu", l->tsample.phase, (unsigned long long)l->tsample.start_ns);
        put_double(o, l->tsample.iters);
        put_double(o, l->tsample.total_ns);
        put(o, " %llu", (unsigned long long)l->tsample.count);
        break;
    case BENCH__WIRE_TSPAN:
        put(o, " %u %u %llu %llu", l->tspan.thread, l->tspan.what,
            (unsigned long long)l->tspan.start_ns, (unsigned long long)l->tspan.dur_ns);
        put_text(o, "name", l->tspan.name);
        break;
    case BENCH__WIRE_TSHARE:
        put_double(o, l->tshare.ns);
        put(o, " %llu", (unsigned long long)l->tshare.count);
        put_text(o, "name", l->tshare.name);
        break;
    case BENCH__WIRE_TCOUNTER:
        put(o, " %llu", (unsigned long long)l->tcounter.at_ns);
        put_double(o, l->tcounter.value);
        put_text(o, "name", l->tcounter.name);
        break;
    case BENCH__WIRE_READY:
    case BENCH__WIRE_QUIT:
    case BENCH__WIRE_NKINDS:
        break;
    }
}

/* ---- the reader ---- */

/* A line being read: where the next field starts, and the first error. */
typedef struct reader {
    const char *p;
    const char *kind;
    char *msg;
    size_t msglen;
    bool bad;
} reader;

static bool wrong(reader *c, const char *what, const char *why)
{
    if (!c->bad)
        bench__msg(c->msg, c->msglen, "%s line: %s %s", c->kind, what, why);
    c->bad = true;
    return false;
}

/* The next field: p at its start, its length; consumes the space before it. */
static bool field(reader *c, const char *what, size_t *n)
{
    if (c->bad)
        return false;
    if (*c->p != ' ')
        return wrong(c, what, "is missing");
    c->p++;
    *n = strcspn(c->p, " ");
    if (*n == 0)
        return wrong(c, what, "is empty");
    return true;
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return n > 0;
}

/* An integer field in [lo, hi]; digits only, a leading '-' where lo < 0. */
static bool integer(reader *c, const char *what, long long lo, unsigned long long hi,
                    unsigned long long *u, long long *s)
{
    size_t n;
    if (!field(c, what, &n))
        return false;
    bool neg = c->p[0] == '-';
    if (!all_digits(c->p + neg, n - neg) || (neg && lo >= 0))
        return wrong(c, what, "is not a whole number in range");
    errno = 0;
    unsigned long long mag = strtoull(c->p + neg, NULL, 10);
    c->p += n;
    if (errno == ERANGE || (!neg && mag > hi) ||
        (neg && mag > (unsigned long long)-(lo + 1) + 1))
        return wrong(c, what, "is not a whole number in range");
    if (u)
        *u = mag;
    if (s)
        *s = neg ? -(long long)mag : (long long)mag; /* lo >= INT_MIN: no overflow */
    return true;
}

static bool u64(reader *c, const char *what, uint64_t lo, uint64_t hi, uint64_t *out)
{
    unsigned long long v;
    if (!integer(c, what, 0, hi, &v, NULL))
        return false;
    if (v < lo)
        return wrong(c, what, "is not a whole number in range");
    *out = v;
    return true;
}

static bool uns(reader *c, const char *what, unsigned lo, unsigned hi, unsigned *out)
{
    uint64_t v;
    if (!u64(c, what, lo, hi, &v))
        return false;
    *out = (unsigned)v;
    return true;
}

static bool sint(reader *c, const char *what, int lo, int hi, int *out)
{
    long long v;
    if (!integer(c, what, lo, (unsigned long long)(hi < 0 ? 0 : hi), NULL, &v))
        return false;
    if (v < lo || v > hi)
        return wrong(c, what, "is not a whole number in range");
    *out = (int)v;
    return true;
}

/* What a double field may be: any value (NaN, infinities), or finite and >= the bound. */
enum { ANY = 0, FINITE_MIN };

static bool dbl(reader *c, const char *what, int rule, double min, double *out)
{
    size_t n;
    if (!field(c, what, &n))
        return false;
    char tmp[64];
    if (n >= sizeof tmp)
        return wrong(c, what, "is not a number");
    memcpy(tmp, c->p, n);
    tmp[n] = '\0';
    c->p += n;
    char *end;
    double v = strtod(tmp, &end);
    if (end != tmp + n || strchr(" \t\n\v\f\r", tmp[0]))
        return wrong(c, what, "is not a number");
    if (rule == FINITE_MIN && (!isfinite(v) || v < min))
        return wrong(c, what, "is out of range");
    *out = v;
    return true;
}

/* A word field into out (cap bytes). */
static bool word(reader *c, const char *what, char *out, size_t cap)
{
    size_t n;
    if (!field(c, what, &n))
        return false;
    if (n >= cap)
        return wrong(c, what, "is too long");
    memcpy(out, c->p, n);
    out[n] = '\0';
    c->p += n;
    return true;
}

/* The rest of the line as one text field (spaces allowed), at least one byte. */
static bool text(reader *c, const char *what, char *out, size_t cap)
{
    if (c->bad)
        return false;
    if (*c->p != ' ' || c->p[1] == '\0')
        return wrong(c, what, "is missing");
    size_t n = strlen(++c->p);
    if (n >= cap)
        return wrong(c, what, "is too long");
    memcpy(out, c->p, n + 1);
    c->p += n;
    return true;
}

/* Undoes put_message into out, cut to fit. */
static void get_message(char *out, size_t len, const char *s)
{
    size_t k = 0;
    for (; *s && k + 1 < len; s++) {
        if (*s == '\\' && (s[1] == 'n' || s[1] == '\\')) {
            out[k++] = s[1] == 'n' ? '\n' : '\\';
            s++;
        } else {
            out[k++] = *s;
        }
    }
    out[k] = '\0';
}

static bool end_status(reader *c, bench__status *st)
{
    static const bench__status all[] = {BENCH__OK, BENCH__SKIPPED, BENCH__FAILED};
    size_t n;
    if (!field(c, "status", &n))
        return false;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const char *name = bench__status_name(all[i]);
        if (strlen(name) == n && memcmp(c->p, name, n) == 0) {
            *st = all[i];
            c->p += n;
            return true;
        }
    }
    return wrong(c, "status", "is not ok, skipped or failed");
}

/* THREAD's CPUs: "-", or CPU numbers separated by commas. */
static bool cpu_list(reader *c, uint64_t *cpus)
{
    size_t n;
    if (!field(c, "CPUs", &n))
        return false;
    memset(cpus, 0, BENCH__CPU_WORDS * sizeof *cpus);
    if (n == 1 && c->p[0] == '-') {
        c->p++;
        return true;
    }
    const char *p = c->p, *stop = c->p + n;
    while (p < stop) {
        size_t d = strspn(p, "0123456789");
        if (d == 0 || d > 5 || (p + d < stop && p[d] != ','))
            return wrong(c, "CPUs", "are not a list of CPU numbers");
        unsigned long cpu = strtoul(p, NULL, 10);
        if (cpu >= 64 * BENCH__CPU_WORDS)
            return wrong(c, "CPUs", "name a CPU out of range");
        cpus[cpu / 64] |= UINT64_C(1) << (cpu % 64);
        p += d;
        if (p < stop && ++p == stop)
            return wrong(c, "CPUs", "are not a list of CPU numbers");
    }
    c->p = stop;
    return true;
}

static bool sampling(reader *c, bench_sampling *mode)
{
    int m;
    if (!sint(c, "sampling mode", 0, BENCH_SAMPLING_FLAT, &m))
        return false;
    *mode = (bench_sampling)m;
    return true;
}

/* The fields of a line of kind l->kind, from c->p (just after the kind word). */
static bool get_fields(reader *c, bench__wire_line *l)
{
    switch (l->kind) {
    case BENCH__WIRE_PLAN:
        return uns(c, "rounds", 1, UINT32_MAX, &l->plan.rounds) &&
               sampling(c, &l->plan.mode) && u64(c, "step", 1, UINT64_MAX, &l->plan.step) &&
               dbl(c, "est_ns", FINITE_MIN, 0, &l->plan.est_ns) &&
               (l->plan.est_ns > 0 || wrong(c, "est_ns", "is out of range"));
    case BENCH__WIRE_SET:
        return u64(c, "bytes", 0, UINT64_MAX, &l->set.bytes) &&
               u64(c, "elements", 0, UINT64_MAX, &l->set.elements);
    case BENCH__WIRE_METRIC: {
        int scaled = 0;
        bool ok = sint(c, "scaled", 0, 1, &scaled) &&
                  dbl(c, "min_fraction", ANY, 0, &l->metric.min_fraction) &&
                  word(c, "unit", l->metric.unit, sizeof l->metric.unit) &&
                  word(c, "source", l->metric.source, sizeof l->metric.source) &&
                  text(c, "name", l->metric.name, sizeof l->metric.name);
        l->metric.scaled = scaled != 0;
        return ok;
    }
    case BENCH__WIRE_FACT:
        return dbl(c, "value", ANY, 0, &l->fact.value) &&
               word(c, "unit", l->fact.unit, sizeof l->fact.unit) &&
               text(c, "name", l->fact.name, sizeof l->fact.name);
    case BENCH__WIRE_THREAD:
        return uns(c, "thread index", 0, UINT32_MAX, &l->thread.index) &&
               cpu_list(c, l->thread.cpus);
    case BENCH__WIRE_WARM:
        return u64(c, "iterations", 0, UINT64_MAX, &l->warm.iters) &&
               dbl(c, "ns", FINITE_MIN, 0, &l->warm.ns);
    case BENCH__WIRE_WALL:
        if (!dbl(c, "seconds", FINITE_MIN, 0, &l->wall.seconds) || !sampling(c, &l->wall.mode))
            return false;
        /* The reason may be empty ("WALL 1.5 2 "); one this build does not know is no reason. */
        if (*c->p != ' ')
            return wrong(c, "reason", "is missing");
        l->wall.reason = known_reason(++c->p);
        c->p += strlen(c->p);
        return true;
    case BENCH__WIRE_SAMPLE:
        if (!dbl(c, "iterations", FINITE_MIN, 1, &l->sample.iters) ||
            !dbl(c, "total_ns", FINITE_MIN, 0, &l->sample.total_ns))
            return false;
        for (l->sample.nvalues = 0; *c->p; l->sample.nvalues++) {
            if (l->sample.nvalues == BENCH__MAX_METRICS)
                return wrong(c, "values", "are more than one per metric can be");
            if (!dbl(c, "metric value", ANY, 0, &l->sample.values[l->sample.nvalues]))
                return false;
        }
        return true;
    case BENCH__WIRE_PROC: {
        int layout = 0;
        l->proc.known = true;
        bool ok = sint(c, "cpu", -1, INT32_MAX, &l->proc.cpu) &&
                  sint(c, "layout", 0, 1, &layout) &&
                  uns(c, "stack", 0, UINT32_MAX, &l->proc.stack) &&
                  uns(c, "heap", 0, UINT32_MAX, &l->proc.heap) &&
                  uns(c, "env", 0, UINT32_MAX, &l->proc.env) &&
                  dbl(c, "minflt", FINITE_MIN, 0, &l->proc.minflt) &&
                  dbl(c, "majflt", FINITE_MIN, 0, &l->proc.majflt);
        l->proc.layout = layout != 0;
        return ok;
    }
    case BENCH__WIRE_END:
        if (!end_status(c, &l->end.status))
            return false;
        /* "END ok" and "END ok " both end without a message. */
        get_message(l->end.message, sizeof l->end.message, *c->p == ' ' ? c->p + 1 : c->p);
        c->p += strlen(c->p);
        return true;
    case BENCH__WIRE_TIME:
        return dbl(c, "ns", FINITE_MIN, 0, &l->time.ns);
    case BENCH__WIRE_RUN:
        return u64(c, "iterations", 1, UINT64_MAX, &l->run.iters);
    case BENCH__WIRE_TSAMPLE:
        return uns(c, "phase", 0, 2, &l->tsample.phase) &&
               u64(c, "start_ns", 0, INT64_MAX, &l->tsample.start_ns) &&
               dbl(c, "iterations", FINITE_MIN, 1, &l->tsample.iters) &&
               dbl(c, "total_ns", FINITE_MIN, 0, &l->tsample.total_ns) &&
               u64(c, "count", 1, UINT64_MAX, &l->tsample.count);
    case BENCH__WIRE_TSPAN:
        return uns(c, "thread", 0, UINT32_MAX, &l->tspan.thread) &&
               uns(c, "what", 0, 2, &l->tspan.what) &&
               u64(c, "start_ns", 0, INT64_MAX, &l->tspan.start_ns) &&
               u64(c, "dur_ns", 0, INT64_MAX, &l->tspan.dur_ns) &&
               text(c, "name", l->tspan.name, sizeof l->tspan.name);
    case BENCH__WIRE_TSHARE:
        return dbl(c, "ns", FINITE_MIN, 0, &l->tshare.ns) &&
               u64(c, "count", 0, UINT64_MAX, &l->tshare.count) &&
               text(c, "name", l->tshare.name, sizeof l->tshare.name);
    case BENCH__WIRE_TCOUNTER:
        return u64(c, "at_ns", 0, INT64_MAX, &l->tcounter.at_ns) &&
               dbl(c, "value", FINITE_MIN, -DBL_MAX, &l->tcounter.value) &&
               text(c, "name", l->tcounter.name, sizeof l->tcounter.name);
    case BENCH__WIRE_READY:
    case BENCH__WIRE_QUIT:
    case BENCH__WIRE_NKINDS:
        return true;
    }
    return wrong(c, "kind", "is unknown");
}

int bench__wire_parse(const char *text_in, size_t n, bench__wire_line *l, char *msg,
                      size_t msglen)
{
    char buf[BENCH__WIRE_MAX_LINE + 1];
    if (n > BENCH__WIRE_MAX_LINE) {
        bench__msg(msg, msglen, "a line longer than %zu bytes", (size_t)BENCH__WIRE_MAX_LINE);
        return BENCH_EINVAL;
    }
    if (memchr(text_in, '\0', n) || memchr(text_in, '\n', n)) {
        bench__msg(msg, msglen, "a line with a %s byte inside",
                   memchr(text_in, '\0', n) ? "NUL" : "newline");
        return BENCH_EINVAL;
    }
    memcpy(buf, text_in, n);
    buf[n] = '\0';
    memset(l, 0, sizeof *l);
    size_t w = strcspn(buf, " ");
    l->kind = BENCH__WIRE_NKINDS;
    for (unsigned k = 0; k < BENCH__WIRE_NKINDS; k++)
        if (strlen(words[k]) == w && memcmp(buf, words[k], w) == 0)
            l->kind = (bench__wire_kind)k;
    if (l->kind == BENCH__WIRE_NKINDS) {
        char shown[4 * 32 + 1];
        buf[w < 32 ? w : 32] = '\0';
        bench__msg(msg, msglen, "a line of unknown kind '%s'",
                   bench__escape(shown, sizeof shown, buf));
        return BENCH_EINVAL;
    }
    reader c = {.p = buf + w, .kind = words[l->kind], .msg = msg, .msglen = msglen};
    if (!get_fields(&c, l))
        return BENCH_EINVAL;
    if (*c.p != '\0') {
        wrong(&c, "the end", "has more fields than the kind has");
        return BENCH_EINVAL;
    }
    return 0;
}

int bench__wire_format(char *buf, size_t len, const bench__wire_line *l, char *msg,
                       size_t msglen)
{
    if ((unsigned)l->kind >= BENCH__WIRE_NKINDS || len == 0) {
        bench__msg(msg, msglen, "%s", "a line of no kind");
        return BENCH_EINVAL;
    }
    writer o = {.buf = buf, .len = len, .kind = words[l->kind], .msg = msg, .msglen = msglen};
    buf[0] = '\0';
    put(&o, "%s", words[l->kind]);
    put_line(&o, l);
    if (o.bad) {
        buf[0] = '\0';
        return BENCH_EINVAL;
    }
    /* What the reader would refuse is not written: each value's range is the reader's. */
    bench__wire_line back;
    char why[160];
    if (bench__wire_parse(buf, o.at, &back, why, sizeof why) != 0) {
        bench__msg(msg, msglen, "%s", why);
        buf[0] = '\0';
        return BENCH_EINVAL;
    }
    return (int)o.at;
}

int bench__wire_write(FILE *o, const bench__wire_line *l, char *msg, size_t msglen)
{
    char buf[BENCH__WIRE_MAX_LINE + 1];
    int n = bench__wire_format(buf, sizeof buf, l, msg, msglen);
    if (n < 0)
        return n;
    if (fwrite(buf, 1, (size_t)n, o) != (size_t)n || fputc('\n', o) == EOF) {
        bench__msg(msg, msglen, "cannot write a %s line: %s", words[l->kind], strerror(errno));
        return BENCH_EIO;
    }
    return 0;
}

int bench__wire_read(bench__proc *p, int64_t deadline_ns, bench__wire_line *out, char *msg,
                     size_t msglen)
{
    /* Room for the longest line: a longer one (p->line_len says how long) is refused unread. */
    char line[BENCH__WIRE_MAX_LINE + 1];
    int rc = bench__proc_line(p, line, sizeof line, deadline_ns);
    if (rc != 1)
        return rc;
    return bench__wire_parse(line, p->line_len, out, msg, msglen) == 0 ? 1 : BENCH_EINVAL;
}

int bench__wire_getline(FILE *from, bench__wire_line *out, char *msg, size_t msglen)
{
    /* Byte by byte, so that a NUL inside is seen and a long line is consumed whole. */
    char line[BENCH__WIRE_MAX_LINE + 1];
    size_t n = 0;
    int ch;
    while ((ch = getc(from)) != EOF && ch != '\n') {
        if (n < sizeof line)
            line[n] = (char)ch;
        n++;
    }
    if (ch == EOF && n == 0)
        return 0;
    return bench__wire_parse(line, n, out, msg, msglen) == 0 ? 1 : BENCH_EINVAL;
}

/* ---- the job ---- */

int bench__wire_job_format(char *buf, size_t len, const bench__wire_job *job, char *msg,
                           size_t msglen)
{
    if (strchr(job->id, '\n')) {
        bench__msg(msg, msglen, "%s", "a worker job whose id has a newline");
        return BENCH_EINVAL;
    }
    if (!(job->share > 0 && job->share <= 1)) {
        bench__msg(msg, msglen, "%s", "a worker job whose share is not in (0, 1]");
        return BENCH_EINVAL;
    }
    int n = snprintf(buf, len, "%u %u %d %llu %.17g %.17g %s", job->index, job->count, job->mode,
                     (unsigned long long)job->step, job->est_ns, job->share, job->id);
    if (n < 0 || (size_t)n >= len) {
        bench__msg(msg, msglen, "%s", "a worker job too long for its buffer");
        return BENCH_EINVAL;
    }
    return n;
}

int bench__wire_job_parse(const char *job_text, bench__wire_job *job, char *msg, size_t msglen)
{
    size_t n = strlen(job_text);
    char buf[BENCH__WIRE_MAX_LINE + 1];
    /* The job has no kind word: a space in front makes its first field a field like the rest. */
    if (n + 1 > BENCH__WIRE_MAX_LINE || strchr(job_text, '\n')) {
        bench__msg(msg, msglen, "%s", BENCH__WIRE_BAD_JOB);
        return BENCH_EINVAL;
    }
    buf[0] = ' ';
    memcpy(buf + 1, job_text, n + 1);
    reader c = {.p = buf, .kind = "job", .msg = msg, .msglen = msglen};
    memset(job, 0, sizeof *job);
    uint64_t index, count;
    bool ok = u64(&c, "index", 0, UINT32_MAX, &index) &&
              u64(&c, "count", 1, UINT32_MAX, &count) &&
              sint(&c, "mode", 0, BENCH__JOB_DRIVEN, &job->mode) &&
              u64(&c, "step", 0, UINT64_MAX, &job->step) &&
              dbl(&c, "est_ns", FINITE_MIN, 0, &job->est_ns) &&
              dbl(&c, "share", FINITE_MIN, 0, &job->share);
    if (ok && index >= count)
        ok = wrong(&c, "index", "is not below the count");
    if (ok && !(job->share > 0 && job->share <= 1))
        ok = wrong(&c, "share", "is out of range");
    /* The id is the rest, spaces and all (buf holds the job one byte to the right). */
    if (ok && (*c.p != ' ' || c.p[1] == '\0'))
        ok = wrong(&c, "id", "is missing");
    if (!ok)
        return BENCH_EINVAL;
    job->index = (unsigned)index;
    job->count = (unsigned)count;
    job->id = job_text + (c.p - buf);
    return 0;
}
