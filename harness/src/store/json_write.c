/*
 * json_write.c: results as JSON (docs/results-format.md, docs/results.schema.json): the document
 * of a run, written to a file atomically (--json) or to stdout (the JSON reporter), and the
 * bencher Metric Format. The documents of the other formats (a paired A/B comparison's outcome, a
 * history's series) are json_views.c's. With json_read.c, json_merge.c and json_views.c, the only
 * files that include cJSON for our formats.
 *
 * Files are written through bench__write_atomic (files.c), so an interrupted or failed write
 * never damages the previous file.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare/compare.h"
#include "core/base.h"
#include "core/options.h"
#include "core/probe.h"
#include "core/registry.h"
#include "core/result.h"
#include "stats/stats.h"
#include "store/history.h"
#include "store/json_check.h"
#include "store/json_io.h"
#include "store/store.h"
#include "sys/canary.h"
#include "sys/context.h"
#include "sys/proc.h"
#include "sys/user_build.h"


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

/* --explain's finding as object "explanation" of a benchmark (run/explain.c). */
static void explanation_json(cJSON *parent, const bench__explanation *e)
{
    cJSON *o = cJSON_AddObjectToObject(parent, "explanation");
    bool time = e->mode == BENCH__EXPLAIN_TIME;
    cJSON_AddStringToObject(o, "mode", time ? "time" : "instructions");
    cJSON_AddBoolToObject(o, "explained", e->status == 0);
    cJSON_AddStringToObject(o, "message", e->message);
    if (e->how[0])
        cJSON_AddStringToObject(o, "profiler", e->how);
    cJSON_AddNumberToObject(o, "seconds", e->seconds);
    if (e->status != 0)
        return;
    cJSON_AddStringToObject(o, "unit", time ? "ns" : "instructions");
    cJSON_AddNumberToObject(o, "old_per_iteration", e->old_value);
    cJSON_AddNumberToObject(o, "new_per_iteration", e->new_value);
    cJSON_AddNumberToObject(o, "change_per_iteration", e->change);
    if (isfinite(e->attributed))
        cJSON_AddNumberToObject(o, "attributed", e->attributed);
    cJSON_AddNumberToObject(o, "functions_beyond_noise", (double)e->nbeyond);
    cJSON_AddNumberToObject(o, "noise_z", e->z);
    if (time) {
        cJSON_AddItemToObject(o, "samples", number_array(e->samples, 2));
        cJSON_AddItemToObject(o, "machine_samples", number_array(e->machine_samples, 2));
        cJSON_AddNumberToObject(o, "worker_pairs", (double)e->pairs);
    }
    cJSON *fa = cJSON_AddArrayToObject(o, "functions");
    for (size_t i = 0; i < e->nfns; i++) {
        const bench__explained_fn *f = &e->fns[i];
        cJSON *fo = cJSON_CreateObject();
        cJSON_AddStringToObject(fo, "name", f->name);
        cJSON_AddNumberToObject(fo, "self_old", f->self_old);
        cJSON_AddNumberToObject(fo, "self_new", f->self_new);
        cJSON_AddNumberToObject(fo, "self_change", f->self_delta);
        cJSON_AddNumberToObject(fo, "self_noise_sd", f->self_sd);
        if (isfinite(f->total_delta))
            cJSON_AddNumberToObject(fo, "total_change", f->total_delta);
        cJSON_AddItemToArray(fa, fo);
    }
    if (e->nstacks) {
        cJSON *sa = cJSON_AddArrayToObject(o, "stacks");
        for (size_t i = 0; i < e->nstacks; i++) {
            cJSON *so = cJSON_CreateObject();
            cJSON_AddStringToObject(so, "frames", e->stacks[i].frames);
            cJSON_AddNumberToObject(so, "old", e->stacks[i].old_samples);
            cJSON_AddNumberToObject(so, "new", e->stacks[i].new_samples);
            cJSON_AddItemToArray(sa, so);
        }
    }
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
        cJSON_AddStringToObject(e, "revision", u->revision);
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

/* The context's "cpu" object, added to o. */
static void cpu_json(cJSON *o, const bench__cpu *cpu)
{
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
    cJSON *srcs = cJSON_AddObjectToObject(co, "cache_sources");
    static const char *const cache_facts[3] = {"l1d_kib", "l2_kib", "l3_kib"};
    for (int i = 0; i < 3; i++)
        cJSON_AddStringToObject(srcs, cache_facts[i],
                                cpu->cache_source[i] ? cpu->cache_source[i] : "unknown");
    /* libcpuid's sizes not shown (the OS gave none, they failed the plausibility check);
     * always an array, like disagreements, so a file's keys do not depend on the machine. */
    cJSON *rej = cJSON_AddArrayToObject(co, "cache_rejected");
    for (int i = 0; i < 3; i++) {
        if (cpu->cache_rejected_kib[i] <= 0)
            continue;
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "fact", cache_facts[i]);
        cJSON_AddNumberToObject(x, "libcpuid", cpu->cache_rejected_kib[i]);
        cJSON_AddStringToObject(x, "why", cpu->cache_note);
        cJSON_AddItemToArray(rej, x);
    }
    cJSON *dis = cJSON_AddArrayToObject(co, "disagreements");
    for (int i = 0; i < cpu->ndisagreements; i++) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "fact", cpu->disagreements[i].fact);
        cJSON_AddNumberToObject(d, "libcpuid", cpu->disagreements[i].libcpuid);
        cJSON_AddNumberToObject(d, "os", cpu->disagreements[i].os);
        cJSON_AddItemToArray(dis, d);
    }
}

/* The context's "gpu" object (CUDA layer, docs/gpu.md), added to o: every key always present;
 * -1 or "" when unknown. */
static void gpu_json(cJSON *o, const bench__gpu *g)
{
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
    cJSON_AddStringToObject(go, "module_loading", g->module_loading);
    cJSON_AddBoolToObject(go, "module_loading_set_by_harness", g->module_loading_set);
    cJSON_AddBoolToObject(go, "nvml_available", g->nvml_available);
    cJSON_AddStringToObject(go, "nvml_reason", g->nvml_reason);
    cJSON_AddNumberToObject(go, "sm_clock_default_mhz", g->sm_clock_default_mhz);
    cJSON_AddNumberToObject(go, "sm_clock_max_mhz", g->sm_clock_max_mhz);
    cJSON_AddNumberToObject(go, "memory_clock_max_mhz", g->mem_clock_max_mhz);
    cJSON_AddNumberToObject(go, "sm_clock_locked_mhz", g->sm_clock_locked_mhz);
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
    cJSON_AddNumberToObject(o, "numa_nodes", c->numa_nodes);
    cJSON *cm = cJSON_AddObjectToObject(o, "canary_memory");
    cJSON_AddNumberToObject(cm, "bytes", c->canary_memory_bytes);
    cJSON_AddStringToObject(cm, "why", c->canary_memory_why);
    cJSON_AddStringToObject(o, "boost", c->boost);
    cJSON_AddItemToObject(o, "loadavg", number_array(c->loadavg, 3));
    cJSON_AddStringToObject(o, "git_revision", c->git_revision);
    cJSON_AddStringToObject(o, "cwd_git_revision", c->cwd_git_revision);
    if (c->program_hash[0]) {
        cJSON *po = cJSON_AddObjectToObject(o, "program");
        cJSON_AddStringToObject(po, "hash", c->program_hash);
        cJSON_AddNumberToObject(po, "bytes", c->program_bytes);
        if (c->program_libs[0])
            cJSON_AddStringToObject(po, "libraries", c->program_libs);
        if (c->program_file[0])
            cJSON_AddStringToObject(po, "file", c->program_file);
        if (c->program_mac[0])
            cJSON_AddStringToObject(po, "mac", c->program_mac);
    }
    if (c->have_canaries) {
        const bench__canaries *cn = &c->canary;
        cJSON *co = cJSON_AddObjectToObject(o, "canaries");
        cJSON *cs = cn->n > 0 ? cJSON_AddObjectToObject(o, "canary_samples") : NULL;
        for (int k = 0; k < BENCH__NCANARIES; k++) {
            if (!(cn->v[k] > 0) || !isfinite(cn->v[k]))
                continue;
            cJSON_AddNumberToObject(co, bench__canary_names[k], cn->v[k]);
            if (cs)
                cJSON_AddItemToObject(cs, bench__canary_names[k],
                                      cJSON_CreateDoubleArray(cn->samples[k], cn->n));
        }
    }
    cpu_json(o, &c->cpu);
    cJSON_AddStringToObject(o, "compiler", c->compiler);
    cJSON_AddStringToObject(o, "compiler_flags", c->compiler_flags);
    cJSON_AddStringToObject(o, "build_type", c->build_type);
    /* The program's own build as its executable records it; null where it records none. */
    const bench__program_build *pb = &c->program_build;
    cJSON *pbo = cJSON_AddObjectToObject(o, "program_build");
    if (pb->compiler[0])
        cJSON_AddStringToObject(pbo, "compiler", pb->compiler);
    else
        cJSON_AddNullToObject(pbo, "compiler");
    if (pb->flags[0])
        cJSON_AddStringToObject(pbo, "flags", pb->flags);
    else
        cJSON_AddNullToObject(pbo, "flags");
    cJSON_AddStringToObject(pbo, "source", pb->source ? pb->source : "none");
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
    gpu_json(o, &c->gpu);
    return o;
}

/* One grid value: a number when the whole value is one a double holds exactly enough (integers
 * up to 2^53, decimals), else the string as written. */
static void add_arg(cJSON *a, const bench__arg *arg)
{
    char *end;
    errno = 0;
    double x = strtod(arg->value, &end);
    bool number = end != arg->value && *end == '\0' && errno == 0 && isfinite(x) &&
                  fabs(x) <= 9007199254740992.0 &&
                  !strpbrk(arg->value, "xX"); /* no hexadecimal: the id says 0x10 */
    if (number)
        cJSON_AddNumberToObject(a, arg->name, x);
    else
        cJSON_AddStringToObject(a, arg->name, arg->value);
}

/* Where the result's samples came from: its processes, their spread, speed groups, the
 * spread's cause, and what each worker process recorded about itself; added to o. */
static void processes_json(cJSON *o, const bench__result *r)
{
    /* processes: 0 when measured in the reporting process itself (--in-process) */
    cJSON_AddNumberToObject(o, "processes", r->processes);
    if (r->processes >= 2 && isfinite(r->process_cv))
        cJSON_AddNumberToObject(o, "process_cv", r->process_cv);
    else
        cJSON_AddNullToObject(o, "process_cv");
    if (r->modes.groups == 2) {
        /* Two speed groups of the per-process medians: count and median of each. */
        cJSON *mo = cJSON_AddArrayToObject(o, "modes");
        for (int g = 0; g < 2; g++) {
            cJSON *x = cJSON_CreateObject();
            cJSON_AddNumberToObject(x, "processes", r->modes.count[g]);
            cJSON_AddNumberToObject(x, "median_ns", exp(r->modes.mean[g]));
            cJSON_AddItemToArray(mo, x);
        }
    }
    if (r->spread_cause.by_cpu) {
        cJSON *c = cJSON_AddObjectToObject(o, "spread_cause");
        cJSON_AddStringToObject(c, "kind", "cpu");
        cJSON_AddNumberToObject(c, "cpu_fast", r->spread_cause.cpu_fast);
        cJSON_AddNumberToObject(c, "cpu_slow", r->spread_cause.cpu_slow);
        cJSON_AddNumberToObject(c, "ratio", r->spread_cause.cpu_ratio);
    } else if (r->spread_cause.by_faults) {
        cJSON *c = cJSON_AddObjectToObject(o, "spread_cause");
        cJSON_AddStringToObject(c, "kind", "page faults");
        cJSON_AddNumberToObject(c, "rank_correlation", r->spread_cause.faults_rho);
    }
    if (r->proc_info && r->processes >= 1) {
        /* What each worker process recorded about itself: where it ran, its layout. */
        cJSON *pa = cJSON_AddArrayToObject(o, "process_info");
        for (unsigned j = 0; j < r->processes; j++) {
            const bench__proc_info *pi = &r->proc_info[j];
            cJSON *x = cJSON_CreateObject();
            if (pi->known) {
                cJSON_AddNumberToObject(x, "cpu", pi->cpu);
                cJSON_AddBoolToObject(x, "random_layout", pi->layout);
                cJSON_AddNumberToObject(x, "stack_offset", pi->stack);
                cJSON_AddNumberToObject(x, "heap_offset", pi->heap);
                cJSON_AddNumberToObject(x, "env_padding", pi->env);
                cJSON_AddNumberToObject(x, "page_faults", pi->minflt + pi->majflt);
            }
            cJSON_AddItemToArray(pa, x);
        }
    }
}

/* The time's change against the baseline (a verdict with numbers), added to o. */
static void time_change_json(cJSON *o, const bench__change *c)
{
    cJSON *co = change_json(o, c, "baseline_median_ns");
    cJSON_AddNumberToObject(co, "p", c->p);
    cJSON_AddNumberToObject(co, "p_adjusted", c->p_adjusted);
    cJSON_AddNumberToObject(co, "run_noise", c->run_noise);
    cJSON_AddBoolToObject(co, "calibrated", c->calibrated);
    if (isfinite(c->mde))
        cJSON_AddNumberToObject(co, "mde", c->mde);
    if (c->tests >= 1)
        cJSON_AddNumberToObject(co, "tests", c->tests);
    cJSON_AddStringToObject(co, "run_noise_source", c->calibrated       ? "calibration"
                                                    : c->drift_from_suite ? "suite drift"
                                                    : c->drift_measured ? "drift canaries"
                                                    : c->interleaved    ? "interleaved pairs"
                                                                        : "default");
    /* How the verdict was settled beyond the saved numbers (docs/comparison.md). */
    cJSON_AddStringToObject(co, "settled_by", c->confirmed      ? "interleaved run"
                                              : c->same_program ? "same program"
                                              : c->same_code    ? "same code"
                                                                : "saved numbers");
}

/* The result's metrics (per sample and per iteration, each with its change) and facts, added
 * to o. */
static void metrics_json(cJSON *o, const bench__result *r)
{
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
}

/* A threaded body's threads (bench_desc.threads), added to o; nothing for one thread. */
/* The body's spans (--trace): each one's share of the time per iteration. */
static void spans_json(cJSON *o, const bench__result *r)
{
    if (r->nspans == 0)
        return;
    cJSON *sp = cJSON_AddArrayToObject(o, "spans");
    for (size_t i = 0; i < r->nspans; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(sp, x);
        cJSON_AddStringToObject(x, "name", r->spans[i].name);
        double share = bench__span_share(r, i);
        share = isfinite(share) ? share : 0;
        cJSON_AddNumberToObject(x, "share", share);
        cJSON_AddNumberToObject(x, "ns_per_iter", share * r->est.median.point);
        cJSON_AddNumberToObject(x, "count", (double)r->spans[i].count);
    }
}

static void threads_json(cJSON *o, const bench__result *r)
{
    bench__threads_summary ts;
    if (bench__threads_summary_of(r, &ts)) {
        /* A threaded body (bench_desc.threads): the time above is the team's span. */
        cJSON *th = cJSON_AddObjectToObject(o, "threads");
        cJSON_AddNumberToObject(th, "count", ts.count);
        cJSON_AddItemToObject(th, "per_thread", number_array(ts.per_thread, ts.nper));
        cJSON_AddNumberToObject(th, "spread", ts.spread);
        cJSON_AddNumberToObject(th, "total_iterations_per_second", ts.total_ips);
        cJSON *pl = cJSON_AddArrayToObject(th, "placement");
        for (unsigned t = 0; t < ts.count; t++) {
            cJSON *cpus = cJSON_CreateArray();
            for (unsigned c = 0; c < 64 * BENCH__CPU_WORDS; c++)
                if (bench__thread_ran_on(r, t, c))
                    cJSON_AddItemToArray(cpus, cJSON_CreateNumber(c));
            cJSON_AddItemToArray(pl, cpus);
        }
    }
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
    if (in->nargs) {
        cJSON *a = cJSON_AddObjectToObject(o, "args");
        for (size_t i = 0; i < in->nargs; i++)
            add_arg(a, &in->args[i]);
    }
    cJSON_AddStringToObject(o, "status", bench__status_name(r->status));
    /* The benchmark's code identity (sys/code_id.h): left out when unknown. */
    if (r->code_hash[0])
        cJSON_AddStringToObject(o, "code_hash", r->code_hash);
    /* A comparison status (skipped, new) is a change with a verdict and no numbers; so is a
     * metric's verdict (--instructions), whose numbers are that metric's change. */
    if (r->change && r->change->verdict != BENCH__V_INCOMPARABLE &&
        (!bench__verdict_has_numbers(r->change->verdict) || r->change->metric)) {
        cJSON *co = cJSON_AddObjectToObject(o, "change");
        cJSON_AddStringToObject(co, "verdict", bench__verdict_name(r->change->verdict));
        if (r->change->metric && bench__verdict_has_numbers(r->change->verdict))
            cJSON_AddStringToObject(co, "metric", r->change->metric);
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
    if (bench__optimised_away(r)) /* a rate no machine reaches: the body's work is gone */
        cJSON_AddStringToObject(o, "optimised_away", bench__optimised_away_note);
    cJSON *wu = cJSON_AddObjectToObject(o, "warm_up");
    cJSON_AddNumberToObject(wu, "iterations", (double)r->warm_up_iters);
    cJSON_AddNumberToObject(wu, "time_ns", r->warm_up_ns);
    cJSON_AddNumberToObject(o, "measurement_wall_s", r->measure_wall_s);
    cJSON_AddNumberToObject(o, "rounds", r->rounds);
    processes_json(o, r);
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
    if (r->explanation)
        explanation_json(o, r->explanation);
    if (r->change && !r->change->metric && bench__verdict_has_numbers(r->change->verdict))
        time_change_json(o, r->change);
    metrics_json(o, r);
    spans_json(o, r);
    threads_json(o, r);
    if (r->noise.runs > 0) {
        cJSON *no = cJSON_AddObjectToObject(o, "noise");
        cJSON_AddNumberToObject(no, "runs", r->noise.runs);
        cJSON_AddNumberToObject(no, "log_median_mean", r->noise.log_mean);
        cJSON_AddNumberToObject(no, "log_median_sd", r->noise.log_sd);
    }
    return o;
}

cJSON *bench__json_results_root(const bench__context *ctx, const bench__result *all, size_t n)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddNumberToObject(root, "schema_version", BENCH__SCHEMA_VERSION);
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
    /* The growth of each series with three or more values measured. */
    bench__growth *gr = NULL;
    size_t ngr = 0;
    if (bench__growths(all, n, &gr, &ngr) != 0) {
        cJSON_Delete(root);
        return NULL;
    }
    cJSON *growth = ngr ? cJSON_AddArrayToObject(root, "complexity") : NULL;
    for (size_t i = 0; i < ngr; i++) {
        const bench__complexity *cx = &gr[i].fit;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "group", gr[i].at->desc->group);
        cJSON_AddStringToObject(o, "name", gr[i].at->desc->name);
        if (gr[i].axis >= 0) {
            cJSON_AddStringToObject(o, "axis", gr[i].at->args[gr[i].axis].name);
            cJSON *fixed = cJSON_AddObjectToObject(o, "fixed");
            for (size_t a = 0; a < gr[i].at->nargs; a++)
                if ((int)a != gr[i].axis)
                    add_arg(fixed, &gr[i].at->args[a]);
        }
        cJSON_AddNumberToObject(o, "parameters", (double)gr[i].parameters);
        cJSON_AddStringToObject(o, "best", bench__big_o_name(cx->best));
        if (cx->named) {
            cJSON_AddStringToObject(o, "class", bench__big_o_name(cx->best));
        } else {
            cJSON_AddNullToObject(o, "class");
            cJSON_AddStringToObject(o, "no_class", cx->why_not);
        }
        cJSON_AddNumberToObject(o, "coefficient_ns", cx->coefficient[cx->best]);
        cJSON_AddNumberToObject(o, "rms", cx->rms[cx->best]);
        cJSON *fits = cJSON_AddArrayToObject(o, "fits");
        for (int c = 0; c < BENCH__NBIG_O; c++) {
            cJSON *f = cJSON_CreateObject();
            cJSON_AddStringToObject(f, "class", bench__big_o_name((bench__big_o)c));
            cJSON_AddNumberToObject(f, "coefficient_ns", cx->coefficient[c]);
            cJSON_AddNumberToObject(f, "rms", cx->rms[c]);
            cJSON_AddItemToArray(fits, f);
        }
        cJSON_AddItemToArray(growth, o);
    }
    free(gr);
    return root;
}

static char *results_text(const bench__context *ctx, const bench__result *all, size_t n)
{
    cJSON *root = bench__json_results_root(ctx, all, n);
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

/* Prints a document's text (cJSON's, NULL: out of memory) and a newline to out, and frees it. */
static int print_text(FILE *out, char *text)
{
    if (!text)
        return BENCH_ENOMEM;
    fputs(text, out);
    fputc('\n', out);
    cJSON_free(text);
    return fflush(out) == 0 ? 0 : BENCH_EIO;
}

int bench__json_print(FILE *out, const bench__context *ctx, const bench__result *all, size_t n)
{
    return print_text(out, results_text(ctx, all, n));
}

/* ---- the bencher Metric Format (--output-format bmf) ---- */

/* A measure {value, lower_value, upper_value}; the bounds only where they are finite. */
static void bmf_measure(cJSON *parent, const char *name, double value, double lower,
                        double upper)
{
    cJSON *m = cJSON_AddObjectToObject(parent, name);
    cJSON_AddNumberToObject(m, "value", value);
    if (isfinite(lower) && isfinite(upper) && lower > 0 && upper > 0) {
        cJSON_AddNumberToObject(m, "lower_value", lower);
        cJSON_AddNumberToObject(m, "upper_value", upper);
    }
}

int bench__bmf_print(FILE *out, const bench__bmf_entry *e, size_t n)
{
    cJSON *root = cJSON_CreateObject();
    for (size_t i = 0; root && i < n; i++) {
        if (!(isfinite(e[i].median_ns) && e[i].median_ns > 0))
            continue;
        cJSON *b = cJSON_AddObjectToObject(root, e[i].id);
        double lo = e[i].lower_ns, hi = e[i].upper_ns;
        bmf_measure(b, "latency", e[i].median_ns, lo, hi);
        /* Iterations per second: the slower end of the time is the lower end of the rate. */
        bmf_measure(b, "throughput", 1e9 / e[i].median_ns, 1e9 / hi, 1e9 / lo);
    }
    char *text = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    return print_text(out, text);
}
