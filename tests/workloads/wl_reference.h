/*
 * wl_reference.h: the workload tests' reference for the library's documented float sums: element
 * j goes into partial sum p[j % 32], then the 32 partial sums are combined by a fixed tree. It is
 * written from the documentation alone, so that the tests compare the library bit for bit with
 * code that is not the library's (build with -ffp-contract=off, as the library is).
 */
#ifndef TESTS_WL_REFERENCE_H
#define TESTS_WL_REFERENCE_H

#include <stddef.h>

/* The fixed combining tree over the 32 partial sums. */
static inline float ref_combine(const float p[32])
{
    float s[8], t[4];
    for (int l = 0; l < 8; l++)
        s[l] = (p[l] + p[l + 8]) + (p[l + 16] + p[l + 24]);
    for (int l = 0; l < 4; l++)
        t[l] = s[l] + s[l + 4];
    return (t[0] + t[2]) + (t[1] + t[3]);
}

/* The documented dot product. */
static inline float ref_dot(const float *a, const float *b, size_t n)
{
    float p[32] = {0};
    for (size_t j = 0; j < n; j++)
        p[j % 32] += a[j] * b[j];
    return ref_combine(p);
}

#endif /* TESTS_WL_REFERENCE_H */
