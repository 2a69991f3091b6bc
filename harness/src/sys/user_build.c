/*
 * user_build.c: the builds of the user's benchmark files (see user_build.h), grouped from the
 * descriptors BENCH_FN filled in the user's translation units, and the warning about files
 * compiled without optimisation, which goes with the context's other warnings: on stderr before
 * the run, in context.warnings, and under the Markdown table.
 */
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/registry.h"
#include "sys/context.h"
#include "sys/user_build.h"

static bool same_build(const bench__user_build *u, const bench_desc *d)
{
    const char *compiler = d->build_compiler ? d->build_compiler : "";
    const char *revision = d->build_revision ? d->build_revision : "";
    return u->flags == d->build_flags && strcmp(u->file, d->file) == 0 &&
           strcmp(u->compiler, compiler) == 0 && strcmp(u->revision, revision) == 0;
}

int bench__user_builds_init(bench__user_builds *out, const bench__instance *all,
                            const bool *selected, size_t n)
{
    memset(out, 0, sizeof *out);
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += (!selected || selected[i]) && (all[i].desc->build_flags & BENCH_BUILD_RECORDED);
    if (count == 0)
        return 0;
    out->v = calloc(count, sizeof *out->v);
    out->ids = calloc(count, sizeof *out->ids);
    if (!out->v || !out->ids) {
        bench__user_builds_destroy(out);
        return BENCH_ENOMEM;
    }
    /* First the entries and their sizes, then each entry's ids in one shared array. */
    size_t *which = calloc(n ? n : 1, sizeof *which);
    if (!which) {
        bench__user_builds_destroy(out);
        return BENCH_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const bench_desc *d = all[i].desc;
        if ((selected && !selected[i]) || !(d->build_flags & BENCH_BUILD_RECORDED))
            continue;
        size_t k = 0;
        while (k < out->n && !same_build(&out->v[k], d))
            k++;
        if (k == out->n) {
            out->v[k].file = d->file ? d->file : "";
            out->v[k].compiler = d->build_compiler ? d->build_compiler : "";
            out->v[k].flags = d->build_flags;
            out->v[k].revision = d->build_revision ? d->build_revision : "";
            out->n++;
        }
        out->v[k].nids++;
        which[i] = k;
    }
    size_t off = 0;
    for (size_t k = 0; k < out->n; k++) {
        out->v[k].ids = out->ids + off;
        off += out->v[k].nids;
        out->v[k].nids = 0;
    }
    for (size_t i = 0; i < n; i++) {
        if ((selected && !selected[i]) || !(all[i].desc->build_flags & BENCH_BUILD_RECORDED))
            continue;
        bench__user_build *u = &out->v[which[i]];
        u->ids[u->nids++] = all[i].id;
    }
    free(which);
    return 0;
}

void bench__user_builds_destroy(bench__user_builds *b)
{
    free(b->v);
    free(b->ids);
    memset(b, 0, sizeof *b);
}

bool bench__user_build_unoptimised(const bench__user_build *u)
{
    return (u->flags & BENCH_BUILD_RECORDED) && !(u->flags & BENCH_BUILD_OPTIMIZE);
}

const char *bench__user_builds_warning(const bench__user_builds *b, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!b)
        return NULL;
    /* The distinct unoptimised files (a file is listed once even with two builds). */
    size_t nfiles = 0, shown = 0, at = 0;
    char names[120] = ""; /* the first three names that fit; the first one always, cut */
    for (size_t k = 0; k < b->n; k++) {
        if (!bench__user_build_unoptimised(&b->v[k]))
            continue;
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++)
            seen = bench__user_build_unoptimised(&b->v[j]) &&
                   strcmp(b->v[j].file, b->v[k].file) == 0;
        if (seen)
            continue;
        nfiles++;
        char esc[4 * 64 + 4];
        bench__escape(esc, sizeof esc, b->v[k].file);
        if (shown == 0 || (shown < 3 && at + strlen(esc) + 2 < sizeof names)) {
            bench__msg(names + at, sizeof names - at, "%s%s", shown ? ", " : "", esc);
            at += strlen(names + at);
            shown++;
        }
    }
    if (nfiles == 0)
        return NULL;
    char more[48] = "";
    if (nfiles > shown)
        bench__msg(more, sizeof more, " and %zu more file%s", nfiles - shown,
                   nfiles - shown == 1 ? "" : "s");
    bench__msg(buf, len,
               "benchmarks in %s%s were compiled without optimisation (-O0): timings do not "
               "represent an optimised build; fix: compile with -O2",
               names, more);
    return buf;
}

void bench__user_builds_attach(bench__context *c, const bench__user_builds *b)
{
    c->user_builds = b;
    char w[sizeof c->warnings[0]];
    if (bench__user_builds_warning(b, w, sizeof w) && c->nwarnings < BENCH__MAX_WARNINGS)
        bench__msg(c->warnings[c->nwarnings++], sizeof c->warnings[0], "%s", w);
}
