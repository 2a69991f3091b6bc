/*
 * report_interop.c: results in the formats other tools read (docs/interop.md).
 *
 * Two formats. `--output-format bencher` prints the Rust libtest bench lines that `cargo bench`
 * prints (`test ID ... bench:       1,234.50 ns/iter (+/- 56.25)`), which bencher.dev's
 * `rust_bench` adapter and github-action-benchmark's `cargo` tool parse; the +/- is the
 * half-width of the median's confidence interval (the larger side), so a reader that turns it
 * into value -/+ the number gets a band that contains the harness's interval.
 * `--export-gbench FILE` writes Google Benchmark's JSON (context + one "iteration" run per
 * benchmark), which google/benchmark's tools/compare.py and the dashboards that read Google
 * Benchmark output accept.
 *
 * Invariant: nothing here changes a number: every figure written is one the harness measured
 * or read from the system, converted only in unit or rounding; what a format wants and the
 * harness does not measure (CPU time) is said in docs/interop.md, never invented. The JSON file
 * is written atomically (temporary file, fsync, rename), like json_write.c's results.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "core/probe.h"
#include "core/result.h"
#include "report/report.h"
#include "stats/stats.h"
#include "store/store.h"
#include "sys/context.h"

/* ---- bencher: Rust libtest bench lines ---- */

/* Median ns per iteration and the +/- figure (CI half-width, larger side), both in ns. */
static void bencher_figures(const bench__result *r, double *median, double *pm)
{
    const bench__estimate *m = &r->est.median;
    double hi = m->upper - m->point, lo = m->point - m->lower;
    *median = m->point;
    *pm = hi > lo ? hi : lo;
    if (!isfinite(*pm) || *pm < 0)
        *pm = 0;
}

/*
 * A number as libtest prints it since it reports fractions of a ns: groups of thousands
 * separated by commas, two decimals ("1,234.56", "0.25"). Rounded to 0.01 first, so a value
 * like 999.996 cannot print as "1000.00" inside a group.
 */
static void fmt_thousands(char *buf, size_t len, double v)
{
    static const double bases[] = {1e9, 1e6, 1e3, 1};
    if (!isfinite(v) || v < 0)
        v = 0;
    if (v > 1e18)
        v = 1e18;
    v = round(v * 100.0) / 100.0;
    size_t o = 0;
    bool trailing = false;
    buf[0] = '\0';
    for (int i = 0; i < 4 && o < len; i++) {
        double base = bases[i];
        if (i == 3 || trailing || v / base >= 1.0) {
            int w;
            if (i == 3)
                w = snprintf(buf + o, len - o, trailing ? "%06.2f" : "%.2f", v);
            else
                w = snprintf(buf + o, len - o, trailing ? "%03llu," : "%llu,",
                             (unsigned long long)(v / base));
            if (w < 0)
                return;
            o += (size_t)w;
            trailing = true;
        }
        v = fmod(v, base);
    }
}

/*
 * Everything is printed at the end, as libtest does once it knows the longest name: ids are
 * padded to the same width so the columns line up (both parsers accept any run of spaces).
 */
static int bencher_end(bench__reporter *rep, const bench__context *ctx, const bench__result *all,
                       size_t n)
{
    (void)ctx;
    FILE *o = rep->out;
    size_t width = 0, measured = 0, ignored = 0, failed = 0;
    char id[BENCH__ESCAPED_ID]; /* ids are untrusted text: escaped (bench__escape) */
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(bench__escape(id, sizeof id, all[i].inst->id));
        width = len > width ? len : width;
    }
    fprintf(o, "\nrunning %zu %s\n", n, n == 1 ? "test" : "tests");
    for (size_t i = 0; i < n; i++) {
        const bench__result *r = &all[i];
        fprintf(o, "test %-*s ... ", (int)width, bench__escape(id, sizeof id, r->inst->id));
        if (r->status == BENCH__OK) {
            double median, pm;
            char a[40], b[40];
            bencher_figures(r, &median, &pm);
            fmt_thousands(a, sizeof a, median);
            fmt_thousands(b, sizeof b, pm);
            /* libtest's layout: the median right-aligned in 14 columns; no "= N MB/s" suffix,
             * because both parsers anchor the line at the closing parenthesis. */
            fprintf(o, "bench: %14s ns/iter (+/- %s)\n", a, b);
            measured++;
        } else if (r->status == BENCH__SKIPPED) {
            fputs("ignored\n", o);
            ignored++;
        } else {
            fputs("FAILED\n", o);
            failed++;
        }
    }
    if (failed) {
        fputs("\nfailures:\n", o);
        for (size_t i = 0; i < n; i++)
            if (all[i].status == BENCH__FAILED) {
                fprintf(o, "    %s: ", bench__escape(id, sizeof id, all[i].inst->id));
                bench__fputs_escaped(o, all[i].message);
                fputc('\n', o);
            }
    }
    fprintf(o, "\ntest result: %s. 0 passed; %zu failed; %zu ignored; %zu measured; "
               "0 filtered out\n\n",
            failed ? "FAILED" : "ok", failed, ignored, measured);
    return fflush(o) == 0 && !ferror(o) ? 0 : BENCH_EIO;
}

void bench__reporter_bencher(bench__reporter *rep, FILE *out)
{
    bench__reporter_at_end(rep, out, bencher_end);
}

/* ---- Google Benchmark JSON ---- */

/*
 * The caches of CPU 0 as Google Benchmark lists them: type, level, size in bytes and how many
 * logical CPUs share each, from sysfs (bench__sysinfo_caches). Where sysfs has nothing,
 * the context's L1d/L2/L3 sizes are used with num_sharing 0 (unknown).
 */
static cJSON *caches_json(const bench__context *ctx)
{
    cJSON *a = cJSON_CreateArray();
    bench__cache_info caches[16];
    char root[4096];
    size_t n = bench__sysinfo_caches(bench__sysfs_cpu(root, sizeof root), caches,
                                     sizeof caches / sizeof caches[0]);
    for (size_t i = 0; i < n; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "type", caches[i].type);
        cJSON_AddNumberToObject(c, "level", caches[i].level);
        cJSON_AddNumberToObject(c, "size", caches[i].bytes);
        cJSON_AddNumberToObject(c, "num_sharing", caches[i].num_sharing);
        cJSON_AddItemToArray(a, c);
    }
    if (cJSON_GetArraySize(a) > 0)
        return a;
    const struct {
        const char *type;
        int level, kib;
    } known[] = {
        {"Data", 1, ctx->cpu.l1d_kib},
        {"Unified", 2, ctx->cpu.l2_kib},
        {"Unified", 3, ctx->cpu.l3_kib},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (known[i].kib <= 0)
            continue;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "type", known[i].type);
        cJSON_AddNumberToObject(c, "level", known[i].level);
        cJSON_AddNumberToObject(c, "size", known[i].kib * 1024.0);
        cJSON_AddNumberToObject(c, "num_sharing", 0);
        cJSON_AddItemToArray(a, c);
    }
    return a;
}

static cJSON *gbench_context_json(const bench__context *ctx)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "date", ctx->timestamp);
    cJSON_AddStringToObject(o, "host_name", ctx->hostname);
    char exe[PATH_MAX];
    bench__sysinfo_executable(exe, sizeof exe);
    cJSON_AddStringToObject(o, "executable", exe);
    cJSON_AddNumberToObject(o, "num_cpus", (double)(ctx->ncpus > 0 ? ctx->ncpus : 0));
    cJSON_AddNumberToObject(o, "mhz_per_cpu", bench__sysinfo_cpu_mhz());
    /* Google Benchmark: scaling is "enabled" when a governor other than performance is set;
     * an unreadable governor (no cpufreq, as in many VMs) counts as not enabled. */
    cJSON_AddBoolToObject(o, "cpu_scaling_enabled",
                          ctx->governor[0] && strcmp(ctx->governor, "performance") != 0);
    cJSON_AddItemToObject(o, "caches", caches_json(ctx));
    cJSON *load = cJSON_AddArrayToObject(o, "load_avg");
    if (ctx->loadavg[0] >= 0)
        for (int i = 0; i < 3; i++)
            cJSON_AddItemToArray(load, cJSON_CreateNumber(ctx->loadavg[i]));
    char bt[32];
    size_t i = 0;
    for (const char *s = ctx->build_type ? ctx->build_type : ""; *s && i + 1 < sizeof bt; s++)
        bt[i++] = (char)tolower((unsigned char)*s);
    bt[i] = '\0';
    cJSON_AddStringToObject(o, "library_build_type", bt);
    cJSON_AddNumberToObject(o, "json_schema_version", 1);
    return o;
}

/* Keys of a Google Benchmark run object: a metric with one of these names is not added. */
static bool gbench_reserved(const char *name)
{
    static const char *const keys[] = {
        "name", "family_index", "per_family_instance_index", "run_name", "run_type",
        "repetitions", "repetition_index", "threads", "iterations", "real_time", "cpu_time",
        "time_unit", "bytes_per_second", "items_per_second", "error_occurred", "error_message",
        "skipped", "skip_message", "label", "aggregate_name", "aggregate_unit",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(name, keys[i]) == 0)
            return true;
    return false;
}

static cJSON *gbench_run_json(const bench__result *r, int family, int instance)
{
    cJSON *o = cJSON_CreateObject();
    const char *id = r->inst->id;
    cJSON_AddStringToObject(o, "name", id);
    cJSON_AddNumberToObject(o, "family_index", family);
    cJSON_AddNumberToObject(o, "per_family_instance_index", instance);
    cJSON_AddStringToObject(o, "run_name", id);
    cJSON_AddStringToObject(o, "run_type", "iteration");
    cJSON_AddNumberToObject(o, "repetitions", 1);
    cJSON_AddNumberToObject(o, "repetition_index", 0);
    cJSON_AddNumberToObject(o, "threads", r->inst->threads > 1 ? r->inst->threads : 1);
    if (r->status == BENCH__FAILED) {
        cJSON_AddBoolToObject(o, "error_occurred", true);
        cJSON_AddStringToObject(o, "error_message", r->message);
    } else if (r->status == BENCH__SKIPPED) {
        cJSON_AddBoolToObject(o, "skipped", true);
        cJSON_AddStringToObject(o, "skip_message", r->message);
    }
    bool ok = r->status == BENCH__OK;
    double real = ok ? r->est.median.point : 0;
    /* The harness times wall clock only. CPU time is perf's task-clock when that metric was
     * counted (the leader thread's, for a threaded body), else the wall time: docs/interop.md. */
    double cpu = real;
    const bench__metric *tc = ok ? bench__metric_find(r, "task-clock") : NULL;
    if (tc && strcmp(tc->unit, "ns") == 0 && isfinite(tc->est.median.point))
        cpu = tc->est.median.point;
    cJSON_AddNumberToObject(o, "iterations", ok ? (double)r->total_iters : 0);
    cJSON_AddNumberToObject(o, "real_time", real);
    cJSON_AddNumberToObject(o, "cpu_time", cpu);
    cJSON_AddStringToObject(o, "time_unit", "ns");
    if (ok && real > 0) {
        if (r->settings.bytes_per_iter)
            cJSON_AddNumberToObject(o, "bytes_per_second",
                                    (double)r->settings.bytes_per_iter * 1e9 / real);
        if (r->settings.elements_per_iter)
            cJSON_AddNumberToObject(o, "items_per_second",
                                    (double)r->settings.elements_per_iter * 1e9 / real);
    }
    /* Per-iteration medians of the probes' metrics, as Google Benchmark's user counters. */
    for (size_t i = 0; ok && i < r->nmetrics; i++) {
        const bench__metric *m = &r->metrics[i];
        if (!gbench_reserved(m->name) && isfinite(m->est.median.point) &&
            !cJSON_GetObjectItemCaseSensitive(o, m->name))
            cJSON_AddNumberToObject(o, m->name, m->est.median.point);
    }
    return o;
}

static char *gbench_text(const bench__context *ctx, const bench__result *all, size_t n)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddItemToObject(root, "context", gbench_context_json(ctx));
    cJSON *arr = cJSON_AddArrayToObject(root, "benchmarks");
    int family = -1, instance = 0;
    const bench_desc *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        /* A family is one BENCH_FN; its instances are its parameter values, in id order. */
        if (all[i].inst->desc != prev) {
            prev = all[i].inst->desc;
            family++;
            instance = 0;
        } else {
            instance++;
        }
        cJSON_AddItemToArray(arr, gbench_run_json(&all[i], family, instance));
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

int bench__gbench_write_file(const char *path, const bench__context *ctx, const bench__result *all,
                             size_t n, char *msg, size_t msglen)
{
    return bench__write_json_text(path, gbench_text(ctx, all, n), msg, msglen);
}
