/*
 * sha256.c: SHA-256 as FIPS 180-4 specifies it, and HMAC over it as RFC 2104 does. In the tree
 * rather than from a crypto library so that the core links nothing new; tests/unit/test_sha256.c
 * checks it against the FIPS 180-2 and RFC 4231 test vectors.
 */
#include <string.h>

#include "core/sha256.h"

static const uint32_t k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void block(bench__sha256_ctx *s, const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5],
             g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ch + k[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

void bench__sha256_init(bench__sha256_ctx *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->bytes = 0;
    s->nbuf = 0;
}

void bench__sha256_update(bench__sha256_ctx *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->bytes += n;
    if (s->nbuf > 0) {
        size_t take = 64 - s->nbuf < n ? 64 - s->nbuf : n;
        memcpy(s->buf + s->nbuf, p, take);
        s->nbuf += take;
        p += take;
        n -= take;
        if (s->nbuf < 64)
            return;
        block(s, s->buf);
        s->nbuf = 0;
    }
    for (; n >= 64; p += 64, n -= 64)
        block(s, p);
    memcpy(s->buf, p, n);
    s->nbuf = n;
}

void bench__sha256_final(bench__sha256_ctx *s, unsigned char out[BENCH__SHA256_BYTES])
{
    uint64_t bits = s->bytes * 8;
    unsigned char pad[72] = {0x80};
    /* 0x80, zeros up to 56 mod 64, then the length in bits, big-endian. */
    size_t npad = (s->nbuf < 56 ? 56 : 120) - s->nbuf;
    for (int i = 0; i < 8; i++)
        pad[npad + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
    bench__sha256_update(s, pad, npad + 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void bench__sha256(const void *data, size_t n, unsigned char out[BENCH__SHA256_BYTES])
{
    bench__sha256_ctx s;
    bench__sha256_init(&s);
    bench__sha256_update(&s, data, n);
    bench__sha256_final(&s, out);
}

void bench__hmac_sha256(const void *key, size_t keylen, const void *msg, size_t n,
                        unsigned char out[BENCH__SHA256_BYTES])
{
    unsigned char k0[64] = {0}, pad[64], inner[BENCH__SHA256_BYTES];
    if (keylen > 64)
        bench__sha256(key, keylen, k0);
    else if (keylen > 0)
        memcpy(k0, key, keylen);
    bench__sha256_ctx s;
    for (int i = 0; i < 64; i++)
        pad[i] = k0[i] ^ 0x36;
    bench__sha256_init(&s);
    bench__sha256_update(&s, pad, 64);
    bench__sha256_update(&s, msg, n);
    bench__sha256_final(&s, inner);
    for (int i = 0; i < 64; i++)
        pad[i] = k0[i] ^ 0x5c;
    bench__sha256_init(&s);
    bench__sha256_update(&s, pad, 64);
    bench__sha256_update(&s, inner, sizeof inner);
    bench__sha256_final(&s, out);
}

void bench__hex(const unsigned char *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}
