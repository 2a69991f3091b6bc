/*
 * report_compare.h: comparisons in words (report_compare.c): the change line and verdict under
 * each benchmark, the closing summary in its order, and the exit code a finished comparison
 * gives under the gate's flags.
 */
#ifndef HARNESS_REPORT_COMPARE_H
#define HARNESS_REPORT_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compare/compare.h"
#include "core/result.h"
#include "sys/context.h"

/**
 * Prints "change: [lo mid hi] (p = ...)" under a benchmark's measured result; for a status, the
 * status ("change: new: the baseline has no measurement").
 */
void bench__print_change_line(FILE *o, const bench__change *c, bool color);
/**
 * Prints each compared metric's change under a benchmark's result, and a note when time moved
 * beyond the threshold but a metric that counts work (instructions, cycles, allocations) did not.
 */
void bench__print_metric_changes(FILE *o, const bench__result *r, const bench__compare_opts *opt,
                                 bool color);
/** Prints the Criterion-style verdict sentence for one benchmark (for the same code on both
 * sides, what was measured and that it is no change of the code). */
void bench__print_verdict(FILE *o, const bench__change *c, bool color);
/**
 * A change marked same_code as every report words it: "same code: measured 4.18% slower
 * (placement or machine)" ("... faster", or "... measured no different" within 0.005%), into
 * buf.
 */
void bench__same_code_text(char *buf, size_t len, const bench__change *c);
/**
 * Prints the closing summary: every benchmark's verdict, worst first, and the counts. When nearly
 * all benchmarks moved together it says so, blaming the machine only when `context` records that
 * the machine changed between the runs; `context` NULL means both sides ran interleaved on one
 * machine (--ab). ids[i] names changes[i]. `method` names the correction over the comparison
 * ("Holm"), or with opt->exact what was counted ("instructions per iteration, exact").
 * 0 or -1 (memory).
 */
int bench__print_compare_summary(FILE *o, const char *baseline, const char *const *ids,
                                 const bench__change *changes, size_t n,
                                 const bench__compare_opts *opt, const char *method,
                                 const bench__context_change *context, bool color);

/** What a paired run of two programs measured for one benchmark, beside its change. */
typedef struct bench__paired_stats {
    size_t pairs;            /* worker pairs */
    size_t rounds;           /* rounds of ABBA+BAAB */
    double pair_sd;          /* sd of the pair-to-pair ratios, relative */
    unsigned long long iters; /* iterations a sample */
    double seconds;          /* the time it took, s */
    bool futile;             /* stopped at a look as undecidable (bench__verdict_futile) */
    size_t looks;            /* the look it stopped at */
    double reach;            /* the pairs the budget could still have given it */
    double threshold;        /* the noise threshold, relative */
} bench__paired_stats;

/**
 * --ab: one benchmark's outcome: its id, then with `why` (not NULL: it was not compared) its
 * status verdict and why; else A's and B's times, the pairs of `st`, the change line and the
 * verdict sentence.
 */
void bench__print_paired_item(FILE *o, const char *id, const bench__change *c, const char *why,
                              const bench__paired_stats *st, bool color);
/** A saved comparison's suspect verdict `before`, confirmed by a paired run (`paired`, over
 * `pairs` worker pairs): one line on stderr, "confirmed ID: BEFORE -> AFTER, +x% [lo, hi]";
 * `futile_reach` above 0: the futility rule stopped it, as even that many pairs could not
 * decide it. */
void bench__print_confirmed(const char *id, bench__verdict before, const bench__change *paired,
                            size_t pairs, double futile_reach);
/** --instructions: the change line under a compared result, its exact counts and verdict
 * ("not compared" when the baseline has no count). */
void bench__print_count_change(FILE *o, const bench__change *ch, bool color);

/** Puts the n rows (ids[i] names ch[i]) in the summary's order (bench__change_order), in
 * place; 0 or -1 (memory). */
int bench__sort_changes(const char **ids, bench__change *ch, size_t n);

/**
 * The exit code of a finished comparison of n rows (ids[i] names ch[i]), as bench__gate_exit
 * (compare/verdict.h) decides it: 1 for a regression when fail_on_regression, or for an
 * inconclusive benchmark when fail_on_inconclusive (each named on stderr); otherwise 2 when
 * `strict` meets a new or removed benchmark (each named on stderr, in row order, with
 * bench__strict_violation); else 0. Skipped benchmarks never change it.
 */
int bench__compare_exit(const char *const *ids, const bench__change *ch, size_t n,
                        const bench__gate *gate, const char *against);

/**
 * --baseline-strict: when v is new or removed, prints one line on stderr naming the benchmark and
 * `against` (what it was compared with, e.g. "baseline 'main'") and returns true; else false.
 */
bool bench__strict_violation(const char *id, bench__verdict v, const char *against);

/**
 * The order of the rows of every comparison summary (report_compare.c): worst first
 * (regressions, inconclusive, improvements, within noise, no change, then the statuses: not
 * compared, new, removed, skipped), within a verdict the larger change first, then by id. A
 * qsort-style result: negative when row (ida, a) comes first.
 */
int bench__change_order(const char *ida, const bench__change *a, const char *idb,
                        const bench__change *b);

#endif /* HARNESS_REPORT_COMPARE_H */
