/*
 * pipeline.h: the one run pipeline (pipeline.c: select, plan, measure in workers, estimate,
 * compare, report, exit code) and what it is asked to do (bench__request: everything the
 * command line asked for, filled by cli/cli_options.c), with the pieces it is made of:
 * selection (select.c), baselines by name and the confirmation of suspects (baselines.c),
 * two saved runs compared without measuring (compare_files.c), and the change since the last
 * run (since_last.c).
 */
#ifndef HARNESS_PIPELINE_H
#define HARNESS_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compare/compare.h"
#include "core/base.h"
#include "core/options.h"
#include "core/probe.h"
#include "core/registry.h"
#include "core/result.h"
#include "report/report.h"
#include "run/run.h"
#include "store/history.h"
#include "store/store.h"
#include "sys/context.h"

#define BENCH__MAX_FILTERS 64
#define BASELINE_NAME_MAX 64

/** Everything the command line asked for. */
typedef struct bench__request {
    bench__run_options run;
    const char *filters[BENCH__MAX_FILTERS];
    size_t nfilters;
    bool list;
    bool exact;
    bool help;
    bool version;
    const char *json_path;
    bench__format format;
    int color; /* -1 auto, 0 never, 1 always */
    bool context;
    const char *save_baseline;
    const char *baseline;
    const char *load_baseline;
    const char *baseline_dir;
    bool strict;           /* --baseline-strict: new and removed benchmarks are an error */
    bool strict_set;       /* --baseline-strict or --baseline-lenient was given */
    bool fail_on_regression;
    bool significance_set; /* --significance-level was given */
    int calibrate; /* runs; 0: off */
    bench__compare_opts cmp;
    bool noise_threshold_set;
    bool fail_on_inconclusive; /* --fail-on-inconclusive */
    const char *ab;        /* --ab OTHER */
    bench__ab_options abo;
    bool ab_time_set;      /* --ab-time was given */
    bool ab_schedule_set;  /* --ab-schedule was given */
    double confirm_time;   /* --confirm-time S: s per suspect benchmark; 0 off */
    bool confirm_time_set;
    bool trust_snapshots;  /* --trust-snapshots: run a baseline's snapshot without this user's
                              signature (the file-system checks still apply) */
    bool ab_pairs_set;     /* --ab-pairs was given */
    const char *perf_events; /* --perf-events LIST (also --probe perf=LIST) */
    bool list_events;
    bool alloc_stats;        /* --alloc-stats (also --probe alloc) */
    /* Per kind of the table of probes (bench__probe_kinds): asked for by --probe NAME[=ARG] or
     * the kind's own option, and its argument. */
    bool probe_on[BENCH__MAX_PROBE_KINDS];
    const char *probe_arg[BENCH__MAX_PROBE_KINDS];
    unsigned gpu_lock_mhz;   /* --gpu-lock-clocks MHZ: the SM clock locked for the run; 0 off */
    const char *gbench_path; /* --export-gbench FILE */
    const char *history_path; /* --history FILE, else $BENCH_HISTORY for a run of times */
    const char *history_show; /* --history-show FILE */
    const char *history_copy; /* --history-copy FROM: copied into history_path */
    struct bench__history *history; /* the history of --history or --history-show, open while
                                       the run or the show lasts (NULL: none) */
    bool history_confirm;     /* --history-confirm: rerun the programs around each change point */
    size_t history_programs;  /* --history-programs N: programs kept beside the history */
    bool history_programs_set;
    bool no_last;             /* --no-last: no "since the last run" block */
    unsigned shard_k, shard_n; /* --shard K/N: the K-th (1-based) of N parts; n 0: all */
    const char *run_id;        /* --run-id ID: the history's run this part belongs to */
    char run_id_buf[160];      /* the CI's run id, the default with --shard */
    size_t history_gate;      /* --history-gate K: earlier runs the newest is tested against;
                                 0 off */
    /* ---- instruction mode (instr.c) ---- */
    bool instructions;            /* --instructions */
    uint64_t instr_iterations;    /* --instructions-iterations N; 0: per benchmark */
    bool instr_iterations_set;
    bool instr_cache_sim;         /* --instructions-cache-sim */
    /* ---- end instruction mode ---- */
} bench__request;

/** The deadline of one child (a worker, a program snapshot run), s: --timeout, else the default. */
static inline double bench__request_timeout(const bench__request *c)
{
    return c->run.timeout_s > 0 ? c->run.timeout_s : BENCH__DEFAULT_TIMEOUT;
}

/** This program's benchmarks, for bench__baseline_absent_entries. */
struct program {
    const bench__instance *all;
    size_t n;
};

/* ---- select.c ---- */

/** Marks which of the n ids the FILTERs select; 0, or -1 after one line on stderr. */
int bench__select(const bench__request *c, const char *const *ids, size_t n, bool *selected);

/* ---- baselines.c ---- */

/** --baseline-dir, else $BENCH_BASELINE_DIR, else "baselines". */
const char *bench__baseline_dir(const bench__request *c);
/** DIR/NAME.json into buf. */
void bench__baseline_path(const bench__request *c, const char *name, char *buf, size_t len);
struct bench__client;

/** Loads baseline `name`; on failure prints one line and returns -1. */
int bench__baseline_load_named(const bench__request *c, const struct bench__client *cl,
                               const char *name, bench__saved *out);
/**
 * Saves the OK results of a run as baseline `name` at `path` in directory `dir` (created when
 * missing), without their comparison; with `snapshot`, the measured program beside it, signed
 * with this user's key (a run of times; --instructions keeps none: its counts need no
 * confirming run), copied within timeout_s seconds. A snapshot that cannot be kept is a warning,
 * and then no older one stays beside the new file. Says what it saved on stderr; on failure
 * prints one line and returns -1; also -1, silently, when the run was interrupted (nothing was
 * replaced then).
 */
int bench__save_named(const char *dir, const char *name, const char *path,
                      const bench__context *ctx, const bench__result *results, size_t n,
                      bool snapshot, double timeout_s);
/**
 * The OK results among results[0..n), without their comparison, into a new array (shallow
 * copies: the caller frees the array only) and their count into *k; NULL when out of memory.
 */
bench__result *bench__ok_results(const bench__result *results, size_t n, size_t *k);
/** Compares the contexts into *out and warns about each kind of difference on its own line. */
void bench__baseline_warn_context(const bench__context_id *now, const bench__context_id *then,
                             const char *name, bench__context_change *out);
/** The comparison side of a saved entry; 0, or -1 when out of memory. */
int bench__side_of_entry(const bench__request *c, const bench__entry *e, bench__side *out);
/** The comparison side of a result of this run. */
void bench__side_of_result(const bench__request *c, const bench__result *r, bench__side *out);
/** The gate's flags of the command line. */
bench__gate bench__request_gate(const bench__request *c);
/**
 * The exit code of a finished comparison of n rows (ids[i] names ch[i]) under the command line's
 * gate (bench__compare_exit).
 */
int bench__request_compare_exit(const bench__request *c, const char *const *ids,
                                const bench__change *ch, size_t n, const char *against);
/**
 * Prints the summary of a finished comparison of n rows (ids[i] names ch[i]) under the
 * client's heading, worst first, and returns its exit code (bench__request_compare_exit, the
 * strict messages in the summary's order). Sorts the rows in place.
 */
int bench__summarize(const bench__request *c, const struct bench__client *cl, FILE *o,
                         const char *what, const char **ids, bench__change *ch, size_t n,
                         const bench__context_change *context, bool color);
/** Whether `id` is one of the n instances. */
bool bench__has_instance(const bench__instance *all, size_t n, const char *id);
/**
 * The entries of `old` that the FILTERs select and that `present` does not know (removed, or
 * skipped when the old side skipped them) into ids[] and verdicts[]; their count, or -1.
 */
long bench__baseline_absent_entries(const bench__request *c, const bench__saved *old,
                               bool (*present)(const void *where, const char *id),
                               const void *where, const char **ids, bench__verdict *verdicts);
/** `present` for bench__baseline_absent_entries over a struct program. */
bool bench__in_program(const void *where, const char *id);
/** What `PROG --list [--exact] -- FILTER...` prints (malloc'd), or NULL. */
char *bench__ab_other_list(const bench__request *c, const char *prog);
/** --load-baseline NEW --baseline OLD: compares two files, runs nothing; the exit code. */
int bench__compare_files(const bench__request *c);
/**
 * Settles the suspect verdicts of a saved-baseline comparison (ch[0..m), ids naming them) by
 * the program's identity or an interleaved run of the baseline's snapshot; 0, or -1 when
 * interrupted.
 */
int bench__confirm_suspects(const bench__request *c, const bench__saved *old,
                                const bench__context *ctx, const char *const *ids,
                                bench__change *ch, size_t m, double drift);

/* ---- pipeline.c ---- */

/** The run's probes (CUDA always, perf events and allocations when asked); 0, or -1 with one
 * line in msg. */
int bench__request_make_probes(bench__request *c, char *msg, size_t msglen);
/** Releases the probes bench__request_make_probes made. */
void bench__request_destroy_probes(bench__request *c);
/**
 * Runs the nsel selected benchmarks of all[0..n) through the run pipeline, with the client of
 * the mode the command line asks for (client.h), or hands --ab over to ab.c. Returns the exit
 * code.
 */
int bench__pipeline_run(bench__request *c, int argc, char **argv, const bench__instance *all,
                        size_t n, const bool *selected, size_t nsel);

/* ---- since_last.c: the change since the last run ---- */

/**
 * With a history (c->history_path): the block "Since the last run in the history" on o, each of
 * the n results against its newest run there that ran in two or more processes. A history that
 * cannot be read is one warning on stderr.
 */
void bench__since_history(FILE *o, const bench__request *c, const bench__context *ctx,
                          const bench__result *results, size_t n);
/**
 * The block "Since the last run (WHEN, PATH; ...)" on o: each of the n results against its
 * entry in `last`, the last-run file read from path (bench__since_open).
 */
void bench__since_kept(FILE *o, const bench__request *c, const bench__context *ctx,
                       const bench__saved *last, const char *path, const bench__result *results,
                       size_t n);
/**
 * Reads the last-run file at path into *out for bench__since_kept. 0; BENCH_EUNAVAIL, silently,
 * when there is none yet; another error code after one warning on stderr naming the file and
 * why (unreadable, not a results file of times, or none of prog's benchmarks in it).
 */
int bench__since_open(const char *path, const struct program *prog, bench__saved *out);
/**
 * Keeps the OK results among results[0..n) in the last-run file at path for the next run
 * (bench__last_keep; entries of benchmarks prog lacks are dropped). A failure is one warning on
 * stderr, unless quiet (the file was already named by a warning of this run), or another run
 * holds the file's lock. Returns 0 or the error code.
 */
int bench__since_keep(const char *path, const bench__context *ctx, const bench__result *results,
                      size_t n, const struct program *prog, bool quiet);

/* ---- history_confirm.c ---- */

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

#endif /* HARNESS_PIPELINE_H */
