/*
 * perf.c: perf_event counter groups around every sample (--perf-events) and --list-events.
 *
 * At creation the list is parsed (perf_events.c), each name resolved (perf_pfm.c, or
 * perf_pfm_none.c without libpfm4) and each event opened once on its own, then in its group,
 * and closed again: an event this machine cannot count is dropped with one warning, before the
 * run, and the run goes on with the rest. For each benchmark the groups are opened on the
 * calling thread (pid 0, any CPU, not inherited by threads the benchmark starts) at attach and
 * closed at detach.
 *
 * How a sample is counted: the counters run all the time; start reads every group (one read()
 * per group, PERF_FORMAT_GROUP gives every member's count and the group's enabled and running
 * times at once) just before the runner starts the wall clock, stop reads them again just after
 * it stopped, and the sample's value is the difference. That costs one system call per group at
 * each end. Enabling and disabling the group with ioctl() instead would cost an ioctl at start
 * and an ioctl plus the read at stop: more system calls for the same exclusion, since the read
 * is needed anyway. What the difference still contains besides the loop body: the harness's few
 * instructions between the read and the clock, the clock reads themselves, and, for counters
 * that include kernel mode (the software events), the tail and head of the two read() calls.
 * That is a fixed amount per sample, which the slope estimate removes and which is small per
 * iteration once a sample runs many iterations; docs/counters.md gives the measured amount.
 *
 * Privilege levels: hardware events count user mode only by default (perf_pfm.c says why).
 * Software events count kernel mode too: the kernel attributes them to the task whatever mode it
 * was in, and with exclude_kernel it filters them by the mode of the interrupted registers, so
 * context-switches and cpu-migrations (always in kernel mode) would read 0 and page faults
 * taken inside system calls would be missed. When kernel.perf_event_paranoid forbids kernel mode
 * (2 and above without CAP_PERFMON), a software event falls back to user mode where that still
 * means something (the clocks are unchanged, faults are partial, with a warning) and is dropped
 * with a warning where it would always read 0.
 *
 * Groups: software events go into one group per kernel PMU that implements them (task-clock,
 * cpu-clock, the rest: perf_events.h says why a mixed group fails), hardware events into their
 * own groups. So the sw preset reads two groups at each end of a sample: the software counts
 * first, task-clock last before the wall clock starts (bench__perf_read_rank says why).
 *
 * Multiplexing: more hardware events than the PMU has counters are split into groups of at most
 * BENCH__PERF_HW_GROUP_MAX (and further where the kernel refuses a member); the kernel then
 * rotates the groups and reports for how long each one ran. Values are scaled by enabled/running
 * (perf_events.c) and stop reports the smallest running/enabled over the groups, which the
 * runner records as the metric's min_fraction.
 *
 * Start and stop make read() calls only: no allocation, no output.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/base.h"
#include "core/options.h"
#include "core/probe.h"
#include "core/result.h"
#include "probes/perf.h"
#include "probes/perf_events.h"

#define MAX_EV BENCH__PERF_MAX_EVENTS

/* One group: its events (indices into the probe's event list, leader first) and its fds. */
typedef struct perf_group {
    size_t n;
    size_t ev[MAX_EV];
    int fd[MAX_EV];
    ssize_t before_len; /* bytes the start's read returned */
    uint64_t before[BENCH__PERF_READ_WORDS(MAX_EV)];
    uint64_t after[BENCH__PERF_READ_WORDS(MAX_EV)];
} perf_group;

typedef struct perf_state {
    size_t nev;
    bench__perf_event ev[MAX_EV]; /* the events that open here, in metric order */
    size_t ngroups;
    perf_group g[MAX_EV];
    bool open;              /* the groups are open (between attach and detach) */
    double tmp[MAX_EV];     /* one group's values in stop */
} perf_state;

/* ---- opening events ---- */

static int paranoid_level(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int v = -99;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -99;
        fclose(f);
    }
    return v;
}

/* What an errno of perf_event_open means for an event: "ENOENT (No such file or directory): no
 * PMU of ..." in full, "ENOENT: no PMU ..." in brief (for --list-events' table). */
static void explain_errno(char *buf, size_t len, int err, bool brief)
{
    const char *name = NULL, *why = NULL;
    char perm[400];
    switch (err) {
    case ENOENT:
        name = "ENOENT";
        why = "no PMU of this machine counts it (a virtual machine often exposes none)";
        break;
    case ENODEV:
        name = "ENODEV";
        why = "this machine has no such PMU";
        break;
    case EOPNOTSUPP:
        name = "EOPNOTSUPP";
        why = "the PMU cannot count it this way";
        break;
    case EINVAL:
        name = "EINVAL";
        why = "the kernel refused the encoding (not supported by this CPU or kernel)";
        break;
    case ENOSPC:
        name = "ENOSPC";
        why = "not enough counters";
        break;
    case EMFILE:
        name = "EMFILE";
        why = "too many open files";
        break;
    case ENOSYS:
        name = "ENOSYS";
        why = "the kernel has no perf_event_open (CONFIG_PERF_EVENTS off)";
        break;
    case EACCES:
    case EPERM: {
        name = err == EACCES ? "EACCES" : "EPERM";
        int p = paranoid_level();
        char lvl[16] = "unknown";
        if (p != -99)
            bench__msg(lvl, sizeof lvl, "%d", p);
        if (brief)
            bench__msg(perm, sizeof perm, "not allowed at kernel.perf_event_paranoid = %s", lvl);
        else
            bench__msg(perm, sizeof perm,
                       "not allowed at kernel.perf_event_paranoid = %s (at 2 a user may count "
                       "its own threads in user mode, at 1 kernel mode too: sysctl "
                       "kernel.perf_event_paranoid=1, or run with CAP_PERFMON; a container's "
                       "seccomp profile may forbid perf_event_open altogether)",
                       lvl);
        why = perm;
        break;
    }
    default:
        break;
    }
    if (!name)
        bench__msg(buf, len, "errno %d (%s)", err, strerror(err));
    else if (brief)
        bench__msg(buf, len, "%s: %s", name, why);
    else
        bench__msg(buf, len, "%s (%s): %s", name, strerror(err), why);
}

static int sys_perf_event_open(const bench__perf_event *ev, int group_fd)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = ev->type;
    a.config = ev->config;
    a.config1 = ev->config1;
    a.config2 = ev->config2;
    a.exclude_user = ev->exclude_user;
    a.exclude_kernel = ev->exclude_kernel;
    a.exclude_hv = ev->exclude_hv;
    a.exclude_guest = ev->exclude_guest;
    a.exclude_host = ev->exclude_host;
    /* Counting, enabled from the start (members follow their leader); one read of the leader
     * returns the whole group with its enabled and running times, for scaling. */
    a.disabled = 0;
    a.read_format =
        PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    /* pid 0, cpu -1: the calling thread on whatever CPU it runs. */
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* Both explanations of err: the full one into why, the brief one into brief (either NULL). */
static void explain_both(int err, const char *prefix, char *why, size_t whylen, char *brief,
                         size_t brieflen)
{
    char e[500];
    if (why) {
        explain_errno(e, sizeof e, err, false);
        bench__msg(why, whylen, "%s%s", prefix, e);
    }
    if (brief) {
        explain_errno(e, sizeof e, err, true);
        bench__msg(brief, brieflen, "%s%s", prefix, e);
    }
}

/*
 * Opens ev (into group_fd's group, or as a leader with -1). When kernel mode is refused for a
 * software event that chose it by default, falls back to user mode if that still counts
 * something, updating ev so later opens match, and says so in note (else note is ""). Returns
 * the fd, or -1 with errno's explanation in why and its short form in brief (either may be
 * NULL).
 */
static int open_event(bench__perf_event *ev, int group_fd, char *why, size_t whylen, char *brief,
                      size_t brieflen, char *note, size_t notelen)
{
    note[0] = '\0';
    int fd = sys_perf_event_open(ev, group_fd);
    if (fd >= 0)
        return fd;
    int err = errno;
    if ((err == EACCES || err == EPERM) && ev->software && ev->kernel_by_default &&
        !ev->exclude_kernel) {
        if (ev->user_mode == BENCH__PERF_USER_NEVER) {
            explain_both(err, "it happens in kernel mode only, and kernel mode is refused: ", why,
                         whylen, brief, brieflen);
            return -1;
        }
        ev->exclude_kernel = true;
        fd = sys_perf_event_open(ev, group_fd);
        if (fd >= 0) {
            if (ev->user_mode == BENCH__PERF_USER_PARTIAL)
                bench__msg(note, notelen,
                           "counted in user mode only (kernel mode refused: "
                           "kernel.perf_event_paranoid = %d): events taken inside system calls "
                           "are missed",
                           paranoid_level());
            return fd;
        }
        err = errno;
        ev->exclude_kernel = false;
    }
    explain_both(err, "", why, whylen, brief, brieflen);
    return -1;
}

static void close_groups(perf_state *st)
{
    for (size_t k = 0; k < st->ngroups; k++)
        for (size_t j = 0; j < st->g[k].n; j++)
            if (st->g[k].fd[j] >= 0) {
                close(st->g[k].fd[j]);
                st->g[k].fd[j] = -1;
            }
    st->open = false;
}

/* Opens every group as planned. Returns 0, or -1 with the reason in why (all closed then). */
static int open_groups(perf_state *st, char *why, size_t whylen)
{
    for (size_t k = 0; k < st->ngroups; k++)
        for (size_t j = 0; j < st->g[k].n; j++)
            st->g[k].fd[j] = -1;
    for (size_t k = 0; k < st->ngroups; k++) {
        perf_group *g = &st->g[k];
        for (size_t j = 0; j < g->n; j++) {
            char note[256], e[512];
            bench__perf_event *ev = &st->ev[g->ev[j]];
            int group_fd = j == 0 ? -1 : g->fd[0];
            g->fd[j] = open_event(ev, group_fd, e, sizeof e, NULL, 0, note, sizeof note);
            if (g->fd[j] < 0) {
                bench__msg(why, whylen, "%s: %s", ev->name, e);
                close_groups(st);
                return -1;
            }
        }
    }
    st->open = true;
    return 0;
}

static bool same_encoding(const bench__perf_event *a, const bench__perf_event *b)
{
    return a->type == b->type && a->config == b->config && a->config1 == b->config1 &&
           a->config2 == b->config2 && a->exclude_user == b->exclude_user &&
           a->exclude_kernel == b->exclude_kernel && a->exclude_hv == b->exclude_hv &&
           a->exclude_guest == b->exclude_guest && a->exclude_host == b->exclude_host;
}

/*
 * Builds the groups of the events in st: the first plan (perf_events.c), then each group opened
 * for real; a member the kernel will not add to its group (it does not fit beside the others)
 * moves to a group of its own. Everything is closed again at the end.
 */
static void build_groups(perf_state *st)
{
    unsigned kind[MAX_EV], gof[MAX_EV];
    for (size_t i = 0; i < st->nev; i++)
        kind[i] = bench__perf_group_kind(&st->ev[i]);
    st->ngroups = bench__perf_plan(kind, st->nev, BENCH__PERF_HW_GROUP_MAX, gof);
    memset(st->g, 0, sizeof st->g);
    for (size_t i = 0; i < st->nev; i++) {
        perf_group *g = &st->g[gof[i]];
        g->ev[g->n++] = i;
    }
    for (size_t k = 0; k < st->ngroups; k++) {
        perf_group *g = &st->g[k];
        char why[512], note[256];
        int leader =
            open_event(&st->ev[g->ev[0]], -1, why, sizeof why, NULL, 0, note, sizeof note);
        if (leader < 0)
            continue; /* opened alone a moment ago; attach will report it if it persists */
        int fds[MAX_EV];
        size_t kept = 1;
        fds[0] = leader;
        for (size_t j = 1; j < g->n; j++) {
            int fd =
                open_event(&st->ev[g->ev[j]], leader, why, sizeof why, NULL, 0, note,
                           sizeof note);
            if (fd >= 0) {
                fds[kept] = fd;
                g->ev[kept++] = g->ev[j];
            } else if (st->ngroups < MAX_EV) {
                perf_group *ng = &st->g[st->ngroups++];
                memset(ng, 0, sizeof *ng);
                ng->n = 1;
                ng->ev[0] = g->ev[j];
            }
        }
        g->n = kept;
        for (size_t j = 0; j < kept; j++)
            close(fds[j]);
    }
    for (size_t k = 0; k < st->ngroups; k++) /* nothing open until attach */
        for (size_t j = 0; j < MAX_EV; j++)
            st->g[k].fd[j] = -1;
    /* Read order (perf_events.h, bench__perf_read_rank): a stable insertion sort by rank. */
    for (size_t k = 1; k < st->ngroups; k++) {
        perf_group tmp = st->g[k];
        unsigned rank = bench__perf_read_rank(bench__perf_group_kind(&st->ev[tmp.ev[0]]));
        size_t j = k;
        while (j > 0 &&
               bench__perf_read_rank(bench__perf_group_kind(&st->ev[st->g[j - 1].ev[0]])) > rank) {
            st->g[j] = st->g[j - 1];
            j--;
        }
        st->g[j] = tmp;
    }
}

/* ---- the probe ---- */

static int perf_attach(bench__probe *p, bench__result *r)
{
    perf_state *st = p->state;
    if (st->nev == 0)
        return 1;
    char why[600];
    if (open_groups(st, why, sizeof why) != 0) {
        if (!bench__quiet_warnings)
            bench__errf("warning: --perf-events: %s runs without counters: %s\n",
                        r->inst ? r->inst->id : "a benchmark", why);
        return 1;
    }
    for (size_t i = 0; i < st->nev; i++) {
        if (bench__metric_add(r, st->ev[i].name, st->ev[i].unit, "perf") < 0) {
            close_groups(st);
            return 1; /* r is failed with the reason */
        }
    }
    return 0;
}

static void perf_start(bench__probe *p)
{
    perf_state *st = p->state;
    /* Last thing before the wall clock starts (the runner starts it right after us). */
    for (size_t k = 0; k < st->ngroups; k++) {
        perf_group *g = &st->g[k];
        g->before_len = read(g->fd[0], g->before, sizeof g->before);
    }
}

static void perf_stop(bench__probe *p, double *values, double *fraction)
{
    perf_state *st = p->state;
    double frac = 1.0;
    /* First thing after the wall clock stopped; groups in reverse order of start. */
    for (size_t k = st->ngroups; k-- > 0;) {
        perf_group *g = &st->g[k];
        ssize_t len = read(g->fd[0], g->after, sizeof g->after);
        bench__perf_reading a, b;
        double f;
        if (g->before_len < 0 || len < 0 ||
            bench__perf_parse_read(g->before, (size_t)g->before_len, g->n, &a) != 0 ||
            bench__perf_parse_read(g->after, (size_t)len, g->n, &b) != 0) {
            for (size_t j = 0; j < g->n; j++)
                st->tmp[j] = 0;
            f = 0.0; /* nothing counted: shows as "counted 0% of the time" */
        } else {
            f = bench__perf_delta(&a, &b, g->n, st->tmp);
        }
        for (size_t j = 0; j < g->n; j++)
            values[g->ev[j]] = st->tmp[j];
        if (f < frac)
            frac = f;
    }
    *fraction = frac;
}

static void perf_detach(bench__probe *p, bench__result *r)
{
    perf_state *st = p->state;
    close_groups(st);
    if (r->status != BENCH__OK || r->nsamples == 0)
        return;
    /* Derived ratios from the per-sample totals: a ratio of sums, which weighs every iteration
     * alike (a median of per-sample ratios would weigh short samples as much as long ones). */
    size_t nd;
    const bench__perf_derived *d = bench__perf_derived_table(&nd);
    for (size_t i = 0; i < nd; i++) {
        const bench__metric *num = bench__metric_find(r, d[i].numerator);
        const bench__metric *den = bench__metric_find(r, d[i].denominator);
        if (!num || !den || strcmp(num->source, "perf") != 0 || strcmp(den->source, "perf") != 0)
            continue;
        double v = bench__perf_ratio_of_sums(num->totals, den->totals, r->nsamples);
        if (isfinite(v))
            bench__fact_add(r, d[i].name, d[i].unit, v);
    }
}

static void perf_destroy(bench__probe *p)
{
    if (!p)
        return;
    perf_state *st = p->state;
    if (st)
        close_groups(st);
    free(st);
    free(p);
}

int bench__perf_probe_create(const char *spec, bench__probe **out, char *msg, size_t msglen)
{
    *out = NULL;
    bench__perf_names names;
    int rc = bench__perf_parse_spec(spec, &names, msg, msglen);
    if (rc != 0)
        return rc;
    perf_state *st = calloc(1, sizeof *st);
    bench__probe *p = calloc(1, sizeof *p);
    if (!st || !p) {
        free(st);
        free(p);
        bench__msg(msg, msglen, "%s", bench__strerror(BENCH_ENOMEM));
        return BENCH_ENOMEM;
    }
    /* Resolve everything first: an unknown name is a usage error, before any warning. */
    bench__perf_event all[MAX_EV];
    for (size_t i = 0; i < names.n; i++) {
        rc = bench__perf_resolve(names.name[i], &all[i], msg, msglen);
        if (rc != 0) {
            free(st);
            free(p);
            return rc;
        }
    }
    /* Two names of one encoding (cycles, cpu-cycles) would count the same thing twice. */
    bool keep[MAX_EV];
    for (size_t i = 0; i < names.n; i++) {
        keep[i] = true;
        for (size_t j = 0; j < i && keep[i]; j++) {
            if (keep[j] && same_encoding(&all[i], &all[j])) {
                bench__errf("warning: --perf-events: %s is the same event as %s: "
                            "counted once, as %s\n",
                            all[i].name, all[j].name, all[j].name);
                keep[i] = false;
            }
        }
    }
    size_t tried = 0, nrefused = 0;
    char brief[MAX_EV][300]; /* why each refused event does not open, in brief */
    const char *refused[MAX_EV];
    for (size_t i = 0; i < names.n; i++) {
        bench__perf_event *ev = &all[i];
        if (!keep[i])
            continue;
        tried++;
        char why[600], note[256];
        int fd = open_event(ev, -1, why, sizeof why, brief[nrefused], sizeof brief[0], note,
                            sizeof note);
        if (fd < 0) {
            bench__errf("warning: --perf-events: %s cannot be counted here: "
                        "perf_event_open: %s; going on without it\n",
                        ev->name, why);
            refused[nrefused++] = ev->name;
            continue;
        }
        close(fd);
        if (note[0])
            bench__errf("warning: --perf-events: %s: %s\n", ev->name, note);
        st->ev[st->nev++] = *ev;
    }
    if (st->nev == 0 && tried > 0) {
        /* Each event with its reason, the events of one reason together. */
        char why[4096] = "";
        size_t used = 0;
        for (size_t i = 0; i < nrefused; i++) {
            bool first = true;
            for (size_t j = 0; j < i && first; j++)
                first = strcmp(brief[j], brief[i]) != 0;
            if (!first)
                continue;
            for (size_t j = i; j < nrefused; j++)
                if (j == i || strcmp(brief[j], brief[i]) == 0) {
                    bench__msg(why + used, sizeof why - used, "%s%s", j == i ? (used ? "; " : "")
                                                                           : ", ", refused[j]);
                    used = strlen(why);
                }
            bench__msg(why + used, sizeof why - used, ": %s", brief[i]);
            used = strlen(why);
        }
        bench__errf("warning: --perf-events: none of the requested events can be "
                    "counted here (%s); the benchmarks run without counters\n",
                    why);
    }
    build_groups(st);
    p->name = "perf";
    p->attach = perf_attach;
    p->start = perf_start;
    p->stop = perf_stop;
    p->detach = perf_detach;
    p->destroy = perf_destroy;
    p->primary = false;
    p->state = st;
    *out = p;
    return 0;
}

/* ---- --list-events ---- */

/* One line: the event, its kind, and whether it opens here (and why not). */
static void list_one(FILE *out, const char *label, const char *name)
{
    bench__perf_event ev;
    char msg[512], why[600], note[256];
    const char *kind = "";
    fprintf(out, "  %-8s%-20s", label, name);
    if (bench__perf_resolve(name, &ev, msg, sizeof msg) != 0) {
        kind = bench__perf_is_generic_hw(name) ? "hardware" : "?";
        fprintf(out, "%-10sunknown to this build: %s\n", kind, msg);
        return;
    }
    kind = ev.software ? "software" : "hardware";
    int fd = open_event(&ev, -1, NULL, 0, why, sizeof why, note, sizeof note);
    if (fd < 0) {
        fprintf(out, "%-10sdoes not open: %s\n", kind, why);
        return;
    }
    close(fd);
    const char *mode = ev.exclude_kernel ? "user mode" : "user and kernel mode";
    if (note[0])
        mode = "user mode only: kernel mode refused, so events inside system calls are missed";
    fprintf(out, "%-10sopens (%s, %s)\n", kind, ev.unit, mode);
}

int bench__perf_list_events(FILE *out)
{
    char backend[64];
    const char *be = bench__perf_backend(backend, sizeof backend);
    int para = paranoid_level();
    fprintf(out, "perf_event counters on this machine\n");
    fprintf(out, "  names resolved by: %s%s%s\n",
            be ? be : "the kernel's generic hardware and software events only (",
            be ? "" : bench__perf_no_pfm(false),
            be ? "" : ")");
    if (para != -99)
        fprintf(out, "  kernel.perf_event_paranoid = %d%s\n", para,
                geteuid() == 0 ? " (running as root)" : "");
    fputs("\nPresets and common events, each tried with perf_event_open:\n", out);
    static const char *const preset_names[] = {"ipc", "cache", "branch", "sw"};
    for (size_t i = 0; i < sizeof preset_names / sizeof preset_names[0]; i++) {
        const char *list = bench__perf_preset(preset_names[i]);
        bench__perf_names n;
        char msg[256];
        if (bench__perf_parse_spec(list, &n, msg, sizeof msg) != 0)
            continue;
        for (size_t j = 0; j < n.n; j++)
            list_one(out, j == 0 ? preset_names[i] : "", n.name[j]);
    }
    size_t nsw;
    const bench__perf_sw_event *sw = bench__perf_sw_table(&nsw);
    bool first = true;
    for (size_t i = 0; i < nsw; i++) {
        const char *sw_preset = bench__perf_preset("sw");
        size_t len = strlen(sw[i].name);
        const char *hit = strstr(sw_preset, sw[i].name);
        if (hit && (hit[len] == ',' || hit[len] == '\0'))
            continue; /* listed with the preset */
        list_one(out, first ? "other" : "", sw[i].name);
        first = false;
    }
    fputs("\nSoftware events (no PMU needed; aliases: faults, cs, migrations):\n", out);
    for (size_t i = 0; i < nsw; i++)
        fprintf(out, "  %-18s %s\n", sw[i].name, sw[i].what);
    fputs("\nPMUs libpfm4 detected; their event names work in --perf-events (case is ignored;\n"
          "PMU::NAME picks a PMU; modifiers such as :u or :k may follow a name):\n",
          out);
    bench__perf_list_pmus(out);
    return BENCH_EXIT_OK;
}

BENCH__PROBE_KIND(perf) = {.name = "perf",
                           .flag = "--perf-events",
                           .takes_arg = true,
                           .create = bench__perf_probe_create};
