/*
 * registry.c: the list of registered benchmarks and groups.
 *
 * BENCH_FN and BENCH_GROUP constructors push static descriptors onto two intrusive lists before
 * main(); nothing is allocated then. At run time the lists are expanded into instances (one per
 * parameter value) and sorted by id, so output and baselines do not depend on link order.
 * Invariant: ids are unique; a duplicate is reported as an error, never silently merged.
 */
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/registry.h"

static bench_desc *registry_head;
static bench_group_desc *group_head;

void bench__register(bench_desc *d)
{
    d->next = registry_head;
    registry_head = d;
}

void bench__register_group(bench_group_desc *g)
{
    g->next = group_head;
    group_head = g;
}

const char *bench__registry_build_revision(void)
{
    const char *rev = NULL;
    for (const bench_desc *d = registry_head; d; d = d->next) {
        if (!(d->build_flags & BENCH_BUILD_RECORDED))
            continue;
        if (!d->build_revision || !d->build_revision[0])
            return NULL; /* a file built without a known revision: the program's is unknown */
        if (rev && strcmp(rev, d->build_revision) != 0)
            return NULL; /* files built from different revisions: no one revision */
        rev = d->build_revision;
    }
    return rev;
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
    for (const bench_group_desc *g = group_head; g; g = g->next)
        for (const bench_group_desc *h = g->next; h; h = h->next)
            if (strcmp(g->name, h->name) == 0) {
                bench__msg(msg, msglen, "group '%s' has more than one BENCH_GROUP", g->name);
                return BENCH_EDUP;
            }

    size_t count = 0;
    for (const bench_desc *d = registry_head; d; d = d->next)
        count += d->nparams ? d->nparams : 1;
    if (count == 0)
        return 0;
    bench__instance *v = calloc(count, sizeof *v);
    if (!v)
        return BENCH_ENOMEM;

    size_t k = 0;
    for (const bench_desc *d = registry_head; d; d = d->next) {
        const bench_group_desc *grp = NULL;
        for (const bench_group_desc *g = group_head; g; g = g->next)
            if (strcmp(g->name, d->group) == 0)
                grp = g;
        size_t np = d->nparams ? d->nparams : 1;
        for (size_t p = 0; p < np; p++, k++) {
            bench__instance *in = &v[k];
            in->desc = d;
            in->group = grp;
            in->has_param = d->nparams > 0;
            in->param = in->has_param ? d->params[p] : 0;
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
