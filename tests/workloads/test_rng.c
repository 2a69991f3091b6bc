/*
 * Tests of the PRNG: the first outputs for fixed (seed, stream) pairs match values computed by an
 * independent Python implementation of splitmix64 + xoshiro256** (the script in docs/workloads.md),
 * floats are the documented functions of the top 24 bits, bounded draws are in range and
 * reproducible, and streams are independent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "workloads/wl_rng.h"

static void test_known_outputs(void **state)
{
    (void)state;
    static const struct {
        uint64_t seed, stream, out[5];
    } cases[] = {
        {0, 0, {0x99ec5f36cb75f2b4, 0xbf6e1f784956452a, 0x1a5f849d4933e6e0, 0x6aa594f1262d2d2c,
                0xbba5ad4a1f842e59}},
        {42, 0, {0x15780b2e0c2ec716, 0x6104d9866d113a7e, 0xae17533239e499a1, 0xecb8ad4703b360a1,
                 0xfde6dc7fe2ec5e64}},
        {42, 1, {0x0030425e2a3dc334, 0x057e19f0156c8a6b, 0x8c5c18f37d24dfd8, 0x08788a1a2c75e2c4,
                 0x32b46b765a14da30}},
        {0xDEADBEEF, 7, {0x73ae29339ae71595, 0xf5a15eb7f219e689, 0x5b5d3c94d1432546,
                         0xc2f043da216741ea, 0x96ee1af6aa75e24d}},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        wl_rng r;
        wl_rng_seed(&r, cases[c].seed, cases[c].stream);
        for (int i = 0; i < 5; i++)
            assert_int_equal(wl_rng_next(&r), cases[c].out[i]);
    }
}

static void test_known_floats(void **state)
{
    (void)state;
    wl_rng r;
    /* Same four raw outputs (seed 42, stream 0) seen as floats; values from ref_rng.py. */
    static const float unit[] = {0.08386296033859253f, 0.37898021936416626f,
                                 0.6800433993339539f, 0.9246929287910461f};
    static const float sgn[] = {-0.8322740793228149f, -0.24203956127166748f,
                                0.3600867986679077f, 0.8493858575820923f};
    wl_rng_seed(&r, 42, 0);
    for (int i = 0; i < 4; i++)
        assert_true(wl_rng_float(&r) == unit[i]);
    wl_rng_seed(&r, 42, 0);
    for (int i = 0; i < 4; i++)
        assert_true(wl_rng_float_signed(&r) == sgn[i]);
}

static void test_float_ranges(void **state)
{
    (void)state;
    wl_rng r;
    wl_rng_seed(&r, 1234, 5);
    float lo = 1.0f, hi = -1.0f;
    for (int i = 0; i < 100000; i++) {
        float u = wl_rng_float(&r), s = wl_rng_float_signed(&r);
        assert_true(u >= 0.0f && u < 1.0f);
        assert_true(s >= -1.0f && s < 1.0f);
        lo = s < lo ? s : lo;
        hi = s > hi ? s : hi;
    }
    /* 100k draws cover nearly the whole interval. */
    assert_true(lo < -0.999f && hi > 0.999f);
}

static void test_below(void **state)
{
    (void)state;
    wl_rng r;
    static const uint64_t small[] = {2, 2, 9, 3, 6, 4, 4, 7, 8, 5};
    wl_rng_seed(&r, 42, 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(wl_rng_below(&r, 10), small[i]);
    static const uint64_t big[] = {2402558742u, 2964543102u, 2248559009u, 1182124193u,
                                   1065317476u};
    wl_rng_seed(&r, 42, 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(wl_rng_below(&r, 3000000000u), big[i]);

    /* n = 2^63 + 1 rejects almost half of all outputs (those below 2^64 mod n = 2^63 - 1):
     * here the first two raw outputs of seed 42 are rejected. */
    static const uint64_t huge[] = {0x2e17533239e499a0, 0x6cb8ad4703b360a0, 0x7de6dc7fe2ec5e63,
                                    0x450da53101795237, 0x382154855a65ddb1, 0x599a2743ebe60086,
                                    0x42e96e726e97647d, 0x1556615f775fbc3c};
    wl_rng_seed(&r, 42, 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(wl_rng_below(&r, (UINT64_C(1) << 63) + 1), huge[i]);

    /* n <= 1 gives 0 and still consumes one output. */
    wl_rng a, b;
    wl_rng_seed(&a, 9, 9);
    wl_rng_seed(&b, 9, 9);
    assert_int_equal(wl_rng_below(&a, 0), 0);
    assert_int_equal(wl_rng_below(&a, 1), 0);
    (void)wl_rng_next(&b);
    (void)wl_rng_next(&b);
    assert_int_equal(wl_rng_next(&a), wl_rng_next(&b));

    /* Every residue of a small modulus appears with roughly equal frequency. */
    unsigned counts[7] = {0};
    wl_rng_seed(&r, 77, 0);
    for (int i = 0; i < 70000; i++) {
        uint64_t x = wl_rng_below(&r, 7);
        assert_true(x < 7);
        counts[x]++;
    }
    for (int i = 0; i < 7; i++)
        assert_true(counts[i] > 9500 && counts[i] < 10500);
}

static void test_streams_and_determinism(void **state)
{
    (void)state;
    wl_rng a, b, c;
    wl_rng_seed(&a, 5, 1);
    wl_rng_seed(&b, 5, 1);
    wl_rng_seed(&c, 5, 2);
    int same_as_c = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = wl_rng_next(&a);
        assert_int_equal(x, wl_rng_next(&b));
        same_as_c += x == wl_rng_next(&c);
    }
    assert_int_equal(same_as_c, 0);
}

static void test_mix64(void **state)
{
    (void)state;
    assert_int_equal(wl_mix64(0), 0);
    assert_int_equal(wl_mix64(1), 0x5692161d100b05e5);
    assert_int_equal(wl_mix64(0x123456789ABCDEF0), 0x9629f58e8ec5b906);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_outputs),
        cmocka_unit_test(test_known_floats),
        cmocka_unit_test(test_float_ranges),
        cmocka_unit_test(test_below),
        cmocka_unit_test(test_streams_and_determinism),
        cmocka_unit_test(test_mix64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
