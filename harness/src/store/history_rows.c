/*
 * history_rows.c: what both stores of the run history and the code above them use on rows
 * (history_store.h): the check of a stored median (a value that is not a positive finite
 * number is named on stderr and skipped, whatever the store), the release of rows read, and
 * the copy of the running program that --history-confirm may run again later. It calls
 * nothing of the stores, so each store and the shared code may call it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/history_store.h"
#include "store/store.h"

const char *const bench__history_fact_names[BENCH__HFACTS] = {
    "cpu",    "cores",    "threads",  "memory", "virtualization",
    "kernel", "governor", "compiler", "flags",  "benchmark code",
};

void bench__history_points_free(bench__hpoint *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++) {
        free(p[i].revision);
        free(p[i].program);
        for (int f = 0; f < BENCH__HFACTS; f++)
            free(p[i].facts[f]);
    }
    free(p);
}

void bench__history_strings_free(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        free(s[i]);
    free(s);
}

bool bench__history_median_ok(const bench__history *h, const bench__hval *v, long long run,
                              const char *id)
{
    if (v->type == BENCH__HV_NULL)
        return false;
    if (v->type == BENCH__HV_NUMBER && isfinite(v->x) && v->x > 0)
        return true;
    char p[1024], b[BENCH__ESCAPED_ID], shown[64];
    bench__errf("warning: history '%s': run %lld, benchmark '%s': median %s%s%s is "
                "not a positive number; the row is skipped\n",
                bench__escape(p, sizeof p, h->name), run, bench__escape(b, sizeof b, id),
                v->type == BENCH__HV_BLOB ? "" : "'",
                v->type == BENCH__HV_BLOB ? "(a blob)" : bench__escape(shown, sizeof shown, v->raw),
                v->type == BENCH__HV_BLOB ? "" : "'");
    return false;
}

bool bench__history_program_hash_ok(const char *hash)
{
    const char *hex = bench__skip_prefix(hash, "sha256:");
    return hex && strlen(hex) == 64 && strspn(hex, "0123456789abcdef") == 64;
}

int bench__history_copy_program(const char *pinned, const bench__context *ctx, double timeout_s,
                                char *mac, size_t maclen, char *why, size_t len)
{
    const char *hash = ctx->program_hash;
    char file[128];
    /* A copy a run killed outright left there goes first. */
    bench__tmp_sweep(pinned, BENCH__STALE_TMP_S);
    bench__msg(file, sizeof file, "%s/%s.program", pinned, hash + 7);
    struct stat fst;
    if (lstat(file, &fst) != 0) {
        bench__snapshot snap;
        int rc = bench__snapshot_prepare(pinned, hash + 7, timeout_s, &snap, why, len);
        if (rc == 0 && strcmp(snap.hash, hash) != 0) {
            bench__snapshot_discard(&snap);
            bench__msg(why, len, "the program's file changed while it ran");
            rc = BENCH_EIO;
        }
        if (rc == 0)
            rc = bench__snapshot_commit(pinned, hash + 7, &snap, why, len);
        if (rc != 0)
            return rc;
    }
    /* With its size, which --history-confirm checks against the file before reading it. */
    return bench__snapshot_sign(hash, ctx->program_bytes, mac, maclen, why, len);
}

void bench__history_msg_part(const bench__history *h, char *msg, size_t len, const char *id,
                             long long run, const char *run_key)
{
    char b[BENCH__ESCAPED_ID], k[4 * 200 + 1];
    bench__msg(msg, len, "history '%s': the run was not recorded: benchmark '%s' is already in "
                         "run %lld (--run-id %s): each part of a run must run other benchmarks "
                         "(--shard K/N)", h->name, bench__escape(b, sizeof b, id), run,
               bench__escape(k, sizeof k, run_key));
}

void bench__hcopy_run_free(bench__hcopy_run *run)
{
    for (int c = 0; c < BENCH__HCOPY_RUN_COLUMNS; c++)
        free(run->col[c]);
    for (size_t i = 0; run->r && i < run->n; i++) {
        for (int c = 0; c < BENCH__HCOPY_RESULT_COLUMNS; c++)
            free(run->r[i].col[c]);
        bench__history_strings_free(run->r[i].pm, run->r[i].npm);
    }
    free(run->r);
    memset(run, 0, sizeof *run);
}
