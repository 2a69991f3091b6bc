/*
 * json.c: results and baselines as JSON (docs/results-format.md, docs/results.schema.json). The
 * only file that includes cJSON.
 *
 * Files are written through bench__write_atomic (files.c), so an interrupted or failed write
 * never damages the previous file; a baseline's read-merge-write holds its lock (PATH.lock).
 * Files are read defensively: size, nesting, types, ranges and array lengths are checked before
 * anything is allocated from them, and every rejection names the file and the JSON path.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "internal.h"
#include "json_check.h"
#include "proc.h"
#include "user_build.h"

#define RESULTS_SCHEMA_VERSION 1

static cJSON *estimate_json(const bench__estimate *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "point", e->point);
    cJSON_AddNumberToObject(o, "lower", e->lower);
    cJSON_AddNumberToObject(o, "upper", e->upper);
    return o;
}

/* A comparison's verdict and ratio interval as object "change" of `parent` (the time's and each
 * metric's; `median_key` names the baseline median, in ns for the time). Returns the object. */
static cJSON *change_json(cJSON *parent, const bench__change *c, const char *median_key)
{
    cJSON *co = cJSON_AddObjectToObject(parent, "change");
    cJSON_AddStringToObject(co, "verdict", bench__verdict_name(c->verdict));
    cJSON_AddNumberToObject(co, median_key, c->old_median);
    cJSON_AddNumberToObject(co, "ratio", c->ratio);
    cJSON_AddNumberToObject(co, "ratio_lower", c->ratio_lower);
    cJSON_AddNumberToObject(co, "ratio_upper", c->ratio_upper);
    return co;
}

static cJSON *number_array(const double *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

/* context.benchmark_builds: how each benchmark file was compiled (user_build.h). */
static cJSON *user_builds_json(const bench__user_builds *b)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t k = 0; k < b->n; k++) {
        const bench__user_build *u = &b->v[k];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "file", u->file);
        cJSON_AddStringToObject(e, "compiler", u->compiler);
        cJSON_AddBoolToObject(e, "optimize", (u->flags & BENCH_BUILD_OPTIMIZE) != 0);
        cJSON_AddBoolToObject(e, "optimize_size", (u->flags & BENCH_BUILD_OPTIMIZE_SIZE) != 0);
        cJSON_AddBoolToObject(e, "no_inline", (u->flags & BENCH_BUILD_NO_INLINE) != 0);
        cJSON_AddBoolToObject(e, "ndebug", (u->flags & BENCH_BUILD_NDEBUG) != 0);
        cJSON *san = cJSON_AddArrayToObject(e, "sanitizers");
        if (u->flags & BENCH_BUILD_ASAN)
            cJSON_AddItemToArray(san, cJSON_CreateString("address"));
        if (u->flags & BENCH_BUILD_TSAN)
            cJSON_AddItemToArray(san, cJSON_CreateString("thread"));
        cJSON *ids = cJSON_AddArrayToObject(e, "benchmarks");
        for (size_t i = 0; i < u->nids; i++)
            cJSON_AddItemToArray(ids, cJSON_CreateString(u->ids[i]));
        cJSON_AddItemToArray(a, e);
    }
    return a;
}

static cJSON *context_json(const bench__context *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "timestamp", c->timestamp);
    cJSON_AddStringToObject(o, "hostname", c->hostname);
    cJSON_AddStringToObject(o, "os", c->os);
    cJSON_AddStringToObject(o, "os_name", c->os_name);
    cJSON_AddStringToObject(o, "kernel", c->kernel);
    cJSON_AddNumberToObject(o, "ncpus", (double)c->ncpus);
    cJSON_AddNumberToObject(o, "memory_bytes", c->memory_bytes);
    cJSON_AddStringToObject(o, "governor", c->governor);
    cJSON_AddStringToObject(o, "boost", c->boost);
    cJSON_AddItemToObject(o, "loadavg", number_array(c->loadavg, 3));
    cJSON_AddStringToObject(o, "git_revision", c->git_revision);
    if (c->program_hash[0]) {
        cJSON *po = cJSON_AddObjectToObject(o, "program");
        cJSON_AddStringToObject(po, "hash", c->program_hash);
        cJSON_AddNumberToObject(po, "bytes", c->program_bytes);
        if (c->program_libs[0])
            cJSON_AddStringToObject(po, "libraries", c->program_libs);
        if (c->program_file[0])
            cJSON_AddStringToObject(po, "file", c->program_file);
    }
    if (c->have_canaries) {
        cJSON *co = cJSON_AddObjectToObject(o, "canaries");
        for (int k = 0; k < BENCH__NCANARIES; k++)
            if (c->canary[k] > 0 && isfinite(c->canary[k]))
                cJSON_AddNumberToObject(co, bench__canary_names[k], c->canary[k]);
    }
    const bench__cpu *cpu = &c->cpu;
    cJSON *co = cJSON_AddObjectToObject(o, "cpu");
    cJSON_AddStringToObject(co, "vendor", cpu->vendor);
    cJSON_AddStringToObject(co, "brand", cpu->brand);
    cJSON_AddNumberToObject(co, "family", cpu->family);
    cJSON_AddNumberToObject(co, "model", cpu->model);
    cJSON_AddNumberToObject(co, "stepping", cpu->stepping);
    cJSON_AddNumberToObject(co, "cores", cpu->cores);
    cJSON_AddNumberToObject(co, "threads", cpu->threads);
    cJSON_AddNumberToObject(co, "l1d_kib", cpu->l1d_kib);
    cJSON_AddNumberToObject(co, "l2_kib", cpu->l2_kib);
    cJSON_AddNumberToObject(co, "l3_kib", cpu->l3_kib);
    cJSON_AddStringToObject(co, "features", cpu->features);
    cJSON_AddStringToObject(co, "source", cpu->source);
    cJSON_AddStringToObject(o, "compiler", c->compiler);
    cJSON_AddStringToObject(o, "compiler_flags", c->compiler_flags);
    cJSON_AddStringToObject(o, "build_type", c->build_type);
    if (c->user_builds)
        cJSON_AddItemToObject(o, "benchmark_builds", user_builds_json(c->user_builds));
    cJSON *clk = cJSON_AddObjectToObject(o, "clock");
    cJSON_AddStringToObject(clk, "name", c->clock->name);
    cJSON_AddNumberToObject(clk, "cost_ns", c->clock->cost_ns);
    cJSON_AddNumberToObject(clk, "resolution_ns", c->clock->resolution_ns);
    cJSON_AddNumberToObject(clk, "min_sample_ns", c->clock->min_sample_ns);
    cJSON *st = cJSON_AddObjectToObject(o, "statistics");
    cJSON_AddNumberToObject(st, "nresamples", (double)c->nresamples);
    cJSON_AddNumberToObject(st, "confidence_level", c->confidence_level);
    cJSON_AddNumberToObject(st, "seed", (double)c->seed);
    cJSON_AddBoolToObject(o, "quick", c->quick);
    cJSON *w = cJSON_AddArrayToObject(o, "warnings");
    for (size_t i = 0; i < c->nwarnings; i++)
        cJSON_AddItemToArray(w, cJSON_CreateString(c->warnings[i]));
    /* ---- instruction mode (instr.c): a run of counts says so; times say nothing ---- */
    if (c->mode)
        cJSON_AddStringToObject(o, "mode", c->mode);
    /* ---- GPU (CUDA layer, docs/gpu.md): every key always present; -1 or "" when unknown ---- */
    const bench__gpu *g = &c->gpu;
    cJSON *go = cJSON_AddObjectToObject(o, "gpu");
    cJSON_AddBoolToObject(go, "available", g->available);
    cJSON_AddStringToObject(go, "reason", g->reason);
    cJSON_AddNumberToObject(go, "device_count", g->device_count);
    cJSON_AddStringToObject(go, "name", g->name);
    cJSON_AddStringToObject(go, "pci_bus_id", g->pci_bus_id);
    char cc[24] = "";
    if (g->cc_major >= 0)
        snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
    cJSON_AddStringToObject(go, "compute_capability", cc);
    cJSON_AddNumberToObject(go, "sm_count", g->sm_count);
    cJSON_AddNumberToObject(go, "memory_bytes", g->memory_bytes);
    cJSON_AddNumberToObject(go, "l2_bytes", g->l2_bytes);
    cJSON_AddNumberToObject(go, "memory_bus_width_bits", g->bus_width_bits);
    cJSON_AddNumberToObject(go, "clock_khz", g->clock_khz);
    cJSON_AddNumberToObject(go, "memory_clock_khz", g->memory_clock_khz);
    cJSON_AddNumberToObject(go, "theoretical_bandwidth_bytes_per_s", g->bandwidth_bytes_per_s);
    cJSON_AddStringToObject(go, "driver_version", g->driver_version);
    cJSON_AddStringToObject(go, "runtime_version", g->runtime_version);
    /* ---- end GPU ---- */
    return o;
}

static cJSON *result_json(const bench__result *r)
{
    cJSON *o = cJSON_CreateObject();
    const bench__instance *in = r->inst;
    cJSON_AddStringToObject(o, "id", in->id);
    cJSON_AddStringToObject(o, "group", in->desc->group);
    cJSON_AddStringToObject(o, "name", in->desc->name);
    if (in->has_param)
        cJSON_AddNumberToObject(o, "param", (double)in->param);
    else
        cJSON_AddNullToObject(o, "param");
    cJSON_AddStringToObject(o, "status", bench__status_name(r->status));
    /* A comparison status (skipped, new) is a change with a verdict and no numbers. */
    if (r->change && !bench__verdict_has_numbers(r->change->verdict) &&
        r->change->verdict != BENCH__V_INCOMPARABLE) {
        cJSON *co = cJSON_AddObjectToObject(o, "change");
        cJSON_AddStringToObject(co, "verdict", bench__verdict_name(r->change->verdict));
    }
    if (r->status != BENCH__OK) {
        cJSON_AddStringToObject(o, "message", r->message);
        if (r->status == BENCH__FAILED) {
            /* How it failed: a worker process's crash, exit() or time-out, or an error. */
            bench__failure f = r->failure ? r->failure : BENCH__FAIL_ERROR;
            cJSON *fo = cJSON_AddObjectToObject(o, "failure");
            cJSON_AddStringToObject(fo, "kind", bench__failure_name(f));
            if (f == BENCH__FAIL_CRASHED) {
                cJSON_AddNumberToObject(fo, "signal", r->failure_code);
                cJSON_AddStringToObject(fo, "signal_name", bench__signal_name(r->failure_code));
            } else if (f == BENCH__FAIL_EXITED) {
                cJSON_AddNumberToObject(fo, "exit_code", r->failure_code);
            }
        }
        return o;
    }
    const bench__settings *s = &r->settings;
    cJSON *so = cJSON_AddObjectToObject(o, "settings");
    cJSON_AddNumberToObject(so, "warm_up_time_s", s->warm_up_time);
    cJSON_AddNumberToObject(so, "measurement_time_s", s->measurement_time);
    cJSON_AddNumberToObject(so, "sample_size", s->sample_size);
    cJSON_AddNumberToObject(so, "target_precision", s->target_precision);
    cJSON_AddStringToObject(so, "sampling", bench__sampling_name(s->sampling));
    cJSON_AddNumberToObject(so, "rounds", s->rounds);
    cJSON_AddStringToObject(o, "sampling", bench__sampling_name(r->sampling_used));
    cJSON_AddStringToObject(o, "stop_reason", r->stop_reason ? r->stop_reason : "");
    cJSON *wu = cJSON_AddObjectToObject(o, "warm_up");
    cJSON_AddNumberToObject(wu, "iterations", (double)r->warm_up_iters);
    cJSON_AddNumberToObject(wu, "time_ns", r->warm_up_ns);
    cJSON_AddNumberToObject(o, "measurement_wall_s", r->measure_wall_s);
    cJSON_AddNumberToObject(o, "rounds", r->rounds);
    /* processes: 0 when measured in the reporting process itself (--in-process) */
    cJSON_AddNumberToObject(o, "processes", r->processes);
    if (r->processes >= 2 && isfinite(r->process_cv))
        cJSON_AddNumberToObject(o, "process_cv", r->process_cv);
    else
        cJSON_AddNullToObject(o, "process_cv");
    cJSON_AddStringToObject(o, "unit", "ns");
    cJSON *samples = cJSON_AddObjectToObject(o, "samples");
    cJSON_AddItemToObject(samples, "iterations", number_array(r->iters, r->nsamples));
    cJSON_AddItemToObject(samples, "totals_ns", number_array(r->totals_ns, r->nsamples));
    if (r->process) {
        cJSON *pa = cJSON_CreateArray();
        for (size_t i = 0; i < r->nsamples; i++)
            cJSON_AddItemToArray(pa, cJSON_CreateNumber(r->process[i]));
        cJSON_AddItemToObject(samples, "process", pa);
    }
    cJSON *est = cJSON_AddObjectToObject(o, "estimates");
    cJSON_AddItemToObject(est, "median", estimate_json(&r->est.median));
    cJSON_AddItemToObject(est, "mean", estimate_json(&r->est.mean));
    cJSON_AddItemToObject(est, "std_dev", estimate_json(&r->est.std_dev));
    cJSON_AddItemToObject(est, "mad", estimate_json(&r->est.mad));
    cJSON_AddItemToObject(est, "slope", estimate_json(&r->est.slope));
    cJSON *mn = cJSON_AddObjectToObject(est, "min");
    cJSON_AddNumberToObject(mn, "point", r->est.min);
    cJSON_AddNumberToObject(o, "r2", r->est.r2);
    const bench__outliers *ol = &r->outliers;
    cJSON *out = cJSON_AddObjectToObject(o, "outliers");
    cJSON_AddNumberToObject(out, "low_severe", (double)ol->low_severe);
    cJSON_AddNumberToObject(out, "low_mild", (double)ol->low_mild);
    cJSON_AddNumberToObject(out, "high_mild", (double)ol->high_mild);
    cJSON_AddNumberToObject(out, "high_severe", (double)ol->high_severe);
    cJSON *fences = cJSON_AddObjectToObject(out, "fences_ns");
    cJSON_AddNumberToObject(fences, "low_severe", ol->low_severe_fence);
    cJSON_AddNumberToObject(fences, "low_mild", ol->low_mild_fence);
    cJSON_AddNumberToObject(fences, "high_mild", ol->high_mild_fence);
    cJSON_AddNumberToObject(fences, "high_severe", ol->high_severe_fence);
    cJSON *thr = cJSON_AddObjectToObject(o, "throughput");
    if (s->bytes_per_iter)
        cJSON_AddNumberToObject(thr, "bytes_per_iteration", (double)s->bytes_per_iter);
    if (s->elements_per_iter)
        cJSON_AddNumberToObject(thr, "elements_per_iteration", (double)s->elements_per_iter);
    if (r->change && bench__verdict_has_numbers(r->change->verdict)) {
        const bench__change *c = r->change;
        cJSON *co = change_json(o, c, "baseline_median_ns");
        cJSON_AddNumberToObject(co, "p", c->p);
        cJSON_AddNumberToObject(co, "p_adjusted", c->p_adjusted);
        cJSON_AddNumberToObject(co, "run_noise", c->run_noise);
        cJSON_AddBoolToObject(co, "calibrated", c->calibrated);
        cJSON_AddStringToObject(co, "run_noise_source", c->calibrated       ? "calibration"
                                                        : c->drift_from_suite ? "suite drift"
                                                        : c->drift_measured ? "drift canaries"
                                                        : c->interleaved    ? "interleaved pairs"
                                                                            : "default");
        /* How the verdict was settled beyond the saved numbers (docs/comparison.md). */
        cJSON_AddStringToObject(co, "settled_by", c->confirmed      ? "interleaved run"
                                                  : c->same_program ? "same program"
                                                                    : "saved numbers");
    }
    if (r->nmetrics > 0) {
        cJSON *mo = cJSON_AddObjectToObject(o, "metrics");
        for (size_t i = 0; i < r->nmetrics; i++) {
            const bench__metric *m = &r->metrics[i];
            cJSON *x = cJSON_AddObjectToObject(mo, m->name);
            cJSON_AddStringToObject(x, "unit", m->unit);
            cJSON_AddStringToObject(x, "source", m->source);
            cJSON_AddBoolToObject(x, "scaled", m->scaled);
            cJSON_AddNumberToObject(x, "min_fraction", m->min_fraction);
            cJSON_AddItemToObject(x, "totals", number_array(m->totals, r->nsamples));
            cJSON *pi = cJSON_AddObjectToObject(x, "per_iteration");
            cJSON_AddItemToObject(pi, "median", estimate_json(&m->est.median));
            cJSON_AddItemToObject(pi, "mean", estimate_json(&m->est.mean));
            cJSON_AddItemToObject(pi, "slope", estimate_json(&m->est.slope));
            if (r->metric_changes && bench__verdict_has_numbers(r->metric_changes[i].verdict))
                change_json(x, &r->metric_changes[i], "baseline_median");
        }
    }
    if (r->nfacts > 0) {
        cJSON *fo = cJSON_AddObjectToObject(o, "facts");
        for (size_t i = 0; i < r->nfacts; i++) {
            cJSON *x = cJSON_AddObjectToObject(fo, r->facts[i].name);
            cJSON_AddNumberToObject(x, "value", r->facts[i].value);
            cJSON_AddStringToObject(x, "unit", r->facts[i].unit);
        }
    }
    if (r->noise.runs > 0) {
        cJSON *no = cJSON_AddObjectToObject(o, "noise");
        cJSON_AddNumberToObject(no, "runs", r->noise.runs);
        cJSON_AddNumberToObject(no, "log_median_mean", r->noise.log_mean);
        cJSON_AddNumberToObject(no, "log_median_sd", r->noise.log_sd);
    }
    return o;
}

static cJSON *results_root(const bench__context *ctx, const bench__result *all, size_t n)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddNumberToObject(root, "schema_version", RESULTS_SCHEMA_VERSION);
    cJSON_AddStringToObject(root, "harness_version", ctx->harness_version);
    cJSON_AddItemToObject(root, "context", context_json(ctx));
    cJSON *arr = cJSON_AddArrayToObject(root, "benchmarks");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, result_json(&all[i]));
    /* With --baseline: what the run was compared with, and the benchmarks that the baseline has
     * (among those the filters select) and this program does not. */
    const bench__comparison *cmp = ctx->comparison;
    if (cmp) {
        cJSON *co = cJSON_AddObjectToObject(root, "comparison");
        cJSON_AddStringToObject(co, "baseline", cmp->baseline);
        cJSON *rm = cJSON_AddArrayToObject(co, "removed");
        for (size_t i = 0; i < cmp->nremoved; i++)
            cJSON_AddItemToArray(rm, cJSON_CreateString(cmp->removed[i]));
    }
    return root;
}

static char *results_text(const bench__context *ctx, const bench__result *all, size_t n)
{
    cJSON *root = results_root(ctx, all, n);
    char *text = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    return text;
}

int bench__write_json_text(const char *path, char *text, char *msg, size_t msglen)
{
    if (!text) {
        bench__msg(msg, msglen, "%s: out of memory while building JSON", path);
        return BENCH_ENOMEM;
    }
    int rc = bench__write_atomic(path, text, msg, msglen);
    cJSON_free(text);
    return rc;
}

int bench__json_write_file(const char *path, const bench__context *ctx, const bench__result *all,
                           size_t n, char *msg, size_t msglen)
{
    return bench__write_json_text(path, results_text(ctx, all, n), msg, msglen);
}

/* ---- reading, with validation ---- */

typedef struct vctx {
    const char *file;
    char *msg;
    size_t msglen;
} vctx;

static int verr(const vctx *v, const char *jpath, const char *what)
{
    bench__msg(v->msg, v->msglen, "%s: %s: %s", v->file, jpath, what);
    return BENCH_EINVAL;
}

static const cJSON *member(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* Copies an optional string member; a present member of another type is an error. */
static int opt_string(const vctx *v, const cJSON *obj, const char *key, const char *jpath,
                      char *dst, size_t len)
{
    const cJSON *it = member(obj, key);
    dst[0] = '\0';
    if (!it || cJSON_IsNull(it))
        return 0;
    if (!cJSON_IsString(it)) {
        char p[128];
        bench__msg(p, sizeof p, "%s.%s", jpath, key);
        return verr(v, p, "expected a string");
    }
    bench__msg(dst, len, "%s", it->valuestring);
    return 0;
}

static int opt_long(const vctx *v, const cJSON *obj, const char *key, const char *jpath,
                    long *dst)
{
    const cJSON *it = member(obj, key);
    *dst = -1;
    if (!it || cJSON_IsNull(it))
        return 0;
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < -1 ||
        it->valuedouble > 1e9 || it->valuedouble != floor(it->valuedouble)) {
        char p[128];
        bench__msg(p, sizeof p, "%s.%s", jpath, key);
        return verr(v, p, "expected an integer in [-1, 1e9]");
    }
    *dst = (long)it->valuedouble;
    return 0;
}

static int load_context(const vctx *v, const cJSON *ctx, bench__context_id *id)
{
    memset(id, 0, sizeof *id);
    id->cores = id->threads = -1;
    if (!ctx)
        return 0;
    if (!cJSON_IsObject(ctx))
        return verr(v, "context", "expected an object");
    int rc = 0;
    const cJSON *cpu = member(ctx, "cpu");
    if (cpu && !cJSON_IsObject(cpu))
        return verr(v, "context.cpu", "expected an object");
    if (cpu) {
        if ((rc = opt_string(v, cpu, "brand", "context.cpu", id->cpu_brand,
                             sizeof id->cpu_brand)) ||
            (rc = opt_long(v, cpu, "cores", "context.cpu", &id->cores)) ||
            (rc = opt_long(v, cpu, "threads", "context.cpu", &id->threads)))
            return rc;
    }
    if ((rc = opt_string(v, ctx, "compiler", "context", id->compiler, sizeof id->compiler)) ||
        (rc = opt_string(v, ctx, "compiler_flags", "context", id->compiler_flags,
                         sizeof id->compiler_flags)) ||
        (rc = opt_string(v, ctx, "build_type", "context", id->build_type,
                         sizeof id->build_type)) ||
        (rc = opt_string(v, ctx, "hostname", "context", id->hostname, sizeof id->hostname)) ||
        (rc = opt_string(v, ctx, "kernel", "context", id->kernel, sizeof id->kernel)) ||
        (rc = opt_string(v, ctx, "governor", "context", id->governor, sizeof id->governor)) ||
        (rc = opt_string(v, ctx, "timestamp", "context", id->timestamp,
                         sizeof id->timestamp)) ||
        (rc = opt_string(v, ctx, "git_revision", "context", id->git_revision,
                         sizeof id->git_revision)))
        return rc;
    const cJSON *prog = member(ctx, "program");
    if (prog) {
        if (!cJSON_IsObject(prog))
            return verr(v, "context.program", "expected an object");
        if ((rc = opt_string(v, prog, "hash", "context.program", id->program_hash,
                             sizeof id->program_hash)) ||
            (rc = opt_string(v, prog, "file", "context.program", id->program_file,
                             sizeof id->program_file)) ||
            (rc = opt_string(v, prog, "libraries", "context.program", id->program_libs,
                             sizeof id->program_libs)))
            return rc;
        if (id->program_libs[0] &&
            (strncmp(id->program_libs, "fnv1a64:", 8) != 0 || strlen(id->program_libs) != 24))
            return verr(v, "context.program.libraries",
                        "expected \"fnv1a64:\" and 16 hex digits");
        if (strncmp(id->program_hash, "fnv1a64:", 8) != 0 || strlen(id->program_hash) != 24)
            return verr(v, "context.program.hash", "expected \"fnv1a64:\" and 16 hex digits");
        /* The snapshot is run from the baseline's directory: a plain file name only. */
        for (const char *q = id->program_file; *q; q++)
            if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                  (*q >= '0' && *q <= '9') || *q == '_' || *q == '-' || *q == '.'))
                return verr(v, "context.program.file", "expected a plain file name");
        if (id->program_file[0] == '.')
            return verr(v, "context.program.file", "expected a plain file name");
    }
    const cJSON *can = member(ctx, "canaries");
    if (can && !cJSON_IsObject(can))
        return verr(v, "context.canaries", "expected an object");
    for (int k = 0; can && k < BENCH__NCANARIES; k++) {
        const cJSON *x = member(can, bench__canary_names[k]);
        if (!x)
            continue;
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || !(x->valuedouble > 0) ||
            x->valuedouble > 1e9) {
            char p[96];
            bench__msg(p, sizeof p, "context.canaries.%s", bench__canary_names[k]);
            return verr(v, p, "expected a number of ns in (0, 1e9]");
        }
        id->canary[k] = x->valuedouble;
    }
    /* ---- instruction mode (instr.c): "instructions", or "time"/absent for times ---- */
    if ((rc = opt_string(v, ctx, "mode", "context", id->mode, sizeof id->mode)))
        return rc;
    if (strcmp(id->mode, "time") == 0)
        id->mode[0] = '\0';
    else if (id->mode[0] && strcmp(id->mode, "instructions") != 0)
        return verr(v, "context.mode", "expected \"time\" or \"instructions\"");
    return 0;
}

/* Ids are data: printable ASCII only, 1..255 bytes. */
static bool valid_id(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 255)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return false;
    return true;
}

static int load_samples(const vctx *v, const cJSON *b, const char *jp, bench__entry *e)
{
    char p[96];
    const cJSON *samples = member(b, "samples");
    bench__msg(p, sizeof p, "%s.samples", jp);
    if (!cJSON_IsObject(samples))
        return verr(v, p, "missing or not an object");
    const cJSON *it = member(samples, "iterations"), *tot = member(samples, "totals_ns");
    bench__msg(p, sizeof p, "%s.samples.iterations", jp);
    if (!cJSON_IsArray(it))
        return verr(v, p, "missing or not an array");
    bench__msg(p, sizeof p, "%s.samples.totals_ns", jp);
    if (!cJSON_IsArray(tot))
        return verr(v, p, "missing or not an array");
    int n = cJSON_GetArraySize(it);
    if (n < 1 || n > BENCH__MAX_SAMPLES) {
        bench__msg(p, sizeof p, "%s.samples.iterations", jp);
        return verr(v, p, "expected 1 to 100000 samples");
    }
    if (cJSON_GetArraySize(tot) != n) {
        bench__msg(p, sizeof p, "%s.samples", jp);
        return verr(v, p, "iterations and totals_ns differ in length");
    }
    e->iters = malloc((size_t)n * sizeof *e->iters);
    e->totals_ns = malloc((size_t)n * sizeof *e->totals_ns);
    if (!e->iters || !e->totals_ns) {
        bench__msg(v->msg, v->msglen, "%s: out of memory", v->file);
        return BENCH_ENOMEM;
    }
    int i = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, it) {
        double d = cJSON_IsNumber(x) ? x->valuedouble : NAN;
        if (!isfinite(d) || d < 1 || d > 9007199254740992.0 || d != floor(d)) {
            bench__msg(p, sizeof p, "%s.samples.iterations[%d]", jp, i);
            return verr(v, p, "expected an integer in [1, 2^53]");
        }
        e->iters[i++] = d;
    }
    i = 0;
    cJSON_ArrayForEach(x, tot) {
        double d = cJSON_IsNumber(x) ? x->valuedouble : NAN;
        if (!isfinite(d) || !(d > 0) || d > 1e18) {
            bench__msg(p, sizeof p, "%s.samples.totals_ns[%d]", jp, i);
            return verr(v, p, "expected a finite number of ns in (0, 1e18]");
        }
        e->totals_ns[i++] = d;
    }
    e->nsamples = (size_t)n;
    /* Optional: the worker process of each sample; every process from 0 up has a sample. */
    const cJSON *pr = member(samples, "process");
    if (!pr)
        return 0;
    bench__msg(p, sizeof p, "%s.samples.process", jp);
    if (!cJSON_IsArray(pr) || cJSON_GetArraySize(pr) != n)
        return verr(v, p, "expected an array as long as iterations");
    e->process = malloc((size_t)n * sizeof *e->process);
    bool seen[BENCH__MAX_PROCESSES] = {false};
    if (!e->process) {
        bench__msg(v->msg, v->msglen, "%s: out of memory", v->file);
        return BENCH_ENOMEM;
    }
    i = 0;
    unsigned most = 0;
    cJSON_ArrayForEach(x, pr) {
        double d = cJSON_IsNumber(x) ? x->valuedouble : NAN;
        if (!(d >= 0) || d >= BENCH__MAX_PROCESSES || d != floor(d)) {
            bench__msg(p, sizeof p, "%s.samples.process[%d]", jp, i);
            return verr(v, p, "expected an integer in [0, 999]");
        }
        e->process[i++] = (uint32_t)d;
        seen[(size_t)d] = true;
        if ((unsigned)d + 1 > most)
            most = (unsigned)d + 1;
    }
    for (unsigned k = 0; k < most; k++)
        if (!seen[k])
            return verr(v, p, "a process index is missing (processes are numbered from 0)");
    e->processes = most;
    return 0;
}

/* Printable ASCII without quotes or backslashes, 1 to len-1 characters. */
static bool valid_name(const char *s, size_t len)
{
    size_t n = strlen(s);
    if (n == 0 || n >= len)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == '"' || *s == '\\')
            return false;
    return true;
}

/* The optional "metrics" object of an entry: per metric, totals of the same length as the
 * samples. */
static int load_metrics(const vctx *v, const cJSON *b, const char *jp, bench__entry *e)
{
    char p[192];
    const cJSON *mo = member(b, "metrics");
    if (!mo)
        return 0;
    bench__msg(p, sizeof p, "%s.metrics", jp);
    if (!cJSON_IsObject(mo))
        return verr(v, p, "expected an object");
    int nm = cJSON_GetArraySize(mo);
    if (nm > BENCH__MAX_METRICS)
        return verr(v, p, "too many metrics (at most 24)");
    if (nm == 0)
        return 0;
    e->metrics = calloc((size_t)nm, sizeof *e->metrics);
    if (!e->metrics) {
        bench__msg(v->msg, v->msglen, "%s: out of memory", v->file);
        return BENCH_ENOMEM;
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, mo) {
        bench__saved_metric *m = &e->metrics[e->nmetrics];
        bench__msg(p, sizeof p, "%s.metrics", jp);
        if (!x->string || !valid_name(x->string, sizeof m->name))
            return verr(v, p, "metric names are 1 to 63 printable ASCII characters");
        bench__msg(p, sizeof p, "%s.metrics.%s", jp, x->string);
        if (!cJSON_IsObject(x))
            return verr(v, p, "expected an object");
        for (size_t i = 0; i < e->nmetrics; i++)
            if (strcmp(e->metrics[i].name, x->string) == 0)
                return verr(v, p, "duplicate metric");
        const cJSON *unit = member(x, "unit"), *tot = member(x, "totals");
        if (!cJSON_IsString(unit) || !valid_name(unit->valuestring, sizeof m->unit))
            return verr(v, p, "unit: expected a string of 1 to 15 printable characters");
        if (!cJSON_IsArray(tot) || (size_t)cJSON_GetArraySize(tot) != e->nsamples)
            return verr(v, p, "totals: expected an array with one number per sample");
        m->totals = malloc(e->nsamples * sizeof *m->totals);
        if (!m->totals) {
            bench__msg(v->msg, v->msglen, "%s: out of memory", v->file);
            return BENCH_ENOMEM;
        }
        bench__msg(m->name, sizeof m->name, "%s", x->string);
        bench__msg(m->unit, sizeof m->unit, "%s", unit->valuestring);
        e->nmetrics++;
        size_t i = 0;
        const cJSON *t;
        cJSON_ArrayForEach(t, tot) {
            double d = cJSON_IsNumber(t) ? t->valuedouble : NAN;
            if (!isfinite(d) || fabs(d) > 1e18) {
                bench__msg(p, sizeof p, "%s.metrics.%s.totals[%zu]", jp, x->string, i);
                return verr(v, p, "expected a finite number in [-1e18, 1e18]");
            }
            m->totals[i++] = d;
        }
    }
    return 0;
}

static int load_u64(const vctx *v, const cJSON *obj, const char *key, const char *jp,
                    uint64_t *dst)
{
    const cJSON *x = member(obj, key);
    *dst = 0;
    if (!x)
        return 0;
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0 ||
        x->valuedouble > 9007199254740992.0 || x->valuedouble != floor(x->valuedouble)) {
        char p[128];
        bench__msg(p, sizeof p, "%s.%s", jp, key);
        return verr(v, p, "expected an integer in [0, 2^53]");
    }
    *dst = (uint64_t)x->valuedouble;
    return 0;
}

static int load_entry(const vctx *v, const cJSON *b, int index, bench__entry *e)
{
    char jp[48], p[96];
    bench__msg(jp, sizeof jp, "benchmarks[%d]", index);
    if (!cJSON_IsObject(b))
        return verr(v, jp, "expected an object");
    const cJSON *id = member(b, "id");
    bench__msg(p, sizeof p, "%s.id", jp);
    if (!cJSON_IsString(id) || !valid_id(id->valuestring))
        return verr(v, p, "expected a string of 1 to 255 printable ASCII characters");
    bench__msg(e->id, sizeof e->id, "%s", id->valuestring);
    const cJSON *st = member(b, "status");
    bench__msg(p, sizeof p, "%s.status", jp);
    if (!cJSON_IsString(st))
        return verr(v, p, "expected \"ok\", \"skipped\" or \"failed\"");
    if (strcmp(st->valuestring, "ok") == 0)
        e->status = BENCH__OK;
    else if (strcmp(st->valuestring, "skipped") == 0)
        e->status = BENCH__SKIPPED;
    else if (strcmp(st->valuestring, "failed") == 0)
        e->status = BENCH__FAILED;
    else
        return verr(v, p, "expected \"ok\", \"skipped\" or \"failed\"");
    if (e->status != BENCH__OK)
        return 0;
    int rc = load_samples(v, b, jp, e);
    if (rc)
        return rc;
    if ((rc = load_metrics(v, b, jp, e)))
        return rc;
    const cJSON *thr = member(b, "throughput");
    if (thr) {
        bench__msg(p, sizeof p, "%s.throughput", jp);
        if (!cJSON_IsObject(thr))
            return verr(v, p, "expected an object");
        if ((rc = load_u64(v, thr, "bytes_per_iteration", p, &e->bytes_per_iter)) ||
            (rc = load_u64(v, thr, "elements_per_iteration", p, &e->elements_per_iter)))
            return rc;
    }
    const cJSON *no = member(b, "noise");
    if (no) {
        bench__msg(p, sizeof p, "%s.noise", jp);
        if (!cJSON_IsObject(no))
            return verr(v, p, "expected an object");
        const cJSON *runs = member(no, "runs"), *m = member(no, "log_median_mean"),
                    *sd = member(no, "log_median_sd");
        if (!cJSON_IsNumber(runs) || !(runs->valuedouble >= 2 && runs->valuedouble <= 10000) ||
            runs->valuedouble != floor(runs->valuedouble))
            return verr(v, p, "runs: expected an integer in [2, 10000]");
        if (!cJSON_IsNumber(m) || !isfinite(m->valuedouble) || fabs(m->valuedouble) > 100)
            return verr(v, p, "log_median_mean: expected a finite number");
        if (!cJSON_IsNumber(sd) || !isfinite(sd->valuedouble) || sd->valuedouble < 0 ||
            sd->valuedouble > BENCH__MAX_LOG_SD)
            return verr(v, p, "log_median_sd: expected a number in [0, 1]");
        e->noise.runs = (int)runs->valuedouble;
        e->noise.log_mean = m->valuedouble;
        e->noise.log_sd = sd->valuedouble;
        /* The mean of K log-medians, this entry's own among them, lies within
         * sd (K - 1) / sqrt(K) of it: a mean far from the entry's own samples is not a
         * measurement of them, and would be the reference of every comparison. */
        double own = log(bench__entry_median(e));
        double room = e->noise.log_sd * sqrt((double)e->noise.runs) + BENCH__LOG_MEAN_SLACK;
        if (!(fabs(e->noise.log_mean - own) <= room)) {
            char what[192];
            bench__msg(what, sizeof what, "log_median_mean %.6g is %.3g from the log of the "
                                          "samples' median (%.6g); at most %.3g fits the noise",
                       e->noise.log_mean, fabs(e->noise.log_mean - own), own, room);
            return verr(v, p, what);
        }
    }
    const cJSON *ol = member(b, "outliers");
    if (cJSON_IsObject(ol)) {
        /* Outliers are counted among the samples: more than there are is not a count. */
        static const char *const classes[] = {"low_severe", "low_mild", "high_mild",
                                              "high_severe"};
        double total = 0;
        for (size_t k = 0; k < 4; k++) {
            const cJSON *c = member(ol, classes[k]);
            total += cJSON_IsNumber(c) && isfinite(c->valuedouble) ? c->valuedouble : 0;
        }
        if (total > (double)e->nsamples) {
            bench__msg(p, sizeof p, "%s.outliers", jp);
            return verr(v, p, "more outliers than samples");
        }
    }
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const bench__entry *)a)->id, ((const bench__entry *)b)->id);
}

void bench__saved_destroy(bench__saved *s)
{
    for (size_t i = 0; s->entries && i < s->n; i++) {
        free(s->entries[i].iters);
        free(s->entries[i].totals_ns);
        free(s->entries[i].process);
        for (size_t j = 0; j < s->entries[i].nmetrics; j++)
            free(s->entries[i].metrics[j].totals);
        free(s->entries[i].metrics);
    }
    free(s->entries);
    memset(s, 0, sizeof *s);
}

const bench__entry *bench__saved_find(const bench__saved *s, const char *id)
{
    bench__entry key;
    bench__msg(key.id, sizeof key.id, "%s", id);
    return s->n ? bsearch(&key, s->entries, s->n, sizeof key, cmp_entry) : NULL;
}

/* Reads a whole regular file of at most BENCH__MAX_FILE_BYTES; *text is NUL-terminated. A FIFO,
 * device or directory is refused without waiting on it. */
static int read_file(const char *path, char **text, size_t *len, char *msg, size_t msglen)
{
    *text = NULL;
    int fd;
    struct stat st;
    int rc = bench__open_regular(path, &fd, &st, msg, msglen);
    if (rc)
        return rc;
    if ((unsigned long long)st.st_size > BENCH__MAX_FILE_BYTES) {
        bench__msg(msg, msglen, "%s: %lld bytes is over the %u-byte limit for a results file",
                   path, (long long)st.st_size, BENCH__MAX_FILE_BYTES);
        close(fd);
        return BENCH_EINVAL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        bench__msg(msg, msglen, "%s: out of memory", path);
        return BENCH_ENOMEM;
    }
    /* At most the size seen: a file that grows meanwhile is read as it was. */
    size_t n = 0;
    while (n < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            bench__msg(msg, msglen, "%s: read failed: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return BENCH_EIO;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

/* Parses and validates text into out; root receives the parsed tree when wanted. */
static int parse_saved(const char *path, const char *text, size_t len, bench__saved *out,
                       cJSON **root_out, char *msg, size_t msglen)
{
    vctx v = {path, msg, msglen};
    memset(out, 0, sizeof *out);
    if (memchr(text, '\0', len))
        return verr(&v, "$", "the file contains a NUL byte: not a JSON text");
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= text && at <= text + len ? (long)(at - text) : -1;
        bench__msg(msg, msglen, "%s: not valid JSON (or nested deeper than %d levels) near "
                                "byte %ld", path, CJSON_NESTING_LIMIT, off);
        return BENCH_EINVAL;
    }
    for (; end && *end; end++)
        if (*end != ' ' && *end != '\n' && *end != '\t' && *end != '\r') {
            cJSON_Delete(root);
            bench__msg(msg, msglen, "%s: unexpected text after the JSON value at byte %ld", path,
                       (long)(end - text));
            return BENCH_EINVAL;
        }
    /* A key given twice would be read as its first value here and as its last by other tools. */
    int rc = bench__json_check_duplicates(root, path, msg, msglen);
    const cJSON *ver = member(root, "schema_version");
    const cJSON *arr = member(root, "benchmarks");
    if (rc)
        ; /* the duplicate key's message stands */
    else if (!cJSON_IsObject(root))
        rc = verr(&v, "$", "expected an object");
    else if (!cJSON_IsNumber(ver))
        rc = verr(&v, "schema_version", "missing or not a number");
    else if (ver->valuedouble != RESULTS_SCHEMA_VERSION) {
        char what[96];
        bench__msg(what, sizeof what, "version %g is not supported (this program reads %d)",
                   ver->valuedouble, RESULTS_SCHEMA_VERSION);
        rc = verr(&v, "schema_version", what);
    } else if (!cJSON_IsArray(arr))
        rc = verr(&v, "benchmarks", "missing or not an array");
    else if (cJSON_GetArraySize(arr) > BENCH__MAX_ENTRIES)
        rc = verr(&v, "benchmarks", "more than 100000 entries");
    if (!rc)
        rc = load_context(&v, member(root, "context"), &out->ctx);
    if (!rc) {
        size_t n = (size_t)cJSON_GetArraySize(arr);
        out->entries = calloc(n ? n : 1, sizeof *out->entries);
        if (!out->entries) {
            bench__msg(msg, msglen, "%s: out of memory", path);
            rc = BENCH_ENOMEM;
        }
        int i = 0;
        const cJSON *b;
        cJSON_ArrayForEach(b, arr) {
            if (rc)
                break;
            out->n = (size_t)i + 1;
            rc = load_entry(&v, b, i, &out->entries[i]);
            i++;
        }
    }
    if (!rc && out->n > 1) {
        qsort(out->entries, out->n, sizeof *out->entries, cmp_entry);
        for (size_t i = 1; i < out->n; i++)
            if (strcmp(out->entries[i - 1].id, out->entries[i].id) == 0) {
                char what[320];
                bench__msg(what, sizeof what, "id '%s' appears more than once",
                           out->entries[i].id);
                rc = verr(&v, "benchmarks", what);
                break;
            }
    }
    /* Every field against the published schema: also those the comparison does not read. */
    if (!rc)
        rc = bench__json_check_schema(root, path, msg, msglen);
    if (rc || !root_out)
        cJSON_Delete(root);
    else
        *root_out = root;
    if (rc)
        bench__saved_destroy(out);
    return rc;
}

int bench__saved_load(const char *path, bench__saved *out, char *msg, size_t msglen)
{
    memset(out, 0, sizeof *out);
    char *text;
    size_t len;
    int rc = read_file(path, &text, &len, msg, msglen);
    if (rc)
        return rc;
    rc = parse_saved(path, text, len, out, NULL, msg, msglen);
    free(text);
    return rc;
}

int bench__saved_parse(const char *name, const char *text, size_t len, bench__saved *out,
                       char *msg, size_t msglen)
{
    return parse_saved(name, text, len, out, NULL, msg, msglen);
}

static int cmp_item_id(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(member(x, "id")->valuestring, member(y, "id")->valuestring);
}

/* The read-merge-write of bench__baseline_save, under the baseline's lock. */
static int baseline_merge_write(const char *path, const bench__context *ctx,
                                const bench__result *all, size_t n, char *msg, size_t msglen)
{
    cJSON *root = results_root(ctx, all, n);
    if (!root) {
        bench__msg(msg, msglen, "%s: out of memory", path);
        return BENCH_ENOMEM;
    }
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "benchmarks");
    int rc = 0;
    struct stat st;
    if (stat(path, &st) == 0) {
        /* Merge: keep the old entries that this run did not measure. */
        char *text;
        size_t len;
        bench__saved old;
        cJSON *old_root = NULL;
        rc = read_file(path, &text, &len, msg, msglen);
        if (!rc) {
            rc = parse_saved(path, text, len, &old, &old_root, msg, msglen);
            free(text);
        }
        if (rc) {
            char why[512];
            bench__msg(why, sizeof why, "%s", msg);
            bench__msg(msg, msglen, "refusing to replace an existing file that is not a valid "
                                    "baseline (remove it or pick another name): %s", why);
            cJSON_Delete(root);
            return rc;
        }
        /* ---- instruction mode (instr.c): times and counts never share a file ---- */
        bool old_counts = strcmp(old.ctx.mode, "instructions") == 0;
        bool new_counts = ctx->mode && strcmp(ctx->mode, "instructions") == 0;
        if (old_counts != new_counts) {
            bench__msg(msg, msglen, "%s holds %s, and this run measured %s: pick another name "
                                    "(or remove the file)",
                       path, old_counts ? "instruction counts (--instructions)" : "times",
                       new_counts ? "instruction counts" : "times");
            cJSON_Delete(old_root);
            bench__saved_destroy(&old);
            cJSON_Delete(root);
            return BENCH_EINVAL;
        }
        cJSON *old_arr = cJSON_GetObjectItemCaseSensitive(old_root, "benchmarks");
        cJSON *item = old_arr->child;
        while (item) {
            cJSON *next = item->next;
            const char *id = member(item, "id")->valuestring;
            bool replaced = false;
            for (size_t i = 0; i < n && !replaced; i++)
                replaced = strcmp(all[i].inst->id, id) == 0;
            if (!replaced)
                cJSON_AddItemToArray(arr, cJSON_DetachItemViaPointer(old_arr, item));
            item = next;
        }
        cJSON_Delete(old_root);
        bench__saved_destroy(&old);
    }
    /* Sorted by id, so a baseline's layout does not depend on what was saved when. */
    int count = cJSON_GetArraySize(arr);
    cJSON **items = malloc((size_t)(count ? count : 1) * sizeof *items);
    if (!items) {
        cJSON_Delete(root);
        bench__msg(msg, msglen, "%s: out of memory", path);
        return BENCH_ENOMEM;
    }
    int k = 0;
    while (arr->child)
        items[k++] = cJSON_DetachItemViaPointer(arr, arr->child);
    qsort(items, (size_t)k, sizeof *items, cmp_item_id);
    for (int i = 0; i < k; i++)
        cJSON_AddItemToArray(arr, items[i]);
    free(items);
    char *out = cJSON_Print(root);
    cJSON_Delete(root);
    return bench__write_json_text(path, out, msg, msglen);
}

int bench__baseline_save(const char *path, const bench__context *ctx, const bench__result *all,
                         size_t n, char *msg, size_t msglen)
{
    /* Two runs saving the same baseline at once would each merge into the file as they read
     * it, and the later rename would drop the other's entries: one at a time. */
    int lock;
    int rc = bench__lock_acquire(path, &lock, msg, msglen);
    if (rc)
        return rc;
    rc = baseline_merge_write(path, ctx, all, n, msg, msglen);
    bench__lock_release(lock);
    return rc;
}

static int json_end(bench__reporter *rep, const bench__context *ctx, const bench__result *all,
                    size_t n)
{
    char *text = results_text(ctx, all, n);
    if (!text)
        return BENCH_ENOMEM;
    fputs(text, rep->out);
    fputc('\n', rep->out);
    cJSON_free(text);
    return fflush(rep->out) == 0 ? 0 : BENCH_EIO;
}

void bench__reporter_json(bench__reporter *rep, FILE *out)
{
    bench__reporter_at_end(rep, out, json_end);
}
