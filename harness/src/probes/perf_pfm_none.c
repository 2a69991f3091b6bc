/*
 * perf_pfm_none.c: the core library's event-name resolver (perf_pfm.c's twin), and the hook
 * through which the counters component replaces it. Without the component (a program that does not
 * link libharness-counters, or a library built without libpfm4) only the kernel's generic events
 * are known: the software ones (task-clock, page-faults, context-switches, ...: opened as
 * PERF_TYPE_SOFTWARE) and the hardware ones (cycles, instructions, branch-misses, ...: opened as
 * PERF_TYPE_HARDWARE, which the kernel maps to the CPU's events), both perf_events.c's tables; any
 * other name (a hardware-cache event, a PMU's own event) is refused with a message saying that
 * libpfm4 is missing. The component's constructor registers its resolver before main(), and every
 * call below goes to it from then on.
 */
#include "probes/perf_events.h"

/* Set by the counters component's constructor; NULL: the generic tables alone. */
static const bench__perf_resolver *resolver;

void bench__perf_set_resolver(const bench__perf_resolver *r)
{
    resolver = r;
}

const char *bench__perf_feature(void)
{
    if (resolver)
        return "perf_event counters: libpfm4";
#ifdef HARNESS_HAVE_LIBPFM
    return "perf_event counters: generic events only (libpfm4 not linked: the harness-counters "
           "component)";
#else
    return "perf_event counters: generic events only (libpfm4 compiled out)";
#endif
}

int bench__perf_resolve(const char *name, bench__perf_event *ev, char *msg, size_t msglen)
{
    if (resolver)
        return resolver->resolve(name, ev, msg, msglen);
    return bench__perf_resolve_sw(name, ev, msg, msglen);
}

const char *bench__perf_backend(char *buf, size_t len)
{
    if (resolver)
        return resolver->backend(buf, len);
    return NULL;
}

void bench__perf_list_pmus(FILE *out)
{
    if (resolver) {
        resolver->list_pmus(out);
        return;
    }
    fprintf(out, "  none: %s, so hardware and PMU-specific events cannot be named\n",
            bench__perf_no_pfm(true));
}
