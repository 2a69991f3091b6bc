/*
 * cli_run.c: the run the command line asked for, once options are parsed and benchmarks
 * selected: the probes, --profile-time, --ab, --instructions, calibration runs, and the measuring
 * run with its comparison, reports, files and exit code.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare.h"
#include "instr.h"
#include "internal.h"
#include "proc.h"
#include "user_build.h"
#include "cli.h"

/* Options a calibration run does not pass on to its child processes (they take a value when
 * marked). */
static const struct {
    const char *name;
    bool takes_value;
} calibration_drop[] = {
    {"--save-baseline", true}, {"--baseline", true},     {"--load-baseline", true},
    {"--calibrate", true},     {"--json", true},         {"--output-format", true},
    {"--color", true},         {"--fail-on-regression", false}, {"--baseline-lenient", false},
    {"--baseline-dir", true},  {"--export-gbench", true}, {"--baseline-strict", false},
    {"--significance-level", true}, {"--noise-threshold", true},
};

/* Runs the selected benchmarks in `runs` - 1 child processes of this program for calibration;
 * the current process's own run is the last one. */
static int calibration_runs(const bench__cli *c, int argc, char **argv, bench__saved **out,
                            size_t *nout)
{
    *out = NULL;
    *nout = 0;
    size_t nchild = (size_t)c->calibrate - 1;
    bench__saved *runs = calloc(nchild, sizeof *runs);
    char **cargv = calloc((size_t)argc + 8, sizeof *cargv);
    char dir[] = "/tmp/bench-calibrate-XXXXXX";
    if (!runs || !cargv || !mkdtemp(dir)) {
        fprintf(stderr, "bench: cannot prepare calibration runs: %s\n", strerror(errno));
        free(runs);
        free(cargv);
        return -1;
    }
    char json[64], msg[768];
    bench__msg(json, sizeof json, "%s/run.json", dir);
    size_t k = 0;
    cargv[k++] = argv[0];
    /* The child's own options come first: after a "--" in the user's arguments they would be
     * taken for filters. */
    cargv[k++] = "--output-format=csv";
    cargv[k++] = "--json";
    cargv[k++] = json;
    for (int i = 1; i < argc; i++) {
        bool drop = false, with_value = false;
        for (size_t d = 0; d < sizeof calibration_drop / sizeof calibration_drop[0]; d++) {
            size_t len = strlen(calibration_drop[d].name);
            if (strncmp(argv[i], calibration_drop[d].name, len) == 0 &&
                (argv[i][len] == '\0' || argv[i][len] == '=')) {
                drop = true;
                with_value = calibration_drop[d].takes_value && argv[i][len] == '\0';
            }
        }
        if (strcmp(argv[i], "--") == 0) {
            for (; i < argc; i++)
                cargv[k++] = argv[i];
            break;
        }
        if (drop) {
            i += with_value;
            continue;
        }
        cargv[k++] = argv[i];
    }
    cargv[k] = NULL;
    int rc = 0;
    for (size_t r = 0; r < nchild && rc == 0; r++) {
        fprintf(stderr, "bench: calibration run %zu of %d (a separate process)\n", r + 1,
                c->calibrate);
        if (bench__run_self(cargv, msg, sizeof msg) != 0 ||
            bench__saved_load(json, &runs[r], msg, sizeof msg) != 0) {
            fprintf(stderr, "bench: calibration run %zu failed: %s\n", r + 1, msg);
            rc = -1;
            break;
        }
        unlink(json);
    }
    fprintf(stderr, "bench: calibration run %d of %d (this process)\n", c->calibrate,
            c->calibrate);
    unlink(json);
    rmdir(dir);
    free(cargv);
    if (rc != 0) {
        for (size_t r = 0; r < nchild; r++)
            bench__saved_destroy(&runs[r]);
        free(runs);
        return -1;
    }
    *out = runs;
    *nout = nchild;
    return 0;
}

/* ---- probes, profile mode, metric comparison ---- */

#define MAX_PROBES 4

/* The run's probes: CUDA (always: it gives the time of CUDA benchmarks), then perf events and
 * allocation statistics when asked for; the runner adds the wall clock to every benchmark. Prints one line and returns -1 on failure. */
int bench__cli_make_probes(bench__cli *c)
{
    static bench__probe *probes[MAX_PROBES];
    size_t k = 0;
    char msg[512];
    probes[k++] = bench__cuda_probe();
    if (c->perf_events) {
        bench__probe *p;
        if (bench__perf_probe_create(c->perf_events, &p, msg, sizeof msg) != 0) {
            fprintf(stderr, "bench: --perf-events: %s\n", msg);
            return -1;
        }
        probes[k++] = p;
    }
    if (c->alloc_stats) {
        bench__probe *p;
        if (bench__alloc_probe_create(&p, msg, sizeof msg) != 0) {
            fprintf(stderr, "bench: --alloc-stats: %s\n", msg);
            return -1;
        }
        probes[k++] = p;
    }
    c->run.probes = probes;
    c->run.nprobes = k;
    return 0;
}

/* --profile-time: each selected benchmark runs for the time given; one line each. */
static int profile_run(const bench__cli *c, const bench__instance *all, const bool *selected,
                       size_t n)
{
    int exit_code = BENCH_EXIT_OK;
    bench__crash_handlers_install();
    for (size_t i = 0; i < n; i++) {
        if (!selected[i])
            continue;
        bench__result r;
        memset(&r, 0, sizeof r);
        bench__run_instance(&all[i], &c->run, &r);
        char id[BENCH__ESCAPED_ID], why[4 * sizeof r.message];
        bench__escape(id, sizeof id, all[i].id);
        bench__escape(why, sizeof why, r.message);
        if (r.status == BENCH__OK) {
            char per[32];
            bench__fmt_time(per, sizeof per,
                            r.profile_iters ? r.profile_ns / (double)r.profile_iters : 0);
            printf("%s: profiled %llu iterations in %.2f s (%s per iteration)\n", id,
                   (unsigned long long)r.profile_iters, r.measure_wall_s, per);
        } else if (r.status == BENCH__SKIPPED) {
            printf("%s: skipped: %s\n", id, why);
        } else {
            fprintf(stderr, "bench: benchmark '%s' failed: %s\n", id, why);
            exit_code = BENCH_EXIT_FAILED;
        }
        bench__result_destroy(&r);
    }
    return bench__cli_finish_stdout(exit_code);
}

/* Compares each metric of r that the baseline entry also has, like time but without the
 * suite-wide correction: metrics are witnesses, not verdicts of their own. */
static void compare_metrics(const bench__cli *c, const bench__entry *e, bench__result *r)
{
    if (r->nmetrics == 0 || e->nmetrics == 0)
        return;
    r->metric_changes = calloc(r->nmetrics, sizeof *r->metric_changes);
    if (!r->metric_changes)
        return;
    for (size_t i = 0; i < r->nmetrics; i++) {
        bench__change *ch = &r->metric_changes[i];
        ch->verdict = BENCH__V_INCOMPARABLE;
        const bench__metric *m = &r->metrics[i];
        for (size_t j = 0; j < e->nmetrics; j++) {
            if (strcmp(e->metrics[j].name, m->name) != 0)
                continue;
            bench__side a, b;
            memset(&b, 0, sizeof b);
            uint64_t seed = bench__id_seed(bench__id_seed(c->run.seed, e->id), m->name);
            if (bench__side_from_samples(e->iters, e->metrics[j].totals, e->nsamples,
                                         c->run.nresamples, c->run.confidence_level, seed,
                                         &a) != 0)
                break;
            bench__side_from_estimate(&m->est.median, c->run.confidence_level, &b);
            /* compare_all classifies (compare_one leaves the verdict to the suite's pass) */
            if (bench__compare_all(&a, &b, 1, &c->cmp, ch) != 0)
                ch->verdict = BENCH__V_INCOMPARABLE;
            break;
        }
    }
}

/* What report_result needs to compare and report each result as it becomes final. */
struct run_report {
    const bench__cli *c;
    const bench__saved *old;
    bench__change *changes;
    bench__side *old_sides;
    bench__reporter *rep;
    bool color;
    int exit_code;
};

/* bench__run_all's callback: compares result k with the baseline and reports it. */
static void report_result(size_t k, bench__result *r, void *arg)
{
    struct run_report *rr = arg;
    const bench__cli *c = rr->c;
    const bench__entry *e = c->baseline ? bench__saved_find(rr->old, r->inst->id) : NULL;
    bench__verdict status = BENCH__V_INCOMPARABLE;
    rr->changes[k].verdict = BENCH__V_INCOMPARABLE;
    if (c->baseline && bench__comparable(e ? &e->status : NULL, &r->status, &status) &&
        bench__cli_side_from_entry(c, e, &rr->old_sides[k]) == 0) {
        bench__side cur;
        bench__cli_side_from_result(c, r, &cur);
        bench__compare_one(&rr->old_sides[k], &cur, &c->cmp, &rr->changes[k]);
        r->change = &rr->changes[k];
        compare_metrics(c, e, r);
    } else if (status == BENCH__V_SKIPPED || status == BENCH__V_NEW) {
        rr->changes[k].verdict = status;
        r->change = &rr->changes[k];
    }
    rr->rep->result(rr->rep, r);
    /* A skipped benchmark's own line already says so: no change line under it. */
    if (r->change && r->status == BENCH__OK && c->format == BENCH__FMT_PRETTY) {
        bench__print_change_line(stdout, r->change, rr->color);
        bench__print_metric_changes(stdout, r, &c->cmp, rr->color);
        fflush(stdout);
    }
    if (r->status == BENCH__FAILED) {
        char id[BENCH__ESCAPED_ID], why[4 * sizeof r->message];
        fprintf(stderr, "bench: benchmark '%s' failed: %s\n",
                bench__escape(id, sizeof id, r->inst->id),
                bench__escape(why, sizeof why, r->message));
        rr->exit_code = BENCH_EXIT_FAILED;
    }
}

void bench__cli_destroy_probes(bench__cli *c)
{
    for (size_t p = 0; p < c->run.nprobes; p++)
        if (c->run.probes[p]->destroy)
            c->run.probes[p]->destroy(c->run.probes[p]);
    c->run.nprobes = 0;
}

int bench__cli_run(bench__cli *c, int argc, char **argv, const bench__instance *all, size_t n,
                   const bool *selected, size_t nsel)
{
    int exit_code = BENCH_EXIT_OK, rc;
    char msg[1024] = "";
    bench__result *results = NULL;
    const bench__instance **list = NULL;
    bench__change *changes = NULL;
    bench__side *old_sides = NULL;
    bench__saved old, *cal = NULL;
    size_t ncal = 0;
    memset(&old, 0, sizeof old);
    /* With --baseline: the selected benchmarks of the baseline that this program lacks. */
    const char **absent_ids = NULL, **removed = NULL;
    bench__verdict *absent_verdicts = NULL;
    size_t nabsent = 0, nremoved = 0;
    bench__comparison comparison = {NULL, NULL, 0};
    struct program prog = {all, n};
    bench__user_builds builds = {0}; /* how the selected benchmarks' files were compiled */
    if (c->ab) {
        /* The old build's benchmarks for the same FILTERs that this one lacks: removed. */
        char *text = bench__cli_other_list(c, c->ab);
        size_t lines = 0;
        for (const char *p = text; p && *p; p++)
            lines += *p == '\n';
        removed = calloc(lines ? lines : 1, sizeof *removed);
        for (char *line = text, *nl; removed && line && (nl = strchr(line, '\n')); line = nl + 1) {
            *nl = '\0';
            if (*line && !bench__cli_has_instance(all, n, line))
                removed[nremoved++] = line;
        }
        c->abo.strict = c->strict;
        c->abo.removed = removed;
        c->abo.nremoved = nremoved;
        exit_code = bench__cli_finish_stdout(bench__ab_run(c->ab, all, selected, n, &c->abo,
                                                           c->fail_on_regression,
                                                           bench__cli_use_color(c->color)));
        free(text);
        goto out;
    }
    /* ---- instruction mode (instr.c) ---- */
    if (c->instructions) {
        char bpath[4096], spath[4096];
        bench__cli_baseline_path(c, c->baseline ? c->baseline : "", bpath, sizeof bpath);
        bench__cli_baseline_path(c, c->save_baseline ? c->save_baseline : "", spath, sizeof spath);
        /* The baseline's selected benchmarks this program lacks; a baseline that cannot be
         * read is instr.c's to report. */
        long na = 0;
        if (c->baseline && bench__saved_load(bpath, &old, msg, sizeof msg) == 0) {
            absent_ids = calloc(old.n ? old.n : 1, sizeof *absent_ids);
            absent_verdicts = calloc(old.n ? old.n : 1, sizeof *absent_verdicts);
            na = absent_ids && absent_verdicts
                     ? bench__cli_absent_entries(c, &old, bench__cli_in_program, &prog,
                                      absent_ids, absent_verdicts)
                     : -1;
        }
        if (na < 0) {
            if (!absent_ids || !absent_verdicts)
                fprintf(stderr, "bench: out of memory\n");
            exit_code = BENCH_EXIT_USAGE;
            goto out;
        }
        bench__instr_request q = {
            .all = all,
            .selected = selected,
            .n = n,
            .run = &c->run,
            .filters = c->filters,
            .nfilters = c->nfilters,
            .exact = c->exact,
            .iterations = c->instr_iterations,
            .cache_sim = c->instr_cache_sim,
            .threshold = c->noise_threshold_set ? c->cmp.noise_threshold
                                               : BENCH__INSTR_DEFAULT_THRESHOLD,
            .format = c->format,
            .color = bench__cli_use_color(c->color),
            .json_path = c->json_path,
            .baseline = c->baseline,
            .baseline_path = bpath,
            .strict = c->strict,
            .absent_ids = absent_ids,
            .absent_verdicts = absent_verdicts,
            .nabsent = (size_t)na,
            .save_baseline = c->save_baseline,
            .save_path = spath,
            .baseline_dir = bench__cli_baseline_dir(c),
            .fail_on_regression = c->fail_on_regression,
        };
        exit_code = bench__cli_finish_stdout(bench__instr_run(&q));
        goto out;
    }
    /* ---- end instruction mode ---- */

    /* A comparison is checked before anything runs: a missing or broken baseline fails fast.
     * Benchmarks it lacks (new) or that this program lacks (removed) are reported with the
     * comparison, and are an error only with --baseline-strict, checked after the run: whether
     * a benchmark is skipped here, which wins over both, is known only once it ran. */
    if (c->baseline) {
        if (bench__cli_load_named(c, c->baseline, &old) != 0) {
            exit_code = BENCH_EXIT_USAGE;
            goto out;
        }
        /* ---- instruction mode (instr.c): counts are not times ---- */
        if (bench__instr_is_mode(old.ctx.mode)) {
            fprintf(stderr, "bench: baseline '%s' holds instruction counts (saved with "
                            "--instructions): compare it with --instructions, or pick a "
                            "baseline of times\n", c->baseline);
            exit_code = BENCH_EXIT_USAGE;
            goto out;
        }
        /* ---- end instruction mode ---- */
        absent_ids = calloc(old.n ? old.n : 1, sizeof *absent_ids);
        absent_verdicts = calloc(old.n ? old.n : 1, sizeof *absent_verdicts);
        removed = calloc(old.n ? old.n : 1, sizeof *removed);
        long na = absent_ids && absent_verdicts && removed
                      ? bench__cli_absent_entries(c, &old, bench__cli_in_program, &prog,
                                       absent_ids, absent_verdicts)
                      : -1;
        if (na < 0) {
            if (!absent_ids || !absent_verdicts || !removed)
                fprintf(stderr, "bench: out of memory\n");
            exit_code = BENCH_EXIT_USAGE;
            goto out;
        }
        nabsent = (size_t)na;
        for (size_t j = 0; j < nabsent; j++)
            if (absent_verdicts[j] == BENCH__V_REMOVED)
                removed[nremoved++] = absent_ids[j];
        comparison = (bench__comparison){c->baseline, removed, nremoved};
    }

    c->run.progress = isatty(STDERR_FILENO) && c->format == BENCH__FMT_PRETTY;
    bool color = bench__cli_use_color(c->color);
    bench__context ctx;
    bench__context_collect(&ctx, &c->run);
    if (bench__user_builds_init(&builds, all, selected, n) == 0)
        bench__user_builds_attach(&ctx, &builds);
    {
        char why[256];
        if (bench__program_hash("/proc/self/exe", ctx.program_hash, sizeof ctx.program_hash,
                                &ctx.program_bytes, why, sizeof why) != 0)
            ctx.program_hash[0] = '\0';
        if (bench__libraries_hash(ctx.program_libs, sizeof ctx.program_libs, why,
                                  sizeof why) != 0)
            ctx.program_libs[0] = '\0';
    }
    /* A baseline keeps the machine's drift canaries, and a comparison measures them again. */
    if ((c->save_baseline || c->baseline) && bench__canaries_measure(ctx.canary) == 0)
        ctx.have_canaries = true;
    double drift = 0; /* the largest drift of a canary since the baseline was saved */
    for (size_t i = 0; i < ctx.nwarnings; i++)
        fprintf(stderr, "bench: warning: %s\n", ctx.warnings[i]);
    bench__context_change context = {{0}, {0}};
    if (c->baseline) {
        ctx.comparison = &comparison;
        bench__context_id now;
        bench__context_id_from(&now, &ctx);
        bench__cli_warn_context(&now, &old.ctx, c->baseline, &context);
        double d[BENCH__NCANARIES];
        char words[512];
        if (ctx.have_canaries &&
            bench__canaries_drift(ctx.canary, old.ctx.canary, d, words, sizeof words) > 0) {
            for (int q = 0; q < BENCH__NCANARIES; q++)
                if (isfinite(d[q]) && fabs(d[q]) > drift)
                    drift = fabs(d[q]);
            c->cmp.drift_sd = bench__canaries_shared_drift(d);
            c->cmp.drift_known = isfinite(c->cmp.drift_sd);
            /* Said only when it matters: a drift beyond the noise threshold. */
            if (drift > c->cmp.noise_threshold)
                fprintf(stderr, "bench: warning: the machine changed since baseline '%s' was "
                                "saved (drift canaries): %s\n", c->baseline, words);
        }
    }
    if (c->calibrate && calibration_runs(c, argc, argv, &cal, &ncal) != 0) {
        exit_code = bench__proc_interrupted() ? 128 + bench__proc_interrupted()
                                              : BENCH_EXIT_FAILED;
        goto out;
    }

    if (bench__cli_make_probes(c) != 0) {
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    if (c->run.profile_time > 0) {
        exit_code = profile_run(c, all, selected, n);
        goto out;
    }

    bench__reporter rep;
    switch (c->format) {
    case BENCH__FMT_JSON:
        bench__reporter_json(&rep, stdout);
        break;
    case BENCH__FMT_CSV:
        bench__reporter_csv(&rep, stdout);
        break;
    case BENCH__FMT_MARKDOWN:
        bench__reporter_markdown(&rep, stdout);
        break;
    case BENCH__FMT_BENCHER:
        bench__reporter_bencher(&rep, stdout);
        break;
    default:
        bench__reporter_pretty(&rep, stdout, color);
        break;
    }
    results = calloc(nsel, sizeof *results);
    changes = calloc(nsel, sizeof *changes);
    old_sides = calloc(nsel, sizeof *old_sides);
    if (!results || !changes || !old_sides) {
        fprintf(stderr, "bench: out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    list = calloc(nsel ? nsel : 1, sizeof *list);
    if (!list) {
        fprintf(stderr, "bench: out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (selected[i])
            list[k++] = &all[i];
    rep.begin(&rep, &ctx);
    struct run_report rr = {c, &old, changes, old_sides, &rep, color, BENCH_EXIT_OK};
    if (c->run.in_process) {
        /* A closed stdout (`bench | head`) must not kill the run before its files are
         * written; in worker mode bench__run_isolated sees to this with the interrupts. */
        signal(SIGPIPE, SIG_IGN);
        bench__crash_handlers_install();
        rc = bench__run_all(list, k, &c->run, results, report_result, &rr);
    } else {
        rc = bench__run_isolated(list, k, &c->run, argc, argv, results, report_result, &rr);
    }
    if (rc == BENCH_EUSAGE && bench__proc_interrupted()) {
        /* Interrupted: the workers are gone; nothing half-done is written or saved. */
        int sig = bench__proc_interrupted();
        fflush(stdout);
        fprintf(stderr, "bench: interrupted by %s: stopped the worker processes; no results "
                        "or baseline were written\n", bench__signal_name(sig));
        for (size_t i = 0; i < k; i++)
            bench__result_destroy(&results[i]);
        exit_code = 128 + sig;
        goto out;
    }
    if (rc != 0) {
        fprintf(stderr, "bench: out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    exit_code = rr.exit_code;
    if (cal)
        bench__noise_from_runs(results, k, cal, ncal);

    /* Final verdicts need every p-value (Holm's correction over the whole comparison). */
    /* The summary lists the compared benchmarks, then those with a status (skipped, new) and
     * the baseline's that this program lacks. */
    if (c->baseline) {
        size_t rows = k + nabsent, m = 0, ns = 0;
        bench__side *a = calloc(k ? k : 1, sizeof *a), *b = calloc(k ? k : 1, sizeof *b);
        bench__change *ch = calloc(rows ? rows : 1, sizeof *ch);
        const char **cids = calloc(rows ? rows : 1, sizeof *cids);
        size_t *map = calloc(k ? k : 1, sizeof *map);
        if (a && b && ch && cids && map) {
            for (size_t i = 0; i < k; i++) {
                const bench__change *rch = results[i].change;
                if (rch && (rch->verdict == BENCH__V_SKIPPED || rch->verdict == BENCH__V_NEW))
                    ns++;
                else if (rch) {
                    a[m] = old_sides[i];
                    bench__cli_side_from_result(c, &results[i], &b[m]);
                    cids[m] = results[i].inst->id;
                    map[m++] = i;
                }
            }
            if (bench__compare_all(a, b, m, &c->cmp, ch) == 0) {
                if (bench__cli_confirm_suspects(c, &old, &ctx, cids, ch, m, drift) != 0) {
                    int sig = bench__proc_interrupted();
                    fprintf(stderr, "bench: interrupted by %s: stopped the confirmation; no "
                                    "results or baseline were written\n",
                            bench__signal_name(sig));
                    free(a);
                    free(b);
                    free(ch);
                    free(cids);
                    free(map);
                    for (size_t i = 0; i < k; i++)
                        bench__result_destroy(&results[i]);
                    exit_code = 128 + sig;
                    goto out;
                }
                for (size_t j = 0; j < m; j++)
                    changes[map[j]] = ch[j];
                size_t t = m;
                for (size_t i = 0; i < k; i++)
                    if (results[i].change && t < m + ns &&
                        (results[i].change->verdict == BENCH__V_SKIPPED ||
                         results[i].change->verdict == BENCH__V_NEW)) {
                        ch[t].verdict = results[i].change->verdict;
                        cids[t++] = results[i].inst->id;
                    }
                for (size_t j = 0; j < nabsent; j++) {
                    ch[t].verdict = absent_verdicts[j];
                    cids[t++] = absent_ids[j];
                }
                FILE *o = c->format == BENCH__FMT_PRETTY ? stdout : stderr;
                char what[128];
                bench__msg(what, sizeof what, "baseline '%s'", c->baseline);
                bench__print_compare_summary(o, what, cids, ch, t, &c->cmp, "Holm", &context,
                                             o == stdout ? color : isatty(STDERR_FILENO));
                int cmp_exit = bench__cli_compare_exit(c, cids, ch, t, what);
                if (exit_code == BENCH_EXIT_OK)
                    exit_code = cmp_exit;
            }
        }
        free(a);
        free(b);
        free(ch);
        free(cids);
        free(map);
    }
    char shown[4 * sizeof msg]; /* messages quote paths: escaped */
    if (rep.end(&rep, &ctx, results, k) != 0 || fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "bench: writing the report to stdout failed\n");
        exit_code = exit_code == BENCH_EXIT_OK ? BENCH_EXIT_USAGE : exit_code;
    }
    if (c->json_path &&
        bench__json_write_file(c->json_path, &ctx, results, k, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench: %s\n", bench__escape(shown, sizeof shown, msg));
        if (exit_code == BENCH_EXIT_OK)
            exit_code = BENCH_EXIT_USAGE;
    }
    if (c->gbench_path &&
        bench__gbench_write_file(c->gbench_path, &ctx, results, k, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench: %s\n", bench__escape(shown, sizeof shown, msg));
        if (exit_code == BENCH_EXIT_OK)
            exit_code = BENCH_EXIT_USAGE;
    }
    if (c->save_baseline && bench__cli_save_named(c, &ctx, results, k) != 0 &&
        exit_code == BENCH_EXIT_OK)
        exit_code = BENCH_EXIT_USAGE;
    for (size_t i = 0; i < k; i++)
        bench__result_destroy(&results[i]);
out:
    bench__cli_destroy_probes(c);
    for (size_t r = 0; cal && r < ncal; r++)
        bench__saved_destroy(&cal[r]);
    free(cal);
    free(absent_ids);
    free(absent_verdicts);
    free(removed);
    bench__saved_destroy(&old);
    free(old_sides);
    free(changes);
    free(results);
    free(list);
    bench__user_builds_destroy(&builds);
    return exit_code;
}
