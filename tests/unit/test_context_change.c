/*
 * test_context_change.c: what a comparison says about the two runs' contexts. Machine facts
 * (CPU, cores, threads, host, kernel, governor) are told apart from build facts (compiler, flags,
 * build type); the git revision and unknown facts are not compared. When nearly all benchmarks
 * moved together, the summary blames the machine only when a machine fact changed: a build
 * change is called one, and interleaved A/B runs (no context) never blame the machine.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "report/report_compare.h"

static bench__context_id base_id(void)
{
    bench__context_id id;
    memset(&id, 0, sizeof id);
    snprintf(id.cpu_brand, sizeof id.cpu_brand, "Some CPU");
    id.cores = 8;
    id.threads = 16;
    snprintf(id.hostname, sizeof id.hostname, "box");
    snprintf(id.kernel, sizeof id.kernel, "Linux 6.1.0");
    snprintf(id.governor, sizeof id.governor, "performance");
    snprintf(id.compiler, sizeof id.compiler, "gcc 12.2.0");
    snprintf(id.compiler_flags, sizeof id.compiler_flags, "-O3 -DNDEBUG");
    snprintf(id.build_type, sizeof id.build_type, "Release");
    snprintf(id.git_revision, sizeof id.git_revision, "aaaa");
    snprintf(id.timestamp, sizeof id.timestamp, "2026-11-22T19:00:00Z");
    return id;
}

static void test_machine_and_build_apart(void **state)
{
    (void)state;
    bench__context_id a = base_id(), b = base_id();
    bench__context_change d;

    /* Only the code changed (revision and time): nothing to say. */
    snprintf(b.git_revision, sizeof b.git_revision, "bbbb-dirty");
    snprintf(b.timestamp, sizeof b.timestamp, "2026-11-23T10:00:00Z");
    bench__context_compare(&b, &a, &d);
    assert_string_equal(d.machine, "");
    assert_string_equal(d.build, "");

    /* Compiler flags: a build change, not a machine change. */
    snprintf(b.compiler_flags, sizeof b.compiler_flags, "-O2");
    bench__context_compare(&b, &a, &d);
    assert_string_equal(d.machine, "");
    assert_string_equal(d.build, "compiler flags '-O2' vs '-O3 -DNDEBUG'");

    /* Kernel and governor are machine facts. */
    b = base_id();
    snprintf(b.kernel, sizeof b.kernel, "Linux 6.12.0");
    snprintf(b.governor, sizeof b.governor, "powersave");
    bench__context_compare(&b, &a, &d);
    assert_string_equal(d.machine, "kernel 'Linux 6.12.0' vs 'Linux 6.1.0'; governor "
                                   "'powersave' vs 'performance'");
    assert_string_equal(d.build, "");

    /* Unknown on one side (an older baseline, a VM without cpufreq): not compared. */
    b = base_id();
    b.governor[0] = '\0';
    b.cores = -1;
    b.cpu_brand[0] = '\0';
    bench__context_compare(&b, &a, &d);
    assert_string_equal(d.machine, "");
}

/* Five benchmarks that all got 50% slower. */
static char *summary(const bench__context_change *context)
{
    static const char *const ids[] = {"g/a", "g/b", "g/c", "g/d", "g/e"};
    bench__change ch[5];
    memset(ch, 0, sizeof ch);
    for (size_t i = 0; i < 5; i++) {
        ch[i].verdict = BENCH__V_REGRESSED;
        ch[i].ratio = 1.5;
        ch[i].ratio_lower = 1.4;
        ch[i].ratio_upper = 1.6;
        ch[i].log_change = 0.405465;
        ch[i].p = ch[i].p_adjusted = 0.001;
    }
    bench__compare_opts o = {.significance_level = 0.05, .noise_threshold = 0.02};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(bench__print_compare_summary(f, "x", ids, ch, 5, &o, "Holm", context, false),
                     0);
    fclose(f);
    return text;
}

static void test_summary_blames_machine_only_when_it_changed(void **state)
{
    (void)state;
    bench__context_change none = {"", ""}, build = {"", "compiler flags '-O2' vs '-O3'"},
                          machine = {"CPU 'A' vs 'B'", "compiler flags '-O2' vs '-O3'"};

    char *t = summary(NULL); /* --ab: both builds interleaved on one machine */
    assert_non_null(strstr(t, "note: 5 of 5 benchmarks moved the same way (median change "
                              "+50.00%): A and B ran interleaved on one machine"));
    assert_null(strstr(t, "machine changed"));
    assert_null(strstr(t, "machine state"));
    assert_null(strstr(t, "warning"));
    free(t);

    t = summary(&none); /* only the code changed */
    assert_non_null(strstr(t, "the recorded machine and build are the same"));
    assert_null(strstr(t, "machine changed"));
    assert_null(strstr(t, "warning"));
    free(t);

    t = summary(&build);
    assert_non_null(strstr(t, "note: 5 of 5 benchmarks moved the same way (median change "
                              "+50.00%) and the build changed between the runs (compiler flags "
                              "'-O2' vs '-O3')"));
    assert_null(strstr(t, "machine"));
    free(t);

    t = summary(&machine);
    assert_non_null(strstr(t, "warning: 5 of 5 benchmarks moved the same way (median change "
                              "+50.00%) and the machine changed between the runs (CPU 'A' vs "
                              "'B'): the machine is a likelier cause than the code"));
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_machine_and_build_apart),
        cmocka_unit_test(test_summary_blames_machine_only_when_it_changed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
