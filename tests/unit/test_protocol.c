/*
 * test_protocol.c: the worker protocol (measure/protocol.c): every line kind written and read back
 * to the same values, the exact text of the lines as the manager and older builds expect them,
 * the job, and hostile lines (truncated, overlong, unknown kind, numbers out of range, a NUL or
 * newline inside) each refused with one line of reason. The reader is also driven through a
 * real child process, so that a line longer than the channel's buffer is seen as one line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "measure/protocol.h"

/* One line of each kind, with values that test the formats: fractions, large integers,
 * negative CPU, NaN in a metric total, a message with a newline and a backslash. */
static size_t every_kind(bench__wire_line *l)
{
    size_t n = 0;
    l[n++] = (bench__wire_line){.kind = BENCH__WIRE_PLAN,
                                .plan = {7, BENCH_SAMPLING_LINEAR, UINT64_C(1) << 40, 0.1}};
    l[n++] = (bench__wire_line){.kind = BENCH__WIRE_SET, .set = {UINT64_MAX, 0}};
    l[n] = (bench__wire_line){.kind = BENCH__WIRE_METRIC};
    l[n].metric.scaled = true;
    l[n].metric.min_fraction = 1.0 / 3.0;
    strcpy(l[n].metric.unit, "events");
    strcpy(l[n].metric.source, "perf");
    strcpy(l[n++].metric.name, "a name with spaces");
    l[n] = (bench__wire_line){.kind = BENCH__WIRE_FACT, .fact.value = -2.5e300};
    strcpy(l[n].fact.unit, "B");
    strcpy(l[n++].fact.name, "peak heap");
    l[n] = (bench__wire_line){.kind = BENCH__WIRE_THREAD, .thread.index = 3};
    l[n].thread.cpus[0] = 1 | (UINT64_C(1) << 63);
    l[n++].thread.cpus[BENCH__CPU_WORDS - 1] = UINT64_C(1) << 63;
    l[n++] = (bench__wire_line){.kind = BENCH__WIRE_WARM, .warm = {12345, 6.02e23}};
    l[n++] = (bench__wire_line){.kind = BENCH__WIRE_WALL,
                                .wall = {1.25, BENCH_SAMPLING_FLAT, "time budget"}};
    l[n] = (bench__wire_line){.kind = BENCH__WIRE_SAMPLE, .sample = {3, 1234.5678901234567, 2}};
    l[n].sample.values[0] = NAN;
    l[n++].sample.values[1] = 1e-300;
    l[n++] = (bench__wire_line){.kind = BENCH__WIRE_PROC,
                                .proc = {true, -1, true, 16, 4080, 32, 1e6, 0}};
    l[n] = (bench__wire_line){.kind = BENCH__WIRE_END, .end.status = BENCH__FAILED};
    strcpy(l[n++].end.message, "two\nlines and a \\ backslash");
    l[n++] = (bench__wire_line){.kind = BENCH__WIRE_READY};
    l[n++] = (bench__wire_line){.kind = BENCH__WIRE_TIME, .time.ns = 0.5};
    l[n++] = (bench__wire_line){.kind = BENCH__WIRE_RUN, .run.iters = UINT64_MAX};
    l[n++] = (bench__wire_line){.kind = BENCH__WIRE_QUIT};
    l[n++] = (bench__wire_line){.kind = BENCH__WIRE_TSAMPLE,
                                .tsample = {2, UINT64_C(1) << 62, 7, 1234.5678901234567, 9}};
    l[n] = (bench__wire_line){.kind = BENCH__WIRE_TSPAN, .tspan = {3, 1, 17, 0, ""}};
    strcpy(l[n++].tspan.name, "a phase with spaces");
    l[n] = (bench__wire_line){.kind = BENCH__WIRE_TSHARE, .tshare = {0.25, UINT64_MAX, ""}};
    strcpy(l[n++].tshare.name, "decay");
    l[n] = (bench__wire_line){.kind = BENCH__WIRE_TCOUNTER, .tcounter = {INT64_MAX, -1.5, ""}};
    strcpy(l[n++].tcounter.name, "gpu_sm_clock_mhz");
    return n;
}

/* Same double, NaN included. */
static void assert_same(double a, double b)
{
    if (isnan(a) && isnan(b))
        return;
    assert_true(a == b);
}

static void assert_lines_equal(const bench__wire_line *a, const bench__wire_line *b)
{
    assert_int_equal(a->kind, b->kind);
    switch (a->kind) {
    case BENCH__WIRE_PLAN:
        assert_int_equal(a->plan.rounds, b->plan.rounds);
        assert_int_equal(a->plan.mode, b->plan.mode);
        assert_true(a->plan.step == b->plan.step);
        assert_same(a->plan.est_ns, b->plan.est_ns);
        return;
    case BENCH__WIRE_SET:
        assert_true(a->set.bytes == b->set.bytes && a->set.elements == b->set.elements);
        return;
    case BENCH__WIRE_METRIC:
        assert_int_equal(a->metric.scaled, b->metric.scaled);
        assert_same(a->metric.min_fraction, b->metric.min_fraction);
        assert_string_equal(a->metric.unit, b->metric.unit);
        assert_string_equal(a->metric.source, b->metric.source);
        assert_string_equal(a->metric.name, b->metric.name);
        return;
    case BENCH__WIRE_FACT:
        assert_same(a->fact.value, b->fact.value);
        assert_string_equal(a->fact.unit, b->fact.unit);
        assert_string_equal(a->fact.name, b->fact.name);
        return;
    case BENCH__WIRE_THREAD:
        assert_int_equal(a->thread.index, b->thread.index);
        assert_memory_equal(a->thread.cpus, b->thread.cpus, sizeof a->thread.cpus);
        return;
    case BENCH__WIRE_WARM:
        assert_true(a->warm.iters == b->warm.iters);
        assert_same(a->warm.ns, b->warm.ns);
        return;
    case BENCH__WIRE_WALL:
        assert_same(a->wall.seconds, b->wall.seconds);
        assert_int_equal(a->wall.mode, b->wall.mode);
        assert_string_equal(a->wall.reason, b->wall.reason);
        return;
    case BENCH__WIRE_SAMPLE:
        assert_same(a->sample.iters, b->sample.iters);
        assert_same(a->sample.total_ns, b->sample.total_ns);
        assert_int_equal(a->sample.nvalues, b->sample.nvalues);
        for (size_t m = 0; m < a->sample.nvalues; m++)
            assert_same(a->sample.values[m], b->sample.values[m]);
        return;
    case BENCH__WIRE_PROC:
        assert_true(b->proc.known);
        assert_int_equal(a->proc.cpu, b->proc.cpu);
        assert_int_equal(a->proc.layout, b->proc.layout);
        assert_int_equal(a->proc.stack, b->proc.stack);
        assert_int_equal(a->proc.heap, b->proc.heap);
        assert_int_equal(a->proc.env, b->proc.env);
        assert_same(a->proc.minflt, b->proc.minflt);
        assert_same(a->proc.majflt, b->proc.majflt);
        return;
    case BENCH__WIRE_END:
        assert_int_equal(a->end.status, b->end.status);
        assert_string_equal(a->end.message, b->end.message);
        return;
    case BENCH__WIRE_TIME:
        assert_same(a->time.ns, b->time.ns);
        return;
    case BENCH__WIRE_RUN:
        assert_true(a->run.iters == b->run.iters);
        return;
    case BENCH__WIRE_TSAMPLE:
        assert_int_equal(a->tsample.phase, b->tsample.phase);
        assert_true(a->tsample.start_ns == b->tsample.start_ns);
        assert_same(a->tsample.iters, b->tsample.iters);
        assert_same(a->tsample.total_ns, b->tsample.total_ns);
        assert_true(a->tsample.count == b->tsample.count);
        return;
    case BENCH__WIRE_TSPAN:
        assert_int_equal(a->tspan.thread, b->tspan.thread);
        assert_int_equal(a->tspan.what, b->tspan.what);
        assert_true(a->tspan.start_ns == b->tspan.start_ns && a->tspan.dur_ns == b->tspan.dur_ns);
        assert_string_equal(a->tspan.name, b->tspan.name);
        return;
    case BENCH__WIRE_TSHARE:
        assert_same(a->tshare.ns, b->tshare.ns);
        assert_true(a->tshare.count == b->tshare.count);
        assert_string_equal(a->tshare.name, b->tshare.name);
        return;
    case BENCH__WIRE_TCOUNTER:
        assert_true(a->tcounter.at_ns == b->tcounter.at_ns);
        assert_same(a->tcounter.value, b->tcounter.value);
        assert_string_equal(a->tcounter.name, b->tcounter.name);
        return;
    case BENCH__WIRE_READY:
    case BENCH__WIRE_QUIT:
    case BENCH__WIRE_NKINDS:
        return;
    }
}

/* Every kind is written and read back to the same values; no kind is left out. */
static void test_round_trip(void **state)
{
    (void)state;
    bench__wire_line l[BENCH__WIRE_NKINDS + 1], back;
    size_t n = every_kind(l);
    assert_int_equal(n, BENCH__WIRE_NKINDS);
    bool seen[BENCH__WIRE_NKINDS] = {false};
    for (size_t i = 0; i < n; i++) {
        char buf[BENCH__WIRE_MAX_LINE + 1], msg[256] = "";
        int len = bench__wire_format(buf, sizeof buf, &l[i], msg, sizeof msg);
        if (len < 0)
            print_error("%s: %s\n", bench__wire_word(l[i].kind), msg);
        assert_true(len > 0);
        assert_int_equal((size_t)len, strlen(buf));
        assert_int_equal(bench__wire_parse(buf, (size_t)len, &back, msg, sizeof msg), 0);
        assert_lines_equal(&l[i], &back);
        seen[l[i].kind] = true;
    }
    for (size_t k = 0; k < BENCH__WIRE_NKINDS; k++)
        assert_true(seen[k]);
}

/* The text on the wire is the one the manager, the runner and older builds speak. */
static void test_wire_text(void **state)
{
    (void)state;
    bench__wire_line l[BENCH__WIRE_NKINDS + 1];
    size_t n = every_kind(l);
    static const char *const want[] = {
        "PLAN 7 1 1099511627776 0.10000000000000001",
        "SET 18446744073709551615 0",
        "METRIC 1 0.33333333333333331 events perf a name with spaces",
        "FACT -2.5000000000000001e+300 B peak heap",
        "THREAD 3 0,63,1023",
        "WARM 12345 6.02e+23",
        "WALL 1.25 2 time budget",
        "S 3 1234.5678901234567 nan 1e-300",
        "PROC -1 1 16 4080 32 1000000 0",
        "END failed two\\nlines and a \\\\ backslash",
        "READY",
        "T 0.5",
        "R 18446744073709551615",
        "Q",
        "TS 2 4611686018427387904 7 1234.5678901234567 9",
        "TSPAN 3 1 17 0 a phase with spaces",
        "TSHARE 0.25 18446744073709551615 decay",
        "TC 9223372036854775807 -1.5 gpu_sm_clock_mhz",
    };
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        char buf[BENCH__WIRE_MAX_LINE + 1], msg[256];
        assert_true(bench__wire_format(buf, sizeof buf, &l[i], msg, sizeof msg) > 0);
        assert_string_equal(buf, want[i]);
    }
    /* The lines a worker writes with nothing to say: an empty reason, an empty message, no
     * thread CPU; and an older build's END without the space. */
    bench__wire_line e;
    char msg[256];
    assert_int_equal(bench__wire_parse("WALL 0.5 1 ", 11, &e, msg, sizeof msg), 0);
    assert_null(e.wall.reason);
    assert_int_equal(bench__wire_parse("END ok ", 7, &e, msg, sizeof msg), 0);
    assert_int_equal(e.end.status, BENCH__OK);
    assert_string_equal(e.end.message, "");
    assert_int_equal(bench__wire_parse("END skipped", 11, &e, msg, sizeof msg), 0);
    assert_int_equal(e.end.status, BENCH__SKIPPED);
    assert_int_equal(bench__wire_parse("THREAD 0 -", 10, &e, msg, sizeof msg), 0);
    for (size_t w = 0; w < BENCH__CPU_WORDS; w++)
        assert_true(e.thread.cpus[w] == 0);
    char buf[64];
    assert_true(bench__wire_format(buf, sizeof buf, &e, msg, sizeof msg) > 0);
    assert_string_equal(buf, "THREAD 0 -");
    /* An unknown stop reason (a newer build's) is no reason, not an error. */
    assert_int_equal(bench__wire_parse("WALL 0.5 1 tea break", 20, &e, msg, sizeof msg), 0);
    assert_null(e.wall.reason);
    /* A backslash before anything but n or \ stays as it is. */
    assert_int_equal(bench__wire_parse("END failed a\\tb", 15, &e, msg, sizeof msg), 0);
    assert_string_equal(e.end.message, "a\\tb");
}

/* A hostile line, and a word its reason must contain. */
typedef struct hostile {
    const char *text;
    size_t len; /* 0: strlen(text) */
    const char *reason;
} hostile;

static void test_hostile_lines(void **state)
{
    (void)state;
    static const hostile cases[] = {
        {"", 0, "unknown kind ''"},
        {" PLAN 1 1 1 1", 0, "unknown kind"},
        {"plan 1 1 1 1", 0, "unknown kind 'plan'"},
        {"XYZZY 1 2", 0, "unknown kind 'XYZZY'"},
        {"\033[2J 1", 0, "unknown kind '\\x1b[2J'"},
        /* truncated */
        {"PLAN", 0, "PLAN line: rounds is missing"},
        {"PLAN 3 1 1000", 0, "est_ns is missing"},
        {"PLAN 3 1 1000 ", 0, "est_ns is empty"},
        {"METRIC 0 1 ns perf", 0, "name is missing"},
        {"METRIC 0 1 ns perf ", 0, "name is missing"},
        {"FACT 1", 0, "unit is missing"},
        {"THREAD 1", 0, "CPUs is missing"},
        {"WALL 1 1", 0, "reason is missing"},
        {"S 1", 0, "total_ns is missing"},
        {"PROC 0 1 2 3 4 5", 0, "majflt is missing"},
        {"END", 0, "status is missing"},
        {"T", 0, "ns is missing"},
        {"R", 0, "iterations is missing"},
        /* more than the kind has */
        {"READY now", 0, "more fields"},
        {"Q 1", 0, "more fields"},
        {"SET 1 2 3", 0, "more fields"},
        {"T 1 ", 0, "more fields"},
        {"SET 1  2", 0, "elements is empty"},
        /* numbers: not numbers, out of range, wrapped */
        {"PLAN 0 1 1 1", 0, "rounds is not a whole number in range"},
        {"PLAN 4294967296 1 1 1", 0, "rounds is not a whole number in range"},
        {"PLAN 3 3 1 1", 0, "sampling mode is not a whole number in range"},
        {"PLAN 3 -1 1 1", 0, "sampling mode is not a whole number in range"},
        {"PLAN 3 1 0 1", 0, "step is not a whole number in range"},
        {"PLAN 3 1 1 0", 0, "est_ns is out of range"},
        {"PLAN 3 1 1 nan", 0, "est_ns is out of range"},
        {"PLAN 3 1 1 1e400", 0, "est_ns is out of range"},
        {"SET -1 0", 0, "bytes is not a whole number in range"},
        {"SET 18446744073709551616 0", 0, "bytes is not a whole number in range"},
        {"SET 1x 0", 0, "bytes is not a whole number in range"},
        {"SET +1 0", 0, "bytes is not a whole number in range"},
        {"METRIC 2 1 ns perf x", 0, "scaled is not a whole number in range"},
        {"METRIC 0 one ns perf x", 0, "min_fraction is not a number"},
        {"METRIC 0 1 0123456789abcdefg perf x", 0, "unit is too long"},
        {"THREAD 0 1,,2", 0, "CPUs are not a list"},
        {"THREAD 0 1,", 0, "CPUs are not a list"},
        {"THREAD 0 ,1", 0, "CPUs are not a list"},
        {"THREAD 0 1024", 0, "CPUs name a CPU out of range"},
        {"THREAD 0 -1", 0, "CPUs are not a list"},
        {"THREAD -1 0", 0, "thread index is not a whole number in range"},
        {"WARM 1 -1", 0, "ns is out of range"},
        {"WALL inf 1 ", 0, "seconds is out of range"},
        {"S 0 5", 0, "iterations is out of range"},
        {"S 1 -5", 0, "total_ns is out of range"},
        {"S 1 inf", 0, "total_ns is out of range"},
        {"S 1 2 x", 0, "metric value is not a number"},
        {"S \t1 2", 0, "iterations is not a number"},
        {"S 0x10 2 3", 0, NULL}, /* accepted: strtod's hexadecimal is a number */
        {"PROC -2 1 2 3 4 5 6", 0, "cpu is not a whole number in range"},
        {"PROC 0 2 2 3 4 5 6", 0, "layout is not a whole number in range"},
        {"PROC 0 1 2 3 4 -5 6", 0, "minflt is out of range"},
        {"END maybe so", 0, "status is not ok, skipped or failed"},
        {"END okay", 0, "status is not ok, skipped or failed"},
        {"T -1", 0, "ns is out of range"},
        {"TS 3 1 1 1 1", 0, "phase is not a whole number in range"},
        {"TS 0 1 0 1 1", 0, "iterations is out of range"},
        {"TS 0 9223372036854775808 1 1 1", 0, "start_ns is not a whole number in range"},
        {"TS 0 1 1 1 0", 0, "count is not a whole number in range"},
        {"TS 0 1 1 1", 0, "count is missing"},
        {"TSPAN 0 1 1 2", 0, "name is missing"},
        {"TSPAN 0 1 1 -2 x", 0, "dur_ns is not a whole number in range"},
        {"TSPAN 0 3 1 2 x", 0, "what is not a whole number in range"},
        {"TSHARE nan 1 x", 0, "ns is out of range"},
        {"TC 1 inf gpu_power_w", 0, "value is out of range"},
        {"TC 1 nan gpu_power_w", 0, "value is out of range"},
        {"TC -1 2 gpu_power_w", 0, "at_ns is not a whole number in range"},
        {"TC 1 2", 0, "name is missing"},
        {"T nan", 0, "ns is out of range"},
        {"R 0", 0, "iterations is not a whole number in range"},
        {"R -5", 0, "iterations is not a whole number in range"},
        /* a NUL or a newline inside */
        {"S 1 2\0 3", 8, "NUL"},
        {"END failed a\0b", 14, "NUL"},
        {"S 1\n2", 0, "newline"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const hostile *h = &cases[i];
        bench__wire_line l;
        char msg[256] = "";
        size_t len = h->len ? h->len : strlen(h->text);
        int rc = bench__wire_parse(h->text, len, &l, msg, sizeof msg);
        if (!h->reason) {
            assert_int_equal(rc, 0);
            continue;
        }
        if (rc != BENCH_EINVAL || !strstr(msg, h->reason) || strchr(msg, '\n')) {
            print_error("case %zu: rc %d, message '%s', want '%s'\n", i, rc, msg, h->reason);
            fail();
        }
    }
}

/* A line longer than the protocol allows, and one with more values than metrics can be. */
static void test_overlong(void **state)
{
    (void)state;
    size_t big = BENCH__WIRE_MAX_LINE + 100;
    char *text = malloc(big + 1);
    assert_non_null(text);
    memset(text, '0', big);
    memcpy(text, "SET 1 ", 6);
    text[big] = '\0';
    bench__wire_line l;
    char msg[256];
    assert_int_equal(bench__wire_parse(text, big, &l, msg, sizeof msg), BENCH_EINVAL);
    assert_non_null(strstr(msg, "longer than"));
    /* Exactly the longest line is a line (its second number has leading zeros). */
    assert_int_equal(bench__wire_parse(text, BENCH__WIRE_MAX_LINE, &l, msg, sizeof msg), 0);
    assert_true(l.set.bytes == 1 && l.set.elements == 0);
    free(text);

    char s[1024] = "S 1 1";
    for (int m = 0; m <= BENCH__MAX_METRICS; m++)
        strcat(s, " 0");
    assert_int_equal(bench__wire_parse(s, strlen(s), &l, msg, sizeof msg), BENCH_EINVAL);
    assert_non_null(strstr(msg, "more than one per metric"));
    s[strlen(s) - 2] = '\0';
    assert_int_equal(bench__wire_parse(s, strlen(s), &l, msg, sizeof msg), 0);
    assert_int_equal(l.sample.nvalues, BENCH__MAX_METRICS);
}

/* The writer says nothing the reader would refuse. */
static void test_writer_refuses(void **state)
{
    (void)state;
    char buf[BENCH__WIRE_MAX_LINE + 1], msg[256];
    bench__wire_line l = {.kind = BENCH__WIRE_METRIC, .metric.min_fraction = 1};
    strcpy(l.metric.unit, "n s");
    strcpy(l.metric.source, "perf");
    strcpy(l.metric.name, "x");
    assert_int_equal(bench__wire_format(buf, sizeof buf, &l, msg, sizeof msg), BENCH_EINVAL);
    assert_non_null(strstr(msg, "unit"));
    strcpy(l.metric.unit, "ns");
    strcpy(l.metric.name, "two\nlines");
    assert_int_equal(bench__wire_format(buf, sizeof buf, &l, msg, sizeof msg), BENCH_EINVAL);
    assert_non_null(strstr(msg, "newline"));
    l = (bench__wire_line){.kind = BENCH__WIRE_PLAN, .plan = {0, BENCH_SAMPLING_FLAT, 1, 1}};
    assert_int_equal(bench__wire_format(buf, sizeof buf, &l, msg, sizeof msg), BENCH_EINVAL);
    assert_non_null(strstr(msg, "rounds"));
    l = (bench__wire_line){.kind = BENCH__WIRE_SAMPLE, .sample = {1, NAN, 0}};
    assert_int_equal(bench__wire_format(buf, sizeof buf, &l, msg, sizeof msg), BENCH_EINVAL);
    l = (bench__wire_line){.kind = BENCH__WIRE_TIME, .time.ns = 1.0 / 3.0};
    assert_int_equal(bench__wire_format(buf, 8, &l, msg, sizeof msg), BENCH_EINVAL);
    assert_string_equal(buf, "");
    l.kind = BENCH__WIRE_NKINDS;
    assert_int_equal(bench__wire_format(buf, sizeof buf, &l, msg, sizeof msg), BENCH_EINVAL);
    /* A message of the longest a result holds, all newlines: twice as long on the wire. */
    l = (bench__wire_line){.kind = BENCH__WIRE_END, .end.status = BENCH__FAILED};
    memset(l.end.message, '\n', sizeof l.end.message - 1);
    bench__wire_line back;
    int n = bench__wire_format(buf, sizeof buf, &l, msg, sizeof msg);
    assert_true(n > 0);
    assert_int_equal(bench__wire_parse(buf, (size_t)n, &back, msg, sizeof msg), 0);
    assert_string_equal(back.end.message, l.end.message);
}

static void test_job(void **state)
{
    (void)state;
    char buf[384], msg[256];
    bench__wire_job j = {2, 10, BENCH_SAMPLING_LINEAR, 1000, 12.5, 0.25, "group/name with space"};
    int n = bench__wire_job_format(buf, sizeof buf, &j, msg, sizeof msg);
    assert_true(n > 0);
    assert_string_equal(buf, "2 10 1 1000 12.5 0.25 group/name with space");
    bench__wire_job back;
    assert_int_equal(bench__wire_job_parse(buf, &back, msg, sizeof msg), 0);
    assert_int_equal(back.index, 2);
    assert_int_equal(back.count, 10);
    assert_int_equal(back.mode, BENCH_SAMPLING_LINEAR);
    assert_true(back.step == 1000 && back.est_ns == 12.5 && back.share == 0.25);
    assert_string_equal(back.id, "group/name with space");
    j = (bench__wire_job){.count = 1, .mode = BENCH__JOB_DRIVEN, .share = 1, .id = "x"};
    assert_true(bench__wire_job_format(buf, sizeof buf, &j, msg, sizeof msg) > 0);
    assert_string_equal(buf, "0 1 3 0 0 1 x");
    j.share = 0; /* a process measures for some time */
    assert_int_equal(bench__wire_job_format(buf, sizeof buf, &j, msg, sizeof msg), BENCH_EINVAL);
    j.share = 1;
    j.id = "a\nb";
    assert_int_equal(bench__wire_job_format(buf, sizeof buf, &j, msg, sizeof msg), BENCH_EINVAL);

    static const char *const bad[] = {
        "", "0", "0 1 0 0 0 1", "0 1 0 0 0 1 ", "1 1 0 0 0 1 x", "0 0 0 0 0 1 x",
        "0 1 4 0 0 1 x", "-1 1 0 0 0 1 x", "0 1 0 -1 0 1 x", "0 1 0 0 -1 1 x", "0 1 0 0 nan 1 x",
        "0  1 0 0 0 1 x", "0 1 0 0 0 1 a\nb", "0 1 0 0 0 0 x", "0 1 0 0 0 1.5 x",
        "0 1 0 0 0 nan x", "0 1 0 0 0 x",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        msg[0] = '\0';
        if (bench__wire_job_parse(bad[i], &back, msg, sizeof msg) != BENCH_EINVAL || !msg[0]) {
            print_error("job '%s' was taken\n", bad[i]);
            fail();
        }
    }
}

/* Lines read from a real child: a line longer than the channel's buffer is one overlong line,
 * refused, and the line after it is read as it is (its tail is never a line of its own). */
static void test_read_from_process(void **state)
{
    (void)state;
    /* The long line's tail, after the channel's 4096 bytes, says "END ok": read on its own it
     * would end the worker with success. */
    char script[256];
    snprintf(script, sizeof script,
             "printf 'READY\\n'; head -c 4096 /dev/zero | tr '\\0' X; printf 'END ok\\n';"
             "printf 'S 1 2\\0003\\n'; printf 'T 5\\n'; printf 'T 6'");
    char *argv[] = {"sh", "-c", script, NULL};
    bench__proc p;
    bench__proc_spec spec = {.path = "/bin/sh", .argv = argv, .channel = BENCH__PROC_STDOUT};
    char msg[256];
    assert_int_equal(bench__proc_start(&p, &spec, msg, sizeof msg), 0);
    int64_t deadline = 0;
    bench__wire_line l;
    assert_int_equal(bench__wire_read(&p, deadline, &l, msg, sizeof msg), 1);
    assert_int_equal(l.kind, BENCH__WIRE_READY);
    /* The long line, in as many pieces as the buffer cuts it into: each refused. */
    int pieces = 0, rc;
    while ((rc = bench__wire_read(&p, deadline, &l, msg, sizeof msg)) == BENCH_EINVAL) {
        if (!strstr(msg, "longer than"))
            break;
        pieces++;
    }
    assert_true(pieces >= 1);
    /* The NUL line was refused too: the first line after the long one is its next line. */
    if (rc == 1)
        print_error("read a %s line after the long one\n", bench__wire_word(l.kind));
    assert_int_equal(rc, BENCH_EINVAL);
    assert_non_null(strstr(msg, "NUL"));
    assert_int_equal(bench__wire_read(&p, deadline, &l, msg, sizeof msg), 1);
    assert_int_equal(l.kind, BENCH__WIRE_TIME);
    assert_true(l.time.ns == 5);
    /* The last line, without its newline at the end of the channel, still counts. */
    assert_int_equal(bench__wire_read(&p, deadline, &l, msg, sizeof msg), 1);
    assert_true(l.time.ns == 6);
    assert_int_equal(bench__wire_read(&p, deadline, &l, msg, sizeof msg), 0);
    assert_int_equal(bench__proc_wait(&p, 0), BENCH__PROC_EXITED);
}

/* A driven worker's commands, read from a stream: R, Q, and whatever else ends its samples. */
static void test_getline(void **state)
{
    (void)state;
    static const char input[] = "R 5\nQ\nR 5\0junk\nR 0\nR 7";
    FILE *f = fmemopen((void *)input, sizeof input - 1, "r");
    assert_non_null(f);
    bench__wire_line l;
    char msg[256];
    assert_int_equal(bench__wire_getline(f, &l, msg, sizeof msg), 1);
    assert_int_equal(l.kind, BENCH__WIRE_RUN);
    assert_true(l.run.iters == 5);
    assert_int_equal(bench__wire_getline(f, &l, msg, sizeof msg), 1);
    assert_int_equal(l.kind, BENCH__WIRE_QUIT);
    assert_int_equal(bench__wire_getline(f, &l, msg, sizeof msg), BENCH_EINVAL);
    assert_non_null(strstr(msg, "NUL"));
    assert_int_equal(bench__wire_getline(f, &l, msg, sizeof msg), BENCH_EINVAL);
    assert_int_equal(bench__wire_getline(f, &l, msg, sizeof msg), 1);
    assert_true(l.run.iters == 7);
    assert_int_equal(bench__wire_getline(f, &l, msg, sizeof msg), 0);
    fclose(f);
}

/* The prefix helpers that replace lengths typed by hand (the refusal words of END included). */
static void test_prefix(void **state)
{
    (void)state;
    assert_true(bench__starts_with("this program has no benchmark 'x'", BENCH__WIRE_NO_BENCHMARK));
    assert_false(bench__starts_with("this program has no", BENCH__WIRE_NO_BENCHMARK));
    assert_true(bench__starts_with("abc", ""));
    assert_false(bench__starts_with("", "a"));
    assert_string_equal(bench__skip_prefix("PRETTY_NAME=\"Debian\"", "PRETTY_NAME="), "\"Debian\"");
    assert_string_equal(bench__skip_prefix("sha256:", "sha256:"), "");
    assert_null(bench__skip_prefix("sha25", "sha256:"));
    assert_null(bench__skip_prefix("SHA256:00", "sha256:"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),      cmocka_unit_test(test_wire_text),
        cmocka_unit_test(test_hostile_lines),   cmocka_unit_test(test_overlong),
        cmocka_unit_test(test_writer_refuses),  cmocka_unit_test(test_job),
        cmocka_unit_test(test_read_from_process), cmocka_unit_test(test_getline),
        cmocka_unit_test(test_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
