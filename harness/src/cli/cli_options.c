/*
 * cli_options.c: the command line read into one struct (bench__request): the help, the option
 * table, the value parsers and the checks of combinations (the FILTERs' selection is
 * run/select.c's).
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
#include "run/instr.h"
#include "sys/proc.h"

/* The help, after its first line ("Usage: PROGRAM [OPTIONS] [FILTER...]",
 * bench__cli_print_usage). */
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
    "      --gpu-lock-clocks MHZ  lock the GPU's SM clock at MHZ for the run, 100..10000\n"
    "                             (NVML; needs root; without permission: a warning)\n"
    "Processes:\n"
    "      --processes N          measure each benchmark in N fresh worker processes,\n"
    "                             interleaved across benchmarks, 1..1000 (default 10; 3 with\n"
    "                             --quick; fewer when its samples do not fit the budget)\n"
    "      --in-process           measure everything in this one process (for debuggers and\n"
    "                             profilers: gdb, perf record, callgrind, heaptrack)\n"
    "      --timeout S            stop a worker process that runs longer than S seconds and\n"
    "                             report its benchmark as timed out (default 300; with --ab\n"
    "                             and confirmations, the longest any one step of a worker\n"
    "                             may take: its setup, a sample)\n"
    "      --fixed-layout         keep each worker's own stack, heap and environment offsets\n"
    "                             (default: drawn at random per worker process, so that\n"
    "                             layout luck averages out instead of looking like a change)\n"
    "Counters and allocations:\n"
    "      --perf-events LIST     count perf events around every sample: comma-separated\n"
    "                             libpfm4 names or presets (ipc, cache, branch, sw)\n"
    "      --list-events          list the events libpfm4 knows here and which open\n"
    "      --alloc-stats          count allocations and bytes per iteration, peak heap\n"
    "      --probe NAME[=ARG]     attach a probe by name, repeatable: perf=LIST (as\n"
    "                             --perf-events), alloc (as --alloc-stats), rusage (voluntary\n"
    "                             and involuntary context switches per iteration)\n"
    "Statistics:\n"
    "      --nresamples N         bootstrap resamples, 10..10000000 (default 10000), at most\n"
    "                             268435456 draws (resamples x samples) per benchmark\n"
    "      --confidence-level C   confidence level of intervals, 0 < C < 1 (default 0.95)\n"
    "      --seed N               bootstrap seed, 0..4294967295 (default 1)\n"
    "Output:\n"
    "      --output-format FMT    pretty, json, csv, markdown or bencher on stdout\n"
    "                             (default pretty)\n"
    "      --json FILE            also write the results as JSON to FILE (atomically)\n"
    "      --export-gbench FILE   also write them in Google Benchmark's JSON format\n"
    "      --history FILE         also append this run to the SQLite database FILE (made when\n"
    "                             absent), or to a PostgreSQL database when FILE is a URL\n"
    "                             postgresql://... (default $BENCH_HISTORY): a run of times\n"
    "                             only\n"
    "      --history-copy FROM    copy every run of history FROM into --history TO (a file or\n"
    "                             a postgresql:// URL, either way); runs already there are\n"
    "                             skipped; runs nothing\n"
    "      --history-show FILE    list the runs in history FILE, then each benchmark's series\n"
    "                             that the FILTERs select, its change points and trend;\n"
    "                             runs nothing (--json FILE: the series as JSON too)\n"
    "      --history-gate K       with --history: exit 1 when a benchmark's newest run is a\n"
    "                             step above --noise-threshold against its last K runs,\n"
    "                             5..1000 (10 is a good start), or its slowing trend over\n"
    "                             them is; needs 5 earlier runs to judge\n"
    "      --history-confirm      with --history-show: run the kept programs of the runs on\n"
    "                             both sides of each change point again, paired, and say\n"
    "                             whether the step is confirmed or not reproduced\n"
    "      --history-programs N   programs kept beside the history (FILE.programs/) for\n"
    "                             --history-confirm, the most recently used, 0..1000\n"
    "                             (default 20; 0 keeps none)\n"
    "      --shard K/N            run the K-th of N parts of the selected benchmarks (a\n"
    "                             split by id that does not move when others are added)\n"
    "      --run-id ID            with --history: record the run as a part of run ID, with\n"
    "                             its other parts (with --shard, default the CI's run id:\n"
    "                             $GITHUB_RUN_ID-$GITHUB_RUN_ATTEMPT, else $CI_PIPELINE_ID)\n"
    "      --no-last              no change since the last run at the end of the pretty\n"
    "                             output, and this run is not kept for the next (the last\n"
    "                             run: the history's, else $BENCH_LAST_DIR's, default\n"
    "                             ~/.cache/harness/last)\n"
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
    "      --fail-on-inconclusive exit 1 when any benchmark is inconclusive: its interval\n"
    "                             reaches beyond the noise threshold\n"
    "      --confirm-time S       with --baseline: confirm each suspect change by an\n"
    "                             interleaved run of the program saved with the baseline,\n"
    "                             S seconds each, 0..3600 (default 10, or 90 s shared,\n"
    "                             at least 4 each, when more than 9; 0: never)\n"
    "      --trust-snapshots      with --baseline: run the baseline's program snapshot even\n"
    "                             when this user's key did not sign it (a cache another\n"
    "                             machine saved); its file checks still apply\n"
    "                             (these comparison options need --baseline or --ab;\n"
    "                             --history-gate takes the level and threshold too)\n"
    "Paired A/B of two builds:\n"
    "      --ab OTHER             measure OTHER (old build of this suite) against this program\n"
    "                             in alternating ABBA/BAAB rounds; runs nothing else\n"
    "      --ab-time S            seconds per benchmark on average, 1..3600 (default 10): the\n"
    "                             budget, spent on the benchmarks still undecided\n"
    "      --ab-pairs N           most worker pairs of one benchmark, 3..1000 (default 32)\n"
    "      --ab-schedule S        pinned (both workers of a pair on one CPU, taking turns),\n"
    "                             duet (at once on two CPUs, swapped) or unpinned\n"
    "                             (default pinned)\n"
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
    "Documentation: man bench; docs/cli.md and docs/results-format.md (installed in\n"
    "share/doc/harness/).\n";

/* Prints the help; its usage line names the program as it was invoked (argv[0]'s basename). */
void bench__cli_print_usage(FILE *o)
{
    fprintf(o, "Usage: %s [OPTIONS] [FILTER...]\n", bench__prog_name());
    fputs(usage_text, o);
}

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
    O_PERF_EVENTS, O_LIST_EVENTS, O_ALLOC_STATS, O_PROBE,
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

static int apply_option(bench__request *c, opt_id id, const char *flag, const char *v)
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
    case O_FIXED_LAYOUT:
        c->run.fixed_layout = true;
        return 0;
    case O_FAIL_INCONCLUSIVE:
        c->fail_on_inconclusive = true;
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
    case O_INSTR_ITERS:
        c->instr_iterations_set = true;
        return parse_u64(flag, v, 1, UINT64_C(1) << 32, "an integer in [1, 4294967296]",
                         &c->instr_iterations);
    case O_INSTR_CACHE:
        c->instr_cache_sim = true;
        return 0;
    /* ---- end instruction mode ---- */
    case O_CONFIRM_TIME:
        c->confirm_time_set = true;
        return parse_double(flag, v, 0, 3600, false, false, "a number of seconds in [0, 3600]",
                            &c->confirm_time);
    case O_TRUST_SNAPSHOTS:
        c->trust_snapshots = true;
        return 0;
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
    case O_HISTORY_PROGRAMS:
        if (parse_u64(flag, v, 0, 1000, "an integer in [0, 1000]", &u))
            return -1;
        c->history_programs = (size_t)u;
        c->history_programs_set = true;
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

/* The first option given that only means something in a comparison, or NULL. The history
 * gate is a comparison too, with the runs before: it takes the level and the threshold. */
static const char *comparison_option(const bench__request *c)
{
    if (c->fail_on_regression)
        return "--fail-on-regression";
    if (c->significance_set && !c->history_gate && !c->history_confirm)
        return "--significance-level";
    if (c->noise_threshold_set && !c->history_gate && !c->history_confirm)
        return "--noise-threshold";
    if (c->strict_set)
        return c->strict ? "--baseline-strict" : "--baseline-lenient";
    if (c->fail_on_inconclusive)
        return "--fail-on-inconclusive";
    return NULL;
}

static int check_combinations(const bench__request *c)
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
    if ((c->confirm_time_set || c->trust_snapshots) && !c->baseline && !c->history_confirm &&
        !c->history_gate) {
        bench__errf("%s needs --baseline NAME (or --history-confirm, or "
                    "--history-gate K)\n",
                    c->confirm_time_set ? "--confirm-time" : "--trust-snapshots");
        return -1;
    }
    if ((c->ab_time_set || c->ab_pairs_set || c->ab_schedule_set) && !c->ab) {
        bench__errf("%s needs --ab OTHER\n", c->ab_time_set    ? "--ab-time"
                                             : c->ab_pairs_set ? "--ab-pairs"
                                                               : "--ab-schedule");
        return -1;
    }
    if (c->load_baseline && (c->save_baseline || c->calibrate)) {
        bench__errf("--load-baseline runs nothing, so it cannot be combined with "
                    "--save-baseline or --calibrate\n");
        return -1;
    }
    if (c->ab && (c->baseline || c->save_baseline || c->load_baseline || c->calibrate ||
                  c->json_path || c->list)) {
        bench__errf("--ab compares two programs and runs nothing else: it cannot be "
                    "combined with baselines, --calibrate, --json or --list\n");
        return -1;
    }
    /* The paired comparison and the comparison of two saved files report in words only: a
     * format or file they cannot write is refused rather than answered with text where a parser
     * expects JSON or CSV, or with no file at all. */
    if ((c->ab || c->load_baseline) &&
        (c->format != BENCH__FMT_PRETTY || c->gbench_path || c->json_path)) {
        bench__errf("%s reports in the pretty format only: --json, --export-gbench "
                    "and other --output-format values do not apply\n",
                    c->ab ? "--ab" : "--load-baseline");
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
    /* ---- instruction mode (instr.c) ---- */
    if ((c->instr_iterations_set || c->instr_cache_sim) && !c->instructions) {
        bench__errf("--instructions-iterations and --instructions-cache-sim need "
                    "--instructions\n");
        return -1;
    }
    bool probes_asked = false;
    for (size_t k = 0; k < BENCH__MAX_PROBE_KINDS; k++)
        probes_asked = probes_asked || c->probe_on[k];
    if (c->instructions && probes_asked && !c->perf_events && !c->alloc_stats) {
        bench__errf("--instructions counts instructions under valgrind: --probe does "
                    "not apply\n");
        return -1;
    }
    if (c->instructions && (c->ab || c->calibrate || c->run.profile_time > 0 ||
                            c->perf_events || c->alloc_stats || c->gbench_path)) {
        bench__errf("--instructions counts instructions under valgrind: it cannot be "
                    "combined with --ab, --calibrate, --profile-time, --perf-events, "
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
    if (parse_args(c, argc, argv) != 0 || check_combinations(c) != 0)
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
    /* The parts of a sharded run in CI merge into one run of the history by the CI's id. */
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
