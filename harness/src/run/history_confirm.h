/*
 * history_confirm.h: a history's steps confirmed by running the programs on both sides of them
 * again, paired (history_confirm.c): --history-confirm and --history-gate's confirmation.
 */
#ifndef HARNESS_HISTORY_CONFIRM_H
#define HARNESS_HISTORY_CONFIRM_H

#include <stdbool.h>
#include <stdio.h>

#include "run/pipeline.h"

/**
 * --history-confirm: for each change point of the series in `view` (read from the history
 * c->history_show), finds the program change nearest it within its location interval, runs the
 * programs of the runs on both sides of that change again, paired, on that benchmark, and
 * prints to o which runs were compared and whether the step is confirmed, not reproduced, or
 * cannot be checked (and why); with no program change in the interval, that the step is not the
 * code's. A confirmed step is placed at its program change in *view (bench__cp_place). 0, or -1
 * when the run was interrupted.
 */
int bench__history_confirm(FILE *o, const bench__request *c, bench__history_view *view);
/**
 * --history-gate's steps (the benchmarks whose newest run stepped up against the runs before):
 * each confirmed by running the program of its newest earlier run against this one
 * (program_hash), paired. Prints one line per step to o; sets *regressed for a step that is
 * confirmed, inconclusive, or cannot be checked; a step that is not reproduced, or that the
 * same program measured on both sides, does not fail. 0, or -1 when interrupted.
 */
int bench__history_confirm_gate(FILE *o, const bench__request *c, const char *program_hash,
                                const bench__history_steps *steps, bool *regressed);

#endif /* HARNESS_HISTORY_CONFIRM_H */
