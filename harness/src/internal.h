/*
 * internal.h: types shared by the harness's implementation files; not installed.
 *
 * The pieces: the registry (registry.c) lists benchmark instances; the clock (clock.c) and the
 * measurement backends (measure.c) time samples; the runner (runner.c) drives warm-up and
 * sampling, fills a bench__result and turns its samples into estimates with the pure functions
 * of stats.c; compare.c judges changes against a baseline; json.c reads and writes files;
 * sysinfo.c and context.c describe the machine; reporters (report_*.c) print results; cli.c
 * ties them together. Invariant: a bench__result owns every pointer in it and is freed with
 * bench__result_destroy.
 */
#ifndef HARNESS_INTERNAL_H
#define HARNESS_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "harness/bench.h"
#include "stats.h"

/* ---- errors: one table gives the codes and their messages ---- */
#define BENCH__ERRORS(X)                                                                           \
    X(BENCH_EUSAGE, -1, "usage error")                                                             \
    X(BENCH_ENOMEM, -2, "out of memory")                                                           \
    X(BENCH_EIO, -3, "input/output error")                                                         \
    X(BENCH_EINVAL, -4, "invalid value")                                                           \
    X(BENCH_EDUP, -5, "duplicate benchmark id")                                                    \
    X(BENCH_EUNAVAIL, -6, "capability unavailable")

enum {
#define BENCH__ERR_ENUM(name, code, msg) name = code,
    BENCH__ERRORS(BENCH__ERR_ENUM)
#undef BENCH__ERR_ENUM
};

/** The message of an error code from the table above; "unknown error" otherwise. */
const char *bench__strerror(int code);

/* ---- exit codes of the program ---- */
enum {
    BENCH_EXIT_OK = 0,
    BENCH_EXIT_REGRESSION = 1,
    BENCH_EXIT_USAGE = 2,
    BENCH_EXIT_FAILED = 3,
};

/* ---- settings ---- */

/** Resolved settings of one benchmark run. */
typedef struct bench__settings {
    double warm_up_time;      /* s */
    double measurement_time;  /* s */
    int sample_size;          /* most samples */
    double target_precision;  /* relative CI half-width for the early stop; <= 0: off */
    bench_sampling sampling;
    uint64_t bytes_per_iter;    /* B per iteration; 0: none */
    uint64_t elements_per_iter; /* elements per iteration; 0: none */
    int rounds;                 /* rounds the samples are spread over (runner.c) */
} bench__settings;

/** Run-wide options from the command line that the runner and analysis need. */
typedef struct bench__run_options {
    bench__settings cli;     /* command-line settings; zero fields are not set */
    bench__settings quick;   /* defaults that --quick replaces the built-in ones with */
    bool is_quick;
    bool sampling_set;       /* --sampling was given (its AUTO is 0, so cli.sampling can't say) */
    size_t nresamples;       /* bootstrap resamples */
    double confidence_level; /* e.g. 0.95 */
    uint64_t seed;           /* bootstrap seed */
    bool progress;           /* live progress on stderr */
    FILE *worker_in;         /* A/B worker mode: sample commands come from here ... */
    FILE *worker_out;        /* ... and sample times go here (see ab.c); NULL otherwise */
    struct bench__probe **probes; /* attached to every benchmark, in this order */
    size_t nprobes;
    /*
     * Fixed plan: when nfixed > 0 there is no warm-up and no stopping rule; the samples run
     * exactly fixed_iters[0..nfixed-1] iterations (instruction counting uses this).
     */
    const uint64_t *fixed_iters;
    size_t nfixed;
    /* Profile mode (--profile-time): each benchmark runs for this many seconds, with no
     * statistics; 0: off. */
    double profile_time;
    /* Isolated measurement (isolate.c): measuring processes per benchmark (0: the default),
     * the time limit of one process (s), and --in-process (no worker processes at all). */
    unsigned processes;
    double timeout_s;
    bool in_process;
    /* Worker side: this process measures one part of one benchmark (isolate.c). */
    struct bench__job {
        bool active;
        unsigned index;  /* which of the benchmark's processes this is; 0 makes the plan */
        unsigned count;  /* processes the benchmark is measured in */
        /* the plan process 0 made (index > 0 only) */
        bench_sampling mode;
        uint64_t step;   /* iterations: linear d, or flat per-sample count */
        double est_ns;   /* per-iteration estimate from the warm-up, ns */
    } job;
} bench__run_options;

/** The built-in defaults (docs/cli.md lists them). */
extern const bench__settings bench__default_settings;
extern const bench__settings bench__quick_settings;

/** Resolves settings: command line over BENCH_FN over BENCH_GROUP over defaults. */
void bench__resolve_settings(bench__settings *out, const bench__run_options *opt,
                             const bench_desc *d, const bench_group_desc *g);

/* ---- registry ---- */

/** One runnable benchmark: a descriptor and, for parameterised ones, one parameter value. */
typedef struct bench__instance {
    const bench_desc *desc;
    const bench_group_desc *group; /* NULL when the group has no BENCH_GROUP */
    bool has_param;
    int64_t param;
    char id[256];
} bench__instance;

/**
 * Lists every registered benchmark instance, sorted by id. On success *out is a malloc'd array
 * (caller frees) and *n its length. Fails with BENCH_EDUP (message names the id) when two
 * registrations share an id, or BENCH_EINVAL for an id that is too long.
 */
int bench__registry_list(bench__instance **out, size_t *n, char *msg, size_t msglen);

/* ---- clock ---- */

/** What start-up calibration measured about the clock. */
typedef struct bench__clock_info {
    const char *name;     /* e.g. "CLOCK_MONOTONIC" */
    double cost_ns;       /* ns per read, back to back */
    double resolution_ns; /* smallest step observed between reads (at least clock_getres) */
    double min_sample_ns; /* shortest allowed sample: 1000 x max(cost, resolution) */
} bench__clock_info;

/** Reads the monotonic clock in ns. */
int64_t bench__now_ns(void);
/** Measures the clock's cost and resolution (about 2 ms); idempotent. */
const bench__clock_info *bench__clock_calibrate(void);

/* ---- measurement backends ---- */

/**
 * A measurement backend times or counts one sample. The runner starts every backend, innermost
 * (the wall clock) last, runs the sample, then stops them in reverse order. Start and stop must
 * be cheap and must not allocate.
 */
typedef struct bench__meas {
    const char *name; /* e.g. "wall" */
    const char *unit; /* unit of the values, e.g. "ns" */
    void (*start)(struct bench__meas *m);
    double (*stop)(struct bench__meas *m); /* the sample's total in `unit` */
    int64_t t0;                           /* backend state */
} bench__meas;

/** The wall-clock backend (CLOCK_MONOTONIC, ns). */
void bench__meas_wall_init(bench__meas *m);

struct bench__result;

/* ---- probes: extra measurements around every sample (perf counters, allocations, GPU) ---- */

/** Most metrics (values recorded per sample beside the time) and facts one benchmark has. */
#define BENCH__MAX_METRICS 24
#define BENCH__MAX_FACTS 8

/**
 * A quantity a probe records for every sample beside the time: the sample's total, divided by
 * the sample's iterations for the per-iteration estimate.
 */
typedef struct bench__metric {
    char name[64];       /* e.g. "task-clock", "allocations", "host_wall" */
    char unit[16];       /* unit of one value, e.g. "ns", "events", "B" */
    char source[16];     /* the probe that recorded it: "perf", "alloc", "cuda", ... */
    double *totals;      /* per sample: total over the sample (same samples as r->iters) */
    bool scaled;         /* some value was estimated from a part of the sample (multiplexing) */
    double min_fraction; /* smallest fraction of a sample the value was counted for (1: all) */
    bench__estimates est; /* per iteration, like the time's */
} bench__metric;

/** A per-benchmark figure that is not per sample (peak heap, max RSS, ...). */
typedef struct bench__fact {
    char name[64];
    char unit[16];
    double value;
} bench__fact;

/**
 * A probe measures something around every sample. The runner attaches each probe of the run to
 * each benchmark before its body runs, starts attached probes before a sample (in order, the
 * wall clock last) and stops them after it (the wall clock first, then in reverse order), so
 * their own cost stays out of the time and the time's out of theirs. Start and stop must not
 * allocate and must be cheap; a probe that cannot be cheap (e.g. synchronising a GPU) says so
 * in its documentation.
 */
typedef struct bench__probe {
    const char *name;
    /*
     * Before the body: registers the probe's metrics on r with bench__metric_add (it records
     * them in that order) and returns 0 to measure this benchmark; returns 1 to leave this
     * benchmark alone; or sets r to skipped (bench__result_skip) and returns 1 when the benchmark
     * cannot run at all (e.g. a GPU benchmark without a GPU).
     */
    int (*attach)(struct bench__probe *p, struct bench__result *r);
    void (*start)(struct bench__probe *p);
    /* Writes the sample's values, one per metric it registered, in registration order; sets
     * *fraction to the part of the sample they were counted for (1.0 unless multiplexed). */
    void (*stop)(struct bench__probe *p, double *values, double *fraction);
    /* Optional, primary probes only: called just before the wall clock stops, so the host wall
     * time covers the work's completion (a CUDA probe waits for its stop event here). */
    void (*complete)(struct bench__probe *p);
    /* After the body: may add facts (bench__fact_add); releases per-benchmark resources. */
    void (*detach)(struct bench__probe *p, struct bench__result *r);
    /*
     * A primary probe's first value, in ns, is the sample's time instead of the wall clock's
     * (CUDA events: GPU time); the wall clock's time is then recorded as the metric "host_wall".
     * At most one primary probe is attached to a benchmark.
     */
    bool primary;
    void *state; /* the probe's own */
    /* At the end of the run: releases the probe (may be NULL). */
    void (*destroy)(struct bench__probe *p);
} bench__probe;

/*
 * The probes of the optional layers. Each create function returns 0 and a probe; or a negative
 * error code with a one-line reason in msg: BENCH_EINVAL for a bad request (an event name
 * nobody knows: exit 2), BENCH_EUNAVAIL when the layer is compiled out or cannot work here.
 * Warnings about parts that cannot work (an event the machine cannot count) go to stderr, once.
 */

/** perf_event counter groups for a comma-separated list of events and presets (perf.c). */
int bench__perf_probe_create(const char *spec, bench__probe **out, char *msg, size_t msglen);
/** --list-events: what libpfm4 knows on this machine and what opens; returns the exit code. */
int bench__perf_list_events(FILE *out);

/**
 * Allocation statistics: the malloc family counted per iteration (alloc.c) by the preload
 * library libharness_alloc.so; BENCH_EUNAVAIL (reason in msg) when it is not loaded.
 */
int bench__alloc_probe_create(bench__probe **out, char *msg, size_t msglen);
/**
 * Makes sure the allocation shim is loaded: returns 0 when it is; otherwise re-executes the
 * program (/proc/self/exe with argv[0..argc)) with the shim first in LD_PRELOAD, and does not
 * return. BENCH_EUNAVAIL with the reason in msg when that cannot work: a statically linked
 * program, the shim not found, already re-executed without success, under valgrind.
 */
int bench__alloc_preload(int argc, char **argv, char *msg, size_t msglen);

/**
 * The CUDA layer's probe (cuda.c): attaches to CUDA benchmarks only (times them with CUDA
 * events: a primary probe), and skips them with the reason when there is no CUDA build, device
 * or driver. Always present; first in the run's probe list.
 */
bench__probe *bench__cuda_probe(void);

/* ---- results ---- */

typedef enum bench__status {
    BENCH__OK = 0,
    BENCH__SKIPPED,
    BENCH__FAILED,
} bench__status;

/** How a failed benchmark failed (isolate.c contains the last three in its worker processes). */
typedef enum bench__failure {
    BENCH__FAIL_NONE = 0,
    BENCH__FAIL_ERROR,     /* the benchmark reported it (bench_fail) or the harness found a fault */
    BENCH__FAIL_CRASHED,   /* its process died of a signal; failure_code is the signal */
    BENCH__FAIL_EXITED,    /* its process exited (exit()) before finishing; failure_code the code */
    BENCH__FAIL_TIMED_OUT, /* its process ran past --timeout and was killed */
} bench__failure;

/** "error", "crashed", "exited", "timed out" ("" for none). */
const char *bench__failure_name(bench__failure f);

/** Between-run noise of a benchmark, measured by calibration (--calibrate). */
typedef struct bench__noise {
    int runs;        /* separate processes measured; 0: not calibrated */
    double log_mean; /* mean over the runs of ln(median ns per iteration) */
    double log_sd;   /* sample standard deviation of those logs */
} bench__noise;

/** Everything measured and estimated for one benchmark instance. */
typedef struct bench__result {
    const bench__instance *inst;
    bench__status status;
    char message[512];      /* reason for skip or failure */
    bench__settings settings;
    bench_sampling sampling_used; /* LINEAR or FLAT */
    const char *stop_reason;      /* "precision", "time budget", "sample size" */
    size_t nsamples;
    double *iters;          /* per sample: iterations */
    double *totals_ns;      /* per sample: total wall time, ns */
    uint64_t warm_up_iters; /* iterations run during warm-up */
    double warm_up_ns;      /* ns spent in warm-up samples */
    double measure_wall_s;  /* s of sampling, bookkeeping included, summed over rounds */
    unsigned rounds;        /* rounds the samples came from (runner.c) */
    uint64_t total_iters;   /* iterations over all samples */
    bench__estimates est;   /* ns per iteration */
    bench__outliers outliers;
    size_t nresamples;
    double confidence_level;
    bench__noise noise;     /* set by calibration; saved with baselines */
    const struct bench__change *change; /* comparison with the baseline, when there is one */
    size_t nmetrics;        /* per-sample metrics from probes, beside the time */
    bench__metric metrics[BENCH__MAX_METRICS];
    struct bench__change *metric_changes; /* per metric, when compared (owned); else NULL */
    size_t nfacts;
    bench__fact facts[BENCH__MAX_FACTS];
    uint64_t profile_iters; /* profile mode: iterations run */
    double profile_ns;      /* profile mode: ns spent in them */
    bench__failure failure; /* when status is BENCH__FAILED: how */
    int failure_code;       /* the signal (crashed) or exit code (exited); 0 otherwise */
    /* Isolated measurement: the processes the samples came from (0: measured in this process),
     * each sample's process (0 .. processes - 1; NULL in-process), and the coefficient of
     * variation of the per-process medians (NaN with fewer than 2 processes). */
    unsigned processes;
    uint32_t *process;
    double process_cv;
    double process_log_sd; /* sd of ln(per-process median); NaN with fewer than 2 processes */
    /* The plan the warm-up made (with sampling_used): linear d or flat count, the per-iteration
     * estimate it rests on (ns), and the rounds (processes) the budget fits. */
    uint64_t plan_step;
    double plan_est_ns;
    unsigned plan_rounds;
} bench__result;

/**
 * Adds a metric to r with room for its samples; returns its index, or -1 (r is then failed with
 * the reason: too many metrics, or out of memory).
 */
int bench__metric_add(struct bench__result *r, const char *name, const char *unit,
                      const char *source);
/** Adds (or replaces) a fact of r; silently drops it when r has BENCH__MAX_FACTS already. */
void bench__fact_add(struct bench__result *r, const char *name, const char *unit, double value);
/** The metric of r with this name, or NULL. */
const bench__metric *bench__metric_find(const struct bench__result *r, const char *name);
/** Marks r skipped with a reason (before its body ran); the first reason wins. */
void bench__result_skip(struct bench__result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Frees what a result owns (not the struct itself); safe on a zeroed result. */
void bench__result_destroy(bench__result *r);

/** Runs one benchmark instance into `r` (zeroed by the caller); its rounds, if it has several,
 * run back to back. Never fails the process. */
void bench__run_instance(const bench__instance *inst, const bench__run_options *opt,
                         bench__result *r);

/** Called by bench__run_all with each result, in list order, as soon as it is final. */
typedef void (*bench__done_fn)(size_t index, bench__result *r, void *arg);

/**
 * Runs the n instances of `list` into results[0..n-1] (zeroed by the caller), in rounds: round j
 * of every instance that takes it, then round j + 1 (runner.c). `done` (may be NULL) sees each
 * result once it is final. Returns 0, or BENCH_ENOMEM before running anything.
 */
int bench__run_all(const bench__instance *const *list, size_t n, const bench__run_options *opt,
                   bench__result *results, bench__done_fn done, void *arg);

/** Computes r->est and r->outliers from r's samples (and, with several processes, the
 * median's interval over processes: bench__process_estimate). */
int bench__analyze(bench__result *r, const bench__run_options *opt);

/* ---- isolated measurement in worker processes (isolate.c) ---- */

/** Most worker processes per benchmark (--processes, and in files). */
#define BENCH__MAX_PROCESSES 1000
/** Default measuring processes per benchmark, and with --quick. */
#define BENCH__DEFAULT_PROCESSES 10
#define BENCH__QUICK_PROCESSES 3
/** A coefficient of variation of the per-process medians above this is reported as large. */
#define BENCH__LARGE_PROCESS_CV 0.05
/** Default time limit of one worker process, s. */
#define BENCH__DEFAULT_TIMEOUT 300.0

/**
 * Runs the n instances of `list` like bench__run_all, but each benchmark in fresh worker
 * processes of this program (exec of /proc/self/exe with argv), interleaved across benchmarks:
 * process 0 of every benchmark (which also makes the plan), then process 1 of every benchmark in
 * the opposite order, and so on. A crash, exit() or time-out ends that benchmark's worker only; the benchmark is
 * failed with the failure recorded and the others go on. Returns 0; BENCH_ENOMEM; or
 * BENCH_EUSAGE when the run was interrupted (bench__proc_interrupted gives the signal; results
 * are then incomplete and `done` has not seen all of them).
 */
int bench__run_isolated(const bench__instance *const *list, size_t n,
                        const bench__run_options *opt, int argc, char **argv,
                        bench__result *results, bench__done_fn done, void *arg);

/**
 * Set in a worker process that is not its benchmark's first: warnings the first one already
 * gave (a counter that cannot open) are not repeated once per process.
 */
extern bool bench__quiet_warnings;

/**
 * The worker side: measures one part of benchmark `id` as `job` (the BENCH_WORKER_JOB
 * environment variable) says and writes what it measured on descriptor 3. Returns the exit code.
 */
int bench__worker_main(const bench__instance *all, size_t n, const char *job,
                       const bench__run_options *opt);

/* ---- crash reporting ---- */

/** Installs handlers that print which benchmark crashed, then exit 3. */
void bench__crash_handlers_install(void);
/** Names the benchmark that a crash would be blamed on (NULL: none running). */
void bench__crash_set_current(const char *id);

/* ---- run context and reporters ---- */

/** The CPU as the system context records it; -1 or "" where unknown. */
typedef struct bench__cpu {
    char vendor[32];
    char brand[128];
    int family;       /* CPUID family, extended family included */
    int model;        /* CPUID model, extended model included */
    int stepping;
    int cores;        /* physical cores */
    int threads;      /* logical CPUs */
    int l1d_kib;      /* L1 data cache, KiB per core */
    int l2_kib;       /* L2 cache, KiB */
    int l3_kib;       /* L3 cache, KiB */
    char features[256]; /* SIMD features present, space-separated (sse2 ... avx512f) */
    const char *source; /* where the facts came from */
} bench__cpu;

#define BENCH__MAX_WARNINGS 8

/* ---- GPU context (CUDA layer, cuda.c; docs/gpu.md) ---- */

/** The GPU the CUDA benchmarks run on (CUDA device 0); -1 or "" where unknown. */
typedef struct bench__gpu {
    bool available;        /* CUDA benchmarks can run: a CUDA build, a driver and a device */
    char reason[256];      /* why not, when !available; "" otherwise */
    int device_count;      /* CUDA devices visible to the process */
    char name[256];        /* e.g. "NVIDIA H100 80GB HBM3" */
    char pci_bus_id[32];   /* domain:bus:device.function, e.g. "0000:3b:00.0" */
    int cc_major;          /* compute capability */
    int cc_minor;
    int sm_count;          /* streaming multiprocessors */
    double memory_bytes;   /* global memory, bytes */
    int l2_bytes;          /* L2 cache, bytes */
    int bus_width_bits;    /* memory bus width, bits */
    int clock_khz;         /* peak SM clock, kHz */
    int memory_clock_khz;  /* peak memory clock, kHz */
    double bandwidth_bytes_per_s; /* theoretical: 2 x memory clock x bus width / 8, B/s */
    char driver_version[16];  /* CUDA version the driver supports, e.g. "13.0"; "" none */
    char runtime_version[16]; /* CUDA runtime built in, e.g. "13.0"; "" without CUDA */
} bench__gpu;
/* ---- end GPU context ---- */

/**
 * What a run is compared with (--baseline), for the reporters that write the comparison at the
 * end: the baseline's name and the selected benchmarks it has that this program does not.
 * Borrowed: the caller keeps it and the strings alive until the reporters are done.
 */
typedef struct bench__comparison {
    const char *baseline;        /* baseline name */
    const char *const *removed;  /* ids: in the baseline, selected by the filters, absent here */
    size_t nremoved;
} bench__comparison;

/** Drift canaries (canary.c): how many, their names in files, and in words. */
#define BENCH__NCANARIES 4
extern const char *const bench__canary_names[BENCH__NCANARIES];
extern const char *const bench__canary_words[BENCH__NCANARIES];

/** Facts about the run that go with every result. */
typedef struct bench__context {
    const char *harness_version;
    char timestamp[32]; /* ISO 8601 UTC */
    char hostname[256];
    char os[256];       /* uname: sysname release machine */
    char os_name[128];  /* /etc/os-release PRETTY_NAME */
    char kernel[128];   /* uname: sysname release */
    long ncpus;         /* online CPUs */
    double memory_bytes; /* physical memory, bytes; -1 unknown */
    char governor[32];  /* cpufreq scaling governor of cpu0; "" unknown */
    char boost[8];      /* "on", "off" or "" unknown */
    double loadavg[3];  /* 1, 5, 15 minute load averages; -1 unknown */
    char git_revision[64]; /* of the working directory's checkout; "" outside one */
    /* The running program's identity (snapshot.c), e.g. "fnv1a64:0123456789abcdef"; "" when
     * not read. A saved baseline also names its snapshot, the program's copy beside it. */
    char program_hash[32];
    char program_file[96]; /* baselines only: "NAME.program"; "" none */
    char program_libs[32]; /* hash over the shared libraries it runs code from; "" unknown */
    double program_bytes;  /* size of the program, bytes; 0 unknown */
    /* Drift canaries, ns per unit of each probe's work; NaN (or 0) when not measured. */
    double canary[BENCH__NCANARIES];
    bool have_canaries;
    bench__cpu cpu;
    const char *compiler;
    const char *compiler_flags;
    const char *build_type;
    const bench__clock_info *clock;
    uint64_t seed;
    size_t nresamples;
    double confidence_level;
    bool quick;
    size_t nwarnings;
    char warnings[BENCH__MAX_WARNINGS][256]; /* the machine is set up for noise: what and fix */
    bench__gpu gpu;     /* the GPU, or why there is none (cuda.c) */
    const char *mode;   /* "instructions" for --instructions (instr.c); NULL: times */
    const bench__comparison *comparison; /* set with --baseline; NULL: no comparison */
    const struct bench__user_builds *user_builds; /* the benchmark files' builds (user_build.h);
                                                     NULL: not recorded */
} bench__context;

/** The facts that identify a machine and build, compared between two runs. */
typedef struct bench__context_id {
    /* the machine */
    char cpu_brand[128];
    long cores;   /* -1 unknown */
    long threads; /* -1 unknown */
    char hostname[256];
    char kernel[128];  /* uname: sysname release */
    char governor[32]; /* cpufreq scaling governor of cpu0 */
    /* the build */
    char compiler[128];
    char compiler_flags[256];
    char build_type[32];
    /* neither: told apart, never compared */
    char timestamp[32];
    char git_revision[64];
    char program_hash[32]; /* "" when the file has none */
    char program_file[96]; /* the snapshot beside a baseline; "" none */
    char program_libs[32]; /* "" when the file has none */
    double canary[BENCH__NCANARIES]; /* 0 when the file has none */
    char mode[16]; /* context.mode of a saved run: "instructions", or "" for times */
} bench__context_id;

/**
 * What differs between two runs' identity facts, as "what 'now' vs 'then'; ..." lists: the
 * machine's (CPU, cores, threads, host, kernel, governor) apart from the build's (compiler, its
 * flags, build type). The git revision is not compared: a different revision is what a
 * comparison is for. Facts unknown on either side are not compared. "" where nothing differs.
 */
typedef struct bench__context_change {
    char machine[768];
    char build[768];
} bench__context_change;

/** Fills the OS, CPU, git and noise-warning parts of the context (sysinfo.c). */
void bench__sysinfo_collect(bench__context *c);
/** The identity part of a live context. */
void bench__context_id_from(bench__context_id *id, const bench__context *c);
/** Compares two runs' identity facts (see bench__context_change). */
void bench__context_compare(const bench__context_id *now, const bench__context_id *then,
                            bench__context_change *out);
/** Prints the context for people (--context). */
void bench__context_print(FILE *out, const bench__context *c);

/** Fills the run context. */
void bench__context_collect(bench__context *c, const bench__run_options *opt);

/** Output formats. */
typedef enum bench__format {
    BENCH__FMT_PRETTY = 0,
    BENCH__FMT_JSON,
    BENCH__FMT_CSV,
    BENCH__FMT_MARKDOWN,
    BENCH__FMT_BENCHER,
} bench__format;

/** A reporter consumes results as they finish; `end` writes whatever waits for the whole run. */
typedef struct bench__reporter {
    void (*begin)(struct bench__reporter *rep, const bench__context *ctx);
    void (*result)(struct bench__reporter *rep, const bench__result *r);
    int (*end)(struct bench__reporter *rep, const bench__context *ctx,
               const bench__result *all, size_t n);
    FILE *out;
    bool color;
} bench__reporter;

/**
 * Sets up a reporter that writes everything in `end`, once the whole run is known (JSON,
 * Markdown, bencher): its begin and result hooks do nothing.
 */
void bench__reporter_at_end(bench__reporter *rep, FILE *out,
                            int (*end)(bench__reporter *rep, const bench__context *ctx,
                                       const bench__result *all, size_t n));
void bench__reporter_pretty(bench__reporter *rep, FILE *out, bool color);
void bench__reporter_csv(bench__reporter *rep, FILE *out);
void bench__reporter_markdown(bench__reporter *rep, FILE *out);
void bench__reporter_json(bench__reporter *rep, FILE *out);
/** The line format continuous-benchmarking services read (report_interop.c). */
void bench__reporter_bencher(bench__reporter *rep, FILE *out);
/** Writes the results in Google Benchmark's JSON format, atomically (report_interop.c). */
int bench__gbench_write_file(const char *path, const bench__context *ctx, const bench__result *all,
                             size_t n, char *msg, size_t msglen);

/**
 * Writes the results as JSON to `path` atomically (temporary file in the same directory, fsync,
 * rename): a failed write leaves any previous file untouched. Returns 0 or a negative error code
 * with a one-line reason in msg.
 */
int bench__json_write_file(const char *path, const bench__context *ctx, const bench__result *all,
                           size_t n, char *msg, size_t msglen);

/**
 * Writes text (and a final newline) to path (files.c). A regular file or a new name is replaced
 * atomically: a temporary file PATH.tmp.PID.XXXXXX in the same directory, fsync, mode 0644,
 * rename, fsync of the directory; a failed write leaves any previous file untouched and no
 * temporary file, even when a terminating signal or a file-size limit stops it. A character
 * device or FIFO (/dev/null, /dev/stdout, a pipe) is written directly, never renamed over; a
 * symbolic link to a regular file replaces that file; a directory, block device, socket or
 * dangling link is refused. Returns 0 or a negative error code with a one-line reason in msg.
 */
int bench__write_atomic(const char *path, const char *text, char *msg, size_t msglen);

/** Temporary files older than this (s) whose process is gone are removed by a later save. */
#define BENCH__STALE_TMP_S 600.0
/** Default wait (s) for another run's lock on a baseline; $BENCH_LOCK_TIMEOUT replaces it. */
#define BENCH__LOCK_TIMEOUT_S 600.0

/**
 * Names a temporary file that a terminating signal must remove (files.c); returns its slot for
 * bench__tmp_unregister, or -1 when the registry is full (the file is then not cleaned up).
 */
int bench__tmp_register(const char *name);
/** Forgets a temporary file (renamed or removed); -1 is a no-op. */
void bench__tmp_unregister(int slot);
/**
 * Removes the files in dir named like temporary files (ANY.tmp.PID.XXXXXX) whose process PID is
 * gone and that were last modified at least older_than_s seconds ago.
 */
void bench__tmp_sweep(const char *dir, double older_than_s);

struct stat;
/**
 * Opens path for reading without waiting (a FIFO would block forever) and refuses anything that
 * is not a regular file (BENCH_EIO, msg names the path and what it is). On success *fd is a
 * blocking descriptor the caller closes and *st describes the file.
 */
int bench__open_regular(const char *path, int *fd, struct stat *st, char *msg, size_t msglen);

/**
 * Takes the exclusive lock of a baseline: flock on PATH.lock beside it, created when missing.
 * When another run holds it, prints "waiting for lock held by another run" on stderr and waits
 * up to $BENCH_LOCK_TIMEOUT seconds (default BENCH__LOCK_TIMEOUT_S), then fails (BENCH_EIO).
 * On success *fd holds the lock until bench__lock_release(*fd).
 */
int bench__lock_acquire(const char *path, int *fd, char *msg, size_t msglen);
/** Releases a lock taken by bench__lock_acquire; -1 is a no-op. */
void bench__lock_release(int fd);
/** bench__write_atomic of text printed by cJSON, then frees it; NULL text: out of memory. */
int bench__write_json_text(const char *path, char *text, char *msg, size_t msglen);

/* ---- saved runs: baselines and results files ---- */

/** One benchmark read back from a file. */
typedef struct bench__entry {
    char id[256];
    bench__status status;
    size_t nsamples;
    double *iters;     /* per sample: iterations */
    double *totals_ns; /* per sample: total ns */
    uint32_t *process; /* per sample: the worker process it came from; NULL: one process */
    unsigned processes; /* worker processes (1 + the largest index); 0 without `process` */
    uint64_t bytes_per_iter;
    uint64_t elements_per_iter;
    bench__noise noise;
    size_t nmetrics;
    struct bench__saved_metric *metrics; /* per-sample metrics, as in bench__result */
} bench__entry;

/** A metric read back from a file: its per-sample totals. */
typedef struct bench__saved_metric {
    char name[64];
    char unit[16];
    double *totals; /* nsamples values */
} bench__saved_metric;

/** A results or baseline file, validated. Entries are sorted by id and unique. */
typedef struct bench__saved {
    bench__context_id ctx;
    size_t n;
    bench__entry *entries;
} bench__saved;

/** Largest file the loader reads, in bytes, and the most entries and samples it accepts. */
#define BENCH__MAX_FILE_BYTES (16u * 1024 * 1024)
#define BENCH__MAX_ENTRIES 100000
#define BENCH__MAX_SAMPLES 100000
/** Largest run-to-run sd of ln(median) a calibrated entry may claim (a factor e between runs). */
#define BENCH__MAX_LOG_SD 1.0
/** Room beyond sd * sqrt(runs) between an entry's log_median_mean and its own log-median. */
#define BENCH__LOG_MEAN_SLACK 0.05

/**
 * Reads and validates a results or baseline file. Returns 0; BENCH_EIO when the file cannot be
 * read (msg says why, e.g. it does not exist); BENCH_EINVAL when its content is not a valid
 * file of schema_version 1 (msg names the file, the JSON path and what is wrong); BENCH_ENOMEM.
 * On failure *out is empty. Never crashes on hostile input; allocation is bounded by the limits.
 */
int bench__saved_load(const char *path, bench__saved *out, char *msg, size_t msglen);
/**
 * bench__saved_load of a text in memory (the fuzz target's entry point): `name` stands for the
 * file in messages; text[len] must be a NUL byte (text itself may hold others: rejected).
 */
int bench__saved_parse(const char *name, const char *text, size_t len, bench__saved *out,
                       char *msg, size_t msglen);
/** Frees what a saved run owns; safe on a zeroed one. */
void bench__saved_destroy(bench__saved *s);
/** The entry with this id, or NULL. */
const bench__entry *bench__saved_find(const bench__saved *s, const char *id);

/**
 * Saves results as the baseline at `path`: entries of an existing valid file whose ids are not
 * in `all` are kept; the others are replaced. Atomic like bench__json_write_file. Refuses to
 * replace an existing file that is not a valid baseline (BENCH_EINVAL, message names it).
 */
int bench__baseline_save(const char *path, const bench__context *ctx, const bench__result *all,
                         size_t n, char *msg, size_t msglen);

/* ---- interleaved A/B of two builds (ab.c) ---- */

typedef struct bench__ab_options {
    double seconds;            /* per benchmark, all pairs together */
    int pairs;                 /* worker pairs started one after another per benchmark */
    double sample_ms;          /* target duration of one sample, ms */
    double significance_level; /* alpha over all compared benchmarks (Bonferroni) */
    double noise_threshold;    /* smallest relative change reported as a regression */
    bool strict;               /* --baseline-strict: new and removed benchmarks are an error */
    const char *const *removed; /* ids the old build lists for the FILTERs and this one lacks */
    size_t nremoved;
} bench__ab_options;

/** Worker side of --ab: runs benchmark `id` driven over stdin/stdout. Returns the exit code. */
int bench__ab_worker_main(const bench__instance *all, size_t n, const char *id,
                          const bench__run_options *opt);
/** Coordinator side of --ab: compares `other` (old) with this program (new). Exit code. */
int bench__ab_run(const char *other, const bench__instance *all, const bool *selected, size_t n,
                  const bench__ab_options *o, bool fail_on_regression, bool color);

/**
 * Confirms one benchmark's change by an interleaved A/B run of old_prog (A, a saved program
 * snapshot) against this program (B), as --ab measures (o: time and pairs; m: benchmarks
 * confirmed together, for Bonferroni). Fills *out with the paired estimate, interval, p and
 * verdict. Returns 0; BENCH_EINVAL when old_prog lacks or skips the benchmark; BENCH_EIO when a
 * worker failed or old_prog cannot run; msg says why.
 */
int bench__ab_confirm(const char *old_prog, const char *id, const bench__ab_options *o,
                      size_t m, struct bench__change *out, char *msg, size_t msglen);

/** Seconds and worker pairs of the interleaved run that confirms a suspect change against a
 * baseline's program snapshot (--confirm-time). Without --confirm-time, each suspect gets
 * BENCH__DEFAULT_CONFIRM_TIME seconds, or its share of BENCH__CONFIRM_BUDGET when there are more
 * suspects than that fits, but never less than BENCH__CONFIRM_MIN_TIME: on a busy machine
 * every benchmark of a suite can be a suspect, and 22 of them at 10 s each made a whole-suite
 * comparison take 5.4 minutes. */
#define BENCH__DEFAULT_CONFIRM_TIME 10.0
#define BENCH__CONFIRM_BUDGET 90.0
#define BENCH__CONFIRM_MIN_TIME 4.0
#define BENCH__CONFIRM_PAIRS 5

/* ---- calibration (calibrate.c) ---- */

/**
 * Runs this program (/proc/self/exe) with argv, stdout discarded, and waits. Returns 0 when it
 * exited 0, else BENCH_EIO with the reason in msg.
 */
int bench__run_self(char *const *argv, char *msg, size_t msglen);
/** Median ns per iteration of a saved entry's samples. */
double bench__entry_median(const bench__entry *e);
/**
 * Sets each OK result's noise from its own median and the medians of the same id in `runs`
 * (separate processes): the mean and sd of the natural logs over all of them.
 */
void bench__noise_from_runs(bench__result *results, size_t n, const bench__saved *runs,
                            size_t nruns);

/* ---- program snapshots (snapshot.c) ---- */

/**
 * Hashes the file at path (64-bit FNV-1a over its bytes) into out as "fnv1a64:HEX"; *bytes (may
 * be NULL) gets its size. Returns 0, or BENCH_EIO with the reason in msg.
 */
int bench__program_hash(const char *path, char *out, size_t len, double *bytes, char *msg,
                        size_t msglen);
/**
 * Hashes the shared libraries this process runs code from (every executable file mapping in
 * /proc/self/maps but the program itself: paths and contents, in path order) into out, like
 * bench__program_hash. A snapshot of the program runs with whatever libraries are installed
 * when it runs, so a change of these makes a confirmation against it unsound.
 */
int bench__libraries_hash(char *out, size_t len, char *msg, size_t msglen);
/**
 * Copies the running program into a temporary file in dir (its path into tmp), fsynced, mode
 * 0755, and writes its hash into hash and its size into *bytes. Returns 0, or BENCH_EIO with the
 * reason in msg (nothing is left behind then).
 */
int bench__snapshot_prepare(const char *dir, const char *name, char *tmp, size_t tmplen,
                            char *hash, size_t hashlen, double *bytes, char *msg, size_t msglen);
/** Renames a prepared snapshot to DIR/NAME.program; 0, or BENCH_EIO (the temporary is removed). */
int bench__snapshot_commit(const char *dir, const char *name, const char *tmp, char *msg,
                           size_t msglen);

/* ---- drift canaries (canary.c) ---- */

/** Measures the canaries (about 0.6 s) into out, ns per unit each. 0, or BENCH_ENOMEM. */
int bench__canaries_measure(double out[BENCH__NCANARIES]);
/**
 * The machine's drift from `then` to `now`: drift[k] = now/then - 1 for each canary known on both
 * sides (NaN otherwise), and in words ("reads from memory 12.0% slower, ...") into words.
 * Returns how many canaries were known on both sides.
 */
int bench__canaries_drift(const double now[BENCH__NCANARIES],
                          const double then[BENCH__NCANARIES], double drift[BENCH__NCANARIES],
                          char *words, size_t len);
/**
 * The machine's drift as one number for the change test: the median of the canaries' absolute
 * log ratios (drift[k] as bench__canaries_drift gives them; NaN ones skipped), NaN when none is
 * known. The median, not the mean square: on a busy machine one canary (memory reads, most often)
 * can move by 50-100% in a single measurement while the kinds of work most benchmarks do moved
 * by a few percent, and that one reading must not make every comparison blind.
 */
double bench__canaries_drift_sd(const double drift[BENCH__NCANARIES]);

/* ---- formatting shared by the text reporters ---- */

/** Formats a duration given in ns with a unit (ps, ns, µs, ms, s) and 4 significant digits. */
void bench__fmt_time(char *buf, size_t len, double ns);
/** Formats a rate (per second) with an SI prefix and the unit, e.g. "1.2345 GB/s". */
void bench__fmt_rate(char *buf, size_t len, double per_s, const char *unit);
/** "ok", "skipped" or "failed". */
const char *bench__status_name(bench__status s);
/**
 * The bootstrap seed of one benchmark: the run's seed XOR the FNV-1a hash of its id, so a
 * benchmark's intervals depend on its samples and the seed, not on which others ran.
 */
uint64_t bench__id_seed(uint64_t seed, const char *id);
/** The name of a sampling plan ("auto", "linear", "flat"). */
const char *bench__sampling_name(bench_sampling s);

/*
 * Untrusted text (benchmark names, messages, strings read from files) goes through one escaping
 * before any text output: C0 controls (ESC, CR, BEL, newline, tab, ...), DEL, C1 controls and
 * bytes that are not valid UTF-8 become \xNN, the bidirectional formatting characters \uNNNN;
 * everything else, backslashes and valid UTF-8 included, is kept. Escaping is idempotent.
 */
/** Escapes s into buf (truncated at a character boundary to fit len); returns buf. */
const char *bench__escape(char *buf, size_t len, const char *s);
/** Writes s, escaped as bench__escape does, to o. */
void bench__fputs_escaped(FILE *o, const char *s);
/** Room for any escaped id of at most 255 bytes (4 escaped bytes per byte at most). */
#define BENCH__ESCAPED_ID 1024
/**
 * Whether a text cell of CSV output needs the OWASP guard (a leading single quote): it starts
 * with =, +, -, @, tab or CR and is not a plain number.
 */
bool bench__csv_needs_guard(const char *s);

/** snprintf that always terminates and never warns about truncation. */
void bench__msg(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* HARNESS_INTERNAL_H */
