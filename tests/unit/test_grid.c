/*
 * test_grid.c: argument grids (.args, bench.h): the combinations a grid expands into, in order,
 * worked out by hand; every malformed grid refused with a message naming what is wrong; and the
 * registry's ids and order for a grid, beside a parameter list.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "core/registry.h"

/* The grid's combinations as "a=1/b=x;a=1/b=y;...", or "ERROR: message". */
static const char *expand(const char *spec)
{
    static char out[8192];
    bench__arg *rows = NULL;
    size_t n = 0, naxes = 0;
    char msg[256] = "";
    int rc = bench__grid_expand(spec, &rows, &n, &naxes, msg, sizeof msg);
    if (rc) {
        assert_null(rows);
        assert_int_equal(rc, BENCH_EINVAL);
        snprintf(out, sizeof out, "ERROR: %s", msg);
        return out;
    }
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < naxes; j++)
            len += (size_t)snprintf(out + len, sizeof out - len, "%s%s=%s",
                                    j ? "/" : (i ? ";" : ""), rows[i * naxes + j].name,
                                    rows[i * naxes + j].value);
    free(rows);
    return out;
}

static void test_products_ranges_and_tuples(void **state)
{
    (void)state;
    assert_string_equal(expand("n=3"), "n=3");
    /* The first axis varies slowest. */
    assert_string_equal(expand("size=64,1024 load=0.5,0.75,0.9"),
                        "size=64/load=0.5;size=64/load=0.75;size=64/load=0.9;"
                        "size=1024/load=0.5;size=1024/load=0.75;size=1024/load=0.9");
    /* Geometric: 8, 32, 128, 512, then HI itself; linear: up to HI, never past it. */
    assert_string_equal(expand("n=8..1000*4"), "n=8;n=32;n=128;n=512;n=1000");
    assert_string_equal(expand("n=8..512*4"), "n=8;n=32;n=128;n=512");
    assert_string_equal(expand("n=0..10+4"), "n=0;n=4;n=8");
    assert_string_equal(expand("n=-2..2+2"), "n=-2;n=0;n=2");
    assert_string_equal(expand("n=5..5*2"), "n=5");
    /* Ranges and values mix in one list. */
    assert_string_equal(expand("n=1,4..16*4,x"), "n=1;n=4;n=16;n=x");
    /* Sets: explicit tuples, each set a product of its own. */
    assert_string_equal(expand("n=1 m=8 | n=2 m=64"), "n=1/m=8;n=2/m=64");
    assert_string_equal(expand("n=1 m=a,b|n=2 m=c"), "n=1/m=a;n=1/m=b;n=2/m=c");
    /* Spaces next to '=' and ',' are dropped; others separate axes. */
    assert_string_equal(expand("  mode = fast, safe \t k=1 "),
                        "mode=fast/k=1;mode=safe/k=1");
    /* Every value character: letters, digits, '_', '.', '+', '-'. */
    assert_string_equal(expand("v=A_z.0+-9"), "v=A_z.0+-9");
    /* Ranges near the ends of int64: no overflow past HI. */
    assert_string_equal(expand("n=9223372036854775806..9223372036854775807+5"),
                        "n=9223372036854775806");
    assert_string_equal(expand("n=4611686018427387904..9223372036854775807*2"),
                        "n=4611686018427387904;n=9223372036854775807");
}

static void test_malformed_grids_are_refused(void **state)
{
    (void)state;
    const struct {
        const char *spec, *says;
    } bad[] = {
        {"", "an empty set of axes"},
        {"n=1 |", "an empty set of axes"},
        {"n", "'n' is not NAME=VALUES"},
        {"=1", "'=1' is not NAME=VALUES"},
        {"9n=1", "'9n=1' is not NAME=VALUES"},
        {"n-x=1", "'n-x=1' is not NAME=VALUES"},
        {"n=", "axis 'n' has an empty value"},
        {"n=1,,2", "axis 'n' has an empty value"},
        {"n=a/b", "axis 'n': character '/' in a value"},
        {"n=1 n=2", "axis 'n' is named twice"},
        {"n=1 m=2 | m=3 n=4", "does not name the first set's axes in the same order"},
        {"n=1 | n=2 m=3", "does not name the first set's axes in the same order"},
        {"n=1..5", "range '1..5' is not LO..HI*M or LO..HI+S"},
        {"n=a..5+1", "range 'a..5+1' is not LO..HI*M"},
        {"n=1..5*x", "range '1..5*x' is not LO..HI*M"},
        {"n=5..1+1", "range '5..1+1' is empty or never ends"},
        {"n=0..8*2", "range '0..8*2' is empty or never ends"},
        {"n=1..8*1", "range '1..8*1' is empty or never ends"},
        {"n=1..8+0", "range '1..8+0' is empty or never ends"},
        {"n=0..2000+1", "axis 'n' has more than 1024 values"},
        {"a=1..1024*2 b=1..1024*2 c=1..1024*2", "the grid has more than 1024 combinations"},
        {"n=1 | n=1..1024+1", "the grid has more than 1024 combinations"},
        {"a=1 b=1 c=1 d=1 e=1 f=1 g=1 h=1 i=1", "more than 8 axes"},
        {"n=0123456789012345678901234567890123", "a value of axis 'n' is longer than 31"},
        {"n23456789012345678901234567890123=1", "is not NAME=VALUES"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *got = expand(bad[i].spec);
        if (strncmp(got, "ERROR: ", 7) != 0 || !strstr(got, bad[i].says))
            fail_msg("grid \"%s\": got \"%s\", wanted an error saying \"%s\"", bad[i].spec, got,
                     bad[i].says);
    }
}

static void body(bench_t *b)
{
    (void)b;
}

static void test_registry_ids_of_a_grid(void **state)
{
    (void)state;
    static const bench_desc grid = {.group = "g", .name = "map", .fn = body,
                                    .args = "size=1024,64 load=0.9,0.5"};
    static bench__node grid_node = {&grid, sizeof grid, 0, 0};
    bench__register(&grid_node);
    static const bench_desc plain = {.group = "g", .name = "a", .fn = body};
    static bench__node plain_node = {&plain, sizeof plain, 0, 0};
    bench__register(&plain_node);

    bench__instance *all = NULL;
    size_t n = 0;
    char msg[256] = "";
    assert_int_equal(bench__registry_list(&all, &n, msg, sizeof msg), 0);
    /* Sorted by group and name, then the grid's own order (not the ids' text order). */
    const char *want[] = {"g/a", "g/map/size=1024/load=0.9", "g/map/size=1024/load=0.5",
                          "g/map/size=64/load=0.9", "g/map/size=64/load=0.5"};
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(all[i].id, want[i]);
    assert_int_equal(all[0].nargs, 0);
    assert_int_equal(all[3].nargs, 2);
    assert_string_equal(bench__instance_arg(&all[3], "size"), "64");
    assert_string_equal(bench__instance_arg(&all[3], "load"), "0.9");
    assert_null(bench__instance_arg(&all[3], "nope"));
    assert_null(bench__instance_arg(&all[0], "size"));
    free(all);

    /* An axis named threads sets the thread count of each combination; cpus is the online CPUs. */
    static const bench_desc team = {.group = "g", .name = "team", .fn = body,
                                    .args = "threads=1,3,cpus"};
    static bench__node team_node = {&team, sizeof team, 0, 0};
    bench__register(&team_node);
    assert_int_equal(bench__registry_list(&all, &n, msg, sizeof msg), 0);
    assert_int_equal(n, 8);
    assert_string_equal(all[5].id, "g/team/threads=1");
    assert_int_equal(all[5].threads, 1);
    assert_int_equal(all[6].threads, 3);
    assert_string_equal(all[7].id, "g/team/threads=cpus");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    assert_int_equal(all[7].threads, cpus < 1 ? 1 : cpus);
    assert_int_equal(all[1].threads, 1); /* no threads anywhere: one */
    free(all);
}

/* Registers d (the newest registration is listed first, so its fault is the one reported) and
 * checks that listing fails saying `says`. */
static void refused_with(int rc, const bench_desc *d, bench__node *node, const char *says)
{
    node->desc = d;
    node->size = sizeof *d;
    bench__register(node);
    bench__instance *all = NULL;
    size_t n = 0;
    char msg[256] = "";
    assert_int_equal(bench__registry_list(&all, &n, msg, sizeof msg), rc);
    assert_null(all);
    assert_string_equal(msg, says);
}

static void refused(const bench_desc *d, bench__node *node, const char *says)
{
    refused_with(BENCH_EINVAL, d, node, says);
}

static void test_registry_refuses_a_bad_grid(void **state)
{
    (void)state;
    static const int64_t params[] = {1};
    static const bench_desc both = {.group = "h", .name = "both", .fn = body, .file = "x.c",
                                    .line = 7, .params = params, .nparams = 1, .args = "n=1"};
    static bench__node nodes[8];
    /* First (the faults below stop the listing before ids are compared): a combination listed
     * twice, which the grid's order does not put side by side. */
    static const bench_desc dup = {.group = "h", .name = "dup", .fn = body, .file = "x.c",
                                   .line = 12, .args = "a=1 b=x,y | a=2 b=x | a=1 b=y"};
    refused_with(BENCH_EDUP, &dup, &nodes[5],
                 "benchmark id 'h/dup/a=1/b=y' is listed twice by x.c:12's .args");
    refused(&both, &nodes[0], "benchmark 'h/both' (x.c:7) has both .params and .args");
    static const bench_desc zero = {.group = "h", .name = "zero", .fn = body, .file = "x.c",
                                    .line = 8, .args = "threads=2,0"};
    refused(&zero, &nodes[1], "benchmark 'h/zero' (x.c:8): .args: axis 'threads' takes thread "
                              "counts (1 or more) or 'cpus', not '0'");
    static const bench_desc many = {.group = "h", .name = "many", .fn = body, .file = "x.c",
                                    .line = 9, .args = "threads=4,lots"};
    refused(&many, &nodes[2], "benchmark 'h/many' (x.c:9): .args: axis 'threads' takes thread "
                              "counts (1 or more) or 'cpus', not 'lots'");
    static const bench_desc twice = {.group = "h", .name = "twice", .fn = body, .file = "x.c",
                                     .line = 10, .threads = 2, .args = "threads=4"};
    refused(&twice, &nodes[3], "benchmark 'h/twice' (x.c:10) has both .threads and an axis "
                               "'threads'");
    static const bench_desc minus = {.group = "h", .name = "minus", .fn = body, .file = "x.c",
                                     .line = 11, .threads = -7};
    refused(&minus, &nodes[4], "benchmark 'h/minus' (x.c:11): .threads is -7 (a count, or "
                               "BENCH_THREADS_CPUS)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_products_ranges_and_tuples),
        cmocka_unit_test(test_malformed_grids_are_refused),
        cmocka_unit_test(test_registry_ids_of_a_grid),
        cmocka_unit_test(test_registry_refuses_a_bad_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
