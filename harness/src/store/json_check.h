/*
 * json_check.h: checks of a parsed results file beyond what the loader reads (json_check.c);
 * for json_read.c only, so cJSON stays inside the JSON reader.
 */
#ifndef HARNESS_JSON_CHECK_H
#define HARNESS_JSON_CHECK_H

#include <cjson/cJSON.h>
#include <stddef.h>

/** docs/results.schema.json as compiled into the library (results_schema.c, generated). */
extern const char bench__results_schema[];
extern const size_t bench__results_schema_len;

/**
 * Rejects an object anywhere in the tree that has a key twice (JSON leaves the meaning open, and
 * cJSON would silently read the first). Returns 0, or BENCH_EINVAL with "FILE: PATH: duplicate
 * key" in msg (the path names the repeated key), or BENCH_ENOMEM.
 */
int bench__json_check_duplicates(const cJSON *root, const char *file, char *msg, size_t msglen);

/**
 * Validates the whole tree against the published results schema, every field and every bound
 * it states, and requires every number to be finite. Returns 0, or BENCH_EINVAL with "FILE:
 * PATH: what is wrong" in msg, or BENCH_ENOMEM.
 */
int bench__json_check_schema(const cJSON *root, const char *file, char *msg, size_t msglen);

#endif /* HARNESS_JSON_CHECK_H */
