/*
 * test_layout.c: layout randomisation of worker processes (layout.c): the offsets drawn, their
 * way through the environment to the worker, and that running under a layout really moves the
 * benchmark's stack frame and heap blocks by the drawn offsets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure/layout.h"

/* Each offset a multiple of 16 below 4096, and the draws spread over the whole page. */
static void test_draws(void **state)
{
    (void)state;
    bench__rng r;
    bench__rng_seed(&r, 5);
    unsigned lo = BENCH__LAYOUT_SPAN, hi = 0;
    for (int i = 0; i < 2000; i++) {
        bench__layout l;
        bench__layout_draw(&r, &l);
        assert_true(l.random);
        unsigned v[3] = {l.stack, l.heap, l.env};
        for (int k = 0; k < 3; k++) {
            assert_int_equal(v[k] % BENCH__LAYOUT_STEP, 0);
            assert_true(v[k] < BENCH__LAYOUT_SPAN);
            lo = v[k] < lo ? v[k] : lo;
            hi = v[k] > hi ? v[k] : hi;
        }
    }
    assert_true(lo < 64 && hi > BENCH__LAYOUT_SPAN - 64);
}

/* What the manager exports, the worker takes, and removes from its environment. */
static void test_round_trip(void **state)
{
    (void)state;
    bench__layout out = {.random = true, .stack = 48, .heap = 4080, .env = 1024}, in;
    bench__layout_export(&out);
    assert_int_equal(strlen(getenv("BENCH_WORKER_PAD")), 1024);
    assert_int_equal(bench__layout_take(&in), 0);
    assert_true(in.random);
    assert_int_equal(in.stack, 48);
    assert_int_equal(in.heap, 4080);
    assert_int_equal(in.env, 1024);
    assert_null(getenv("BENCH_WORKER_LAYOUT"));
    assert_null(getenv("BENCH_WORKER_PAD"));
    /* Nothing exported: not random. A fixed layout exports nothing. */
    assert_int_equal(bench__layout_take(&in), 0);
    assert_false(in.random);
    bench__layout fixed = {0};
    bench__layout_export(&fixed);
    assert_null(getenv("BENCH_WORKER_LAYOUT"));
    /* Malformed: refused, and not random. */
    setenv("BENCH_WORKER_LAYOUT", "16 32", 1);
    assert_int_equal(bench__layout_take(&in), -1);
    assert_false(in.random);
    setenv("BENCH_WORKER_LAYOUT", "16 32 99999", 1);
    assert_int_equal(bench__layout_take(&in), -1);
}

static uintptr_t frame_at, heap_at;

static void probe(void *arg)
{
    (void)arg;
    volatile char local = 0;
    frame_at = (uintptr_t)&local;
    void *p = malloc(24);
    heap_at = (uintptr_t)p;
    free(p);
}

/* Where the probe's frame and first block land under layout l, in a child forked from this
 * process, so that every layout starts from the same heap. */
static void run_in_child(const bench__layout *l, uintptr_t at[2])
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        bench__layout_run(l, probe, NULL);
        uintptr_t v[2] = {frame_at, heap_at};
        _exit(write(fd[1], v, sizeof v) == (ssize_t)sizeof v ? 0 : 1);
    }
    close(fd[1]);
    assert_int_equal(read(fd[0], at, 2 * sizeof at[0]), (ssize_t)(2 * sizeof at[0]));
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The benchmark's frame lies lower by the stack offsets' difference, and its first small block
 * later by the heap offsets' difference (glibc serves both pads and block from the top of the
 * heap, one after the other). AddressSanitizer's allocator serves blocks from size classes of
 * its own, so under it only the stack is checked. */
static void test_run_moves_stack_and_heap(void **state)
{
    (void)state;
    bench__layout a = {.random = true, .stack = 0, .heap = 16}, b = a;
    b.stack = 1024;
    b.heap = 16 + 2048;
    uintptr_t x[2], y[2];
    run_in_child(&a, x);
    run_in_child(&b, y);
    assert_int_equal(x[0] - y[0], 1024);
#if !defined(__SANITIZE_ADDRESS__)
    assert_int_equal(y[1] - x[1], 2048);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_draws),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_run_moves_stack_and_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
