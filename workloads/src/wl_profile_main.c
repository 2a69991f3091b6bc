/*
 * wl_profile: runs the reference profiling workload once and prints its per-phase wall times and
 * checksum, for use under perf, valgrind or a plain stopwatch. It links only the workload library.
 * With --trace FILE it also writes the pass as a timeline in the Chrome trace event format (the
 * format of bench --trace, docs/trace.md): one slice for the pass and one inside it for each
 * phase the workload's phase hook reports (build, activation, similarity, decay), written
 * atomically (a temporary file beside FILE, renamed over it) after the pass; the temporary file
 * is created before the pass, so a FILE that cannot be written costs no workload run.
 * Exit status: 0 ok, 2 usage error or a FILE that cannot be written, 3 the workload failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "workloads/workloads.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: wl_profile [--seed N] [--simd auto|scalar|avx2] [--similarity-queries N]\n"
            "                  [--similarity-batch N] [--trace FILE]\n"
            "Runs the reference graph workload (10k nodes, 50k edges, D=768; 1000 activation\n"
            "and 1000 top-10 similarity queries, in batches of 64; one decay pass) and prints\n"
            "per-phase wall times and the 64-bit checksum. Default seed 42. WL_SIMD=scalar|avx2\n"
            "also selects the SIMD path. --similarity-queries N (1..1000000) runs fewer or more\n"
            "similarity queries (the checksum is then another); --similarity-batch N (1..4096)\n"
            "sets the batch (1: one query per call). --trace FILE also writes the pass and its\n"
            "phases as a Chrome trace event file (JSON; ui.perfetto.dev, chrome://tracing,\n"
            "speedscope). Exit: 0 ok, 2 usage error or FILE not writable, 3 workload failed.\n");
}

/* --trace: the pass's phases as the workload's phase hook reports them. */
enum { MAX_PHASES = 16 };
typedef struct trace_slice {
    const char *name;         /* static: the workload's phase names */
    int64_t start_ns, end_ns; /* CLOCK_MONOTONIC; end_ns 0: not ended */
} trace_slice;
typedef struct trace {
    const char *path;
    char *tmp;        /* the temporary file beside path, created before the pass */
    FILE *f;
    int64_t t0_ns;    /* the pass's start, CLOCK_MONOTONIC */
    int64_t end_ns;   /* its end */
    size_t n;
    trace_slice phase[MAX_PHASES];
} trace;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The phase hook: a phase begins (a new slice) or ends (the last one of that name). */
static void trace_phase(void *arg, const char *name, int begin)
{
    trace *t = arg;
    int64_t now = now_ns();
    if (begin) {
        if (t->n < MAX_PHASES)
            t->phase[t->n++] = (trace_slice){name, now, 0};
        return;
    }
    for (size_t i = t->n; i-- > 0;)
        if (strcmp(t->phase[i].name, name) == 0 && t->phase[i].end_ns == 0) {
            t->phase[i].end_ns = now;
            return;
        }
}

/* Creates the temporary file beside t->path, a new file of this name (O_EXCL: never through a
 * link another user planted there in a shared folder), with the usual mode less the umask; 0, or
 * -1 after one line naming FILE. */
static int trace_open(trace *t, const char *path)
{
    t->path = path;
    size_t len = strlen(path) + 32;
    t->tmp = malloc(len);
    if (!t->tmp) {
        fprintf(stderr, "wl_profile: --trace %s: out of memory\n", path);
        return -1;
    }
    snprintf(t->tmp, len, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(t->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    t->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!t->f) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(t->tmp);
        }
        fprintf(stderr, "wl_profile: --trace %s: cannot write it (%s)\n", path, strerror(e));
        free(t->tmp);
        t->tmp = NULL;
        return -1;
    }
    return 0;
}

static double us(int64_t ns)
{
    return (double)ns / 1e3;
}

/* Writes the document and renames it over FILE; 0, or -1 after one line naming FILE (the
 * temporary file removed). */
static int trace_close(trace *t, const wl_profile_result *r, uint64_t seed)
{
    FILE *f = t->f;
    fprintf(f, "{\"traceEvents\":[\n");
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":"
               "{\"name\":\"wl_profile (seed %" PRIu64 ", simd %s)\"}},\n", seed, r->simd);
    fprintf(f, "{\"name\":\"workload pass\",\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":0,"
               "\"dur\":%.3f,\"cat\":\"workload\",\"args\":{\"checksum\":\"0x%016" PRIx64
               "\",\"edges_traversed\":%" PRIu64 ",\"nodes_fired\":%" PRIu64 "}}",
            us(t->end_ns - t->t0_ns), r->checksum, r->edges_traversed, r->nodes_fired);
    for (size_t i = 0; i < t->n; i++) {
        int64_t end = t->phase[i].end_ns ? t->phase[i].end_ns : t->end_ns;
        fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":%.3f,"
                   "\"dur\":%.3f,\"cat\":\"phase\"}",
                t->phase[i].name, us(t->phase[i].start_ns - t->t0_ns),
                us(end - t->phase[i].start_ns));
    }
    fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"wl_profile\","
               "\"time_unit\":\"us\"}}\n");
    int err = ferror(f) ? errno : 0;
    if (fclose(f) != 0 && !err)
        err = errno;
    if (!err && rename(t->tmp, t->path) != 0)
        err = errno;
    if (err) {
        fprintf(stderr, "wl_profile: --trace %s: cannot write it (%s)\n", t->path,
                strerror(err ? err : EIO));
        remove(t->tmp);
    }
    free(t->tmp);
    return err ? -1 : 0;
}


static int parse_simd(const char *s, wl_simd_path *p)
{
    if (strcmp(s, "auto") == 0)
        *p = WL_SIMD_AUTO;
    else if (strcmp(s, "scalar") == 0)
        *p = WL_SIMD_SCALAR;
    else if (strcmp(s, "avx2") == 0)
        *p = WL_SIMD_AVX2;
    else
        return -1;
    return 0;
}

/* A count in [lo, hi] from s; -1 when s is not one. */
static long long parse_count(const char *s, long long lo, long long hi)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    return v;
}

int main(int argc, char **argv)
{
    uint64_t seed = 42;
    long long queries = 0, batch = 0; /* 0: the default */
    const char *trace_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            char *end = NULL;
            errno = 0;
            unsigned long long v = strtoull(argv[++i], &end, 0);
            if (errno != 0 || end == argv[i] || *end != '\0') {
                fprintf(stderr, "wl_profile: bad seed '%s'\n", argv[i]);
                return 2;
            }
            seed = (uint64_t)v;
        } else if (strcmp(argv[i], "--simd") == 0 && i + 1 < argc) {
            wl_simd_path p;
            if (parse_simd(argv[++i], &p) != 0) {
                fprintf(stderr, "wl_profile: unknown SIMD path '%s'\n", argv[i]);
                return 2;
            }
            int rc = wl_simd_force(p);
            if (rc != 0) {
                fprintf(stderr, "wl_profile: --simd %s: %s\n", argv[i], wl_strerror(rc));
                return 2;
            }
        } else if (strcmp(argv[i], "--similarity-queries") == 0 && i + 1 < argc) {
            if ((queries = parse_count(argv[++i], 1, 1000000)) < 0) {
                fprintf(stderr, "wl_profile: --similarity-queries: '%s' is not 1..1000000\n",
                        argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--similarity-batch") == 0 && i + 1 < argc) {
            if ((batch = parse_count(argv[++i], 1, 4096)) < 0) {
                fprintf(stderr, "wl_profile: --similarity-batch: '%s' is not 1..4096\n",
                        argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
            trace_path = argv[++i];
            if (!*trace_path) {
                fprintf(stderr, "wl_profile: --trace: FILE is empty\n");
                return 2;
            }
        } else {
            usage(stderr);
            return 2;
        }
    }
    static trace t;
    if (trace_path && trace_open(&t, trace_path) != 0)
        return 2;

    wl_profile_params params;
    wl_profile_params_default(&params, seed);
    if (queries > 0)
        params.similarity_queries = (size_t)queries;
    if (batch > 0)
        params.similarity_batch = (size_t)batch;
    if (trace_path) {
        params.phase = trace_phase;
        params.phase_arg = &t;
    }
    wl_profile_result r;
    t.t0_ns = now_ns();
    int rc = wl_profile_run_params(&params, &r);
    t.end_ns = now_ns();
    if (rc != 0) {
        fprintf(stderr, "wl_profile: %s\n", wl_strerror(rc));
        if (trace_path) {
            fclose(t.f);
            remove(t.tmp);
        }
        return 3;
    }
    printf("seed        %" PRIu64 "\n", seed);
    printf("simd        %s\n", r.simd);
    printf("build       %9.3f ms\n", r.build_s * 1e3);
    printf("activation  %9.3f ms  (%" PRIu64 " edges traversed, %" PRIu64 " nodes fired)\n",
           r.activation_s * 1e3, r.edges_traversed, r.nodes_fired);
    printf("similarity  %9.3f ms\n", r.similarity_s * 1e3);
    printf("decay       %9.3f ms\n", r.decay_s * 1e3);
    printf("total       %9.3f ms\n", r.total_s * 1e3);
    printf("checksum    0x%016" PRIx64 "\n", r.checksum);
    if (trace_path && trace_close(&t, &r, seed) != 0)
        return 2;
    return 0;
}
