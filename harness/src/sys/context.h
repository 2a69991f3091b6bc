/*
 * context.h: the system context that travels with every result and baseline (machine, build,
 * GPU, drift canaries), its identity facts and how two of them differ.
 */
#ifndef HARNESS_CONTEXT_H
#define HARNESS_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/options.h"
#include "core/sha256.h"
#include "sys/canary.h"
#include "sys/clock.h"

/* ---- run context and reporters ---- */

/** The CPU facts that libcpuid and the OS (sysfs) both give, and that are cross-checked. */
#define BENCH__CPU_CHECKED_FACTS 5

/**
 * A CPU fact on which libcpuid and the OS disagree. In a VM libcpuid reads the CPUID leaves the
 * hypervisor shows (seen: "1 cores, 254 threads" and an L3 of 520192 KiB on a 2-vCPU guest);
 * the kernel's topology and cache sizes are what the program really runs on, so the context
 * keeps the OS's figure and records libcpuid's here.
 */
typedef struct bench__cpu_disagreement {
    const char *fact; /* "cores", "threads", "l1d_kib", "l2_kib" or "l3_kib" (static) */
    int libcpuid;     /* libcpuid's figure */
    int os;           /* the OS's figure (sysfs), the one the context keeps */
} bench__cpu_disagreement;

/** The CPU as the system context records it; -1 or "" where unknown. */
typedef struct bench__cpu {
    char vendor[32];
    char brand[128];
    int family;       /* CPUID family, extended family included */
    int model;        /* CPUID model, extended model included */
    int stepping;
    int cores;        /* physical cores online (the OS's count where it has one) */
    int threads;      /* logical CPUs online (likewise) */
    int l1d_kib;      /* L1 data cache, KiB per core */
    int l2_kib;       /* L2 cache, KiB per instance */
    int l3_kib;       /* L3 cache, KiB per instance (the one CPU 0 uses) */
    char features[256]; /* SIMD features present, space-separated (sse2 ... avx512f) */
    const char *source; /* where the facts came from */
    /* Where each of l1d_kib, l2_kib and l3_kib came from (static): "sysfs" (the OS's),
     * "libcpuid" (the CPUID leaves, the OS giving none; shown only when plausible) or
     * "unknown" (no source vouches for a figure: the field is -1). */
    const char *cache_source[3];
    int cache_rejected_kib[3]; /* libcpuid's figure that failed the plausibility check; -1 none */
    char cache_note[160];      /* why libcpuid's figures were not used; "" none */
    /* The largest cache of level 3 or above and its source, as cache_source; -1 unknown. */
    int llc_kib;
    const char *llc_source;
    /* Facts where libcpuid's figure differs from the OS's (the fields above hold the OS's). */
    bench__cpu_disagreement disagreements[BENCH__CPU_CHECKED_FACTS];
    int ndisagreements;
} bench__cpu;

/** The CPU's topology and CPU 0's caches as the OS describes them in sysfs; -1 where unknown. */
typedef struct bench__os_cpu {
    int cores;   /* online CPUs counted once per set of thread siblings (physical cores) */
    int threads; /* online CPUs */
    int l1d_kib; /* CPU 0's level-1 data cache, KiB */
    int l2_kib;  /* its level-2 cache, KiB */
    int l3_kib;  /* its level-3 cache, KiB */
    int llc_kib; /* its largest cache of level 3 or above (an L4 where there is one), KiB */
} bench__os_cpu;

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
    char module_loading[8];   /* CUDA module loading in effect: "eager", "lazy", "" unknown */
    bool module_loading_set;  /* the harness set CUDA_MODULE_LOADING=EAGER (it was unset) */
    bool nvml_available;      /* GPU state (clocks, power, ...) is read through NVML */
    char nvml_reason[256];    /* why not, when !nvml_available; "" otherwise */
    int sm_clock_default_mhz; /* NVML's default applications SM clock, MHz */
    int sm_clock_max_mhz;     /* NVML's highest SM clock, MHz */
    int mem_clock_max_mhz;    /* NVML's highest memory clock, MHz */
    int sm_clock_locked_mhz;  /* SM clock locked for this run (--gpu-lock-clocks), MHz; -1 none */
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

/** How the benchmark program was compiled, as the compiler recorded it in the executable
 * (program_build.c); not the harness library's build. */
typedef struct bench__program_build {
    char compiler[128]; /* e.g. "GNU C17 12.2.0"; "" unknown */
    char flags[1024];   /* the switches, e.g. "-mtune=generic -march=x86-64 -g -O2"; "" unknown */
    const char *source; /* "debug info", "command line record" or "none" (static storage) */
} bench__program_build;

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
    /* The hypervisor it runs under as systemd-detect-virt names it ("kvm", "vmware", ...),
     * "none" on bare metal; "" unknown (sysinfo.c). */
    char virtualization[32];
    int numa_nodes;     /* NUMA nodes online (sysfs node/online); -1 unknown */
    /* The memory canary's buffer (canary.c), B, and why it has that size. */
    double canary_memory_bytes;
    char canary_memory_why[192];
    char boost[8];      /* "on", "off" or "" unknown */
    double loadavg[3];  /* 1, 5, 15 minute load averages; -1 unknown */
    /* The source revision the program was built from: BENCH_GIT_REVISION if set, else the one
     * every benchmark file recorded (BENCH_BUILD_REVISION); "" unknown. */
    char git_revision[64];
    char cwd_git_revision[64]; /* the working directory's checkout's; "" outside one */
    /* The running program's identity (snapshot.c), "sha256:" and 64 hex digits; "" when not
     * read. A saved baseline also names its snapshot, the program's copy beside it, and holds
     * the snapshot's signature with the saving user's key (trust.c). */
    char program_hash[BENCH__HASH_TEXT];
    char program_file[96]; /* baselines only: "NAME.program"; "" none */
    char program_mac[BENCH__MAC_TEXT]; /* baselines only: "hmac-sha256:HEX"; "" unsigned */
    char program_libs[BENCH__HASH_TEXT]; /* hash over the shared libraries it runs code from */
    double program_bytes;  /* size of the program, bytes; 0 unknown */
    /* Drift canaries (zeroed when not measured). */
    bench__canaries canary;
    bool have_canaries;
    bench__cpu cpu;
    const char *compiler;       /* the harness library's compiler */
    const char *compiler_flags; /* the harness library's flags */
    const char *build_type;     /* the harness library's CMAKE_BUILD_TYPE */
    bench__program_build program_build; /* the benchmark program's, from its executable */
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
    char program_hash[BENCH__HASH_TEXT]; /* "" when the file has none */
    char program_file[96]; /* the snapshot beside a baseline; "" none */
    char program_mac[BENCH__MAC_TEXT]; /* the snapshot's signature; "" none */
    double program_bytes; /* the program's size, bytes; 0 when the file has none */
    char program_libs[BENCH__HASH_TEXT]; /* "" when the file has none */
    bench__canaries canary; /* v[k] 0 when the file has none */
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

/** One cache of CPU 0 as sysfs describes it (sysinfo.c). */
typedef struct bench__cache_info {
    char type[32];    /* "Data", "Instruction", "Unified" */
    int level;        /* 1, 2, 3 */
    double bytes;     /* size, B */
    int num_sharing;  /* logical CPUs that share it; 0 unknown */
} bench__cache_info;

/**
 * Where sysfs describes the CPUs: ROOT/devices/system/cpu, ROOT being the environment's
 * BENCH_SYSFS_ROOT when set and not empty (a testing aid: a prepared tree stands for the
 * machine's), else "/sys". Written into buf, which it returns. bench__sysinfo_* read below it.
 */
const char *bench__sysfs_cpu(char *buf, size_t len);

/**
 * The caches of CPU 0 from ROOT/cpu0/cache (ROOT: bench__sysfs_cpu or a test's tree), at most
 * max of them, into out; returns how many (0 where sysfs has nothing).
 */
size_t bench__sysinfo_caches(const char *root, bench__cache_info *out, size_t max);
/**
 * The topology (ROOT/online, ROOT/cpuN/topology/thread_siblings_list) and CPU 0's cache sizes
 * (ROOT/cpu0/cache) into *out; what cannot be read is -1.
 */
void bench__sysinfo_os_cpu(const char *root, bench__os_cpu *out);
/**
 * Cross-checks the CPU facts against the OS's: each of cores, threads and the three cache sizes
 * that the OS knows replaces the figure in *cpu; where cpu's came from libcpuid (libcpuid true)
 * and differs, the pair is recorded in cpu->disagreements. A cache size the OS does not give is
 * kept from libcpuid only when plausible (bench__cpu_cache_plausible); otherwise it becomes -1
 * and the rejected figure and the reason are kept. Sets cache_source, llc_kib and llc_source.
 * Pure: no I/O.
 */
void bench__cpu_reconcile(bench__cpu *cpu, const bench__os_cpu *os, bool libcpuid);
/**
 * Whether libcpuid's cache sizes can be shown when the OS gives none: its own topology is
 * consistent (1 <= cores <= threads <= 8 x cores), L1d is at most 1 MiB, L2 at most 64 MiB, and
 * L3 at most 1 GiB and at most 64 MiB per core (cores: the OS's count where known, else
 * libcpuid's). lib_cores and lib_threads: libcpuid's topology (<= 0 unknown); kib: its L1d, L2
 * and L3 (<= 0: none given). Returns for each level whether it passes into ok[]; why (len bytes)
 * says what failed, "" when all given pass.
 */
void bench__cpu_cache_plausible(int lib_cores, int lib_threads, int cores, const int kib[3],
                                bool ok[3], char *why, size_t len);
/**
 * MHz of CPU 0: cpufreq's cpuinfo_max_freq (kHz), else the first "cpu MHz" of /proc/cpuinfo,
 * rounded; 0 when neither is readable.
 */
double bench__sysinfo_cpu_mhz(void);
/** The running program's path (/proc/self/exe) into buf; "" when unreadable. */
void bench__sysinfo_executable(char *buf, size_t len);

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

#endif /* HARNESS_CONTEXT_H */
