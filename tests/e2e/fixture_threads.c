/*
 * fixture_threads.c: threaded benchmarks (.threads) for e2e/threads. A contended lock (a pthread
 * mutex around a one-line critical section) on 1, 2 and 4 threads (an axis of its grid): with
 * more threads than the machine's CPUs, or on CPUs that share the lock's cache line, each
 * iteration waits for the others, so the team's time per iteration grows with the threads.
 * Independent work on 1 and 8 threads (spin/chain), whose total rate the CPUs bound. An
 * uncontended body whose threads each count one hit per iteration (the counter sums over
 * threads). And threads that misbehave: a follower that fails, one that skips, one that leaves
 * its loop early, a batched loop, too many threads; none may hang the run.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "harness/bench.h"
#include "fixture_marker.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t shared;

/* The thread counts are a grid axis: lock/contended/threads=1, =2 and =4. */
BENCH_FN(lock, contended, .args = "threads=1,2,4", .warm_up_time = 0.05, .measurement_time = 0.2)
{
    BENCH_ITER(b) {
        pthread_mutex_lock(&lock);
        shared++;
        pthread_mutex_unlock(&lock);
    }
    bench_black_box(shared);
}

/* Independent work on more threads than most machines have CPUs: the team's rate cannot pass
 * the CPUs' (e2e/threads checks the total against one thread's rate). */
BENCH_FN(spin, chain, .args = "threads=1,8", .warm_up_time = 0.05, .measurement_time = 0.3)
{
    fixture_chain_loop(b, 500);
}

BENCH_FN(threads, counted, .threads = 2, .counters = "hits", .warm_up_time = 0.02,
         .measurement_time = 0.05)
{
    uint64_t x = (uint64_t)bench_thread_index(b) + 1;
    bench_set_elements(b, 1);
    BENCH_ITER(b) {
        x = fixture_chain(x, 1);
        bench_counter(b, "hits", 1, BENCH_COUNTER_PER_ITERATION);
    }
    bench_black_box(x);
}

BENCH_FN(threads, follower_fails, .threads = 3, .warm_up_time = 0.02, .measurement_time = 0.05)
{
    uint64_t n = 0;
    BENCH_ITER(b) {
        if (bench_thread_index(b) == 2 && ++n == 2) /* its second iteration, under any load */
            bench_fail(b, "thread %d gave up", bench_thread_index(b));
    }
}

BENCH_FN(threads, follower_skips, .threads = 2, .warm_up_time = 0.02, .measurement_time = 0.05)
{
    if (bench_thread_index(b) == 1)
        bench_skip(b, "thread %d has nothing to do", bench_thread_index(b));
    BENCH_ITER(b) {
        bench_clobber();
    }
}

BENCH_FN(threads, follower_leaves, .threads = 2, .warm_up_time = 0.02, .measurement_time = 0.05)
{
    uint64_t n = 0;
    BENCH_ITER(b) {
        if (bench_thread_index(b) == 1 && ++n == 2)
            return;
    }
}

BENCH_FN(threads, leader_leaves, .threads = 2, .warm_up_time = 0.02, .measurement_time = 0.05)
{
    uint64_t n = 0;
    BENCH_ITER(b) {
        if (bench_thread_index(b) == 0 && ++n == 2)
            return;
    }
}

/* Thread 1 never reaches a timed loop. */
BENCH_FN(threads, follower_no_loop, .threads = 2, .warm_up_time = 0.02, .measurement_time = 0.05)
{
    if (bench_thread_index(b) == 1)
        return;
    BENCH_ITER(b) {
        bench_clobber();
    }
}

BENCH_FN(threads, batched, .threads = 2, .warm_up_time = 0.02, .measurement_time = 0.05)
{
    BENCH_ITER_BATCHED(b, n, 16) {
        BENCH_TIMED(b) {
            for (uint64_t i = 0; i < n; i++)
                bench_clobber();
        }
    }
}

BENCH_FN(threads, too_many, .threads = 2000)
{
    BENCH_ITER(b) {
        bench_clobber();
    }
}
