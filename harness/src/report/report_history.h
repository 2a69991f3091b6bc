/*
 * report_history.h: the run history in words (report_history.c): --history-show's runs and
 * series, the history gate's findings, and the lines of a history step's paired confirmation.
 * What is printed was decided before: the series and the gate's windows by store/history_show.c
 * with compare/verdict.c, a confirmation's outcome by compare/verdict.c; these only word it.
 */
#ifndef HARNESS_REPORT_HISTORY_H
#define HARNESS_REPORT_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compare/compare.h"
#include "compare/verdict.h"
#include "store/history.h"

/**
 * --history-show: the runs[0..nruns) as a table, then each series of `view` with its changes,
 * change points and trend (trends adjusted over view->trend_tests series).
 */
void bench__report_history_show(FILE *o, const bench__hrun *runs, size_t nruns,
                                const bench__history_view *view);

/**
 * --history-gate: the line that says how many benchmarks were tested, then one line per
 * benchmark not gated (too few earlier runs) and per finding (a failing step, a slowing trend:
 * a warning when it does not fail).
 */
void bench__report_history_gate(FILE *o, const bench__history_gate_run *g);

/* ---- a history step's paired confirmation (--history-confirm, --history-gate) ---- */

/** --history-confirm's heading: no change point, none run (--confirm-time 0, `never`), or
 * what is run (each pair for `seconds` at most). */
void bench__report_confirm_heading(FILE *o, size_t npoints, bool never, double seconds);
/** The start of the line of change point cp of series s: "ID: change point at run R (+S%),
 * within runs A to B: ", finished by one of the functions below. */
void bench__report_confirm_point(FILE *o, const bench__history_series *s, const bench__cp *cp);
/** "not a code change: runs A to B (A and B when `pair`) measured the same program (HASH), ..." */
void bench__report_confirm_same_program(FILE *o, long long run_a, long long run_b, bool pair,
                                        const char *hash);
/** "cannot confirm: WHY" (why as given: it is escaped here). */
void bench__report_confirm_cannot(FILE *o, const char *why);
/**
 * What the paired run of the programs of runs run_a and run_b (`pairs` pairs) says of the step
 * (check, bench__verdict_step_check): its change and interval; with `placed` (not NULL), the
 * step placed at run_b where the program changed, with its size there.
 */
void bench__report_confirm_checked(FILE *o, bench__step_check check, const bench__change *paired,
                                   size_t pairs, long long run_a, long long run_b,
                                   const bench__cp *placed);
/** "interrupted by SIGNAL" (signo: the signal that stopped the confirmation). */
void bench__report_confirm_interrupted(FILE *o, int signo);

/** What becomes of a history gate's step of benchmark id that its paired check could not run. */
typedef enum bench__gate_unchecked {
    BENCH__GATE_NOT_RUN,   /* --confirm-time 0 */
    BENCH__GATE_NO_CHECK,  /* why says why (escaped here) */
    BENCH__GATE_SAME_PROG, /* run `run` measured this very program: it does not fail */
} bench__gate_unchecked;

/** The gate's step of benchmark id, not checked by a paired run (what, why, run). */
void bench__report_gate_unchecked(FILE *o, const char *id, bench__gate_unchecked what,
                                  const char *why, long long run);
/** "ID: confirming the step: the program of run R against this one, paired (N s at most)". */
void bench__report_gate_confirming(FILE *o, const char *id, long long run, double seconds);
/** The paired check of the gate's step of benchmark id against run `run`'s program: its
 * verdict, change and interval, `pairs`, and whether it fails the gate. */
void bench__report_gate_checked(FILE *o, const char *id, const bench__change *paired,
                                size_t pairs, long long run, bool fails);

#endif /* HARNESS_REPORT_HISTORY_H */
