/*
 * grid.c: a BENCH_FN's argument grid (.args, bench.h) expanded into its combinations.
 *
 * The grid is a string the harness reads once, when the registry lists the instances, so a
 * mistake in it stops the program before anything runs, with a message naming the axis and the
 * value. Invariant kept: every combination has the same axes in the same order (the first set's),
 * every name and value fits BENCH__ARG_LEN with its terminator, and no value holds a character
 * that would make an id ambiguous ('/', '=', ',', '|', spaces) or need escaping.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/registry.h"

/* The values of one axis of the set being read. */
typedef struct axis {
    char name[BENCH__ARG_LEN];
    char (*values)[BENCH__ARG_LEN];
    size_t n, cap;
} axis;

typedef struct grid {
    bench__arg *rows; /* combinations, naxes args each */
    size_t n, cap;    /* combinations */
    size_t naxes;     /* 0 until the first set is read */
    char first[BENCH__MAX_AXES][BENCH__ARG_LEN]; /* the first set's axis names, in order */
    char *msg;
    size_t msglen;
} grid;

static bool value_char(int c)
{
    return isalnum(c) || c == '_' || c == '.' || c == '+' || c == '-';
}

static int add_value(grid *g, axis *a, const char *v, size_t len)
{
    if (len == 0) {
        bench__msg(g->msg, g->msglen, "axis '%s' has an empty value", a->name);
        return BENCH_EINVAL;
    }
    if (len >= BENCH__ARG_LEN) {
        bench__msg(g->msg, g->msglen, "a value of axis '%s' is longer than %d characters",
                   a->name, BENCH__ARG_LEN - 1);
        return BENCH_EINVAL;
    }
    for (size_t i = 0; i < len; i++)
        if (!value_char((unsigned char)v[i])) {
            bench__msg(g->msg, g->msglen,
                       "axis '%s': character '%c' in a value (values take letters, digits, "
                       "'_', '.', '+', '-')",
                       a->name, isprint((unsigned char)v[i]) ? v[i] : '?');
            return BENCH_EINVAL;
        }
    if (a->n >= BENCH__MAX_VARIANTS) {
        bench__msg(g->msg, g->msglen, "axis '%s' has more than %d values", a->name,
                   BENCH__MAX_VARIANTS);
        return BENCH_EINVAL;
    }
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 8;
        void *p = realloc(a->values, cap * sizeof *a->values);
        if (!p)
            return BENCH_ENOMEM;
        a->values = p;
        a->cap = cap;
    }
    memcpy(a->values[a->n], v, len);
    a->values[a->n][len] = '\0';
    a->n++;
    return 0;
}

/* A whole string as a decimal integer. */
static bool parse_int(const char *s, size_t len, long long *out)
{
    char buf[BENCH__ARG_LEN];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    *out = strtoll(buf, &end, 10);
    return errno == 0 && *end == '\0';
}

/* LO..HI*M or LO..HI+S, at `item` of `len` characters (dots at `dots`). */
static int add_range(grid *g, axis *a, const char *item, size_t len, const char *dots)
{
    const char *hi_at = dots + 2, *end = item + len;
    const char *op = hi_at;
    while (op < end && *op != '*' && *op != '+')
        op++;
    /* A '+' right after the dots is HI's sign, not the step. */
    if (op == hi_at && op < end && *op == '+') {
        op++;
        while (op < end && *op != '*' && *op != '+')
            op++;
    }
    long long lo, hi, step;
    if (!parse_int(item, (size_t)(dots - item), &lo) ||
        !parse_int(hi_at, (size_t)(op - hi_at), &hi) || op == end ||
        !parse_int(op + 1, (size_t)(end - op - 1), &step)) {
        bench__msg(g->msg, g->msglen,
                   "axis '%s': range '%.*s' is not LO..HI*M or LO..HI+S with integers", a->name,
                   (int)len, item);
        return BENCH_EINVAL;
    }
    bool geometric = *op == '*';
    if (hi < lo || (geometric && (lo < 1 || step < 2)) || (!geometric && step < 1)) {
        bench__msg(g->msg, g->msglen,
                   "axis '%s': range '%.*s' is empty or never ends (LO <= HI; *M needs LO >= 1 "
                   "and M >= 2, +S needs S >= 1)",
                   a->name, (int)len, item);
        return BENCH_EINVAL;
    }
    char v[BENCH__ARG_LEN];
    long long x = lo;
    for (;;) {
        int n = snprintf(v, sizeof v, "%lld", x);
        int rc = add_value(g, a, v, (size_t)n);
        if (rc)
            return rc;
        /* The next value, stopping before one that passes HI (or overflows). */
        if (geometric ? x > hi / step
                      : (unsigned long long)hi - (unsigned long long)x < (unsigned long long)step)
            break;
        x = geometric ? x * step : x + step;
    }
    /* A geometric range ends at HI, as Google Benchmark's ranges do. */
    if (geometric && x < hi) {
        int n = snprintf(v, sizeof v, "%lld", hi);
        return add_value(g, a, v, (size_t)n);
    }
    return 0;
}

/* NAME=VALUES, the `len` characters at s, into a. */
static int read_axis(grid *g, axis *a, const char *s, size_t len)
{
    const char *eq = memchr(s, '=', len), *end = s + len;
    size_t nlen = eq ? (size_t)(eq - s) : len;
    bool named = nlen > 0 && nlen < BENCH__ARG_LEN && (isalpha((unsigned char)s[0]) || s[0] == '_');
    for (size_t i = 0; named && i < nlen; i++)
        named = isalnum((unsigned char)s[i]) || s[i] == '_';
    if (!eq || !named) {
        bench__msg(g->msg, g->msglen,
                   "'%.*s' is not NAME=VALUES (a name of letters, digits and '_', at most %d "
                   "characters, then '=')",
                   (int)(len > 60 ? 60 : len), s, BENCH__ARG_LEN - 1);
        return BENCH_EINVAL;
    }
    memcpy(a->name, s, nlen);
    a->name[nlen] = '\0';
    for (const char *p = eq + 1;; ) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        const char *dots = NULL;
        for (const char *q = p; q + 1 < stop; q++)
            if (q[0] == '.' && q[1] == '.') {
                dots = q;
                break;
            }
        int rc = dots ? add_range(g, a, p, (size_t)(stop - p), dots)
                      : add_value(g, a, p, (size_t)(stop - p));
        if (rc)
            return rc;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* Appends the product of the set's axes (the first varying slowest). */
static int add_product(grid *g, const axis *ax, size_t naxes)
{
    size_t count = 1;
    for (size_t i = 0; i < naxes; i++) {
        count *= ax[i].n;
        if (count > BENCH__MAX_VARIANTS || g->n + count > BENCH__MAX_VARIANTS) {
            bench__msg(g->msg, g->msglen, "the grid has more than %d combinations",
                       BENCH__MAX_VARIANTS);
            return BENCH_EINVAL;
        }
    }
    if (g->n + count > g->cap) {
        size_t cap = g->n + count;
        void *p = realloc(g->rows, cap * naxes * sizeof *g->rows);
        if (!p)
            return BENCH_ENOMEM;
        g->rows = p;
        g->cap = cap;
    }
    for (size_t k = 0; k < count; k++) {
        bench__arg *row = &g->rows[(g->n + k) * naxes];
        size_t rest = k;
        for (size_t i = naxes; i-- > 0;) {
            memcpy(row[i].name, ax[i].name, sizeof row[i].name);
            memcpy(row[i].value, ax[i].values[rest % ax[i].n], sizeof row[i].value);
            rest /= ax[i].n;
        }
    }
    g->n += count;
    return 0;
}

/* One set, the `len` characters at s: its axes, checked against the first set's. */
static int read_set(grid *g, const char *s, size_t len)
{
    axis ax[BENCH__MAX_AXES];
    size_t naxes = 0;
    int rc = 0;
    memset(ax, 0, sizeof ax);
    const char *p = s, *end = s + len;
    while (rc == 0) {
        while (p < end && isspace((unsigned char)*p))
            p++;
        if (p == end)
            break;
        const char *q = p;
        while (q < end && !isspace((unsigned char)*q))
            q++;
        if (naxes == BENCH__MAX_AXES) {
            bench__msg(g->msg, g->msglen, "more than %d axes", BENCH__MAX_AXES);
            rc = BENCH_EINVAL;
            break;
        }
        rc = read_axis(g, &ax[naxes], p, (size_t)(q - p));
        naxes += rc == 0;
        for (size_t i = 0; rc == 0 && i + 1 < naxes; i++)
            if (strcmp(ax[i].name, ax[naxes - 1].name) == 0) {
                bench__msg(g->msg, g->msglen, "axis '%s' is named twice", ax[i].name);
                rc = BENCH_EINVAL;
            }
        p = q;
    }
    if (rc == 0 && naxes == 0) {
        bench__msg(g->msg, g->msglen, "%s", "an empty set of axes (nothing between '|'s)");
        rc = BENCH_EINVAL;
    }
    if (rc == 0 && g->naxes == 0) {
        g->naxes = naxes;
        for (size_t i = 0; i < naxes; i++)
            memcpy(g->first[i], ax[i].name, sizeof g->first[i]);
    } else if (rc == 0) {
        bool same = naxes == g->naxes;
        for (size_t i = 0; same && i < naxes; i++)
            same = strcmp(g->first[i], ax[i].name) == 0;
        if (!same) {
            bench__msg(g->msg, g->msglen,
                       "set '%.*s' does not name the first set's axes in the same order",
                       (int)(len > 60 ? 60 : len), s);
            rc = BENCH_EINVAL;
        }
    }
    if (rc == 0)
        rc = add_product(g, ax, naxes);
    for (size_t i = 0; i < BENCH__MAX_AXES; i++)
        free(ax[i].values);
    return rc;
}

int bench__grid_expand(const char *spec, bench__arg **out, size_t *n, size_t *naxes, char *msg,
                       size_t msglen)
{
    *out = NULL;
    *n = *naxes = 0;
    /* Spaces next to '=' or ',' are dropped ("size = 1, 2" reads as "size=1,2"). */
    size_t len = strlen(spec);
    char *s = malloc(len + 1);
    if (!s)
        return BENCH_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (isspace((unsigned char)spec[i])) {
            size_t j = i;
            while (j < len && isspace((unsigned char)spec[j]))
                j++;
            bool next_sep = j < len && (spec[j] == '=' || spec[j] == ',');
            bool prev_sep = k > 0 && (s[k - 1] == '=' || s[k - 1] == ',');
            if (!next_sep && !prev_sep)
                s[k++] = ' ';
            i = j - 1;
            continue;
        }
        s[k++] = spec[i];
    }
    s[k] = '\0';
    grid g = {.msg = msg, .msglen = msglen};
    int rc = 0;
    for (const char *p = s;;) {
        const char *bar = strchr(p, '|');
        size_t l = bar ? (size_t)(bar - p) : strlen(p);
        rc = read_set(&g, p, l);
        if (rc || !bar)
            break;
        p = bar + 1;
    }
    free(s);
    if (rc) {
        free(g.rows);
        return rc;
    }
    *out = g.rows;
    *n = g.n;
    *naxes = g.naxes;
    return 0;
}
