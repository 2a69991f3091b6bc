/*
 * history_show.c: what the run history's readers compute, the same for every store
 * (history_store.h): --history-show's list of runs and its series with their change points and
 * trends, and --history-gate's windows of the newest run and the runs before it (judged by
 * compare/verdict.c's bench__gate_window). Nothing here prints a finding: report/
 * report_history.c prints what these return. A store only answers with rows; the rows are
 * validated here (a median that is not a positive finite number is named on stderr and
 * skipped), so a hostile row in either store is read the same safe way.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "compare/verdict.h"
#include "stats/changepoint.h"
#include "store/history_store.h"

/* A change of a benchmark's code identity, as a series' change says it. */
#define CODE_CHANGED BENCH__HISTORY_CODE_CHANGED

void bench__history_runs_free(bench__hrun *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++) {
        free(r[i].time);
        free(r[i].revision);
        free(r[i].host);
        free(r[i].baseline);
        free(r[i].program);
    }
    free(r);
}

int bench__history_runs(bench__history *h, bench__hrun **rows, size_t *n, char *msg,
                        size_t len)
{
    *rows = NULL;
    *n = 0;
    return h->ops->runs(h, rows, n, msg, len);
}

/* Whether points a and b share facts [from, to): a fact one of them did not record (a run of
 * an older program, a row written by hand) is no difference. */
static bool same_facts(const bench__hpoint *a, const bench__hpoint *b, int from, int to)
{
    for (int f = from; f < to; f++)
        if (a->facts[f] && b->facts[f] && strcmp(a->facts[f], b->facts[f]) != 0)
            return false;
    return true;
}

/* Whether a and b were measured on the same machine (another machine: another series). */
static bool same_machine(const bench__hpoint *a, const bench__hpoint *b)
{
    return same_facts(a, b, BENCH__HF_CPU, BENCH__HF_MACHINE);
}

/* The machine of p as a series names it: "CPU, N cores, M GiB", then ", bare metal" or
 * ", VM (HYPERVISOR)" when it recorded its virtualization. */
static char *machine_name(const bench__hpoint *p)
{
    char buf[512], cpu[256], virt[160] = "", v[128];
    const char *const *f = (const char *const *)p->facts;
    double gib = f[BENCH__HF_MEMORY] ? strtod(f[BENCH__HF_MEMORY], NULL) / (1 << 30) : 0;
    if (f[BENCH__HF_VIRT])
        bench__msg(virt, sizeof virt, strcmp(f[BENCH__HF_VIRT], "none") == 0
                                          ? ", bare metal" : ", VM (%s)",
                   bench__escape(v, sizeof v, f[BENCH__HF_VIRT]));
    bench__msg(buf, sizeof buf, "%s, %s cores, %.0f GiB%s",
               f[BENCH__HF_CPU] ? bench__escape(cpu, sizeof cpu, f[BENCH__HF_CPU]) : "-",
               f[BENCH__HF_CORES] ? f[BENCH__HF_CORES] : "-", gib, virt);
    return strdup(buf);
}

/* The facts a series knows so far: each one as its newest point that recorded it had it, so
 * that a change is one between two known values, whatever unknowns lie between them. */
typedef struct known_facts {
    const char *f[BENCH__HFACTS]; /* NULL: no point recorded it yet (borrowed from the points) */
} known_facts;

/* Takes in what p recorded. */
static void learn(known_facts *k, const bench__hpoint *p)
{
    for (int f = 0; f < BENCH__HFACTS; f++)
        if (p->facts[f])
            k->f[f] = p->facts[f];
}

/* Whether p's environment (the facts after the machine's, before fact `to`) agrees with what k
 * knows. The show passes BENCH__HFACTS (a change of the benchmark's code is listed); the gate
 * BENCH__HF_CODE, since a change of the code under test is what it is there to judge: a window
 * that stopped at it would never gate the run that made the code slower. */
static bool same_environment(const known_facts *k, const bench__hpoint *p, int to)
{
    bench__hpoint a = {0};
    memcpy(a.facts, k->f, sizeof k->f);
    return same_facts(&a, p, BENCH__HF_MACHINE, to);
}

/* The environment's facts that differ from k to b, as "kernel A -> B, flags X -> Y", and the
 * benchmark's code as CODE_CHANGED (its hashes would tell a reader nothing). */
static char *facts_diff(const known_facts *k, const bench__hpoint *b)
{
    char buf[1024] = "", x[160], y[160];
    size_t at = 0;
    bench__hpoint a0 = {0}, *a = &a0;
    memcpy(a0.facts, k->f, sizeof k->f);
    for (int f = BENCH__HF_MACHINE; f < BENCH__HFACTS && at < sizeof buf; f++) {
        if (same_facts(a, b, f, f + 1))
            continue;
        if (f == BENCH__HF_CODE) {
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%s" CODE_CHANGED, at ? ", " : "");
            continue;
        }
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s %s -> %s", at ? ", " : "",
                               bench__history_fact_names[f],
                               a->facts[f] ? bench__escape(x, sizeof x, a->facts[f]) : "-",
                               b->facts[f] ? bench__escape(y, sizeof y, b->facts[f]) : "-");
    }
    return strdup(buf);
}

/* Adds point p (valid) to series x (arrays of room for cap). */
static int add_point(bench__history_series *x, const bench__hpoint *p)
{
    size_t k = x->n;
    x->runs[k] = p->run;
    x->median_ns[k] = p->median.x;
    x->revisions[k] = strdup(p->revision && *p->revision ? p->revision : "-");
    x->programs[k] = strdup(p->program ? p->program : "");
    if (!x->revisions[k] || !x->programs[k]) {
        free(x->revisions[k]);
        free(x->programs[k]);
        return BENCH_ENOMEM;
    }
    x->n++;
    return 0;
}

/* A new series of benchmark id in x, with room for cap points. */
static int new_series(bench__history_series *x, const char *id, size_t cap)
{
    memset(x, 0, sizeof *x);
    x->id = strdup(id);
    x->runs = malloc(cap * sizeof *x->runs);
    x->revisions = malloc(cap * sizeof *x->revisions);
    x->programs = malloc(cap * sizeof *x->programs);
    x->median_ns = malloc(cap * sizeof *x->median_ns);
    x->changes = malloc(cap * sizeof *x->changes);
    return x->id && x->runs && x->revisions && x->programs && x->median_ns && x->changes
               ? 0
               : BENCH_ENOMEM;
}

/* Benchmark id's series appended to v, one per machine in the order they first ran it, with
 * the changes of their environment (valid medians only; `found` not yet computed). */
static int read_benchmark(bench__history *h, const char *id, bench__history_view *v, char *msg,
                          size_t len)
{
    bench__hpoint *p = NULL;
    size_t n = 0, first = v->n;
    int rc = h->ops->series(h, id, 0, &p, &n, msg, len);
    if (rc != 0)
        return rc;
    /* last[k]: the newest point of series first + k, for its machine; known[k]: the facts it
     * knows, for its changes. */
    const bench__hpoint **last = calloc(n ? n : 1, sizeof *last);
    known_facts *known = calloc(n ? n : 1, sizeof *known);
    rc = last && known ? 0 : BENCH_ENOMEM;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!bench__history_median_ok(h, &p[i].median, p[i].run, id))
            continue;
        size_t k = 0;
        while (first + k < v->n && !same_machine(last[k], &p[i]))
            k++;
        if (first + k == v->n) {
            bench__history_series *g = realloc(v->s, (v->n + 1) * sizeof *v->s);
            if (!g) {
                rc = BENCH_ENOMEM;
                break;
            }
            v->s = g;
            rc = new_series(&v->s[v->n++], id, n); /* freed with the view, whole or not */
        }
        bench__history_series *x = &v->s[first + k];
        if (rc == 0 && x->n > 0 && !same_environment(&known[k], &p[i], BENCH__HFACTS)) {
            x->changes[x->nchanges] = (bench__history_change){x->n, facts_diff(&known[k], &p[i]),
                                                              false};
            rc = x->changes[x->nchanges++].what ? 0 : BENCH_ENOMEM;
        }
        if (rc == 0)
            rc = add_point(x, &p[i]);
        last[k] = &p[i];
        learn(&known[k], &p[i]);
    }
    if (rc == 0 && v->n == first) { /* no valid median: an empty series, shown as such */
        bench__history_series *g = realloc(v->s, (v->n + 1) * sizeof *v->s);
        rc = BENCH_ENOMEM;
        if (g) {
            v->s = g;
            rc = new_series(&v->s[v->n++], id, 1);
        }
    }
    for (size_t k = 0; v->n - first > 1 && first + k < v->n && rc == 0; k++)
        if (!(v->s[first + k].machine = machine_name(last[k])))
            rc = BENCH_ENOMEM;
    free(last);
    free(known);
    bench__history_points_free(p, n);
    if (rc == BENCH_ENOMEM)
        bench__msg(msg, len, "history '%s' cannot be read: out of memory", h->name);
    return rc;
}

static void series_free(bench__history_series *x)
{
    for (size_t j = 0; j < x->n; j++) {
        free(x->revisions[j]);
        free(x->programs[j]);
    }
    for (size_t j = 0; j < x->nchanges; j++)
        free(x->changes[j].what);
    free(x->changes);
    free(x->machine);
    free(x->revisions);
    free(x->programs);
    free(x->runs);
    free(x->median_ns);
    free(x->id);
}

void bench__history_view_free(bench__history_view *v)
{
    for (size_t i = 0; v && i < v->n; i++)
        series_free(&v->s[i]);
    if (v) {
        free(v->s);
        v->s = NULL;
        v->n = 0;
    }
}

/* A change point of x that falls where its environment changed (the change's first run within
 * the runs it may be at) is the environment's, not the code's: it is removed, and the change
 * says so. A change of the benchmark's code alone removes nothing: a step there is the code's,
 * the very thing a history is kept to find, so it stays a change point beside the change. */
static void drop_environment_steps(bench__history_series *x)
{
    bench__cp_result *f = &x->found;
    size_t kept = 0;
    for (size_t c = 0; c < f->ncp; c++) {
        bool env = false;
        for (size_t j = 0; j < x->nchanges; j++) {
            if (strcmp(x->changes[j].what, CODE_CHANGED) != 0 &&
                x->changes[j].index >= f->cp[c].index_lower &&
                x->changes[j].index <= f->cp[c].index_upper) {
                x->changes[j].step_removed = env = true;
            }
        }
        if (!env)
            f->cp[kept++] = f->cp[c];
    }
    f->ncp = kept;
}

/* The series of the selected ids into v, their change points and trends found (every series
 * shown has its trend tested: Bonferroni over them, so that unchanged code shows a trend in any
 * of them at the level's rate, not in one of every twenty). */
static int read_view(bench__history *h, char *const *ids, const bool *selected, size_t n,
                     bench__history_view *v, char *msg, size_t len)
{
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (selected[i])
            rc = read_benchmark(h, ids[i], v, msg, len);
    for (size_t i = 0; i < v->n && rc == 0; i++)
        v->trend_tests += v->s[i].n >= 3;
    for (size_t i = 0; i < v->n && rc == 0; i++) {
        bench__history_series *x = &v->s[i];
        double *logs = malloc((x->n ? x->n : 1) * sizeof *logs);
        for (size_t j = 0; logs && j < x->n; j++)
            logs[j] = log(x->median_ns[j]);
        if (!logs || bench__changepoints(logs, x->n, BENCH__HISTORY_ALPHA,
                                         v->trend_tests ? (double)v->trend_tests : 1,
                                         &x->found) != 0) {
            bench__msg(msg, len, "history '%s' cannot be read: out of memory", h->name);
            rc = BENCH_ENOMEM;
        }
        if (rc == 0)
            drop_environment_steps(x);
        free(logs);
    }
    return rc;
}

int bench__history_read(bench__history *h, bench__history_selector select, void *arg,
                        bench__history_view *view, char *msg, size_t len)
{
    bench__history_view v = {0};
    char **ids = NULL;
    size_t n = 0;
    *view = v;
    int rc = h->ops->ids(h, &ids, &n, msg, len);
    bool *selected = rc == 0 ? calloc(n ? n : 1, sizeof *selected) : NULL;
    if (rc == 0 && !selected) {
        bench__msg(msg, len, "history '%s' cannot be read: out of memory", h->name);
        rc = BENCH_ENOMEM;
    }
    if (rc == 0 && select((const char *const *)ids, n, selected, arg) != 0) {
        msg[0] = '\0';
        rc = BENCH_EUSAGE;
    }
    if (rc == 0)
        rc = read_view(h, ids, selected, n, &v, msg, len);
    bench__history_strings_free(ids, n);
    free(selected);
    if (rc == 0)
        *view = v;
    else
        bench__history_view_free(&v);
    return rc;
}

/* ---- --history-gate ---- */

/* One benchmark of the gated run: its id and its newest n medians' logs, oldest first. */
typedef struct gated {
    char *id;
    double *logs;
    size_t n;
    long long prev_run; /* its newest earlier run in the window; 0: none */
} gated;

/* b's newest window + 1 valid medians up to run `run` (the run's own last), of runs on the
 * same machine as that one and since its environment last changed: the gate never pools
 * machines, nor kernels or compiler flags. A row skipped does not count. */
static int gate_one_series(bench__history *h, long long run, size_t window, gated *b, char *msg,
                           size_t len)
{
    bench__hpoint *p = NULL;
    size_t n = 0;
    int rc = h->ops->series(h, b->id, run, &p, &n, msg, len);
    if (rc != 0)
        return rc;
    if (!(b->logs = malloc((window + 1) * sizeof *b->logs))) {
        bench__history_points_free(p, n);
        bench__msg(msg, len, "history '%s' cannot be read: out of memory", h->name);
        return BENCH_ENOMEM;
    }
    const bench__hpoint *ref = NULL;
    known_facts known = {{NULL}}; /* of the points taken, newest first */
    for (size_t i = n; i-- > 0 && b->n < window + 1;) {
        if (ref && !same_machine(ref, &p[i]))
            continue;
        if (ref && !same_environment(&known, &p[i], BENCH__HF_CODE))
            break;
        if (!bench__history_median_ok(h, &p[i].median, p[i].run, b->id))
            continue;
        ref = ref ? ref : &p[i];
        learn(&known, &p[i]);
        if (b->n == 1)
            b->prev_run = p[i].run;
        b->logs[b->n++] = log(p[i].median.x);
    }
    bench__history_points_free(p, n);
    /* Newest first as read: oldest first for the tests. */
    for (size_t i = 0; i < b->n / 2; i++) {
        double t = b->logs[i];
        b->logs[i] = b->logs[b->n - 1 - i];
        b->logs[b->n - 1 - i] = t;
    }
    return 0;
}

/* Whether id is one of only[0..n) (only NULL: every id is). */
static bool named(const char *const *only, size_t n, const char *id)
{
    for (size_t i = 0; only && i < n; i++)
        if (strcmp(only[i], id) == 0)
            return true;
    return !only;
}

/* The benchmarks of run `run` that ran ok and that `only` names, each with its newest window +
 * 1 medians into *out (*nout of them; the caller frees). */
static int gate_series(bench__history *h, long long run, const char *const *only, size_t nonly,
                       size_t window, gated **out, size_t *nout, char *msg, size_t len)
{
    char **ids = NULL;
    bench__hval *med = NULL;
    size_t n = 0;
    *out = NULL;
    *nout = 0;
    int rc = h->ops->run_ok(h, run, &ids, &med, &n, msg, len);
    gated *g = rc == 0 ? calloc(n ? n : 1, sizeof *g) : NULL;
    if (rc == 0 && !g) {
        bench__msg(msg, len, "history '%s' cannot be read: out of memory", h->name);
        rc = BENCH_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!named(only, nonly, ids[i]) || !bench__history_median_ok(h, &med[i], run, ids[i]))
            continue;
        g[k].id = ids[i];
        ids[i] = NULL;
        rc = gate_one_series(h, run, window, &g[k++], msg, len);
    }
    bench__history_strings_free(ids, n);
    free(med);
    *out = g;
    *nout = k;
    return rc;
}

/* A step alone goes to steps, for the caller to confirm (and then decide); false when it
 * cannot be kept there (then the numbers decide). */
static bool defer_step(bench__history_steps *steps, const bench__history_gated *b)
{
    bench__history_step *grown = realloc(steps->s, (steps->n + 1) * sizeof *steps->s);
    char *copy = strdup(b->id);
    if (grown)
        steps->s = grown;
    if (grown && copy) {
        steps->s[steps->n++] = (bench__history_step){copy, b->prev_run};
        return true;
    }
    free(copy);
    return false;
}

int bench__history_gate(bench__history *h, long long run_id, const char *const *only,
                        size_t nonly, size_t window, double noise_threshold, double alpha,
                        bench__history_gate_run *out, char *msg, size_t len)
{
    *out = (bench__history_gate_run){.window = window, .noise_threshold = noise_threshold,
                                     .alpha = alpha};
    gated *g = NULL;
    size_t n = 0, tested = 0;
    int rc = gate_series(h, run_id, only, nonly, window, &g, &n, msg, len);
    for (size_t i = 0; i < n && rc == 0; i++)
        tested += g[i].n >= BENCH__HISTORY_GATE_MIN + 1;
    /* Bonferroni over the benchmarks tested: the gate's false alarms are at most about alpha
     * per run of the whole suite, not per benchmark. */
    double tests = tested ? (double)tested : 1;
    out->b = rc == 0 ? calloc(n ? n : 1, sizeof *out->b) : NULL;
    if (rc == 0 && !out->b) {
        bench__msg(msg, len, "history '%s' cannot be read: out of memory", h->name);
        rc = BENCH_ENOMEM;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        bench__history_gated *b = &out->b[out->n++];
        *b = (bench__history_gated){.id = g[i].id, .n = g[i].n, .prev_run = g[i].prev_run,
                                    .tested = g[i].n >= BENCH__HISTORY_GATE_MIN + 1};
        g[i].id = NULL;
        b->judged = b->tested && bench__gate_window(g[i].logs, g[i].n, noise_threshold, alpha,
                                                    tests, &b->g) == 0;
    }
    out->tested = tested;
    for (size_t i = 0; i < n; i++) {
        free(g[i].id);
        free(g[i].logs);
    }
    free(g);
    if (rc != 0)
        bench__history_gate_free(out);
    return rc;
}

void bench__history_gate_outcome(const bench__history_gate_run *g, bench__history_steps *steps,
                                 bool *regressed)
{
    *regressed = false;
    if (steps)
        steps->s = NULL, steps->n = 0;
    for (size_t i = 0; i < g->n; i++) {
        const bench__history_gated *b = &g->b[i];
        if (!b->judged)
            continue;
        bench__gate_outcome verdict = b->g.outcome;
        if (verdict == BENCH__GATE_STEP_FAILS && steps && b->prev_run > 0 &&
            defer_step(steps, b))
            continue;
        if (verdict != BENCH__GATE_PASSES)
            *regressed = true;
    }
}

void bench__history_gate_free(bench__history_gate_run *g)
{
    for (size_t i = 0; g && i < g->n; i++)
        free(g->b[i].id);
    if (g) {
        free(g->b);
        g->b = NULL;
        g->n = 0;
    }
}

void bench__history_steps_free(bench__history_steps *s)
{
    for (size_t i = 0; s && i < s->n; i++)
        free(s->s[i].id);
    if (s) {
        free(s->s);
        s->s = NULL;
        s->n = 0;
    }
}
