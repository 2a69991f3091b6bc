/*
 * fixture_counters.c: benchmarks whose perf_event counts are known in advance, for
 * test_counters.py (built as e2e_counters).
 *
 * - counters/touch_pages: every iteration maps a fresh anonymous region of PAGES pages (huge pages
 *   off for it), writes one byte per page and unmaps it: exactly PAGES page faults per iteration.
 * - counters/ping_pong: every iteration sends a byte through a pipe to a helper thread and waits
 *   for the echo on a second pipe. The read blocks until the helper has run, so the benchmark's
 *   thread leaves the CPU at least once per iteration: context-switches >= 1 per iteration, even
 *   with idle CPUs (a bare sched_yield() switches nothing when no other thread is runnable).
 * - counters/spin: about 20 µs of register arithmetic per iteration, no system call: task-clock
 *   per iteration is the wall time per iteration.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <harness/bench.h>

enum { PAGES = 16 };

BENCH_FN(counters, touch_pages)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = PAGES * page;
    BENCH_ITER(b) {
        unsigned char *p =
            mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            bench_fail(b, "mmap of %zu bytes failed", size);
            continue;
        }
        /* One 4 KiB page per fault: no transparent huge page may cover the region. */
        madvise(p, size, MADV_NOHUGEPAGE);
        for (size_t i = 0; i < PAGES; i++)
            p[i * page] = 1;
        bench_clobber();
        munmap(p, size);
    }
}

/* The helper: echoes every byte from fds[0] to fds[1] until fds[0] is closed. */
static void *echo(void *arg)
{
    const int *fds = arg;
    char c;
    while (read(fds[0], &c, 1) == 1)
        if (write(fds[1], &c, 1) != 1)
            break;
    return NULL;
}

BENCH_FN(counters, ping_pong)
{
    int to[2], from[2];
    if (pipe(to) != 0) {
        bench_fail(b, "pipe failed");
        return;
    }
    if (pipe(from) != 0) {
        close(to[0]);
        close(to[1]);
        bench_fail(b, "pipe failed");
        return;
    }
    int fds[2] = {to[0], from[1]};
    pthread_t helper;
    bool started = pthread_create(&helper, NULL, echo, fds) == 0;
    if (!started) {
        bench_fail(b, "pthread_create failed");
    } else {
        BENCH_ITER(b) {
            char c = 'x';
            /* The read blocks until the helper ran: this thread is switched out. */
            if (write(to[1], &c, 1) != 1 || read(from[0], &c, 1) != 1)
                bench_fail(b, "pipe round trip failed");
        }
    }
    close(to[1]); /* the helper's read returns 0: it exits */
    if (started)
        pthread_join(helper, NULL);
    close(to[0]);
    close(from[0]);
    close(from[1]);
}

BENCH_FN(counters, spin)
{
    BENCH_ITER(b) {
        uint64_t x = bench_black_box((uint64_t)88172645463325252u);
        for (int i = 0; i < 20000; i++) { /* xorshift64: a dependent chain, ~3 cycles a step */
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        bench_black_box(x);
    }
}
