/*
 * history_pg.h: what the files of the PostgreSQL store share (history_pg.c connects, checks,
 * migrates and appends; history_pg_read.c reads, keeps programs and holds the store's table and
 * handle, so that calls go one way): the connection and its
 * errors, the schema's name, and the operations the store's table (history_store.h) names.
 */
#ifndef HARNESS_HISTORY_PG_H
#define HARNESS_HISTORY_PG_H

#include <libpq-fe.h>

#include "store/history_store.h"

/* ---- history_pg_lib.c: libpq, loaded when a PostgreSQL history is first opened ---- */

/* The libpq functions the store calls, each as X(name). */
#define BENCH__LIBPQ_FUNCTIONS(X) \
    X(PQclear) \
    X(PQcmdTuples) \
    X(PQconnectdbParams) \
    X(PQdb) \
    X(PQerrorMessage) \
    X(PQexec) \
    X(PQexecParams) \
    X(PQfinish) \
    X(PQgetisnull) \
    X(PQgetlength) \
    X(PQgetvalue) \
    X(PQhost) \
    X(PQntuples) \
    X(PQport) \
    X(PQresultStatus) \
    X(PQsocket) \
    X(PQstatus) \
    X(PQuser)

/** libpq's functions, each a pointer of its own type, filled by bench__libpq_load. */
typedef struct bench__libpq {
#define BENCH__PQ_FIELD(name) __typeof__(&name) name;
    BENCH__LIBPQ_FUNCTIONS(BENCH__PQ_FIELD)
#undef BENCH__PQ_FIELD
} bench__libpq;
extern bench__libpq bench__pq;

/** Loads libpq (libpq.so.5) once per process; 0, or BENCH_EUNAVAIL with one line in msg
 * naming the library, its package and what failed (then on every later call too). */
int bench__libpq_load(char *msg, size_t len);

/* The store's calls of libpq go through the table (every file but the one that fills it). */
#ifndef BENCH__LIBPQ_TABLE
#define PQclear (*bench__pq.PQclear)
#define PQcmdTuples (*bench__pq.PQcmdTuples)
#define PQconnectdbParams (*bench__pq.PQconnectdbParams)
#define PQdb (*bench__pq.PQdb)
#define PQerrorMessage (*bench__pq.PQerrorMessage)
#define PQexec (*bench__pq.PQexec)
#define PQexecParams (*bench__pq.PQexecParams)
#define PQfinish (*bench__pq.PQfinish)
#define PQgetisnull (*bench__pq.PQgetisnull)
#define PQgetlength (*bench__pq.PQgetlength)
#define PQgetvalue (*bench__pq.PQgetvalue)
#define PQhost (*bench__pq.PQhost)
#define PQntuples (*bench__pq.PQntuples)
#define PQport (*bench__pq.PQport)
#define PQresultStatus (*bench__pq.PQresultStatus)
#define PQsocket (*bench__pq.PQsocket)
#define PQstatus (*bench__pq.PQstatus)
#define PQuser (*bench__pq.PQuser)
#endif

/** The PostgreSQL schema that holds the harness's tables (docs/results-format.md). */
#define BENCH__PG_SCHEMA "bench_history"
/** The version of that schema this program writes and reads (bench_history.meta). */
#define BENCH__PG_SCHEMA_VERSION 3

/** The store's state: the connection, and how to make it again. */
typedef struct bench__pg {
    PGconn *conn;
    char *url; /* as given (it may hold a password: never printed) */
} bench__pg;

/** Connects to url and sets the session up (h->name then names it: never a password); NULL
 * with the reason alone in msg. */
PGconn *bench__pg_connect(bench__history *h, const char *url, char *msg, size_t len);
/** Checks the schema of a new connection: with create, makes it or migrates it forward; a
 * newer, altered or hostile one is refused. 0, or a negative error code with one line in msg. */
int bench__pg_check_schema(bench__history *h, PGconn *conn, bool create, char *msg,
                           size_t len);
/** Appends a run in one transaction (history_store.h's append). */
int bench__pg_append(bench__history *h, const bench__context *ctx, const bench__result *results,
                     size_t n, const char *baseline, const char *run_key, long long *run_id,
                     char *msg, size_t len);
/** The connection of h, made again when it was lost; NULL (with the reason in msg, after
 * `what`) when it cannot be. */
PGconn *bench__pg_conn(bench__history *h, const char *what, char *msg, size_t len);
/** The first line of the connection's last error, with its spaces trimmed, into buf. */
const char *bench__pg_error(PGconn *conn, char *buf, size_t len);
/** A query's result, or NULL with the message "history 'NAME' cannot be read: ERROR" in msg;
 * params (n of them, text) may be NULL. */
PGresult *bench__pg_query(bench__history *h, const char *sql, int n, const char *const *params,
                          char *msg, size_t len);

int bench__pg_ids(bench__history *h, char ***ids, size_t *n, char *msg, size_t len);
int bench__pg_runs(bench__history *h, bench__hrun **rows, size_t *n, char *msg, size_t len);
int bench__pg_series(bench__history *h, const char *id, long long upto, bench__hpoint **pts,
                     size_t *n, char *msg, size_t len);
int bench__pg_run_ok(bench__history *h, long long run, char ***ids, bench__hval **medians,
                     size_t *n, char *msg, size_t len);
int bench__pg_last(bench__history *h, const char *id, const char *const *machine,
                   long long *run, char **revision, char **program, bench__hval **medians,
                   size_t *n, char *msg, size_t len);
int bench__pg_program(bench__history *h, long long run, char **hash, char **mac, char *msg,
                      size_t len);
int bench__pg_keep_program(bench__history *h, const bench__context *ctx, size_t keep,
                           double timeout_s, char *msg, size_t len);
void bench__pg_programs_dir(const bench__history *h, char *dir, size_t len);
int bench__pg_program_copy(bench__history *h, const char *hash, unsigned char **bytes, size_t *n,
                           char *msg, size_t len);
int bench__pg_run_ids(bench__history *h, long long **ids, size_t *n, char *msg, size_t len);
int bench__pg_copy_read(bench__history *h, long long id, bench__hcopy_run *out, char *msg,
                        size_t len);
/** Writes a copied run (history_store.h's copy_write), with a new uuid. */
int bench__pg_copy_write(bench__history *h, const bench__hcopy_run *run, bool *same, char *msg,
                         size_t len);

#endif /* HARNESS_HISTORY_PG_H */
