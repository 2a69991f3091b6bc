/*
 * wl_profile: runs the reference profiling workload once and prints its per-phase wall times and
 * checksum, for use under perf, valgrind or a plain stopwatch. It links only the workload library.
 * Exit status: 0 ok, 2 usage error, 3 the workload failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/workloads.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: wl_profile [--seed N] [--simd auto|scalar|avx2] [--similarity-queries N]\n"
            "                  [--similarity-batch N]\n"
            "Runs the reference graph workload (10k nodes, 50k edges, D=768; 1000 activation\n"
            "and 1000 top-10 similarity queries, in batches of 64; one decay pass) and prints\n"
            "per-phase wall times and the 64-bit checksum. Default seed 42. WL_SIMD=scalar|avx2\n"
            "also selects the SIMD path. --similarity-queries N (1..1000000) runs fewer or more\n"
            "similarity queries (the checksum is then another); --similarity-batch N (1..4096)\n"
            "sets the batch (1: one query per call). Exit: 0 ok, 2 usage error, 3 workload\n"
            "failed.\n");
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
        } else {
            usage(stderr);
            return 2;
        }
    }

    wl_profile_params params;
    wl_profile_params_default(&params, seed);
    if (queries > 0)
        params.similarity_queries = (size_t)queries;
    if (batch > 0)
        params.similarity_batch = (size_t)batch;
    wl_profile_result r;
    int rc = wl_profile_run_params(&params, &r);
    if (rc != 0) {
        fprintf(stderr, "wl_profile: %s\n", wl_strerror(rc));
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
    return 0;
}
