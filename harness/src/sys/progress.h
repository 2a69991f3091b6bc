/*
 * progress.h: the one progress line of a long run on a terminal ("benchmark 3 of 26, ~41 s
 * left"), rewritten in place on stderr and cleared at the end. Any mode that measures for long
 * calls it: the default run (run/manager.c), the paired comparisons of --ab and of confirmations
 * (run/ab.c). It draws only when the caller said it may (stderr a terminal, a pretty report: the
 * request decides) and only for runs longer than a few seconds, so files, pipes and short runs
 * never see it.
 */
#ifndef BENCH_REPORT_PROGRESS_H
#define BENCH_REPORT_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** A run's progress line is shown once the run is expected to last this long (s), or has. */
#define BENCH__PROGRESS_MIN_S 3.0

/** One run's progress line. Zero-initialised it is off. */
typedef struct bench__progress {
    bool on;          /* the caller allows drawing (stderr a terminal) */
    bool shown;       /* a line is on the terminal now */
    size_t total;     /* units of work in the run (processes, benchmarks); the caller may
                       * correct it as the run learns (a plan that takes fewer processes) */
    double est_s;     /* the expected length of the whole run (s) */
    bool est_limit;   /* est_s is a limit the run never passes (a comparison's budget) */
    int64_t start_ns; /* when the run started (monotonic ns) */
    int64_t drawn_ns; /* when the line was last drawn (monotonic ns) */
} bench__progress;

/** Starts a run of `total` units expected to take est_s seconds (a limit it never passes when
 * est_limit); draws nothing unless `on`. */
void bench__progress_start(bench__progress *p, bool on, size_t total, double est_s,
                           bool est_limit);

/** Redraws the line: `done` units of the total are finished, the label (printf-style: "benchmark
 * 3 of 26") says where the run is; the time left follows it. At most ten redraws a second. */
void bench__progress_step(bench__progress *p, size_t done, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Clears the line, if one is shown, so that other output can follow on the terminal; the next
 * step draws it again. */
void bench__progress_clear(bench__progress *p);

/** Ends the run: clears the line and draws no more. */
void bench__progress_finish(bench__progress *p);

#endif
