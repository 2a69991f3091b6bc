/*
 * alloc.c: allocation statistics (--alloc-stats): the malloc family counted per sample, plus a
 * few per-benchmark facts about the heap and the process (docs/allocations.md).
 *
 * How. The library never defines malloc: a program that links it keeps whatever allocator it
 * has (glibc's, a preloaded jemalloc, a sanitizer's), with or without --alloc-stats. The
 * counting lives in a separate preload library, libharness_alloc.so (alloc_shim.c). With
 * --alloc-stats, bench_main calls bench__alloc_preload first: when the shim is not loaded yet,
 * it re-executes the program (/proc/self/exe, same arguments) with the shim prepended to
 * LD_PRELOAD and BENCH_ALLOC_PRELOADED=1 in the environment (which also stops a second
 * attempt); the environment is inherited, so processes the program starts of itself load the
 * shim too. The probe finds the shim's counters with dlsym(RTLD_DEFAULT) and checks that a call
 * of malloc reaches them.
 *
 * Where the shim is: $BENCH_ALLOC_SHIM when set; else libharness_alloc.so beside the object
 * that holds this code (the shared libharness, or the program that linked the static one);
 * else the build tree's and then the install directory's copy, paths fixed at build time.
 *
 * What cannot work says so (exit 2): a statically linked program (no dynamic loader, so no
 * LD_PRELOAD), a shim that is missing or did not load, a program under valgrind that was not
 * started with the shim preloaded (re-executing would leave valgrind).
 *
 * What is counted, while a benchmark with the probe attached runs (attach to detach):
 *   - allocations, allocated_bytes (metrics, per sample): successful calls of the malloc family
 *     inside the sample and the bytes they asked for (calloc: n * size; realloc: the new size).
 *   - peak_heap_bytes (fact): the highest live heap above the level at attach, in usable bytes.
 *   - max_rss_bytes, minor_faults, major_faults (facts): from /proc and getrusage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/base.h"
#include "core/probe.h"
#include "core/result.h"
#include "probes/alloc.h"
#include "probes/alloc_shim.h"

#ifndef HARNESS_ALLOC_SHIM_BUILD_PATH
#define HARNESS_ALLOC_SHIM_BUILD_PATH ""
#endif
#ifndef HARNESS_ALLOC_SHIM_INSTALL_PATH
#define HARNESS_ALLOC_SHIM_INSTALL_PATH ""
#endif
#define SHIM_NAME "libharness_alloc.so"
#define PRELOADED_ENV "BENCH_ALLOC_PRELOADED"

extern char **environ;

/* ---- finding the shim ---- */

/* Whether the main program has a dynamic loader (PT_INTERP): LD_PRELOAD means nothing to a
 * statically linked one (static-pie included). */
static int main_has_interp(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    int *found = arg;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_INTERP)
            *found = 1;
    return 1; /* the first object reported is the main program: stop there */
}

static bool dynamically_linked(void)
{
    int found = 0;
    dl_iterate_phdr(main_has_interp, &found);
    return found;
}

/* The loaded shim's counters, or NULL. */
static const bench__alloc_counters *loaded_shim(void)
{
    if (!dynamically_linked())
        return NULL;
    const bench__alloc_counters *(*get)(void);
    *(void **)&get = dlsym(RTLD_DEFAULT, BENCH__ALLOC_SHIM_SYMBOL);
    const bench__alloc_counters *api = get ? get() : NULL;
    return api && api->abi == BENCH__ALLOC_SHIM_ABI ? api : NULL;
}

static bool readable(const char *path)
{
    return path[0] && access(path, R_OK) == 0;
}

/* Writes the shim's path into buf; returns false with the places looked at in msg. */
static bool find_shim(char *buf, size_t len, char *msg, size_t msglen)
{
    const char *env = getenv("BENCH_ALLOC_SHIM");
    if (env && *env) {
        bench__msg(buf, len, "%s", env);
        if (readable(buf))
            return true;
        bench__msg(msg, msglen, "BENCH_ALLOC_SHIM names %s, which cannot be read", env);
        return false;
    }
    char beside[PATH_MAX] = "";
    Dl_info info;
    if (dladdr((void *)bench__alloc_preload, &info) && info.dli_fname) {
        char self[PATH_MAX];
        const char *obj = info.dli_fname;
        /* The main program reports its name as run; /proc/self/exe is its real path. */
        if (!strchr(obj, '/')) {
            ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
            self[n > 0 ? n : 0] = '\0';
            obj = self;
        }
        const char *slash = strrchr(obj, '/');
        if (slash)
            bench__msg(beside, sizeof beside, "%.*s/%s", (int)(slash - obj), obj, SHIM_NAME);
    }
    const char *candidates[] = {beside, HARNESS_ALLOC_SHIM_BUILD_PATH,
                                HARNESS_ALLOC_SHIM_INSTALL_PATH};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
        if (readable(candidates[i])) {
            bench__msg(buf, len, "%s", candidates[i]);
            return true;
        }
    bench__msg(msg, msglen, "the allocation shim %s was not found (looked beside the program or "
                            "library, in %s and in %s): set BENCH_ALLOC_SHIM to its path",
               SHIM_NAME, HARNESS_ALLOC_SHIM_BUILD_PATH[0] ? HARNESS_ALLOC_SHIM_BUILD_PATH : "-",
               HARNESS_ALLOC_SHIM_INSTALL_PATH[0] ? HARNESS_ALLOC_SHIM_INSTALL_PATH : "-");
    return false;
}

/* ---- re-executing with the shim ---- */

/* The environment of the re-executed program: environ with LD_PRELOAD=shim[:old],
 * BENCH_ALLOC_PRELOADED=1 and, in an AddressSanitizer program, ASan's link-order check off
 * (the shim must come before ASan's runtime to see the calls). Caller frees the array. */
static char **child_env(const char *shim, bool asan)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 4, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    const char *old_preload = getenv("LD_PRELOAD"), *old_asan = getenv("ASAN_OPTIONS");
    for (size_t i = 0; i < n; i++)
        if (!bench__starts_with(environ[i], "LD_PRELOAD=") &&
            !bench__starts_with(environ[i], PRELOADED_ENV "=") &&
            !(asan && bench__starts_with(environ[i], "ASAN_OPTIONS=")))
            env[k++] = environ[i];
    size_t plen = strlen(shim) + (old_preload ? strlen(old_preload) : 0) + 16;
    char *preload = malloc(plen);
    char *asan_opts = NULL;
    if (preload)
        snprintf(preload, plen, "LD_PRELOAD=%s%s%s", shim, old_preload && *old_preload ? ":" : "",
                 old_preload ? old_preload : "");
    if (asan) {
        size_t alen = (old_asan ? strlen(old_asan) : 0) + 64;
        asan_opts = malloc(alen);
        if (asan_opts)
            snprintf(asan_opts, alen, "ASAN_OPTIONS=%s%sverify_asan_link_order=0",
                     old_asan ? old_asan : "", old_asan && *old_asan ? ":" : "");
    }
    if (!preload || (asan && !asan_opts)) {
        free(preload);
        free(asan_opts);
        free(env);
        return NULL;
    }
    env[k++] = preload;
    env[k++] = PRELOADED_ENV "=1";
    if (asan_opts)
        env[k++] = asan_opts;
    env[k] = NULL;
    return env;
}

int bench__alloc_preload(int argc, char **argv, char *msg, size_t msglen)
{
    if (loaded_shim())
        return 0;
    if (!dynamically_linked()) {
        bench__msg(msg, msglen, "%s", "allocation statistics are unavailable in a statically "
                                      "linked program: they need the preload library "
                                      SHIM_NAME ", and a static program has no dynamic loader "
                                      "to preload it (link dynamically to count allocations)");
        return BENCH_EUNAVAIL;
    }
    const char *preload = getenv("LD_PRELOAD");
    if (getenv(PRELOADED_ENV)) {
        bench__msg(msg, msglen, "the allocation shim was preloaded (LD_PRELOAD=%s) but is not "
                                "loaded in this program", preload ? preload : "");
        return BENCH_EUNAVAIL;
    }
    char shim[PATH_MAX];
    if (!find_shim(shim, sizeof shim, msg, msglen))
        return BENCH_EUNAVAIL;
    if (strpbrk(shim, ": \t")) {
        bench__msg(msg, msglen, "the allocation shim's path %s holds a colon or a space, which "
                                "LD_PRELOAD cannot carry", shim);
        return BENCH_EUNAVAIL;
    }
    if (preload && strstr(preload, "vgpreload")) {
        bench__msg(msg, msglen, "under valgrind, start the program with the shim preloaded, "
                                "and let valgrind replace only libc's malloc (re-executing would "
                                "leave valgrind): LD_PRELOAD=%s valgrind "
                                "--soname-synonyms=somalloc=nomatch ...", shim);
        return BENCH_EUNAVAIL;
    }
    bool asan = dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
    char **env = child_env(shim, asan);
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!env || !args) {
        free(args);
        free(env);
        bench__msg(msg, msglen, "%s", "out of memory");
        return BENCH_ENOMEM;
    }
    memcpy(args, argv, (size_t)argc * sizeof *args);
    fflush(stdout);
    fflush(stderr);
    execve("/proc/self/exe", args, env);
    bench__msg(msg, msglen, "cannot re-execute the program with the allocation shim preloaded: "
                            "/proc/self/exe: %s", strerror(errno));
    free(args);
    free(env);
    return BENCH_EUNAVAIL;
}

/* ---- the probe ---- */

typedef struct alloc_probe {
    const bench__alloc_counters *shim;
    uint64_t allocs0;  /* counters at the start of the running sample */
    uint64_t bytes0;   /* B */
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
    s->shim->reset_live();
    /* Last: the probe's own work above stays out of the counts. */
    s->shim->set_counting(1);
    return 0;
}

static void alloc_start(bench__probe *p)
{
    alloc_probe *s = p->state;
    s->shim->read(&s->allocs0, &s->bytes0);
}

static void alloc_stop(bench__probe *p, double *values, double *fraction)
{
    alloc_probe *s = p->state;
    uint64_t allocs, bytes;
    s->shim->read(&allocs, &bytes);
    values[0] = (double)(allocs - s->allocs0);
    values[1] = (double)(bytes - s->bytes0);
    *fraction = 1.0;
}

static void alloc_detach(bench__probe *p, bench__result *r)
{
    alloc_probe *s = p->state;
    /* First: what follows (reading /proc) allocates nothing, but stays out anyway. */
    s->shim->set_counting(0);
    bench__fact_add(r, "peak_heap_bytes", "B", (double)s->shim->peak());
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
    alloc_probe *s = p->state;
    if (s->shim)
        s->shim->set_counting(0);
}

/*
 * Whether calls of malloc reach the shim. A tool that replaces malloc by its address (valgrind
 * does, in the main executable) or an allocator defined in the program itself would bypass it,
 * and every count would be 0. The calls go through volatile pointers so the compiler cannot
 * drop or inline them.
 */
static bool shim_sees_malloc(const bench__alloc_counters *shim)
{
    void *(*volatile m)(size_t) = malloc;
    void (*volatile f)(void *) = free;
    uint64_t before, after, bytes;
    shim->read(&before, &bytes);
    shim->set_counting(1);
    void *p = m(1);
    shim->set_counting(0);
    f(p);
    shim->read(&after, &bytes);
    return after != before;
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
    const bench__alloc_counters *shim = loaded_shim();
    if (!shim) {
        bench__msg(msg, msglen, "the allocation shim %s is not loaded in this program (bench "
                                "--alloc-stats loads it itself; a program calling the probe "
                                "directly needs LD_PRELOAD)", SHIM_NAME);
        return BENCH_EUNAVAIL;
    }
    if (!shim_sees_malloc(shim)) {
        bench__msg(msg, msglen, "%s", "malloc is replaced by another layer here, so allocations "
                                      "cannot be counted (under valgrind, add "
                                      "--soname-synonyms=somalloc=nomatch to its options)");
        return BENCH_EUNAVAIL;
    }
    state.shim = shim;
    if (!reset_hwm()) {
        static bool warned;
        if (!warned)
            bench__errf("warning: --alloc-stats: /proc/self/clear_refs cannot be "
                        "written, so max_rss_bytes is not reported\n");
        warned = true;
    }
    *out = &probe;
    return 0;
}

static int alloc_create(const char *arg, bench__probe **out, char *msg, size_t msglen)
{
    (void)arg;
    return bench__alloc_probe_create(out, msg, msglen);
}

BENCH__PROBE_KIND(alloc) = {.name = "alloc", .flag = "--alloc-stats", .create = alloc_create};
