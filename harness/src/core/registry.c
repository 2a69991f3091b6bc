/*
 * registry.c: the list of registered benchmarks and groups.
 *
 * BENCH_FN and BENCH_GROUP constructors push the static nodes of their descriptors onto two
 * lists before main(); nothing is allocated then, and the descriptors themselves are never
 * written. At run time the lists are expanded into instances (one per parameter value or
 * argument-grid combination, grid.c) and
 * sorted by id, so output and baselines do not depend on link order. A descriptor compiled with
 * an older header than this library's (its node's size is smaller) is read through a zeroed
 * full-size copy, so the fields it lacks read as "not set" (the ABI of bench.h).
 * Invariant: ids are unique; a duplicate is reported as an error, never silently merged.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "core/registry.h"

static bench__node *registry_head;
static bench__node *group_head;

void bench__register(bench__node *n)
{
    n->next = registry_head;
    registry_head = n;
}

void bench__register_group(bench__node *n)
{
    n->next = group_head;
    group_head = n;
}

/* The node's descriptor as this library's struct of `full` bytes: itself when the program's is as
 * large, else a zeroed copy of that size holding what the program's has (NULL: no memory). */
static const void *full_size(bench__node *n, size_t full)
{
    if (n->size >= full)
        return n->desc;
    if (!n->copy) {
        n->copy = calloc(1, full);
        if (n->copy)
            memcpy(n->copy, n->desc, n->size);
    }
    return n->copy;
}

static const bench_desc *desc_of(bench__node *n)
{
    return full_size(n, sizeof(bench_desc));
}

static const bench_group_desc *group_of(bench__node *n)
{
    return full_size(n, sizeof(bench_group_desc));
}

const char *bench__registry_build_revision(void)
{
    const char *rev = NULL;
    for (bench__node *n = registry_head; n; n = n->next) {
        const bench_desc *d = desc_of(n);
        if (!d || !(d->build_flags & BENCH_BUILD_RECORDED))
            continue;
        if (!d->build_revision || !d->build_revision[0])
            return NULL; /* a file built without a known revision: the program's is unknown */
        if (rev && strcmp(rev, d->build_revision) != 0)
            return NULL; /* files built from different revisions: no one revision */
        rev = d->build_revision;
    }
    return rev;
}

int bench__threads_resolve(int threads, long cpus)
{
    if (threads == BENCH_THREADS_CPUS)
        return cpus < 1 ? 1 : cpus > BENCH_MAX_THREADS ? BENCH_MAX_THREADS : (int)cpus;
    return threads < 1 ? 1 : threads;
}

static int cmp_instance(const void *a, const void *b)
{
    const bench__instance *x = a, *y = b;
    int c = strcmp(x->desc->group, y->desc->group);
    if (c == 0)
        c = strcmp(x->desc->name, y->desc->name);
    if (c == 0 && x->has_param && y->has_param)
        c = (x->param > y->param) - (x->param < y->param);
    if (c == 0)
        c = (x->variant > y->variant) - (x->variant < y->variant);
    return c;
}

const char *bench__instance_arg(const bench__instance *in, const char *name)
{
    for (size_t i = 0; name && i < in->nargs; i++)
        if (strcmp(in->args[i].name, name) == 0)
            return in->args[i].value;
    return NULL;
}

/* Room for `more` instances after the `k` of *v. */
static int grow(bench__instance **v, size_t *cap, size_t k, size_t more)
{
    if (k + more <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < k + more)
        c *= 2;
    bench__instance *p = realloc(*v, c * sizeof *p);
    if (!p)
        return BENCH_ENOMEM;
    memset(p + *cap, 0, (c - *cap) * sizeof *p);
    *v = p;
    *cap = c;
    return 0;
}

/* Sets in->id from its descriptor and parameter or grid values. */
static int make_id(bench__instance *in, char *msg, size_t msglen)
{
    const bench_desc *d = in->desc;
    int len = in->has_param ? snprintf(in->id, sizeof in->id, "%s/%s/%lld", d->group, d->name,
                                       (long long)in->param)
                            : snprintf(in->id, sizeof in->id, "%s/%s", d->group, d->name);
    for (size_t i = 0; i < in->nargs && len >= 0 && (size_t)len < sizeof in->id; i++)
        len += snprintf(in->id + len, sizeof in->id - (size_t)len, "/%s=%s", in->args[i].name,
                        in->args[i].value);
    if (len < 0 || (size_t)len >= sizeof in->id) {
        bench__msg(msg, msglen, "benchmark id '%s/%s...' is longer than %zu characters", d->group,
                   d->name, sizeof in->id - 1);
        return BENCH_EINVAL;
    }
    return 0;
}

/* in->threads: the descriptor's .threads, or the value of its grid's axis `threads` (a count, or
 * "cpus" for the online CPUs). */
static int set_threads(bench__instance *in, char *msg, size_t msglen)
{
    const bench_desc *d = in->desc;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const char *t = bench__instance_arg(in, "threads");
    if (!t) {
        /* Above BENCH_MAX_THREADS is the runner's to fail, naming the limit. */
        if (d->threads < 0 && d->threads != BENCH_THREADS_CPUS) {
            bench__msg(msg, msglen,
                       "benchmark '%s/%s' (%s:%d): .threads is %d (a count, or "
                       "BENCH_THREADS_CPUS)",
                       d->group, d->name, d->file, d->line, d->threads);
            return BENCH_EINVAL;
        }
        in->threads = bench__threads_resolve(d->threads, cpus);
        return 0;
    }
    char *end;
    errno = 0;
    long v = strcmp(t, "cpus") == 0 ? BENCH_THREADS_CPUS : strtol(t, &end, 10);
    bool ok = strcmp(t, "cpus") == 0 || (errno == 0 && *end == '\0' && v >= 1 &&
                                         v <= INT_MAX);
    if (!ok) {
        bench__msg(msg, msglen,
                   "benchmark '%s/%s' (%s:%d): .args: axis 'threads' takes thread counts (1 or "
                   "more) or 'cpus', not '%s'",
                   d->group, d->name, d->file, d->line, t);
        return BENCH_EINVAL;
    }
    if (d->threads) {
        bench__msg(msg, msglen, "benchmark '%s/%s' (%s:%d) has both .threads and an axis 'threads'",
                   d->group, d->name, d->file, d->line);
        return BENCH_EINVAL;
    }
    in->threads = bench__threads_resolve((int)v, cpus);
    return 0;
}

/* Appends the instances of one descriptor: one, one per parameter, or one per grid combination. */
static int add_instances(bench__instance **v, size_t *cap, size_t *k, const bench_desc *d,
                         const bench_group_desc *grp, char *msg, size_t msglen)
{
    bench__arg *rows = NULL;
    size_t nrows = 0, naxes = 0, count = d->nparams ? d->nparams : 1;
    if (d->args && d->nparams) {
        bench__msg(msg, msglen, "benchmark '%s/%s' (%s:%d) has both .params and .args", d->group,
                   d->name, d->file, d->line);
        return BENCH_EINVAL;
    }
    if (d->args) {
        char why[256];
        int rc = bench__grid_expand(d->args, &rows, &nrows, &naxes, why, sizeof why);
        if (rc) {
            bench__msg(msg, msglen, "benchmark '%s/%s' (%s:%d): .args: %s", d->group, d->name,
                       d->file, d->line, rc == BENCH_ENOMEM ? "out of memory" : why);
            return rc;
        }
        count = nrows;
    }
    int rc = grow(v, cap, *k, count);
    for (size_t p = 0; rc == 0 && p < count; p++) {
        bench__instance *in = &(*v)[*k + p];
        in->desc = d;
        in->group = grp;
        in->has_param = d->nparams > 0;
        in->param = in->has_param ? d->params[p] : 0;
        in->variant = (unsigned)p;
        in->nargs = rows ? naxes : 0;
        if (rows)
            memcpy(in->args, &rows[p * naxes], naxes * sizeof *rows);
        rc = make_id(in, msg, msglen);
        if (rc == 0)
            rc = set_threads(in, msg, msglen);
    }
    free(rows);
    if (rc == 0)
        *k += count;
    return rc;
}

static int cmp_id_of(const void *a, const void *b)
{
    const bench__instance *const *x = a, *const *y = b;
    return strcmp((*x)->id, (*y)->id);
}

/* Two instances with one id (the same BENCH_FN twice, or a grid value listed twice, which the
 * grid's order does not put side by side): BENCH_EDUP naming both places. */
static int unique_ids(const bench__instance *v, size_t count, char *msg, size_t msglen)
{
    const bench__instance **by_id = malloc(count * sizeof *by_id);
    if (!by_id)
        return BENCH_ENOMEM;
    for (size_t i = 0; i < count; i++)
        by_id[i] = &v[i];
    qsort(by_id, count, sizeof *by_id, cmp_id_of);
    int rc = 0;
    for (size_t i = 1; i < count && rc == 0; i++)
        if (strcmp(by_id[i - 1]->id, by_id[i]->id) == 0) {
            const bench__instance *a = by_id[i - 1], *b = by_id[i];
            if (a->desc == b->desc)
                bench__msg(msg, msglen, "benchmark id '%s' is listed twice by %s:%d's %s", a->id,
                           a->desc->file, a->desc->line, a->desc->args ? ".args" : ".params");
            else
                bench__msg(msg, msglen, "benchmark id '%s' is registered twice (%s:%d and %s:%d)",
                           a->id, a->desc->file, a->desc->line, b->desc->file, b->desc->line);
            rc = BENCH_EDUP;
        }
    free(by_id);
    return rc;
}

int bench__registry_list(bench__instance **out, size_t *n, char *msg, size_t msglen)
{
    *out = NULL;
    *n = 0;
    for (bench__node *a = group_head; a; a = a->next)
        for (bench__node *b = a->next; b; b = b->next) {
            const bench_group_desc *g = group_of(a), *h = group_of(b);
            if (!g || !h)
                return BENCH_ENOMEM;
            if (strcmp(g->name, h->name) == 0) {
                bench__msg(msg, msglen, "group '%s' has more than one BENCH_GROUP", g->name);
                return BENCH_EDUP;
            }
        }

    bench__instance *v = NULL;
    size_t count = 0, cap = 0;
    for (bench__node *node = registry_head; node; node = node->next) {
        const bench_desc *d = desc_of(node);
        if (!d) {
            free(v);
            return BENCH_ENOMEM;
        }
        const bench_group_desc *grp = NULL;
        for (bench__node *m = group_head; m; m = m->next) {
            const bench_group_desc *g = group_of(m);
            if (g && strcmp(g->name, d->group) == 0)
                grp = g;
        }
        int rc = add_instances(&v, &cap, &count, d, grp, msg, msglen);
        if (rc) {
            free(v);
            return rc;
        }
    }
    if (count == 0)
        return 0;
    qsort(v, count, sizeof *v, cmp_instance);
    int rc = unique_ids(v, count, msg, msglen);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = count;
    return 0;
}
