/*
 * perf_pfm.c: the event-name resolver with libpfm4 (built when CMake finds it; perf_pfm_none.c
 * is its twin without). The only file of the harness that includes libpfm4's headers: it turns
 * a name into the layer's own bench__perf_event, so the rest never sees libpfm4's copy of
 * struct perf_event_attr. It is the counters component (libharness-counters): a program that links
 * it gets this resolver through the constructor at the end of this file; the core library alone
 * knows the software table only (perf_pfm_none.c). bench__counters_component is the symbol the
 * component's link flags name as undefined, so a static archive's copy of this file is linked in.
 *
 * Software events come from the harness's own table first, so they resolve the same with and
 * without libpfm4. Anything else goes through pfm_get_os_event_encoding with PFM_OS_PERF_EVENT_EXT
 * (the perf_event modifiers u, k, h, ... are accepted) and user mode (PFM_PLM3) as the default
 * privilege level: hardware events count the benchmark's own instructions, not the kernel's
 * work in the harness's read() of the counters, and user mode is what an unprivileged user may
 * count under kernel.perf_event_paranoid = 2. A name can still ask for more (`cycles:k`).
 */
#include <string.h>

#include <perfmon/pfmlib_perf_event.h>

#include "core/base.h"
#include "probes/perf_events.h"

/* libpfm4's own state is global; so is whether it initialised. 1: not tried yet. */
static int pfm_state = 1;

static int pfm_ready(void)
{
    if (pfm_state == 1)
        pfm_state = pfm_initialize();
    return pfm_state;
}

static int encode(const char *name, int plm, struct perf_event_attr *attr)
{
    pfm_perf_encode_arg_t arg;
    memset(attr, 0, sizeof *attr);
    memset(&arg, 0, sizeof arg);
    arg.attr = attr;
    arg.size = sizeof arg;
    return pfm_get_os_event_encoding(name, plm, PFM_OS_PERF_EVENT_EXT, &arg);
}

static int pfm_resolve(const char *name, bench__perf_event *ev, char *msg, size_t msglen)
{
    if (bench__perf_sw_find(name))
        return bench__perf_resolve_sw(name, ev, msg, msglen);
    memset(ev, 0, sizeof *ev);
    int rc = pfm_ready();
    if (rc != PFM_SUCCESS) {
        bench__msg(msg, msglen, "cannot resolve '%s': libpfm4 did not initialise (%s)", name,
                   pfm_strerror(rc));
        return BENCH_EINVAL;
    }
    struct perf_event_attr attr;
    rc = encode(name, PFM_PLM3, &attr);
    if (rc == PFM_ERR_NOTFOUND) {
        bench__msg(msg, msglen,
                   "unknown event '%s' (libpfm4 knows no such event on this machine; see "
                   "--list-events)",
                   name);
        return BENCH_EINVAL;
    }
    if (rc != PFM_SUCCESS) {
        bench__msg(msg, msglen, "event '%s': libpfm4: %s", name, pfm_strerror(rc));
        return BENCH_EINVAL;
    }
    ev->kernel_by_default = false;
    if (attr.type == PERF_TYPE_SOFTWARE) {
        /* A software event spelled another way (perf::faults, PERF_COUNT_SW_...): count kernel
         * mode too unless the name said otherwise, as for the table's names (see perf.c). With
         * both levels as the default, only an explicit ":u" still excludes the kernel. */
        struct perf_event_attr both;
        if (encode(name, PFM_PLM0 | PFM_PLM3, &both) == PFM_SUCCESS) {
            ev->kernel_by_default = attr.exclude_kernel && !both.exclude_kernel;
            attr = both;
        }
    }
    bench__msg(ev->name, sizeof ev->name, "%s", name);
    ev->type = attr.type;
    ev->config = attr.config;
    ev->config1 = attr.config1;
    ev->config2 = attr.config2;
    ev->exclude_user = attr.exclude_user;
    ev->exclude_kernel = attr.exclude_kernel;
    ev->exclude_hv = attr.exclude_hv;
    ev->exclude_guest = attr.exclude_guest;
    ev->exclude_host = attr.exclude_host;
    ev->software = attr.type == PERF_TYPE_SOFTWARE;
    ev->unit = "events";
    ev->user_mode = BENCH__PERF_USER_PARTIAL;
    const bench__perf_sw_event *sw = ev->software ? bench__perf_sw_by_config(attr.config) : NULL;
    if (sw) {
        ev->unit = sw->unit;
        ev->user_mode = sw->user_mode;
    }
    if (ev->software) {
        /* Guest, host and hypervisor filters mean nothing to software events: drop libpfm4's,
         * so perf::faults opens (and de-duplicates) exactly as page-faults does. */
        ev->exclude_guest = ev->exclude_host = false;
        ev->exclude_hv = true;
    }
    return 0;
}

static const char *pfm_backend(char *buf, size_t len)
{
    int v = pfm_get_version();
    bench__msg(buf, len, "libpfm4 (API %d.%d)", PFM_MAJ_VERSION(v), PFM_MIN_VERSION(v));
    return buf;
}

/* Prints words wrapped at 100 columns with a 4-space indent; `col` is the current column. */
static int put_word(FILE *out, int col, const char *w)
{
    int len = (int)strlen(w);
    if (col > 4 && col + 1 + len > 100) {
        fputc('\n', out);
        col = 0;
    }
    if (col == 0) {
        fputs("    ", out);
        col = 4;
    } else {
        fputc(' ', out);
        col++;
    }
    fputs(w, out);
    return col + len;
}

static void pfm_list_pmus(FILE *out)
{
    int rc = pfm_ready();
    if (rc != PFM_SUCCESS) {
        fprintf(out, "  libpfm4 did not initialise: %s\n", pfm_strerror(rc));
        return;
    }
    for (int p = PFM_PMU_NONE + 1; p < PFM_PMU_MAX; p++) {
        pfm_pmu_info_t info;
        memset(&info, 0, sizeof info);
        info.size = sizeof info;
        if (pfm_get_pmu_info((pfm_pmu_t)p, &info) != PFM_SUCCESS || !info.is_present)
            continue;
        bool generic = strcmp(info.name, "perf") == 0;
        fprintf(out, "  %s: %s, %d event%s", info.name, info.desc, info.nevents,
                info.nevents == 1 ? "" : "s");
        if (info.num_cntrs > 0)
            fprintf(out, ", %d counter%s", info.num_cntrs, info.num_cntrs == 1 ? "" : "s");
        if (info.num_fixed_cntrs > 0)
            fprintf(out, ", %d fixed counter%s", info.num_fixed_cntrs,
                    info.num_fixed_cntrs == 1 ? "" : "s");
        fprintf(out, "%s\n", generic ? " (perf(1)'s names; PERF_COUNT_* spellings work too)" : "");
        int col = 0;
        for (int e = info.first_event; e != -1; e = pfm_get_event_next(e)) {
            pfm_event_info_t ei;
            memset(&ei, 0, sizeof ei);
            ei.size = sizeof ei;
            if (pfm_get_event_info(e, PFM_OS_PERF_EVENT_EXT, &ei) != PFM_SUCCESS)
                continue;
            char w[128];
            if (generic) {
                /* The generic PMU's events are PERF_COUNT_* names with perf(1)'s names as
                 * equivalents: show those, lower case, as people type them. */
                if (!ei.equiv)
                    continue;
                size_t i = 0;
                for (; ei.name[i] && i + 1 < sizeof w; i++)
                    w[i] = (char)(ei.name[i] >= 'A' && ei.name[i] <= 'Z' ? ei.name[i] + 32
                                                                          : ei.name[i]);
                w[i] = '\0';
            } else {
                bench__msg(w, sizeof w, "%s", ei.name);
            }
            col = put_word(out, col, w);
        }
        if (col > 0)
            fputc('\n', out);
    }
}

const int bench__counters_component = 1;

__attribute__((constructor)) static void register_pfm(void)
{
    static const bench__perf_resolver resolver = {pfm_resolve, pfm_backend, pfm_list_pmus};
    bench__perf_set_resolver(&resolver);
}
