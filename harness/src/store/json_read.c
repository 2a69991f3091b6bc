/*
 * json_read.c: results and baseline files read back and validated (docs/results-format.md).
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

#include "compare/compare.h"
#include "core/base.h"
#include "core/probe.h"
#include "core/result.h"
#include "store/json_check.h"
#include "store/json_io.h"
#include "store/store.h"
#include "sys/canary.h"
#include "sys/context.h"
#include "sys/proc.h"

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

/* Whether s is `prefix` and then exactly `digits` lowercase hex digits. */
static bool valid_hex_after(const char *s, const char *prefix, size_t digits)
{
    size_t n = strlen(prefix);
    if (strncmp(s, prefix, n) != 0 || strlen(s) != n + digits)
        return false;
    for (s += n; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

/* A program's identity: SHA-256, or the FNV-1a of files saved by older versions (read, never
 * trusted: no snapshot is run on its word, and no program of today has it). */
static bool valid_hash(const char *s)
{
    return valid_hex_after(s, "sha256:", 64) || valid_hex_after(s, "fnv1a64:", 16);
}

#define HASH_EXPECTED "expected \"sha256:\" and 64 hex digits (or \"fnv1a64:\" and 16)"

/* context.canary_samples: each canary's readings in the run's processes, arrays of one length
 * (at most BENCH__CANARY_PROCS) for the canaries the file has; absent in files of earlier
 * versions (c->n stays 0). */
static int read_canary_samples(const vctx *v, const cJSON *ctx, bench__canaries *c)
{
    const cJSON *cs = member(ctx, "canary_samples");
    if (!cs)
        return 0;
    if (!cJSON_IsObject(cs))
        return verr(v, "context.canary_samples", "expected an object");
    int n = -1;
    for (int k = 0; k < BENCH__NCANARIES; k++) {
        const cJSON *a = member(cs, bench__canary_names[k]);
        if (!a)
            continue;
        char p[96];
        bench__msg(p, sizeof p, "context.canary_samples.%s", bench__canary_names[k]);
        int m = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
        if (m < 1 || m > BENCH__CANARY_PROCS || (n >= 0 && m != n) || !(c->v[k] > 0))
            return verr(v, p, "expected 1 to 5 numbers for a canary the file has, as many for "
                              "each");
        n = m;
        int i = 0;
        for (const cJSON *x = a->child; x; x = x->next, i++) {
            if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || !(x->valuedouble > 0) ||
                x->valuedouble > 1e9)
                return verr(v, p, "expected numbers of ns in (0, 1e9]");
            c->samples[k][i] = x->valuedouble;
        }
    }
    c->n = n < 0 ? 0 : n;
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
            (rc = opt_string(v, prog, "mac", "context.program", id->program_mac,
                             sizeof id->program_mac)) ||
            (rc = opt_string(v, prog, "libraries", "context.program", id->program_libs,
                             sizeof id->program_libs)))
            return rc;
        if (id->program_libs[0] && !valid_hash(id->program_libs))
            return verr(v, "context.program.libraries", HASH_EXPECTED);
        if (!valid_hash(id->program_hash))
            return verr(v, "context.program.hash", HASH_EXPECTED);
        const cJSON *bytes = member(prog, "bytes");
        if (bytes && (!cJSON_IsNumber(bytes) || !isfinite(bytes->valuedouble) ||
                      bytes->valuedouble < 0 || bytes->valuedouble > 9007199254740992.0 ||
                      bytes->valuedouble != floor(bytes->valuedouble)))
            return verr(v, "context.program.bytes", "expected a size in bytes");
        id->program_bytes = bytes ? bytes->valuedouble : 0;
        if (id->program_mac[0] && !valid_hex_after(id->program_mac, "hmac-sha256:", 64))
            return verr(v, "context.program.mac", "expected \"hmac-sha256:\" and 64 hex digits");
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
        id->canary.v[k] = x->valuedouble;
    }
    if ((rc = read_canary_samples(v, ctx, &id->canary)))
        return rc;
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
        return verr(v, p, "too many metrics (at most " BENCH__STR(BENCH__MAX_METRICS) ")");
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
        const cJSON *source = member(x, "source");
        if (cJSON_IsString(source))
            bench__msg(m->source, sizeof m->source, "%s", source->valuestring);
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
    /* A baseline's entry says which program measured it (files saved by older versions do
     * not). */
    const cJSON *prog = member(b, "program");
    if (prog) {
        bench__msg(p, sizeof p, "%s.program", jp);
        if (!cJSON_IsObject(prog))
            return verr(v, p, "expected an object");
        if ((rc = opt_string(v, prog, "hash", p, e->program_hash, sizeof e->program_hash)) ||
            (rc = opt_string(v, prog, "libraries", p, e->program_libs,
                             sizeof e->program_libs)) ||
            (rc = opt_string(v, prog, "timestamp", p, e->timestamp, sizeof e->timestamp)))
            return rc;
        if (!valid_hash(e->program_hash) || (e->program_libs[0] && !valid_hash(e->program_libs)))
            return verr(v, p, HASH_EXPECTED);
    }
    /* The benchmark's code identity (files of older versions, and unknown ones, have none). */
    char code[BENCH__HASH_TEXT]; /* room for a longer string than a hash, to refuse it */
    if ((rc = opt_string(v, b, "code_hash", jp, code, sizeof code)))
        return rc;
    if (code[0] && !valid_hex_after(code, "", 64)) {
        bench__msg(p, sizeof p, "%s.code_hash", jp);
        return verr(v, p, "expected 64 lowercase hex digits");
    }
    bench__msg(e->code_hash, sizeof e->code_hash, "%s", code);
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
int bench__json_read_file(const char *path, char **text, size_t *len, char *msg, size_t msglen)
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
int bench__json_parse_saved(const char *path, const char *text, size_t len, bench__saved *out,
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
    else if (ver->valuedouble != BENCH__SCHEMA_VERSION) {
        char what[96];
        bench__msg(what, sizeof what, "version %g is not supported (this program reads %d)",
                   ver->valuedouble, BENCH__SCHEMA_VERSION);
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
    int rc = bench__json_read_file(path, &text, &len, msg, msglen);
    if (rc)
        return rc;
    rc = bench__json_parse_saved(path, text, len, out, NULL, msg, msglen);
    free(text);
    return rc;
}

int bench__saved_parse(const char *name, const char *text, size_t len, bench__saved *out,
                       char *msg, size_t msglen)
{
    return bench__json_parse_saved(name, text, len, out, NULL, msg, msglen);
}

double bench__entry_median(const bench__entry *e)
{
    double *y = malloc((e->nsamples ? e->nsamples : 1) * sizeof *y);
    if (!y)
        return NAN;
    for (size_t i = 0; i < e->nsamples; i++)
        y[i] = e->totals_ns[i] / e->iters[i];
    double m = bench__median_inplace(y, e->nsamples);
    free(y);
    return m;
}

double bench__entry_rate(const bench__entry *e, const char *metric)
{
    for (size_t m = 0; m < e->nmetrics; m++)
        if (strcmp(e->metrics[m].name, metric) == 0) {
            double a = 0, t = 0;
            for (size_t i = 0; i < e->nsamples; i++) {
                a += e->metrics[m].totals[i];
                t += e->totals_ns[i];
            }
            return t > 0 ? a / t : -1;
        }
    return -1;
}
