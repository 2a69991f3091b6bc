/*
 * history_pg_lib.c: libpq, PostgreSQL's client library, loaded when a history is first opened on
 * a PostgreSQL URL (history_pg.h), not linked into the program.
 *
 * Why. libpq brings about twenty shared libraries with it (OpenSSL, Kerberos, LDAP, SASL,
 * GnuTLS, ...). Linked, every start of the program loads them, and the harness starts the
 * program many times in a run: a worker process per benchmark and process, two per A/B pair.
 * Measured on the development VM: an empty program linked with libpq started in 44-53 ms under
 * load against 8-10 ms without it. Loaded here, only the process that opens a PostgreSQL history
 * pays, once; a SQLite history, or none, never does.
 *
 * How. dlopen of the library by its soname (libpq.so.5, the one the headers of the build
 * describe), then each function the store calls by name into bench__pq; history_pg.h turns the
 * store's PQ... calls into calls through that table. A library that cannot be loaded, or that
 * lacks one of the functions, is one line naming it and the package, and the history is refused
 * like a server that refuses the connection.
 */
#define BENCH__LIBPQ_TABLE /* this file fills the table: no call is turned into it here */
#include "store/history_pg.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>

#include "core/base.h"

/** The soname of the libpq whose headers the build used (major version 5 since PostgreSQL 8.2). */
#define LIBPQ_SONAME "libpq.so.5"

bench__libpq bench__pq;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool loaded;
static char failure[512]; /* why the first load failed; "" before it is tried */

/* Fills bench__pq from handle; 0, or -1 with the missing function in failure. */
static int resolve(void *handle)
{
#define BENCH__PQ_RESOLVE(name)                                                                   \
    if (!(*(void **)&bench__pq.name = dlsym(handle, #name))) {                                   \
        bench__msg(failure, sizeof failure,                                                     \
                   "%s has no function %s (not PostgreSQL's libpq, or too old)", LIBPQ_SONAME,  \
                   #name);                                                                       \
        return -1;                                                                               \
    }
    BENCH__LIBPQ_FUNCTIONS(BENCH__PQ_RESOLVE)
#undef BENCH__PQ_RESOLVE
    return 0;
}

int bench__libpq_load(char *msg, size_t len)
{
    pthread_mutex_lock(&lock);
    if (!loaded && !failure[0]) {
        void *handle = dlopen(LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char *e = dlerror();
            bench__msg(failure, sizeof failure,
                       "PostgreSQL's client library %s cannot be loaded (Debian package libpq5): "
                       "%s", LIBPQ_SONAME, e ? e : "not found");
        } else if (resolve(handle) != 0) {
            dlclose(handle);
        } else {
            loaded = true;
        }
    }
    bool ok = loaded;
    if (!ok)
        bench__msg(msg, len, "%s", failure);
    pthread_mutex_unlock(&lock);
    return ok ? 0 : BENCH_EUNAVAIL;
}
