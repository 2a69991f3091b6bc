/*
 * test_registry.c: the registry and the descriptors' ABI (bench.h). A descriptor compiled with an
 * older header is smaller than this library's: its node says so, and the fields it lacks must
 * read as zero ("not set"), whatever lies in memory after it. One of this library's size is read
 * in place; the descriptors are never written.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/registry.h"

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
                                   .params = params, .nparams = 2};
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_older_descriptors_read_as_unset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
