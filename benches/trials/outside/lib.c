/*
 * lib.c: a small library under test for scripts/trials.sh outside: the code a user's benchmarks
 * call, built as its own static library (not with the benchmark program's flags), as an outside
 * project builds it. Ten routines of different kinds: sorting, searching, hashing, parsing,
 * checksums, a latency chain.
 *
 * OUTSIDE_PAD: bytes of an unrelated, never-called function placed before every function of the
 * library (in .text.unlikely, which the linker puts before .text): two builds that differ only
 * there run byte-identical code from other addresses.
 */
#include <stdint.h>
#include <string.h>

#include "lib.h"

#ifndef OUTSIDE_PAD
#define OUTSIDE_PAD 0
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

__attribute__((used, noinline, cold)) void lib_unrelated(void);
__attribute__((used, noinline, cold)) void lib_unrelated(void)
{
    __asm__ volatile(".skip " STR(OUTSIDE_PAD) ", 0x90");
}

void lib_isort(int *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        int x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

size_t lib_lower_bound(const int *v, size_t n, int key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Open addressing, linear probing; keys are nonzero. */
void lib_map_insert(lib_map *m, uint64_t key, uint64_t value)
{
    size_t mask = m->cap - 1, i = (size_t)(key * 0x9E3779B97F4A7C15ULL >> 17) & mask;
    while (m->keys[i] != 0 && m->keys[i] != key)
        i = (i + 1) & mask;
    m->keys[i] = key;
    m->values[i] = value;
}

int lib_map_find(const lib_map *m, uint64_t key, uint64_t *value)
{
    size_t mask = m->cap - 1, i = (size_t)(key * 0x9E3779B97F4A7C15ULL >> 17) & mask;
    while (m->keys[i] != 0) {
        if (m->keys[i] == key) {
            *value = m->values[i];
            return 1;
        }
        i = (i + 1) & mask;
    }
    return 0;
}

size_t lib_split(const char *s, char sep, size_t *starts, size_t cap)
{
    size_t n = 0, i = 0;
    if (cap > 0)
        starts[n++] = 0;
    for (; s[i]; i++)
        if (s[i] == sep && n < cap)
            starts[n++] = i + 1;
    return n;
}

uint32_t lib_crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

uint64_t lib_fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

uint64_t lib_chain(uint64_t x, unsigned steps)
{
    for (unsigned i = 0; i < steps; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

long lib_atoi_sum(const char *s)
{
    long sum = 0, cur = 0;
    for (; *s; s++) {
        if (*s >= '0' && *s <= '9') {
            cur = cur * 10 + (*s - '0');
        } else {
            sum += cur;
            cur = 0;
        }
    }
    return sum + cur;
}

size_t lib_count_byte(const uint8_t *p, size_t n, uint8_t b)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += p[i] == b;
    return c;
}

int lib_memcmp_words(const uint64_t *a, const uint64_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}
