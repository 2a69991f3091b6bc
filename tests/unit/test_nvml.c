/*
 * test_nvml.c: the NVML layer (harness/src/probes/nvml.c) against a fake libnvidia-ml (fake_nvml.c,
 * loaded through the test hook BENCH_NVML_LIBRARY): a missing library, a failing nvmlInit and an
 * unknown device are "unavailable" with the reason; readings come back in NVML's units turned
 * into MHz, degrees, W and reason bits; the reference clocks; a clock event reason's words;
 * locking and its refusal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "probes/nvml.h"

static int setup(void **state)
{
    (void)state;
    setenv("BENCH_NVML_LIBRARY", FAKE_NVML_PATH, 1);
    unsetenv("FAKE_NVML_INIT");
    unsetenv("FAKE_NVML_NO_DEVICE");
    unsetenv("FAKE_NVML_LOCK");
    unsetenv("FAKE_NVML_DEFAULT_SM_MHZ");
    setenv("FAKE_NVML_SM_MHZ", "1980,1410", 1);
    setenv("FAKE_NVML_MEM_MHZ", "2619", 1);
    setenv("FAKE_NVML_TEMP_C", "51", 1);
    setenv("FAKE_NVML_POWER_MW", "612500", 1);
    setenv("FAKE_NVML_REASONS", "0,0x24", 1);
    return 0;
}

static void test_missing_library_is_unavailable(void **state)
{
    (void)state;
    setenv("BENCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    bench__nvml *n = (bench__nvml *)state;
    char msg[256];
    assert_int_equal(bench__nvml_open(&n, "0000:19:00.0", msg, sizeof msg), BENCH_EUNAVAIL);
    assert_null(n);
    assert_non_null(strstr(msg, "/nonexistent/libnvidia-ml.so.1 could not be loaded"));
    unsetenv("BENCH_NVML_LIBRARY");
    assert_string_equal(bench__nvml_library(), "libnvidia-ml.so.1"); /* the driver's, by default */
}

static void test_init_failure_is_unavailable(void **state)
{
    (void)state;
    setenv("FAKE_NVML_INIT", "fail", 1);
    bench__nvml *n;
    char msg[256];
    assert_int_equal(bench__nvml_open(&n, NULL, msg, sizeof msg), BENCH_EUNAVAIL);
    assert_null(n);
    assert_string_equal(msg, "nvmlInit: Driver Not Loaded");
}

static void test_unknown_device_is_unavailable(void **state)
{
    (void)state;
    setenv("FAKE_NVML_NO_DEVICE", "1", 1);
    bench__nvml *n;
    char msg[256];
    assert_int_equal(bench__nvml_open(&n, "0000:19:00.0", msg, sizeof msg), BENCH_EUNAVAIL);
    assert_string_equal(msg, "NVML has no device 0000:19:00.0 (Not Found)");
}

static void test_readings_and_clocks(void **state)
{
    (void)state;
    bench__nvml *n;
    char msg[256];
    assert_int_equal(bench__nvml_open(&n, "0000:19:00.0", msg, sizeof msg), 0);
    bench__gpu_state st;
    bench__nvml_read(n, &st);
    assert_true(st.sm_clock_mhz == 1980);
    assert_true(st.mem_clock_mhz == 2619);
    assert_true(st.temperature_c == 51);
    assert_true(st.power_w == 612.5); /* mW to W */
    assert_true(st.reasons == 0);
    bench__nvml_read(n, &st); /* the scripted second values */
    assert_true(st.sm_clock_mhz == 1410);
    assert_true(st.reasons == 0x24);
    assert_true((st.reasons & BENCH__NVML_SLOWDOWN_REASONS) != 0);
    bench__gpu_clocks c;
    bench__nvml_clocks(n, &c);
    assert_true(c.sm_default_mhz == 1980 && c.sm_max_mhz == 1980 && c.mem_max_mhz == 2619);
    bench__nvml_close(n);
    /* a query the GPU does not support reads as unknown, not as an error */
    setenv("FAKE_NVML_DEFAULT_SM_MHZ", "none", 1);
    assert_int_equal(bench__nvml_open(&n, NULL, msg, sizeof msg), 0);
    bench__nvml_clocks(n, &c);
    assert_true(c.sm_default_mhz == -1);
    bench__nvml_close(n);
    bench__nvml_close(NULL);
}

static void test_reasons_in_words(void **state)
{
    (void)state;
    char buf[256];
    assert_string_equal(bench__nvml_reasons_text(0, buf, sizeof buf), "none");
    assert_string_equal(bench__nvml_reasons_text(-1, buf, sizeof buf), "unknown");
    assert_string_equal(bench__nvml_reasons_text(0x24, buf, sizeof buf),
                        "power cap, thermal slowdown (software)");
    assert_string_equal(bench__nvml_reasons_text(0x1001, buf, sizeof buf), "idle, 0x1000");
    /* the slowdown bits are the reasons that slow the GPU, not idle or settings */
    assert_true((0x1 & BENCH__NVML_SLOWDOWN_REASONS) == 0);
    assert_true((0x2 & BENCH__NVML_SLOWDOWN_REASONS) == 0);
    assert_true((0x10 & BENCH__NVML_SLOWDOWN_REASONS) == 0);
    assert_true((0x100 & BENCH__NVML_SLOWDOWN_REASONS) == 0);
    assert_int_equal(BENCH__NVML_SLOWDOWN_REASONS, 0x4 | 0x8 | 0x20 | 0x40 | 0x80);
}

static void test_locking(void **state)
{
    (void)state;
    bench__nvml *n;
    char msg[256];
    assert_int_equal(bench__nvml_open(&n, NULL, msg, sizeof msg), 0);
    assert_int_equal(bench__nvml_lock_sm_clock(n, 1500, msg, sizeof msg), 0);
    assert_int_equal(bench__nvml_unlock_sm_clock(n, msg, sizeof msg), 0);
    setenv("FAKE_NVML_LOCK", "denied", 1);
    assert_int_equal(bench__nvml_lock_sm_clock(n, 1500, msg, sizeof msg), BENCH_EUNAVAIL);
    assert_string_equal(msg, "nvmlDeviceSetGpuLockedClocks: Insufficient Permissions");
    bench__nvml_close(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_missing_library_is_unavailable, setup),
        cmocka_unit_test_setup(test_init_failure_is_unavailable, setup),
        cmocka_unit_test_setup(test_unknown_device_is_unavailable, setup),
        cmocka_unit_test_setup(test_readings_and_clocks, setup),
        cmocka_unit_test_setup(test_reasons_in_words, setup),
        cmocka_unit_test_setup(test_locking, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
