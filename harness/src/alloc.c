/*
 * alloc.c: allocation statistics (--alloc-stats): the malloc family counted inside the benchmark
 * program, per sample, plus a few per-benchmark facts about the heap and the process.
 *
 * How. This file defines malloc, free, calloc, realloc, posix_memalign, aligned_alloc, memalign,
 * valloc and pvalloc; each forwards to glibc's allocator through its exported __libc_* entry
 * point (no dlsym, so no recursion and no start-up ordering problem) and counts when counting is
 * on. A program that links the harness defines these symbols in its executable (or in
 * libharness.so), so the dynamic linker binds every caller to them, libc's own internal callers
 * (strdup, fopen, ...) included: glibc supports replacing malloc this way. The object is always
 * linked: cli.c refers to bench__alloc_probe_create, defined here. malloc_usable_size is not
 * replaced: the blocks are glibc's own (no header is added), so glibc's answers for them.
 *
 * What is counted, while a benchmark with the probe attached runs (attach to detach):
 *   - allocations, allocated_bytes (metrics, per sample): successful calls of the functions above
 *     inside the sample and the bytes they were asked for (calloc: n * size; realloc: the new
 *     size; a realloc counts as one allocation). realloc(p, 0), which frees, and failed calls
 *     count nothing; free counts nothing here.
 *   - peak_heap_bytes (fact): the highest level of live heap above the level at attach, in usable
 *     bytes (malloc_usable_size: what the allocator really set aside, at least the request).
 *     Setup and teardown of the body count here, as do blocks freed that were allocated before
 *     attach (they lower the level).
 * The counters are global relaxed atomics, so allocations of every thread count.
 *
 * Cost when off: one relaxed load of a global flag and a predictable branch per call.
 *
 * Sanitizers and valgrind. AddressSanitizer (and the thread and memory sanitizers) replace malloc
 * themselves: in such a build the replacement is compiled out and the probe reports
 * "unavailable". Valgrind's memcheck replaces malloc & co. by default in every object, this
 * executable included: these functions are then never called, memcheck sees every block, and
 * the probe, which checks that its malloc is reached, reports "unavailable". With
 * --soname-synonyms=somalloc=nomatch valgrind replaces only libc's functions; the __libc_*
 * entry points are aliases of them (same addresses), so memcheck still sees every block, and
 * the counts work under valgrind too.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"

/* Whether this build may replace malloc: glibc, and no sanitizer that replaces it already. */
#if defined(__SANITIZE_ADDRESS__)
#define ALLOC_REPLACED_BY "AddressSanitizer"
#elif defined(__SANITIZE_THREAD__)
#define ALLOC_REPLACED_BY "ThreadSanitizer"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOC_REPLACED_BY "AddressSanitizer"
#elif __has_feature(thread_sanitizer)
#define ALLOC_REPLACED_BY "ThreadSanitizer"
#elif __has_feature(memory_sanitizer)
#define ALLOC_REPLACED_BY "MemorySanitizer"
#endif
#endif
#if !defined(ALLOC_REPLACED_BY) && defined(__GLIBC__)
#define ALLOC_INTERPOSE 1
#else
#define ALLOC_INTERPOSE 0
#endif

#if ALLOC_INTERPOSE

/* glibc's allocator under its exported internal names (GLIBC_2.2.5). */
extern void *__libc_malloc(size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

/* 1 from attach to detach of a benchmark with the probe. */
static atomic_int counting;
/* Since the program started, counted while `counting` was 1. */
static atomic_uint_fast64_t n_allocs;  /* successful allocations */
static atomic_uint_fast64_t n_bytes;   /* B requested by them */
/* Since attach: live usable bytes above the level at attach, and their highest value. */
static atomic_llong live_bytes; /* B, may go negative (blocks from before attach freed) */
static atomic_llong peak_bytes; /* B */

static inline int is_counting(void)
{
    return __builtin_expect(atomic_load_explicit(&counting, memory_order_relaxed), 0);
}

static void add_live(long long delta)
{
    long long now = atomic_fetch_add_explicit(&live_bytes, delta, memory_order_relaxed) + delta;
    long long peak = atomic_load_explicit(&peak_bytes, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(&peak_bytes, &peak, now,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed)) {
    }
}

static void count_alloc(void *p, size_t requested)
{
    atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&n_bytes, requested, memory_order_relaxed);
    add_live((long long)malloc_usable_size(p));
}

void *malloc(size_t size)
{
    void *p = __libc_malloc(size);
    if (is_counting() && p)
        count_alloc(p, size);
    return p;
}

void free(void *ptr)
{
    if (is_counting() && ptr)
        atomic_fetch_sub_explicit(&live_bytes, (long long)malloc_usable_size(ptr),
                                  memory_order_relaxed);
    __libc_free(ptr);
}

void *calloc(size_t n, size_t size)
{
    /* glibc checks n * size for overflow (NULL, ENOMEM); a success implies it fits. */
    void *p = __libc_calloc(n, size);
    size_t bytes;
    if (is_counting() && p && !__builtin_mul_overflow(n, size, &bytes))
        count_alloc(p, bytes);
    return p;
}

void *realloc(void *ptr, size_t size)
{
    if (!is_counting())
        return __libc_realloc(ptr, size);
    long long old = ptr ? (long long)malloc_usable_size(ptr) : 0;
    void *p = __libc_realloc(ptr, size);
    if (p) {
        /* realloc(NULL, n) is malloc; otherwise the block moved or was resized in place. */
        atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&n_bytes, size, memory_order_relaxed);
        add_live((long long)malloc_usable_size(p) - old);
    } else if (ptr && size == 0) {
        /* glibc frees the block and returns NULL. */
        atomic_fetch_sub_explicit(&live_bytes, old, memory_order_relaxed);
    } /* else it failed and the old block is untouched */
    return p;
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    /* POSIX: a power of two multiple of sizeof(void *); glibc checks the same. */
    if (alignment % sizeof(void *) != 0 || alignment == 0 || (alignment & (alignment - 1)) != 0)
        return EINVAL;
    int saved = errno;
    void *p = __libc_memalign(alignment, size);
    if (!p) {
        errno = saved; /* posix_memalign reports through its result, not errno */
        return ENOMEM;
    }
    *out = p;
    if (is_counting())
        count_alloc(p, size);
    return 0;
}

void *memalign(size_t alignment, size_t size)
{
    void *p = __libc_memalign(alignment, size);
    if (is_counting() && p)
        count_alloc(p, size);
    return p;
}

/* glibc 2.36's aligned_alloc is an alias of memalign, with memalign's checks. */
void *aligned_alloc(size_t alignment, size_t size)
{
    return memalign(alignment, size);
}

void *valloc(size_t size)
{
    void *p = __libc_valloc(size);
    if (is_counting() && p)
        count_alloc(p, size);
    return p;
}

void *pvalloc(size_t size)
{
    void *p = __libc_pvalloc(size);
    if (is_counting() && p)
        count_alloc(p, size);
    return p;
}

/* ---- the probe ---- */

typedef struct alloc_probe {
    uint64_t allocs0; /* counters at the start of the running sample */
    uint64_t bytes0;  /* B */
    struct rusage ru0; /* at attach */
    bool hwm_reset;    /* the RSS high-water mark was reset at attach */
} alloc_probe;

/* Resets the process's peak RSS (VmHWM) to its current RSS (Linux 4.0+). */
static bool reset_hwm(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = write(fd, "5", 1) == 1;
    close(fd);
    return ok;
}

/* VmHWM of /proc/self/status in B, or -1. */
static double read_hwm(void)
{
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *line = strstr(buf, "\nVmHWM:");
    if (!line)
        return -1;
    char *end;
    unsigned long long kb = strtoull(line + 7, &end, 10);
    if (end == line + 7)
        return -1;
    return (double)kb * 1024.0;
}

static int alloc_attach(bench__probe *p, bench__result *r)
{
    alloc_probe *s = p->state;
    if (bench__metric_add(r, "allocations", "allocs", "alloc") < 0 ||
        bench__metric_add(r, "allocated_bytes", "B", "alloc") < 0)
        return 1; /* r is failed with the reason */
    s->hwm_reset = reset_hwm();
    getrusage(RUSAGE_SELF, &s->ru0);
    atomic_store_explicit(&live_bytes, 0, memory_order_relaxed);
    atomic_store_explicit(&peak_bytes, 0, memory_order_relaxed);
    /* Last: the probe's own work above stays out of the counts. */
    atomic_store_explicit(&counting, 1, memory_order_relaxed);
    return 0;
}

static void alloc_start(bench__probe *p)
{
    alloc_probe *s = p->state;
    s->allocs0 = atomic_load_explicit(&n_allocs, memory_order_relaxed);
    s->bytes0 = atomic_load_explicit(&n_bytes, memory_order_relaxed);
}

static void alloc_stop(bench__probe *p, double *values, double *fraction)
{
    alloc_probe *s = p->state;
    values[0] = (double)(atomic_load_explicit(&n_allocs, memory_order_relaxed) - s->allocs0);
    values[1] = (double)(atomic_load_explicit(&n_bytes, memory_order_relaxed) - s->bytes0);
    *fraction = 1.0;
}

static void alloc_detach(bench__probe *p, bench__result *r)
{
    alloc_probe *s = p->state;
    /* First: what follows (reading /proc) allocates nothing, but stays out anyway. */
    atomic_store_explicit(&counting, 0, memory_order_relaxed);
    long long peak = atomic_load_explicit(&peak_bytes, memory_order_relaxed);
    bench__fact_add(r, "peak_heap_bytes", "B", peak > 0 ? (double)peak : 0.0);
    double hwm = s->hwm_reset ? read_hwm() : -1;
    if (hwm >= 0)
        bench__fact_add(r, "max_rss_bytes", "B", hwm);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        bench__fact_add(r, "minor_faults", "faults", (double)(ru.ru_minflt - s->ru0.ru_minflt));
        bench__fact_add(r, "major_faults", "faults", (double)(ru.ru_majflt - s->ru0.ru_majflt));
    }
}

static void alloc_destroy(bench__probe *p)
{
    atomic_store_explicit(&counting, 0, memory_order_relaxed);
    (void)p;
}

/*
 * Whether calls of malloc reach the function above. A tool that replaces malloc by its address
 * (valgrind does, by default, in the main executable too) bypasses it, and every count would be
 * 0. The calls go through volatile pointers so the compiler cannot drop or inline them.
 */
static bool replacement_active(void)
{
    void *(*volatile m)(size_t) = malloc;
    void (*volatile f)(void *) = free;
    uint64_t before = atomic_load_explicit(&n_allocs, memory_order_relaxed);
    atomic_store_explicit(&counting, 1, memory_order_relaxed);
    void *p = m(1);
    atomic_store_explicit(&counting, 0, memory_order_relaxed);
    f(p);
    return atomic_load_explicit(&n_allocs, memory_order_relaxed) != before;
}

int bench__alloc_probe_create(bench__probe **out, char *msg, size_t msglen)
{
    /* One probe per program is enough: the counters are global. */
    static alloc_probe state;
    static bench__probe probe = {
        .name = "alloc",
        .attach = alloc_attach,
        .start = alloc_start,
        .stop = alloc_stop,
        .detach = alloc_detach,
        .state = &state,
        .destroy = alloc_destroy,
    };
    *out = NULL;
    if (!replacement_active()) {
        bench__msg(msg, msglen, "%s", "malloc is replaced by another layer here, so allocations "
                                      "cannot be counted (under valgrind, add "
                                      "--soname-synonyms=somalloc=nomatch to its options)");
        return BENCH_EUNAVAIL;
    }
    if (!reset_hwm()) {
        static bool warned;
        if (!warned)
            fprintf(stderr, "bench: warning: --alloc-stats: /proc/self/clear_refs cannot be "
                            "written, so max_rss_bytes is not reported\n");
        warned = true;
    }
    *out = &probe;
    return 0;
}

#else /* !ALLOC_INTERPOSE */

int bench__alloc_probe_create(bench__probe **out, char *msg, size_t msglen)
{
    *out = NULL;
#ifdef ALLOC_REPLACED_BY
    bench__msg(msg, msglen, "allocation statistics are not available in an %s build (the "
                            "sanitizer replaces malloc itself)", ALLOC_REPLACED_BY);
#else
    bench__msg(msg, msglen, "%s", "allocation statistics need glibc's allocator");
#endif
    return BENCH_EUNAVAIL;
}

#endif /* ALLOC_INTERPOSE */
