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
    for (int i = 0; i < 3; i++)
        assert_string_equal(cpu.cache_source[i], "sysfs");
    assert_string_equal(cpu.cache_note, "");
    assert_int_equal(cpu.llc_kib, 32768);
    const char *facts[] = {"cores", "threads", "l2_kib", "l3_kib"};
    const int theirs[] = {1, 254, 512, 520192}, ours[] = {2, 2, 1024, 32768};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(cpu.disagreements[i].fact, facts[i]);
        assert_int_equal(cpu.disagreements[i].libcpuid, theirs[i]);
        assert_int_equal(cpu.disagreements[i].os, ours[i]);
    }
}

/* The OS gives no caches (a hypervisor that publishes no cache folders): libcpuid's figures from
 * leaves that also say "1 cores, 254 threads" are not shown as fact, and say why. */
static void test_implausible_libcpuid_caches_are_unknown(void **state)
{
    (void)state;
    bench__os_cpu os;
    bench__sysinfo_os_cpu(SYSFS_DIR "/smt", &os); /* no caches */
    bench__cpu cpu = libcpuid_in_the_vm();
    bench__cpu_reconcile(&cpu, &os, true);
    assert_int_equal(cpu.cores, 3);
    assert_int_equal(cpu.threads, 5);
    assert_int_equal(cpu.l1d_kib, -1);
    assert_int_equal(cpu.l3_kib, -1);
    for (int i = 0; i < 3; i++)
        assert_string_equal(cpu.cache_source[i], "unknown");
    assert_int_equal(cpu.cache_rejected_kib[2], 520192);
    assert_non_null(strstr(cpu.cache_note, "1 cores, 254 threads"));
    assert_int_equal(cpu.llc_kib, -1);
    assert_string_equal(cpu.llc_source, "unknown");
    assert_int_equal(cpu.ndisagreements, 2);
}

/* A consistent topology: libcpuid's L1d and L2 are shown, marked as its; an L3 above 64 MiB
 * per core is not. */
static void test_plausible_libcpuid_caches_are_marked(void **state)
{
    (void)state;
    bench__os_cpu os;
    bench__sysinfo_os_cpu(SYSFS_DIR "/smt", &os); /* 3 cores, no caches */
    bench__cpu cpu = libcpuid_in_the_vm();
    cpu.cores = 3;
    cpu.threads = 6;
    bench__cpu_reconcile(&cpu, &os, true);
    assert_int_equal(cpu.l1d_kib, 32);
    assert_string_equal(cpu.cache_source[0], "libcpuid");
    assert_int_equal(cpu.l2_kib, 512);
    assert_string_equal(cpu.cache_source[1], "libcpuid");
    assert_int_equal(cpu.l3_kib, -1);
    assert_string_equal(cpu.cache_source[2], "unknown");
    assert_string_equal(cpu.cache_note, "L3 above 64 MiB per core");
    /* One within the bounds is kept, and sizes the memory canary. */
    cpu = libcpuid_in_the_vm();
    cpu.cores = 3;
    cpu.threads = 6;
    cpu.l3_kib = 32768;
    bench__cpu_reconcile(&cpu, &os, true);
    assert_int_equal(cpu.l3_kib, 32768);
    assert_string_equal(cpu.cache_source[2], "libcpuid");
    assert_int_equal(cpu.llc_kib, 32768);
    assert_string_equal(cpu.llc_source, "libcpuid");
    assert_string_equal(cpu.cache_note, "");
}

static void test_plausibility_bounds(void **state)
{
    (void)state;
    bool ok[3];
    char why[160];
    const int fine[3] = {48, 2048, 32768};
    bench__cpu_cache_plausible(8, 16, 2, fine, ok, why, sizeof why);
    assert_true(ok[0] && ok[1] && ok[2]);
    assert_string_equal(why, "");
    const int big[3] = {2048, 128 * 1024, 2 * 1024 * 1024};
    bench__cpu_cache_plausible(64, 128, 64, big, ok, why, sizeof why);
    assert_false(ok[0] || ok[1] || ok[2]);
    assert_string_equal(why, "L1d above 1 MiB");
    const int l3[3] = {-1, -1, 2 * 1024 * 1024};
    bench__cpu_cache_plausible(64, 128, 64, l3, ok, why, sizeof why);
    assert_string_equal(why, "L3 above 1 GiB");
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
        cmocka_unit_test(test_implausible_libcpuid_caches_are_unknown),
        cmocka_unit_test(test_plausible_libcpuid_caches_are_marked),
        cmocka_unit_test(test_plausibility_bounds),
        cmocka_unit_test(test_without_libcpuid_nothing_is_a_disagreement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
