/*
 * json_views.c: the JSON documents of formats other than the results (docs/results-format.md):
 * a history's series and what was found in them (--history-show --json, "harness-history-series")
 * and the outcome of a paired A/B comparison (--ab --json, "harness-ab"). Each is written through
 * bench__write_json_text (json_write.c), so atomically: an interrupted or failed write never
 * damages the previous file.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "core/base.h"
#include "store/history.h"
#include "store/json_io.h"
#include "store/store.h"


/* ---- --history-show --json: the series and what was found in them ---- */

/* A number, or null when it is not finite (JSON has no NaN). */
static cJSON *number_or_null(double x)
{
    return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull();
}

static cJSON *series_json(const bench__history_series *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", s->id);
    cJSON_AddItemToObject(o, "machine", s->machine ? cJSON_CreateString(s->machine)
                                                   : cJSON_CreateNull());
    cJSON *changes = cJSON_AddArrayToObject(o, "changes");
    for (size_t c = 0; c < s->nchanges; c++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "index", (double)s->changes[c].index);
        cJSON_AddNumberToObject(x, "run", (double)s->runs[s->changes[c].index]);
        cJSON_AddStringToObject(x, "what", s->changes[c].what);
        cJSON_AddBoolToObject(x, "step_removed", s->changes[c].step_removed);
        cJSON_AddItemToArray(changes, x);
    }
    cJSON *runs = cJSON_AddArrayToObject(o, "runs");
    cJSON *revs = cJSON_AddArrayToObject(o, "revisions");
    cJSON *progs = cJSON_AddArrayToObject(o, "programs");
    cJSON *meds = cJSON_AddArrayToObject(o, "median_ns");
    for (size_t i = 0; i < s->n; i++) {
        cJSON_AddItemToArray(runs, cJSON_CreateNumber((double)s->runs[i]));
        cJSON_AddItemToArray(revs, cJSON_CreateString(s->revisions[i]));
        cJSON_AddItemToArray(progs, s->programs[i][0] ? cJSON_CreateString(s->programs[i])
                                                      : cJSON_CreateNull());
        cJSON_AddItemToArray(meds, number_or_null(s->median_ns[i]));
    }
    cJSON *cps = cJSON_AddArrayToObject(o, "change_points");
    for (size_t c = 0; c < s->found.ncp; c++) {
        const bench__cp *cp = &s->found.cp[c];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "index", (double)cp->index);
        cJSON_AddNumberToObject(x, "run", (double)s->runs[cp->index]);
        cJSON_AddNumberToObject(x, "index_lower", (double)cp->index_lower);
        cJSON_AddNumberToObject(x, "index_upper", (double)cp->index_upper);
        cJSON_AddItemToObject(x, "run_before",
                              cp->index > 0 ? cJSON_CreateNumber((double)s->runs[cp->index - 1])
                                            : cJSON_CreateNull());
        cJSON_AddItemToObject(x, "step", number_or_null(cp->step));
        cJSON_AddItemToObject(x, "step_lower", number_or_null(cp->step_lower));
        cJSON_AddItemToObject(x, "step_upper", number_or_null(cp->step_upper));
        cJSON_AddItemToObject(x, "p_adjusted", number_or_null(cp->p_adjusted));
        cJSON_AddItemToArray(cps, x);
    }
    if (s->found.trend.found) {
        const bench__trend *t = &s->found.trend;
        cJSON *x = cJSON_AddObjectToObject(o, "trend");
        cJSON_AddItemToObject(x, "per_run", number_or_null(t->per_point));
        cJSON_AddItemToObject(x, "lower", number_or_null(t->lower));
        cJSON_AddItemToObject(x, "upper", number_or_null(t->upper));
        cJSON_AddItemToObject(x, "p", number_or_null(t->p));
        cJSON_AddItemToObject(x, "p_adjusted", number_or_null(t->p_adjusted));
        cJSON_AddNumberToObject(x, "runs", (double)t->points);
        cJSON_AddItemToObject(x, "start_ns", number_or_null(exp(t->start)));
    } else {
        cJSON_AddNullToObject(o, "trend");
    }
    return o;
}

/* A document of one of the other formats (its "format" and "version" members), or NULL with the
 * reason in msg. */
static cJSON *format_document(const char *path, const char *format, char *msg, size_t msglen)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) {
        bench__msg(msg, msglen, "%s: out of memory while building JSON", path);
        return NULL;
    }
    cJSON_AddStringToObject(root, "format", format);
    cJSON_AddNumberToObject(root, "version", 1);
    return root;
}

int bench__history_view_write(const char *path, const char *history,
                              const bench__history_view *v, char *msg, size_t msglen)
{
    cJSON *root = format_document(path, "harness-history-series", msg, msglen);
    if (!root)
        return BENCH_ENOMEM;
    cJSON_AddStringToObject(root, "history", history);
    cJSON_AddNumberToObject(root, "alpha", BENCH__HISTORY_ALPHA);
    cJSON_AddNumberToObject(root, "trend_tests", (double)v->trend_tests);
    cJSON *series = cJSON_AddArrayToObject(root, "series");
    for (size_t i = 0; series && i < v->n; i++)
        cJSON_AddItemToArray(series, series_json(&v->s[i]));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return bench__write_json_text(path, text, msg, msglen);
}

int bench__ab_json_write(const char *path, const char *old_prog, const char *new_prog,
                         double noise_threshold, double significance_level,
                         const bench__ab_outcome *o, size_t n, char *msg, size_t msglen)
{
    cJSON *root = format_document(path, "harness-ab", msg, msglen);
    if (!root)
        return BENCH_ENOMEM;
    cJSON_AddStringToObject(root, "old", old_prog);
    cJSON_AddStringToObject(root, "new", new_prog);
    cJSON_AddNumberToObject(root, "noise_threshold", noise_threshold);
    cJSON_AddNumberToObject(root, "significance_level", significance_level);
    cJSON *list = cJSON_AddArrayToObject(root, "benchmarks");
    for (size_t i = 0; list && i < n; i++) {
        const bench__change *c = o[i].change;
        /* Compared: a verdict drawn from its pairs (regressed ... inconclusive); not compared:
         * "not compared", "skipped", "new" or "removed", with why for all but the last. */
        bool compared = bench__verdict_has_numbers(c->verdict);
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "id", o[i].id);
        cJSON_AddStringToObject(b, "verdict", bench__verdict_name(c->verdict));
        cJSON_AddBoolToObject(b, "compared", compared);
        if (o[i].why)
            cJSON_AddStringToObject(b, "why", o[i].why);
        else
            cJSON_AddNullToObject(b, "why");
        cJSON_AddItemToObject(b, "ratio", number_or_null(compared ? c->ratio : NAN));
        cJSON_AddItemToObject(b, "ratio_lower", number_or_null(compared ? c->ratio_lower : NAN));
        cJSON_AddItemToObject(b, "ratio_upper", number_or_null(compared ? c->ratio_upper : NAN));
        cJSON_AddBoolToObject(b, "same_code", c->same_code);
        cJSON_AddNumberToObject(b, "pairs", (double)o[i].pairs);
        cJSON_AddItemToArray(list, b);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return bench__write_json_text(path, text, msg, msglen);
}
