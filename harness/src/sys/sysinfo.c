/*
 * sysinfo.c: the system context of a run: CPU (libcpuid when built with it, /proc/cpuinfo as the
 * cross-check and fallback; topology and cache sizes from sysfs, which win where libcpuid
 * disagrees, as it does in VMs), kernel and OS, memory, frequency governor and boost, load, and the
 * checkout's git revision; the caches, clock speed and program path that other tools' formats
 * want. Also the warnings that say the machine is set up for noise, and the comparison of two
 * contexts that names what differs. Every read of /proc and /sys for the context is here.
 *
 * Invariant: nothing here fails the run. A fact that cannot be read is left empty ("" or -1),
 * never guessed, and a cache size only libcpuid gives is kept only when plausible. sysfs and
 * procfs are read below BENCH_SYSFS_ROOT and BENCH_PROCFS_ROOT when set (a testing aid: prepared
 * trees stand for machines without caches, cpufreq or with many NUMA nodes). This is the only
 * file that includes libcpuid.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifdef HARNESS_HAVE_LIBCPUID
#include <libcpuid/libcpuid.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "core/base.h"
#include "core/registry.h"
#include "sys/canary.h"
#include "sys/clock.h"
#include "sys/context.h"
#include "sys/proc.h"

/* The root of sysfs or procfs: the environment variable's value when set and not empty (a
 * prepared tree, for tests), else the real one. */
static const char *fs_root(const char *env, const char *real)
{
    const char *r = getenv(env);
    return r && r[0] ? r : real;
}

const char *bench__sysfs_cpu(char *buf, size_t len)
{
    snprintf(buf, len, "%s/devices/system/cpu", fs_root("BENCH_SYSFS_ROOT", "/sys"));
    return buf;
}

/* Reads the first line of a small file into buf without the newline; "" when unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(buf, (int)len, f))
        buf[strcspn(buf, "\n")] = '\0';
    else
        buf[0] = '\0';
    fclose(f);
}

/* Copies the value of "key : value" lines of /proc/cpuinfo's first processor. */
static bool cpuinfo_value(const char *key, char *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/cpuinfo", fs_root("BENCH_PROCFS_ROOT", "/proc"));
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[4096];
    bool found = false;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n')
            break; /* end of the first processor */
        if (strncmp(line, key, klen) != 0 || (line[klen] != ' ' && line[klen] != '\t' &&
                                              line[klen] != ':'))
            continue;
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *v = colon + 1;
        while (*v == ' ')
            v++;
        v[strcspn(v, "\n")] = '\0';
        bench__msg(buf, len, "%s", v);
        found = true;
        break;
    }
    fclose(f);
    return found;
}

/* Reads a small one-line sysfs file into buf, trailing white space removed; 0, or -1 when it is
 * unreadable or empty. */
static int read_small(const char *path, char *buf, size_t len)
{
    read_line(path, buf, len);
    size_t got = strlen(buf);
    while (got > 0 && isspace((unsigned char)buf[got - 1]))
        buf[--got] = '\0';
    return got > 0 ? 0 : -1;
}

/* Number of CPUs in a sysfs "shared_cpu_map" hex mask (e.g. "00000003" or "ff,ffffffff"). */
static int mask_count(const char *s)
{
    int count = 0;
    for (; *s; s++) {
        int v;
        if (*s >= '0' && *s <= '9')
            v = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            v = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            v = *s - 'A' + 10;
        else
            continue;
        count += __builtin_popcount((unsigned)v);
    }
    return count;
}

/* Size like "32K" or "32768K" or "8M" from sysfs, in bytes; -1 when unreadable. */
static double parse_cache_size(const char *s)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    if (*end == 'K')
        v *= 1024;
    else if (*end == 'M')
        v *= 1024 * 1024;
    else if (*end == 'G')
        v *= 1024.0 * 1024 * 1024;
    return v;
}

size_t bench__sysinfo_caches(const char *root, bench__cache_info *out, size_t max)
{
    size_t k = 0;
    for (int i = 0; i < 16 && k < max; i++) {
        char dir[4096], path[4200], level[16], size[32], shared[256];
        bench__cache_info *c = &out[k];
        snprintf(dir, sizeof dir, "%s/cpu0/cache/index%d", root, i);
        snprintf(path, sizeof path, "%s/type", dir);
        if (read_small(path, c->type, sizeof c->type) != 0)
            break;
        snprintf(path, sizeof path, "%s/level", dir);
        if (read_small(path, level, sizeof level) != 0)
            continue;
        snprintf(path, sizeof path, "%s/size", dir);
        if (read_small(path, size, sizeof size) != 0)
            continue;
        snprintf(path, sizeof path, "%s/shared_cpu_map", dir);
        c->num_sharing = read_small(path, shared, sizeof shared) == 0 ? mask_count(shared) : 0;
        c->bytes = parse_cache_size(size);
        if (c->bytes < 0)
            continue;
        c->level = atoi(level);
        k++;
    }
    return k;
}

/* ---- topology from sysfs ---- */

#define MAX_CPUS 8192 /* CPUs a list may name; beyond that the count is left unknown */

/* Sets the bits of a sysfs CPU list ("0-3,8,10-11") in set; false when it is malformed or names
 * a CPU at or beyond MAX_CPUS. */
static bool parse_cpu_list(const char *s, uint64_t set[MAX_CPUS / 64])
{
    memset(set, 0, MAX_CPUS / 8);
    while (*s && *s != '\n') {
        char *end;
        errno = 0;
        unsigned long lo = strtoul(s, &end, 10), hi = lo;
        if (end == s || errno || lo >= MAX_CPUS)
            return false;
        s = end;
        if (*s == '-') {
            hi = strtoul(s + 1, &end, 10);
            if (end == s + 1 || errno || hi >= MAX_CPUS || hi < lo)
                return false;
            s = end;
        }
        for (unsigned long c = lo; c <= hi; c++)
            set[c / 64] |= 1ull << (c % 64);
        if (*s == ',')
            s++;
        else if (*s && *s != '\n')
            return false;
    }
    return true;
}

static bool has_cpu(const uint64_t set[MAX_CPUS / 64], unsigned c)
{
    return (set[c / 64] >> (c % 64)) & 1u;
}

/* Online CPUs, and physical cores: an online CPU counts as a core when no online CPU below it
 * is one of its thread siblings (so a core counts once, whichever of its threads is offline). */
static void os_topology(const char *root, bench__os_cpu *out)
{
    uint64_t online[MAX_CPUS / 64], siblings[MAX_CPUS / 64]; /* 1 KiB each */
    char path[4200], list[4096];
    snprintf(path, sizeof path, "%s/online", root);
    if (read_small(path, list, sizeof list) != 0 || !parse_cpu_list(list, online))
        return;
    int threads = 0, cores = 0;
    for (unsigned c = 0; c < MAX_CPUS; c++) {
        if (!has_cpu(online, c))
            continue;
        threads++;
        snprintf(path, sizeof path, "%s/cpu%u/topology/thread_siblings_list", root, c);
        if (cores >= 0 && read_small(path, list, sizeof list) == 0 &&
            parse_cpu_list(list, siblings)) {
            bool first = true;
            for (unsigned d = 0; d < c && first; d++)
                first = !(has_cpu(siblings, d) && has_cpu(online, d));
            cores += first;
        } else {
            cores = -1; /* one CPU without its siblings: the count would be a guess */
        }
    }
    out->threads = threads > 0 ? threads : -1;
    out->cores = threads > 0 && cores > 0 ? cores : -1;
}

void bench__sysinfo_os_cpu(const char *root, bench__os_cpu *out)
{
    out->cores = out->threads = -1;
    out->l1d_kib = out->l2_kib = out->l3_kib = out->llc_kib = -1;
    os_topology(root, out);
    bench__cache_info caches[16];
    size_t n = bench__sysinfo_caches(root, caches, sizeof caches / sizeof caches[0]);
    for (size_t i = 0; i < n; i++) {
        const bench__cache_info *c = &caches[i];
        int kib = (int)(c->bytes / 1024);
        if (c->bytes <= 0 || kib <= 0)
            continue;
        if (c->level == 1 && strcmp(c->type, "Data") == 0)
            out->l1d_kib = kib;
        else if (c->level == 2 && strcmp(c->type, "Instruction") != 0)
            out->l2_kib = kib;
        else if (c->level == 3 && strcmp(c->type, "Instruction") != 0)
            out->l3_kib = kib;
        if (c->level >= 3 && strcmp(c->type, "Instruction") != 0 && kib > out->llc_kib)
            out->llc_kib = kib;
    }
}

void bench__cpu_cache_plausible(int lib_cores, int lib_threads, int cores, const int kib[3],
                                bool ok[3], char *why, size_t len)
{
    static const char *const names[3] = {"L1d", "L2", "L3"};
    const double limit_kib[3] = {1024, 64 * 1024, 1024 * 1024}; /* 1 MiB, 64 MiB, 1 GiB */
    why[0] = '\0';
    int per = cores > 0 ? cores : lib_cores;
    /* A topology no CPU has (seen: "1 cores, 254 threads" from a hypervisor's leaves) discredits
     * the leaves the cache sizes come from as well. */
    bool topology = !(lib_cores > 0 && lib_threads > 0) ||
                    (lib_threads >= lib_cores && lib_threads <= 8 * lib_cores);
    if (!topology)
        snprintf(why, len, "its topology (%d cores, %d threads) is no CPU's", lib_cores,
                 lib_threads);
    for (int i = 0; i < 3; i++) {
        ok[i] = topology && kib[i] > 0 && kib[i] <= limit_kib[i];
        if (ok[i] && i == 2 && per > 0 && (double)kib[i] > 64.0 * 1024 * per)
            ok[i] = false;
        if (topology && kib[i] > 0 && !ok[i] && !why[0])
            snprintf(why, len, "%s above %s", names[i],
                     i < 2 ? (i == 0 ? "1 MiB" : "64 MiB")
                           : (double)kib[i] > limit_kib[2] ? "1 GiB" : "64 MiB per core");
    }
}

void bench__cpu_reconcile(bench__cpu *cpu, const bench__os_cpu *os, bool libcpuid)
{
    const struct {
        const char *fact;
        int *mine;
        int theirs;
    } facts[BENCH__CPU_CHECKED_FACTS] = {
        {"cores", &cpu->cores, os->cores},       {"threads", &cpu->threads, os->threads},
        {"l1d_kib", &cpu->l1d_kib, os->l1d_kib}, {"l2_kib", &cpu->l2_kib, os->l2_kib},
        {"l3_kib", &cpu->l3_kib, os->l3_kib},
    };
    const int lib_cores = cpu->cores, lib_threads = cpu->threads;
    cpu->ndisagreements = 0;
    for (int i = 0; i < BENCH__CPU_CHECKED_FACTS; i++) {
        if (facts[i].theirs <= 0 || *facts[i].mine == facts[i].theirs)
            continue;
        if (libcpuid && *facts[i].mine > 0)
            cpu->disagreements[cpu->ndisagreements++] = (bench__cpu_disagreement){
                .fact = facts[i].fact, .libcpuid = *facts[i].mine, .os = facts[i].theirs};
        *facts[i].mine = facts[i].theirs;
    }
    /* Each cache size says where it came from; one only libcpuid gives is shown when it is
     * plausible (a hypervisor's leaves once gave a 2-vCPU guest an L3 of 508 MiB). */
    int *kib[3] = {&cpu->l1d_kib, &cpu->l2_kib, &cpu->l3_kib};
    const int os_kib[3] = {os->l1d_kib, os->l2_kib, os->l3_kib};
    int lib_kib[3];
    for (int i = 0; i < 3; i++)
        lib_kib[i] = os_kib[i] > 0 || !libcpuid ? -1 : *kib[i];
    bool ok[3];
    bench__cpu_cache_plausible(lib_cores, lib_threads, os->cores, lib_kib, ok,
                               cpu->cache_note, sizeof cpu->cache_note);
    bool rejected = false;
    for (int i = 0; i < 3; i++) {
        cpu->cache_rejected_kib[i] = -1;
        if (os_kib[i] > 0) {
            cpu->cache_source[i] = "sysfs";
        } else if (ok[i]) {
            cpu->cache_source[i] = "libcpuid";
        } else {
            if (lib_kib[i] > 0) {
                cpu->cache_rejected_kib[i] = lib_kib[i];
                rejected = true;
            }
            cpu->cache_source[i] = "unknown";
            *kib[i] = -1;
        }
    }
    if (!rejected)
        cpu->cache_note[0] = '\0';
    if (os->llc_kib > 0) {
        cpu->llc_kib = os->llc_kib;
        cpu->llc_source = "sysfs";
    } else {
        cpu->llc_kib = cpu->l3_kib;
        cpu->llc_source = cpu->cache_source[2];
    }
}

double bench__sysinfo_cpu_mhz(void)
{
    char buf[64], root[4096], path[4200];
    snprintf(path, sizeof path, "%s/cpu0/cpufreq/cpuinfo_max_freq",
             bench__sysfs_cpu(root, sizeof root));
    if (read_small(path, buf, sizeof buf) == 0) {
        double khz = strtod(buf, NULL);
        if (khz > 0)
            return round(khz / 1000.0);
    }
    double mhz = cpuinfo_value("cpu MHz", buf, sizeof buf) ? round(strtod(buf, NULL)) : 0;
    return mhz > 0 ? mhz : 0;
}

void bench__sysinfo_executable(char *buf, size_t len)
{
    ssize_t got = readlink("/proc/self/exe", buf, len - 1);
    buf[got > 0 ? got : 0] = '\0';
}

static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

static const char *const simd_features[] = {"sse2",    "sse4_2",   "avx",      "avx2",
                                            "fma",     "avx512f",  "avx512bw", "avx512vl",
                                            "avx512_vnni"};

static void collect_cpu(bench__cpu *cpu)
{
    memset(cpu, 0, sizeof *cpu);
    cpu->family = cpu->model = cpu->stepping = -1;
    cpu->cores = cpu->threads = -1;
    cpu->l1d_kib = cpu->l2_kib = cpu->l3_kib = -1;
    cpu->source = "/proc/cpuinfo";
    bool libcpuid = false;
#ifdef HARNESS_HAVE_LIBCPUID
    struct cpu_raw_data_t raw;
    struct cpu_id_t id;
    if (cpuid_present() && cpuid_get_raw_data(&raw) == 0 && cpu_identify(&raw, &id) == 0) {
        cpu->source = "libcpuid";
        libcpuid = true;
        bench__msg(cpu->vendor, sizeof cpu->vendor, "%s", id.vendor_str);
        bench__msg(cpu->brand, sizeof cpu->brand, "%s", id.brand_str);
        cpu->family = id.ext_family;
        cpu->model = id.ext_model;
        cpu->stepping = id.stepping;
        cpu->cores = id.num_cores;
        cpu->threads = id.num_logical_cpus;
        cpu->l1d_kib = id.l1_data_cache;
        cpu->l2_kib = id.l2_cache;
        cpu->l3_kib = id.l3_cache;
        size_t off = 0;
        const struct {
            cpu_feature_t f;
            const char *name;
        } feats[] = {{CPU_FEATURE_SSE2, "sse2"},       {CPU_FEATURE_SSE4_2, "sse4_2"},
                     {CPU_FEATURE_AVX, "avx"},         {CPU_FEATURE_AVX2, "avx2"},
                     {CPU_FEATURE_FMA3, "fma"},        {CPU_FEATURE_AVX512F, "avx512f"},
                     {CPU_FEATURE_AVX512BW, "avx512bw"}, {CPU_FEATURE_AVX512VL, "avx512vl"}};
        for (size_t i = 0; i < sizeof feats / sizeof feats[0]; i++)
            if (id.flags[feats[i].f] && off + strlen(feats[i].name) + 2 < sizeof cpu->features)
                off += (size_t)snprintf(cpu->features + off, sizeof cpu->features - off, "%s%s",
                                        off ? " " : "", feats[i].name);
    }
#endif
    char v[4096];
    if (!cpu->vendor[0] && cpuinfo_value("vendor_id", v, sizeof v))
        bench__msg(cpu->vendor, sizeof cpu->vendor, "%s", v);
    if (!cpu->brand[0] && cpuinfo_value("model name", v, sizeof v))
        bench__msg(cpu->brand, sizeof cpu->brand, "%s", v);
    if (cpu->family < 0 && cpuinfo_value("cpu family", v, sizeof v))
        cpu->family = atoi(v);
    if (cpu->model < 0 && cpuinfo_value("model", v, sizeof v))
        cpu->model = atoi(v);
    if (cpu->stepping < 0 && cpuinfo_value("stepping", v, sizeof v))
        cpu->stepping = atoi(v);
    if (cpu->cores < 0 && cpuinfo_value("cpu cores", v, sizeof v))
        cpu->cores = atoi(v);
    /* The kernel's topology and cache sizes are what this program runs on; where libcpuid's
     * differ (a hypervisor's CPUID leaves), they win and the disagreement is recorded. */
    bench__os_cpu os;
    char root[4096];
    bench__sysinfo_os_cpu(bench__sysfs_cpu(root, sizeof root), &os);
    bench__cpu_reconcile(cpu, &os, libcpuid);
    /* What came from sysfs, said as it is: a guest without cache folders has its topology
     * there and no cache sizes. */
    bool topo = os.cores > 0 || os.threads > 0;
    bool caches = os.l1d_kib > 0 || os.l2_kib > 0 || os.l3_kib > 0;
    if (cpu->threads < 0)
        cpu->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    /* The kernel's flags are the truth about SIMD (libcpuid 0.6 misses AVX-512 on Zen 4, and
     * a hypervisor may mask features); libcpuid's list is kept only when /proc is unreadable. */
    if (cpuinfo_value("flags", v, sizeof v)) {
        size_t off = 0;
        cpu->features[0] = '\0';
        for (size_t i = 0; i < sizeof simd_features / sizeof simd_features[0]; i++)
            if (has_word(v, simd_features[i]))
                off += (size_t)snprintf(cpu->features + off, sizeof cpu->features - off, "%s%s",
                                        off ? " " : "", simd_features[i]);
        /* One static string per combination: the source outlives the context. */
        static const char *const with_lib[4] = {
            "libcpuid, SIMD features from /proc/cpuinfo",
            "libcpuid; topology and caches from sysfs, SIMD features from /proc/cpuinfo",
            "libcpuid; topology from sysfs, SIMD features from /proc/cpuinfo",
            "libcpuid; caches from sysfs, SIMD features from /proc/cpuinfo"};
        static const char *const without[4] = {
            "/proc/cpuinfo", "/proc/cpuinfo; topology and caches from sysfs",
            "/proc/cpuinfo; topology from sysfs", "/proc/cpuinfo; caches from sysfs"};
        int k = topo && caches ? 1 : topo ? 2 : caches ? 3 : 0;
        cpu->source = strcmp(cpu->source, "libcpuid") == 0 ? with_lib[k] : without[k];
    }
}

/* Hypervisors by what they write into the firmware's DMI strings (sys_vendor, product_name,
 * board_vendor, bios_vendor), as systemd-detect-virt tells them apart: the first match wins. */
static const struct {
    const char *prefix, *name;
} dmi_vendors[] = {
    {"KVM", "kvm"},           {"OpenStack", "kvm"},  {"KubeVirt", "kvm"},
    {"Amazon EC2", "amazon"}, {"QEMU", "qemu"},      {"VMware", "vmware"},
    {"VMW", "vmware"},        {"innotek GmbH", "oracle"}, {"VirtualBox", "oracle"},
    {"Oracle Corporation", "oracle"}, {"Xen", "xen"}, {"Bochs", "bochs"},
    {"Parallels", "parallels"}, {"BHYVE", "bhyve"}, {"Hyper-V", "microsoft"},
    {"Apple Virtualization", "apple"}, {"Google Compute Engine", "google"},
};

/* Hypervisors by the vendor signature of CPUID leaf 0x40000000. */
static const struct {
    const char *sig, *name;
} cpuid_vendors[] = {
    {"KVMKVMKVM", "kvm"},    {"TCGTCGTCGTCG", "qemu"}, {"VMwareVMware", "vmware"},
    {"XenVMMXenVMM", "xen"}, {"Microsoft Hv", "microsoft"}, {"VBoxVBoxVBox", "oracle"},
    {"bhyve bhyve ", "bhyve"}, {"ACRNACRNACRN", "acrn"}, {" lrpepyh  vr", "parallels"},
};

/* The hypervisor CPUID names, "none" when the CPU says there is none, "" when it cannot be
 * asked (not x86) or names one not in the table ("other" then). */
static void virt_from_cpuid(char *out, size_t len)
{
    out[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    if (!(c & (1u << 31))) { /* the hypervisor-present bit */
        bench__msg(out, len, "none");
        return;
    }
    char sig[13] = {0};
    __cpuid(0x40000000, a, b, c, d);
    memcpy(sig, &b, 4);
    memcpy(sig + 4, &c, 4);
    memcpy(sig + 8, &d, 4);
    bench__msg(out, len, "other");
    for (size_t i = 0; i < sizeof cpuid_vendors / sizeof *cpuid_vendors; i++)
        if (strncmp(sig, cpuid_vendors[i].sig, strlen(cpuid_vendors[i].sig)) == 0)
            bench__msg(out, len, "%s", cpuid_vendors[i].name);
#else
    (void)len;
#endif
}

/* The hypervisor the machine runs under (context.virtualization), as systemd-detect-virt finds
 * it, from files and the CPU alone: the firmware's DMI strings first (they name the platform
 * even where the CPU flag is hidden), then /sys/hypervisor/type (Xen guests), then CPUID's
 * hypervisor bit and vendor. With a prepared sysfs tree (BENCH_SYSFS_ROOT) the tree alone
 * stands for the machine: readable DMI naming no hypervisor is bare metal, no DMI unknown. */
static void collect_virtualization(bench__context *c)
{
    const char *sys = fs_root("BENCH_SYSFS_ROOT", "/sys");
    static const char *const dmi[] = {"sys_vendor", "product_name", "board_vendor",
                                      "bios_vendor"};
    char path[4200], v[256];
    bool dmi_read = false;
    c->virtualization[0] = '\0';
    for (size_t i = 0; i < sizeof dmi / sizeof *dmi && !c->virtualization[0]; i++) {
        snprintf(path, sizeof path, "%s/class/dmi/id/%s", sys, dmi[i]);
        read_line(path, v, sizeof v);
        dmi_read = dmi_read || v[0];
        for (size_t k = 0; v[0] && k < sizeof dmi_vendors / sizeof *dmi_vendors; k++)
            if (bench__starts_with(v, dmi_vendors[k].prefix)) {
                bench__msg(c->virtualization, sizeof c->virtualization, "%s",
                           dmi_vendors[k].name);
                break;
            }
        /* Hyper-V calls itself "Microsoft Corporation" / "Virtual Machine". */
        if (!c->virtualization[0] && strcmp(dmi[i], "product_name") == 0 &&
            strcmp(v, "Virtual Machine") == 0)
            bench__msg(c->virtualization, sizeof c->virtualization, "microsoft");
    }
    if (c->virtualization[0])
        return;
    snprintf(path, sizeof path, "%s/hypervisor/type", sys);
    read_line(path, v, sizeof v);
    if (v[0]) {
        bench__msg(c->virtualization, sizeof c->virtualization, "%s", v);
        return;
    }
    const char *root = getenv("BENCH_SYSFS_ROOT");
    if (root && root[0]) { /* a prepared tree: what it does not say is not this CPU's to say */
        if (dmi_read)
            bench__msg(c->virtualization, sizeof c->virtualization, "none");
        return;
    }
    virt_from_cpuid(c->virtualization, sizeof c->virtualization);
}

static void collect_os(bench__context *c)
{
    char line[256];
    FILE *f = fopen("/etc/os-release", "r");
    if (f) {
        while (fgets(line, sizeof line, f)) {
            char *v = (char *)bench__skip_prefix(line, "PRETTY_NAME=");
            if (v) {
                v[strcspn(v, "\n")] = '\0';
                if (*v == '"') {
                    v++;
                    v[strcspn(v, "\"")] = '\0';
                }
                bench__msg(c->os_name, sizeof c->os_name, "%s", v);
            }
        }
        fclose(f);
    }
    collect_virtualization(c);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    c->memory_bytes = pages > 0 && page > 0 ? (double)pages * (double)page : -1;
    char root[4096], path[4200];
    bench__sysfs_cpu(root, sizeof root);
    snprintf(path, sizeof path, "%s/cpu0/cpufreq/scaling_governor", root);
    read_line(path, c->governor, sizeof c->governor);
    char v[32];
    snprintf(path, sizeof path, "%s/intel_pstate/no_turbo", root);
    read_line(path, v, sizeof v);
    if (v[0])
        bench__msg(c->boost, sizeof c->boost, "%s", v[0] == '1' ? "off" : "on");
    else {
        snprintf(path, sizeof path, "%s/cpufreq/boost", root);
        read_line(path, v, sizeof v);
        if (v[0])
            bench__msg(c->boost, sizeof c->boost, "%s", v[0] == '1' ? "on" : "off");
    }
    if (getloadavg(c->loadavg, 3) != 3)
        c->loadavg[0] = c->loadavg[1] = c->loadavg[2] = -1;
    /* NUMA nodes online: a list like the CPUs' ("0-3"); none on a kernel without NUMA. */
    uint64_t nodes[MAX_CPUS / 64];
    char list[4096];
    snprintf(path, sizeof path, "%s/devices/system/node/online",
             fs_root("BENCH_SYSFS_ROOT", "/sys"));
    c->numa_nodes = -1;
    if (read_small(path, list, sizeof list) == 0 && parse_cpu_list(list, nodes)) {
        int count = 0;
        for (unsigned k = 0; k < MAX_CPUS; k++)
            count += has_cpu(nodes, k);
        c->numa_nodes = count > 0 ? count : -1;
    }
}

/* Runs `git ARGS...` in the working directory through proc.c (stderr discarded, at most 5 s: a
 * hung git never holds up the run) and keeps its first line of output in out. Returns 1 when it
 * printed a line and exited 0, 0 when it printed nothing and exited 0, -1 otherwise (no git, not
 * a work tree, killed). */
static int git_line(char *const *argv, char *out, size_t len)
{
    bench__proc p;
    memset(&p, 0, sizeof p);
    bench__proc_spec spec = {.path = "git", .argv = argv, .channel = BENCH__PROC_STDOUT,
                             .quiet = true};
    char msg[256];
    out[0] = '\0';
    if (bench__proc_start(&p, &spec, msg, sizeof msg) != 0)
        return -1;
    int64_t deadline = bench__now_ns() + (int64_t)5e9;
    int rc = bench__proc_line(&p, out, len, deadline);
    char rest[256];
    while (rc == 1 && bench__proc_line(&p, rest, sizeof rest, deadline) == 1)
        continue; /* read to the end, so a long listing never blocks it on a full pipe */
    if (rc < 0) {
        bench__proc_kill(&p);
        return -1;
    }
    if (bench__proc_wait(&p, deadline) != BENCH__PROC_EXITED || p.code != 0)
        return -1;
    return rc;
}

/* The revisions: the one the program was built from (BENCH_GIT_REVISION, else the one its
 * benchmark files recorded), and the working directory's checkout's when run inside a git work
 * tree ("abc1234" or "abc1234-dirty"), which need not be the program's: a program run from
 * another repository would otherwise record that repository's commit. */
static void collect_git(bench__context *c)
{
    c->git_revision[0] = c->cwd_git_revision[0] = '\0';
    const char *env = getenv("BENCH_GIT_REVISION");
    const char *built = bench__registry_build_revision();
    if (env || built)
        bench__msg(c->git_revision, sizeof c->git_revision, "%s", env ? env : built);
    char *const rev_argv[] = {"git", "rev-parse", "--short=12", "HEAD", NULL};
    char rev[64] = "";
    if (git_line(rev_argv, rev, sizeof rev) != 1 || !rev[0])
        return;
    for (char *s = rev; *s; s++)
        if (!isxdigit((unsigned char)*s))
            return;
    char *const status_argv[] = {"git", "status", "--porcelain", "--untracked-files=no", NULL};
    char line[256];
    bool dirty = git_line(status_argv, line, sizeof line) == 1;
    bench__msg(c->cwd_git_revision, sizeof c->cwd_git_revision, "%s%s", rev,
               dirty ? "-dirty" : "");
}

static void add_warning(bench__context *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_warning(bench__context *c, const char *fmt, ...)
{
    if (c->nwarnings >= BENCH__MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->warnings[c->nwarnings], sizeof c->warnings[0], fmt, ap);
    va_end(ap);
    c->nwarnings++;
}

void bench__sysinfo_collect(bench__context *c)
{
    collect_cpu(&c->cpu);
    collect_os(c);
    c->canary_memory_bytes = (double)bench__canary_memory_plan(
        c->cpu.llc_kib, c->cpu.llc_source, c->canary_memory_why, sizeof c->canary_memory_why);
    collect_git(c);
    struct utsname u;
    if (uname(&u) == 0)
        bench__msg(c->kernel, sizeof c->kernel, "%s %s", u.sysname, u.release);

    if (c->governor[0] && strcmp(c->governor, "performance") != 0)
        add_warning(c, "CPU frequency governor is '%s', so clock speed follows load; fix: "
                       "sudo cpupower frequency-set --governor performance", c->governor);
    if (c->ncpus > 0 && c->loadavg[0] > 0.8 * (double)c->ncpus)
        add_warning(c, "the machine is busy (load average %.2f on %ld CPUs): other work will "
                       "disturb timings; fix: stop it, or run when the machine is idle",
                    c->loadavg[0], c->ncpus);
#ifndef __OPTIMIZE__
    add_warning(c, "the harness library was built without optimisation; fix: build with "
                   "-DCMAKE_BUILD_TYPE=Release");
#endif
}

/* Appends "what: 'a' here vs 'b' there" to the difference list when a and b differ. */
static void diff_str(char *out, size_t len, size_t *off, const char *what, const char *a,
                     const char *b)
{
    if (!a[0] || !b[0] || strcmp(a, b) == 0 || *off >= len)
        return;
    char ea[1024], eb[1024]; /* strings read from a file: escaped */
    int n = snprintf(out + *off, len - *off, "%s%s '%s' vs '%s'", *off ? "; " : "", what,
                     bench__escape(ea, sizeof ea, a), bench__escape(eb, sizeof eb, b));
    if (n > 0)
        *off += (size_t)n < len - *off ? (size_t)n : len - *off;
}

static void diff_int(char *out, size_t len, size_t *off, const char *what, long a, long b)
{
    char x[32], y[32];
    if (a < 0 || b < 0)
        return;
    snprintf(x, sizeof x, "%ld", a);
    snprintf(y, sizeof y, "%ld", b);
    diff_str(out, len, off, what, x, y);
}

void bench__context_compare(const bench__context_id *now, const bench__context_id *then,
                            bench__context_change *out)
{
    size_t off = 0;
    char *m = out->machine, *b = out->build;
    m[0] = b[0] = '\0';
    diff_str(m, sizeof out->machine, &off, "CPU", now->cpu_brand, then->cpu_brand);
    diff_int(m, sizeof out->machine, &off, "cores", now->cores, then->cores);
    diff_int(m, sizeof out->machine, &off, "threads", now->threads, then->threads);
    diff_str(m, sizeof out->machine, &off, "host", now->hostname, then->hostname);
    diff_str(m, sizeof out->machine, &off, "kernel", now->kernel, then->kernel);
    diff_str(m, sizeof out->machine, &off, "governor", now->governor, then->governor);
    off = 0;
    diff_str(b, sizeof out->build, &off, "compiler", now->compiler, then->compiler);
    diff_str(b, sizeof out->build, &off, "compiler flags", now->compiler_flags,
             then->compiler_flags);
    diff_str(b, sizeof out->build, &off, "build type", now->build_type, then->build_type);
}
