/*
 * instr.c: instruction-count mode (--instructions): exact instructions per iteration, counted by
 * valgrind's callgrind, for a CI gate that must not depend on the machine's noise.
 *
 * Two processes. The coordinator (this program as the user started it) runs this same program
 * (/proc/self/exe) under `valgrind --tool=callgrind --collect-atstart=no` with the hidden flag
 * --instructions-worker DIR. The worker runs each selected benchmark with the fixed plan
 * {1, N, 2N} (no warm-up, no stopping rule) and a probe that switches callgrind's collection on
 * as it starts a sample and off as it stops it, then dumps the counts (CALLGRIND_DUMP_STATS_AT)
 * and reads them back from the dump file: callgrind counts only inside samples, and each dump
 * holds one sample (or one batch of a batched benchmark; the runner sums batches). The worker
 * sends each benchmark's samples over file descriptor 3 as lines of text; the coordinator turns
 * them into ordinary results and reports them; the comparison's summary and exit code are
 * report_compare.c's (exact counts: bench__compare_opts.exact), the save is cli_baseline.c's
 * (bench__save_named, without a program snapshot).
 *
 * Exactness. A sample's count is N * (instructions of one iteration) + c, where c is the
 * constant cost of the toggles and the timer reads around the loop. The count per iteration is
 * (Ir(2N) - Ir(N)) / N, in which c cancels exactly. The first sample (1 iteration) warms up
 * (lazy symbol binding, first touches) and is dropped. Valgrind runs the program
 * deterministically, so two runs of the same binary give the same counts.
 *
 * N. With --instructions-iterations N, that N. Otherwise N is chosen per benchmark from the
 * first sample's count: the largest power of two with N * count <= 2^24 instructions (at least
 * 1, at most 2^20), so each sample stays short under valgrind's 20-50x slowdown, and N depends
 * on a count, not on time, so it is the same from run to run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "instr.h"
#include "proc.h"
#include "user_build.h"

/* Whether the mode is in this build: valgrind's header, and no sanitizer (valgrind cannot run
 * an AddressSanitizer program). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INSTR_UNAVAILABLE "not available in an AddressSanitizer build (valgrind cannot run it)"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define INSTR_UNAVAILABLE "not available in a sanitizer build (valgrind cannot run it)"
#endif
#endif
#if !defined(INSTR_UNAVAILABLE) && defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define INSTR_HAVE_CALLGRIND 1
#endif
#endif
#if !defined(INSTR_UNAVAILABLE) && !defined(INSTR_HAVE_CALLGRIND)
#define INSTR_UNAVAILABLE                                                                          \
    "not part of this build (valgrind/callgrind.h was missing when it was compiled)"
#endif

/* The worker's protocol goes to this file descriptor. */
#define INSTR_FD BENCH__PROC_CHANNEL_FD
/* Automatic N: samples of about this many instructions, N a power of two in [1, MAX_N]. */
#define TARGET_IR (1u << 24)
#define MAX_N (UINT64_C(1) << 20)
/* Metrics of the callgrind probe, in order; the cache ones only with cache simulation. */
#define NMETRICS_MAX 3

bool bench__instr_is_mode(const char *mode)
{
    return mode && strcmp(mode, BENCH__INSTR_MODE) == 0;
}

double bench__instr_per_iter(const double *iters, const double *totals, size_t n)
{
    if (n < 2)
        return NAN;
    if (n == 2) /* the usual case, computed so that integer counts stay exact */
        return iters[1] != iters[0] ? (totals[1] - totals[0]) / (iters[1] - iters[0]) : NAN;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += iters[i];
        my += totals[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        sxx += (iters[i] - mx) * (iters[i] - mx);
        sxy += (iters[i] - mx) * (totals[i] - my);
    }
    return sxx > 0 ? sxy / sxx : NAN;
}

bench__verdict bench__instr_verdict(double old, double cur, double threshold)
{
    if (!(old > 0) || !isfinite(old) || !isfinite(cur))
        return BENCH__V_INCOMPARABLE;
    double ratio = cur / old;
    if (ratio - 1.0 > threshold)
        return BENCH__V_REGRESSED;
    if (1.0 - ratio > threshold)
        return BENCH__V_IMPROVED;
    return BENCH__V_NO_CHANGE;
}

/* Fills a change from two counts per iteration. */
static void fill_change(bench__change *c, double old, double cur, double threshold)
{
    memset(c, 0, sizeof *c);
    c->verdict = bench__instr_verdict(old, cur, threshold);
    c->old_median = old;
    c->new_median = cur;
    c->ratio = c->ratio_lower = c->ratio_upper = old > 0 ? cur / old : NAN;
    c->log_change = old > 0 && cur > 0 ? log(cur / old) : 0;
    c->p = c->p_adjusted = NAN; /* exact counts: no test */
}

/* The count per iteration of a saved entry's metric `name`; NAN when it has none. */
static double saved_per_iter(const bench__entry *e, const char *name)
{
    for (size_t j = 0; j < e->nmetrics; j++)
        if (strcmp(e->metrics[j].name, name) == 0)
            return bench__instr_per_iter(e->iters, e->metrics[j].totals, e->nsamples);
    return NAN;
}

/* One row per compared benchmark, worst first, then the counts. */
typedef struct summary_row {
    const char *id;
    bench__change c;
} summary_row;

/* The one order of every comparison summary (report_compare.c). */
static int cmp_row(const void *a, const void *b)
{
    const summary_row *x = a, *y = b;
    return bench__change_order(x->id, &x->c, y->id, &y->c);
}

/*
 * The comparison's summary (report_compare.c's, for exact counts) and its exit code
 * (bench__compare_exit: --fail-on-regression, --baseline-strict). The rows are put in the
 * summary's order first, so the strict messages on stderr come in that order too. Returns the
 * exit code, or -1 when out of memory.
 */
static int summarize(FILE *o, const char *baseline, summary_row *rows, size_t n, double threshold,
                     bool color, bool strict, bool fail_on_regression)
{
    qsort(rows, n, sizeof *rows, cmp_row);
    const char **ids = calloc(n ? n : 1, sizeof *ids);
    bench__change *ch = calloc(n ? n : 1, sizeof *ch);
    int rc = -1;
    if (ids && ch) {
        for (size_t i = 0; i < n; i++) {
            ids[i] = rows[i].id;
            ch[i] = rows[i].c;
        }
        bench__compare_opts opt = {.noise_threshold = threshold, .exact = true};
        char what[128];
        bench__msg(what, sizeof what, "baseline '%s'", baseline);
        if (bench__print_compare_summary(o, what, ids, ch, n, &opt,
                                         "instructions per iteration, exact", NULL, color) == 0)
            rc = bench__compare_exit(ids, ch, n, strict, fail_on_regression, what);
    }
    free(ids);
    free(ch);
    return rc;
}

/* Adds a row with a status instead of numbers (skipped, new, removed). */
static void status_row(summary_row *row, const char *id, bench__verdict v)
{
    memset(row, 0, sizeof *row);
    row->id = id;
    row->c.verdict = v;
}

int bench__instr_compare_saved(const bench__saved *cur, const bench__saved *old, const bool *sel,
                               const char *const *ids, const bench__verdict *verdicts, size_t ns,
                               const char *old_name, double threshold, bool strict,
                               bool fail_on_regression, bool color)
{
    summary_row *rows = calloc(cur->n + ns ? cur->n + ns : 1, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "bench: out of memory\n");
        return BENCH_EXIT_USAGE;
    }
    size_t m = 0;
    for (size_t i = 0; i < cur->n; i++) {
        const bench__entry *e = &cur->entries[i];
        const bench__entry *o = sel[i] ? bench__saved_find(old, e->id) : NULL;
        bench__verdict st;
        if (!sel[i] || !bench__comparable(o ? &o->status : NULL, &e->status, &st))
            continue; /* the caller's statuses name it */
        rows[m].id = e->id;
        fill_change(&rows[m].c, saved_per_iter(o, "instructions"),
                    saved_per_iter(e, "instructions"), threshold);
        m++;
    }
    for (size_t j = 0; j < ns; j++)
        status_row(&rows[m++], ids[j], verdicts[j]);
    if (m == 0) {
        fprintf(stderr, "bench: nothing to compare: no selected benchmark in either baseline\n");
        free(rows);
        return BENCH_EXIT_USAGE;
    }
    int exit_code = summarize(stdout, old_name, rows, m, threshold, color, strict,
                              fail_on_regression);
    free(rows);
    if (exit_code < 0) {
        fprintf(stderr, "bench: out of memory\n");
        return BENCH_EXIT_USAGE;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "bench: writing to stdout failed\n");
        return BENCH_EXIT_USAGE;
    }
    return exit_code;
}

#ifdef INSTR_UNAVAILABLE

int bench__instr_run(const bench__instr_request *q)
{
    (void)q;
    fprintf(stderr, "bench: --instructions: instruction counting is %s\n", INSTR_UNAVAILABLE);
    return BENCH_EXIT_USAGE;
}

int bench__instr_worker_main(const bench__instance *all, const bool *selected, size_t n,
                             const char *dir, uint64_t iterations, bool cache_sim,
                             bench__run_options *opt)
{
    (void)all, (void)selected, (void)n, (void)dir, (void)iterations, (void)cache_sim, (void)opt;
    fprintf(stderr, "bench: --instructions-worker: instruction counting is %s\n",
            INSTR_UNAVAILABLE);
    return BENCH_EXIT_USAGE;
}

#else /* the mode is available */

static const char *const metric_names[NMETRICS_MAX] = {"instructions", "d1_misses", "ll_misses"};
static const char *const metric_units[NMETRICS_MAX] = {"instructions", "misses", "misses"};

/* ---- callgrind dumps ---- */

/* Event totals of one dump: Ir, and with cache simulation D1 and LL data misses. */
typedef struct dump_counts {
    double v[NMETRICS_MAX];
} dump_counts;

/*
 * Reads a callgrind dump: checks that its trigger is the client request `label`, and takes the
 * totals of the events (the "events:" line names them, "totals:" or "summary:" gives them).
 */
static int read_dump(const char *path, const char *label, dump_counts *out, char *msg,
                     size_t msglen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        bench__msg(msg, msglen, "cannot read the callgrind dump %s: %s", path, strerror(errno));
        return BENCH_EIO;
    }
    char *line = NULL;
    size_t cap = 0;
    char events[16][16];
    int nevents = 0;
    bool trigger_ok = false, have_totals = false;
    double tot[16] = {0};
    const char *trig = "desc: Trigger: Client Request: ";
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, trig, strlen(trig)) == 0) {
            trigger_ok = strcmp(line + strlen(trig), label) == 0;
        } else if (strncmp(line, "events:", 7) == 0) {
            nevents = 0;
            char *save = NULL;
            for (char *t = strtok_r(line + 7, " ", &save); t && nevents < 16;
                 t = strtok_r(NULL, " ", &save))
                bench__msg(events[nevents++], sizeof events[0], "%s", t);
        } else if (strncmp(line, "totals:", 7) == 0 ||
                   (!have_totals && strncmp(line, "summary:", 8) == 0)) {
            char *p = strchr(line, ':') + 1;
            for (int i = 0; i < nevents; i++) {
                char *end;
                tot[i] = strtod(p, &end);
                if (end == p)
                    tot[i] = 0; /* callgrind leaves trailing zero counts out */
                p = end;
            }
            have_totals = true;
        }
    }
    free(line);
    fclose(f);
    if (!trigger_ok || !have_totals) {
        bench__msg(msg, msglen, "the callgrind dump %s is not the one of '%s' (%s)", path, label,
                   trigger_ok ? "no totals" : "another trigger");
        return BENCH_EINVAL;
    }
    memset(out, 0, sizeof *out);
    for (int i = 0; i < nevents; i++) {
        if (strcmp(events[i], "Ir") == 0)
            out->v[0] = tot[i];
        else if (strcmp(events[i], "D1mr") == 0 || strcmp(events[i], "D1mw") == 0)
            out->v[1] += tot[i];
        else if (strcmp(events[i], "DLmr") == 0 || strcmp(events[i], "DLmw") == 0)
            out->v[2] += tot[i];
    }
    return 0;
}

/* ---- the worker's probe ---- */

typedef struct cg_probe {
    const char *dir;       /* where callgrind writes its dumps */
    long pid;
    unsigned long ndumps;  /* dumps this process has written */
    const char *id;        /* the benchmark attached */
    size_t nstops;         /* stops of that benchmark */
    uint64_t *plan;        /* the fixed plan: {1, N, 2N} */
    uint64_t iterations;   /* N given on the command line; 0: chosen from the first sample */
    size_t nmetrics;       /* 1, or 3 with cache simulation */
    bool collecting;       /* between a start and its stop */
    char error[512];       /* the first failure reading a dump; "" none */
} cg_probe;

static int cg_attach(bench__probe *p, bench__result *r)
{
    cg_probe *s = p->state;
    s->id = r->inst->id;
    s->nstops = 0;
    s->error[0] = '\0';
    for (size_t i = 0; i < s->nmetrics; i++)
        if (bench__metric_add(r, metric_names[i], metric_units[i], "callgrind") < 0)
            return 1;
    return 0;
}

static void cg_start(bench__probe *p)
{
    cg_probe *s = p->state;
    s->collecting = true;
    /* Last action: collection covers the timer start, the loop and the timer stop; the timer
     * reads are the same in every sample and cancel in Ir(2N) - Ir(N). */
    CALLGRIND_TOGGLE_COLLECT;
}

static void cg_stop(bench__probe *p, double *values, double *fraction)
{
    /* First action: nothing of the bookkeeping below is counted. */
    CALLGRIND_TOGGLE_COLLECT;
    cg_probe *s = p->state;
    s->collecting = false;
    char label[300], path[4200];
    bench__msg(label, sizeof label, "%s#%zu", s->id, s->nstops);
    CALLGRIND_DUMP_STATS_AT(label);
    s->ndumps++;
    bench__msg(path, sizeof path, "%s/cg.%ld.%lu", s->dir, s->pid, s->ndumps);
    dump_counts dc;
    char why[512];
    bool ok = read_dump(path, label, &dc, why, sizeof why) == 0;
    if (!ok) {
        memset(&dc, 0, sizeof dc);
        if (!s->error[0])
            bench__msg(s->error, sizeof s->error, "%s", why);
    }
    for (size_t i = 0; i < s->nmetrics; i++)
        values[i] = dc.v[i];
    *fraction = 1.0;
    unlink(path);
    if (s->nstops++ == 0 && s->iterations == 0) {
        /* The first sample is one iteration: size the others from its count. */
        double per = dc.v[0] > 1 ? dc.v[0] : 1;
        uint64_t n = 1;
        while (ok && n < MAX_N && (double)(2 * n) * per <= (double)TARGET_IR)
            n *= 2;
        /* The runner reads the plan lazily, one sample at a time. */
        s->plan[1] = n;
        s->plan[2] = 2 * n;
    }
}

static void cg_detach(bench__probe *p, bench__result *r)
{
    (void)r;
    cg_probe *s = p->state;
    if (s->collecting) {
        /* The body left its timed loop inside a sample (it is failed): switch collection off,
         * or every later benchmark would count the wrong way round. */
        CALLGRIND_TOGGLE_COLLECT;
        s->collecting = false;
    }
}

/* Writes a message on one line: no newlines. */
static void put_line_text(FILE *out, const char *text)
{
    for (const char *c = text; *c; c++)
        fputc(*c == '\n' || *c == '\r' ? ' ' : *c, out);
    fputc('\n', out);
}

int bench__instr_worker_main(const bench__instance *all, const bool *selected, size_t n,
                             const char *dir, uint64_t iterations, bool cache_sim,
                             bench__run_options *opt)
{
    if (!RUNNING_ON_VALGRIND || fcntl(INSTR_FD, F_GETFD) < 0) {
        fprintf(stderr, "bench: --instructions-worker is internal to --instructions: use "
                        "--instructions\n");
        return BENCH_EXIT_USAGE;
    }
    FILE *out = fdopen(INSTR_FD, "w");
    if (!out) {
        fprintf(stderr, "bench: --instructions-worker: cannot write to descriptor %d: %s\n",
                INSTR_FD, strerror(errno));
        return BENCH_EXIT_USAGE;
    }
    uint64_t plan[3];
    cg_probe state = {
        .dir = dir,
        .pid = (long)getpid(),
        .plan = plan,
        .iterations = iterations,
        .nmetrics = cache_sim ? 3 : 1,
    };
    bench__probe probe = {
        .name = "callgrind",
        .attach = cg_attach,
        .start = cg_start,
        .stop = cg_stop,
        .detach = cg_detach,
        .state = &state,
    };
    bench__probe *probes[2] = {bench__cuda_probe(), &probe};
    opt->probes = probes;
    opt->nprobes = 2;
    opt->fixed_iters = plan;
    opt->nfixed = 3;
    opt->cli.sample_size = 3; /* room for the whole plan, whatever BENCH_FN asks */
    opt->nresamples = 10;     /* the coordinator does the statistics */
    opt->progress = false;
    bench__crash_handlers_install();
    for (size_t i = 0; i < n; i++) {
        if (!selected[i])
            continue;
        plan[0] = 1;
        plan[1] = iterations ? iterations : 1;
        plan[2] = iterations ? 2 * iterations : 2;
        /* Named before it runs: if it crashes, the coordinator knows which one did. */
        fprintf(out, "B %s\n", all[i].id);
        fflush(out);
        bench__result r;
        memset(&r, 0, sizeof r);
        bench__run_instance(&all[i], opt, &r);
        if (r.status == BENCH__OK && state.error[0]) {
            r.status = BENCH__FAILED;
            bench__msg(r.message, sizeof r.message, "%s", state.error);
        }
        fprintf(out, "S %s\n", bench__status_name(r.status));
        if (r.status != BENCH__OK) {
            fputs("M ", out);
            put_line_text(out, r.message);
        } else {
            for (size_t k = 0; k < r.nsamples; k++) {
                fprintf(out, "P %.17g %.17g", r.iters[k], r.totals_ns[k]);
                for (size_t j = 0; j < r.nmetrics && j < state.nmetrics; j++)
                    fprintf(out, " %.17g", r.metrics[j].totals[k]);
                fputc('\n', out);
            }
        }
        fputs("E\n", out);
        fflush(out);
        bench__result_destroy(&r);
    }
    return fclose(out) == 0 ? BENCH_EXIT_OK : BENCH_EXIT_USAGE;
}

/* ---- the coordinator ---- */

/* The path of `prog` found on PATH, into buf; false when it is not there. */
static bool find_on_path(const char *prog, char *buf, size_t len)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    const char *p = path;
    while (*p) {
        size_t n = strcspn(p, ":");
        bench__msg(buf, len, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", prog);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return true;
        p += n;
        if (*p == ':')
            p++;
    }
    return false;
}

/* Removes the temporary directory and whatever callgrind left in it. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4200];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            bench__msg(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* What the worker said about one benchmark. */
typedef struct worker_entry {
    bool begun, ended;
    bench__status status;
    char message[512];
    size_t nsamples;
    double iters[3], totals_ns[3];
    double counts[3][NMETRICS_MAX];
} worker_entry;

/* Builds r from the worker's entry: samples N and 2N, exact per-iteration counts. */
static void build_result(bench__result *r, const bench__instance *inst, const worker_entry *w,
                         size_t nmetrics, const bench__run_options *run)
{
    memset(r, 0, sizeof *r);
    r->inst = inst;
    r->nresamples = run->nresamples;
    r->confidence_level = run->confidence_level;
    bench__resolve_settings(&r->settings, run, inst->desc, inst->group);
    r->status = w->status;
    bench__msg(r->message, sizeof r->message, "%s", w->message);
    if (r->status != BENCH__OK)
        return;
    if (w->nsamples != 3) {
        r->status = BENCH__FAILED;
        bench__msg(r->message, sizeof r->message,
                   "the run under valgrind took %zu samples instead of 3", w->nsamples);
        return;
    }
    r->iters = calloc(2, sizeof *r->iters);
    r->totals_ns = calloc(2, sizeof *r->totals_ns);
    if (!r->iters || !r->totals_ns) {
        r->status = BENCH__FAILED;
        bench__msg(r->message, sizeof r->message, "%s", "out of memory");
        return;
    }
    /* Sample 0 (one iteration) is the warm-up. */
    r->warm_up_iters = (uint64_t)w->iters[0];
    r->warm_up_ns = w->totals_ns[0];
    r->nsamples = 2;
    for (size_t k = 0; k < 2; k++) {
        r->iters[k] = w->iters[k + 1];
        r->totals_ns[k] = w->totals_ns[k + 1];
        r->total_iters += (uint64_t)w->iters[k + 1];
    }
    r->measure_wall_s = (r->totals_ns[0] + r->totals_ns[1]) / 1e9;
    r->sampling_used = BENCH_SAMPLING_FLAT;
    r->stop_reason = "fixed plan";
    r->rounds = 1;
    for (size_t j = 0; j < nmetrics; j++) {
        int m = bench__metric_add(r, metric_names[j], metric_units[j], "callgrind");
        if (m < 0)
            return;
        for (size_t k = 0; k < 2; k++)
            r->metrics[m].totals[k] = w->counts[k + 1][j];
    }
    if (bench__analyze(r, run) != 0) {
        r->status = BENCH__FAILED;
        bench__msg(r->message, sizeof r->message, "%s", "statistics failed (out of memory?)");
        return;
    }
    /* Counts are exact: every estimate per iteration is the difference of the two samples. */
    for (size_t j = 0; j < r->nmetrics; j++) {
        bench__metric *m = &r->metrics[j];
        double a = bench__instr_per_iter(r->iters, m->totals, r->nsamples);
        bench__estimate exact = {a, a, a}, zero = {0, 0, 0};
        m->est.median = m->est.mean = m->est.slope = exact;
        m->est.std_dev = m->est.mad = zero;
    }
}

static const char *verdict_color(bench__verdict v)
{
    return v == BENCH__V_REGRESSED ? "\033[31m" : v == BENCH__V_IMPROVED ? "\033[32m" : "";
}

/* The pretty line of one result (and its change). */
static void print_pretty(FILE *o, const bench__result *r, const bench__change *ch, bool color)
{
    const char *id = r->inst->id;
    if (r->status == BENCH__SKIPPED) {
        fprintf(o, "%-40s skipped: %s\n", id, r->message);
        return;
    }
    if (r->status == BENCH__FAILED) {
        fprintf(o, "%-40s failed: %s\n", id, r->message);
        return;
    }
    fprintf(o, "%-40s instructions: %.1f/iter", id, r->metrics[0].est.median.point);
    for (size_t j = 1; j < r->nmetrics; j++)
        fprintf(o, "  %s: %.2f/iter", r->metrics[j].name, r->metrics[j].est.median.point);
    fprintf(o, "  (N = %.0f)\n", r->iters[0]);
    if (ch) {
        const char *reset = color ? "\033[0m" : "";
        if (ch->verdict == BENCH__V_INCOMPARABLE)
            fprintf(o, "%-40s change: not compared (no count in the baseline)\n", "");
        else
            fprintf(o, "%-40s change: %+.3f%% (%.1f -> %.1f): %s%s%s\n", "",
                    (ch->ratio - 1.0) * 100.0, ch->old_median, ch->new_median,
                    color ? verdict_color(ch->verdict) : "", bench__verdict_name(ch->verdict),
                    reset);
    }
}

/* Loads and checks the baseline; prints one line and returns -1 when it is unusable. */
static int load_baseline(const bench__instr_request *q, bench__saved *old)
{
    char msg[768];
    int rc = bench__saved_load(q->baseline_path, old, msg, sizeof msg);
    if (rc == BENCH_EIO && access(q->baseline_path, F_OK) != 0) {
        fprintf(stderr, "bench: baseline '%s' not found: %s does not exist (save one with "
                        "--instructions --save-baseline %s)\n",
                q->baseline, q->baseline_path, q->baseline);
        return -1;
    }
    if (rc != 0) {
        fprintf(stderr, "bench: baseline '%s' is unusable: %s\n", q->baseline, msg);
        return -1;
    }
    if (!bench__instr_is_mode(old->ctx.mode)) {
        fprintf(stderr, "bench: baseline '%s' holds times, not instruction counts: compare it "
                        "without --instructions, or save one with --instructions "
                        "--save-baseline NAME\n", q->baseline);
        return -1;
    }
    return 0;
}

/* Starts valgrind with the worker; its protocol comes on descriptor 3 (proc.c). */
static int start_worker(const bench__instr_request *q, const char *valgrind, const char *dir,
                        bench__proc *p)
{
    char exe[PATH_MAX], msg[512];
    if (bench__proc_self(exe, sizeof exe, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench: --instructions: %s\n", msg);
        return -1;
    }
    char outfile[4200], iters[32];
    bench__msg(outfile, sizeof outfile, "--callgrind-out-file=%s/cg.%%p", dir);
    bench__msg(iters, sizeof iters, "%llu", (unsigned long long)q->iterations);
    const char **argv = calloc(q->nfilters + 20, sizeof *argv);
    if (!argv) {
        fprintf(stderr, "bench: out of memory\n");
        return -1;
    }
    size_t k = 0;
    argv[k++] = valgrind;
    argv[k++] = "-q";
    argv[k++] = "--tool=callgrind";
    argv[k++] = "--collect-atstart=no";
    argv[k++] = outfile;
    if (q->cache_sim)
        argv[k++] = "--cache-sim=yes";
    argv[k++] = exe;
    argv[k++] = "--instructions-worker";
    argv[k++] = dir;
    if (q->iterations) {
        argv[k++] = "--instructions-iterations";
        argv[k++] = iters;
    }
    if (q->cache_sim)
        argv[k++] = "--instructions-cache-sim";
    if (q->exact)
        argv[k++] = "--exact";
    argv[k++] = "--";
    for (size_t i = 0; i < q->nfilters; i++)
        argv[k++] = q->filters[i];
    argv[k] = NULL;
    /* The worker's stdout goes to our stderr: whatever the benchmarks print never mixes with
     * the report. */
    bench__proc_spec spec = {.path = valgrind, .argv = (char *const *)argv,
                             .channel = BENCH__PROC_FD3};
    int rc = bench__proc_start(p, &spec, msg, sizeof msg);
    free(argv);
    if (rc != 0) {
        fprintf(stderr, "bench: --instructions: %s\n", msg);
        return -1;
    }
    return 0;
}

/* Parses one protocol line into the entries; returns the index of an entry that ended, or -1. */
static long take_line(char *line, const bench__instr_request *q, const size_t *sel_index,
                      size_t nsel, worker_entry *w, long *current, size_t nmetrics)
{
    line[strcspn(line, "\n")] = '\0';
    if (line[0] == 'B' && line[1] == ' ') {
        *current = -1;
        for (size_t j = 0; j < nsel; j++)
            if (strcmp(q->all[sel_index[j]].id, line + 2) == 0) {
                *current = (long)j;
                w[j].begun = true;
            }
        return -1;
    }
    if (*current < 0)
        return -1;
    worker_entry *e = &w[*current];
    if (line[0] == 'S' && line[1] == ' ') {
        e->status = strcmp(line + 2, "ok") == 0        ? BENCH__OK
                    : strcmp(line + 2, "skipped") == 0 ? BENCH__SKIPPED
                                                       : BENCH__FAILED;
    } else if (line[0] == 'M' && line[1] == ' ') {
        bench__msg(e->message, sizeof e->message, "%s", line + 2);
    } else if (line[0] == 'P' && line[1] == ' ' && e->nsamples < 3) {
        char *p = line + 2, *end;
        size_t k = e->nsamples++;
        e->iters[k] = strtod(p, &end);
        p = end;
        e->totals_ns[k] = strtod(p, &end);
        p = end;
        for (size_t j = 0; j < nmetrics; j++) {
            e->counts[k][j] = strtod(p, &end);
            p = end;
        }
    } else if (line[0] == 'E' && line[1] == '\0') {
        e->ended = true;
        long done = *current;
        *current = -1;
        return done;
    }
    return -1;
}

int bench__instr_run(const bench__instr_request *q)
{
    char valgrind[4096];
    if (!find_on_path("valgrind", valgrind, sizeof valgrind)) {
        fprintf(stderr, "bench: --instructions needs valgrind (its callgrind tool), which is not "
                        "on PATH: install the 'valgrind' package (apt-get install valgrind)\n");
        return BENCH_EXIT_USAGE;
    }
    size_t nsel = 0;
    for (size_t i = 0; i < q->n; i++)
        nsel += q->selected[i];
    bench__saved old;
    memset(&old, 0, sizeof old);
    if (q->baseline && load_baseline(q, &old) != 0) {
        bench__saved_destroy(&old);
        return BENCH_EXIT_USAGE;
    }
    size_t nmetrics = q->cache_sim ? 3 : 1;
    size_t *sel_index = calloc(nsel ? nsel : 1, sizeof *sel_index);
    worker_entry *w = calloc(nsel ? nsel : 1, sizeof *w);
    bench__result *results = calloc(nsel ? nsel : 1, sizeof *results);
    summary_row *rows = calloc(nsel + q->nabsent ? nsel + q->nabsent : 1, sizeof *rows);
    /* The JSON's view of the comparison: a status per result, the removed ids. */
    bench__change *statuses = calloc(nsel ? nsel : 1, sizeof *statuses);
    const char **removed = calloc(q->nabsent ? q->nabsent : 1, sizeof *removed);
    char dir[] = "/tmp/bench-instructions-XXXXXX";
    int exit_code = BENCH_EXIT_OK;
    bool have_dir = false;
    bench__user_builds builds = {0};
    if (!sel_index || !w || !results || !rows || !statuses || !removed) {
        fprintf(stderr, "bench: out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0, j = 0; i < q->n; i++)
        if (q->selected[i])
            sel_index[j++] = i;
    if (!mkdtemp(dir)) {
        fprintf(stderr, "bench: --instructions: cannot create a temporary directory: %s\n",
                strerror(errno));
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    have_dir = true;

    bench__context ctx;
    bench__context_collect(&ctx, q->run);
    ctx.mode = BENCH__INSTR_MODE;
    /* Counts of an unoptimised build are as unrepresentative as its times: said once. */
    char unopt[256];
    if (bench__user_builds_init(&builds, q->all, q->selected, q->n) == 0) {
        bench__user_builds_attach(&ctx, &builds);
        if (bench__user_builds_warning(&builds, unopt, sizeof unopt))
            fprintf(stderr, "bench: warning: %s\n", unopt);
    }
    size_t nremoved = 0;
    for (size_t j = 0; j < q->nabsent; j++)
        if (q->absent_verdicts[j] == BENCH__V_REMOVED)
            removed[nremoved++] = q->absent_ids[j];
    bench__comparison comparison = {q->baseline, removed, nremoved};
    if (q->baseline)
        ctx.comparison = &comparison;
    bench__reporter rep;
    bool pretty = q->format == BENCH__FMT_PRETTY;
    if (!pretty)
        bench__reporter_json(&rep, stdout);
    fprintf(stderr, "bench: counting instructions of %zu benchmark%s under valgrind "
                    "(callgrind)%s\n",
            nsel, nsel == 1 ? "" : "s", pretty ? "" : "; this takes a while");
    bench__proc_interrupts_install();
    bench__proc worker;
    if (start_worker(q, valgrind, dir, &worker) != 0) {
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    if (!pretty)
        rep.begin(&rep, &ctx);
    char line[1024];
    long current = -1;
    size_t m = 0;
    while (bench__proc_line(&worker, line, sizeof line, 0) == 1) {
        long done = take_line(line, q, sel_index, nsel, w, &current, nmetrics);
        if (done < 0)
            continue;
        bench__result *r = &results[done];
        build_result(r, &q->all[sel_index[done]], &w[done], nmetrics, q->run);
        bench__change *ch = NULL;
        const bench__entry *e = q->baseline ? bench__saved_find(&old, r->inst->id) : NULL;
        bench__verdict st = BENCH__V_INCOMPARABLE;
        if (q->baseline && !bench__comparable(e ? &e->status : NULL, &r->status, &st) &&
            st != BENCH__V_INCOMPARABLE) {
            status_row(&rows[m++], r->inst->id, st); /* skipped or new */
            statuses[done].verdict = st;
            r->change = &statuses[done];
        }
        if (e && e->status == BENCH__OK && r->status == BENCH__OK) {
            r->metric_changes = calloc(r->nmetrics, sizeof *r->metric_changes);
            for (size_t j = 0; r->metric_changes && j < r->nmetrics; j++)
                fill_change(&r->metric_changes[j], saved_per_iter(e, r->metrics[j].name),
                            r->metrics[j].est.median.point, q->threshold);
            if (r->metric_changes) {
                ch = &r->metric_changes[0];
                rows[m].id = r->inst->id;
                rows[m++].c = *ch;
            }
        }
        if (pretty)
            print_pretty(stdout, r, ch, q->color);
        else
            rep.result(&rep, r);
        fflush(stdout);
        if (r->status == BENCH__FAILED) {
            fprintf(stderr, "bench: benchmark '%s' failed: %s\n", r->inst->id, r->message);
            exit_code = BENCH_EXIT_FAILED;
        }
    }
    bench__proc_wait(&worker, 0);
    if (bench__proc_interrupted()) {
        fprintf(stderr, "bench: interrupted by %s: stopped valgrind; no results or baseline "
                        "were written\n", bench__signal_name(bench__proc_interrupted()));
        exit_code = 128 + bench__proc_interrupted();
        goto out;
    }
    char why[128];
    bench__proc_describe(&worker, 0, why, sizeof why);
    bool any_begun = false;
    for (size_t j = 0; j < nsel; j++)
        any_begun |= w[j].begun;
    for (size_t j = 0; j < nsel; j++) {
        if (w[j].ended)
            continue;
        /* The run under valgrind ended before this benchmark did. */
        w[j].status = BENCH__FAILED;
        if (w[j].begun)
            bench__msg(w[j].message, sizeof w[j].message,
                       "the run under valgrind stopped in this benchmark (%s; see the messages "
                       "above)", why);
        else
            bench__msg(w[j].message, sizeof w[j].message,
                       "not run: the run under valgrind stopped before it (%s)", why);
        build_result(&results[j], &q->all[sel_index[j]], &w[j], nmetrics, q->run);
        if (pretty)
            print_pretty(stdout, &results[j], NULL, q->color);
        else
            rep.result(&rep, &results[j]);
        if (w[j].begun || !any_begun)
            fprintf(stderr, "bench: benchmark '%s' failed: %s\n", results[j].inst->id,
                    w[j].message);
        exit_code = BENCH_EXIT_FAILED;
    }
    if (!any_begun && nsel > 0)
        fprintf(stderr, "bench: --instructions: valgrind did not run this program (%s)\n", why);

    if (q->baseline) {
        for (size_t j = 0; j < q->nabsent; j++)
            status_row(&rows[m++], q->absent_ids[j], q->absent_verdicts[j]);
        int cmp_exit = summarize(pretty ? stdout : stderr, q->baseline, rows, m, q->threshold,
                                 pretty ? q->color : isatty(STDERR_FILENO), q->strict,
                                 q->fail_on_regression);
        if (cmp_exit < 0)
            fprintf(stderr, "bench: out of memory\n");
        if (exit_code == BENCH_EXIT_OK)
            exit_code = cmp_exit < 0 ? BENCH_EXIT_USAGE : cmp_exit;
    }
    char msg[1024];
    if ((!pretty && rep.end(&rep, &ctx, results, nsel) != 0) || fflush(stdout) != 0 ||
        ferror(stdout)) {
        fprintf(stderr, "bench: writing the report to stdout failed\n");
        if (exit_code == BENCH_EXIT_OK)
            exit_code = BENCH_EXIT_USAGE;
    }
    if (q->json_path &&
        bench__json_write_file(q->json_path, &ctx, results, nsel, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench: %s\n", msg);
        if (exit_code == BENCH_EXIT_OK)
            exit_code = BENCH_EXIT_USAGE;
    }
    /* Saved like a run of times (cli_baseline.c), but without a copy of the program: counts
     * need no confirming run. */
    if (q->save_baseline && bench__save_named(q->baseline_dir, q->save_baseline, q->save_path,
                                              &ctx, results, nsel, false) != 0 &&
        exit_code == BENCH_EXIT_OK)
        exit_code = BENCH_EXIT_USAGE;
out:
    if (have_dir)
        remove_dir(dir);
    for (size_t j = 0; results && j < nsel; j++)
        bench__result_destroy(&results[j]);
    bench__saved_destroy(&old);
    free(rows);
    free(statuses);
    free(removed);
    free(results);
    free(w);
    free(sel_index);
    bench__user_builds_destroy(&builds);
    return exit_code;
}

#endif /* the mode is available */
