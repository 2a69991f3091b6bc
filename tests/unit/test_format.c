/*
 * test_format.c: what users read: time and rate formatting, CSV and Markdown escaping of ids and
 * messages, the program's name that begins every message on stderr, and the atomic JSON file
 * write (read back through cJSON from a real file on disk).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/internal.h"
#include "probes/probes.h"
#include "report/report_compare.h"

static void test_fmt_time(void **state)
{
    (void)state;
    char b[32];
    struct {
        double ns;
        const char *want;
    } cases[] = {
        {0.5, "500.0 ps"},      {0.25, "250.0 ps"},    {12.375, "12.38 ns"},
        {1.5, "1.500 ns"},      {1500, "1.500 \xc2\xb5s"}, {999.96, "1.000 \xc2\xb5s"},
        {2.5e9, "2.500 s"},     {1234.5e6, "1.234 s"},  {42e6, "42.00 ms"},
        {999.4, "999.4 ns"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bench__fmt_time(b, sizeof b, cases[i].ns);
        assert_string_equal(b, cases[i].want);
    }
    bench__fmt_time(b, sizeof b, 0.0 / 0.0);
    assert_string_equal(b, "n/a");
}

static void test_fmt_rate(void **state)
{
    (void)state;
    char b[32];
    bench__fmt_rate(b, sizeof b, 47.25e9, "B");
    assert_string_equal(b, "47.25 GB/s");
    bench__fmt_rate(b, sizeof b, 18.5e6, "elem");
    assert_string_equal(b, "18.50 Melem/s");
    bench__fmt_rate(b, sizeof b, 12.0, "B");
    assert_string_equal(b, "12.00 B/s");
    bench__fmt_rate(b, sizeof b, 999.99e3, "B");
    assert_string_equal(b, "1.000 MB/s");
}

static void dummy_fn(bench_t *b)
{
    (void)b;
}

static bench_desc desc = {.group = "g", .name = "n|x", .fn = dummy_fn};

static void make_result(bench__result *r, bench__instance *in)
{
    memset(in, 0, sizeof *in);
    in->desc = &desc;
    strcpy(in->id, "g/n|x\"q");
    memset(r, 0, sizeof *r);
    r->inst = in;
    r->status = BENCH__FAILED;
    strcpy(r->message, "bad \"thing\" | here");
}

static char *capture_with(void (*make)(bench__reporter *, FILE *), const bench__result *r,
                          const bench__compare_opts *cmp)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    bench__reporter rep;
    make(&rep, f);
    rep.cmp = cmp;
    bench__context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.confidence_level = 0.95;
    rep.begin(&rep, &ctx);
    rep.result(&rep, r);
    rep.end(&rep, &ctx, r, 1);
    fclose(f);
    return buf;
}

static char *capture(void (*make)(bench__reporter *, FILE *), const bench__result *r)
{
    return capture_with(make, r, NULL);
}

static void pretty_plain(bench__reporter *rep, FILE *out)
{
    bench__reporter_pretty(rep, out, false);
}

/* The spread message sizes what a saved comparison sees with the run's own threshold and
 * significance level, and shows only when the spread hides a change of that threshold. 10
 * processes, log sd 0.06: se = sqrt(2/10) 0.06 = 0.026833 on Welch's 2 (10 - 1) = 18 degrees of
 * freedom; t(0.975, 18) = 2.100922, t(0.9995, 18) = 3.921646, t(0.8, 18) = 0.862049 (Python,
 * Simpson's rule on Student's density). Hidden when (t_crit + t_0.8) se > ln(1 + T); the MDE
 * printed is expm1(max(ln(1 + T), t_crit se) + t_0.8 se). Defaults (T 2%, alpha 0.05): 0.079505
 * > 0.019803, MDE expm1(0.056374 + 0.023131) = 8.3%; T 50%: 0.079505 < ln 1.5 = 0.405465, no
 * warning; alpha 0.001: 0.128360 > 0.019803, MDE expm1(0.105229 + 0.023131) = 13.7%. */
static void test_spread_message_follows_the_run_settings(void **state)
{
    (void)state;
    bench__result r;
    bench__instance in;
    make_result(&r, &in);
    r.status = BENCH__OK;
    r.processes = 10;
    r.process_cv = 0.06;
    r.process_log_sd = 0.06;
    r.est.median.point = r.est.median.lower = r.est.median.upper = 100.0;
    r.nsamples = 100;
    const struct {
        bench__compare_opts o;
        const char *want;
    } cases[] = {
        {{.significance_level = 0.05, .noise_threshold = 0.02}, "changes above about 8%"},
        {{.significance_level = 0.05, .noise_threshold = 0.5}, NULL},
        {{.significance_level = 0.001, .noise_threshold = 0.02}, "changes above about 14%"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = capture_with(pretty_plain, &r, &cases[i].o);
        if (cases[i].want)
            assert_non_null(strstr(out, cases[i].want));
        else
            assert_null(strstr(out, "Spread between processes"));
        free(out);
    }
    char *out = capture(pretty_plain, &r); /* no settings given: the defaults */
    assert_non_null(strstr(out, "changes above about 8%"));
    free(out);
}

static void csv_plain(bench__reporter *rep, FILE *out)
{
    bench__reporter_csv(rep, out);
}

/* A median under 0.1 ns per iteration (one cycle of a 10 GHz clock) is a removed body: every
 * text output says so with the remedy; 0.1 ns itself is a rate a machine can reach. */
static void test_optimised_away_said_everywhere(void **state)
{
    (void)state;
    bench__result r;
    bench__instance in;
    make_result(&r, &in);
    r.status = BENCH__OK;
    r.message[0] = '\0';
    r.nsamples = 50;
    r.est.median.point = r.est.median.lower = r.est.median.upper = 0.0;
    assert_true(bench__optimised_away(&r));
    void (*makes[])(bench__reporter *, FILE *) = {pretty_plain, csv_plain,
                                                  bench__reporter_markdown};
    for (size_t i = 0; i < 3; i++) {
        char *out = capture(makes[i], &r);
        assert_non_null(strstr(out, "the body was optimised away"));
        assert_non_null(strstr(out, "keep its work with bench")); /* markdown escapes _ */
        free(out);
    }
    r.est.median.point = r.est.median.lower = r.est.median.upper = 0.1;
    assert_false(bench__optimised_away(&r));
    for (size_t i = 0; i < 3; i++) {
        char *out = capture(makes[i], &r);
        assert_null(strstr(out, "optimised away"));
        free(out);
    }
    r.status = BENCH__SKIPPED; /* nothing measured: nothing to say */
    r.est.median.point = 0;
    assert_false(bench__optimised_away(&r));
}

static void test_csv_escaping(void **state)
{
    (void)state;
    bench__result r;
    bench__instance in;
    make_result(&r, &in);
    char *out = capture(bench__reporter_csv, &r);
    /* RFC 4180: quotes doubled inside a quoted field */
    assert_non_null(strstr(out, "\"g/n|x\"\"q\""));
    assert_non_null(strstr(out, "\"bad \"\"thing\"\" | here\""));
    assert_non_null(strstr(out, ",failed,"));
    free(out);
}

static void test_markdown_escaping(void **state)
{
    (void)state;
    bench__result r;
    bench__instance in;
    make_result(&r, &in);
    char *out = capture(bench__reporter_markdown, &r);
    assert_non_null(strstr(out, "g/n\\|x"));
    assert_non_null(strstr(out, "bad \"thing\" \\| here"));
    assert_null(strstr(out, "n|x")); /* an unescaped pipe would split the table */
    free(out);
}

static void test_escape(void **state)
{
    (void)state;
    char b[64];
    struct {
        const char *in, *want;
    } cases[] = {
        {"plain/id", "plain/id"},
        {"a\x1b[31mb", "a\\x1b[31mb"},            /* ESC */
        {"bell\x07" "cr\rnl\ntab\t", "bell\\x07cr\\x0dnl\\x0atab\\x09"},
        {"del\x7f", "del\\x7f"},
        {"c1\xc2\x9b", "c1\\x9b"},                /* U+009B, CSI in 8-bit terminals */
        {"bidi\xe2\x80\xae", "bidi\\u202e"},       /* RIGHT-TO-LEFT OVERRIDE */
        {"bad\xff\xc3", "bad\\xff\\xc3"},          /* not UTF-8: each byte */
        {"overlong\xc0\xaf", "overlong\\xc0\\xaf"},
        {"\xc2\xb5s caf\xc3\xa9", "\xc2\xb5s caf\xc3\xa9"}, /* valid UTF-8 kept */
        {"back\\slash", "back\\slash"},          /* backslashes kept */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_string_equal(bench__escape(b, sizeof b, cases[i].in), cases[i].want);
        /* idempotent: escaping escaped text changes nothing */
        char again[64];
        assert_string_equal(bench__escape(again, sizeof again, b), b);
    }
    /* truncation stops at a character boundary, never inside an escape */
    char small[6];
    assert_string_equal(bench__escape(small, sizeof small, "ab\x1b" "cd"), "ab");
    assert_string_equal(bench__escape(small, sizeof small, NULL), "");
}

static void test_csv_guard(void **state)
{
    (void)state;
    const char *guarded[] = {"=1+1", "=HYPERLINK(\"x\")", "@SUM(A1)", "+cmd", "-cmd", "-",
                             "+", "\tx", "\rx", "-1+1", "-inf", "+nan", "-1e999"};
    const char *plain[] = {"", "abc", "g/-1", "-2", "+1.5e3", "-0.25", " =x", "'=x"};
    for (size_t i = 0; i < sizeof guarded / sizeof guarded[0]; i++)
        assert_true(bench__csv_needs_guard(guarded[i]));
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        assert_false(bench__csv_needs_guard(plain[i]));
}

static bench_desc formula_desc = {.group = "g", .name = "=cmd|' /C calc'!A0", .fn = dummy_fn};

static void test_csv_formula_and_control_cells(void **state)
{
    (void)state;
    bench__result r;
    bench__instance in;
    make_result(&r, &in);
    in.desc = &formula_desc;
    strcpy(r.message, "-2+3 \x1b[2J");
    char *out = capture(bench__reporter_csv, &r);
    assert_non_null(strstr(out, ",\"'=cmd|' /C calc'!A0\","));
    assert_non_null(strstr(out, ",\"'-2+3 \\x1b[2J\""));
    assert_null(strchr(out, 0x1b));
    free(out);
}

/* Metric `name` of r: median m in [m - 1, m + 1], unit "events", counted for `frac` of each
 * sample. */
static void add_metric(bench__result *r, const char *name, double m, double frac)
{
    bench__metric *x = &r->metrics[r->nmetrics++];
    snprintf(x->name, sizeof x->name, "%s", name);
    snprintf(x->unit, sizeof x->unit, "%s", "events");
    x->est.median = (bench__estimate){m, m - 1, m + 1};
    x->min_fraction = frac;
}

static void test_csv_metric_columns(void **state)
{
    (void)state;
    bench__result r[3];
    bench__instance in[3];
    for (size_t i = 0; i < 3; i++) {
        make_result(&r[i], &in[i]);
        r[i].status = BENCH__OK;
        r[i].message[0] = '\0';
    }
    add_metric(&r[0], "b", 5, 1);
    add_metric(&r[0], "=x", 7, 0.5);
    add_metric(&r[1], "a", 2, 1);
    r[2].status = BENCH__FAILED; /* its metrics are not shown */
    add_metric(&r[2], "zz", 1, 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    bench__reporter rep;
    bench__reporter_csv(&rep, f);
    bench__context ctx;
    memset(&ctx, 0, sizeof ctx);
    rep.begin(&rep, &ctx);
    for (size_t i = 0; i < 3; i++)
        rep.result(&rep, &r[i]);
    assert_int_equal(rep.end(&rep, &ctx, r, 3), 0);
    fclose(f);
    /* The columns of every metric of the ok rows, sorted by name, names guarded. */
    const char *head = "message,min_ns,facts,"
                       "\"'=x\",\"'=x_lower\",\"'=x_upper\",\"'=x_unit\",\"'=x_min_fraction\","
                       "\"a\",\"a_lower\",\"a_upper\",\"a_unit\",\"a_min_fraction\","
                       "\"b\",\"b_lower\",\"b_upper\",\"b_unit\",\"b_min_fraction\"\n";
    assert_non_null(strstr(buf, head));
    assert_null(strstr(buf, "zz"));
    /* Each row: its own metrics' cells, the others empty. */
    assert_non_null(strstr(buf, ",\"\",7,6,8,\"events\",0.5,,,,,,5,4,6,\"events\",1\n"));
    assert_non_null(strstr(buf, ",\"\",,,,,,2,1,3,\"events\",1,,,,,\n"));
    assert_non_null(strstr(buf, ",\"\",,,,,,,,,,,,,,,\n"));
    free(buf);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc(1, (size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    return s;
}

static void test_json_file_atomic(void **state)
{
    (void)state;
    char dir[] = "/tmp/harness-json-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/out.json", dir);

    bench__instance in;
    memset(&in, 0, sizeof in);
    in.desc = &desc;
    strcpy(in.id, "g/n");
    double iters[3] = {1, 2, 3}, totals[3] = {10, 20, 31};
    bench__result r;
    memset(&r, 0, sizeof r);
    r.inst = &in;
    r.status = BENCH__OK;
    r.nsamples = 3;
    r.iters = iters;
    r.totals_ns = totals;
    r.est.median.point = 10;
    r.stop_reason = "precision";
    bench__run_options opt;
    memset(&opt, 0, sizeof opt);
    opt.nresamples = 100;
    opt.confidence_level = 0.9;
    opt.seed = 5;
    bench__context ctx;
    bench__context_collect(&ctx, &opt);
    bench__probes_context(&ctx);

    char msg[256] = "";
    assert_int_equal(bench__json_write_file(path, &ctx, &r, 1, msg, sizeof msg), 0);
    char *text = slurp(path);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_int_equal(cJSON_GetObjectItem(root, "schema_version")->valueint, 1);
    cJSON *b0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "benchmarks"), 0);
    assert_string_equal(cJSON_GetObjectItem(b0, "id")->valuestring, "g/n");
    cJSON *tot = cJSON_GetObjectItem(cJSON_GetObjectItem(b0, "samples"), "totals_ns");
    assert_int_equal(cJSON_GetArraySize(tot), 3);
    assert_true(cJSON_GetArrayItem(tot, 2)->valuedouble == 31);
    cJSON *stats = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "context"), "statistics");
    assert_true(cJSON_GetObjectItem(stats, "confidence_level")->valuedouble == 0.9);
    cJSON_Delete(root);

    /* A write that fails (missing directory) reports the path and touches nothing else. */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/missing/out.json", dir);
    assert_int_not_equal(bench__json_write_file(bad, &ctx, &r, 1, msg, sizeof msg), 0);
    assert_non_null(strstr(msg, bad));
    char *again = slurp(path);
    assert_string_equal(again, text);

    /* No temporary file is left behind. */
    DIR *d = opendir(dir);
    struct dirent *e;
    int entries = 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            entries++;
    closedir(d);
    assert_int_equal(entries, 1);

    free(text);
    free(again);
    unlink(path);
    rmdir(dir);
}

/* What bench__errf writes to stderr (descriptor 2, caught in a temporary file), in buf. */
static void errf_caught(char *buf, size_t len, const char *arg)
{
    char path[] = "/tmp/bench-test-errf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    dup2(fd, STDERR_FILENO);
    bench__errf("unknown option '%s'\n", arg);
    dup2(saved, STDERR_FILENO);
    close(saved);
    ssize_t n = pread(fd, buf, len - 1, 0);
    close(fd);
    assert_true(n >= 0);
    buf[n] = '\0';
}

/* A change line whose interval reaches far: two worker pairs of a multi-threaded benchmark that
 * disagreed by 145% gave an upper bound of +8.17e29%, printed as 30 digits cut off before the
 * percent sign. From a million percent on, three significant figures; below it, two decimals. */
static void test_change_line_far_bounds(void **state)
{
    (void)state;
    bench__change c;
    memset(&c, 0, sizeof c);
    c.verdict = BENCH__V_INCONCLUSIVE;
    c.interleaved = true;
    c.ratio_lower = 0.0;
    c.ratio = 2.7987;
    c.ratio_upper = 8.165732187049413e27; /* +8.165732187049413e29 % */
    c.p = 0.5001;
    c.mde = 1.2036607683784365e28;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    bench__print_change_line(f, &c, false);
    fclose(f);
    assert_non_null(strstr(buf, "change: [-100.00% +179.87% +8.17e+29%] (p = 0.5001; detectable "
                                "change 1.2e+30%)"));
    free(buf);
    c.ratio_upper = 1.0 + 9999.994; /* +999999.4%: still two decimals */
    c.mde = 0.0123;
    buf = NULL;
    f = open_memstream(&buf, &len);
    bench__print_change_line(f, &c, false);
    fclose(f);
    assert_non_null(strstr(buf, "+999999.40%] (p = 0.5001; detectable change 1.23%)"));
    free(buf);
}

static void test_messages_begin_with_the_program_name(void **state)
{
    (void)state;
    static char got[8192], want[8192];
    assert_string_equal(bench__prog_name(), "bench");
    struct {
        const char *argv0, *name;
    } cases[] = {
        {"/usr/local/bin/myperf", "myperf"}, {"./my perf", "my perf"},
        {"myperf", "myperf"},                {"", "bench"},
        {NULL, "bench"},                     {"/usr/bin/", "bench"},
        {"dir/my\nperf\x1b", "my\\x0aperf\\x1b"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bench__set_prog_name(cases[i].argv0);
        assert_string_equal(bench__prog_name(), cases[i].name);
        errf_caught(got, sizeof got, "--frob");
        bench__msg(want, sizeof want, "%s: unknown option '--frob'\n", cases[i].name);
        assert_string_equal(got, want);
    }
    /* Longer than the stack buffer: written whole all the same. */
    bench__set_prog_name("myperf");
    char *arg = malloc(5000);
    assert_non_null(arg);
    memset(arg, 'a', 4999);
    arg[4999] = '\0';
    errf_caught(got, sizeof got, arg);
    bench__msg(want, sizeof want, "myperf: unknown option '%s'\n", arg);
    assert_int_equal(strlen(got), strlen("myperf: unknown option ''\n") + 4999);
    assert_string_equal(got, want);
    free(arg);
    bench__set_prog_name(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_time),
        cmocka_unit_test(test_fmt_rate),
        cmocka_unit_test(test_csv_escaping),
        cmocka_unit_test(test_spread_message_follows_the_run_settings),
        cmocka_unit_test(test_optimised_away_said_everywhere),
        cmocka_unit_test(test_markdown_escaping),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_csv_guard),
        cmocka_unit_test(test_messages_begin_with_the_program_name),
        cmocka_unit_test(test_change_line_far_bounds),
        cmocka_unit_test(test_csv_formula_and_control_cells),
        cmocka_unit_test(test_csv_metric_columns),
        cmocka_unit_test(test_json_file_atomic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
