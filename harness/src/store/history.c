/*
 * history.c: the run history's handle (history.h, history_store.h): the choice of store by
 * the target's form (a "postgresql://" or "postgres://" URL, else a file), the newest earlier
 * runs that "since the last run" compares with, and the programs kept for --history-confirm,
 * beside the history or (a PostgreSQL one) in the database too. What is read is checked by
 * history_rows.c, whatever the store.
 *
 * A program taken from a database is written to a private temporary file only so that the
 * checks every program snapshot passes before it runs (trust.c: a regular ELF file, a safe
 * owner and mode, no link, its SHA-256) apply to it unchanged; what runs is the sealed memory
 * copy those checks make, never the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/history_store.h"
#include "store/store.h"

bool bench__history_is_url(const char *target)
{
    return bench__starts_with(target, "postgresql://") ||
           bench__starts_with(target, "postgres://");
}

int bench__history_open(const char *target, bool create, bench__history **out, char *msg,
                        size_t len)
{
    *out = NULL;
    bench__history *h = calloc(1, sizeof *h);
    if (!h) {
        bench__msg(msg, len, "history: out of memory");
        return BENCH_ENOMEM;
    }
    int rc = bench__history_is_url(target) ? bench__history_pg_open(h, target, create, msg, len)
                                           : bench__history_sqlite_open(h, target, create, msg,
                                                                        len);
    if (rc != 0) {
        free(h);
        return rc;
    }
    *out = h;
    return 0;
}

void bench__history_close(bench__history *h)
{
    if (!h)
        return;
    if (h->ops)
        h->ops->close(h);
    free(h);
}

const char *bench__history_name(const bench__history *h)
{
    return h->name;
}

int bench__history_append(bench__history *h, const bench__context *ctx,
                          const bench__result *results, size_t n, const char *baseline,
                          const char *run_key, long long *run_id, char *msg, size_t len)
{
    long long id = 0;
    int rc = h->ops->append(h, ctx, results, n, baseline, run_key, &id, msg, len);
    if (rc == 0 && run_id)
        *run_id = id;
    return rc;
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

/* Benchmark id's newest run on `machine` with process medians into *out. */
static int last_one(bench__history *h, const char *id, const char *const *machine,
                    bench__history_last *out, char *msg, size_t len)
{
    long long run = 0;
    char *rev = NULL, *prog = NULL;
    bench__hval *v = NULL;
    size_t n = 0;
    int rc = h->ops->last(h, id, machine, &run, &rev, &prog, &v, &n, msg, len);
    if (rc == 0 && run > 0) {
        bench__msg(out->revision, sizeof out->revision, "%s", rev && *rev ? rev : "-");
        bench__msg(out->program_hash, sizeof out->program_hash, "%s", prog ? prog : "");
        out->medians = malloc((n ? n : 1) * sizeof *out->medians);
        if (!out->medians) {
            bench__msg(msg, len, "history '%s' cannot be read: out of memory", h->name);
            rc = BENCH_ENOMEM;
        }
        for (size_t j = 0; j < n && rc == 0; j++)
            if (bench__history_median_ok(h, &v[j], run, id))
                out->medians[out->n++] = v[j].x;
        out->run = out->n >= 2 ? run : 0;
    }
    free(rev);
    free(prog);
    free(v);
    return rc;
}

int bench__history_last_runs(bench__history *h, const bench__context *ctx,
                             const char *const *ids, size_t n, bench__history_last *out,
                             char *msg, size_t len)
{
    memset(out, 0, n * sizeof *out);
    if (!h->exists)
        return 0; /* no history yet: no last run */
    /* This machine's facts as the stores compare them (as text; unknown: NULL, any). */
    char cores[24], threads[24], memory[32];
    bench__msg(cores, sizeof cores, "%d", ctx->cpu.cores);
    bench__msg(threads, sizeof threads, "%d", ctx->cpu.threads);
    bench__msg(memory, sizeof memory, "%.0f", ctx->memory_bytes);
    const char *machine[BENCH__HF_MACHINE] = {
        ctx->cpu.brand[0] ? ctx->cpu.brand : NULL, ctx->cpu.cores > 0 ? cores : NULL,
        ctx->cpu.threads > 0 ? threads : NULL, ctx->memory_bytes > 0 ? memory : NULL,
        ctx->virtualization[0] ? ctx->virtualization : NULL};
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = last_one(h, ids[i], machine, &out[i], msg, len);
    if (rc != 0)
        bench__history_last_free(out, n);
    return rc;
}

/* ---- the programs kept for confirmation ---- */

void bench__history_programs_dir(const bench__history *h, char *dir, size_t len)
{
    h->ops->programs_dir(h, dir, len);
}

int bench__history_keep_program(bench__history *h, const bench__context *ctx, size_t keep,
                                double timeout_s, char *msg, size_t len)
{
    /* keep 0 still goes to the store: the programs kept by earlier runs are removed. */
    if (keep > 0 && !bench__history_program_hash_ok(ctx->program_hash))
        return 0;
    return h->ops->keep_program(h, ctx, keep, timeout_s, msg, len);
}

bool bench__history_holds_programs(const bench__history *h)
{
    return h->ops->program_copy != NULL;
}

int bench__history_program_stored(bench__history *h, const char *hash, bool *there, char *msg,
                                  size_t len)
{
    size_t n = 0;
    int rc = h->ops->program_copy ? h->ops->program_copy(h, hash, NULL, &n, msg, len) : 0;
    *there = rc == 0 && n > 0;
    return rc;
}

/* Writes bytes (n) to a new file `name` in the folder open as dfd, never through a link. */
static int write_private(int dfd, const char *name, const unsigned char *bytes, size_t n,
                         char *msg, size_t len)
{
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
    if (fd < 0) {
        bench__msg(msg, len, "cannot write a temporary copy of it: %s", strerror(errno));
        return BENCH_EIO;
    }
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, bytes + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            bench__msg(msg, len, "cannot write a temporary copy of it: %s",
                       w < 0 ? strerror(errno) : "short write");
            close(fd);
            return BENCH_EIO;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0) {
        bench__msg(msg, len, "cannot write a temporary copy of it: %s", strerror(errno));
        return BENCH_EIO;
    }
    return 0;
}

int bench__history_program_open(bench__history *h, const char *hash, int64_t deadline_ns,
                                int *fd, double *bytes, char *msg, size_t len)
{
    *fd = -1;
    *bytes = 0;
    unsigned char *data = NULL;
    size_t n = 0;
    int rc = h->ops->program_copy ? h->ops->program_copy(h, hash, &data, &n, msg, len) : 0;
    if (rc != 0)
        return rc;
    if (!data) {
        bench__msg(msg, len, "%s", "the history holds no copy of it");
        return BENCH_EUNAVAIL;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    bench__msg(dir, sizeof dir, "%s/bench-program-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    if (!mkdtemp(dir)) { /* mode 0700, made anew: no one else's */
        bench__msg(msg, len, "cannot make a private temporary folder: %s", strerror(errno));
        free(data);
        return BENCH_EIO;
    }
    /* A terminating signal while it exists removes the file (its empty folder stays). */
    char file[4200];
    bench__msg(file, sizeof file, "%s/program", dir);
    bench__tmp_guard();
    int slot = bench__tmp_register(file);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        bench__msg(msg, len, "cannot open a private temporary folder: %s", strerror(errno));
        rc = BENCH_EIO;
    } else {
        rc = write_private(dfd, "program", data, n, msg, len);
    }
    free(data);
    /* Checked and sealed in memory from the file (its size first, then its hash): what runs is
     * the copy those checks made, and the file goes at once. */
    if (rc == 0 && (rc = bench__snapshot_open(dir, "program", hash, (double)n, deadline_ns, fd,
                                              msg, len)) == 0)
        *bytes = (double)n;
    if (dfd >= 0) {
        unlinkat(dfd, "program", 0);
        close(dfd);
    }
    bench__tmp_unregister(slot);
    bench__tmp_unguard();
    rmdir(dir);
    return rc;
}

int bench__history_program(bench__history *h, long long run_id, char *hash, size_t hlen,
                           char *mac, size_t mlen, char *msg, size_t len)
{
    hash[0] = mac[0] = '\0';
    char *hs = NULL, *ms = NULL;
    int rc = h->exists ? h->ops->program(h, run_id, &hs, &ms, msg, len) : 0;
    if (rc == 0) {
        bench__msg(hash, hlen, "%s", hs ? hs : "");
        bench__msg(mac, mlen, "%s", ms ? ms : "");
    }
    free(hs);
    free(ms);
    return rc;
}

/* A stored number's text as a double; NAN for none or not a number. */
static double number_of(const char *s)
{
    char *end;
    double x = s ? strtod(s, &end) : NAN;
    return s && end != s && *end == '\0' ? x : NAN;
}

int bench__history_bmf(FILE *o, bench__history *h, bench__history_selector select, void *arg,
                       char *msg, size_t len)
{
    long long *ids = NULL;
    size_t n = 0;
    int rc = h->exists ? h->ops->run_ids(h, &ids, &n, msg, len) : 0;
    bench__hcopy_run run = {0};
    if (rc == 0 && n > 0)
        rc = h->ops->copy_read(h, ids[n - 1], &run, msg, len);
    free(ids);
    /* The columns of BENCH__HCOPY_RESULT_SQL: benchmark, status, median, lower, upper, ... */
    const char **names = calloc(run.n ? run.n : 1, sizeof *names);
    bool *selected = calloc(run.n ? run.n : 1, sizeof *selected);
    bench__bmf_entry *e = calloc(run.n ? run.n : 1, sizeof *e);
    if (rc == 0 && (!names || !selected || !e)) {
        bench__msg(msg, len, "history '%s': out of memory", h->name);
        rc = BENCH_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < run.n; i++)
        names[i] = run.r[i].col[0] ? run.r[i].col[0] : "";
    if (rc == 0 && select(names, run.n, selected, arg) != 0) {
        msg[0] = '\0';
        rc = BENCH_EUSAGE;
    }
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < run.n; i++) {
        char *const *col = run.r[i].col;
        if (selected[i] && col[0] && col[1] && strcmp(col[1], "ok") == 0)
            e[k++] = (bench__bmf_entry){col[0], number_of(col[2]), number_of(col[3]),
                                        number_of(col[4])};
    }
    if (rc == 0 && (rc = bench__bmf_print(o, e, k)) != 0)
        bench__msg(msg, len, "history '%s': cannot print it: %s", h->name, bench__strerror(rc));
    free(names);
    free(selected);
    free(e);
    bench__hcopy_run_free(&run);
    return rc;
}

int bench__history_copy(bench__history *from, bench__history *to, size_t *copied,
                        size_t *skipped, char *msg, size_t len)
{
    long long *ids = NULL;
    size_t n = 0;
    *copied = *skipped = 0;
    int rc = from->exists ? from->ops->run_ids(from, &ids, &n, msg, len) : 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        bench__hcopy_run run = {0};
        bool same = false;
        rc = from->ops->copy_read(from, ids[i], &run, msg, len);
        if (rc == 0)
            rc = to->ops->copy_write(to, &run, &same, msg, len);
        if (rc == 0)
            *(same ? skipped : copied) += 1;
        bench__hcopy_run_free(&run);
    }
    free(ids);
    return rc;
}
