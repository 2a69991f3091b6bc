/*
 * json.c: results as JSON (schema in docs/results-format.md). The only file that includes cJSON.
 *
 * Files are written atomically: a temporary file in the target's directory, fsync, rename, then
 * fsync of the directory, so an interrupted or failed write never damages the previous file.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define RESULTS_SCHEMA_VERSION 1

static cJSON *estimate_json(const bench__estimate *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "point", e->point);
    cJSON_AddNumberToObject(o, "lower", e->lower);
    cJSON_AddNumberToObject(o, "upper", e->upper);
    return o;
}

static cJSON *number_array(const double *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static const char *status_name(bench__status s)
{
    return s == BENCH__OK ? "ok" : s == BENCH__SKIPPED ? "skipped" : "failed";
}

static cJSON *context_json(const bench__context *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "timestamp", c->timestamp);
    cJSON_AddStringToObject(o, "hostname", c->hostname);
    cJSON_AddStringToObject(o, "os", c->os);
    cJSON_AddNumberToObject(o, "ncpus", (double)c->ncpus);
    cJSON_AddStringToObject(o, "compiler", c->compiler);
    cJSON_AddStringToObject(o, "build_type", c->build_type);
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
    cJSON_AddStringToObject(o, "status", status_name(r->status));
    if (r->status != BENCH__OK) {
        cJSON_AddStringToObject(o, "message", r->message);
        return o;
    }
    const bench__settings *s = &r->settings;
    cJSON *so = cJSON_AddObjectToObject(o, "settings");
    cJSON_AddNumberToObject(so, "warm_up_time_s", s->warm_up_time);
    cJSON_AddNumberToObject(so, "measurement_time_s", s->measurement_time);
    cJSON_AddNumberToObject(so, "sample_size", s->sample_size);
    cJSON_AddNumberToObject(so, "target_precision", s->target_precision);
    cJSON_AddStringToObject(so, "sampling", bench__sampling_name(s->sampling));
    cJSON_AddStringToObject(o, "sampling", bench__sampling_name(r->sampling_used));
    cJSON_AddStringToObject(o, "stop_reason", r->stop_reason ? r->stop_reason : "");
    cJSON *wu = cJSON_AddObjectToObject(o, "warm_up");
    cJSON_AddNumberToObject(wu, "iterations", (double)r->warm_up_iters);
    cJSON_AddNumberToObject(wu, "time_ns", r->warm_up_ns);
    cJSON_AddNumberToObject(o, "measurement_wall_s", r->measure_wall_s);
    cJSON_AddStringToObject(o, "unit", "ns");
    cJSON *samples = cJSON_AddObjectToObject(o, "samples");
    cJSON_AddItemToObject(samples, "iterations", number_array(r->iters, r->nsamples));
    cJSON_AddItemToObject(samples, "totals_ns", number_array(r->totals_ns, r->nsamples));
    cJSON *est = cJSON_AddObjectToObject(o, "estimates");
    cJSON_AddItemToObject(est, "median", estimate_json(&r->est.median));
    cJSON_AddItemToObject(est, "mean", estimate_json(&r->est.mean));
    cJSON_AddItemToObject(est, "std_dev", estimate_json(&r->est.std_dev));
    cJSON_AddItemToObject(est, "mad", estimate_json(&r->est.mad));
    cJSON_AddItemToObject(est, "slope", estimate_json(&r->est.slope));
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
    return o;
}

static char *results_text(const bench__context *ctx, const bench__result *all, size_t n)
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
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

int bench__json_write_file(const char *path, const bench__context *ctx, const bench__result *all,
                           size_t n, char *msg, size_t msglen)
{
    char *text = results_text(ctx, all, n);
    if (!text) {
        bench__msg(msg, msglen, "%s: out of memory while building JSON", path);
        return BENCH_ENOMEM;
    }
    char *dcopy = strdup(path);
    size_t tlen = strlen(path) + 16;
    char *tmp = malloc(tlen);
    int rc = BENCH_EIO, fd = -1;
    if (!dcopy || !tmp) {
        rc = BENCH_ENOMEM;
        bench__msg(msg, msglen, "%s: out of memory", path);
        goto done;
    }
    snprintf(tmp, tlen, "%s.tmpXXXXXX", path);
    fd = mkstemp(tmp);
    if (fd < 0) {
        bench__msg(msg, msglen, "%s: cannot create a temporary file: %s", path, strerror(errno));
        goto done;
    }
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            bench__msg(msg, msglen, "%s: write failed: %s", path, strerror(errno));
            goto fail;
        }
        off += (size_t)w;
    }
    if (write(fd, "\n", 1) != 1 || fsync(fd) != 0) {
        bench__msg(msg, msglen, "%s: write failed: %s", path, strerror(errno));
        goto fail;
    }
    if (fchmod(fd, 0644) != 0 || close(fd) != 0) {
        fd = -1;
        bench__msg(msg, msglen, "%s: close failed: %s", path, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        bench__msg(msg, msglen, "%s: rename failed: %s", path, strerror(errno));
        goto fail;
    }
    int dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd); /* make the rename durable; failure here cannot lose the old or new file */
        close(dfd);
    }
    rc = 0;
    goto done;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
done:
    free(tmp);
    free(dcopy);
    cJSON_free(text);
    return rc;
}

static void json_begin(bench__reporter *rep, const bench__context *ctx)
{
    (void)rep;
    (void)ctx;
}

static void json_result(bench__reporter *rep, const bench__result *r)
{
    (void)rep;
    (void)r;
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
    memset(rep, 0, sizeof *rep);
    rep->begin = json_begin;
    rep->result = json_result;
    rep->end = json_end;
    rep->out = out;
}
