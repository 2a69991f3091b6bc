/*
 * snapshot.c: the identity of the running program and the snapshot a saved baseline keeps of
 * it, so that a later comparison can run the very program that was measured, interleaved with
 * the current one (run/suspects.c, run/ab.c; trust.c decides whether it may run).
 *
 * Identity is the SHA-256 of the executable's bytes ("sha256:HEX"), which a signature can vouch for
 * (trust.c). Its shared libraries are told apart by a 64-bit FNV-1a hash of their paths and
 * contents ("fnv1a64:HEX"): nothing runs on that hash's word, it only says whether the program
 * would run with other libraries than when it was measured, and it is read on every run (some 20 MB
 * in a sanitizer build, where SHA-256 would add seconds). A snapshot is a copy of the running
 * executable (/proc/self/exe) beside the baseline, NAME.program, written to a temporary file
 * NAME.program.tmp.PID.XXXXXX first and renamed into place under the baseline's lock once the
 * baseline that names it was saved: a failed save leaves the previous baseline and its program as
 * they were, and a baseline never names a half-written program. The copy stops at a deadline and at
 * an interrupt, a file-size limit makes it fail (EFBIG) instead of killing the process, and its
 * temporary file is removed on every failure; one left by a process killed outright is swept by a
 * later save (files.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "core/sha256.h"
#include "store/store.h"
#include "sys/clock.h"
#include "sys/proc.h"

static void hash_text(bench__sha256_ctx *h, char *out, size_t len)
{
    unsigned char d[BENCH__SHA256_BYTES];
    char hex[2 * BENCH__SHA256_BYTES + 1];
    bench__sha256_final(h, d);
    bench__hex(d, sizeof d, hex);
    bench__msg(out, len, "sha256:%s", hex);
}

/* Reads fd to its end, hashing, and copying to `to` when it is >= 0; stops at deadline_ns
 * (bench__now_ns clock, <= 0: none) and when the run is interrupted (BENCH_EUSAGE). */
static int hash_copy(int fd, int to, bench__sha256_ctx *h, double *bytes, int64_t deadline_ns,
                     char *msg, size_t msglen)
{
    static unsigned char buf[1 << 16];
    double total = 0;
    for (;;) {
        if (to >= 0 && bench__proc_interrupted()) {
            bench__msg(msg, msglen, "interrupted by %s",
                       bench__signal_name(bench__proc_interrupted()));
            return BENCH_EUSAGE;
        }
        if (deadline_ns > 0 && bench__now_ns() > deadline_ns) {
            bench__msg(msg, msglen, "%s", "copying the program took too long (--timeout)");
            return BENCH_EIO;
        }
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            bench__msg(msg, msglen, "reading the program failed: %s", strerror(errno));
            return BENCH_EIO;
        }
        if (n == 0)
            break;
        bench__sha256_update(h, buf, (size_t)n);
        total += (double)n;
        for (ssize_t off = 0; to >= 0 && off < n;) {
            ssize_t w = write(to, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                bench__msg(msg, msglen, "writing the snapshot failed: %s",
                           w < 0 ? strerror(errno) : "no space");
                return BENCH_EIO;
            }
            off += w;
        }
    }
    if (bytes)
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
    bench__sha256_ctx h;
    bench__sha256_init(&h);
    int rc = hash_copy(fd, -1, &h, bytes, 0, msg, msglen);
    close(fd);
    if (rc == 0)
        hash_text(&h, out, len);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* FNV-1a of the bytes of fd into *h, continuing from its value. */
static int fnv_file(int fd, uint64_t *h, char *msg, size_t msglen)
{
    static unsigned char buf[1 << 16];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            bench__msg(msg, msglen, "reading a shared library failed: %s", strerror(errno));
            return BENCH_EIO;
        }
        if (n == 0)
            return 0;
        for (ssize_t i = 0; i < n; i++)
            *h = (*h ^ buf[i]) * FNV_PRIME;
    }
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
    /* Each library's path and the hash of its contents, in path order (as older versions
     * computed it, so their baselines compare). */
    uint64_t h = FNV_OFFSET;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        for (const char *q = paths[i]; *q; q++)
            h = (h ^ (unsigned char)*q) * FNV_PRIME;
        int fd = open(paths[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        uint64_t fh = 0;
        if (fd >= 0) {
            fh = FNV_OFFSET;
            rc = rc ? rc : fnv_file(fd, &fh, msg, msglen);
            close(fd);
        }
        for (int b = 0; b < 8; b++)
            h = (h ^ ((fh >> (8 * b)) & 0xff)) * FNV_PRIME;
        free(paths[i]);
    }
    if (rc == 0)
        bench__msg(out, len, "fnv1a64:%016llx", (unsigned long long)h);
    return rc;
}

int bench__snapshot_prepare(const char *dir, const char *name, double timeout_s,
                            bench__snapshot *s, char *msg, size_t msglen)
{
    memset(s, 0, sizeof *s);
    s->slot = -1;
    bench__msg(s->tmp, sizeof s->tmp, "%s/%s.program.tmp.%ld.XXXXXX", dir, name, (long)getpid());
    int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        bench__msg(msg, msglen, "cannot read this program (/proc/self/exe): %s",
                   strerror(errno));
        s->tmp[0] = '\0';
        return BENCH_EIO;
    }
    /* A terminating signal removes the copy; a file-size limit fails the write (EFBIG) instead
     * of killing the process. The name is registered before the file exists. */
    bench__tmp_guard();
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    int out = mkstemp(s->tmp);
    int e = errno;
    if (out >= 0)
        s->slot = bench__tmp_register(s->tmp);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (out < 0) {
        bench__msg(msg, msglen, "cannot create a file in %s: %s", dir, strerror(e));
        close(in);
        bench__tmp_unguard();
        s->tmp[0] = '\0';
        return BENCH_EIO;
    }
    bench__sha256_ctx h;
    bench__sha256_init(&h);
    int64_t deadline = bench__now_ns() + (int64_t)(timeout_s * 1e9);
    int rc = hash_copy(in, out, &h, &s->bytes, deadline, msg, msglen);
    close(in);
    if (rc == 0 && (fchmod(out, 0755) != 0 || fsync(out) != 0)) {
        bench__msg(msg, msglen, "writing %s failed: %s", s->tmp, strerror(errno));
        rc = BENCH_EIO;
    }
    if (close(out) != 0 && rc == 0) {
        bench__msg(msg, msglen, "writing %s failed: %s", s->tmp, strerror(errno));
        rc = BENCH_EIO;
    }
    bench__tmp_unguard();
    if (rc != 0) {
        bench__snapshot_discard(s);
        return rc;
    }
    hash_text(&h, s->hash, sizeof s->hash);
    return 0;
}

int bench__snapshot_commit(const char *dir, const char *name, bench__snapshot *s, char *msg,
                           size_t msglen)
{
    char path[4200];
    bench__msg(path, sizeof path, "%s/%s.program", dir, name);
    if (rename(s->tmp, path) != 0) {
        bench__msg(msg, msglen, "cannot rename %s to %s: %s", s->tmp, path, strerror(errno));
        bench__snapshot_discard(s);
        return BENCH_EIO;
    }
    bench__tmp_unregister(s->slot);
    s->slot = -1;
    s->tmp[0] = '\0';
    return 0;
}

void bench__snapshot_discard(bench__snapshot *s)
{
    if (s->tmp[0])
        unlink(s->tmp);
    bench__tmp_unregister(s->slot);
    s->slot = -1;
    s->tmp[0] = '\0';
}
