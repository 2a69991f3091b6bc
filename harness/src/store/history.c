/*
 * history.c: the run history in SQLite (history.h): checking a file before a run, appending a
 * run in one transaction, and --history-show's series with their change points.
 *
 * A file is trusted only after three checks, all of them reads: it is a regular, non-empty file
 * that starts with SQLite's header (an empty file would otherwise be taken for a new database
 * and written), it has a meta table whose schema_version is ours, and it has our tables. A new
 * database is built under a temporary name and linked into place, so no reader or concurrent
 * writer ever sees a half-made one (link fails when another run made it first: then theirs is
 * used). The database is in WAL mode (set once, when it is made: it persists in the file) and
 * every connection waits up to BUSY_MS for a lock, so concurrent runs take turns.
 *
 * A history is someone else's file as much as a baseline is, so the database work is bounded:
 * every connection runs with SQLite's defensive settings (no triggers, no views, no functions
 * in the schema that are not innocuous), a file that has triggers or views is refused (this
 * program never makes any), and a progress handler stops any statement when the run is
 * interrupted (SIGINT, SIGTERM, SIGHUP: the write is rolled back and the caller sees
 * BENCH_EUSAGE) or after WORK_S seconds of work. The wait for a lock ends early on a signal
 * too. Rows are validated as they are read: a median that is not a positive finite number is
 * named on stderr and skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compare/compare.h"
#include "stats/changepoint.h"
#include "store/history.h"
#include "store/store.h"
#include "sys/clock.h"
#include "sys/proc.h"

/* How long a connection waits for another run's lock, ms. */
#define BUSY_MS 30000
/* How long one connection's statements may work, s: an honest history's append takes
 * milliseconds and a --history-show of 100 000 rows about a second. */
#define WORK_S 120
/* How often the progress handler looks at the clock and the signals, in SQLite VM steps
 * (about a microsecond each). */
#define PROGRESS_STEPS 10000
/* The step of the wait for a lock, ms. */
#define BUSY_STEP_MS 5

/* When the work of the open connection must end (bench__now_ns clock). The history is used
 * from one thread, one connection at a time (open_db sets it). */
static int64_t work_end_ns;

/* The programs kept beside the history (FILE.programs/HEX.program), each with this user's
 * signature of its hash: added to schema 1 later, so an older file gets it when a program is
 * first kept in it, and a reader treats its absence as "none kept". */
#define PROGRAMS_SQL                                                                               \
    "CREATE TABLE IF NOT EXISTS programs (hash TEXT PRIMARY KEY, mac TEXT NOT NULL,"              \
    " kept TEXT NOT NULL);"

static const char schema_sql[] =
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL, git_revision TEXT,"
    " cwd_git_revision TEXT, git_dirty INTEGER, hostname TEXT, os TEXT, kernel TEXT,"
    " cpu_brand TEXT, cores INTEGER, threads INTEGER, memory_bytes REAL, governor TEXT,"
    " compiler TEXT, compiler_flags TEXT, build_type TEXT, harness_version TEXT,"
    " program_hash TEXT, program_libs TEXT, quick INTEGER NOT NULL, seed INTEGER,"
    " confidence_level REAL, baseline TEXT);"
    "CREATE TABLE results ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), benchmark TEXT NOT NULL,"
    " status TEXT NOT NULL, median_ns REAL, lower_ns REAL, upper_ns REAL,"
    " samples INTEGER NOT NULL, processes INTEGER NOT NULL, process_cv REAL, verdict TEXT,"
    " ratio REAL, ratio_lower REAL, ratio_upper REAL, PRIMARY KEY (run_id, benchmark));"
    "CREATE INDEX results_by_benchmark ON results (benchmark, run_id);"
    "CREATE TABLE process_medians ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), benchmark TEXT NOT NULL,"
    " process INTEGER NOT NULL, median_ns REAL NOT NULL,"
    " PRIMARY KEY (run_id, benchmark, process));"
    PROGRAMS_SQL;

/* The message of the connection's last error, or of code rc without one. */
static const char *db_error(sqlite3 *db, int rc)
{
    return db && sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
}

/* Whether path is a file this program may open as a history (the reads before SQLite sees
 * it); -1 with one line when not. *exists says whether there is anything at path. */
static int check_file(const char *path, bool *exists, char *msg, size_t len)
{
    struct stat st;
    *exists = false;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        bench__msg(msg, len, "history '%s': %s", path, strerror(errno));
        return BENCH_EIO;
    }
    *exists = true;
    if (!S_ISREG(st.st_mode)) {
        bench__msg(msg, len, "history '%s' is not a regular file", path);
        return BENCH_EINVAL;
    }
    if (st.st_size == 0) {
        bench__msg(msg, len, "history '%s' is an empty file, not a history database (remove it "
                             "to start a new one)", path);
        return BENCH_EINVAL;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    char head[16] = {0};
    ssize_t got = fd >= 0 ? read(fd, head, sizeof head) : -1;
    int err = errno;
    if (fd >= 0)
        close(fd);
    if (got < 0) {
        bench__msg(msg, len, "history '%s': %s", path, strerror(err));
        return BENCH_EIO;
    }
    if (got != (ssize_t)sizeof head || memcmp(head, "SQLite format 3", 16) != 0) {
        bench__msg(msg, len, "history '%s' is not an SQLite database (left as it is)", path);
        return BENCH_EINVAL;
    }
    return 0;
}

/* SQLite's progress handler: non-zero (the statement stops with SQLITE_INTERRUPT) when the
 * run was interrupted or the connection's work is past its end. */
static int on_progress(void *arg)
{
    (void)arg;
    return bench__proc_interrupted() || bench__now_ns() > work_end_ns;
}

/* SQLite's busy handler: 1 to try the lock again after BUSY_STEP_MS, 0 to give up (SQLITE_BUSY)
 * after BUSY_MS or at once when the run was interrupted (a signal also cuts the sleep short). */
static int on_busy(void *arg, int count)
{
    (void)arg;
    if (bench__proc_interrupted() || (long long)count * BUSY_STEP_MS >= BUSY_MS)
        return 0;
    struct timespec ts = {0, BUSY_STEP_MS * 1000000L};
    nanosleep(&ts, NULL);
    return !bench__proc_interrupted();
}

/* Bounds what a connection may do and how long (the file's paragraph). */
static void harden(sqlite3 *db)
{
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    work_end_ns = bench__now_ns() + (int64_t)WORK_S * 1000000000;
    sqlite3_progress_handler(db, PROGRESS_STEPS, on_progress, NULL);
    sqlite3_busy_handler(db, on_busy, NULL);
}

/* The message of a statement that failed with code rc: a stop by on_progress says why. */
static const char *work_error(sqlite3 *db, int rc)
{
    if (rc == SQLITE_INTERRUPT || sqlite3_errcode(db) == SQLITE_INTERRUPT) {
        switch (bench__proc_interrupted()) {
        case 0:
            break;
        case SIGINT:
            return "interrupted by SIGINT";
        case SIGTERM:
            return "interrupted by SIGTERM";
        case SIGHUP:
            return "interrupted by SIGHUP";
        default:
            return "interrupted by a signal";
        }
        return "its database work took longer than " BENCH__STR(WORK_S) " s";
    }
    return db_error(db, rc);
}

/* The integer a one-row query gives (a count), or -1 when it cannot be read. */
static int count_of(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int n = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
                    sqlite3_step(st) == SQLITE_ROW
                ? sqlite3_column_int(st, 0)
                : -1;
    sqlite3_finalize(st);
    return n;
}

/* Whether the open database is ours: meta.schema_version and the three tables; reads only. */
static int check_schema(sqlite3 *db, const char *path, char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1,
                                &st, NULL);
    if (rc != SQLITE_OK) {
        if (rc == SQLITE_ERROR)
            bench__msg(msg, len, "history '%s' is an SQLite database of another kind (no "
                                 "meta table; left as it is)", path);
        else
            bench__msg(msg, len, "history '%s' cannot be read (%s; left as it is)", path,
                       db_error(db, rc));
        sqlite3_finalize(st);
        return BENCH_EINVAL;
    }
    rc = sqlite3_step(st);
    char version[32] = "";
    if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
        bench__msg(version, sizeof version, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        bench__msg(msg, len, "history '%s' cannot be read (%s; left as it is)", path,
                   db_error(db, rc));
        return BENCH_EINVAL;
    }
    char want[16];
    bench__msg(want, sizeof want, "%d", BENCH__HISTORY_SCHEMA);
    if (strcmp(version, want) != 0) {
        char shown[4 * sizeof version];
        bench__msg(msg, len, "history '%s' has %s%s%s, not %d (left as it is)", path,
                   version[0] ? "schema_version '" : "no schema_version",
                   version[0] ? bench__escape(shown, sizeof shown, version) : "",
                   version[0] ? "'" : "", BENCH__HISTORY_SCHEMA);
        return BENCH_EINVAL;
    }
    if (count_of(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                     "name IN ('runs', 'results', 'process_medians')") != 3) {
        bench__msg(msg, len, "history '%s' lacks the tables runs, results and process_medians "
                             "(left as it is)", path);
        return BENCH_EINVAL;
    }
    /* Code in the file that would run as this user's statements touch it. */
    if (count_of(db, "SELECT count(*) FROM sqlite_master WHERE type IN ('trigger', 'view')")
        != 0) {
        bench__msg(msg, len, "history '%s' has triggers or views, which this program never makes "
                             "(left as it is)", path);
        return BENCH_EINVAL;
    }
    return 0;
}

/* Makes a new database at path: built under a temporary name, then linked into place (EEXIST:
 * another run made it meanwhile, which is as good). */
static int create_db(const char *path, char *msg, size_t len)
{
    char tmp[4200];
    bench__msg(tmp, sizeof tmp, "%s.new-%ld", path, (long)getpid());
    unlink(tmp);
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    char *err = NULL;
    char sql[sizeof schema_sql + 256];
    bench__msg(sql, sizeof sql,
               "PRAGMA journal_mode = WAL; BEGIN; %s INSERT INTO meta VALUES "
               "('schema_version', '%d'), ('created_by', 'harness %s'); COMMIT;",
               schema_sql, BENCH__HISTORY_SCHEMA, bench_version());
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        bench__msg(msg, len, "history '%s': cannot create it: %s", path,
                   err ? err : db_error(db, rc));
    sqlite3_free(err);
    int crc = sqlite3_close(db);
    if (rc == SQLITE_OK && crc != SQLITE_OK) {
        bench__msg(msg, len, "history '%s': cannot create it: %s", path, sqlite3_errstr(crc));
        rc = crc;
    }
    if (rc == SQLITE_OK && link(tmp, path) != 0 && errno != EEXIST) {
        bench__msg(msg, len, "history '%s': cannot create it: %s", path, strerror(errno));
        rc = SQLITE_CANTOPEN;
    }
    unlink(tmp);
    return rc == SQLITE_OK ? 0 : BENCH_EIO;
}

/* Opens the history at path, checked (created first when absent and `create`). */
static int open_db(const char *path, bool create, sqlite3 **out, char *msg, size_t len)
{
    *out = NULL;
    bool exists;
    int rc = check_file(path, &exists, msg, len);
    if (rc != 0)
        return rc;
    /* What a run killed outright while making a history left beside it (create_db). */
    if (create)
        bench__tmp_sweep_beside(path, BENCH__STALE_TMP_S);
    if (!exists) {
        if (!create) {
            bench__msg(msg, len, "history '%s' does not exist", path);
            return BENCH_EINVAL;
        }
        if ((rc = create_db(path, msg, len)) != 0 || (rc = check_file(path, &exists, msg, len)))
            return rc;
    }
    sqlite3 *db = NULL;
    /* Read-write even to read: the last connection to close folds the WAL back into the file
     * and removes it. The checks below only read, and come before anything is written. */
    int src = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
    if (src != SQLITE_OK) {
        bench__msg(msg, len, "history '%s' cannot be opened: %s", path, db_error(db, src));
        sqlite3_close(db);
        return BENCH_EIO;
    }
    harden(db);
    if ((rc = check_schema(db, path, msg, len)) != 0) {
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

int bench__history_check(const char *path, char *msg, size_t len)
{
    bool exists;
    int rc = check_file(path, &exists, msg, len);
    if (rc != 0 || !exists)
        return rc;
    sqlite3 *db;
    if ((rc = open_db(path, false, &db, msg, len)) != 0)
        return rc;
    sqlite3_close(db);
    return 0;
}

/* ---- appending a run ---- */

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s && *s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

static void bind_real(sqlite3_stmt *st, int i, double x)
{
    if (isfinite(x))
        sqlite3_bind_double(st, i, x);
    else
        sqlite3_bind_null(st, i);
}

static int insert_run(sqlite3 *db, const bench__context *ctx, const char *baseline,
                      sqlite3_int64 *run_id)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db,
        "INSERT INTO runs (time, git_revision, cwd_git_revision, git_dirty, hostname, os, kernel,"
        " cpu_brand, cores, threads, memory_bytes, governor, compiler, compiler_flags,"
        " build_type, harness_version, program_hash, program_libs, quick, seed,"
        " confidence_level, baseline) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,"
        " ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    const char *cwd = ctx->cwd_git_revision;
    size_t cl = strlen(cwd);
    bind_text(st, 1, ctx->timestamp);
    bind_text(st, 2, ctx->git_revision);
    bind_text(st, 3, cwd);
    /* Dirty is known from the working directory's checkout only (sysinfo.c). */
    if (cl)
        sqlite3_bind_int(st, 4, cl > 6 && strcmp(cwd + cl - 6, "-dirty") == 0);
    else
        sqlite3_bind_null(st, 4);
    bind_text(st, 5, ctx->hostname);
    bind_text(st, 6, ctx->os_name[0] ? ctx->os_name : ctx->os);
    bind_text(st, 7, ctx->kernel);
    bind_text(st, 8, ctx->cpu.brand);
    if (ctx->cpu.cores > 0)
        sqlite3_bind_int(st, 9, ctx->cpu.cores);
    if (ctx->cpu.threads > 0)
        sqlite3_bind_int(st, 10, ctx->cpu.threads);
    bind_real(st, 11, ctx->memory_bytes > 0 ? ctx->memory_bytes : NAN);
    bind_text(st, 12, ctx->governor);
    bind_text(st, 13, ctx->compiler);
    bind_text(st, 14, ctx->compiler_flags);
    bind_text(st, 15, ctx->build_type);
    bind_text(st, 16, ctx->harness_version);
    bind_text(st, 17, ctx->program_hash);
    bind_text(st, 18, ctx->program_libs);
    sqlite3_bind_int(st, 19, ctx->quick);
    sqlite3_bind_int64(st, 20, (sqlite3_int64)ctx->seed);
    bind_real(st, 21, ctx->confidence_level);
    bind_text(st, 22, baseline);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    *run_id = sqlite3_last_insert_rowid(db);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* One result and its per-process medians. */
static int insert_result(sqlite3_stmt *st, sqlite3_stmt *pst, sqlite3_int64 run,
                         const bench__result *r)
{
    bool ok = r->status == BENCH__OK;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    sqlite3_bind_int64(st, 1, run);
    bind_text(st, 2, r->inst->id);
    bind_text(st, 3, bench__status_name(r->status));
    bind_real(st, 4, ok ? r->est.median.point : NAN);
    bind_real(st, 5, ok ? r->est.median.lower : NAN);
    bind_real(st, 6, ok ? r->est.median.upper : NAN);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)r->nsamples);
    sqlite3_bind_int(st, 8, (int)r->processes);
    bind_real(st, 9, ok ? r->process_cv : NAN);
    const bench__change *ch = r->change;
    if (ch) {
        bind_text(st, 10, bench__verdict_name(ch->verdict));
        if (bench__verdict_has_numbers(ch->verdict)) {
            bind_real(st, 11, ch->ratio);
            bind_real(st, 12, ch->ratio_lower);
            bind_real(st, 13, ch->ratio_upper);
        }
    }
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return rc;
    if (!ok || !r->process || r->processes < 2)
        return SQLITE_OK;
    double *logs = malloc(r->processes * sizeof *logs);
    if (!logs)
        return SQLITE_NOMEM;
    rc = SQLITE_OK;
    if (bench__process_log_medians(r->iters, r->totals_ns, r->process, r->nsamples, r->processes,
                                   logs) == 0) {
        for (unsigned j = 0; j < r->processes && rc == SQLITE_OK; j++) {
            sqlite3_reset(pst);
            sqlite3_bind_int64(pst, 1, run);
            bind_text(pst, 2, r->inst->id);
            sqlite3_bind_int(pst, 3, (int)j);
            sqlite3_bind_double(pst, 4, exp(logs[j]));
            rc = sqlite3_step(pst);
            rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
        }
    }
    free(logs);
    return rc;
}

int bench__history_append(const char *path, const bench__context *ctx,
                          const bench__result *results, size_t n, const char *baseline,
                          long long *run_id, char *msg, size_t len)
{
    sqlite3 *db;
    int rc = open_db(path, true, &db, msg, len);
    if (rc != 0)
        return rc;
    sqlite3_stmt *st = NULL, *pst = NULL;
    sqlite3_int64 run = 0;
    /* IMMEDIATE: the write lock is taken now (waiting up to BUSY_MS), not at the first insert,
     * where a busy database could no longer be waited for. */
    int src = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (src == SQLITE_OK)
        src = insert_run(db, ctx, baseline, &run);
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(db,
            "INSERT INTO results (run_id, benchmark, status, median_ns, lower_ns, upper_ns,"
            " samples, processes, process_cv, verdict, ratio, ratio_lower, ratio_upper)"
            " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)", -1, &st, NULL);
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(db, "INSERT INTO process_medians VALUES (?1, ?2, ?3, ?4)", -1,
                                 &pst, NULL);
    for (size_t i = 0; i < n && src == SQLITE_OK; i++)
        src = insert_result(st, pst, run, &results[i]);
    sqlite3_finalize(st);
    sqlite3_finalize(pst);
    if (src == SQLITE_OK && bench__proc_interrupted())
        src = SQLITE_INTERRUPT; /* a signal between two statements: not recorded either */
    if (src == SQLITE_OK)
        src = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (src != SQLITE_OK) {
        bench__msg(msg, len, "history '%s': the run was not recorded: %s", path,
                   work_error(db, src));
        sqlite3_progress_handler(db, 0, NULL, NULL); /* the rollback itself must not stop */
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        rc = bench__proc_interrupted() ? BENCH_EUSAGE : BENCH_EIO;
    } else if (run_id) {
        *run_id = (long long)run;
    }
    sqlite3_close(db);
    return rc;
}

/* p resized to cap elements of size bytes; when that fails, p as it was and *ok false. */
static void *resize(void *p, size_t cap, size_t size, bool *ok)
{
    void *q = realloc(p, cap * size);
    if (!q)
        *ok = false;
    return q ? q : p;
}

/* Whether column i of st, the median of benchmark id in run `run`, is one this program writes:
 * a positive finite number. NULL (a result without one) is skipped silently; anything else is
 * named in one warning line on stderr, and skipped too. */
static bool median_ok(sqlite3_stmt *st, int i, const char *path, long long run, const char *id)
{
    int type = sqlite3_column_type(st, i);
    if (type == SQLITE_NULL)
        return false;
    double x = sqlite3_column_double(st, i);
    if ((type == SQLITE_FLOAT || type == SQLITE_INTEGER) && isfinite(x) && x > 0)
        return true;
    char p[1024], b[BENCH__ESCAPED_ID], v[64], raw[16];
    const unsigned char *text = sqlite3_column_text(st, i);
    bench__msg(raw, sizeof raw, "%s", text ? (const char *)text : "");
    bench__errf("warning: history '%s': run %lld, benchmark '%s': median %s%s%s is "
                "not a positive number; the row is skipped\n",
                bench__escape(p, sizeof p, path), run, bench__escape(b, sizeof b, id),
                type == SQLITE_BLOB ? "" : "'",
                type == SQLITE_BLOB ? "(a blob)" : bench__escape(v, sizeof v, raw),
                type == SQLITE_BLOB ? "" : "'");
    return false;
}

/* ---- the newest earlier run, for "since the last run" ---- */

void bench__history_last_free(bench__history_last *l, size_t n)
{
    for (size_t i = 0; l && i < n; i++) {
        free(l[i].medians);
        l[i].medians = NULL;
        l[i].n = 0;
    }
}

int bench__history_last_runs(const char *path, const char *const *ids, size_t n,
                             bench__history_last *out, char *msg, size_t len)
{
    memset(out, 0, n * sizeof *out);
    struct stat st;
    if (stat(path, &st) != 0)
        return 0; /* no history yet: no last run */
    sqlite3 *db;
    int rc = open_db(path, false, &db, msg, len);
    if (rc != 0)
        return rc;
    sqlite3_stmt *st_run = NULL, *st_pm = NULL;
    int src = sqlite3_prepare_v2(db,
        "SELECT r.id, coalesce(r.git_revision, r.cwd_git_revision), r.program_hash"
        " FROM results x JOIN runs r"
        " ON r.id = x.run_id WHERE x.benchmark = ?1 AND x.status = 'ok' AND x.processes >= 2"
        " ORDER BY r.id DESC LIMIT 1", -1, &st_run, NULL);
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(db, "SELECT median_ns FROM process_medians WHERE run_id = ?1"
                                     " AND benchmark = ?2 ORDER BY process",
                                 -1, &st_pm, NULL);
    for (size_t i = 0; i < n && src == SQLITE_OK; i++) {
        sqlite3_reset(st_run);
        sqlite3_bind_text(st_run, 1, ids[i], -1, SQLITE_TRANSIENT);
        int step = sqlite3_step(st_run);
        if (step == SQLITE_DONE)
            continue;
        if (step != SQLITE_ROW) {
            src = step;
            break;
        }
        sqlite3_int64 run = sqlite3_column_int64(st_run, 0);
        const unsigned char *rev = sqlite3_column_text(st_run, 1);
        bench__msg(out[i].revision, sizeof out[i].revision, "%s",
                   rev && *rev ? (const char *)rev : "-");
        const unsigned char *hash = sqlite3_column_text(st_run, 2);
        bench__msg(out[i].program_hash, sizeof out[i].program_hash, "%s",
                   hash ? (const char *)hash : "");
        sqlite3_reset(st_pm);
        sqlite3_bind_int64(st_pm, 1, run);
        sqlite3_bind_text(st_pm, 2, ids[i], -1, SQLITE_TRANSIENT);
        size_t cap = 0;
        while ((step = sqlite3_step(st_pm)) == SQLITE_ROW) {
            if (!median_ok(st_pm, 0, path, (long long)run, ids[i]))
                continue;
            bool ok = true;
            if (out[i].n == cap) {
                cap = cap ? 2 * cap : 16;
                out[i].medians = resize(out[i].medians, cap, sizeof *out[i].medians, &ok);
            }
            if (!ok) {
                step = SQLITE_NOMEM;
                break;
            }
            out[i].medians[out[i].n++] = sqlite3_column_double(st_pm, 0);
        }
        if (step != SQLITE_DONE) {
            src = step;
            break;
        }
        out[i].run = out[i].n >= 2 ? (long long)run : 0;
    }
    sqlite3_finalize(st_run);
    sqlite3_finalize(st_pm);
    if (src != SQLITE_OK) {
        bench__msg(msg, len, "history '%s' cannot be read: %s", path, work_error(db, src));
        bench__history_last_free(out, n);
        rc = BENCH_EIO;
    }
    sqlite3_close(db);
    return rc;
}

/* ---- the programs kept beside it ---- */

void bench__history_programs_dir(const char *path, char *dir, size_t len)
{
    bench__msg(dir, len, "%s.programs", path);
}

/* Whether hash names a program file: "sha256:" and exactly 64 lowercase hex digits (anything
 * else in a row, "sha256:../x" or a path, must never become a file name). */
static bool program_hash_ok(const char *hash)
{
    return strncmp(hash, "sha256:", 7) == 0 && strlen(hash + 7) == 64 &&
           strspn(hash + 7, "0123456789abcdef") == 64;
}

/* Unlinks the program files of `hashes` (n of them) in the folder open as dfd. */
static void unlink_programs(int dfd, char **hashes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!program_hash_ok(hashes[i]))
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

int bench__history_keep_program(const char *path, const bench__context *ctx, size_t keep,
                                double timeout_s, char *msg, size_t len)
{
    const char *hash = ctx->program_hash;
    if (keep == 0 || !program_hash_ok(hash))
        return 0;
    char dir[4200], pinned[64], file[128], why[512];
    bench__history_programs_dir(path, dir, sizeof dir);
    int dfd;
    int rc = open_programs_dir(path, dir, &dfd, pinned, sizeof pinned, msg, len);
    if (rc != 0)
        return rc;
    /* From here on the folder is reached through its descriptor, never by its name again. A
     * copy a run killed outright left there goes first. */
    bench__tmp_sweep(pinned, BENCH__STALE_TMP_S);
    bench__msg(file, sizeof file, "%s/%s.program", pinned, hash + 7);
    struct stat fst;
    if (lstat(file, &fst) != 0) {
        bench__snapshot snap;
        rc = bench__snapshot_prepare(pinned, hash + 7, timeout_s, &snap, why, sizeof why);
        if (rc == 0 && strcmp(snap.hash, hash) != 0) {
            bench__snapshot_discard(&snap);
            bench__msg(why, sizeof why, "the program's file changed while it ran");
            rc = BENCH_EIO;
        }
        if (rc == 0)
            rc = bench__snapshot_commit(pinned, hash + 7, &snap, why, sizeof why);
        if (rc != 0) {
            bench__msg(msg, len, "history '%s': the program was not kept: %s", path, why);
            close(dfd);
            return rc;
        }
    }
    char mac[BENCH__MAC_TEXT];
    /* With its size, which --history-confirm checks against the file before reading it. */
    rc = bench__snapshot_sign(hash, ctx->program_bytes, mac, sizeof mac, why, sizeof why);
    if (rc != 0) {
        bench__msg(msg, len, "history '%s': the program was not kept: %s", path, why);
        close(dfd);
        return rc;
    }
    sqlite3 *db;
    if ((rc = open_db(path, false, &db, msg, len)) != 0) {
        close(dfd);
        return rc;
    }
    /* The newest `keep` programs stay; the rows of the others go in the same transaction as the
     * new one's, and their files after it commits. */
    char **old = NULL;
    size_t nold = 0, cap = 0;
    sqlite3_stmt *st = NULL;
    int src = sqlite3_exec(db, "BEGIN IMMEDIATE; " PROGRAMS_SQL, NULL, NULL, NULL);
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO programs VALUES (?1, ?2,"
                                     " strftime('%Y-%m-%dT%H:%M:%f', 'now'))", -1, &st, NULL);
    if (src == SQLITE_OK) {
        sqlite3_bind_text(st, 1, hash, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 2, mac, -1, SQLITE_TRANSIENT);
        src = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(db, "SELECT hash FROM programs ORDER BY kept DESC, hash"
                                     " LIMIT -1 OFFSET ?1", -1, &st, NULL);
    if (src == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)keep);
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
            bool ok = true;
            if (nold == cap) {
                cap = cap ? 2 * cap : 8;
                old = resize(old, cap, sizeof *old, &ok);
            }
            const unsigned char *h = sqlite3_column_text(st, 0);
            if (!ok || !(old[nold] = strdup(h ? (const char *)h : ""))) {
                src = SQLITE_NOMEM;
                break;
            }
            if (strncmp(old[nold], "sha256:", 7) == 0)
                nold++;
            else
                free(old[nold]);
        }
        if (src == SQLITE_DONE)
            src = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (src == SQLITE_OK && nold > 0) {
        sqlite3_stmt *del = NULL;
        src = sqlite3_prepare_v2(db, "DELETE FROM programs WHERE hash = ?1", -1, &del, NULL);
        for (size_t i = 0; i < nold && src == SQLITE_OK; i++) {
            sqlite3_bind_text(del, 1, old[i], -1, SQLITE_TRANSIENT);
            src = sqlite3_step(del) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
            sqlite3_reset(del);
        }
        sqlite3_finalize(del);
    }
    if (src == SQLITE_OK)
        src = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (src != SQLITE_OK) {
        bench__msg(msg, len, "history '%s': the program was not kept: %s", path,
                   work_error(db, src));
        sqlite3_progress_handler(db, 0, NULL, NULL); /* the rollback itself must not stop */
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        rc = BENCH_EIO;
    } else {
        unlink_programs(dfd, old, nold);
    }
    for (size_t i = 0; i < nold; i++)
        free(old[i]);
    free(old);
    sqlite3_close(db);
    close(dfd);
    return rc;
}

int bench__history_program(const char *path, long long run_id, char *hash, size_t hlen,
                           char *mac, size_t mlen, char *msg, size_t len)
{
    hash[0] = mac[0] = '\0';
    sqlite3 *db;
    int rc = open_db(path, false, &db, msg, len);
    if (rc != 0)
        return rc;
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                                     " AND name = 'programs'", -1, &st, NULL);
    bool have = src == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(db, have ? "SELECT r.program_hash, p.mac FROM runs r LEFT JOIN"
                                            " programs p ON p.hash = r.program_hash"
                                            " WHERE r.id = ?1"
                                          : "SELECT program_hash, NULL FROM runs WHERE id = ?1",
                                 -1, &st, NULL);
    if (src == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)run_id);
        int step = sqlite3_step(st);
        if (step == SQLITE_ROW) {
            const unsigned char *h = sqlite3_column_text(st, 0), *m = sqlite3_column_text(st, 1);
            bench__msg(hash, hlen, "%s", h ? (const char *)h : "");
            bench__msg(mac, mlen, "%s", m ? (const char *)m : "");
        } else if (step != SQLITE_DONE) {
            src = step;
        }
    }
    sqlite3_finalize(st);
    if (src != SQLITE_OK) {
        bench__msg(msg, len, "history '%s' cannot be read: %s", path, work_error(db, src));
        rc = BENCH_EIO;
    }
    sqlite3_close(db);
    return rc;
}

/* ---- --history-show ---- */

/* A text column, escaped for the terminal ("-" when NULL or empty). */
static const char *column(sqlite3_stmt *st, int i, char *buf, size_t len)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s && *s ? bench__escape(buf, len, (const char *)s) : "-";
}

/* A change as a percentage: two decimals, or three significant digits where that would be
 * a long row of digits (a series whose medians span many orders of magnitude). */
static void fmt_pct(char *buf, size_t len, double x)
{
    bench__msg(buf, len, fabs(100 * x) < 1e6 ? "%+.2f%%" : "%+.3g%%", 100 * x);
}

/* Digits of a program's hash shown in a table: enough to tell builds apart at a glance. */
#define PROGRAM_DIGITS 12

/* A program's hash ("sha256:HEX") as a table shows it: its first PROGRAM_DIGITS hex digits,
 * "-" when the run recorded none. */
static const char *short_program(const char *hash, char *buf, size_t len)
{
    if (!hash || strncmp(hash, "sha256:", 7) != 0 || strlen(hash) < 7 + PROGRAM_DIGITS)
        return hash && *hash ? bench__escape(buf, len, hash) : "-";
    bench__msg(buf, len, "%.*s", PROGRAM_DIGITS, hash + 7);
    return buf;
}



/* The list of runs. */
static int show_runs(FILE *o, sqlite3 *db)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db,
        "SELECT id, time, coalesce(git_revision, cwd_git_revision), git_dirty, hostname,"
        " (SELECT count(*) FROM results WHERE run_id = runs.id), baseline, program_hash"
        " FROM runs ORDER BY id",
        -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    /* The revision column as wide as its longest entry ("0123456789ab-dirty" is 18). */
    int w = 16;
    sqlite3_stmt *wst;
    if (sqlite3_prepare_v2(db, "SELECT max(length(coalesce(git_revision, cwd_git_revision)))"
                               " FROM runs", -1, &wst, NULL) == SQLITE_OK) {
        if (sqlite3_step(wst) == SQLITE_ROW && sqlite3_column_int(wst, 0) > w)
            w = sqlite3_column_int(wst, 0) < 255 ? sqlite3_column_int(wst, 0) : 255;
        sqlite3_finalize(wst);
    }
    fprintf(o, "%6s  %-20s  %-*s  %-5s  %-*s  %-20s  %10s  %s\n", "run", "time", w, "revision",
            "dirty", PROGRAM_DIGITS, "program", "host", "benchmarks", "baseline");
    char a[256], b[256], c[256], d[256], e[256];
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int dirty = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 3);
        fprintf(o, "%6lld  %-20s  %-*s  %-5s  %-*s  %-20s  %10d  %s\n",
                (long long)sqlite3_column_int64(st, 0), column(st, 1, a, sizeof a), w,
                column(st, 2, b, sizeof b), dirty < 0 ? "-" : dirty ? "yes" : "no",
                PROGRAM_DIGITS, short_program((const char *)sqlite3_column_text(st, 7), e,
                                              sizeof e),
                column(st, 4, c, sizeof c), sqlite3_column_int(st, 5),
                column(st, 6, d, sizeof d));
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Prints one benchmark's series (the natural logs of its n medians) and what was found in it. */
static void print_series(FILE *o, const char *id, size_t n, const sqlite3_int64 *runs,
                         char *const *revs, char *const *progs, const double *logs,
                         size_t tests, const bench__cp_result *cr)
{
    char shown[BENCH__ESCAPED_ID], rev[256], prog[256], t[32];
    fprintf(o, "\n%s: %zu run%s\n", bench__escape(shown, sizeof shown, id), n,
            n == 1 ? "" : "s");
    int w = 16; /* the revision column, as wide as its longest entry */
    for (size_t i = 0; i < n; i++) {
        int len = (int)strlen(bench__escape(rev, sizeof rev, revs[i]));
        w = len > w ? len : w;
    }
    fprintf(o, "  %6s  %-*s  %-*s  %s\n", "run", w, "revision", PROGRAM_DIGITS, "program",
            "median");
    for (size_t i = 0; i < n; i++) {
        bench__fmt_time(t, sizeof t, exp(logs[i]));
        fprintf(o, "  %6lld  %-*s  %-*s  %s\n", (long long)runs[i], w,
                bench__escape(rev, sizeof rev, revs[i]), PROGRAM_DIGITS,
                short_program(progs[i], prog, sizeof prog), t);
    }
    if (cr->ncp == 0)
        fprintf(o, "  change points: none%s\n",
                n < 2 * BENCH__CP_MIN_SEGMENT ? " (too few runs to tell)" : "");
    for (size_t c = 0; c < cr->ncp; c++) {
        char s[32], lo[32], hi[32];
        const bench__cp *cp = &cr->cp[c];
        fmt_pct(s, sizeof s, cp->step);
        fmt_pct(lo, sizeof lo, cp->step_lower);
        fmt_pct(hi, sizeof hi, cp->step_upper);
        fprintf(o, "  change point: at run %lld (first revision after it %s): %s [%s, %s], "
                   "p %.2g, located within runs %lld to %lld\n", (long long)runs[cp->index],
                bench__escape(rev, sizeof rev, revs[cp->index]), s, lo, hi, cp->p_adjusted,
                (long long)runs[cp->index_lower], (long long)runs[cp->index_upper]);
    }
    if (cr->trend.found) {
        char s[32], lo[32], hi[32];
        fmt_pct(s, sizeof s, cr->trend.per_point);
        fmt_pct(lo, sizeof lo, cr->trend.lower);
        fmt_pct(hi, sizeof hi, cr->trend.upper);
        fprintf(o, "  trend: %s per run [%s, %s] over the last %zu runs, p %.2g", s, lo, hi,
                cr->trend.points, cr->trend.p_adjusted);
        if (tests > 1)
            fprintf(o, " (adjusted over the %zu series shown)", tests);
        if (cr->nabsorbed)
            fprintf(o, " (a line fits better than the %zu step%s found)", cr->nabsorbed,
                    cr->nabsorbed == 1 ? "" : "s");
        fputc('\n', o);
    } else if (n >= 3) {
        fprintf(o, "  trend: none\n");
    }
}

/* How many of the n ids that are selected have a trend test: 3 or more runs ok (into *m). */
static int count_trend_tests(sqlite3 *db, char *const *ids, const bool *selected, size_t n,
                             size_t *m)
{
    sqlite3_stmt *st;
    *m = 0;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*) >= 3 FROM results WHERE benchmark = ?1 AND"
                                    " status = 'ok' AND typeof(median_ns) IN ('integer', 'real')"
                                    " AND median_ns > 0 AND median_ns < 9e999", -1, &st, NULL);
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
        if (!selected[i])
            continue;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, ids[i], -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *m += sqlite3_column_int(st, 0) != 0;
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* One benchmark's series with its change points and trend, its trend one of `tests`. */
static int show_series(FILE *o, sqlite3 *db, const char *path, const char *id,
                       size_t tests, bench__history_view *view)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db,
        "SELECT r.id, coalesce(r.git_revision, r.cwd_git_revision), x.median_ns, r.program_hash"
        " FROM results x JOIN runs r ON r.id = x.run_id WHERE x.benchmark = ?1 AND x.status = 'ok'"
        " ORDER BY r.id", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
    size_t n = 0, cap = 0;
    double *logs = NULL;
    sqlite3_int64 *runs = NULL;
    char **revs = NULL, **progs = NULL;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!median_ok(st, 2, path, (long long)sqlite3_column_int64(st, 0), id))
            continue;
        if (n == cap) {
            bool ok = true;
            cap = cap ? 2 * cap : 64;
            logs = resize(logs, cap, sizeof *logs, &ok);
            runs = resize(runs, cap, sizeof *runs, &ok);
            revs = resize(revs, cap, sizeof *revs, &ok);
            progs = resize(progs, cap, sizeof *progs, &ok);
            if (!ok) {
                rc = SQLITE_NOMEM;
                break;
            }
        }
        const unsigned char *rev = sqlite3_column_text(st, 1), *prog = sqlite3_column_text(st, 3);
        runs[n] = sqlite3_column_int64(st, 0);
        logs[n] = log(sqlite3_column_double(st, 2));
        revs[n] = strdup(rev && *rev ? (const char *)rev : "-");
        progs[n] = strdup(prog ? (const char *)prog : "");
        if (!revs[n] || !progs[n]) {
            free(revs[n]);
            free(progs[n]);
            rc = SQLITE_NOMEM;
            break;
        }
        n++;
    }
    sqlite3_finalize(st);
    bench__cp_result cr;
    if (rc == SQLITE_DONE) {
        rc = bench__changepoints(logs, n, BENCH__HISTORY_ALPHA, tests ? (double)tests : 1,
                                 &cr) != 0 ? SQLITE_NOMEM : SQLITE_OK;
        if (rc == SQLITE_OK && o)
            print_series(o, id, n, runs, revs, progs, logs, tests, &cr);
    }
    if (rc == SQLITE_OK && view) {
        bench__history_series *grown = realloc(view->s, (view->n + 1) * sizeof *view->s);
        char *copy = strdup(id);
        if (grown)
            view->s = grown;
        if (!grown || !copy) {
            free(copy);
            rc = SQLITE_NOMEM;
        } else {
            /* The arrays move into the view: the medians in ns, in place of their logs. */
            for (size_t i = 0; i < n; i++)
                logs[i] = exp(logs[i]);
            view->s[view->n++] = (bench__history_series){copy, n, (long long *)runs, revs, progs,
                                                         logs, cr};
            runs = NULL;
            revs = NULL;
            progs = NULL;
            logs = NULL;
            n = 0;
        }
    }
    for (size_t i = 0; i < n && revs; i++) {
        free(revs[i]);
        free(progs[i]);
    }
    free(revs);
    free(progs);
    free(runs);
    free(logs);
    return rc;
}

void bench__history_view_free(bench__history_view *v)
{
    for (size_t i = 0; v && i < v->n; i++) {
        bench__history_series *x = &v->s[i];
        for (size_t j = 0; j < x->n; j++) {
            free(x->revisions[j]);
            free(x->programs[j]);
        }
        free(x->revisions);
        free(x->programs);
        free(x->runs);
        free(x->median_ns);
        free(x->id);
    }
    if (v) {
        free(v->s);
        v->s = NULL;
        v->n = 0;
    }
}

int bench__history_show(FILE *o, const char *path, bench__history_selector select, void *arg,
                        bench__history_view *view, char *msg, size_t len)
{
    if (view)
        view->s = NULL, view->n = 0, view->trend_tests = 0;
    sqlite3 *db;
    int rc = open_db(path, false, &db, msg, len);
    if (rc != 0)
        return rc;
    sqlite3_stmt *st = NULL;
    char **ids = NULL;
    bool *selected = NULL;
    size_t n = 0, cap = 0;
    int src = sqlite3_prepare_v2(db, "SELECT DISTINCT benchmark FROM results ORDER BY benchmark",
                                 -1, &st, NULL);
    while (src == SQLITE_OK || src == SQLITE_ROW) {
        if ((src = sqlite3_step(st)) != SQLITE_ROW)
            break;
        bool ok = true;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            ids = resize(ids, cap, sizeof *ids, &ok);
        }
        const unsigned char *s = sqlite3_column_text(st, 0);
        if (!ok || !(ids[n] = strdup(s ? (const char *)s : ""))) {
            src = SQLITE_NOMEM;
            break;
        }
        n++;
    }
    sqlite3_finalize(st);
    if (src == SQLITE_DONE) {
        src = SQLITE_OK;
        selected = calloc(n ? n : 1, sizeof *selected);
        if (!selected)
            src = SQLITE_NOMEM;
    }
    if (src == SQLITE_OK && select((const char *const *)ids, n, selected, arg) != 0) {
        msg[0] = '\0';
        rc = BENCH_EUSAGE;
    } else if (src == SQLITE_OK) {
        /* Every series shown has its trend tested: Bonferroni over them, so that unchanged
         * code shows a trend in any of them at the level's rate, not in one of every twenty. */
        size_t tests = 0;
        src = count_trend_tests(db, ids, selected, n, &tests);
        if (view)
            view->trend_tests = tests;
        if (src == SQLITE_OK && o)
            src = show_runs(o, db);
        for (size_t i = 0; i < n && src == SQLITE_OK; i++)
            if (selected[i])
                src = show_series(o, db, path, ids[i], tests, view);
    }
    if (src != SQLITE_OK) {
        bench__msg(msg, len, "history '%s' cannot be read: %s", path, work_error(db, src));
        rc = BENCH_EIO;
    }
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
    free(selected);
    sqlite3_close(db);
    return rc;
}

/* ---- --history-gate ---- */

/* One benchmark of the gated run: its id and its newest n medians' logs, oldest first. */
typedef struct gated {
    char *id;
    double *logs;
    size_t n;
    long long prev_run; /* its newest earlier run in the window; 0: none */
} gated;

/* The benchmarks of run `run` that ran ok, each with its newest window + 1 medians (the run's
 * own last) into *out (*nout of them; the caller frees). */
static int gate_series(sqlite3 *db, const char *path, sqlite3_int64 run, size_t window,
                       gated **out, size_t *nout)
{
    sqlite3_stmt *ids = NULL, *st = NULL;
    gated *g = NULL;
    size_t n = 0, cap = 0;
    int rc = sqlite3_prepare_v2(db, "SELECT benchmark, median_ns FROM results WHERE run_id = ?1"
                                    " AND status = 'ok' ORDER BY benchmark", -1, &ids, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "SELECT median_ns, run_id FROM results WHERE benchmark = ?1 AND"
                                    " status = 'ok' AND run_id <= ?2 ORDER BY run_id DESC", -1,
                                &st, NULL);
    if (rc == SQLITE_OK)
        sqlite3_bind_int64(ids, 1, run);
    while (rc == SQLITE_OK && (rc = sqlite3_step(ids)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        const unsigned char *id = sqlite3_column_text(ids, 0);
        if (!median_ok(ids, 1, path, (long long)run, id ? (const char *)id : ""))
            continue;
        bool ok = true;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            g = resize(g, cap, sizeof *g, &ok);
        }
        if (!ok || !(g[n].id = strdup(id ? (const char *)id : ""))) {
            rc = SQLITE_NOMEM;
            break;
        }
        g[n].n = 0;
        g[n].prev_run = 0;
        if (!(g[n++].logs = malloc((window + 1) * sizeof *g->logs))) {
            rc = SQLITE_NOMEM;
            break;
        }
        gated *b = &g[n - 1];
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, b->id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 2, run);
        /* The newest window + 1 valid medians (a row skipped does not count). */
        while (b->n < window + 1 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            long long at = (long long)sqlite3_column_int64(st, 1);
            if (!median_ok(st, 0, path, at, b->id))
                continue;
            if (b->n == 1)
                b->prev_run = at;
            b->logs[b->n++] = log(sqlite3_column_double(st, 0));
        }
        rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
        /* Newest first from the query: oldest first for the tests. */
        for (size_t i = 0; i < b->n / 2; i++) {
            double t = b->logs[i];
            b->logs[i] = b->logs[b->n - 1 - i];
            b->logs[b->n - 1 - i] = t;
        }
    }
    sqlite3_finalize(ids);
    sqlite3_finalize(st);
    *out = g;
    *nout = n;
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The gate's judgement of b, one of `tests`, printed: 0 passes, 1 fails by its step (a step
 * that a paired run can confirm), 2 fails by its trend. */
static int gate_one(FILE *o, const gated *b, double tests, double noise, double alpha)
{
    bench__gate_result g;
    char shown[BENCH__ESCAPED_ID], s[32], lo[32], hi[32], total[32];
    if (bench__gate_window(b->logs, b->n, noise, alpha, tests, &g) != 0)
        return 0;
    bench__escape(shown, sizeof shown, b->id);
    if (g.step_fails) {
        fmt_pct(s, sizeof s, g.step.step);
        fmt_pct(lo, sizeof lo, g.step.step_lower);
        fmt_pct(hi, sizeof hi, g.step.step_upper);
        fprintf(o, "%s: regressed against the last %zu runs: %s [%s, %s]\n", shown, b->n - 1,
                s, lo, hi);
    }
    if (g.trend_slows) {
        fmt_pct(s, sizeof s, g.trend.per_point);
        fmt_pct(lo, sizeof lo, g.trend.lower);
        fmt_pct(hi, sizeof hi, g.trend.upper);
        fmt_pct(total, sizeof total, g.trend_total);
        fprintf(o, "%s: %sslowing trend over the last %zu runs: %s per run [%s, %s], %s over "
                   "them\n", shown, g.trend_fails ? "" : "warning: ", b->n, s, lo, hi, total);
    }
    return g.trend_fails ? 2 : g.step_fails ? 1 : 0;
}

int bench__history_gate(FILE *o, const char *path, long long run_id, size_t window,
                        double noise_threshold, double alpha, bool *regressed,
                        bench__history_steps *steps, char *msg, size_t len)
{
    *regressed = false;
    if (steps)
        steps->s = NULL, steps->n = 0;
    sqlite3 *db;
    int rc = open_db(path, false, &db, msg, len);
    if (rc != 0)
        return rc;
    gated *g = NULL;
    size_t n = 0, tested = 0;
    int src = gate_series(db, path, (sqlite3_int64)run_id, window, &g, &n);
    if (src != SQLITE_OK) {
        bench__msg(msg, len, "history '%s' cannot be read: %s", path, work_error(db, src));
        rc = BENCH_EIO;
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        tested += g[i].n - 1 >= BENCH__HISTORY_GATE_MIN;
    /* Bonferroni over the benchmarks tested: the gate's false alarms are at most about alpha
     * per run of the whole suite, not per benchmark. */
    double tests = tested ? (double)tested : 1;
    if (rc == 0)
        fprintf(o, "history gate: %zu of %zu benchmark%s tested against up to %zu earlier runs "
                   "(noise threshold %g, family level %g)\n", tested, n, n == 1 ? "" : "s",
                window, noise_threshold, alpha);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const gated *b = &g[i];
        if (b->n - 1 < BENCH__HISTORY_GATE_MIN) {
            char shown[BENCH__ESCAPED_ID];
            fprintf(o, "%s: not gated: %zu earlier run%s in the history, fewer than %d\n",
                    bench__escape(shown, sizeof shown, b->id), b->n - 1, b->n == 2 ? "" : "s",
                    BENCH__HISTORY_GATE_MIN);
            continue;
        }
        int verdict = gate_one(o, b, tests, noise_threshold, alpha);
        if (verdict == 1 && steps && b->prev_run > 0) {
            /* A step alone: the caller may confirm it (and then decides). */
            bench__history_step *grown = realloc(steps->s, (steps->n + 1) * sizeof *steps->s);
            char *copy = strdup(b->id);
            if (grown)
                steps->s = grown;
            if (grown && copy) {
                steps->s[steps->n++] = (bench__history_step){copy, b->prev_run};
                continue;
            }
            free(copy);
        }
        if (verdict)
            *regressed = true;
    }
    for (size_t i = 0; i < n; i++) {
        free(g[i].id);
        free(g[i].logs);
    }
    free(g);
    sqlite3_close(db);
    return rc;
}

void bench__history_steps_free(bench__history_steps *s)
{
    for (size_t i = 0; s && i < s->n; i++)
        free(s->s[i].id);
    if (s) {
        free(s->s);
        s->s = NULL;
        s->n = 0;
    }
}
