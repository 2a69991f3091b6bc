/*
 * files.c: how the harness touches the file system: writing output files (results JSON,
 * baselines, Google Benchmark JSON), opening files to read without hanging, and the lock that
 * makes a baseline's read-modify-write one step. docs/results-format.md describes what users see.
 *
 * Writing. A regular file (or a name that does not exist yet) is replaced atomically: a temporary
 * file NAME.tmp.PID.XXXXXX in the same directory, fsync, mode 0644, rename, fsync of the
 * directory; a reader sees the old file or the complete new one. Anything else is never renamed
 * over (as root that would turn /dev/null into a regular file): a character device or a FIFO
 * (/dev/null, /dev/stdout, a pipe) is written directly, a directory, block device or socket is
 * refused, and a symbolic link to a regular file replaces the file it points to, keeping the
 * link. A name that is this process's stdout or stderr is written through that descriptor.
 *
 * Temporary files never outlive the process: while one exists its name is in a small registry,
 * and a handler for the terminating signals (installed only while a write is in progress, and
 * only for signals left at their default action) removes it with async-signal-safe calls and
 * re-raises. SIGXFSZ (a file-size limit) is
 * ignored during the write, so the write fails with EFBIG and is cleaned up like any failure.
 * For what no handler can catch (SIGKILL, a power cut), each save first removes temporary files
 * in its directory whose process is gone and that are older than BENCH__STALE_TMP_S: those of
 * results and baselines, of program snapshots (NAME.program.tmp.PID.XXXXXX, snapshot.c), the
 * snapshot copies older versions named .NAME.program.PID.tmp, and a history database being made
 * (NAME.new-PID and its SQLite -journal, -wal and -shm, history.c). Only regular files this user
 * owns are removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "store/store.h"
#include "sys/proc.h"

/* ---- the registry of live temporary files ---- */

#define MAX_TMP 4

/* Read by the signal handler: a slot's name is complete before `live` is set. */
static char tmp_names[MAX_TMP][PATH_MAX];
static volatile sig_atomic_t tmp_live[MAX_TMP];

/* Terminating signals whose default action would leave a temporary file behind. */
static const int cleanup_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM,
                                      SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF};
#define NSIG_CLEANUP (sizeof cleanup_signals / sizeof cleanup_signals[0])
static struct sigaction saved_actions[NSIG_CLEANUP];
static bool handler_installed[NSIG_CLEANUP];
static struct sigaction saved_xfsz;

static void unlink_live_tmps(void)
{
    for (int i = 0; i < MAX_TMP; i++)
        if (tmp_live[i])
            unlink(tmp_names[i]); /* async-signal-safe */
}

/* Removes the temporary files, restores the signal's default action and re-raises it: the
 * process ends as it would have without this handler. */
static void cleanup_handler(int sig)
{
    int saved_errno = errno;
    unlink_live_tmps();
    for (size_t i = 0; i < NSIG_CLEANUP; i++)
        if (cleanup_signals[i] == sig && handler_installed[i]) {
            sigaction(sig, &saved_actions[i], NULL);
            handler_installed[i] = false;
        }
    raise(sig); /* blocked until this handler returns, then delivered with the default action */
    errno = saved_errno;
}

/* How many guards are in place: only the outermost installs and restores. */
static int guard_depth;

/* Installs the cleanup handler for every terminating signal that is not ignored, and ignores
 * SIGXFSZ (a write beyond RLIMIT_FSIZE then fails with EFBIG instead of killing). */
static void guard_signals(void)
{
    if (guard_depth++ > 0)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cleanup_handler;
    sigfillset(&sa.sa_mask); /* nothing interrupts the cleanup */
    for (size_t i = 0; i < NSIG_CLEANUP; i++) {
        struct sigaction old;
        handler_installed[i] = false;
        /* Only where the signal would kill: an ignored one stays ignored (nohup, a shell's
         * background job), and one the program handles (a profiler's SIGPROF) is its own. */
        if (sigaction(cleanup_signals[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            continue;
        saved_actions[i] = old;
        handler_installed[i] = sigaction(cleanup_signals[i], &sa, NULL) == 0;
    }
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ign, &saved_xfsz);
}

static void unguard_signals(void)
{
    if (guard_depth == 0 || --guard_depth > 0)
        return;
    for (size_t i = 0; i < NSIG_CLEANUP; i++)
        if (handler_installed[i]) {
            sigaction(cleanup_signals[i], &saved_actions[i], NULL);
            handler_installed[i] = false;
        }
    sigaction(SIGXFSZ, &saved_xfsz, NULL);
}

void bench__tmp_guard(void)
{
    guard_signals();
}

void bench__tmp_unguard(void)
{
    unguard_signals();
}

int bench__tmp_register(const char *name)
{
    size_t len = strlen(name);
    if (len >= PATH_MAX)
        return -1;
    for (int i = 0; i < MAX_TMP; i++)
        if (!tmp_live[i]) {
            memcpy(tmp_names[i], name, len + 1);
            tmp_live[i] = 1;
            return i;
        }
    return -1;
}

void bench__tmp_unregister(int slot)
{
    if (slot >= 0 && slot < MAX_TMP)
        tmp_live[slot] = 0;
}

/* ---- stale temporary files ---- */

/* Whether the part of name before `at` ends with suffix. */
static bool ends_at(const char *name, const char *at, const char *suffix)
{
    size_t k = strlen(suffix);
    return (size_t)(at - name) >= k && memcmp(at - k, suffix, k) == 0;
}

/* The process id in a temporary file's name "ANY.tmp.PID.XXXXXX", or 0 when it is not one. */
static long tmp_name_pid(const char *name)
{
    size_t n = strlen(name);
    if (n < 14)
        return 0;
    const char *suffix = name + n - 6;
    for (int i = 0; i < 6; i++)
        if (!((suffix[i] >= 'a' && suffix[i] <= 'z') || (suffix[i] >= 'A' && suffix[i] <= 'Z') ||
              (suffix[i] >= '0' && suffix[i] <= '9')))
            return 0;
    if (suffix[-1] != '.')
        return 0;
    const char *d = suffix - 1; /* the dot before XXXXXX */
    const char *p = d;
    while (p > name && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p == d || d - p > 10 || !ends_at(name, p, ".tmp."))
        return 0;
    long pid = strtol(p, NULL, 10);
    return pid > 0 ? pid : 0;
}

/* The process id in a program snapshot's temporary file of older versions, ".NAME.program.PID.tmp",
 * or 0 when it is not one. */
static long legacy_snapshot_pid(const char *name)
{
    size_t n = strlen(name);
    if (n < 15 || name[0] != '.' || strcmp(name + n - 4, ".tmp") != 0)
        return 0;
    const char *end = name + n - 4, *p = end;
    while (p > name && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p == end || end - p > 10 || !ends_at(name, p, ".program."))
        return 0;
    long pid = strtol(p, NULL, 10);
    return pid > 0 ? pid : 0;
}

/* The process id in the history `base` being made, "BASE.new-PID" and SQLite's "-journal",
 * "-wal" or "-shm" after it, or 0 when it is not one (always 0 without a base: a file of
 * another history, or of no history, that merely ends so is never taken for one). */
static long history_tmp_pid(const char *name, const char *base)
{
    const char *rest = base ? bench__skip_prefix(name, base) : NULL;
    const char *digits = rest ? bench__skip_prefix(rest, ".new-") : NULL;
    if (!digits)
        return 0;
    static const char *const sides[] = {"", "-journal", "-wal", "-shm"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        size_t k = strlen(sides[i]);
        if (n <= k || strcmp(name + n - k, sides[i]) != 0)
            continue;
        const char *end = name + n - k, *p = end;
        while (p > name && p[-1] >= '0' && p[-1] <= '9')
            p--;
        if (p == end || end - p > 10 || p != digits)
            continue;
        long pid = strtol(p, NULL, 10);
        return pid > 0 ? pid : 0;
    }
    return 0;
}

/* bench__tmp_sweep, and the files of the history named history_base being made (or none). */
static void sweep(const char *dir, const char *history_base, double older_than_s)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    int dfd = dirfd(d);
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid = tmp_name_pid(e->d_name);
        if (pid == 0)
            pid = legacy_snapshot_pid(e->d_name);
        if (pid == 0)
            pid = history_tmp_pid(e->d_name, history_base);
        if (pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* its process may still be writing it */
        struct stat st;
        /* Another user's file is theirs to remove, whatever its name says. */
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid() || difftime(now, st.st_mtime) < older_than_s)
            continue;
        unlinkat(dfd, e->d_name, 0);
    }
    closedir(d);
}

/* ---- writing ---- */

/* Writes all of buf to fd; 0 or -1 with errno. */
static int write_all(int fd, const char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        off += (size_t)w;
    }
    return 0;
}

/* The directory part of path, in buf ("." for a bare name). */
static void dir_of(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        bench__msg(buf, len, "%s", ".");
    else if (slash == path)
        bench__msg(buf, len, "%s", "/");
    else
        bench__msg(buf, len, "%.*s", (int)(slash - path), path);
}

void bench__tmp_sweep(const char *dir, double older_than_s)
{
    sweep(dir, NULL, older_than_s);
}

void bench__tmp_sweep_beside(const char *path, double older_than_s)
{
    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    const char *slash = strrchr(path, '/');
    sweep(dir, slash ? slash + 1 : path, older_than_s);
}

/* What a file gets: n bytes, then a newline for text (none for bytes). */
typedef struct payload {
    const char *p;
    size_t n;
    bool newline;
} payload;

/* Writes the payload to fd; 0, or -1 with errno. */
static int write_payload(int fd, const payload *d)
{
    if (write_all(fd, d->p, d->n) != 0 || (d->newline && write_all(fd, "\n", 1) != 0))
        return -1;
    return 0;
}

/* Replaces the regular file (or new name) `path` atomically; `shown` names it in messages. */
static int write_replacing(const char *path, const char *shown, const payload *text, char *msg,
                           size_t msglen)
{
    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    bench__tmp_sweep(dir, BENCH__STALE_TMP_S);
    size_t tlen = strlen(path) + 32;
    char *tmp = malloc(tlen);
    if (!tmp) {
        bench__msg(msg, msglen, "%s: out of memory", shown);
        return BENCH_ENOMEM;
    }
    snprintf(tmp, tlen, "%s.tmp.%ld.XXXXXX", path, (long)getpid());
    /* The handler must be in place before the file exists, and the name registered at once. */
    guard_signals();
    int slot = -1, rc = BENCH_EIO;
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    int fd = mkstemp(tmp);
    int mkstemp_errno = errno;
    if (fd >= 0)
        slot = bench__tmp_register(tmp);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        bench__msg(msg, msglen, "%s: cannot create a temporary file: %s", shown,
                   strerror(mkstemp_errno));
        goto done;
    }
    if (write_payload(fd, text) != 0 || fsync(fd) != 0) {
        bench__msg(msg, msglen, "%s: write failed: %s", shown, strerror(errno));
        goto fail;
    }
    if (fchmod(fd, 0644) != 0 || close(fd) != 0) {
        fd = -1;
        bench__msg(msg, msglen, "%s: close failed: %s", shown, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        bench__msg(msg, msglen, "%s: rename failed: %s", shown, strerror(errno));
        goto fail;
    }
    bench__tmp_unregister(slot);
    slot = -1;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd); /* make the rename durable; failure here cannot lose the old or new file */
        close(dfd);
    }
    rc = 0;
    goto done;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
done:
    bench__tmp_unregister(slot);
    unguard_signals();
    free(tmp);
    return rc;
}

/* Whether st is the file behind this process's descriptor fd. */
static bool same_file_as_fd(const struct stat *st, int fd)
{
    struct stat fs;
    return fstat(fd, &fs) == 0 && fs.st_dev == st->st_dev && fs.st_ino == st->st_ino;
}

/* Writes text and a newline to fd, with SIGPIPE ignored (a closed reader is an error, EPIPE). */
static int write_to_fd(int fd, const char *path, const payload *text, char *msg, size_t msglen)
{
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old);
    int rc = 0;
    if (write_payload(fd, text) != 0) {
        bench__msg(msg, msglen, "%s: write failed: %s", path, strerror(errno));
        rc = BENCH_EIO;
    }
    sigaction(SIGPIPE, &old, NULL);
    return rc;
}

/* A target that is not replaced: written in place (character device, FIFO, our own stdout). */
static int write_direct(const char *path, const struct stat *st, const payload *text, char *msg,
                        size_t msglen)
{
    if (same_file_as_fd(st, STDOUT_FILENO) || same_file_as_fd(st, STDERR_FILENO)) {
        /* Our own stdout (e.g. /dev/stdout redirected to a file): append after what the
         * reporters wrote instead of reopening (and truncating) it. */
        int fd = same_file_as_fd(st, STDOUT_FILENO) ? STDOUT_FILENO : STDERR_FILENO;
        fflush(fd == STDOUT_FILENO ? stdout : stderr);
        return write_to_fd(fd, path, text, msg, msglen);
    }
    if (S_ISDIR(st->st_mode)) {
        bench__msg(msg, msglen, "%s: is a directory", path);
        return BENCH_EIO;
    }
    if (!S_ISCHR(st->st_mode) && !S_ISFIFO(st->st_mode)) {
        bench__msg(msg, msglen, "%s: not a regular file, character device or FIFO: refusing to "
                                "write to it", path);
        return BENCH_EIO;
    }
    /* A FIFO's open waits for a reader, as a shell's redirection does. */
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        bench__msg(msg, msglen, "%s: cannot open: %s", path, strerror(errno));
        return BENCH_EIO;
    }
    struct stat now;
    if (fstat(fd, &now) != 0 || (!S_ISCHR(now.st_mode) && !S_ISFIFO(now.st_mode))) {
        close(fd); /* replaced between the check and the open */
        bench__msg(msg, msglen, "%s: changed while it was opened", path);
        return BENCH_EIO;
    }
    int rc = write_to_fd(fd, path, text, msg, msglen);
    if (close(fd) != 0 && rc == 0) {
        bench__msg(msg, msglen, "%s: close failed: %s", path, strerror(errno));
        rc = BENCH_EIO;
    }
    return rc;
}

/* bench__write_atomic and bench__write_atomic_bytes: the payload to path. */
static int write_atomic(const char *path, const payload *text, char *msg, size_t msglen)
{
    struct stat lst, st;
    if (lstat(path, &lst) != 0) {
        if (errno != ENOENT) {
            bench__msg(msg, msglen, "%s: %s", path, strerror(errno));
            return BENCH_EIO;
        }
        return write_replacing(path, path, text, msg, msglen); /* a new file */
    }
    if (S_ISLNK(lst.st_mode)) {
        if (stat(path, &st) != 0) {
            bench__msg(msg, msglen, "%s: a symbolic link to nothing (%s): not followed", path,
                       strerror(errno));
            return BENCH_EIO;
        }
        if (S_ISREG(st.st_mode) && !same_file_as_fd(&st, STDOUT_FILENO) &&
            !same_file_as_fd(&st, STDERR_FILENO)) {
            /* Replace the file the link points to, in its own directory; the link stays. */
            char *real = realpath(path, NULL);
            if (!real) {
                bench__msg(msg, msglen, "%s: %s", path, strerror(errno));
                return BENCH_EIO;
            }
            int rc = write_replacing(real, path, text, msg, msglen);
            free(real);
            return rc;
        }
        return write_direct(path, &st, text, msg, msglen);
    }
    if (S_ISREG(lst.st_mode) && !same_file_as_fd(&lst, STDOUT_FILENO) &&
        !same_file_as_fd(&lst, STDERR_FILENO))
        return write_replacing(path, path, text, msg, msglen);
    return write_direct(path, &lst, text, msg, msglen);
}

int bench__write_atomic(const char *path, const char *text, char *msg, size_t msglen)
{
    payload d = {text, strlen(text), true};
    return write_atomic(path, &d, msg, msglen);
}

int bench__write_atomic_bytes(const char *path, const void *data, size_t len, char *msg,
                              size_t msglen)
{
    payload d = {data, len, false};
    return write_atomic(path, &d, msg, msglen);
}

int bench__make_dirs(const char *top, char *msg, size_t msglen)
{
    char dir[PATH_MAX];
    bench__msg(dir, sizeof dir, "%s", top);
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

/* ---- reading ---- */

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* Opens path with flags (O_NONBLOCK among them: a FIFO must not wait for its other end) and
 * refuses anything but a regular file ("refusing to `verb` it"). */
static int open_checked(const char *path, int flags, const char *verb, int *fd_out,
                        struct stat *st, char *msg, size_t msglen)
{
    *fd_out = -1;
    int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
    struct stat lst;
    if (fd < 0 && errno == ENXIO && lstat(path, &lst) == 0) {
        /* A FIFO without a reader, opened to write. */
        bench__msg(msg, msglen, "%s: not a regular file (%s): refusing to %s it", path,
                   file_kind(lst.st_mode), verb);
        return BENCH_EIO;
    }
    if (fd < 0 && errno == ELOOP && (flags & O_NOFOLLOW)) {
        bench__msg(msg, msglen, "%s: a symbolic link: refusing to %s it", path, verb);
        return BENCH_EIO;
    }
    if (fd < 0) {
        bench__msg(msg, msglen, "%s: cannot open: %s", path, strerror(errno));
        return BENCH_EIO;
    }
    if (fstat(fd, st) != 0) {
        bench__msg(msg, msglen, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return BENCH_EIO;
    }
    if (!S_ISREG(st->st_mode)) {
        bench__msg(msg, msglen, "%s: not a regular file (%s): refusing to %s it", path,
                   file_kind(st->st_mode), verb);
        close(fd);
        return BENCH_EIO;
    }
    *fd_out = fd;
    return 0;
}

int bench__open_append(const char *path, int *fd_out, char *msg, size_t msglen)
{
    struct stat st;
    int rc = open_checked(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, "write", fd_out, &st,
                          msg, msglen);
    /* A file another user made (in a shared folder, before this run) is theirs: not appended
     * to. (Group or others' write bits on this user's own file are not checked here.) */
    if (rc == 0 && st.st_uid != geteuid()) {
        bench__msg(msg, msglen, "%s: owned by another user (uid %u): refusing to write it", path,
                   (unsigned)st.st_uid);
        close(*fd_out);
        *fd_out = -1;
        return BENCH_EIO;
    }
    return rc;
}

int bench__open_regular(const char *path, int *fd_out, struct stat *st, char *msg, size_t msglen)
{
    int fd, rc = open_checked(path, O_RDONLY, "read", &fd, st, msg, msglen);
    if (rc != 0)
        return rc;
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    *fd_out = fd;
    return 0;
}

/* ---- folders other users may not touch ---- */

const char *bench__unsafe_owner(const struct stat *st, char *buf, size_t len)
{
    if (st->st_uid != geteuid() && st->st_uid != 0) {
        bench__msg(buf, len, "it is owned by another user (uid %ld)", (long)st->st_uid);
        return buf;
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        bench__msg(buf, len, "other users may write it (mode %04o)",
                   (unsigned)(st->st_mode & 07777));
        return buf;
    }
    return NULL;
}

int bench__dir_pin(int at, const char *dir, int flags, int *fd_out, char *pinned, size_t plen,
                   char *why, size_t whylen)
{
    *fd_out = -1;
    int fd = openat(at, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
    if (fd < 0) {
        int e = errno;
        struct stat lst;
        /* O_DIRECTORY | O_NOFOLLOW on a link says ENOTDIR. */
        if (e == ENOTDIR && (flags & O_NOFOLLOW) &&
            fstatat(at, dir, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode))
            e = ELOOP;
        bench__msg(why, whylen, "%s", e == ELOOP ? "it is a symbolic link: never followed"
                                                 : strerror(e));
        return e == ENOENT ? BENCH_EUNAVAIL : BENCH_EIO;
    }
    struct stat st, via;
    if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
        bench__msg(why, whylen, "%s", "it is not a folder");
        close(fd);
        return BENCH_EIO;
    }
    if (bench__unsafe_owner(&st, why, whylen)) {
        close(fd);
        return BENCH_EINVAL;
    }
    /* The name under /proc/self/fd is the open folder itself, whatever is renamed later; a
     * system without /proc gives no such name, and nothing is written. */
    bench__msg(pinned, plen, "/proc/self/fd/%d", fd);
    if (stat(pinned, &via) != 0 || via.st_dev != st.st_dev || via.st_ino != st.st_ino) {
        bench__msg(why, whylen, "%s", "/proc/self/fd does not name its open folders (no /proc)");
        close(fd);
        return BENCH_EIO;
    }
    *fd_out = fd;
    return 0;
}

/* ---- the baseline lock ---- */

/* Seconds to wait for another run's lock before giving up: $BENCH_LOCK_TIMEOUT or the default. */
static double lock_timeout_s(void)
{
    const char *env = getenv("BENCH_LOCK_TIMEOUT");
    if (env && *env) {
        char *end;
        double s = strtod(env, &end);
        if (*end == '\0' && s >= 0 && s <= 86400)
            return s;
    }
    return BENCH__LOCK_TIMEOUT_S;
}

int bench__lock_acquire(const char *path, bool wait, int *fd_out, char *msg, size_t msglen)
{
    *fd_out = -1;
    size_t len = strlen(path) + 8;
    char *lock = malloc(len);
    if (!lock) {
        bench__msg(msg, msglen, "%s: out of memory", path);
        return BENCH_ENOMEM;
    }
    snprintf(lock, len, "%s.lock", path);
    int rc = BENCH_EIO;
    int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
    struct stat st;
    if (fd < 0) {
        bench__msg(msg, msglen, "%s: cannot open the lock file: %s", lock, strerror(errno));
        goto done;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        bench__msg(msg, msglen, "%s: the lock file is not a regular file", lock);
        goto done;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            bench__msg(msg, msglen, "%s: cannot lock: %s", lock, strerror(errno));
            goto done;
        }
        if (!wait) {
            bench__msg(msg, msglen, "%s: held by another run", lock);
            rc = BENCH_EUNAVAIL;
            goto done;
        }
        double limit = lock_timeout_s();
        bench__errf("waiting for lock held by another run (%s), at most %.0f s\n",
                    lock, limit);
        struct timespec t0, now, nap = {0, 20 * 1000 * 1000};
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                break;
            if (bench__proc_interrupted()) {
                bench__msg(msg, msglen, "%s: interrupted while waiting for the lock", lock);
                goto done;
            }
            if (errno != EWOULDBLOCK && errno != EINTR) {
                bench__msg(msg, msglen, "%s: cannot lock: %s", lock, strerror(errno));
                goto done;
            }
            clock_gettime(CLOCK_MONOTONIC, &now);
            double waited = (double)(now.tv_sec - t0.tv_sec) +
                            (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
            if (waited >= limit) {
                bench__msg(msg, msglen, "%s: another run held the lock for %.0f s; giving up "
                                        "(BENCH_LOCK_TIMEOUT sets the wait)", lock, waited);
                goto done;
            }
            nanosleep(&nap, NULL);
        }
    }
    *fd_out = fd;
    fd = -1;
    rc = 0;
done:
    if (fd >= 0)
        close(fd);
    free(lock);
    return rc;
}

void bench__lock_release(int fd)
{
    if (fd >= 0)
        close(fd); /* closing the last descriptor releases the flock */
}
