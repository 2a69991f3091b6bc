/*
 * probes.c: the table of probes. A probe is its own file in this folder, which defines its kind
 * with BENCH__PROBE_KIND(id) (core/probe.h: its name on the command line, how it is made, its
 * optional analysis hook), plus one line of PROBES below. The command line (--probe NAME, and a
 * kind's own option), the pipeline that makes a run's probes, the workers of every mode and the
 * analysis all go through this table; none of them names a probe.
 *
 * Order matters: probes attach in table order and the runner starts them in that order, the
 * wall clock last (innermost), so CUDA's events, which may give the time, come first.
 */
#include <stdio.h>
#include <string.h>

#include "core/base.h"
#include "core/probe.h"
#include "probes/cuda.h"
#include "probes/probes.h"

/* One line per probe, in attach order. */
#define PROBES(X)                                                                                  \
    X(cuda)   /* CUDA events: the time of BENCH_CUDA_FNs, GPU state (cuda.c) */                    \
    X(perf)   /* perf_event counter groups, --perf-events (perf.c) */                              \
    X(alloc)  /* allocations per iteration, --alloc-stats (alloc.c) */                             \
    X(rusage) /* context switches per iteration (rusage.c) */                                     \
    X(counters) /* the user's own counters, bench_counter (counters.c) */

#define DECLARE(id) extern const bench__probe_kind bench__probe_kind_##id;
PROBES(DECLARE)
#undef DECLARE

#define ENTRY(id) &bench__probe_kind_##id,
static const bench__probe_kind *const kinds[] = {PROBES(ENTRY)};
#undef ENTRY
#define NKINDS (sizeof kinds / sizeof kinds[0])
_Static_assert(NKINDS <= BENCH__MAX_PROBE_KINDS, "raise BENCH__MAX_PROBE_KINDS");

const bench__probe_kind *const *bench__probe_kinds(size_t *n)
{
    *n = NKINDS;
    return kinds;
}

const bench__probe_kind *bench__probe_kind_find(const char *name, size_t *index)
{
    for (size_t k = 0; k < NKINDS; k++)
        if (strcmp(kinds[k]->name, name) == 0) {
            if (index)
                *index = k;
            return kinds[k];
        }
    return NULL;
}

int bench__probes_make(const bool *on, const char *const *arg, bench__probe **out, char *msg,
                       size_t msglen)
{
    int made = 0;
    for (size_t k = 0; k < NKINDS; k++) {
        const bench__probe_kind *kind = kinds[k];
        bool asked = on && on[k];
        if (!asked && !kind->always)
            continue;
        char why[512] = "";
        bench__probe *p = NULL;
        if (kind->create(asked && arg ? arg[k] : NULL, &p, why, sizeof why) != 0) {
            if (kind->flag)
                bench__msg(msg, msglen, "%s: %s", kind->flag, why);
            else
                bench__msg(msg, msglen, "--probe %s: %s", kind->name, why);
            for (int i = 0; i < made; i++)
                if (out[i]->destroy)
                    out[i]->destroy(out[i]);
            return -1;
        }
        out[made++] = p;
    }
    return made;
}

void bench__probes_analyze(struct bench__result *r)
{
    for (size_t k = 0; k < NKINDS; k++)
        if (kinds[k]->analyze)
            kinds[k]->analyze(r);
}

int bench__probes_lock_clocks(unsigned mhz, char *msg, size_t msglen)
{
    int rc = BENCH_EUNAVAIL;
    bench__msg(msg, msglen, "%s", "no probe of this program locks a clock");
    for (size_t k = 0; k < NKINDS; k++)
        if (kinds[k]->lock_clocks && (rc = kinds[k]->lock_clocks(mhz, msg, msglen)) != 0)
            return rc;
    return rc;
}

size_t bench__probes_readings(bench__probe_reading *out, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < NKINDS && n < max; k++)
        if (kinds[k]->readings)
            n += kinds[k]->readings(out + n, max - n);
    return n;
}

void bench__probes_unlock_clocks(void)
{
    for (size_t k = 0; k < NKINDS; k++)
        if (kinds[k]->unlock_clocks)
            kinds[k]->unlock_clocks();
}

int bench__probes_compare_note(const struct bench__result *r,
                               double (*saved_rate)(const void *saved, const char *metric),
                               const void *saved, char *buf, size_t len)
{
    for (size_t k = 0; k < NKINDS; k++) {
        const bench__probe_kind *kind = kinds[k];
        if (kind->compare_note &&
            kind->compare_note(r, kind->note_metric ? saved_rate(saved, kind->note_metric) : -1,
                               buf, len))
            return 1;
    }
    return 0;
}

void bench__probes_context(bench__context *c)
{
    bench__cuda_context_collect(&c->gpu); /* CUDA layer: the GPU, or why there is none */
}
