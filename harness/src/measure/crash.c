/*
 * crash.c: turns a crash inside a benchmark into one line naming the benchmark and exit code 3.
 *
 * The handler is async-signal-safe: it only writes a message prepared before the benchmark ran
 * (or the program's name, set before anything ran, and fixed text) and calls _exit. It runs on
 * an alternate stack so a stack overflow is reported too.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "measure/run.h"

static char crash_msg[1536]; /* the name, the id and the text */
static size_t crash_len;
static volatile sig_atomic_t crash_armed;

void bench__crash_set_current(const char *id)
{
    crash_armed = 0;
    if (id) {
        bench__msg(crash_msg, sizeof crash_msg, "%s: benchmark '%s' crashed with signal ",
                   bench__prog_name(), id);
        crash_len = strlen(crash_msg);
        crash_armed = 1;
    }
}

static void append(char *buf, size_t *len, size_t cap, const char *s)
{
    while (*s && *len + 1 < cap)
        buf[(*len)++] = *s++;
}

static void on_crash(int sig)
{
    char buf[sizeof crash_msg + 16]; /* and the signal's name */
    size_t len = 0;
    if (crash_armed) {
        memcpy(buf, crash_msg, crash_len);
        len = crash_len;
    } else {
        /* The name sits in a static buffer since the program started (bench_main). */
        append(buf, &len, sizeof buf, bench__prog_name());
        append(buf, &len, sizeof buf, ": crashed outside any benchmark with signal ");
    }
    const char *name = sig == SIGSEGV   ? "SIGSEGV"
                       : sig == SIGBUS  ? "SIGBUS"
                       : sig == SIGFPE  ? "SIGFPE"
                       : sig == SIGILL  ? "SIGILL"
                       : sig == SIGABRT ? "SIGABRT"
                                        : "?";
    append(buf, &len, sizeof buf, name);
    append(buf, &len, sizeof buf, "\n");
    ssize_t w = write(STDERR_FILENO, buf, len);
    (void)w;
    _exit(BENCH_EXIT_FAILED);
}

void *bench__crash_thread_stack(void)
{
    /* An alternate stack is per thread: a follower of a threaded body (team.c) needs its own for
     * its stack overflow to be reported like the main thread's (bench__crash_handlers_install). */
    size_t size = 64 * 1024;
    void *alt = malloc(size);
    if (alt) {
        stack_t ss = {.ss_sp = alt, .ss_size = size, .ss_flags = 0};
        if (sigaltstack(&ss, NULL) != 0) {
            free(alt);
            alt = NULL;
        }
    }
    return alt;
}

void bench__crash_thread_stack_free(void *stack)
{
    if (!stack)
        return;
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    free(stack);
}

void bench__crash_handlers_install(void)
{
    static void *alt; /* the calling thread's, for the process's life */
    if (!alt)
        alt = bench__crash_thread_stack();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}
