/*
 * fixture_work.c: e2e_work, a benchmark program of exactly known work, for the tests of
 * instruction counting (tests/e2e/test_instructions.py) and allocation statistics
 * (tests/e2e/test_alloc.py).
 *
 * Group `instr`: inline-assembly loops of 1000 rounds with 4 (nop4) and 5 (nop5) nops per round;
 * one iteration of nop5 executes exactly 1000 instructions more than one of nop4.
 * Group `work`: work/loop runs FIXTURE_WORK (environment, default 1000) rounds of a 3-instruction
 * loop per iteration, so a build "with 1% more work" is FIXTURE_WORK=1010.
 * Group `counted`: the user's counters beside the count. counted/loop is work/loop that also
 * counts 10^6 / FIXTURE_WORK "probes" per iteration (BENCH_FN's .counters), so its counter
 * grows when its instructions shrink; counted/shadow declares a counter named "instructions".
 * Group `alloc`: known allocations per iteration: three_blocks (3 blocks, 4300 bytes), none
 * (nothing), libc_internal (calloc of 10 x 10 and strdup of "hello": 2 blocks, 106 bytes, one of
 * them allocated inside libc), realloc_chain (realloc from NULL to 100 then 200 bytes, then
 * realloc to 0, which frees: 2 allocations, 300 bytes) and touch_8mb (8 MiB allocated and
 * written: 1 block, page faults and a higher peak RSS). Two more use the allocator's own
 * interface on blocks from malloc, as programs that preload jemalloc do: usable_size
 * (malloc_usable_size of a malloc'd block) and extension (jemalloc's mallocx, freed with free;
 * skipped when the allocator has no mallocx). Both crash when malloc and the allocator's other
 * functions are not the same allocator's. asan_owns fails when AddressSanitizer is linked in
 * but malloc's blocks are not its own (the sanitizer silently off); env skips, reporting the
 * allocation shim's environment variables in its message.
 *
 * The loops are x86 assembly, so that no compiler can change their instruction count; on other
 * machines the `instr` and `work` benchmarks skip.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <harness/bench.h>

#if defined(__x86_64__)
#define NOP_LOOP(NOPS)                                                                             \
    __asm__ volatile("mov $1000, %%ecx\n"                                                          \
                     "1:\n\t" NOPS "dec %%ecx\n\t"                                                 \
                     "jnz 1b\n"                                                                    \
                     :                                                                             \
                     :                                                                             \
                     : "ecx", "cc")
#define NOP4 "nop\n\tnop\n\tnop\n\tnop\n\t"

BENCH_FN(instr, nop4)
{
    BENCH_ITER(b) {
        NOP_LOOP(NOP4); /* 1 + 1000 * 6 instructions */
    }
}

BENCH_FN(instr, nop5)
{
    BENCH_ITER(b) {
        NOP_LOOP(NOP4 "nop\n\t"); /* 1 + 1000 * 7 instructions */
    }
}

/* FIXTURE_WORK's rounds (default 1000), or 0 after failing the benchmark on a bad value. */
static uint64_t work_rounds(bench_t *b)
{
    const char *env = getenv("FIXTURE_WORK");
    uint64_t work = env && *env ? strtoull(env, NULL, 10) : 1000;
    if (work < 1 || work > 100000000) {
        bench_fail(b, "FIXTURE_WORK must be in [1, 1e8], not '%s'", env);
        return 0;
    }
    return work;
}

/* n rounds of a 3-instruction loop (nop, dec, jnz). */
static inline void work_loop(uint64_t n)
{
    __asm__ volatile("1:\n\t"
                     "nop\n\t"
                     "dec %0\n\t"
                     "jnz 1b\n"
                     : "+r"(n)
                     :
                     : "cc");
}

BENCH_FN(work, loop)
{
    uint64_t work = work_rounds(b);
    if (work == 0)
        return;
    BENCH_ITER(b) {
        work_loop(work);
    }
}

BENCH_FN(counted, loop, .counters = "probes")
{
    uint64_t work = work_rounds(b);
    if (work == 0)
        return;
    double probes = 1e6 / (double)work;
    BENCH_ITER(b) {
        work_loop(work);
        bench_counter(b, "probes", probes, 0);
    }
}
#else
BENCH_FN(counted, loop)
{
    bench_skip(b, "x86-64 only");
    BENCH_ITER(b) {
    }
}

BENCH_FN(instr, nop4)
{
    bench_skip(b, "x86-64 only");
    BENCH_ITER(b) {
    }
}

BENCH_FN(instr, nop5)
{
    bench_skip(b, "x86-64 only");
    BENCH_ITER(b) {
    }
}

BENCH_FN(work, loop)
{
    bench_skip(b, "x86-64 only");
    BENCH_ITER(b) {
    }
}
#endif

BENCH_FN(counted, shadow, .counters = "instructions")
{
    BENCH_ITER(b) {
        bench_counter(b, "instructions", 1, 0);
    }
}

BENCH_FN(alloc, three_blocks)
{
    BENCH_ITER(b) {
        /* The black box keeps the compiler from removing a malloc whose block is unused. */
        void *x = bench_black_box(malloc(100));
        void *y = bench_black_box(malloc(200));
        void *z = bench_black_box(malloc(4000));
        free(x);
        free(y);
        free(z);
    }
}

BENCH_FN(alloc, none)
{
    uint64_t x = 1;
    BENCH_ITER(b) {
        x = bench_black_box(x * 3 + 1);
    }
    bench_black_box(x);
}

BENCH_FN(alloc, libc_internal)
{
    BENCH_ITER(b) {
        void *x = bench_black_box(calloc(10, 10));
        const char *hello = bench_black_box((const char *)"hello");
        char *s = strdup(hello); /* its malloc is inside libc */
        s = bench_black_box(s);
        free(x);
        free(s);
    }
}

BENCH_FN(alloc, realloc_chain)
{
    BENCH_ITER(b) {
        void *p = bench_black_box(realloc(NULL, 100));
        p = bench_black_box(realloc(p, 200));
        p = realloc(p, 0); /* frees; glibc returns NULL */
        p = bench_black_box(p);
        free(p);
    }
}

BENCH_FN(alloc, touch_8mb, .sample_size = 10)
{
    enum { SIZE = 8 << 20 };
    BENCH_ITER(b) {
        char *p = bench_black_box(malloc(SIZE));
        if (p)
            memset(p, 1, SIZE);
        bench_clobber();
        free(p);
    }
}

BENCH_FN(alloc, usable_size)
{
    BENCH_ITER(b) {
        void *p = bench_black_box(malloc(100));
        if (malloc_usable_size(p) < 100)
            bench_fail(b, "malloc_usable_size(malloc(100)) = %zu", malloc_usable_size(p));
        free(p);
    }
}

BENCH_FN(alloc, extension)
{
    void *(*mallocx)(size_t, int);
    *(void **)&mallocx = dlsym(RTLD_DEFAULT, "mallocx");
    if (!mallocx)
        bench_skip(b, "the allocator has no mallocx (not jemalloc)");
    BENCH_ITER(b) {
        void *p = bench_black_box(mallocx(64, 0));
        if (malloc_usable_size(p) < 64)
            bench_fail(b, "malloc_usable_size(mallocx(64)) = %zu", malloc_usable_size(p));
        free(p);
    }
}

BENCH_FN(alloc, asan_owns)
{
    int (*owns)(const volatile void *);
    *(void **)&owns = dlsym(RTLD_DEFAULT, "__sanitizer_get_ownership");
    if (!owns)
        bench_skip(b, "not an AddressSanitizer program");
    BENCH_ITER(b) {
        void *p = bench_black_box(malloc(32));
        if (!owns(p))
            bench_fail(b, "malloc's block is not AddressSanitizer's: the sanitizer is off");
        free(p);
    }
}

BENCH_FN(alloc, env)
{
    const char *preload = getenv("LD_PRELOAD"), *marker = getenv("BENCH_ALLOC_PRELOADED");
    bench_skip(b, "LD_PRELOAD=%s BENCH_ALLOC_PRELOADED=%s", preload ? preload : "",
               marker ? marker : "");
    BENCH_ITER(b) {
    }
}
