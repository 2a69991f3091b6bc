/*
 * sha256.h: SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), the hash and the keyed check
 * that say whether a program snapshot is the one that was measured and whether this user's
 * harness saved it (snapshot.c, trust.c). Pure functions over memory: no I/O.
 */
#ifndef HARNESS_SHA256_H
#define HARNESS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define BENCH__SHA256_BYTES 32
/** "sha256:" and 64 hex digits, with its NUL. */
#define BENCH__HASH_TEXT 72
/** "hmac-sha256:" and 64 hex digits, with its NUL. */
#define BENCH__MAC_TEXT 80

/** A hash in progress. */
typedef struct bench__sha256_ctx {
    uint32_t h[8];
    uint64_t bytes;         /* message length so far */
    unsigned char buf[64];  /* the block being filled */
    size_t nbuf;
} bench__sha256_ctx;

void bench__sha256_init(bench__sha256_ctx *s);
void bench__sha256_update(bench__sha256_ctx *s, const void *data, size_t n);
/** Finishes the hash into out; s must be initialised again before reuse. */
void bench__sha256_final(bench__sha256_ctx *s, unsigned char out[BENCH__SHA256_BYTES]);
/** SHA-256 of one buffer. */
void bench__sha256(const void *data, size_t n, unsigned char out[BENCH__SHA256_BYTES]);
/** HMAC-SHA-256 of msg under key (any length). */
void bench__hmac_sha256(const void *key, size_t keylen, const void *msg, size_t n,
                        unsigned char out[BENCH__SHA256_BYTES]);
/** Lowercase hex of n bytes into out, which has room for 2n + 1 characters. */
void bench__hex(const unsigned char *bytes, size_t n, char *out);

#endif /* HARNESS_SHA256_H */
