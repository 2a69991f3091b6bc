/*
 * progress.c: the progress line of a long run on a terminal (progress.h): "label, ~T s left",
 * written to stderr after a carriage return and ended with the erase-to-end-of-line sequence,
 * so each redraw replaces the last; cleared before anything else is printed and at the end.
 *
 * The time left comes from the run's own pace once a unit is done (elapsed / done x units
 * left), and from the caller's estimate before; a comparison's budget is a limit its run never
 * passes, so its time left is never more than the budget's remainder. Nothing is drawn for a
 * run expected to end within BENCH__PROGRESS_MIN_S until it has lasted that long: a line that
 * flashes for a second helps no one.
 */
#include <stdarg.h>
#include <stdio.h>

#include "sys/progress.h"
#include "sys/clock.h"

void bench__progress_start(bench__progress *p, bool on, size_t total, double est_s,
                           bool est_limit)
{
    *p = (bench__progress){.on = on, .total = total, .est_s = est_s, .est_limit = est_limit,
                           .start_ns = bench__now_ns()};
}

void bench__progress_step(bench__progress *p, size_t done, const char *fmt, ...)
{
    if (!p->on)
        return;
    int64_t now = bench__now_ns();
    double elapsed = (double)(now - p->start_ns) * 1e-9;
    if (p->est_s < BENCH__PROGRESS_MIN_S && elapsed < BENCH__PROGRESS_MIN_S)
        return;
    if (p->shown && now - p->drawn_ns < 100000000)
        return;
    double left = done > 0 && done <= p->total
                      ? elapsed * (double)(p->total - done) / (double)done
                      : p->est_s - elapsed;
    if (p->est_limit && left > p->est_s - elapsed)
        left = p->est_s - elapsed;
    if (left < 0)
        left = 0;
    char label[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(label, sizeof label, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\r%s, ~%.0f s left\033[K", label, left);
    fflush(stderr);
    p->shown = true;
    p->drawn_ns = now;
}

void bench__progress_clear(bench__progress *p)
{
    if (!p->shown)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->shown = false;
}

void bench__progress_finish(bench__progress *p)
{
    bench__progress_clear(p);
    p->on = false;
}
