/*
 * baselines.c: baselines for the pipeline: finding, loading and saving them by name,
 * comparing a run or a saved file with one (--baseline, --load-baseline), the benchmarks new to
 * or removed from it, confirming suspect changes against its program snapshot, and the exit code
 * of a comparison.
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

/*
 * Settles the suspect verdicts of a saved-baseline comparison (ch[0..m), ids[i] naming ch[i]):
 * those that claim a change (regressed, improved) and those that cannot rule one out
 * (inconclusive), beyond the saved numbers, which cannot tell the machine's drift since the save
 * from a change of the code:
 *   - the program is byte for byte the one the baseline measured: the code did not change, so
 *     no suspect is a change of it (verdict "no change", marked same_program);
 *   - a regressed or improved verdict that the saved numbers already decide beyond doubt needs
 *     no run: the drift canaries show that the machine did not change, and the interval lies
 *     beyond the threshold by three times the largest run-to-run noise known
 *     (bench__verdict_clear; unless --explain, which profiles only what a paired run confirmed);
 *   - otherwise, when the baseline keeps its program's snapshot and it runs: the suspects are
 *     measured again, paired, snapshot (A) against this program (B), as --ab does, within one
 *     time budget spent on those still undecided, and the verdict comes from that paired
 *     comparison (marked confirmed);
 *   - otherwise the verdicts stay as the saved numbers give them, regressed and improved
 *     guarded against the canaries' largest drift (bench__verdict_drift_guard), and a note
 *     says why.
 * Returns 0, or -1 when the run was interrupted.
 */
static void drift_guard(bench__change *ch, size_t m, double drift)
{
    for (size_t j = 0; j < m; j++)
        bench__verdict_drift_guard(&ch[j], drift);
}

/* How a suspect verdict can be settled beyond the saved numbers. */
typedef enum settle {
    SETTLE_NUMBERS = 0, /* not at all: it rests on the saved numbers */
    SETTLE_UNKNOWN,     /* the entry does not say which program measured it (older files) */
    SETTLE_LIBS,        /* the shared libraries changed since the entry was measured */
    SETTLE_OTHER,       /* measured by a program that is neither this one nor the snapshot */
    SETTLE_NO_COPY,     /* measured by the baseline's program, of which it keeps no copy */
    SETTLE_SAME,        /* this very program measured it: not a change of the code */
    SETTLE_CLEAR,       /* the snapshot could run it, but the saved numbers decide it clearly */
    SETTLE_CONFIRM,     /* the baseline's snapshot measured it: run it interleaved */
    SETTLE_KINDS
} settle;

/*
 * The run-to-run noise a clear verdict must stand beyond, when the machine is known not to have
 * changed since the save: every drift canary measured in both runs and none of them moved
 * beyond its processes' spread (bench__canaries_drift). It is then the largest of the canaries'
 * own movements (a log ratio), which the caller sets beside the drift term of each interval and
 * the default run-to-run noise. NaN when the machine may have changed, or the canaries cannot
 * say, or BENCH_CONFIRM_ALL asks for every suspect to be confirmed: no verdict is then clear.
 */
static double machine_still(const bench__request *c, const bench__saved *old,
                            const bench__context *ctx)
{
    /* BENCH_CONFIRM_ALL (docs/cli.md): every suspect the snapshot can settle is run. */
    const char *all = getenv("BENCH_CONFIRM_ALL");
    if (!ctx->have_canaries || (all && *all && strcmp(all, "0") != 0))
        return NAN;
    double d[BENCH__NCANARIES];
    bool beyond[BENCH__NCANARIES];
    char words[512];
    if (bench__canaries_drift(&ctx->canary, &old->ctx.canary, c->cmp.noise_threshold, d, beyond,
                              words, sizeof words) != 0)
        return NAN;
    double largest = 0;
    for (int q = 0; q < BENCH__NCANARIES; q++) {
        if (!isfinite(d[q]) || !(d[q] > -1))
            return NAN; /* a canary known on one side only (an older baseline) */
        largest = fmax(largest, fabs(log1p(d[q])));
    }
    return largest;
}

/* Which program measured an entry, against this program and the baseline's snapshot. */
static settle how_to_settle(const bench__entry *e, const bench__saved *old,
                            const bench__context *ctx)
{
    if (!e || !e->program_hash[0] || !bench__starts_with(e->program_hash, "sha256:"))
        return SETTLE_UNKNOWN;
    /* A program runs with today's shared libraries: when they changed since the entry was
     * measured, neither "the same program" nor a run of the snapshot would see what changed. */
    bool libs_changed = e->program_libs[0] && ctx->program_libs[0] &&
                        strcmp(e->program_libs, ctx->program_libs) != 0;
    bool same = ctx->program_hash[0] && strcmp(e->program_hash, ctx->program_hash) == 0;
    bool snapshot = strcmp(e->program_hash, old->ctx.program_hash) == 0;
    if ((same || snapshot) && libs_changed)
        return SETTLE_LIBS;
    return same                        ? SETTLE_SAME
           : !snapshot                 ? SETTLE_OTHER
           : old->ctx.program_file[0] ? SETTLE_CONFIRM
                                       : SETTLE_NO_COPY;
}

/* The first suspect id of kind k, for a note ("s/work" or "s/work and 2 more"). */
static void first_of(const char *const *ids, const settle *how, size_t m, settle k, size_t count,
                     char *buf, size_t len)
{
    for (size_t j = 0; j < m; j++)
        if (how[j] == k) {
            char id[BENCH__ESCAPED_ID];
            bench__escape(id, sizeof id, ids[j]);
            if (count > 1)
                bench__msg(buf, len, "%s and %zu more", id, count - 1);
            else
                bench__msg(buf, len, "%s", id);
            return;
        }
    buf[0] = '\0';
}

/*
 * Opens the baseline's snapshot to run it, when it may run: signed with this user's key (or
 * --trust-snapshots), in a directory and file no other user may write, not a symbolic link, an
 * ELF program whose bytes hash to what the baseline recorded. On success *fd is the sealed copy
 * to start it from. Otherwise returns BENCH_EUSAGE when the run was interrupted, or prints why
 * it is not run and returns 1.
 */
static int open_snapshot(const bench__request *c, const bench__saved *old, const char *path,
                         size_t nconfirm, int *fd)
{
    const char *name = c->baseline;
    char why[768] = "", shown[4 * sizeof why];
    int rc = 0;
    double bytes = 0; /* the size its signature vouches for; 0 none */
    if (!c->trust_snapshots)
        rc = bench__snapshot_verify(old->ctx.program_hash, old->ctx.program_bytes,
                                    old->ctx.program_mac, &bytes, why, sizeof why);
    if (rc == 0) {
        double timeout = bench__request_timeout(c);
        rc = bench__snapshot_open(bench__baseline_dir(c), old->ctx.program_file,
                                  old->ctx.program_hash, bytes,
                                  bench__now_ns() + (int64_t)(timeout * 1e9), fd, why,
                                  sizeof why);
        if (rc == BENCH_EUSAGE)
            return BENCH_EUSAGE;
    } else {
        bench__msg(why + strlen(why), sizeof why - strlen(why), "%s",
                   "; --trust-snapshots runs it anyway if you trust whoever wrote the baseline "
                   "directory");
    }
    if (rc == 0)
        return 0;
    bench__errf("note: the program saved with baseline '%s' (%s) is not run: %s: "
                "%zu verdict%s rest on the saved numbers alone\n",
                name, path, bench__escape(shown, sizeof shown, why), nconfirm,
                nconfirm == 1 ? "" : "s");
    return 1;
}

/* Says on stderr how the suspects that no run of the saved program settles are settled (by
 * the saved numbers, or by this being the very program the baseline measured: those become
 * "no change"). how[j] is row j's way, count[] the suspects of each way, nsus all of them. */
static void say_how_settled(const bench__request *c, const bench__context *ctx,
                            const char *const *ids, bench__change *ch, const settle *how,
                            const size_t *count, size_t m, size_t nsus)
{
    const char *name = c->baseline;
    char first[BENCH__ESCAPED_ID + 32];
    if (count[SETTLE_UNKNOWN]) {
        size_t n = count[SETTLE_UNKNOWN];
        bench__errf("note: baseline '%s' does not say which program measured %s "
                    "(saved by an older version): %zu verdict%s rest on the saved numbers "
                    "alone, which cannot tell the machine's drift from a change of the "
                    "code\n",
                    name, n == nsus ? "its suspect benchmarks" : "some suspect benchmarks", n,
                    n == 1 ? "" : "s");
    }
    if (count[SETTLE_LIBS]) {
        size_t n = count[SETTLE_LIBS];
        bench__errf("note: the shared libraries this program runs have changed since "
                    "baseline '%s' was saved, which a run of its program snapshot would not "
                    "see: %zu verdict%s rest on the saved numbers\n",
                    name, n, n == 1 ? "" : "s");
    }
    if (count[SETTLE_OTHER]) {
        size_t n = count[SETTLE_OTHER];
        first_of(ids, how, m, SETTLE_OTHER, n, first, sizeof first);
        bench__errf("note: baseline '%s' mixes programs: %s %s measured by another "
                    "program than this one and the one saved with it, so neither can settle "
                    "%s: %zu verdict%s rest on the saved numbers\n",
                    name, first, n == 1 ? "was" : "were", n == 1 ? "it" : "them", n,
                    n == 1 ? "" : "s");
    }
    if (count[SETTLE_NO_COPY]) {
        size_t n = count[SETTLE_NO_COPY];
        bench__errf("note: baseline '%s' keeps no copy of the program that measured "
                    "%zu suspect benchmark%s (it could not be saved): %zu verdict%s rest on "
                    "the saved numbers\n",
                    name, n, n == 1 ? "" : "s", n, n == 1 ? "" : "s");
    }
    if (count[SETTLE_CLEAR]) {
        size_t n = count[SETTLE_CLEAR];
        first_of(ids, how, m, SETTLE_CLEAR, n, first, sizeof first);
        bench__errf("note: %s %s clear from the saved numbers and not confirmed: the drift "
                    "canaries show no change of the machine since baseline '%s' was saved, and "
                    "%s interval%s beyond the noise threshold by more than %.0fx the run-to-run "
                    "noise\n",
                    first, n == 1 ? "is" : "are", name, n == 1 ? "its" : "their",
                    n == 1 ? " lies" : "s lie", BENCH__CLEAR_MARGIN);
    }
    if (count[SETTLE_SAME]) {
        size_t n = count[SETTLE_SAME];
        bench__errf("note: this program is the one baseline '%s' measured (%s): "
                    "the %zu change%s seen since come from the machine or the environment, "
                    "not the code, and are not verdicts on it\n",
                    name, ctx->program_hash, n, n == 1 ? "" : "s");
        for (size_t j = 0; j < m; j++)
            if (bench__verdict_suspect(ch[j].verdict) && how[j] == SETTLE_SAME) {
                ch[j].verdict = BENCH__V_NO_CHANGE;
                ch[j].same_program = true;
            }
    }
}

/* --explain: the confirmed changes, the baseline's program snapshot (snap, sealed copy fd) as A
 * and this program as B, each for the time a suspect was confirmed in. Printed before the
 * summary in the pretty format; explained[where[q]] gets item q's. 0, or -1 when interrupted. */
static int explain_confirmed(const bench__request *c, const char *snap, int fd,
                             const bench__ab_item *items, const size_t *where, size_t k,
                             double seconds, bench__explanation **explained)
{
    bench__explanation **found = calloc(k, sizeof *found);
    if (!found) {
        bench__errf("--explain: out of memory\n");
        return 0;
    }
    bench__explain_opts xo = {.mode = BENCH__EXPLAIN_TIME,
                              .seconds = seconds,
                              .timeout_s = bench__request_timeout(c), .seed = c->run.seed};
    int rc = bench__explain_items(c->format == BENCH__FMT_PRETTY ? stdout : NULL, snap, fd,
                                  "/proc/self/exe", -1, items, k, &xo, found);
    for (size_t q = 0; q < k; q++) {
        if (explained && found[q])
            explained[where[q]] = found[q];
        else
            bench__explanation_free(found[q]);
    }
    free(found);
    return rc == BENCH_EUSAGE ? -1 : 0;
}

/* Runs the k suspects items[0..k) (rows where[0..k) of ch) of the program saved with the
 * baseline (snap, opened as fd) against this one, paired, and puts each decided verdict in its
 * row; a suspect that could not be confirmed keeps its verdict under the drift guard; with
 * --explain, the confirmed changes are explained (explain_confirmed). 0, or -1 when
 * interrupted. */
static int confirm_paired(const bench__request *c, const char *snap, int fd,
                          bench__ab_item *items, const size_t *where, size_t k,
                          bench__change *ch, double drift, bench__explanation **explained)
{
    const char *name = c->baseline;
    int rc = 0;
    bench__ab_options o = bench__request_ab_options(c);
    o.seconds = bench__request_confirm_time(c, k);
    bench__errf("confirming %zu verdict%s: the program saved with baseline '%s' "
                "against this one, paired (%.0f s in all, spent on the undecided ones)\n",
                k, k == 1 ? "" : "s", name, o.seconds * (double)k);
    /* B is this very program: /proc/self/exe in the worker is the file this process runs. */
    int arc = bench__ab_compare(snap, fd, "/proc/self/exe", -1, items, k, &o, NULL, NULL);
    if (arc == BENCH_EUSAGE || bench__proc_interrupted())
        rc = -1;
    for (size_t q = 0; q < k && rc == 0; q++) {
        bench__change *x = &ch[where[q]];
        bench__ab_item *it = &items[q];
        char id[BENCH__ESCAPED_ID];
        bench__escape(id, sizeof id, it->id);
        if (arc != 0 || it->rc != 0 || it->change.verdict == BENCH__V_INCOMPARABLE) {
            char shown[4 * sizeof it->message];
            bench__errf("note: '%s' could not be confirmed (%s): its verdict "
                        "rests on the saved numbers\n", id,
                        bench__escape(shown, sizeof shown,
                                      arc != 0          ? "out of memory"
                                      : it->message[0] ? it->message
                                                        : "no rounds"));
            drift_guard(x, 1, drift);
            continue;
        }
        char line[160];
        bench__msg(line, sizeof line, "%s -> %s", bench__verdict_name(x->verdict),
                   bench__verdict_name(it->change.verdict));
        bench__errf("confirmed %s: %s, %+.2f%% [%+.2f%%, %+.2f%%] paired (%zu "
                    "worker pairs)\n",
                    id, line, 100.0 * (it->change.ratio - 1.0),
                    100.0 * (it->change.ratio_lower - 1.0),
                    100.0 * (it->change.ratio_upper - 1.0), it->pairs);
        it->change.confirmed = true;
        *x = it->change;
    }
    if (rc == 0 && c->explain && arc == 0 &&
        explain_confirmed(c, snap, fd, items, where, k, o.seconds, explained) != 0)
        rc = -1;
    return rc;
}

int bench__confirm_suspects(const bench__request *c, const bench__saved *old,
                                const bench__context *ctx, const char *const *ids,
                                bench__change *ch, size_t m, double drift,
                                bench__explanation **explained)
{
    size_t nsus = 0, count[SETTLE_KINDS] = {0};
    double still = machine_still(c, old, ctx);
    settle *how = calloc(m ? m : 1, sizeof *how);
    if (!how) {
        bench__errf("out of memory\n");
        drift_guard(ch, m, drift);
        return 0;
    }
    /* Each suspect by the program that measured its entry: a baseline merged from saves of
     * several programs holds entries of each, and only its latest program is kept beside it. */
    for (size_t j = 0; j < m; j++) {
        if (!bench__verdict_suspect(ch[j].verdict))
            continue;
        nsus++;
        how[j] = how_to_settle(bench__saved_find(old, ids[j]), old, ctx);
        /* One the snapshot could confirm, but the saved numbers decide clearly: no run. */
        if (how[j] == SETTLE_CONFIRM && !c->explain && isfinite(still) &&
            bench__verdict_clear(&ch[j], c->cmp.noise_threshold,
                                 fmax(still, fmax(ch[j].run_noise, c->cmp.default_run_noise))))
            how[j] = SETTLE_CLEAR;
        count[how[j]]++;
    }
    say_how_settled(c, ctx, ids, ch, how, count, m, nsus);
    size_t nconfirm = count[SETTLE_CONFIRM];
    int fd = -1, rc = 0;
    char snap[4200];
    bench__msg(snap, sizeof snap, "%s/%s", bench__baseline_dir(c), old->ctx.program_file);
    if (nconfirm > 0 && c->confirm_time != 0) {
        int orc = open_snapshot(c, old, snap, nconfirm, &fd);
        if (orc == BENCH_EUSAGE) {
            free(how);
            return -1;
        }
    }
    /* The suspects to confirm, and where their rows are. */
    bench__ab_item *items = fd >= 0 ? calloc(nconfirm, sizeof *items) : NULL;
    size_t *where = fd >= 0 ? calloc(nconfirm, sizeof *where) : NULL;
    size_t k = 0;
    for (size_t j = 0; j < m; j++) {
        if (!bench__verdict_suspect(ch[j].verdict) || how[j] == SETTLE_SAME)
            continue;
        if (how[j] == SETTLE_CONFIRM && items && where) {
            where[k] = j;
            items[k++].id = ids[j];
        } else {
            drift_guard(&ch[j], 1, drift);
        }
    }
    if (k > 0) {
        rc = confirm_paired(c, snap, fd, items, where, k, ch, drift, explained);
    } else if (fd >= 0 && (!items || !where)) {
        bench__errf("out of memory: %zu verdict%s rest on the saved numbers\n",
                    nconfirm, nconfirm == 1 ? "" : "s");
    }
    if (c->explain && k == 0 && nconfirm > 0)
        bench__explain_unavailable(c->format == BENCH__FMT_PRETTY ? stdout : stderr,
                                   "only a paired run against the baseline's program snapshot "
                                   "can be explained, and none ran (see the notes above; "
                                   "--confirm-time 0 runs none)");
    free(items);
    free(where);
    if (fd >= 0)
        close(fd);
    free(how);
    return rc;
}
