/*
 * registry.c: the list of registered benchmarks and groups.
 *
 * BENCH_FN and BENCH_GROUP constructors push the static nodes of their descriptors onto two
 * lists before main(); nothing is allocated then, and the descriptors themselves are never
 * written. At run time the lists are expanded into instances (one per parameter value) and
 * sorted by id, so output and baselines do not depend on link order. A descriptor compiled with
 * an older header than this library's (its node's size is smaller) is read through a zeroed
 * full-size copy, so the fields it lacks read as "not set" (the ABI of bench.h).
 * Invariant: ids are unique; a duplicate is reported as an error, never silently merged.
 */
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
    return c;
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

    size_t count = 0;
    for (bench__node *node = registry_head; node; node = node->next) {
        const bench_desc *d = desc_of(node);
        if (!d)
            return BENCH_ENOMEM;
        count += d->nparams ? d->nparams : 1;
    }
    if (count == 0)
        return 0;
    bench__instance *v = calloc(count, sizeof *v);
    if (!v)
        return BENCH_ENOMEM;

    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t k = 0;
    for (bench__node *node = registry_head; node; node = node->next) {
        const bench_desc *d = desc_of(node);
        const bench_group_desc *grp = NULL;
        for (bench__node *m = group_head; m; m = m->next) {
            const bench_group_desc *g = group_of(m);
            if (g && strcmp(g->name, d->group) == 0)
                grp = g;
        }
        size_t np = d->nparams ? d->nparams : 1;
        for (size_t p = 0; p < np; p++, k++) {
            bench__instance *in = &v[k];
            in->desc = d;
            in->group = grp;
            in->has_param = d->nparams > 0;
            in->param = in->has_param ? d->params[p] : 0;
            in->threads = bench__threads_resolve(d->threads, cpus);
            int len = in->has_param
                          ? snprintf(in->id, sizeof in->id, "%s/%s/%lld", d->group, d->name,
                                     (long long)in->param)
                          : snprintf(in->id, sizeof in->id, "%s/%s", d->group, d->name);
            if (len < 0 || (size_t)len >= sizeof in->id) {
                bench__msg(msg, msglen, "benchmark id '%s/%s' is longer than %zu characters",
                           d->group, d->name, sizeof in->id - 1);
                free(v);
                return BENCH_EINVAL;
            }
        }
    }
    qsort(v, count, sizeof *v, cmp_instance);
    for (size_t i = 1; i < count; i++)
        if (strcmp(v[i - 1].id, v[i].id) == 0) {
            bench__msg(msg, msglen, "benchmark id '%s' is registered twice (%s:%d and %s:%d)",
                       v[i].id, v[i - 1].desc->file, v[i - 1].desc->line, v[i].desc->file,
                       v[i].desc->line);
            free(v);
            return BENCH_EDUP;
        }
    *out = v;
    *n = count;
    return 0;
}
