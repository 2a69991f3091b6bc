/*
 * test_registry.c: the registry and the descriptors' ABI (bench.h). A descriptor compiled with an
 * older header is smaller than this library's: its node says so, and the fields it lacks must
 * read as zero ("not set"), whatever lies in memory after it. One of this library's size is read
 * in place; the descriptors are never written. A descriptor's .threads is resolved into its
 * instances (the online CPUs for BENCH_THREADS_CPUS), and a threaded result's per-thread metrics
 * make its summary (spread, total iterations per second).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/registry.h"
#include "core/result.h"

static void body(bench_t *b)
{
    (void)b;
}

static const int64_t params[] = {1, 2};

/* Bytes as a program built before `params` (and everything after it) existed would pass them:
 * its descriptor ends where `params` starts; what follows is someone else's memory. */
static unsigned char old_bytes[sizeof(bench_desc)];
static unsigned char old_group_bytes[sizeof(bench_group_desc)];

static void test_older_descriptors_read_as_unset(void **state)
{
    (void)state;
    bench_desc full = {.group = "abi", .name = "old", .fn = body, .sample_size = 7,
                       .params = params, .nparams = 2, .cuda_cold = 1, .kind = 1};
    memset(old_bytes, 0xff, sizeof old_bytes);
    memcpy(old_bytes, &full, offsetof(bench_desc, params));
    static bench__node old = {old_bytes, offsetof(bench_desc, params), 0, 0};
    bench__register(&old);

    bench_group_desc group = {.name = "abi", .sample_size = 9, .rounds = 4};
    memset(old_group_bytes, 0xff, sizeof old_group_bytes);
    memcpy(old_group_bytes, &group, offsetof(bench_group_desc, rounds));
    static bench__node old_group = {old_group_bytes, offsetof(bench_group_desc, rounds), 0, 0};
    bench__register_group(&old_group);

    static const bench_desc now = {.group = "abi", .name = "now", .fn = body,
                                   .params = params, .nparams = 2, .threads = 4};
    static bench__node now_node = {&now, sizeof now, 0, 0};
    bench__register(&now_node);

    bench__instance *all = NULL;
    size_t n = 0;
    char msg[256] = "";
    assert_int_equal(bench__registry_list(&all, &n, msg, sizeof msg), 0);
    /* abi/now/1, abi/now/2 and abi/old: the old one has no parameters, its params lost */
    assert_int_equal(n, 3);
    assert_string_equal(all[2].id, "abi/old");
    const bench_desc *d = all[2].desc;
    assert_ptr_not_equal(d, (const void *)old_bytes); /* a zeroed copy, not the bytes after it */
    assert_int_equal(d->sample_size, 7);
    assert_true(d->fn == body);
    assert_null(d->params);
    assert_int_equal(d->nparams, 0);
    assert_int_equal(d->cuda_cold, 0);
    assert_int_equal(d->kind, 0);
    assert_int_equal(d->threads, 0);
    assert_int_equal(all[2].threads, 1); /* no .threads in the old header: one thread */
    assert_int_equal(all[0].threads, 4);
    assert_non_null(all[2].group);
    assert_int_equal(all[2].group->sample_size, 9);
    assert_int_equal(all[2].group->rounds, 0); /* not in the old group's header: not set */
    /* one of this library's size is read where it is */
    assert_string_equal(all[0].id, "abi/now/1");
    assert_ptr_equal(all[0].desc, &now);
    assert_int_equal(all[1].param, 2);
    /* nothing was written into the program's descriptors */
    assert_int_equal(old_bytes[offsetof(bench_desc, params)], 0xff);
    assert_int_equal(old_group_bytes[sizeof old_group_bytes - 1], 0xff);
    free(all);
}

static void test_threads_resolve(void **state)
{
    (void)state;
    assert_int_equal(bench__threads_resolve(0, 8), 1);
    assert_int_equal(bench__threads_resolve(1, 8), 1);
    assert_int_equal(bench__threads_resolve(-7, 8), 1);
    assert_int_equal(bench__threads_resolve(4, 8), 4);
    assert_int_equal(bench__threads_resolve(2000, 8), 2000); /* the runner fails it, saying so */
    assert_int_equal(bench__threads_resolve(BENCH_THREADS_CPUS, 8), 8);
    assert_int_equal(bench__threads_resolve(BENCH_THREADS_CPUS, -1), 1); /* unknown */
    assert_int_equal(bench__threads_resolve(BENCH_THREADS_CPUS, 5000), BENCH_MAX_THREADS);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    assert_int_equal(bench__threads_resolve(BENCH_THREADS_CPUS, cpus), cpus < 1 ? 1 : cpus);
}

/* A result on `threads` threads whose per-thread medians are given (ns per iteration). */
static void threaded(bench__result *r, unsigned threads, const double *med, size_t nmed,
                     double fastest, double time)
{
    memset(r, 0, sizeof *r);
    r->settings.sample_size = 1;
    r->threads = threads;
    for (size_t i = 0; i < nmed; i++) {
        char name[32];
        snprintf(name, sizeof name, "thread_%zu", i);
        int m = bench__metric_add(r, name, "ns", "threads");
        assert_true(m >= 0);
        r->metrics[m].est.median.point = med[i];
    }
    int f = bench__metric_add(r, "fastest_thread", "ns", "threads");
    assert_true(f >= 0);
    r->metrics[f].est.median.point = fastest;
    r->est.median.point = time;
}

static void test_threads_summary(void **state)
{
    (void)state;
    bench__result r;
    bench__threads_summary s;
    const double four[] = {10, 8, 9, 10};
    threaded(&r, 4, four, 4, 7.5, 12);
    assert_int_equal(bench__threads_summary_of(&r, &s), 1);
    assert_int_equal(s.count, 4);
    assert_int_equal(s.nper, 4);
    assert_true(s.per_thread[1] == 8);
    assert_true(s.slowest_ns == 10 && s.fastest_ns == 8); /* fastest_thread is not a thread */
    assert_true(fabs(s.spread - 0.2) < 1e-12);
    assert_true(fabs(s.total_ips - 4 * 1e9 / 12) < 1e-3); /* all threads over the slowest's time */
    bench__result_destroy(&r);

    /* Beyond BENCH__THREAD_METRICS threads, the fastest of the others is fastest_thread's. */
    double many[BENCH__THREAD_METRICS];
    for (size_t i = 0; i < BENCH__THREAD_METRICS; i++)
        many[i] = 20;
    threaded(&r, 64, many, BENCH__THREAD_METRICS, 5, 25);
    assert_int_equal(bench__threads_summary_of(&r, &s), 1);
    assert_int_equal(s.nper, BENCH__THREAD_METRICS);
    assert_true(s.fastest_ns == 5 && fabs(s.spread - 0.75) < 1e-12);
    bench__result_destroy(&r);

    /* One thread, a failed result or missing metrics: no summary. */
    threaded(&r, 1, four, 1, 10, 10);
    assert_int_equal(bench__threads_summary_of(&r, &s), 0);
    bench__result_destroy(&r);
    threaded(&r, 4, four, 3, 10, 10);
    assert_int_equal(bench__threads_summary_of(&r, &s), 0);
    r.status = BENCH__FAILED;
    assert_int_equal(bench__threads_summary_of(&r, &s), 0);
    bench__result_destroy(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_older_descriptors_read_as_unset),
        cmocka_unit_test(test_threads_resolve),
        cmocka_unit_test(test_threads_summary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
