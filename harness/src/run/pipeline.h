/*
 * pipeline.h: the one run pipeline (pipeline.c: select, plan, measure in workers, estimate,
 * compare, report, exit code) and what it is asked to do (bench__request: everything the
 * command line asked for, filled by cli/cli_options.c, its defaults resolved by request.c, whose
 * functions are declared here). The pieces it is made of have headers of their own beside their
 * files: selection (select.h), baselines by name and the confirmation of suspects
 * (baselines.h), two saved runs compared without measuring (compare_files.h), the change since
 * the last run (since_last.h), a history's steps confirmed (history_confirm.h).
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
#include "run/ab.h"
#include "run/calibrate.h"
#include "measure/run.h"
#include "store/history.h"
#include "store/store.h"
#include "sys/context.h"

#define BENCH__MAX_FILTERS 64
#define BASELINE_NAME_MAX 64

/**
 * Everything the command line asked for, as given: an option not given holds the "not given"
 * value its field names (bench__request_init), and the defaults are resolved from the record by
 * the functions below (request.c), where they are needed. The one exception is cmp, the
 * comparison's settings, computed once from the record (bench__request_compare_opts) and then
 * carrying what the run learns (the drift of the machine, exact counts).
 */
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
    int strict;                /* 1 --baseline-strict, 0 --baseline-lenient (the last of the two
                                  wins), -1 neither given: lenient */
    bool fail_on_regression;
    double significance_level; /* --significance-level A; 0: not given */
    double noise_threshold;    /* --noise-threshold T; < 0: not given (the mode's default) */
    int calibrate; /* runs; 0: off */
    bench__compare_opts cmp;   /* the comparison's settings (see above) */
    bool fail_on_inconclusive; /* --fail-on-inconclusive */
    const char *ab;        /* --ab OTHER */
    double ab_time;        /* --ab-time S, s per benchmark on average; 0: not given */
    int ab_pairs;          /* --ab-pairs N; 0: not given */
    int ab_schedule;       /* --ab-schedule: a bench__ab_schedule; -1: not given */
    double confirm_time;   /* --confirm-time S: s per suspect benchmark, 0 never; < 0: not
                              given */
    bool trust_snapshots;  /* --trust-snapshots: run a baseline's snapshot without this user's
                              signature (the file-system checks still apply) */
    bool list_events;
    /* Per kind of the table of probes (bench__probe_kinds): asked for by --probe NAME[=ARG] or
     * the kind's own option (--perf-events LIST, --alloc-stats), and its argument. */
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
    bool history_trust_programs; /* --history-trust-programs: run a database's copy of a
                                    program no run on this machine recorded */
    int history_programs;     /* --history-programs N: programs kept beside the history; -1:
                                 not given */
    bool no_last;             /* --no-last: no "since the last run" block */
    unsigned shard_k, shard_n; /* --shard K/N: the K-th (1-based) of N parts; n 0: all */
    const char *run_id;        /* --run-id ID: the history's run this part belongs to */
    char run_id_buf[160];      /* the CI's run id, the default with --shard */
    size_t history_gate;      /* --history-gate K: earlier runs the newest is tested against;
                                 0 off */
    /* ---- instruction mode (instr.c) ---- */
    bool instructions;            /* --instructions */
    bool explain;                 /* --explain */
    uint64_t instr_iterations;    /* --instructions-iterations N; 0: not given (per benchmark) */
    bool instr_cache_sim;         /* --instructions-cache-sim */
    /* ---- end instruction mode ---- */
} bench__request;

/** The deadline of one child (a worker, a program snapshot run), s: --timeout, else the default. */
static inline double bench__request_timeout(const bench__request *c)
{
    return c->run.timeout_s > 0 ? c->run.timeout_s : BENCH__DEFAULT_TIMEOUT;
}

/* ---- request.c ---- */

/** Empties *c: every option not given, with its "not given" value or default. */
void bench__request_init(bench__request *c);

/** The noise threshold of a comparison: --noise-threshold, else mode_default, the default of the
 * mode that compares (--ab's, that of times, or instruction counts' when their client compares,
 * whether the mode was asked for or read from a saved file). */
double bench__request_noise_threshold(const bench__request *c, double mode_default);

/** The comparison's settings the request asks for, each not given resolved to its default. */
bench__compare_opts bench__request_compare_opts(const bench__request *c);

/** Whether a long run draws its progress line (sys/progress.h): stderr is a terminal and
 * the report is the pretty one (a machine format's reader wants nothing but its format). */
bool bench__request_progress(const bench__request *c);

/** The paired options: --ab-time, --ab-pairs, --ab-schedule, the comparison's level and
 * threshold (c->cmp), the deadline, seed and layout, progress as bench__request_progress. */
bench__ab_options bench__request_ab_options(const bench__request *c);
/** The gate's flags of the command line. */
bench__gate bench__request_gate(const bench__request *c);

/** Seconds of a paired confirmation for each of k suspects: --confirm-time, else
 * BENCH__DEFAULT_CONFIRM_TIME, or a share of BENCH__CONFIRM_BUDGET when k is large. */
double bench__request_confirm_time(const bench__request *c, size_t k);

/** The programs kept beside the history: --history-programs, else BENCH__HISTORY_PROGRAMS. */
size_t bench__request_history_programs(const bench__request *c);

/** Whether probe kind `kind` ("perf", "alloc", ...) was asked for (*asked), and its argument
 * (NULL: none, or not asked). */
const char *bench__request_probe(const bench__request *c, const char *kind, bool *asked);

/** This program's benchmarks, for bench__baseline_absent_entries. */
struct program {
    const bench__instance *all;
    size_t n;
};

/* ---- pipeline.c ---- */

/**
 * Runs the nsel selected benchmarks of all[0..n) through the run pipeline, with the client of
 * the mode the command line asks for (client.h), or hands --ab over to ab.c. Returns the exit
 * code.
 */
int bench__pipeline_run(bench__request *c, int argc, char **argv, const bench__instance *all,
                        size_t n, const bool *selected, size_t nsel);

/* ---- handoff.c ---- */

/** --profile-time: each selected benchmark of all[0..n) run for its time, iterations printed,
 * no statistics. Returns the exit code. */
int bench__profile_time_run(const bench__request *c, const bench__instance *all,
                            const bool *selected, size_t n);

/** --ab: the selected benchmarks paired with the other build's (ab.c), then --explain and
 * --trace as asked. Returns the exit code. */
int bench__ab_mode_run(bench__request *c, const bench__instance *all, size_t n,
                       const bool *selected);

#endif /* HARNESS_PIPELINE_H */
