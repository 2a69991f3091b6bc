/*
 * protocol.h: the worker protocol, the one definition of what a manager and its worker processes
 * say to each other (protocol.c writes and reads it; docs/architecture.md, "The worker protocol",
 * tells who sends what and when). Everything on the wire is a line of text: a kind word, then
 * its fields separated by single spaces, then a newline. Three channels carry it:
 *   - the job, manager to worker, in the BENCH_WORKER_JOB environment variable (one line
 *     without its newline): "index count mode step est_ns id";
 *   - the worker's lines, on its descriptor 3: PLAN, SET, METRIC, FACT, THREAD, WARM, WALL, S,
 *     PROC, END from a measuring worker (manager.c), READY, T, PROC, END from a driven one
 *     (ab.c); under --trace a measuring worker also sends TS, TSPAN, TSHARE and TC (trace.c);
 *   - a driven worker's commands, on its stdin: R (run a sample of n iterations), Q (stop).
 * Every line is written by bench__wire_format (or bench__wire_write) from a tagged struct and
 * read by bench__wire_parse (or bench__wire_read, bench__wire_getline) into one: no other file
 * spells a kind word or a field. The reader refuses anything the writer would not write (an
 * unknown kind, a missing or extra field, a number out of range, a NUL or newline inside, a line
 * longer than BENCH__WIRE_MAX_LINE) with one line naming what is wrong, and checks nothing that
 * needs the run (whether a metric matches process 0's, a thread index the benchmark's count):
 * that is the reader's caller's.
 */
#ifndef HARNESS_PROTOCOL_H
#define HARNESS_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/result.h"
#include "sys/proc.h"

/** The room for a trace span's name, its NUL included (a longer name is cut). */
#define BENCH__TRACE_NAME 64

/** The longest line, in bytes without its newline; it fits sys/proc.c's buffer with its
 * newline. */
#define BENCH__WIRE_MAX_LINE (sizeof(((bench__proc *)0)->buf) - 1)

/**
 * The line kinds: the name in the enum, the kind word on the wire, and who sends it.
 * (The job is not among them: it has no kind word, and travels in the environment.)
 */
#define BENCH__WIRE_KINDS(X)                                                                       \
    X(PLAN, "PLAN")     /* worker 0 of a timed plan: rounds mode step est_ns */                    \
    X(SET, "SET")       /* worker: bytes elements, per iteration, as the body declared */          \
    X(METRIC, "METRIC") /* worker: scaled min_fraction unit source name */                         \
    X(FACT, "FACT")     /* worker: value unit name */                                              \
    X(THREAD, "THREAD") /* worker of a threaded body: index cpu,cpu,... (or -) */                  \
    X(WARM, "WARM")     /* worker: iterations ns of its warm-up */                                 \
    X(WALL, "WALL")     /* worker: seconds sampling reason */                                      \
    X(SAMPLE, "S")      /* worker: iterations total_ns [one total per metric] */                   \
    X(PROC, "PROC")     /* every worker: cpu layout stack heap env minflt majflt */                \
    X(END, "END")       /* every worker, last: ok|skipped|failed message */                        \
    X(READY, "READY")   /* driven worker: its setup is done */                                     \
    X(TIME, "T")        /* driven worker: ns of the sample it was told to run */                   \
    X(RUN, "R")         /* to a driven worker: run a sample of this many iterations */             \
    X(QUIT, "Q")        /* to a driven worker: stop */                                             \
    X(TSAMPLE, "TS")    /* worker under --trace: phase start_ns iterations total_ns count */       \
    X(TSPAN, "TSPAN")   /* worker under --trace: thread what start_ns dur_ns name */               \
    X(TSHARE, "TSHARE") /* worker under --trace: ns count name, a span's total over samples */ \
    X(TCOUNTER, "TC")   /* worker under --trace: at_ns value name, a probe's reading (GPU) */

/** A line's kind. */
typedef enum bench__wire_kind {
#define BENCH__WIRE_ENUM(name, word) BENCH__WIRE_##name,
    BENCH__WIRE_KINDS(BENCH__WIRE_ENUM)
#undef BENCH__WIRE_ENUM
        BENCH__WIRE_NKINDS
} bench__wire_kind;

/** The kind word of a kind on the wire ("PLAN", "S", ...); "?" for none. */
const char *bench__wire_word(bench__wire_kind kind);

/** One line, parsed: `kind` says which member of the union holds its fields. */
typedef struct bench__wire_line {
    bench__wire_kind kind;
    union {
        struct {
            unsigned rounds;     /* processes the plan is measured in, >= 1 */
            bench_sampling mode; /* LINEAR or FLAT (AUTO is resolved by then) */
            uint64_t step;       /* iterations of the plan's first sample, >= 1 */
            double est_ns;       /* estimated ns per iteration, > 0 */
        } plan;
        struct {
            uint64_t bytes;    /* per iteration */
            uint64_t elements; /* per iteration */
        } set;
        struct {
            bool scaled;         /* some value was estimated from part of a sample */
            double min_fraction; /* smallest fraction of a sample it was counted for */
            char unit[sizeof(((bench__metric *)0)->unit)];     /* one word */
            char source[sizeof(((bench__metric *)0)->source)]; /* one word */
            char name[sizeof(((bench__metric *)0)->name)];     /* the rest of the line */
        } metric;
        struct {
            double value;
            char unit[sizeof(((bench__fact *)0)->unit)]; /* one word */
            char name[sizeof(((bench__fact *)0)->name)]; /* the rest of the line */
        } fact;
        struct {
            unsigned index;                  /* the thread, 0 .. threads - 1 */
            uint64_t cpus[BENCH__CPU_WORDS]; /* CPU c: bit c % 64 of word c / 64; none: "-" */
        } thread;
        struct {
            uint64_t iters; /* warm-up iterations */
            double ns;      /* ns they took, >= 0 */
        } warm;
        struct {
            double seconds;      /* of sampling, bookkeeping included, >= 0 */
            bench_sampling mode; /* the sampling mode used */
            const char *reason;  /* why sampling stopped: a static string, or NULL (none,
                                    or one this build does not know) */
        } wall;
        struct {
            double iters;    /* >= 1 */
            double total_ns; /* >= 0 */
            size_t nvalues;  /* one per metric, in the order of the METRIC lines */
            double values[BENCH__MAX_METRICS]; /* each metric's total over the sample */
        } sample;
        bench__proc_info proc; /* where the worker ran, its layout, page faults; known = true */
        struct {
            bench__status status;
            char message[sizeof(((bench__result *)0)->message)]; /* "" for none; cut to fit */
        } end;
        struct {
            double ns; /* >= 0 */
        } time;
        struct {
            uint64_t iters; /* >= 1 */
        } run;
        struct {
            unsigned phase;   /* BENCH__TRACE_WARM_UP, _REWARM or _MEASURE (trace.h) */
            uint64_t start_ns; /* CLOCK_MONOTONIC at the sample's start */
            double iters;     /* >= 1, as on the S line */
            double total_ns;  /* >= 0, as on the S line */
            uint64_t count;   /* samples merged into this line (warm-up ones), >= 1 */
        } tsample;
        struct {
            unsigned thread;   /* the thread of a threaded body, 0 .. threads - 1 */
            unsigned what;     /* BENCH__TRACE_HARNESS, _SPAN or _NOTE (trace.h) */
            uint64_t start_ns; /* CLOCK_MONOTONIC */
            uint64_t dur_ns;
            char name[BENCH__TRACE_NAME]; /* the rest of the line */
        } tspan;
        struct {
            double ns;      /* the span's time inside measured samples, >= 0 */
            uint64_t count; /* times it ran there */
            char name[BENCH__TRACE_NAME]; /* the rest of the line */
        } tshare;
        struct {
            uint64_t at_ns; /* CLOCK_MONOTONIC when the probe read it */
            double value;   /* finite, in the unit its name ends with */
            char name[BENCH__TRACE_NAME]; /* the rest of the line ("gpu_sm_clock_mhz") */
        } tcounter;
    };
} bench__wire_line;

/**
 * Writes line l into buf (len bytes), without a newline. Returns the line's length, or
 * BENCH_EINVAL with the reason in msg when l cannot be said on the wire (a word field empty or
 * with a space, a text field with a newline, a number out of the reader's range, a line longer
 * than BENCH__WIRE_MAX_LINE or len - 1).
 */
int bench__wire_format(char *buf, size_t len, const bench__wire_line *l, char *msg,
                       size_t msglen);

/** bench__wire_format, then the line and its newline to o. 0, BENCH_EINVAL (nothing written),
 * or BENCH_EIO when the write failed. */
int bench__wire_write(FILE *o, const bench__wire_line *l, char *msg, size_t msglen);

/**
 * Parses the n bytes of text (one line, without its newline) into out. Returns 0, or
 * BENCH_EINVAL with one line in msg naming what is wrong (out is then undefined).
 */
int bench__wire_parse(const char *text, size_t n, bench__wire_line *out, char *msg,
                      size_t msglen);

/**
 * Reads and parses the next line of a worker's channel (bench__proc_line, waiting at most until
 * deadline_ns). Returns 1 for a line in out; 0 at the end of the channel; BENCH_EINVAL for a
 * line that does not parse (it is consumed; msg says why); BENCH_EIO when the deadline passed;
 * BENCH_EUSAGE when the run was interrupted.
 */
int bench__wire_read(bench__proc *p, int64_t deadline_ns, bench__wire_line *out, char *msg,
                     size_t msglen);

/** Reads and parses one line of a stream (a driven worker's commands on its stdin): 1, 0 at
 * its end, or BENCH_EINVAL as bench__wire_read. */
int bench__wire_getline(FILE *in, bench__wire_line *out, char *msg, size_t msglen);

/* ---- the job ---- */

/** The job's sampling-mode field names a plan beyond the sampling modes: the worker of a paired
 * comparison (ab.c), each of whose samples the manager commands on the worker's stdin. */
#define BENCH__JOB_DRIVEN 3

/** A worker's job, from its manager (BENCH_WORKER_JOB). */
typedef struct bench__wire_job {
    unsigned index;  /* this worker's process, 0 .. count - 1 */
    unsigned count;  /* processes of the benchmark, >= 1 */
    int mode;        /* bench_sampling of the plan, or BENCH__JOB_DRIVEN */
    uint64_t step;   /* the plan's step (0: process 0 makes the plan) */
    double est_ns;   /* the plan's ns per iteration (0: process 0 makes the plan) */
    double share;    /* the share of its measurement time this process takes, (0, 1] */
    const char *id;  /* the benchmark (parse: points into the parsed text) */
} bench__wire_job;

/** Writes a job into buf; its length, or BENCH_EINVAL (msg) when it does not fit or the id has
 * a newline. */
int bench__wire_job_format(char *buf, size_t len, const bench__wire_job *job, char *msg,
                           size_t msglen);
/** Parses a job; 0, or BENCH_EINVAL with the reason in msg. */
int bench__wire_job_parse(const char *text, bench__wire_job *out, char *msg, size_t msglen);

/* ---- the reasons a worker refuses its job, on its END failed line (an older build of the
 * harness says them in the same words, so a paired comparison recognises them) ---- */

/** A job the worker cannot parse (a build whose harness speaks another version). */
#define BENCH__WIRE_BAD_JOB "malformed worker job"
/** The start of the message for a benchmark the program does not have. */
#define BENCH__WIRE_NO_BENCHMARK "this program has no benchmark"

#endif /* HARNESS_PROTOCOL_H */
