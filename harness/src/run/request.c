/*
 * request.c: the one record of what the command line asked for (bench__request, pipeline.h),
 * and the values derived from it. The record holds what was given, each option not given as
 * the "not given" value its field names; every default a mode or a comparison needs is resolved
 * here from that, by one function, where it is needed. No copy of an option is kept in step by
 * hand: the paired options, the confirmation time, the noise threshold and the probes asked
 * for are computed from the record each time.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "probes/probes.h"
#include "run/pipeline.h"
#include "store/history.h"

void bench__request_init(bench__request *c)
{
    memset(c, 0, sizeof *c);
    c->run.nresamples = BENCH__DEFAULT_NRESAMPLES;
    c->run.confidence_level = BENCH__DEFAULT_CONFIDENCE_LEVEL;
    c->run.seed = BENCH__DEFAULT_SEED;
    c->color = -1;
    c->strict = -1;
    c->noise_threshold = -1;
    c->ab_schedule = -1;
    c->confirm_time = -1;
    c->history_programs = -1;
}

double bench__request_noise_threshold(const bench__request *c, double mode_default)
{
    return c->noise_threshold >= 0 ? c->noise_threshold : mode_default;
}

bench__compare_opts bench__request_compare_opts(const bench__request *c)
{
    return (bench__compare_opts){
        .significance_level = c->significance_level > 0 ? c->significance_level
                                                        : BENCH__DEFAULT_SIGNIFICANCE_LEVEL,
        /* Interleaving cancels the drift between runs: --ab has a threshold of its own (and
         * counts theirs, set by their client when it compares: instr.c). */
        .noise_threshold = bench__request_noise_threshold(
            c, c->ab ? BENCH__DEFAULT_AB_NOISE_THRESHOLD : BENCH__DEFAULT_NOISE_THRESHOLD),
        .default_run_noise = BENCH__DEFAULT_RUN_NOISE,
    };
}

bool bench__request_progress(const bench__request *c)
{
    return isatty(STDERR_FILENO) && c->format == BENCH__FMT_PRETTY;
}

bench__ab_options bench__request_ab_options(const bench__request *c)
{
    return (bench__ab_options){
        .seconds = c->ab_time > 0 ? c->ab_time : BENCH__AB_DEFAULT_SECONDS,
        .max_pairs = c->ab_pairs > 0 ? c->ab_pairs : BENCH__AB_DEFAULT_MAX_PAIRS,
        .pairs_capped = c->ab_pairs > 0,
        .sample_ms = BENCH__AB_DEFAULT_SAMPLE_MS,
        .significance_level = c->cmp.significance_level,
        .noise_threshold = c->cmp.noise_threshold,
        .schedule = c->ab_schedule >= 0 ? (bench__ab_schedule)c->ab_schedule : BENCH__AB_PINNED,
        .fixed_layout = c->run.fixed_layout,
        .timeout_s = bench__request_timeout(c),
        .seed = c->run.seed,
        .progress = bench__request_progress(c),
    };
}

double bench__request_confirm_time(const bench__request *c, size_t k)
{
    if (c->confirm_time >= 0)
        return c->confirm_time;
    return fmax(BENCH__CONFIRM_MIN_TIME,
                fmin(BENCH__DEFAULT_CONFIRM_TIME, BENCH__CONFIRM_BUDGET / (double)(k ? k : 1)));
}

size_t bench__request_history_programs(const bench__request *c)
{
    return c->history_programs >= 0 ? (size_t)c->history_programs : BENCH__HISTORY_PROGRAMS;
}

const char *bench__request_probe(const bench__request *c, const char *kind, bool *asked)
{
    size_t k;
    *asked = bench__probe_kind_find(kind, &k) && c->probe_on[k];
    return *asked ? c->probe_arg[k] : NULL;
}

bench__gate bench__request_gate(const bench__request *c)
{
    return (bench__gate){.strict = c->strict > 0, .fail_on_regression = c->fail_on_regression,
                         .fail_on_inconclusive = c->fail_on_inconclusive};
}
