/*
 * json_io.h: what the three JSON files (json_read.c, json_write.c, json_merge.c) share; includes
 * cJSON, so only they include it.
 */
#ifndef HARNESS_JSON_IO_H
#define HARNESS_JSON_IO_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "core/result.h"
#include "store/store.h"
#include "sys/context.h"

/** schema_version of results and baselines this harness writes and reads. */
#define BENCH__SCHEMA_VERSION 1

/** The document of a run (schema_version, context, benchmarks, comparison); NULL: no memory. */
cJSON *bench__json_results_root(const bench__context *ctx, const bench__result *all, size_t n);

/**
 * Reads a whole regular file of at most BENCH__MAX_FILE_BYTES into *text (malloc'd,
 * NUL-terminated; caller frees) and its length into *len. A FIFO, device or directory is refused
 * without waiting on it. Returns 0 or a negative error code with the reason in msg.
 */
int bench__json_read_file(const char *path, char **text, size_t *len, char *msg, size_t msglen);

/**
 * Parses and validates text (len bytes, NUL-terminated) as a results or baseline file named path
 * into out; *root_out (when not NULL) receives the parsed tree, which the caller deletes.
 */
int bench__json_parse_saved(const char *path, const char *text, size_t len, bench__saved *out,
                            cJSON **root_out, char *msg, size_t msglen);

#endif /* HARNESS_JSON_IO_H */
