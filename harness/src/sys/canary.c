/*
 * canary.c: drift canaries, four short fixed probes of the machine saved with every baseline and
 * measured again by every comparison with it, so that a comparison can say how the machine
 * itself changed since the save, in words, and not take that drift for a change of the code.
 *
 * The probes, each about 0.15 s: a dependent multiply-add chain (core clock and latency), eight
 * independent floating-point multiply-add streams (arithmetic throughput, which a busy SMT
 * sibling steals), repeated reads of a 256 KiB buffer (L2-sized data) and of a buffer four times
 * the largest cache some source vouches for (64 MiB when none does), at least 64 MiB and at most
 * 1 GiB (memory bandwidth, which other tenants of the socket share; see
 * bench__canary_memory_plan). Each is read in five processes one after another (see
 * BENCH__CANARY_PROCS), each reading the median time per unit of work over 21 repetitions of about
 * 1 ms (see REPS); the value is the median of the five, and the five say how far the readings
 * move from one process to the next, which a comparison must exceed before it calls the machine
 * changed. Only ratios between two runs on one machine mean anything. BENCH_CANARY_QUICK, a
 * testing aid, keeps every step but reads 3 repetitions and the 64 MiB floor (bench__canary_quick).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base.h"
#include "stats/stats.h"
#include "sys/canary.h"
#include "sys/clock.h"
#include "sys/context.h"

const char *const bench__canary_names[BENCH__NCANARIES] = {"latency_chain", "compute",
                                                           "l2_read", "memory_read"};
const char *const bench__canary_words[BENCH__NCANARIES] = {
    "dependent arithmetic (a latency chain)", "arithmetic throughput", "reads of L2-sized data",
    "reads from memory"};

/*
 * Many short repetitions, not a few long ones. With two other runnable jobs per core (load 6 on
 * 2 CPUs) every 25 ms repetition was interrupted and the old five-repetition median swung by
 * 30-90% between two runs a minute apart. A 1 ms repetition often runs whole, so the median of
 * 101 of them is steady (0.2% sd for the chain and compute probes over 8 runs at load 3) yet
 * still moves when most repetitions are interrupted, as the benchmarks' own per-process medians
 * do: the canaries are read as the speed a process gets, which is what the benchmarks see. (A
 * low quantile was steadier still, but blind to a load that slowed every benchmark by 75%.)
 *
 * Yet one process is not enough: on a quiet 16-vCPU GPU host, the L2 probe read 16-17 ns/KiB in
 * some processes and 24-28 in others (steady within each, whatever the CPU it was pinned to), the
 * latency chain moved 6% and memory 12% from one process to the next, so a baseline saved and
 * compared seconds apart warned "reads of L2-sized data 65.0% slower". So the 101 repetitions
 * became five processes of 21, and only a drift beyond the spread of both runs' processes is the
 * machine's (bench__canaries_drift).
 */
#define REPS 21
#define QUICK_REPS 3 /* with BENCH_CANARY_QUICK */
#define REP_NS 1e6   /* one repetition's target length */

/*
 * BENCH_CANARY_QUICK (docs/cli.md): for tests of behaviour, whose runs save and compare baselines
 * by the dozen. On a 2-vCPU VM of a host whose L3 is 480 MiB the memory buffer is 1 GiB: at load
 * 11-17 touching it took 2.1-3.7 s and each of the five forks of the process that holds it
 * 0.2-0.5 s more, 7.6-8.3 s a measurement in all (the repetitions are 0.42 s of it on an idle
 * machine). Every step still runs (five processes, four probes, the drift test), on the 64 MiB
 * floor and 3 repetitions: 0.7-1.4 s at the same load, noisier readings, never for a real run.
 */
bool bench__canary_quick(void)
{
    const char *v = getenv("BENCH_CANARY_QUICK");
    return v && *v && strcmp(v, "0") != 0;
}

/* Each kernel runs `units` units of its work and returns a value the compiler must keep. */
typedef uint64_t (*kernel_fn)(uint64_t units, void *arg);

static uint64_t chain_kernel(uint64_t units, void *arg)
{
    (void)arg;
    uint64_t x = 1;
    for (uint64_t i = 0; i < units; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x)); /* keeps every step, in order */
    }
    return x;
}

static uint64_t compute_kernel(uint64_t units, void *arg)
{
    (void)arg;
    double a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (uint64_t i = 0; i < units; i += 8) {
        /* Eight independent streams: without -ffast-math the compiler may neither merge nor
         * reorder them, and the result is used below, so the loop stays as written. */
        for (int k = 0; k < 8; k++)
            a[k] = a[k] * 0.999999 + 1e-7;
    }
    double s = 0;
    for (int k = 0; k < 8; k++)
        s += a[k];
    uint64_t r;
    memcpy(&r, &s, sizeof r);
    return r;
}

typedef struct buffer {
    const uint64_t *w;
    size_t words;
    size_t pos; /* where the next repetition reads on: the buffer is read round and round, so a
                 * short repetition of the memory one still reads memory, not cache */
} buffer;

/* units: KiB read (the buffer over and over). */
static uint64_t read_kernel(uint64_t units, void *arg)
{
    buffer *b = arg;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t pos = b->pos;
    for (uint64_t u = 0; u < units; u++) {
        for (size_t k = 0; k < 128; k += 4) { /* 128 words = 1 KiB */
            s0 += b->w[pos + k];
            s1 += b->w[pos + k + 1];
            s2 += b->w[pos + k + 2];
            s3 += b->w[pos + k + 3];
        }
        pos += 128;
        if (pos >= b->words)
            pos = 0;
    }
    b->pos = pos;
    return s0 ^ s1 ^ s2 ^ s3;
}

/* The median over REPS repetitions of ns per unit, after the untimed ones that size a
 * repetition. */
static double measure(kernel_fn fn, void *arg)
{
    volatile uint64_t sink = 0;
    uint64_t units = 1024;
    /* Grow the repetition to about REP_NS (this also warms it up). */
    for (;;) {
        int64_t t0 = bench__now_ns();
        sink ^= fn(units, arg);
        double ns = (double)(bench__now_ns() - t0);
        if (ns >= REP_NS / 4 || units >= (UINT64_C(1) << 40)) {
            units = (uint64_t)fmax(1.0, (double)units * REP_NS / fmax(ns, 1.0));
            break;
        }
        units *= 4;
    }
    double v[REPS];
    int reps = bench__canary_quick() ? QUICK_REPS : REPS;
    for (int r = 0; r < reps; r++) {
        int64_t t0 = bench__now_ns();
        sink ^= fn(units, arg);
        v[r] = (double)(bench__now_ns() - t0) / (double)units;
    }
    (void)sink;
    return bench__median_inplace(v, (size_t)reps);
}

size_t bench__canary_memory_bytes(size_t llc_bytes)
{
    const size_t lo = (size_t)64 << 20, hi = (size_t)1 << 30;
    size_t want = llc_bytes > hi / 4 ? hi : 4 * llc_bytes;
    if (want < lo)
        want = lo;
    return want & ~(((size_t)1 << 20) - 1); /* whole MiB */
}

/*
 * Why the memory probe's buffer follows the last-level cache: its reads must come from memory
 * in every run, or the probe measures whichever share of the buffer the cache happened to keep.
 * The first design read a fixed 64 MiB, which fits in the L3 of many server CPUs (105 MB and
 * more per socket); how much of it stayed there then depended on what else the cache held and
 * where the process ran. That is the likely cause of a comparison 30 s after a save, on a quiet
 * 16-core GPU host, reading this probe "98.6% slower": cache speed in one run, memory speed in
 * the next (on the development VM a 4 MiB buffer reads at 51 ns/KiB and a 64 MiB one at 113,
 * the same factor of two). Four times the largest cache
 * instance (one socket's L3, or one chiplet's) leaves at most a quarter of the buffer in the
 * cache, whatever its replacement policy: STREAM's rule. The largest instance, not the sum, since
 * one thread's reads fill its own cache only. The size follows only a figure some source vouches
 * for (sysinfo.c: the OS's, or libcpuid's when plausible); glibc's sysconf L3 comes from the same
 * CPUID leaves that gave a 2-vCPU guest an L3 of 508 MiB, so without one the default is used,
 * and the context says so.
 */
size_t bench__canary_memory_plan(int llc_kib, const char *llc_source, char *why, size_t len)
{
    if (bench__canary_quick()) {
        snprintf(why, len, "the 64 MiB floor, as BENCH_CANARY_QUICK asks (a testing aid)");
        return bench__canary_memory_bytes(0);
    }
    if (llc_kib <= 0) {
        snprintf(why, len, "the default, as no source vouches for a cache size");
        return bench__canary_memory_bytes(0);
    }
    size_t llc = (size_t)llc_kib << 10, bytes = bench__canary_memory_bytes(llc);
    snprintf(why, len, "4x the largest cache (%d KiB, from %s)%s", llc_kib,
             llc_source ? llc_source : "unknown",
             bytes == bench__canary_memory_bytes(0) && llc < ((size_t)16 << 20)
                 ? ", raised to the 64 MiB floor"
             : bytes == ((size_t)1 << 30) ? ", capped at 1 GiB" : "");
    return bytes;
}

/* All four probes, once each, in this process, each buffer read on from its pos. */
static void measure_all(double out[BENCH__NCANARIES], buffer bufs[2])
{
    out[0] = measure(chain_kernel, NULL);
    out[1] = measure(compute_kernel, NULL);
    for (int k = 0; k < 2; k++)
        out[2 + k] = measure(read_kernel, &bufs[k]);
}

/* What a process sends back: its readings, and where its memory probe stopped reading. */
typedef struct reading {
    double v[BENCH__NCANARIES];
    size_t memory_pos;
} reading;

/* All four probes in a forked process of their own, as each of a benchmark's processes is one
 * of its own; the buffers are the parent's, read in place. 0, or -1 when no process ran them. */
static int measure_in_child(reading *out, buffer bufs[2])
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        reading r;
        memset(&r, 0, sizeof r);
        measure_all(r.v, bufs);
        r.memory_pos = bufs[1].pos;
        _exit(write(fd[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    while (got < sizeof *out) {
        ssize_t r = read(fd[0], (char *)out + got, sizeof *out - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    bool ok = got == sizeof *out && out->memory_pos < bufs[1].words && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0;
    return ok ? 0 : -1;
}

int bench__canaries_measure(bench__canaries *out, size_t memory_bytes)
{
    memset(out, 0, sizeof *out);
    size_t sizes[2] = {(size_t)256 << 10, memory_bytes};
    buffer bufs[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
    uint64_t *w[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        w[k] = malloc(sizes[k]);
        while (!w[k] && k == 1 && sizes[k] > ((size_t)64 << 20)) /* short of memory: smaller */
            w[k] = malloc(sizes[k] /= 2);
        if (!w[k]) {
            free(w[0]);
            return BENCH_ENOMEM;
        }
        for (size_t i = 0; i < sizes[k] / sizeof *w[k]; i++)
            w[k][i] = i * 0x9e3779b97f4a7c15ULL; /* touch every page before timing */
        bufs[k] = (buffer){w[k], sizes[k] / sizeof *w[k], 0};
    }
    /* Each process's memory probe reads on from where the one before it stopped, not from the
     * start: a child's reads leave no trace in the parent's buffer position, and with every
     * process reading the same first 200-odd MiB, the second to fifth read what the first had
     * just brought into a large last-level cache (480 MiB on one development VM): cache speed
     * in four processes, memory speed in one. Read round the buffer this way, a byte is read
     * again only after the whole buffer, four times the largest cache, has been read since. */
    reading r;
    for (int p = 0; p < BENCH__CANARY_PROCS; p++) {
        out->memory_start[out->n] = bufs[1].pos * sizeof *bufs[1].w;
        if (measure_in_child(&r, bufs) != 0) {
            if (out->n > 0)
                break;
            measure_all(r.v, bufs); /* no process could be started: this one's reading */
            r.memory_pos = bufs[1].pos;
            p = BENCH__CANARY_PROCS;
        }
        bufs[1].pos = r.memory_pos;
        for (int k = 0; k < BENCH__NCANARIES; k++)
            out->samples[k][out->n] = r.v[k];
        out->n++;
    }
    for (int k = 0; k < BENCH__NCANARIES; k++) {
        double s[BENCH__CANARY_PROCS];
        memcpy(s, out->samples[k], sizeof s);
        out->v[k] = bench__median_inplace(s, (size_t)out->n);
    }
    free(w[0]);
    free(w[1]);
    return 0;
}

/* The fastest and slowest of a run's readings of canary k, relative to their median and placed
 * around its value (both the value itself when the run kept only that). */
static void reading_range(const bench__canaries *c, int k, double *lo, double *hi)
{
    *lo = *hi = c->v[k];
    if (c->n < 1 || c->n > BENCH__CANARY_PROCS)
        return;
    double s[BENCH__CANARY_PROCS];
    memcpy(s, c->samples[k], sizeof s);
    double least = s[0], most = s[0];
    for (int i = 1; i < c->n; i++) {
        least = fmin(least, s[i]);
        most = fmax(most, s[i]);
    }
    double med = bench__median_inplace(s, (size_t)c->n);
    if (!(med > 0) || !(least > 0) || !isfinite(most))
        return;
    *lo = c->v[k] * least / med;
    *hi = c->v[k] * most / med;
}

int bench__canaries_drift(const bench__canaries *now, const bench__canaries *then,
                          double threshold, double drift[BENCH__NCANARIES],
                          bool beyond[BENCH__NCANARIES], char *words, size_t len)
{
    int n = 0;
    size_t used = 0;
    words[0] = '\0';
    for (int k = 0; k < BENCH__NCANARIES; k++) {
        drift[k] = NAN;
        beyond[k] = false;
        double a = now->v[k], b = then->v[k];
        if (!(a > 0) || !(b > 0) || !isfinite(a) || !isfinite(b))
            continue;
        drift[k] = a / b - 1.0;
        double alo, ahi, blo, bhi;
        reading_range(now, k, &alo, &ahi);
        reading_range(then, k, &blo, &bhi);
        beyond[k] = fabs(drift[k]) > threshold && (alo > bhi || ahi < blo);
        if (!beyond[k])
            continue;
        n++;
        int m = snprintf(words + used, used < len ? len - used : 0, "%s%s %.1f%% %s",
                         used ? ", " : "", bench__canary_words[k], fabs(100.0 * drift[k]),
                         drift[k] >= 0 ? "slower" : "faster");
        if (m > 0)
            used += (size_t)m;
    }
    return n;
}

double bench__canaries_shared_drift(const double drift[BENCH__NCANARIES])
{
    double least = NAN;
    for (int k = 0; k < BENCH__NCANARIES; k++)
        if (isfinite(drift[k]) && drift[k] > -1.0)
            least = fmin(least, fabs(log1p(drift[k]))); /* fmin passes over the first NAN */
    return least;
}
