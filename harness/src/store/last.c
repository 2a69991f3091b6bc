/*
 * last.c: where a program's last run is kept, so that the next run can show the change since it
 * without any setup (Criterion.rs's "change since the last run"). One results file per program
 * and machine, in $BENCH_LAST_DIR, else $XDG_CACHE_HOME/harness/last, else
 * $HOME/.cache/harness/last; its name is the program's file name and a SHA-256 of the program's
 * real path and the machine's identity. The file is a cache: it is read, merged (json_merge.c)
 * and replaced, never trusted beyond the loader's checks, and nothing it holds changes an exit
 * code.
 *
 * Only this user writes where the file is kept (docs/comparison.md#threat-model): a folder this
 * user owns that no other may write, else (a shared folder, mode 1777, or another user's) a
 * folder named by this user's uid inside it, made 0700 and opened without following a link.
 * The folder is opened once and checked through its descriptor (owner, mode), and every later
 * step reaches the file through that descriptor (/proc/self/fd/N/NAME, bench__dir_pin): no name
 * another user could swap for a link is resolved again between the check and the write.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
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

/* The folder of the file bench__last_path named: the folder named (top), whether the file is
 * in this user's folder inside it, and once opened (pin), its descriptor and pinned path. */
static struct {
    char top[PATH_MAX];
    bool per_user;
    char shown[PATH_MAX]; /* the file's path as the user sees it: what bench__last_path gave */
    int fd;               /* -1 until the folder is opened */
    char pinned[64];
} where_kept = {.fd = -1};

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
    /* A folder others may write (or another user's): this user's folder inside it. One that
     * does not exist yet is made by this user, 0700. */
    struct stat st;
    bool per_user = false;
    char why[128];
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        per_user = bench__unsafe_owner(&st, why, sizeof why) != NULL;
    char uid[32] = "";
    if (per_user)
        bench__msg(uid, sizeof uid, "/%ld", (long)geteuid());
    if ((size_t)snprintf(path, len, "%s%s/%s-%s.json", dir, uid, name, hex) >= len ||
        strlen(path) >= sizeof where_kept.shown) {
        bench__msg(msg, msglen, "the last-run folder's path %s is too long", dir);
        return BENCH_EIO;
    }
    if (where_kept.fd >= 0)
        close(where_kept.fd);
    where_kept.fd = -1;
    bench__msg(where_kept.top, sizeof where_kept.top, "%s", dir);
    where_kept.per_user = per_user;
    bench__msg(where_kept.shown, sizeof where_kept.shown, "%s", path);
    return 0;
}

/* Opens the folder of `path` (the path bench__last_path gave; made when `make`) and puts the
 * file's pinned path in out. BENCH_EUNAVAIL, silently, when it does not exist (and not `make`);
 * BENCH_EINVAL when it is not this user's alone, BENCH_EIO when it cannot be opened: msg says
 * why. */
static int pin_file(const char *path, bool make, char *out, size_t len, char *msg, size_t msglen)
{
    if (strcmp(path, where_kept.shown) != 0 || !where_kept.shown[0]) {
        bench__msg(msg, msglen, "%s: not the last-run file of this run", path);
        return BENCH_EINVAL;
    }
    const char *base = strrchr(path, '/') + 1;
    if (where_kept.fd < 0) {
        if (make && bench__make_dirs(where_kept.top, msg, msglen) != 0)
            return BENCH_EIO;
        char why[256], folder[PATH_MAX];
        int rc;
        if (where_kept.per_user) {
            bench__msg(folder, sizeof folder, "%.*s", (int)(base - 1 - path), path);
            const char *uid = strrchr(folder, '/') + 1;
            int top = open(where_kept.top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (top < 0) {
                rc = errno == ENOENT ? BENCH_EUNAVAIL : BENCH_EIO;
                bench__msg(why, sizeof why, "%s", strerror(errno));
            } else {
                if (make && mkdirat(top, uid, 0700) != 0 && errno != EEXIST) {
                    bench__msg(why, sizeof why, "cannot create it: %s", strerror(errno));
                    rc = BENCH_EIO;
                } else {
                    rc = bench__dir_pin(top, uid, O_NOFOLLOW, &where_kept.fd, where_kept.pinned,
                                        sizeof where_kept.pinned, why, sizeof why);
                }
                close(top);
            }
        } else {
            bench__msg(folder, sizeof folder, "%s", where_kept.top);
            rc = bench__dir_pin(AT_FDCWD, folder, 0, &where_kept.fd, where_kept.pinned,
                                sizeof where_kept.pinned, why, sizeof why);
        }
        /* To read: a folder not there (or not one) holds nothing yet; the save says what is
         * wrong with it. */
        if (rc != 0 && !make && rc != BENCH_EINVAL)
            return BENCH_EUNAVAIL;
        if (rc != 0) {
            bench__msg(msg, msglen, "the last-run folder %s is not used: %s", folder, why);
            return rc == BENCH_EUNAVAIL ? BENCH_EIO : rc;
        }
    }
    bench__msg(out, len, "%s/%s", where_kept.pinned, base);
    return 0;
}

/* Puts the folder's path back where msg names it by its pinned path. */
static void unpin_msg(char *msg, size_t msglen)
{
    size_t n = strlen(where_kept.pinned);
    char *at = n ? strstr(msg, where_kept.pinned) : NULL;
    if (!at || (at[n] != '/' && at[n] != '\0'))
        return;
    const char *base = strrchr(where_kept.shown, '/');
    char out[2048];
    bench__msg(out, sizeof out, "%.*s%.*s%s", (int)(at - msg), msg,
               (int)(base - where_kept.shown), where_kept.shown, at + n);
    bench__msg(msg, msglen, "%s", out);
}

int bench__last_load(const char *path, bench__saved *out, char *msg, size_t msglen)
{
    memset(out, 0, sizeof *out);
    char file[128];
    int rc = pin_file(path, false, file, sizeof file, msg, msglen);
    if (rc != 0)
        return rc;
    struct stat st;
    if (lstat(file, &st) != 0) {
        /* The first run (nothing kept yet): nothing to read. */
        if (errno == ENOENT || errno == ENOTDIR)
            return BENCH_EUNAVAIL;
    } else if (!S_ISREG(st.st_mode)) {
        /* A symbolic link is not the cache this file writes (the loader refuses FIFOs and
         * devices itself, but follows links): not read. */
        bench__msg(msg, msglen, "%s: not a regular file: not read", path);
        return BENCH_EINVAL;
    } else if (st.st_uid != geteuid()) {
        bench__msg(msg, msglen, "%s: owned by another user (uid %ld): not read", path,
                   (long)st.st_uid);
        return BENCH_EINVAL;
    }
    rc = bench__saved_load(file, out, msg, msglen);
    if (rc == 0 && out->ctx.mode[0]) {
        bench__msg(msg, msglen, "%s: holds a run of %s, not of times", path, out->ctx.mode);
        bench__saved_destroy(out);
        rc = BENCH_EINVAL;
    }
    if (rc != 0)
        unpin_msg(msg, msglen);
    return rc;
}

int bench__last_keep(const char *path, const bench__context *ctx, const bench__result *all,
                     size_t n, bool (*present)(const void *where, const char *id),
                     const void *where, char *msg, size_t msglen)
{
    char file[128];
    int rc = pin_file(path, true, file, sizeof file, msg, msglen);
    /* The default cache folder that cannot be made (a read-only home, a container): no store,
     * and nothing said on every run; a folder named by BENCH_LAST_DIR is the user's wish. */
    if (rc != 0 && !getenv("BENCH_LAST_DIR"))
        return BENCH_EUNAVAIL;
    struct stat st;
    /* A FIFO or device would be written directly (bench__write_atomic), a FIFO blocking until a
     * reader comes, and a link would be followed: the cache is a regular file or nothing. */
    if (rc == 0 && lstat(file, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
        bench__msg(msg, msglen, "%s: %s: not replaced", path,
                   S_ISREG(st.st_mode) ? "owned by another user" : "not a regular file");
        rc = BENCH_EIO;
    }
    if (rc == 0 && (rc = bench__last_save(file, ctx, all, n, present, where, msg, msglen)) != 0)
        unpin_msg(msg, msglen);
    return rc;
}
