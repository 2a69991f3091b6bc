/*
 * test_canary.c: the drift canaries. Measuring gives a positive time per unit for each probe;
 * the memory probe's buffer follows the last-level cache; the drift between two measurements is
 * told in words and, for the change test, as one number (the root mean square of the log
 * ratios), checked against hand-worked values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "cli/internal.h"

static void test_measure_gives_every_probe(void **state)
{
    (void)state;
    double v[BENCH__NCANARIES];
    assert_int_equal(bench__canaries_measure(v, (size_t)64 << 20), 0);
    for (int k = 0; k < BENCH__NCANARIES; k++)
        assert_true(isfinite(v[k]) && v[k] > 0);
}

static void test_drift_in_words_and_as_one_number(void **state)
{
    (void)state;
    const double then[BENCH__NCANARIES] = {1.0, 2.0, 4.0, 8.0};
    /* +10%, -5%, unknown on one side (0), unchanged */
    const double now[BENCH__NCANARIES] = {1.1, 1.9, 0.0, 8.0};
    double d[BENCH__NCANARIES];
    char words[512];
    assert_int_equal(bench__canaries_drift(now, then, d, words, sizeof words), 3);
    assert_true(fabs(d[0] - 0.10) < 1e-12);
    assert_true(fabs(d[1] + 0.05) < 1e-12);
    assert_true(isnan(d[2]));
    assert_true(d[3] == 0.0);
    assert_non_null(strstr(words, "dependent arithmetic (a latency chain) 10.0% slower"));
    assert_non_null(strstr(words, "arithmetic throughput 5.0% faster"));
    assert_null(strstr(words, "L2"));
    /* the smallest of |ln 1.1|, |ln 0.95| and 0: 0 */
    assert_true(bench__canaries_shared_drift(d) == 0.0);
    /* what one kind alone shows does not set it: 2%, 3% faster, 5% and 90% slower give ln 1.02
     * (the sign does not matter) */
    const double wild[BENCH__NCANARIES] = {-0.02, -0.03, 0.05, 0.90};
    assert_true(fabs(bench__canaries_shared_drift(wild) - fabs(log(0.98))) < 1e-12);
    /* nothing known: no number */
    const double none[BENCH__NCANARIES] = {NAN, NAN, NAN, NAN};
    assert_true(isnan(bench__canaries_shared_drift(none)));
}

/* The memory probe reads four times the largest cache, so its reads come from memory whatever
 * the cache keeps; bounded so that the probe stays short and fits in memory. */
static void test_memory_buffer_follows_the_cache(void **state)
{
    (void)state;
    const size_t mib = (size_t)1 << 20;
    assert_true(bench__canary_memory_bytes(0) == 64 * mib);          /* unknown cache */
    assert_true(bench__canary_memory_bytes(8 * mib) == 64 * mib);    /* small L3: the floor */
    assert_true(bench__canary_memory_bytes(36608 * 1024) == 143 * mib); /* 35.75 MiB */
    assert_true(bench__canary_memory_bytes(105000000) == 400 * mib); /* a 105 MB server L3 */
    assert_true(bench__canary_memory_bytes(320 * mib) == 1024 * mib); /* capped at 1 GiB */
    assert_true(bench__canary_memory_bytes(SIZE_MAX / 2) == 1024 * mib); /* no overflow */
}

/* The size follows only a cache size some source vouches for, and says why it is what it is. */
static void test_memory_plan_says_why(void **state)
{
    (void)state;
    const size_t mib = (size_t)1 << 20;
    char why[192];
    assert_true(bench__canary_memory_plan(-1, "unknown", why, sizeof why) == 64 * mib);
    assert_string_equal(why, "the default, as no source vouches for a cache size");
    assert_true(bench__canary_memory_plan(32768, "sysfs", why, sizeof why) == 128 * mib);
    assert_string_equal(why, "4x the largest cache (32768 KiB, from sysfs)");
    assert_true(bench__canary_memory_plan(8192, "libcpuid", why, sizeof why) == 64 * mib);
    assert_non_null(strstr(why, "from libcpuid), raised to the 64 MiB floor"));
    assert_true(bench__canary_memory_plan(491520, "sysfs", why, sizeof why) == 1024 * mib);
    assert_non_null(strstr(why, "capped at 1 GiB"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_buffer_follows_the_cache),
        cmocka_unit_test(test_memory_plan_says_why),
        cmocka_unit_test(test_measure_gives_every_probe),
        cmocka_unit_test(test_drift_in_words_and_as_one_number),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
