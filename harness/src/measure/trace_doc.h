/*
 * trace_doc.h: a recorded run as its trace is written, after coarsening (trace.c makes it and
 * writes it as Chrome trace event format JSON; trace_proto.c writes it as Perfetto's protobuf).
 * Private to run/.
 */
#ifndef HARNESS_TRACE_DOC_H
#define HARNESS_TRACE_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** What an item is. */
typedef enum bench__trace_kind {
    BENCH__TI_SLICE,   /* the harness's: a process, a wait, warm-up, planning, analysis, a pair */
    BENCH__TI_SAMPLE,  /* one sample, or several merged */
    BENCH__TI_SPAN,    /* a span of the body */
    BENCH__TI_COUNTER, /* a probe metric's value per iteration at a measured sample */
    BENCH__TI_INSTANT, /* an annotation: an estimate, how a process ended, a note */
} bench__trace_kind;

/** One item of the trace. */
typedef struct bench__trace_item {
    bench__trace_kind kind;
    unsigned pid, tid;     /* the trace's process (1: the manager) and thread */
    int64_t ts_ns, dur_ns; /* since the run began; dur_ns of a slice, sample or span */
    const char *name;
    const char *args;      /* more fields, as JSON object members, or NULL */
    const char *end;       /* a process's slice: how it ended, or NULL */
    double iters, total_ns; /* a sample's */
    uint64_t merged;       /* a sample: the samples it stands for (1: itself) */
    double value;          /* a counter's */
    bool reading;          /* a counter: a device's state as read (args.value), not a metric per
                            * iteration (args.per_iteration) */
} bench__trace_item;

/** A process of the trace (pid 1, the manager, included) and its threads' names. */
typedef struct bench__trace_proc {
    unsigned pid;
    const char *name;
    unsigned nthreads;
    char *const *threads; /* nthreads names, an entry NULL for none */
} bench__trace_proc;

/** The document. */
typedef struct bench__trace_doc {
    const bench__trace_item *items;
    size_t n;
    const bench__trace_proc *procs;
    size_t nprocs;
    size_t max_bytes;   /* the bound */
    unsigned coarsened; /* 1, or the factor */
} bench__trace_doc;

/** The document as Perfetto's protobuf (a Trace message: packets of track descriptors and
 * track events), in *out (malloc'd) and *len; 0, or BENCH_ENOMEM. */
int bench__trace_proto(const bench__trace_doc *doc, char **out, size_t *len);

#endif /* HARNESS_TRACE_DOC_H */
