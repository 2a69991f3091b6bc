/*
 * baselines.c: baseline files by name: where they live (--baseline-dir, $BENCH_BASELINE_DIR),
 * loading one with a message that names it, saving a run's measured results with the program
 * that measured them (signed, beside the file) under the baseline's lock, and the warnings when
 * a baseline was measured on another machine or build. Comparing with one is the pipeline's
 * (sides.c gives its sides, summary.c its exit code); its suspect verdicts are settled in
 * suspects.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/baselines.h"
#include "run/client.h"
#include "run/pipeline.h"
#include "sys/proc.h"

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

