/*
 * cli_options.c: the command line read into one struct (bench__request): the option table and
 * the value parsers (the help is cli_help.c's, the checks of combinations cli_checks.c's, the
 * FILTERs' selection run/select.c's, the defaults of the options not given run/request.c's).
 * An option of a common shape (a flag, a non-empty text, a number in a range) is one line of the
 * table naming its field and its checks; only the options with logic of their own (a special
 * value, a choice, a probe, a baseline name) have a case in their topic's apply function.
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

/* Asks for the probe kind `name` of the table with its argument (NULL: none). */
static int ask_probe(bench__request *c, const char *name, const char *arg)
{
    size_t k;
    if (!bench__probe_kind_find(name, &k))
        return -1;
    c->probe_on[k] = true;
    c->probe_arg[k] = arg;
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

/* The options with logic of their own, applied by their topic's function below. */
typedef enum opt_id {
    O_TABLE, /* none: the table's field and checks apply it */
    O_WARM, O_PRECISION, O_SAMPLING, O_FORMAT, O_COLOR, O_SAVE, O_BASE, O_LOAD, O_LENIENT,
    O_STRICT, O_AB_SCHEDULE, O_PERF_EVENTS, O_ALLOC_STATS, O_PROBE, O_SHARD, O_RUN_ID,
} opt_id;

/* How the table applies an option: a flag sets its bool; a text must not be empty; a number
 * must be written in decimal and lie in its range; an integer is stored by its field's width. */
typedef enum opt_kind { K_OWN, K_FLAG, K_TEXT, K_REAL, K_WHOLE } opt_kind;

typedef struct opt_def {
    const char *name;
    char short_name;
    bool takes_value;
    opt_kind kind;
    opt_id id;          /* K_OWN: which */
    size_t field;       /* offset in bench__request */
    size_t width;       /* K_WHOLE: the field's size, B */
    const char *bounds; /* K_REAL: "[]", "(]", "[)" or "()": whether lo and hi are in the range */
    double lo, hi;      /* the range of a number */
    const char *noun;   /* what the value must be, for the message: "a number of seconds" */
} opt_def;

#define FIELD(f) offsetof(bench__request, f)
#define FLAG(n, f) {.name = n, .kind = K_FLAG, .field = FIELD(f)}
#define TEXT(n, f, noun_) \
    {.name = n, .takes_value = true, .kind = K_TEXT, .field = FIELD(f), .noun = noun_}
#define REAL(n, f, bounds_, lo_, hi_, noun_)                                                       \
    {.name = n, .takes_value = true, .kind = K_REAL, .field = FIELD(f), .bounds = bounds_,        \
     .lo = lo_, .hi = hi_, .noun = noun_}
#define WHOLE(n, f, lo_, hi_, noun_)                                                               \
    {.name = n, .takes_value = true, .kind = K_WHOLE, .field = FIELD(f),                          \
     .width = sizeof(((bench__request *)0)->f), .lo = lo_, .hi = hi_, .noun = noun_}
#define OWN(n, value, id_) {.name = n, .takes_value = value, .kind = K_OWN, .id = id_}

/* Every option, in the order of --help; the ranges are the ones --help and docs/cli.md state. */
static const opt_def options[] = {
    FLAG("list", list),
    FLAG("exact", exact),
    FLAG("quick", run.is_quick),
    OWN("warm-up-time", true, O_WARM),
    REAL("measurement-time", run.cli.measurement_time, "(]", 0, 86400, "a number of seconds"),
    WHOLE("sample-size", run.cli.sample_size, 2, 100000, "an integer"),
    WHOLE("rounds", run.cli.rounds, 1, 1000, "an integer"),
    OWN("target-precision", true, O_PRECISION),
    OWN("sampling", true, O_SAMPLING),
    WHOLE("nresamples", run.nresamples, 10, 10000000, "an integer"),
    REAL("confidence-level", run.confidence_level, "()", 0, 1, "a level"),
    WHOLE("seed", run.seed, 0, UINT32_MAX, "an integer"),
    OWN("output-format", true, O_FORMAT),
    TEXT("json", json_path, "a file name"),
    OWN("color", true, O_COLOR),
    {.name = "help", .short_name = 'h', .kind = K_FLAG, .field = FIELD(help)},
    {.name = "version", .short_name = 'V', .kind = K_FLAG, .field = FIELD(version)},
    FLAG("context", context),
    OWN("save-baseline", true, O_SAVE),
    OWN("baseline", true, O_BASE),
    OWN("load-baseline", true, O_LOAD),
    TEXT("baseline-dir", baseline_dir, "a directory"),
    OWN("baseline-lenient", false, O_LENIENT),
    OWN("baseline-strict", false, O_STRICT),
    WHOLE("calibrate", calibrate, 2, 100, "an integer"),
    REAL("significance-level", significance_level, "()", 0, 0.5, "a level"),
    REAL("noise-threshold", noise_threshold, "[)", 0, 1, "a fraction"),
    FLAG("fail-on-regression", fail_on_regression),
    TEXT("ab", ab, "a program"),
    REAL("ab-time", ab_time, "[]", 1, 3600, "a number of seconds"),
    WHOLE("ab-pairs", ab_pairs, 3, 1000, "an integer"),
    OWN("ab-schedule", true, O_AB_SCHEDULE),
    FLAG("fixed-layout", run.fixed_layout),
    FLAG("fail-on-inconclusive", fail_on_inconclusive),
    REAL("profile-time", run.profile_time, "(]", 0, 86400, "a number of seconds"),
    OWN("perf-events", true, O_PERF_EVENTS),
    FLAG("list-events", list_events),
    OWN("alloc-stats", false, O_ALLOC_STATS),
    OWN("probe", true, O_PROBE),
    TEXT("trace", run.trace_path, "a file name"),
    TEXT("export-gbench", gbench_path, "a file name"),
    FLAG("instructions", instructions),
    WHOLE("instructions-iterations", instr_iterations, 1, UINT64_C(1) << 32, "an integer"),
    FLAG("instructions-cache-sim", instr_cache_sim),
    WHOLE("processes", run.processes, 1, 1000, "an integer"),
    FLAG("in-process", run.in_process),
    REAL("timeout", run.timeout_s, "(]", 0, 86400 * 7, "a number of seconds"),
    REAL("confirm-time", confirm_time, "[]", 0, 3600, "a number of seconds"),
    WHOLE("gpu-lock-clocks", gpu_lock_mhz, 100, 10000, "a clock in MHz"),
    FLAG("trust-snapshots", trust_snapshots),
    TEXT("history", history_path, "a file name"),
    TEXT("history-show", history_show, "a file name"),
    TEXT("history-copy", history_copy, "a file name"),
    WHOLE("history-gate", history_gate, 5, 1000, "an integer"),
    FLAG("history-confirm", history_confirm),
    FLAG("history-trust-programs", history_trust_programs),
    WHOLE("history-programs", history_programs, 0, 1000, "an integer"),
    OWN("shard", true, O_SHARD),
    OWN("run-id", true, O_RUN_ID),
    FLAG("no-last", no_last),
    FLAG("explain", explain),
};

/* Applies an option of the table's shapes to its field: 0, or -1 after the one-line error. */
static int apply_table(bench__request *c, const opt_def *def, const char *flag, const char *v)
{
    char *field = (char *)c + def->field;
    char what[96];
    switch (def->kind) {
    case K_FLAG:
        *(bool *)field = true;
        return 0;
    case K_TEXT:
        if (*v == '\0')
            return bad_value(flag, v, def->noun);
        *(const char **)field = v;
        return 0;
    case K_REAL:
        bench__msg(what, sizeof what, "%s in %c%g, %g%c", def->noun, def->bounds[0], def->lo,
                   def->hi, def->bounds[1]);
        return parse_double(flag, v, def->lo, def->hi, def->bounds[0] == '(',
                            def->bounds[1] == ')', what, (double *)field);
    case K_WHOLE: {
        uint64_t u;
        bench__msg(what, sizeof what, "%s in [%.0f, %.0f]", def->noun, def->lo, def->hi);
        if (parse_u64(flag, v, (uint64_t)def->lo, (uint64_t)def->hi, what, &u))
            return -1;
        /* Every range fits its field (an int's, an unsigned's, a size_t's or a uint64_t's),
         * where a value in [0, 2^31) is written alike whatever the signedness. */
        if (def->width == sizeof(uint32_t)) {
            uint32_t x = (uint32_t)u;
            memcpy(field, &x, sizeof x);
        } else {
            memcpy(field, &u, sizeof u);
        }
        return 0;
    }
    case K_OWN:
        break;
    }
    return -1;
}

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

/* The options of logic of their own of one topic, how the run measures: settings with a
 * special value, choices, probes: 0, -1 after the one-line error, or NOT_MINE. */
static int apply_run(bench__request *c, opt_id id, const char *flag, const char *v)
{
    int choice;
    switch (id) {
    case O_WARM:
        if (parse_double(flag, v, 0, 3600, false, false, "a number of seconds in [0, 3600]",
                         &c->run.cli.warm_up_time))
            return -1;
        if (c->run.cli.warm_up_time == 0)
            c->run.cli.warm_up_time = 1e-9; /* zero means "unset" in settings: keep it tiny */
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
    case O_PERF_EVENTS:
        if (*v == '\0')
            return bad_value(flag, v, "a list of events");
        return ask_probe(c, "perf", v);
    case O_ALLOC_STATS:
        return ask_probe(c, "alloc", NULL);
    case O_PROBE:
        return parse_probe(c, flag, v);
    default:
        return NOT_MINE;
    }
}

/* The options of logic of their own of one topic, how results are written: 0, -1 after the
 * one-line error, or NOT_MINE. */
static int apply_output(bench__request *c, opt_id id, const char *flag, const char *v)
{
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
    case O_COLOR: {
        static const char *const names[] = {"never", "always", "auto"};
        if (parse_choice(flag, v, names, 3, "auto, always or never", &choice))
            return -1;
        c->color = choice == 2 ? -1 : choice;
        return 0;
    }
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
    default:
        return NOT_MINE;
    }
}

/* The options of logic of their own of one topic, baselines and paired A/B: 0, -1 after the
 * one-line error, or NOT_MINE. */
static int apply_comparison(bench__request *c, opt_id id, const char *flag, const char *v)
{
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
    case O_LENIENT:
    case O_STRICT:
        c->strict = id == O_STRICT; /* the last of the two wins */
        return 0;
    case O_AB_SCHEDULE: {
        static const char *const names[] = {"pinned", "duet", "unpinned"};
        int k;
        if (parse_choice(flag, v, names, 3, "pinned, duet or unpinned", &k))
            return -1;
        c->ab_schedule = k;
        return 0;
    }
    default:
        return NOT_MINE;
    }
}

/* The parts of a sharded run in CI merge into one run of the history by the CI's id. */
static void shard_run_id(bench__request *c)
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
}

/* Applies one option to c, through the table or the function of its topic: 0, or -1 after the
 * error. */
static int apply_option(bench__request *c, const opt_def *def, const char *flag, const char *v)
{
    static int (*const topics[])(bench__request *, opt_id, const char *, const char *) = {
        apply_run, apply_output, apply_comparison};
    if (def->kind != K_OWN)
        return apply_table(c, def, flag, v);
    for (size_t k = 0; k < sizeof topics / sizeof topics[0]; k++) {
        int rc = topics[k](c, def->id, flag, v);
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
        if (apply_option(c, def, flag, value) != 0)
            return -1;
    }
    return 0;
}

int bench__cli_parse(bench__request *c, int argc, char **argv)
{
    bench__request_init(c);
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
    shard_run_id(c);
    if (bench__cli_check_history(c) != 0)
        return -1;
    c->cmp = bench__request_compare_opts(c);
    return 0;
}
