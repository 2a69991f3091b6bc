/*
 * client.h: the modes of the one run pipeline (pipeline.c: select, plan, measure in workers,
 * estimate, compare, report, exit code). A mode is a client: it supplies the plan, the probes
 * and how worker processes start, and the few rules in which it differs (how a result compares
 * with its baseline entry, how a result is printed); saving, summaries, files and the exit code
 * are the pipeline's, once for every mode.
 */
#ifndef HARNESS_CLIENT_H
#define HARNESS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compare/compare.h"
#include "run/pipeline.h"

typedef struct bench__client {
    const char *mode;      /* context.mode of its results and baselines; NULL: times */
    const char *save_with; /* the flags that save a baseline of this mode, before
                            * --save-baseline ("" for times) */
    const char *method;    /* how its comparison decides, for the summary's heading */
    /* A baseline of the other mode was named: what follows "baseline 'NAME'" on its line. */
    const char *mismatch;
    /* It measures time: drift canaries and a program snapshot with a baseline, suite drift
     * and confirmation of suspects in a comparison, Holm's correction over the suite, the
     * context's timing warnings. */
    bool times;
    /* Sets its comparison options in c->cmp (may be NULL: the command line's stand). */
    void (*configure)(bench__request *c);
    /* Sets the plan, the probes and how workers start into c->run, alike in the process the
     * user started (worker false) and in each worker process. 0; or -1 with one line in msg. */
    int (*setup)(bench__request *c, bool worker, char *msg, size_t msglen);
    /* Undoes setup. */
    void (*teardown)(bench__request *c);
    /* Says on stderr what is about to run (may be NULL). */
    void (*announce)(const bench__request *c, size_t nsel);
    /* Refines r's estimates after the statistics (may be NULL). */
    void (*estimate)(bench__result *r);
    /* Compares r (measured) with its baseline entry e (measured) as r finishes: fills *ch
     * with the change the summary lists and sets r's changes as its reports show them;
     * *old_side (times only) keeps e's side for the suite's final pass. False when it could
     * not compare (out of memory). */
    bool (*compare)(const bench__request *c, const bench__entry *e, bench__result *r,
                    bench__change *ch, bench__side *old_side);
    /* Compares two saved entries (--load-baseline), when its verdicts need no suite-wide
     * pass; NULL: the pipeline compares the sides of every pair at once (times). */
    void (*compare_saved)(const bench__request *c, const bench__entry *old, const bench__entry *cur,
                          bench__change *ch);
    /* The terminal reporter, and what it prints of a result's change under it. */
    void (*pretty)(bench__reporter *rep, FILE *out, bool color);
    void (*show_change)(FILE *o, const bench__request *c, const bench__result *r, bool color);
} bench__client;

/** The default mode (times, client.c) and --instructions (instr.c). */
extern const bench__client bench__time_client;
extern const bench__client bench__instr_client;

/** The client of the mode the command line asked for. */
const bench__client *bench__client_for(const bench__request *c);
/** The client whose results carry context.mode `mode` (NULL or "": times). */
const bench__client *bench__client_of_mode(const char *mode);

/** The run's probes (CUDA always, perf events and allocations when asked); 0, or -1 with one
 * line in msg. */
int bench__request_make_probes(bench__request *c, char *msg, size_t msglen);
/** Releases the probes bench__request_make_probes made. */
void bench__request_destroy_probes(bench__request *c);

#endif /* HARNESS_CLIENT_H */
