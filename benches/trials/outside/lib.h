/* lib.h: the library under test of scripts/trials.sh outside (lib.c). */
#ifndef OUTSIDE_LIB_H
#define OUTSIDE_LIB_H
#include <stddef.h>
#include <stdint.h>

typedef struct lib_map {
    uint64_t *keys;   /* 0: empty slot */
    uint64_t *values;
    size_t cap;       /* a power of two */
} lib_map;

void lib_isort(int *v, size_t n);
size_t lib_lower_bound(const int *v, size_t n, int key);
void lib_map_insert(lib_map *m, uint64_t key, uint64_t value);
int lib_map_find(const lib_map *m, uint64_t key, uint64_t *value);
size_t lib_split(const char *s, char sep, size_t *starts, size_t cap);
uint32_t lib_crc32(const uint8_t *p, size_t n);
uint64_t lib_fnv1a(const uint8_t *p, size_t n);
uint64_t lib_chain(uint64_t x, unsigned steps);
long lib_atoi_sum(const char *s);
size_t lib_count_byte(const uint8_t *p, size_t n, uint8_t b);
int lib_memcmp_words(const uint64_t *a, const uint64_t *b, size_t n);
#endif
