/*
 * cli.c: the bench program: command-line parsing, benchmark selection, the run loop and the exit
 * code. Also the library's default main(), which a program's own main() replaces.
 *
 * Every error is one line on stderr that names the flag, value or file, and a documented exit
 * code (2 for usage and input errors). Parsing never exits from inside a helper: each returns a
 * status that bench_main turns into the exit code.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare.h"
#include "cuda_backend.h"
#include "instr.h"
#include "internal.h"
#include "perf_events.h"
#include "proc.h"
#include "user_build.h"

#define MAX_FILTERS 64
#define BASELINE_NAME_MAX 64

#ifndef HARNESS_FEATURES
#define HARNESS_FEATURES "unknown"
#endif

typedef struct cli {
    bench__run_options run;
    const char *filters[MAX_FILTERS];
    size_t nfilters;
    bool list;
    bool exact;
    bool help;
    bool version;
    const char *json_path;
    bench__format format;
    int color; /* -1 auto, 0 never, 1 always */
    bool context;
    const char *save_baseline;
    const char *baseline;
    const char *load_baseline;
    const char *baseline_dir;
    bool strict;           /* --baseline-strict: new and removed benchmarks are an error */
    bool strict_set;       /* --baseline-strict or --baseline-lenient was given */
    bool fail_on_regression;
    bool significance_set; /* --significance-level was given */
    int calibrate; /* runs; 0: off */
    bench__compare_opts cmp;
    bool noise_threshold_set;
    const char *ab;        /* --ab OTHER */
    const char *ab_worker; /* --ab-worker ID (internal) */
    bench__ab_options abo;
    bool ab_time_set;      /* --ab-time was given */
    double confirm_time;   /* --confirm-time S: s per suspect benchmark; 0 off */
    bool confirm_time_set;
    bool ab_pairs_set;     /* --ab-pairs was given */
    const char *perf_events; /* --perf-events LIST */
    bool list_events;
    bool alloc_stats;
    const char *gbench_path; /* --export-gbench FILE */
    /* ---- instruction mode (instr.c) ---- */
    bool instructions;            /* --instructions */
    const char *instr_worker;     /* --instructions-worker DIR (internal) */
    uint64_t instr_iterations;    /* --instructions-iterations N; 0: per benchmark */
    bool instr_iterations_set;
    bool instr_cache_sim;         /* --instructions-cache-sim */
    /* ---- end instruction mode ---- */
} cli;

/* The help, after its first line ("Usage: PROGRAM [OPTIONS] [FILTER...]", print_usage). */
static const char usage_text[] =
    "\n"
    "Runs the benchmarks whose id (group/name or group/name/PARAM) matches any FILTER, a POSIX\n"
    "extended regular expression searched anywhere in the id (a plain substring works). With no\n"
    "FILTER, runs them all.\n"
    "\n"
    "Selection:\n"
    "      --list                 print the selected benchmark ids, one per line, and exit\n"
    "      --exact                FILTERs must equal the whole id (no regex)\n"
    "Measurement:\n"
    "      --quick                fast, less precise run (0.05 s warm-up, at most 0.35 s,\n"
    "                             3 processes)\n"
    "      --warm-up-time S       seconds of warm-up per benchmark (default 0.3)\n"
    "      --measurement-time S   sampling budget in seconds per benchmark (default 3)\n"
    "      --sample-size N        most samples per benchmark, 2..100000 (default 100)\n"
    "      --rounds N             with --in-process: spread each benchmark's samples over N\n"
    "                             runs of its body, interleaved with the other benchmarks',\n"
    "                             1..1000 (default 5; 1 with --quick)\n"
    "      --target-precision P   with --in-process: stop early once the CI half-width of the\n"
    "                             median is below P of it, 0 < P < 1 (default 0.01); 'off'\n"
    "                             never stops early\n"
    "      --sampling MODE        auto, linear or flat (default auto)\n"
    "      --profile-time S       run each selected benchmark for S seconds with no\n"
    "                             statistics, for an outside profiler (perf record, ...)\n"
    "Processes:\n"
    "      --processes N          measure each benchmark in N fresh worker processes,\n"
    "                             interleaved across benchmarks, 1..1000 (default 10; 3 with\n"
    "                             --quick; fewer when its samples do not fit the budget)\n"
    "      --in-process           measure everything in this one process (for debuggers and\n"
    "                             profilers: gdb, perf record, callgrind, heaptrack)\n"
    "      --timeout S            stop a worker process that runs longer than S seconds and\n"
    "                             report its benchmark as timed out (default 300)\n"
    "Counters and allocations:\n"
    "      --perf-events LIST     count perf events around every sample: comma-separated\n"
    "                             libpfm4 names or presets (ipc, cache, branch, sw)\n"
    "      --list-events          list the events libpfm4 knows here and which open\n"
    "      --alloc-stats          count allocations and bytes per iteration, peak heap\n"
    "Statistics:\n"
    "      --nresamples N         bootstrap resamples, 10..10000000 (default 10000)\n"
    "      --confidence-level C   confidence level of intervals, 0 < C < 1 (default 0.95)\n"
    "      --seed N               bootstrap seed, 0..4294967295 (default 1)\n"
    "Output:\n"
    "      --output-format FMT    pretty, json, csv, markdown or bencher on stdout\n"
    "                             (default pretty)\n"
    "      --json FILE            also write the results as JSON to FILE (atomically)\n"
    "      --export-gbench FILE   also write them in Google Benchmark's JSON format\n"
    "      --color WHEN           auto, always or never (default auto; NO_COLOR is respected)\n"
    "      --context              print the system context (CPU, GPU, OS, compiler, ...) and exit\n"
    "Baselines and comparison:\n"
    "      --save-baseline NAME   save this run as baseline NAME (DIR/NAME.json; entries of\n"
    "                             benchmarks not run are kept)\n"
    "      --baseline NAME        compare this run with baseline NAME\n"
    "      --load-baseline NAME   compare saved baseline NAME with --baseline OLD; runs nothing\n"
    "      --baseline-dir DIR     where baselines live (default $BENCH_BASELINE_DIR or\n"
    "                             ./baselines)\n"
    "      --baseline-strict      a benchmark new to the baseline, or in it but not in this\n"
    "                             program, is an error (exit 2); skipped ones never are\n"
    "      --baseline-lenient     new and removed benchmarks are reported, not an error\n"
    "                             (the default; undoes --baseline-strict)\n"
    "      --calibrate N          with --save-baseline: measure each benchmark's run-to-run\n"
    "                             noise over N separate processes (2..100) and save it\n"
    "      --significance-level A over the whole comparison, 0 < A < 0.5 (default 0.05)\n"
    "      --noise-threshold T    smallest relative change reported as a regression or\n"
    "                             improvement, 0 <= T < 1 (default 0.02)\n"
    "      --fail-on-regression   exit 1 when any benchmark regressed (the CI gate)\n"
    "      --confirm-time S       with --baseline: confirm each suspect change by an\n"
    "                             interleaved run of the program saved with the baseline,\n"
    "                             S seconds each, 0..3600 (default 10, or 90 s shared,\n"
    "                             at least 4 each, when more than 9; 0: never)\n"
    "                             (these comparison options need --baseline or --ab)\n"
    "Interleaved A/B of two builds:\n"
    "      --ab OTHER             measure OTHER (old build of this suite) against this program\n"
    "                             in alternating ABBA/BAAB rounds; runs nothing else\n"
    "      --ab-time S            seconds per benchmark, 1..3600 (default 20)\n"
    "      --ab-pairs N           worker pairs per benchmark, 3..64 (default 8)\n"
    "                             (--noise-threshold defaults to 0.01 with --ab)\n"
    "Instruction counts (valgrind):\n"
    "      --instructions         count instructions per iteration exactly under valgrind's\n"
    "                             callgrind instead of timing; works with --baseline,\n"
    "                             --save-baseline, --json (--noise-threshold defaults to\n"
    "                             0.001 here: any change above 0.1% is reported)\n"
    "      --instructions-iterations N\n"
    "                             N of the plan {1, N, 2N} iterations (default: chosen per\n"
    "                             benchmark, samples of about 16M instructions)\n"
    "      --instructions-cache-sim\n"
    "                             also simulate the caches: D1 and LL data misses\n"
    "  -h, --help                 print this help and exit\n"
    "  -V, --version              print the version and exit\n"
    "\n"
    "Exit codes: 0 ok; 1 a regression was found; 2 usage or input error; 3 a benchmark failed\n"
    "(crashed, exited or timed out included); 128+N interrupted by signal N (130 SIGINT,\n"
    "143 SIGTERM): nothing was written.\n"
    "Documentation: docs/cli.md and docs/results-format.md.\n";

/* Prints the help; its usage line names the program as it was invoked (argv[0]'s basename). */
static void print_usage(FILE *o, const char *argv0)
{
    const char *name = argv0 && *argv0 ? argv0 : "bench";
    const char *slash = strrchr(name, '/');
    if (slash && slash[1] != '\0')
        name = slash + 1;
    fprintf(o, "Usage: %s [OPTIONS] [FILTER...]\n", name);
    fputs(usage_text, o);
}

/* ---- value parsers: each returns 0, or -1 after printing the one-line error ---- */

static int bad_value(const char *flag, const char *value, const char *what)
{
    fprintf(stderr, "bench: %s: '%s' is not %s\n", flag, value, what);
    return -1;
}

static int parse_double(const char *flag, const char *v, double lo, double hi, bool lo_open,
                        bool hi_open, const char *what, double *out)
{
    char *end;
    errno = 0;
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
    if (*v == '-' || *v == '+' || *v == '\0')
        return bad_value(flag, v, what);
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end != '\0' || x < lo || x > hi)
        return bad_value(flag, v, what);
    *out = x;
    return 0;
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
    O_AB_TIME, O_AB_PAIRS, O_AB_WORKER, O_PROFILE_TIME, O_PERF_EVENTS, O_LIST_EVENTS, O_ALLOC_STATS,
    O_EXPORT_GBENCH, O_INSTR, O_INSTR_ITERS, O_INSTR_CACHE, O_INSTR_WORKER, O_PROCESSES,
    O_IN_PROCESS, O_TIMEOUT, O_CONFIRM_TIME,
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
    {"ab-worker", 0, true, O_AB_WORKER},
    {"profile-time", 0, true, O_PROFILE_TIME},
    {"perf-events", 0, true, O_PERF_EVENTS},
    {"list-events", 0, false, O_LIST_EVENTS},
    {"alloc-stats", 0, false, O_ALLOC_STATS},
    {"export-gbench", 0, true, O_EXPORT_GBENCH},
    {"instructions", 0, false, O_INSTR},
    {"instructions-iterations", 0, true, O_INSTR_ITERS},
    {"instructions-cache-sim", 0, false, O_INSTR_CACHE},
    {"instructions-worker", 0, true, O_INSTR_WORKER},
    {"processes", 0, true, O_PROCESSES},
    {"in-process", 0, false, O_IN_PROCESS},
    {"timeout", 0, true, O_TIMEOUT},
    {"confirm-time", 0, true, O_CONFIRM_TIME},
};

/* Options a calibration run does not pass on to its child processes (they take a value when
 * marked). */
static const struct {
    const char *name;
    bool takes_value;
} calibration_drop[] = {
    {"--save-baseline", true}, {"--baseline", true},     {"--load-baseline", true},
    {"--calibrate", true},     {"--json", true},         {"--output-format", true},
    {"--color", true},         {"--fail-on-regression", false}, {"--baseline-lenient", false},
    {"--baseline-dir", true},  {"--export-gbench", true}, {"--baseline-strict", false},
    {"--significance-level", true}, {"--noise-threshold", true},
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

static int apply_option(cli *c, opt_id id, const char *flag, const char *v)
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
    case O_FORMAT: {
        static const char *const names[] = {"pretty", "json", "csv", "markdown", "bencher"};
        if (parse_choice(flag, v, names, 5, "pretty, json, csv, markdown or bencher", &choice))
            return -1;
        c->format = (bench__format)choice;
        return 0;
    }
    case O_JSON:
        if (*v == '\0')
            return bad_value(flag, v, "a file name");
        c->json_path = v;
        return 0;
    case O_CONTEXT:
        c->context = true;
        return 0;
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
        if (parse_u64(flag, v, 3, 64, "an integer in [3, 64]", &u))
            return -1;
        c->abo.pairs = (int)u;
        return 0;
    case O_AB_WORKER:
        c->ab_worker = v;
        return 0;
    case O_PROFILE_TIME:
        return parse_double(flag, v, 0, 86400, true, false, "a number of seconds in (0, 86400]",
                            &c->run.profile_time);
    case O_PERF_EVENTS:
        if (*v == '\0')
            return bad_value(flag, v, "a list of events");
        c->perf_events = v;
        return 0;
    case O_LIST_EVENTS:
        c->list_events = true;
        return 0;
    case O_ALLOC_STATS:
        c->alloc_stats = true;
        return 0;
    /* ---- instruction mode (instr.c) ---- */
    case O_INSTR:
        c->instructions = true;
        return 0;
    case O_INSTR_ITERS:
        c->instr_iterations_set = true;
        return parse_u64(flag, v, 1, UINT64_C(1) << 32, "an integer in [1, 4294967296]",
                         &c->instr_iterations);
    case O_INSTR_CACHE:
        c->instr_cache_sim = true;
        return 0;
    case O_INSTR_WORKER:
        c->instr_worker = v;
        return 0;
    /* ---- end instruction mode ---- */
    case O_CONFIRM_TIME:
        c->confirm_time_set = true;
        return parse_double(flag, v, 0, 3600, false, false, "a number of seconds in [0, 3600]",
                            &c->confirm_time);
    case O_PROCESSES:
        if (parse_u64(flag, v, 1, 1000, "an integer in [1, 1000]", &u))
            return -1;
        c->run.processes = (unsigned)u;
        return 0;
    case O_IN_PROCESS:
        c->run.in_process = true;
        return 0;
    case O_TIMEOUT:
        return parse_double(flag, v, 0, 86400 * 7, true, false,
                            "a number of seconds in (0, 604800]", &c->run.timeout_s);
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
    }
    return -1;
}

static int parse_args(cli *c, int argc, char **argv)
{
    bool only_positional = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (c->nfilters == MAX_FILTERS) {
                fprintf(stderr, "bench: more than %d filters\n", MAX_FILTERS);
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
                    fprintf(stderr, "bench: option '--%s' takes no value\n", def->name);
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
            fprintf(stderr, "bench: unknown option '%s' (try --help)\n", arg);
            return -1;
        }
        if (def->takes_value && !value) {
            if (i + 1 >= argc) {
                fprintf(stderr, "bench: option '--%s' needs a value\n", def->name);
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

/* ---- selection ---- */

/* Marks which of the ids the filters select. */
static int select_ids(const cli *c, const char *const *ids, size_t n, bool *selected)
{
    regex_t re[MAX_FILTERS];
    size_t compiled = 0;
    int rc = 0;
    if (!c->exact) {
        for (; compiled < c->nfilters; compiled++) {
            int e = regcomp(&re[compiled], c->filters[compiled], REG_EXTENDED | REG_NOSUB);
            if (e != 0) {
                char why[128];
                regerror(e, &re[compiled], why, sizeof why);
                fprintf(stderr, "bench: filter '%s' is not a valid regular expression: %s\n",
                        c->filters[compiled], why);
                rc = -1;
                goto done;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        bool match = c->nfilters == 0;
        for (size_t f = 0; f < c->nfilters && !match; f++)
            match = c->exact ? strcmp(ids[i], c->filters[f]) == 0
                             : regexec(&re[f], ids[i], 0, NULL, 0) == 0;
        selected[i] = match;
    }
done:
    for (size_t f = 0; f < compiled; f++)
        regfree(&re[f]);
    return rc;
}

static bool use_color(int mode)
{
    if (mode >= 0)
        return mode == 1;
    const char *no_color = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    if (no_color && *no_color)
        return false;
    if (term && strcmp(term, "dumb") == 0)
        return false;
    return isatty(STDOUT_FILENO);
}

/* Flushes stdout and reports a write error (a full disk, a closed pipe) as exit code 2. */
static int finish_stdout(int exit_code)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "bench: writing to stdout failed\n");
        return exit_code == BENCH_EXIT_OK ? BENCH_EXIT_USAGE : exit_code;
    }
    return exit_code;
}

/* ---- baselines ---- */

static const char *baseline_dir(const cli *c)
{
    if (c->baseline_dir)
        return c->baseline_dir;
    const char *env = getenv("BENCH_BASELINE_DIR");
    return env && *env ? env : "baselines";
}

static void baseline_path(const cli *c, const char *name, char *buf, size_t len)
{
    bench__msg(buf, len, "%s/%s.json", baseline_dir(c), name);
}

/* Loads baseline `name`; on failure prints one line and returns -1. */
static int load_named(const cli *c, const char *name, bench__saved *out)
{
    char path[4096], msg[768];
    baseline_path(c, name, path, sizeof path);
    int rc = bench__saved_load(path, out, msg, sizeof msg);
    if (rc == BENCH_EIO && access(path, F_OK) != 0) {
        fprintf(stderr, "bench: baseline '%s' not found: %s does not exist (save one with "
                        "--save-baseline %s)\n", name, path, name);
        return -1;
    }
    if (rc != 0) {
        char shown[4 * sizeof msg]; /* quotes the file's path and keys: escaped */
        fprintf(stderr, "bench: baseline '%s' is unusable: %s\n", name,
                bench__escape(shown, sizeof shown, msg));
        return -1;
    }
    return 0;
}

static int save_named(const cli *c, const bench__context *ctx, const bench__result *results,
                      size_t n)
{
    const char *dir = baseline_dir(c);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench: cannot create the baseline directory %s: %s\n", dir,
                strerror(errno));
        return -1;
    }
    /* Only measured benchmarks are saved: a failed or skipped one keeps its old entry. */
    bench__result *ok = calloc(n ? n : 1, sizeof *ok);
    if (!ok) {
        fprintf(stderr, "bench: out of memory\n");
        return -1;
    }
    /* A baseline holds measurements, not how they compared with another baseline. */
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (results[i].status == BENCH__OK) {
            ok[k] = results[i];
            ok[k].change = NULL;
            ok[k++].metric_changes = NULL;
        }
    bench__context sctx = *ctx;
    sctx.comparison = NULL;
    char path[4096], msg[1024], tmp[4200];
    /* The program that was measured goes beside the baseline, so that a later comparison can
     * run it interleaved with its own program (confirm_suspects). */
    bool snap = bench__snapshot_prepare(dir, c->save_baseline, tmp, sizeof tmp,
                                        sctx.program_hash, sizeof sctx.program_hash,
                                        &sctx.program_bytes, msg, sizeof msg) == 0;
    if (snap)
        bench__msg(sctx.program_file, sizeof sctx.program_file, "%s.program", c->save_baseline);
    else
        fprintf(stderr, "bench: warning: baseline '%s' keeps no copy of this program (%s): a "
                        "later comparison cannot confirm a change by running it\n",
                c->save_baseline, msg);
    baseline_path(c, c->save_baseline, path, sizeof path);
    int rc = bench__baseline_save(path, &sctx, ok, k, msg, sizeof msg);
    free(ok);
    if (rc != 0) {
        if (snap)
            unlink(tmp);
        char shown[4 * sizeof msg];
        fprintf(stderr, "bench: saving baseline '%s' failed: %s\n", c->save_baseline,
                bench__escape(shown, sizeof shown, msg));
        return -1;
    }
    if (snap && bench__snapshot_commit(dir, c->save_baseline, tmp, msg, sizeof msg) != 0)
        fprintf(stderr, "bench: warning: baseline '%s' was saved but its copy of the program "
                        "was not: %s\n", c->save_baseline, msg);
    fprintf(stderr, "bench: saved %zu benchmark%s to baseline '%s' (%s)\n", k, k == 1 ? "" : "s",
            c->save_baseline, path);
    return 0;
}

/* Compares the contexts into *out and warns about each kind of difference on its own line. */
static void warn_context(const bench__context_id *now, const bench__context_id *then,
                         const char *name, bench__context_change *out)
{
    bench__context_compare(now, then, out);
    if (out->machine[0])
        fprintf(stderr, "bench: warning: baseline '%s' was measured on a different machine: "
                        "%s\n", name, out->machine);
    if (out->build[0])
        fprintf(stderr, "bench: warning: baseline '%s' was measured with a different build: "
                        "%s\n", name, out->build);
}

static int side_from_entry(const cli *c, const bench__entry *e, bench__side *out)
{
    if (e->processes >= 2 &&
        bench__side_from_processes(e->iters, e->totals_ns, e->process, e->nsamples,
                                   e->processes, c->run.confidence_level, out) == 0) {
        out->noise = e->noise;
        return 0;
    }
    uint64_t seed = bench__id_seed(c->run.seed, e->id);
    if (bench__side_from_samples(e->iters, e->totals_ns, e->nsamples, c->run.nresamples,
                                 c->run.confidence_level, seed, out))
        return -1;
    out->noise = e->noise;
    return 0;
}

static void side_from_result(const cli *c, const bench__result *r, bench__side *out)
{
    memset(out, 0, sizeof *out);
    if (r->processes >= 2 && isfinite(r->process_log_sd)) {
        /* The same two-level estimate a saved entry gives (bench__side_from_processes). */
        out->median = r->est.median.point;
        out->lower = r->est.median.lower;
        out->upper = r->est.median.upper;
        out->se_log = r->process_log_sd / sqrt((double)r->processes);
        out->processes = r->processes;
    } else {
        bench__side_from_estimate(&r->est.median, c->run.confidence_level, out);
    }
    out->noise = r->noise;
}

/*
 * The exit code of a finished comparison of n rows (ids[i] names ch[i]): 1 for a regression with
 * --fail-on-regression; otherwise 2 when --baseline-strict meets a new or removed benchmark
 * (each named on stderr); else 0. Skipped benchmarks never change it.
 */
static int compare_exit(const cli *c, const char *const *ids, const bench__change *ch, size_t n,
                        const char *against)
{
    bool regressed = false, violated = false;
    for (size_t i = 0; i < n; i++) {
        regressed |= ch[i].verdict == BENCH__V_REGRESSED;
        if (c->strict)
            violated |= bench__strict_violation(ids[i], ch[i].verdict, against);
    }
    if (c->fail_on_regression && regressed)
        return BENCH_EXIT_REGRESSION;
    return violated ? BENCH_EXIT_USAGE : BENCH_EXIT_OK;
}

/* Whether `id` is one of the n instances. (Their order, with parameters compared as numbers,
 * is not strcmp's: no binary search.) */
static bool has_instance(const bench__instance *all, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].id, id) == 0)
            return true;
    return false;
}

/*
 * The entries of `old` that the filters select and that `present` does not know: the benchmarks
 * a comparison reports as removed (or skipped, when the old side skipped them). A benchmark the
 * filters do not select is not reported at all: a filtered run says nothing about the rest.
 * Fills ids[] and verdicts[] (room for old->n each) and returns their count, or -1 after one line
 * on stderr.
 */
static long absent_entries(const cli *c, const bench__saved *old,
                           bool (*present)(const void *where, const char *id), const void *where,
                           const char **ids, bench__verdict *verdicts)
{
    const char **all = calloc(old->n ? old->n : 1, sizeof *all);
    bool *sel = calloc(old->n ? old->n : 1, sizeof *sel);
    long k = -1;
    if (!all || !sel) {
        fprintf(stderr, "bench: out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < old->n; i++)
        all[i] = old->entries[i].id;
    if (select_ids(c, all, old->n, sel) != 0)
        goto out;
    k = 0;
    for (size_t i = 0; i < old->n; i++) {
        if (!sel[i] || present(where, all[i]))
            continue;
        bench__comparable(&old->entries[i].status, NULL, &verdicts[k]);
        ids[k++] = all[i];
    }
out:
    free(all);
    free(sel);
    return k;
}

static bool in_saved(const void *where, const char *id)
{
    return bench__saved_find(where, id) != NULL;
}

/* This program's benchmarks, for absent_entries. */
struct program {
    const bench__instance *all;
    size_t n;
};

static bool in_program(const void *where, const char *id)
{
    const struct program *p = where;
    return has_instance(p->all, p->n, id);
}

/*
 * --ab: what `OTHER --list [--exact] -- FILTER...` prints, so that the benchmarks the old build
 * has for the same FILTERs and this one lacks are reported as removed. Returns the malloc'd text
 * (caller frees), or NULL when OTHER cannot run or lists nothing (it then has nothing more to
 * report; errors about OTHER are bench__ab_run's to print).
 */
static char *other_list(const cli *c, const char *prog)
{
    const char **argv = calloc(c->nfilters + 5, sizeof *argv);
    int fd[2];
    if (!argv || pipe(fd) != 0) {
        free(argv);
        return NULL;
    }
    size_t k = 0;
    argv[k++] = prog;
    argv[k++] = "--list";
    if (c->exact)
        argv[k++] = "--exact";
    argv[k++] = "--";
    for (size_t i = 0; i < c->nfilters; i++)
        argv[k++] = c->filters[i];
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(fd[1], STDOUT_FILENO);
        if (null >= 0)
            dup2(null, STDERR_FILENO);
        close(fd[0]);
        close(fd[1]);
        execv(prog, (char *const *)argv);
        _exit(127);
    }
    free(argv);
    close(fd[1]);
    size_t len = 0, cap = 4096;
    char *text = pid > 0 ? malloc(cap) : NULL;
    ssize_t got = 0;
    while (text && (got = read(fd[0], text + len, cap - 1 - len)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 || cap > BENCH__MAX_FILE_BYTES) {
            free(text);
            text = NULL;
            break;
        }
        len += (size_t)got;
        if (len + 1 == cap) {
            char *more = realloc(text, cap * 2);
            if (!more) {
                free(text);
                text = NULL;
                break;
            }
            text = more;
            cap *= 2;
        }
    }
    close(fd[0]);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (text && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
        free(text);
        text = NULL;
    }
    if (text)
        text[len] = '\0';
    return text;
}

/* --load-baseline NEW --baseline OLD: compares two files, runs nothing. */
static int compare_files(const cli *c)
{
    bench__saved cur, old;
    if (load_named(c, c->load_baseline, &cur) != 0)
        return BENCH_EXIT_USAGE;
    if (load_named(c, c->baseline, &old) != 0) {
        bench__saved_destroy(&cur);
        return BENCH_EXIT_USAGE;
    }
    int exit_code = BENCH_EXIT_OK;
    /* Rows: cur.n benchmarks of NEW, then old.n at most that only OLD has. */
    size_t cap = cur.n + old.n;
    const char **ids = calloc(cur.n ? cur.n : 1, sizeof *ids);
    bool *sel = calloc(cur.n ? cur.n : 1, sizeof *sel);
    bench__side *a = calloc(cur.n ? cur.n : 1, sizeof *a);
    bench__side *b = calloc(cur.n ? cur.n : 1, sizeof *b);
    bench__change *ch = calloc(cap ? cap : 1, sizeof *ch);
    const char **cids = calloc(cap ? cap : 1, sizeof *cids);
    const char **sids = calloc(cap ? cap : 1, sizeof *sids);
    bench__verdict *sv = calloc(cap ? cap : 1, sizeof *sv);
    if (!ids || !sel || !a || !b || !ch || !cids || !sids || !sv) {
        fprintf(stderr, "bench: out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0; i < cur.n; i++)
        ids[i] = cur.entries[i].id;
    if (select_ids(c, ids, cur.n, sel) != 0) {
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    /* ---- instruction mode (instr.c): files of counts compare by counts, never with times ---- */
    if (bench__instr_is_mode(cur.ctx.mode) != bench__instr_is_mode(old.ctx.mode)) {
        bool cur_counts = bench__instr_is_mode(cur.ctx.mode);
        fprintf(stderr, "bench: baseline '%s' holds %s but baseline '%s' holds %s: they cannot "
                        "be compared\n", c->load_baseline,
                cur_counts ? "instruction counts" : "times", c->baseline,
                cur_counts ? "times" : "instruction counts");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    /* ---- end instruction mode ---- */
    /* Statuses first: NEW's benchmarks that cannot be compared by numbers, then OLD's that NEW
     * lacks. */
    size_t m = 0, ns = 0;
    for (size_t i = 0; i < cur.n; i++) {
        const bench__entry *e = &cur.entries[i];
        const bench__entry *o = sel[i] ? bench__saved_find(&old, e->id) : NULL;
        if (sel[i] && !bench__comparable(o ? &o->status : NULL, &e->status, &sv[ns]))
            sids[ns++] = e->id;
    }
    long nabsent = absent_entries(c, &old, in_saved, &cur, sids + ns, sv + ns);
    if (nabsent < 0) {
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    ns += (size_t)nabsent;
    /* ---- instruction mode (instr.c) ---- */
    if (bench__instr_is_mode(cur.ctx.mode)) {
        exit_code = bench__instr_compare_saved(
            &cur, &old, sel, sids, sv, ns, c->baseline,
            c->noise_threshold_set ? c->cmp.noise_threshold : BENCH__INSTR_DEFAULT_THRESHOLD,
            c->strict, c->fail_on_regression, use_color(c->color));
        goto out;
    }
    /* ---- end instruction mode ---- */
    bench__context_change context;
    warn_context(&cur.ctx, &old.ctx, c->baseline, &context);
    for (size_t i = 0; i < cur.n; i++) {
        const bench__entry *e = &cur.entries[i];
        const bench__entry *o = sel[i] ? bench__saved_find(&old, e->id) : NULL;
        bench__verdict st;
        if (!sel[i] || !bench__comparable(o ? &o->status : NULL, &e->status, &st))
            continue;
        if (side_from_entry(c, o, &a[m]) || side_from_entry(c, e, &b[m])) {
            fprintf(stderr, "bench: out of memory\n");
            exit_code = BENCH_EXIT_USAGE;
            goto out;
        }
        cids[m++] = e->id;
    }
    if (m + ns == 0) {
        fprintf(stderr, "bench: nothing to compare: no selected benchmark in '%s' or '%s'\n",
                c->load_baseline, c->baseline);
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    if (bench__compare_all(a, b, m, &c->cmp, ch) != 0) {
        fprintf(stderr, "bench: out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    for (size_t j = 0; j < ns; j++) {
        ch[m + j].verdict = sv[j];
        cids[m + j] = sids[j];
    }
    bool color = use_color(c->color);
    char what[128];
    bench__msg(what, sizeof what, "baseline '%s'", c->baseline);
    bench__print_compare_summary(stdout, what, cids, ch, m + ns, &c->cmp, "Holm", &context,
                                 color);
    exit_code = finish_stdout(compare_exit(c, cids, ch, m + ns, what));
out:
    free(ids);
    free(sel);
    free(a);
    free(b);
    free(ch);
    free(cids);
    free(sids);
    free(sv);
    bench__saved_destroy(&cur);
    bench__saved_destroy(&old);
    return exit_code;
}

/* Runs the selected benchmarks in `runs` - 1 child processes of this program for calibration;
 * the current process's own run is the last one. */
static int calibration_runs(const cli *c, int argc, char **argv, bench__saved **out,
                            size_t *nout)
{
    *out = NULL;
    *nout = 0;
    size_t nchild = (size_t)c->calibrate - 1;
    bench__saved *runs = calloc(nchild, sizeof *runs);
    char **cargv = calloc((size_t)argc + 8, sizeof *cargv);
    char dir[] = "/tmp/bench-calibrate-XXXXXX";
    if (!runs || !cargv || !mkdtemp(dir)) {
        fprintf(stderr, "bench: cannot prepare calibration runs: %s\n", strerror(errno));
        free(runs);
        free(cargv);
        return -1;
    }
    char json[64], msg[768];
    bench__msg(json, sizeof json, "%s/run.json", dir);
    size_t k = 0;
    cargv[k++] = argv[0];
    /* The child's own options come first: after a "--" in the user's arguments they would be
     * taken for filters. */
    cargv[k++] = "--output-format=csv";
    cargv[k++] = "--json";
    cargv[k++] = json;
    for (int i = 1; i < argc; i++) {
        bool drop = false, with_value = false;
        for (size_t d = 0; d < sizeof calibration_drop / sizeof calibration_drop[0]; d++) {
            size_t len = strlen(calibration_drop[d].name);
            if (strncmp(argv[i], calibration_drop[d].name, len) == 0 &&
                (argv[i][len] == '\0' || argv[i][len] == '=')) {
                drop = true;
                with_value = calibration_drop[d].takes_value && argv[i][len] == '\0';
            }
        }
        if (strcmp(argv[i], "--") == 0) {
            for (; i < argc; i++)
                cargv[k++] = argv[i];
            break;
        }
        if (drop) {
            i += with_value;
            continue;
        }
        cargv[k++] = argv[i];
    }
    cargv[k] = NULL;
    int rc = 0;
    for (size_t r = 0; r < nchild && rc == 0; r++) {
        fprintf(stderr, "bench: calibration run %zu of %d (a separate process)\n", r + 1,
                c->calibrate);
        if (bench__run_self(cargv, msg, sizeof msg) != 0 ||
            bench__saved_load(json, &runs[r], msg, sizeof msg) != 0) {
            fprintf(stderr, "bench: calibration run %zu failed: %s\n", r + 1, msg);
            rc = -1;
            break;
        }
        unlink(json);
    }
    fprintf(stderr, "bench: calibration run %d of %d (this process)\n", c->calibrate,
            c->calibrate);
    unlink(json);
    rmdir(dir);
    free(cargv);
    if (rc != 0) {
        for (size_t r = 0; r < nchild; r++)
            bench__saved_destroy(&runs[r]);
        free(runs);
        return -1;
    }
    *out = runs;
    *nout = nchild;
    return 0;
}

/* ---- probes, profile mode, metric comparison ---- */

#define MAX_PROBES 4

/* The run's probes: CUDA (always, first: it is primary for CUDA benchmarks), then perf events
 * and allocation statistics when asked for. Prints one line and returns -1 on failure. */
static int make_probes(cli *c)
{
    static bench__probe *probes[MAX_PROBES];
    size_t k = 0;
    char msg[512];
    probes[k++] = bench__cuda_probe();
    if (c->perf_events) {
        bench__probe *p;
        if (bench__perf_probe_create(c->perf_events, &p, msg, sizeof msg) != 0) {
            fprintf(stderr, "bench: --perf-events: %s\n", msg);
            return -1;
        }
        probes[k++] = p;
    }
    if (c->alloc_stats) {
        bench__probe *p;
        if (bench__alloc_probe_create(&p, msg, sizeof msg) != 0) {
            fprintf(stderr, "bench: --alloc-stats: %s\n", msg);
            return -1;
        }
        probes[k++] = p;
    }
    c->run.probes = probes;
    c->run.nprobes = k;
    return 0;
}

/* --profile-time: each selected benchmark runs for the time given; one line each. */
static int profile_run(const cli *c, const bench__instance *all, const bool *selected, size_t n)
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
            fprintf(stderr, "bench: benchmark '%s' failed: %s\n", id, why);
            exit_code = BENCH_EXIT_FAILED;
        }
        bench__result_destroy(&r);
    }
    return finish_stdout(exit_code);
}

/* Compares each metric of r that the baseline entry also has, like time but without the
 * suite-wide correction: metrics are witnesses, not verdicts of their own. */
static void compare_metrics(const cli *c, const bench__entry *e, bench__result *r)
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
            uint64_t seed = bench__id_seed(bench__id_seed(c->run.seed, e->id), m->name);
            if (bench__side_from_samples(e->iters, e->metrics[j].totals, e->nsamples,
                                         c->run.nresamples, c->run.confidence_level, seed,
                                         &a) != 0)
                break;
            bench__side_from_estimate(&m->est.median, c->run.confidence_level, &b);
            /* compare_all classifies (compare_one leaves the verdict to the suite's pass) */
            if (bench__compare_all(&a, &b, 1, &c->cmp, ch) != 0)
                ch->verdict = BENCH__V_INCOMPARABLE;
            break;
        }
    }
}

/* What report_result needs to compare and report each result as it becomes final. */
struct run_report {
    const cli *c;
    const bench__saved *old;
    bench__change *changes;
    bench__side *old_sides;
    bench__reporter *rep;
    bool color;
    int exit_code;
};

/* bench__run_all's callback: compares result k with the baseline and reports it. */
static void report_result(size_t k, bench__result *r, void *arg)
{
    struct run_report *rr = arg;
    const cli *c = rr->c;
    const bench__entry *e = c->baseline ? bench__saved_find(rr->old, r->inst->id) : NULL;
    bench__verdict status = BENCH__V_INCOMPARABLE;
    rr->changes[k].verdict = BENCH__V_INCOMPARABLE;
    if (c->baseline && bench__comparable(e ? &e->status : NULL, &r->status, &status) &&
        side_from_entry(c, e, &rr->old_sides[k]) == 0) {
        bench__side cur;
        side_from_result(c, r, &cur);
        bench__compare_one(&rr->old_sides[k], &cur, &c->cmp, &rr->changes[k]);
        r->change = &rr->changes[k];
        compare_metrics(c, e, r);
    } else if (status == BENCH__V_SKIPPED || status == BENCH__V_NEW) {
        rr->changes[k].verdict = status;
        r->change = &rr->changes[k];
    }
    rr->rep->result(rr->rep, r);
    /* A skipped benchmark's own line already says so: no change line under it. */
    if (r->change && r->status == BENCH__OK && c->format == BENCH__FMT_PRETTY) {
        bench__print_change_line(stdout, r->change, rr->color);
        bench__print_metric_changes(stdout, r, &c->cmp, rr->color);
        fflush(stdout);
    }
    if (r->status == BENCH__FAILED) {
        char id[BENCH__ESCAPED_ID], why[4 * sizeof r->message];
        fprintf(stderr, "bench: benchmark '%s' failed: %s\n",
                bench__escape(id, sizeof id, r->inst->id),
                bench__escape(why, sizeof why, r->message));
        rr->exit_code = BENCH_EXIT_FAILED;
    }
}

/* Whether a verdict of a saved-baseline comparison needs confirming: it claims a change, or
 * cannot rule one out. */
static bool suspect(bench__verdict v)
{
    return v == BENCH__V_REGRESSED || v == BENCH__V_IMPROVED || v == BENCH__V_AMBIGUOUS;
}

/*
 * Settles the suspect verdicts of a saved-baseline comparison (ch[0..m), ids[i] naming ch[i])
 * beyond the saved numbers, which cannot tell the machine's drift since the save from a change
 * of the code:
 *   - the program is byte for byte the one the baseline measured: the code did not change, so
 *     no suspect is a change of it (verdict "no change", marked same_program);
 *   - otherwise, when the baseline keeps its program's snapshot and it runs: each suspect is
 *     measured again, interleaved, snapshot (A) against this program (B), as --ab does, and the
 *     verdict comes from that paired comparison (marked confirmed);
 *   - otherwise the verdicts stay as the saved numbers give them, and a note says why.
 * Returns 0, or -1 when the run was interrupted.
 */
/*
 * When a suspect's verdict rests on the saved numbers: a claimed change that the machine's own
 * drift since the save (the canaries' largest, `drift`) could explain is not a confident one:
 * regressed or improved becomes ambiguous unless its whole interval lies beyond that drift.
 */
static void drift_guard(bench__change *ch, size_t m, double drift)
{
    if (!(drift > 0))
        return;
    for (size_t j = 0; j < m; j++) {
        bench__change *x = &ch[j];
        if ((x->verdict == BENCH__V_REGRESSED && x->ratio_lower - 1.0 <= drift) ||
            (x->verdict == BENCH__V_IMPROVED && 1.0 - x->ratio_upper <= drift))
            x->verdict = BENCH__V_AMBIGUOUS;
    }
}

static int confirm_suspects(const cli *c, const bench__saved *old, const bench__context *ctx,
                            const char *const *ids, bench__change *ch, size_t m, double drift)
{
    size_t nsus = 0;
    for (size_t j = 0; j < m; j++)
        nsus += suspect(ch[j].verdict);
    if (nsus == 0)
        return 0;
    const char *name = c->baseline;
    if (!old->ctx.program_hash[0]) {
        fprintf(stderr, "bench: note: baseline '%s' keeps no program snapshot (saved by an "
                        "older version): %zu verdict%s rest on the saved numbers alone, which "
                        "cannot tell the machine's drift from a change of the code\n",
                name, nsus, nsus == 1 ? "" : "s");
        drift_guard(ch, m, drift);
        return 0;
    }
    /* A snapshot runs with today's shared libraries: when they changed since the save, neither
     * "the same program" nor a confirmation against the snapshot would see what changed. */
    bool libs_changed = old->ctx.program_libs[0] && ctx->program_libs[0] &&
                        strcmp(old->ctx.program_libs, ctx->program_libs) != 0;
    if (libs_changed) {
        fprintf(stderr, "bench: note: the shared libraries this program runs have changed since "
                        "baseline '%s' was saved, which a run of its program snapshot would not "
                        "see: %zu verdict%s rest on the saved numbers\n",
                name, nsus, nsus == 1 ? "" : "s");
        drift_guard(ch, m, drift);
        return 0;
    }
    if (ctx->program_hash[0] && strcmp(ctx->program_hash, old->ctx.program_hash) == 0) {
        fprintf(stderr, "bench: note: this program is the one baseline '%s' measured (%s): "
                        "the %zu change%s seen since come from the machine or the environment, "
                        "not the code, and are not verdicts on it\n",
                name, ctx->program_hash, nsus, nsus == 1 ? "" : "s");
        for (size_t j = 0; j < m; j++)
            if (suspect(ch[j].verdict)) {
                ch[j].verdict = BENCH__V_NO_CHANGE;
                ch[j].same_program = true;
            }
        return 0;
    }
    if (c->confirm_time_set && c->confirm_time <= 0) {
        drift_guard(ch, m, drift);
        return 0;
    }
    char snap[4200], hash[32] = "", why[512];
    bench__msg(snap, sizeof snap, "%s/%s", baseline_dir(c), old->ctx.program_file);
    if (!old->ctx.program_file[0] ||
        (bench__program_hash(snap, hash, sizeof hash, NULL, why, sizeof why) != 0 &&
         (hash[0] = '\0', true)) ||
        strcmp(hash, old->ctx.program_hash) != 0) {
        fprintf(stderr, "bench: note: the program saved with baseline '%s' (%s) is %s: %zu "
                        "verdict%s rest on the saved numbers alone\n",
                name, snap, !old->ctx.program_file[0] ? "not recorded"
                            : hash[0] && strcmp(hash, old->ctx.program_hash) != 0
                                ? "not the one it measured (changed since)"
                                : "missing",
                nsus, nsus == 1 ? "" : "s");
        drift_guard(ch, m, drift);
        return 0;
    }
    bench__ab_options o = c->abo;
    o.seconds = c->confirm_time_set
                    ? c->confirm_time
                    : fmax(BENCH__CONFIRM_MIN_TIME,
                           fmin(BENCH__DEFAULT_CONFIRM_TIME, BENCH__CONFIRM_BUDGET / (double)nsus));
    o.pairs = BENCH__CONFIRM_PAIRS;
    o.significance_level = c->cmp.significance_level;
    o.noise_threshold = c->cmp.noise_threshold;
    fprintf(stderr, "bench: confirming %zu change%s: the program saved with baseline '%s' "
                    "against this one, interleaved (%.1f s each)\n",
            nsus, nsus == 1 ? "" : "s", name, o.seconds);
    for (size_t j = 0; j < m; j++) {
        if (!suspect(ch[j].verdict))
            continue;
        bench__change conf;
        int rc = bench__ab_confirm(snap, ids[j], &o, nsus, &conf, why, sizeof why);
        if (bench__proc_interrupted())
            return -1;
        if (rc != 0) {
            fprintf(stderr, "bench: note: '%s' could not be confirmed (%s): its verdict rests "
                            "on the saved numbers\n", ids[j], why);
            drift_guard(&ch[j], 1, drift);
            continue;
        }
        char line[160];
        bench__msg(line, sizeof line, "%s -> %s", bench__verdict_name(ch[j].verdict),
                   bench__verdict_name(conf.verdict));
        fprintf(stderr, "bench: confirmed %s: %s, %+.2f%% [%+.2f%%, %+.2f%%] interleaved\n",
                ids[j], line, 100.0 * (conf.ratio - 1.0), 100.0 * (conf.ratio_lower - 1.0),
                100.0 * (conf.ratio_upper - 1.0));
        conf.confirmed = true;
        ch[j] = conf;
    }
    return 0;
}

/* The first option given that only means something in a comparison, or NULL. */
static const char *comparison_option(const cli *c)
{
    if (c->fail_on_regression)
        return "--fail-on-regression";
    if (c->significance_set)
        return "--significance-level";
    if (c->noise_threshold_set)
        return "--noise-threshold";
    if (c->strict_set)
        return c->strict ? "--baseline-strict" : "--baseline-lenient";
    return NULL;
}

static int check_combinations(const cli *c)
{
    if (c->load_baseline && !c->baseline) {
        fprintf(stderr, "bench: --load-baseline needs --baseline OLD to compare with\n");
        return -1;
    }
    /* A gate option without a comparison would be silently ignored, and a CI gate that forgot
     * --baseline would pass whatever happened: refuse it instead. */
    const char *gate = comparison_option(c);
    if (gate && !c->baseline && !c->ab) {
        fprintf(stderr, "bench: %s needs a comparison: give --baseline NAME or --ab OTHER\n",
                gate);
        return -1;
    }
    if (c->confirm_time_set && !c->baseline) {
        fprintf(stderr, "bench: --confirm-time needs --baseline NAME\n");
        return -1;
    }
    if ((c->ab_time_set || c->ab_pairs_set) && !c->ab) {
        fprintf(stderr, "bench: %s needs --ab OTHER\n",
                c->ab_time_set ? "--ab-time" : "--ab-pairs");
        return -1;
    }
    if (c->load_baseline && (c->save_baseline || c->calibrate)) {
        fprintf(stderr, "bench: --load-baseline runs nothing, so it cannot be combined with "
                        "--save-baseline or --calibrate\n");
        return -1;
    }
    if (c->ab && (c->baseline || c->save_baseline || c->load_baseline || c->calibrate ||
                  c->json_path || c->list)) {
        fprintf(stderr, "bench: --ab compares two programs and runs nothing else: it cannot be "
                        "combined with baselines, --calibrate, --json or --list\n");
        return -1;
    }
    if (c->run.profile_time > 0 &&
        (c->baseline || c->save_baseline || c->load_baseline || c->calibrate || c->json_path ||
         c->gbench_path || c->ab)) {
        fprintf(stderr, "bench: --profile-time takes no statistics: it cannot be combined with "
                        "baselines, --calibrate, --json, --export-gbench or --ab\n");
        return -1;
    }
    if (c->run.in_process && c->run.processes) {
        fprintf(stderr, "bench: --processes and --in-process contradict each other: pick one\n");
        return -1;
    }
    bool isolated = !c->run.in_process && c->run.profile_time <= 0 && !c->ab &&
                    !c->instructions;
    if ((c->run.processes || c->run.timeout_s > 0) && !isolated) {
        fprintf(stderr, "bench: --processes and --timeout set the worker processes of a "
                        "measuring run: they cannot be combined with --in-process, "
                        "--profile-time, --ab or --instructions\n");
        return -1;
    }
    if (isolated && (c->run.cli.rounds || c->run.cli.target_precision)) {
        fprintf(stderr, "bench: --rounds and --target-precision shape the samples of one "
                        "process: add --in-process to use them (worker processes are set with "
                        "--processes, and never stop early)\n");
        return -1;
    }
    if (c->calibrate && !c->save_baseline) {
        fprintf(stderr, "bench: --calibrate needs --save-baseline NAME to store the noise in\n");
        return -1;
    }
    /* ---- instruction mode (instr.c) ---- */
    if ((c->instr_iterations_set || c->instr_cache_sim) && !c->instructions &&
        !c->instr_worker) {
        fprintf(stderr, "bench: --instructions-iterations and --instructions-cache-sim need "
                        "--instructions\n");
        return -1;
    }
    if (c->instructions && (c->ab || c->calibrate || c->run.profile_time > 0 ||
                            c->perf_events || c->alloc_stats || c->gbench_path)) {
        fprintf(stderr, "bench: --instructions counts instructions under valgrind: it cannot be "
                        "combined with --ab, --calibrate, --profile-time, --perf-events, "
                        "--alloc-stats or --export-gbench\n");
        return -1;
    }
    if (c->instructions && c->format != BENCH__FMT_PRETTY && c->format != BENCH__FMT_JSON) {
        fprintf(stderr, "bench: --instructions reports as pretty or json only (the other "
                        "formats show times)\n");
        return -1;
    }
    /* ---- end instruction mode ---- */
    return 0;
}

int bench_main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    c.run.nresamples = 10000;
    c.run.confidence_level = 0.95;
    c.run.seed = 1;
    c.color = -1;
    c.cmp.significance_level = 0.05;
    c.cmp.noise_threshold = BENCH__DEFAULT_NOISE_THRESHOLD;
    c.cmp.default_run_noise = BENCH__DEFAULT_RUN_NOISE;
    c.abo.seconds = 20.0;
    c.abo.pairs = 8;
    c.abo.sample_ms = 10.0;
    if (parse_args(&c, argc, argv) != 0 || check_combinations(&c) != 0)
        return BENCH_EXIT_USAGE;
    /* Every argument is checked before anything is done, --help and --list included: an
     * invalid filter is exit 2 whatever else is asked. */
    if (select_ids(&c, NULL, 0, NULL) != 0)
        return BENCH_EXIT_USAGE;
    c.abo.significance_level = c.cmp.significance_level;
    c.abo.noise_threshold = c.noise_threshold_set ? c.cmp.noise_threshold
                                                  : BENCH__DEFAULT_AB_NOISE_THRESHOLD;
    if (c.help) {
        print_usage(stdout, argc > 0 ? argv[0] : NULL);
        return finish_stdout(BENCH_EXIT_OK);
    }
    if (c.version) {
        /* The counters and CUDA layers say whether this program links their components. */
        printf("bench (harness) %s\nbuilt with: %s, %s, %s\n", bench_version(),
               bench__perf_feature(), bench__cuda_feature(), HARNESS_FEATURES);
        return finish_stdout(BENCH_EXIT_OK);
    }
    if (c.context) {
        bench__context ctx;
        bench__context_collect(&ctx, &c.run);
        bench__context_print(stdout, &ctx);
        return finish_stdout(BENCH_EXIT_OK);
    }
    if (c.load_baseline)
        return compare_files(&c);
    if (c.list_events)
        return finish_stdout(bench__perf_list_events(stdout));

    bench__instance *all = NULL;
    size_t n = 0;
    char msg[1024] = "";
    /* Allocation counting needs its preload library: re-executes with it before anything. */
    if (c.alloc_stats && bench__alloc_preload(argc, argv, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench: --alloc-stats: %s\n", msg);
        return BENCH_EXIT_USAGE;
    }
    int rc = bench__registry_list(&all, &n, msg, sizeof msg);
    if (rc != 0) {
        fprintf(stderr, "bench: %s\n", msg[0] ? msg : bench__strerror(rc));
        return BENCH_EXIT_USAGE;
    }
    const char *job = getenv("BENCH_WORKER_JOB");
    if (job) {
        /* A worker process of an isolated run (isolate.c): its job came in the environment,
         * which no process it starts should inherit. */
        char job_copy[512];
        bench__msg(job_copy, sizeof job_copy, "%s", job);
        unsetenv("BENCH_WORKER_JOB");
        /* The manager made the same probes and gave their warnings already. */
        fflush(stderr);
        int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
        if (saved >= 0 && null >= 0)
            dup2(null, STDERR_FILENO);
        int prc = make_probes(&c);
        if (saved >= 0 && null >= 0)
            dup2(saved, STDERR_FILENO);
        if (saved >= 0)
            close(saved);
        if (null >= 0)
            close(null);
        int wrc = prc != 0 ? BENCH_EXIT_USAGE : bench__worker_main(all, n, job_copy, &c.run);
        for (size_t p = 0; p < c.run.nprobes; p++)
            if (c.run.probes[p]->destroy)
                c.run.probes[p]->destroy(c.run.probes[p]);
        free(all);
        return wrc;
    }
    if (c.ab_worker) {
        /* a worker times CUDA benchmarks with their probe too: the time is the GPU's */
        static bench__probe *worker_probes[1];
        worker_probes[0] = bench__cuda_probe();
        c.run.probes = worker_probes;
        c.run.nprobes = 1;
        int wrc = bench__ab_worker_main(all, n, c.ab_worker, &c.run);
        free(all);
        return wrc;
    }
    bool *selected = calloc(n ? n : 1, sizeof *selected);
    const char **ids = calloc(n ? n : 1, sizeof *ids);
    int exit_code = BENCH_EXIT_OK;
    bench__user_builds builds = {0}; /* how the selected benchmarks' files were compiled */
    bench__result *results = NULL;
    const bench__instance **list = NULL;
    bench__change *changes = NULL;
    bench__side *old_sides = NULL;
    bench__saved old, *cal = NULL;
    size_t ncal = 0;
    memset(&old, 0, sizeof old);
    /* With --baseline: the selected benchmarks of the baseline that this program lacks. */
    const char **absent_ids = NULL, **removed = NULL;
    bench__verdict *absent_verdicts = NULL;
    size_t nabsent = 0, nremoved = 0;
    bench__comparison comparison = {NULL, NULL, 0};
    if (!selected || !ids) {
        fprintf(stderr, "bench: out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        ids[i] = all[i].id;
    if (select_ids(&c, ids, n, selected) != 0) {
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    size_t nsel = 0;
    for (size_t i = 0; i < n; i++)
        nsel += selected[i];
    if (nsel == 0) {
        if (n == 0)
            fprintf(stderr, "bench: this program has no benchmarks (no BENCH_FN was linked in)\n");
        else
            fprintf(stderr, "bench: no benchmark matches the filter%s (see --list)\n",
                    c.nfilters > 1 ? "s" : "");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    if (c.list && make_probes(&c) != 0) { /* --list checks the probes' arguments too */
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    if (c.list) {
        for (size_t i = 0; i < n; i++)
            if (selected[i]) {
                bench__fputs_escaped(stdout, all[i].id);
                putchar('\n');
            }
        exit_code = finish_stdout(BENCH_EXIT_OK);
        goto out;
    }
    if (c.ab) {
        /* The old build's benchmarks for the same FILTERs that this one lacks: removed. */
        char *text = other_list(&c, c.ab);
        size_t lines = 0;
        for (const char *p = text; p && *p; p++)
            lines += *p == '\n';
        removed = calloc(lines ? lines : 1, sizeof *removed);
        for (char *line = text, *nl; removed && line && (nl = strchr(line, '\n')); line = nl + 1) {
            *nl = '\0';
            if (*line && !has_instance(all, n, line))
                removed[nremoved++] = line;
        }
        c.abo.strict = c.strict;
        c.abo.removed = removed;
        c.abo.nremoved = nremoved;
        exit_code = finish_stdout(bench__ab_run(c.ab, all, selected, n, &c.abo,
                                                c.fail_on_regression, use_color(c.color)));
        free(text);
        goto out;
    }
    /* ---- instruction mode (instr.c) ---- */
    if (c.instr_worker) {
        exit_code = bench__instr_worker_main(all, selected, n, c.instr_worker,
                                             c.instr_iterations, c.instr_cache_sim, &c.run);
        goto out;
    }
    if (c.instructions) {
        char bpath[4096], spath[4096];
        baseline_path(&c, c.baseline ? c.baseline : "", bpath, sizeof bpath);
        baseline_path(&c, c.save_baseline ? c.save_baseline : "", spath, sizeof spath);
        /* The baseline's selected benchmarks this program lacks; a baseline that cannot be
         * read is instr.c's to report. */
        long na = 0;
        if (c.baseline && bench__saved_load(bpath, &old, msg, sizeof msg) == 0) {
            absent_ids = calloc(old.n ? old.n : 1, sizeof *absent_ids);
            absent_verdicts = calloc(old.n ? old.n : 1, sizeof *absent_verdicts);
            na = absent_ids && absent_verdicts
                     ? absent_entries(&c, &old, in_program, &(struct program){all, n},
                                      absent_ids, absent_verdicts)
                     : -1;
        }
        if (na < 0) {
            if (!absent_ids || !absent_verdicts)
                fprintf(stderr, "bench: out of memory\n");
            exit_code = BENCH_EXIT_USAGE;
            goto out;
        }
        bench__instr_request q = {
            .all = all,
            .selected = selected,
            .n = n,
            .run = &c.run,
            .filters = c.filters,
            .nfilters = c.nfilters,
            .exact = c.exact,
            .iterations = c.instr_iterations,
            .cache_sim = c.instr_cache_sim,
            .threshold = c.noise_threshold_set ? c.cmp.noise_threshold
                                               : BENCH__INSTR_DEFAULT_THRESHOLD,
            .format = c.format,
            .color = use_color(c.color),
            .json_path = c.json_path,
            .baseline = c.baseline,
            .baseline_path = bpath,
            .strict = c.strict,
            .absent_ids = absent_ids,
            .absent_verdicts = absent_verdicts,
            .nabsent = (size_t)na,
            .save_baseline = c.save_baseline,
            .save_path = spath,
            .baseline_dir = baseline_dir(&c),
            .fail_on_regression = c.fail_on_regression,
        };
        exit_code = finish_stdout(bench__instr_run(&q));
        goto out;
    }
    /* ---- end instruction mode ---- */

    /* A comparison is checked before anything runs: a missing or broken baseline fails fast.
     * Benchmarks it lacks (new) or that this program lacks (removed) are reported with the
     * comparison, and are an error only with --baseline-strict, checked after the run: whether
     * a benchmark is skipped here, which wins over both, is known only once it ran. */
    if (c.baseline) {
        if (load_named(&c, c.baseline, &old) != 0) {
            exit_code = BENCH_EXIT_USAGE;
            goto out;
        }
        /* ---- instruction mode (instr.c): counts are not times ---- */
        if (bench__instr_is_mode(old.ctx.mode)) {
            fprintf(stderr, "bench: baseline '%s' holds instruction counts (saved with "
                            "--instructions): compare it with --instructions, or pick a "
                            "baseline of times\n", c.baseline);
            exit_code = BENCH_EXIT_USAGE;
            goto out;
        }
        /* ---- end instruction mode ---- */
        absent_ids = calloc(old.n ? old.n : 1, sizeof *absent_ids);
        absent_verdicts = calloc(old.n ? old.n : 1, sizeof *absent_verdicts);
        removed = calloc(old.n ? old.n : 1, sizeof *removed);
        long na = absent_ids && absent_verdicts && removed
                      ? absent_entries(&c, &old, in_program, &(struct program){all, n},
                                       absent_ids, absent_verdicts)
                      : -1;
        if (na < 0) {
            if (!absent_ids || !absent_verdicts || !removed)
                fprintf(stderr, "bench: out of memory\n");
            exit_code = BENCH_EXIT_USAGE;
            goto out;
        }
        nabsent = (size_t)na;
        for (size_t j = 0; j < nabsent; j++)
            if (absent_verdicts[j] == BENCH__V_REMOVED)
                removed[nremoved++] = absent_ids[j];
        comparison = (bench__comparison){c.baseline, removed, nremoved};
    }

    c.run.progress = isatty(STDERR_FILENO) && c.format == BENCH__FMT_PRETTY;
    bool color = use_color(c.color);
    bench__context ctx;
    bench__context_collect(&ctx, &c.run);
    if (bench__user_builds_init(&builds, all, selected, n) == 0)
        bench__user_builds_attach(&ctx, &builds);
    {
        char why[256];
        if (bench__program_hash("/proc/self/exe", ctx.program_hash, sizeof ctx.program_hash,
                                &ctx.program_bytes, why, sizeof why) != 0)
            ctx.program_hash[0] = '\0';
        if (bench__libraries_hash(ctx.program_libs, sizeof ctx.program_libs, why,
                                  sizeof why) != 0)
            ctx.program_libs[0] = '\0';
    }
    /* A baseline keeps the machine's drift canaries, and a comparison measures them again. */
    if ((c.save_baseline || c.baseline) && bench__canaries_measure(ctx.canary) == 0)
        ctx.have_canaries = true;
    double drift = 0; /* the largest drift of a canary since the baseline was saved */
    for (size_t i = 0; i < ctx.nwarnings; i++)
        fprintf(stderr, "bench: warning: %s\n", ctx.warnings[i]);
    bench__context_change context = {{0}, {0}};
    if (c.baseline) {
        ctx.comparison = &comparison;
        bench__context_id now;
        bench__context_id_from(&now, &ctx);
        warn_context(&now, &old.ctx, c.baseline, &context);
        double d[BENCH__NCANARIES];
        char words[512];
        if (ctx.have_canaries &&
            bench__canaries_drift(ctx.canary, old.ctx.canary, d, words, sizeof words) > 0) {
            for (int q = 0; q < BENCH__NCANARIES; q++)
                if (isfinite(d[q]) && fabs(d[q]) > drift)
                    drift = fabs(d[q]);
            c.cmp.drift_sd = bench__canaries_drift_sd(d);
            c.cmp.drift_known = isfinite(c.cmp.drift_sd);
            /* Said only when it matters: a drift beyond the noise threshold. */
            if (drift > c.cmp.noise_threshold)
                fprintf(stderr, "bench: warning: the machine changed since baseline '%s' was "
                                "saved (drift canaries): %s\n", c.baseline, words);
        }
    }
    if (c.calibrate && calibration_runs(&c, argc, argv, &cal, &ncal) != 0) {
        exit_code = bench__proc_interrupted() ? 128 + bench__proc_interrupted()
                                              : BENCH_EXIT_FAILED;
        goto out;
    }

    if (make_probes(&c) != 0) {
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    if (c.run.profile_time > 0) {
        exit_code = profile_run(&c, all, selected, n);
        goto out;
    }

    bench__reporter rep;
    switch (c.format) {
    case BENCH__FMT_JSON:
        bench__reporter_json(&rep, stdout);
        break;
    case BENCH__FMT_CSV:
        bench__reporter_csv(&rep, stdout);
        break;
    case BENCH__FMT_MARKDOWN:
        bench__reporter_markdown(&rep, stdout);
        break;
    case BENCH__FMT_BENCHER:
        bench__reporter_bencher(&rep, stdout);
        break;
    default:
        bench__reporter_pretty(&rep, stdout, color);
        break;
    }
    results = calloc(nsel, sizeof *results);
    changes = calloc(nsel, sizeof *changes);
    old_sides = calloc(nsel, sizeof *old_sides);
    if (!results || !changes || !old_sides) {
        fprintf(stderr, "bench: out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    list = calloc(nsel ? nsel : 1, sizeof *list);
    if (!list) {
        fprintf(stderr, "bench: out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (selected[i])
            list[k++] = &all[i];
    rep.begin(&rep, &ctx);
    struct run_report rr = {&c, &old, changes, old_sides, &rep, color, BENCH_EXIT_OK};
    if (c.run.in_process) {
        /* A closed stdout (`bench | head`) must not kill the run before its files are
         * written; in worker mode bench__run_isolated sees to this with the interrupts. */
        signal(SIGPIPE, SIG_IGN);
        bench__crash_handlers_install();
        rc = bench__run_all(list, k, &c.run, results, report_result, &rr);
    } else {
        rc = bench__run_isolated(list, k, &c.run, argc, argv, results, report_result, &rr);
    }
    if (rc == BENCH_EUSAGE && bench__proc_interrupted()) {
        /* Interrupted: the workers are gone; nothing half-done is written or saved. */
        int sig = bench__proc_interrupted();
        fflush(stdout);
        fprintf(stderr, "bench: interrupted by %s: stopped the worker processes; no results "
                        "or baseline were written\n", bench__signal_name(sig));
        for (size_t i = 0; i < k; i++)
            bench__result_destroy(&results[i]);
        exit_code = 128 + sig;
        goto out;
    }
    if (rc != 0) {
        fprintf(stderr, "bench: out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    exit_code = rr.exit_code;
    if (cal)
        bench__noise_from_runs(results, k, cal, ncal);

    /* Final verdicts need every p-value (Holm's correction over the whole comparison). */
    /* The summary lists the compared benchmarks, then those with a status (skipped, new) and
     * the baseline's that this program lacks. */
    if (c.baseline) {
        size_t rows = k + nabsent, m = 0, ns = 0;
        bench__side *a = calloc(k ? k : 1, sizeof *a), *b = calloc(k ? k : 1, sizeof *b);
        bench__change *ch = calloc(rows ? rows : 1, sizeof *ch);
        const char **cids = calloc(rows ? rows : 1, sizeof *cids);
        size_t *map = calloc(k ? k : 1, sizeof *map);
        if (a && b && ch && cids && map) {
            for (size_t i = 0; i < k; i++) {
                const bench__change *rch = results[i].change;
                if (rch && (rch->verdict == BENCH__V_SKIPPED || rch->verdict == BENCH__V_NEW))
                    ns++;
                else if (rch) {
                    a[m] = old_sides[i];
                    side_from_result(&c, &results[i], &b[m]);
                    cids[m] = results[i].inst->id;
                    map[m++] = i;
                }
            }
            if (bench__compare_all(a, b, m, &c.cmp, ch) == 0) {
                if (confirm_suspects(&c, &old, &ctx, cids, ch, m, drift) != 0) {
                    int sig = bench__proc_interrupted();
                    fprintf(stderr, "bench: interrupted by %s: stopped the confirmation; no "
                                    "results or baseline were written\n",
                            bench__signal_name(sig));
                    free(a);
                    free(b);
                    free(ch);
                    free(cids);
                    free(map);
                    for (size_t i = 0; i < k; i++)
                        bench__result_destroy(&results[i]);
                    exit_code = 128 + sig;
                    goto out;
                }
                for (size_t j = 0; j < m; j++)
                    changes[map[j]] = ch[j];
                size_t t = m;
                for (size_t i = 0; i < k; i++)
                    if (results[i].change && t < m + ns &&
                        (results[i].change->verdict == BENCH__V_SKIPPED ||
                         results[i].change->verdict == BENCH__V_NEW)) {
                        ch[t].verdict = results[i].change->verdict;
                        cids[t++] = results[i].inst->id;
                    }
                for (size_t j = 0; j < nabsent; j++) {
                    ch[t].verdict = absent_verdicts[j];
                    cids[t++] = absent_ids[j];
                }
                FILE *o = c.format == BENCH__FMT_PRETTY ? stdout : stderr;
                char what[128];
                bench__msg(what, sizeof what, "baseline '%s'", c.baseline);
                bench__print_compare_summary(o, what, cids, ch, t, &c.cmp, "Holm", &context,
                                             o == stdout ? color : isatty(STDERR_FILENO));
                int cmp_exit = compare_exit(&c, cids, ch, t, what);
                if (exit_code == BENCH_EXIT_OK)
                    exit_code = cmp_exit;
            }
        }
        free(a);
        free(b);
        free(ch);
        free(cids);
        free(map);
    }
    char shown[4 * sizeof msg]; /* messages quote paths: escaped */
    if (rep.end(&rep, &ctx, results, k) != 0 || fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "bench: writing the report to stdout failed\n");
        exit_code = exit_code == BENCH_EXIT_OK ? BENCH_EXIT_USAGE : exit_code;
    }
    if (c.json_path &&
        bench__json_write_file(c.json_path, &ctx, results, k, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench: %s\n", bench__escape(shown, sizeof shown, msg));
        if (exit_code == BENCH_EXIT_OK)
            exit_code = BENCH_EXIT_USAGE;
    }
    if (c.gbench_path &&
        bench__gbench_write_file(c.gbench_path, &ctx, results, k, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench: %s\n", bench__escape(shown, sizeof shown, msg));
        if (exit_code == BENCH_EXIT_OK)
            exit_code = BENCH_EXIT_USAGE;
    }
    if (c.save_baseline && save_named(&c, &ctx, results, k) != 0 && exit_code == BENCH_EXIT_OK)
        exit_code = BENCH_EXIT_USAGE;
    for (size_t i = 0; i < k; i++)
        bench__result_destroy(&results[i]);
out:
    for (size_t p = 0; p < c.run.nprobes; p++)
        if (c.run.probes[p]->destroy)
            c.run.probes[p]->destroy(c.run.probes[p]);
    for (size_t r = 0; cal && r < ncal; r++)
        bench__saved_destroy(&cal[r]);
    free(cal);
    free(absent_ids);
    free(absent_verdicts);
    free(removed);
    bench__saved_destroy(&old);
    free(old_sides);
    free(changes);
    free(results);
    free(list);
    free(ids);
    free(selected);
    bench__user_builds_destroy(&builds);
    free(all);
    return exit_code;
}

/* The default entry point: a file of BENCH_FNs needs no main(). A program's own main() (strong)
 * replaces this weak one and may call bench_main() itself. */
__attribute__((weak)) int main(int argc, char **argv)
{
    return bench_main(argc, argv);
}
