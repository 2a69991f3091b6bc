/*
 * cli_options.c: the command line read into one struct (bench__request): the option table and
 * the value parsers (the help is cli_help.c's, the checks of combinations cli_checks.c's, the
 * FILTERs' selection run/select.c's).
 *
 * Every error is one line on stderr that names the flag, value or file, and a documented exit
 * code (2 for usage and input errors). Parsing never exits from inside a helper: each returns a
 * status that bench_main turns into the exit code.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/internal.h"
#include "compare/compare.h"
#include "probes/probes.h"
#include "run/instr.h"
#include "run/select.h"
#include "sys/proc.h"

/* ---- value parsers: each returns 0, or -1 after printing the one-line error ---- */

static int bad_value(const char *flag, const char *value, const char *what)
{
    bench__errf("%s: '%s' is not %s\n", flag, value, what);
    return -1;
}

/* Whether v is a number as it is written in decimal: digits with at most one point (and, with
 * `exponent`, an exponent such as e-3), nothing else. strtod and strtoull also take leading
 * spaces, signs, hexadecimal ("0x10") and "inf": none of these is a value a flag means. */
static bool plain_decimal(const char *v, bool exponent)
{
    size_t digits = 0;
    bool point = false;
    for (; *v && *v != 'e' && *v != 'E'; v++) {
        if (*v >= '0' && *v <= '9')
            digits++;
        else if (*v == '.' && exponent && !point)
            point = true;
        else
            return false;
    }
    if (digits == 0)
        return false;
    if (!*v)
        return true;
    if (!exponent)
        return false;
    v++;
    if (*v == '+' || *v == '-')
        v++;
    if (!*v)
        return false;
    for (; *v; v++)
        if (*v < '0' || *v > '9')
            return false;
    return true;
}

static int parse_double(const char *flag, const char *v, double lo, double hi, bool lo_open,
                        bool hi_open, const char *what, double *out)
{
    char *end;
    errno = 0;
    if (!plain_decimal(v, true))
        return bad_value(flag, v, what);
    double d = strtod(v, &end);
    if (errno || end == v || *end != '\0' || !isfinite(d) || d < lo || d > hi ||
        (lo_open && d == lo) || (hi_open && d == hi))
        return bad_value(flag, v, what);
    *out = d;
    return 0;
}

static int parse_u64(const char *flag, const char *v, uint64_t lo, uint64_t hi, const char *what,
                     uint64_t *out)
{
    char *end;
    errno = 0;
    if (!plain_decimal(v, false))
        return bad_value(flag, v, what);
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end != '\0' || x < lo || x > hi)
        return bad_value(flag, v, what);
    *out = x;
    return 0;
}

/* Asks for the probe kind `name` of the table with its argument (NULL: none); the kinds with
 * options of their own keep those fields in step, which the option checks read. */
static int ask_probe(bench__request *c, const char *name, const char *arg)
{
    size_t k;
    if (!bench__probe_kind_find(name, &k))
        return -1;
    c->probe_on[k] = true;
    c->probe_arg[k] = arg;
    if (strcmp(name, "perf") == 0)
        c->perf_events = arg;
    else if (strcmp(name, "alloc") == 0)
        c->alloc_stats = true;
    return 0;
}

/* --probe NAME[=ARG]: a kind of the table, its argument when it takes one. */
static int parse_probe(bench__request *c, const char *flag, const char *v)
{
    char name[64];
    const char *eq = strchr(v, '=');
    size_t len = eq ? (size_t)(eq - v) : strlen(v);
    size_t nkinds;
    const bench__probe_kind *const *kinds = bench__probe_kinds(&nkinds);
    const bench__probe_kind *kind = NULL;
    if (len < sizeof name) {
        memcpy(name, v, len);
        name[len] = '\0';
        kind = bench__probe_kind_find(name, NULL);
    }
    if (!kind || kind->always) {
        char list[256] = "";
        for (size_t k = 0; k < nkinds; k++) {
            if (kinds[k]->always)
                continue;
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s%s", used ? ", " : "",
                     kinds[k]->name, kinds[k]->takes_arg ? "=ARG" : "");
        }
        char what[300];
        bench__msg(what, sizeof what, "one of %s", list);
        return bad_value(flag, v, what);
    }
    if (kind->takes_arg && (!eq || eq[1] == '\0')) {
        char what[96];
        bench__msg(what, sizeof what, "%s=ARG (%s takes an argument)", kind->name, kind->name);
        return bad_value(flag, v, what);
    }
    if (!kind->takes_arg && eq) {
        char what[96];
        bench__msg(what, sizeof what, "%s alone (%s takes no argument)", kind->name, kind->name);
        return bad_value(flag, v, what);
    }
    return ask_probe(c, name, eq ? eq + 1 : NULL);
}

static int parse_choice(const char *flag, const char *v, const char *const *names, int n,
                        const char *what, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return bad_value(flag, v, what);
}

/* ---- the option table ---- */

typedef enum opt_id {
    O_LIST, O_EXACT, O_QUICK, O_WARM, O_MEAS, O_SAMPLES, O_ROUNDS, O_PRECISION, O_SAMPLING, O_NRES,
    O_CONF, O_SEED, O_FORMAT, O_JSON, O_COLOR, O_HELP, O_VERSION, O_CONTEXT, O_SAVE, O_BASE,
    O_LOAD, O_BASEDIR, O_LENIENT, O_STRICT, O_CALIBRATE, O_SIGNIF, O_NOISE, O_FAILREG, O_AB,
    O_AB_TIME, O_AB_PAIRS, O_AB_SCHEDULE, O_FIXED_LAYOUT, O_FAIL_INCONCLUSIVE, O_PROFILE_TIME,
    O_PERF_EVENTS, O_LIST_EVENTS, O_ALLOC_STATS, O_PROBE, O_TRACE,
    O_EXPORT_GBENCH, O_INSTR, O_INSTR_ITERS, O_INSTR_CACHE, O_PROCESSES,
    O_IN_PROCESS, O_TIMEOUT, O_CONFIRM_TIME, O_GPU_LOCK, O_TRUST_SNAPSHOTS, O_HISTORY,
    O_HISTORY_SHOW,
    O_HISTORY_COPY,
    O_HISTORY_GATE,
    O_HISTORY_CONFIRM,
    O_HISTORY_PROGRAMS,
    O_SHARD,
    O_RUN_ID,
    O_NO_LAST,
    O_EXPLAIN,
} opt_id;

typedef struct opt_def {
    const char *name;
    char short_name;
    bool takes_value;
    opt_id id;
} opt_def;

static const opt_def options[] = {
    {"list", 0, false, O_LIST},
    {"exact", 0, false, O_EXACT},
    {"quick", 0, false, O_QUICK},
    {"warm-up-time", 0, true, O_WARM},
    {"measurement-time", 0, true, O_MEAS},
    {"sample-size", 0, true, O_SAMPLES},
    {"rounds", 0, true, O_ROUNDS},
    {"target-precision", 0, true, O_PRECISION},
    {"sampling", 0, true, O_SAMPLING},
    {"nresamples", 0, true, O_NRES},
    {"confidence-level", 0, true, O_CONF},
    {"seed", 0, true, O_SEED},
    {"output-format", 0, true, O_FORMAT},
    {"json", 0, true, O_JSON},
    {"trace", 0, true, O_TRACE},
    {"color", 0, true, O_COLOR},
    {"help", 'h', false, O_HELP},
    {"version", 'V', false, O_VERSION},
    {"context", 0, false, O_CONTEXT},
    {"save-baseline", 0, true, O_SAVE},
    {"baseline", 0, true, O_BASE},
    {"load-baseline", 0, true, O_LOAD},
    {"baseline-dir", 0, true, O_BASEDIR},
    {"baseline-lenient", 0, false, O_LENIENT},
    {"baseline-strict", 0, false, O_STRICT},
    {"calibrate", 0, true, O_CALIBRATE},
    {"significance-level", 0, true, O_SIGNIF},
    {"noise-threshold", 0, true, O_NOISE},
    {"fail-on-regression", 0, false, O_FAILREG},
    {"ab", 0, true, O_AB},
    {"ab-time", 0, true, O_AB_TIME},
    {"ab-pairs", 0, true, O_AB_PAIRS},
    {"ab-schedule", 0, true, O_AB_SCHEDULE},
    {"fixed-layout", 0, false, O_FIXED_LAYOUT},
    {"fail-on-inconclusive", 0, false, O_FAIL_INCONCLUSIVE},
    {"profile-time", 0, true, O_PROFILE_TIME},
    {"perf-events", 0, true, O_PERF_EVENTS},
    {"list-events", 0, false, O_LIST_EVENTS},
    {"alloc-stats", 0, false, O_ALLOC_STATS},
    {"probe", 0, true, O_PROBE},
    {"export-gbench", 0, true, O_EXPORT_GBENCH},
    {"instructions", 0, false, O_INSTR},
    {"instructions-iterations", 0, true, O_INSTR_ITERS},
    {"instructions-cache-sim", 0, false, O_INSTR_CACHE},
    {"processes", 0, true, O_PROCESSES},
    {"in-process", 0, false, O_IN_PROCESS},
    {"timeout", 0, true, O_TIMEOUT},
    {"confirm-time", 0, true, O_CONFIRM_TIME},
    {"gpu-lock-clocks", 0, true, O_GPU_LOCK},
    {"trust-snapshots", 0, false, O_TRUST_SNAPSHOTS},
    {"history", 0, true, O_HISTORY},
    {"history-show", 0, true, O_HISTORY_SHOW},
    {"history-copy", 0, true, O_HISTORY_COPY},
    {"history-gate", 0, true, O_HISTORY_GATE},
    {"history-confirm", 0, false, O_HISTORY_CONFIRM},
    {"history-programs", 0, true, O_HISTORY_PROGRAMS},
    {"shard", 0, true, O_SHARD},
    {"run-id", 0, true, O_RUN_ID},
    {"no-last", 0, false, O_NO_LAST},
    {"explain", 0, false, O_EXPLAIN},
};

/* Baseline names become file names: a safe character set, nothing that can leave the
 * directory. */
static int check_name(const char *flag, const char *v)
{
    size_t n = strlen(v);
    bool ok = n >= 1 && n <= BASELINE_NAME_MAX && v[0] != '.' && v[0] != '-';
    for (const char *p = v; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '_' || *p == '-' || *p == '.';
    if (!ok)
        return bad_value(flag, v, "a baseline name (1-64 of A-Z a-z 0-9 _ - ., not starting "
                                  "with '.' or '-')");
    return 0;
}

/* What a topic's apply function returns for an option of another topic. */
#define NOT_MINE 1

/* The options of one topic, what the run is and how it measures: modes, settings, processes: 0, -1
 * after the one-line error, or NOT_MINE. */
static int apply_run(bench__request *c, opt_id id, const char *flag, const char *v)
{
    uint64_t u;
    int choice;
    switch (id) {
    case O_LIST:
        c->list = true;
        return 0;
    case O_EXACT:
        c->exact = true;
        return 0;
    case O_QUICK:
        c->run.is_quick = true;
        return 0;
    case O_HELP:
        c->help = true;
        return 0;
    case O_VERSION:
        c->version = true;
        return 0;
    case O_WARM:
        if (parse_double(flag, v, 0, 3600, false, false, "a number of seconds in [0, 3600]",
                         &c->run.cli.warm_up_time))
            return -1;
        if (c->run.cli.warm_up_time == 0)
            c->run.cli.warm_up_time = 1e-9; /* zero means "unset" in settings: keep it tiny */
        return 0;
    case O_MEAS:
        return parse_double(flag, v, 0, 86400, true, false,
                            "a number of seconds in (0, 86400]", &c->run.cli.measurement_time);
    case O_SAMPLES:
        if (parse_u64(flag, v, 2, 100000, "an integer in [2, 100000]", &u))
            return -1;
        c->run.cli.sample_size = (int)u;
        return 0;
    case O_ROUNDS:
        if (parse_u64(flag, v, 1, 1000, "an integer in [1, 1000]", &u))
            return -1;
        c->run.cli.rounds = (int)u;
        return 0;
    case O_PRECISION:
        if (strcmp(v, "off") == 0) {
            c->run.cli.target_precision = -1;
            return 0;
        }
        return parse_double(flag, v, 0, 1, true, true, "a fraction in (0, 1) or 'off'",
                            &c->run.cli.target_precision);
    case O_SAMPLING: {
        static const char *const names[] = {"auto", "linear", "flat"};
        if (parse_choice(flag, v, names, 3, "auto, linear or flat", &choice))
            return -1;
        c->run.cli.sampling = (bench_sampling)choice;
        c->run.sampling_set = true;
        return 0;
    }
    case O_NRES:
        if (parse_u64(flag, v, 10, 10000000, "an integer in [10, 10000000]", &u))
            return -1;
        c->run.nresamples = (size_t)u;
        return 0;
    case O_CONF:
        return parse_double(flag, v, 0, 1, true, true, "a level in (0, 1)",
                            &c->run.confidence_level);
    case O_SEED:
        return parse_u64(flag, v, 0, UINT32_MAX, "an integer in [0, 4294967295]", &c->run.seed);
    case O_FIXED_LAYOUT:
        c->run.fixed_layout = true;
        return 0;
    case O_PROFILE_TIME:
        return parse_double(flag, v, 0, 86400, true, false, "a number of seconds in (0, 86400]",
                            &c->run.profile_time);
    case O_PERF_EVENTS:
        if (*v == '\0')
            return bad_value(flag, v, "a list of events");
        return ask_probe(c, "perf", v);
    case O_LIST_EVENTS:
        c->list_events = true;
        return 0;
    case O_ALLOC_STATS:
        return ask_probe(c, "alloc", NULL);
    case O_PROBE:
        return parse_probe(c, flag, v);
    /* ---- instruction mode (instr.c) ---- */
    case O_INSTR:
        c->instructions = true;
        return 0;
    case O_EXPLAIN:
        c->explain = true;
        return 0;
    case O_INSTR_ITERS:
        c->instr_iterations_set = true;
        return parse_u64(flag, v, 1, UINT64_C(1) << 32, "an integer in [1, 4294967296]",
                         &c->instr_iterations);
    case O_INSTR_CACHE:
        c->instr_cache_sim = true;
        return 0;
    /* ---- end instruction mode ---- */
    case O_PROCESSES:
        if (parse_u64(flag, v, 1, 1000, "an integer in [1, 1000]", &u))
            return -1;
        c->run.processes = (unsigned)u;
        return 0;
    case O_IN_PROCESS:
        c->run.in_process = true;
        return 0;
    case O_GPU_LOCK:
        if (parse_u64(flag, v, 100, 10000, "a clock in MHz in [100, 10000]", &u))
            return -1;
        c->gpu_lock_mhz = (unsigned)u;
        return 0;
    case O_TIMEOUT:
        return parse_double(flag, v, 0, 86400 * 7, true, false,
                            "a number of seconds in (0, 604800]", &c->run.timeout_s);
    default:
        return NOT_MINE;
    }
}

/* The options of one topic, where and how results are written, and the run's history: 0, -1 after
 * the one-line error, or NOT_MINE. */
static int apply_output(bench__request *c, opt_id id, const char *flag, const char *v)
{
    uint64_t u;
    int choice;
    switch (id) {
    case O_FORMAT: {
        const char *names[16];
        char choices[256] = "";
        for (size_t i = 0; i < bench__nformats && i < 16; i++) {
            names[i] = bench__formats[i].name;
            size_t used = strlen(choices);
            snprintf(choices + used, sizeof choices - used, "%s%s",
                     i == 0 ? "" : i + 1 == bench__nformats ? " or " : ", ", names[i]);
        }
        if (parse_choice(flag, v, names, (int)bench__nformats, choices, &choice))
            return -1;
        c->format = (bench__format)choice;
        return 0;
    }
    case O_JSON:
        if (*v == '\0')
            return bad_value(flag, v, "a file name");
        c->json_path = v;
        return 0;
    case O_TRACE:
        if (*v == '\0')
            return bad_value(flag, v, "a file name");
        c->run.trace_path = v;
        return 0;
    case O_CONTEXT:
        c->context = true;
        return 0;
    case O_HISTORY_GATE:
        if (parse_u64(flag, v, 5, 1000, "an integer in [5, 1000]", &u))
            return -1;
        c->history_gate = (size_t)u;
        return 0;
    case O_HISTORY_CONFIRM:
        c->history_confirm = true;
        return 0;
    case O_NO_LAST:
        c->no_last = true;
        return 0;
    case O_HISTORY_PROGRAMS:
        if (parse_u64(flag, v, 0, 1000, "an integer in [0, 1000]", &u))
            return -1;
        c->history_programs = (size_t)u;
        c->history_programs_set = true;
        return 0;
    case O_SHARD: {
        unsigned k, n;
        int used = 0;
        if (!isdigit((unsigned char)v[0]) || sscanf(v, "%u/%u%n", &k, &n, &used) != 2 ||
            v[used] != '\0' || k < 1 || n < 1 || k > n || n > 1000)
            return bad_value(flag, v, "K/N, 1 <= K <= N <= 1000");
        c->shard_k = k;
        c->shard_n = n;
        return 0;
    }
    case O_RUN_ID:
        if (*v == '\0' || strlen(v) > 200)
            return bad_value(flag, v, "an id of 1 to 200 characters");
        c->run_id = v;
        return 0;
    case O_HISTORY:
    case O_HISTORY_SHOW:
    case O_HISTORY_COPY:
        if (*v == '\0')
            return bad_value(flag, v, "a file name");
        *(id == O_HISTORY        ? &c->history_path
          : id == O_HISTORY_SHOW ? &c->history_show
                                 : &c->history_copy) = v;
        return 0;
    case O_EXPORT_GBENCH:
        if (*v == '\0')
            return bad_value(flag, v, "a file name");
        c->gbench_path = v;
        return 0;
    case O_COLOR: {
        static const char *const names[] = {"never", "always", "auto"};
        if (parse_choice(flag, v, names, 3, "auto, always or never", &choice))
            return -1;
        c->color = choice == 2 ? -1 : choice;
        return 0;
    }
    default:
        return NOT_MINE;
    }
}

/* The options of one topic, baselines, comparisons and their gate, paired A/B: 0, -1 after the
 * one-line error, or NOT_MINE. */
static int apply_comparison(bench__request *c, opt_id id, const char *flag, const char *v)
{
    uint64_t u;
    switch (id) {
    case O_SAVE:
        c->save_baseline = v;
        return check_name(flag, v);
    case O_BASE:
        c->baseline = v;
        return check_name(flag, v);
    case O_LOAD:
        c->load_baseline = v;
        return check_name(flag, v);
    case O_BASEDIR:
        if (*v == '\0')
            return bad_value(flag, v, "a directory");
        c->baseline_dir = v;
        return 0;
    case O_LENIENT:
    case O_STRICT:
        c->strict = id == O_STRICT; /* the last of the two wins */
        c->strict_set = true;
        return 0;
    case O_FAILREG:
        c->fail_on_regression = true;
        return 0;
    case O_CALIBRATE:
        if (parse_u64(flag, v, 2, 100, "an integer in [2, 100]", &u))
            return -1;
        c->calibrate = (int)u;
        return 0;
    case O_SIGNIF:
        c->significance_set = true;
        return parse_double(flag, v, 0, 0.5, true, true, "a level in (0, 0.5)",
                            &c->cmp.significance_level);
    case O_NOISE:
        c->noise_threshold_set = true;
        return parse_double(flag, v, 0, 1, false, true, "a fraction in [0, 1)",
                            &c->cmp.noise_threshold);
    case O_AB:
        if (*v == '\0')
            return bad_value(flag, v, "a program");
        c->ab = v;
        return 0;
    case O_AB_TIME:
        c->ab_time_set = true;
        return parse_double(flag, v, 1, 3600, false, false, "a number of seconds in [1, 3600]",
                            &c->abo.seconds);
    case O_AB_PAIRS:
        c->ab_pairs_set = true;
        if (parse_u64(flag, v, 3, 1000, "an integer in [3, 1000]", &u))
            return -1;
        c->abo.max_pairs = (int)u;
        return 0;
    case O_AB_SCHEDULE: {
        static const char *const names[] = {"pinned", "duet", "unpinned"};
        int k;
        c->ab_schedule_set = true;
        if (parse_choice(flag, v, names, 3, "pinned, duet or unpinned", &k))
            return -1;
        c->abo.schedule = (bench__ab_schedule)k;
        return 0;
    }
    case O_FAIL_INCONCLUSIVE:
        c->fail_on_inconclusive = true;
        return 0;
    case O_CONFIRM_TIME:
        c->confirm_time_set = true;
        return parse_double(flag, v, 0, 3600, false, false, "a number of seconds in [0, 3600]",
                            &c->confirm_time);
    case O_TRUST_SNAPSHOTS:
        c->trust_snapshots = true;
        return 0;
    default:
        return NOT_MINE;
    }
}

/* The parts of a sharded run in CI merge into one run of the history by the CI's id. 0, or -1
 * after one line on stderr. */
static int shard_run_id(bench__request *c)
{
    const char *gh = getenv("GITHUB_RUN_ID"), *attempt = getenv("GITHUB_RUN_ATTEMPT"),
               *gl = getenv("CI_PIPELINE_ID");
    if (c->shard_n && c->history_path && !c->run_id && ((gh && *gh) || (gl && *gl))) {
        if (gh && *gh)
            bench__msg(c->run_id_buf, sizeof c->run_id_buf, "%.100s-%.50s", gh,
                       attempt && *attempt ? attempt : "1");
        else
            bench__msg(c->run_id_buf, sizeof c->run_id_buf, "%.100s", gl);
        c->run_id = c->run_id_buf;
    }
    if (c->run_id && !c->history_path) {
        bench__errf("--run-id needs --history FILE (or BENCH_HISTORY): it names the run of the "
                    "history this part is recorded in\n");
        return -1;
    }
    return 0;
}

/* Applies one option to c, through the function of its topic: 0, or -1 after the error. */
static int apply_option(bench__request *c, opt_id id, const char *flag, const char *v)
{
    static int (*const topics[])(bench__request *, opt_id, const char *, const char *) = {
        apply_run, apply_output, apply_comparison};
    for (size_t k = 0; k < sizeof topics / sizeof topics[0]; k++) {
        int rc = topics[k](c, id, flag, v);
        if (rc != NOT_MINE)
            return rc;
    }
    return -1;
}

static int parse_args(bench__request *c, int argc, char **argv)
{
    bool only_positional = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (c->nfilters == BENCH__MAX_FILTERS) {
                bench__errf("more than %d filters\n", BENCH__MAX_FILTERS);
                return -1;
            }
            c->filters[c->nfilters++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = true;
            continue;
        }
        const opt_def *def = NULL;
        const char *value = NULL;
        if (arg[1] == '-') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            for (size_t k = 0; k < sizeof options / sizeof options[0]; k++)
                if (strlen(options[k].name) == len && strncmp(options[k].name, name, len) == 0)
                    def = &options[k];
            if (def && eq) {
                if (!def->takes_value) {
                    bench__errf("option '--%s' takes no value\n", def->name);
                    return -1;
                }
                value = eq + 1;
            }
        } else if (arg[2] == '\0') {
            for (size_t k = 0; k < sizeof options / sizeof options[0]; k++)
                if (options[k].short_name == arg[1])
                    def = &options[k];
        }
        if (!def) {
            bench__errf("unknown option '%s' (try --help)\n", arg);
            return -1;
        }
        if (def->takes_value && !value) {
            if (i + 1 >= argc) {
                bench__errf("option '--%s' needs a value\n", def->name);
                return -1;
            }
            value = argv[++i];
        }
        char flag[64];
        snprintf(flag, sizeof flag, "--%s", def->name);
        if (apply_option(c, def->id, flag, value) != 0)
            return -1;
    }
    return 0;
}

int bench__cli_parse(bench__request *c, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->run.nresamples = 10000;
    c->run.confidence_level = 0.95;
    c->run.seed = 1;
    c->color = -1;
    c->history_programs = BENCH__HISTORY_PROGRAMS;
    c->cmp.significance_level = 0.05;
    c->cmp.noise_threshold = BENCH__DEFAULT_NOISE_THRESHOLD;
    c->cmp.default_run_noise = BENCH__DEFAULT_RUN_NOISE;
    c->abo.seconds = BENCH__AB_DEFAULT_SECONDS;
    c->abo.max_pairs = BENCH__AB_DEFAULT_MAX_PAIRS;
    c->abo.sample_ms = BENCH__AB_DEFAULT_SAMPLE_MS;
    c->abo.schedule = BENCH__AB_PINNED;
    if (parse_args(c, argc, argv) != 0 || bench__cli_check_combinations(c) != 0)
        return -1;
    /* $BENCH_HISTORY records the runs of times that name no --history (a CI job sets it once);
     * the modes that record nothing ignore it. */
    const char *env = getenv("BENCH_HISTORY");
    if (c->history_copy && !c->history_path && !(env && *env)) {
        bench__errf("--history-copy needs --history TO (or BENCH_HISTORY): the history to "
                    "copy into\n");
        return -1;
    }
    if (!c->history_path && env && *env && !c->ab && !c->load_baseline && !c->history_show &&
        c->run.profile_time <= 0 && !c->instructions)
        c->history_path = env;
    /* Every argument is checked before anything is done, --help and --list included: an
     * invalid filter is exit 2 whatever else is asked. */
    if (bench__select(c, NULL, 0, NULL) != 0)
        return -1;
    if (c->run.profile_time > 0)
        c->run.plan = BENCH__PLAN_PROFILE;
    if (shard_run_id(c) != 0)
        return -1;
    if (c->history_programs_set && !c->history_path) {
        bench__errf("--history-programs needs --history FILE (or BENCH_HISTORY): it "
                    "keeps the programs of the runs recorded there\n");
        return -1;
    }
    if (c->history_gate && (!c->history_path || c->list || c->run.profile_time > 0)) {
        bench__errf("--history-gate needs a run of times recorded with --history "
                    "FILE (or $BENCH_HISTORY)\n");
        return -1;
    }
    c->abo.significance_level = c->cmp.significance_level;
    c->abo.noise_threshold = c->noise_threshold_set ? c->cmp.noise_threshold
                                                    : BENCH__DEFAULT_AB_NOISE_THRESHOLD;
    c->abo.timeout_s = bench__request_timeout(c);
    c->abo.seed = c->run.seed;
    c->abo.fixed_layout = c->run.fixed_layout;
    return 0;
}
