/*
 * Top-k cosine similarity. Candidates are scored a block at a time by the active dot kernel (a
 * streaming read of the N x D block) and offered to a bounded heap kept in the caller's hits[]
 * array, whose root is the worst hit kept so far; a final heapsort leaves hits[] best first.
 * Invariant: the ranking is the total order "score descending, then id ascending", so the result
 * never depends on the scan order or on which SIMD path computed the (identical) scores.
 */
#include <math.h>

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

WL__NOINLINE int wl_similarity_topk(const wl_candidates *c, const float *query, size_t k,
                                    wl_hit *hits, size_t *hit_count)
{
    if (c == NULL || hit_count == NULL)
        return WL_E_INVAL;
    size_t n = c->count, d = c->dim;
    if (n > WL_MAX_NODES)
        return WL_E_OVERFLOW;
    if (d > 0 && n > SIZE_MAX / d)
        return WL_E_OVERFLOW;
    if ((k > 0 && hits == NULL) || (d > 0 && query == NULL) ||
        (n > 0 && (c->norms == NULL || (d > 0 && c->vectors == NULL))))
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
            if (filled < keep) {
                hits[filled] = h;
                sift_up(hits, filled);
                filled++;
            } else if (hit_worse(hits[0], h)) {
                hits[0] = h;
                sift_down(hits, 0, filled);
            }
        }
    }
    /* Heapsort: moving the worst remaining hit to the end leaves hits[] best first. */
    for (size_t end = filled; end > 1; end--) {
        wl_hit t = hits[0];
        hits[0] = hits[end - 1];
        hits[end - 1] = t;
        sift_down(hits, 0, end - 1);
    }
    *hit_count = filled;
    return 0;
}
