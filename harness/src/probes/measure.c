/*
 * measure.c: the wall clock as a probe, the default primary probe of every benchmark. It
 * brackets one sample (or timed block) like every other probe: start reads the clock as its
 * last action, just before the first iteration; stop reads it as its first action, just after
 * the last. The runner attaches it innermost (started last, stopped first), so no other
 * probe's cost is inside the time it measures. Its value is the sample's elapsed time in ns;
 * when another probe gives the time (CUDA events), the runner records it as the metric
 * "host_wall".
 */
#include "core/probe.h"
#include "core/result.h"
#include "probes/measure.h"
#include "sys/clock.h"

/* The running sample's start, ns. One benchmark runs at a time, in the main thread; a static
 * rather than the probe's state, so that start stores it without a load of the state. */
static int64_t wall_t0;

static int wall_attach(bench__probe *p, bench__result *r)
{
    (void)p, (void)r;
    return 0; /* every benchmark; its one value is the time, or host_wall (the runner's) */
}

static void wall_start(bench__probe *p)
{
    /* The clock read is the last action: the timed block follows. */
    (void)p;
    wall_t0 = bench__now_ns();
}

static void wall_stop(bench__probe *p, double *values, double *fraction)
{
    /* The clock read is the first action: nothing after the block's last iteration is timed. */
    (void)p;
    int64_t t1 = bench__now_ns();
    values[0] = (double)(t1 - wall_t0);
    *fraction = 1.0;
}

static void wall_detach(bench__probe *p, bench__result *r)
{
    (void)p, (void)r;
}

int64_t bench__wall_started_ns(void)
{
    return wall_t0;
}

bench__probe *bench__wall_probe(void)
{
    static bench__probe probe = {
        .name = "wall",
        .attach = wall_attach,
        .start = wall_start,
        .stop = wall_stop,
        .detach = wall_detach,
        .primary = true,
        .time_metric = "host_wall",
    };
    return &probe;
}
