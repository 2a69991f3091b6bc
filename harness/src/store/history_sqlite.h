/*
 * history_sqlite.h: what the two files of the SQLite store share (history_sqlite.c opens,
 * checks and appends; history_sqlite_read.c reads and holds the store's table, so that calls go
 * one way): the checked connection and its errors, and
 * the operations the store's table (history_store.h) names.
 */
#ifndef HARNESS_HISTORY_SQLITE_H
#define HARNESS_HISTORY_SQLITE_H

#include <sqlite3.h>

#include "store/history_store.h"

/* The programs kept beside the history (FILE.programs/HEX.program), each with this user's
 * signature of its hash: added to schema 1 later, so an older file gets it when a program is
 * first kept in it, and a reader treats its absence as "none kept". */
#define PROGRAMS_SQL                                                                               \
    "CREATE TABLE IF NOT EXISTS programs (hash TEXT PRIMARY KEY, mac TEXT NOT NULL,"              \
    " kept TEXT NOT NULL);"

/** Whether path is a file this program may open as a history (the reads before SQLite sees it);
 * a negative error code with one line when not. *exists says whether there is anything there. */
int bench__sqlite_check_file(const char *path, bool *exists, char *msg, size_t len);
/** Appends a run in one transaction (history_store.h's append); makes the file when absent. */
int bench__sqlite_append(bench__history *h, const bench__context *ctx,
                         const bench__result *results, size_t n, const char *baseline,
                         const char *run_key, long long *run_id, char *msg, size_t len);
/** Opens the history at path, checked (created first when absent and `create`), bounded in
 * what it may do and how long; 0, or a negative error code with one line in msg. */
int bench__sqlite_open_db(const char *path, bool create, sqlite3 **out, char *msg, size_t len);
/** The message of a statement that failed with code rc: a stop by a signal or the time limit
 * says why. */
const char *bench__sqlite_work_error(sqlite3 *db, int rc);
/** The integer a one-row query gives (a count), or -1 when it cannot be read. */
int bench__sqlite_count_of(sqlite3 *db, const char *sql);

int bench__sqlite_ids(bench__history *h, char ***ids, size_t *n, char *msg, size_t len);
int bench__sqlite_runs(bench__history *h, bench__hrun **rows, size_t *n, char *msg, size_t len);
int bench__sqlite_series(bench__history *h, const char *id, long long upto, bench__hpoint **pts,
                         size_t *n, char *msg, size_t len);
int bench__sqlite_run_ok(bench__history *h, long long run, char ***ids, bench__hval **medians,
                         size_t *n, char *msg, size_t len);
int bench__sqlite_last(bench__history *h, const char *id, const char *const *machine,
                       long long *run, char **revision, char **program, bench__hval **medians,
                       size_t *n, char *msg, size_t len);
int bench__sqlite_program(bench__history *h, long long run, char **hash, char **mac, char *msg,
                          size_t len);
int bench__sqlite_keep_program(bench__history *h, const bench__context *ctx, size_t keep,
                               double timeout_s, char *msg, size_t len);
void bench__sqlite_programs_dir(const bench__history *h, char *dir, size_t len);
int bench__sqlite_run_ids(bench__history *h, long long **ids, size_t *n, char *msg, size_t len);
int bench__sqlite_copy_read(bench__history *h, long long id, bench__hcopy_run *out, char *msg,
                            size_t len);
/** Writes a copied run (history_store.h's copy_write); makes the file when absent. */
int bench__sqlite_copy_write(bench__history *h, const bench__hcopy_run *run, bool *same,
                             char *msg, size_t len);

#endif /* HARNESS_HISTORY_SQLITE_H */
