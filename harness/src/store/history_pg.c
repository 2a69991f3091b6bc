/*
 * history_pg.c: the run history in a PostgreSQL database (history_store.h), through libpq:
 * connecting (a "postgresql://" or "postgres://" URL; libpq's PG* variables and ~/.pgpass
 * apply), checking, making and migrating the harness's schema, and appending a run in one
 * transaction. What is read, and the store's table and handle, are history_pg_read.c's; what is computed from it and printed is
 * history_show.c's, the same for both stores.
 *
 * The tables live in their own schema, bench_history, whose meta table holds the version
 * (BENCH__PG_SCHEMA_VERSION). A run that writes makes the schema when it is absent and migrates
 * an older one forward, under a transaction-scoped advisory lock so concurrent runs do it once;
 * a newer version, a table of ours that is not a plain table (a view), has other columns or
 * types than ours, or carries triggers or rules is refused before anything is measured, with
 * one line naming the server. A name is never the URL as given: it is made from the connection
 * (user, host, port, database), so no password is ever printed.
 *
 * Many machines write at once: each run is one transaction and carries a random uuid beside
 * its serial id, so ids never collide and a commit whose answer was lost with the connection
 * is looked up again by its uuid: the message then says whether the run is in the history.
 * Every statement runs with the system schema first on the search path (a table, function or
 * operator someone made elsewhere is never what a name resolves to) and a statement timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "compare/compare.h"
#include "core/sha256.h"
#include "stats/stats.h"
#include "store/history_pg.h"
#include "store/store.h"
#include "sys/proc.h"

#define S BENCH__PG_SCHEMA "."

/* What every connection sets first. */
static const char session_sql[] =
    "SET search_path = pg_catalog, pg_temp; SET statement_timeout = '120s';"
    " SET lock_timeout = '60s'; SET client_min_messages = warning;"
    " SET idle_in_transaction_session_timeout = '300s'";

/* The migrations, from version i to i + 1: a database is brought forward one step at a time. */
static const char *const migrations[BENCH__PG_SCHEMA_VERSION] = {
    "CREATE SCHEMA IF NOT EXISTS " BENCH__PG_SCHEMA ";"
    "CREATE TABLE " S "meta (key text PRIMARY KEY, value text NOT NULL);"
    "CREATE TABLE " S "runs ("
    " id bigserial PRIMARY KEY, uuid uuid NOT NULL UNIQUE, time text NOT NULL,"
    " git_revision text, cwd_git_revision text, git_dirty integer, hostname text, os text,"
    " kernel text, cpu_brand text, cores integer, threads integer,"
    " memory_bytes double precision, governor text, compiler text, compiler_flags text,"
    " build_type text, harness_version text, program_hash text, program_libs text,"
    " quick integer NOT NULL, seed bigint, confidence_level double precision, baseline text,"
    " run_key text UNIQUE);"
    "CREATE TABLE " S "results ("
    " run_id bigint NOT NULL REFERENCES " S "runs (id), benchmark text NOT NULL,"
    " status text NOT NULL, median_ns double precision, lower_ns double precision,"
    " upper_ns double precision, samples bigint NOT NULL, processes integer NOT NULL,"
    " process_cv double precision, verdict text, ratio double precision,"
    " ratio_lower double precision, ratio_upper double precision,"
    " process_medians_ns double precision[], PRIMARY KEY (run_id, benchmark));"
    "CREATE INDEX results_by_benchmark ON " S "results (benchmark, run_id);",
    /* 1 -> 2: each benchmark's code identity; the rows before it: unknown (NULL). */
    "ALTER TABLE " S "results ADD COLUMN code_hash text;"
    "ALTER TABLE " S "runs ADD COLUMN virtualization text;",
    /* 2 -> 3: the programs of the runs, for confirming a step on another machine
     * (history_pg_read.c); a database migrated holds none of the runs before it. */
    "CREATE TABLE " S "programs ("
    " hash text PRIMARY KEY, program bytea NOT NULL, size_bytes bigint NOT NULL,"
    " first_run bigint, kept timestamp with time zone NOT NULL);",
};

/* The columns of our tables as information_schema lists them (table, then position). */
static const char expected_columns[] =
    "meta.key text,meta.value text,"
    "programs.hash text,programs.program bytea,programs.size_bytes bigint,"
    "programs.first_run bigint,programs.kept timestamp with time zone,"
    "results.run_id bigint,results.benchmark text,results.status text,"
    "results.median_ns double precision,results.lower_ns double precision,"
    "results.upper_ns double precision,results.samples bigint,results.processes integer,"
    "results.process_cv double precision,results.verdict text,results.ratio double precision,"
    "results.ratio_lower double precision,results.ratio_upper double precision,"
    "results.process_medians_ns ARRAY,results.code_hash text,"
    "runs.id bigint,runs.uuid uuid,runs.time text,runs.git_revision text,"
    "runs.cwd_git_revision text,runs.git_dirty integer,runs.hostname text,runs.os text,"
    "runs.kernel text,runs.cpu_brand text,runs.cores integer,runs.threads integer,"
    "runs.memory_bytes double precision,runs.governor text,runs.compiler text,"
    "runs.compiler_flags text,runs.build_type text,runs.harness_version text,"
    "runs.program_hash text,runs.program_libs text,runs.quick integer,runs.seed bigint,"
    "runs.confidence_level double precision,runs.baseline text,runs.run_key text,"
    "runs.virtualization text";

#define OUR_TABLES "('meta', 'runs', 'results', 'programs')"

const char *bench__pg_error(PGconn *conn, char *buf, size_t len)
{
    const char *e = conn ? PQerrorMessage(conn) : "out of memory";
    /* libpq's messages run over lines ("connection to server ... failed: FATAL:  ..."). */
    size_t j = 0;
    bool space = true;
    for (const char *p = e; *p && j + 1 < len; p++) {
        bool ws = *p == ' ' || *p == '\n' || *p == '\t' || *p == '\r';
        if (ws && space)
            continue;
        buf[j++] = ws ? ' ' : *p;
        space = ws;
    }
    while (j > 0 && buf[j - 1] == ' ')
        j--;
    buf[j] = '\0';
    return j ? buf : "unknown error";
}

/* The connection's own name: postgresql://USER@HOST:PORT/DB (never a password). */
static void name_of(bench__history *h, PGconn *conn)
{
    const char *host = PQhost(conn), *port = PQport(conn), *db = PQdb(conn),
               *user = PQuser(conn);
    bench__msg(h->name, sizeof h->name, "postgresql://%s%s%s%s%s/%s", user && *user ? user : "",
               user && *user ? "@" : "", host ? host : "", port && *port ? ":" : "",
               port ? port : "", db ? db : "");
}

/* Connects to url and sets the session up (h->name names it); NULL with the reason alone in
 * msg. */
PGconn *bench__pg_connect(bench__history *h, const char *url, char *msg, size_t len)
{
    /* connect_timeout first, so that the URL's own wins (libpq: a later keyword overrides). */
    const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *const values[] = {"10", "bench", url, NULL};
    if (bench__libpq_load(msg, len) != 0)
        return NULL;
    PGconn *conn = PQconnectdbParams(keys, values, 1);
    char err[512];
    if (conn)
        name_of(h, conn);
    if (!conn || PQstatus(conn) != CONNECTION_OK) {
        bench__msg(msg, len, "cannot connect: %s", bench__pg_error(conn, err, sizeof err));
        PQfinish(conn);
        return NULL;
    }
    /* Workers are started with exec: the socket is not theirs. */
    int fd = PQsocket(conn);
    if (fd >= 0)
        fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
    PGresult *r = PQexec(conn, session_sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        bench__msg(msg, len, "cannot set the session up: %s",
                   bench__pg_error(conn, err, sizeof err));
        PQclear(r);
        PQfinish(conn);
        return NULL;
    }
    PQclear(r);
    return conn;
}

PGconn *bench__pg_conn(bench__history *h, const char *what, char *msg, size_t len)
{
    bench__pg *pg = h->store;
    if (pg->conn && PQstatus(pg->conn) == CONNECTION_OK)
        return pg->conn;
    if (pg->conn) /* none: libpq may not even be loaded */
        PQfinish(pg->conn);
    char why[1024];
    pg->conn = bench__pg_connect(h, pg->url, why, sizeof why);
    if (!pg->conn)
        bench__msg(msg, len, "%s%s", what, why);
    return pg->conn;
}

PGresult *bench__pg_query(bench__history *h, const char *sql, int n, const char *const *params,
                          char *msg, size_t len)
{
    char err[512], what[4400];
    bench__msg(what, sizeof what, "history '%s' cannot be read: ", h->name);
    PGconn *conn = bench__pg_conn(h, what, msg, len);
    if (!conn)
        return NULL;
    PGresult *r = PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK)
        return r;
    bench__msg(msg, len, "history '%s' cannot be read: %s", h->name,
               bench__pg_error(conn, err, sizeof err));
    PQclear(r);
    return NULL;
}

/* Runs one statement of a transaction (several when there are no parameters); 0, or -1 with
 * the error in err. */
static int exec1(PGconn *conn, const char *sql, int n, const char *const *params, char *err,
                 size_t len)
{
    PGresult *r = n ? PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0) : PQexec(conn, sql);
    ExecStatusType s = PQresultStatus(r);
    PQclear(r);
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK)
        return 0;
    bench__pg_error(conn, err, len);
    return -1;
}

/* ---- the schema: its version, its shape, made and migrated forward ---- */

/* The version of the schema in the database into *v (0: there is none); 0, or -1 with the
 * reason in msg. */
static int schema_version(bench__history *h, PGconn *conn, int *v, char *msg, size_t len)
{
    char err[512];
    *v = 0;
    PGresult *r = PQexec(conn, "SELECT to_regclass('" S "meta') IS NOT NULL");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        bench__msg(msg, len, "history '%s' cannot be read: %s", h->name,
                   bench__pg_error(conn, err, sizeof err));
        PQclear(r);
        return -1;
    }
    bool have = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    if (!have)
        return 0;
    r = PQexec(conn, "SELECT value FROM " S "meta WHERE key = 'schema_version'");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        bench__msg(msg, len, "history '%s' cannot be read: %s", h->name,
                   bench__pg_error(conn, err, sizeof err));
        PQclear(r);
        return -1;
    }
    const char *text = PQntuples(r) == 1 ? PQgetvalue(r, 0, 0) : "";
    char *end;
    errno = 0;
    long x = strtol(text, &end, 10);
    if (!*text || *end || errno || x < 1 || x > 1000000) {
        char shown[64];
        bench__msg(msg, len, "history '%s': schema %s has %s%s%s, not a version (left as it is)",
                   h->name, BENCH__PG_SCHEMA, *text ? "schema_version '" : "no schema_version",
                   *text ? bench__escape(shown, sizeof shown, text) : "", *text ? "'" : "");
        PQclear(r);
        return -1;
    }
    PQclear(r);
    *v = (int)x;
    return 0;
}

/* Whether our tables are as this program made them: plain tables, our columns and types, no
 * triggers and no rules (code that would run as this user's statements touch them). */
static int check_shape(bench__history *h, PGconn *conn, char *msg, size_t len)
{
    char err[512];
    PGresult *r = PQexec(conn,
        "SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        "   WHERE n.nspname = '" BENCH__PG_SCHEMA "' AND c.relname IN " OUR_TABLES
        "   AND c.relkind = 'r'),"
        " (SELECT coalesce(string_agg(table_name || '.' || column_name || ' ' || data_type, ','"
        "   ORDER BY table_name COLLATE \"C\", ordinal_position), '')"
        "   FROM information_schema.columns WHERE table_schema = '" BENCH__PG_SCHEMA "'"
        "   AND table_name IN " OUR_TABLES "),"
        " (SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
        "   JOIN pg_namespace n ON n.oid = c.relnamespace"
        "   WHERE n.nspname = '" BENCH__PG_SCHEMA "' AND NOT t.tgisinternal)"
        " + (SELECT count(*) FROM pg_rewrite w JOIN pg_class c ON c.oid = w.ev_class"
        "   JOIN pg_namespace n ON n.oid = c.relnamespace"
        "   WHERE n.nspname = '" BENCH__PG_SCHEMA "' AND w.rulename <> '_RETURN')");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        bench__msg(msg, len, "history '%s' cannot be read: %s", h->name,
                   bench__pg_error(conn, err, sizeof err));
        PQclear(r);
        return -1;
    }
    int rc = 0;
    if (strcmp(PQgetvalue(r, 0, 0), "4") != 0) {
        bench__msg(msg, len, "history '%s': schema %s lacks the tables meta, runs, results and "
                             "programs, or one of them is not a table (left as it is)",
                   h->name, BENCH__PG_SCHEMA);
        rc = -1;
    } else if (strcmp(PQgetvalue(r, 0, 1), expected_columns) != 0) {
        bench__msg(msg, len, "history '%s': the tables of schema %s were altered (their columns "
                             "are not this program's; left as they are)", h->name,
                   BENCH__PG_SCHEMA);
        rc = -1;
    } else if (strcmp(PQgetvalue(r, 0, 2), "0") != 0) {
        bench__msg(msg, len, "history '%s': schema %s has triggers or rules, which this program "
                             "never makes (left as it is)", h->name, BENCH__PG_SCHEMA);
        rc = -1;
    }
    PQclear(r);
    return rc;
}

/* The advisory lock that orders the runs that make or migrate the schema: its key is "bench_hi"
 * in ASCII, the harness's own in the database's lock space. */
#define MIGRATE_LOCK "7161130145003071593"

/* Makes the schema or brings it forward to ours, in one transaction, under a session advisory
 * lock taken before it begins: concurrent runs wait, then find it done. (Taken inside the
 * transaction, the lock would come after the transaction's start, where a server reads the
 * catalog changes others committed: the schema made meanwhile would look absent still.) */
static int migrate(bench__history *h, PGconn *conn, char *msg, size_t len)
{
    char err[512], sql[256], ignored[64];
    if (exec1(conn, "SELECT pg_advisory_lock(" MIGRATE_LOCK ")", 0, NULL, err, sizeof err) != 0) {
        bench__msg(msg, len, "history '%s': cannot make schema %s: %s", h->name,
                   BENCH__PG_SCHEMA, err);
        return BENCH_EIO;
    }
    int rc = exec1(conn, "BEGIN", 0, NULL, err, sizeof err);
    int v = 0;
    if (rc == 0 && schema_version(h, conn, &v, msg, len) != 0) {
        exec1(conn, "ROLLBACK", 0, NULL, err, sizeof err);
        exec1(conn, "SELECT pg_advisory_unlock(" MIGRATE_LOCK ")", 0, NULL, ignored,
              sizeof ignored);
        return BENCH_EINVAL;
    }
    for (int i = v; rc == 0 && i < BENCH__PG_SCHEMA_VERSION; i++)
        rc = exec1(conn, migrations[i], 0, NULL, err, sizeof err);
    if (rc == 0 && v < BENCH__PG_SCHEMA_VERSION) {
        bench__msg(sql, sizeof sql,
                   "INSERT INTO " S "meta VALUES ('schema_version', '%d'), ('created_by', "
                   "'harness %s') ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                   " WHERE " S "meta.key = 'schema_version'", BENCH__PG_SCHEMA_VERSION,
                   bench_version());
        rc = exec1(conn, sql, 0, NULL, err, sizeof err);
    }
    if (rc == 0)
        rc = exec1(conn, "COMMIT", 0, NULL, err, sizeof err);
    if (rc != 0)
        exec1(conn, "ROLLBACK", 0, NULL, ignored, sizeof ignored);
    exec1(conn, "SELECT pg_advisory_unlock(" MIGRATE_LOCK ")", 0, NULL, ignored, sizeof ignored);
    if (rc != 0) {
        bench__msg(msg, len, "history '%s': cannot make schema %s: %s", h->name,
                   BENCH__PG_SCHEMA, err);
        return BENCH_EIO;
    }
    return 0;
}

/* Checks (and, with create, makes or migrates) the schema of a new connection. */
int bench__pg_check_schema(bench__history *h, PGconn *conn, bool create, char *msg,
                           size_t len)
{
    int v;
    if (schema_version(h, conn, &v, msg, len) != 0)
        return BENCH_EINVAL;
    if (v > BENCH__PG_SCHEMA_VERSION) {
        bench__msg(msg, len, "history '%s': schema %s is version %d, newer than this program's "
                             "%d (left as it is: use a newer harness)", h->name, BENCH__PG_SCHEMA,
                   v, BENCH__PG_SCHEMA_VERSION);
        return BENCH_EINVAL;
    }
    if (v < BENCH__PG_SCHEMA_VERSION) {
        if (!create) {
            bench__msg(msg, len, v == 0 ? "history '%s' holds no run history (no schema %s; a "
                                          "run with --history makes it)"
                                        : "history '%s': schema %s is older than this "
                                          "program's (a run with --history migrates it)",
                       h->name, BENCH__PG_SCHEMA);
            return BENCH_EINVAL;
        }
        int rc = migrate(h, conn, msg, len);
        if (rc != 0)
            return rc;
    }
    return check_shape(h, conn, msg, len) == 0 ? 0 : BENCH_EINVAL;
}

/* ---- appending a run ---- */

/* The text of a value bound to a statement: a number or a string, NULL for none. */
typedef struct param {
    char buf[40];
    const char *v;
} param;

static void p_text(param *p, const char *s)
{
    p->v = s && *s ? s : NULL;
}

static void p_real(param *p, double x)
{
    bench__msg(p->buf, sizeof p->buf, "%.17g", x);
    p->v = isfinite(x) ? p->buf : NULL;
}

static void p_int(param *p, long long x, bool known)
{
    bench__msg(p->buf, sizeof p->buf, "%lld", x);
    p->v = known ? p->buf : NULL;
}

/* A random version-4 uuid: the run's name that no other machine's run has. */
static int new_uuid(char out[37])
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0 && errno != EINTR)
            return -1;
        got += n > 0 ? (size_t)n : 0;
    }
    b[6] = (unsigned char)((b[6] & 0x0F) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3F) | 0x80);
    char hex[33];
    bench__hex(b, sizeof b, hex);
    bench__msg(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
    return 0;
}

#define RUN_COLUMNS 25
/* With a run key, the first part of a run makes its row and the others find it (a concurrent
 * part waits for the first one's transaction, then finds its row). */
static const char insert_run_sql[] =
    "INSERT INTO " S "runs (uuid, time, git_revision, cwd_git_revision, git_dirty, hostname, os,"
    " kernel, cpu_brand, cores, threads, memory_bytes, governor, compiler, compiler_flags,"
    " build_type, harness_version, program_hash, program_libs, quick, seed, confidence_level,"
    " baseline, run_key, virtualization) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
    " $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)"
    " ON CONFLICT (run_key) DO NOTHING"
    " RETURNING id";

/* The id of the run of key run_key into *id (0: none); 0, or -1 with the error in err. */
static int keyed_run(PGconn *conn, const char *run_key, long long *id, char *err, size_t len)
{
    const char *v[1] = {run_key};
    PGresult *r = PQexecParams(conn, "SELECT id FROM " S "runs WHERE run_key = $1", 1, NULL, v,
                               NULL, NULL, 0);
    int rc = PQresultStatus(r) == PGRES_TUPLES_OK ? 0 : -1;
    *id = rc == 0 && PQntuples(r) == 1 ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
    if (rc != 0)
        bench__pg_error(conn, err, len);
    PQclear(r);
    return rc;
}

/* Inserts the run's row, or with run_key finds the row its first part made (*merged); its id
 * into *id. */
static int insert_run(PGconn *conn, const char *uuid, const bench__context *ctx,
                      const char *baseline, const char *run_key, long long *id, bool *merged,
                      char *err, size_t len)
{
    param p[RUN_COLUMNS] = {{{0}, NULL}};
    const char *cwd = ctx->cwd_git_revision;
    size_t cl = strlen(cwd);
    p_text(&p[0], uuid);
    p_text(&p[1], ctx->timestamp);
    p_text(&p[2], ctx->git_revision);
    p_text(&p[3], cwd);
    /* Dirty is known from the working directory's checkout only (sysinfo.c). */
    p_int(&p[4], cl > 6 && strcmp(cwd + cl - 6, "-dirty") == 0, cl > 0);
    p_text(&p[5], ctx->hostname);
    p_text(&p[6], ctx->os_name[0] ? ctx->os_name : ctx->os);
    p_text(&p[7], ctx->kernel);
    p_text(&p[8], ctx->cpu.brand);
    p_int(&p[9], ctx->cpu.cores, ctx->cpu.cores > 0);
    p_int(&p[10], ctx->cpu.threads, ctx->cpu.threads > 0);
    p_real(&p[11], ctx->memory_bytes > 0 ? ctx->memory_bytes : NAN);
    p_text(&p[12], ctx->governor);
    p_text(&p[13], ctx->compiler);
    p_text(&p[14], ctx->compiler_flags);
    p_text(&p[15], ctx->build_type);
    p_text(&p[16], ctx->harness_version);
    p_text(&p[17], ctx->program_hash);
    p_text(&p[18], ctx->program_libs);
    p_int(&p[19], ctx->quick, true);
    p_int(&p[20], (long long)ctx->seed, true);
    p_real(&p[21], ctx->confidence_level);
    p_text(&p[22], baseline);
    p_text(&p[23], run_key);
    p_text(&p[24], ctx->virtualization);
    const char *v[RUN_COLUMNS];
    for (int i = 0; i < RUN_COLUMNS; i++)
        v[i] = p[i].v;
    PGresult *r = PQexecParams(conn, insert_run_sql, RUN_COLUMNS, NULL, v, NULL, NULL, 0);
    int rc = PQresultStatus(r) == PGRES_TUPLES_OK ? 0 : -1;
    *merged = rc == 0 && PQntuples(r) == 0;
    if (rc == 0 && !*merged)
        *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    else if (rc != 0)
        bench__pg_error(conn, err, len);
    PQclear(r);
    if (rc == 0 && *merged && (rc = keyed_run(conn, run_key, id, err, len)) == 0 && *id == 0) {
        bench__msg(err, len, "the run of --run-id went away while this part was written");
        rc = -1;
    }
    return rc;
}

/* The first of the n results that run `run` already holds into *dup (n: none). */
static int find_dup(PGconn *conn, const char *run, const bench__result *results, size_t n,
                    size_t *dup, char *err, size_t len)
{
    *dup = n;
    for (size_t i = 0; i < n && *dup == n; i++) {
        const char *v[2] = {run, results[i].inst->id};
        PGresult *r = PQexecParams(conn, "SELECT 1 FROM " S "results WHERE run_id = $1 AND"
                                         " benchmark = $2", 2, NULL, v, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_TUPLES_OK) {
            bench__pg_error(conn, err, len);
            PQclear(r);
            return -1;
        }
        if (PQntuples(r) > 0)
            *dup = i;
        PQclear(r);
    }
    return 0;
}

#define RESULT_COLUMNS 15
static const char insert_result_sql[] =
    "INSERT INTO " S "results (run_id, benchmark, status, median_ns, lower_ns, upper_ns, samples,"
    " processes, process_cv, verdict, ratio, ratio_lower, ratio_upper, process_medians_ns,"
    " code_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)";

/* The per-process medians of r as an array's text, "{M0,M1,...}" (ns); NULL when it has none
 * (fewer than 2 processes, or not ok). The caller frees it. */
static char *process_medians(const bench__result *r, bool *oom)
{
    if (r->status != BENCH__OK || !r->process || r->processes < 2)
        return NULL;
    double *logs = malloc(r->processes * sizeof *logs);
    char *text = malloc(2 + (size_t)r->processes * 26);
    *oom = !logs || !text;
    if (*oom || bench__process_log_medians(r->iters, r->totals_ns, r->process, r->nsamples,
                                           r->processes, logs) != 0) {
        free(logs);
        free(text);
        return NULL;
    }
    size_t at = 0;
    text[at++] = '{';
    for (unsigned j = 0; j < r->processes; j++)
        at += (size_t)snprintf(text + at, 26, "%s%.17g", j ? "," : "", exp(logs[j]));
    text[at++] = '}';
    text[at] = '\0';
    free(logs);
    return text;
}

/* One result with its per-process medians. */
static int insert_result(PGconn *conn, const char *run, const bench__result *r, char *err,
                         size_t len)
{
    bool ok = r->status == BENCH__OK;
    param p[RESULT_COLUMNS] = {{{0}, NULL}};
    p_text(&p[0], run);
    p_text(&p[1], r->inst->id);
    p_text(&p[2], bench__status_name(r->status));
    p_real(&p[3], ok ? r->est.median.point : NAN);
    p_real(&p[4], ok ? r->est.median.lower : NAN);
    p_real(&p[5], ok ? r->est.median.upper : NAN);
    p_int(&p[6], (long long)r->nsamples, true);
    p_int(&p[7], (long long)r->processes, true);
    p_real(&p[8], ok ? r->process_cv : NAN);
    const bench__change *ch = r->change;
    if (ch) {
        p_text(&p[9], bench__verdict_name(ch->verdict));
        if (bench__verdict_has_numbers(ch->verdict)) {
            p_real(&p[10], ch->ratio);
            p_real(&p[11], ch->ratio_lower);
            p_real(&p[12], ch->ratio_upper);
        }
    }
    bool oom = false;
    char *pm = process_medians(r, &oom);
    p[13].v = pm;
    p_text(&p[14], r->code_hash);
    const char *v[RESULT_COLUMNS];
    for (int i = 0; i < RESULT_COLUMNS; i++)
        v[i] = p[i].v;
    int rc = oom ? -1 : exec1(conn, insert_result_sql, RESULT_COLUMNS, v, err, len);
    if (oom)
        bench__msg(err, len, "out of memory");
    free(pm);
    return rc;
}

/* The whole transaction of one run on conn: 0 committed; -1 not (err says why; *at_commit
 * when it was the commit that got no answer). */
static int write_run(PGconn *conn, const char *uuid, const bench__context *ctx,
                     const bench__result *results, size_t n, const char *baseline,
                     const char *run_key, long long *id, size_t *dup, bool *at_commit, char *err,
                     size_t len)
{
    char run[32];
    bool merged = false;
    *at_commit = false;
    *dup = n;
    int rc = exec1(conn, "BEGIN", 0, NULL, err, len);
    if (rc == 0)
        rc = insert_run(conn, uuid, ctx, baseline, run_key, id, &merged, err, len);
    bench__msg(run, sizeof run, "%lld", *id);
    if (rc == 0 && merged && (rc = find_dup(conn, run, results, n, dup, err, len)) == 0 &&
        *dup < n)
        rc = -1;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = insert_result(conn, run, &results[i], err, len);
    if (rc == 0 && bench__proc_interrupted()) {
        bench__msg(err, len, "interrupted by %s", bench__signal_name(bench__proc_interrupted()));
        rc = -1;
    }
    if (rc == 0) {
        rc = exec1(conn, "COMMIT", 0, NULL, err, len);
        *at_commit = rc != 0 && PQstatus(conn) != CONNECTION_OK;
    }
    if (rc != 0 && PQstatus(conn) == CONNECTION_OK) {
        char ignored[64];
        exec1(conn, "ROLLBACK", 0, NULL, ignored, sizeof ignored);
    }
    return rc;
}

/* After a commit that got no answer: whether the run of that uuid is in the history, on a new
 * connection (1 yes, 0 no, -1 cannot tell). */
static int find_run(bench__history *h, const char *uuid, long long *id)
{
    char ignored[1024];
    const char *v[1] = {uuid};
    PGresult *r = bench__pg_query(h, "SELECT id FROM " S "runs WHERE uuid = $1", 1, v, ignored,
                                  sizeof ignored);
    if (!r)
        return -1;
    int found = PQntuples(r) == 1;
    if (found)
        *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return found;
}

int bench__pg_append(bench__history *h, const bench__context *ctx, const bench__result *results,
                     size_t n, const char *baseline, const char *run_key, long long *run_id,
                     char *msg, size_t len)
{
    size_t dup = n;
    char uuid[37], err[1024], what[4400];
    if (new_uuid(uuid) != 0) {
        bench__msg(msg, len, "history '%s': the run was not recorded: no random uuid: %s",
                   h->name, strerror(errno));
        return BENCH_EIO;
    }
    bench__msg(what, sizeof what, "history '%s': the run was not recorded: ", h->name);
    bool at_commit = false;
    int rc = -1;
    /* A connection found lost before the commit (the server restarted while the run measured)
     * is made again once: the transaction had not begun, or the server rolled it back. */
    for (int attempt = 0; attempt < 2 && rc != 0 && !at_commit; attempt++) {
        PGconn *conn = bench__pg_conn(h, what, msg, len);
        if (!conn)
            return BENCH_EIO;
        rc = write_run(conn, uuid, ctx, results, n, baseline, run_key, run_id, &dup, &at_commit,
                       err, sizeof err);
        if (rc != 0 && (PQstatus(conn) == CONNECTION_OK || bench__proc_interrupted()))
            break;
    }
    if (rc == 0)
        return 0;
    if (dup < n) {
        bench__history_msg_part(h, msg, len, results[dup].inst->id, *run_id, run_key);
        return BENCH_EINVAL;
    }
    if (bench__proc_interrupted()) {
        bench__msg(msg, len, "%s%s", what, err);
        return BENCH_EUSAGE;
    }
    if (at_commit) {
        int found = find_run(h, uuid, run_id);
        if (found == 1)
            return 0; /* it committed: the answer alone was lost */
        bench__msg(msg, len, found == 0 ? "%s%s" : "history '%s': it cannot be told whether the "
                                                   "run was recorded (the connection was lost "
                                                   "as it committed: %s); its uuid is %s",
                   found == 0 ? what : h->name, err, uuid);
        return BENCH_EIO;
    }
    bench__msg(msg, len, "%s%s", what, err);
    return BENCH_EIO;
}

/* ---- a copied run written ---- */

/* The process medians of x as an array's text, "{a,b}"; NULL when none (the caller frees). */
static char *array_text(const bench__hcopy_result *x, bool *oom)
{
    if (x->npm == 0)
        return NULL;
    size_t n = 3;
    for (size_t j = 0; j < x->npm; j++)
        n += strlen(x->pm[j] ? x->pm[j] : "NULL") + 1;
    char *t = malloc(n);
    if (!(*oom = !t)) {
        size_t at = 0;
        t[at++] = '{';
        for (size_t j = 0; j < x->npm; j++)
            at += (size_t)snprintf(t + at, n - at, "%s%s", j ? "," : "",
                                   x->pm[j] ? x->pm[j] : "NULL");
        bench__msg(t + at, n - at, "}");
    }
    return t;
}

/* Inserts run and its results on conn (in the caller's transaction). */
static int copy_insert(PGconn *conn, const bench__hcopy_run *run, char *err, size_t len)
{
    char uuid[37];
    const char *v[1 + BENCH__HCOPY_RUN_COLUMNS];
    if (new_uuid(uuid) != 0) {
        bench__msg(err, len, "no random uuid: %s", strerror(errno));
        return -1;
    }
    v[0] = uuid;
    for (int c = 0; c < BENCH__HCOPY_RUN_COLUMNS; c++)
        v[1 + c] = run->col[c];
    int rc = exec1(conn, "INSERT INTO " S "runs (uuid, " BENCH__HCOPY_RUN_SQL ") VALUES ($1, $2,"
                         " $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
                         " $18, $19, $20, $21, $22, $23, $24, $25)",
                   1 + BENCH__HCOPY_RUN_COLUMNS, v, err, len);
    for (size_t i = 0; rc == 0 && i < run->n; i++) {
        const bench__hcopy_result *x = &run->r[i];
        const char *w[2 + BENCH__HCOPY_RESULT_COLUMNS];
        bool oom = false;
        char *pm = array_text(x, &oom);
        w[0] = run->col[0];
        for (int c = 0; c < BENCH__HCOPY_RESULT_COLUMNS; c++)
            w[1 + c] = x->col[c];
        w[1 + BENCH__HCOPY_RESULT_COLUMNS] = pm;
        rc = oom ? -1 : exec1(conn, "INSERT INTO " S "results (run_id, " BENCH__HCOPY_RESULT_SQL
                                    ", process_medians_ns) VALUES ($1, $2, $3, $4, $5, $6, $7,"
                                    " $8, $9, $10, $11, $12, $13, $14, $15)",
                              2 + BENCH__HCOPY_RESULT_COLUMNS, w, err, len);
        if (oom)
            bench__msg(err, len, "out of memory");
        free(pm);
    }
    /* Runs recorded later continue after the ids copied. */
    if (rc == 0)
        rc = exec1(conn, "SELECT setval(pg_get_serial_sequence('" S "runs', 'id'), (SELECT"
                         " max(id) FROM " S "runs))", 0, NULL, err, len);
    return rc;
}

int bench__pg_copy_write(bench__history *h, const bench__hcopy_run *run, bool *same, char *msg,
                         size_t len)
{
    char err[1024], what[4400];
    *same = false;
    bench__msg(what, sizeof what, "history '%s': run %s was not copied: ", h->name, run->col[0]);
    PGconn *conn = bench__pg_conn(h, what, msg, len);
    if (!conn)
        return BENCH_EIO;
    const char *v[3] = {run->col[0], run->col[1], run->col[17]};
    int rc = exec1(conn, "BEGIN", 0, NULL, err, sizeof err);
    PGresult *r = rc == 0 ? PQexecParams(conn, "SELECT time IS NOT DISTINCT FROM $2 AND"
                                               " program_hash IS NOT DISTINCT FROM $3 FROM " S
                                               "runs WHERE id = $1", 3, NULL, v, NULL, NULL, 0)
                          : NULL;
    bool there = false;
    if (rc == 0 && PQresultStatus(r) != PGRES_TUPLES_OK) {
        bench__pg_error(conn, err, sizeof err);
        rc = -1;
    } else if (rc == 0) {
        there = PQntuples(r) == 1;
        *same = there && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    }
    PQclear(r);
    if (rc == 0 && there && !*same) {
        exec1(conn, "ROLLBACK", 0, NULL, err, sizeof err);
        bench__msg(msg, len, "history '%s' holds another run %s (another time or program): it "
                             "is not a copy of the history copied from (left as it is)", h->name,
                   run->col[0]);
        return BENCH_EINVAL;
    }
    if (rc == 0 && !there)
        rc = copy_insert(conn, run, err, sizeof err);
    if (rc == 0)
        rc = exec1(conn, "COMMIT", 0, NULL, err, sizeof err);
    if (rc != 0) {
        char ignored[64];
        if (PQstatus(conn) == CONNECTION_OK)
            exec1(conn, "ROLLBACK", 0, NULL, ignored, sizeof ignored);
        bench__msg(msg, len, "%s%s", what, err);
        return BENCH_EIO;
    }
    return 0;
}
