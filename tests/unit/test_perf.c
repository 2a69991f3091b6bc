/*
 * test_perf.c: the perf_event counter layer without the kernel: event lists (presets,
 * aliases, duplicates, bad input), the software-event table that a build without libpfm4 relies
 * on, grouping, decoding PERF_FORMAT_GROUP reads built byte by byte here, the difference of two
 * reads and multiplex scaling checked by hand, derived ratios, and the metrics block the pretty
 * reporter prints. One test opens real software counters and skips, saying why, where the
 * kernel refuses them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli/internal.h"
#include "probes/perf.h"
#include "probes/perf_events.h"
#include "report/report_metrics.h"

/* ---- lists ---- */

static void parse_ok(const char *spec, bench__perf_names *n)
{
    char msg[256] = "";
    int rc = bench__perf_parse_spec(spec, n, msg, sizeof msg);
    if (rc != 0)
        fail_msg("'%s': %s", spec, msg);
}

static void test_presets_expand(void **state)
{
    (void)state;
    bench__perf_names n;
    parse_ok("ipc", &n);
    assert_int_equal(n.n, 2);
    assert_string_equal(n.name[0], "cycles");
    assert_string_equal(n.name[1], "instructions");

    parse_ok("sw,ipc,cache,branch", &n);
    const char *want[] = {"task-clock", "page-faults", "context-switches", "cpu-migrations",
                          "cycles", "instructions", "cache-references", "cache-misses",
                          "branches", "branch-misses"};
    assert_int_equal(n.n, 10);
    for (size_t i = 0; i < 10; i++)
        assert_string_equal(n.name[i], want[i]);
    assert_null(bench__perf_preset("cycles"));
    assert_string_equal(bench__perf_preset("branch"), "branches,branch-misses");
}

static void test_duplicates_and_aliases(void **state)
{
    (void)state;
    bench__perf_names n;
    /* Order of first appearance; later duplicates (by name or through a preset) dropped. */
    parse_ok("instructions,ipc,instructions", &n);
    assert_int_equal(n.n, 2);
    assert_string_equal(n.name[0], "instructions");
    assert_string_equal(n.name[1], "cycles");

    /* Software aliases become the canonical name, whatever the case, so they merge too. */
    parse_ok(" faults , cs,MIGRATIONS,sw, Task-Clock ", &n);
    assert_int_equal(n.n, 4);
    assert_string_equal(n.name[0], "page-faults");
    assert_string_equal(n.name[1], "context-switches");
    assert_string_equal(n.name[2], "cpu-migrations");
    assert_string_equal(n.name[3], "task-clock");

    /* PMU-specific names and modifiers pass through untouched. */
    parse_ok("INST_RETIRED:ANY_P,cycles:u,perf::cycles", &n);
    assert_int_equal(n.n, 3);
    assert_string_equal(n.name[0], "INST_RETIRED:ANY_P");
    assert_string_equal(n.name[1], "cycles:u");
}

static void parse_fails(const char *spec, const char *needle)
{
    bench__perf_names n;
    char msg[256] = "";
    assert_int_equal(bench__perf_parse_spec(spec, &n, msg, sizeof msg), BENCH_EINVAL);
    if (!strstr(msg, needle))
        fail_msg("'%s': message '%s' lacks '%s'", spec ? spec : "(null)", msg, needle);
}

static void test_bad_lists(void **state)
{
    (void)state;
    parse_fails("", "no event");
    parse_fails(NULL, "no event");
    parse_fails("cycles,,instructions", "empty event name");
    parse_fails("cycles,", "empty event name");
    parse_fails(" , ", "empty event name");
    parse_fails("cy cles", "printable ASCII");
    parse_fails("caf\xc3\xa9", "printable ASCII");
    char longname[100];
    memset(longname, 'a', 70);
    longname[70] = '\0';
    parse_fails(longname, "longer than 63");
    char many[400] = "";
    for (int i = 0; i < 17; i++) {
        char one[16];
        snprintf(one, sizeof one, "%sev%d", i ? "," : "", i);
        strcat(many, one);
    }
    parse_fails(many, "more than 16");
    /* 16 is fine. */
    char *last = strrchr(many, ',');
    *last = '\0';
    bench__perf_names n;
    parse_ok(many, &n);
    assert_int_equal(n.n, 16);
}

/* ---- names ---- */

static void test_software_table(void **state)
{
    (void)state;
    bench__perf_event ev;
    char msg[256] = "";
    assert_int_equal(bench__perf_resolve_sw("task-clock", &ev, msg, sizeof msg), 0);
    assert_int_equal(ev.type, BENCH__PERF_TYPE_SOFTWARE);
    assert_int_equal(ev.config, 1); /* PERF_COUNT_SW_TASK_CLOCK */
    assert_string_equal(ev.unit, "ns");
    assert_true(ev.software);
    assert_false(ev.exclude_kernel);
    assert_true(ev.kernel_by_default);

    const struct {
        const char *name;
        uint64_t config;
        bench__perf_user_mode mode;
    } cases[] = {
        {"cpu-clock", 0, BENCH__PERF_USER_SAME},
        {"page-faults", 2, BENCH__PERF_USER_PARTIAL},
        {"faults", 2, BENCH__PERF_USER_PARTIAL},
        {"context-switches", 3, BENCH__PERF_USER_NEVER},
        {"cs", 3, BENCH__PERF_USER_NEVER},
        {"cpu-migrations", 4, BENCH__PERF_USER_NEVER},
        {"minor-faults", 5, BENCH__PERF_USER_PARTIAL},
        {"major-faults", 6, BENCH__PERF_USER_PARTIAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(bench__perf_resolve_sw(cases[i].name, &ev, msg, sizeof msg), 0);
        assert_int_equal(ev.config, cases[i].config);
        assert_int_equal(ev.user_mode, cases[i].mode);
        assert_string_equal(ev.unit, cases[i].config == 0 ? "ns" : "events");
        assert_ptr_equal(bench__perf_sw_by_config(cases[i].config),
                         bench__perf_sw_find(cases[i].name));
    }

    /* Without libpfm4: the kernel's generic hardware events by their PERF_COUNT_HW_* numbers,
     * user mode only; a hardware-cache name says libpfm4 is missing; an unknown one is named. */
    const struct {
        const char *name;
        uint64_t config;
    } hw[] = {{"cycles", 0}, {"CPU-Cycles", 0}, {"instructions", 1}, {"cache-references", 2},
              {"cache-misses", 3}, {"branches", 4}, {"branch-instructions", 4},
              {"branch-misses", 5}, {"bus-cycles", 6}, {"stalled-cycles-frontend", 7},
              {"stalled-cycles-backend", 8}, {"ref-cycles", 9}};
    for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++) {
        assert_int_equal(bench__perf_resolve_sw(hw[i].name, &ev, msg, sizeof msg), 0);
        assert_string_equal(ev.name, hw[i].name);
        assert_int_equal(ev.type, BENCH__PERF_TYPE_HARDWARE);
        assert_int_equal(ev.config, hw[i].config);
        assert_false(ev.software);
        assert_true(ev.exclude_kernel);
        assert_false(ev.exclude_user);
        assert_string_equal(ev.unit, "events");
    }
    assert_int_equal(bench__perf_resolve_sw("L1-dcache-load-misses", &ev, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_non_null(strstr(msg, "'L1-dcache-load-misses' is a hardware-cache event"));
    assert_non_null(strstr(msg, "libpfm4"));
    assert_int_equal(bench__perf_resolve_sw("frobnications", &ev, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_non_null(strstr(msg, "unknown event 'frobnications'"));
    assert_true(bench__perf_is_generic_hw("Branch-Misses"));
    assert_false(bench__perf_is_generic_hw("task-clock"));
}

/* The build's resolver (libpfm4 or not) and the probe refuse a name nobody knows. */
static void test_unknown_name(void **state)
{
    (void)state;
    bench__perf_event ev;
    char msg[256] = "";
    assert_int_equal(bench__perf_resolve("no_such_event_anywhere", &ev, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_non_null(strstr(msg, "no_such_event_anywhere"));
    assert_int_equal(bench__perf_resolve("page-faults", &ev, msg, sizeof msg), 0);
    assert_true(ev.software);

    bench__probe *p = (bench__probe *)&ev; /* must be reset to NULL */
    msg[0] = '\0';
    assert_int_equal(bench__perf_probe_create("sw,no_such_event_anywhere", &p, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_null(p);
    assert_non_null(strstr(msg, "no_such_event_anywhere"));
    assert_int_equal(bench__perf_probe_create("cycles,,sw", &p, msg, sizeof msg), BENCH_EINVAL);
    assert_null(p);
}

/* ---- groups ---- */

static void test_plan(void **state)
{
    (void)state;
    /* hw sw hw hw sw hw hw hw: hardware in fours, software of one kind together. */
    unsigned kind[] = {0, 3, 0, 0, 3, 0, 0, 0};
    unsigned g[8];
    size_t ng = bench__perf_plan(kind, 8, 4, g);
    assert_int_equal(ng, 3);
    unsigned want[] = {0, 1, 0, 0, 1, 0, 2, 2};
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(g[i], want[i]);

    /* The sw preset: task-clock alone, the other three together. */
    const char *sw[] = {"task-clock", "page-faults", "context-switches", "cpu-migrations",
                        "cpu-clock"};
    unsigned k5[5];
    for (size_t i = 0; i < 5; i++) {
        bench__perf_event ev;
        char msg[128];
        assert_int_equal(bench__perf_resolve_sw(sw[i], &ev, msg, sizeof msg), 0);
        k5[i] = bench__perf_group_kind(&ev);
    }
    assert_int_equal(bench__perf_plan(k5, 5, 4, g), 3);
    assert_int_equal(g[0], 0);
    assert_int_equal(g[1], 1);
    assert_int_equal(g[2], 1);
    assert_int_equal(g[3], 1);
    assert_int_equal(g[4], 2);

    unsigned hw3[] = {0, 0, 0};
    assert_int_equal(bench__perf_plan(hw3, 3, 1, g), 3);
    assert_int_equal(g[2], 2);
    assert_int_equal(bench__perf_plan(hw3, 3, 0, g), 3); /* hw_max 0 is taken as 1 */
    assert_int_equal(bench__perf_plan(hw3, 0, 4, g), 0);
    bench__perf_event hw;
    memset(&hw, 0, sizeof hw);
    assert_int_equal(bench__perf_group_kind(&hw), 0);

    /* Read order: software counts outermost, hardware, then the clocks next to the wall clock. */
    assert_true(bench__perf_read_rank(k5[1]) < bench__perf_read_rank(0));
    assert_true(bench__perf_read_rank(0) < bench__perf_read_rank(k5[0]));
    assert_int_equal(bench__perf_read_rank(k5[0]), bench__perf_read_rank(k5[4]));
}

/* ---- reads ---- */

/* The bytes read() gives for a group: nr, time_enabled, time_running, values. */
static size_t make_read(uint64_t *buf, uint64_t enabled, uint64_t running, size_t n,
                        const uint64_t *values)
{
    buf[0] = n;
    buf[1] = enabled;
    buf[2] = running;
    for (size_t i = 0; i < n; i++)
        buf[3 + i] = values[i];
    return (3 + n) * sizeof(uint64_t);
}

static void test_parse_read(void **state)
{
    (void)state;
    uint64_t buf[8];
    const uint64_t v[3] = {10, 20, 30};
    size_t len = make_read(buf, 1000, 800, 3, v);
    assert_int_equal(len, 48);
    bench__perf_reading r;
    assert_int_equal(bench__perf_parse_read(buf, len, 3, &r), 0);
    assert_int_equal(r.nr, 3);
    assert_int_equal(r.enabled, 1000);
    assert_int_equal(r.running, 800);
    assert_int_equal(r.values[0], 10);
    assert_int_equal(r.values[2], 30);

    /* The same bytes as raw memory, little or big endian alike: u64 words in order. */
    unsigned char bytes[48];
    memcpy(bytes, buf, sizeof bytes);
    uint64_t again[6];
    memcpy(again, bytes, sizeof again);
    assert_int_equal(bench__perf_parse_read(again, sizeof again, 3, &r), 0);
    assert_int_equal(r.values[1], 20);

    assert_int_equal(bench__perf_parse_read(buf, len - 8, 3, &r), BENCH_EINVAL); /* short */
    assert_int_equal(bench__perf_parse_read(buf, len, 2, &r), BENCH_EINVAL);     /* nr wrong */
    buf[0] = 4;
    assert_int_equal(bench__perf_parse_read(buf, len, 3, &r), BENCH_EINVAL);
    assert_int_equal(bench__perf_parse_read(buf, 0, 0, &r), BENCH_EINVAL);
}

static void reading(bench__perf_reading *r, uint64_t *buf, uint64_t enabled, uint64_t running,
                    size_t n, const uint64_t *values)
{
    size_t len = make_read(buf, enabled, running, n, values);
    assert_int_equal(bench__perf_parse_read(buf, len, n, r), 0);
}

static void test_delta_plain(void **state)
{
    (void)state;
    uint64_t b0[8], b1[8];
    bench__perf_reading a, b;
    double out[2];
    /* Counting all the time: after - before, fraction 1. */
    reading(&a, b0, 100, 100, 2, (const uint64_t[]){5, 7});
    reading(&b, b1, 300, 300, 2, (const uint64_t[]){25, 57});
    assert_float_equal(bench__perf_delta(&a, &b, 2, out), 1.0, 0);
    assert_float_equal(out[0], 20, 0);
    assert_float_equal(out[1], 50, 0);

    /* No time passed (enabled unchanged): raw differences, fraction 1. */
    reading(&b, b1, 100, 100, 2, (const uint64_t[]){5, 8});
    assert_float_equal(bench__perf_delta(&a, &b, 2, out), 1.0, 0);
    assert_float_equal(out[1], 1, 0);

    /* A count that wrapped around 2^64 still differences right. */
    reading(&a, b0, 100, 100, 1, (const uint64_t[]){UINT64_MAX - 4});
    reading(&b, b1, 200, 200, 1, (const uint64_t[]){5});
    bench__perf_delta(&a, &b, 1, out);
    assert_float_equal(out[0], 10, 0);
}

static void test_delta_multiplexed(void **state)
{
    (void)state;
    uint64_t b0[8], b1[8];
    bench__perf_reading a, b;
    double out[2];
    /* Enabled 2000 ns of the sample, on the PMU for 1000: counts doubled, fraction 1/2. */
    reading(&a, b0, 1000, 600, 2, (const uint64_t[]){100, 200});
    reading(&b, b1, 3000, 1600, 2, (const uint64_t[]){400, 1200});
    assert_float_equal(bench__perf_delta(&a, &b, 2, out), 0.5, 1e-15);
    assert_float_equal(out[0], 600, 1e-9);  /* 300 * 2000/1000 */
    assert_float_equal(out[1], 2000, 1e-9); /* 1000 * 2 */

    /* The sample's own times count, not the totals since opening: here the group ran 1/3 of
     * the sample (1000 of 3000 ns) though 70% of its life. */
    reading(&a, b0, 7000, 7000, 1, (const uint64_t[]){0});
    reading(&b, b1, 10000, 8000, 1, (const uint64_t[]){1234});
    assert_float_equal(bench__perf_delta(&a, &b, 1, out), 1.0 / 3.0, 1e-15);
    assert_float_equal(out[0], 3702, 1e-9);

    /* Never on the PMU during the sample: nothing to scale, values 0, fraction 0. */
    reading(&a, b0, 1000, 500, 2, (const uint64_t[]){10, 20});
    reading(&b, b1, 2000, 500, 2, (const uint64_t[]){10, 20});
    out[0] = out[1] = -1;
    assert_float_equal(bench__perf_delta(&a, &b, 2, out), 0.0, 0);
    assert_float_equal(out[0], 0, 0);
    assert_float_equal(out[1], 0, 0);
}

/* ---- derived ---- */

static void test_ratio_of_sums(void **state)
{
    (void)state;
    const double ins[] = {10, 20, 30}, cyc[] = {5, 10, 20};
    /* 60 / 35, not the mean of the per-sample ratios (2 + 2 + 1.5) / 3. */
    assert_float_equal(bench__perf_ratio_of_sums(ins, cyc, 3), 60.0 / 35.0, 1e-15);
    const double zero[] = {0, 0, 0};
    assert_true(isnan(bench__perf_ratio_of_sums(ins, zero, 3)));
    assert_true(isnan(bench__perf_ratio_of_sums(ins, cyc, 0)));
    size_t nd;
    const bench__perf_derived *d = bench__perf_derived_table(&nd);
    assert_int_equal(nd, 3);
    assert_string_equal(d[0].name, "ipc");
    assert_string_equal(d[0].numerator, "instructions");
    assert_string_equal(d[0].denominator, "cycles");
}

/* ---- the pretty block ---- */

static void test_fmt_count(void **state)
{
    (void)state;
    char b[32];
    const struct {
        double v;
        const char *want;
    } cases[] = {
        {0, "0"},          {16, "16.00"},         {1.5, "1.500"},     {123.44, "123.4"},
        {999.4, "999.4"},  {999.96, "1.000 k"},   {1234, "1.234 k"},  {12345678, "12.35 M"},
        {0.25, "0.25"},    {-2048, "-2.048 k"},   {3.2e12, "3.200 T"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bench__fmt_count(b, sizeof b, cases[i].v);
        assert_string_equal(b, cases[i].want);
    }
    bench__fmt_count(b, sizeof b, NAN);
    assert_string_equal(b, "n/a");
    bench__fmt_metric(b, sizeof b, 1500, "ns");
    assert_string_equal(b, "1.500 \xc2\xb5s");
    bench__fmt_metric(b, sizeof b, 16, "events");
    assert_string_equal(b, "16.00");
    bench__fmt_metric(b, sizeof b, 512, "B");
    assert_string_equal(b, "512.0 B");
    bench__fmt_metric(b, sizeof b, 1234, "B");
    assert_string_equal(b, "1.234 kB");
}

static void test_print_metrics(void **state)
{
    (void)state;
    bench__result r;
    memset(&r, 0, sizeof r);
    r.status = BENCH__OK;
    r.nmetrics = 2;
    bench__metric *m = &r.metrics[0];
    strcpy(m->name, "task-clock");
    strcpy(m->unit, "ns");
    m->est.median = (bench__estimate){1234, 1230, 1240};
    m->min_fraction = 1;
    m = &r.metrics[1];
    strcpy(m->name, "cycles");
    strcpy(m->unit, "events");
    m->est.median = (bench__estimate){4200, 4100, 4300};
    m->scaled = true;
    m->min_fraction = 0.48;
    r.nfacts = 2;
    strcpy(r.facts[0].name, "ipc");
    strcpy(r.facts[0].unit, "instr/cycle");
    r.facts[0].value = 2.3126;
    strcpy(r.facts[1].name, "cache-miss-rate");
    strcpy(r.facts[1].unit, "misses/ref");
    r.facts[1].value = 0.0312;

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    bench__print_metrics(f, &r, false);
    fclose(f);
    const char *want =
        "                        task-clock:      1.234 \xc2\xb5s/iter [1.230 \xc2\xb5s 1.240 "
        "\xc2\xb5s]\n"
        "                        cycles:          4.200 k/iter [4.100 k 4.300 k] (scaled: "
        "counted 48% of the time)\n"
        "                        ipc:             2.313 instr/cycle\n"
        "                        cache-miss-rate: 3.12% (misses/ref)\n";
    assert_string_equal(text, want);
    free(text);

    /* Nothing for a failed result, or one without metrics and facts. */
    r.status = BENCH__FAILED;
    f = open_memstream(&text, &len);
    bench__print_metrics(f, &r, false);
    fclose(f);
    assert_int_equal(len, 0);
    free(text);
}

/* ---- the probe on real software counters (skips where the kernel refuses them) ---- */

static void test_probe_software_counts(void **state)
{
    (void)state;
    bench__probe *p = NULL;
    char msg[256];
    assert_int_equal(bench__perf_probe_create("task-clock,page-faults", &p, msg, sizeof msg), 0);
    bench__result r;
    memset(&r, 0, sizeof r);
    r.settings.sample_size = 4;
    if (p->attach(p, &r) != 0) {
        p->destroy(p);
        skip(); /* the warning on stderr says why: perf_event_open refused software events */
    }
    assert_int_equal(r.nmetrics, 2);
    assert_string_equal(r.metrics[0].name, "task-clock");
    assert_string_equal(r.metrics[0].unit, "ns");
    assert_string_equal(r.metrics[1].source, "perf");

    enum { PAGES = 32 };
    size_t page = 4096, size = PAGES * page;
    double values[2] = {-1, -1}, fraction = -1;
    p->start(p);
    unsigned char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                              -1, 0);
    assert_true(mem != MAP_FAILED);
    madvise(mem, size, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < PAGES; i++)
        mem[i * page] = 1;
    munmap(mem, size);
    p->stop(p, values, &fraction);
    assert_float_equal(fraction, 1.0, 0);
    assert_true(values[0] > 0);
    if (!(values[1] >= PAGES && values[1] < PAGES + 8))
        fail_msg("%d pages touched, %g page faults counted", PAGES, values[1]);

    r.nsamples = 0;
    p->detach(p, &r);
    p->destroy(p);
    bench__result_destroy(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets_expand),
        cmocka_unit_test(test_duplicates_and_aliases),
        cmocka_unit_test(test_bad_lists),
        cmocka_unit_test(test_software_table),
        cmocka_unit_test(test_unknown_name),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_parse_read),
        cmocka_unit_test(test_delta_plain),
        cmocka_unit_test(test_delta_multiplexed),
        cmocka_unit_test(test_ratio_of_sums),
        cmocka_unit_test(test_fmt_count),
        cmocka_unit_test(test_print_metrics),
        cmocka_unit_test(test_probe_software_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
