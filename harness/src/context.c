/*
 * context.c: facts about the run that travel with every result (harness version, time, host,
 * OS, CPUs, compiler, clock calibration, statistics settings).
 */
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#ifndef HARNESS_BUILD_TYPE
#define HARNESS_BUILD_TYPE "unknown"
#endif

void bench__context_collect(bench__context *c, const bench__run_options *opt)
{
    memset(c, 0, sizeof *c);
    c->harness_version = bench_version();
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(c->timestamp, sizeof c->timestamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gethostname(c->hostname, sizeof c->hostname) != 0)
        c->hostname[0] = '\0';
    c->hostname[sizeof c->hostname - 1] = '\0';
    struct utsname u;
    if (uname(&u) == 0)
        bench__msg(c->os, sizeof c->os, "%s %s %s", u.sysname, u.release, u.machine);
    c->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
#if defined(__clang__)
    c->compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
    c->compiler = "gcc " __VERSION__;
#else
    c->compiler = "unknown";
#endif
    c->build_type = HARNESS_BUILD_TYPE;
    c->clock = bench__clock_calibrate();
    c->seed = opt->seed;
    c->nresamples = opt->nresamples;
    c->confidence_level = opt->confidence_level;
    c->quick = opt->is_quick;
}
