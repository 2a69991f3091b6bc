/*
 * baselines.c: baselines for the pipeline: finding, loading and saving them by name,
 * comparing a run or a saved file with one (--baseline, --load-baseline), the benchmarks new to
 * or removed from it, and the exit code of a comparison. Its suspect verdicts are settled in
 * suspects.c.
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

#include "compare/compare.h"
#include "compare/verdict.h"
#include "report/report_compare.h"
#include "run/baselines.h"
#include "run/client.h"
#include "run/explain.h"
#include "run/instr.h"
#include "run/pipeline.h"
#include "run/select.h"
#include "sys/clock.h"
#include "sys/proc.h"

/* ---- baselines ---- */

const char *bench__baseline_dir(const bench__request *c)
{
    if (c->baseline_dir)
        return c->baseline_dir;
    const char *env = getenv("BENCH_BASELINE_DIR");
    return env && *env ? env : "baselines";
}

void bench__baseline_path(const bench__request *c, const char *name, char *buf, size_t len)
{
    bench__msg(buf, len, "%s/%s.json", bench__baseline_dir(c), name);
}

/* Loads baseline `name`; on failure prints one line and returns -1. */
int bench__baseline_load_named(const bench__request *c, const bench__client *cl, const char *name,
                          bench__saved *out)
{
    char path[4096], msg[768];
    bench__baseline_path(c, name, path, sizeof path);
    int rc = bench__saved_load(path, out, msg, sizeof msg);
    /* Only a file that is not there is "not found": one that cannot be read (permissions)
     * says so in the loader's own words. */
    struct stat st;
    if (rc == BENCH_EIO && stat(path, &st) != 0 && errno == ENOENT) {
        bench__errf("baseline '%s' not found: %s does not exist (save one with "
                    "%s--save-baseline %s)\n", name, path, cl->save_with,
                    name);
        return -1;
    }
    if (rc != 0) {
        char shown[4 * sizeof msg]; /* quotes the file's path and keys: escaped */
        bench__errf("baseline '%s' is unusable: %s\n", name,
                    bench__escape(shown, sizeof shown, msg));
        return -1;
    }
    return 0;
}

/* The part of a save that happens under the baseline's lock once its file is replaced
 * (bench__baseline_save_then): the snapshot goes into place beside the file that names it, or,
 * when this save keeps none, a snapshot of an earlier save goes, so that no program is left
 * beside a file that does not name it. Never fails the save: what went wrong is a warning. */
typedef struct snapshot_step {
    const char *dir;
    const char *name;
    bench__snapshot *snap; /* NULL: this save keeps no program */
    char warning[1024];    /* "" or why the program beside the baseline is not this one */
} snapshot_step;

static int snapshot_after_save(void *arg, char *msg, size_t msglen)
{
    (void)msg;
    (void)msglen;
    snapshot_step *st = arg;
    if (st->snap &&
        bench__snapshot_commit(st->dir, st->name, st->snap, st->warning, sizeof st->warning) == 0)
        return 0;
    char path[4200];
    bench__msg(path, sizeof path, "%s/%s.program", st->dir, st->name);
    if (unlink(path) != 0 && errno != ENOENT && !st->warning[0])
        bench__msg(st->warning, sizeof st->warning, "cannot remove the older %s: %s", path,
                   strerror(errno));
    return 0;
}

bench__result *bench__ok_results(const bench__result *results, size_t n, size_t *k)
{
    bench__result *ok = calloc(n ? n : 1, sizeof *ok);
    *k = 0;
    if (!ok)
        return NULL;
    /* A saved run holds measurements, not how they compared with another one. */
    for (size_t i = 0; i < n; i++)
        if (results[i].status == BENCH__OK) {
            ok[*k] = results[i];
            ok[*k].change = NULL;
            ok[(*k)++].metric_changes = NULL;
        }
    return ok;
}

int bench__save_named(const char *dir, const char *name, const char *path,
                      const bench__context *ctx, const bench__result *results, size_t n,
                      bool snapshot, double timeout_s)
{
    size_t measured = 0;
    for (size_t i = 0; i < n; i++)
        measured += results[i].status == BENCH__OK;
    if (measured == 0) {
        /* Nothing to keep: the file, if there is one, stays as it was. */
        bench__errf("baseline '%s' not saved: no benchmark was measured\n", name);
        return 0;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        bench__errf("cannot create the baseline directory %s: %s\n", dir,
                    strerror(errno));
        return -1;
    }
    /* Only measured benchmarks are saved: a failed or skipped one keeps its old entry. */
    size_t k = 0;
    bench__result *ok = bench__ok_results(results, n, &k);
    if (!ok) {
        bench__errf("out of memory\n");
        return -1;
    }
    bench__context sctx = *ctx;
    sctx.comparison = NULL;
    sctx.program_file[0] = '\0';
    sctx.program_mac[0] = '\0';
    char msg[1024], shown[4 * sizeof msg];
    /* The program that was measured goes beside the baseline, so that a later comparison can
     * run it interleaved with its own program (bench__confirm_suspects), signed with this
     * user's key so that only a copy this user's harness made is ever run. */
    bench__snapshot snap;
    snapshot_step step = {.dir = dir, .name = name, .snap = NULL, .warning = ""};
    int rc = 0;
    if (snapshot) {
        rc = bench__snapshot_prepare(dir, name, timeout_s, &snap, msg, sizeof msg);
        if (rc == BENCH_EUSAGE) {
            free(ok);
            return -1; /* interrupted: the caller says so */
        }
        if (rc == 0 && strcmp(snap.hash, ctx->program_hash) != 0) {
            /* The file was rewritten in place since the run began: not what was measured. */
            bench__snapshot_discard(&snap);
            bench__msg(msg, sizeof msg, "%s", ctx->program_hash[0]
                                                  ? "the program's file changed during the run"
                                                  : "this program's hash is unknown");
            rc = BENCH_EIO;
        }
        if (rc == 0) {
            step.snap = &snap;
            bench__msg(sctx.program_file, sizeof sctx.program_file, "%s.program", name);
            char why[512];
            if (bench__snapshot_sign(snap.hash, snap.bytes, sctx.program_mac,
                                     sizeof sctx.program_mac, why, sizeof why) != 0) {
                sctx.program_mac[0] = '\0';
                bench__errf("warning: baseline '%s' keeps its program unsigned (%s): "
                            "a later comparison runs it only with --trust-snapshots\n",
                            name, bench__escape(shown, sizeof shown, why));
            }
        } else {
            bench__errf("warning: baseline '%s' keeps no copy of this program (%s): "
                        "a later comparison cannot confirm a change by running it\n",
                        name, bench__escape(shown, sizeof shown, msg));
            rc = 0;
        }
    }
    if (bench__proc_interrupted()) {
        if (step.snap)
            bench__snapshot_discard(&snap);
        free(ok);
        return -1;
    }
    rc = bench__baseline_save_then(path, &sctx, ok, k, snapshot ? snapshot_after_save : NULL,
                                   &step, msg, sizeof msg);
    free(ok);
    if (rc != 0) {
        if (step.snap)
            bench__snapshot_discard(&snap);
        if (rc == BENCH_EUSAGE && bench__proc_interrupted())
            return -1; /* the caller says so */
        bench__errf("saving baseline '%s' failed: %s\n", name,
                    bench__escape(shown, sizeof shown, msg));
        return -1;
    }
    if (step.warning[0])
        bench__errf("warning: baseline '%s' was saved but its copy of the program "
                    "was not: %s\n", name, bench__escape(shown, sizeof shown, step.warning));
    bench__errf("saved %zu benchmark%s to baseline '%s' (%s)\n", k, k == 1 ? "" : "s",
                name, path);
    return 0;
}

/* Compares the contexts into *out and warns about each kind of difference on its own line. */
void bench__baseline_warn_context(const bench__context_id *now, const bench__context_id *then,
                         const char *name, bench__context_change *out)
{
    bench__context_compare(now, then, out);
    if (out->machine[0])
        bench__errf("warning: baseline '%s' was measured on a different machine: "
                    "%s\n", name, out->machine);
    if (out->build[0])
        bench__errf("warning: baseline '%s' was measured with a different build: "
                    "%s\n", name, out->build);
}

int bench__side_of_entry(const bench__request *c, const bench__entry *e, bench__side *out)
{
    if (e->processes >= 2 &&
        bench__side_from_processes(e->iters, e->totals_ns, e->process, e->nsamples,
                                   e->processes, c->run.confidence_level, out) == 0) {
        out->noise = e->noise;
        return 0;
    }
    uint64_t seed = bench__id_seed(c->run.seed, e->id);
    if (bench__side_from_samples(e->iters, e->totals_ns, e->nsamples, c->run.nresamples,
                                 c->run.confidence_level, seed, out))
        return -1;
    out->noise = e->noise;
    return 0;
}

void bench__side_of_result(const bench__request *c, const bench__result *r, bench__side *out)
{
    /* The same two-level estimate (and speed groups) a saved entry gives. */
    if (r->processes < 2 || !r->process ||
        bench__side_from_processes(r->iters, r->totals_ns, r->process, r->nsamples, r->processes,
                                   c->run.confidence_level, out) != 0) {
        memset(out, 0, sizeof *out);
        bench__side_from_estimate(&r->est.median, c->run.confidence_level, out);
    }
    out->noise = r->noise;
}

/*
 * The exit code of a finished comparison of n rows (ids[i] names ch[i]): 1 for a regression with
 * --fail-on-regression; otherwise 2 when --baseline-strict meets a new or removed benchmark
 * (each named on stderr); else 0. Skipped benchmarks never change it.
 */
bench__gate bench__request_gate(const bench__request *c)
{
    return (bench__gate){.strict = c->strict > 0, .fail_on_regression = c->fail_on_regression,
                         .fail_on_inconclusive = c->fail_on_inconclusive};
}

int bench__request_compare_exit(const bench__request *c, const char *const *ids,
                                const bench__change *ch, size_t n, const char *against)
{
    bench__gate gate = bench__request_gate(c);
    return bench__compare_exit(ids, ch, n, &gate, against);
}

int bench__summarize(const bench__request *c, const bench__client *cl, FILE *o,
                         const char *what, const char **ids, bench__change *ch, size_t n,
                         const bench__context_change *context, bool color)
{
    if (bench__sort_changes(ids, ch, n) != 0 ||
        bench__print_compare_summary(o, what, ids, ch, n, &c->cmp, cl->method, context,
                                     color) != 0) {
        bench__errf("out of memory\n");
        return BENCH_EXIT_USAGE;
    }
    return bench__request_compare_exit(c, ids, ch, n, what);
}

/* Whether `id` is one of the n instances. (Their order, with parameters compared as numbers,
 * is not strcmp's: no binary search.) */
bool bench__has_instance(const bench__instance *all, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].id, id) == 0)
            return true;
    return false;
}

/*
 * The entries of `old` that the filters select and that `present` does not know: the benchmarks
 * a comparison reports as removed (or skipped, when the old side skipped them). A benchmark the
 * filters do not select is not reported at all: a filtered run says nothing about the rest.
 * Fills ids[] and verdicts[] (room for old->n each) and returns their count, or -1 after one line
 * on stderr.
 */
long bench__baseline_absent_entries(const bench__request *c, const bench__saved *old,
                               bool (*present)(const void *where, const char *id),
                               const void *where, const char **ids, bench__verdict *verdicts)
{
    const char **all = calloc(old->n ? old->n : 1, sizeof *all);
    bool *sel = calloc(old->n ? old->n : 1, sizeof *sel);
    long k = -1;
    if (!all || !sel) {
        bench__errf("out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < old->n; i++)
        all[i] = old->entries[i].id;
    if (bench__select(c, all, old->n, sel) != 0)
        goto out;
    k = 0;
    for (size_t i = 0; i < old->n; i++) {
        if (!sel[i] || present(where, all[i]))
            continue;
        bench__comparable(&old->entries[i].status, NULL, &verdicts[k]);
        ids[k++] = all[i];
    }
out:
    free(all);
    free(sel);
    return k;
}

bool bench__in_program(const void *where, const char *id)
{
    const struct program *p = where;
    return bench__has_instance(p->all, p->n, id);
}

/*
 * --ab: what `OTHER --list [--exact] -- FILTER...` prints, so that the benchmarks the old build
 * has for the same FILTERs and this one lacks are reported as removed. Returns the malloc'd text
 * (caller frees), or NULL when OTHER cannot run or lists nothing (it then has nothing more to
 * report; errors about OTHER are bench__ab_run's to print).
 */
char *bench__ab_other_list(const bench__request *c, const char *prog)
{
    const char **argv = calloc(c->nfilters + 5, sizeof *argv);
    if (!argv)
        return NULL;
    size_t k = 0;
    argv[k++] = prog;
    argv[k++] = "--list";
    if (c->exact)
        argv[k++] = "--exact";
    argv[k++] = "--";
    for (size_t i = 0; i < c->nfilters; i++)
        argv[k++] = c->filters[i];
    /* Like every child of the harness, under a deadline: --timeout, as its workers are. */
    bench__proc p;
    bench__proc_spec spec = {.path = prog, .argv = (char *const *)argv,
                             .channel = BENCH__PROC_STDOUT, .quiet = true};
    char why[256];
    bench__proc_interrupts_install();
    int rc = bench__proc_start(&p, &spec, why, sizeof why);
    free(argv);
    if (rc != 0)
        return NULL;
    double timeout = bench__request_timeout(c);
    int64_t deadline = bench__now_ns() + (int64_t)(timeout * 1e9);
    size_t len = 0, cap = 4096;
    char *text = malloc(cap), line[512];
    while (text && (rc = bench__proc_line(&p, line, sizeof line, deadline)) == 1) {
        size_t n = strlen(line);
        if (len + n + 2 > cap) {
            char *more = cap > BENCH__MAX_FILE_BYTES ? NULL : realloc(text, cap * 2);
            if (!more) {
                free(text);
                text = NULL;
                break;
            }
            text = more;
            cap *= 2;
        }
        memcpy(text + len, line, n);
        len += n;
        text[len++] = '\n';
    }
    bench__proc_end end = bench__proc_wait(&p, deadline);
    if (text && (rc != 0 || end != BENCH__PROC_EXITED || p.code != 0)) {
        free(text);
        text = NULL;
    }
    if (text)
        text[len] = '\0';
    return text;
}
