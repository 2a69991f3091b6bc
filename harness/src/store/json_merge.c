/*
 * json_merge.c: saving a baseline: this run's results merged into the file's (entries of
 * benchmarks not run are kept), sorted by id, written atomically under the baseline's lock
 * (PATH.lock), so two runs saving at once never lose each other's entries. The last-run file
 * (last.c) is saved the same way, as a cache: what cannot be read is replaced.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare/compare.h"
#include "core/base.h"
#include "core/result.h"
#include "store/json_check.h"
#include "store/json_io.h"
#include "store/store.h"
#include "sys/context.h"
#include "sys/proc.h"

/* The id of a validated entry of a results file. */
static const char *entry_id(const cJSON *item)
{
    return cJSON_GetObjectItemCaseSensitive(item, "id")->valuestring;
}

static int cmp_item_id(const void *a, const void *b)
{
    return strcmp(entry_id(*(const cJSON *const *)a), entry_id(*(const cJSON *const *)b));
}

/*
 * Whether the loader would read `text` (`entries` benchmarks) back as the file `path`, by the
 * limits it applies to every file: its size and its number of entries (each entry's samples are
 * within the loader's limit by the command line's). A save that passed them would replace a
 * usable baseline with one the next run refuses. BENCH_EINVAL with the reason otherwise.
 * (Reading the text back in full would check more, but costs as much as the load itself: about
 * 4 s for a 16 MiB baseline on the development machine.)
 */
static int fits_the_loader(const char *path, const char *text, int entries, char *msg,
                           size_t msglen)
{
    size_t len = strlen(text) + 1; /* the writer adds a newline */
    if (len > BENCH__MAX_FILE_BYTES) {
        bench__msg(msg, msglen, "%s: the baseline would be %zu bytes, over the %u-byte limit "
                                "of a baseline file: not saved, the previous file is kept (save "
                                "fewer benchmarks or samples, or under another name)",
                   path, len, BENCH__MAX_FILE_BYTES);
        return BENCH_EINVAL;
    }
    if (entries > BENCH__MAX_ENTRIES) {
        bench__msg(msg, msglen, "%s: the baseline would hold %d benchmarks, over the limit of "
                                "%d: not saved, the previous file is kept (save under another "
                                "name)", path, entries, BENCH__MAX_ENTRIES);
        return BENCH_EINVAL;
    }
    return 0;
}

/* How an existing file is merged: a baseline refuses to replace a file it cannot read and keeps
 * every entry this run did not measure; the last-run file (bench__last_save) is a cache, so an
 * unusable one is replaced, and only entries of benchmarks `present` knows are kept. */
typedef struct merge_rules {
    bool replace_unusable;
    bool (*present)(const void *where, const char *id); /* NULL: keep all */
    const void *where;
} merge_rules;

/* Reads and checks the existing results file at `path` into *old and *root. 0, or an error
 * code with the reason in msg. */
static int read_old(const char *path, bench__saved *old, cJSON **root, char *msg, size_t msglen)
{
    char *text;
    size_t len;
    int rc = bench__json_read_file(path, &text, &len, msg, msglen);
    if (!rc) {
        rc = bench__json_parse_saved(path, text, len, old, root, msg, msglen);
        free(text);
    }
    return rc;
}

/* Why a baseline cannot replace the file it read: msg (read_old's reason) is reworded. */
static void say_unusable(char *msg, size_t msglen)
{
    char why[512];
    bench__msg(why, sizeof why, "%s", msg);
    bench__msg(msg, msglen, "refusing to replace an existing file that is not a valid "
                            "baseline (remove it or pick another name): %s", why);
}

/* ---- instruction mode (instr.c): times and counts never share a file ---- */
/* 0 when a run of counts (new_counts) or of times may be saved into a file holding old's;
 * BENCH_EINVAL with the reason in msg when not. */
static int same_kind(const char *path, const bench__saved *old, bool new_counts, char *msg,
                     size_t msglen)
{
    bool old_counts = strcmp(old->ctx.mode, "instructions") == 0;
    if (old_counts == new_counts)
        return 0;
    bench__msg(msg, msglen, "%s holds %s, and this run measured %s: pick another name "
                            "(or remove the file)",
               path, old_counts ? "instruction counts (--instructions)" : "times",
               new_counts ? "instruction counts" : "times");
    return BENCH_EINVAL;
}

int bench__baseline_replaceable(const char *path, bool counts, char *msg, size_t msglen)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0; /* nothing there yet (what else stat may say, the save itself will) */
    bench__saved old;
    cJSON *root = NULL;
    int rc = read_old(path, &old, &root, msg, msglen);
    if (rc) {
        say_unusable(msg, msglen);
        return rc;
    }
    rc = same_kind(path, &old, counts, msg, msglen);
    cJSON_Delete(root);
    bench__saved_destroy(&old);
    return rc;
}

/* Moves into arr the entries of the existing file at `path` that the rules keep and this run
 * (all[0..n)) did not measure. 0, or an error code with the reason in msg. */
static int merge_old(const char *path, const bench__context *ctx, const bench__result *all,
                     size_t n, const merge_rules *rules, cJSON *arr, char *msg, size_t msglen)
{
    bench__saved old;
    cJSON *old_root = NULL;
    int rc = read_old(path, &old, &old_root, msg, msglen);
    if (rc && rules->replace_unusable)
        return 0; /* a cache that cannot be read: replaced by this run's results */
    if (rc) {
        say_unusable(msg, msglen);
        return rc;
    }
    bool old_counts = strcmp(old.ctx.mode, "instructions") == 0;
    bool new_counts = ctx->mode && strcmp(ctx->mode, "instructions") == 0;
    if (!rules->replace_unusable)
        rc = same_kind(path, &old, new_counts, msg, msglen);
    cJSON *old_arr = cJSON_GetObjectItemCaseSensitive(old_root, "benchmarks");
    cJSON *item = old_counts == new_counts ? old_arr->child : NULL;
    while (item) {
        cJSON *next = item->next;
        const char *id = entry_id(item);
        bool replaced = false;
        for (size_t i = 0; i < n && !replaced; i++)
            replaced = strcmp(all[i].inst->id, id) == 0;
        if (!replaced && (!rules->present || rules->present(rules->where, id)))
            cJSON_AddItemToArray(arr, cJSON_DetachItemViaPointer(old_arr, item));
        item = next;
    }
    cJSON_Delete(old_root);
    bench__saved_destroy(&old);
    return rc;
}

/* The read-merge-write of bench__baseline_save and bench__last_save, under the file's lock. */
static int merge_write(const char *path, const bench__context *ctx, const bench__result *all,
                       size_t n, const merge_rules *rules, char *msg, size_t msglen)
{
    cJSON *root = bench__json_results_root(ctx, all, n);
    if (!root) {
        bench__msg(msg, msglen, "%s: out of memory", path);
        return BENCH_ENOMEM;
    }
    /* The growth fits describe this run's series; the merged file holds other runs' entries
     * too, so a saved file keeps none. */
    cJSON_DeleteItemFromObjectCaseSensitive(root, "complexity");
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "benchmarks");
    /* Each entry this run measured names the program that measured it: a file merged from
     * saves of several programs still says which program each number belongs to. */
    cJSON *mine;
    cJSON_ArrayForEach(mine, arr) {
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(mine, "status");
        if (!ctx->program_hash[0] || !cJSON_IsString(status) ||
            strcmp(status->valuestring, "ok") != 0)
            continue;
        cJSON *po = cJSON_CreateObject();
        cJSON_AddStringToObject(po, "hash", ctx->program_hash);
        if (ctx->program_libs[0])
            cJSON_AddStringToObject(po, "libraries", ctx->program_libs);
        /* And the run that measured it: a merged file's entries come from several runs. */
        if (ctx->timestamp[0])
            cJSON_AddStringToObject(po, "timestamp", ctx->timestamp);
        cJSON_AddItemToObject(mine, "program", po);
    }
    int rc = 0;
    struct stat st;
    /* Merge: keep the old entries that this run did not measure. */
    if (stat(path, &st) == 0 &&
        (rc = merge_old(path, ctx, all, n, rules, arr, msg, msglen)) != 0) {
        cJSON_Delete(root);
        return rc;
    }
    /* Sorted by id, so a baseline's layout does not depend on what was saved when. */
    int count = cJSON_GetArraySize(arr);
    cJSON **items = malloc((size_t)(count ? count : 1) * sizeof *items);
    if (!items) {
        cJSON_Delete(root);
        bench__msg(msg, msglen, "%s: out of memory", path);
        return BENCH_ENOMEM;
    }
    int k = 0;
    while (arr->child)
        items[k++] = cJSON_DetachItemViaPointer(arr, arr->child);
    qsort(items, (size_t)k, sizeof *items, cmp_item_id);
    for (int i = 0; i < k; i++)
        cJSON_AddItemToArray(arr, items[i]);
    free(items);
    char *out = cJSON_Print(root);
    cJSON_Delete(root);
    if (!out)
        return bench__write_json_text(path, out, msg, msglen); /* says: out of memory */
    if ((rc = fits_the_loader(path, out, k, msg, msglen)) != 0) {
        cJSON_free(out);
        return rc;
    }
    /* The last moment a signal can still stop the save with nothing replaced. */
    if (bench__proc_interrupted()) {
        cJSON_free(out);
        bench__msg(msg, msglen, "%s: interrupted before it was replaced", path);
        return BENCH_EUSAGE;
    }
    return bench__write_json_text(path, out, msg, msglen);
}

int bench__baseline_save_then(const char *path, const bench__context *ctx,
                              const bench__result *all, size_t n,
                              int (*after)(void *arg, char *msg, size_t msglen), void *arg,
                              char *msg, size_t msglen)
{
    /* Two runs saving the same baseline at once would each merge into the file as they read
     * it, and the later rename would drop the other's entries: one at a time. */
    int lock;
    int rc = bench__lock_acquire(path, true, &lock, msg, msglen);
    if (rc)
        return rc;
    static const merge_rules baseline = {.replace_unusable = false, .present = NULL};
    rc = merge_write(path, ctx, all, n, &baseline, msg, msglen);
    if (rc == 0 && after)
        rc = after(arg, msg, msglen);
    bench__lock_release(lock);
    return rc;
}

int bench__baseline_save(const char *path, const bench__context *ctx, const bench__result *all,
                         size_t n, char *msg, size_t msglen)
{
    return bench__baseline_save_then(path, ctx, all, n, NULL, NULL, msg, msglen);
}

int bench__last_save(const char *path, const bench__context *ctx, const bench__result *all,
                     size_t n, bool (*present)(const void *where, const char *id),
                     const void *where, char *msg, size_t msglen)
{
    /* Another run of the same program saving at this very moment keeps its results: no wait. */
    int lock;
    int rc = bench__lock_acquire(path, false, &lock, msg, msglen);
    if (rc)
        return rc;
    merge_rules last = {.replace_unusable = true, .present = present, .where = where};
    rc = merge_write(path, ctx, all, n, &last, msg, msglen);
    bench__lock_release(lock);
    return rc;
}
