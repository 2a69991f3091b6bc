/*
 * Top-k cosine similarity, for one query or a batch. Candidates are scored a block at a time by
 * the active dot kernel (one query: a streaming read of the N x D block; a batch: a blocked,
 * GEMM-like kernel that reads each block of rows once for a block of queries) and offered to a
 * bounded heap kept in the caller's hits[] array, whose root is the worst hit kept so far; a final
 * heapsort leaves hits[] best first. The batch fuses each multiply-add of its dot products (FMA),
 * the single query does not, so their scores agree to a stated tolerance, not in every bit
 * (docs/workloads.md). Invariant: the ranking is the total order "score descending, then id
 * ascending", so the result never depends on the scan order, the batching or on which SIMD path
 * computed the (path-independent) scores.
 */
#include <math.h>
#include <stdlib.h>

#include "wl_internal.h"

/* Candidates scored per kernel call: 1 KiB of scores, small enough to stay in L1. */
#define SCORE_BLOCK 256

/* 1 if a ranks strictly below b: lower score, or equal score and higher id. */
static inline int hit_worse(wl_hit a, wl_hit b)
{
    return a.score < b.score || (a.score == b.score && a.id > b.id);
}

/* Restores the heap (root = worst) below position i of h[0..n). */
static void sift_down(wl_hit *h, size_t i, size_t n)
{
    for (;;) {
        size_t l = 2 * i + 1, worst = i;
        if (l < n && hit_worse(h[l], h[worst]))
            worst = l;
        if (l + 1 < n && hit_worse(h[l + 1], h[worst]))
            worst = l + 1;
        if (worst == i)
            return;
        wl_hit t = h[i];
        h[i] = h[worst];
        h[worst] = t;
        i = worst;
    }
}

static void sift_up(wl_hit *h, size_t i)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!hit_worse(h[i], h[parent]))
            return;
        wl_hit t = h[i];
        h[i] = h[parent];
        h[parent] = t;
        i = parent;
    }
}

/* cos = dot / (|q| |c|), 0 for a zero denominator or a NaN quotient (see wl_similarity.h). */
static inline float cosine(float dot, float qnorm, float cnorm)
{
    float den = qnorm * cnorm;
    if (den == 0.0f)
        return 0.0f;
    float s = dot / den;
    return isnan(s) ? 0.0f : s;
}

/*
 * s[i] = cosine(s[i], qnorm, cnorm[i]) for i < m, written so the compiler vectorises it (a
 * division by 0 gives inf or NaN without trapping, and is then replaced): the same correctly
 * rounded operations as cosine(), so the same bits, at a fraction of the cost of scalar divisions.
 */
static void cosines(float *s, float qnorm, const float *cnorm, size_t m)
{
    for (size_t i = 0; i < m; i++) {
        float den = qnorm * cnorm[i];
        float x = s[i] / den;
        s[i] = (den == 0.0f || x != x) ? 0.0f : x;
    }
}

/* Offers hit h to the heap hits[0..*filled) of at most keep hits. */
static inline void insert(wl_hit *hits, size_t *filled, size_t keep, wl_hit h)
{
    if (*filled < keep) {
        hits[*filled] = h;
        sift_up(hits, *filled);
        (*filled)++;
    } else if (hit_worse(hits[0], h)) {
        hits[0] = h;
        sift_down(hits, 0, *filled);
    }
}

/* Heapsort: moving the worst remaining hit to the end leaves hits[] best first. */
static void finish(wl_hit *hits, size_t filled)
{
    for (size_t end = filled; end > 1; end--) {
        wl_hit t = hits[0];
        hits[0] = hits[end - 1];
        hits[end - 1] = t;
        sift_down(hits, 0, end - 1);
    }
}

/* The argument checks both entry points share (see wl_similarity.h). */
static int check_candidates(const wl_candidates *c)
{
    size_t n = c->count, d = c->dim;
    if (n > WL_MAX_NODES)
        return WL_E_OVERFLOW;
    if (d > 0 && n > SIZE_MAX / d)
        return WL_E_OVERFLOW;
    if (n > 0 && (c->norms == NULL || (d > 0 && c->vectors == NULL)))
        return WL_E_INVAL;
    return 0;
}

WL__NOINLINE int wl_similarity_topk(const wl_candidates *c, const float *query, size_t k,
                                    wl_hit *hits, size_t *hit_count)
{
    if (c == NULL || hit_count == NULL)
        return WL_E_INVAL;
    int rc = check_candidates(c);
    if (rc != 0)
        return rc;
    size_t n = c->count, d = c->dim;
    if ((k > 0 && hits == NULL) || (d > 0 && query == NULL))
        return WL_E_INVAL;

    const wl__kernels *kern = wl__kernels_active();
    size_t keep = k < n ? k : n, filled = 0;
    float qnorm = d > 0 ? sqrtf(kern->dot(query, query, d)) : 0.0f;
    float dots[SCORE_BLOCK];

    for (size_t base = 0; base < n && keep > 0; base += SCORE_BLOCK) {
        size_t m = n - base < SCORE_BLOCK ? n - base : SCORE_BLOCK;
        if (d > 0) {
            kern->dots(query, c->vectors + base * d, m, d, dots);
        } else {
            for (size_t i = 0; i < m; i++)
                dots[i] = 0.0f;
        }
        for (size_t i = 0; i < m; i++) {
            wl_hit h = {.id = (uint32_t)(base + i),
                        .score = cosine(dots[i], qnorm, c->norms[base + i])};
            insert(hits, &filled, keep, h);
        }
    }
    finish(hits, filled);
    *hit_count = filled;
    return 0;
}

/*
 * Candidate rows scored per kernel call of the batch: ROW_BLOCK rows (192 KiB at D = 768) plus a
 * query block (the same again) stay in a 512 KiB L2 while every query triple of the block passes
 * over the rows, so a row crosses from memory once per query block.
 */
#define ROW_BLOCK 64

WL__NOINLINE int wl_similarity_topk_batch(const wl_candidates *c, const float *queries, size_t nq,
                                          size_t k, wl_hit *hits, size_t *hit_counts)
{
    if (c == NULL || (nq > 0 && hit_counts == NULL))
        return WL_E_INVAL;
    int rc = check_candidates(c);
    if (rc != 0)
        return rc;
    size_t n = c->count, d = c->dim;
    if (nq == 0)
        return 0;
    if ((k > 0 && hits == NULL) || (d > 0 && queries == NULL))
        return WL_E_INVAL;
    if ((d > 0 && nq > SIZE_MAX / d) || (k > 0 && nq > SIZE_MAX / k))
        return WL_E_OVERFLOW;

    const wl__kernels *kern = wl__kernels_active();
    size_t keep = k < n ? k : n;
    float *qnorm = malloc(nq * sizeof(float));
    float *dots = malloc((size_t)WL_SIMILARITY_QUERY_BLOCK * ROW_BLOCK * sizeof(float));
    if (qnorm == NULL || dots == NULL) {
        free(qnorm);
        free(dots);
        return WL_E_NOMEM;
    }
    for (size_t a = 0; a < nq; a++) {
        const float *q = queries + a * d;
        qnorm[a] = d > 0 ? sqrtf(kern->dot(q, q, d)) : 0.0f;
        hit_counts[a] = 0;
    }
    for (size_t qb = 0; qb < nq && keep > 0; qb += WL_SIMILARITY_QUERY_BLOCK) {
        size_t nb = nq - qb < WL_SIMILARITY_QUERY_BLOCK ? nq - qb : WL_SIMILARITY_QUERY_BLOCK;
        for (size_t base = 0; base < n; base += ROW_BLOCK) {
            size_t m = n - base < ROW_BLOCK ? n - base : ROW_BLOCK;
            size_t next = base + m, next_m = n - next < ROW_BLOCK ? n - next : ROW_BLOCK;
            const float *rows = c->vectors + base * d;
            if (d == 0) {
                for (size_t i = 0; i < nb * ROW_BLOCK; i++)
                    dots[i] = 0.0f;
            } else {
                /* Fused dot products, for any nb: a query's scores never depend on its block. */
                kern->dots_multi(queries + qb * d, nb, rows, m, d, dots, ROW_BLOCK,
                                 next < n ? c->vectors + next * d : NULL, next_m);
            }
            for (size_t a = 0; a < nb; a++) {
                wl_hit *h = hits + (qb + a) * k;
                size_t *filled = &hit_counts[qb + a];
                float *score = dots + a * ROW_BLOCK;
                cosines(score, qnorm[qb + a], c->norms + base, m);
                for (size_t i = 0; i < m; i++) {
                    wl_hit x = {.id = (uint32_t)(base + i), .score = score[i]};
                    insert(h, filled, keep, x);
                }
            }
        }
    }
    for (size_t a = 0; a < nq && keep > 0; a++)
        finish(hits + a * k, hit_counts[a]);
    free(qnorm);
    free(dots);
    return 0;
}
