/*
 * perf_events.c: the pure parts of the perf_event counter layer (see perf_events.h): event lists
 * and presets, the kernel's generic software events, grouping, decoding group reads, scaling
 * and derived ratios. No system call, no libpfm4, no global state: every function depends on
 * its arguments only, which is what lets test_perf.c check it byte for byte.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "core/base.h"
#include "probes/perf_events.h"

/* ---- presets ---- */

static const struct {
    const char *name;
    const char *events;
} presets[] = {
    {"ipc", "cycles,instructions"},
    {"cache", "cache-references,cache-misses"},
    {"branch", "branches,branch-misses"},
    {"sw", "task-clock,page-faults,context-switches,cpu-migrations"},
};

const char *bench__perf_preset(const char *name)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].name, name) == 0)
            return presets[i].events;
    return NULL;
}

/* ---- the kernel's generic software events (PERF_COUNT_SW_*) ---- */

static const bench__perf_sw_event sw_events[] = {
    {"task-clock", NULL, 1, "ns", BENCH__PERF_USER_SAME,
     "CPU time of the benchmark's thread, user and kernel mode"},
    {"cpu-clock", NULL, 0, "ns", BENCH__PERF_USER_SAME,
     "CPU time as the per-CPU clock sees it (about task-clock)"},
    {"page-faults", "faults", 2, "events", BENCH__PERF_USER_PARTIAL,
     "page faults, minor and major"},
    {"minor-faults", NULL, 5, "events", BENCH__PERF_USER_PARTIAL,
     "page faults served without I/O (first touch of anonymous memory, page cache hits)"},
    {"major-faults", NULL, 6, "events", BENCH__PERF_USER_PARTIAL,
     "page faults that needed I/O"},
    {"context-switches", "cs", 3, "events", BENCH__PERF_USER_NEVER,
     "times the thread left the CPU (blocked, yielded or preempted)"},
    {"cpu-migrations", "migrations", 4, "events", BENCH__PERF_USER_NEVER,
     "times the thread moved to another CPU"},
    {"alignment-faults", NULL, 7, "events", BENCH__PERF_USER_PARTIAL,
     "unaligned accesses fixed up by the kernel (never on x86)"},
    {"emulation-faults", NULL, 8, "events", BENCH__PERF_USER_PARTIAL,
     "instructions emulated by the kernel"},
    {"cgroup-switches", NULL, 11, "events", BENCH__PERF_USER_NEVER,
     "context switches to a task of another cgroup"},
};

const bench__perf_sw_event *bench__perf_sw_table(size_t *n)
{
    *n = sizeof sw_events / sizeof sw_events[0];
    return sw_events;
}

const bench__perf_sw_event *bench__perf_sw_find(const char *name)
{
    for (size_t i = 0; i < sizeof sw_events / sizeof sw_events[0]; i++)
        if (strcasecmp(sw_events[i].name, name) == 0 ||
            (sw_events[i].alias && strcasecmp(sw_events[i].alias, name) == 0))
            return &sw_events[i];
    return NULL;
}

const bench__perf_sw_event *bench__perf_sw_by_config(uint64_t config)
{
    for (size_t i = 0; i < sizeof sw_events / sizeof sw_events[0]; i++)
        if (sw_events[i].config == config)
            return &sw_events[i];
    return NULL;
}

/* perf(1)'s names of the kernel's generic hardware events, with their PERF_COUNT_HW_* numbers
 * (PERF_TYPE_HARDWARE): the kernel maps them to the CPU's own events, so they need no libpfm4. */
static const struct {
    const char *name;
    uint64_t config;
} hw_events[] = {
    {"cycles", 0},
    {"cpu-cycles", 0},
    {"instructions", 1},
    {"cache-references", 2},
    {"cache-misses", 3},
    {"branches", 4},
    {"branch-instructions", 4},
    {"branch-misses", 5},
    {"bus-cycles", 6},
    {"stalled-cycles-frontend", 7},
    {"idle-cycles-frontend", 7},
    {"stalled-cycles-backend", 8},
    {"idle-cycles-backend", 8},
    {"ref-cycles", 9},
};
/* The hardware-cache events' prefixes (PERF_TYPE_HW_CACHE): named through libpfm4 only. */
static const char *const hw_cache_prefixes[] = {"L1-dcache-", "L1-icache-", "LLC-", "dTLB-",
                                                 "iTLB-", "branch-load", "node-"};

/* The generic hardware event of this name (case ignored); -1 when there is none. */
static int hw_find(const char *name)
{
    for (size_t i = 0; i < sizeof hw_events / sizeof hw_events[0]; i++)
        if (strcasecmp(hw_events[i].name, name) == 0)
            return (int)i;
    return -1;
}

bool bench__perf_is_generic_hw(const char *name)
{
    if (hw_find(name) >= 0)
        return true;
    for (size_t i = 0; i < sizeof hw_cache_prefixes / sizeof hw_cache_prefixes[0]; i++)
        if (strncasecmp(hw_cache_prefixes[i], name, strlen(hw_cache_prefixes[i])) == 0)
            return true;
    return false;
}

/* HARNESS_HAVE_LIBPFM: the counters component was built beside this library, so a program
 * without libpfm4 did not link it. */
const char *bench__perf_no_pfm(bool with_fix)
{
#ifdef HARNESS_HAVE_LIBPFM
    return with_fix ? "this program does not link libpfm4 (link the harness-counters component; "
                      "see docs/counters.md)"
                    : "this program does not link libpfm4";
#else
    return with_fix ? "this build has no libpfm4 (install libpfm4-dev and rebuild)"
                    : "this build has no libpfm4";
#endif
}

int bench__perf_resolve_sw(const char *name, bench__perf_event *ev, char *msg, size_t msglen)
{
    memset(ev, 0, sizeof *ev);
    const bench__perf_sw_event *sw = bench__perf_sw_find(name);
    int hw = sw ? -1 : hw_find(name);
    if (hw >= 0) {
        /* As libpfm4 encodes a hardware name: user mode only (perf_pfm.c says why). */
        bench__msg(ev->name, sizeof ev->name, "%s", name);
        ev->type = BENCH__PERF_TYPE_HARDWARE;
        ev->config = hw_events[hw].config;
        ev->exclude_kernel = true;
        ev->exclude_hv = true;
        ev->unit = "events";
        ev->user_mode = BENCH__PERF_USER_PARTIAL;
        return 0;
    }
    if (!sw) {
        if (bench__perf_is_generic_hw(name))
            bench__msg(msg, msglen,
                       "'%s' is a hardware-cache event: %s; the kernel's generic hardware "
                       "events (cycles, instructions, cache-misses, branch-misses, ...) and "
                       "software events (task-clock, page-faults, ...) work (--list-events)",
                       name, bench__perf_no_pfm(true));
        else
            bench__msg(msg, msglen,
                       "unknown event '%s' (%s: only the kernel's generic hardware and software "
                       "events are known; see --list-events)",
                       name, bench__perf_no_pfm(false));
        return BENCH_EINVAL;
    }
    bench__msg(ev->name, sizeof ev->name, "%s", name);
    ev->type = BENCH__PERF_TYPE_SOFTWARE;
    ev->config = sw->config;
    ev->software = true;
    ev->exclude_kernel = false; /* see perf.c: kernel-mode events are the task's too */
    ev->exclude_hv = true;
    ev->kernel_by_default = true;
    ev->unit = sw->unit;
    ev->user_mode = sw->user_mode;
    return 0;
}

/* ---- parsing a list ---- */

static int add_name(bench__perf_names *out, const char *name, size_t len, char *msg,
                    size_t msglen)
{
    char buf[BENCH__PERF_NAME_MAX];
    if (len >= sizeof buf) {
        bench__msg(msg, msglen, "event name '%.*s...' is longer than %d characters", 20, name,
                   BENCH__PERF_NAME_MAX - 1);
        return BENCH_EINVAL;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= 0x20 || c >= 0x7f) {
            bench__msg(msg, msglen, "event name '%.*s' has a character other than printable "
                                    "ASCII", (int)len, name);
            return BENCH_EINVAL;
        }
    }
    memcpy(buf, name, len);
    buf[len] = '\0';
    const bench__perf_sw_event *sw = bench__perf_sw_find(buf);
    const char *canon = sw ? sw->name : buf;
    for (size_t i = 0; i < out->n; i++)
        if (strcmp(out->name[i], canon) == 0)
            return 0; /* a duplicate: the first one stays */
    if (out->n >= BENCH__PERF_MAX_EVENTS) {
        bench__msg(msg, msglen, "more than %d events", BENCH__PERF_MAX_EVENTS);
        return BENCH_EINVAL;
    }
    bench__msg(out->name[out->n++], BENCH__PERF_NAME_MAX, "%s", canon);
    return 0;
}

/* Adds each comma-separated item of list (presets expanded when allowed). */
static int add_list(bench__perf_names *out, const char *list, bool presets_ok, char *msg,
                    size_t msglen)
{
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *q = p;
        while (len > 0 && (*q == ' ' || *q == '\t')) {
            q++;
            len--;
        }
        while (len > 0 && (q[len - 1] == ' ' || q[len - 1] == '\t'))
            len--;
        if (len == 0) {
            bench__msg(msg, msglen, "empty event name in '%s'", list);
            return BENCH_EINVAL;
        }
        char item[BENCH__PERF_NAME_MAX];
        const char *preset = NULL;
        if (presets_ok && len < sizeof item) {
            memcpy(item, q, len);
            item[len] = '\0';
            preset = bench__perf_preset(item);
        }
        int rc = preset ? add_list(out, preset, false, msg, msglen)
                        : add_name(out, q, len, msg, msglen);
        if (rc != 0)
            return rc;
        if (!end)
            return 0;
        p = end + 1;
    }
}

int bench__perf_parse_spec(const char *spec, bench__perf_names *out, char *msg, size_t msglen)
{
    memset(out, 0, sizeof *out);
    if (!spec || !*spec) {
        bench__msg(msg, msglen, "%s",
                   "no event given (e.g. --perf-events sw or cycles,instructions)");
        return BENCH_EINVAL;
    }
    return add_list(out, spec, true, msg, msglen);
}

/* ---- groups ---- */

unsigned bench__perf_group_kind(const bench__perf_event *ev)
{
    if (!ev->software)
        return 0;
    /* PERF_COUNT_SW_CPU_CLOCK and _TASK_CLOCK have PMUs of their own; the rest share one. */
    return ev->config == 0 ? 1 : ev->config == 1 ? 2 : 3;
}

unsigned bench__perf_read_rank(unsigned kind)
{
    return kind == 0 ? 1 : kind == 3 ? 0 : 2;
}

size_t bench__perf_plan(const unsigned *kind, size_t n, size_t hw_max, unsigned *group_of)
{
    if (hw_max < 1)
        hw_max = 1;
    size_t ngroups = 0, hw_in_cur = 0;
    long hw_group = -1;
    for (size_t i = 0; i < n; i++) {
        if (kind[i] != 0) {
            size_t j = 0; /* an earlier event of the same kind has the group */
            while (j < i && kind[j] != kind[i])
                j++;
            group_of[i] = j < i ? group_of[j] : (unsigned)ngroups++;
            continue;
        }
        if (hw_group < 0 || hw_in_cur == hw_max) {
            hw_group = (long)ngroups++;
            hw_in_cur = 0;
        }
        group_of[i] = (unsigned)hw_group;
        hw_in_cur++;
    }
    return ngroups;
}

/* ---- reading ---- */

int bench__perf_parse_read(const uint64_t *buf, size_t nbytes, size_t expect,
                           bench__perf_reading *out)
{
    memset(out, 0, sizeof *out);
    if (nbytes != BENCH__PERF_READ_WORDS(expect) * sizeof(uint64_t) || buf[0] != expect)
        return BENCH_EINVAL;
    out->nr = buf[0];
    out->enabled = buf[1];
    out->running = buf[2];
    out->values = buf + 3;
    return 0;
}

double bench__perf_delta(const bench__perf_reading *before, const bench__perf_reading *after,
                         size_t n, double *values)
{
    /* Unsigned differences: correct even if a 64-bit count wrapped (it will not in practice). */
    uint64_t enabled = after->enabled - before->enabled;
    uint64_t running = after->running - before->running;
    if (enabled > 0 && running == 0) {
        for (size_t i = 0; i < n; i++)
            values[i] = 0;
        return 0.0;
    }
    /* Multiplexed: the group counted for `running` of the sample's `enabled` ns; the usual
     * estimate (perf stat's, libperf's) assumes the events were spread evenly over the sample. */
    bool scale = enabled > 0 && running < enabled;
    double factor = scale ? (double)enabled / (double)running : 1.0;
    for (size_t i = 0; i < n; i++)
        values[i] = (double)(after->values[i] - before->values[i]) * factor;
    return scale ? (double)running / (double)enabled : 1.0;
}

/* ---- derived metrics ---- */

static const bench__perf_derived derived[] = {
    {"ipc", "instructions", "cycles", "instr/cycle"},
    {"cache-miss-rate", "cache-misses", "cache-references", "misses/ref"},
    {"branch-miss-rate", "branch-misses", "branches", "misses/branch"},
};

const bench__perf_derived *bench__perf_derived_table(size_t *n)
{
    *n = sizeof derived / sizeof derived[0];
    return derived;
}

double bench__perf_ratio_of_sums(const double *num, const double *den, size_t n)
{
    double a = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        a += num[i];
        b += den[i];
    }
    return b > 0 ? a / b : NAN;
}
