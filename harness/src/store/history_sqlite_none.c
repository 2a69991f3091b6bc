/*
 * history_sqlite_none.c: the SQLite store of a build without SQLite (libsqlite3 was not found,
 * or -DHARNESS_SQLITE=OFF): a history file is refused with the reason, and --history FILE,
 * --history-show FILE and --history-gate exit 2 (a PostgreSQL history still works).
 */
#include "store/history_store.h"

int bench__history_sqlite_open(bench__history *h, const char *path, bool create, char *msg,
                               size_t len)
{
    (void)h;
    (void)path;
    (void)create;
    bench__msg(msg, len, "%s", "this program was built without SQLite (libsqlite3-dev), so it "
                               "keeps no run history in a file");
    return BENCH_EUNAVAIL;
}
