/*
 * test_black_box.c: proof, at -O3, that bench_black_box keeps work the compiler would delete.
 *
 * The work reads a page that is mapped PROT_NONE: if the loads really happen, the process dies
 * of SIGSEGV. A child process runs each case. Without the black box the compiler deletes the
 * unused sum and the child survives: that control shows the test can tell the difference.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <harness/bench.h>

static const int *guarded;
enum { N = 1024 };

__attribute__((noinline)) static void sum_kept(const int *a)
{
    int s = 0;
    for (int i = 0; i < N; i++)
        s += a[i];
    bench_black_box(s);
}

__attribute__((noinline)) static void sum_dropped(const int *a)
{
    int s = 0;
    for (int i = 0; i < N; i++)
        s += a[i];
    (void)s; /* unused: -O3 deletes the loop and its loads */
}

/* Runs fn(guarded) in a child; returns the signal that killed it, or 0 if it exited. */
static int run_child(void (*fn)(const int *))
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        fn(guarded);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static void test_black_box_keeps_the_loads(void **state)
{
    (void)state;
    assert_int_equal(run_child(sum_kept), SIGSEGV);
}

static void test_control_without_black_box_is_deleted(void **state)
{
    (void)state;
    assert_int_equal(run_child(sum_dropped), 0);
}

static void test_black_box_returns_its_value(void **state)
{
    (void)state;
    struct big {
        char c[40];
    } s, t;
    memset(&s, 7, sizeof s);
    t = bench_black_box(s);
    assert_memory_equal(&s, &t, sizeof s);
    assert_true(bench_black_box(2.5) == 2.5);
    assert_true(bench_black_box(1.25f) == 1.25f);
    assert_int_equal(bench_black_box(-3), -3);
    int x = 5;
    assert_ptr_equal(bench_black_box(&x), &x);
}

int main(void)
{
    void *p = mmap(NULL, (size_t)getpagesize() * 2, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                   0);
    if (p == MAP_FAILED)
        return 1;
    guarded = p;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_black_box_keeps_the_loads),
        cmocka_unit_test(test_control_without_black_box_is_deleted),
        cmocka_unit_test(test_black_box_returns_its_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
