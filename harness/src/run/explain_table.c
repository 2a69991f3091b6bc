/*
 * explain_table.c: what both modes of --explain share. The table of functions by name (an open
 * addressing hash of rows, each with its counts per side and slot), the ranking that names the
 * functions whose difference is beyond noise, largest first, and the private temporary folder
 * a profile's files live in while it is read. It calls no other file of --explain.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "run/explain_int.h"

/* ---- functions by name ---- */

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

void bench__explain_table_free(bench__explain_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->rows[i].name);
    free(t->rows);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* The row of `name`, made when new; -1 when out of memory. */
long bench__explain_table_row(bench__explain_table *t, const char *name)
{
    if (2 * (t->n + 1) > t->nslots) {
        size_t ns = t->nslots ? 2 * t->nslots : 1024;
        size_t *slots = calloc(ns, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < t->n; i++) {
            size_t h = (size_t)hash_name(t->rows[i].name) & (ns - 1);
            while (slots[h])
                h = (h + 1) & (ns - 1);
            slots[h] = i + 1;
        }
        free(t->slots);
        t->slots = slots;
        t->nslots = ns;
    }
    size_t h = (size_t)hash_name(name) & (t->nslots - 1);
    while (t->slots[h]) {
        if (strcmp(t->rows[t->slots[h] - 1].name, name) == 0)
            return (long)(t->slots[h] - 1);
        h = (h + 1) & (t->nslots - 1);
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 256;
        bench__explain_row *rows = realloc(t->rows, nc * sizeof *rows);
        if (!rows)
            return -1;
        t->rows = rows;
        t->cap = nc;
    }
    bench__explain_row *r = &t->rows[t->n];
    memset(r, 0, sizeof *r);
    if (!(r->name = strdup(name)))
        return -1;
    t->slots[h] = ++t->n;
    return (long)(t->n - 1);
}

/* ---- a temporary folder ---- */

int bench__explain_temp_make(char *dir, size_t len, char *msg, size_t msglen)
{
    const char *tmp = getenv("TMPDIR");
    bench__msg(dir, len, "%s/bench-explain-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        bench__msg(msg, msglen, "cannot create a temporary folder in %s: %s",
                   tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return BENCH_EIO;
    }
    return 0;
}

/* ---- functions beyond noise, ranked ---- */

static int by_size(const void *x, const void *y)
{
    double a = fabs(((const bench__explain_rank *)x)->d);
    double b = fabs(((const bench__explain_rank *)y)->d);
    return a < b ? 1 : a > b ? -1 : 0;
}

/* Names the functions beyond noise (rank[0..n) all candidates; `beyond` picks), largest first. */
void bench__explain_name_functions(bench__explanation *e, const bench__explain_table *t,
                                   bench__explain_rank *rank, size_t n)
{
    qsort(rank, n, sizeof *rank, by_size);
    e->nbeyond = n;
    double sum = 0;
    for (size_t i = 0; i < n && e->nfns < BENCH__EXPLAIN_TOP; i++) {
        bench__explained_fn *f = &e->fns[e->nfns++];
        bench__msg(f->name, sizeof f->name, "%s", t->rows[rank[i].row].name);
        f->self_old = rank[i].old_v;
        f->self_new = rank[i].new_v;
        f->self_delta = rank[i].d;
        f->self_sd = rank[i].sd;
        f->total_delta = rank[i].total_d;
        sum += rank[i].d;
    }
    e->attributed = e->change != 0 ? sum / e->change : NAN;
}
