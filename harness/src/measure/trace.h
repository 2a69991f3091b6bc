/*
 * trace.h: --trace FILE, the run as a timeline (trace.c), and the spans a body marks inside
 * itself (span.c). Private to run/.
 *
 * Two sides. A measuring worker process (or the runner of an --in-process run) says what it
 * did and when as lines of the worker protocol: TS for every sample (warm-up ones included),
 * TSPAN for a slice of its own (warm-up, planning, clock calibration, a span of the body), and
 * TSHARE for a span's total over the measured samples; bench__trace_emit sends them on the
 * worker's channel, or straight to the recorder in the one process of an --in-process run. The
 * recorder (the manager) keeps them, with its own slices (its waits for each worker, analysis,
 * confirmation, A/B pairs), a track per worker process and per thread, probe metrics as
 * counters and each benchmark's estimate as an annotation, and at the end of the run writes
 * them as one Chrome trace event format document (JSON), atomically, bounded in size.
 */
#ifndef HARNESS_TRACE_H
#define HARNESS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/result.h"
#include "measure/protocol.h"

/** The phase of a TS line's sample. */
enum { BENCH__TRACE_WARM_UP = 0, BENCH__TRACE_REWARM = 1, BENCH__TRACE_MEASURE = 2 };

/** What a TSPAN line is: a slice of the harness's (warm-up, planning, clock calibration), a
 * span of the body, or a note at its start (an instant, dur_ns 0). */
enum { BENCH__TRACE_HARNESS = 0, BENCH__TRACE_SPAN = 1, BENCH__TRACE_NOTE = 2 };

/** The default bound of a trace file, bytes (BENCH_TRACE_MAX_BYTES replaces it): past it,
 * samples, spans and counters are coarsened, and the file and stderr say so. */
#define BENCH__TRACE_MAX_BYTES 5000000

/** Span slices one thread of one process draws at most (the first 8 of each sample); the
 * others still count in the shares (TSHARE), and the file says how many were left out. */
#define BENCH__TRACE_SPANS_DRAWN 400

/* ---- the measuring side ---- */

/** A worker under --trace: its trace lines go to out (its channel); spans are switched on. */
void bench__trace_worker(FILE *out);

/** Whether this process records a trace (a worker under --trace, or the recorder's process). */
bool bench__trace_on(void);

/** Whether this process's trace lines go to a manager (a worker under --trace). */
bool bench__trace_to_channel(void);

/** One trace line (TS, TSPAN, TSHARE) of this process: to the channel, or to the recorder. */
void bench__trace_emit(const bench__wire_line *l);

/** A TSPAN line of this process: a slice `name` of thread `thread` from start_ns to now. */
void bench__trace_span(unsigned thread, const char *name, int64_t start_ns);

/* ---- the recorder (the process that writes FILE) ---- */

/** Starts recording the run into path (written by bench__trace_write); spans are switched on
 * for an --in-process run. */
void bench__trace_start(const char *path);

/** A worker process (or an --in-process benchmark's round) starts: process `proc` of `count`
 * of benchmark `id`, operating-system process id `pid`. Its lines follow. */
void bench__trace_process_begin(const char *id, unsigned proc, unsigned count, long pid);

/** A line of the running process (any kind: TS, TSPAN, METRIC, S, PROC, THREAD, END...). */
void bench__trace_take(const bench__wire_line *l);

/** The running process ended; how: NULL for a normal end, else what happened ("killed by
 * signal 11 (SIGSEGV)", "timed out after 5 s", ...). */
void bench__trace_process_end(const char *how);

/** A slice of the recorder's own (a wait, analysis, a confirmation, an A/B pair), nested; one
 * that began at start_ns. */
void bench__trace_begin(const char *name);
void bench__trace_begin_at(const char *name, int64_t start_ns);
void bench__trace_beginf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bench__trace_end(void);

/** A benchmark's final estimate, as an annotation with its interval. */
void bench__trace_estimate(const bench__result *r);

/** Writes the recorded run to its file atomically; 0, or -1 after one line on stderr naming the
 * file and what failed. Does nothing (0) when no trace was started. */
int bench__trace_write(void);

/* ---- spans of a body (span.c) ---- */

/** Called by the runner: a thread's drawn spans sent (at a sample boundary); the time of each
 * span name in the measured sample that just ended, of total_ns, handed on (TSHARE lines, or
 * into the result); and the end of its body: true when a span was misused (one left open
 * included), with one line naming it in why, for the caller to fail the benchmark with. */
void bench__spans_flush(bench_t *b);
void bench__spans_sample(bench_t *b, double total_ns);
bool bench__spans_finish(bench_t *b, char *why, size_t len);

#endif /* HARNESS_TRACE_H */
