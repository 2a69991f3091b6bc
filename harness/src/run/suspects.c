/*
 * suspects.c: the suspect verdicts of a saved-baseline comparison settled beyond the saved
 * numbers, which cannot tell the machine's drift since the save from a change of the code: by
 * the program's identity (the very program the baseline measured), else by running the
 * baseline's program snapshot against this program, paired, else left to the numbers under
 * the drift guard, with a note saying why. The rules that turn each outcome into a verdict are
 * compare/verdict.c's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/compare.h"
#include "compare/verdict.h"
#include "report/report_compare.h"
#include "run/ab.h"
#include "run/baselines.h"
#include "run/explain.h"
#include "run/pipeline.h"
#include "run/suspects.h"
#include "sys/clock.h"
#include "sys/proc.h"

/*
 * Settles the suspect verdicts of a saved-baseline comparison (ch[0..m), ids[i] naming ch[i]):
 * those that claim a change (regressed, improved) and those that cannot rule one out
 * (inconclusive), beyond the saved numbers, which cannot tell the machine's drift since the save
 * from a change of the code:
 *   - the program is byte for byte the one the baseline measured: the code did not change, so
 *     no suspect is a change of it (verdict "no change", marked same_program);
 *   - a regressed or improved verdict that the saved numbers already decide beyond doubt needs
 *     no run: the drift canaries show that the machine did not change, and the interval lies
 *     beyond the threshold by three times the largest run-to-run noise known
 *     (bench__verdict_clear; unless --explain, which profiles only what a paired run confirmed);
 *   - otherwise, when the baseline keeps its program's snapshot and it runs: the suspects are
 *     measured again, paired, snapshot (A) against this program (B), as --ab does, within one
 *     time budget spent on those still undecided, and the verdict comes from that paired
 *     comparison (marked confirmed);
 *   - otherwise the verdicts stay as the saved numbers give them, regressed and improved
 *     guarded against the canaries' largest drift (bench__verdict_drift_guard), and a note
 *     says why.
 * Returns 0, or -1 when the run was interrupted.
 */
static void drift_guard(bench__change *ch, size_t m, double drift)
{
    for (size_t j = 0; j < m; j++)
        bench__verdict_drift_guard(&ch[j], drift);
}

/* How a suspect verdict can be settled beyond the saved numbers. */
typedef enum settle {
    SETTLE_NUMBERS = 0, /* not at all: it rests on the saved numbers */
    SETTLE_UNKNOWN,     /* the entry does not say which program measured it (older files) */
    SETTLE_LIBS,        /* the shared libraries changed since the entry was measured */
    SETTLE_OTHER,       /* measured by a program that is neither this one nor the snapshot */
    SETTLE_NO_COPY,     /* measured by the baseline's program, of which it keeps no copy */
    SETTLE_SAME,        /* this very program measured it: not a change of the code */
    SETTLE_CLEAR,       /* the snapshot could run it, but the saved numbers decide it clearly */
    SETTLE_CONFIRM,     /* the baseline's snapshot measured it: run it interleaved */
    SETTLE_KINDS
} settle;

/*
 * The run-to-run noise a clear verdict must stand beyond, when the machine is known not to have
 * changed since the save: every drift canary measured in both runs and none of them moved
 * beyond its processes' spread (bench__canaries_drift). It is then the largest of the canaries'
 * own movements (a log ratio), which the caller sets beside the drift term of each interval and
 * the default run-to-run noise. NaN when the machine may have changed, or the canaries cannot
 * say, or BENCH_CONFIRM_ALL asks for every suspect to be confirmed: no verdict is then clear.
 */
static double machine_still(const bench__request *c, const bench__saved *old,
                            const bench__context *ctx)
{
    /* BENCH_CONFIRM_ALL (docs/cli.md): every suspect the snapshot can settle is run. */
    const char *all = getenv("BENCH_CONFIRM_ALL");
    if (!ctx->have_canaries || (all && *all && strcmp(all, "0") != 0))
        return NAN;
    double d[BENCH__NCANARIES];
    bool beyond[BENCH__NCANARIES];
    char words[512];
    if (bench__canaries_drift(&ctx->canary, &old->ctx.canary, c->cmp.noise_threshold, d, beyond,
                              words, sizeof words) != 0)
        return NAN;
    double largest = 0;
    for (int q = 0; q < BENCH__NCANARIES; q++) {
        if (!isfinite(d[q]) || !(d[q] > -1))
            return NAN; /* a canary known on one side only (an older baseline) */
        largest = fmax(largest, fabs(log1p(d[q])));
    }
    return largest;
}

/* Which program measured an entry, against this program and the baseline's snapshot. */
static settle how_to_settle(const bench__entry *e, const bench__saved *old,
                            const bench__context *ctx)
{
    if (!e || !e->program_hash[0] || !bench__starts_with(e->program_hash, "sha256:"))
        return SETTLE_UNKNOWN;
    /* A program runs with today's shared libraries: when they changed since the entry was
     * measured, neither "the same program" nor a run of the snapshot would see what changed. */
    bool libs_changed = e->program_libs[0] && ctx->program_libs[0] &&
                        strcmp(e->program_libs, ctx->program_libs) != 0;
    bool same = bench__same_program(e->program_hash, ctx->program_hash);
    bool snapshot = strcmp(e->program_hash, old->ctx.program_hash) == 0;
    if ((same || snapshot) && libs_changed)
        return SETTLE_LIBS;
    return same                        ? SETTLE_SAME
           : !snapshot                 ? SETTLE_OTHER
           : old->ctx.program_file[0] ? SETTLE_CONFIRM
                                       : SETTLE_NO_COPY;
}

/* The first suspect id of kind k, for a note ("s/work" or "s/work and 2 more"). */
static void first_of(const char *const *ids, const settle *how, size_t m, settle k, size_t count,
                     char *buf, size_t len)
{
    for (size_t j = 0; j < m; j++)
        if (how[j] == k) {
            char id[BENCH__ESCAPED_ID];
            bench__escape(id, sizeof id, ids[j]);
            if (count > 1)
                bench__msg(buf, len, "%s and %zu more", id, count - 1);
            else
                bench__msg(buf, len, "%s", id);
            return;
        }
    buf[0] = '\0';
}

/*
 * Opens the baseline's snapshot to run it, when it may run: signed with this user's key (or
 * --trust-snapshots), in a directory and file no other user may write, not a symbolic link, an
 * ELF program whose bytes hash to what the baseline recorded. On success *fd is the sealed copy
 * to start it from. Otherwise returns BENCH_EUSAGE when the run was interrupted, or prints why
 * it is not run and returns 1.
 */
static int open_snapshot(const bench__request *c, const bench__saved *old, const char *path,
                         size_t nconfirm, int *fd)
{
    const char *name = c->baseline;
    char why[768] = "", shown[4 * sizeof why];
    int rc = 0;
    double bytes = 0; /* the size its signature vouches for; 0 none */
    if (!c->trust_snapshots)
        rc = bench__snapshot_verify(old->ctx.program_hash, old->ctx.program_bytes,
                                    old->ctx.program_mac, &bytes, why, sizeof why);
    if (rc == 0) {
        double timeout = bench__request_timeout(c);
        rc = bench__snapshot_open(bench__baseline_dir(c), old->ctx.program_file,
                                  old->ctx.program_hash, bytes,
                                  bench__now_ns() + (int64_t)(timeout * 1e9), fd, why,
                                  sizeof why);
        if (rc == BENCH_EUSAGE)
            return BENCH_EUSAGE;
    } else {
        bench__msg(why + strlen(why), sizeof why - strlen(why), "%s",
                   "; --trust-snapshots runs it anyway if you trust whoever wrote the baseline "
                   "directory");
    }
    if (rc == 0)
        return 0;
    bench__errf("note: the program saved with baseline '%s' (%s) is not run: %s: "
                "%zu verdict%s rest on the saved numbers alone\n",
                name, path, bench__escape(shown, sizeof shown, why), nconfirm,
                nconfirm == 1 ? "" : "s");
    return 1;
}

/* Says on stderr how the suspects that no run of the saved program settles are settled (by
 * the saved numbers, or by this being the very program the baseline measured: those become
 * "no change"). how[j] is row j's way, count[] the suspects of each way, nsus all of them. */
static void say_how_settled(const bench__request *c, const bench__context *ctx,
                            const char *const *ids, bench__change *ch, const settle *how,
                            const size_t *count, size_t m, size_t nsus)
{
    const char *name = c->baseline;
    char first[BENCH__ESCAPED_ID + 32];
    if (count[SETTLE_UNKNOWN]) {
        size_t n = count[SETTLE_UNKNOWN];
        bench__errf("note: baseline '%s' does not say which program measured %s "
                    "(saved by an older version): %zu verdict%s rest on the saved numbers "
                    "alone, which cannot tell the machine's drift from a change of the "
                    "code\n",
                    name, n == nsus ? "its suspect benchmarks" : "some suspect benchmarks", n,
                    n == 1 ? "" : "s");
    }
    if (count[SETTLE_LIBS]) {
        size_t n = count[SETTLE_LIBS];
        bench__errf("note: the shared libraries this program runs have changed since "
                    "baseline '%s' was saved, which a run of its program snapshot would not "
                    "see: %zu verdict%s rest on the saved numbers\n",
                    name, n, n == 1 ? "" : "s");
    }
    if (count[SETTLE_OTHER]) {
        size_t n = count[SETTLE_OTHER];
        first_of(ids, how, m, SETTLE_OTHER, n, first, sizeof first);
        bench__errf("note: baseline '%s' mixes programs: %s %s measured by another "
                    "program than this one and the one saved with it, so neither can settle "
                    "%s: %zu verdict%s rest on the saved numbers\n",
                    name, first, n == 1 ? "was" : "were", n == 1 ? "it" : "them", n,
                    n == 1 ? "" : "s");
    }
    if (count[SETTLE_NO_COPY]) {
        size_t n = count[SETTLE_NO_COPY];
        bench__errf("note: baseline '%s' keeps no copy of the program that measured "
                    "%zu suspect benchmark%s (it could not be saved): %zu verdict%s rest on "
                    "the saved numbers\n",
                    name, n, n == 1 ? "" : "s", n, n == 1 ? "" : "s");
    }
    if (count[SETTLE_CLEAR]) {
        size_t n = count[SETTLE_CLEAR];
        first_of(ids, how, m, SETTLE_CLEAR, n, first, sizeof first);
        bench__errf("note: %s %s clear from the saved numbers and not confirmed: the drift "
                    "canaries show no change of the machine since baseline '%s' was saved, and "
                    "%s interval%s beyond the noise threshold by more than %.0fx the run-to-run "
                    "noise\n",
                    first, n == 1 ? "is" : "are", name, n == 1 ? "its" : "their",
                    n == 1 ? " lies" : "s lie", BENCH__CLEAR_MARGIN);
    }
    if (count[SETTLE_SAME]) {
        size_t n = count[SETTLE_SAME];
        bench__errf("note: this program is the one baseline '%s' measured (%s): "
                    "the %zu change%s seen since come from the machine or the environment, "
                    "not the code, and are not verdicts on it\n",
                    name, ctx->program_hash, n, n == 1 ? "" : "s");
        for (size_t j = 0; j < m; j++)
            if (how[j] == SETTLE_SAME)
                bench__verdict_settle_same(&ch[j]);
    }
}

/* --explain: the confirmed changes, the baseline's program snapshot (snap, sealed copy fd) as A
 * and this program as B, each for the time a suspect was confirmed in. Printed before the
 * summary in the pretty format; explained[where[q]] gets item q's. 0, or -1 when interrupted. */
static int explain_confirmed(const bench__request *c, const char *snap, int fd,
                             const bench__ab_item *items, const size_t *where, size_t k,
                             double seconds, bench__explanation **explained)
{
    bench__explanation **found = calloc(k, sizeof *found);
    if (!found) {
        bench__errf("--explain: out of memory\n");
        return 0;
    }
    bench__explain_opts xo = {.mode = BENCH__EXPLAIN_TIME,
                              .seconds = seconds,
                              .timeout_s = bench__request_timeout(c), .seed = c->run.seed};
    int rc = bench__explain_items(c->format == BENCH__FMT_PRETTY ? stdout : NULL, snap, fd,
                                  "/proc/self/exe", -1, items, k, &xo, found);
    for (size_t q = 0; q < k; q++) {
        if (explained && found[q])
            explained[where[q]] = found[q];
        else
            bench__explanation_free(found[q]);
    }
    free(found);
    return rc == BENCH_EUSAGE ? -1 : 0;
}

/* Runs the k suspects items[0..k) (rows where[0..k) of ch) of the program saved with the
 * baseline (snap, opened as fd) against this one, paired, and puts each decided verdict in its
 * row; a suspect that could not be confirmed keeps its verdict under the drift guard; with
 * --explain, the confirmed changes are explained (explain_confirmed). 0, or -1 when
 * interrupted. */
static int confirm_paired(const bench__request *c, const char *snap, int fd,
                          bench__ab_item *items, const size_t *where, size_t k,
                          bench__change *ch, double drift, bench__explanation **explained)
{
    const char *name = c->baseline;
    int rc = 0;
    bench__ab_options o = bench__request_ab_options(c);
    o.seconds = bench__request_confirm_time(c, k);
    bench__errf("confirming %zu verdict%s: the program saved with baseline '%s' "
                "against this one, paired (%.0f s in all, spent on the undecided ones)\n",
                k, k == 1 ? "" : "s", name, o.seconds * (double)k);
    /* B is this very program: /proc/self/exe in the worker is the file this process runs. */
    int arc = bench__ab_compare(snap, fd, "/proc/self/exe", -1, items, k, &o, NULL, NULL);
    if (arc == BENCH_EUSAGE || bench__proc_interrupted())
        rc = -1;
    for (size_t q = 0; q < k && rc == 0; q++) {
        bench__change *x = &ch[where[q]];
        bench__ab_item *it = &items[q];
        char id[BENCH__ESCAPED_ID];
        bench__escape(id, sizeof id, it->id);
        if (arc != 0 || it->rc != 0 || it->change.verdict == BENCH__V_INCOMPARABLE) {
            char shown[4 * sizeof it->message];
            bench__errf("note: '%s' could not be confirmed (%s): its verdict "
                        "rests on the saved numbers\n", id,
                        bench__escape(shown, sizeof shown,
                                      arc != 0          ? "out of memory"
                                      : it->message[0] ? it->message
                                                        : "no rounds"));
            drift_guard(x, 1, drift);
            continue;
        }
        bench__print_confirmed(it->id, x->verdict, &it->change, it->pairs,
                               it->futile ? it->reach : 0);
        it->change.confirmed = true;
        *x = it->change;
    }
    if (rc == 0 && c->explain && arc == 0 &&
        explain_confirmed(c, snap, fd, items, where, k, o.seconds, explained) != 0)
        rc = -1;
    return rc;
}

int bench__confirm_suspects(const bench__request *c, const bench__saved *old,
                                const bench__context *ctx, const char *const *ids,
                                bench__change *ch, size_t m, double drift,
                                bench__explanation **explained)
{
    size_t nsus = 0, count[SETTLE_KINDS] = {0};
    double still = machine_still(c, old, ctx);
    settle *how = calloc(m ? m : 1, sizeof *how);
    if (!how) {
        bench__errf("out of memory\n");
        drift_guard(ch, m, drift);
        return 0;
    }
    /* Each suspect by the program that measured its entry: a baseline merged from saves of
     * several programs holds entries of each, and only its latest program is kept beside it. */
    for (size_t j = 0; j < m; j++) {
        if (!bench__verdict_suspect(ch[j].verdict))
            continue;
        nsus++;
        how[j] = how_to_settle(bench__saved_find(old, ids[j]), old, ctx);
        /* One the snapshot could confirm, but the saved numbers decide clearly: no run. */
        if (how[j] == SETTLE_CONFIRM && !c->explain && isfinite(still) &&
            bench__verdict_clear(&ch[j], c->cmp.noise_threshold,
                                 fmax(still, fmax(ch[j].run_noise, c->cmp.default_run_noise))))
            how[j] = SETTLE_CLEAR;
        count[how[j]]++;
    }
    say_how_settled(c, ctx, ids, ch, how, count, m, nsus);
    size_t nconfirm = count[SETTLE_CONFIRM];
    int fd = -1, rc = 0;
    char snap[4200];
    bench__msg(snap, sizeof snap, "%s/%s", bench__baseline_dir(c), old->ctx.program_file);
    if (nconfirm > 0 && c->confirm_time != 0) {
        int orc = open_snapshot(c, old, snap, nconfirm, &fd);
        if (orc == BENCH_EUSAGE) {
            free(how);
            return -1;
        }
    }
    /* The suspects to confirm, and where their rows are. */
    bench__ab_item *items = fd >= 0 ? calloc(nconfirm, sizeof *items) : NULL;
    size_t *where = fd >= 0 ? calloc(nconfirm, sizeof *where) : NULL;
    size_t k = 0;
    for (size_t j = 0; j < m; j++) {
        if (!bench__verdict_suspect(ch[j].verdict) || how[j] == SETTLE_SAME)
            continue;
        if (how[j] == SETTLE_CONFIRM && items && where) {
            where[k] = j;
            items[k++].id = ids[j];
        } else {
            drift_guard(&ch[j], 1, drift);
        }
    }
    if (k > 0) {
        rc = confirm_paired(c, snap, fd, items, where, k, ch, drift, explained);
    } else if (fd >= 0 && (!items || !where)) {
        bench__errf("out of memory: %zu verdict%s rest on the saved numbers\n",
                    nconfirm, nconfirm == 1 ? "" : "s");
    }
    if (c->explain && k == 0 && nconfirm > 0)
        bench__explain_unavailable(c->format == BENCH__FMT_PRETTY ? stdout : stderr,
                                   "only a paired run against the baseline's program snapshot "
                                   "can be explained, and none ran (see the notes above; "
                                   "--confirm-time 0 runs none)");
    free(items);
    free(where);
    if (fd >= 0)
        close(fd);
    free(how);
    return rc;
}
