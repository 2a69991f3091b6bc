/*
 * client.c: the client of the default mode, times (client.h): its probes from the table, how a
 * result and its metrics compare with the baseline entry, the change line under a result; and
 * the choice of a mode's client, by the command line or by a results file's context.mode.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "probes/probes.h"
#include "report/report_compare.h"
#include "run/client.h"
#include "run/instr.h"
#include "run/pipeline.h"
#include "run/sides.h"

/* The run's probes, from the table (probes/probes.c): those always made (CUDA, which gives CUDA
 * benchmarks their time) and those the command line asked for; the runner adds the wall
 * clock to every benchmark. */
int bench__request_make_probes(bench__request *c, char *msg, size_t msglen)
{
    static bench__probe *probes[BENCH__MAX_PROBE_KINDS];
    int n = bench__probes_make(c->probe_on, c->probe_arg, probes, msg, msglen);
    c->run.probes = probes;
    c->run.nprobes = n > 0 ? (size_t)n : 0;
    return n < 0 ? -1 : 0;
}

void bench__request_destroy_probes(bench__request *c)
{
    for (size_t p = 0; p < c->run.nprobes; p++)
        if (c->run.probes[p]->destroy)
            c->run.probes[p]->destroy(c->run.probes[p]);
    c->run.nprobes = 0;
}

static int time_setup(bench__request *c, bool worker, char *msg, size_t msglen)
{
    (void)worker;
    return bench__request_make_probes(c, msg, msglen);
}

/* Compares each metric of r that the baseline entry also has, like time but without the
 * suite-wide correction: metrics are witnesses, not verdicts of their own. */
static void compare_metrics(const bench__request *c, const bench__entry *e, bench__result *r)
{
    if (r->nmetrics == 0 || e->nmetrics == 0)
        return;
    r->metric_changes = calloc(r->nmetrics, sizeof *r->metric_changes);
    if (!r->metric_changes)
        return;
    for (size_t i = 0; i < r->nmetrics; i++) {
        bench__change *ch = &r->metric_changes[i];
        ch->verdict = BENCH__V_INCOMPARABLE;
        const bench__metric *m = &r->metrics[i];
        for (size_t j = 0; j < e->nmetrics; j++) {
            if (strcmp(e->metrics[j].name, m->name) != 0)
                continue;
            bench__side a, b;
            memset(&b, 0, sizeof b);
            bench__compare_opts o = c->cmp;
            if (e->processes >= 2 && r->processes >= 2 && e->process && r->process &&
                bench__side_from_processes(e->iters, e->metrics[j].totals, e->process,
                                           e->nsamples, e->processes,
                                           c->run.confidence_level, &a) == 0 &&
                bench__side_from_processes(r->iters, m->totals, r->process, r->nsamples,
                                           r->processes, c->run.confidence_level, &b) == 0) {
                /* Both sides over processes: their spreads are the metric's own; the machine's
                 * drift in time says nothing of a count, so no drift term is added. */
                o.drift_known = true;
                o.drift_sd = 0;
            } else {
                uint64_t seed = bench__id_seed(bench__id_seed(c->run.seed, e->id), m->name);
                if (bench__side_from_samples(e->iters, e->metrics[j].totals, e->nsamples,
                                             c->run.nresamples, c->run.confidence_level, seed,
                                             &a) != 0)
                    break;
                bench__side_from_estimate(&m->est.median, c->run.confidence_level, &b);
            }
            bench__compare_one(&a, &b, &o, ch);
            break;
        }
    }
}

/* A provisional verdict as the result finishes; the suite's pass (the family level over all
 * benchmarks, the suite's drift, confirmation) settles it before the summary. */
static bool time_compare(const bench__request *c, const bench__entry *e, bench__result *r,
                         bench__change *ch, bench__side *old_side)
{
    if (bench__side_of_entry(c, e, old_side) != 0)
        return false;
    bench__side cur;
    bench__side_of_result(c, r, &cur);
    bench__compare_one(old_side, &cur, &c->cmp, ch);
    r->change = ch;
    compare_metrics(c, e, r);
    return true;
}

static void time_show_change(FILE *o, const bench__request *c, const bench__result *r, bool color)
{
    if (!r->change)
        return;
    bench__print_change_line(o, r->change, color);
    bench__print_metric_changes(o, r, &c->cmp, color);
}

const bench__client bench__time_client = {
    .mode = NULL,
    .save_with = "",
    .method = "Bonferroni",
    .mismatch = "holds instruction counts (saved with --instructions): compare it with "
                "--instructions, or pick a baseline of times",
    .times = true,
    .setup = time_setup,
    .teardown = bench__request_destroy_probes,
    .compare = time_compare,
    .pretty = bench__reporter_pretty,
    .show_change = time_show_change,
};

const bench__client *bench__client_for(const bench__request *c)
{
    return c->instructions ? &bench__instr_client : &bench__time_client;
}

const bench__client *bench__client_of_mode(const char *mode)
{
    return bench__instr_is_mode(mode) ? &bench__instr_client : &bench__time_client;
}
