/*
 * ab.c: the paired comparison of two programs, benchmark by benchmark: `--ab OLD` (this program
 * against another build of the same suite), and the interleaved run that confirms a suspect
 * verdict of a saved-baseline comparison against the baseline's program snapshot.
 *
 * Why paired. Most of a benchmark's variance on a shared machine lies between processes and
 * between moments: which CPU a process runs on and what shares it, where its code and data land,
 * the machine's load in that second. Two runs a minute apart differ by several percent for that
 * alone. Here the two programs' worker processes run side by side and take turns at a fine grain,
 * so every disturbance hits both alike and cancels in their ratio instead of widening it:
 *   - A pair: one worker process of each program (the one worker protocol of protocol.h, plan
 *     "driven": the job in BENCH_WORKER_JOB, each sample commanded on its stdin as "R n", its
 *     time back on descriptor 3 as "T ns"). Both do their benchmark's setup, then run
 *     samples of the same iteration count (samples of about 0.5 ms, short enough that most escape
 *     another process's time slice) in rounds of ABBA then BAAB; a round gives ln(median B / median
 *     A) over its four samples each, the pair the median of its rounds (robust to disturbed samples
 *     and rounds).
 *   - Place (the schedule): by default both workers of a pair are pinned to the same CPU, taking
 *     turns on it, and successive pairs go round the CPUs this process may use. What one CPU's
 *     neighbours do then hits both programs; unpinned workers land on whichever CPU is free
 *     and measured pair-to-pair spreads 3-20x larger here. "duet" runs A and B at the same moment
 *     on two CPUs and swaps them (Bulej et al.); "unpinned" is the scheduler's choice.
 *   - Layout: each worker draws its own stack, heap and environment offsets (layout.c), so the
 *     placement luck of a process is a random effect that averages out over pairs rather than a
 *     fixed difference between two builds whose names and constants differ.
 *   - The pairs are the independent units: one t statistic over them (bench__ab_stats).
 *
 * Time where it is needed. The comparison has a budget (seconds per benchmark times the
 * benchmarks) and spends it on the benchmarks still undecided: one pair of each undecided
 * benchmark in turn, so they spread over the same minutes, and each is looked at when its pairs
 * reach the next of a fixed schedule of looks (6, 9, 14, 21, 32 pairs by default). A benchmark
 * stops at the first look that decides it, either way (regressed, improved, no change, within
 * noise; verdict.c). The error stays controlled under this optional stopping because every
 * interval is at the level 1 - alpha / (benchmarks x looks): by the union bound, the chance that
 * any interval at any look misses its true change is at most alpha, whenever one stops
 * (tests/unit/test_ab_stats.c checks the coverage by simulation). When the budget runs out, a
 * benchmark still undecided is decided at the pairs it has (one of its looks), and is
 * "inconclusive" when even then its interval reaches beyond the noise threshold, with the
 * smallest change the run could have detected. The budget is one: a pair starts only when the
 * time left holds it; a benchmark of the same code on both sides gets no verdict and stops at its
 * first look; one that even its share of the time left could not decide stops at a look as
 * futile (bench__verdict_futile); and without --ab-pairs one still open after its last
 * scheduled look goes on to one more look when the budget is spent, so the time the others did
 * not use goes to it.
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/compare.h"
#include "core/base.h"
#include "core/registry.h"
#include "sys/progress.h"
#include "report/report_compare.h"
#include "run/ab.h"
#include "measure/layout.h"
#include "measure/protocol.h"
#include "measure/trace.h"
#include "measure/run.h"
#include "stats/stats.h"
#include "store/store.h"
#include "sys/clock.h"
#include "sys/code_id.h"
#include "sys/proc.h"


/* ---- the statistics of one benchmark ---- */

void bench__ab_stats(const double *pair_log, size_t n, double tests, const bench__compare_opts *o,
                     bench__change *c)
{
    memset(c, 0, sizeof *c);
    c->p = c->p_adjusted = 1.0;
    c->verdict = BENCH__V_INCOMPARABLE;
    if (n < 2)
        return;
    double sd = bench__std_dev(pair_log, n);
    bench__decide(c, bench__mean(pair_log, n), sd / sqrt((double)n), (double)(n - 1), tests, o);
    c->run_noise = sd;
    c->interleaved = true;
}

size_t bench__ab_looks(int max_pairs, size_t *looks, size_t cap)
{
    size_t k = 0, n = BENCH__AB_FIRST_LOOK < max_pairs ? BENCH__AB_FIRST_LOOK : (size_t)max_pairs;
    while (k < cap) {
        looks[k++] = n;
        if (n >= (size_t)max_pairs)
            break;
        size_t next = (size_t)ceil((double)n * BENCH__AB_LOOK_GROWTH);
        n = next < (size_t)max_pairs ? next : (size_t)max_pairs;
    }
    return k;
}

bench__ab_step bench__ab_look(const double *pair_log, size_t n, bool last, bool same_code,
                              double reach, double tests, const bench__compare_opts *o,
                              bench__change *c)
{
    bench__ab_stats(pair_log, n, tests, o, c);
    if (last || same_code || bench__verdict_decided(c->verdict))
        return BENCH__AB_DECIDED;
    if (reach > 0 && bench__verdict_futile(c, c->run_noise, n, reach, o))
        return BENCH__AB_FUTILE;
    return BENCH__AB_GO_ON;
}

double bench__ab_reach(size_t pairs, double left_ns, double cost_ns, size_t open)
{
    if (!(cost_ns > 0) || !(left_ns > 0))
        return (double)pairs;
    return (double)pairs + floor(left_ns / (cost_ns * (double)(open ? open : 1)));
}

bool bench__ab_affords(double left_ns, double cost_ns)
{
    return left_ns > 0 && left_ns >= cost_ns;
}

void bench__ab_pair_order(bench__rng *rng, size_t pair, int *first, int *stop_first)
{
    *first = pair == 0 ? 1 : (int)(bench__rng_next(rng) >> 63);
    *stop_first = (int)(bench__rng_next(rng) >> 63);
}

const char *bench__ab_schedule_name(bench__ab_schedule s)
{
    return s == BENCH__AB_DUET ? "duet" : s == BENCH__AB_UNPINNED ? "unpinned" : "pinned";
}

/* ---- one benchmark's pairs ---- */

typedef struct ab_bench {
    bench__ab_item *item;
    bool done;
    bool same;         /* its code is the same on both sides: no verdict, one look */
    size_t look;       /* index of the next look */
    double *pair_log;  /* per pair: median over its rounds of ln(B/A) */
    double *pair_a_ns; /* per pair: median of A's samples, ns per iteration */
    size_t cap;
    size_t started;    /* pairs of it started: which side starts first, and on which CPU */
    size_t index;      /* its place in the comparison */
} ab_bench;

typedef struct ab_run {
    const char *prog[2]; /* 0: A (old), 1: B (new) */
    int fd[2];           /* each side's executable when started from a descriptor, else -1 */
    const bench__ab_options *o;
    int *cpus;           /* the CPUs this process may use */
    size_t ncpus;
    bench__rng rng;      /* layouts, and which side of a pair starts and stops first */
    FILE *samples;       /* the sample log, or NULL */
    double sample_ns;    /* ns */
    double pair_ns;      /* a pair's share of the budget, ns */
    int64_t end_ns;      /* when the whole budget is spent (bench__now_ns clock) */
    double tests;        /* benchmarks that may get a verdict x looks */
    size_t looks[16];
    size_t nlooks;
} ab_run;

/* The median of four values: the mean of the middle two. */
static double median4(const double v[4])
{
    double a = fmin(v[0], v[1]), b = fmax(v[0], v[1]);
    double c = fmin(v[2], v[3]), d = fmax(v[2], v[3]);
    return 0.5 * (fmax(a, c) + fmin(b, d));
}

/* Writes one sample to the sample log (BENCH_AB_SAMPLES), when there is one. */
static void log_sample(ab_run *run, const char *id, size_t pair, int side, int k, double ns)
{
    if (run->samples)
        fprintf(run->samples, "%s %zu %c %d %.1f\n", id, pair, side ? 'B' : 'A', k, ns);
}

/*
 * One round: four samples of A (0) and four of B (1), ABBA then BAAB one at a time on one CPU,
 * or in a duet both at once, each on the other CPU in turn. Its value is ln(median B / median
 * A): a sample that an interrupt or another process's time slice stretched (on a busy machine,
 * one in several) moves neither median, where it would move a sum. A's samples (ns per
 * iteration) are appended to a_ns.
 */
static int one_round(ab_run *run, bench__proc w[2], const char *id, size_t pair,
                     uint64_t iters, int64_t deadline, double *value, double *a_ns, size_t *na,
                     int *bad)
{
    static const int order[8] = {0, 1, 1, 0, 1, 0, 0, 1};
    double v[2][4];
    int cnt[2] = {0, 0}, rc = 0;
    if (run->o->schedule == BENCH__AB_DUET && run->ncpus >= 2) {
        /* A on the first CPU and B on the second, then swapped, then swapped back: ABBA over
         * the two CPUs. */
        static const int a_on[4] = {0, 1, 1, 0};
        for (int k = 0; k < 4 && rc == 0; k++) {
            bench__ab_pin(w[0].pid, run->cpus[a_on[k]]);
            bench__ab_pin(w[1].pid, run->cpus[1 - a_on[k]]);
            for (int s = 0; s < 2 && rc == 0; s++)
                if ((rc = bench__ab_worker_send(&w[s], iters)))
                    *bad = s;
            for (int s = 0; s < 2 && rc == 0; s++)
                if ((rc = bench__ab_worker_read(&w[s], deadline, &v[s][k])) == 0)
                    log_sample(run, id, pair, s, k, v[s][k]);
                else
                    *bad = s;
        }
    } else {
        for (int k = 0; k < 8 && rc == 0; k++) {
            int s = order[k];
            double t;
            if ((rc = bench__ab_worker_sample(&w[s], iters, deadline, &t))) {
                *bad = s;
                break;
            }
            v[s][cnt[s]++] = t;
            log_sample(run, id, pair, s, k, t);
        }
    }
    if (rc != 0)
        return rc;
    for (int k = 0; k < 4; k++)
        a_ns[(*na)++] = v[0][k] / (double)iters;
    double ma = median4(v[0]), mb = median4(v[1]);
    *value = ma > 0 && mb > 0 ? log(mb / ma) : NAN;
    return 0;
}

/* Says in the item why a pair failed in the middle (worker w of program prog, error rc of its
 * samples). Returns the pair's error: BENCH_EIO (a malformed line is not the "lacks the
 * benchmark" BENCH_EINVAL of bench__ab_worker_start: the pair fails like any other). */
static int pair_failed(const ab_run *run, bench__proc *w, const char *prog, int rc,
                       bench__ab_item *it)
{
    if (rc == BENCH_EINVAL) {
        bench__msg(it->message, sizeof it->message, "the worker of %s answered a sample with "
                                                    "a line that is not its time (a malformed "
                                                    "line) in the middle of the comparison",
                   prog);
        return BENCH_EIO;
    }
    /* Which side stopped, and how. */
    bench__proc_wait(w, bench__now_ns() + (int64_t)1e9);
    char how[128];
    bench__proc_describe(w, run->o->timeout_s, how, sizeof how);
    bench__msg(it->message, sizeof it->message, "the worker of %s %s in the middle of the "
                                                "comparison", prog, how);
    return rc;
}

/* Runs one pair of benchmark b. Returns 0 (a pair value added, or none when no round fit),
 * BENCH_EUSAGE when interrupted, or another error with the reason in the item. */
static int one_pair(ab_run *run, ab_bench *b)
{
    bench__ab_item *it = b->item;
    const bench__ab_options *o = run->o;
    /* Counted per benchmark: with the benchmarks taken in turn, a count over the whole
     * comparison would keep the same parity for a benchmark through all its pairs, so the same
     * side would always start first and the same CPU take every pair of it. */
    size_t p = b->started++;
    int cpu = o->schedule == BENCH__AB_PINNED && run->ncpus > 0
                  ? run->cpus[(p + b->index) % run->ncpus]
                  : -1;
    if (o->schedule == BENCH__AB_DUET && run->ncpus >= 2)
        cpu = run->cpus[0];
    bench__layout lay[2] = {{0}, {0}};
    if (!o->fixed_layout) {
        bench__layout_draw(&run->rng, &lay[0]);
        bench__layout_draw(&run->rng, &lay[1]);
    }
    bench__proc w[2];
    memset(w, 0, sizeof w);
    int first, stop_first;
    bench__ab_pair_order(&run->rng, p, &first, &stop_first);
    int rc = bench__ab_worker_start(&w[first], run->prog[first], run->fd[first], it->id, &lay[first], cpu,
                          o->timeout_s, it->message, sizeof it->message);
    if (rc == 0 && (rc = bench__ab_worker_start(&w[1 - first], run->prog[1 - first], run->fd[1 - first],
                                      it->id, &lay[1 - first], cpu, o->timeout_s, it->message,
                                      sizeof it->message)) != 0)
        bench__proc_kill(&w[first]);
    if (rc != 0)
        return rc;
    int64_t t0 = bench__now_ns();
    double value;
    int bad = 1;
    /* Every wait has a deadline: a worker that hangs in a sample is killed at --timeout. */
#define DEADLINE (bench__now_ns() + (int64_t)(o->timeout_s * 1e9))
    if (it->iters == 0)
        rc = bench__ab_worker_calibrate(&w[1], run->sample_ns, o->timeout_s, &it->iters);
    /* The fresh pair's warm-up, discarded: one round. */
    double *logs = NULL, *a_ns = NULL;
    size_t nr = 0, na = 0, tried = 0, cap = 64;
    logs = malloc(cap * sizeof *logs);
    a_ns = malloc(4 * cap * sizeof *a_ns);
    if (!logs || !a_ns) {
        rc = BENCH_ENOMEM;
        bench__msg(it->message, sizeof it->message, "out of memory");
    }
    if (rc == 0)
        rc = one_round(run, w, it->id, p, it->iters, DEADLINE, &value, a_ns, &na, &bad);
    na = 0;
    /* The pair measures for its share of the budget, and on for BENCH__AB_MIN_ROUNDS rounds
     * with a value (both medians positive) while the comparison's budget lasts: its value is
     * their median. A program whose rounds never have one (it answers "T 0") ends with the
     * budget, not never. */
    int64_t start = bench__now_ns();
    while (rc == 0 && ((double)(bench__now_ns() - start) < run->pair_ns ||
                       (nr < BENCH__AB_MIN_ROUNDS && bench__now_ns() < run->end_ns))) {
        /* Each round tried adds four of A's samples, with a value or not. */
        if (tried == cap) {
            double *l2 = realloc(logs, 2 * cap * sizeof *logs);
            double *a2 = l2 ? realloc(a_ns, 8 * cap * sizeof *a_ns) : NULL;
            if (l2)
                logs = l2;
            if (!l2 || !a2) {
                rc = BENCH_ENOMEM;
                bench__msg(it->message, sizeof it->message, "out of memory");
                break;
            }
            a_ns = a2;
            cap *= 2;
        }
        rc = one_round(run, w, it->id, p, it->iters, DEADLINE, &value, a_ns, &na, &bad);
        tried++;
        if (rc == 0 && isfinite(value))
            logs[nr++] = value;
    }
#undef DEADLINE
    if (rc == BENCH_EUSAGE || bench__proc_interrupted()) {
        bench__proc_kill(&w[0]);
        bench__proc_kill(&w[1]);
        free(logs);
        free(a_ns);
        return BENCH_EUSAGE;
    }
    if (rc != 0 && rc != BENCH_ENOMEM)
        rc = pair_failed(run, &w[bad], run->prog[bad], rc, it);
    bench__ab_worker_stop(&w[stop_first], o->timeout_s);
    bench__ab_worker_stop(&w[1 - stop_first], o->timeout_s);
    /* A pair the budget cut short of its minimum rounds is not one: every pair's value is a
     * median of at least BENCH__AB_MIN_ROUNDS rounds. */
    if (rc == 0 && nr >= BENCH__AB_MIN_ROUNDS) {
        if (b->cap == (size_t)it->pairs) {
            size_t nc = b->cap ? 2 * b->cap : 16;
            double *pl = realloc(b->pair_log, nc * sizeof *pl);
            double *pa = pl ? realloc(b->pair_a_ns, nc * sizeof *pa) : NULL;
            if (pl)
                b->pair_log = pl;
            if (!pl || !pa) {
                free(logs);
                free(a_ns);
                bench__msg(it->message, sizeof it->message, "out of memory");
                return BENCH_ENOMEM;
            }
            b->pair_a_ns = pa;
            b->cap = nc;
        }
        b->pair_log[it->pairs] = bench__median_inplace(logs, nr);
        b->pair_a_ns[it->pairs] = bench__median_inplace(a_ns, na);
        it->pairs++;
        it->rounds += nr;
    }
    it->seconds += (double)(bench__now_ns() - t0) / 1e9;
    free(logs);
    free(a_ns);
    return rc;
}

/* Looks at benchmark b at the pairs it has (bench__ab_look: `last` its last look, `reach` the
 * pairs the budget could still give it, 0 none) and fills its item's numbers. */
static bench__ab_step decide(ab_run *run, ab_bench *b, bool last, double reach)
{
    bench__ab_item *it = b->item;
    bench__compare_opts copt = {.significance_level = run->o->significance_level,
                                .noise_threshold = run->o->noise_threshold};
    bench__ab_step step = bench__ab_look(b->pair_log, it->pairs, last, b->same, reach, run->tests,
                                         &copt, &it->change);
    if (it->pairs >= 1) {
        /* A's time per iteration: the geometric mean of its pairs' medians; B's is A's times
         * the estimated ratio, so the two figures shown are the estimate's own. */
        double s = 0;
        for (size_t i = 0; i < it->pairs; i++)
            s += log(b->pair_a_ns[i]);
        it->change.old_median = exp(s / (double)it->pairs);
        it->change.new_median = it->change.old_median * it->change.ratio;
    }
    it->pair_sd = it->pairs >= 2 ? bench__std_dev(b->pair_log, it->pairs) : NAN;
    it->futile = step == BENCH__AB_FUTILE;
    it->reach = reach;
    return step;
}

/* Whether item it's code identity is known and the same in both programs. */
static bool same_code(const bench__ab_item *it)
{
    return it->old_code[0] && strcmp(it->old_code, it->new_code) == 0;
}

/* The looks of a comparison into looks[0..cap): the schedule up to max_pairs and, without
 * --ab-pairs, one more when the budget is spent (SIZE_MAX: no pair count reaches it), for a
 * benchmark still open at the last scheduled one. Returns how many. */
static size_t comparison_looks(const bench__ab_options *o, size_t *looks, size_t cap)
{
    size_t n = bench__ab_looks(o->max_pairs, looks, cap - 1);
    if (!o->pairs_capped)
        looks[n++] = SIZE_MAX;
    return n;
}

/* The benchmarks of items[0..n) that may get a verdict: not those of the same code on both
 * sides, which get none. */
static size_t judged_count(const bench__ab_item *items, size_t n)
{
    size_t judged = 0;
    for (size_t i = 0; i < n; i++)
        judged += !same_code(&items[i]);
    return judged;
}

/* The tests of the family (Bonferroni): the benchmarks that may get a verdict times the looks,
 * at least 1. */
static double family_tests(const bench__ab_item *items, size_t n, size_t nlooks)
{
    size_t judged = judged_count(items, n);
    return (double)(judged ? judged : 1) * (double)(nlooks ? nlooks : 1);
}

/* The CPUs this process may run on, in order (none: pinning is off). */
static size_t allowed_cpus(int **out)
{
    cpu_set_t set;
    *out = NULL;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    int n = CPU_COUNT(&set);
    int *cpus = malloc((size_t)(n > 0 ? n : 1) * sizeof *cpus);
    if (!cpus)
        return 0;
    size_t k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < (size_t)n; c++)
        if (CPU_ISSET(c, &set))
            cpus[k++] = c;
    *out = cpus;
    return k;
}

/* The file BENCH_AB_SAMPLES names, opened to append every sample to it, for whoever wants to
 * look at them (docs/cli.md, environment); NULL when it is not set or cannot be opened (then
 * with a warning). */
static FILE *open_sample_log(void)
{
    const char *log_path = getenv("BENCH_AB_SAMPLES");
    if (!log_path || !*log_path)
        return NULL;
    /* A FIFO or a device would block or swallow the samples: a regular file only. */
    char why[4400], shown[4 * sizeof why];
    int fd;
    FILE *f = NULL;
    if (bench__open_append(log_path, &fd, why, sizeof why) == 0 && !(f = fdopen(fd, "a"))) {
        bench__msg(why, sizeof why, "%s: %s", log_path, strerror(errno));
        close(fd);
    }
    if (!f)
        bench__errf("warning: BENCH_AB_SAMPLES: %s; no samples are logged\n",
                    bench__escape(shown, sizeof shown, why));
    return f;
}

/* One budget: beyond the pairs of its first look, a pair of b starts only when the time left
 * holds one more at its cost so far (ns); those of the first look start while any time is
 * left, so that a short budget still gives each benchmark what pairs it can (overrunning by at
 * most one pair, as a fixed budget would). True when b may start no more pairs. */
static bool budget_spent(const ab_run *run, const ab_bench *b, double cost)
{
    double left = (double)(run->end_ns - bench__now_ns());
    return b->item->pairs < run->looks[0] ? !(left > 0) : !bench__ab_affords(left, cost);
}

/* Every item's outcome cleared before a comparison fills it. */
static void clear_item(bench__ab_item *it)
{
    it->change.verdict = BENCH__V_INCOMPARABLE;
    it->rc = 0;
    it->message[0] = '\0';
    it->pairs = it->rounds = 0;
    it->iters = 0;
    it->seconds = 0;
    it->futile = false;
    it->reach = 0;
}

int bench__ab_compare(const char *old_prog, int old_fd, const char *new_prog, int new_fd,
                      bench__ab_item *items, size_t n, const bench__ab_options *o,
                      bench__ab_done_fn done, void *arg)
{
    bench__proc_interrupts_install();
    ab_run run;
    memset(&run, 0, sizeof run);
    run.prog[0] = old_prog;
    run.prog[1] = new_prog;
    run.fd[0] = old_fd;
    run.fd[1] = new_fd;
    run.o = o;
    run.ncpus = allowed_cpus(&run.cpus);
    const bench__clock_info *clk = bench__clock_calibrate();
    run.sample_ns = fmax(o->sample_ms * 1e6, clk->min_sample_ns);
    run.samples = open_sample_log();
    /* Half the most pairs fill the average budget: a benchmark that needs them all takes the
     * time that the quickly decided ones leave. */
    run.pair_ns = o->seconds * 1e9 * 2.0 / (double)(o->max_pairs > 0 ? o->max_pairs : 1);
    run.nlooks = comparison_looks(o, run.looks, sizeof run.looks / sizeof run.looks[0]);
    run.tests = family_tests(items, n, run.nlooks);
    bench__rng_seed(&run.rng, o->seed ^ 0xab5eedULL);
    ab_bench *bs = calloc(n ? n : 1, sizeof *bs);
    if (!bs) {
        free(run.cpus);
        return BENCH_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        bs[i].item = &items[i];
        bs[i].index = i;
        bs[i].same = same_code(&items[i]);
        clear_item(&items[i]);
    }
    int64_t start = bench__now_ns();
    double budget_ns = o->seconds * 1e9 * (double)n;
    run.end_ns = start + (int64_t)budget_ns;
    bench__progress line; /* the budget is the most the comparison can take */
    bench__progress_start(&line, o->progress, n, budget_ns * 1e-9, true);
    int rc = 0;
    size_t open = n;
    for (unsigned cycle = 0; open > 0 && rc == 0; cycle++) {
        for (size_t t = 0; t < n && rc == 0; t++) {
            /* Odd cycles go backwards, so no benchmark always follows the same one. */
            ab_bench *b = &bs[cycle % 2 ? n - 1 - t : t];
            if (b->done)
                continue;
            bench__ab_item *it = b->item;
            double cost = b->started ? it->seconds * 1e9 / (double)b->started : run.pair_ns;
            bool over = budget_spent(&run, b, cost);
            if (!over) {
                bench__progress_step(&line, n - open, "benchmark %zu of %zu, pair %zu, %zu "
                                     "undecided", (size_t)(b - bs) + 1, n, it->pairs + 1, open);
                bench__trace_beginf("A/B pair %zu: %s", it->pairs + 1, it->id); /* --trace */
                int prc = one_pair(&run, b);
                bench__trace_end();
                if (prc == BENCH_EUSAGE) {
                    rc = BENCH_EUSAGE;
                    break;
                }
                if (prc != 0) {
                    it->rc = prc == BENCH_ENOMEM ? BENCH_EIO : prc;
                    b->done = true;
                    open--;
                    bench__progress_clear(&line);
                    if (done)
                        done(it, arg);
                    continue;
                }
                cost = it->seconds * 1e9 / (double)b->started;
            }
            /* The next look: at its scheduled pair count; unless --ab-pairs caps the pairs, a
             * benchmark still open after the last scheduled one goes on (taking the time the
             * settled ones left) to one more look when the budget is spent; any look, when the
             * budget is spent, is its last. */
            size_t k = b->look;
            bool last = k + 1 >= run.nlooks;
            bool due = k < run.nlooks && it->pairs >= run.looks[k];
            if (due || over) {
                /* What it could still reach: never less than the schedule's most pairs, which
                 * a comparison without the rule would have given it (the simulation's cap), nor,
                 * without --ab-pairs, less than its share of the time left. */
                double reach = 0;
                if (!over && !last)
                    reach = o->pairs_capped
                                ? (double)o->max_pairs
                                : fmax((double)o->max_pairs,
                                       bench__ab_reach(it->pairs,
                                                       (double)(run.end_ns - bench__now_ns()),
                                                       cost, open));
                b->look = k + 1 < run.nlooks ? k + 1 : run.nlooks;
                it->looks = b->look;
                if (decide(&run, b, over || last, reach) != BENCH__AB_GO_ON) {
                    if (it->pairs < 2)
                        bench__msg(it->message, sizeof it->message,
                                   "fewer than 2 worker pairs measured a round (raise the time "
                                   "given to the comparison)");
                    b->done = true;
                    open--;
                    bench__progress_clear(&line);
                    if (done)
                        done(it, arg);
                }
            }
        }
    }
    bench__progress_finish(&line);
    for (size_t i = 0; i < n; i++) {
        free(bs[i].pair_log);
        free(bs[i].pair_a_ns);
    }
    free(bs);
    free(run.cpus);
    if (run.samples)
        fclose(run.samples);
    return rc;
}

/* ---- --ab: this program against another build ---- */

typedef struct ab_print {
    bool color;
    double threshold; /* the noise threshold T, relative */
    int exit_code;
} ab_print;

/* Prints one benchmark's outcome (report/report_compare.c) as soon as it is decided. */
static void print_item(bench__ab_item *it, void *arg)
{
    ab_print *pr = arg;
    const char *why = NULL;
    if (it->rc != 0 || it->change.verdict == BENCH__V_INCOMPARABLE) {
        it->change.verdict = it->rc == BENCH_EUNAVAIL ? BENCH__V_SKIPPED
                             : it->rc == BENCH_EINVAL ? BENCH__V_NEW
                                                      : BENCH__V_INCOMPARABLE;
        why = it->message[0] ? it->message : "no rounds";
        if (it->rc == BENCH_EIO)
            pr->exit_code = BENCH_EXIT_FAILED;
    } else {
        /* The same code on both sides is never called regressed or improved. */
        (void)bench__verdict_same_code(&it->change, it->old_code, it->new_code);
    }
    bench__paired_stats st = {.pairs = it->pairs,
                              .rounds = it->rounds,
                              .pair_sd = it->pair_sd,
                              .iters = (unsigned long long)it->iters,
                              .seconds = it->seconds,
                              .futile = it->futile,
                              .looks = it->looks,
                              .reach = it->reach,
                              .threshold = pr->threshold};
    bench__print_paired_item(stdout, it->id, &it->change, why, &st, pr->color);
    fflush(stdout);
}

/* --json FILE: the summary's rows ids/ch[0..rows) with what the items[0..m) measured of each
 * (their pairs, and why one was not compared, as print_item reported it). 0, or an error, said
 * on stderr. */
static int write_json(const bench__ab_options *o, const char *old_prog, const char *new_prog,
                      const bench__ab_item *items, size_t m, const char **ids,
                      const bench__change *ch, size_t rows)
{
    bench__ab_outcome *out = calloc(rows ? rows : 1, sizeof *out);
    char msg[4400];
    int rc = BENCH_ENOMEM;
    bench__msg(msg, sizeof msg, "%s: out of memory", o->json_path);
    for (size_t i = 0; out && i < rows; i++) {
        out[i] = (bench__ab_outcome){.id = ids[i], .change = &ch[i]};
        for (size_t j = 0; j < m; j++) {
            if (strcmp(items[j].id, ids[i]) != 0)
                continue;
            out[i].pairs = items[j].pairs;
            if (!bench__verdict_has_numbers(ch[i].verdict))
                out[i].why = items[j].message[0] ? items[j].message : "no rounds";
        }
    }
    if (out)
        rc = bench__ab_json_write(o->json_path, old_prog, new_prog, o->noise_threshold,
                                  o->significance_level, out, rows, msg, sizeof msg);
    if (rc != 0) {
        char shown[4 * sizeof msg];
        bench__errf("%s\n", bench__escape(shown, sizeof shown, msg));
    }
    free(out);
    return rc;
}

int bench__ab_run(const char *other, const bench__instance *all, const bool *selected, size_t n,
                  const bench__ab_options *o, const bench__gate *gate, bool color)
{
    char self[4096], why[512];
    if (bench__proc_self(self, sizeof self, why, sizeof why) != 0) {
        bench__errf("--ab: %s\n", why);
        return BENCH_EXIT_USAGE;
    }
    if (access(other, X_OK) != 0) {
        bench__errf("--ab: '%s' is not an executable program: %s\n", other,
                    strerror(errno));
        return BENCH_EXIT_USAGE;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += selected[i];
    size_t rows = m + o->nremoved;
    bench__ab_item *items = calloc(m ? m : 1, sizeof *items);
    bench__change *ch = calloc(rows ? rows : 1, sizeof *ch);
    const char **ids = calloc(rows ? rows : 1, sizeof *ids);
    if (!items || !ch || !ids) {
        free(items);
        free(ch);
        free(ids);
        bench__errf("out of memory\n");
        return BENCH_EXIT_USAGE;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (selected[i]) {
            items[k].id = all[i].id;
            bench__code_hash(o->old_code, all[i].id, items[k].old_code);
            bench__code_hash(o->new_code, all[i].id, items[k++].new_code);
        }
    size_t looks[16];
    size_t nlooks = comparison_looks(o, looks, sizeof looks / sizeof looks[0]);
    char sched[128] = "";
    for (size_t i = 0; i < nlooks && looks[i] != SIZE_MAX; i++)
        bench__msg(sched + strlen(sched), sizeof sched - strlen(sched), "%s%zu", i ? ", " : "",
                   looks[i]);
    bench__msg(sched + strlen(sched), sizeof sched - strlen(sched), " pairs%s",
               looks[nlooks - 1] == SIZE_MAX ? " and when the budget is spent" : "");
    double tests = family_tests(items, m, nlooks);
    size_t judged = judged_count(items, m);
    /* The looks and the family: of the benchmarks that may get a verdict; when none may (every
     * benchmark the same code in both), there is no family to correct over, and the header says
     * so instead of a Bonferroni over 0 benchmarks. */
    char family[256], same[96] = "";
    if (judged < m)
        bench__msg(same, sizeof same, "; %zu of the same code in both: no verdict, one look",
                   m - judged);
    if (judged == 0 && m > 0)
        bench__msg(family, sizeof family, "every benchmark the same code in both (%zu): no "
                   "verdict, one look each; intervals at %.4g", m,
                   1.0 - o->significance_level / tests);
    else
        bench__msg(family, sizeof family, "looks at %s; intervals at %.4g (Bonferroni over %zu "
                   "benchmark%s x %zu look%s%s)", sched, 1.0 - o->significance_level / tests,
                   judged, judged == 1 ? "" : "s", nlooks, nlooks == 1 ? "" : "s", same);
    printf("Paired A/B: A (old) = %s\n            B (new) = %s\n", other, self);
    printf("%.1f s per benchmark on average (%.0f s in all), spent on the undecided ones; pairs "
           "%s, both workers of a pair %s; %s; %s\n\n",
           o->seconds, o->seconds * (double)m, o->schedule == BENCH__AB_PINNED ? "pinned"
                                               : o->schedule == BENCH__AB_DUET ? "in a duet"
                                                                              : "unpinned",
           o->schedule == BENCH__AB_PINNED ? "on one CPU, taking turns"
           : o->schedule == BENCH__AB_DUET ? "running at once on two CPUs, swapped"
                                           : "taking turns where the scheduler puts them",
           o->fixed_layout ? "layouts fixed" : "random layout per worker", family);
    fflush(stdout);
    ab_print pr = {.color = color, .threshold = o->noise_threshold,
                   .exit_code = BENCH_EXIT_OK};
    int rc = bench__ab_compare(other, -1, self, -1, items, m, o, print_item, &pr);
    /* --explain: the changed benchmarks' functions, before the summary (explain.c); it fails
     * only when interrupted. */
    bool stopped = rc == BENCH_EUSAGE || bench__proc_interrupted() ||
                   (o->after && o->after(other, self, items, m, o->after_arg) != 0);
    if (stopped) {
        bench__errf("interrupted by %s: stopped the worker processes\n",
                    bench__signal_name(bench__proc_interrupted()));
        free(items);
        free(ch);
        free(ids);
        return 128 + bench__proc_interrupted();
    }
    for (size_t i = 0; i < m; i++) {
        ids[i] = items[i].id;
        ch[i] = items[i].change;
    }
    /* The old build's benchmarks (for the same FILTERs) that this one lacks. */
    for (size_t i = 0; i < o->nremoved; i++) {
        ids[m + i] = o->removed[i];
        ch[m + i].verdict = BENCH__V_REMOVED;
    }
    bench__compare_opts copt = {.significance_level = o->significance_level,
                                .noise_threshold = o->noise_threshold};
    /* In the summary's order, so that the strict messages come in it too. No context: A and B
     * ran side by side on one machine, so no change of it can be blamed. */
    (void)bench__sort_changes(ids, ch, rows);
    bench__print_compare_summary(stdout, "A, the old build", ids, ch, rows, &copt,
                                 "paired, Bonferroni", NULL, color);
    int cmp_exit = bench__compare_exit(ids, ch, rows, gate, "A, the old build");
    int exit_code = pr.exit_code == BENCH_EXIT_OK ? cmp_exit : pr.exit_code;
    if (o->json_path && write_json(o, other, self, items, m, ids, ch, rows) != 0 &&
        exit_code == BENCH_EXIT_OK)
        exit_code = BENCH_EXIT_USAGE;
    free(items);
    free(ch);
    free(ids);
    return exit_code;
}
