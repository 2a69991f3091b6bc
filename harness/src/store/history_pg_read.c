/*
 * history_pg_read.c: the rows the run history's readers ask a PostgreSQL database for
 * (history_store.h), in the same order the SQLite store gives them (ids in byte order: COLLATE
 * "C", whatever the database's collation), and the programs kept for --history-confirm.
 *
 * The programs this machine ran are copied into this user's cache
 * (CACHE/harness/history-programs/KEY, KEY a hash of the server and database), each with this
 * user's signature of its hash beside it (HEX.mac), the newest --history-programs kept; and into
 * the database's programs table, once per hash (up to BENCH__HISTORY_PROGRAM_MAX bytes), the
 * newest --history-programs kept there too, so that another machine can confirm a step. Whoever
 * may write a shared database could put a program of theirs there: a confirmation runs the
 * database's copy only when this user's signature of its hash verifies (a run on this machine
 * recorded it) or --history-trust-programs says so (history_confirm.c), and only after its
 * SHA-256 is checked (history.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sha256.h"
#include "store/history_pg.h"
#include "store/store.h"
#include "sys/clock.h"

#define S BENCH__PG_SCHEMA "."

/* Field (i, j) as a string of its own (NULL when NULL); *oom when the copy failed. */
static char *text_of(const PGresult *r, int i, int j, bool *oom)
{
    if (PQgetisnull(r, i, j))
        return NULL;
    char *d = strdup(PQgetvalue(r, i, j));
    *oom |= !d;
    return d;
}

/* Field (i, j), a double precision column, as a median to check. */
static bench__hval value_of(const PGresult *r, int i, int j)
{
    bench__hval v = {BENCH__HV_NULL, 0, ""};
    if (PQgetisnull(r, i, j))
        return v;
    const char *s = PQgetvalue(r, i, j);
    char *end;
    v.x = strtod(s, &end);
    v.type = *s && !*end ? BENCH__HV_NUMBER : BENCH__HV_TEXT;
    bench__msg(v.raw, sizeof v.raw, "%s", s);
    return v;
}

static long long int_of(const PGresult *r, int i, int j)
{
    return strtoll(PQgetvalue(r, i, j), NULL, 10);
}

/* The end of a reading that ran out of memory copying its rows. */
static int oom_end(bench__history *h, PGresult *r, bool oom, char *msg, size_t len)
{
    PQclear(r);
    if (!oom)
        return 0;
    bench__msg(msg, len, "history '%s' cannot be read: out of memory", h->name);
    return BENCH_ENOMEM;
}

int bench__pg_ids(bench__history *h, char ***ids, size_t *n, char *msg, size_t len)
{
    *ids = NULL;
    *n = 0;
    PGresult *r = bench__pg_query(h, "SELECT b FROM (SELECT DISTINCT benchmark AS b FROM " S
                                     "results) s ORDER BY b COLLATE \"C\"", 0, NULL, msg, len);
    if (!r)
        return BENCH_EIO;
    int rows = PQntuples(r);
    bool oom = !(*ids = calloc(rows ? (size_t)rows : 1, sizeof **ids));
    for (int i = 0; i < rows && !oom; i++) {
        char *s = text_of(r, i, 0, &oom);
        if (!((*ids)[i] = s ? s : strdup("")))
            oom = true;
        else
            (*n)++;
    }
    return oom_end(h, r, oom, msg, len);
}

int bench__pg_runs(bench__history *h, bench__hrun **rows, size_t *n, char *msg, size_t len)
{
    *rows = NULL;
    *n = 0;
    PGresult *r = bench__pg_query(h,
        "SELECT id, time, coalesce(git_revision, cwd_git_revision), git_dirty, hostname,"
        " (SELECT count(*) FROM " S "results x WHERE x.run_id = u.id), baseline, program_hash"
        " FROM " S "runs u ORDER BY id", 0, NULL, msg, len);
    if (!r)
        return BENCH_EIO;
    int k = PQntuples(r);
    bool oom = !(*rows = calloc(k ? (size_t)k : 1, sizeof **rows));
    for (int i = 0; i < k && !oom; i++) {
        (*rows)[i] = (bench__hrun){
            .id = int_of(r, i, 0),
            .time = text_of(r, i, 1, &oom),
            .revision = text_of(r, i, 2, &oom),
            .dirty = PQgetisnull(r, i, 3) ? -1 : int_of(r, i, 3) != 0,
            .host = text_of(r, i, 4, &oom),
            .benchmarks = int_of(r, i, 5),
            .baseline = text_of(r, i, 6, &oom),
            .program = text_of(r, i, 7, &oom),
        };
        (*n)++;
    }
    return oom_end(h, r, oom, msg, len);
}

int bench__pg_series(bench__history *h, const char *id, long long upto, bench__hpoint **pts,
                     size_t *n, char *msg, size_t len)
{
    *pts = NULL;
    *n = 0;
    char u[32];
    bench__msg(u, sizeof u, "%lld", upto);
    const char *v[2] = {id, u};
    PGresult *r = bench__pg_query(h,
        "SELECT r.id, coalesce(r.git_revision, r.cwd_git_revision), x.median_ns, r.program_hash,"
        " r.cpu_brand, r.cores, r.threads, CAST(r.memory_bytes AS bigint), r.virtualization,"
        " r.kernel, r.governor,"
        " r.compiler, r.compiler_flags, x.code_hash"
        " FROM " S "results x JOIN " S "runs r ON r.id = x.run_id WHERE x.benchmark = $1"
        " AND x.status = 'ok' AND ($2::bigint <= 0 OR r.id <= $2::bigint) ORDER BY r.id",
        2, v, msg, len);
    if (!r)
        return BENCH_EIO;
    int k = PQntuples(r);
    bool oom = !(*pts = calloc(k ? (size_t)k : 1, sizeof **pts));
    for (int i = 0; i < k && !oom; i++) {
        (*pts)[i] = (bench__hpoint){int_of(r, i, 0), text_of(r, i, 1, &oom),
                                    text_of(r, i, 3, &oom), value_of(r, i, 2), {NULL}};
        for (int f = 0; f < BENCH__HFACTS; f++)
            (*pts)[i].facts[f] = text_of(r, i, 4 + f, &oom);
        (*n)++;
    }
    return oom_end(h, r, oom, msg, len);
}

int bench__pg_run_ok(bench__history *h, long long run, char ***ids, bench__hval **medians,
                     size_t *n, char *msg, size_t len)
{
    *ids = NULL;
    *medians = NULL;
    *n = 0;
    char u[32];
    bench__msg(u, sizeof u, "%lld", run);
    const char *v[1] = {u};
    PGresult *r = bench__pg_query(h, "SELECT benchmark, median_ns FROM " S "results WHERE"
                                     " run_id = $1 AND status = 'ok' ORDER BY benchmark"
                                     " COLLATE \"C\"", 1, v, msg, len);
    if (!r)
        return BENCH_EIO;
    int k = PQntuples(r);
    bool oom = !(*ids = calloc(k ? (size_t)k : 1, sizeof **ids)) ||
               !(*medians = calloc(k ? (size_t)k : 1, sizeof **medians));
    for (int i = 0; i < k && !oom; i++) {
        char *s = text_of(r, i, 0, &oom);
        if (!((*ids)[i] = s ? s : strdup(""))) {
            oom = true;
            break;
        }
        (*medians)[i] = value_of(r, i, 1);
        (*n)++;
    }
    return oom_end(h, r, oom, msg, len);
}

int bench__pg_last(bench__history *h, const char *id, const char *const *machine,
                   long long *run, char **revision, char **program, bench__hval **medians,
                   size_t *n, char *msg, size_t len)
{
    *run = 0;
    *revision = *program = NULL;
    *medians = NULL;
    *n = 0;
    const char *v[6] = {id, machine[BENCH__HF_CPU], machine[BENCH__HF_CORES],
                        machine[BENCH__HF_THREADS], machine[BENCH__HF_MEMORY],
                        machine[BENCH__HF_VIRT]};
    PGresult *r = bench__pg_query(h,
        "SELECT r.id, coalesce(r.git_revision, r.cwd_git_revision), r.program_hash"
        " FROM " S "results x JOIN " S "runs r ON r.id = x.run_id WHERE x.benchmark = $1"
        " AND x.status = 'ok' AND x.processes >= 2"
        " AND ($2::text IS NULL OR r.cpu_brand IS NULL OR r.cpu_brand = $2::text)"
        " AND ($3::integer IS NULL OR r.cores IS NULL OR r.cores = $3::integer)"
        " AND ($4::integer IS NULL OR r.threads IS NULL OR r.threads = $4::integer)"
        " AND ($5::bigint IS NULL OR r.memory_bytes IS NULL"
        "      OR CAST(r.memory_bytes AS bigint) = $5::bigint)"
        " AND ($6::text IS NULL OR r.virtualization IS NULL OR r.virtualization = $6::text)"
        " ORDER BY r.id DESC LIMIT 1", 6, v, msg, len);
    if (!r)
        return BENCH_EIO;
    bool oom = false;
    char u[32] = "";
    if (PQntuples(r) == 1) {
        *run = int_of(r, 0, 0);
        *revision = text_of(r, 0, 1, &oom);
        *program = text_of(r, 0, 2, &oom);
        bench__msg(u, sizeof u, "%s", PQgetvalue(r, 0, 0));
    }
    PQclear(r);
    if (*run <= 0 || oom)
        return oom_end(h, NULL, oom, msg, len);
    v[1] = u;
    r = bench__pg_query(h, "SELECT u.m FROM " S "results x, unnest(x.process_medians_ns)"
                           " WITH ORDINALITY AS u(m, i) WHERE x.benchmark = $1 AND x.run_id = $2"
                           " ORDER BY u.i", 2, v, msg, len);
    if (!r)
        return BENCH_EIO;
    int k = PQntuples(r);
    oom = !(*medians = calloc(k ? (size_t)k : 1, sizeof **medians));
    for (int i = 0; i < k && !oom; i++)
        (*medians)[(*n)++] = value_of(r, i, 0);
    return oom_end(h, r, oom, msg, len);
}

/* ---- a history copied between stores ---- */

int bench__pg_run_ids(bench__history *h, long long **ids, size_t *n, char *msg, size_t len)
{
    *ids = NULL;
    *n = 0;
    PGresult *r = bench__pg_query(h, "SELECT id FROM " S "runs ORDER BY id", 0, NULL, msg, len);
    if (!r)
        return BENCH_EIO;
    int k = PQntuples(r);
    bool oom = !(*ids = calloc(k ? (size_t)k : 1, sizeof **ids));
    for (int i = 0; i < k && !oom; i++)
        (*ids)[(*n)++] = int_of(r, i, 0);
    return oom_end(h, r, oom, msg, len);
}

/* The process medians of array text "{a,b,...}" (as PostgreSQL prints a double precision[])
 * into x. */
static bool split_array(const char *s, bench__hcopy_result *x)
{
    if (*s++ != '{')
        return true;
    size_t cap = 0;
    while (*s && *s != '}') {
        size_t l = strcspn(s, ",}");
        if (x->npm == cap) {
            char **g = realloc(x->pm, (cap = cap ? 2 * cap : 16) * sizeof *g);
            if (!g)
                return false;
            x->pm = g;
        }
        if (!(x->pm[x->npm] = strndup(s, l)))
            return false;
        x->npm++;
        s += l + (s[l] == ',');
    }
    return true;
}

int bench__pg_copy_read(bench__history *h, long long id, bench__hcopy_run *out, char *msg,
                        size_t len)
{
    char u[32];
    memset(out, 0, sizeof *out);
    bench__msg(u, sizeof u, "%lld", id);
    const char *v[1] = {u};
    PGresult *r = bench__pg_query(h, "SELECT " BENCH__HCOPY_RUN_SQL " FROM " S "runs WHERE"
                                     " id = $1", 1, v, msg, len);
    if (!r)
        return BENCH_EIO;
    bool oom = false;
    for (int c = 0; c < BENCH__HCOPY_RUN_COLUMNS && PQntuples(r) == 1; c++)
        out->col[c] = text_of(r, 0, c, &oom);
    PQclear(r);
    r = oom ? NULL : bench__pg_query(h, "SELECT " BENCH__HCOPY_RESULT_SQL ", process_medians_ns"
                                        " FROM " S "results WHERE run_id = $1 ORDER BY"
                                        " benchmark COLLATE \"C\"", 1, v, msg, len);
    if (!r && !oom)
        return BENCH_EIO;
    int k = r ? PQntuples(r) : 0;
    oom = oom || !(out->r = calloc(k ? (size_t)k : 1, sizeof *out->r));
    for (int i = 0; i < k && !oom; i++) {
        bench__hcopy_result *x = &out->r[out->n++];
        for (int c = 0; c < BENCH__HCOPY_RESULT_COLUMNS; c++)
            x->col[c] = text_of(r, i, c, &oom);
        if (!PQgetisnull(r, i, BENCH__HCOPY_RESULT_COLUMNS))
            oom = oom || !split_array(PQgetvalue(r, i, BENCH__HCOPY_RESULT_COLUMNS), x);
    }
    return oom_end(h, r, oom, msg, len);
}

/* ---- the programs kept in this user's cache ---- */

void bench__pg_programs_dir(const bench__history *h, char *dir, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    unsigned char d[BENCH__SHA256_BYTES];
    char hex[2 * BENCH__SHA256_BYTES + 1];
    bench__sha256(h->name, strlen(h->name), d);
    bench__hex(d, sizeof d, hex);
    if (xdg && xdg[0] == '/')
        bench__msg(dir, len, "%s/harness/history-programs/%.16s", xdg, hex);
    else
        bench__msg(dir, len, "%s/.cache/harness/history-programs/%.16s",
                   home && *home ? home : "/nonexistent", hex);
}

/* A program kept: its hash's file name stem and when its signature was written. */
typedef struct kept {
    char stem[80];
    struct timespec when;
} kept;

static int newest_first(const void *a, const void *b)
{
    const kept *x = a, *y = b;
    if (x->when.tv_sec != y->when.tv_sec)
        return x->when.tv_sec < y->when.tv_sec ? 1 : -1;
    if (x->when.tv_nsec != y->when.tv_nsec)
        return x->when.tv_nsec < y->when.tv_nsec ? 1 : -1;
    return strcmp(x->stem, y->stem);
}

/* Removes the programs of the folder open as dfd past the newest `keep` (by their signature's
 * time). */
static void prune(int dfd, size_t keep)
{
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    kept *k = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        struct stat st;
        if (l != 68 || strcmp(e->d_name + 64, ".mac") != 0 ||
            fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (n == cap) {
            kept *g = realloc(k, (cap = cap ? 2 * cap : 16) * sizeof *k);
            if (!g)
                break;
            k = g;
        }
        bench__msg(k[n].stem, sizeof k[n].stem, "%.64s", e->d_name);
        k[n++].when = st.st_mtim;
    }
    closedir(d);
    qsort(k, n, sizeof *k, newest_first);
    for (size_t i = keep; i < n; i++) {
        char file[96];
        bench__msg(file, sizeof file, "%s.program", k[i].stem);
        unlinkat(dfd, file, 0);
        bench__msg(file, sizeof file, "%s.mac", k[i].stem);
        unlinkat(dfd, file, 0);
    }
    free(k);
}

/* Writes the signature mac of program stem into the folder open as dfd (replacing it). */
static int write_mac(int dfd, const char *stem, const char *mac, char *why, size_t len)
{
    char tmp[96], file[96];
    bench__msg(tmp, sizeof tmp, "%s.mac.new-%ld", stem, (long)getpid());
    bench__msg(file, sizeof file, "%s.mac", stem);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    size_t n = strlen(mac);
    bool ok = fd >= 0 && write(fd, mac, n) == (ssize_t)n;
    int err = errno;
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    if (ok && renameat(dfd, tmp, dfd, file) == 0)
        return 0;
    err = ok ? errno : err;
    unlinkat(dfd, tmp, 0);
    bench__msg(why, len, "cannot write %s: %s", file, strerror(err));
    return BENCH_EIO;
}

/* Runs one statement on h's connection with text parameters but `binary` (index, or -1) given
 * as bytes of length blen; 0 (with the rows it changed in *changed, when not NULL), or
 * BENCH_EIO with the error in why. */
static int write1(bench__history *h, const char *sql, int n, const char *const *params,
                  int binary, int blen, long long *changed, char *why, size_t len)
{
    PGconn *conn = bench__pg_conn(h, "", why, len);
    if (!conn)
        return BENCH_EIO;
    int lengths[4] = {0}, formats[4] = {0};
    if (binary >= 0) {
        lengths[binary] = blen;
        formats[binary] = 1;
    }
    PGresult *r = PQexecParams(conn, sql, n, NULL, params, lengths, formats, 0);
    ExecStatusType st = PQresultStatus(r);
    if (changed)
        *changed = atoll(PQcmdTuples(r));
    PQclear(r);
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        return 0;
    char err[512];
    bench__msg(why, len, "%s", bench__pg_error(conn, err, sizeof err));
    return BENCH_EIO;
}

/* Stores the running program in the database unless its hash is there (then marks it used),
 * read from the sealed, checked copy of the file kept in the folder `pinned`; then removes the
 * programs past the newest `keep`. 0, BENCH_EUNAVAIL for a program too large to store, or
 * another error; why says so. */
static int store_program(bench__history *h, const char *pinned, const bench__context *ctx,
                         size_t keep, double timeout_s, char *why, size_t len)
{
    const char *hash = ctx->program_hash;
    if (keep > 0 && ctx->program_bytes > BENCH__HISTORY_PROGRAM_MAX) {
        bench__msg(why, len, "the program (%.0f bytes) is larger than the %.0f MiB stored in the "
                             "database: it is kept on this machine only", ctx->program_bytes,
                   BENCH__HISTORY_PROGRAM_MAX / (1024 * 1024));
        return BENCH_EUNAVAIL;
    }
    const char *p1[1] = {hash};
    long long there = 0;
    int rc = keep == 0 ? 0 /* none stored: the earlier ones go below */
                       : write1(h, "UPDATE " S "programs SET kept = now() WHERE hash = $1", 1,
                                p1, -1, 0, &there, why, len);
    if (rc == 0 && keep > 0 && there == 0) {
        char file[96];
        int fd = -1;
        bench__msg(file, sizeof file, "%s.program", hash + 7);
        rc = bench__snapshot_open(pinned, file, hash, ctx->program_bytes,
                                  bench__now_ns() + (int64_t)(timeout_s * 1e9), &fd, why, len);
        struct stat st;
        unsigned char *bytes = NULL;
        if (rc == 0 && (fstat(fd, &st) != 0 || !(bytes = malloc(st.st_size ? st.st_size : 1)) ||
                        pread(fd, bytes, (size_t)st.st_size, 0) != st.st_size)) {
            bench__msg(why, len, "%s", "cannot read the copy of the program kept");
            rc = BENCH_EIO;
        }
        if (fd >= 0)
            close(fd);
        char size[32];
        bench__msg(size, sizeof size, "%lld", rc == 0 ? (long long)st.st_size : 0LL);
        const char *p[3] = {hash, (const char *)bytes, size};
        /* The first run is the newest of this program's: the one just recorded. */
        if (rc == 0)
            rc = write1(h, "INSERT INTO " S "programs VALUES ($1::text, $2::bytea, $3::bigint,"
                           " (SELECT max(id) FROM " S "runs WHERE program_hash = $1), now())"
                           " ON CONFLICT (hash) DO UPDATE SET kept = now()", 3, p, 1,
                        (int)st.st_size, NULL, why, len);
        free(bytes);
    }
    char k[32];
    bench__msg(k, sizeof k, "%zu", keep);
    const char *pk[1] = {k};
    if (rc == 0)
        rc = write1(h, "DELETE FROM " S "programs WHERE hash IN (SELECT hash FROM " S "programs"
                       " ORDER BY kept DESC, hash OFFSET $1::bigint)", 1, pk, -1, 0, NULL, why,
                    len);
    return rc;
}

int bench__pg_program_copy(bench__history *h, const char *hash, unsigned char **bytes, size_t *n,
                           char *msg, size_t len)
{
    if (bytes)
        *bytes = NULL;
    *n = 0;
    char max[32];
    bench__msg(max, sizeof max, "%.0f", BENCH__HISTORY_PROGRAM_MAX);
    const char *v[2] = {hash, max};
    char what[4400], err[512];
    bench__msg(what, sizeof what, "history '%s' cannot be read: ", h->name);
    PGconn *conn = bench__pg_conn(h, what, msg, len);
    if (!conn)
        return BENCH_EIO;
    /* In binary, as stored; one too large to be ours is never transferred. */
    PGresult *r = PQexecParams(conn, bytes ? "SELECT octet_length(program), CASE WHEN"
                                             " octet_length(program) <= $2::bigint THEN program"
                                             " END FROM " S "programs WHERE hash = $1"
                                           : "SELECT octet_length(program)::text, ''::bytea"
                                             " FROM " S "programs WHERE hash = $1 AND $2 <> ''",
                               2, NULL, v, NULL, NULL, bytes ? 1 : 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        bench__msg(msg, len, "history '%s' cannot be read: %s", h->name,
                   bench__pg_error(conn, err, sizeof err));
        PQclear(r);
        return BENCH_EIO;
    }
    int rc = 0;
    if (!bytes) {
        *n = PQntuples(r) == 1 ? (size_t)strtoull(PQgetvalue(r, 0, 0), NULL, 10) : 0;
    } else if (PQntuples(r) == 1 && PQgetisnull(r, 0, 1)) {
        bench__msg(msg, len, "its copy in the database is larger than %.0f MiB: not read",
                   BENCH__HISTORY_PROGRAM_MAX / (1024 * 1024));
        rc = BENCH_EINVAL;
    } else if (PQntuples(r) == 1) {
        *n = (size_t)PQgetlength(r, 0, 1);
        if (!(*bytes = malloc(*n ? *n : 1))) {
            bench__msg(msg, len, "history '%s' cannot be read: out of memory", h->name);
            rc = BENCH_ENOMEM;
        } else {
            memcpy(*bytes, PQgetvalue(r, 0, 1), *n);
        }
    }
    PQclear(r);
    return rc;
}

int bench__pg_keep_program(bench__history *h, const bench__context *ctx, size_t keep,
                           double timeout_s, char *msg, size_t len)
{
    char dir[4200], pinned[64] = "", why[512], mac[BENCH__MAC_TEXT];
    bench__pg_programs_dir(h, dir, sizeof dir);
    int dfd = -1;
    struct stat st;
    /* keep 0: nothing is copied; the programs earlier runs kept go, here (unless this machine
     * never kept one) and in the database. */
    bool none_here = keep == 0 && lstat(dir, &st) != 0 && errno == ENOENT;
    int rc = none_here ? 0 : bench__make_dirs(dir, why, sizeof why);
    if (rc == 0 && !none_here)
        rc = bench__dir_pin(AT_FDCWD, dir, O_NOFOLLOW, &dfd, pinned, sizeof pinned, why,
                            sizeof why);
    /* From here on the folder is reached through its descriptor, never by its name again. */
    if (rc == 0 && keep > 0)
        rc = bench__history_copy_program(pinned, ctx, timeout_s, mac, sizeof mac, why,
                                         sizeof why);
    if (rc == 0 && keep > 0)
        rc = write_mac(dfd, ctx->program_hash + 7, mac, why, sizeof why);
    if (rc == 0 && dfd >= 0)
        prune(dfd, keep);
    else if (rc != 0)
        bench__msg(msg, len, "history '%s': the program was not kept: %s", h->name, why);
    /* In the database too, for a confirmation on another machine; one that cannot be stored
     * there is one warning, the copy on this machine kept. */
    if (rc == 0 && (rc = store_program(h, pinned, ctx, keep, timeout_s, why, sizeof why)) != 0)
        bench__msg(msg, len, "history '%s': the program was not stored in the database: %s",
                   h->name, why);
    if (dfd >= 0)
        close(dfd);
    return rc;
}

/* This user's signature of the program stem kept in dir into mac ("" when none). */
static void read_mac(const char *dir, const char *stem, char *mac, size_t len)
{
    char file[4400];
    bench__msg(file, sizeof file, "%s/%s.mac", dir, stem);
    mac[0] = '\0';
    int fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, mac, len - 1);
    close(fd);
    mac[n > 0 ? n : 0] = '\0';
}

int bench__pg_program(bench__history *h, long long run, char **hash, char **mac, char *msg,
                      size_t len)
{
    *hash = *mac = NULL;
    char u[32];
    bench__msg(u, sizeof u, "%lld", run);
    const char *v[1] = {u};
    PGresult *r = bench__pg_query(h, "SELECT program_hash FROM " S "runs WHERE id = $1", 1, v,
                                  msg, len);
    if (!r)
        return BENCH_EIO;
    bool oom = false;
    if (PQntuples(r) == 1)
        *hash = text_of(r, 0, 0, &oom);
    if (*hash && bench__history_program_hash_ok(*hash)) {
        char dir[4200], m[BENCH__MAC_TEXT];
        bench__pg_programs_dir(h, dir, sizeof dir);
        read_mac(dir, *hash + 7, m, sizeof m);
        if (m[0] && !(*mac = strdup(m)))
            oom = true;
    }
    return oom_end(h, r, oom, msg, len);
}

/* ---- the handle ---- */

static void op_close(bench__history *h)
{
    bench__pg *pg = h->store;
    if (!pg)
        return;
    if (pg->conn) /* none: libpq may not even be loaded */
        PQfinish(pg->conn);
    free(pg->url);
    free(pg);
    h->store = NULL;
}

static const bench__history_ops pg_ops = {
    .append = bench__pg_append,
    .run_ids = bench__pg_run_ids,
    .copy_read = bench__pg_copy_read,
    .copy_write = bench__pg_copy_write,
    .ids = bench__pg_ids,
    .runs = bench__pg_runs,
    .series = bench__pg_series,
    .run_ok = bench__pg_run_ok,
    .last = bench__pg_last,
    .program = bench__pg_program,
    .keep_program = bench__pg_keep_program,
    .programs_dir = bench__pg_programs_dir,
    .program_copy = bench__pg_program_copy,
    .close = op_close,
};

int bench__history_pg_open(bench__history *h, const char *url, bool create, char *msg,
                           size_t len)
{
    bench__pg *pg = calloc(1, sizeof *pg);
    if (!pg || !(pg->url = strdup(url))) {
        free(pg);
        bench__msg(msg, len, "history: out of memory");
        return BENCH_ENOMEM;
    }
    h->ops = &pg_ops;
    h->store = pg;
    h->exists = true;
    bench__msg(h->name, sizeof h->name, "postgresql://");
    char why[1024];
    int rc = (pg->conn = bench__pg_connect(h, url, why, sizeof why)) ? 0 : BENCH_EIO;
    if (rc != 0)
        bench__msg(msg, len, "history '%s': %s", h->name, why);
    else
        rc = bench__pg_check_schema(h, pg->conn, create, msg, len);
    if (rc != 0)
        op_close(h);
    return rc;
}
