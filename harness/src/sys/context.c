/*
 * context.c: facts about the run that travel with every result (harness version, time, host,
 * compiler, clock calibration, statistics settings), the system part gathered by sysinfo.c,
 * and the human listing printed by --context (its strings escaped: a host name or an os-release
 * field can hold anything).
 */
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/options.h"
#include "sys/clock.h"
#include "sys/context.h"
#include "sys/user_build.h"

#ifndef HARNESS_BUILD_TYPE
#define HARNESS_BUILD_TYPE "unknown"
#endif
#ifndef HARNESS_C_FLAGS
#define HARNESS_C_FLAGS ""
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
    c->compiler_flags = HARNESS_C_FLAGS;
    c->build_type = HARNESS_BUILD_TYPE;
    c->clock = bench__clock_calibrate();
    c->seed = opt->seed;
    c->nresamples = opt->nresamples;
    c->confidence_level = opt->confidence_level;
    c->quick = opt->is_quick;
    bench__sysinfo_collect(c);
}

void bench__context_id_from(bench__context_id *id, const bench__context *c)
{
    memset(id, 0, sizeof *id);
    bench__msg(id->cpu_brand, sizeof id->cpu_brand, "%s", c->cpu.brand);
    id->cores = c->cpu.cores;
    id->threads = c->cpu.threads;
    bench__msg(id->compiler, sizeof id->compiler, "%s", c->compiler);
    bench__msg(id->compiler_flags, sizeof id->compiler_flags, "%s", c->compiler_flags);
    bench__msg(id->build_type, sizeof id->build_type, "%s", c->build_type);
    bench__msg(id->hostname, sizeof id->hostname, "%s", c->hostname);
    bench__msg(id->kernel, sizeof id->kernel, "%s", c->kernel);
    bench__msg(id->governor, sizeof id->governor, "%s", c->governor);
    bench__msg(id->timestamp, sizeof id->timestamp, "%s", c->timestamp);
    bench__msg(id->git_revision, sizeof id->git_revision, "%s", c->git_revision);
    bench__msg(id->program_hash, sizeof id->program_hash, "%s", c->program_hash);
    bench__msg(id->program_file, sizeof id->program_file, "%s", c->program_file);
    bench__msg(id->program_libs, sizeof id->program_libs, "%s", c->program_libs);
    bench__msg(id->program_mac, sizeof id->program_mac, "%s", c->program_mac);
    if (c->have_canaries)
        id->canary = c->canary;
    else
        memset(&id->canary, 0, sizeof id->canary);
}

/* Room for one escaped context string (at most 256 bytes, 4 escaped bytes per byte). */
typedef struct shown {
    char s[1030];
} shown;

static const char *or_unknown_in(shown *buf, const char *s)
{
    return s && s[0] ? bench__escape(buf->s, sizeof buf->s, s) : "unknown";
}

/* The escaped string, or "unknown" for an empty one; valid until the end of the statement. */
#define or_unknown(s) or_unknown_in(&(shown){{0}}, (s))

void bench__context_print(FILE *o, const bench__context *c)
{
    const bench__cpu *cpu = &c->cpu;
    fprintf(o, "harness      %s\n", c->harness_version);
    fprintf(o, "time         %s\n", c->timestamp);
    fprintf(o, "host         %s\n", or_unknown(c->hostname));
    fprintf(o, "os           %s (%s)\n", or_unknown(c->os_name), or_unknown(c->os));
    fprintf(o, "cpu          %s (%s)\n", or_unknown(cpu->brand), or_unknown(cpu->vendor));
    fprintf(o, "             family %d, model %d, stepping %d\n", cpu->family, cpu->model,
            cpu->stepping);
    fprintf(o, "             %d cores, %d threads; %ld CPUs online\n", cpu->cores, cpu->threads,
            c->ncpus);
    /* Each cache size with its source; one no source vouches for is "unknown". */
    static const char *const level[3] = {"L1d", "L2", "L3"};
    const int kib[3] = {cpu->l1d_kib, cpu->l2_kib, cpu->l3_kib};
    fprintf(o, "caches      ");
    for (int i = 0; i < 3; i++) {
        if (kib[i] > 0)
            fprintf(o, "%s %s %d KiB (%s)", i ? "," : "", level[i], kib[i],
                    or_unknown(cpu->cache_source[i]));
        else
            fprintf(o, "%s %s unknown", i ? "," : "", level[i]);
    }
    fputc('\n', o);
    if (cpu->cache_note[0]) {
        fprintf(o, "             the OS gives none; libcpuid's");
        for (int i = 0, k = 0; i < 3; i++)
            if (cpu->cache_rejected_kib[i] > 0)
                fprintf(o, "%s %s %d KiB", k++ ? "," : "", level[i], cpu->cache_rejected_kib[i]);
        fprintf(o, " not shown: %s\n", cpu->cache_note);
    }
    if (cpu->ndisagreements > 0) {
        /* The figures above are the OS's where both gave one; say what libcpuid claimed. */
        fprintf(o, "             where libcpuid differs the OS's figure is shown; libcpuid said");
        for (int i = 0; i < cpu->ndisagreements; i++)
            fprintf(o, "%s %s %d", i ? "," : "", cpu->disagreements[i].fact,
                    cpu->disagreements[i].libcpuid);
        fputc('\n', o);
    }
    if (c->numa_nodes > 0)
        fprintf(o, "numa         %d node%s\n", c->numa_nodes, c->numa_nodes == 1 ? "" : "s");
    else
        fprintf(o, "numa         unknown (sysfs lists no NUMA nodes)\n");
    fprintf(o, "canary       the memory probe reads %.0f MiB: %s\n",
            c->canary_memory_bytes / (1024.0 * 1024.0), or_unknown(c->canary_memory_why));
    fprintf(o, "simd         %s\n", or_unknown(cpu->features));
    fprintf(o, "cpu facts    from %s\n", or_unknown(cpu->source));
    if (c->memory_bytes > 0)
        fprintf(o, "memory       %.1f GiB\n", c->memory_bytes / (1024.0 * 1024.0 * 1024.0));
    fprintf(o, "governor     %s\n", or_unknown(c->governor));
    fprintf(o, "virt         %s\n", !c->virtualization[0] ? "unknown"
                                     : strcmp(c->virtualization, "none") == 0
                                         ? "none (bare metal)"
                                         : c->virtualization);
    fprintf(o, "boost        %s\n", or_unknown(c->boost));
    if (c->loadavg[0] >= 0)
        fprintf(o, "load         %.2f %.2f %.2f\n", c->loadavg[0], c->loadavg[1],
                c->loadavg[2]);
    /* The program's build as its executable records it, then the library's: never one for the
     * other. */
    const bench__program_build *pb = &c->program_build;
    const struct bench__user_builds *ub = c->user_builds;
    if (pb->compiler[0])
        fprintf(o, "compiler     %s (the program's, as its executable records it)\n",
                or_unknown(pb->compiler));
    else if (ub && ub->n && ub->v[0].compiler[0])
        fprintf(o, "compiler     %s (the program's, as BENCH_FN recorded it)\n",
                or_unknown(ub->v[0].compiler));
    else
        fprintf(o, "compiler     unknown (the program's)\n");
    char flags[4 * sizeof pb->flags];
    if (pb->flags[0])
        fprintf(o, "flags        %s (the program's, from its %s)\n",
                bench__escape(flags, sizeof flags, pb->flags), pb->source);
    else
        fprintf(o, "flags        unknown (the program records none: build it with -g, clang "
                   "with -g -grecord-command-line, or gcc with -frecord-gcc-switches)\n");
    fprintf(o, "library      %s, flags %s, build type %s (the harness library's build)\n",
            or_unknown(c->compiler), or_unknown(c->compiler_flags), or_unknown(c->build_type));
    fprintf(o, "git          %s (the source this program was built from)\n",
            or_unknown(c->git_revision));
    fprintf(o, "cwd git      %s (the working directory's checkout)\n",
            c->cwd_git_revision[0] ? or_unknown(c->cwd_git_revision) : "none");
    fprintf(o, "clock        %s: %.1f ns per read, resolution %.1f ns, min sample %.1f \xc2\xb5s\n",
            c->clock->name, c->clock->cost_ns, c->clock->resolution_ns,
            c->clock->min_sample_ns / 1e3);
    /* ---- GPU (CUDA layer) ---- */
    const bench__gpu *g = &c->gpu;
    if (!g->available) {
        fprintf(o, "gpu          none: %s\n", or_unknown(g->reason));
    } else {
        fprintf(o, "gpu          %s (compute capability %d.%d, %d SMs, PCI %s)\n",
                or_unknown(g->name),
                g->cc_major, g->cc_minor, g->sm_count, or_unknown(g->pci_bus_id));
        fprintf(o, "             %.1f GiB, L2 %.1f MiB; SM clock %d MHz, memory clock %d MHz x "
                   "%d bit",
                g->memory_bytes / (1024.0 * 1024.0 * 1024.0), g->l2_bytes / (1024.0 * 1024.0),
                g->clock_khz / 1000, g->memory_clock_khz / 1000, g->bus_width_bits);
        if (g->bandwidth_bytes_per_s > 0)
            fprintf(o, " = %.0f GB/s theoretical", g->bandwidth_bytes_per_s / 1e9);
        fputc('\n', o);
    }
    fprintf(o, "cuda         driver %s, runtime %s\n", or_unknown(g->driver_version),
            g->runtime_version[0] ? g->runtime_version : "none (no CUDA in this program)");
    /* ---- end GPU ---- */
    for (size_t i = 0; i < c->nwarnings; i++)
        fprintf(o, "warning      %s\n", or_unknown(c->warnings[i]));
}
