/*
 * pipeline.c: the one run pipeline, once options are parsed and benchmarks selected: select,
 * plan, measure (in worker processes), estimate, compare, report, exit code. Every measuring
 * mode is a client of it (client.h): the default run of times (client.c) and --instructions
 * (instr.c). The two modes that measure nothing the pipeline reports, --profile-time and --ab,
 * are handed over to handoff.c; calibration runs are here.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/compare.h"
#include "probes/probes.h"
#include "report/report_compare.h"
#include "report/report_history.h"
#include "run/baselines.h"
#include "run/programs.h"
#include "run/sides.h"
#include "run/summary.h"
#include "run/suspects.h"
#include "run/client.h"
#include "run/code_identity.h"
#include "run/explain.h"
#include "run/history_confirm.h"
#include "run/instr.h"
#include "run/pipeline.h"
#include "measure/plan.h"
#include "run/since_last.h"
#include "measure/trace.h"
#include "store/history.h"
#include "sys/canary.h"
#include "sys/proc.h"
#include "sys/user_build.h"

/* ---- the pipeline ---- */

/* One run through the pipeline: what its stages share. */
typedef struct pipeline {
    bench__request *c;
    const bench__client *cl;
    bench__saved old;               /* the baseline (--baseline), else empty */
    const char **absent_ids;        /* the baseline's selected benchmarks this program lacks */
    bench__verdict *absent_verdicts; /* ... removed, or skipped when the baseline skipped them */
    size_t nabsent;
    const char **removed;           /* of those, the removed ones (for the results' context) */
    size_t nremoved;
    bench__comparison comparison;
    bench__context ctx;
    bench__context_change context;  /* how the machine changed since the baseline (times) */
    double drift;                   /* the largest drift of a canary since the baseline */
    const bench__instance **list;   /* the selected benchmarks, k of them */
    bench__result *results;         /* their results, in order */
    size_t k;
    double *cal;                    /* --calibrate: runs x benchmarks, medians (calibrate.c) */
    size_t ncal;                    /* ... runs */
    bench__change *changes;         /* per result: its change (compared[i]) or status */
    bench__side *old_sides;         /* per result: the baseline's side (times) */
    bool *compared;                 /* per result: compared with the baseline by numbers */
    bench__reporter rep;
    bool color;
    int exit_code;
    bool decided;                   /* the exit code is final: interrupts no longer count */
    char written[96];               /* the outputs written so far, for an interrupt's message */
    struct program prog;            /* this program's benchmarks */
    char last_path[4096];           /* the last-run file (since_last.c); "" when not kept */
    bench__saved last;              /* ... read for the block, when last_read */
    bool last_read;
    bool last_said;                 /* a warning of this run already named the file */
    bench__code_ids *code;          /* this program's disassembly (NULL: unknown) */
} pipeline;

/* --save-baseline into a file that the save would refuse (not a valid baseline, or of the other
 * kind) is refused before the run, not after it; -1 after one line. */
static int check_save_target(pipeline *p)
{
    char path[4096], msg[1024], shown[4 * sizeof msg];
    bench__baseline_path(p->c, p->c->save_baseline, path, sizeof path);
    if (!bench__baseline_replaceable(path, bench__instr_is_mode(p->cl->mode), msg, sizeof msg))
        return 0;
    bench__errf("saving baseline '%s' failed: %s\n", p->c->save_baseline,
                bench__escape(shown, sizeof shown, msg));
    return -1;
}

/* Loads --baseline and finds what it has that this program lacks; -1 after one line. */
static int load_baseline(pipeline *p, const bench__instance *all, size_t n)
{
    bench__request *c = p->c;
    if (bench__baseline_load_named(c, p->cl, c->baseline, &p->old) != 0)
        return -1;
    if (bench__instr_is_mode(p->old.ctx.mode) != bench__instr_is_mode(p->cl->mode)) {
        bench__errf("baseline '%s' %s\n", c->baseline, p->cl->mismatch);
        return -1;
    }
    size_t cap = p->old.n ? p->old.n : 1;
    p->absent_ids = calloc(cap, sizeof *p->absent_ids);
    p->absent_verdicts = calloc(cap, sizeof *p->absent_verdicts);
    p->removed = calloc(cap, sizeof *p->removed);
    struct program prog = {all, n};
    long na = p->absent_ids && p->absent_verdicts && p->removed
                  ? bench__baseline_absent_entries(c, &p->old, bench__in_program, &prog,
                                              p->absent_ids, p->absent_verdicts)
                  : -1;
    if (na < 0) {
        if (!p->absent_ids || !p->absent_verdicts || !p->removed)
            bench__errf("out of memory\n");
        return -1;
    }
    p->nabsent = (size_t)na;
    for (size_t j = 0; j < p->nabsent; j++)
        if (p->absent_verdicts[j] == BENCH__V_REMOVED)
            p->removed[p->nremoved++] = p->absent_ids[j];
    p->comparison = (bench__comparison){c->baseline, p->removed, p->nremoved};
    return 0;
}

/* The context every result carries: the machine, how the benchmarks were built (builds may be
 * NULL: unknown), and for a run of times the program's identity and the drift canaries. */
static void collect_context(pipeline *p, const bench__user_builds *builds)
{
    bench__request *c = p->c;
    bench__context *ctx = &p->ctx;
    bench__context_collect(ctx, &c->run);
    bench__probes_context(ctx);
    ctx->mode = p->cl->mode;
    if (builds)
        bench__user_builds_attach(ctx, builds);
    bench__program_build_read("/proc/self/exe", builds, &ctx->program_build);
    char why[256];
    if (p->cl->times) {
        if (bench__program_hash("/proc/self/exe", ctx->program_hash, sizeof ctx->program_hash,
                                &ctx->program_bytes, why, sizeof why) != 0)
            ctx->program_hash[0] = '\0';
        if (bench__libraries_hash(ctx->program_libs, sizeof ctx->program_libs, why,
                                  sizeof why) != 0)
            ctx->program_libs[0] = '\0';
        /* A baseline keeps the machine's drift canaries, and a comparison measures them
         * again. */
        if ((c->save_baseline || c->baseline) &&
            bench__canaries_measure(&ctx->canary, (size_t)ctx->canary_memory_bytes) == 0)
            ctx->have_canaries = true;
        for (size_t i = 0; i < ctx->nwarnings; i++)
            bench__errf("warning: %s\n", ctx->warnings[i]);
    } else if (builds && bench__user_builds_warning(builds, why, sizeof why)) {
        /* Counts of an unoptimised build are as unrepresentative as its times; the machine's
         * timing warnings do not concern them. */
        bench__errf("warning: %s\n", why);
    }
    if (!c->baseline)
        return;
    ctx->comparison = &p->comparison;
    if (!p->cl->times)
        return;
    bench__context_id now;
    bench__context_id_from(&now, ctx);
    bench__baseline_warn_context(&now, &p->old.ctx, c->baseline, &p->context);
    double d[BENCH__NCANARIES];
    bool beyond[BENCH__NCANARIES];
    char words[512];
    if (!ctx->have_canaries)
        return;
    int changed = bench__canaries_drift(&ctx->canary, &p->old.ctx.canary,
                                        c->cmp.noise_threshold, d, beyond, words, sizeof words);
    /* The interval allows for the drift every kind of work shared (the medians' smallest); a
     * verdict on saved numbers alone is guarded by the largest drift that is the machine's, not
     * the canaries' own spread from one process to the next. */
    c->cmp.drift_sd = bench__canaries_shared_drift(d);
    c->cmp.drift_known = isfinite(c->cmp.drift_sd);
    for (int q = 0; q < BENCH__NCANARIES; q++)
        if (beyond[q] && fabs(d[q]) > p->drift)
            p->drift = fabs(d[q]);
    if (changed > 0)
        bench__errf("warning: the machine changed since baseline '%s' was saved (drift "
                    "canaries): %s\n", c->baseline, words);
}

/* bench__probes_compare_note's view of a saved entry: its metric per ns of time. */
static double saved_rate(const void *saved, const char *metric)
{
    return bench__entry_rate(saved, metric);
}

/* The measuring stage's callback: estimates, compares and reports result k once it is final. */
static void result_done(size_t k, bench__result *r, void *arg)
{
    pipeline *p = arg;
    const bench__request *c = p->c;
    const bench__client *cl = p->cl;
    if (cl->estimate && r->status == BENCH__OK)
        cl->estimate(r);
    bench__code_hash(p->code, r->inst->id, r->code_hash);
    const bench__entry *e = c->baseline ? bench__saved_find(&p->old, r->inst->id) : NULL;
    bench__verdict status = BENCH__V_INCOMPARABLE;
    p->changes[k].verdict = BENCH__V_INCOMPARABLE;
    if (c->baseline && bench__comparable(e ? &e->status : NULL, &r->status, &status)) {
        p->compared[k] = cl->compare(c, e, r, &p->changes[k], &p->old_sides[k]);
        if (cl->times)
            bench__same_code_as_saved(&p->old, p->ctx.program_hash, r->inst->id, r->code_hash,
                                      &p->changes[k]);
    } else if (status == BENCH__V_SKIPPED || status == BENCH__V_NEW) {
        p->changes[k].verdict = status;
        r->change = &p->changes[k];
    }
    p->rep.result(&p->rep, r);
    /* A skipped benchmark's own line already says so: no change line under it. */
    if (r->status == BENCH__OK && c->format == BENCH__FMT_PRETTY) {
        cl->show_change(stdout, c, r, p->color);
        fflush(stdout);
    }
    char note[256];
    if (e && r->status == BENCH__OK &&
        bench__probes_compare_note(r, saved_rate, e, note, sizeof note)) {
        char id[BENCH__ESCAPED_ID];
        bench__errf("note: '%s' %s\n", bench__escape(id, sizeof id, r->inst->id),
                    note);
    }
    if (r->status == BENCH__FAILED) {
        char id[BENCH__ESCAPED_ID], why[4 * sizeof r->message];
        bench__errf("benchmark '%s' failed: %s\n",
                    bench__escape(id, sizeof id, r->inst->id),
                    bench__escape(why, sizeof why, r->message));
        p->exit_code = BENCH_EXIT_FAILED;
    }
}

/* Adds `what` to the outputs written so far ("--json, the baseline and the history"). */
static void note_written(pipeline *p, const char *what)
{
    char *and = strstr(p->written, " and ");
    if (and) {
        memcpy(and, ", ", 2);
        memmove(and + 2, and + 5, strlen(and + 5) + 1);
    }
    size_t len = strlen(p->written);
    bench__msg(p->written + len, sizeof p->written - len, "%s%s", len ? " and " : "", what);
}

/* Says that the run was interrupted; the exit code. */
static int interrupted(const char *what)
{
    int sig = bench__proc_interrupted();
    fflush(stdout);
    bench__errf("interrupted by %s: stopped %s; no results or baseline were "
                "written\n", bench__signal_name(sig), what);
    return 128 + sig;
}

/* Whether the run was interrupted; if so, says so (stopped `what`) and sets the exit code. */
static bool stop_here(pipeline *p, const char *what)
{
    if (!bench__proc_interrupted())
        return false;
    p->exit_code = interrupted(what);
    return true;
}

/*
 * The comparison stage over the whole suite: a run of times settles its verdicts together
 * (the family level and the suite's drift, then confirmation of suspects); then the summary
 * lists the compared
 * benchmarks, those with a status (skipped, new) and the baseline's that this program lacks.
 * Returns the comparison's exit code, or -1 when interrupted.
 */
static int compare_suite(pipeline *p)
{
    bench__request *c = p->c;
    size_t k = p->k, rows = k + p->nabsent, m = 0;
    bench__side *a = calloc(k ? k : 1, sizeof *a), *b = calloc(k ? k : 1, sizeof *b);
    bench__change *ch = calloc(rows ? rows : 1, sizeof *ch);
    const char **ids = calloc(rows ? rows : 1, sizeof *ids);
    size_t *map = calloc(k ? k : 1, sizeof *map);
    int rc = BENCH_EXIT_USAGE;
    if (!a || !b || !ch || !ids || !map) {
        bench__errf("out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < k; i++)
        if (p->compared[i]) {
            if (p->cl->times) {
                a[m] = p->old_sides[i];
                bench__side_of_result(c, &p->results[i], &b[m]);
            }
            ch[m] = p->changes[i];
            ids[m] = p->results[i].inst->id;
            map[m++] = i;
        }
    if (p->cl->times) {
        if (bench__compare_all(a, b, m, &c->cmp, ch) != 0) {
            bench__errf("out of memory\n");
            goto out;
        }
        for (size_t j = 0; j < m; j++) /* the same code: no verdict, nothing to confirm */
            bench__same_code_as_saved(&p->old, p->ctx.program_hash, ids[j],
                                      p->results[map[j]].code_hash, &ch[j]);
        bench__explanation **found = c->explain ? calloc(m ? m : 1, sizeof *found) : NULL;
        if (bench__confirm_suspects(c, &p->old, &p->ctx, ids, ch, m, p->drift, found) != 0) {
            for (size_t j = 0; found && j < m; j++)
                bench__explanation_free(found[j]);
            free(found);
            rc = -1;
            goto out;
        }
        for (size_t j = 0; j < m; j++) {
            p->changes[map[j]] = ch[j];
            if (found && found[j])
                p->results[map[j]].explanation = found[j];
        }
        free(found);
    }
    size_t t = m;
    for (size_t i = 0; i < k; i++) {
        const bench__change *rch = p->results[i].change;
        if (!p->compared[i] && rch &&
            (rch->verdict == BENCH__V_SKIPPED || rch->verdict == BENCH__V_NEW)) {
            ch[t].verdict = rch->verdict;
            ids[t++] = p->results[i].inst->id;
        }
    }
    for (size_t j = 0; j < p->nabsent; j++) {
        ch[t].verdict = p->absent_verdicts[j];
        ids[t++] = p->absent_ids[j];
    }
    FILE *o = c->format == BENCH__FMT_PRETTY ? stdout : stderr;
    char what[128];
    bench__msg(what, sizeof what, "baseline '%s'", c->baseline);
    rc = bench__summarize(c, p->cl, o, what, ids, ch, t, p->cl->times ? &p->context : NULL,
                              o == stdout ? p->color : isatty(STDERR_FILENO));
out:
    free(a);
    free(b);
    free(ch);
    free(ids);
    free(map);
    return rc;
}

/* --history-gate: the run just recorded (run_id) judged against the runs before it, on stderr
 * (stdout may be JSON). Returns the exit code rc raised to a regression's or a usage error's, or
 * -1 when an interrupt stopped the gate's reading (the run is recorded, not judged). */
static int gate_history(pipeline *p, long long run_id, int rc)
{
    bench__request *c = p->c;
    char msg[1024], shown[4 * sizeof msg];
    bool regressed = false;
    bench__history_steps steps = {0};
    bench__history_gate_run gate = {0};
    /* This run's own benchmarks only: a part of a sharded run (--run-id) does not judge
     * the parts recorded before it, which judged themselves. */
    const char **only = calloc(p->k ? p->k : 1, sizeof *only);
    for (size_t i = 0; only && i < p->k; i++)
        only[i] = p->results[i].inst->id;
    int grc = only ? bench__history_gate(c->history, run_id, only, p->k, c->history_gate,
                                         c->cmp.noise_threshold, c->cmp.significance_level,
                                         &gate, msg, sizeof msg)
                   : BENCH_ENOMEM;
    if (!only)
        bench__msg(msg, sizeof msg, "history gate: out of memory");
    free(only);
    if (grc == 0) {
        bench__report_history_gate(stderr, &gate);
        bench__history_gate_outcome(&gate, &steps, &regressed);
    }
    bench__history_gate_free(&gate);
    if (grc != 0) {
        if (bench__proc_interrupted()) {
            bench__history_steps_free(&steps);
            return -1;
        }
        bench__errf("%s\n", bench__escape(shown, sizeof shown, msg));
        rc = BENCH_EXIT_USAGE;
    } else {
        /* A step is the code's only when a paired run of the programs confirms it. */
        if (steps.n > 0 && bench__history_confirm_gate(stderr, c, p->ctx.program_hash,
                                                       &steps, &regressed) != 0)
            regressed = true; /* interrupted: the numbers stand */
        if (regressed && rc == BENCH_EXIT_OK)
            rc = BENCH_EXIT_REGRESSION;
    }
    bench__history_steps_free(&steps);
    return rc;
}

/* The reporting stage's end: the change since the last run, the report's tail, --json,
 * --export-gbench, --save-baseline, the history, the last-run file. An interrupt stops it before
 * the next of them (bench__pipeline_run says what was written). */
static void write_outputs(pipeline *p)
{
    bench__request *c = p->c;
    char msg[1024], shown[4 * sizeof msg]; /* messages quote paths: escaped */
    int rc = BENCH_EXIT_OK;
    if (bench__proc_interrupted())
        return;
    /* One block at most: the history's newest run is the last run when there is a history. */
    if (c->history && p->cl->times && !c->baseline && !c->no_last &&
        c->format == BENCH__FMT_PRETTY)
        bench__since_history(stdout, c, &p->ctx, p->results, p->k);
    else if (p->last_read)
        bench__since_kept(stdout, c, &p->ctx, &p->last, p->last_path, p->results, p->k);
    if (p->rep.end(&p->rep, &p->ctx, p->results, p->k) != 0 || fflush(stdout) != 0 ||
        ferror(stdout)) {
        bench__errf("writing the report to stdout failed\n");
        rc = BENCH_EXIT_USAGE;
    }
    if (bench__proc_interrupted())
        return;
    if (c->json_path) {
        if (bench__json_write_file(c->json_path, &p->ctx, p->results, p->k, msg, sizeof msg)) {
            bench__errf("%s\n", bench__escape(shown, sizeof shown, msg));
            rc = BENCH_EXIT_USAGE;
        } else {
            note_written(p, "--json");
        }
    }
    if (bench__proc_interrupted())
        return;
    if (c->run.trace_path && (bench__trace_write() != 0 || (note_written(p, "--trace"), 0)))
        rc = BENCH_EXIT_USAGE; /* its own file: the others are written all the same */
    if (bench__proc_interrupted())
        return;
    if (c->gbench_path) {
        if (bench__gbench_write_file(c->gbench_path, &p->ctx, p->results, p->k, msg,
                                     sizeof msg)) {
            bench__errf("%s\n", bench__escape(shown, sizeof shown, msg));
            rc = BENCH_EXIT_USAGE;
        } else {
            note_written(p, "--export-gbench");
        }
    }
    if (bench__proc_interrupted())
        return;
    /* A run of times keeps its program beside the baseline (for confirming runs); counts need
     * none. An interrupt stops the save before it replaces anything; once the baseline and its
     * program are replaced, together, the exit code is decided. */
    if (c->save_baseline) {
        char path[4096];
        bench__baseline_path(c, c->save_baseline, path, sizeof path);
        double timeout = bench__request_timeout(c);
        if (bench__save_named(bench__baseline_dir(c), c->save_baseline, path, &p->ctx,
                              p->results, p->k, p->cl->times, timeout) != 0) {
            if (bench__proc_interrupted())
                return;
            rc = BENCH_EXIT_USAGE;
        } else {
            note_written(p, "the baseline");
        }
    }
    if (bench__proc_interrupted())
        return;
    /* The history gets every run of times, compared or not, in one transaction: a signal
     * while it waits for the lock or writes rolls it back (nothing recorded). */
    long long run_id = 0;
    int hrc = c->history && p->cl->times
                  ? bench__history_append(c->history, &p->ctx, p->results, p->k,
                                          c->baseline, c->run_id, &run_id, msg, sizeof msg)
                  : 0;
    if (hrc == BENCH_EUSAGE && bench__proc_interrupted())
        return;
    if (hrc != 0) {
        bench__errf("%s\n", bench__escape(shown, sizeof shown, msg));
        rc = BENCH_EXIT_USAGE;
    } else if (c->history && p->cl->times) {
        note_written(p, "the history");
        /* The program beside the history, so a later --history-confirm can run it again; one
         * that cannot be kept is a warning: the run is recorded. */
        double timeout = bench__request_timeout(c);
        if (bench__history_keep_program(c->history, &p->ctx, bench__request_history_programs(c),
                                        timeout, msg, sizeof msg) != 0)
            bench__errf("warning: %s\n", bench__escape(shown, sizeof shown, msg));
    }
    if (bench__proc_interrupted())
        return;
    if (rc == BENCH_EXIT_OK && c->history_gate && p->cl->times &&
        (rc = gate_history(p, run_id, rc)) < 0)
        return;
    /* Kept for the next run's "since the last run", whatever the exit code: information only. */
    if (p->last_path[0] && !bench__proc_interrupted())
        bench__since_keep(p->last_path, &p->ctx, p->results, p->k, &p->prog, p->last_said);
    /* Decided: a signal from here on changes nothing. */
    p->decided = true;
    if (p->exit_code == BENCH_EXIT_OK)
        p->exit_code = rc;
}

/* Sets up the reporter of the output format. */
static void make_reporter(pipeline *p)
{
    const bench__format_entry *f = &bench__formats[p->c->format];
    if (f->make)
        f->make(&p->rep, stdout);
    else
        p->cl->pretty(&p->rep, stdout, p->color);
    p->rep.cmp = &p->c->cmp; /* what a saved comparison sees follows the run's own settings */
}

/* --gpu-lock-clocks: locks the SM clock in this process (the manager) for the whole run; where
 * that is not permitted, the run goes on at the GPU's own clocks, with a warning. */
static void lock_gpu_clocks(const bench__request *c)
{
    char msg[512];
    if (c->gpu_lock_mhz && bench__probes_lock_clocks(c->gpu_lock_mhz, msg, sizeof msg) != 0)
        bench__errf("warning: --gpu-lock-clocks: the SM clock is not locked (%s); "
                    "the GPU runs at the clocks it chooses\n", msg);
}

/*
 * The bootstrap's work per benchmark is its samples times --nresamples draws (times one more per
 * metric), about 50-120 ns each here: 2^28 draws are about 20 s. A run that asks for more is
 * refused before anything runs (--sample-size 100000 with --nresamples 10000000 would have taken
 * a day per benchmark).
 */
#define BENCH__MAX_BOOTSTRAP_DRAWS ((double)(1u << 28))

/* Refuses (one line, -1) when a selected benchmark's samples times --nresamples exceed the
 * bound. */
static int check_bootstrap_work(const bench__request *c, const bench__instance *all, size_t n,
                                const bool *selected)
{
    for (size_t i = 0; i < n; i++) {
        if (!selected[i])
            continue;
        bench__settings s;
        bench__resolve_settings(&s, &c->run, all[i].desc, all[i].group);
        double draws = (double)s.sample_size * (double)c->run.nresamples;
        if (draws > BENCH__MAX_BOOTSTRAP_DRAWS) {
            char id[BENCH__ESCAPED_ID];
            bench__errf("--nresamples %zu: %s takes up to %d samples, and %.3g "
                        "bootstrap draws per benchmark are over the limit of %.0f: lower "
                        "--nresamples or --sample-size\n",
                        c->run.nresamples, bench__escape(id, sizeof id, all[i].id), s.sample_size,
                        draws, BENCH__MAX_BOOTSTRAP_DRAWS);
            return -1;
        }
    }
    return 0;
}

/*
 * The last-run file of a run of times (since_last.c): its path, unless --no-last or an empty
 * BENCH_LAST_DIR turns the store off; read when the pretty output will show the change since it
 * (no --baseline, no history, whose newest run is the last run then). A problem is one warning:
 * the run goes on without the block.
 */
static void open_last(pipeline *p)
{
    const bench__request *c = p->c;
    char msg[1024], shown[4 * sizeof msg];
    if (!p->cl->times || c->no_last || c->run.plan == BENCH__PLAN_PROFILE)
        return;
    int rc = bench__last_path("/proc/self/exe", &p->ctx, p->last_path, sizeof p->last_path, msg,
                              sizeof msg);
    if (rc != 0) {
        p->last_path[0] = '\0';
        if (rc != BENCH_EUNAVAIL)
            bench__errf("warning: the last run is not kept: %s\n",
                        bench__escape(shown, sizeof shown, msg));
        return;
    }
    if (c->format != BENCH__FMT_PRETTY || c->baseline || c->history_path)
        return;
    rc = bench__since_open(p->last_path, &p->prog, &p->last);
    p->last_read = rc == 0;
    p->last_said = rc != 0 && rc != BENCH_EUNAVAIL;
}

/*
 * The measuring stage: the reporter made, the selected benchmarks listed, the calibration runs
 * (--calibrate), then the benchmarks measured in worker processes or in this one, each result
 * reported as it finishes (result_done). 0; or -1 with p->exit_code set (out of memory, a failed
 * calibration, an interrupt).
 */
static int measure(pipeline *p, int argc, char **argv, const bench__instance *all, size_t n,
                   const bool *selected, size_t nsel)
{
    bench__request *c = p->c;
    char msg[1024] = "";
    make_reporter(p);
    p->rep.tests = nsel; /* a saved comparison of this run takes them together */
    p->results = calloc(nsel ? nsel : 1, sizeof *p->results);
    p->changes = calloc(nsel ? nsel : 1, sizeof *p->changes);
    p->old_sides = calloc(nsel ? nsel : 1, sizeof *p->old_sides);
    p->compared = calloc(nsel ? nsel : 1, sizeof *p->compared);
    p->list = calloc(nsel ? nsel : 1, sizeof *p->list);
    if (!p->results || !p->changes || !p->old_sides || !p->compared || !p->list) {
        bench__errf("out of memory\n");
        p->exit_code = BENCH_EXIT_USAGE;
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (selected[i])
            p->list[p->k++] = &all[i];
    if (c->run.trace_path)
        bench__trace_start(c->run.trace_path);
    if (c->calibrate) {
        p->ncal = (size_t)c->calibrate - 1;
        p->cal = calloc(p->ncal * p->k + 1, sizeof *p->cal);
        int crc = p->cal ? bench__calibrate(p->list, p->k, &c->run, argc, argv,
                                            (unsigned)c->calibrate, p->cal, msg, sizeof msg)
                         : BENCH_ENOMEM;
        if (crc != 0) {
            if (bench__proc_interrupted()) {
                p->exit_code = interrupted("the calibration runs");
            } else {
                char shown[4 * sizeof msg];
                bench__errf("%s\n", bench__escape(shown, sizeof shown, msg));
                p->exit_code = BENCH_EXIT_FAILED;
            }
            return -1;
        }
    }
    if (p->cl->announce)
        p->cl->announce(c, p->k);
    p->rep.begin(&p->rep, &p->ctx);
    int rc;
    if (c->run.in_process) {
        /* A closed stdout (`bench | head`) must not kill the run before its files are
         * written; in worker mode bench__run_isolated sees to this with the interrupts. The
         * benchmarks run in this process, which never looks at an interrupt while they do: a
         * signal ends it at once, writing nothing. */
        bench__proc_interrupts_release();
        signal(SIGPIPE, SIG_IGN);
        bench__crash_handlers_install();
        rc = bench__run_all(p->list, p->k, &c->run, p->results, result_done, p);
        bench__proc_interrupts_install();
    } else {
        rc = bench__run_isolated(p->list, p->k, &c->run, argc, argv, p->results, result_done, p);
    }
    if (rc == BENCH_EUSAGE && bench__proc_interrupted()) {
        /* Interrupted: the workers are gone; nothing half-done is written or saved. */
        p->exit_code = interrupted("the worker processes");
        return -1;
    }
    if (rc != 0) {
        bench__errf("out of memory\n");
        p->exit_code = BENCH_EXIT_USAGE;
        return -1;
    }
    return 0;
}

int bench__pipeline_run(bench__request *c, int argc, char **argv, const bench__instance *all,
                        size_t n, const bool *selected, size_t nsel)
{
    lock_gpu_clocks(c);
    if (c->ab) {
        int ab_exit = bench__ab_mode_run(c, all, n, selected);
        bench__probes_unlock_clocks();
        return ab_exit;
    }
    pipeline p;
    memset(&p, 0, sizeof p);
    p.c = c;
    p.cl = bench__client_for(c);
    p.color = bench__use_color(c->color);
    p.exit_code = BENCH_EXIT_OK;
    bool set_up = false;
    bench__user_builds builds = {0}; /* how the selected benchmarks' files were compiled */
    char msg[1024] = "";
    if (p.cl->configure)
        p.cl->configure(c);
    if (p.cl->times && check_bootstrap_work(c, all, n, selected) != 0) {
        p.exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    /* From here until the exit code is decided, SIGINT, SIGTERM and SIGHUP are recorded, not
     * fatal: each stage ends early and nothing is written after one (the exit code is then
     * 128 + the signal). Benchmarks measured in this process give them back (see below). */
    bench__proc_interrupts_install();
    /* Plan and probes first: a mode that cannot run here (no valgrind) says so before
     * anything else. */
    if (p.cl->setup(c, false, msg, sizeof msg) != 0) {
        bench__errf("%s\n", msg);
        p.exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    set_up = true;
    /* A comparison is checked before anything runs: a missing or broken baseline fails fast.
     * Benchmarks it lacks (new) or that this program lacks (removed) are reported with the
     * comparison, and are an error only with --baseline-strict, checked after the run: whether
     * a benchmark is skipped here, which wins over both, is known only once it ran. So is the
     * file --save-baseline is to replace. */
    if ((c->baseline && load_baseline(&p, all, n) != 0) ||
        (c->save_baseline && check_save_target(&p) != 0)) {
        p.exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    /* So is the history: a foreign or damaged file is refused before anything runs. */
    if (c->history_path && p.cl->times &&
        bench__history_open(c->history_path, true, &c->history, msg, sizeof msg) != 0) {
        char shown[4 * sizeof msg];
        bench__errf("%s\n", bench__escape(shown, sizeof shown, msg));
        p.exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    c->run.progress = bench__request_progress(c);
    collect_context(&p, bench__user_builds_init(&builds, all, selected, n) == 0 ? &builds : NULL);
    p.prog = (struct program){all, n};
    open_last(&p);
    if (stop_here(&p, "before measuring"))
        goto out;
    if (c->run.plan == BENCH__PLAN_PROFILE) {
        /* Iterations in this very process, which never looks at an interrupt: one ends it. */
        bench__proc_interrupts_release();
        p.exit_code = bench__profile_time_run(c, all, selected, n);
        goto out;
    }
    p.code = bench__run_code(c); /* before measuring: objdump shares no CPU with it */
    if (measure(&p, argc, argv, all, n, selected, nsel) != 0)
        goto out;
    /* A signal after the last worker ended (during its analysis, say) counts too. */
    if (stop_here(&p, "after the measurements"))
        goto out;
    if (p.cal)
        bench__noise_from_medians(p.results, p.k, p.cal, p.ncal);
    if (c->baseline) {
        bench__trace_begin("comparison and confirmation");
        int cmp_exit = compare_suite(&p);
        bench__trace_end();
        if (cmp_exit < 0 || bench__proc_interrupted()) {
            p.exit_code = interrupted("the comparison");
            goto out;
        }
        if (p.exit_code == BENCH_EXIT_OK)
            p.exit_code = cmp_exit;
    }
    write_outputs(&p);
    if (!p.decided && bench__proc_interrupted()) {
        int sig = bench__proc_interrupted();
        fflush(stdout);
        if (p.written[0])
            bench__errf("interrupted by %s: stopped after writing %s; nothing else "
                        "was written\n", bench__signal_name(sig), p.written);
        else
            p.exit_code = interrupted("before writing the results");
        p.exit_code = 128 + sig;
    }
out:
    bench__probes_unlock_clocks();
    bench__history_close(c->history);
    c->history = NULL;
    if (set_up)
        p.cl->teardown(c);
    for (size_t i = 0; p.results && i < p.k; i++)
        bench__result_destroy(&p.results[i]);
    free(p.cal);
    free(p.absent_ids);
    free(p.absent_verdicts);
    free(p.removed);
    bench__saved_destroy(&p.old);
    bench__saved_destroy(&p.last);
    free(p.old_sides);
    free(p.changes);
    free(p.compared);
    free(p.results);
    free(p.list);
    bench__user_builds_destroy(&builds);
    bench__code_ids_free(p.code);
    return p.exit_code;
}
