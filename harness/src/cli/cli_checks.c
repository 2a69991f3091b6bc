/*
 * cli_checks.c: the combinations of options checked in one place, after every option was read
 * (cli_options.c) and before anything runs: an option that another makes meaningless, or that
 * needs one not given, is refused with one line naming both (exit code 2) rather than ignored.
 * A gate option without a comparison would otherwise let a CI gate pass whatever happened.
 */
#include <stdbool.h>
#include <string.h>

#include "cli/cli.h"
#include "core/base.h"
#include "core/probe.h"
#include "report/report.h"
#include "run/pipeline.h"

/* The combinations of the run history's options and of instruction mode's; 0, or -1 after the
 * one-line error. */
static int check_mode_combinations(const bench__request *c)
{
    /* ---- the run history (history.c) ---- */
    if (c->history_copy && (c->history_show || c->load_baseline || c->save_baseline ||
                            c->baseline || c->ab || c->calibrate || c->list || c->history_gate ||
                            c->nfilters)) {
        bench__errf("--history-copy copies a history into --history TO and runs nothing: it "
                    "cannot be combined with --history-show, baselines, --ab, --calibrate, "
                    "--list, --history-gate or FILTERs\n");
        return -1;
    }
    if (c->history_show && (c->history_path || c->load_baseline || c->save_baseline ||
                            c->baseline || c->ab || c->calibrate || c->list)) {
        bench__errf("--history-show reads a history and runs nothing: it cannot be "
                    "combined with --history, baselines, --ab, --calibrate or --list\n");
        return -1;
    }
    if (c->history_show && ((c->format != BENCH__FMT_PRETTY && c->format != BENCH__FMT_BMF) ||
                            (c->format == BENCH__FMT_BMF &&
                             (c->history_confirm || c->json_path)))) {
        bench__errf("--history-show prints its report, or with --output-format bmf the newest "
                    "run in the bencher Metric Format (then without --history-confirm and "
                    "--json)\n");
        return -1;
    }
    if (c->history_confirm && !c->history_show) {
        bench__errf("--history-confirm needs --history-show FILE: it confirms the "
                    "change points shown\n");
        return -1;
    }
    if (c->history_path && (c->ab || c->load_baseline || c->run.profile_time > 0 ||
                            c->instructions)) {
        bench__errf("--history records runs of times: it cannot be combined with "
                    "--ab, --load-baseline, --profile-time or --instructions\n");
        return -1;
    }
    /* ---- --trace (measure/trace.c): a timeline of what a run measures ---- */
    if (c->run.trace_path && (c->list || c->load_baseline || c->history_show ||
                              c->run.profile_time > 0)) {
        bench__errf("--trace writes the timeline of a run that measures: it cannot be combined "
                    "with --list, --load-baseline, --history-show or --profile-time\n");
        return -1;
    }
    /* ---- instruction mode (instr.c) ---- */
    if ((c->instr_iterations || c->instr_cache_sim) && !c->instructions) {
        bench__errf("--instructions-iterations and --instructions-cache-sim need "
                    "--instructions\n");
        return -1;
    }
    bool probes_asked = false, perf, alloc;
    for (size_t k = 0; k < BENCH__MAX_PROBE_KINDS; k++)
        probes_asked = probes_asked || c->probe_on[k];
    bench__request_probe(c, "perf", &perf);
    bench__request_probe(c, "alloc", &alloc);
    if (c->instructions && probes_asked && !perf && !alloc) {
        bench__errf("--instructions counts instructions under valgrind: --probe does "
                    "not apply\n");
        return -1;
    }
    if (c->explain && !c->ab && !c->baseline && !c->history_confirm && !c->history_gate) {
        bench__errf("--explain explains the verdicts of a comparison of two programs: give "
                    "--ab OTHER, --baseline NAME, --history-gate K or --history-confirm\n");
        return -1;
    }
    if (c->explain && c->baseline && c->instructions) {
        bench__errf("--explain with --baseline explains times, against the program saved with "
                    "the baseline (an --instructions baseline keeps none): explain counts with "
                    "--ab OTHER --explain --instructions\n");
        return -1;
    }
    if (c->instructions && (c->ab && !c->explain)) {
        bench__errf("--instructions counts instructions under valgrind: with --ab it only "
                    "chooses how --explain explains (callgrind's counts): add --explain\n");
        return -1;
    }
    if (c->instructions && (c->calibrate || c->run.profile_time > 0 ||
                            perf || alloc || c->gbench_path)) {
        bench__errf("--instructions counts instructions under valgrind: it cannot be "
                    "combined with --calibrate, --profile-time, --perf-events, "
                    "--alloc-stats or --export-gbench\n");
        return -1;
    }
    if (c->instructions && (c->run.processes || c->run.in_process)) {
        bench__errf("--instructions counts each benchmark exactly in one worker "
                    "process under valgrind: --processes and --in-process do not apply\n");
        return -1;
    }
    if (c->instructions && c->format != BENCH__FMT_PRETTY && c->format != BENCH__FMT_JSON) {
        bench__errf("--instructions reports as pretty or json only (the other "
                    "formats show times)\n");
        return -1;
    }
    /* ---- end instruction mode ---- */
    return 0;
}

/* The first option given that only means something in a comparison, or NULL. The history
 * gate is a comparison too, with the runs before: it takes the level and the threshold. */
static const char *comparison_option(const bench__request *c)
{
    if (c->fail_on_regression)
        return "--fail-on-regression";
    if (c->significance_level > 0 && !c->history_gate && !c->history_confirm)
        return "--significance-level";
    if (c->noise_threshold >= 0 && !c->history_gate && !c->history_confirm)
        return "--noise-threshold";
    if (c->strict >= 0)
        return c->strict ? "--baseline-strict" : "--baseline-lenient";
    if (c->fail_on_inconclusive)
        return "--fail-on-inconclusive";
    return NULL;
}

int bench__cli_check_combinations(const bench__request *c)
{
    if (c->load_baseline && !c->baseline) {
        bench__errf("--load-baseline needs --baseline OLD to compare with\n");
        return -1;
    }
    /* A gate option without a comparison would be silently ignored, and a CI gate that forgot
     * --baseline would pass whatever happened: refuse it instead. */
    const char *gate = comparison_option(c);
    if (gate && !c->baseline && !c->ab) {
        /* The level and the threshold are the history gate's too. */
        bool history_too = strcmp(gate, "--significance-level") == 0 ||
                           strcmp(gate, "--noise-threshold") == 0;
        bench__errf("%s needs a comparison: give --baseline NAME or --ab OTHER%s\n",
                    gate, history_too ? " (or --history-gate K, or --history-confirm)" : "");
        return -1;
    }
    if ((c->confirm_time >= 0 || c->trust_snapshots) && !c->baseline && !c->history_confirm &&
        !c->history_gate) {
        bench__errf("%s needs --baseline NAME (or --history-confirm, or "
                    "--history-gate K)\n",
                    c->confirm_time >= 0 ? "--confirm-time" : "--trust-snapshots");
        return -1;
    }
    if ((c->ab_time > 0 || c->ab_pairs > 0 || c->ab_schedule >= 0) && !c->ab) {
        bench__errf("%s needs --ab OTHER\n", c->ab_time > 0    ? "--ab-time"
                                             : c->ab_pairs > 0 ? "--ab-pairs"
                                                               : "--ab-schedule");
        return -1;
    }
    if (c->load_baseline && (c->save_baseline || c->calibrate)) {
        bench__errf("--load-baseline runs nothing, so it cannot be combined with "
                    "--save-baseline or --calibrate\n");
        return -1;
    }
    if (c->ab && (c->baseline || c->save_baseline || c->load_baseline || c->calibrate ||
                  c->list)) {
        bench__errf("--ab compares two programs and runs nothing else: it cannot be "
                    "combined with baselines, --calibrate or --list\n");
        return -1;
    }
    /* The paired comparison and the comparison of two saved files report in words on stdout: a
     * format or file they cannot write is refused rather than answered with text where a parser
     * expects JSON or CSV, or with no file at all. --ab writes its own JSON file (--json). */
    if ((c->ab || c->load_baseline) &&
        (c->format != BENCH__FMT_PRETTY || c->gbench_path || (c->json_path && !c->ab))) {
        bench__errf("%s\n", c->ab ? "--ab reports in the pretty format only (--json FILE writes "
                                    "its outcome as JSON): --export-gbench and other "
                                    "--output-format values do not apply"
                                  : "--load-baseline reports in the pretty format only: --json, "
                                    "--export-gbench and other --output-format values do not "
                                    "apply");
        return -1;
    }
    if (c->run.profile_time > 0 &&
        (c->baseline || c->save_baseline || c->load_baseline || c->calibrate || c->json_path ||
         c->gbench_path || c->ab)) {
        bench__errf("--profile-time takes no statistics: it cannot be combined with "
                    "baselines, --calibrate, --json, --export-gbench or --ab\n");
        return -1;
    }
    if (c->run.in_process && c->run.processes) {
        bench__errf("--processes and --in-process contradict each other: pick one\n");
        return -1;
    }
    bool isolated = !c->run.in_process && c->run.profile_time <= 0 && !c->ab;
    if (c->run.processes && !isolated) {
        bench__errf("--processes sets the worker processes of a measuring run: it "
                    "cannot be combined with --in-process, --profile-time or --ab\n");
        return -1;
    }
    if (c->run.timeout_s > 0 && !isolated && !c->ab) {
        bench__errf("--timeout limits worker processes: it cannot be combined with "
                    "--in-process or --profile-time, which start none\n");
        return -1;
    }
    if (c->run.fixed_layout && (c->run.in_process || c->run.profile_time > 0)) {
        bench__errf("--fixed-layout concerns worker processes: it cannot be combined "
                    "with --in-process or --profile-time\n");
        return -1;
    }
    if (isolated && !c->instructions && (c->run.cli.rounds || c->run.cli.target_precision)) {
        bench__errf("--rounds and --target-precision shape the samples of one "
                    "process: add --in-process to use them (worker processes are set with "
                    "--processes, and never stop early)\n");
        return -1;
    }
    if (c->calibrate && !c->save_baseline) {
        bench__errf("--calibrate needs --save-baseline NAME to store the noise in\n");
        return -1;
    }
    return check_mode_combinations(c);
}

int bench__cli_check_history(const bench__request *c)
{
    if (c->run_id && !c->history_path) {
        bench__errf("--run-id needs --history FILE (or BENCH_HISTORY): it names the run of the "
                    "history this part is recorded in\n");
        return -1;
    }
    if (c->history_trust_programs && !c->history_confirm && !c->history_gate) {
        bench__errf("--history-trust-programs needs --history-confirm or --history-gate K: it "
                    "lets their confirmation run the programs a database holds\n");
        return -1;
    }
    if (c->history_programs >= 0 && !c->history_path) {
        bench__errf("--history-programs needs --history FILE (or BENCH_HISTORY): it "
                    "keeps the programs of the runs recorded there\n");
        return -1;
    }
    if (c->history_gate && (!c->history_path || c->list || c->run.profile_time > 0)) {
        bench__errf("--history-gate needs a run of times recorded with --history "
                    "FILE (or $BENCH_HISTORY)\n");
        return -1;
    }
    return 0;
}
