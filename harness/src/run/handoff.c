/*
 * handoff.c: the two modes that measure nothing the pipeline reports, handed over by
 * bench__pipeline_run (pipeline.h): --profile-time (the benchmarks run for an outside profiler,
 * iterations only, no statistics) and --ab (the old build's list, the paired run of ab.c, then
 * --explain of what changed and --trace of the pairs).
 */
#include <stdlib.h>
#include <string.h>

#include "measure/trace.h"
#include "run/code_identity.h"
#include "run/explain.h"
#include "run/pipeline.h"
#include "run/programs.h"
#include "sys/proc.h"

/* ---- --profile-time: iterations for an outside profiler, no statistics ---- */

int bench__profile_time_run(const bench__request *c, const bench__instance *all,
                            const bool *selected, size_t n)
{
    int exit_code = BENCH_EXIT_OK;
    bench__crash_handlers_install();
    for (size_t i = 0; i < n; i++) {
        if (!selected[i])
            continue;
        bench__result r;
        memset(&r, 0, sizeof r);
        bench__run_instance(&all[i], &c->run, &r);
        char id[BENCH__ESCAPED_ID], why[4 * sizeof r.message];
        bench__escape(id, sizeof id, all[i].id);
        bench__escape(why, sizeof why, r.message);
        if (r.status == BENCH__OK) {
            char per[32];
            bench__fmt_time(per, sizeof per,
                            r.profile_iters ? r.profile_ns / (double)r.profile_iters : 0);
            printf("%s: profiled %llu iterations in %.2f s (%s per iteration)\n", id,
                   (unsigned long long)r.profile_iters, r.measure_wall_s, per);
        } else if (r.status == BENCH__SKIPPED) {
            printf("%s: skipped: %s\n", id, why);
        } else {
            bench__errf("benchmark '%s' failed: %s\n", id, why);
            exit_code = BENCH_EXIT_FAILED;
        }
        bench__result_destroy(&r);
    }
    return bench__finish_stdout(exit_code);
}

/* ---- --ab: two builds, paired (ab.c) ---- */

/* --explain after the paired verdicts: the changed benchmarks' functions (explain.c). */
static int explain_after(const char *old_prog, const char *new_prog,
                         const bench__ab_item *items, size_t n, void *arg)
{
    return bench__explain_items(stdout, old_prog, -1, new_prog, -1, items, n, arg, NULL);
}

int bench__ab_mode_run(bench__request *c, const bench__instance *all, size_t n, const bool *selected)
{
    /* The old build's benchmarks for the same FILTERs that this one lacks: removed. */
    char *text = bench__ab_other_list(c, c->ab);
    size_t lines = 0, nremoved = 0;
    for (const char *p = text; p && *p; p++)
        lines += *p == '\n';
    const char **removed = calloc(lines ? lines : 1, sizeof *removed);
    for (char *line = text, *nl; removed && line && (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = '\0';
        if (*line && !bench__has_instance(all, n, line))
            removed[nremoved++] = line;
    }
    bench__ab_options ab = bench__request_ab_options(c);
    ab.removed = removed;
    ab.nremoved = nremoved;
    ab.old_code = bench__program_code(c, c->ab);
    ab.new_code = bench__self_code(c);
    ab.json_path = c->json_path;
    bench__explain_opts xo = {.mode = c->instructions ? BENCH__EXPLAIN_INSTRUCTIONS
                                                      : BENCH__EXPLAIN_TIME,
                              .seconds = ab.seconds, .timeout_s = ab.timeout_s, .seed = ab.seed};
    if (c->explain) {
        ab.after = explain_after;
        ab.after_arg = &xo;
    }
    bench__gate gate = bench__request_gate(c);
    if (c->run.trace_path)
        bench__trace_start(c->run.trace_path); /* its pairs, on the manager's track */
    int exit_code = bench__finish_stdout(bench__ab_run(c->ab, all, selected, n, &ab,
                                                           &gate,
                                                           bench__use_color(c->color)));
    if (c->run.trace_path && !bench__proc_interrupted() && bench__trace_write() != 0 &&
        exit_code == BENCH_EXIT_OK)
        exit_code = BENCH_EXIT_USAGE;
    free(removed);
    free(text);
    bench__code_ids_free(ab.old_code);
    bench__code_ids_free(ab.new_code);
    return exit_code;
}
