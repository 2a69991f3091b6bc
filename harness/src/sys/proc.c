/*
 * proc.c: starting, reading, timing out and reaping worker processes (see proc.h).
 *
 * Invariants: every started worker is in the live table until it is reaped, so an interrupt
 * (SIGINT, SIGTERM, SIGHUP) can kill all of them from the signal handler with async-signal-safe
 * calls only; a worker dies with its parent (PR_SET_PDEATHSIG), so a manager killed with SIGKILL
 * leaves no orphan measuring on; reads never block past their deadline (poll).
 */
#define _GNU_SOURCE /* pipe2, environ */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base.h"
#include "sys/clock.h"
#include "sys/proc.h"

#define MAX_LIVE 64

static volatile pid_t live[MAX_LIVE];
static volatile sig_atomic_t interrupted;

static void live_add(pid_t pid)
{
    for (size_t i = 0; i < MAX_LIVE; i++)
        if (live[i] == 0) {
            live[i] = pid;
            return;
        }
}

static void live_remove(pid_t pid)
{
    for (size_t i = 0; i < MAX_LIVE; i++)
        if (live[i] == pid)
            live[i] = 0;
}

static void on_interrupt(int sig)
{
    if (!interrupted)
        interrupted = sig;
    for (size_t i = 0; i < MAX_LIVE; i++)
        if (live[i] > 0)
            kill(live[i], SIGKILL);
}

static const int interrupt_signals[] = {SIGINT, SIGTERM, SIGHUP};

void bench__proc_interrupts_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: a blocked poll or waitpid returns EINTR and the caller sees the flag. */
    for (size_t i = 0; i < sizeof interrupt_signals / sizeof interrupt_signals[0]; i++)
        sigaction(interrupt_signals[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

void bench__proc_interrupts_release(void)
{
    for (size_t i = 0; i < sizeof interrupt_signals / sizeof interrupt_signals[0]; i++)
        signal(interrupt_signals[i], SIG_DFL);
}

int bench__proc_interrupted(void)
{
    return interrupted;
}

int bench__proc_self(char *buf, size_t len, char *msg, size_t msglen)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0 || (size_t)n >= len - 1) {
        bench__msg(msg, msglen, "cannot find this program's path (/proc/self/exe): %s",
                   n < 0 ? strerror(errno) : "path too long");
        return BENCH_EIO;
    }
    buf[n] = '\0';
    return 0;
}

/* In the child: puts `fd` on `target` (clearing close-on-exec) or dies. */
static void child_dup(int fd, int target)
{
    if (fd == target) {
        fcntl(fd, F_SETFD, 0);
        return;
    }
    if (dup2(fd, target) < 0)
        _exit(127);
}

/* Closes whichever ends of the two pipes were opened (-1: not). */
static void close_pipes(const int down[2], const int up[2])
{
    for (int i = 0; i < 2; i++) {
        if (down[i] >= 0)
            close(down[i]);
        if (up[i] >= 0)
            close(up[i]);
    }
}

int bench__proc_start(bench__proc *p, const bench__proc_spec *s, char *msg, size_t msglen)
{
    memset(p, 0, sizeof *p);
    p->from = -1;
    int down[2] = {-1, -1}, up[2] = {-1, -1};
    if ((s->commands && pipe2(down, O_CLOEXEC) != 0) ||
        (s->channel != BENCH__PROC_NONE && pipe2(up, O_CLOEXEC) != 0)) {
        bench__msg(msg, msglen, "cannot start a worker: pipe failed: %s", strerror(errno));
        close_pipes(down, up);
        return BENCH_EIO;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        bench__msg(msg, msglen, "cannot start a worker: fork failed: %s", strerror(errno));
        close_pipes(down, up);
        return BENCH_EIO;
    }
    if (pid == 0) {
        /* A worker must not outlive its manager: a killed manager takes its workers along. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        /* The program's descriptor goes out of the way of the ones set up below first. */
        int exec_fd = s->exec_by_fd ? fcntl(s->exec_fd, F_DUPFD_CLOEXEC, 10) : -1;
        if (s->exec_by_fd && exec_fd < 0)
            _exit(127);
        int null = open("/dev/null", O_RDWR);
        if (s->commands)
            child_dup(down[0], STDIN_FILENO);
        else if (null >= 0)
            dup2(null, STDIN_FILENO);
        if (s->channel == BENCH__PROC_STDOUT) {
            child_dup(up[1], STDOUT_FILENO);
        } else if (s->channel == BENCH__PROC_FD3) {
            /* Whatever the benchmarks print never mixes with the manager's report. */
            child_dup(up[1], BENCH__PROC_CHANNEL_FD);
            dup2(STDERR_FILENO, STDOUT_FILENO);
        } else if (null >= 0) {
            dup2(null, STDOUT_FILENO);
        }
        if (s->quiet && null >= 0)
            dup2(null, STDERR_FILENO);
        if (s->exec_by_fd)
            fexecve(exec_fd, s->argv, environ);
        else if (strchr(s->path, '/'))
            execv(s->path, s->argv);
        else
            execvp(s->path, s->argv); /* a bare name ("git", "valgrind") is looked up on PATH */
        bench__errf("cannot run %s: %s\n", s->path, strerror(errno));
        _exit(127);
    }
    live_add(pid);
    p->pid = pid;
    if (s->commands) {
        close(down[0]);
        p->to = fdopen(down[1], "w");
        if (!p->to)
            close(down[1]);
    }
    if (s->channel != BENCH__PROC_NONE) {
        close(up[1]);
        p->from = up[0];
    }
    if (s->commands && !p->to) {
        bench__proc_kill(p);
        bench__msg(msg, msglen, "%s", "cannot start a worker: out of memory");
        return BENCH_EIO;
    }
    return 0;
}

/* Moves one line out of p->buf into out; true when there was one. */
static bool take_line(bench__proc *p, char *out, size_t len, bool at_eof)
{
    char *nl = memchr(p->buf, '\n', p->len);
    size_t n;
    bool piece = p->in_long; /* the rest of a line whose start was handed out */
    if (nl)
        n = (size_t)(nl - p->buf);
    else if (at_eof && p->len > 0)
        n = p->len;
    else if (p->len == sizeof p->buf)
        n = p->len; /* a line longer than the buffer: hand out its start */
    else
        return false;
    p->in_long = !nl && !at_eof;
    p->line_len = piece || p->in_long ? SIZE_MAX : n;
    size_t copy = n < len - 1 ? n : len - 1;
    memcpy(out, p->buf, copy);
    out[copy] = '\0';
    size_t used = nl ? n + 1 : n;
    memmove(p->buf, p->buf + used, p->len - used);
    p->len -= used;
    return true;
}

int bench__proc_line(bench__proc *p, char *out, size_t len, int64_t deadline_ns)
{
    for (;;) {
        if (take_line(p, out, len, p->eof))
            return 1;
        if (p->eof || p->from < 0)
            return 0;
        if (interrupted)
            return BENCH_EUSAGE;
        int wait_ms = -1;
        if (deadline_ns > 0) {
            int64_t left = deadline_ns - bench__now_ns();
            if (left <= 0) {
                bench__proc_kill(p);
                p->end = BENCH__PROC_TIMED_OUT;
                return BENCH_EIO;
            }
            wait_ms = left / 1000000 > 60000 ? 60000 : (int)(left / 1000000) + 1;
        }
        struct pollfd pfd = {.fd = p->from, .events = POLLIN};
        int rc = poll(&pfd, 1, wait_ms);
        if (rc < 0 && errno != EINTR)
            return 0;
        if (rc <= 0)
            continue;
        ssize_t got = read(p->from, p->buf + p->len, sizeof p->buf - p->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            p->eof = true;
        else
            p->len += (size_t)got;
    }
}

int bench__proc_send(bench__proc *p, const char *line)
{
    if (!p->to || fputs(line, p->to) < 0 || fputc('\n', p->to) < 0 || fflush(p->to) != 0)
        return BENCH_EIO;
    return 0;
}

static void release(bench__proc *p)
{
    if (p->to)
        fclose(p->to);
    if (p->from >= 0)
        close(p->from);
    p->to = NULL;
    p->from = -1;
}

static void record_status(bench__proc *p, int status)
{
    if (p->end == BENCH__PROC_RUNNING) {
        if (WIFSIGNALED(status)) {
            p->end = BENCH__PROC_SIGNALED;
            p->code = WTERMSIG(status);
        } else {
            p->end = BENCH__PROC_EXITED;
            p->code = WEXITSTATUS(status);
        }
    }
    live_remove(p->pid);
    p->pid = 0;
}

bench__proc_end bench__proc_wait(bench__proc *p, int64_t deadline_ns)
{
    /* Close our end of its stdin first: a worker waiting for commands sees the end. */
    if (p->to) {
        fclose(p->to);
        p->to = NULL;
    }
    while (p->pid > 0) {
        int status = 0;
        pid_t w = waitpid(p->pid, &status, WNOHANG);
        if (w == p->pid) {
            record_status(p, status);
            break;
        }
        if (w < 0 && errno != EINTR) {
            live_remove(p->pid);
            p->pid = 0;
            if (p->end == BENCH__PROC_RUNNING)
                p->end = BENCH__PROC_STOPPED;
            break;
        }
        if (interrupted) {
            bench__proc_kill(p);
            break;
        }
        if (deadline_ns > 0 && bench__now_ns() >= deadline_ns) {
            bench__proc_kill(p);
            p->end = BENCH__PROC_TIMED_OUT;
            break;
        }
        usleep(1000);
    }
    release(p);
    return p->end;
}

void bench__proc_kill(bench__proc *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        int status = 0;
        while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (p->end == BENCH__PROC_RUNNING)
            p->end = BENCH__PROC_STOPPED;
        live_remove(p->pid);
        p->pid = 0;
    }
    release(p);
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGABRT:
        return "SIGABRT";
    case SIGKILL:
        return "SIGKILL";
    case SIGTERM:
        return "SIGTERM";
    case SIGINT:
        return "SIGINT";
    case SIGPIPE:
        return "SIGPIPE";
    case SIGXCPU:
        return "SIGXCPU";
    case SIGXFSZ:
        return "SIGXFSZ";
    case SIGTRAP:
        return "SIGTRAP";
    case SIGSYS:
        return "SIGSYS";
    default:
        return "?";
    }
}

void bench__proc_describe(const bench__proc *p, double timeout_s, char *buf, size_t len)
{
    switch (p->end) {
    case BENCH__PROC_EXITED:
        bench__msg(buf, len, "exited with code %d", p->code);
        return;
    case BENCH__PROC_SIGNALED:
        bench__msg(buf, len, "crashed with signal %d (%s)", p->code, signal_name(p->code));
        return;
    case BENCH__PROC_TIMED_OUT:
        bench__msg(buf, len, "timed out after %g s", timeout_s);
        return;
    case BENCH__PROC_STOPPED:
        bench__msg(buf, len, "%s", "stopped");
        return;
    case BENCH__PROC_RUNNING:
        bench__msg(buf, len, "%s", "running");
        return;
    }
}

const char *bench__signal_name(int sig)
{
    return signal_name(sig);
}

bool bench__proc_which(const char *prog, char *buf, size_t len)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    const char *p = path;
    while (*p) {
        size_t n = strcspn(p, ":");
        bench__msg(buf, len, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", prog);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return true;
        p += n;
        if (*p == ':')
            p++;
    }
    return false;
}
