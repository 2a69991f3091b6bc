/*
 * test_user_build.c: the builds of the benchmark files (user_build.c). Benchmarks group by file,
 * compiler and flags in id order, only the selected ones count, descriptors made without BENCH_FN
 * are left out, and the warning names each unoptimised file once (three at most, then a count).
 * Also that this file's own BENCH_FN records this file's optimisation level: the test is built
 * twice, at -O0 and at -O2 (tests/unit/CMakeLists.txt), and told which.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sys/user_build.h"

#define OPT (BENCH_BUILD_RECORDED | BENCH_BUILD_OPTIMIZE)
#define NOOPT (BENCH_BUILD_RECORDED | BENCH_BUILD_NO_INLINE)

static bench_desc desc(const char *file, const char *compiler, unsigned flags)
{
    bench_desc d;
    memset(&d, 0, sizeof d);
    d.group = "g";
    d.name = "n";
    d.file = file;
    d.build_compiler = compiler;
    d.build_flags = flags;
    return d;
}

static void test_grouping_and_selection(void **state)
{
    (void)state;
    bench_desc d[5] = {desc("a.c", "gcc 12", OPT), desc("b.c", "gcc 12", NOOPT),
                       desc("a.c", "gcc 12", OPT), desc("a.c", "gcc 12", NOOPT),
                       desc("c.c", "gcc 12", 0)};
    bench__instance in[6];
    memset(in, 0, sizeof in);
    const char *ids[6] = {"g/1", "g/2", "g/3", "g/4", "g/5", "g/6"};
    const int which[6] = {0, 1, 2, 3, 4, 1};
    for (int i = 0; i < 6; i++) {
        in[i].desc = &d[which[i]];
        strcpy(in[i].id, ids[i]);
    }
    bool selected[6] = {true, true, true, true, true, false};
    bench__user_builds b;
    assert_int_equal(bench__user_builds_init(&b, in, selected, 6), 0);
    /* a.c optimised (g/1, g/3), b.c (g/2), a.c unoptimised (g/4); c.c unrecorded; g/6 not
     * selected */
    assert_int_equal(b.n, 3);
    assert_string_equal(b.v[0].file, "a.c");
    assert_int_equal(b.v[0].nids, 2);
    assert_string_equal(b.v[0].ids[0], "g/1");
    assert_string_equal(b.v[0].ids[1], "g/3");
    assert_string_equal(b.v[1].file, "b.c");
    assert_int_equal(b.v[1].nids, 1);
    assert_true(bench__user_build_unoptimised(&b.v[1]));
    assert_false(bench__user_build_unoptimised(&b.v[0]));
    assert_string_equal(b.v[2].ids[0], "g/4");
    char w[256];
    assert_non_null(bench__user_builds_warning(&b, w, sizeof w));
    assert_string_equal(w, "benchmarks in b.c, a.c were compiled without optimisation (-O0): "
                           "timings do not represent an optimised build; fix: compile with -O2");
    bench__user_builds_destroy(&b);
    bench__user_builds_destroy(&b); /* destroyed twice: harmless */

    /* nothing unoptimised among the selected: no warning */
    bool only_first[6] = {true, false, true, false, false, false};
    assert_int_equal(bench__user_builds_init(&b, in, only_first, 6), 0);
    assert_int_equal(b.n, 1);
    assert_null(bench__user_builds_warning(&b, w, sizeof w));
    assert_string_equal(w, "");
    bench__user_builds_destroy(&b);
    assert_null(bench__user_builds_warning(NULL, w, sizeof w));
}

static void test_many_files_and_escaping(void **state)
{
    (void)state;
    bench_desc d[5] = {desc("one.c", "cc", NOOPT), desc("two.c", "cc", NOOPT),
                       desc("three.c", "cc", NOOPT), desc("four\x1b[31m.c", "cc", NOOPT),
                       desc("five.c", "cc", NOOPT)};
    bench__instance in[5];
    memset(in, 0, sizeof in);
    for (int i = 0; i < 5; i++) {
        in[i].desc = &d[i];
        strcpy(in[i].id, "g/x");
    }
    bench__user_builds b;
    assert_int_equal(bench__user_builds_init(&b, in, NULL, 5), 0);
    char w[256];
    assert_non_null(bench__user_builds_warning(&b, w, sizeof w));
    assert_non_null(strstr(w, "benchmarks in one.c, two.c, three.c and 2 more files were"));
    bench__user_builds_destroy(&b);

    assert_int_equal(bench__user_builds_init(&b, &in[3], NULL, 1), 0);
    assert_non_null(bench__user_builds_warning(&b, w, sizeof w));
    assert_null(strchr(w, '\x1b'));
    assert_non_null(strstr(w, "four\\x1b[31m.c"));
    bench__user_builds_destroy(&b);
}

BENCH_FN(self, recorded) {}

/* The BENCH_FN above, in this translation unit, recorded this file's own build. */
static void test_bench_fn_records_this_file(void **state)
{
    (void)state;
    bench__instance *all = NULL;
    size_t n = 0;
    char msg[256];
    assert_int_equal(bench__registry_list(&all, &n, msg, sizeof msg), 0);
    assert_int_equal(n, 1);
    const bench_desc *d = all[0].desc;
    assert_true(d->build_flags & BENCH_BUILD_RECORDED);
    assert_non_null(d->build_compiler);
    assert_true(strncmp(d->build_compiler, "gcc ", 4) == 0 ||
                strncmp(d->build_compiler, "clang ", 6) == 0);
#if TEST_OPT_LEVEL == 0
    assert_false(d->build_flags & BENCH_BUILD_OPTIMIZE);
    assert_true(d->build_flags & BENCH_BUILD_NO_INLINE);
#else
    assert_true(d->build_flags & BENCH_BUILD_OPTIMIZE);
    assert_false(d->build_flags & BENCH_BUILD_NO_INLINE);
#endif
    free(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grouping_and_selection),
        cmocka_unit_test(test_many_files_and_escaping),
        cmocka_unit_test(test_bench_fn_records_this_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
