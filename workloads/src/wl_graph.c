/*
 * Construction of the memory graph and of the plain candidate matrix. Everything is allocated
 * before anything is written (so an impossible size fails fast with WL_E_NOMEM), filled from
 * independent PRNG streams of one seed (1: embeddings, 2: ages and strengths, 3: edges), and then
 * never modified. Invariants: offsets[0] = 0, offsets[N] = E, offsets non-decreasing, every
 * target < N; for each source, CSR keeps edges in generation (or list) order; norms[i] equals
 * sqrtf(wl_dot(row i, row i, D)).
 */
#define _DEFAULT_SOURCE /* madvise */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wl_internal.h"

struct wl_matrix {
    size_t count; /* N rows */
    size_t dim;   /* D floats per row */
    float *data;  /* N*D floats, WL__ALIGN-aligned, or NULL when N*D is 0 */
    float *norms; /* N floats */
};

void *wl__alloc_aligned(size_t bytes)
{
    if (bytes > SIZE_MAX - WL__ALIGN)
        return NULL;
    size_t rounded = (bytes + WL__ALIGN - 1) / WL__ALIGN * WL__ALIGN;
    if (rounded == 0)
        rounded = WL__ALIGN;
    return aligned_alloc(WL__ALIGN, rounded);
}

/*
 * A candidate matrix's rows: wl__alloc_aligned's block, its whole pages faulted in at once
 * (MADV_POPULATE_WRITE, Linux 5.14) instead of one page fault at a time as the fill first
 * writes each. The suite builds a 300 MB matrix in every worker process of two benchmarks: 75,000
 * faults, about half of the build's CPU time in the kernel. In one call the kernel allocates and
 * zeroes the same 4 KiB pages without a trap per page: a process's setup took 190-310 ms instead
 * of 208-331 ms (medians over a run's 20 processes, 7 runs alternating with the faulting build).
 * The advice is a hint: refused (an older kernel, not Linux), the pages fault in as before; the
 * data never depend on it. Huge pages (MADV_HUGEPAGE) made the suite slower on a Firecracker
 * VM: fresh 2 MiB pages are guest memory the host has not backed yet (docs/measurement.md,
 * "Cost"). Graphs fault as before: workload/profiling_workload builds one in its timed loop.
 */
static void *alloc_rows(size_t bytes)
{
    void *p = wl__alloc_aligned(bytes);
#ifdef MADV_POPULATE_WRITE
    long size = sysconf(_SC_PAGESIZE); /* madvise takes whole pages */
    uintptr_t page = size > 0 ? (uintptr_t)size : 4096;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(page - 1);
    if (p != NULL && hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); /* a hint: refused, faults serve */
#endif
    return p;
}

/* Returns 0 and *bytes = count * elem, or WL_E_OVERFLOW if that plus alignment slack overflows. */
static int byte_count(size_t count, size_t elem, size_t *bytes)
{
    if (elem != 0 && count > (SIZE_MAX - WL__ALIGN) / elem)
        return WL_E_OVERFLOW;
    *bytes = count * elem;
    return 0;
}

/* Returns 0 and *bytes = count * dim * sizeof(float), or WL_E_OVERFLOW. */
static int matrix_bytes(size_t count, size_t dim, size_t *bytes)
{
    size_t elems;
    if (dim != 0 && count > SIZE_MAX / dim)
        return WL_E_OVERFLOW;
    elems = count * dim;
    return byte_count(elems, sizeof(float), bytes);
}

void wl__fill_embeddings(float *v, size_t count, size_t dim, uint64_t seed)
{
    wl_rng r;
    wl_rng_seed(&r, seed, 1);
    size_t total = count * dim;
    for (size_t i = 0; i < total; i++)
        v[i] = wl__rng_float_signed(&r);
}

int wl_norms_compute(const float *vectors, size_t count, size_t dim, float *norms)
{
    size_t bytes;
    int rc = matrix_bytes(count, dim, &bytes);
    if (rc != 0)
        return rc;
    if (count > 0 && (norms == NULL || (dim > 0 && vectors == NULL)))
        return WL_E_INVAL;
    const wl__kernels *k = wl__kernels_active();
    for (size_t i = 0; i < count; i++) {
        const float *row = dim > 0 ? vectors + i * dim : vectors;
        norms[i] = sqrtf(k->dot(row, row, dim));
    }
    return 0;
}

void wl_graph_free(wl_graph *g)
{
    if (g == NULL)
        return;
    free(g->embeddings);
    free(g->norms);
    free(g->ages);
    free(g->strengths);
    free(g->offsets);
    free(g->targets);
    free(g->weights);
    free(g);
}

/* Allocates a graph of n nodes, e edges and dimension d with every array uninitialised. */
static int graph_alloc(wl_graph **out, size_t n, size_t e, size_t d)
{
    size_t emb_bytes, node_bytes, off_bytes, edge_bytes;
    if (n > WL_MAX_NODES || e > WL_MAX_EDGES)
        return WL_E_OVERFLOW;
    int rc = matrix_bytes(n, d, &emb_bytes);
    if (rc == 0)
        rc = byte_count(n, sizeof(float), &node_bytes);
    if (rc == 0)
        rc = byte_count(n + 1, sizeof(uint32_t), &off_bytes);
    if (rc == 0)
        rc = byte_count(e, sizeof(float), &edge_bytes);
    if (rc != 0)
        return rc;

    wl_graph *g = calloc(1, sizeof(*g));
    if (g == NULL)
        return WL_E_NOMEM;
    g->node_count = n;
    g->edge_count = e;
    g->dim = d;
    if (emb_bytes > 0)
        g->embeddings = wl__alloc_aligned(emb_bytes);
    g->norms = wl__alloc_aligned(node_bytes);
    g->ages = wl__alloc_aligned(node_bytes);
    g->strengths = wl__alloc_aligned(node_bytes);
    g->offsets = wl__alloc_aligned(off_bytes);
    g->targets = wl__alloc_aligned(edge_bytes);
    g->weights = wl__alloc_aligned(edge_bytes);
    if ((emb_bytes > 0 && g->embeddings == NULL) || g->norms == NULL || g->ages == NULL ||
        g->strengths == NULL || g->offsets == NULL || g->targets == NULL || g->weights == NULL) {
        wl_graph_free(g);
        return WL_E_NOMEM;
    }
    *out = g;
    return 0;
}

/* Fills offsets/targets/weights from an edge list by a stable counting sort on the source.
 * Returns 0 or WL_E_NOMEM (the cursor array). */
static int csr_build(wl_graph *g, const wl_edge *edges)
{
    size_t n = g->node_count, e = g->edge_count;
    uint32_t *cursor = malloc((n + 1) * sizeof(uint32_t));
    if (cursor == NULL)
        return WL_E_NOMEM;
    memset(g->offsets, 0, (n + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < e; i++)
        g->offsets[edges[i].src + 1]++;
    for (size_t u = 0; u < n; u++)
        g->offsets[u + 1] += g->offsets[u];
    memcpy(cursor, g->offsets, (n + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < e; i++) {
        uint32_t slot = cursor[edges[i].src]++;
        g->targets[slot] = edges[i].dst;
        g->weights[slot] = edges[i].weight;
    }
    free(cursor);
    return 0;
}

void wl_graph_params_reference(wl_graph_params *p, uint64_t seed)
{
    p->seed = seed;
    p->node_count = 10000;
    p->edge_count = 50000;
    p->dim = 768;
    p->max_age_days = 365.0f;
}

WL__NOINLINE int wl_graph_new(wl_graph **out, const wl_graph_params *p)
{
    if (out == NULL)
        return WL_E_INVAL;
    *out = NULL;
    if (p == NULL || !isfinite(p->max_age_days) || p->max_age_days < 0.0f)
        return WL_E_INVAL;
    size_t n = p->node_count, e = p->edge_count, d = p->dim;
    if (n > WL_MAX_NODES || e > WL_MAX_EDGES)
        return WL_E_OVERFLOW;
    if (e > 0 && n < 2)
        return WL_E_INVAL;
    size_t list_bytes;
    int rc = byte_count(e, sizeof(wl_edge), &list_bytes);
    if (rc != 0)
        return rc;

    wl_graph *g = NULL;
    rc = graph_alloc(&g, n, e, d);
    if (rc != 0)
        return rc;
    wl_edge *list = malloc(list_bytes > 0 ? list_bytes : 1);
    if (list == NULL) {
        wl_graph_free(g);
        return WL_E_NOMEM;
    }

    if (g->embeddings != NULL)
        wl__fill_embeddings(g->embeddings, n, d, p->seed);

    wl_rng r;
    wl_rng_seed(&r, p->seed, 2);
    for (size_t i = 0; i < n; i++) {
        g->ages[i] = wl__rng_float(&r) * p->max_age_days;
        g->strengths[i] = 1.0f - wl__rng_float(&r);
    }

    wl_rng_seed(&r, p->seed, 3);
    for (size_t i = 0; i < e; i++) {
        uint32_t src = (uint32_t)wl_rng_below(&r, n);
        uint32_t dst = (uint32_t)wl_rng_below(&r, n - 1);
        list[i].src = src;
        list[i].dst = dst >= src ? dst + 1 : dst; /* uniform over the other n-1 nodes */
        list[i].weight = 1.0f - wl__rng_float(&r);
    }
    rc = csr_build(g, list);
    free(list);
    if (rc == 0)
        rc = wl_norms_compute(g->embeddings, n, d, g->norms);
    if (rc != 0) {
        wl_graph_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

int wl_graph_from_edges(wl_graph **out, size_t node_count, const wl_edge *edges,
                        size_t edge_count)
{
    if (out == NULL)
        return WL_E_INVAL;
    *out = NULL;
    if (node_count > WL_MAX_NODES || edge_count > WL_MAX_EDGES)
        return WL_E_OVERFLOW;
    if (edge_count > 0 && edges == NULL)
        return WL_E_INVAL;
    for (size_t i = 0; i < edge_count; i++) {
        const wl_edge *ed = &edges[i];
        if (ed->src >= node_count || ed->dst >= node_count || !isfinite(ed->weight) ||
            ed->weight < 0.0f)
            return WL_E_INVAL;
    }
    wl_graph *g = NULL;
    int rc = graph_alloc(&g, node_count, edge_count, 0);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < node_count; i++) {
        g->norms[i] = 0.0f;
        g->ages[i] = 0.0f;
        g->strengths[i] = 1.0f;
    }
    rc = csr_build(g, edges);
    if (rc != 0) {
        wl_graph_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

size_t wl_graph_node_count(const wl_graph *g)
{
    return g->node_count;
}

size_t wl_graph_edge_count(const wl_graph *g)
{
    return g->edge_count;
}

size_t wl_graph_dim(const wl_graph *g)
{
    return g->dim;
}

const float *wl_graph_embeddings(const wl_graph *g)
{
    return g->embeddings;
}

const float *wl_graph_norms(const wl_graph *g)
{
    return g->norms;
}

const float *wl_graph_ages(const wl_graph *g)
{
    return g->ages;
}

const float *wl_graph_strengths(const wl_graph *g)
{
    return g->strengths;
}

wl_csr wl_graph_csr(const wl_graph *g)
{
    wl_csr c = {
        .node_count = g->node_count,
        .edge_count = g->edge_count,
        .offsets = g->offsets,
        .targets = g->targets,
        .weights = g->weights,
    };
    return c;
}

wl_candidates wl_graph_candidates(const wl_graph *g)
{
    wl_candidates c = {
        .vectors = g->embeddings, .norms = g->norms, .count = g->node_count, .dim = g->dim};
    return c;
}

/*
 * Fills a matrix's rows from stream 1 of the seed, the same values as wl__fill_embeddings, and
 * each row's norm right after the row is written, while it is still in the L1 cache: one pass
 * over the memory instead of two (the norms are the same, sqrtf of the same dot kernel on the
 * same row: wl_norms_compute's). The suite builds a 300 MB matrix in every worker process.
 */
static void matrix_fill(wl_matrix *m, uint64_t seed)
{
    const wl__kernels *k = wl__kernels_active();
    wl_rng r;
    wl_rng_seed(&r, seed, 1);
    for (size_t i = 0; i < m->count; i++) {
        float *row = m->data + i * m->dim;
        for (size_t j = 0; j < m->dim; j++)
            row[j] = wl__rng_float_signed(&r);
        m->norms[i] = sqrtf(k->dot(row, row, m->dim));
    }
}

int wl_matrix_new(wl_matrix **out, size_t count, size_t dim, uint64_t seed)
{
    if (out == NULL)
        return WL_E_INVAL;
    *out = NULL;
    size_t bytes, norm_bytes;
    if (count > WL_MAX_NODES)
        return WL_E_OVERFLOW;
    int rc = matrix_bytes(count, dim, &bytes);
    if (rc == 0)
        rc = byte_count(count, sizeof(float), &norm_bytes);
    if (rc != 0)
        return rc;
    wl_matrix *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return WL_E_NOMEM;
    m->count = count;
    m->dim = dim;
    if (bytes > 0)
        m->data = alloc_rows(bytes);
    m->norms = wl__alloc_aligned(norm_bytes);
    if ((bytes > 0 && m->data == NULL) || m->norms == NULL) {
        wl_matrix_free(m);
        return WL_E_NOMEM;
    }
    if (m->data != NULL) {
        matrix_fill(m, seed);
    } else {
        rc = wl_norms_compute(m->data, count, dim, m->norms);
        if (rc != 0) {
            wl_matrix_free(m);
            return rc;
        }
    }
    *out = m;
    return 0;
}

void wl_matrix_free(wl_matrix *m)
{
    if (m == NULL)
        return;
    free(m->data);
    free(m->norms);
    free(m);
}

wl_candidates wl_matrix_candidates(const wl_matrix *m)
{
    wl_candidates c = {.vectors = m->data, .norms = m->norms, .count = m->count, .dim = m->dim};
    return c;
}
