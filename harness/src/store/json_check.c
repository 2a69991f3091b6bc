/*
 * json_check.c: the structural checks of a results or baseline file read back (json_read.c runs
 * them on the parsed tree): no object may repeat a key, and the whole document must match the
 * published schema, docs/results.schema.json, which the build compiles into the library
 * (results_schema.c), so the file users read and the rules the loader applies cannot drift.
 * Part of the JSON reader: like json_read.c it includes cJSON.
 *
 * The validator knows the JSON Schema (draft 2020-12) keywords that file uses: $ref (to
 * #/$defs/...), type, const, enum, required, properties, additionalProperties, items, minItems,
 * maxItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern
 * (POSIX extended regular expressions, searched as JSON Schema does) and if/then/else; title,
 * description and $schema are annotations. A keyword it does not know fails every load, so a
 * schema change that needs more is caught by the first test that reads a file. Beyond the
 * schema, numbers must be finite. Every message names the file and the JSON path.
 */
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "store/json_check.h"

/* ---- JSON paths in messages ---- */

/* A JSON path being built while walking, e.g. benchmarks[3].outliers.low_mild. */
typedef struct jpath {
    char s[512];
    size_t len;
} jpath;

/* Appends ".key" (escaped: keys come from the file, and are cut at 64 bytes) or "[i]"; returns
 * the previous length for jpath_pop. */
static size_t jpath_push_key(jpath *p, const char *key)
{
    size_t old = p->len;
    char esc[4 * 64 + 4], cut[65];
    bench__msg(cut, sizeof cut, "%s", key ? key : "");
    bench__escape(esc, sizeof esc, cut);
    bench__msg(p->s + p->len, sizeof p->s - p->len, "%s%s%s", p->len ? "." : "", esc,
               key && strlen(key) > 64 ? "..." : "");
    p->len += strlen(p->s + p->len);
    return old;
}

static size_t jpath_push_index(jpath *p, int i)
{
    size_t old = p->len;
    bench__msg(p->s + p->len, sizeof p->s - p->len, "[%d]", i);
    p->len += strlen(p->s + p->len);
    return old;
}

static void jpath_pop(jpath *p, size_t old)
{
    p->len = old;
    p->s[old] = '\0';
}

static const char *jpath_str(const jpath *p)
{
    return p->len ? p->s : "$";
}

/* ---- duplicate keys ---- */

static int cmp_key(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string, y->string);
}

/* Each object's keys sorted (O(k log k), so a hostile object of 100000 keys stays cheap). */
static int dup_walk(const cJSON *node, jpath *p, const char *file, char *msg, size_t msglen)
{
    if (cJSON_IsObject(node)) {
        int n = cJSON_GetArraySize(node);
        if (n > 1) {
            const cJSON **keys = malloc((size_t)n * sizeof *keys);
            if (!keys) {
                bench__msg(msg, msglen, "%s: out of memory", file);
                return BENCH_ENOMEM;
            }
            int k = 0;
            for (const cJSON *c = node->child; c; c = c->next)
                keys[k++] = c;
            qsort(keys, (size_t)n, sizeof *keys, cmp_key);
            for (int i = 1; i < n; i++)
                if (strcmp(keys[i - 1]->string, keys[i]->string) == 0) {
                    size_t old = jpath_push_key(p, keys[i]->string);
                    bench__msg(msg, msglen, "%s: %s: duplicate key (an object may have each "
                                            "key once)", file, jpath_str(p));
                    jpath_pop(p, old);
                    free(keys);
                    return BENCH_EINVAL;
                }
            free(keys);
        }
        for (const cJSON *c = node->child; c; c = c->next) {
            size_t old = jpath_push_key(p, c->string);
            int rc = dup_walk(c, p, file, msg, msglen);
            jpath_pop(p, old);
            if (rc)
                return rc;
        }
    } else if (cJSON_IsArray(node)) {
        int i = 0;
        for (const cJSON *c = node->child; c; c = c->next, i++) {
            if (!cJSON_IsObject(c) && !cJSON_IsArray(c))
                continue; /* nothing below a scalar */
            size_t old = jpath_push_index(p, i);
            int rc = dup_walk(c, p, file, msg, msglen);
            jpath_pop(p, old);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int bench__json_check_duplicates(const cJSON *root, const char *file, char *msg, size_t msglen)
{
    jpath p = {.len = 0};
    p.s[0] = '\0';
    return dup_walk(root, &p, file, msg, msglen);
}

/* ---- the schema ---- */

#define MAX_PATTERNS 16
#define MAX_SCHEMA_DEPTH 64

typedef struct validator {
    const cJSON *defs; /* the schema's $defs */
    const char *file;
    char *msg;
    size_t msglen;
    int quiet; /* > 0 inside "if": failures are answers, not errors */
    struct {
        const char *pattern;
        regex_t re;
        bool ok;
    } patterns[MAX_PATTERNS];
    size_t npatterns;
} validator;

static int fail(validator *v, const jpath *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(validator *v, const jpath *p, const char *fmt, ...)
{
    if (v->quiet)
        return BENCH_EINVAL;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    bench__msg(v->msg, v->msglen, "%s: %s: %s", v->file, jpath_str(p), what);
    return BENCH_EINVAL;
}

/* A defect of the schema itself (a keyword this validator does not know, a bad $ref). */
static int schema_fail(validator *v, const char *what, const char *detail)
{
    if (!v->quiet)
        bench__msg(v->msg, v->msglen, "%s: the compiled-in results schema %s '%s': this "
                                      "program cannot validate files with it", v->file, what,
                   detail);
    return BENCH_EINVAL;
}

static bool type_is(const cJSON *x, const char *type)
{
    if (strcmp(type, "object") == 0)
        return cJSON_IsObject(x);
    if (strcmp(type, "array") == 0)
        return cJSON_IsArray(x);
    if (strcmp(type, "string") == 0)
        return cJSON_IsString(x);
    if (strcmp(type, "number") == 0)
        return cJSON_IsNumber(x);
    if (strcmp(type, "integer") == 0)
        return cJSON_IsNumber(x) && isfinite(x->valuedouble) &&
               x->valuedouble == floor(x->valuedouble);
    if (strcmp(type, "boolean") == 0)
        return cJSON_IsBool(x);
    if (strcmp(type, "null") == 0)
        return cJSON_IsNull(x);
    return false;
}

static bool known_type(const char *type)
{
    static const char *const types[] = {"object", "array",   "string", "number",
                                        "integer", "boolean", "null"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(type, types[i]) == 0)
            return true;
    return false;
}

/* "an integer", "a string or null", ... for messages. */
static void type_words(const cJSON *type, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    const cJSON *t = cJSON_IsArray(type) ? type->child : type;
    for (bool first = true; t; t = cJSON_IsArray(type) ? t->next : NULL, first = false) {
        const char *name = cJSON_IsString(t) ? t->valuestring : "?";
        const char *art = name[0] == 'a' || name[0] == 'i' || name[0] == 'o' ? "an" : "a";
        int w = strcmp(name, "null") == 0
                    ? snprintf(buf + o, len - o, "%snull", first ? "" : " or ")
                    : snprintf(buf + o, len - o, "%s%s %s", first ? "" : " or ", art, name);
        if (w < 0 || (size_t)w >= len - o)
            return;
        o += (size_t)w;
    }
}

/* Whether two JSON scalars are equal (const and enum; the schema uses no structured values). */
static bool scalar_equal(const cJSON *a, const cJSON *b)
{
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
        return a->valuedouble == b->valuedouble;
    if (cJSON_IsString(a) && cJSON_IsString(b))
        return strcmp(a->valuestring, b->valuestring) == 0;
    if (cJSON_IsBool(a) && cJSON_IsBool(b))
        return cJSON_IsTrue(a) == cJSON_IsTrue(b);
    return cJSON_IsNull(a) && cJSON_IsNull(b);
}

static void scalar_words(const cJSON *x, char *buf, size_t len)
{
    if (cJSON_IsString(x))
        bench__msg(buf, len, "\"%s\"", x->valuestring);
    else if (cJSON_IsNumber(x))
        bench__msg(buf, len, "%.17g", x->valuedouble);
    else
        bench__msg(buf, len, "%s", cJSON_IsTrue(x) ? "true" : cJSON_IsFalse(x) ? "false" : "null");
}

/* Characters of a UTF-8 string (JSON Schema's lengths count characters, not bytes). */
static size_t utf8_length(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static int pattern_match(validator *v, const char *pattern, const char *s, bool *match)
{
    size_t i = 0;
    while (i < v->npatterns && v->patterns[i].pattern != pattern)
        i++;
    if (i == v->npatterns) {
        if (i == MAX_PATTERNS)
            return schema_fail(v, "has more patterns than", "16");
        v->patterns[i].pattern = pattern;
        v->patterns[i].ok = regcomp(&v->patterns[i].re, pattern, REG_EXTENDED | REG_NOSUB) == 0;
        v->npatterns++;
    }
    if (!v->patterns[i].ok)
        return schema_fail(v, "has a pattern POSIX cannot compile:", pattern);
    *match = regexec(&v->patterns[i].re, s, 0, NULL, 0) == 0;
    return 0;
}

static int validate(validator *v, const cJSON *s, const cJSON *x, jpath *p, int depth);

static int check_number(validator *v, const cJSON *s, const cJSON *x, jpath *p)
{
    double d = x->valuedouble;
    if (!isfinite(d))
        return fail(v, p, "expected a finite number");
    const cJSON *k;
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "minimum")) && d < k->valuedouble)
        return fail(v, p, "%.17g is below the minimum %.17g", d, k->valuedouble);
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "maximum")) && d > k->valuedouble)
        return fail(v, p, "%.17g is above the maximum %.17g", d, k->valuedouble);
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "exclusiveMinimum")) && !(d > k->valuedouble))
        return fail(v, p, "%.17g is not above %.17g", d, k->valuedouble);
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "exclusiveMaximum")) && !(d < k->valuedouble))
        return fail(v, p, "%.17g is not below %.17g", d, k->valuedouble);
    return 0;
}

static int check_string(validator *v, const cJSON *s, const cJSON *x, jpath *p)
{
    const cJSON *k;
    size_t n = utf8_length(x->valuestring);
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "minLength")) && (double)n < k->valuedouble)
        return fail(v, p, "expected at least %.0f character%s", k->valuedouble,
                    k->valuedouble == 1 ? "" : "s");
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "maxLength")) && (double)n > k->valuedouble)
        return fail(v, p, "expected at most %.0f character%s", k->valuedouble,
                    k->valuedouble == 1 ? "" : "s");
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "pattern"))) {
        bool match = false;
        int rc = pattern_match(v, k->valuestring, x->valuestring, &match);
        if (rc)
            return rc;
        if (!match) {
            char esc[128];
            return fail(v, p, "\"%s\" does not match the pattern %s",
                        bench__escape(esc, sizeof esc, x->valuestring), k->valuestring);
        }
    }
    return 0;
}

static int check_array(validator *v, const cJSON *s, const cJSON *x, jpath *p, int depth)
{
    const cJSON *k;
    int n = cJSON_GetArraySize(x);
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "minItems")) && n < k->valuedouble)
        return fail(v, p, "expected at least %.0f item%s", k->valuedouble,
                    k->valuedouble == 1 ? "" : "s");
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "maxItems")) && n > k->valuedouble)
        return fail(v, p, "expected at most %.0f item%s", k->valuedouble,
                    k->valuedouble == 1 ? "" : "s");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
    if (!items)
        return 0;
    int i = 0;
    for (const cJSON *c = x->child; c; c = c->next, i++) {
        size_t old = jpath_push_index(p, i);
        int rc = validate(v, items, c, p, depth + 1);
        jpath_pop(p, old);
        if (rc)
            return rc;
    }
    return 0;
}

static int check_object(validator *v, const cJSON *s, const cJSON *x, jpath *p, int depth)
{
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required");
    for (const cJSON *r = req ? req->child : NULL; r; r = r->next)
        if (cJSON_IsString(r) && !cJSON_GetObjectItemCaseSensitive(x, r->valuestring)) {
            size_t old = jpath_push_key(p, r->valuestring);
            int rc = fail(v, p, "missing");
            jpath_pop(p, old);
            return rc;
        }
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    const cJSON *extra = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
    for (const cJSON *c = x->child; c; c = c->next) {
        const cJSON *sub = props ? cJSON_GetObjectItemCaseSensitive(props, c->string) : NULL;
        size_t old = jpath_push_key(p, c->string);
        int rc = 0;
        if (sub)
            rc = validate(v, sub, c, p, depth + 1);
        else if (cJSON_IsFalse(extra))
            rc = fail(v, p, "unknown key (not part of schema_version 1)");
        else if (cJSON_IsObject(extra))
            rc = validate(v, extra, c, p, depth + 1);
        jpath_pop(p, old);
        if (rc)
            return rc;
    }
    return 0;
}

/* Keywords that only annotate, and those handled below. */
static bool known_keyword(const char *k)
{
    static const char *const words[] = {
        "$schema", "title", "description", "$defs", "$ref", "type", "const", "enum",
        "required", "properties", "additionalProperties", "items", "minItems", "maxItems",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
        "pattern", "if", "then", "else",
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(k, words[i]) == 0)
            return true;
    return false;
}

static int validate(validator *v, const cJSON *s, const cJSON *x, jpath *p, int depth)
{
    if (depth > MAX_SCHEMA_DEPTH)
        return schema_fail(v, "nests deeper than", "64 levels");
    if (cJSON_IsTrue(s))
        return 0;
    if (!cJSON_IsObject(s))
        return schema_fail(v, "has a schema that is not an object at", jpath_str(p));
    for (const cJSON *k = s->child; k; k = k->next)
        if (!known_keyword(k->string))
            return schema_fail(v, "uses the keyword", k->string);
    if (cJSON_IsNumber(x) && !isfinite(x->valuedouble))
        return fail(v, p, "expected a finite number");
    const cJSON *k;
    int rc;
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "$ref"))) {
        const char *ref = cJSON_IsString(k) ? k->valuestring : "";
        const char *def = bench__skip_prefix(ref, "#/$defs/");
        const cJSON *target = def ? cJSON_GetObjectItemCaseSensitive(v->defs, def) : NULL;
        if (!target)
            return schema_fail(v, "has an unresolvable $ref", ref);
        if ((rc = validate(v, target, x, p, depth + 1)))
            return rc;
    }
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "type"))) {
        bool ok = false;
        const cJSON *t = cJSON_IsArray(k) ? k->child : k;
        for (; t; t = cJSON_IsArray(k) ? t->next : NULL) {
            if (!cJSON_IsString(t) || !known_type(t->valuestring))
                return schema_fail(v, "names an unknown type", cJSON_IsString(t) ? t->valuestring
                                                                               : "?");
            ok = ok || type_is(x, t->valuestring);
        }
        if (!ok) {
            char words[96];
            type_words(k, words, sizeof words);
            return fail(v, p, "expected %s", words);
        }
    }
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "const")) && !scalar_equal(k, x)) {
        char want[96];
        scalar_words(k, want, sizeof want);
        return fail(v, p, "expected %s", want);
    }
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "enum"))) {
        bool ok = false;
        for (const cJSON *e = k->child; e && !ok; e = e->next)
            ok = scalar_equal(e, x);
        if (!ok) {
            char want[256] = "";
            size_t o = 0;
            for (const cJSON *e = k->child; e && o < sizeof want; e = e->next) {
                char one[64];
                scalar_words(e, one, sizeof one);
                o += (size_t)snprintf(want + o, sizeof want - o, "%s%s", o ? ", " : "", one);
            }
            return fail(v, p, "expected one of %s", want);
        }
    }
    if ((k = cJSON_GetObjectItemCaseSensitive(s, "if"))) {
        v->quiet++;
        bool holds = validate(v, k, x, p, depth + 1) == 0;
        v->quiet--;
        const cJSON *branch = cJSON_GetObjectItemCaseSensitive(s, holds ? "then" : "else");
        if (branch && (rc = validate(v, branch, x, p, depth + 1)))
            return rc;
    }
    if (cJSON_IsNumber(x))
        return check_number(v, s, x, p);
    if (cJSON_IsString(x))
        return check_string(v, s, x, p);
    if (cJSON_IsArray(x))
        return check_array(v, s, x, p, depth);
    if (cJSON_IsObject(x))
        return check_object(v, s, x, p, depth);
    return 0;
}

int bench__json_check_schema(const cJSON *root, const char *file, char *msg, size_t msglen)
{
    cJSON *schema = cJSON_ParseWithLength(bench__results_schema, bench__results_schema_len);
    if (!schema) {
        bench__msg(msg, msglen, "%s: the compiled-in results schema is not valid JSON", file);
        return BENCH_ENOMEM; /* it is valid at build time: only memory can fail here */
    }
    validator v = {.defs = cJSON_GetObjectItemCaseSensitive(schema, "$defs"),
                   .file = file,
                   .msg = msg,
                   .msglen = msglen};
    jpath p = {.len = 0};
    p.s[0] = '\0';
    int rc = validate(&v, schema, root, &p, 0);
    for (size_t i = 0; i < v.npatterns; i++)
        if (v.patterns[i].ok)
            regfree(&v.patterns[i].re);
    cJSON_Delete(schema);
    return rc;
}
