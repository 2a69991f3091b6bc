/*
 * history.h: the run history, a database that every run of times appends to (--history TARGET
 * or $BENCH_HISTORY) and that --history-show reads back as series with their change points and
 * trends (changepoint.h). TARGET is a file (a local SQLite database, history_sqlite.c) or a
 * PostgreSQL connection URL, "postgresql://..." or "postgres://..." (a shared database,
 * history_pg.c). Both schemas are in docs/results-format.md.
 *
 * A history is a handle, opened once per run (bench__history_open, which checks it before
 * anything is measured) and closed once. What the stores share, the series and the tests on
 * them, is history.c and history_show.c (the gate's decisions are compare/verdict.c's, and
 * what a reader sees is printed by report/report_history.c); the stores differ only in their
 * SQL and their connections (history_store.h).
 *
 * Invariant: a target that is not a history of this schema (not SQLite, empty, another schema,
 * damaged, a PostgreSQL schema newer than this program or altered by hand) is refused with one
 * line naming it (never a password) and is never written; a run is appended in one transaction,
 * so a reader or a concurrent writer sees all of it or none. A store that was not built
 * (no libsqlite3, no libpq) answers with BENCH_EUNAVAIL and the reason.
 */
#ifndef HARNESS_HISTORY_H
#define HARNESS_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/base.h"
#include "core/result.h"
#include "compare/verdict.h"
#include "stats/changepoint.h"
#include "sys/context.h"

/** The schema version this program writes and reads (meta.schema_version). */
#define BENCH__HISTORY_SCHEMA 2
/** The level of --history-show's change points (per series) and trends (over the series shown,
 * Bonferroni). */
#define BENCH__HISTORY_ALPHA 0.05

/** An open history (history_store.h); opened by bench__history_open, freed by _close. */
typedef struct bench__history bench__history;

/** Whether target names a PostgreSQL history (a "postgresql://" or "postgres://" URL). */
bool bench__history_is_url(const char *target);

/**
 * Opens the history at target and checks it, before anything runs: a file that is absent (it
 * will be created by the first append when `create`) or a history database this program can
 * append to; a PostgreSQL database is connected to, and its schema is made or migrated forward
 * when `create` (and refused when newer than this program). Nothing else is written. *out gets
 * the handle; 0, or a negative error code with one line in msg (then *out is NULL).
 */
int bench__history_open(const char *target, bool create, bench__history **out, char *msg,
                        size_t len);
/** Closes a history; NULL is a no-op. */
void bench__history_close(bench__history *h);
/** How messages and --json name the history: its path, or its URL without any password. */
const char *bench__history_name(const bench__history *h);

/**
 * Appends one run: its context, the n results (each with its comparison when it has one) and
 * their per-process medians, in one transaction. `baseline` names the baseline the run was
 * compared with (NULL: none). `run_key` (--run-id; NULL: none) names a run that parts of one
 * sharded run share: the first part makes it, the others add their results to it (a benchmark
 * it already holds is refused: nothing of this part is written). The run's id goes to *run_id
 * (when not NULL). 0, or a
 * negative error code with one line in msg that says whether the run is in the history (it is
 * wholly or not at all; when a connection was lost as it committed, the line says which it
 * found on a new connection, or that it could not tell).
 */
int bench__history_append(bench__history *h, const bench__context *ctx,
                          const bench__result *results, size_t n, const char *baseline,
                          const char *run_key, long long *run_id, char *msg, size_t len);

/**
 * --history-copy FROM --history TO: copies every run of history `from` into `to` (made when
 * absent), each run in one transaction, with its id, its results and their per-process
 * medians; a run `to` already holds (the same id, time and program) is skipped, so a copy run
 * again copies nothing, and a run of the same id that differs stops the copy (BENCH_EINVAL).
 * The counts go to *copied and *skipped. 0, or a negative error code with one line in msg.
 */
int bench__history_copy(bench__history *from, bench__history *to, size_t *copied,
                        size_t *skipped, char *msg, size_t len);

/** Fewest earlier runs a benchmark needs before --history-gate tests it. */
#define BENCH__HISTORY_GATE_MIN BENCH__CP_MIN_SEGMENT

/** One benchmark of the run the history gate judged. */
typedef struct bench__history_gated {
    char *id;           /* the benchmark (owned) */
    size_t n;           /* medians in its window, the newest run's included */
    long long prev_run; /* its newest earlier run in the window; 0: none */
    bool tested;        /* n is BENCH__HISTORY_GATE_MIN + 1 or more: it was judged */
    bool judged;        /* tested and bench__gate_window gave a result (else it passes) */
    bench__gate_result g; /* the judgement (compare/verdict.c), when judged */
} bench__history_gated;

/** What --history-gate found in one run, for report/ to print and the caller to act on. */
typedef struct bench__history_gate_run {
    bench__history_gated *b; /* the run's benchmarks, in the history's order */
    size_t n;
    size_t tested;          /* how many were tested (the Bonferroni factor) */
    size_t window;          /* earlier runs each was tested against, at most */
    double noise_threshold; /* relative, as --noise-threshold */
    double alpha;           /* the family level */
} bench__history_gate_run;

void bench__history_gate_free(bench__history_gate_run *g);

/** A benchmark the history gate found stepped up in the newest run. */
typedef struct bench__history_step {
    char *id;           /* the benchmark (owned) */
    long long prev_run; /* its newest earlier run: the program to confirm the step against */
} bench__history_step;

typedef struct bench__history_steps {
    bench__history_step *s;
    size_t n;
} bench__history_steps;

void bench__history_steps_free(bench__history_steps *s);

/**
 * --history-gate: for each benchmark of run `run_id` that ran ok and that `only` names (only[0..
 * nonly); NULL: every one: a part of a sharded run judges its own), reads its last `window`
 * earlier runs and has compare/verdict.c judge it (bench__gate_window: its median as a step
 * against them, and a trend over the same runs, Bonferroni over the benchmarks tested, family
 * level alpha, against noise_threshold), into *out (zeroed first; bench__history_gate_free
 * releases it). Prints nothing (report/report_history.c does). Reads only. 0, or a negative
 * error code with one line in msg.
 */
int bench__history_gate(bench__history *h, long long run_id, const char *const *only,
                        size_t nonly, size_t window, double noise_threshold, double alpha,
                        bench__history_gate_run *out, char *msg, size_t len);

/**
 * What a judged run means for the gate: *regressed is set when a benchmark's slowing trend fails
 * or its step fails; with `steps` (not NULL; zeroed first), a benchmark that fails by its step
 * alone goes to *steps instead (with its newest earlier run), for the caller to confirm by a
 * paired run.
 */
void bench__history_gate_outcome(const bench__history_gate_run *g, bench__history_steps *steps,
                                 bool *regressed);

/**
 * Selects the benchmark ids to show: marks selected[0..n) for ids[0..n); 0, or -1 after one
 * line on stderr.
 */
typedef int (*bench__history_selector)(const char *const *ids, size_t n, bool *selected,
                                       void *arg);

/** A change of the benchmark's own code, as a series' change says it. */
#define BENCH__HISTORY_CODE_CHANGED "benchmark code changed"

/** A change of a series' environment (kernel, governor, compiler, flags) between two runs. */
typedef struct bench__history_change {
    size_t index;      /* the first run with the new facts (an index into the series) */
    char *what;        /* "kernel 6.1 -> 6.8, flags -O2 -> -O3" */
    bool step_removed; /* a change point found there was not counted as one */
} bench__history_change;

/** One benchmark's series on one machine as --history-show read it, with what was found in
 * it. */
typedef struct bench__history_series {
    char *id;             /* the benchmark */
    char *machine;        /* the machine ("CPU, N cores, M GiB") when the history holds the
                             benchmark on more than one; NULL when on one */
    size_t nchanges;      /* changes of the environment within the series, oldest first */
    bench__history_change *changes;
    size_t n;             /* runs where it was ok, oldest first */
    long long *runs;      /* their ids */
    char **revisions;     /* their revisions ("-" when none) */
    char **programs;      /* their programs' hashes, "sha256:HEX" ("" when none recorded) */
    double *median_ns;    /* their medians, ns per iteration */
    bench__cp_result found; /* change points (indices into the arrays) and the trend */
} bench__history_series;

/** The series one --history-show selected; bench__history_view_free releases them. */
typedef struct bench__history_view {
    bench__history_series *s;
    size_t n;
    size_t trend_tests; /* series whose trend was tested (3 or more runs): the Bonferroni factor */
} bench__history_view;

void bench__history_view_free(bench__history_view *v);

/** One row of --history-show's list of runs. */
typedef struct bench__hrun {
    long long id;
    char *time, *revision, *host, *baseline, *program;
    int dirty;            /* 1 yes, 0 no, -1 not known */
    long long benchmarks; /* results recorded */
} bench__hrun;

/** Every run of history h, by id, into *rows (*n of them; bench__history_runs_free releases
 * them). 0, or a negative error code with one line in msg. */
int bench__history_runs(bench__history *h, bench__hrun **rows, size_t *n, char *msg,
                        size_t len);
void bench__history_runs_free(bench__hrun *rows, size_t n);

/**
 * --history-show: for each benchmark of history h the selector picks, its series (run,
 * revision, median) with its change points and trend, into *view (zeroed first;
 * bench__history_view_free releases it). Prints nothing but the warning of a row skipped
 * (report/report_history.c prints the view). Reads only. 0, or a negative error code with one
 * line in msg (BENCH_EUSAGE: the selector refused and already said why; msg is then "").
 */
int bench__history_read(bench__history *h, bench__history_selector select, void *arg,
                        bench__history_view *view, char *msg, size_t len);

/**
 * --history-show --json FILE: writes the series of `view` (read from history `history`) with
 * their change points and trends to path, atomically (docs/results-format.md, "history
 * series"). 0, or a negative error code with one line in msg.
 */
int bench__history_view_write(const char *path, const char *history,
                              const bench__history_view *v, char *msg, size_t msglen);

/**
 * Prints the newest run of history h in the bencher Metric Format on o (store.h,
 * bench__bmf_print): its benchmarks that ran ok and that select picks, with their medians and
 * intervals as recorded; "{}" for a history without runs. 0, or a negative error code with one
 * line in msg (empty when select printed its own).
 */
int bench__history_bmf(FILE *o, bench__history *h, bench__history_selector select, void *arg,
                       char *msg, size_t len);

/** A benchmark's newest run in a history, as a comparison reads it. */
typedef struct bench__history_last {
    long long run;    /* its run id; 0: the history has no ok run of it with process medians */
    char revision[64]; /* that run's revision ("-" when none) */
    char program_hash[80]; /* the program that measured it ("" when unknown) */
    double *medians;  /* its per-process medians, ns per iteration (owned) */
    size_t n;
} bench__history_last;

/**
 * For each of the n ids, its newest run in history h on this machine (ctx: CPU, cores,
 * logical CPUs, memory; a run that did not record a fact matches it) that ran ok in two or more
 * processes, into out[i] (zeroed first; bench__history_last_free releases them). Reads only;
 * a history that does not exist yet has none. 0, or a negative error code with one line in msg.
 */
int bench__history_last_runs(bench__history *h, const bench__context *ctx,
                             const char *const *ids, size_t n, bench__history_last *out,
                             char *msg, size_t len);
void bench__history_last_free(bench__history_last *l, size_t n);

/* ---- the programs kept for confirming steps: beside a history file (FILE.programs/), or for a
 * PostgreSQL history in this user's cache and in the database (whose copy runs only under the
 * trust rule: run/history_confirm.c) ---- */

/** Programs kept beside a history by default (--history-programs N). */
#define BENCH__HISTORY_PROGRAMS 20

/** The directory of the programs kept for history h: "PATH.programs" for a file,
 * CACHE/harness/history-programs/KEY for PostgreSQL (KEY: a hash of the server and database). */
void bench__history_programs_dir(const bench__history *h, char *dir, size_t len);

/**
 * Keeps the running program (ctx->program_hash) for history h: copied to DIR/HEX.program unless
 * it is there (DIR: bench__history_programs_dir), signed with this user's key, and recorded
 * (a file's programs table; for PostgreSQL HEX.mac beside the copy, and the program stored in
 * the database's programs table unless its hash is there or it is larger than
 * BENCH__HISTORY_PROGRAM_MAX); then only the `keep` most recently used programs stay (the
 * others' files and rows go). keep 0: nothing is copied, and every program kept before goes
 * (files and rows). Copying stops after timeout_s. 0, or a negative error code with one line in
 * msg (the history's runs are untouched either way).
 */
int bench__history_keep_program(bench__history *h, const bench__context *ctx, size_t keep,
                                double timeout_s, char *msg, size_t len);

/** The largest program a PostgreSQL history stores in its database (bytes); a larger one is
 * kept on the machine that ran it only. */
#define BENCH__HISTORY_PROGRAM_MAX (64.0 * 1024 * 1024)

/** Whether history h can hold copies of its programs itself (a PostgreSQL database). */
bool bench__history_holds_programs(const bench__history *h);
/** Whether history h holds a copy of program `hash` itself, into *there, without reading it.
 * 0, or a negative error code with one line in msg. */
int bench__history_program_stored(bench__history *h, const char *hash, bool *there, char *msg,
                                  size_t len);

/**
 * Opens the copy of program `hash` that history h holds itself, to run: its bytes written to a
 * private temporary file (a new 0700 folder from mkdtemp, the file made there without following
 * a link), then opened by bench__snapshot_open with `bytes`, which checks them and copies them
 * into a sealed memory file while hashing, and requires the SHA-256 to be `hash`; the temporary
 * file and folder are removed before it returns. *fd as bench__snapshot_open gives it. 0;
 * BENCH_EUNAVAIL when h holds no copy; else bench__snapshot_open's errors. msg says why. Whether
 * the program may run at all is the caller's to decide (the trust rule, docs/cli.md).
 */
int bench__history_program_open(bench__history *h, const char *hash, int64_t deadline_ns,
                                int *fd, double *bytes, char *msg, size_t len);

/**
 * The program that measured run `run_id` of history h: its hash into hash ("" when
 * the run recorded none) and this user's signature of it into mac ("" when it is not kept).
 * 0, or a negative error code with one line in msg.
 */
int bench__history_program(bench__history *h, long long run_id, char *hash, size_t hlen,
                           char *mac, size_t mlen, char *msg, size_t len);

#endif /* HARNESS_HISTORY_H */
