/*
 * proc.h: the worker protocol's process side (proc.c): start a worker by exec, talk to it over
 * pipes with deadlines, collect how it ended, and stop every worker when the run is interrupted.
 * Every child the harness starts goes through it: isolated measurement (manager.c, worker.c),
 * the interleaved A/B of two builds (ab.c), calibration runs (calibrate.c), instruction counts
 * under valgrind (instr.c), and the short commands the context runs (git, in sysinfo.c). What a
 * worker says on its channel is measure/protocol.h's (the lines, their writer and reader); how it is
 * started, read with a time limit, killed and reaped is this file's.
 */
#ifndef HARNESS_PROC_H
#define HARNESS_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>


/** The descriptor on which a worker writes its results when its stdout is not the channel. */
#define BENCH__PROC_CHANNEL_FD 3

/** Where the worker's results come from, and where its own stdout goes. */
typedef enum bench__proc_channel {
    BENCH__PROC_STDOUT = 0, /* results on its stdout (another build's --list, git) */
    BENCH__PROC_FD3,        /* results on descriptor 3; its stdout goes to our stderr */
    BENCH__PROC_NONE,       /* no results channel; its stdout is discarded (/dev/null) */
} bench__proc_channel;

/** How a worker ended. */
typedef enum bench__proc_end {
    BENCH__PROC_RUNNING = 0,
    BENCH__PROC_EXITED,    /* exited by itself; code in `code` */
    BENCH__PROC_SIGNALED,  /* killed by a signal it did not expect; signal in `code` */
    BENCH__PROC_TIMED_OUT, /* ran past its deadline and was killed */
    BENCH__PROC_STOPPED,   /* killed by us (interrupt, or its peer failed) */
} bench__proc_end;

/** A started worker. Zeroed means "none"; bench__proc_close on a zeroed one is a no-op. */
typedef struct bench__proc {
    pid_t pid;
    FILE *to;       /* its stdin, when commands were asked for; else NULL */
    int from;       /* read end of its channel; -1: none */
    char buf[4096]; /* bytes read from the channel and not yet returned as lines */
    size_t len;
    bool eof;
    bool in_long;    /* a line longer than buf is being handed out in pieces */
    size_t line_len; /* bytes of the line bench__proc_line returned last, before any cut to the
                        caller's buffer; SIZE_MAX for a piece of a line longer than buf */
    bench__proc_end end;
    int code; /* exit code or signal number, by `end` */
} bench__proc;

/** What to start. */
typedef struct bench__proc_spec {
    const char *path;   /* program to exec (a name without '/' is looked up on PATH); with
                           exec_by_fd only its name in messages */
    char *const *argv;  /* its argv, NULL-terminated (argv[0] included) */
    bench__proc_channel channel;
    bool commands;      /* give it a pipe on stdin (bench__proc_send); else stdin is /dev/null */
    bool quiet;         /* its stderr goes to /dev/null */
    /* Start the program from this open descriptor (fexecve) instead of looking `path` up: the
     * bytes that were checked are the bytes that run (a sealed snapshot copy,
     * bench__snapshot_open). The worker does not inherit the descriptor. */
    bool exec_by_fd;
    int exec_fd;
} bench__proc_spec;

/**
 * Starts a worker. Returns 0; or BENCH_EIO with a one-line reason in msg (pipe or fork failed).
 * An exec failure shows up later as exit code 127.
 */
int bench__proc_start(bench__proc *p, const bench__proc_spec *s, char *msg, size_t msglen);

/**
 * Reads one line of the worker's channel into buf (without the newline; longer lines are cut:
 * p->line_len says how long it was, so a reader can refuse it, or see a NUL inside).
 * Waits at most until deadline_ns (bench__now_ns clock; <= 0: no limit). Returns 1 for a line,
 * 0 at the end of the channel, BENCH_EIO when the deadline passed (the worker is then killed and
 * marked timed out), or BENCH_EUSAGE when the run was interrupted (bench__proc_interrupted).
 */
int bench__proc_line(bench__proc *p, char *buf, size_t len, int64_t deadline_ns);

/** Sends one line to the worker's stdin; 0, or BENCH_EIO when it is gone. */
int bench__proc_send(bench__proc *p, const char *line);

/**
 * Waits for the worker to end (killing it at deadline_ns, <= 0: no limit), fills p->end and
 * p->code, and releases its pipes. Returns p->end.
 */
bench__proc_end bench__proc_wait(bench__proc *p, int64_t deadline_ns);

/** Kills the worker (SIGKILL) if it runs, reaps it and releases its pipes; marks it stopped. */
void bench__proc_kill(bench__proc *p);

/** Describes how a worker ended, e.g. "crashed with signal 11 (SIGSEGV)". */
void bench__proc_describe(const bench__proc *p, double timeout_s, char *buf, size_t len);

/**
 * Makes SIGINT, SIGTERM and SIGHUP interrupt the run instead of killing this process at once:
 * the handler records the signal and kills every live worker; readers then return BENCH_EUSAGE.
 * Also ignores SIGPIPE, so that a closed stdout (`bench | head`) is a write error, not death,
 * and the files asked for are still written. Idempotent.
 */
void bench__proc_interrupts_install(void);
/**
 * Gives SIGINT, SIGTERM and SIGHUP back their default action (they end the process at once),
 * for a stage that never looks at bench__proc_interrupted (benchmarks measured in this very
 * process); bench__proc_interrupts_install takes them again. A signal recorded before stays.
 */
void bench__proc_interrupts_release(void);
/** The signal that interrupted the run, or 0. */
int bench__proc_interrupted(void);

/** The name of a signal, e.g. "SIGSEGV"; "?" for one this file does not know. */
const char *bench__signal_name(int sig);

/** This program's own path (/proc/self/exe resolved); 0 or BENCH_EIO with the reason. */
int bench__proc_self(char *buf, size_t len, char *msg, size_t msglen);

/** The path of program `prog` found on PATH (/usr/bin:/bin when unset) into buf: true, or false
 * when no executable file of that name is there. */
bool bench__proc_which(const char *prog, char *buf, size_t len);

#endif /* HARNESS_PROC_H */
