/*
 * test_ab_calibrate.c: the iteration count of a paired comparison's samples
 * (bench__ab_worker_calibrate), against a scripted worker: a shell script that speaks the driven
 * worker protocol ("R n" on its stdin, "T ns" on descriptor 3) and answers each sample with a
 * time it computes, 100 ns an iteration, plus what a test adds. With a sample time of 0.5 ms the
 * right count is 500000 / 100 = 5000 whatever the script adds: another process's time slice only
 * ever lengthens a sample, and the count must not follow it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "run/ab.h"
#include "sys/proc.h"

#define SAMPLE_NS 500000.0
#define RIGHT_COUNT 5000 /* SAMPLE_NS / 100 ns */

/* The worker: `same` counts the samples at one count before this one. STRETCH_FROM (a count) and
 * STRETCH_SAME (a shell test on $same) pick the samples stretched by 3 ms. */
static const char script[] =
    "prev=0; same=0\n"
    "while read -r cmd n; do\n"
    "  [ \"$cmd\" = R ] || exit 0\n"
    "  if [ \"$n\" = \"$prev\" ]; then same=$((same + 1)); else same=0; fi\n"
    "  prev=$n\n"
    "  t=$((n * 100))\n"
    "  if [ \"$n\" -ge \"$STRETCH_FROM\" ] && eval \"[ $STRETCH_SAME ]\"; then t=$((t + 3000000)); fi\n"
    "  echo \"T $t\" >&3\n"
    "done\n";

/* Calibrates against the script with the stretch given (the body of a shell test) and returns
 * the count it chose. */
static uint64_t calibrate_with(const char *from, const char *same)
{
    char prog[1024];
    snprintf(prog, sizeof prog, "STRETCH_FROM=%s; STRETCH_SAME='%s'\n%s", from, same, script);
    char *const argv[] = {"sh", "-c", prog, NULL};
    bench__proc_spec spec = {.path = "/bin/sh", .argv = argv, .channel = BENCH__PROC_FD3,
                             .commands = true};
    bench__proc w;
    memset(&w, 0, sizeof w);
    char msg[256];
    assert_int_equal(bench__proc_start(&w, &spec, msg, sizeof msg), 0);
    uint64_t iters = 0;
    assert_int_equal(bench__ab_worker_calibrate(&w, SAMPLE_NS, 30, &iters), 0);
    bench__ab_worker_stop(&w, 30);
    return iters;
}

/* No sample stretched: the count is the sample time over the time an iteration. */
static void test_steady_worker(void **state)
{
    (void)state;
    assert_int_equal(calibrate_with("1", "1 = 0"), RIGHT_COUNT);
}

/* Every sample at a count of 1024 or more but the first at that count is 3 ms longer: the
 * doubling stops at 1024 (102.4 us, past an eighth of the sample time), and the sample that ends
 * it is a stretched one. Sized from that sample alone, 3.1 ms for 1024 iterations, the count
 * stayed 1024 (samples of 102 us for 500 us). The shortest sample at a count sizes it, and the
 * check of the count 5000 takes the shortest of its samples too. */
static void test_stretched_samples_do_not_size_the_count(void **state)
{
    (void)state;
    assert_int_equal(calibrate_with("1024", "$same -ge 1"), RIGHT_COUNT);
}

/* The first sample at each count is the stretched one: the same answer. */
static void test_first_sample_stretched(void **state)
{
    (void)state;
    assert_int_equal(calibrate_with("1024", "$same = 0"), RIGHT_COUNT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steady_worker),
        cmocka_unit_test(test_stretched_samples_do_not_size_the_count),
        cmocka_unit_test(test_first_sample_stretched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
