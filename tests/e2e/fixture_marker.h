/*
 * fixture_marker.h: what the e2e fixture programs share to play "another build" of themselves.
 * A copy of a fixture program with a marker appended to its file ("E2ESLOW<N>\n", "E2EHANG\n")
 * behaves differently, and keeps doing so when it is copied again as a baseline's program
 * snapshot, while the original run beside it does not. The marker slows a latency-bound chain by
 * exactly N% (its steps are time).
 */
#ifndef FIXTURE_MARKER_H
#define FIXTURE_MARKER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The last bytes of this program's file, NUL-terminated, into tail (room for 33). The marker is
 * text after binary bytes: NULs before it become spaces, so strstr finds it. */
static inline void fixture_tail(char tail[33])
{
    FILE *f = fopen("/proc/self/exe", "rb");
    tail[0] = '\0';
    if (f && fseek(f, -32, SEEK_END) == 0) {
        size_t n = fread(tail, 1, 32, f);
        tail[n] = '\0';
        for (size_t i = 0; i < n; i++)
            if (tail[i] == '\0')
                tail[i] = ' ';
    }
    if (f)
        fclose(f);
}

/* N of the marker "E2ESLOW<N>" in tail, or 0 without one. */
static inline double fixture_slow_percent(const char *tail)
{
    const char *slow = strstr(tail, "E2ESLOW");
    return slow ? atof(slow + 7) : 0.0;
}

/* A latency-bound chain: each step waits for the one before, so time is steps. */
static inline uint64_t fixture_chain(uint64_t x, unsigned steps)
{
    for (unsigned i = 0; i < steps; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

#ifdef HARNESS_BENCH_H
/* A body's timed loop of `steps` chain steps per iteration (needs harness/bench.h first). */
static inline void fixture_chain_loop(bench_t *b, unsigned steps)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = fixture_chain(x, steps);
    }
    bench_black_box(x);
}
#endif

#endif
