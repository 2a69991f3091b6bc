/*
 * alloc_shim.c: libharness_alloc.so, the allocation counter behind --alloc-stats
 * (docs/allocations.md). It is never linked into a program: `bench --alloc-stats` re-executes
 * itself with this library first in LD_PRELOAD (alloc.c), so its malloc family comes before
 * every other definition, and each function forwards to the next definition in the lookup
 * order (dlsym RTLD_NEXT): glibc's allocator, or jemalloc or tcmalloc when they are preloaded
 * too, or a sanitizer's. Blocks are always the next allocator's own, so free, realloc and
 * malloc_usable_size stay consistent whatever allocator the program uses.
 *
 * Counted while the library turns counting on (a benchmark with the probe attached):
 * successful malloc, calloc, realloc, reallocarray, posix_memalign, aligned_alloc, memalign,
 * valloc and pvalloc and the bytes they asked for; the live heap in usable bytes and its peak.
 * The counters are relaxed atomics (every thread counts). Cost when off: one relaxed load and a
 * predictable branch per call. The aligned functions go through the next posix_memalign, which
 * every allocator has (jemalloc has no pvalloc), so a block is never allocated by one allocator
 * and freed by another.
 *
 * Start-up: dlsym may itself allocate before the forwarding pointers are known; those few
 * allocations come from a small static arena, are never freed, and never reach the next
 * allocator. Built without sanitizer instrumentation, whatever the project's options.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes/alloc_shim.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- the next allocator ---- */

typedef struct next_fns {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    size_t (*usable)(void *);
} next_fns;

static next_fns next;
static atomic_int resolved; /* 1 once `next` is complete */
static __thread __attribute__((tls_model("initial-exec"))) int resolving; /* in dlsym */

/* ---- the start-up arena ---- */

#define ARENA_BYTES (64 * 1024)
static _Alignas(64) unsigned char arena[ARENA_BYTES];
static atomic_size_t arena_used;

/* Each arena block has its size in the 16 bytes before it (for realloc). */
static void *arena_alloc(size_t n)
{
    size_t need = (n + 15) / 16 * 16 + 16;
    size_t at = atomic_fetch_add_explicit(&arena_used, need, memory_order_relaxed);
    if (n > ARENA_BYTES || at + need > ARENA_BYTES) {
        errno = ENOMEM;
        return NULL;
    }
    memcpy(arena + at, &n, sizeof n);
    return arena + at + 16;
}

static int in_arena(const void *p)
{
    return (const unsigned char *)p >= arena && (const unsigned char *)p < arena + ARENA_BYTES;
}

static size_t arena_size(const void *p)
{
    size_t n;
    memcpy(&n, (const unsigned char *)p - 16, sizeof n);
    return n;
}

static void resolve(void)
{
    if (atomic_load_explicit(&resolved, memory_order_acquire))
        return;
    resolving = 1;
    next_fns n;
    *(void **)&n.malloc = dlsym(RTLD_NEXT, "malloc");
    *(void **)&n.free = dlsym(RTLD_NEXT, "free");
    *(void **)&n.calloc = dlsym(RTLD_NEXT, "calloc");
    *(void **)&n.realloc = dlsym(RTLD_NEXT, "realloc");
    *(void **)&n.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    *(void **)&n.usable = dlsym(RTLD_NEXT, "malloc_usable_size");
    resolving = 0;
    if (!n.malloc || !n.free || !n.calloc || !n.realloc || !n.posix_memalign) {
        static const char why[] = "libharness_alloc.so: no next malloc to forward to\n";
        if (write(STDERR_FILENO, why, sizeof why - 1) < 0) {
        }
        _exit(127);
    }
    next = n; /* every thread computes the same values: a race here is harmless */
    atomic_store_explicit(&resolved, 1, memory_order_release);
}

/* Whether this call must be served from the arena (dlsym is resolving on this thread). */
static int early(void)
{
    if (atomic_load_explicit(&resolved, memory_order_acquire))
        return 0;
    if (resolving)
        return 1;
    resolve();
    return 0;
}

/* ---- counters ---- */

static atomic_int counting;
static atomic_uint_fast64_t n_allocs; /* successful allocations while counting */
static atomic_uint_fast64_t n_bytes;  /* B they asked for */
static atomic_llong live_bytes;       /* B, usable, above the level at reset_live */
static atomic_llong peak_bytes;       /* B */

static inline int is_counting(void)
{
    return __builtin_expect(atomic_load_explicit(&counting, memory_order_relaxed), 0);
}

static size_t usable(void *p)
{
    if (in_arena(p))
        return arena_size(p);
    return next.usable ? next.usable(p) : 0;
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
    add_live((long long)usable(p));
}

/* ---- the malloc family ---- */

EXPORT void *malloc(size_t size)
{
    if (early())
        return arena_alloc(size);
    void *p = next.malloc(size);
    if (is_counting() && p)
        count_alloc(p, size);
    return p;
}

EXPORT void free(void *ptr)
{
    if (!ptr || in_arena(ptr))
        return; /* arena blocks are never returned */
    if (early())
        return;
    if (is_counting())
        atomic_fetch_sub_explicit(&live_bytes, (long long)usable(ptr), memory_order_relaxed);
    next.free(ptr);
}

EXPORT void *calloc(size_t n, size_t size)
{
    size_t bytes;
    if (early()) {
        if (__builtin_mul_overflow(n, size, &bytes)) {
            errno = ENOMEM;
            return NULL;
        }
        void *p = arena_alloc(bytes);
        if (p)
            memset(p, 0, bytes); /* the arena is zero until used, but say so */
        return p;
    }
    void *p = next.calloc(n, size);
    /* The allocator checks n * size for overflow (NULL, ENOMEM): a success implies it fits. */
    if (is_counting() && p && !__builtin_mul_overflow(n, size, &bytes))
        count_alloc(p, bytes);
    return p;
}

EXPORT void *realloc(void *ptr, size_t size)
{
    if (ptr && in_arena(ptr)) {
        /* A start-up block moves to the next allocator (the arena never frees). */
        void *p = malloc(size ? size : 1);
        if (p) {
            size_t old = arena_size(ptr);
            memcpy(p, ptr, old < size ? old : size);
        }
        return p;
    }
    if (early())
        return ptr ? NULL : arena_alloc(size);
    if (!is_counting())
        return next.realloc(ptr, size);
    long long old = ptr ? (long long)usable(ptr) : 0;
    void *p = next.realloc(ptr, size);
    if (p) {
        /* realloc(NULL, n) is malloc; otherwise the block moved or was resized in place. */
        atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&n_bytes, size, memory_order_relaxed);
        add_live((long long)usable(p) - old);
    } else if (ptr && size == 0) {
        /* glibc frees the block and returns NULL. */
        atomic_fetch_sub_explicit(&live_bytes, old, memory_order_relaxed);
    } /* else it failed and the old block is untouched */
    return p;
}

EXPORT void *reallocarray(void *ptr, size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(ptr, bytes);
}

/* posix_memalign of the next allocator, counted; alignment already valid. */
static void *aligned(size_t alignment, size_t size)
{
    if (early())
        return NULL; /* dlsym does not ask for aligned memory */
    void *p = NULL;
    int saved = errno;
    int rc = next.posix_memalign(&p, alignment, size);
    if (rc != 0) {
        errno = rc;
        return NULL;
    }
    errno = saved;
    if (is_counting())
        count_alloc(p, size);
    return p;
}

EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
    /* POSIX: a power of two multiple of sizeof(void *). */
    if (alignment % sizeof(void *) != 0 || alignment == 0 || (alignment & (alignment - 1)) != 0)
        return EINVAL;
    int saved = errno;
    void *p = aligned(alignment, size);
    int rc = p ? 0 : errno == EINVAL ? EINVAL : ENOMEM;
    errno = saved; /* posix_memalign reports through its result, not errno */
    if (p)
        *out = p;
    return rc;
}

/* memalign's alignment as glibc takes it: any value, rounded up to a power of two of at least
 * sizeof(void *). */
static size_t fix_alignment(size_t alignment)
{
    size_t a = sizeof(void *);
    while (a < alignment && a <= SIZE_MAX / 2)
        a *= 2;
    return a;
}

EXPORT void *memalign(size_t alignment, size_t size)
{
    return aligned(fix_alignment(alignment), size);
}

/* glibc 2.36's aligned_alloc is memalign, with memalign's checks. */
EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
    return aligned(fix_alignment(alignment), size);
}

EXPORT void *valloc(size_t size)
{
    return aligned((size_t)sysconf(_SC_PAGESIZE), size);
}

EXPORT void *pvalloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded = size == 0 ? page : (size + page - 1) / page * page;
    if (rounded < size) {
        errno = ENOMEM;
        return NULL;
    }
    /* Counted as the request, like the others; the block is whole pages. */
    if (early())
        return NULL;
    void *p = NULL;
    if (next.posix_memalign(&p, page, rounded) != 0) {
        errno = ENOMEM;
        return NULL;
    }
    if (is_counting())
        count_alloc(p, size);
    return p;
}

EXPORT size_t malloc_usable_size(void *ptr)
{
    if (!ptr)
        return 0;
    if (in_arena(ptr))
        return arena_size(ptr);
    if (early())
        return 0;
    return usable(ptr);
}

/* ---- the interface the harness library reads ---- */

static void shim_set_counting(int on)
{
    atomic_store_explicit(&counting, on ? 1 : 0, memory_order_relaxed);
}

static void shim_read(uint64_t *allocs, uint64_t *bytes)
{
    *allocs = atomic_load_explicit(&n_allocs, memory_order_relaxed);
    *bytes = atomic_load_explicit(&n_bytes, memory_order_relaxed);
}

static void shim_reset_live(void)
{
    atomic_store_explicit(&live_bytes, 0, memory_order_relaxed);
    atomic_store_explicit(&peak_bytes, 0, memory_order_relaxed);
}

static long long shim_peak(void)
{
    long long p = atomic_load_explicit(&peak_bytes, memory_order_relaxed);
    return p > 0 ? p : 0;
}

EXPORT const bench__alloc_counters *bench__alloc_shim_api(void)
{
    static const bench__alloc_counters api = {
        .abi = BENCH__ALLOC_SHIM_ABI,
        .set_counting = shim_set_counting,
        .read = shim_read,
        .reset_live = shim_reset_live,
        .peak = shim_peak,
    };
    return &api;
}
