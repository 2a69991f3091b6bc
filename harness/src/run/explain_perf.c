/*
 * explain_perf.c: --explain in time mode, the functions behind a changed benchmark by perf.
 *
 * The two programs run the benchmark as the driven workers of a paired comparison (ab.c: setup
 * first, then samples commanded one at a time), each attached by its own `perf record -g -p PID`
 * that starts disabled and is switched on over a control FIFO only while a sample runs: the
 * profiles hold the timed loop and nothing of the setup. The samples alternate ABBA then BAAB,
 * each about 20 ms, so both programs are profiled over the same seconds and meet the same
 * disturbances. The event is `cycles` where the machine counts it, else the `cpu-clock` software
 * timer; the rate as high as perf_event_max_sample_rate allows (at most BENCH__EXPLAIN_MAX_HZ).
 * Each profile is folded by function: a sample counts as self time for its innermost function
 * and as total time for every function on its stack (once, however often it recurses). A
 * function's time per iteration is its share of the program's own samples (the machine's left
 * out, below) times the verdict's time per iteration of that program, so the self times of one
 * program add up to its measured time, and their differences add up to the measured change.
 *
 * The machine's samples. A sample whose kernel stack passes through the scheduler's context
 * switch (__schedule) or was entered by an external interrupt (x86-64: asm_sysvec_*, the timer
 * and the inter-processor interrupts, and asm_common_interrupt, the devices') is kernel work the
 * code did not ask for: how often a worker is preempted, and the interrupts it meets, follow the
 * other processes on the machine, and on a loaded machine they differ between the two programs'
 * workers for seconds at a time, often in the same direction in all three pairs, which the
 * pairs' spread then cannot cover. Such samples are counted (and kept in the stacks drawn) but
 * attributed to no function: the shares are of the program's own samples (the explanation says
 * how many were left out). A system call or a page fault the code made stays the code's.
 *
 * Noise. A share p of N samples has the binomial sd sqrt(p (1 - p) / N); on top of that, two
 * processes of one program differ (code and data placement). The profiles are taken in
 * BENCH__EXPLAIN_PAIRS worker pairs, and a function's difference counts as noise unless it
 * exceeds BENCH__EXPLAIN_Z times the larger of the two estimates of its sd: the binomial one of
 * the pooled samples, and the spread of the pairs' differences over sqrt(pairs); plus the
 * uncertainty of the verdict's ratio, which scales the new program's times: a change the
 * comparison has not settled is pinned on no function. An A/A then names nothing.
 */
#define _GNU_SOURCE /* kill, mkfifo */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "run/explain_int.h"
#include "stats/stats.h"

/* A profile's sample: about this long, ms (the perf switches around it cost well under 1 ms). */
#define SAMPLE_MS 20.0
/* The most frames of one sample read. */
#define MAX_FRAMES 256
/* The most folded stacks an explanation keeps (for the differential flame graph). */
#define EXPLAIN_STACKS 400

/* ---- perf: can it record, and how ---- */

static char perf_path[4096];
static char perf_event[16];
static char perf_hz[16];

/* Runs argv (quietly) to its end; its exit code, or -1 when it could not be started. */
static int run_quiet(char *const *argv, double timeout_s)
{
    bench__proc p;
    memset(&p, 0, sizeof p);
    bench__proc_spec spec = {.path = argv[0], .argv = argv, .channel = BENCH__PROC_NONE,
                             .quiet = true};
    char msg[256];
    if (bench__proc_start(&p, &spec, msg, sizeof msg) != 0)
        return -1;
    bench__proc_end end = bench__proc_wait(&p, bench__now_ns() + (int64_t)(timeout_s * 1e9));
    return end == BENCH__PROC_EXITED ? p.code : -1;
}

/* The first line argv prints on stdout, into buf ("" none). */
static void first_line(char *const *argv, char *buf, size_t len)
{
    bench__proc p;
    memset(&p, 0, sizeof p);
    bench__proc_spec spec = {.path = argv[0], .argv = argv, .channel = BENCH__PROC_STDOUT,
                             .quiet = true};
    char msg[256], line[512];
    buf[0] = '\0';
    if (bench__proc_start(&p, &spec, msg, sizeof msg) != 0)
        return;
    int64_t deadline = bench__now_ns() + (int64_t)30e9;
    if (bench__proc_line(&p, line, sizeof line, deadline) == 1)
        bench__msg(buf, len, "%s", line);
    while (bench__proc_line(&p, line, sizeof line, deadline) == 1)
        ;
    bench__proc_wait(&p, deadline);
}

static long read_long_file(const char *path, long dflt)
{
    FILE *f = fopen(path, "r");
    long v = dflt;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = dflt;
        fclose(f);
    }
    return v;
}

/* Finds perf, and the event it may record: cycles, else cpu-clock. */
int bench__explain_perf_check(char *msg, size_t msglen)
{
    if (!bench__proc_which("perf", perf_path, sizeof perf_path)) {
        bench__msg(msg, msglen, "perf is not on PATH: install it (apt-get install linux-perf), "
                                "or explain by exact counts with --instructions (valgrind)");
        return BENCH_EUNAVAIL;
    }
    char dir[4096], data[4200], truth[4096];
    if (bench__explain_temp_make(dir, sizeof dir, msg, msglen) != 0)
        return BENCH_EUNAVAIL;
    bench__msg(data, sizeof data, "%s/probe.data", dir);
    if (!bench__proc_which("true", truth, sizeof truth))
        bench__msg(truth, sizeof truth, "%s", "/bin/true");
    /* perf falls back from cycles to cpu-clock by itself where the machine has no PMU: the
     * event it really recorded is the one its file names. */
    static const char *const events[] = {"cycles", "cpu-clock"};
    int ok = -1;
    char recorded[64] = "";
    for (int i = 0; i < 2 && ok < 0; i++) {
        char *argv[] = {perf_path, "record", "-q", "--no-bpf-event", "--no-buildid-cache",
                        "-g", "-e", (char *)events[i], "-o", data, "--", truth, NULL};
        if (run_quiet(argv, 30) == 0)
            ok = i;
    }
    if (ok >= 0) {
        char *argv[] = {perf_path, "evlist", "-i", data, NULL};
        first_line(argv, recorded, sizeof recorded);
    }
    bench__remove_tree(dir);
    if (ok < 0) {
        long paranoid = read_long_file("/proc/sys/kernel/perf_event_paranoid", -9);
        bench__msg(msg, msglen, "perf cannot record here (kernel.perf_event_paranoid=%ld): "
                                "run as root, or 'sudo sysctl kernel.perf_event_paranoid=1'; "
                                "in a container, allow perf_event_open (--cap-add PERFMON)",
                   paranoid);
        return BENCH_EUNAVAIL;
    }
    bench__msg(perf_event, sizeof perf_event, "%s",
               bench__starts_with(recorded, "cycles") ? "cycles" : "cpu-clock");
    long max_hz = read_long_file("/proc/sys/kernel/perf_event_max_sample_rate",
                                 BENCH__EXPLAIN_MAX_HZ);
    long hz = max_hz < BENCH__EXPLAIN_MAX_HZ ? max_hz : BENCH__EXPLAIN_MAX_HZ;
    bench__msg(perf_hz, sizeof perf_hz, "%ld", hz > 100 ? hz : 100);
    return 0;
}

/* ---- time mode: one side's perf ---- */

typedef struct side {
    bench__proc w;    /* the benchmark's worker */
    bench__proc perf; /* perf record attached to it */
    int ctl, ack;     /* perf's control and acknowledgement FIFOs, opened read-write */
    char data[4200];  /* perf.data */
} side;

/* Sends perf a control command and waits (at most timeout_s) for its "ack". */
static int perf_command(side *s, const char *cmd, double timeout_s)
{
    char line[32];
    bench__msg(line, sizeof line, "%s\n", cmd);
    if (write(s->ctl, line, strlen(line)) != (ssize_t)strlen(line))
        return BENCH_EIO;
    struct pollfd pfd = {.fd = s->ack, .events = POLLIN};
    int64_t deadline = bench__now_ns() + (int64_t)(timeout_s * 1e9);
    for (;;) {
        int left = (int)((deadline - bench__now_ns()) / 1000000);
        if (left <= 0)
            return BENCH_EIO;
        int pr = poll(&pfd, 1, left);
        if (pr < 0 && errno == EINTR) {
            if (bench__proc_interrupted())
                return BENCH_EUSAGE;
            continue;
        }
        if (pr <= 0)
            return BENCH_EIO;
        char buf[64];
        ssize_t n = read(s->ack, buf, sizeof buf);
        if (n <= 0)
            return BENCH_EIO;
        /* "ack\n" and a NUL: the NUL may come first, left over from the answer before. */
        for (ssize_t i = 0; i < n; i++)
            if (bench__starts_with(buf + i, "ack"))
                return 0;
    }
}

/* Starts a disabled perf record attached to side s's worker; its control FIFOs in dir. */
static int perf_attach(side *s, const char *dir, const char *tag, char *msg, size_t msglen)
{
    char ctl[4200], ack[4200], control[8500], pid[32];
    bench__msg(ctl, sizeof ctl, "%s/%s.ctl", dir, tag);
    bench__msg(ack, sizeof ack, "%s/%s.ack", dir, tag);
    bench__msg(s->data, sizeof s->data, "%s/%s.data", dir, tag);
    if (mkfifo(ctl, 0600) != 0 || mkfifo(ack, 0600) != 0) {
        bench__msg(msg, msglen, "cannot make perf's control FIFOs in %s: %s", dir,
                   strerror(errno));
        return BENCH_EIO;
    }
    /* Read-write: opening a FIFO so never waits for the other end. */
    s->ctl = open(ctl, O_RDWR | O_CLOEXEC);
    s->ack = open(ack, O_RDWR | O_CLOEXEC);
    if (s->ctl < 0 || s->ack < 0) {
        bench__msg(msg, msglen, "cannot open perf's control FIFOs: %s", strerror(errno));
        return BENCH_EIO;
    }
    bench__msg(control, sizeof control, "fifo:%s,%s", ctl, ack);
    bench__msg(pid, sizeof pid, "%ld", (long)s->w.pid);
    /* -D -1: the events start disabled; "enable" over the FIFO switches them on for a sample. */
    /* --no-bpf-event: no side-band thread, which would hold perf's exit up for a second;
     * --no-buildid-cache: no copy of every program profiled in ~/.debug. */
    char *argv[] = {perf_path, "record", "-q", "--no-bpf-event", "--no-buildid-cache", "-e",
                    perf_event, "-F", perf_hz, "-g", "-D", "-1", "--control", control, "-p",
                    pid, "-o", s->data, NULL};
    bench__proc_spec spec = {.path = perf_path, .argv = argv, .channel = BENCH__PROC_NONE,
                             .quiet = true};
    return bench__proc_start(&s->perf, &spec, msg, msglen) != 0 ? BENCH_EIO : 0;
}

/* Ends side s: its worker, then its perf (which writes its file), and the FIFOs. */
static void side_close(side *s, double timeout_s)
{
    if (s->w.pid > 0)
        bench__ab_worker_stop(&s->w, timeout_s);
    if (s->perf.pid > 0 && s->perf.end == BENCH__PROC_RUNNING) {
        kill(s->perf.pid, SIGINT);
        bench__proc_wait(&s->perf, bench__now_ns() + (int64_t)60e9);
    }
    if (s->ctl >= 0)
        close(s->ctl);
    if (s->ack >= 0)
        close(s->ack);
    s->ctl = s->ack = -1;
}

/* What one profile's stacks say beyond the functions. */
typedef struct prof_stats {
    double samples;    /* samples read */
    double machine;    /* ... in the machine's kernel work (bench__explain_machine_frame) */
    double complete;   /* ... whose innermost function has a named caller (a stack walked) */
    double unnamed;    /* ... whose innermost frame in the program itself has no symbol */
} prof_stats;

/* The function name of a `perf script` frame line ("\t addr sym (dso)"), into name; whether
 * it is a frame to count (the zero address that ends a frame-pointer walk is not). */
static bool frame_name(const char *line, char *name, size_t len, bool *unnamed_in_program)
{
    const char *p = line;
    while (*p == '\t' || *p == ' ')
        p++;
    char *end;
    unsigned long long addr = strtoull(p, &end, 16);
    if (end == p)
        return false;
    p = end;
    while (*p == ' ')
        p++;
    const char *open = strrchr(p, '(');
    size_t symlen = open && open > p ? (size_t)(open - p) : strlen(p);
    while (symlen > 0 && p[symlen - 1] == ' ')
        symlen--;
    char dso[512] = "";
    if (open) {
        const char *close = strrchr(open, ')');
        size_t dl = close ? (size_t)(close - open - 1) : strlen(open + 1);
        bench__msg(dso, sizeof dso, "%.*s", (int)(dl < sizeof dso ? dl : sizeof dso - 1),
                   open + 1);
    }
    bool unknown = symlen == strlen("[unknown]") && bench__starts_with(p, "[unknown]");
    if (unknown && addr == 0)
        return false;
    bool kernel = bench__starts_with(dso, "[kernel");
    *unnamed_in_program = unknown && !kernel && !strstr(dso, ".so");
    if (unknown) {
        const char *base = strrchr(dso, '/');
        if (dso[0] == '[' || !dso[0])
            bench__msg(name, len, "%s", dso[0] ? dso : "[unknown]");
        else
            bench__msg(name, len, "[%s]", base ? base + 1 : dso);
    } else {
        bench__msg(name, len, "%.*s%s", (int)(symlen < 150 ? symlen : 150), p,
                   kernel ? "_[k]" : "");
    }
    return true;
}

/* Whether the n characters at name are the function `fn`. */
static bool named(const char *name, size_t n, const char *fn)
{
    return n == strlen(fn) && strncmp(name, fn, n) == 0;
}

bool bench__explain_machine_frame(const char *name)
{
    size_t n = strlen(name);
    if (n < 4 || strcmp(name + n - 4, "_[k]") != 0)
        return false;
    n -= 4;
    /* The scheduler's switch, however the kernel came to it (preempted on the way back from an
     * interrupt or a system call, or blocked), and the entries of external interrupts: the local
     * APIC's system vectors (timer, reschedule and function-call IPIs, irq_work) and the
     * devices' common entry. Exceptions the code causes (asm_exc_*: page faults) and system
     * calls enter the kernel elsewhere. */
    return named(name, n, "__schedule") || named(name, n, "asm_common_interrupt") ||
           (n > strlen("asm_sysvec_") && bench__starts_with(name, "asm_sysvec_"));
}

double bench__explain_fold(bench__explain_table *t, const long *frames, size_t nf, int sd,
                           int slot, double count)
{
    for (size_t i = 0; i < nf; i++)
        if (bench__explain_machine_frame(t->rows[frames[i]].name))
            return 0;
    if (nf == 0)
        return 0;
    t->rows[frames[0]].self[sd][slot] += count;
    for (size_t i = 0; i < nf; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = frames[j] == frames[i];
        if (!seen)
            t->rows[frames[i]].total[sd][slot] += count;
    }
    return count;
}

/* Folds one sample's frames (innermost first) into the table of functions, side `sd`, slot
 * `slot` (unless it is the machine's), and its whole stack ("root;...;leaf") into the table of
 * stacks (slot 0). */
static int fold_sample(bench__explain_table *t, bench__explain_table *stacks, const long *frames,
                       size_t nf, int sd, int slot, prof_stats *ps, bool leaf_unnamed,
                       bool complete)
{
    if (nf == 0)
        return 0;
    char key[8192];
    size_t len = 0;
    for (size_t i = nf; i-- > 0;) {
        const char *name = t->rows[frames[i]].name;
        size_t n = strlen(name);
        if (len + n + 2 > sizeof key)
            break; /* a stack this deep keeps its outer frames */
        if (len)
            key[len++] = ';';
        memcpy(key + len, name, n);
        len += n;
    }
    key[len] = '\0';
    long row = bench__explain_table_row(stacks, key);
    if (row < 0)
        return BENCH_ENOMEM;
    stacks->rows[row].self[sd][0]++;
    ps->samples++;
    ps->complete += complete;
    ps->unnamed += leaf_unnamed;
    ps->machine += 1 - bench__explain_fold(t, frames, nf, sd, slot, 1);
    return 0;
}

/* Reads perf.data of side `sd`, pair `slot`, with `perf script`, into the table. */
static int read_profile(const char *data, bench__explain_table *t, bench__explain_table *stacks,
                        int sd, int slot, prof_stats *ps, char *msg, size_t msglen)
{
    char *argv[] = {perf_path, "script", "-i", (char *)data, "-F", "period,ip,sym,dso", NULL};
    bench__proc p;
    memset(&p, 0, sizeof p);
    bench__proc_spec spec = {.path = perf_path, .argv = argv, .channel = BENCH__PROC_STDOUT,
                             .quiet = true};
    if (bench__proc_start(&p, &spec, msg, msglen) != 0)
        return BENCH_EIO;
    char line[4096], name[160];
    long frames[MAX_FRAMES];
    size_t nf = 0;
    bool leaf_unnamed = false, complete = false;
    int lr, rc = 0;
    int64_t deadline = bench__now_ns() + (int64_t)300e9;
    while ((lr = bench__proc_line(&p, line, sizeof line, deadline)) == 1) {
        if (line[0] != '\t') {
            /* A sample's header, or the blank line after its frames. */
            if ((rc = fold_sample(t, stacks, frames, nf, sd, slot, ps, leaf_unnamed,
                                  complete)) != 0)
                break;
            nf = 0;
            complete = false;
            continue;
        }
        bool unnamed;
        if (nf >= MAX_FRAMES || !frame_name(line, name, sizeof name, &unnamed))
            continue;
        long row = bench__explain_table_row(t, name);
        if (row < 0) {
            rc = BENCH_ENOMEM;
            break;
        }
        if (nf == 0)
            leaf_unnamed = unnamed;
        else if (nf == 1)
            complete = name[0] != '[';
        frames[nf++] = row;
    }
    if (rc == 0)
        rc = fold_sample(t, stacks, frames, nf, sd, slot, ps, leaf_unnamed, complete);
    if (lr == BENCH_EUSAGE)
        rc = BENCH_EUSAGE;
    else if (rc == 0 && lr != 0)
        rc = BENCH_EIO;
    bench__proc_end end = bench__proc_wait(&p, bench__now_ns() + (int64_t)10e9);
    if (rc == 0 && (end != BENCH__PROC_EXITED || p.code != 0))
        rc = BENCH_EIO;
    if (rc == BENCH_EIO)
        bench__msg(msg, msglen, "perf script could not read the profile %s", data);
    else if (rc == BENCH_ENOMEM)
        bench__msg(msg, msglen, "out of memory");
    return rc;
}

/* One worker pair: both programs profiled in turns for `budget_s`. */
static int profile_pair(const char *prog[2], const int fd[2], const char *id, uint64_t iters,
                        double budget_s, const bench__explain_opts *o, bench__rng *rng,
                        const char *dir, int slot, bench__explain_table *t,
                        bench__explain_table *stacks, prof_stats ps[2], char *msg, size_t msglen)
{
    static const int order[8] = {0, 1, 1, 0, 1, 0, 0, 1};
    side s[2];
    memset(s, 0, sizeof s);
    s[0].ctl = s[0].ack = s[1].ctl = s[1].ack = -1;
    double timeout = o->timeout_s > 0 ? o->timeout_s : 300.0;
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        bench__layout lay;
        bench__layout_draw(rng, &lay);
        rc = bench__ab_worker_start(&s[k].w, prog[k], fd[k], id, &lay, -1, timeout, msg, msglen);
        if (rc != 0)
            memset(&s[k].w, 0, sizeof s[k].w);
    }
    char tag[32];
    for (int k = 0; k < 2 && rc == 0; k++) {
        bench__msg(tag, sizeof tag, "p%d%c", slot, k ? 'B' : 'A');
        rc = perf_attach(&s[k], dir, tag, msg, msglen);
    }
    /* Both perfs start at once; each answers once it has attached and listens. */
    for (int k = 0; k < 2 && rc == 0; k++)
        if ((rc = perf_command(&s[k], "disable", 30)) == BENCH_EIO)
            bench__msg(msg, msglen, "perf record did not attach to the worker within 30 s");
    int64_t start = bench__now_ns();
    for (int round = 0; rc == 0; round++) {
        if (round > 0 && (double)(bench__now_ns() - start) / 1e9 >= budget_s)
            break;
        for (int k = 0; k < 8 && rc == 0; k++) {
            int sd = order[(k + 4 * (round % 2)) % 8];
            double sample_ns = 0;
            /* perf records only between these two commands: the sample's iterations, the
             * worker's timer reads around them, and nothing of its waiting for the next. */
            if ((rc = perf_command(&s[sd], "enable", 10)) != 0)
                break;
            int64_t deadline = bench__now_ns() + (int64_t)(timeout * 1e9);
            rc = bench__ab_worker_sample(&s[sd].w, iters, deadline, &sample_ns);
            int rc2 = perf_command(&s[sd], "disable", 10);
            if (rc == 0)
                rc = rc2;
        }
    }
    if (rc == BENCH_EIO && !msg[0])
        bench__msg(msg, msglen, "a worker or its perf record stopped in the middle of the "
                                "profile");
    side_close(&s[0], timeout);
    side_close(&s[1], timeout);
    if (rc == BENCH_EUSAGE || bench__proc_interrupted())
        return BENCH_EUSAGE;
    for (int k = 0; k < 2 && rc == 0; k++)
        rc = read_profile(s[k].data, t, stacks, k, slot, &ps[k], msg, msglen);
    return rc;
}

double bench__explain_diff_sd(const double *a, const double *b, const double *na,
                              const double *nb, size_t pairs, double ta, double tb, double log_se,
                              double *d)
{
    double sa = 0, sb = 0, NA = 0, NB = 0;
    for (size_t j = 0; j < pairs; j++) {
        sa += a[j];
        sb += b[j];
        NA += na[j];
        NB += nb[j];
    }
    double pa = NA > 0 ? sa / NA : 0, pb = NB > 0 ? sb / NB : 0;
    *d = tb * pb - ta * pa;
    double var = (NA > 0 ? ta * ta * pa * (1 - pa) / NA : 0) +
                 (NB > 0 ? tb * tb * pb * (1 - pb) / NB : 0);
    /* A count of zero has a binomial sd of zero: count it as one sample, so that a function
     * seen a few times in one profile and never in the other is not beyond noise. */
    if (sa == 0 && NA > 0)
        var += ta * ta / (NA * NA);
    if (sb == 0 && NB > 0)
        var += tb * tb / (NB * NB);
    /* tb is ta times the verdict's ratio, known only to its standard error: the function's
     * new time moves with it (an unsettled ratio, as in an A/A, explains nothing). */
    if (isfinite(log_se) && log_se > 0)
        var += (tb * pb * log_se) * (tb * pb * log_se);
    double dj[BENCH__EXPLAIN_PAIRS];
    size_t m = 0;
    for (size_t j = 0; j < pairs; j++)
        if (na[j] > 0 && nb[j] > 0)
            dj[m++] = tb * b[j] / nb[j] - ta * a[j] / na[j];
    if (m >= 2) {
        double sdj = bench__std_dev(dj, m);
        double emp = sdj * sdj / (double)m;
        if (emp > var)
            var = emp;
    }
    return sqrt(var);
}

size_t bench__explain_beyond(const bench__explain_table *t, const double *na, const double *nb,
                             size_t pairs, double ta, double tb, double log_se, bool walked,
                             bench__explain_rank *rank)
{
    double all_a = 0, all_b = 0;
    for (size_t j = 0; j < pairs; j++) {
        all_a += na[j];
        all_b += nb[j];
    }
    size_t nr = 0;
    for (size_t i = 0; i < t->n; i++) {
        const bench__explain_row *r = &t->rows[i];
        double d, td;
        double sd = bench__explain_diff_sd(r->self[0], r->self[1], na, nb, pairs, ta, tb, log_se,
                                           &d);
        if (!(sd > 0) || !(fabs(d) > BENCH__EXPLAIN_Z * sd))
            continue;
        (void)bench__explain_diff_sd(r->total[0], r->total[1], na, nb, pairs, ta, tb, log_se, &td);
        double sa = 0, sb = 0;
        for (size_t j = 0; j < pairs; j++) {
            sa += r->self[0][j];
            sb += r->self[1][j];
        }
        rank[nr++] = (bench__explain_rank){.row = i, .d = d, .sd = sd,
                                           .total_d = walked ? td : NAN,
                                           .old_v = all_a > 0 ? ta * sa / all_a : 0,
                                           .new_v = all_b > 0 ? tb * sb / all_b : 0};
    }
    return nr;
}

/* The weightiest stacks (by their shares of the two profiles), at most EXPLAIN_STACKS, into the
 * explanation; none when out of memory (the stacks are for drawing only). */
static int by_weight(const void *x, const void *y)
{
    double a = ((const bench__explain_rank *)x)->d, b = ((const bench__explain_rank *)y)->d;
    return a < b ? 1 : a > b ? -1 : 0;
}

static void keep_stacks(bench__explanation *e, const bench__explain_table *stacks)
{
    bench__explain_rank *w = calloc(stacks->n ? stacks->n : 1, sizeof *w);
    if (!w)
        return;
    for (size_t i = 0; i < stacks->n; i++)
        w[i] = (bench__explain_rank){.row = i, .d = stacks->rows[i].self[0][0] / e->samples[0] +
                                       stacks->rows[i].self[1][0] / e->samples[1]};
    qsort(w, stacks->n, sizeof *w, by_weight);
    size_t n = stacks->n < EXPLAIN_STACKS ? stacks->n : EXPLAIN_STACKS;
    e->stacks = calloc(n ? n : 1, sizeof *e->stacks);
    for (size_t i = 0; e->stacks && i < n; i++) {
        const bench__explain_row *r = &stacks->rows[w[i].row];
        if (!(e->stacks[i].frames = strdup(r->name)))
            break;
        e->stacks[i].old_samples = r->self[0][0];
        e->stacks[i].new_samples = r->self[1][0];
        e->nstacks++;
    }
    free(w);
}

int bench__explain_time(const char *prog[2], const int fd[2], const char *id, uint64_t iters,
                        const bench__change *ch, const bench__explain_opts *o, const char *dir,
                        bench__explanation *e)
{
    bench__msg(e->how, sizeof e->how, "perf record -e %s -F %s -g", perf_event, perf_hz);
    bench__explain_table t = {0}, stacks = {0};
    prof_stats ps[2][BENCH__EXPLAIN_PAIRS];
    memset(ps, 0, sizeof ps);
    bench__rng rng;
    bench__rng_seed(&rng, bench__id_seed(o->seed ^ 0xe8b1a1ULL, id));
    /* Samples of about SAMPLE_MS: the comparison's iterations were sized for 0.5 ms samples. */
    double per = ch->old_median > 0 ? ch->old_median : 1;
    uint64_t n = (uint64_t)fmax(1.0, floor(SAMPLE_MS * 1e6 / per));
    if (iters > n)
        n = iters;
    double budget = o->seconds > 0 ? o->seconds : 10.0;
    int rc = 0;
    size_t pairs = 0;
    for (int j = 0; j < BENCH__EXPLAIN_PAIRS && rc == 0; j++, pairs++) {
        prof_stats two[2];
        memset(two, 0, sizeof two);
        rc = profile_pair(prog, fd, id, n, budget / BENCH__EXPLAIN_PAIRS, o, &rng, dir, j, &t,
                          &stacks, two, e->message, sizeof e->message);
        ps[0][j] = two[0];
        ps[1][j] = two[1];
    }
    if (rc == BENCH_EUSAGE) {
        bench__explain_table_free(&t);
        bench__explain_table_free(&stacks);
        return BENCH_EUSAGE;
    }
    if (rc != 0) {
        e->status = BENCH_EUNAVAIL;
        bench__explain_table_free(&t);
        bench__explain_table_free(&stacks);
        return 0;
    }
    e->pairs = pairs;
    /* na, nb: the programs' own samples, the shares' denominators (the machine's left out). */
    double na[BENCH__EXPLAIN_PAIRS], nb[BENCH__EXPLAIN_PAIRS];
    double complete = 0, unnamed[2] = {0, 0};
    for (size_t j = 0; j < pairs; j++) {
        na[j] = ps[0][j].samples - ps[0][j].machine;
        nb[j] = ps[1][j].samples - ps[1][j].machine;
        e->samples[0] += ps[0][j].samples;
        e->samples[1] += ps[1][j].samples;
        e->machine_samples[0] += ps[0][j].machine;
        e->machine_samples[1] += ps[1][j].machine;
        complete += ps[0][j].complete + ps[1][j].complete;
        unnamed[0] += ps[0][j].unnamed;
        unnamed[1] += ps[1][j].unnamed;
    }
    double all = e->samples[0] + e->samples[1];
    if (e->samples[0] - e->machine_samples[0] < 1 || e->samples[1] - e->machine_samples[1] < 1) {
        e->status = BENCH_EUNAVAIL;
        bench__msg(e->message, sizeof e->message, "perf recorded no sample of the timed loop "
                                                   "outside the machine's kernel work (%.0f and "
                                                   "%.0f samples, %.0f and %.0f the machine's)",
                   e->samples[0], e->samples[1], e->machine_samples[0], e->machine_samples[1]);
        bench__explain_table_free(&t);
        bench__explain_table_free(&stacks);
        return 0;
    }
    int bare = unnamed[0] > 0.5 * e->samples[0] ? 0 : unnamed[1] > 0.5 * e->samples[1] ? 1 : -1;
    if (bare >= 0) {
        e->status = BENCH_EUNAVAIL;
        bench__msg(e->message, sizeof e->message, "%s has no symbols (%.0f%% of its samples "
                                                   "fall in unnamed code): do not strip it "
                                                   "(its symbols name the functions; -g adds "
                                                   "their lines)",
                   prog[bare], 100.0 * unnamed[bare] / e->samples[bare]);
        bench__explain_table_free(&t);
        bench__explain_table_free(&stacks);
        return 0;
    }
    bool walked = complete >= 0.5 * all;
    if (!walked)
        bench__msg(e->message, sizeof e->message, "no call stacks in %.0f%% of the samples "
                                                   "(no frame pointers): self times only; build "
                                                   "with -fno-omit-frame-pointer "
                                                   "-mno-omit-leaf-frame-pointer (CMake: link "
                                                   "harness::profile; pkg-config --cflags "
                                                   "harness-profile) for totals",
                   100.0 * (1 - complete / all));
    e->old_value = ch->old_median;
    e->new_value = ch->new_median;
    e->change = e->new_value - e->old_value;
    bench__explain_rank *rank = calloc(t.n ? t.n : 1, sizeof *rank);
    if (rank) {
        size_t nr = bench__explain_beyond(&t, na, nb, pairs, e->old_value, e->new_value,
                                          ch->log_se, walked, rank);
        bench__explain_name_functions(e, &t, rank, nr);
    }
    free(rank);
    keep_stacks(e, &stacks);
    bench__explain_table_free(&t);
    bench__explain_table_free(&stacks);
    return 0;
}
