/*
 * Synchronous, fire-once spreading activation from one source or a set of them (definition in
 * wl_activation.h and docs/workloads.md). Per iteration, the frontier (nodes firing now, ascending
 * id) pushes (decay * a[u]) * w into the incoming[] buffer along its CSR edges and marks each
 * receiver in a bitmap; then the bitmap is scanned in ascending id, each receiver's activation is
 * updated once, and receivers that reach the threshold without having fired form the next frontier,
 * already sorted. Invariant between calls: incoming[] is all zero and the bitmap is clear, so a
 * call only resets the O(N) activation and fired arrays.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wl_internal.h"

struct wl_activation_ws {
    size_t capacity;   /* nodes this workspace can serve */
    float *incoming;   /* capacity floats, all zero between calls */
    uint8_t *fired;    /* capacity flags */
    uint64_t *touched; /* bitmap of nodes that received input this iteration; clear between calls */
    uint32_t *frontier; /* capacity ids firing this iteration */
    uint32_t *next;     /* capacity ids firing next iteration */
};

void wl_activation_ws_free(wl_activation_ws *ws)
{
    if (ws == NULL)
        return;
    free(ws->incoming);
    free(ws->fired);
    free(ws->touched);
    free(ws->frontier);
    free(ws->next);
    free(ws);
}

int wl_activation_ws_new(wl_activation_ws **out, size_t node_count)
{
    if (out == NULL)
        return WL_E_INVAL;
    *out = NULL;
    if (node_count > WL_MAX_NODES)
        return WL_E_OVERFLOW;
    size_t n = node_count > 0 ? node_count : 1;
    size_t words = (n + 63) / 64;
    wl_activation_ws *ws = calloc(1, sizeof(*ws));
    if (ws == NULL)
        return WL_E_NOMEM;
    ws->capacity = node_count;
    ws->incoming = calloc(n, sizeof(float));
    ws->fired = calloc(n, 1);
    ws->touched = calloc(words, sizeof(uint64_t));
    ws->frontier = malloc(n * sizeof(uint32_t));
    ws->next = malloc(n * sizeof(uint32_t));
    if (ws->incoming == NULL || ws->fired == NULL || ws->touched == NULL ||
        ws->frontier == NULL || ws->next == NULL) {
        wl_activation_ws_free(ws);
        return WL_E_NOMEM;
    }
    *out = ws;
    return 0;
}

/* The propagation proper; parameters are already validated (every source < N) and ws is
 * large enough. */
static void spread(const wl_graph *g, const uint32_t *sources, size_t nsources,
                   const wl_activation_params *p, wl_activation_ws *ws, float *act,
                   wl_activation_result *res)
{
    const uint32_t *off = g->offsets, *tgt = g->targets;
    const float *w = g->weights;
    const float decay = p->decay, threshold = p->threshold;
    float *incoming = ws->incoming;
    uint8_t *fired = ws->fired;
    uint64_t *touched = ws->touched;
    uint32_t *frontier = ws->frontier, *next = ws->next;
    size_t n = g->node_count, nfront = 0;
    wl_activation_result r = {0, 0, 0};

    memset(act, 0, n * sizeof(float));
    memset(fired, 0, n);
    /* The first frontier: the sources in ascending id, each once, through the bitmap (clear
     * again afterwards, as between calls). */
    size_t lo_src = SIZE_MAX, hi_src = 0;
    for (size_t i = 0; i < nsources; i++) {
        uint32_t s = sources[i];
        act[s] = 1.0f;
        touched[s >> 6] |= UINT64_C(1) << (s & 63);
        lo_src = (s >> 6) < lo_src ? (s >> 6) : lo_src;
        hi_src = (s >> 6) > hi_src ? (s >> 6) : hi_src;
    }
    for (size_t word = lo_src; word <= hi_src && lo_src != SIZE_MAX; word++) {
        uint64_t bits = touched[word];
        touched[word] = 0;
        while (bits != 0) {
            uint32_t v = (uint32_t)(word * 64 + (size_t)__builtin_ctzll(bits));
            bits &= bits - 1;
            if (act[v] >= threshold)
                frontier[nfront++] = v;
        }
    }

    while (nfront > 0 && r.iterations < p->max_iterations) {
        r.iterations++;
        size_t lo_word = SIZE_MAX, hi_word = 0;
        for (size_t f = 0; f < nfront; f++) {
            uint32_t u = frontier[f];
            fired[u] = 1;
            /* Output computed from the activation at the start of the iteration: act[] is not
             * written until every frontier node has pushed. */
            float out = decay * act[u];
            for (uint32_t e = off[u]; e < off[u + 1]; e++) {
                uint32_t v = tgt[e];
                incoming[v] += out * w[e];
                size_t word = v >> 6;
                touched[word] |= UINT64_C(1) << (v & 63);
                lo_word = word < lo_word ? word : lo_word;
                hi_word = word > hi_word ? word : hi_word;
            }
            r.edges_traversed += off[u + 1] - off[u];
        }
        r.fired += (uint32_t)nfront;

        size_t nnext = 0;
        for (size_t word = lo_word; word <= hi_word && lo_word != SIZE_MAX; word++) {
            uint64_t bits = touched[word];
            touched[word] = 0;
            while (bits != 0) {
                uint32_t v = (uint32_t)(word * 64 + (size_t)__builtin_ctzll(bits));
                bits &= bits - 1;
                float a = act[v] + incoming[v];
                incoming[v] = 0.0f;
                a = a < 1.0f ? a : 1.0f;
                act[v] = a;
                if (!fired[v] && a >= threshold)
                    next[nnext++] = v;
            }
        }
        uint32_t *t = frontier;
        frontier = next;
        next = t;
        nfront = nnext;
    }
    if (res != NULL)
        *res = r;
}

WL__NOINLINE int wl_activation_spread_multi(const wl_graph *g, const uint32_t *sources,
                                            size_t nsources, const wl_activation_params *p,
                                            wl_activation_ws *ws, float *activation,
                                            wl_activation_result *res)
{
    if (g == NULL || p == NULL || activation == NULL || (sources == NULL && nsources > 0))
        return WL_E_INVAL;
    for (size_t i = 0; i < nsources; i++)
        if (sources[i] >= g->node_count)
            return WL_E_INVAL;
    if (!(p->decay >= 0.0f && p->decay <= 1.0f) || !isfinite(p->threshold) ||
        !(p->threshold > 0.0f))
        return WL_E_INVAL;
    if (ws != NULL) {
        if (ws->capacity < g->node_count)
            return WL_E_INVAL;
        spread(g, sources, nsources, p, ws, activation, res);
        return 0;
    }
    wl_activation_ws *own = NULL;
    int rc = wl_activation_ws_new(&own, g->node_count);
    if (rc != 0)
        return rc;
    spread(g, sources, nsources, p, own, activation, res);
    wl_activation_ws_free(own);
    return 0;
}

WL__NOINLINE int wl_activation_spread(const wl_graph *g, uint32_t source,
                                      const wl_activation_params *p, wl_activation_ws *ws,
                                      float *activation, wl_activation_result *res)
{
    if (g == NULL || source >= g->node_count)
        return WL_E_INVAL;
    return wl_activation_spread_multi(g, &source, 1, p, ws, activation, res);
}
