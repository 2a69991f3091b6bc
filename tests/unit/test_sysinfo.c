/*
 * test_sysinfo.c: the CPU facts read from sysfs and their cross-check against libcpuid's. Fake
 * sysfs trees (tests/fixtures/sysfs) give the topology and caches of a 2-vCPU VM, of SMT with an
 * offline CPU, and of a tree with a CPU missing; the reconciliation keeps the OS's figure and
 * records libcpuid's where they differ (the VM where libcpuid said "1 cores, 254 threads" and
 * an L3 of 520192 KiB).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "sys/context.h"

static void test_vm_topology_and_caches(void **state)
{
    (void)state;
    bench__os_cpu os;
    bench__sysinfo_os_cpu(SYSFS_DIR "/amd-vm", &os);
    assert_int_equal(os.cores, 2);
    assert_int_equal(os.threads, 2);
    assert_int_equal(os.l1d_kib, 32);
    assert_int_equal(os.l2_kib, 1024);
    assert_int_equal(os.l3_kib, 32768);

    bench__cache_info c[16];
    size_t n = bench__sysinfo_caches(SYSFS_DIR "/amd-vm", c, 16);
    assert_int_equal(n, 4);
    assert_string_equal(c[1].type, "Instruction");
    assert_int_equal(c[3].level, 3);
    assert_true(c[3].bytes == 32768.0 * 1024);
    assert_int_equal(c[3].num_sharing, 2);
    assert_int_equal(c[0].num_sharing, 1);
}

static void test_smt_with_an_offline_cpu(void **state)
{
    (void)state;
    bench__os_cpu os;
    bench__sysinfo_os_cpu(SYSFS_DIR "/smt", &os);
    assert_int_equal(os.threads, 5);
    assert_int_equal(os.cores, 3);
    assert_int_equal(os.l1d_kib, -1);
    assert_int_equal(os.l3_kib, -1);
}

static void test_missing_parts_are_unknown(void **state)
{
    (void)state;
    bench__os_cpu os;
    bench__sysinfo_os_cpu(SYSFS_DIR "/partial", &os);
    assert_int_equal(os.threads, 2);
    assert_int_equal(os.cores, -1);
    bench__sysinfo_os_cpu(SYSFS_DIR "/no-such-tree", &os);
    assert_int_equal(os.threads, -1);
    assert_int_equal(os.cores, -1);
    assert_int_equal(os.l2_kib, -1);
}

static bench__cpu libcpuid_in_the_vm(void)
{
    bench__cpu cpu;
    memset(&cpu, 0, sizeof cpu);
    cpu.cores = 1;
    cpu.threads = 254;
    cpu.l1d_kib = 32;
    cpu.l2_kib = 512;
    cpu.l3_kib = 520192;
    return cpu;
}

static void test_os_figures_win_and_disagreements_are_kept(void **state)
{
    (void)state;
    bench__os_cpu os;
    bench__sysinfo_os_cpu(SYSFS_DIR "/amd-vm", &os);
    bench__cpu cpu = libcpuid_in_the_vm();
    bench__cpu_reconcile(&cpu, &os, true);
    assert_int_equal(cpu.cores, 2);
    assert_int_equal(cpu.threads, 2);
    assert_int_equal(cpu.l1d_kib, 32);
    assert_int_equal(cpu.l2_kib, 1024);
    assert_int_equal(cpu.l3_kib, 32768);
    assert_int_equal(cpu.ndisagreements, 4); /* L1d agreed */
    const char *facts[] = {"cores", "threads", "l2_kib", "l3_kib"};
    const int theirs[] = {1, 254, 512, 520192}, ours[] = {2, 2, 1024, 32768};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(cpu.disagreements[i].fact, facts[i]);
        assert_int_equal(cpu.disagreements[i].libcpuid, theirs[i]);
        assert_int_equal(cpu.disagreements[i].os, ours[i]);
    }
}

static void test_unknown_os_figures_keep_libcpuids(void **state)
{
    (void)state;
    bench__os_cpu os;
    bench__sysinfo_os_cpu(SYSFS_DIR "/smt", &os); /* no caches */
    bench__cpu cpu = libcpuid_in_the_vm();
    bench__cpu_reconcile(&cpu, &os, true);
    assert_int_equal(cpu.cores, 3);
    assert_int_equal(cpu.threads, 5);
    assert_int_equal(cpu.l3_kib, 520192);
    assert_int_equal(cpu.ndisagreements, 2);
}

static void test_without_libcpuid_nothing_is_a_disagreement(void **state)
{
    (void)state;
    bench__os_cpu os;
    bench__sysinfo_os_cpu(SYSFS_DIR "/amd-vm", &os);
    bench__cpu cpu = libcpuid_in_the_vm();
    cpu.l1d_kib = cpu.l2_kib = cpu.l3_kib = -1; /* /proc/cpuinfo has no cache sizes */
    bench__cpu_reconcile(&cpu, &os, false);
    assert_int_equal(cpu.cores, 2);
    assert_int_equal(cpu.l3_kib, 32768);
    assert_int_equal(cpu.ndisagreements, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vm_topology_and_caches),
        cmocka_unit_test(test_smt_with_an_offline_cpu),
        cmocka_unit_test(test_missing_parts_are_unknown),
        cmocka_unit_test(test_os_figures_win_and_disagreements_are_kept),
        cmocka_unit_test(test_unknown_os_figures_keep_libcpuids),
        cmocka_unit_test(test_without_libcpuid_nothing_is_a_disagreement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
