/*
 * instr.c: instruction-count mode (--instructions), a client of the run pipeline (client.h):
 * exact instructions per iteration, counted by valgrind's callgrind, for a CI gate that must not
 * depend on the machine's noise.
 *
 * What the mode supplies. Its worker processes start under `valgrind --tool=callgrind
 * --collect-atstart=no` (the plan's launcher), one process per benchmark like every measuring
 * run (manager.c: a crash ends that benchmark only). The plan is fixed: {1, N, 2N} iterations,
 * no timed warm-up, no stopping rule, the first sample a warm-up. Its probe switches callgrind's
 * collection on as a sample starts and off as it stops, then dumps the counts
 * (CALLGRIND_DUMP_STATS_AT) and reads them back from the dump file: callgrind counts only inside
 * samples, and each dump holds one sample (or one batch of a batched benchmark; the runner sums
 * batches). Its comparison is exact (a count that moved by more than the threshold), its
 * terminal lines show counts; the run, the summary, the files, the save (without a program
 * snapshot: counts need no confirming run) and the exit code are the pipeline's (pipeline.c).
 *
 * Exactness. A sample's count is N * (instructions of one iteration) + c, where c is the
 * constant cost of the toggles and the timer reads around the loop. The count per iteration is
 * (Ir(2N) - Ir(N)) / N, in which c cancels exactly. The first sample (1 iteration) warms up
 * (lazy symbol binding, first touches) and is set aside. Valgrind runs the program
 * deterministically, so two runs of the same binary give the same counts.
 *
 * N. With --instructions-iterations N, that N. Otherwise N is chosen per benchmark from the
 * first sample's count: the largest power of two with N * count <= 2^24 instructions (at least
 * 1, at most 2^20), so each sample stays short under valgrind's 20-50x slowdown, and N depends
 * on a count, not on time, so it is the same from run to run.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probes/probes.h"
#include "report/report_compare.h"
#include "run/client.h"
#include "run/instr.h"
#include "stats/stats.h"
#include "sys/proc.h"

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

/* Where the manager tells its workers that callgrind writes its dumps. */
#define DIR_ENV "BENCH_INSTR_DIR"
/* Automatic N: samples of about this many instructions, N a power of two in [1, MAX_N]. */
#define TARGET_IR (1u << 24)
#define MAX_N (UINT64_C(1) << 20)
/* Metrics of the callgrind probe, in order; the cache ones only with cache simulation. */
#define NMETRICS_MAX 3
/* The instruction count's identity: its name and the probe that records it. */
#define INSTR_METRIC "instructions"
#define INSTR_SOURCE "callgrind"

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

/* Fills a change from two counts per iteration. */
static void fill_change(bench__change *c, double old, double cur, double threshold)
{
    memset(c, 0, sizeof *c);
    c->verdict = bench__verdict_exact(old, cur, threshold);
    c->old_median = old;
    c->new_median = cur;
    c->ratio = c->ratio_lower = c->ratio_upper = old > 0 ? cur / old : NAN;
    c->log_change = old > 0 && cur > 0 ? log(cur / old) : 0;
    c->p = c->p_adjusted = NAN; /* exact counts: no test */
}


/* The count per iteration of a saved entry's metric `name`, recorded by `source` (a file that
 * names no source passes; NULL: any); NAN when it has none. */
static double saved_per_iter(const bench__entry *e, const char *name, const char *source)
{
    for (size_t j = 0; j < e->nmetrics; j++)
        if (strcmp(e->metrics[j].name, name) == 0 &&
            (!source || !e->metrics[j].source[0] || strcmp(e->metrics[j].source, source) == 0))
            return bench__instr_per_iter(e->iters, e->metrics[j].totals, e->nsamples);
    return NAN;
}

/* The index in r of the instruction count: the callgrind probe's metric, by name and source,
 * never by position (the counters of BENCH_FN's .counters are metrics too, added before it);
 * -1 when r has none. A user's counter cannot take its name: bench__metric_add refuses a
 * second metric of one name. */
static int instr_index(const bench__result *r)
{
    for (size_t j = 0; j < r->nmetrics; j++)
        if (strcmp(r->metrics[j].name, INSTR_METRIC) == 0 &&
            strcmp(r->metrics[j].source, INSTR_SOURCE) == 0)
            return (int)j;
    return -1;
}

/* ---- the client's rules: estimates, comparison, terminal lines ---- */

/* Counts are exact: every estimate per iteration is the slope of the samples. A time recorded
 * beside them (a thread's elapsed ns under valgrind) is no count: the slope through its noisy
 * samples of 1, N and 2N iterations read -9215 ns per iteration at load 2 per CPU, which the
 * results file then held and its own loader refused ("below the minimum 0"). A time's estimate
 * is the median of its samples' ns per iteration instead. */
static void instr_estimate(bench__result *r)
{
    for (size_t j = 0; j < r->nmetrics; j++) {
        bench__metric *m = &r->metrics[j];
        double a = NAN;
        if (strcmp(m->unit, "ns") == 0 && r->nsamples > 0) {
            double *per = malloc(r->nsamples * sizeof *per);
            size_t k = 0;
            for (size_t i = 0; per && i < r->nsamples; i++)
                if (r->iters[i] > 0)
                    per[k++] = m->totals[i] / r->iters[i];
            if (k > 0)
                a = bench__median_inplace(per, k);
            free(per);
        } else {
            a = bench__instr_per_iter(r->iters, m->totals, r->nsamples);
        }
        bench__estimate exact = {a, a, a}, zero = {0, 0, 0};
        m->est.median = m->est.mean = m->est.slope = exact;
        m->est.std_dev = m->est.mad = zero;
    }
}

/* Each metric against the baseline's; the summary lists the instructions. */
static bool instr_compare(const bench__request *c, const bench__entry *e, bench__result *r,
                          bench__change *ch, bench__side *old_side)
{
    (void)old_side;
    ch->verdict = BENCH__V_INCOMPARABLE;
    int k = instr_index(r);
    if (k < 0)
        return false;
    r->metric_changes = calloc(r->nmetrics, sizeof *r->metric_changes);
    if (!r->metric_changes)
        return false;
    for (size_t j = 0; j < r->nmetrics; j++)
        fill_change(&r->metric_changes[j],
                    saved_per_iter(e, r->metrics[j].name,
                                   (int)j == k ? INSTR_SOURCE : NULL),
                    r->metrics[j].est.median.point, c->cmp.noise_threshold);
    *ch = r->metric_changes[k]; /* the verdict is the instruction count's */
    ch->metric = INSTR_METRIC;
    r->change = ch; /* so the results say the verdict where a time's would be */
    return true;
}

static void instr_compare_saved(const bench__request *c, const bench__entry *old,
                                const bench__entry *cur, bench__change *ch)
{
    fill_change(ch, saved_per_iter(old, INSTR_METRIC, INSTR_SOURCE),
                saved_per_iter(cur, INSTR_METRIC, INSTR_SOURCE), c->cmp.noise_threshold);
}

/* The terminal line of one result: its counts per iteration. */
static void pretty_result(bench__reporter *rep, const bench__result *r)
{
    char id[BENCH__ESCAPED_ID], why[4 * sizeof r->message];
    bench__escape(id, sizeof id, r->inst->id);
    if (r->status != BENCH__OK) {
        fprintf(rep->out, "%-40s %s: %s\n", id,
                r->status == BENCH__SKIPPED ? "skipped" : "failed",
                bench__escape(why, sizeof why, r->message));
        return;
    }
    int k = instr_index(r);
    fprintf(rep->out, "%-40s instructions: %.1f/iter", id,
            k >= 0 ? r->metrics[k].est.median.point : NAN);
    /* Counts only: a time (a thread's ns per iteration) measured under valgrind means nothing,
     * and beside the instructions it would read as one more count. */
    for (size_t j = 0; j < r->nmetrics; j++)
        if ((int)j != k && strcmp(r->metrics[j].unit, "ns") != 0)
            fprintf(rep->out, "  %s: %.2f/iter", r->metrics[j].name,
                    r->metrics[j].est.median.point);
    fprintf(rep->out, "  (N = %.0f)\n", r->iters[0]);
}

static void pretty_begin(bench__reporter *rep, const bench__context *ctx)
{
    (void)rep, (void)ctx;
}

static int pretty_end(bench__reporter *rep, const bench__context *ctx, const bench__result *all,
                      size_t n)
{
    (void)rep, (void)ctx, (void)all, (void)n;
    return 0;
}

static void instr_pretty(bench__reporter *rep, FILE *out, bool color)
{
    rep->begin = pretty_begin;
    rep->result = pretty_result;
    rep->end = pretty_end;
    rep->out = out;
    rep->color = color;
}

/* The change line under a compared result. */
static void instr_show_change(FILE *o, const bench__request *c, const bench__result *r, bool color)
{
    (void)c;
    int k = instr_index(r);
    if (!r->metric_changes || k < 0)
        return;
    bench__print_count_change(o, &r->metric_changes[k], color);
}

static void instr_announce(const bench__request *c, size_t nsel)
{
    bench__errf("counting instructions of %zu benchmark%s under valgrind "
                "(callgrind)%s\n",
                nsel, nsel == 1 ? "" : "s",
                c->format == BENCH__FMT_PRETTY ? "" : "; this takes a while");
}

/* Counts compare exactly, with their own default threshold. */
static void instr_configure(bench__request *c)
{
    c->cmp.noise_threshold = bench__request_noise_threshold(c, BENCH__INSTR_DEFAULT_THRESHOLD);
    c->cmp.exact = true;
}

#ifdef INSTR_UNAVAILABLE

static int instr_setup(bench__request *c, bool worker, char *msg, size_t msglen)
{
    (void)c, (void)worker;
    bench__msg(msg, msglen, "--instructions: instruction counting is %s", INSTR_UNAVAILABLE);
    return -1;
}

static void instr_teardown(bench__request *c)
{
    (void)c;
}

#else /* the mode is available */

static const char *const metric_names[NMETRICS_MAX] = {INSTR_METRIC, "d1_misses", "ll_misses"};
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
        const char *rest;
        if ((rest = bench__skip_prefix(line, trig))) {
            trigger_ok = strcmp(rest, label) == 0;
        } else if ((rest = bench__skip_prefix(line, "events:"))) {
            nevents = 0;
            char *save = NULL;
            for (char *t = strtok_r((char *)rest, " ", &save); t && nevents < 16;
                 t = strtok_r(NULL, " ", &save))
                bench__msg(events[nevents++], sizeof events[0], "%s", t);
        } else if (bench__starts_with(line, "totals:") ||
                   (!have_totals && bench__starts_with(line, "summary:"))) {
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
        if (bench__metric_add(r, metric_names[i], metric_units[i], INSTR_SOURCE) < 0)
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
    /* --explain reads the functions' counts of each sample (explain.c): it names a folder for
     * the dumps, sample k's as "sample<k>.cg". */
    const char *keep = getenv(BENCH__INSTR_KEEP_ENV);
    char kept[4200];
    if (keep && *keep)
        bench__msg(kept, sizeof kept, "%s/sample%zu.cg", keep, s->nstops);
    if (!keep || !*keep || rename(path, kept) != 0)
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
    cg_probe *s = p->state;
    if (s->collecting) {
        /* The body left its timed loop inside a sample (it is failed): switch collection off,
         * or the toggles that follow would count the wrong way round. */
        CALLGRIND_TOGGLE_COLLECT;
        s->collecting = false;
    }
    if (s->error[0])
        bench__result_fail(r, "%s", s->error);
}

/* ---- setting the mode up: the manager's launcher, a worker's probe ---- */

/* The manager's temporary directory for the dumps ("" none), the launcher's arguments. */
static char dump_dir[64];
static char valgrind[4096], out_file[128];
static const char *launcher[8];
/* A worker's probe, its plan, and the probes it runs with. */
static uint64_t plan[3];
static cg_probe probe_state;
static bench__probe probe;
static bench__probe *worker_probes[BENCH__MAX_PROBE_KINDS + 1];

/* The manager: finds valgrind, makes the dump directory, and has the workers start under
 * callgrind with collection off until a sample starts. */
static int manager_setup(bench__request *c, char *msg, size_t msglen)
{
    if (!bench__proc_which("valgrind", valgrind, sizeof valgrind)) {
        bench__msg(msg, msglen, "--instructions needs valgrind (its callgrind tool), which is "
                                "not on PATH: install the 'valgrind' package (apt-get install "
                                "valgrind)");
        return -1;
    }
    bench__msg(dump_dir, sizeof dump_dir, "%s", "/tmp/bench-instructions-XXXXXX");
    if (!mkdtemp(dump_dir)) {
        bench__msg(msg, msglen, "--instructions: cannot create a temporary directory: %s",
                   strerror(errno));
        dump_dir[0] = '\0';
        return -1;
    }
    setenv(DIR_ENV, dump_dir, 1);
    bench__msg(out_file, sizeof out_file, "--callgrind-out-file=%s/cg.%%p", dump_dir);
    size_t k = 0;
    launcher[k++] = valgrind;
    launcher[k++] = "-q";
    launcher[k++] = "--tool=callgrind";
    launcher[k++] = "--collect-atstart=no";
    launcher[k++] = out_file;
    if (c->instr_cache_sim)
        launcher[k++] = "--cache-sim=yes";
    c->run.launcher = launcher;
    c->run.nlauncher = k;
    return 0;
}

/* A worker: counts with the callgrind probe, the plan {1, N, 2N}. */
static int worker_setup(bench__request *c, char *msg, size_t msglen)
{
    const char *dir = getenv(DIR_ENV);
    if (!RUNNING_ON_VALGRIND || !dir || !*dir) {
        bench__msg(msg, msglen, "--instructions: this worker process runs outside valgrind "
                                "(%s is for the processes bench starts)", DIR_ENV);
        return -1;
    }
    uint64_t n = c->instr_iterations;
    plan[0] = 1;
    plan[1] = n ? n : 1;
    plan[2] = n ? 2 * n : 2;
    probe_state = (cg_probe){
        .dir = dir,
        .pid = (long)getpid(),
        .plan = plan,
        .iterations = n,
        .nmetrics = c->instr_cache_sim ? 3 : 1,
    };
    probe = (bench__probe){
        .name = "callgrind",
        .attach = cg_attach,
        .start = cg_start,
        .stop = cg_stop,
        .detach = cg_detach,
        .state = &probe_state,
    };
    /* The table's probes that every run has (CUDA: a CUDA benchmark's own time), then the
     * count; --instructions takes no other probe. */
    int made = bench__probes_make(NULL, NULL, worker_probes, msg, msglen);
    if (made < 0)
        return -1;
    worker_probes[made] = &probe;
    c->run.probes = worker_probes;
    c->run.nprobes = (size_t)made + 1;
    return 0;
}

/* What the manager and the workers alike take. */
static void common_setup(bench__request *c)
{
    c->run.plan = BENCH__PLAN_FIXED;
    c->run.fixed_iters = plan; /* {1, N, 2N}: a worker fills it in, the manager sizes by it */
    c->run.nfixed = 3;
    c->run.fixed_warm_up = true;
    c->run.processes = 1; /* counts are exact: one process per benchmark */
    /* Valgrind runs a program 20-50 times slower: a worker under it gets 50 times the
     * default time limit unless --timeout says otherwise. */
    if (!(c->run.timeout_s > 0))
        c->run.timeout_s = 50 * BENCH__DEFAULT_TIMEOUT;
}

static int instr_setup(bench__request *c, bool worker, char *msg, size_t msglen)
{
    common_setup(c);
    return worker ? worker_setup(c, msg, msglen) : manager_setup(c, msg, msglen);
}

static void instr_teardown(bench__request *c)
{
    c->run.nprobes = 0;
    c->run.nlauncher = 0;
    if (dump_dir[0]) {
        bench__remove_tree(dump_dir);
        unsetenv(DIR_ENV);
        dump_dir[0] = '\0';
    }
}

#endif /* the mode is available */

const bench__client bench__instr_client = {
    .mode = BENCH__INSTR_MODE,
    .save_with = "--instructions ",
    .method = "instructions per iteration, exact",
    .mismatch = "holds times, not instruction counts: compare it without --instructions, "
                "or save one with --instructions --save-baseline NAME",
    .times = false,
    .configure = instr_configure,
    .setup = instr_setup,
    .teardown = instr_teardown,
    .announce = instr_announce,
    .estimate = instr_estimate,
    .compare = instr_compare,
    .compare_saved = instr_compare_saved,
    .pretty = instr_pretty,
    .show_change = instr_show_change,
};
