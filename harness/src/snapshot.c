/*
 * snapshot.c: the program snapshot a saved baseline keeps, so that a later comparison can run
 * the very program that was measured then, interleaved with the current one (cli.c, ab.c).
 *
 * A snapshot is a copy of the running executable (/proc/self/exe) beside the baseline,
 * NAME.program, written to a temporary file first and renamed into place only once the baseline
 * that names it was saved: a failed save leaves the previous baseline and its program as they
 * were, and a baseline never points at a half-written program. Its identity is a 64-bit
 * FNV-1a hash of the bytes: enough to tell two builds apart, not a security measure (the file
 * is only ever run from the user's own baseline directory).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "store.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static void hex_hash(uint64_t h, char *out, size_t len)
{
    bench__msg(out, len, "fnv1a64:%016llx", (unsigned long long)h);
}

/* Reads fd to its end, hashing, and copying to `to` when it is >= 0. */
static int hash_copy(int fd, int to, uint64_t *hash, double *bytes, char *msg, size_t msglen)
{
    static unsigned char buf[1 << 16];
    uint64_t h = FNV_OFFSET;
    double total = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            bench__msg(msg, msglen, "reading the program failed: %s", strerror(errno));
            return BENCH_EIO;
        }
        if (n == 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * FNV_PRIME;
        total += (double)n;
        for (ssize_t off = 0; to >= 0 && off < n;) {
            ssize_t w = write(to, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                bench__msg(msg, msglen, "writing the snapshot failed: %s", strerror(errno));
                return BENCH_EIO;
            }
            off += w;
        }
    }
    *hash = h;
    *bytes = total;
    return 0;
}

int bench__program_hash(const char *path, char *out, size_t len, double *bytes, char *msg,
                        size_t msglen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        bench__msg(msg, msglen, "cannot open %s: %s", path, strerror(errno));
        return BENCH_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        bench__msg(msg, msglen, "%s is not a regular file", path);
        close(fd);
        return BENCH_EIO;
    }
    uint64_t h;
    double n;
    int rc = hash_copy(fd, -1, &h, &n, msg, msglen);
    close(fd);
    if (rc == 0) {
        hex_hash(h, out, len);
        if (bytes)
            *bytes = n;
    }
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int bench__libraries_hash(char *out, size_t len, char *msg, size_t msglen)
{
    enum { MAX_LIBS = 256 };
    char *paths[MAX_LIBS], exe[4096] = "", line[4608];
    size_t n = 0;
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[el > 0 ? el : 0] = '\0';
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) {
        bench__msg(msg, msglen, "cannot read /proc/self/maps: %s", strerror(errno));
        return BENCH_EIO;
    }
    /* Every file this process runs code from, but the program itself: its shared libraries. */
    while (fgets(line, sizeof line, f) && n < MAX_LIBS) {
        char perms[8] = "";
        int off = 0;
        if (sscanf(line, "%*s %7s %*s %*s %*s %n", perms, &off) != 1 || off == 0 ||
            !strchr(perms, 'x') || line[off] != '/')
            continue;
        char *path = line + off;
        path[strcspn(path, "\n")] = '\0';
        if (strcmp(path, exe) == 0 || strstr(path, " (deleted)"))
            continue;
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++)
            seen = strcmp(paths[i], path) == 0;
        if (!seen && (paths[n] = strdup(path)) != NULL)
            n++;
    }
    fclose(f);
    qsort(paths, n, sizeof *paths, cmp_str);
    uint64_t h = FNV_OFFSET;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        for (const char *q = paths[i]; *q; q++)
            h = (h ^ (unsigned char)*q) * FNV_PRIME;
        int fd = open(paths[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        uint64_t fh = 0;
        double bytes;
        if (fd >= 0) {
            rc = rc ? rc : hash_copy(fd, -1, &fh, &bytes, msg, msglen);
            close(fd);
        }
        for (int b = 0; b < 8; b++)
            h = (h ^ ((fh >> (8 * b)) & 0xff)) * FNV_PRIME;
        free(paths[i]);
    }
    if (rc == 0)
        hex_hash(h, out, len);
    return rc;
}

int bench__snapshot_prepare(const char *dir, const char *name, char *tmp, size_t tmplen,
                            char *hash, size_t hashlen, double *bytes, char *msg, size_t msglen)
{
    bench__msg(tmp, tmplen, "%s/.%s.program.%ld.tmp", dir, name, (long)getpid());
    int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        bench__msg(msg, msglen, "cannot read this program (/proc/self/exe): %s",
                   strerror(errno));
        return BENCH_EIO;
    }
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0755);
    if (out < 0) {
        bench__msg(msg, msglen, "cannot create %s: %s", tmp, strerror(errno));
        close(in);
        return BENCH_EIO;
    }
    uint64_t h;
    int rc = hash_copy(in, out, &h, bytes, msg, msglen);
    close(in);
    if (rc == 0 && fsync(out) != 0) {
        bench__msg(msg, msglen, "writing %s failed: %s", tmp, strerror(errno));
        rc = BENCH_EIO;
    }
    if (close(out) != 0 && rc == 0) {
        bench__msg(msg, msglen, "writing %s failed: %s", tmp, strerror(errno));
        rc = BENCH_EIO;
    }
    if (rc != 0) {
        unlink(tmp);
        return rc;
    }
    hex_hash(h, hash, hashlen);
    return 0;
}

int bench__snapshot_commit(const char *dir, const char *name, const char *tmp, char *msg,
                           size_t msglen)
{
    char path[4096];
    bench__msg(path, sizeof path, "%s/%s.program", dir, name);
    if (rename(tmp, path) != 0) {
        bench__msg(msg, msglen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        return BENCH_EIO;
    }
    return 0;
}
