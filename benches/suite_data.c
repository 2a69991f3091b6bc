/*
 * suite_data.c: the candidate matrices the suite's benchmark files share (suite_data.h).
 */
#include <stdlib.h>

#include "suite_data.h"

enum { MAX_CACHED = 4 };

static struct {
    size_t count;
    wl_matrix *m;
} matrices[MAX_CACHED];

static void free_matrices(void)
{
    for (int i = 0; i < MAX_CACHED; i++)
        wl_matrix_free(matrices[i].m);
}

const wl_matrix *suite_matrix(size_t count, int *rc)
{
    for (int i = 0; i < MAX_CACHED; i++)
        if (matrices[i].m && matrices[i].count == count)
            return matrices[i].m;
    for (int i = 0; i < MAX_CACHED; i++)
        if (!matrices[i].m) {
            *rc = wl_matrix_new(&matrices[i].m, count, SUITE_DIM, SUITE_SEED);
            if (*rc != 0)
                return NULL;
            if (i == 0)
                atexit(free_matrices);
            matrices[i].count = count;
            return matrices[i].m;
        }
    *rc = WL_E_NOMEM; /* more sizes than slots */
    return NULL;
}
