/*
 * code_id.h: a benchmark's code identity (code_id.c): a hash of the machine code its BENCH_FN
 * runs (the body and the program's own functions it reaches through direct calls, jumps and
 * function addresses, transitively), made from the program's disassembly so that where the code
 * sits does not change it. Two builds whose benchmark code is the same instruction for
 * instruction, placed elsewhere, get the same hash; any changed instruction in that code, or a
 * changed callee, gives another. "" (unknown) when it cannot be told; never an error.
 */
#ifndef HARNESS_CODE_ID_H
#define HARNESS_CODE_ID_H

#include <stdbool.h>
#include <stddef.h>

#include "core/sha256.h"

/** Characters of a code hash with its NUL: 64 lowercase hex digits of a SHA-256. */
#define BENCH__CODE_HASH_TEXT 65

/** One program's disassembly, parsed: its functions and the shared-library symbols it calls. */
typedef struct bench__code_ids bench__code_ids;

/** An empty disassembly, to be fed lines (bench__code_ids_line). 0, or BENCH_ENOMEM. */
int bench__code_ids_new(bench__code_ids **out);

/**
 * Feeds one line of `objdump -d -T --no-show-raw-insn -w` output (no newline): a dynamic symbol,
 * a function's label or one of its instructions; other lines are ignored. 0, or BENCH_ENOMEM.
 */
int bench__code_ids_line(bench__code_ids *c, const char *line);

/** Adds a data object of the program, `name` with its n bytes, which the code may name. 0, or
 * BENCH_ENOMEM. */
int bench__code_ids_object(bench__code_ids *c, const char *name, const void *bytes, size_t n);

/**
 * The disassembly of the program at `path`, by objdump (binutils) from PATH, within timeout_s
 * seconds, with its data objects (its symbol table's) and what is appended to its file. 0 with *out (free with bench__code_ids_free); or -1 with *out NULL and a one-line
 * reason in `why` (no objdump, it failed or timed out, nothing in the file to read): every
 * benchmark's identity is then unknown.
 */
int bench__code_ids_of_program(const char *path, double timeout_s, bench__code_ids **out,
                               char *why, size_t whylen);

/**
 * The code hash of benchmark `id` ("group/name..."): 64 lowercase hex digits into out, or ""
 * when unknown: no disassembly (c NULL), no function bench__fn_GROUP__NAME in it (a stripped
 * program), or its code calls into a shared library other than the C runtime's and the
 * harness's, whose code the program's disassembly does not hold.
 */
void bench__code_hash(bench__code_ids *c, const char *id, char out[BENCH__CODE_HASH_TEXT]);

/** Sets the hash of the bytes appended to the program's file (part of every identity). */
void bench__code_ids_overlay(bench__code_ids *c, const unsigned char hash[BENCH__SHA256_BYTES]);

/** How many functions the disassembly holds (0: nothing was read). */
size_t bench__code_ids_functions(const bench__code_ids *c);

/** Frees a disassembly; NULL is a no-op. */
void bench__code_ids_free(bench__code_ids *c);

#endif /* HARNESS_CODE_ID_H */
