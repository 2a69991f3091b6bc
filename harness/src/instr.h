/*
 * instr.h: instruction-count mode (--instructions, instr.c): exact instructions per iteration
 * counted by valgrind's callgrind, and the comparison of such counts with a baseline.
 *
 * A run in this mode saves and reads results like a time run, with context.mode
 * "instructions" and a per-sample metric "instructions" (source "callgrind"); a baseline of one
 * mode is never compared with a run of the other.
 */
#ifndef HARNESS_INSTR_H
#define HARNESS_INSTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compare.h"
#include "internal.h"

/** Smallest relative change of instructions per iteration reported (0.1%). */
#define BENCH__INSTR_DEFAULT_THRESHOLD 0.001
/** context.mode of a run in this mode. */
#define BENCH__INSTR_MODE "instructions"

/** What the command line asks of an instruction-mode run. */
typedef struct bench__instr_request {
    const bench__instance *all; /* every benchmark, sorted */
    const bool *selected;       /* which of them run */
    size_t n;
    const bench__run_options *run; /* settings and statistics options */
    const char *const *filters;    /* the command line's FILTERs, passed on to the worker */
    size_t nfilters;
    bool exact;
    uint64_t iterations; /* N of the fixed plan {1, N, 2N}; 0: chosen per benchmark */
    bool cache_sim;      /* also simulate the caches (D1 and LL data misses) */
    double threshold;    /* smallest relative change that is a regression or improvement */
    bench__format format;
    bool color;
    const char *json_path;     /* --json FILE, or NULL */
    const char *baseline;      /* --baseline NAME, or NULL */
    const char *baseline_path; /* its file */
    bool strict;               /* --baseline-strict: new and removed benchmarks are an error */
    /* The baseline's selected benchmarks that this program lacks, with their status (removed,
     * or skipped when the baseline skipped them); borrowed */
    const char *const *absent_ids;
    const bench__verdict *absent_verdicts;
    size_t nabsent;
    const char *save_baseline; /* --save-baseline NAME, or NULL */
    const char *save_path;     /* its file */
    const char *baseline_dir;  /* created for --save-baseline */
    bool fail_on_regression;
} bench__instr_request;

/**
 * Runs the selected benchmarks under valgrind (callgrind), reports the instructions per
 * iteration, compares and saves as asked. Returns the exit code: 0; 1 a regression with
 * fail_on_regression; 2 valgrind missing, a build without the mode, or a bad baseline; 3 a
 * benchmark failed (or the run under valgrind died).
 */
int bench__instr_run(const bench__instr_request *q);

/**
 * The worker inside valgrind (hidden flag --instructions-worker DIR): runs the selected
 * benchmarks with the fixed plan, collecting only inside samples, and writes what it measured
 * to file descriptor 3. Returns the exit code.
 */
int bench__instr_worker_main(const bench__instance *all, const bool *selected, size_t n,
                             const char *dir, uint64_t iterations, bool cache_sim,
                             bench__run_options *opt);

/**
 * --load-baseline NEW --baseline OLD where both hold instruction counts: compares the selected
 * (sel[i] for cur->entries[i]) entries that both have and prints the summary, with the ns
 * benchmarks of either file that have a status instead (ids[i], verdicts[i]: skipped, new,
 * removed). Returns the exit code.
 */
int bench__instr_compare_saved(const bench__saved *cur, const bench__saved *old, const bool *sel,
                               const char *const *ids, const bench__verdict *verdicts, size_t ns,
                               const char *old_name, double threshold, bool strict,
                               bool fail_on_regression, bool color);

/** Whether a saved run's context.mode is instruction mode. */
bool bench__instr_is_mode(const char *mode);

/**
 * Per-iteration count from samples of `iters` iterations and `totals` counts: the slope of a
 * line with an intercept, which cancels a constant cost per sample. With two samples,
 * (totals[1] - totals[0]) / (iters[1] - iters[0]). NAN when it cannot be computed.
 */
double bench__instr_per_iter(const double *iters, const double *totals, size_t n);

/**
 * The verdict for a count per iteration that went from `old` to `cur`: regressed when it grew
 * by more than `threshold` (relative), improved when it shrank by more, else no change;
 * not compared when old is not positive or cur is not a number.
 */
bench__verdict bench__instr_verdict(double old, double cur, double threshold);

#endif /* HARNESS_INSTR_H */
