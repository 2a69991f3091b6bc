/*
 * last.c: where a program's last run is kept, so that the next run can show the change since it
 * without any setup (Criterion.rs's "change since the last run"). One results file per program
 * and machine, in $BENCH_LAST_DIR, else $XDG_CACHE_HOME/harness/last, else
 * $HOME/.cache/harness/last; its name is the program's file name and a SHA-256 of the program's
 * real path and the machine's identity. The file is a cache: it is read, merged (json_merge.c)
 * and replaced, never trusted beyond the loader's checks, and nothing it holds changes an exit
 * code.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "core/sha256.h"
#include "store/store.h"
#include "sys/context.h"

/* The folder: BENCH_EUNAVAIL when the environment disables the store (BENCH_LAST_DIR set and
 * empty) or names none (no BENCH_LAST_DIR, XDG_CACHE_HOME or HOME). */
static int last_dir(char *dir, size_t len)
{
    const char *env = getenv("BENCH_LAST_DIR");
    if (env && !*env)
        return BENCH_EUNAVAIL;
    if (env) {
        bench__msg(dir, len, "%s", env);
        return 0;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        bench__msg(dir, len, "%s/harness/last", xdg);
    else if (home && home[0] == '/')
        bench__msg(dir, len, "%s/.cache/harness/last", home);
    else
        return BENCH_EUNAVAIL;
    return 0;
}

/* The machine's identity: /etc/machine-id when it can be read, else the host name and the CPU
 * model the context found. */
static void machine_id(const bench__context *ctx, char *out, size_t len)
{
    FILE *f = fopen("/etc/machine-id", "r");
    char line[128] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
        line[strcspn(line, "\n")] = '\0';
    }
    if (line[0])
        bench__msg(out, len, "machine-id %s", line);
    else
        bench__msg(out, len, "host %s cpu %s", ctx->hostname, ctx->cpu.brand);
}

int bench__last_path(const char *program, const bench__context *ctx, char *path, size_t len,
                     char *msg, size_t msglen)
{
    char dir[PATH_MAX], real[PATH_MAX], machine[512];
    if (last_dir(dir, sizeof dir) != 0)
        return BENCH_EUNAVAIL;
    if (!realpath(program, real)) {
        bench__msg(msg, msglen, "the program's path %s cannot be resolved: %s", program,
                   strerror(errno));
        return BENCH_EIO;
    }
    machine_id(ctx, machine, sizeof machine);
    bench__sha256_ctx h;
    unsigned char sum[BENCH__SHA256_BYTES];
    char hex[2 * BENCH__SHA256_BYTES + 1];
    bench__sha256_init(&h);
    bench__sha256_update(&h, real, strlen(real) + 1);
    bench__sha256_update(&h, machine, strlen(machine));
    bench__sha256_final(&h, sum);
    bench__hex(sum, 8, hex); /* 64 bits: the name tells programs apart, it secures nothing */
    /* The program's name first, so that a person can tell the files apart: a safe spelling. */
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    char name[41];
    size_t k = 0;
    for (; base[k] && k + 1 < sizeof name; k++) {
        char ch = base[k];
        bool safe = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
        name[k] = safe && !(k == 0 && ch == '.') ? ch : '_';
    }
    name[k] = '\0';
    if ((size_t)snprintf(path, len, "%s/%s-%s.json", dir, name, hex) >= len) {
        bench__msg(msg, msglen, "the last-run folder's path %s is too long", dir);
        return BENCH_EIO;
    }
    return 0;
}

/* mkdir -p of the folder of `path`, mode 0700 for what it makes (the cache is this user's). */
static int make_dir_of(const char *path, char *msg, size_t msglen)
{
    char dir[PATH_MAX];
    bench__msg(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        bool end = *p == '\0';
        if (*p != '/' && !end)
            continue;
        *p = '\0';
        struct stat st;
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            bench__msg(msg, msglen, "cannot create the folder %s: %s", dir, strerror(errno));
            return BENCH_EIO;
        }
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            bench__msg(msg, msglen, "%s is not a folder", dir);
            return BENCH_EIO;
        }
        if (end)
            return 0;
        *p = '/';
    }
}

int bench__last_load(const char *path, bench__saved *out, char *msg, size_t msglen)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (lstat(path, &st) != 0) {
        /* The first run (nothing kept yet), or a folder that is not there: nothing to read;
         * the save says what is wrong with a folder the user named. */
        if (errno == ENOENT || errno == ENOTDIR || !getenv("BENCH_LAST_DIR"))
            return BENCH_EUNAVAIL;
    } else if (!S_ISREG(st.st_mode)) {
        /* A symbolic link is not the cache this file writes (the loader refuses FIFOs and
         * devices itself, but follows links): not read. */
        bench__msg(msg, msglen, "%s: not a regular file: not read", path);
        return BENCH_EINVAL;
    }
    int rc = bench__saved_load(path, out, msg, msglen);
    if (rc == 0 && out->ctx.mode[0]) {
        bench__msg(msg, msglen, "%s: holds a run of %s, not of times", path, out->ctx.mode);
        bench__saved_destroy(out);
        rc = BENCH_EINVAL;
    }
    return rc;
}

int bench__last_keep(const char *path, const bench__context *ctx, const bench__result *all,
                     size_t n, bool (*present)(const void *where, const char *id),
                     const void *where, char *msg, size_t msglen)
{
    int rc = make_dir_of(path, msg, msglen);
    /* The default cache folder that cannot be made (a read-only home, a container): no store,
     * and nothing said on every run; a folder named by BENCH_LAST_DIR is the user's wish. */
    if (rc != 0 && !getenv("BENCH_LAST_DIR"))
        return BENCH_EUNAVAIL;
    struct stat st;
    /* A FIFO or device would be written directly (bench__write_atomic), a FIFO blocking until a
     * reader comes: the cache is a regular file or nothing. */
    if (rc == 0 && lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        bench__msg(msg, msglen, "%s: not a regular file: not replaced", path);
        rc = BENCH_EIO;
    }
    if (rc == 0)
        rc = bench__last_save(path, ctx, all, n, present, where, msg, msglen);
    return rc;
}
