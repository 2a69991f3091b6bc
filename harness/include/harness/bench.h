/*
 * bench.h: the one header a user of the harness includes.
 *
 * A benchmark is a function registered with BENCH_FN; its body does untimed setup, then runs the
 * timed loop BENCH_ITER (or BENCH_ITER_BATCHED with BENCH_TIMED), then untimed teardown. The
 * harness calls the body once per round (5 rounds by default, interleaved with the other
 * benchmarks'; .rounds / --rounds); the timed loop runs that round's warm-up and samples inside
 * the call, so setup and teardown run once per round and are never timed.
 *
 * Registration happens before main() through constructors that only link static descriptors into
 * a list: no allocation, no I/O. A file of BENCH_FNs needs no main(): the library provides one that
 * calls bench_main(). Your own main() may call bench_main() instead.
 *
 * Invariant kept by the macros: the clock is read immediately before the first and immediately
 * after the last iteration of a sample; nothing of the harness's bookkeeping runs in between.
 */
#ifndef HARNESS_BENCH_H
#define HARNESS_BENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is the library's interface, and the only part of it that the
 * installed library exports: the harness is built with hidden visibility (docs/architecture.md,
 * "Exported symbols and ABI"). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/** The version of the harness library, "MAJOR.MINOR.PATCH". Static storage. */
const char *bench_version(void);

/** Handle to the running benchmark, passed to every BENCH_FN body. Owned by the harness. */
typedef struct bench bench_t;

/** How iteration counts are spread over samples. */
typedef enum bench_sampling {
    BENCH_SAMPLING_AUTO = 0, /**< linear, or flat when one iteration is too long for linear */
    BENCH_SAMPLING_LINEAR,   /**< sample k runs k*d iterations (Criterion's linear plan) */
    BENCH_SAMPLING_FLAT,     /**< every sample runs the same number of iterations */
} bench_sampling;

/*
 * Settings shared by BENCH_GROUP and BENCH_FN, given as designated initializers:
 *     BENCH_FN(g, n, .measurement_time = 2.0, .sample_size = 50)
 * Zero means "not set here": the value comes from the next level. Precedence, strongest first:
 * command line, BENCH_FN, BENCH_GROUP, built-in defaults (see docs/cli.md).
 */
#define BENCH__SETTINGS_FIELDS                                                                     \
    double warm_up_time;       /* seconds of warm-up before sampling */                            \
    double measurement_time;   /* seconds: the sampling budget; sampling stops at it */            \
    int sample_size;           /* the most samples taken */                                        \
    double target_precision;   /* relative CI half-width at which sampling may stop early;      */ \
                               /* negative: never stop early */                                    \
    bench_sampling sampling;   /* iteration plan */                                                \
    uint64_t bytes_per_iter;   /* throughput: bytes processed per iteration (0: none) */           \
    uint64_t elements_per_iter; /* throughput: elements processed per iteration (0: none) */     \
    int rounds                  /* runs of the body whose samples pool, interleaved with the  */ \
                                /* other benchmarks' (docs/measurement.md) */

/*
 * The descriptors below are what a program's BENCH_GROUP and BENCH_FN compile into. Their ABI
 * (docs/architecture.md, "Exported symbols and ABI"): fields are never removed or reordered, new
 * ones are only appended, and the harness never writes into them. Each is registered through a
 * bench__node that carries its size as the program was compiled, so a library newer than the
 * program reads the fields the program's header did not have as zero ("not set"), and a program
 * compiled with a newer header than the library's still links and runs.
 */

/** Group settings (BENCH_GROUP). */
typedef struct bench_group_desc {
    const char *name;
    BENCH__SETTINGS_FIELDS;
} bench_group_desc;

/**
 * The registry's link for one descriptor, a static object BENCH_FN and BENCH_GROUP define beside
 * it. Its layout never changes.
 */
typedef struct bench__node {
    const void *desc;         /* the bench_desc or bench_group_desc */
    size_t size;              /* sizeof that descriptor where the program was compiled */
    struct bench__node *next; /* the harness's: the registry's list */
    void *copy;               /* the harness's: a full-size copy when `size` is smaller */
} bench__node;

/*
 * How the file that defines a benchmark was compiled: BENCH_FN records the compiler's predefined
 * macros of that translation unit (not the harness library's), so results can say that a
 * benchmark was built without optimisation. Bits of bench_desc.build_flags.
 */
enum {
    BENCH_BUILD_RECORDED = 1,       /* set by BENCH_FN; 0: a descriptor made by hand, unknown */
    BENCH_BUILD_OPTIMIZE = 2,       /* __OPTIMIZE__: -O1 or higher, -Os, -Og (not -O0) */
    BENCH_BUILD_OPTIMIZE_SIZE = 4,  /* __OPTIMIZE_SIZE__: -Os or -Oz */
    BENCH_BUILD_NO_INLINE = 8,      /* __NO_INLINE__: -O0 or -fno-inline */
    BENCH_BUILD_NDEBUG = 16,        /* NDEBUG was defined where bench.h was included */
    BENCH_BUILD_ASAN = 32,          /* AddressSanitizer (-fsanitize=address) */
    BENCH_BUILD_TSAN = 64,          /* ThreadSanitizer (-fsanitize=thread) */
};

#if defined(__has_feature)
#define BENCH__HAS_FEATURE(f) __has_feature(f)
#else
#define BENCH__HAS_FEATURE(f) 0
#endif
#ifdef __OPTIMIZE__
#define BENCH__BUILD_OPT BENCH_BUILD_OPTIMIZE
#else
#define BENCH__BUILD_OPT 0
#endif
#ifdef __OPTIMIZE_SIZE__
#define BENCH__BUILD_SIZE BENCH_BUILD_OPTIMIZE_SIZE
#else
#define BENCH__BUILD_SIZE 0
#endif
#ifdef __NO_INLINE__
#define BENCH__BUILD_NO_INLINE BENCH_BUILD_NO_INLINE
#else
#define BENCH__BUILD_NO_INLINE 0
#endif
#ifdef NDEBUG
#define BENCH__BUILD_NDEBUG BENCH_BUILD_NDEBUG
#else
#define BENCH__BUILD_NDEBUG 0
#endif
#if defined(__SANITIZE_ADDRESS__) || BENCH__HAS_FEATURE(address_sanitizer)
#define BENCH__BUILD_ASAN BENCH_BUILD_ASAN
#else
#define BENCH__BUILD_ASAN 0
#endif
#if defined(__SANITIZE_THREAD__) || BENCH__HAS_FEATURE(thread_sanitizer)
#define BENCH__BUILD_TSAN BENCH_BUILD_TSAN
#else
#define BENCH__BUILD_TSAN 0
#endif
/** The BENCH_BUILD_* bits of the translation unit that includes this header. */
#define BENCH__BUILD_FLAGS                                                                         \
    (BENCH_BUILD_RECORDED | BENCH__BUILD_OPT | BENCH__BUILD_SIZE | BENCH__BUILD_NO_INLINE |        \
     BENCH__BUILD_NDEBUG | BENCH__BUILD_ASAN | BENCH__BUILD_TSAN)

#define BENCH__STR2(x) #x
#define BENCH__STR(x) BENCH__STR2(x)
/** The compiler of the translation unit that includes this header, e.g. "gcc 12.2.0". */
#if defined(__NVCC__)
#define BENCH__COMPILER                                                                            \
    "nvcc " BENCH__STR(__CUDACC_VER_MAJOR__) "." BENCH__STR(__CUDACC_VER_MINOR__)                  \
        " (host " BENCH__HOST_COMPILER ")"
#else
#define BENCH__COMPILER BENCH__HOST_COMPILER
#endif
#if defined(__clang__)
#define BENCH__HOST_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define BENCH__HOST_COMPILER "gcc " __VERSION__
#else
#define BENCH__HOST_COMPILER "unknown"
#endif

/*
 * The revision of the source a benchmark file was built from, recorded by BENCH_FN: the build
 * defines BENCH_BUILD_REVISION as a string literal, directly (pkg-config users:
 * -DBENCH_BUILD_REVISION="\"$(git rev-parse --short=12 HEAD)\"") or in the header that
 * BENCH_REVISION_FILE names, which the harness's CMake package rewrites at every build of a
 * program linked with harness::harness (docs/results-format.md, git_revision).
 */
#ifdef BENCH_REVISION_FILE
#include BENCH_REVISION_FILE
#endif
#ifdef BENCH_BUILD_REVISION
#define BENCH__BUILD_REVISION BENCH_BUILD_REVISION
#else
#define BENCH__BUILD_REVISION ((const char *)0)
#endif

/** Benchmark descriptor (BENCH_FN). Fields other than the settings belong to the harness. */
typedef struct bench_desc {
    const char *group;
    const char *name;
    void (*fn)(bench_t *b);
    const char *file;
    int line;
    const char *build_compiler; /* compiler of the file that defines it; NULL: unknown */
    unsigned build_flags;       /* BENCH_BUILD_* bits of that file's compilation */
    const char *build_revision; /* source revision that file was built from; NULL: unknown */
    BENCH__SETTINGS_FIELDS;
    const int64_t *params; /* parameter values; each runs as its own id group/name/VALUE */
    size_t nparams;        /* number of params; 0: not parameterised */
    /* CUDA benchmarks (BENCH_CUDA_FN, docs/gpu.md); all zero for a CPU benchmark. */
    int cuda_cold;         /* nonzero: flush the GPU's L2 cache before every timed block */
    int cuda_blocking;     /* nonzero: hold the stream with a blocking kernel while a timed block
                              enqueues, so launch latency stays out of the GPU time */
    int kind;              /* BENCH_KIND_CPU (0) or BENCH_KIND_CUDA; BENCH_CUDA_FN appends .kind,
                              so in C++ (nvcc) it cannot be followed by a later field's
                              designator */
    const char *counters;  /* the names bench_counter counts, comma-separated ("hits,misses"), at
                              most BENCH_MAX_COUNTERS; NULL: none */
    int threads;           /* threads the body runs on at once (Google Benchmark's Threads(N),
                              docs/measurement.md#threads): 0 or 1 one, BENCH_THREADS_CPUS the
                              online CPUs, at most BENCH_MAX_THREADS */
    const char *args;      /* an argument grid ("size=64,1024 load=0.5,0.75"): each combination
                              runs as its own id, group/name/size=64/load=0.5 (BENCH_FN's
                              comment); NULL: none. Not together with .params */
    /* New fields go here, at the end (see the ABI note above bench_group_desc). */
} bench_desc;

/** bench_desc.threads: as many threads as the machine has online CPUs. */
#define BENCH_THREADS_CPUS (-1)
/** The most threads one benchmark may run on; more fails it. */
#define BENCH_MAX_THREADS 1024

/** Adds a group descriptor's node to the registry (called by BENCH_GROUP's constructor). */
void bench__register_group(bench__node *n);
/** Adds a benchmark descriptor's node to the registry (called by BENCH_FN's constructor). */
void bench__register(bench__node *n);

/**
 * BENCH_GROUP(group, settings...): optional settings for every benchmark of a group.
 * At most one BENCH_GROUP per group name in a program.
 */
#define BENCH_GROUP(group_, ...)                                                                   \
    static const bench_group_desc bench__group_##group_ = {.name = #group_, __VA_ARGS__};         \
    static bench__node bench__gnode_##group_ = {&bench__group_##group_,                            \
                                                sizeof(bench_group_desc), 0, 0};                   \
    __attribute__((constructor)) static void bench__group_ctor_##group_(void)                      \
    {                                                                                              \
        bench__register_group(&bench__gnode_##group_);                                            \
    }                                                                                              \
    struct bench__group_semicolon_##group_

/**
 * BENCH_FN(group, name, settings...) { body }: defines and registers a benchmark whose id is
 * "group/name" (or "group/name/PARAM" per value of .params). The body receives `bench_t *b`.
 *
 * An argument grid, .args = "AXIS=VALUES AXIS=VALUES ...", runs the benchmark once per
 * combination of the axes' values (their cartesian product, the first axis varying slowest),
 * each its own id "group/name/AXIS=VALUE/AXIS=VALUE"; the body reads them with bench_arg(b,
 * "AXIS"). VALUES is a comma-separated list of values (letters, digits, '_', '.', '+', '-') and
 * integer ranges, LO..HI*M (LO, LO*M, LO*M*M, ... and HI) or LO..HI+S (LO, LO+S, ... up to HI).
 * Sets of combinations separated by '|' are listed one after the other, each its own product,
 * so "n=1 m=8 | n=2 m=64" is two explicit tuples; every set names the same axes in the same
 * order. Example: .args = "size=64..4096*8 load=0.5,0.9" gives six ids from size=64/load=0.5 to
 * size=4096/load=0.9. Limits: 8 axes, 31 characters per axis name and per value, 1024 ids per
 * BENCH_FN; a grid that breaks them, or any other malformed .args, stops the program before it
 * runs anything, with a message naming the benchmark.
 * It also records how this file was compiled (compiler, optimisation, NDEBUG, sanitizers: see
 * BENCH_BUILD_*) and from which source revision (BENCH_BUILD_REVISION): results list it in
 * context.benchmark_builds, and a run warns about benchmarks compiled without optimisation.
 */
#define BENCH_FN(group_, name_, ...)                                                               \
    static void bench__fn_##group_##__##name_(bench_t *b);                                         \
    static const bench_desc bench__desc_##group_##__##name_ = {                                    \
        .group = #group_,                                                                          \
        .name = #name_,                                                                            \
        .fn = bench__fn_##group_##__##name_,                                                       \
        .file = __FILE__,                                                                          \
        .line = __LINE__,                                                                          \
        .build_compiler = BENCH__COMPILER,                                                         \
        .build_flags = BENCH__BUILD_FLAGS,                                                         \
        .build_revision = BENCH__BUILD_REVISION,                                                   \
        __VA_ARGS__};                                                                              \
    static bench__node bench__node_##group_##__##name_ = {&bench__desc_##group_##__##name_,        \
                                                          sizeof(bench_desc), 0, 0};               \
    __attribute__((constructor)) static void bench__ctor_##group_##__##name_(void)                 \
    {                                                                                              \
        bench__register(&bench__node_##group_##__##name_);                                        \
    }                                                                                              \
    static void bench__fn_##group_##__##name_(bench_t *b __attribute__((unused)))

/** BENCH_PARAMS(v1, v2, ...): the parameter list of a BENCH_FN, as a setting. */
#define BENCH_PARAMS(...)                                                                          \
    .params = (const int64_t[]){__VA_ARGS__},                                                      \
    .nparams = sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)

/* Runner entry points used by the loop macros. Each returns the iteration count of the next
 * sample (or batch), or 0 when sampling is over. They read the clock as their last action before
 * returning and as their first action on entry, so only the loop body is timed. */
uint64_t bench__loop_next(bench_t *b);
uint64_t bench__batch_next(bench_t *b, uint64_t max_batch);
int bench__timed_begin(bench_t *b);
int bench__timed_end(bench_t *b);

/**
 * BENCH_ITER(b) { statement }: the timed loop. Runs the warm-up and every sample; the statement
 * is the work of one iteration. Use it once per body.
 */
#define BENCH_ITER(b)                                                                              \
    for (uint64_t bench__n; (bench__n = bench__loop_next(b)) != 0;)                                \
        for (uint64_t bench__i = bench__n; bench__i != 0; bench__i--)

/**
 * BENCH_ITER_BATCHED(b, n, max_batch) {
 *     untimed setup of n inputs; BENCH_TIMED(b) { n iterations }
 * }
 *
 * Criterion's iter_batched: the block runs once per batch with `n` (declared by the macro, at most
 * max_batch, at least 1) set to the batch size. Code outside BENCH_TIMED is not timed; the
 * BENCH_TIMED block must run exactly n iterations. The clock's measured read cost is subtracted
 * once per batch; a batch should still be long compared with it (~20 ns here).
 */
#define BENCH_ITER_BATCHED(b, n, max_batch)                                                        \
    for (uint64_t n; (n = bench__batch_next((b), (max_batch))) != 0;)

/** BENCH_TIMED(b) { ... }: the timed part of a BENCH_ITER_BATCHED block. */
#define BENCH_TIMED(b)                                                                             \
    for (int bench__t = bench__timed_begin(b); bench__t != 0; bench__t = bench__timed_end(b))

/**
 * bench_black_box(x): evaluates to x, while making the compiler assume that x is used and may have
 * been changed, so neither the computation of x nor code that depends on the result is deleted.
 */
#define bench_black_box(x)                                                                         \
    __extension__({                                                                                \
        __typeof__(x) bench__v = (x);                                                              \
        __asm__ volatile("" : BENCH__BLACK_BOX_CONSTRAINT(bench__v) : : "memory");                 \
        bench__v;                                                                                  \
    })
/* Register or memory, whichever the value is in: no forced store. Clang wants the two as
 * alternatives ("+r,m"); GCC rejects that for some types ("impossible constraint") and with
 * "+m,r" drops the store of a constant operand at -O3, so it gets one alternative, "+rm". */
#if defined(__clang__)
#define BENCH__BLACK_BOX_CONSTRAINT(v) "+r,m"(v)
#else
#define BENCH__BLACK_BOX_CONSTRAINT(v) "+rm"(v)
#endif

/** bench_clobber(): the compiler must assume all memory was read and written here. */
#define bench_clobber() __asm__ volatile("" : : : "memory")

/** The parameter value of this run of a parameterised benchmark (0 if it has none). */
int64_t bench_param(const bench_t *b);

/**
 * The value of the argument-grid axis `name` (.args) of this run, as an integer. Fails the
 * benchmark (bench_fail, the reason naming the axis) and returns 0 when the benchmark has no such
 * axis or its value here is not an integer; call it in the body's setup, before the timed loop.
 */
int64_t bench_arg(bench_t *b, const char *name);

/** As bench_arg, for any number ("0.75", "1e-3"): fails and returns 0 when it is not one. */
double bench_arg_double(bench_t *b, const char *name);

/**
 * The value of the argument-grid axis `name` as it is written in .args ("fast", "0.75"), or NULL
 * when the benchmark has no such axis. Owned by the harness, valid while the body runs.
 */
const char *bench_arg_str(const bench_t *b, const char *name);

/** The id of the running benchmark ("group/name" or "group/name/PARAM"). Owned by the harness. */
const char *bench_id(const bench_t *b);

/**
 * The thread of a threaded benchmark (.threads) that runs this call of the body: 0 on the leader
 * (the calling thread, whose probes measure), 1 .. bench_threads(b) - 1 on the others; 0 for a
 * benchmark on one thread.
 */
int bench_thread_index(const bench_t *b);

/** The threads this benchmark's body runs on at once (.threads resolved; 1 for most). */
int bench_threads(const bench_t *b);

/** Declares bytes processed per iteration: results then show throughput in B/s. */
void bench_set_bytes(bench_t *b, uint64_t bytes_per_iter);

/** Declares elements processed per iteration: results then show throughput in elem/s. */
void bench_set_elements(bench_t *b, uint64_t elements_per_iter);

/**
 * Marks the benchmark skipped with a reason (printf format); the timed loop then runs no
 * iteration. A skip is not a failure: the exit code is unaffected.
 */
void bench_skip(bench_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * Marks the benchmark failed with a reason (printf format); the timed loop stops at the end of the
 * sample in progress and the program exits 3 after the remaining benchmarks have run.
 */
void bench_fail(bench_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** The most counters one BENCH_FN may declare (.counters). */
#define BENCH_MAX_COUNTERS 8
/** bench_counter's flags: how the counter is shown (it is recorded per iteration either way). */
enum {
    BENCH_COUNTER_PER_ITERATION = 0, /**< its count per iteration */
    BENCH_COUNTER_RATE = 1,          /**< also as a rate: its count per second of the time */
};

/**
 * Adds value to the counter `name` of the sample running: a user's own measurement beside the
 * time, such as cache hits, collisions or probes per lookup. `name` must be one of BENCH_FN's
 * .counters ("hits,probes"), else the benchmark fails saying so (a BENCH_FN without .counters
 * too); so does a declared name that is also a metric the run records itself ("instructions"
 * under --instructions, a --perf-events event). Like the probes' metrics, a
 * counter is summed over each sample and reported per iteration with its interval, in every
 * output, and compared with a baseline's; call it inside the timed loop (it costs a few ns: a
 * name compared and a sum), or inside BENCH_TIMED's untimed part of a batched loop.
 */
void bench_counter(bench_t *b, const char *name, double value, unsigned flags);

/* ---- spans: phases of the body (docs/trace.md) ---- */

/** Nonzero while spans record (a run with --trace): the one branch a span costs otherwise. */
extern int bench__spans_on;
/** The functions the span macros call while spans record. */
void bench__span_begin(bench_t *b, const char *name);
void bench__span_end(bench_t *b, const char *name);

/**
 * bench_span_begin(b, name) ... bench_span_end(b, name): marks a phase of the body, `name` a
 * string that lives as long as the body (a literal), on the thread that runs it. Under --trace,
 * each span is a slice of the trace (the first 8 of each sample, at most 400 per thread of a
 * process) and each name's share of the time per iteration is reported and saved; without
 * --trace a span costs one well-predicted branch and records nothing. Spans nest: an end that
 * does not match the span begun last, or one left open when the body returns, fails the
 * benchmark with the span's name (under --trace). At most 16 names per benchmark.
 */
#define bench_span_begin(b, name)                                                                  \
    ((void)(__builtin_expect(bench__spans_on, 0) ? bench__span_begin((b), (name)) : (void)0))
#define bench_span_end(b, name)                                                                    \
    ((void)(__builtin_expect(bench__spans_on, 0) ? bench__span_end((b), (name)) : (void)0))

/**
 * BENCH_SPAN(b, name) { phase }: the block as a span (bench_span_begin before it,
 * bench_span_end after it). Leave the block at its end: a break, goto or return out of it
 * leaves the span open. Nested ones go on lines of their own.
 */
#define BENCH_SPAN(b, name) BENCH__SPAN_AT(b, name, BENCH__SPAN_VAR(__LINE__))
#define BENCH__SPAN_VAR(line) BENCH__SPAN_VAR2(line)
#define BENCH__SPAN_VAR2(line) bench__span_once_##line
#define BENCH__SPAN_AT(b, name, once)                                                              \
    for (int once = (bench_span_begin(b, name), 1); once; once = (bench_span_end(b, name), 0))

/* ---- CUDA benchmarks (docs/gpu.md) ---- */

/** Values of bench_desc.kind. */
enum { BENCH_KIND_CPU = 0, BENCH_KIND_CUDA = 1 };

/**
 * BENCH_CUDA_FN(group, name, settings...) { body }: a benchmark whose iterations enqueue GPU work
 * on the stream bench_cuda_stream(b). Each timed block (a sample of BENCH_ITER, or one batch of
 * BENCH_CUDA_ITER / BENCH_TIMED) is bracketed by CUDA events recorded on that stream, and the GPU
 * time between them is the sample's time; the host's wall-clock time of the same block is kept as
 * the metric "host_wall". Extra settings: `.cuda_cold = 1` flushes the GPU's L2 cache before every
 * timed block; `.cuda_blocking = 1` holds the stream with a spinning kernel while the block
 * enqueues its work (the body must then not synchronise the stream). Without a usable CUDA device
 * or driver, or in a build without CUDA, the benchmark is skipped with the reason and its body
 * never runs. Usable from C and CUDA sources alike: this header needs no CUDA header.
 */
#define BENCH_CUDA_FN(group_, name_, ...)                                                          \
    BENCH_FN(group_, name_, ##__VA_ARGS__, .kind = BENCH_KIND_CUDA)

/**
 * The cudaStream_t (as a void *) that the running CUDA benchmark must enqueue its timed work on.
 * Created by the harness for this benchmark (non-blocking with respect to the legacy default
 * stream) and destroyed after its body returns; do not destroy it. Called from a benchmark that is
 * not a BENCH_CUDA_FN (or in a mode that attaches no CUDA timing), it fails the benchmark and
 * returns NULL.
 */
void *bench_cuda_stream(bench_t *b);

/**
 * BENCH_CUDA_ITER(b, max_batch) { enqueue one iteration }: the timed loop of a CUDA benchmark in
 * batches of at most max_batch iterations, each batch its own timed block (events, L2 flush and
 * blocking kernel per batch). max_batch = 1 times every launch alone, as nvbench's cold
 * measurement does; with .cuda_blocking keep max_batch times the launches of one iteration well
 * below the GPU's launch queue (about 1000). Use it once per body, like BENCH_ITER.
 */
#define BENCH_CUDA_ITER(b, max_batch)                                                              \
    BENCH_ITER_BATCHED(b, bench__cuda_n, max_batch)                                                \
    BENCH_TIMED(b)                                                                                 \
    for (uint64_t bench__ci = bench__cuda_n; bench__ci != 0; bench__ci--)

/**
 * Runs the command-line program: parses argv, runs the selected benchmarks, reports.
 * Returns the exit code: 0 ok, 1 regression found, 2 usage or input error, 3 a benchmark failed.
 */
int bench_main(int argc, char **argv);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* HARNESS_BENCH_H */
