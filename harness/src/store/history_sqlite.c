/*
 * history_sqlite.c: the run history in an SQLite file (history_store.h): checking a file
 * before a run, appending a run in one transaction, and the rows every reader asks for; what
 * is computed from them and printed is history_show.c's, the same for both stores.
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
 * too. Each operation opens its own connection and closes it (the handle keeps the path), so
 * no connection is held while benchmarks run.
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
#include "store/history_sqlite.h"
#include "store/store.h"
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

static const char schema_sql[] =
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL, git_revision TEXT,"
    " cwd_git_revision TEXT, git_dirty INTEGER, hostname TEXT, os TEXT, kernel TEXT,"
    " cpu_brand TEXT, cores INTEGER, threads INTEGER, memory_bytes REAL, governor TEXT,"
    " compiler TEXT, compiler_flags TEXT, build_type TEXT, harness_version TEXT,"
    " program_hash TEXT, program_libs TEXT, quick INTEGER NOT NULL, seed INTEGER,"
    " confidence_level REAL, baseline TEXT, virtualization TEXT);"
    "CREATE TABLE results ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), benchmark TEXT NOT NULL,"
    " status TEXT NOT NULL, median_ns REAL, lower_ns REAL, upper_ns REAL,"
    " samples INTEGER NOT NULL, processes INTEGER NOT NULL, process_cv REAL, verdict TEXT,"
    " ratio REAL, ratio_lower REAL, ratio_upper REAL, code_hash TEXT,"
    " PRIMARY KEY (run_id, benchmark));"
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
int bench__sqlite_check_file(const char *path, bool *exists, char *msg, size_t len)
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
    static const char magic[] = "SQLite format 3"; /* with its NUL: 16 bytes */
    char head[sizeof magic] = {0};
    ssize_t got = fd >= 0 ? read(fd, head, sizeof head) : -1;
    int err = errno;
    if (fd >= 0)
        close(fd);
    if (got < 0) {
        bench__msg(msg, len, "history '%s': %s", path, strerror(err));
        return BENCH_EIO;
    }
    if (got != (ssize_t)sizeof head || memcmp(head, magic, sizeof magic) != 0) {
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
const char *bench__sqlite_work_error(sqlite3 *db, int rc)
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
int bench__sqlite_count_of(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int n = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
                    sqlite3_step(st) == SQLITE_ROW
                ? sqlite3_column_int(st, 0)
                : -1;
    sqlite3_finalize(st);
    return n;
}

/* The schema versions before ours that migrate() brings forward, and how: from version i to
 * i + 1 (rows written before a column was added keep it NULL: unknown). */
static const char *const migrations[BENCH__HISTORY_SCHEMA] = {
    NULL, /* there is no version 0 */
    "ALTER TABLE results ADD COLUMN code_hash TEXT;"
    "ALTER TABLE runs ADD COLUMN virtualization TEXT",
};

/* Whether the open database is ours: meta.schema_version (ours, or an older one, into *found)
 * and the three tables; reads only. */
static int check_schema(sqlite3 *db, const char *path, int *found, char *msg, size_t len)
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
    *found = 0;
    for (int v = 1; v <= BENCH__HISTORY_SCHEMA && !*found; v++) {
        char known[16];
        bench__msg(known, sizeof known, "%d", v);
        *found = strcmp(version, known) == 0 ? v : 0;
    }
    if (!*found) {
        char shown[4 * sizeof version];
        bench__msg(msg, len, "history '%s' has %s%s%s, not %d (left as it is)", path,
                   version[0] ? "schema_version '" : "no schema_version",
                   version[0] ? bench__escape(shown, sizeof shown, version) : "",
                   version[0] ? "'" : "", BENCH__HISTORY_SCHEMA);
        return BENCH_EINVAL;
    }
    if (bench__sqlite_count_of(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                     "name IN ('runs', 'results', 'process_medians')") != 3) {
        bench__msg(msg, len, "history '%s' lacks the tables runs, results and process_medians "
                             "(left as it is)", path);
        return BENCH_EINVAL;
    }
    /* Code in the file that would run as this user's statements touch it. */
    if (bench__sqlite_count_of(db, "SELECT count(*) FROM sqlite_master WHERE type IN ('trigger', 'view')")
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

/* Brings the checked database of an older version forward to ours, in one transaction that
 * takes the write lock first and reads the version again under it (a concurrent run may have
 * migrated it meanwhile). */
static int migrate(sqlite3 *db, const char *path, char *msg, size_t len)
{
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    int v = rc == SQLITE_OK ? bench__sqlite_count_of(db, "SELECT CAST(value AS INTEGER) FROM meta"
                                                         " WHERE key = 'schema_version'")
                            : -1;
    if (rc == SQLITE_OK && (v < 1 || v > BENCH__HISTORY_SCHEMA))
        rc = SQLITE_CORRUPT;
    for (; rc == SQLITE_OK && v < BENCH__HISTORY_SCHEMA; v++)
        rc = sqlite3_exec(db, migrations[v], NULL, NULL, NULL);
    if (rc == SQLITE_OK) {
        char sql[128];
        bench__msg(sql, sizeof sql, "UPDATE meta SET value = '%d' WHERE key = 'schema_version'",
                   BENCH__HISTORY_SCHEMA);
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        return 0;
    bench__msg(msg, len, "history '%s' cannot be brought forward to schema %d: %s (left as it "
                         "is)", path, BENCH__HISTORY_SCHEMA, bench__sqlite_work_error(db, rc));
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return BENCH_EIO;
}

/* Opens the history at path, checked (created first when absent and `create`) and brought
 * forward to our schema when it is older (a reader's connection writes too, here only). */
int bench__sqlite_open_db(const char *path, bool create, sqlite3 **out, char *msg, size_t len)
{
    *out = NULL;
    bool exists;
    int rc = bench__sqlite_check_file(path, &exists, msg, len);
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
        if ((rc = create_db(path, msg, len)) != 0 || (rc = bench__sqlite_check_file(path, &exists, msg, len)))
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
    int version = 0;
    if ((rc = check_schema(db, path, &version, msg, len)) != 0 ||
        (version < BENCH__HISTORY_SCHEMA && (rc = migrate(db, path, msg, len)) != 0)) {
        sqlite3_close(db);
        return rc;
    }
    *out = db;
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
        " confidence_level, baseline, virtualization) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
        " ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)", -1, &st,
        NULL);
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
    bind_text(st, 23, ctx->virtualization);
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
    bind_text(st, 14, r->code_hash);
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

/* The run that parts of one run share (--run-id): kept in a table of its own, made when a
 * first run key is recorded (schema 1 keeps its tables; readers never need it). */
#define RUN_KEYS_SQL                                                                               \
    "CREATE TABLE IF NOT EXISTS run_keys (key TEXT PRIMARY KEY, run_id INTEGER NOT NULL"          \
    " REFERENCES runs(id))"

/* The integer a one-row query of a text (?1) and an integer (?2, when it has one) gives into
 * *out; SQLITE_OK with *found false when there is no row. */
static int int_query(sqlite3 *db, const char *sql, const char *text, sqlite3_int64 x,
                     sqlite3_int64 *out, bool *found)
{
    sqlite3_stmt *st = NULL;
    *found = false;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, text, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 2, x);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int64(st, 0);
            *found = true;
        }
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The run this one is recorded as: a new run, or with run_key the run of that key (made by
 * the first part); *dup the first result already in it (n: none). */
static int the_run(sqlite3 *db, const bench__context *ctx, const char *baseline,
                   const char *run_key, const bench__result *results, size_t n,
                   sqlite3_int64 *run, size_t *dup)
{
    bool found = false;
    *dup = n;
    if (!run_key)
        return insert_run(db, ctx, baseline, run);
    int rc = sqlite3_exec(db, RUN_KEYS_SQL, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = int_query(db, "SELECT run_id FROM run_keys WHERE key = ?1", run_key, 0, run,
                       &found);
    if (rc == SQLITE_OK && !found) {
        rc = insert_run(db, ctx, baseline, run);
        sqlite3_int64 ignored;
        if (rc == SQLITE_OK)
            rc = int_query(db, "INSERT INTO run_keys VALUES (?1, ?2)", run_key, *run, &ignored,
                           &found);
        return rc;
    }
    for (size_t i = 0; i < n && rc == SQLITE_OK && *dup == n; i++) {
        sqlite3_int64 one;
        rc = int_query(db, "SELECT 1 FROM results WHERE benchmark = ?1 AND run_id = ?2",
                       results[i].inst->id, *run, &one, &found);
        if (found)
            *dup = i;
    }
    return rc;
}

int bench__sqlite_append(bench__history *h, const bench__context *ctx,
                         const bench__result *results, size_t n, const char *baseline,
                         const char *run_key, long long *run_id, char *msg, size_t len)
{
    const char *path = h->name;
    sqlite3 *db;
    int rc = bench__sqlite_open_db(path, true, &db, msg, len);
    if (rc != 0)
        return rc;
    sqlite3_stmt *st = NULL, *pst = NULL;
    sqlite3_int64 run = 0;
    /* IMMEDIATE: the write lock is taken now (waiting up to BUSY_MS), not at the first insert,
     * where a busy database could no longer be waited for. */
    size_t dup = n;
    int src = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (src == SQLITE_OK)
        src = the_run(db, ctx, baseline, run_key, results, n, &run, &dup);
    if (src == SQLITE_OK && dup < n) {
        bench__history_msg_part(h, msg, len, results[dup].inst->id, (long long)run, run_key);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        return BENCH_EINVAL;
    }
    if (src == SQLITE_OK)
        src = sqlite3_prepare_v2(db,
            "INSERT INTO results (run_id, benchmark, status, median_ns, lower_ns, upper_ns,"
            " samples, processes, process_cv, verdict, ratio, ratio_lower, ratio_upper,"
            " code_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            -1, &st, NULL);
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
                   bench__sqlite_work_error(db, src));
        sqlite3_progress_handler(db, 0, NULL, NULL); /* the rollback itself must not stop */
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        rc = bench__proc_interrupted() ? BENCH_EUSAGE : BENCH_EIO;
    } else {
        *run_id = (long long)run;
        h->exists = true;
    }
    sqlite3_close(db);
    return rc;
}

/* ---- a copied run written ---- */

/* Binds text v (NULL: NULL) as a value of `kind` (i, r, t): a number that does not parse as
 * one is kept as the text it is (as the file it came from held it). */
static void bind_kind(sqlite3_stmt *st, int i, char kind, const char *v)
{
    char *end = NULL;
    if (!v) {
        sqlite3_bind_null(st, i);
    } else if (kind == 'i' && *v && (strtoll(v, &end, 10), !*end)) {
        sqlite3_bind_int64(st, i, strtoll(v, NULL, 10));
    } else if (kind == 'r' && *v && (strtod(v, &end), !*end)) {
        sqlite3_bind_double(st, i, strtod(v, NULL));
    } else {
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    }
}

/* Whether run->col[0]'s run is in db already (*same: with run's time and program; *there: at
 * all). */
static int copy_there(sqlite3 *db, const bench__hcopy_run *run, bool *there, bool *same)
{
    sqlite3_stmt *st = NULL;
    *there = *same = false;
    int rc = sqlite3_prepare_v2(db, "SELECT time IS ?2 AND program_hash IS ?3 FROM runs WHERE"
                                    " id = ?1", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        bind_kind(st, 1, 'i', run->col[0]);
        sqlite3_bind_text(st, 2, run->col[1], -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 3, run->col[17], -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st);
        *there = rc == SQLITE_ROW;
        *same = *there && sqlite3_column_int(st, 0);
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Inserts run and its results. */
static int copy_insert(sqlite3 *db, const bench__hcopy_run *run)
{
    sqlite3_stmt *st = NULL, *pm = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT INTO runs (" BENCH__HCOPY_RUN_SQL ") VALUES (?1,"
                                    " ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
                                    " ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)", -1, &st,
                                NULL);
    for (int c = 0; rc == SQLITE_OK && c < BENCH__HCOPY_RUN_COLUMNS; c++)
        bind_kind(st, c + 1, BENCH__HCOPY_RUN_KINDS[c], run->col[c]);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    sqlite3_finalize(st);
    st = NULL;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO results (run_id, " BENCH__HCOPY_RESULT_SQL
                                    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
                                    " ?12, ?13, ?14)", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO process_medians VALUES (?1, ?2, ?3, ?4)", -1,
                                &pm, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < run->n; i++) {
        const bench__hcopy_result *x = &run->r[i];
        sqlite3_reset(st);
        bind_kind(st, 1, 'i', run->col[0]);
        for (int c = 0; c < BENCH__HCOPY_RESULT_COLUMNS; c++)
            bind_kind(st, c + 2, BENCH__HCOPY_RESULT_KINDS[c], x->col[c]);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        for (size_t j = 0; rc == SQLITE_OK && j < x->npm; j++) {
            sqlite3_reset(pm);
            bind_kind(pm, 1, 'i', run->col[0]);
            bind_kind(pm, 2, 't', x->col[0]);
            sqlite3_bind_int64(pm, 3, (sqlite3_int64)j);
            bind_kind(pm, 4, 'r', x->pm[j]);
            rc = sqlite3_step(pm) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        }
    }
    sqlite3_finalize(st);
    sqlite3_finalize(pm);
    return rc;
}

int bench__sqlite_copy_write(bench__history *h, const bench__hcopy_run *run, bool *same,
                             char *msg, size_t len)
{
    sqlite3 *db;
    *same = false;
    int rc = bench__sqlite_open_db(h->name, true, &db, msg, len);
    if (rc != 0)
        return rc;
    h->exists = true;
    bool there = false;
    int src = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (src == SQLITE_OK)
        src = copy_there(db, run, &there, same);
    if (src == SQLITE_OK && there && !*same) {
        bench__msg(msg, len, "history '%s' holds another run %s (another time or program): it "
                             "is not a copy of the history copied from (left as it is)", h->name,
                   run->col[0]);
        rc = BENCH_EINVAL;
    } else if (src == SQLITE_OK && !there) {
        src = copy_insert(db, run);
    }
    if (src == SQLITE_OK && rc == 0)
        src = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (src != SQLITE_OK) {
        bench__msg(msg, len, "history '%s': run %s was not copied: %s", h->name, run->col[0],
                   bench__sqlite_work_error(db, src));
        rc = bench__proc_interrupted() ? BENCH_EUSAGE : BENCH_EIO;
    }
    if (rc != 0) {
        sqlite3_progress_handler(db, 0, NULL, NULL); /* the rollback itself must not stop */
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_close(db);
    return rc;
}
