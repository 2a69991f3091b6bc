/*
 * history_pg_none.c: the PostgreSQL store of a build without libpq (libpq-dev was not found,
 * or -DHARNESS_POSTGRESQL=OFF): a "postgresql://" history is refused with the reason, exit 2.
 */
#include "store/history_store.h"

int bench__history_pg_open(bench__history *h, const char *url, bool create, char *msg,
                           size_t len)
{
    (void)h;
    (void)url;
    (void)create;
    bench__msg(msg, len, "%s", "this program was built without libpq (libpq-dev), so it keeps "
                               "no run history in PostgreSQL");
    return BENCH_EUNAVAIL;
}
