/*
 * test_explain.c: the noise that decides which functions --explain names (explain_perf.c): a
 * function's change between two profiles and its standard deviation, against values worked out
 * by hand from the binomial sd of a share, the spread of the worker pairs' changes and the
 * uncertainty of the verdict's ratio; and the machine's samples (the kernel's interrupts and
 * context switches) left out of the shares, on tables folded from stacks as perf recorded them
 * on a loaded 2-vCPU machine.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run/explain.h"
#include "run/explain_int.h"

static void test_binomial_noise_of_one_pair(void **state)
{
    (void)state;
    /* A: 500 of 1000 samples at 100 ns per iteration; B: 600 of 1000 at 120 ns.
     * d = 120 * 0.6 - 100 * 0.5 = 22 ns; var = 100^2 * 0.25 / 1000 + 120^2 * 0.24 / 1000
     * = 2.5 + 3.456. */
    double a[] = {500}, b[] = {600}, na[] = {1000}, nb[] = {1000}, d;
    double sd = bench__explain_diff_sd(a, b, na, nb, 1, 100, 120, 0, &d);
    assert_true(fabs(d - 22.0) < 1e-9);
    assert_true(fabs(sd - sqrt(5.956)) < 1e-9);
}

static void test_ratio_uncertainty_adds(void **state)
{
    (void)state;
    /* The same, with ln(tb / ta) known to 1%: + (120 * 0.6 * 0.01)^2 = 0.5184. */
    double a[] = {500}, b[] = {600}, na[] = {1000}, nb[] = {1000}, d;
    double sd = bench__explain_diff_sd(a, b, na, nb, 1, 100, 120, 0.01, &d);
    assert_true(fabs(sd - sqrt(5.956 + 0.5184)) < 1e-9);
}

static void test_spread_of_pairs_wins_when_larger(void **state)
{
    (void)state;
    /* Three pairs, A's share 0.1, 0.3, 0.2 and B's 0.2 each, both 100 ns: the pairs' changes
     * are 10, -10 and 0 ns (sd 10, so 100 / 3 over the pairs), larger than the pooled
     * binomial 2 * 100^2 * 0.16 / 3000; the pooled change is 0. */
    double a[] = {100, 300, 200}, b[] = {200, 200, 200};
    double na[] = {1000, 1000, 1000}, nb[] = {1000, 1000, 1000}, d;
    double sd = bench__explain_diff_sd(a, b, na, nb, 3, 100, 100, 0, &d);
    assert_true(fabs(d) < 1e-9);
    assert_true(fabs(sd - sqrt(100.0 / 3.0)) < 1e-9);
}

static void test_a_few_samples_against_none_are_noise(void **state)
{
    (void)state;
    /* 0 of 1000 against 3 of 1000 at 100 ns: d = 0.3 ns; the zero counts as one sample, so
     * var = 100^2 * 0.003 * 0.997 / 1000 + 100^2 / 1000^2, and 0.3 is under 4 sd. */
    double a[] = {0}, b[] = {3}, na[] = {1000}, nb[] = {1000}, d;
    double sd = bench__explain_diff_sd(a, b, na, nb, 1, 100, 100, 0, &d);
    assert_true(fabs(d - 0.3) < 1e-12);
    assert_true(fabs(sd - sqrt(0.029910 + 0.01)) < 1e-9);
    assert_true(fabs(d) < BENCH__EXPLAIN_Z * sd);
}

/* Stacks (root first) as perf recorded them in e2e_explain's workers: the code's own, a
 * system call the code made, and the machine's: preempted on the way back from the timer
 * interrupt, a reschedule IPI, a device interrupt's softirqs. */
#define ROUND "main;bench__instance_round;"
static const char *const MIX = ROUND "shared_mix";
static const char *const HASH = ROUND "shared_hash";
static const char *const WRITE = ROUND "__GI___libc_write;entry_SYSCALL_64_after_hwframe_[k];"
                                       "do_syscall_64_[k];ksys_write_[k];vfs_write_[k]";
static const char *const FAULT = ROUND "shared_mix;asm_exc_page_fault_[k];exc_page_fault_[k];"
                                       "irqentry_exit_to_user_mode_[k]";
static const char *const PREEMPTED = ROUND "shared_mix;asm_sysvec_apic_timer_interrupt_[k];"
                                           "irqentry_exit_to_user_mode_[k];schedule_[k];"
                                           "__schedule_[k];finish_task_switch.isra.0_[k]";
static const char *const IPI = ROUND "shared_hash;asm_sysvec_reschedule_ipi_[k];"
                                     "irqentry_exit_to_user_mode_[k]";
static const char *const SOFTIRQ = ROUND "shared_mix;asm_common_interrupt_[k];"
                                         "common_interrupt_[k];__irq_exit_rcu_[k];"
                                         "handle_softirqs_[k]";

/* Folds `count` samples of `stack` ("root;...;leaf") into t; the samples counted. */
static double fold(bench__explain_table *t, const char *stack, int sd, int slot, double count)
{
    char buf[1024];
    long rows[32], frames[32];
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", stack);
    for (char *save = NULL, *f = strtok_r(buf, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
        assert_true(n < 32);
        rows[n] = bench__explain_table_row(t, f);
        assert_true(rows[n] >= 0);
        n++;
    }
    for (size_t i = 0; i < n; i++)
        frames[i] = rows[n - 1 - i]; /* innermost first */
    return bench__explain_fold(t, frames, n, sd, slot, count);
}

static long row_of(bench__explain_table *t, const char *name)
{
    size_t before = t->n;
    long r = bench__explain_table_row(t, name);
    assert_int_equal(t->n, before); /* the row was there */
    return r;
}

static void test_machine_frames(void **state)
{
    (void)state;
    assert_true(bench__explain_machine_frame("__schedule_[k]"));
    assert_true(bench__explain_machine_frame("asm_sysvec_apic_timer_interrupt_[k]"));
    assert_true(bench__explain_machine_frame("asm_sysvec_reschedule_ipi_[k]"));
    assert_true(bench__explain_machine_frame("asm_common_interrupt_[k]"));
    /* Not markers themselves: the frames under them, the code's entries into the kernel, a
     * function of the program with the kernel's name, names that only begin alike. */
    assert_false(bench__explain_machine_frame("finish_task_switch.isra.0_[k]"));
    assert_false(bench__explain_machine_frame("irqentry_exit_to_user_mode_[k]"));
    assert_false(bench__explain_machine_frame("asm_exc_page_fault_[k]"));
    assert_false(bench__explain_machine_frame("entry_SYSCALL_64_after_hwframe_[k]"));
    assert_false(bench__explain_machine_frame("__schedule"));
    assert_false(bench__explain_machine_frame("__schedule_hrtimeout_[k]"));
    assert_false(bench__explain_machine_frame("asm_common_interrupt"));
    assert_false(bench__explain_machine_frame("shared_mix"));
    assert_false(bench__explain_machine_frame(""));
}

static void test_fold_leaves_the_machines_samples_out(void **state)
{
    (void)state;
    bench__explain_table t = {0};
    assert_true(fold(&t, MIX, 0, 0, 5) == 5);
    assert_true(fold(&t, WRITE, 0, 0, 2) == 2);
    assert_true(fold(&t, FAULT, 0, 0, 1) == 1);
    assert_true(fold(&t, PREEMPTED, 0, 0, 7) == 0);
    assert_true(fold(&t, IPI, 0, 0, 3) == 0);
    assert_true(fold(&t, SOFTIRQ, 0, 0, 4) == 0);
    /* shared_mix: 5 self; total 5 + the page fault's 1, none of the 11 machine's under it. */
    long mix = row_of(&t, "shared_mix");
    assert_true(t.rows[mix].self[0][0] == 5 && t.rows[mix].total[0][0] == 6);
    assert_true(t.rows[row_of(&t, "shared_hash")].total[0][0] == 0);
    assert_true(t.rows[row_of(&t, "vfs_write_[k]")].self[0][0] == 2);
    assert_true(t.rows[row_of(&t, "irqentry_exit_to_user_mode_[k]")].self[0][0] == 1);
    assert_true(t.rows[row_of(&t, "finish_task_switch.isra.0_[k]")].self[0][0] == 0);
    assert_true(t.rows[row_of(&t, "handle_softirqs_[k]")].total[0][0] == 0);
    assert_true(t.rows[row_of(&t, "main")].total[0][0] == 8);
    bench__explain_table_free(&t);
}

/* A's and B's profiles over three worker pairs: per pair 6000 samples in shared_mix (plus
 * `planted` in B), 3000 in shared_hash, and the machine's: B's worker preempted about three
 * times as often as A's in every pair (the load differed between their moments), as when an
 * A/A on a loaded machine named `finish_task_switch.isra.0_[k] +39 ns`. */
static void loaded_profiles(bench__explain_table *t, double planted, double na[3], double nb[3])
{
    static const double preempted[2][3] = {{50, 61, 55}, {152, 160, 148}};
    for (int j = 0; j < 3; j++) {
        double *n[2] = {&na[j], &nb[j]};
        for (int k = 0; k < 2; k++)
            *n[k] = fold(t, MIX, k, j, 6000 + (k ? planted : 0)) + fold(t, HASH, k, j, 3000) +
                    fold(t, PREEMPTED, k, j, preempted[k][j]) +
                    fold(t, IPI, k, j, preempted[k][j] / 2) + fold(t, SOFTIRQ, k, j, 10);
    }
}

/* The functions --explain names between loaded_profiles(planted) at 3000 ns per iteration in A
 * and tb in B (log_se the verdict's uncertainty): their count, ranked into rank (64 rows). */
static size_t loaded_beyond(bench__explain_table *t, double planted, double tb, double log_se,
                            double na[3], double nb[3], bench__explain_rank rank[64])
{
    loaded_profiles(t, planted, na, nb);
    assert_true(t->n <= 64);
    return bench__explain_beyond(t, na, nb, 3, 3000, tb, log_se, true, rank);
}

static void test_aa_on_a_loaded_machine_names_nothing(void **state)
{
    (void)state;
    /* The programs' own samples are 9000 per pair on both sides, in the same shares, at the
     * same 3000 ns per iteration: every function's change is exactly 0. (With the machine's
     * samples in the shares, 27279 of A's and 27720 of B's, finish_task_switch would change by
     * 3000 (460 / 27720 - 166 / 27279) = +31.5 ns per iteration, 11 sd of its noise, about as
     * much in each pair, and irqentry_exit_to_user_mode by +15.8 ns: both named.) */
    bench__explain_table t = {0};
    double na[3], nb[3];
    bench__explain_rank rank[64];
    size_t n = loaded_beyond(&t, 0, 3000, 0.01, na, nb, rank);
    for (size_t i = 0; i < n; i++)
        print_message("named: %s %+.2f ns (sd %.2f)\n", t.rows[rank[i].row].name, rank[i].d,
                      rank[i].sd);
    assert_int_equal(n, 0);
    for (int j = 0; j < 3; j++)
        assert_true(na[j] == 9000 && nb[j] == 9000);
    bench__explain_table_free(&t);
}

static void test_planted_change_named_beside_the_load(void **state)
{
    (void)state;
    /* B: 2400 more samples of shared_mix per pair (40% more), 11400 of its own per pair; its
     * time per iteration 3000 * 11400 / 9000 = 3800 ns. shared_mix: A 3000 * 6000 / 9000 = 2000
     * ns, B 3800 * 8400 / 11400 = 2800 ns, change 800 ns; shared_hash 1000 ns on both sides.
     * Each pair's change is 800 ns (no spread), so the sd is the binomial one:
     * 3000^2 (2/3)(1/3) / 27000 + 3800^2 (8400/11400)(3000/11400) / 34200. */
    bench__explain_table t = {0};
    double na[3], nb[3];
    bench__explain_rank rank[64];
    size_t n = loaded_beyond(&t, 2400, 3800, 0, na, nb, rank);
    assert_int_equal(n, 1);
    assert_string_equal(t.rows[rank[0].row].name, "shared_mix");
    double pb = 8400.0 / 11400.0;
    double var = 3000.0 * 3000.0 * (2.0 / 9.0) / 27000 + 3800.0 * 3800.0 * pb * (1 - pb) / 34200;
    assert_true(fabs(rank[0].d - 800) < 1e-9);
    assert_true(fabs(rank[0].total_d - 800) < 1e-9);
    assert_true(fabs(rank[0].old_v - 2000) < 1e-9);
    assert_true(fabs(rank[0].new_v - 2800) < 1e-9);
    assert_true(fabs(rank[0].sd - sqrt(var)) < 1e-9);
    bench__explain_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binomial_noise_of_one_pair),
        cmocka_unit_test(test_ratio_uncertainty_adds),
        cmocka_unit_test(test_spread_of_pairs_wins_when_larger),
        cmocka_unit_test(test_a_few_samples_against_none_are_noise),
        cmocka_unit_test(test_machine_frames),
        cmocka_unit_test(test_fold_leaves_the_machines_samples_out),
        cmocka_unit_test(test_aa_on_a_loaded_machine_names_nothing),
        cmocka_unit_test(test_planted_change_named_beside_the_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
