/*
 * measure.c: measurement backends. A backend brackets one sample: start just before the first
 * iteration, stop just after the last. The wall clock is the primary backend; counter and GPU
 * backends plug into the same interface (bench__meas in internal.h).
 */
#include "internal.h"

static void wall_start(bench__meas *m)
{
    m->t0 = bench__now_ns();
}

static double wall_stop(bench__meas *m)
{
    return (double)(bench__now_ns() - m->t0);
}

void bench__meas_wall_init(bench__meas *m)
{
    m->name = "wall";
    m->unit = "ns";
    m->start = wall_start;
    m->stop = wall_stop;
    m->t0 = 0;
}
