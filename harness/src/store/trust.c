/*
 * trust.c: whether a program snapshot beside a baseline may run, and running it from the very
 * bytes that were checked (docs/comparison.md#threat-model).
 *
 * Anyone who can edit a baseline can edit the hash it records, so the hash alone proves nothing
 * about who put a snapshot there. The trust anchor is a per-user key outside the baseline
 * directory: $XDG_CONFIG_HOME/harness/key (else ~/.config/harness/key), 32 random bytes as 64
 * hex digits, created mode 0600 in a 0700 directory the first time a save keeps a snapshot. A
 * save signs the snapshot's SHA-256 with it (HMAC-SHA-256, context.program.mac); a comparison
 * runs a snapshot only when that signature verifies with the key of the user who runs it, or
 * when --trust-snapshots says that whoever wrote the directory is trusted to run code as this
 * user.
 *
 * Before anything runs, the snapshot must also pass the file-system checks that sudo and systemd
 * apply to what they execute: the directory and the file are owned by this user or by root and
 * are not writable by group or others, the file is opened without following a symbolic link and
 * is a regular file holding an ELF program. Its bytes are copied into a sealed memory file while
 * they are hashed, and the hash must be the one the baseline recorded; workers then start from
 * that memory file (fexecve, bench__proc_spec.exec_fd), so nothing written to the path after the
 * check can change what runs.
 */
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "core/sha256.h"
#include "store/store.h"
#include "sys/clock.h"
#include "sys/proc.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3: an executable memfd where vm.memfd_noexec asks */
#endif

#define KEY_BYTES 32
#define MAC_PREFIX "hmac-sha256:"

/* ---- the per-user key ---- */

/* The key's directory and file: $XDG_CONFIG_HOME/harness (when absolute), else
 * $HOME/.config/harness. BENCH_EUNAVAIL when neither variable gives one. */
static int key_paths(char *base, size_t blen, char *dir, size_t dlen, char *file, size_t flen,
                     char *msg, size_t msglen)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        bench__msg(base, blen, "%s", xdg);
    else if (home && home[0] == '/')
        bench__msg(base, blen, "%s/.config", home);
    else {
        bench__msg(msg, msglen, "%s", "no configuration directory for the key ($XDG_CONFIG_HOME "
                                      "and $HOME are unset)");
        return BENCH_EUNAVAIL;
    }
    bench__msg(dir, dlen, "%s/harness", base);
    bench__msg(file, flen, "%s/key", dir);
    return 0;
}

/* The error of an open without following links that failed with errno e: "PREFIXNAME: why" in
 * msg; BENCH_EUNAVAIL when it does not exist, else BENCH_EIO. */
static int open_failed(int e, const char *prefix, const char *name, char *msg, size_t msglen)
{
    bench__msg(msg, msglen, "%s%s: %s", prefix, name,
               e == ELOOP ? "it is a symbolic link" : strerror(e));
    return e == ENOENT ? BENCH_EUNAVAIL : BENCH_EIO;
}

/* Reads and checks the key file at dfd/"key" (`file` names it); ENOENT comes back as
 * BENCH_EUNAVAIL. */
static int read_key(int dfd, const char *file, unsigned char key[KEY_BYTES], char *msg,
                    size_t msglen)
{
    int fd = openat(dfd, "key", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return open_failed(errno, "cannot open the key ", file, msg, msglen);
    struct stat st;
    char text[2 * KEY_BYTES + 2];
    ssize_t n = -1;
    int rc = BENCH_EIO;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        bench__msg(msg, msglen, "the key %s is not a regular file", file);
    else if (st.st_uid != geteuid())
        bench__msg(msg, msglen, "the key %s is owned by another user (uid %ld): refusing it",
                   file, (long)st.st_uid);
    else if (st.st_mode & 077)
        bench__msg(msg, msglen, "the key %s may be read or written by other users (mode "
                                "%04o): refusing it (chmod 600 it, or remove it to make a new "
                                "one)", file, (unsigned)(st.st_mode & 07777));
    else if ((n = read(fd, text, sizeof text)) < 2 * KEY_BYTES ||
             (n == 2 * KEY_BYTES + 1 && text[2 * KEY_BYTES] != '\n') ||
             n > 2 * KEY_BYTES + 1)
        bench__msg(msg, msglen, "the key %s is not 64 hex digits", file);
    else
        rc = 0;
    close(fd);
    for (int i = 0; rc == 0 && i < KEY_BYTES; i++) {
        unsigned v = 0;
        for (int j = 0; j < 2; j++) {
            char ch = text[2 * i + j];
            int d = ch >= '0' && ch <= '9'   ? ch - '0'
                    : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                    : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                             : -1;
            if (d < 0) {
                bench__msg(msg, msglen, "the key %s is not 64 hex digits", file);
                rc = BENCH_EIO;
                break;
            }
            v = v * 16 + (unsigned)d;
        }
        key[i] = (unsigned char)v;
    }
    return rc;
}

/* Makes a new key at dir/key: written to a temporary file, then linked into place, so two
 * processes creating it at once end up with the same key. */
static int create_key(const char *dir, const char *file, char *msg, size_t msglen)
{
    unsigned char raw[KEY_BYTES];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            bench__msg(msg, msglen, "cannot make a key: getrandom failed: %s", strerror(errno));
            return BENCH_EIO;
        }
        got += (size_t)n;
    }
    char text[2 * KEY_BYTES + 2], tmp[PATH_MAX];
    bench__hex(raw, sizeof raw, text);
    text[2 * KEY_BYTES] = '\n';
    text[2 * KEY_BYTES + 1] = '\0';
    bench__msg(tmp, sizeof tmp, "%s/key.tmp.%ld.XXXXXX", dir, (long)getpid());
    int fd = mkstemp(tmp); /* mode 0600 */
    if (fd < 0) {
        bench__msg(msg, msglen, "cannot create the key %s: %s", file, strerror(errno));
        return BENCH_EIO;
    }
    int rc = 0;
    if (write(fd, text, 2 * KEY_BYTES + 1) != 2 * KEY_BYTES + 1 || fsync(fd) != 0) {
        bench__msg(msg, msglen, "cannot write the key %s: %s", file, strerror(errno));
        rc = BENCH_EIO;
    }
    close(fd);
    /* link() fails when another process made the key first: its key is the one. A file system
     * without hard links gets a rename, which another process's key could replace. */
    if (rc == 0 && link(tmp, file) != 0 && errno != EEXIST &&
        ((errno != EPERM && errno != ENOTSUP) || rename(tmp, file) != 0)) {
        bench__msg(msg, msglen, "cannot create the key %s: %s", file, strerror(errno));
        rc = BENCH_EIO;
    }
    unlink(tmp);
    return rc;
}

int bench__user_key(bool create, unsigned char key[32], char *msg, size_t msglen)
{
    char base[PATH_MAX], dir[PATH_MAX], file[PATH_MAX];
    int rc = key_paths(base, sizeof base, dir, sizeof dir, file, sizeof file, msg, msglen);
    if (rc)
        return rc;
    if (create) {
        if (mkdir(base, 0700) != 0 && errno != EEXIST) {
            bench__msg(msg, msglen, "cannot create %s for the key: %s", base, strerror(errno));
            return BENCH_EIO;
        }
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            bench__msg(msg, msglen, "cannot create %s for the key: %s", dir, strerror(errno));
            return BENCH_EIO;
        }
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return open_failed(errno, "no key: cannot open ", dir, msg, msglen);
    struct stat st;
    if (fstat(dfd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        bench__msg(msg, msglen, "the key's directory %s is not safe: %s", dir,
                   st.st_uid != geteuid() ? "it is owned by another user"
                                          : "other users may write it");
        close(dfd);
        return BENCH_EIO;
    }
    rc = read_key(dfd, file, key, msg, msglen);
    if (rc == BENCH_EUNAVAIL && create) {
        rc = create_key(dir, file, msg, msglen);
        if (rc == 0)
            rc = read_key(dfd, file, key, msg, msglen);
    }
    close(dfd);
    return rc;
}

/* The signature of a snapshot hash (and its size in bytes, when > 0) under key: "hmac-sha256:"
 * and 64 hex digits. Without a size it is what older versions signed. */
static void mac_of(const unsigned char key[KEY_BYTES], const char *hash, double bytes, char *out,
                   size_t len)
{
    /* A domain prefix: the key signs nothing else, and nothing else signed means this. */
    char text[BENCH__HASH_TEXT + 96];
    if (bytes > 0)
        bench__msg(text, sizeof text, "harness program snapshot v2\n%s\n%.0f bytes\n", hash,
                   bytes);
    else
        bench__msg(text, sizeof text, "harness program snapshot v1\n%s\n", hash);
    unsigned char mac[BENCH__SHA256_BYTES];
    bench__hmac_sha256(key, KEY_BYTES, text, strlen(text), mac);
    char hex[2 * BENCH__SHA256_BYTES + 1];
    bench__hex(mac, sizeof mac, hex);
    bench__msg(out, len, "%s%s", MAC_PREFIX, hex);
}

int bench__snapshot_sign(const char *hash, double bytes, char *mac, size_t maclen, char *msg,
                         size_t msglen)
{
    unsigned char key[KEY_BYTES];
    int rc = bench__user_key(true, key, msg, msglen);
    if (rc == 0)
        mac_of(key, hash, bytes, mac, maclen);
    memset(key, 0, sizeof key);
    return rc;
}

/* Whether mac is want, in constant time: how far a guess matches must not show in how long it
 * takes. */
static bool same_mac(const char *mac, const char *want)
{
    size_t n = strlen(want);
    unsigned diff = strlen(mac) != n;
    for (size_t i = 0; i < n && mac[i]; i++)
        diff |= (unsigned)(mac[i] ^ want[i]);
    return diff == 0;
}

int bench__snapshot_verify(const char *hash, double bytes, const char *mac, double *signed_bytes,
                           char *msg, size_t msglen)
{
    *signed_bytes = 0;
    if (!mac[0]) {
        bench__msg(msg, msglen, "%s", "it is not signed (saved by an older version, or written "
                                      "by something else than this harness)");
        return BENCH_EINVAL;
    }
    unsigned char key[KEY_BYTES];
    char why[512];
    int rc = bench__user_key(false, key, why, sizeof why);
    if (rc != 0) {
        bench__msg(msg, msglen, "its signature cannot be checked (%s)", why);
        return BENCH_EINVAL;
    }
    /* Signed with its size (this version), else without (older versions): then the size is
     * not vouched for, and the file is hashed before anything of it is kept. */
    char sized[96] = "", want[96];
    if (bytes > 0)
        mac_of(key, hash, bytes, sized, sizeof sized);
    mac_of(key, hash, 0, want, sizeof want);
    memset(key, 0, sizeof key);
    bool with_size = sized[0] && same_mac(mac, sized);
    if (with_size)
        *signed_bytes = bytes;
    if (!with_size && !same_mac(mac, want)) {
        bench__msg(msg, msglen, "%s", "its signature does not match this user's key (saved by "
                                      "another user or on another machine, or edited)");
        return BENCH_EINVAL;
    }
    return 0;
}

/* ---- opening a snapshot to run ---- */

/* Copies fd to the memory file `to` (< 0: none, only hashed) while hashing, until the end or
 * the deadline; more than max_bytes (> 0) is refused before it is copied. */
static int copy_hashing(int fd, int to, bench__sha256_ctx *h, double max_bytes,
                        int64_t deadline_ns, char *msg, size_t msglen)
{
    static unsigned char buf[1 << 16];
    bool first = true;
    double total = 0;
    for (;;) {
        if (bench__proc_interrupted()) {
            bench__msg(msg, msglen, "interrupted by %s",
                       bench__signal_name(bench__proc_interrupted()));
            return BENCH_EUSAGE;
        }
        if (deadline_ns > 0 && bench__now_ns() > deadline_ns) {
            bench__msg(msg, msglen, "%s", "reading it took too long");
            return BENCH_EIO;
        }
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            bench__msg(msg, msglen, "reading it failed: %s", strerror(errno));
            return BENCH_EIO;
        }
        if (n == 0)
            return 0;
        if (first && (n < SELFMAG || memcmp(buf, ELFMAG, SELFMAG) != 0)) {
            bench__msg(msg, msglen, "%s", "it is not a program this harness saved (not an ELF "
                                          "executable)");
            return BENCH_EINVAL;
        }
        first = false;
        total += (double)n;
        if (max_bytes > 0 && total > max_bytes) {
            bench__msg(msg, msglen, "%s", "it is not the one it measured (its size changed "
                                          "while it was read)");
            return BENCH_EINVAL;
        }
        bench__sha256_update(h, buf, (size_t)n);
        for (ssize_t off = 0; to >= 0 && off < n;) {
            ssize_t w = write(to, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                bench__msg(msg, msglen, "copying it to memory failed: %s",
                           w < 0 ? strerror(errno) : "short write");
                return BENCH_EIO;
            }
            off += w;
        }
    }
}

/* Hashes fd from its start (copying to `to` when >= 0, at most max_bytes when > 0) and
 * compares with hash: 0, or an error with the reason in msg. */
static int hash_is(int fd, int to, const char *hash, double max_bytes, int64_t deadline_ns,
                   char *msg, size_t msglen)
{
    if (lseek(fd, 0, SEEK_SET) != 0) {
        bench__msg(msg, msglen, "reading it failed: %s", strerror(errno));
        return BENCH_EIO;
    }
    bench__sha256_ctx h;
    bench__sha256_init(&h);
    int rc = copy_hashing(fd, to, &h, max_bytes, deadline_ns, msg, msglen);
    if (rc != 0)
        return rc;
    unsigned char digest[BENCH__SHA256_BYTES];
    bench__sha256_final(&h, digest);
    char got[BENCH__HASH_TEXT];
    memcpy(got, "sha256:", 7);
    bench__hex(digest, sizeof digest, got + 7);
    if (strcmp(got, hash) != 0) {
        bench__msg(msg, msglen, "%s", "it is not the one it measured (its bytes changed "
                                      "since the save)");
        return BENCH_EINVAL;
    }
    return 0;
}

int bench__snapshot_open(const char *dir, const char *file, const char *hash, double bytes,
                         int64_t deadline_ns, int *fd_out, char *msg, size_t msglen)
{
    *fd_out = -1;
    char why[128] = "it cannot be examined";
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        bench__msg(msg, msglen, "cannot open the directory: %s", strerror(errno));
        return BENCH_EIO;
    }
    struct stat st;
    if (fstat(dfd, &st) != 0 || bench__unsafe_owner(&st, why, sizeof why)) {
        bench__msg(msg, msglen, "its directory is not safe: %s", why);
        close(dfd);
        return BENCH_EINVAL;
    }
    int fd = openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    int e = errno;
    close(dfd);
    if (fd < 0) {
        bench__msg(msg, msglen, "%s", e == ELOOP  ? "it is a symbolic link: never followed"
                                      : e == ENOENT ? "it is missing"
                                                    : strerror(e));
        return e == ENOENT ? BENCH_EUNAVAIL : BENCH_EINVAL;
    }
    int mfd = -1, rc = BENCH_EINVAL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        bench__msg(msg, msglen, "%s", "it is not a regular file");
        goto done;
    }
    if (bench__unsafe_owner(&st, why, sizeof why)) {
        bench__msg(msg, msglen, "it is not safe: %s", why);
        goto done;
    }
    /* A size the signature vouches for is checked before a byte is read; without one (older
     * saves, --trust-snapshots), the file is hashed first without keeping anything: a huge
     * file is never copied into memory only to find that its hash is not the one saved. */
    if (bytes > 0 && (double)st.st_size != bytes) {
        bench__msg(msg, msglen, "it is not the one it measured (%.0f bytes, not the %.0f saved)",
                   (double)st.st_size, bytes);
        goto done;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    if (bytes <= 0 && (rc = hash_is(fd, -1, hash, 0, deadline_ns, msg, msglen)) != 0)
        goto done;
    mfd = memfd_create("bench-snapshot", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
    if (mfd < 0 && errno == EINVAL)
        mfd = memfd_create("bench-snapshot", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (mfd < 0) {
        bench__msg(msg, msglen, "cannot make a sealed copy of it: memfd_create failed: %s",
                   strerror(errno));
        rc = BENCH_EIO;
        goto done;
    }
    /* Hashed again as it is copied: what runs is what was hashed. */
    if ((rc = hash_is(fd, mfd, hash, bytes > 0 ? bytes : (double)st.st_size, deadline_ns, msg,
                      msglen)) != 0)
        goto done;
    /* Sealed: no one, this process included, can change the copy from now on. */
    if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        bench__msg(msg, msglen, "cannot seal the copy of it: %s", strerror(errno));
        rc = BENCH_EIO;
        goto done;
    }
    /* A descriptor open for writing would make exec fail (ETXTBSY) on older kernels: run it
     * through a read-only one of the same sealed file. */
    char self[64];
    bench__msg(self, sizeof self, "/proc/self/fd/%d", mfd);
    int ro = open(self, O_RDONLY | O_CLOEXEC);
    if (ro < 0) {
        bench__msg(msg, msglen, "cannot reopen the copy of it: %s", strerror(errno));
        rc = BENCH_EIO;
        goto done;
    }
    *fd_out = ro;
    rc = 0;
done:
    if (mfd >= 0)
        close(mfd);
    close(fd);
    return rc;
}
