/*
 * test_request.c: the command line read into the one request record (cli/cli_options.c's table)
 * and the values derived from it (run/request.c): each option not given resolves to its stated
 * default, a given value wins even where it equals the "not given" of another field (0), the
 * table stores each integer into a field of its own width, and the noise threshold, the paired
 * options and the confirmation time are the ones each mode documents (docs/cli.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "cli/cli.h"
#include "run/client.h"
#include "run/instr.h"
#include "run/pipeline.h"

/* Parses the NULL-terminated options after the program name into *c: 0 or -1. */
static int parse(bench__request *c, const char *const *args)
{
    char *argv[32] = {"bench"};
    int argc = 1;
    while (args[argc - 1])
        argv[argc] = (char *)args[argc - 1], argc++;
    return bench__cli_parse(c, argc, argv);
}

static int setup(void **state)
{
    (void)state;
    unsetenv("BENCH_HISTORY");
    return 0;
}

static void test_defaults_when_nothing_is_given(void **state)
{
    (void)state;
    bench__request c;
    const char *none[] = {NULL};
    assert_int_equal(parse(&c, none), 0);
    assert_true(c.cmp.noise_threshold == 0.02);
    assert_true(c.cmp.significance_level == 0.05);
    assert_true(c.run.confidence_level == 0.95);
    assert_int_equal(c.run.nresamples, 10000);
    assert_int_equal(c.run.seed, 1);
    assert_true(bench__request_confirm_time(&c, 1) == 5.0);
    assert_int_equal(bench__request_history_programs(&c), 20);
    bench__ab_options ab = bench__request_ab_options(&c);
    assert_true(ab.seconds == 5.0);
    assert_int_equal(ab.max_pairs, 32);
    assert_int_equal(ab.schedule, BENCH__AB_PINNED);
    assert_true(ab.timeout_s == 300.0);
    bool asked;
    assert_null(bench__request_probe(&c, "perf", &asked));
    assert_false(asked);
}

/* The threshold is the mode's: 0.01 for --ab, 0.001 for --instructions; a given one wins in
 * every mode, 0 included. */
static void test_noise_threshold_of_each_mode(void **state)
{
    (void)state;
    bench__request c;
    const char *ab[] = {"--ab", "/bin/true", NULL};
    assert_int_equal(parse(&c, ab), 0);
    assert_true(c.cmp.noise_threshold == 0.01);
    assert_true(bench__request_ab_options(&c).noise_threshold == 0.01);
    /* Counts: their client sets theirs when it compares (from --instructions or a file). */
    const char *instr[] = {"--instructions", NULL};
    assert_int_equal(parse(&c, instr), 0);
    bench__client_of_mode(BENCH__INSTR_MODE)->configure(&c);
    assert_true(c.cmp.noise_threshold == 0.001);
    const char *ab_given[] = {"--ab", "/bin/true", "--noise-threshold", "0", NULL};
    assert_int_equal(parse(&c, ab_given), 0);
    assert_true(c.cmp.noise_threshold == 0.0);
    assert_true(bench__request_ab_options(&c).noise_threshold == 0.0);
    const char *instr_given[] = {"--instructions", "--baseline", "b", "--noise-threshold",
                                 "0.25", NULL};
    assert_int_equal(parse(&c, instr_given), 0);
    bench__client_for(&c)->configure(&c);
    assert_true(c.cmp.noise_threshold == 0.25);
}

/* --confirm-time 0 is "never", not "not given"; not given, the default is shared out over the
 * suspects: 5 s each up to 8, then 40 s shared, but never under 2 s each. */
static void test_confirm_time(void **state)
{
    (void)state;
    bench__request c;
    const char *none[] = {"--baseline", "b", NULL};
    assert_int_equal(parse(&c, none), 0);
    assert_true(bench__request_confirm_time(&c, 8) == 5.0);
    assert_true(bench__request_confirm_time(&c, 10) == 4.0);
    assert_true(bench__request_confirm_time(&c, 16) == 2.5);
    assert_true(bench__request_confirm_time(&c, 20) == 2.0);
    assert_true(bench__request_confirm_time(&c, 100) == 2.0);
    const char *zero[] = {"--baseline", "b", "--confirm-time", "0", NULL};
    assert_int_equal(parse(&c, zero), 0);
    assert_true(bench__request_confirm_time(&c, 3) == 0.0);
    const char *gate[] = {"--confirm-time", "3", NULL};
    assert_int_equal(parse(&c, gate), -1); /* needs --baseline: a given value is seen */
}

/* Each integer lands whole in a field of its own width (int, unsigned, size_t, uint64_t). */
static void test_table_stores_each_width(void **state)
{
    (void)state;
    bench__request c;
    const char *args[] = {"--seed", "4294967295", "--processes", "1000", "--nresamples",
                          "10000000", "--sample-size", "100000", "--save-baseline", "s",
                          "--calibrate", "100", "--gpu-lock-clocks", "10000", NULL};
    assert_int_equal(parse(&c, args), 0);
    assert_true(c.run.seed == UINT32_MAX);
    assert_int_equal(c.run.processes, 1000);
    assert_int_equal(c.run.nresamples, 10000000);
    assert_int_equal(c.run.cli.sample_size, 100000);
    assert_int_equal(c.calibrate, 100);
    assert_int_equal(c.gpu_lock_mhz, 10000);
    const char *instr[] = {"--instructions", "--instructions-iterations", "4294967296", NULL};
    assert_int_equal(parse(&c, instr), 0);
    assert_true(c.instr_iterations == UINT64_C(4294967296));
    const char *keep[] = {"--history", "h.db", "--history-programs", "0", NULL};
    assert_int_equal(parse(&c, keep), 0);
    assert_int_equal(bench__request_history_programs(&c), 0);
}

static void test_paired_options_given(void **state)
{
    (void)state;
    bench__request c;
    const char *args[] = {"--ab", "/bin/true", "--ab-time", "2.5", "--ab-pairs", "3",
                          "--ab-schedule", "duet", "--significance-level", "0.01",
                          "--timeout", "7", "--seed", "9", "--fixed-layout", NULL};
    assert_int_equal(parse(&c, args), 0);
    bench__ab_options ab = bench__request_ab_options(&c);
    assert_true(ab.seconds == 2.5);
    assert_int_equal(ab.max_pairs, 3);
    assert_int_equal(ab.schedule, BENCH__AB_DUET);
    assert_true(ab.significance_level == 0.01);
    assert_true(ab.timeout_s == 7.0);
    assert_int_equal(ab.seed, 9);
    assert_true(ab.fixed_layout);
}

/* --perf-events and --alloc-stats are their probe kinds asked for: one record, no copy. */
static void test_probes_are_the_table(void **state)
{
    (void)state;
    bench__request c;
    const char *args[] = {"--perf-events", "sw", "--alloc-stats", NULL};
    assert_int_equal(parse(&c, args), 0);
    bool asked;
    assert_string_equal(bench__request_probe(&c, "perf", &asked), "sw");
    assert_true(asked);
    assert_null(bench__request_probe(&c, "alloc", &asked));
    assert_true(asked);
    const char *probe[] = {"--probe", "perf=ipc", NULL};
    assert_int_equal(parse(&c, probe), 0);
    assert_string_equal(bench__request_probe(&c, "perf", &asked), "ipc");
    assert_null(bench__request_probe(&c, "alloc", &asked));
    assert_false(asked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_when_nothing_is_given),
        cmocka_unit_test(test_noise_threshold_of_each_mode),
        cmocka_unit_test(test_confirm_time),
        cmocka_unit_test(test_table_stores_each_width),
        cmocka_unit_test(test_paired_options_given),
        cmocka_unit_test(test_probes_are_the_table),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
