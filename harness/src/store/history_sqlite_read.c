/*
 * history_sqlite_read.c: the rows the run history's readers ask an SQLite file for
 * (history_store.h): the benchmark ids, the runs, a benchmark's series, a run's results, the
 * newest earlier run with its process medians, and the programs kept beside the file. Each
 * reading opens its own connection, checked and bounded as history_sqlite.c opens every one,
 * and returns the rows as they are stored (history_show.c validates them).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/history_sqlite.h"
#include "store/store.h"

/* ---- the rows the readers ask for ---- */

/* p grown to hold n + 1 elements of size bytes (cap doubled as needed); NULL when that fails
 * (p is then as it was). */
static void *grow(void *p, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return p;
    size_t c = *cap ? 2 * *cap : 16;
    void *q = realloc(p, c * size);
    if (q)
        *cap = c;
    return q;
}

/* A text column as a string of its own (NULL when NULL); *oom when the copy failed. */
static char *text_of(sqlite3_stmt *st, int i, bool *oom)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    if (!s)
        return NULL;
    char *d = strdup((const char *)s);
    *oom |= !d;
    return d;
}

/* A column that should be a median, as it is stored. */
static bench__hval value_of(sqlite3_stmt *st, int i)
{
    bench__hval v = {BENCH__HV_NULL, 0, ""};
    int type = sqlite3_column_type(st, i);
    const unsigned char *text = sqlite3_column_text(st, i);
    v.type = type == SQLITE_NULL                              ? BENCH__HV_NULL
             : type == SQLITE_FLOAT || type == SQLITE_INTEGER ? BENCH__HV_NUMBER
             : type == SQLITE_BLOB                            ? BENCH__HV_BLOB
                                                              : BENCH__HV_TEXT;
    v.x = sqlite3_column_double(st, i);
    bench__msg(v.raw, sizeof v.raw, "%s", text && type != SQLITE_BLOB ? (const char *)text : "");
    return v;
}

/* Opens the history for one reading; *db NULL (and 0) when the file is not there yet. */
static int open_read(bench__history *h, sqlite3 **db, char *msg, size_t len)
{
    *db = NULL;
    struct stat st;
    if (stat(h->name, &st) != 0 && errno == ENOENT)
        return 0;
    return bench__sqlite_open_db(h->name, false, db, msg, len);
}

/* The end of one reading: the message of a failed statement, and the connection closed. */
static int end_read(bench__history *h, sqlite3 *db, int src, bool oom, char *msg, size_t len)
{
    int rc = 0;
    if (src == SQLITE_OK && oom)
        src = SQLITE_NOMEM;
    if (src != SQLITE_OK) {
        bench__msg(msg, len, "history '%s' cannot be read: %s", h->name, bench__sqlite_work_error(db, src));
        rc = src == SQLITE_NOMEM ? BENCH_ENOMEM : BENCH_EIO;
    }
    sqlite3_close(db);
    return rc;
}

int bench__sqlite_ids(bench__history *h, char ***out, size_t *nout, char *msg, size_t len)
{
    sqlite3 *db;
    *out = NULL;
    *nout = 0;
    int rc = open_read(h, &db, msg, len);
    if (rc != 0 || !db)
        return rc;
    sqlite3_stmt *st = NULL;
    char **ids = NULL;
    size_t n = 0, cap = 0;
    bool oom = false;
    int src = sqlite3_prepare_v2(db, "SELECT DISTINCT benchmark FROM results ORDER BY benchmark",
                                 -1, &st, NULL);
    while (src == SQLITE_OK && !oom && (src = sqlite3_step(st)) == SQLITE_ROW) {
        src = SQLITE_OK;
        char **g = grow(ids, n, &cap, sizeof *ids);
        if ((oom = !g))
            break;
        ids = g;
        char *s = text_of(st, 0, &oom);
        if (!(ids[n] = s ? s : strdup(""))) {
            oom = true;
            break;
        }
        n++;
    }
    sqlite3_finalize(st);
    *out = ids;
    *nout = n;
    return end_read(h, db, src == SQLITE_DONE ? SQLITE_OK : src, oom, msg, len);
}

int bench__sqlite_runs(bench__history *h, bench__hrun **out, size_t *nout, char *msg, size_t len)
{
    sqlite3 *db;
    *out = NULL;
    *nout = 0;
    int rc = open_read(h, &db, msg, len);
    if (rc != 0 || !db)
        return rc;
    sqlite3_stmt *st = NULL;
    bench__hrun *r = NULL;
    size_t n = 0, cap = 0;
    bool oom = false;
    int src = sqlite3_prepare_v2(db,
        "SELECT id, time, coalesce(git_revision, cwd_git_revision), git_dirty, hostname,"
        " (SELECT count(*) FROM results WHERE run_id = runs.id), baseline, program_hash"
        " FROM runs ORDER BY id", -1, &st, NULL);
    while (src == SQLITE_OK && !oom && (src = sqlite3_step(st)) == SQLITE_ROW) {
        src = SQLITE_OK;
        bench__hrun *g = grow(r, n, &cap, sizeof *r);
        if (!(oom = !g)) {
            r = g;
            r[n++] = (bench__hrun){
                .id = (long long)sqlite3_column_int64(st, 0),
                .time = text_of(st, 1, &oom),
                .revision = text_of(st, 2, &oom),
                .dirty = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1
                                                                   : !!sqlite3_column_int(st, 3),
                .host = text_of(st, 4, &oom),
                .benchmarks = sqlite3_column_int(st, 5),
                .baseline = text_of(st, 6, &oom),
                .program = text_of(st, 7, &oom),
            };
        }
    }
    sqlite3_finalize(st);
    *out = r;
    *nout = n;
    return end_read(h, db, src == SQLITE_DONE ? SQLITE_OK : src, oom, msg, len);
}

int bench__sqlite_series(bench__history *h, const char *id, long long upto, bench__hpoint **out,
                     size_t *nout, char *msg, size_t len)
{
    sqlite3 *db;
    *out = NULL;
    *nout = 0;
    int rc = open_read(h, &db, msg, len);
    if (rc != 0 || !db)
        return rc;
    sqlite3_stmt *st = NULL;
    bench__hpoint *p = NULL;
    size_t n = 0, cap = 0;
    bool oom = false;
    int src = sqlite3_prepare_v2(db,
        "SELECT r.id, coalesce(r.git_revision, r.cwd_git_revision), x.median_ns, r.program_hash,"
        " r.cpu_brand, r.cores, r.threads, CAST(r.memory_bytes AS INTEGER), r.virtualization,"
        " r.kernel, r.governor,"
        " r.compiler, r.compiler_flags, x.code_hash"
        " FROM results x JOIN runs r ON r.id = x.run_id WHERE x.benchmark = ?1 AND x.status = 'ok'"
        " AND (?2 <= 0 OR r.id <= ?2) ORDER BY r.id", -1, &st, NULL);
    if (src == SQLITE_OK) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)upto);
    }
    while (src == SQLITE_OK && !oom && (src = sqlite3_step(st)) == SQLITE_ROW) {
        src = SQLITE_OK;
        bench__hpoint *g = grow(p, n, &cap, sizeof *p);
        if (!(oom = !g)) {
            p = g;
            p[n] = (bench__hpoint){(long long)sqlite3_column_int64(st, 0), text_of(st, 1, &oom),
                                   text_of(st, 3, &oom), value_of(st, 2), {NULL}};
            for (int f = 0; f < BENCH__HFACTS; f++)
                p[n].facts[f] = text_of(st, 4 + f, &oom);
            n++;
        }
    }
    sqlite3_finalize(st);
    *out = p;
    *nout = n;
    return end_read(h, db, src == SQLITE_DONE ? SQLITE_OK : src, oom, msg, len);
}

int bench__sqlite_run_ok(bench__history *h, long long run, char ***ids, bench__hval **medians,
                     size_t *nout, char *msg, size_t len)
{
    sqlite3 *db;
    *ids = NULL;
    *medians = NULL;
    *nout = 0;
    int rc = open_read(h, &db, msg, len);
    if (rc != 0 || !db)
        return rc;
    sqlite3_stmt *st = NULL;
    size_t n = 0, cap = 0, vcap = 0;
    bool oom = false;
    int src = sqlite3_prepare_v2(db, "SELECT benchmark, median_ns FROM results WHERE run_id = ?1"
                                     " AND status = 'ok' ORDER BY benchmark", -1, &st, NULL);
    if (src == SQLITE_OK)
        sqlite3_bind_int64(st, 1, (sqlite3_int64)run);
    while (src == SQLITE_OK && !oom && (src = sqlite3_step(st)) == SQLITE_ROW) {
        src = SQLITE_OK;
        char **g = grow(*ids, n, &cap, sizeof **ids);
        *ids = g ? g : *ids;
        bench__hval *v = g ? grow(*medians, n, &vcap, sizeof **medians) : NULL;
        *medians = v ? v : *medians;
        if ((oom = !v))
            break;
        char *s = text_of(st, 0, &oom);
        if (!((*ids)[n] = s ? s : strdup(""))) {
            oom = true;
            break;
        }
        (*medians)[n++] = value_of(st, 1);
    }
    sqlite3_finalize(st);
    *nout = n;
    return end_read(h, db, src == SQLITE_DONE ? SQLITE_OK : src, oom, msg, len);
}

int bench__sqlite_last(bench__history *h, const char *id, const char *const *machine,
                       long long *run, char **revision, char **program, bench__hval **medians,
                       size_t *nout, char *msg, size_t len)
{
    sqlite3 *db;
    *run = 0;
    *revision = *program = NULL;
    *medians = NULL;
    *nout = 0;
    int rc = open_read(h, &db, msg, len);
    if (rc != 0 || !db)
        return rc;
    sqlite3_stmt *st = NULL;
    bool oom = false;
    int src = sqlite3_prepare_v2(db,
        "SELECT r.id, coalesce(r.git_revision, r.cwd_git_revision), r.program_hash"
        " FROM results x JOIN runs r"
        " ON r.id = x.run_id WHERE x.benchmark = ?1 AND x.status = 'ok' AND x.processes >= 2"
        " AND (?2 IS NULL OR r.cpu_brand IS NULL OR r.cpu_brand = ?2)"
        " AND (?3 IS NULL OR r.cores IS NULL OR r.cores = CAST(?3 AS INTEGER))"
        " AND (?4 IS NULL OR r.threads IS NULL OR r.threads = CAST(?4 AS INTEGER))"
        " AND (?5 IS NULL OR r.memory_bytes IS NULL"
        "      OR CAST(r.memory_bytes AS INTEGER) = CAST(?5 AS INTEGER))"
        " AND (?6 IS NULL OR r.virtualization IS NULL OR r.virtualization = ?6)"
        " ORDER BY r.id DESC LIMIT 1", -1, &st, NULL);
    if (src == SQLITE_OK) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        for (int f = 0; f < BENCH__HF_MACHINE; f++)
            sqlite3_bind_text(st, 2 + f, machine[f], -1, SQLITE_TRANSIENT);
        src = sqlite3_step(st);
    }
    if (src == SQLITE_ROW) {
        *run = (long long)sqlite3_column_int64(st, 0);
        *revision = text_of(st, 1, &oom);
        *program = text_of(st, 2, &oom);
        src = SQLITE_OK;
    } else if (src == SQLITE_DONE) {
        src = SQLITE_OK;
    }
    sqlite3_finalize(st);
    st = NULL;
    size_t n = 0, cap = 0;
    if (src == SQLITE_OK && *run > 0)
        src = sqlite3_prepare_v2(db, "SELECT median_ns FROM process_medians WHERE run_id = ?1"
                                     " AND benchmark = ?2 ORDER BY process", -1, &st, NULL);
    if (src == SQLITE_OK && st) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)*run);
        sqlite3_bind_text(st, 2, id, -1, SQLITE_TRANSIENT);
        while (!oom && (src = sqlite3_step(st)) == SQLITE_ROW) {
            bench__hval *g = grow(*medians, n, &cap, sizeof **medians);
            if (!(oom = !g)) {
                *medians = g;
                g[n++] = value_of(st, 0);
            }
        }
        src = src == SQLITE_DONE || src == SQLITE_ROW ? SQLITE_OK : src;
    }
    sqlite3_finalize(st);
    *nout = n;
    return end_read(h, db, src, oom, msg, len);
}

/* ---- a history copied between stores ---- */

/* Column i as the text a copy carries: a real with all its digits, NULL as NULL. */
static char *copy_text(sqlite3_stmt *st, int i, bool *oom)
{
    char buf[40];
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
        return NULL;
    case SQLITE_FLOAT:
        bench__msg(buf, sizeof buf, "%.17g", sqlite3_column_double(st, i));
        break;
    case SQLITE_INTEGER:
        bench__msg(buf, sizeof buf, "%lld", (long long)sqlite3_column_int64(st, i));
        break;
    default:
        return text_of(st, i, oom);
    }
    char *d = strdup(buf);
    *oom |= !d;
    return d;
}

int bench__sqlite_run_ids(bench__history *h, long long **ids, size_t *nout, char *msg,
                          size_t len)
{
    sqlite3 *db;
    *ids = NULL;
    *nout = 0;
    int rc = open_read(h, &db, msg, len);
    if (rc != 0 || !db)
        return rc;
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    bool oom = false;
    int src = sqlite3_prepare_v2(db, "SELECT id FROM runs ORDER BY id", -1, &st, NULL);
    while (src == SQLITE_OK && !oom && (src = sqlite3_step(st)) == SQLITE_ROW) {
        src = SQLITE_OK;
        long long *g = grow(*ids, *nout, &cap, sizeof **ids);
        if (!(oom = !g))
            (*ids = g)[(*nout)++] = (long long)sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return end_read(h, db, src == SQLITE_DONE ? SQLITE_OK : src, oom, msg, len);
}

/* The results of run `id` with their process medians into out. */
static int copy_results(sqlite3 *db, long long id, bench__hcopy_run *out, bool *oom)
{
    sqlite3_stmt *st = NULL, *pm = NULL;
    size_t cap = 0;
    int src = sqlite3_prepare_v2(db, "SELECT " BENCH__HCOPY_RESULT_SQL " FROM results WHERE"
                                     " run_id = ?1 ORDER BY benchmark", -1, &st, NULL);
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(db, "SELECT median_ns FROM process_medians WHERE run_id = ?1"
                                     " AND benchmark = ?2 ORDER BY process", -1, &pm, NULL);
    if (src == SQLITE_OK)
        sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
    while (src == SQLITE_OK && !*oom && (src = sqlite3_step(st)) == SQLITE_ROW) {
        src = SQLITE_OK;
        bench__hcopy_result *g = grow(out->r, out->n, &cap, sizeof *out->r);
        if ((*oom = !g))
            break;
        bench__hcopy_result *x = &(out->r = g)[out->n++];
        memset(x, 0, sizeof *x);
        for (int c = 0; c < BENCH__HCOPY_RESULT_COLUMNS; c++)
            x->col[c] = copy_text(st, c, oom);
        sqlite3_reset(pm);
        sqlite3_bind_int64(pm, 1, (sqlite3_int64)id);
        sqlite3_bind_value(pm, 2, sqlite3_column_value(st, 0));
        size_t pcap = 0;
        while (!*oom && (src = sqlite3_step(pm)) == SQLITE_ROW) {
            char **p = grow(x->pm, x->npm, &pcap, sizeof *x->pm);
            if (!(*oom = !p))
                (x->pm = p)[x->npm++] = copy_text(pm, 0, oom);
        }
        src = src == SQLITE_DONE || src == SQLITE_ROW ? SQLITE_OK : src;
    }
    sqlite3_finalize(st);
    sqlite3_finalize(pm);
    return src == SQLITE_DONE ? SQLITE_OK : src;
}

int bench__sqlite_copy_read(bench__history *h, long long id, bench__hcopy_run *out, char *msg,
                            size_t len)
{
    sqlite3 *db;
    memset(out, 0, sizeof *out);
    int rc = open_read(h, &db, msg, len);
    if (rc != 0 || !db)
        return rc;
    sqlite3_stmt *st = NULL;
    bool oom = false;
    int src = sqlite3_prepare_v2(db, "SELECT " BENCH__HCOPY_RUN_SQL " FROM runs WHERE id = ?1",
                                 -1, &st, NULL);
    if (src == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
        src = sqlite3_step(st);
    }
    if (src == SQLITE_ROW) {
        for (int c = 0; c < BENCH__HCOPY_RUN_COLUMNS; c++)
            out->col[c] = copy_text(st, c, &oom);
        src = SQLITE_OK;
    } else if (src == SQLITE_DONE) {
        src = SQLITE_NOTFOUND;
    }
    sqlite3_finalize(st);
    if (src == SQLITE_OK)
        src = copy_results(db, id, out, &oom);
    return end_read(h, db, src, oom, msg, len);
}

/* ---- the programs kept beside it ---- */

void bench__sqlite_programs_dir(const bench__history *h, char *dir, size_t len)
{
    bench__msg(dir, len, "%s.programs", h->name);
}

/* Unlinks the program files of `hashes` (n of them) in the folder open as dfd. */
static void unlink_programs(int dfd, char **hashes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!bench__history_program_hash_ok(hashes[i]))
            continue;
        char file[80];
        bench__msg(file, sizeof file, "%s.program", hashes[i] + strlen("sha256:"));
        unlinkat(dfd, file, 0);
    }
}

/* Opens the programs folder beside the history at path (made 0700 when missing) into *dfd and
 * pinned, refusing a history or folder another user owns or may write, and a folder that is a
 * symbolic link: a history file is data anyone who may write it controls, and the files named
 * in it are removed. */
static int open_programs_dir(const char *path, const char *dir, int *dfd, char *pinned,
                             size_t plen, char *msg, size_t len)
{
    char why[256];
    struct stat st;
    if (stat(path, &st) == 0 && bench__unsafe_owner(&st, why, sizeof why)) {
        bench__msg(msg, len, "history '%s': the program was not kept: the history is not safe "
                             "to act on (%s)", path, why);
        return BENCH_EINVAL;
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        bench__msg(msg, len, "history '%s': cannot make %s: %s", path, dir, strerror(errno));
        return BENCH_EIO;
    }
    int rc = bench__dir_pin(AT_FDCWD, dir, O_NOFOLLOW, dfd, pinned, plen, why, sizeof why);
    if (rc != 0)
        bench__msg(msg, len, "history '%s': the program was not kept: %s is not safe to act on "
                             "(%s)", path, dir, why);
    return rc;
}

/* The hashes of the programs past the newest `keep` into *old (*nold of them). */
static int programs_past(sqlite3 *db, size_t keep, char ***old, size_t *nold)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    bool oom = false;
    int src = sqlite3_prepare_v2(db, "SELECT hash FROM programs ORDER BY kept DESC, hash"
                                     " LIMIT -1 OFFSET ?1", -1, &st, NULL);
    if (src == SQLITE_OK)
        sqlite3_bind_int64(st, 1, (sqlite3_int64)keep);
    while (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
        src = SQLITE_OK;
        char **g = grow(*old, *nold, &cap, sizeof **old);
        char *h = g ? text_of(st, 0, &oom) : NULL;
        *old = g ? g : *old;
        if (!g || oom) {
            free(h);
            src = SQLITE_NOMEM;
            break;
        }
        if (h && bench__starts_with(h, "sha256:"))
            (*old)[(*nold)++] = h;
        else
            free(h);
    }
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? SQLITE_OK : src;
}

/* Records the program and its signature (none when hash is NULL), and forgets those past the
 * newest `keep` (into *old), in one transaction. */
static int record_program(sqlite3 *db, const char *hash, const char *mac, size_t keep,
                          char ***old, size_t *nold)
{
    sqlite3_stmt *st = NULL;
    int src = sqlite3_exec(db, "BEGIN IMMEDIATE; " PROGRAMS_SQL, NULL, NULL, NULL);
    if (src == SQLITE_OK && hash)
        src = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO programs VALUES (?1, ?2,"
                                     " strftime('%Y-%m-%dT%H:%M:%f', 'now'))", -1, &st, NULL);
    if (src == SQLITE_OK && hash) {
        sqlite3_bind_text(st, 1, hash, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 2, mac, -1, SQLITE_TRANSIENT);
        src = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    }
    sqlite3_finalize(st);
    if (src == SQLITE_OK)
        src = programs_past(db, keep, old, nold);
    if (src == SQLITE_OK && *nold > 0) {
        sqlite3_stmt *del = NULL;
        src = sqlite3_prepare_v2(db, "DELETE FROM programs WHERE hash = ?1", -1, &del, NULL);
        for (size_t i = 0; i < *nold && src == SQLITE_OK; i++) {
            sqlite3_bind_text(del, 1, (*old)[i], -1, SQLITE_TRANSIENT);
            src = sqlite3_step(del) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
            sqlite3_reset(del);
        }
        sqlite3_finalize(del);
    }
    if (src == SQLITE_OK)
        src = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    return src;
}

int bench__sqlite_keep_program(bench__history *h, const bench__context *ctx, size_t keep,
                           double timeout_s, char *msg, size_t len)
{
    const char *path = h->name;
    char dir[4200], pinned[64], why[512], mac[BENCH__MAC_TEXT] = "";
    bench__sqlite_programs_dir(h, dir, sizeof dir);
    struct stat st;
    /* keep 0: nothing is copied; the programs earlier runs kept go, unless none ever was. */
    if (keep == 0 && lstat(dir, &st) != 0 && errno == ENOENT)
        return 0;
    int dfd;
    int rc = open_programs_dir(path, dir, &dfd, pinned, sizeof pinned, msg, len);
    if (rc != 0)
        return rc;
    /* From here on the folder is reached through its descriptor, never by its name again. */
    if (keep > 0)
        rc = bench__history_copy_program(pinned, ctx, timeout_s, mac, sizeof mac, why,
                                         sizeof why);
    if (rc != 0) {
        bench__msg(msg, len, "history '%s': the program was not kept: %s", path, why);
        close(dfd);
        return rc;
    }
    sqlite3 *db;
    if ((rc = bench__sqlite_open_db(path, false, &db, msg, len)) != 0) {
        close(dfd);
        return rc;
    }
    /* The newest `keep` programs stay; the rows of the others go in the same transaction as the
     * new one's, and their files after it commits. */
    char **old = NULL;
    size_t nold = 0;
    int src = record_program(db, keep > 0 ? ctx->program_hash : NULL, mac, keep, &old, &nold);
    if (src != SQLITE_OK) {
        bench__msg(msg, len, "history '%s': the program was not kept: %s", path,
                   bench__sqlite_work_error(db, src));
        sqlite3_progress_handler(db, 0, NULL, NULL); /* the rollback itself must not stop */
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        rc = BENCH_EIO;
    } else {
        unlink_programs(dfd, old, nold);
    }
    bench__history_strings_free(old, nold);
    sqlite3_close(db);
    close(dfd);
    return rc;
}

int bench__sqlite_program(bench__history *h, long long run_id, char **hash, char **mac, char *msg,
                      size_t len)
{
    sqlite3 *db;
    *hash = *mac = NULL;
    int rc = open_read(h, &db, msg, len);
    if (rc != 0 || !db)
        return rc;
    bool oom = false;
    bool have = bench__sqlite_count_of(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                             " AND name = 'programs'") > 0;
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(db, have ? "SELECT r.program_hash, p.mac FROM runs r LEFT JOIN"
                                            " programs p ON p.hash = r.program_hash"
                                            " WHERE r.id = ?1"
                                          : "SELECT program_hash, NULL FROM runs WHERE id = ?1",
                                 -1, &st, NULL);
    if (src == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)run_id);
        src = sqlite3_step(st);
        if (src == SQLITE_ROW) {
            *hash = text_of(st, 0, &oom);
            *mac = text_of(st, 1, &oom);
        }
        src = src == SQLITE_ROW || src == SQLITE_DONE ? SQLITE_OK : src;
    }
    sqlite3_finalize(st);
    return end_read(h, db, src, oom, msg, len);
}

static void op_close(bench__history *h)
{
    (void)h; /* each operation closed its own connection */
}

static const bench__history_ops sqlite_ops = {
    .append = bench__sqlite_append,
    .run_ids = bench__sqlite_run_ids,
    .copy_read = bench__sqlite_copy_read,
    .copy_write = bench__sqlite_copy_write,
    .ids = bench__sqlite_ids,
    .runs = bench__sqlite_runs,
    .series = bench__sqlite_series,
    .run_ok = bench__sqlite_run_ok,
    .last = bench__sqlite_last,
    .program = bench__sqlite_program,
    .keep_program = bench__sqlite_keep_program,
    .programs_dir = bench__sqlite_programs_dir,
    .close = op_close,
};

int bench__history_sqlite_open(bench__history *h, const char *path, bool create, char *msg,
                               size_t len)
{
    bench__msg(h->name, sizeof h->name, "%s", path);
    h->ops = &sqlite_ops;
    bool exists;
    int rc = bench__sqlite_check_file(path, &exists, msg, len);
    if (rc != 0)
        return rc;
    h->exists = exists;
    if (!exists) {
        if (create)
            return 0; /* made by the first append */
        bench__msg(msg, len, "history '%s' does not exist", path);
        return BENCH_EINVAL;
    }
    sqlite3 *db;
    if ((rc = bench__sqlite_open_db(path, false, &db, msg, len)) != 0)
        return rc;
    sqlite3_close(db);
    return 0;
}
