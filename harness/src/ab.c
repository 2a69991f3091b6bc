/*
 * ab.c: interleaved A/B measurement of two builds of the same suite (--ab OTHER).
 *
 * The coordinator (this process) runs no benchmark itself. For each benchmark it starts a pair
 * of worker processes, OTHER (A, the old build) and this program (B, the new build), each with
 * --ab-worker ID. A worker does the benchmark's untimed setup, then runs exactly the samples the
 * coordinator asks for over a pipe: "R n" runs one sample of n iterations and answers "T ns";
 * "Q" ends it. Both sides always run the same iteration counts, one at a time, in rounds of
 * ABBA then BAAB: drift, thermal state and neighbours hit both alike, and the penalty a sample
 * pays right after a process switch falls equally on both sides over each round. Each round
 * gives one ratio (sum of B over sum of A, 4 samples each). Pairs of workers are replaced a
 * few times per benchmark, so that placement in memory, which differs from process to process
 * and stays put within one, is sampled too rather than taken for the code.
 *
 * The test. Rounds of one pair share that pair's placement, so they are not independent draws;
 * the pairs are. Each pair therefore gives one number, the median of its rounds' ln(B/A), and one
 * one-sample t statistic over the pairs (pairs - 1 degrees of freedom) gives everything: the
 * estimate is their mean, the interval is the t interval at the family level 1 - alpha/m
 * (Bonferroni over the m benchmarks compared), the p-value is the same t test's, multiplied by m
 * (at most 1). So p < alpha exactly when the interval excludes no change, and the verdicts,
 * which read the interval, never contradict the p-value printed beside it.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare.h"
#include "base.h"
#include "options.h"
#include "probe.h"
#include "registry.h"
#include "result.h"
#include "run.h"
#include "stats.h"
#include "proc.h"

typedef bench__proc worker;

static void worker_kill(worker *w)
{
    bench__proc_kill(w);
}

/* Reads one line from a worker, waiting at most timeout_s (<= 0: the default --timeout); ""
 * at the end of its output, when it timed out (it is then killed) or when the run is
 * interrupted. */
static void worker_line(worker *w, char *buf, size_t len, double timeout_s)
{
    double t = timeout_s > 0 ? timeout_s : BENCH__DEFAULT_TIMEOUT;
    if (bench__proc_line(w, buf, len, bench__now_ns() + (int64_t)(t * 1e9)) != 1)
        buf[0] = '\0';
}

/* Starts `prog --ab-worker id` (from exec_fd when >= 0) and waits until its setup is done
 * ("READY"). */
static int worker_start(worker *w, const char *prog, int exec_fd, const char *id,
                        double timeout_s, char *msg, size_t msglen)
{
    char *argv[] = {(char *)prog, "--ab-worker", (char *)id, NULL};
    bench__proc_spec spec = {.path = prog, .argv = argv, .channel = BENCH__PROC_STDOUT,
                             .commands = true, .exec_by_fd = exec_fd >= 0, .exec_fd = exec_fd};
    if (bench__proc_start(w, &spec, msg, msglen) != 0)
        return BENCH_EIO;
    char line[640];
    worker_line(w, line, sizeof line, timeout_s);
    if (strcmp(line, "READY") == 0)
        return 0;
    if (w->end == BENCH__PROC_TIMED_OUT) {
        bench__msg(msg, msglen, "%s did not finish its setup within %g s (--timeout)", prog,
                   timeout_s > 0 ? timeout_s : BENCH__DEFAULT_TIMEOUT);
        worker_kill(w);
        return BENCH_EIO;
    }
    /* A benchmark the other build lacks is "new" (BENCH_EINVAL), one either build skips is
     * "skipped" (BENCH_EUNAVAIL); anything else is an error, so a gate never passes because
     * nothing could be measured. */
    int rc = BENCH_EINVAL;
    if (strcmp(line, "NOTFOUND") == 0)
        bench__msg(msg, msglen, "%s has no benchmark '%s'", prog, id);
    else if (strncmp(line, "END skipped ", 12) == 0) {
        rc = BENCH_EUNAVAIL;
        bench__msg(msg, msglen, "skipped in %s: %s", prog, line + 12);
    } else {
        rc = BENCH_EIO;
        if (strncmp(line, "END ", 4) == 0)
            bench__msg(msg, msglen, "in %s: %s", prog, line + 4);
        else
            bench__msg(msg, msglen, "%s stopped before its setup was done (crashed, or a build "
                                    "without --ab support?)", prog);
    }
    worker_kill(w);
    return rc;
}

static int worker_sample(worker *w, uint64_t iters, double *ns, double timeout_s)
{
    char line[640];
    snprintf(line, sizeof line, "R %llu", (unsigned long long)iters);
    if (bench__proc_send(w, line) != 0)
        return BENCH_EIO;
    worker_line(w, line, sizeof line, timeout_s);
    return sscanf(line, "T %lf", ns) == 1 && isfinite(*ns) && *ns >= 0 ? 0 : BENCH_EIO;
}

static void worker_stop(worker *w, double timeout_s)
{
    char line[640];
    if (bench__proc_send(w, "Q") == 0)
        worker_line(w, line, sizeof line, fmin(timeout_s > 0 ? timeout_s : 10.0, 10.0));
    bench__proc_wait(w, bench__now_ns() + (int64_t)10e9);
}

int bench__ab_worker_main(const bench__instance *all, size_t n, const char *id,
                          const bench__run_options *base)
{
    /* Our stdout is the pipe to the coordinator: nothing else may be printed on it. */
    const bench__instance *inst = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].id, id) == 0)
            inst = &all[i];
    if (!inst) {
        fputs("NOTFOUND\n", stdout);
        return BENCH_EXIT_OK;
    }
    bench__run_options opt = *base;
    opt.plan = BENCH__PLAN_DRIVEN;
    opt.worker_in = stdin;
    opt.worker_out = stdout;
    opt.progress = false;
    bench__result r;
    memset(&r, 0, sizeof r);
    bench__crash_handlers_install();
    bench__run_instance(inst, &opt, &r);
    const char *st = r.status == BENCH__OK ? "ok" : r.status == BENCH__SKIPPED ? "skipped"
                                                                               : "failed";
    fprintf(stdout, "END %s %s\n", st, r.message);
    fflush(stdout);
    bench__result_destroy(&r);
    return r.status == BENCH__FAILED ? BENCH_EXIT_FAILED : BENCH_EXIT_OK;
}

/* ---- statistics of one A/B comparison ---- */

void bench__ab_stats(const double *pair_log, size_t n, size_t m, const bench__compare_opts *o,
                     bench__change *c)
{
    memset(c, 0, sizeof *c);
    c->p = 1.0;
    c->p_adjusted = 1.0;
    c->verdict = BENCH__V_INCOMPARABLE;
    if (n < 2)
        return;
    if (m < 1)
        m = 1;
    double mean = bench__mean(pair_log, n);
    double se = bench__std_dev(pair_log, n) / sqrt((double)n);
    double df = (double)(n - 1);
    double tail = o->significance_level / (double)m; /* Bonferroni: alpha/m per benchmark */
    double tq = bench__t_quantile(1.0 - tail / 2.0, df);
    /* One statistic, t = mean/se, gives the p-value; the interval is the set of changes whose
     * own t would not be rejected at the same level. se == 0 (every pair agreed exactly): any
     * change other than 0 is certain, and 0 is no evidence either way. */
    double t = se > 0 ? mean / se : mean == 0 ? 0.0 : copysign(INFINITY, mean);
    c->p = bench__t_two_sided_p(t, df);
    c->p_adjusted = fmin(1.0, c->p * (double)m);
    double half = tq * se;
    double lo = mean - half, hi = mean + half;
    c->log_change = mean;
    c->log_se = se;
    c->run_noise = bench__std_dev(pair_log, n);
    c->interleaved = true;
    c->df = df;
    c->ratio = exp(mean);
    c->ratio_lower = exp(lo);
    c->ratio_upper = exp(hi);
    /* --ab's verdicts read the interval; "significant" is the same event as p_adjusted < alpha.
     * The whole interval must clear the threshold: two builds differ in code layout too, and a
     * bystander's real +1.9% [+0.7%, +3.1%] is not a regression at T = 1%. (A confirmation of a
     * saved-baseline suspect is classified by the saved-baseline rule instead: bench__ab_confirm.)
     */
    double tau = log1p(o->noise_threshold);
    if (lo > tau)
        c->verdict = BENCH__V_REGRESSED;
    else if (hi < -tau)
        c->verdict = BENCH__V_IMPROVED;
    else if (lo > 0 || hi < 0)
        c->verdict = BENCH__V_WITHIN_NOISE;
    else if (lo >= -tau && hi <= tau)
        c->verdict = BENCH__V_NO_CHANGE;
    else
        c->verdict = BENCH__V_AMBIGUOUS;
}

typedef struct ab_outcome {
    bench__change change;
    size_t rounds;
    size_t pairs;
    uint64_t iters;    /* per sample */
    double old_ns;     /* per iteration, median over A's samples */
    double new_ns;     /* per iteration, median over B's samples */
    double seconds;    /* wall time of the comparison */
    double pair_sd;    /* sd of the pairs' median ln(B/A) */
    char message[512]; /* why it was not compared */
} ab_outcome;

/* Runs one interleaved comparison; m is the number of benchmarks compared (Bonferroni). The
 * old program starts from old_fd when it is >= 0. */
static int ab_one(const char *old_prog, int old_fd, const char *new_prog, const char *id,
                  const bench__ab_options *o, size_t m, ab_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->change.verdict = BENCH__V_INCOMPARABLE;
    const bench__clock_info *clk = bench__clock_calibrate();
    int64_t t_start = bench__now_ns();
    size_t cap = 1 << 16;
    double *logs = malloc(cap * sizeof *logs); /* ln(B/A) of each round */
    double *a_ns = malloc(4 * cap * sizeof *a_ns), *b_ns = malloc(4 * cap * sizeof *b_ns);
    double *pair_log = malloc((size_t)o->pairs * sizeof *pair_log);
    size_t na = 0, nb = 0, nr = 0;
    int rc = 0;
    if (!logs || !a_ns || !b_ns || !pair_log) {
        bench__msg(out->message, sizeof out->message, "out of memory");
        rc = BENCH_ENOMEM;
        goto done;
    }
    double sample_ns = fmax(o->sample_ms * 1e6, clk->min_sample_ns);
    double pair_ns = o->seconds * 1e9 / o->pairs;
    uint64_t iters = 0;
    for (int p = 0; p < o->pairs && rc == 0; p++) {
        worker w[2]; /* 0: A (old), 1: B (new) */
        /* Alternate which side starts first, so neither always gets the fresher machine. B
         * (this build) starts first in the first pair: a benchmark it skips is "skipped" even
         * when the old build lacks it. */
        int first = (p + 1) % 2;
        const char *prog[2] = {old_prog, new_prog};
        const int fd[2] = {old_fd, -1};
        double to = o->timeout_s;
        if ((rc = worker_start(&w[first], prog[first], fd[first], id, to, out->message,
                               sizeof out->message)))
            break;
        if ((rc = worker_start(&w[1 - first], prog[1 - first], fd[1 - first], id, to,
                               out->message, sizeof out->message))) {
            worker_kill(&w[first]);
            break;
        }
        double t;
        if (iters == 0) {
            /* Calibrate the iteration count on B, then hold it for the whole comparison. */
            uint64_t n = 1;
            for (;;) {
                if ((rc = worker_sample(&w[1], n, &t, to)))
                    break;
                if (t >= sample_ns / 8 || n >= (UINT64_C(1) << 40))
                    break;
                n *= 2;
            }
            if (rc == 0) {
                double per = t > 0 ? t / (double)n : 1.0;
                double want = ceil(sample_ns / per);
                iters = want < 1 ? 1 : want > (double)(UINT64_C(1) << 40) ? UINT64_C(1) << 40
                                                                          : (uint64_t)want;
            }
        }
        /* Warm-up of the fresh pair, discarded: two samples each, in ABBA order. */
        int order_warm[4] = {0, 1, 1, 0};
        for (int k = 0; k < 4 && rc == 0; k++)
            rc = worker_sample(&w[order_warm[k]], iters, &t, to);
        int64_t pair_start = bench__now_ns();
        size_t first_round = nr;
        static const int order[8] = {0, 1, 1, 0, 1, 0, 0, 1}; /* ABBA then BAAB */
        while (rc == 0 && (double)(bench__now_ns() - pair_start) < pair_ns && nr < cap) {
            double sum[2] = {0, 0}, v;
            for (int k = 0; k < 8 && rc == 0; k++) {
                rc = worker_sample(&w[order[k]], iters, &v, to);
                sum[order[k]] += v;
                if (order[k] == 0 && na < 4 * cap)
                    a_ns[na++] = v / (double)iters;
                if (order[k] == 1 && nb < 4 * cap)
                    b_ns[nb++] = v / (double)iters;
            }
            if (rc == 0 && sum[0] > 0 && sum[1] > 0)
                logs[nr++] = log(sum[1] / sum[0]);
        }
        if (rc != 0)
            bench__msg(out->message, sizeof out->message, "%s",
                       w[0].end == BENCH__PROC_TIMED_OUT || w[1].end == BENCH__PROC_TIMED_OUT
                           ? "a worker did not answer within --timeout in the middle of the "
                             "comparison"
                           : "a worker stopped in the middle of the comparison (crashed?)");
        worker_stop(&w[0], to);
        worker_stop(&w[1], to);
        /* The pair's one number: the median over its rounds, robust to a disturbed round.
         * (Reorders the pair's stretch of logs, which nothing reads again.) */
        if (rc == 0 && nr > first_round)
            pair_log[out->pairs++] = bench__median_inplace(logs + first_round, nr - first_round);
    }
    out->seconds = (double)(bench__now_ns() - t_start) / 1e9;
    out->rounds = nr;
    out->iters = iters;
    if (rc != 0)
        goto done;
    if (out->pairs < 2) {
        bench__msg(out->message, sizeof out->message,
                   "fewer than 2 worker pairs measured a round (raise --ab-time)");
        goto done;
    }
    bench__compare_opts copt = {.significance_level = o->significance_level,
                                .noise_threshold = o->noise_threshold};
    bench__ab_stats(pair_log, out->pairs, m, &copt, &out->change);
    out->pair_sd = bench__std_dev(pair_log, out->pairs);
    out->old_ns = bench__median_inplace(a_ns, na);
    out->new_ns = bench__median_inplace(b_ns, nb);
    out->change.old_median = out->old_ns;
    out->change.new_median = out->new_ns;
done:
    free(logs);
    free(a_ns);
    free(b_ns);
    free(pair_log);
    return rc;
}

int bench__ab_confirm(const char *old_prog, int old_fd, const char *id,
                      const bench__ab_options *o, size_t m, bench__change *out, char *msg,
                      size_t msglen)
{
    bench__proc_interrupts_install();
    ab_outcome res;
    /* B is this very program: /proc/self/exe in the worker is the file this process runs. */
    int rc = ab_one(old_prog, old_fd, "/proc/self/exe", id, o, m, &res);
    *out = res.change;
    out->old_median = res.old_ns;
    out->new_median = res.new_ns;
    /* A confirmation replaces a saved-baseline verdict, so it is classified by that rule
     * (significant and the estimate beyond T): with 5 pairs and Bonferroni over 10 suspects
     * (t = 5.6 on 4 df), requiring the whole interval beyond T let a real 10% slowdown on a busy
     * machine be confirmed as nothing. */
    bench__classify(out, &(bench__compare_opts){.significance_level = o->significance_level,
                                                  .noise_threshold = o->noise_threshold});
    if (rc == 0 && out->verdict == BENCH__V_INCOMPARABLE)
        rc = BENCH_EIO;
    if (rc != 0)
        bench__msg(msg, msglen, "%s", res.message[0] ? res.message : "no rounds");
    return rc;
}

int bench__ab_run(const char *other, const bench__instance *all, const bool *selected, size_t n,
                  const bench__ab_options *o, bool fail_on_regression, bool color)
{
    char self[4096], why[512];
    if (bench__proc_self(self, sizeof self, why, sizeof why) != 0) {
        fprintf(stderr, "bench: --ab: %s\n", why);
        return BENCH_EXIT_USAGE;
    }
    bench__proc_interrupts_install();
    if (access(other, X_OK) != 0) {
        fprintf(stderr, "bench: --ab: '%s' is not an executable program: %s\n", other,
                strerror(errno));
        return BENCH_EXIT_USAGE;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += selected[i];
    double family = 1.0 - o->significance_level / (double)(m ? m : 1);
    size_t rows = m + o->nremoved;
    bench__change *ch = calloc(rows ? rows : 1, sizeof *ch);
    const char **ids = calloc(rows ? rows : 1, sizeof *ids);
    if (!ch || !ids) {
        free(ch);
        free(ids);
        fprintf(stderr, "bench: out of memory\n");
        return BENCH_EXIT_USAGE;
    }
    printf("Interleaved A/B: A (old) = %s\n                 B (new) = %s\n", other, self);
    printf("%d worker pairs, %.1f s, %.3g ms samples per benchmark; intervals at %.4g and "
           "p-values adjusted (Bonferroni over %zu)\n\n",
           o->pairs, o->seconds, o->sample_ms, family, m);
    fflush(stdout);
    int exit_code = BENCH_EXIT_OK;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!selected[i])
            continue;
        ab_outcome out;
        int rc = ab_one(other, -1, self, all[i].id, o, m, &out);
        if (bench__proc_interrupted()) {
            fprintf(stderr, "bench: interrupted by %s: stopped the worker processes\n",
                    bench__signal_name(bench__proc_interrupted()));
            free(ch);
            free(ids);
            return 128 + bench__proc_interrupted();
        }
        ids[k] = all[i].id;
        ch[k] = out.change;
        printf("%s\n", all[i].id);
        if (rc != 0 || out.change.verdict == BENCH__V_INCOMPARABLE) {
            ch[k].verdict = rc == BENCH_EUNAVAIL ? BENCH__V_SKIPPED
                            : rc == BENCH_EINVAL ? BENCH__V_NEW
                                                 : BENCH__V_INCOMPARABLE;
            printf("%24s%s: %s\n", "", bench__verdict_name(ch[k].verdict),
                   out.message[0] ? out.message : "no rounds");
            if (rc == BENCH_EIO)
                exit_code = BENCH_EXIT_FAILED;
        } else {
            char a[32], b[32];
            bench__fmt_time(a, sizeof a, out.old_ns);
            bench__fmt_time(b, sizeof b, out.new_ns);
            printf("%24sold: %s  new: %s  (%zu rounds of ABBA+BAAB in %zu pairs, pair-to-pair "
                   "sd %.2f%%, %llu iterations a sample, %.1f s)\n",
                   "", a, b, out.rounds, out.pairs, out.pair_sd * 100.0,
                   (unsigned long long)out.iters, out.seconds);
            /* The change line shows the p-value the verdict reads: the adjusted one, which
             * matches the interval's family level (p < alpha exactly when it excludes 0). */
            bench__change shown = out.change;
            shown.p = shown.p_adjusted;
            bench__print_change_line(stdout, &shown, color);
            bench__print_verdict(stdout, &out.change, color);
        }
        fflush(stdout);
        k++;
    }
    /* The old build's benchmarks (for the same FILTERs) that this one lacks. */
    for (size_t i = 0; i < o->nremoved; i++) {
        ids[k] = o->removed[i];
        ch[k++].verdict = BENCH__V_REMOVED;
    }
    bench__compare_opts copt = {.significance_level = o->significance_level,
                                .noise_threshold = o->noise_threshold};
    /* In the summary's order, so that the strict messages come in it too (allocation failure
     * leaves the rows as they are: the summary sorts its own). No context: A and B ran
     * interleaved on one machine, so no change of it can be blamed. */
    (void)bench__sort_changes(ids, ch, k);
    bench__print_compare_summary(stdout, "A, the old build", ids, ch, k, &copt, "Bonferroni",
                                 NULL, color);
    /* The exit rule of every comparison (a failed benchmark wins over it). */
    int cmp_exit = bench__compare_exit(ids, ch, k, o->strict, fail_on_regression,
                                       "A, the old build");
    if (exit_code == BENCH_EXIT_OK)
        exit_code = cmp_exit;
    free(ch);
    free(ids);
    return exit_code;
}
