/*
 * fixture_hostile.c: e2e_hostile, a benchmark program whose names and messages are hostile text,
 * as a program that registers benchmarks from data (bench__register) can have: terminal escape
 * sequences, carriage returns and bells in names and skip messages, bidirectional overrides, and
 * names a spreadsheet would take for formulas. test_output_text.py checks that no output format
 * lets a control character through and that CSV text cells are guarded.
 */
#include <stdint.h>

#include <harness/bench.h>

static void quick(bench_t *b)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = bench_black_box(x * 3 + 1);
    }
    bench_black_box(x);
}

static void skips_with_escapes(bench_t *b)
{
    /* Sets the terminal title, rings the bell and rewrites the line. */
    bench_skip(b, "reason \x1b]0;pwned\x07 then\rOVERWRITTEN \x1b[2J");
    BENCH_ITER(b) {
    }
}

static void fails_with_escapes(bench_t *b)
{
    BENCH_ITER(b) {
        bench_fail(b, "failed \x1b[31mred\x1b[0m \xe2\x80\xae reversed");
    }
}

#define HOSTILE(group_, name_, fn_)                                                                \
    {                                                                                              \
        .group = group_, .name = name_, .fn = fn_, .warm_up_time = 0.01,                           \
        .measurement_time = 0.05                                                                   \
    }

static bench_desc hostile[] = {
    HOSTILE("esc", "red\x1b[31mname", quick),
    HOSTILE("esc", "bell\x07" "cr\rname", quick),
    HOSTILE("esc", "skip", skips_with_escapes),
    HOSTILE("esc", "fail", fails_with_escapes),
    HOSTILE("csv", "=HYPERLINK(\"http://x\")", quick),
    HOSTILE("csv", "@SUM(A1)", quick),
    HOSTILE("csv", "+cmd", quick),
    HOSTILE("csv", "-2", quick),
    HOSTILE("csv", "plain", quick),
};

/* Registered by hand, as BENCH_FN does: each descriptor through its node (bench.h). */
static bench__node hostile_nodes[sizeof hostile / sizeof hostile[0]];

__attribute__((constructor)) static void register_hostile(void)
{
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        hostile_nodes[i] = (bench__node){&hostile[i], sizeof hostile[i], 0, 0};
        bench__register(&hostile_nodes[i]);
    }
}
