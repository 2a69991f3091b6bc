/*
 * perf_pfm_none.c: the event-name resolver of a build without libpfm4 (perf_pfm.c's twin). Only
 * the kernel's generic software events are known (task-clock, page-faults, context-switches,
 * ...: perf_events.c's table, opened as PERF_TYPE_SOFTWARE); a hardware name is refused with a
 * message saying that libpfm4 is missing.
 */
#include "internal.h"
#include "perf_events.h"

int bench__perf_resolve(const char *name, bench__perf_event *ev, char *msg, size_t msglen)
{
    return bench__perf_resolve_sw(name, ev, msg, msglen);
}

const char *bench__perf_backend(char *buf, size_t len)
{
    (void)buf;
    (void)len;
    return NULL;
}

void bench__perf_list_pmus(FILE *out)
{
    fputs("  none: this build has no libpfm4, so hardware and PMU-specific events cannot be "
          "named\n  (install libpfm4-dev and rebuild)\n",
          out);
}
