/*
 * cli.c: the bench program: command-line parsing, benchmark selection, the run loop and the exit
 * code. Also the library's default main(), which a program's own main() replaces.
 *
 * Every error is one line on stderr that names the flag, value or file, and a documented exit
 * code (2 for usage and input errors). Parsing never exits from inside a helper: each returns a
 * status that bench_main turns into the exit code.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define MAX_FILTERS 64

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
} cli;

static const char usage_text[] =
    "Usage: bench [OPTIONS] [FILTER...]\n"
    "\n"
    "Runs the benchmarks whose id (group/name or group/name/PARAM) matches any FILTER, a POSIX\n"
    "extended regular expression searched anywhere in the id (a plain substring works). With no\n"
    "FILTER, runs them all.\n"
    "\n"
    "Selection:\n"
    "      --list                 print the selected benchmark ids, one per line, and exit\n"
    "      --exact                FILTERs must equal the whole id (no regex)\n"
    "Measurement:\n"
    "      --quick                fast, less precise run (0.1 s warm-up, at most 0.5 s, 2%)\n"
    "      --warm-up-time S       seconds of warm-up per benchmark (default 0.5)\n"
    "      --measurement-time S   sampling budget in seconds per benchmark (default 3)\n"
    "      --sample-size N        most samples per benchmark, 2..100000 (default 100)\n"
    "      --target-precision P   stop early once the 95% CI half-width of the median is below\n"
    "                             P of it, 0 < P < 1 (default 0.005); 'off' never stops early\n"
    "      --sampling MODE        auto, linear or flat (default auto)\n"
    "Statistics:\n"
    "      --nresamples N         bootstrap resamples, 10..10000000 (default 10000)\n"
    "      --confidence-level C   confidence level of intervals, 0 < C < 1 (default 0.95)\n"
    "      --seed N               bootstrap seed, 0..2^53-1 (default 1)\n"
    "Output:\n"
    "      --output-format FMT    pretty, json, csv or markdown on stdout (default pretty)\n"
    "      --json FILE            also write the results as JSON to FILE (atomically)\n"
    "      --color WHEN           auto, always or never (default auto; NO_COLOR is respected)\n"
    "  -h, --help                 print this help and exit\n"
    "  -V, --version              print the version and exit\n"
    "\n"
    "Exit codes: 0 ok; 1 a regression was found; 2 usage or input error; 3 a benchmark failed.\n"
    "Documentation: docs/cli.md and docs/results-format.md.\n";

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
    O_LIST, O_EXACT, O_QUICK, O_WARM, O_MEAS, O_SAMPLES, O_PRECISION, O_SAMPLING, O_NRES,
    O_CONF, O_SEED, O_FORMAT, O_JSON, O_COLOR, O_HELP, O_VERSION,
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
};

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
        return parse_u64(flag, v, 0, (UINT64_C(1) << 53) - 1, "an integer in [0, 2^53-1]",
                         &c->run.seed);
    case O_FORMAT: {
        static const char *const names[] = {"pretty", "json", "csv", "markdown"};
        if (parse_choice(flag, v, names, 4, "pretty, json, csv or markdown", &choice))
            return -1;
        c->format = (bench__format)choice;
        return 0;
    }
    case O_JSON:
        if (*v == '\0')
            return bad_value(flag, v, "a file name");
        c->json_path = v;
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

static int select_instances(const cli *c, const bench__instance *all, size_t n, bool *selected)
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
            match = c->exact ? strcmp(all[i].id, c->filters[f]) == 0
                             : regexec(&re[f], all[i].id, 0, NULL, 0) == 0;
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

int bench_main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    c.run.nresamples = 10000;
    c.run.confidence_level = 0.95;
    c.run.seed = 1;
    c.color = -1;
    if (parse_args(&c, argc, argv) != 0)
        return BENCH_EXIT_USAGE;
    if (c.help) {
        fputs(usage_text, stdout);
        return BENCH_EXIT_OK;
    }
    if (c.version) {
        printf("bench (harness) %s\n", bench_version());
        return BENCH_EXIT_OK;
    }

    bench__instance *all = NULL;
    size_t n = 0;
    char msg[512] = "";
    int rc = bench__registry_list(&all, &n, msg, sizeof msg);
    if (rc != 0) {
        fprintf(stderr, "bench: %s\n", msg[0] ? msg : bench__strerror(rc));
        return BENCH_EXIT_USAGE;
    }
    bool *selected = calloc(n ? n : 1, sizeof *selected);
    if (!selected) {
        free(all);
        fprintf(stderr, "bench: out of memory\n");
        return BENCH_EXIT_USAGE;
    }
    int exit_code = BENCH_EXIT_OK;
    bench__result *results = NULL;
    if (select_instances(&c, all, n, selected) != 0) {
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
    if (c.list) {
        for (size_t i = 0; i < n; i++)
            if (selected[i])
                printf("%s\n", all[i].id);
        goto out;
    }

    c.run.progress = isatty(STDERR_FILENO) && c.format == BENCH__FMT_PRETTY;
    bench__context ctx;
    bench__context_collect(&ctx, &c.run);
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
    default:
        bench__reporter_pretty(&rep, stdout, use_color(c.color));
        break;
    }
    results = calloc(nsel, sizeof *results);
    if (!results) {
        fprintf(stderr, "bench: out of memory\n");
        exit_code = BENCH_EXIT_USAGE;
        goto out;
    }
    bench__crash_handlers_install();
    rep.begin(&rep, &ctx);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!selected[i])
            continue;
        bench__run_instance(&all[i], &c.run, &results[k]);
        rep.result(&rep, &results[k]);
        if (results[k].status == BENCH__FAILED) {
            fprintf(stderr, "bench: benchmark '%s' failed: %s\n", all[i].id, results[k].message);
            exit_code = BENCH_EXIT_FAILED;
        }
        k++;
    }
    if (rep.end(&rep, &ctx, results, k) != 0) {
        fprintf(stderr, "bench: writing the report to stdout failed\n");
        exit_code = BENCH_EXIT_USAGE;
    }
    if (c.json_path &&
        bench__json_write_file(c.json_path, &ctx, results, k, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench: %s\n", msg);
        if (exit_code == BENCH_EXIT_OK)
            exit_code = BENCH_EXIT_USAGE;
    }
    for (size_t i = 0; i < k; i++)
        bench__result_destroy(&results[i]);
out:
    free(results);
    free(selected);
    free(all);
    return exit_code;
}

/* The default entry point: a file of BENCH_FNs needs no main(). A program's own main() (strong)
 * replaces this weak one and may call bench_main() itself. */
__attribute__((weak)) int main(int argc, char **argv)
{
    return bench_main(argc, argv);
}
