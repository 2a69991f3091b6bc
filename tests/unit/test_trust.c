/*
 * test_trust.c: what decides whether a program snapshot may run. SHA-256 and HMAC-SHA-256
 * against the published test vectors (FIPS 180-2 appendix B, RFC 4231 section 4).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "sha256.h"

static void hex_of(const void *data, size_t n, char *out)
{
    unsigned char h[BENCH__SHA256_BYTES];
    bench__sha256(data, n, h);
    bench__hex(h, sizeof h, out);
}

static void test_sha256_vectors(void **state)
{
    (void)state;
    char out[65];
    hex_of("abc", 3, out);
    assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    hex_of("", 0, out);
    assert_string_equal(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    hex_of(two, strlen(two), out);
    assert_string_equal(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* One million 'a', fed in pieces that straddle the 64-byte blocks. */
    bench__sha256_ctx s;
    bench__sha256_init(&s);
    char a[997];
    memset(a, 'a', sizeof a);
    size_t left = 1000000;
    while (left > 0) {
        size_t n = left < sizeof a ? left : sizeof a;
        bench__sha256_update(&s, a, n);
        left -= n;
    }
    unsigned char h[BENCH__SHA256_BYTES];
    bench__sha256_final(&s, h);
    bench__hex(h, sizeof h, out);
    assert_string_equal(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* Lengths around the padding boundary (55, 56, 64 bytes) against the one-shot hash. */
    for (size_t n = 50; n < 70; n++) {
        char buf[70], one[65], pieces[65];
        memset(buf, 'x', n);
        hex_of(buf, n, one);
        bench__sha256_init(&s);
        for (size_t i = 0; i < n; i++)
            bench__sha256_update(&s, buf + i, 1);
        bench__sha256_final(&s, h);
        bench__hex(h, sizeof h, pieces);
        assert_string_equal(one, pieces);
    }
}

static void hmac_hex(const void *key, size_t kn, const void *msg, size_t mn, char *out)
{
    unsigned char h[BENCH__SHA256_BYTES];
    bench__hmac_sha256(key, kn, msg, mn, h);
    bench__hex(h, sizeof h, out);
}

static void test_hmac_rfc4231(void **state)
{
    (void)state;
    char out[65];
    unsigned char key[131];
    memset(key, 0x0b, 20);
    hmac_hex(key, 20, "Hi There", 8, out);
    assert_string_equal(out, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    hmac_hex("Jefe", 4, "what do ya want for nothing?", 28, out);
    assert_string_equal(out, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    unsigned char data[50];
    memset(key, 0xaa, 20);
    memset(data, 0xdd, sizeof data);
    hmac_hex(key, 20, data, sizeof data, out);
    assert_string_equal(out, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    for (int i = 0; i < 25; i++)
        key[i] = (unsigned char)(i + 1);
    memset(data, 0xcd, sizeof data);
    hmac_hex(key, 25, data, sizeof data, out);
    assert_string_equal(out, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    /* Keys longer than a block are hashed first (test cases 6 and 7). */
    memset(key, 0xaa, 131);
    const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    hmac_hex(key, 131, m6, strlen(m6), out);
    assert_string_equal(out, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    const char *m7 = "This is a test using a larger than block-size key and a larger than "
                     "block-size data. The key needs to be hashed before being used by the "
                     "HMAC algorithm.";
    hmac_hex(key, 131, m7, strlen(m7), out);
    assert_string_equal(out, "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_hmac_rfc4231),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
