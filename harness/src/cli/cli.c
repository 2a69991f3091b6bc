/*
 * cli.c: the bench program's entry point: bench_main parses the command line (cli_options.c),
 * answers what needs no benchmark (--help, --version, --context, --load-baseline,
 * --history-show, --list-events), serves as a worker process when started as one (with its
 * mode's client), selects the benchmarks, and hands the run to pipeline.c's pipeline. Also the
 * library's default main(), which a program's own main() replaces.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "probes/alloc.h"
#include "probes/cuda_backend.h"
#include "probes/perf.h"
#include "probes/perf_events.h"
#include "probes/probes.h"
#include "report/report_history.h"
#include "run/client.h"
#include "run/compare_files.h"
#include "run/history_confirm.h"
#include "run/select.h"
#include "store/history.h"
#include "sys/proc.h"
#include "sys/user_build.h"

#ifndef HARNESS_FEATURES
#define HARNESS_FEATURES "unknown"
#endif

/*
 * A worker process of an isolated run (measure/worker.c): measures the job that came in the
 * environment (BENCH_WORKER_JOB), which no process it starts should inherit, with the plan and
 * probes of the run's mode (its client sets them up as in the manager). Returns the exit code.
 */
static int run_worker_job(bench__request *c, const char *job, const bench__instance *all, size_t n)
{
    char job_copy[512], msg[512];
    /* Nothing goes to descriptor 3 before it is known to be a manager's channel. */
    if (bench__worker_verify(msg, sizeof msg) != 0) {
        bench__errf("%s\n", msg);
        return BENCH_EXIT_USAGE;
    }
    bench__msg(job_copy, sizeof job_copy, "%s", job);
    bench__job_unexport();
    const bench__client *cl = bench__client_for(c);
    /* The manager made the same probes and gave their warnings already. */
    fflush(stderr);
    int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0)
        dup2(null, STDERR_FILENO);
    int prc = cl->setup(c, true, msg, sizeof msg);
    if (saved >= 0 && null >= 0)
        dup2(saved, STDERR_FILENO);
    if (saved >= 0)
        close(saved);
    if (null >= 0)
        close(null);
    if (prc != 0) {
        cl->teardown(c);
        return bench__worker_refuse(msg);
    }
    int wrc = bench__worker_main(all, n, job_copy, &c->run);
    cl->teardown(c);
    return wrc;
}

/* Prints the selected ids, one per line (--list); checks the probes' arguments too. */
static int list_selected(bench__request *c, const bench__instance *all, size_t n,
                         const bool *selected)
{
    char msg[512];
    if (bench__request_make_probes(c, msg, sizeof msg) != 0) {
        bench__errf("%s\n", msg);
        bench__request_destroy_probes(c);
        return BENCH_EXIT_USAGE;
    }
    bench__request_destroy_probes(c);
    for (size_t i = 0; i < n; i++)
        if (selected[i]) {
            bench__fputs_escaped(stdout, all[i].id);
            putchar('\n');
        }
    return bench__finish_stdout(BENCH_EXIT_OK);
}

/* Marks the benchmarks the FILTERs select into *selected (malloc'd) and counts them; -1 after
 * one line on stderr when none is. */
static long select_benchmarks(const bench__request *c, const bench__instance *all, size_t n,
                              bool **selected)
{
    *selected = calloc(n ? n : 1, sizeof **selected);
    const char **ids = calloc(n ? n : 1, sizeof *ids);
    long nsel = -1;
    if (!*selected || !ids) {
        bench__errf("out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        ids[i] = all[i].id;
    if (bench__select(c, ids, n, *selected) != 0)
        goto out;
    nsel = 0;
    for (size_t i = 0; i < n; i++)
        nsel += (*selected)[i];
    if (nsel == 0) {
        if (n == 0)
            bench__errf("this program has no benchmarks (no BENCH_FN was linked in)\n");
        else if (c->shard_n)
            bench__errf("shard %u/%u holds none of the benchmarks selected (see --list)\n",
                        c->shard_k, c->shard_n);
        else
            bench__errf("no benchmark matches the filter%s (see --list)\n",
                        c->nfilters > 1 ? "s" : "");
        nsel = -1;
    }
out:
    free(ids);
    return nsel;
}

/* --history-show's selection: the FILTERs over the ids the history holds. */
static int select_history(const char *const *ids, size_t n, bool *selected, void *arg)
{
    return bench__select(arg, ids, n, selected);
}

/* --history-show's text: the history's runs, then each selected benchmark's series (read into
 * *view) with its change points, printed by report/. 0, or an error code with one line in msg. */
static int show_series(bench__request *c, bench__history_view *view, char *msg, size_t len)
{
    bench__hrun *runs = NULL;
    size_t nruns = 0;
    int rc = bench__history_read(c->history, select_history, (void *)c, view, msg, len);
    if (rc == 0)
        rc = bench__history_runs(c->history, &runs, &nruns, msg, len);
    if (rc == 0)
        bench__report_history_show(stdout, runs, nruns, view);
    bench__history_runs_free(runs, nruns);
    return rc;
}

/* --history-show FILE: the runs, then each selected benchmark's series and change points; with
 * --history-confirm, each change point checked by running the programs around it again. */
static int show_history(bench__request *c)
{
    char msg[1024], shown[4 * sizeof msg];
    bench__history_view view = {0};
    int rc = bench__history_open(c->history_show, false, &c->history, msg, sizeof msg);
    bool bmf = c->format == BENCH__FMT_BMF;
    if (rc == 0 && bmf)
        rc = bench__history_bmf(stdout, c->history, select_history, (void *)c, msg, sizeof msg);
    else if (rc == 0)
        rc = show_series(c, &view, msg, sizeof msg);
    if (rc != 0) {
        if (msg[0])
            bench__errf("%s\n", bench__escape(shown, sizeof shown, msg));
        fflush(stdout);
        bench__history_view_free(&view);
        bench__history_close(c->history);
        c->history = NULL;
        return BENCH_EXIT_USAGE;
    }
    int exit_code = BENCH_EXIT_OK;
    /* Confirmed first: a confirmed step is placed at its program change, in the JSON too. */
    if (c->history_confirm) {
        fflush(stdout);
        if (bench__history_confirm(stdout, c, &view) != 0)
            exit_code = 128 + bench__proc_interrupted();
    }
    if (c->json_path && exit_code == BENCH_EXIT_OK &&
        bench__history_view_write(c->json_path, bench__history_name(c->history), &view, msg,
                                  sizeof msg) != 0) {
        bench__errf("%s\n", bench__escape(shown, sizeof shown, msg));
        exit_code = BENCH_EXIT_USAGE;
    }
    bench__history_view_free(&view);
    bench__history_close(c->history);
    c->history = NULL;
    return bench__finish_stdout(exit_code);
}

/* --history-copy FROM --history TO: every run of FROM that TO lacks, copied. */
static int copy_history(const bench__request *c)
{
    char msg[1024], shown[4 * sizeof msg];
    bench__history *from = NULL, *to = NULL;
    size_t copied = 0, skipped = 0;
    int rc = bench__history_open(c->history_copy, false, &from, msg, sizeof msg);
    if (rc == 0)
        rc = bench__history_open(c->history_path, true, &to, msg, sizeof msg);
    if (rc == 0)
        rc = bench__history_copy(from, to, &copied, &skipped, msg, sizeof msg);
    if (rc == 0 || copied > 0) {
        char a[1024], b[1024];
        printf("history copy: %zu run%s copied, %zu already there (%s -> %s)\n", copied,
               copied == 1 ? "" : "s", skipped,
               bench__escape(a, sizeof a, bench__history_name(from)),
               bench__escape(b, sizeof b, bench__history_name(to)));
    }
    if (rc != 0)
        bench__errf("%s\n", bench__escape(shown, sizeof shown, msg));
    bench__history_close(from);
    bench__history_close(to);
    return bench__finish_stdout(rc == 0 ? BENCH_EXIT_OK
                                : bench__proc_interrupted() ? 128 + bench__proc_interrupted()
                                                            : BENCH_EXIT_USAGE);
}

int bench_main(int argc, char **argv)
{
    /* Every message begins with the program's name as the user invoked it, a worker's too: its
     * manager names it, as the worker's own argv[0] may be another path (the executable under a
     * launcher, the other program of --ab). Set before anything can fail or crash (crash.c). */
    const char *job = getenv(BENCH__JOB_ENV);
    const char *name = job ? getenv(BENCH__JOB_NAME_ENV) : NULL;
    if (!name || !*name)
        name = argc > 0 ? argv[0] : NULL;
    bench__set_prog_name(name);
    bench__request c;
    if (bench__cli_parse(&c, argc, argv) != 0)
        return BENCH_EXIT_USAGE;
    if (c.help) {
        bench__cli_print_usage(stdout);
        return bench__finish_stdout(BENCH_EXIT_OK);
    }
    if (c.version) {
        /* The counters and CUDA layers say whether this program links their components. */
        printf("bench (harness) %s\nbuilt with: %s, %s, %s\n", bench_version(),
               bench__perf_feature(), bench__cuda_feature(), HARNESS_FEATURES);
        return bench__finish_stdout(BENCH_EXIT_OK);
    }
    if (c.context) {
        bench__context ctx;
        bench__context_collect(&ctx, &c.run);
        bench__probes_context(&ctx);
        /* The program's build: its benchmark files name the records to read. A registry that
         * cannot be listed (a duplicate id) leaves them unknown; --list says why. */
        bench__instance *reg = NULL;
        size_t nreg = 0;
        bench__user_builds builds = {0};
        char why[256];
        if (bench__registry_list(&reg, &nreg, why, sizeof why) == 0 &&
            bench__user_builds_init(&builds, reg, NULL, nreg) == 0)
            ctx.user_builds = &builds;
        bench__program_build_read("/proc/self/exe", ctx.user_builds, &ctx.program_build);
        bench__context_print(stdout, &ctx);
        bench__user_builds_destroy(&builds);
        free(reg);
        return bench__finish_stdout(BENCH_EXIT_OK);
    }
    if (c.load_baseline)
        return bench__compare_files(&c);
    if (c.history_show)
        return show_history(&c);
    if (c.history_copy)
        return copy_history(&c);
    if (c.list_events)
        return bench__finish_stdout(bench__perf_list_events(stdout));

    bench__instance *all = NULL;
    size_t n = 0;
    char msg[1024] = "";
    /* Allocation counting needs its preload library: re-executes with it before anything. */
    bool alloc;
    bench__request_probe(&c, "alloc", &alloc);
    if (alloc && bench__alloc_preload(argc, argv, msg, sizeof msg) != 0) {
        bench__errf("--alloc-stats: %s\n", msg);
        return BENCH_EXIT_USAGE;
    }
    int rc = bench__registry_list(&all, &n, msg, sizeof msg);
    if (rc != 0) {
        bench__errf("%s\n", msg[0] ? msg : bench__strerror(rc));
        return BENCH_EXIT_USAGE;
    }
    int exit_code;
    bool *selected = NULL;
    long nsel;
    if (job)
        exit_code = run_worker_job(&c, job, all, n);
    else if ((nsel = select_benchmarks(&c, all, n, &selected)) < 0)
        exit_code = BENCH_EXIT_USAGE;
    else if (c.list)
        exit_code = list_selected(&c, all, n, selected);
    else
        exit_code = bench__pipeline_run(&c, argc, argv, all, n, selected, (size_t)nsel);
    free(selected);
    free(all);
    return exit_code;
}

/* The default entry point: a file of BENCH_FNs needs no main(). A program's own main() (strong)
 * replaces this weak one and may call bench_main() itself. */
__attribute__((weak, visibility("default"))) int main(int argc, char **argv)
{
    return bench_main(argc, argv);
}
