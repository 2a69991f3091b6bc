/*
 * perf.c: perf_event counter groups around samples (--perf-events, --list-events).
 * Placeholder until the libpfm4 layer lands: reports the layer as unavailable.
 */
#include "internal.h"

int bench__perf_probe_create(const char *spec, bench__probe **out, char *msg, size_t msglen)
{
    (void)spec;
    *out = NULL;
    bench__msg(msg, msglen, "%s", "perf_event counters are not part of this build");
    return BENCH_EUNAVAIL;
}

int bench__perf_list_events(FILE *out)
{
    (void)out;
    fprintf(stderr, "bench: --list-events: perf_event counters are not part of this build\n");
    return BENCH_EXIT_USAGE;
}
