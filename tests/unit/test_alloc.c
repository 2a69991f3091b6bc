/*
 * test_alloc.c: the allocation-statistics probe (alloc.c) and its preload library
 * (libharness_alloc.so, alloc_shim.c) driven directly, as the runner drives them: attach to a
 * result, start, allocate, stop, detach. Every count must be exact: each function of the malloc
 * family, realloc's special cases, failures that must count nothing, and the peak of live heap.
 * ctest runs it twice: with the shim in LD_PRELOAD (unit/alloc; in a sanitizer build also with
 * ASan's link-order check off, as bench --alloc-stats does), and without (unit/alloc_noshim,
 * ALLOC_TEST_NO_SHIM=1), where the probe must say the shim is not loaded.
 *
 * The calls go through volatile function pointers so that the compiler cannot remove a
 * malloc/free pair or turn one call into another.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/internal.h"
#include "probes/alloc.h"
#include "unit_helpers.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static void *(*volatile p_malloc)(size_t) = malloc;
static void (*volatile p_free)(void *) = free;
static void *(*volatile p_calloc)(size_t, size_t) = calloc;
static void *(*volatile p_realloc)(void *, size_t) = realloc;
static int (*volatile p_posix_memalign)(void **, size_t, size_t) = posix_memalign;
static void *(*volatile p_aligned_alloc)(size_t, size_t) = aligned_alloc;
static void *(*volatile p_memalign)(size_t, size_t) = memalign;
static void *(*volatile p_valloc)(size_t) = valloc;
static char *(*volatile p_strdup)(const char *) = strdup;

/* A probe attached to a fresh result, as the runner does before a body. */
typedef struct fixture {
    bench__probe *probe;
    bench__result r;
    double values[2]; /* allocations, bytes of the last sample */
    bool attached;
} fixture;

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    char msg[256];
    if (bench__alloc_probe_create(&f.probe, msg, sizeof msg) != 0)
        return -1;
    f.r.settings.sample_size = 4;
    if (f.probe->attach(f.probe, &f.r) != 0)
        return -1;
    f.attached = true;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f->attached)
        f->probe->detach(f->probe, &f->r);
    if (f->probe->destroy)
        f->probe->destroy(f->probe);
    bench__result_destroy(&f->r);
    return 0;
}

static void start(fixture *f)
{
    f->probe->start(f->probe);
}

/* Stops the sample; asserts its allocations and bytes. */
static void stop_expect(fixture *f, double allocs, double bytes)
{
    double fraction = 0;
    f->probe->stop(f->probe, f->values, &fraction);
    assert_true(fraction == 1.0);
    assert_true(f->values[0] == allocs);
    assert_true(f->values[1] == bytes);
}

static void test_registers_two_metrics(void **state)
{
    fixture *f = *state;
    assert_int_equal(f->r.nmetrics, 2);
    assert_string_equal(f->r.metrics[0].name, "allocations");
    assert_string_equal(f->r.metrics[0].unit, "allocs");
    assert_string_equal(f->r.metrics[1].name, "allocated_bytes");
    assert_string_equal(f->r.metrics[1].unit, "B");
    assert_string_equal(f->r.metrics[0].source, "alloc");
}

static void test_malloc_and_free(void **state)
{
    fixture *f = *state;
    start(f);
    void *a = p_malloc(100), *b = p_malloc(200), *c = p_malloc(4000);
    p_free(a);
    p_free(b);
    p_free(c);
    p_free(NULL); /* counts nothing */
    stop_expect(f, 3, 4300);
    start(f);
    stop_expect(f, 0, 0); /* an empty sample */
}

static void test_malloc_zero(void **state)
{
    fixture *f = *state;
    start(f);
    void *p = p_malloc(0); /* glibc returns a unique block: an allocation of 0 bytes */
    stop_expect(f, p ? 1 : 0, 0);
    p_free(p);
}

static void test_calloc_zeroes(void **state)
{
    fixture *f = *state;
    start(f);
    void *p = p_calloc(10, 12);
    stop_expect(f, 1, 120);
    for (size_t i = 0; i < 120; i++)
        assert_int_equal(((unsigned char *)p)[i], 0);
    p_free(p);
}

static void test_calloc_overflow_counts_nothing(void **state)
{
    fixture *f = *state;
    start(f);
    errno = 0;
    void *p = p_calloc(SIZE_MAX / 2, 4);
    int e = errno;
    stop_expect(f, 0, 0);
    assert_null(p);
    assert_int_equal(e, ENOMEM);
}

static void test_failed_malloc_counts_nothing(void **state)
{
    fixture *f = *state;
    start(f);
    void *p = p_malloc(SIZE_MAX - 4096);
    stop_expect(f, 0, 0);
    assert_null(p);
}

static void test_realloc_cases(void **state)
{
    fixture *f = *state;
    start(f);
    void *p = p_realloc(NULL, 100); /* malloc */
    assert_non_null(p);
    memset(p, 7, 100);
    p = p_realloc(p, 5000); /* grows, may move */
    assert_non_null(p);
    assert_int_equal(((unsigned char *)p)[99], 7);
    void *q = p_realloc(p, 0); /* frees */
    stop_expect(f, 2, 5100);
    assert_null(q);
}

static void test_failed_realloc_keeps_the_block(void **state)
{
    fixture *f = *state;
    void *p = p_malloc(64);
    start(f);
    void *q = p_realloc(p, SIZE_MAX - 4096);
    stop_expect(f, 0, 0);
    assert_null(q);
    p_free(p);
}

static void test_aligned_family(void **state)
{
    fixture *f = *state;
    void *a = NULL;
    start(f);
    assert_int_equal(p_posix_memalign(&a, 64, 1000), 0);
    void *b = p_aligned_alloc(128, 256);
    void *c = p_memalign(32, 10);
    void *d = p_valloc(50);
    stop_expect(f, 4, 1316);
    assert_int_equal((uintptr_t)a % 64, 0);
    assert_int_equal((uintptr_t)b % 128, 0);
    assert_int_equal((uintptr_t)c % 32, 0);
    assert_int_equal((uintptr_t)d % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
    p_free(a);
    p_free(b);
    p_free(c);
    p_free(d);
}

static void test_posix_memalign_bad_alignment(void **state)
{
    fixture *f = *state;
    void *a = (void *)&a;
    start(f);
    assert_int_equal(p_posix_memalign(&a, 24, 100), EINVAL); /* not a power of two */
    assert_int_equal(p_posix_memalign(&a, 2, 100), EINVAL);  /* below sizeof(void *) */
    stop_expect(f, 0, 0);
    assert_true(a == (void *)&a); /* untouched on failure */
}

static void test_libc_internal_allocation_counts(void **state)
{
    fixture *f = *state;
    if (SANITIZED)
        skip(); /* AddressSanitizer's own strdup allocates without calling malloc */
    start(f);
    char *s = p_strdup("hello"); /* strdup's malloc is called inside libc */
    stop_expect(f, 1, 6);
    assert_string_equal(s, "hello");
    p_free(s);
}

static void test_peak_heap_fact(void **state)
{
    fixture *f = *state;
    /* Live above the level at attach: 100 + 200 + 4000 at most at once, then all freed. */
    void *a = p_malloc(100), *b = p_malloc(200), *c = p_malloc(4000);
    p_free(a);
    p_free(b);
    p_free(c);
    void *d = p_malloc(1000);
    p_free(d);
    f->probe->detach(f->probe, &f->r);
    f->attached = false;
    const bench__fact *peak = bench__fact_find(&f->r, "peak_heap_bytes");
    assert_non_null(peak);
    assert_string_equal(peak->unit, "B");
    assert_true(peak->value >= 4300);
    assert_true(peak->value < 4300 + 3 * 64);
    assert_non_null(bench__fact_find(&f->r, "minor_faults"));
    assert_non_null(bench__fact_find(&f->r, "major_faults"));
    const bench__fact *rss = bench__fact_find(&f->r, "max_rss_bytes");
    if (rss)
        assert_true(rss->value > 0);
}

static void test_nothing_counted_after_detach(void **state)
{
    fixture *f = *state;
    f->probe->detach(f->probe, &f->r);
    f->attached = false;
    start(f);
    void *p = p_malloc(100);
    p_free(p);
    stop_expect(f, 0, 0);
}

static void test_unavailable_without_the_shim(void **state)
{
    (void)state;
    bench__probe *p = (bench__probe *)1;
    char msg[256] = "";
    assert_int_equal(bench__alloc_probe_create(&p, msg, sizeof msg), BENCH_EUNAVAIL);
    assert_null(p);
    assert_non_null(strstr(msg, "libharness_alloc.so is not loaded"));
}

int main(void)
{
    if (getenv("ALLOC_TEST_NO_SHIM")) {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_unavailable_without_the_shim),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_registers_two_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malloc_and_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malloc_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calloc_zeroes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calloc_overflow_counts_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_malloc_counts_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_realloc_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_realloc_keeps_the_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_aligned_family, setup, teardown),
        cmocka_unit_test_setup_teardown(test_posix_memalign_bad_alignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_libc_internal_allocation_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peak_heap_fact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_counted_after_detach, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
