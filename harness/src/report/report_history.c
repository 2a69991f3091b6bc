/*
 * report_history.c: the run history as a reader sees it: --history-show's table of runs and each
 * benchmark's series (its changes of environment, change points and trend), the history gate's
 * lines, and the lines of a paired confirmation of a history step (--history-confirm, and the
 * gate's steps). Everything here was decided before it arrives (store/history_show.c read the
 * series and windows, compare/verdict.c judged them); these functions only word it. Ids,
 * revisions and hosts come from a database others may write: every one is printed escaped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "report/report_history.h"
#include "sys/proc.h"

/* A change as a percentage: two decimals, or three significant digits where that would be
 * a long row of digits (a series whose medians span many orders of magnitude). */
static void fmt_pct(char *buf, size_t len, double x)
{
    bench__msg(buf, len, fabs(100 * x) < 1e6 ? "%+.2f%%" : "%+.3g%%", 100 * x);
}

/* Digits of a program's hash shown in a table: enough to tell builds apart at a glance. */
#define PROGRAM_DIGITS 12
/* A change of a benchmark's code identity, as --history-show says it. */
#define CODE_CHANGED BENCH__HISTORY_CODE_CHANGED

/* A program's hash ("sha256:HEX") as a table shows it: its first PROGRAM_DIGITS hex digits,
 * "-" when the run recorded none. */
static const char *short_program(const char *hash, char *buf, size_t len)
{
    const char *hex = hash ? bench__skip_prefix(hash, "sha256:") : NULL;
    if (!hex || strlen(hex) < PROGRAM_DIGITS)
        return hash && *hash ? bench__escape(buf, len, hash) : "-";
    bench__msg(buf, len, "%.*s", PROGRAM_DIGITS, hex);
    return buf;
}

/* A text column, escaped for the terminal ("-" when NULL or empty). */
static const char *column(const char *s, char *buf, size_t len)
{
    return s && *s ? bench__escape(buf, len, s) : "-";
}

/* Characters (not bytes) of a UTF-8 string, as a database counts a text's length. */
static size_t chars(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* The list of runs. */
static void show_runs(FILE *o, const bench__hrun *r, size_t n)
{
    /* The revision column as wide as its longest entry ("0123456789ab-dirty" is 18). */
    int w = 16;
    for (size_t i = 0; i < n; i++) {
        size_t c = chars(r[i].revision);
        w = (int)c > w ? (c < 255 ? (int)c : 255) : w;
    }
    fprintf(o, "%6s  %-20s  %-*s  %-5s  %-*s  %-20s  %10s  %s\n", "run", "time", w, "revision",
            "dirty", PROGRAM_DIGITS, "program", "host", "benchmarks", "baseline");
    char a[256], b[256], c[256], d[256], e[256];
    for (size_t i = 0; i < n; i++)
        fprintf(o, "%6lld  %-20s  %-*s  %-5s  %-*s  %-20s  %10lld  %s\n", r[i].id,
                column(r[i].time, a, sizeof a), w, column(r[i].revision, b, sizeof b),
                r[i].dirty < 0 ? "-" : r[i].dirty ? "yes" : "no", PROGRAM_DIGITS,
                short_program(r[i].program, e, sizeof e), column(r[i].host, c, sizeof c),
                r[i].benchmarks, column(r[i].baseline, d, sizeof d));
}

/* Prints one benchmark's series and what was found in it. */
static void print_series(FILE *o, const bench__history_series *x, size_t tests)
{
    char shown[BENCH__ESCAPED_ID], rev[256], prog[256], t[32];
    const bench__cp_result *cr = &x->found;
    size_t n = x->n;
    fprintf(o, "\n%s%s%s: %zu run%s\n", bench__escape(shown, sizeof shown, x->id),
            x->machine ? " on " : "", x->machine ? x->machine : "", n, n == 1 ? "" : "s");
    int w = 16; /* the revision column, as wide as its longest entry */
    for (size_t i = 0; i < n; i++) {
        int len = (int)strlen(bench__escape(rev, sizeof rev, x->revisions[i]));
        w = len > w ? len : w;
    }
    fprintf(o, "  %6s  %-*s  %-*s  %s\n", "run", w, "revision", PROGRAM_DIGITS, "program",
            "median");
    for (size_t i = 0; i < n; i++) {
        bench__fmt_time(t, sizeof t, x->median_ns[i]);
        fprintf(o, "  %6lld  %-*s  %-*s  %s\n", x->runs[i], w,
                bench__escape(rev, sizeof rev, x->revisions[i]), PROGRAM_DIGITS,
                short_program(x->programs[i], prog, sizeof prog), t);
    }
    for (size_t c = 0; c < x->nchanges; c++) {
        /* The benchmark's code alone: what changed is the benchmark, not its environment. */
        bool code = strcmp(x->changes[c].what, CODE_CHANGED) == 0;
        fprintf(o, "  %s at run %lld%s%s%s\n", code ? CODE_CHANGED : "changed",
                x->runs[x->changes[c].index], code ? "" : ": ", code ? "" : x->changes[c].what,
                x->changes[c].step_removed ? " (the step there is this change's, not a change "
                                             "point)" : "");
    }
    if (cr->ncp == 0)
        fprintf(o, "  change points: none%s\n",
                n < 2 * BENCH__CP_MIN_SEGMENT ? " (too few runs to tell)" : "");
    for (size_t c = 0; c < cr->ncp; c++) {
        char s[32], lo[32], hi[32];
        const bench__cp *cp = &cr->cp[c];
        fmt_pct(s, sizeof s, cp->step);
        fmt_pct(lo, sizeof lo, cp->step_lower);
        fmt_pct(hi, sizeof hi, cp->step_upper);
        fprintf(o, "  change point: at run %lld (first revision after it %s): %s [%s, %s], "
                   "p %.2g, located within runs %lld to %lld\n", x->runs[cp->index],
                bench__escape(rev, sizeof rev, x->revisions[cp->index]), s, lo, hi,
                cp->p_adjusted, x->runs[cp->index_lower], x->runs[cp->index_upper]);
    }
    if (cr->trend.found) {
        char s[32], lo[32], hi[32];
        fmt_pct(s, sizeof s, cr->trend.per_point);
        fmt_pct(lo, sizeof lo, cr->trend.lower);
        fmt_pct(hi, sizeof hi, cr->trend.upper);
        fprintf(o, "  trend: %s per run [%s, %s] over the last %zu runs, p %.2g", s, lo, hi,
                cr->trend.points, cr->trend.p_adjusted);
        if (tests > 1)
            fprintf(o, " (adjusted over the %zu series shown)", tests);
        if (cr->nabsorbed)
            fprintf(o, " (a line fits better than the %zu step%s found)", cr->nabsorbed,
                    cr->nabsorbed == 1 ? "" : "s");
        fputc('\n', o);
    } else if (n >= 3) {
        fprintf(o, "  trend: none\n");
    }
}

void bench__report_history_show(FILE *o, const bench__hrun *runs, size_t nruns,
                                const bench__history_view *view)
{
    show_runs(o, runs, nruns);
    for (size_t i = 0; i < view->n; i++)
        print_series(o, &view->s[i], view->trend_tests);
}

/* ---- --history-gate ---- */

/* The gate's findings of b, as judged (compare/verdict.c's bench__gate_window). */
static void gate_one(FILE *o, const bench__history_gated *b)
{
    const bench__gate_result *g = &b->g;
    char shown[BENCH__ESCAPED_ID], s[32], lo[32], hi[32], total[32];
    bench__escape(shown, sizeof shown, b->id);
    if (g->step_fails || g->step_unsure) {
        fmt_pct(s, sizeof s, g->step.step);
        fmt_pct(lo, sizeof lo, g->step.step_lower);
        fmt_pct(hi, sizeof hi, g->step.step_upper);
        fprintf(o, "%s: %s against the last %zu runs: %s [%s, %s]%s\n", shown,
                g->step_fails ? "regressed" : "cannot tell", b->n - 1, s, lo, hi,
                g->step_fails ? "" : ", the earlier runs spread too wide to tell it from no "
                                     "change: it does not fail the gate");
    }
    if (g->trend_slows) {
        fmt_pct(s, sizeof s, g->trend.per_point);
        fmt_pct(lo, sizeof lo, g->trend.lower);
        fmt_pct(hi, sizeof hi, g->trend.upper);
        fmt_pct(total, sizeof total, g->trend_total);
        fprintf(o, "%s: %sslowing trend over the last %zu runs: %s per run [%s, %s], %s over "
                   "them\n", shown, g->trend_fails ? "" : "warning: ", b->n, s, lo, hi, total);
    }
}

void bench__report_history_gate(FILE *o, const bench__history_gate_run *g)
{
    size_t n = g->n;
    fprintf(o, "history gate: %zu of %zu benchmark%s tested against up to %zu earlier runs "
               "(noise threshold %g, family level %g)\n", g->tested, n, n == 1 ? "" : "s",
            g->window, g->noise_threshold, g->alpha);
    for (size_t i = 0; i < n; i++) {
        const bench__history_gated *b = &g->b[i];
        if (!b->tested) {
            char shown[BENCH__ESCAPED_ID];
            fprintf(o, "%s: not gated: %zu earlier run%s in the history, fewer than %d\n",
                    bench__escape(shown, sizeof shown, b->id), b->n ? b->n - 1 : 0,
                    b->n == 2 ? "" : "s", BENCH__HISTORY_GATE_MIN);
        } else if (b->judged) {
            gate_one(o, b);
        }
    }
}

/* ---- a history step's paired confirmation ---- */

void bench__report_confirm_heading(FILE *o, size_t npoints, bool never, double seconds)
{
    if (npoints == 0)
        fprintf(o, "\nconfirmation: no change point to confirm\n");
    else if (never)
        fprintf(o, "\nconfirmation: not run (--confirm-time 0)\n");
    else
        fprintf(o, "\nconfirmation: the programs of the runs on both sides of the program change "
                   "nearest each change point, within the runs it may be at, run again in pairs "
                   "(%.0f s each at most)\n", seconds);
}

void bench__report_confirm_point(FILE *o, const bench__history_series *s, const bench__cp *cp)
{
    char id[BENCH__ESCAPED_ID];
    bench__escape(id, sizeof id, s->id);
    fprintf(o, "%s: change point at run %lld (%+.2f%%), within runs %lld to %lld: ", id,
            s->runs[cp->index], 100.0 * cp->step, s->runs[cp->index_lower],
            s->runs[cp->index_upper]);
}

void bench__report_confirm_same_program(FILE *o, long long run_a, long long run_b, bool pair,
                                        const char *hash)
{
    fprintf(o, "not a code change: runs %lld %s %lld measured the same program (%s), so the step "
               "is the machine's or the environment's\n", run_a, pair ? "and" : "to", run_b,
            hash);
}

void bench__report_confirm_cannot(FILE *o, const char *why)
{
    char shown[4 * 768];
    fprintf(o, "cannot confirm: %s\n", bench__escape(shown, sizeof shown, why));
}

/* The words of what a paired result says of the step it checks (bench__verdict_step_check). */
static const char *outcome(bench__step_check check)
{
    switch (check) {
    case BENCH__STEP_CONFIRMED:
        return "confirmed";
    case BENCH__STEP_OTHER_WAY:
        return "not reproduced (the programs differ the other way)";
    case BENCH__STEP_ALIKE:
        return "not reproduced (the programs measure alike: the step was not the code's)";
    case BENCH__STEP_UNDECIDED:
        break;
    }
    return "inconclusive (the paired run could not tell)";
}

void bench__report_confirm_checked(FILE *o, bench__step_check check, const bench__change *paired,
                                   size_t pairs, long long run_a, long long run_b,
                                   const bench__cp *placed)
{
    fprintf(o, "%s: %+.2f%% [%+.2f%%, %+.2f%%] paired, programs of runs %lld and %lld, %zu pairs",
            outcome(check), 100.0 * (paired->ratio - 1.0), 100.0 * (paired->ratio_lower - 1.0),
            100.0 * (paired->ratio_upper - 1.0), run_a, run_b, pairs);
    if (placed)
        fprintf(o, "; the step is placed at run %lld, where the program changed: "
                   "%+.2f%% [%+.2f%%, %+.2f%%]", run_b, 100.0 * placed->step,
                100.0 * placed->step_lower, 100.0 * placed->step_upper);
    fputc('\n', o);
}

void bench__report_confirm_interrupted(FILE *o, int signo)
{
    fprintf(o, "interrupted by %s\n", bench__signal_name(signo));
}

void bench__report_gate_unchecked(FILE *o, const char *id, bench__gate_unchecked what,
                                  const char *why, long long run)
{
    char shown[BENCH__ESCAPED_ID], reason[4 * 768];
    bench__escape(shown, sizeof shown, id);
    if (what == BENCH__GATE_NOT_RUN)
        fprintf(o, "%s: the step is not confirmed (--confirm-time 0): the numbers alone fail the "
                   "gate\n", shown);
    else if (what == BENCH__GATE_SAME_PROG)
        fprintf(o, "%s: not a code change: run %lld measured this very program, so the step is "
                   "the machine's or the environment's: it does not fail the gate\n", shown, run);
    else
        fprintf(o, "%s: the step is not confirmed (%s): the numbers alone fail the gate\n", shown,
                bench__escape(reason, sizeof reason, why));
}

void bench__report_gate_confirming(FILE *o, const char *id, long long run, double seconds)
{
    char shown[BENCH__ESCAPED_ID];
    fprintf(o, "%s: confirming the step: the program of run %lld against this one, paired (%.0f "
               "s at most)\n", bench__escape(shown, sizeof shown, id), run, seconds);
}

void bench__report_gate_checked(FILE *o, const char *id, const bench__change *paired,
                                size_t pairs, long long run, bool fails)
{
    char shown[BENCH__ESCAPED_ID];
    bench__verdict v = paired->verdict;
    fprintf(o, "%s: %s: %+.2f%% [%+.2f%%, %+.2f%%] paired against run %lld's program, %zu "
               "pairs%s\n", bench__escape(shown, sizeof shown, id),
            v == BENCH__V_REGRESSED     ? "regression confirmed"
            : v == BENCH__V_INCONCLUSIVE ? "inconclusive"
                                         : "not reproduced",
            100.0 * (paired->ratio - 1.0), 100.0 * (paired->ratio_lower - 1.0),
            100.0 * (paired->ratio_upper - 1.0), run, pairs,
            fails ? ": it fails the gate" : ": it does not fail the gate");
}
