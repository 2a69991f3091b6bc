/*
 * alloc.c: allocation statistics (--alloc-stats).
 * Placeholder until the malloc interposition lands: reports the layer as unavailable.
 */
#include "internal.h"

int bench__alloc_probe_create(bench__probe **out, char *msg, size_t msglen)
{
    *out = NULL;
    bench__msg(msg, msglen, "%s", "allocation statistics are not part of this build");
    return BENCH_EUNAVAIL;
}
