/*
 * fixture_reliability.c: e2e_reliability, the program test_reliability.py drives to check what a
 * run does when its surroundings misbehave: a baseline directory someone else wrote, a baseline
 * merged from two programs, an old build that never finishes its setup, a benchmark that leaves
 * a process running in the background, a signal after the last worker ended.
 *
 * Like e2e_fixture's cmp/chain, s/work is slower by N% when the program's file ends with the
 * marker "E2ESLOW<N>\n": a copy with that appended is "a slower build", and stays so when it is
 * copied again as a baseline's snapshot. A copy ending with "E2EHANG\n" never finishes the setup
 * of s/work while E2E_HANG_SETUP is set: an old build that blocks. The other behaviours are off
 * unless their environment variable asks for them, so every benchmark runs plainly by default.
 * cold/first is a benchmark whose first call in each process is 200 times as slow as the others
 * (E2E_COLD_FIRST=1); spread/pid one whose processes differ by up to 1.5x (E2E_SPREAD=1).
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <harness/bench.h>

#include "fixture_marker.h"

BENCH_GROUP(s, .warm_up_time = 0.02, .measurement_time = 0.2);

BENCH_FN(s, work)
{
    char tail[33];
    fixture_tail(tail);
    double pct = fixture_slow_percent(tail);
    if (getenv("E2E_HANG_SETUP") && strstr(tail, "E2EHANG"))
        for (;;)
            pause(); /* an old build whose setup never ends */
    unsigned steps = (unsigned)(2000.0 * (1.0 + pct / 100.0));
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = fixture_chain(x, steps);
    }
    bench_black_box(x);
}

BENCH_FN(s, work2)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = fixture_chain(x, 500);
    }
    bench_black_box(x);
}

/*
 * The setup starts a process that outlives the worker: `sleep` in the background, as a benchmark
 * that starts a server might, for E2E_BACKGROUND_SLEEP seconds; its process id is appended to the
 * file E2E_BACKGROUND_PIDS so the test can stop it. It inherits whatever the worker did not mark
 * close-on-exec.
 */
BENCH_GROUP(background, .warm_up_time = 0.01, .measurement_time = 0.05);

BENCH_FN(background, sleeper)
{
    const char *secs = getenv("E2E_BACKGROUND_SLEEP"), *pids = getenv("E2E_BACKGROUND_PIDS");
    if (secs && pids) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "sleep %d >/dev/null 2>&1 & echo $! >> '%s'", atoi(secs), pids);
        if (system(cmd) != 0)
            bench_fail(b, "could not start the background process");
    }
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = bench_black_box(x * 3 + 1);
    }
    bench_black_box(x);
}

/*
 * With E2E_TERM_MANAGER set, the worker leaves behind a process that waits until the manager
 * has reaped the worker (its /proc entry is gone) and then sends the manager SIGTERM: a signal
 * that arrives after the last worker ended, while the manager analyses, compares and writes.
 * The process closes every descriptor first, so it holds no pipe of the run.
 */
BENCH_GROUP(sig, .warm_up_time = 0.01, .measurement_time = 0.05);

BENCH_FN(sig, term_manager)
{
    if (getenv("E2E_TERM_MANAGER")) {
        pid_t worker = getpid(), manager = getppid();
        pid_t child = fork();
        if (child == 0) {
            if (fork() != 0)
                _exit(0);
            for (int fd = 0; fd < 1024; fd++)
                close(fd);
            char proc[64];
            snprintf(proc, sizeof proc, "/proc/%ld", (long)worker);
            for (int i = 0; i < 60000 && access(proc, F_OK) == 0; i++)
                usleep(500);
            kill(manager, SIGTERM);
            _exit(0);
        }
        if (child > 0)
            waitpid(child, NULL, 0);
    }
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = bench_black_box(x * 3 + 1);
    }
    bench_black_box(x);
}

/* Spins until `ns` nanoseconds of the monotonic clock have passed: a fixed wall time, whatever
 * the machine's speed. */
static void spin_ns(int64_t ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((int64_t)(t.tv_sec - t0.tv_sec) * 1000000000 + (t.tv_nsec - t0.tv_nsec) < ns);
}

/* With E2E_COLD_FIRST set, each iteration spins 0.2 ms, and the first in the process 40 ms: a
 * body whose first call pays for page faults, lazy binding and cold caches (200 times: so far
 * apart that a busy machine's preemption of a warm iteration cannot bring them together). Set
 * to "fast", the iterations after the first only read the clock (tens of ns). */
BENCH_GROUP(cold, .warm_up_time = 0.01, .measurement_time = 0.05);

BENCH_FN(cold, first)
{
    static bool warm;
    const char *cold = getenv("E2E_COLD_FIRST");
    int64_t steady = cold && strcmp(cold, "fast") == 0 ? 0 : 200000;
    BENCH_ITER(b) {
        if (cold)
            spin_ns(warm ? steady : 40000000);
        warm = true;
    }
}

/* With E2E_SPREAD set, each iteration spins 20 us times 1 + u / 2, u in [0, 1) a multiplicative
 * hash of the process id (Knuth's: consecutive ids land spread evenly over [0, 1)): processes
 * that differ by up to 1.5x (a log sd near 0.12), a spread between processes and no two speed
 * groups. Unset, every process spins 20 us: a steady benchmark. */
BENCH_GROUP(spread, .warm_up_time = 0.01, .measurement_time = 0.1);

BENCH_FN(spread, pid)
{
    double k = 1.0;
    if (getenv("E2E_SPREAD"))
        k += (double)(((uint32_t)getpid() * 2654435761u) >> 22) / 2048.0;
    int64_t ns = (int64_t)(20000.0 * k);
    BENCH_ITER(b) {
        spin_ns(ns);
    }
}
