/*
 * test_canary.c: the drift canaries. Measuring gives a positive time per unit for each probe;
 * the memory probe's buffer follows the last-level cache; the drift between two measurements is
 * told in words, only where it goes beyond the readings' spread over the processes of both runs,
 * and, for the change test, as one number (the smallest absolute log ratio), checked against
 * hand-worked values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/internal.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Every probe read in each of the five processes; the value is their median. */
static void test_measure_gives_every_probe(void **state)
{
    (void)state;
    bench__canaries c;
    assert_int_equal(bench__canaries_measure(&c, (size_t)64 << 20), 0);
    assert_int_equal(c.n, BENCH__CANARY_PROCS);
    for (int k = 0; k < BENCH__NCANARIES; k++) {
        double s[BENCH__CANARY_PROCS];
        memcpy(s, c.samples[k], sizeof s);
        qsort(s, BENCH__CANARY_PROCS, sizeof *s, cmp_double);
        for (int i = 0; i < BENCH__CANARY_PROCS; i++)
            assert_true(isfinite(s[i]) && s[i] > 0);
        assert_true(c.v[k] == s[BENCH__CANARY_PROCS / 2]);
    }
    /* The memory probe reads round its buffer across the processes: the first from the start,
     * each later one on from where the one before stopped (a 1 ms repetition reads a few MiB,
     * so none stops where it began; before, every process read from the start, and after the
     * first the reads came from a cache that could hold them). */
    const size_t bytes = (size_t)64 << 20;
    assert_int_equal(c.memory_start[0], 0);
    for (int p = 1; p < BENCH__CANARY_PROCS; p++) {
        assert_true(c.memory_start[p] < bytes);
        assert_true(c.memory_start[p] % 1024 == 0); /* a unit is 1 KiB */
        assert_true(c.memory_start[p] != c.memory_start[p - 1]);
    }
}

/* A run's canaries from values and per-process readings (n 0: values only). */
static bench__canaries canaries(const double v[BENCH__NCANARIES], int n,
                                const double s[][BENCH__CANARY_PROCS])
{
    bench__canaries c;
    memset(&c, 0, sizeof c);
    memcpy(c.v, v, sizeof c.v);
    c.n = n;
    for (int k = 0; n > 0 && k < BENCH__NCANARIES; k++)
        memcpy(c.samples[k], s[k], sizeof c.samples[k]);
    return c;
}

static void test_drift_in_words_and_as_one_number(void **state)
{
    (void)state;
    /* Files of earlier versions keep one reading a canary: any move beyond the threshold. */
    const double tv[BENCH__NCANARIES] = {1.0, 2.0, 4.0, 8.0};
    /* +10%, -5%, unknown on one side (0), unchanged */
    const double nv[BENCH__NCANARIES] = {1.1, 1.9, 0.0, 8.0};
    bench__canaries then = canaries(tv, 0, NULL), now = canaries(nv, 0, NULL);
    double d[BENCH__NCANARIES];
    bool beyond[BENCH__NCANARIES];
    char words[512];
    assert_int_equal(bench__canaries_drift(&now, &then, 0.01, d, beyond, words, sizeof words),
                     2);
    assert_true(fabs(d[0] - 0.10) < 1e-12);
    assert_true(fabs(d[1] + 0.05) < 1e-12);
    assert_true(isnan(d[2]));
    assert_true(d[3] == 0.0);
    assert_true(beyond[0] && beyond[1] && !beyond[2] && !beyond[3]);
    assert_non_null(strstr(words, "dependent arithmetic (a latency chain) 10.0% slower"));
    assert_non_null(strstr(words, "arithmetic throughput 5.0% faster"));
    assert_null(strstr(words, "L2"));
    assert_null(strstr(words, "memory"));
    /* a threshold above both: nothing changed, nothing said, the drift still measured */
    assert_int_equal(bench__canaries_drift(&now, &then, 0.2, d, beyond, words, sizeof words), 0);
    assert_string_equal(words, "");
    assert_true(fabs(d[0] - 0.10) < 1e-12 && !beyond[0]);
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

/*
 * The machine changed only where every process of one run read beyond every process of the
 * other. The L2 probe as read on a GPU host, seconds apart: some processes 16-17 ns/KiB, others
 * 24-28.
 */
static void test_a_drift_within_the_processes_spread_is_not_a_change(void **state)
{
    (void)state;
    const double tv[BENCH__NCANARIES] = {1.0, 1.0, 16.0, 100.0};
    const double ts[][BENCH__CANARY_PROCS] = {
        {1.0, 1.0, 1.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0, 1.0},
        {10.0, 10.5, 16.0, 16.5, 17.0}, {100.0, 100.0, 100.0, 100.0, 100.0}};
    /* the median 25 (+56%), but one process read 16.5, inside the save's 10-17: no change;
     * memory +0.5% with every process apart, under the 1% threshold: no change either */
    const double nv[BENCH__NCANARIES] = {1.0, 1.0, 25.0, 100.5};
    const double ns[][BENCH__CANARY_PROCS] = {
        {1.0, 1.0, 1.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0, 1.0},
        {24.0, 25.0, 26.0, 16.5, 27.0}, {100.5, 100.5, 100.5, 100.5, 100.5}};
    bench__canaries then = canaries(tv, 5, ts), now = canaries(nv, 5, ns);
    double d[BENCH__NCANARIES];
    bool beyond[BENCH__NCANARIES];
    char words[512];
    assert_int_equal(bench__canaries_drift(&now, &then, 0.01, d, beyond, words, sizeof words),
                     0);
    assert_true(fabs(d[2] - (25.0 / 16.0 - 1.0)) < 1e-12);
    assert_true(fabs(d[3] - 0.005) < 1e-12);
    assert_string_equal(words, "");
    /* every process of the comparison at 24 or more: the machine's, and said */
    now.samples[2][3] = 25.5;
    assert_int_equal(bench__canaries_drift(&now, &then, 0.01, d, beyond, words, sizeof words),
                     1);
    assert_true(beyond[2]);
    assert_string_equal(words, "reads of L2-sized data 56.2% slower");
    /* A value edited by hand keeps its readings' spread around it: 16 -> 2 gives [1.875,
     * 2.125], below the comparison's 24 and more. */
    then.v[2] = 2.0;
    assert_int_equal(bench__canaries_drift(&now, &then, 0.01, d, beyond, words, sizeof words),
                     1);
    assert_true(fabs(d[2] - 11.5) < 1e-12);
    /* a comparison faster than every process of the save: said faster */
    then.v[2] = 16.0;
    for (int i = 0; i < BENCH__CANARY_PROCS; i++)
        now.samples[2][i] = 5.0 + i;
    now.v[2] = 7.0;
    assert_int_equal(bench__canaries_drift(&now, &then, 0.01, d, beyond, words, sizeof words),
                     1);
    assert_string_equal(words, "reads of L2-sized data 56.2% faster");
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

/* BENCH_CANARY_QUICK, a testing aid: every step still runs (five processes, every probe), the
 * memory buffer is the floor whatever the cache, and the plan says why; unset, the plan is the
 * product's again. */
static void test_quick_keeps_every_step(void **state)
{
    (void)state;
    const size_t mib = (size_t)1 << 20;
    char why[192];
    assert_int_equal(setenv("BENCH_CANARY_QUICK", "0", 1), 0);
    assert_false(bench__canary_quick());
    assert_int_equal(setenv("BENCH_CANARY_QUICK", "1", 1), 0);
    assert_true(bench__canary_quick());
    assert_true(bench__canary_memory_plan(491520, "sysfs", why, sizeof why) == 64 * mib);
    assert_string_equal(why, "the 64 MiB floor, as BENCH_CANARY_QUICK asks (a testing aid)");
    bench__canaries c;
    assert_int_equal(bench__canaries_measure(&c, 64 * mib), 0);
    assert_int_equal(c.n, BENCH__CANARY_PROCS);
    for (int k = 0; k < BENCH__NCANARIES; k++)
        for (int i = 0; i < BENCH__CANARY_PROCS; i++)
            assert_true(isfinite(c.samples[k][i]) && c.samples[k][i] > 0);
    assert_int_equal(unsetenv("BENCH_CANARY_QUICK"), 0);
    assert_false(bench__canary_quick());
    assert_true(bench__canary_memory_plan(491520, "sysfs", why, sizeof why) == 1024 * mib);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_buffer_follows_the_cache),
        cmocka_unit_test(test_memory_plan_says_why),
        cmocka_unit_test(test_measure_gives_every_probe),
        cmocka_unit_test(test_quick_keeps_every_step),
        cmocka_unit_test(test_drift_in_words_and_as_one_number),
        cmocka_unit_test(test_a_drift_within_the_processes_spread_is_not_a_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
