/*
 * history_confirm.c: --history-confirm, the check of a change point in the run history by the
 * code that measured it. A step in a series of medians may be the code (a commit made the
 * benchmark slower) or the machine (a noisy neighbour, a new kernel): the programs of the two
 * runs on either side of the program change nearest the step, run again now, side by side, tell
 * them apart. The step is found only within a run or more (its location interval,
 * changepoint.h), so the program change is looked for within that interval, and a confirmed step
 * is placed where the program changed; with no program change there, the step is not the code's
 * and nothing runs. The programs of the two runs, kept
 * beside the history when they were recorded (history.c, FILE.programs/) and signed with this
 * user's key, are opened from sealed copies of the bytes checked (trust.c) and compared on that
 * benchmark in pairs of worker processes (ab.c), like the confirmation of a saved baseline's
 * suspect. A program not kept on this machine is taken from a PostgreSQL history's database
 * (history.c checks its SHA-256 before it runs) only under the trust rule: whoever may write
 * the database may put a program there, so its copy runs only when this user's signature of
 * its hash verifies (a run on this machine recorded it) or --history-trust-programs is given.
 * The step is "confirmed" when the paired run sees a change the same way beyond the
 * noise threshold, "not reproduced" when it sees none, and otherwise says why it cannot tell.
 *
 * The history gate's steps are confirmed the same way, the program of the benchmark's newest
 * earlier run against this very program: a step fails the gate only when the paired run
 * confirms it, or when it cannot be checked (then the numbers alone decide, as before).
 *
 * What each step comes to is decided by compare/verdict.c (bench__verdict_step_check,
 * bench__gate_paired_fails) and printed by report/report_history.c; this file runs the programs.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare/verdict.h"
#include "core/base.h"
#include "run/ab.h"
#include "run/explain.h"
#include "run/history_confirm.h"
#include "report/report_history.h"
#include "run/pipeline.h"
#include "measure/run.h"
#include "sys/clock.h"
#include "sys/proc.h"

/* One side of a change point: its run's program, opened to run. */
typedef struct side {
    long long run;
    char hash[BENCH__HASH_TEXT];
    char mac[BENCH__MAC_TEXT];
    int fd;       /* sealed copy of the program; -1 until opened */
    char why[768]; /* why it cannot run, when it cannot */
} side;

/* Opens the copy of s->run's program that the history's database holds, under the trust
 * rule; 0, BENCH_EUSAGE when interrupted, else 1 with the reason in s->why. */
static int open_stored(const bench__request *c, bench__history *history, side *s)
{
    char msg[512];
    bool there = false;
    if (bench__history_program_stored(history, s->hash, &there, msg, sizeof msg) != 0) {
        bench__msg(s->why, sizeof s->why, "%s", msg);
        return 1;
    }
    if (!there) {
        bench__msg(s->why, sizeof s->why, "the program of run %lld is not kept "
                                          "(--history-programs), here or in the database",
                   s->run);
        return 1;
    }
    if (!s->mac[0] && !c->history_trust_programs) {
        bench__msg(s->why, sizeof s->why, "the program of run %lld is not run: no run on this "
                                          "machine recorded it, and whoever may write the "
                                          "database may put any program there "
                                          "(--history-trust-programs runs the database's copy)",
                   s->run);
        return 1;
    }
    double bytes = 0;
    int64_t deadline = bench__now_ns() + (int64_t)(bench__request_timeout(c) * 1e9);
    int rc = bench__history_program_open(history, s->hash, deadline, &s->fd, &bytes, msg,
                                         sizeof msg);
    if (rc == BENCH_EUSAGE)
        return BENCH_EUSAGE;
    if (rc == BENCH_EUNAVAIL) {
        bench__msg(s->why, sizeof s->why, "the program of run %lld is not kept "
                                          "(--history-programs), here or in the database",
                   s->run);
        return 1;
    }
    if (rc != 0) {
        bench__msg(s->why, sizeof s->why, "the database's copy of the program of run %lld is not "
                                          "run: %s", s->run, msg);
        return 1;
    }
    double vouched;
    if (!c->history_trust_programs &&
        bench__snapshot_verify(s->hash, bytes, s->mac, &vouched, msg, sizeof msg) != 0) {
        bench__msg(s->why, sizeof s->why, "the database's copy of the program of run %lld is not "
                                          "run: %s (--history-trust-programs runs it anyway)",
                   s->run, msg);
        close(s->fd);
        s->fd = -1;
        return 1;
    }
    return 0;
}

/* Looks up and opens the program of s->run; 0, BENCH_EUSAGE when interrupted, else 1 with the
 * reason in s->why. */
static int open_side(const bench__request *c, bench__history *history, side *s)
{
    char msg[512], dir[4200];
    bench__history_programs_dir(history, dir, sizeof dir);
    s->fd = -1;
    if (bench__history_program(history, s->run, s->hash, sizeof s->hash, s->mac,
                               sizeof s->mac, msg, sizeof msg) != 0) {
        bench__msg(s->why, sizeof s->why, "%s", msg);
        return 1;
    }
    if (!s->hash[0]) {
        bench__msg(s->why, sizeof s->why, "run %lld recorded no program", s->run);
        return 1;
    }
    char file[256], path[4500];
    bench__msg(file, sizeof file, "%s.program", s->hash + strlen("sha256:"));
    /* The signature covers the program's size: checked against the file's before a byte of it
     * is read (a kept program of an older version, signed without one, is hashed first). */
    bench__msg(path, sizeof path, "%s/%s", dir, file);
    struct stat st;
    bool here = lstat(path, &st) == 0;
    double size = here && S_ISREG(st.st_mode) ? (double)st.st_size : 0;
    /* Not kept on this machine: a database may hold a copy. */
    if ((!s->mac[0] || !here) && bench__history_holds_programs(history))
        return open_stored(c, history, s);
    if (!s->mac[0]) {
        bench__msg(s->why, sizeof s->why,
                   "the program of run %lld is not kept (--history-programs)", s->run);
        return 1;
    }
    double bytes = 0; /* the size the signature vouches for; 0 none */
    if (!c->trust_snapshots &&
        bench__snapshot_verify(s->hash, size, s->mac, &bytes, msg, sizeof msg) != 0) {
        bench__msg(s->why, sizeof s->why, "the program of run %lld is not run: %s (--trust-"
                                          "snapshots runs it anyway)", s->run, msg);
        return 1;
    }
    double timeout = bench__request_timeout(c);
    int rc = bench__snapshot_open(dir, file, s->hash, bytes, bench__now_ns() + (int64_t)(timeout * 1e9),
                                  &s->fd, msg, sizeof msg);
    if (rc == BENCH_EUSAGE)
        return BENCH_EUSAGE;
    if (rc != 0) {
        bench__msg(s->why, sizeof s->why, "the program of run %lld is not run: %s", s->run, msg);
        return 1;
    }
    return 0;
}

/* --confirm-time 0: nothing is run again; the numbers decide, as they do for a baseline's
 * suspects (suspects.c). */
static bool never_confirm(const bench__request *c)
{
    return c->confirm_time == 0;
}

/* The paired options of a confirmation: its time, the comparison's level and threshold. */
static bench__ab_options confirm_options(const bench__request *c)
{
    bench__ab_options ab = bench__request_ab_options(c);
    ab.seconds = bench__request_confirm_time(c, 1);
    return ab;
}

/* Runs A (name_a, from fd_a) and B (name_b, from fd_b, or its path when fd_b < 0) paired on
 * benchmark `id` into *item. 0 with a result to read; 1 when it gave none (why in why); -1 when
 * the run was interrupted. */
static int paired(const char *name_a, int fd_a, const char *name_b, int fd_b, const char *id,
                  const bench__ab_options *ab, bench__ab_item *item, char *why, size_t len)
{
    memset(item, 0, sizeof *item);
    item->id = id;
    int arc = bench__ab_compare(name_a, fd_a, name_b, fd_b, item, 1, ab, NULL, NULL);
    if (arc == BENCH_EUSAGE || bench__proc_interrupted())
        return -1;
    if (arc == 0 && item->rc == 0 && item->change.verdict != BENCH__V_INCOMPARABLE)
        return 0;
    bench__msg(why, len, "%s", arc != 0          ? "out of memory"
                               : item->message[0] ? item->message
                                                  : "no rounds");
    return 1;
}

/* --explain: the functions a confirmed change went into (explain.c), printed under its line on
 * o, A and B profiled for the time a confirmation takes. 0, or -1 when interrupted. */
static int explain_item(FILE *o, const bench__request *c, const char *name_a, int fd_a,
                        const char *name_b, int fd_b, const bench__ab_item *item,
                        const bench__ab_options *ab)
{
    if (!c->explain)
        return 0;
    bench__explain_opts xo = {.mode = BENCH__EXPLAIN_TIME, .seconds = ab->seconds,
                              .timeout_s = ab->timeout_s, .seed = ab->seed};
    int rc = bench__explain_items(o, name_a, fd_a, name_b, fd_b, item, 1, &xo, NULL);
    return rc == BENCH_EUSAGE ? -1 : 0;
}

/* The program change of series s that change point cp is checked against: the index i (runs
 * i - 1 and i measured different programs) within cp's location interval nearest cp->index, the
 * earlier on a tie. 0 when there is none: *known then says whether every run from the one before
 * the interval to its last recorded its program (so none changed), else the runs cannot tell. */
static size_t program_change(const bench__history_series *s, const bench__cp *cp, bool *known)
{
    size_t best = 0, dist = SIZE_MAX;
    *known = true;
    for (size_t i = cp->index_lower; i <= cp->index_upper && i < s->n; i++) {
        const char *before = s->programs[i - 1], *after = s->programs[i];
        if (!before[0] || !after[0]) {
            *known = false;
            continue;
        }
        size_t d = i > cp->index ? i - cp->index : cp->index - i;
        if (strcmp(before, after) != 0 && d < dist) {
            best = i;
            dist = d;
        }
    }
    return best;
}

/* The paired check of change point j of series s at program change `at` (runs at - 1 and at):
 * prints the outcome (report/); with it confirmed away from where the change point was found, places the
 * change point there in s. 0, or -1 when interrupted. */
static int check_change(FILE *o, const bench__request *c, const bench__ab_options *ab,
                        bench__history_series *s, size_t j, size_t at)
{
    const bench__cp *cp = &s->found.cp[j];
    char why[sizeof ((side *)0)->why];
    side a = {.run = s->runs[at - 1], .fd = -1}, b = {.run = s->runs[at], .fd = -1};
    int ra = open_side(c, c->history, &a);
    int rb = ra == BENCH_EUSAGE ? ra : open_side(c, c->history, &b);
    int rc = 0;
    if (ra == BENCH_EUSAGE || rb == BENCH_EUSAGE) {
        rc = -1;
    } else if (bench__same_program(a.hash, b.hash)) {
        bench__report_confirm_same_program(o, a.run, b.run, true, a.hash);
    } else if (ra != 0 || rb != 0) {
        bench__report_confirm_cannot(o, ra != 0 ? a.why : b.why);
    } else {
        char name_a[64], name_b[64];
        bench__msg(name_a, sizeof name_a, "the program of run %lld", a.run);
        bench__msg(name_b, sizeof name_b, "the program of run %lld", b.run);
        bench__ab_item item;
        fflush(o);
        int prc = paired(name_a, a.fd, name_b, b.fd, s->id, ab, &item, why, sizeof why);
        if (prc < 0) {
            rc = -1;
        } else if (prc > 0) {
            bench__report_confirm_cannot(o, why);
        } else {
            bench__step_check check = bench__verdict_step_check(&item.change, cp->step);
            bool moved = check == BENCH__STEP_CONFIRMED && at != cp->index;
            double *logs = moved ? malloc(s->n * sizeof *logs) : NULL;
            for (size_t i = 0; logs && i < s->n; i++)
                logs[i] = log(s->median_ns[i]);
            /* The step is where the code changed: its size is measured there. */
            bool placed = logs && bench__cp_place(logs, s->n, BENCH__HISTORY_ALPHA, &s->found, j,
                                                  at) == 0;
            free(logs);
            bench__report_confirm_checked(o, check, &item.change, item.pairs, a.run, b.run,
                                          placed ? &s->found.cp[j] : NULL);
            rc = explain_item(o, c, name_a, a.fd, name_b, b.fd, &item, ab);
        }
    }
    if (a.fd >= 0)
        close(a.fd);
    if (b.fd >= 0)
        close(b.fd);
    return rc;
}

int bench__history_confirm(FILE *o, const bench__request *c, bench__history_view *view)
{
    size_t npoints = 0;
    for (size_t i = 0; i < view->n; i++)
        npoints += view->s[i].found.ncp;
    bench__ab_options ab = confirm_options(c);
    bench__report_confirm_heading(o, npoints, never_confirm(c), ab.seconds);
    if (npoints == 0 || never_confirm(c))
        return 0;
    int rc = 0;
    for (size_t i = 0; i < view->n && rc == 0; i++) {
        bench__history_series *s = &view->s[i];
        for (size_t j = 0; j < s->found.ncp && rc == 0; j++) {
            const bench__cp *cp = &s->found.cp[j];
            bench__report_confirm_point(o, s, cp);
            bool known;
            size_t at = program_change(s, cp, &known);
            if (at == 0 && known)
                bench__report_confirm_same_program(o, s->runs[cp->index_lower - 1],
                                                   s->runs[cp->index_upper], false,
                                                   s->programs[cp->index]);
            else
                /* No program change known near it: the runs either side say why. */
                rc = check_change(o, c, &ab, s, j, at ? at : cp->index);
        }
    }
    if (rc != 0)
        bench__report_confirm_interrupted(o, bench__proc_interrupted());
    return rc;
}

int bench__history_confirm_gate(FILE *o, const bench__request *c, const char *program_hash,
                                const bench__history_steps *steps, bool *regressed)
{
    bench__ab_options ab = confirm_options(c);
    int rc = 0;
    for (size_t i = 0; i < steps->n && never_confirm(c); i++) {
        bench__report_gate_unchecked(o, steps->s[i].id, BENCH__GATE_NOT_RUN, NULL, 0);
        *regressed = true;
    }
    for (size_t i = 0; i < steps->n && rc == 0 && !never_confirm(c); i++) {
        const bench__history_step *st = &steps->s[i];
        char why[sizeof ((side *)0)->why];
        side a = {.run = st->prev_run, .fd = -1};
        int ra = open_side(c, c->history, &a);
        if (ra == BENCH_EUSAGE) {
            rc = -1;
        } else if (bench__same_program(a.hash, program_hash)) {
            bench__report_gate_unchecked(o, st->id, BENCH__GATE_SAME_PROG, NULL, a.run);
        } else if (ra != 0) {
            bench__report_gate_unchecked(o, st->id, BENCH__GATE_NO_CHECK, a.why, 0);
            *regressed = true;
        } else {
            char name[64];
            bench__msg(name, sizeof name, "the program of run %lld", a.run);
            bench__report_gate_confirming(o, st->id, a.run, ab.seconds);
            fflush(o);
            bench__ab_item item;
            int prc = paired(name, a.fd, "/proc/self/exe", -1, st->id, &ab, &item, why,
                             sizeof why);
            if (prc < 0) {
                rc = -1;
            } else if (prc > 0) {
                bench__report_gate_unchecked(o, st->id, BENCH__GATE_NO_CHECK, why, 0);
                *regressed = true;
            } else {
                bool fails = bench__gate_paired_fails(item.change.verdict);
                bench__report_gate_checked(o, st->id, &item.change, item.pairs, a.run, fails);
                if (fails)
                    *regressed = true;
                rc = explain_item(o, c, name, a.fd, "/proc/self/exe", -1, &item, &ab);
            }
        }
        if (a.fd >= 0)
            close(a.fd);
    }
    return rc;
}
