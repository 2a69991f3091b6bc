/*
 * test_trust.c: what decides whether a program snapshot may run. SHA-256 and HMAC-SHA-256
 * against the published test vectors (FIPS 180-2 appendix B, RFC 4231 section 4); the per-user
 * key (created 0600 in a 0700 directory, refused when others may read or write it, or when it is
 * a symbolic link); snapshot signatures, with and without the size they vouch for; and the
 * checks on the snapshot file itself (a symbolic link, a script, a file others may write, one
 * whose hash or signed size differs, a huge one never copied) before it is copied into a sealed
 * memory file.
 */
#define _GNU_SOURCE /* F_GET_SEALS */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/internal.h"
#include "core/sha256.h"

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

/* ---- the key and signatures ---- */

static char root[64];

static int make_root(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/bench-test-trust-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    char cfg[128];
    snprintf(cfg, sizeof cfg, "%s/config", root);
    return setenv("XDG_CONFIG_HOME", cfg, 1);
}

static int remove_root(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", root, name);
}

static void test_key_is_made_private_and_reused(void **state)
{
    (void)state;
    unsigned char a[32], b[32];
    char msg[512], dir[160], key[160];
    /* No key yet: verifying finds none, and does not make one. */
    assert_int_equal(bench__user_key(false, a, msg, sizeof msg), BENCH_EUNAVAIL);
    assert_int_equal(bench__user_key(true, a, msg, sizeof msg), 0);
    assert_int_equal(bench__user_key(false, b, msg, sizeof msg), 0);
    assert_memory_equal(a, b, sizeof a);
    path_of(dir, sizeof dir, "config/harness");
    path_of(key, sizeof key, "config/harness/key");
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(stat(key, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(st.st_size, 65);
    /* Readable by others: refused, named, with the fix. */
    assert_int_equal(chmod(key, 0644), 0);
    assert_int_equal(bench__user_key(false, b, msg, sizeof msg), BENCH_EIO);
    assert_non_null(strstr(msg, "may be read or written by other users"));
    assert_non_null(strstr(msg, key));
    assert_int_equal(chmod(key, 0600), 0);
    /* A symbolic link in its place: never followed. */
    char moved[160];
    path_of(moved, sizeof moved, "elsewhere");
    assert_int_equal(rename(key, moved), 0);
    assert_int_equal(symlink(moved, key), 0);
    assert_int_equal(bench__user_key(false, b, msg, sizeof msg), BENCH_EIO);
    assert_non_null(strstr(msg, "symbolic link"));
    assert_int_equal(unlink(key), 0);
    assert_int_equal(rename(moved, key), 0);
    /* A directory others may write: refused. */
    assert_int_equal(chmod(dir, 0777), 0);
    assert_int_equal(bench__user_key(false, b, msg, sizeof msg), BENCH_EIO);
    assert_int_equal(chmod(dir, 0700), 0);
    assert_int_equal(bench__user_key(false, b, msg, sizeof msg), 0);
}

static void test_signatures(void **state)
{
    (void)state;
    char mac[BENCH__MAC_TEXT], msg[512];
    double vouched = -1;
    const char *h1 = "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    const char *h2 = "sha256:10112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    assert_int_equal(bench__snapshot_sign(h1, 0, mac, sizeof mac, msg, sizeof msg), 0);
    assert_int_equal(strncmp(mac, "hmac-sha256:", 12), 0);
    assert_int_equal(strlen(mac), 12 + 64);
    assert_int_equal(bench__snapshot_verify(h1, 0, mac, &vouched, msg, sizeof msg), 0);
    /* Another hash, an edited signature, none at all: refused, each with its reason. */
    assert_int_equal(bench__snapshot_verify(h2, 0, mac, &vouched, msg, sizeof msg), BENCH_EINVAL);
    assert_non_null(strstr(msg, "does not match this user's key"));
    char edited[BENCH__MAC_TEXT];
    snprintf(edited, sizeof edited, "%s", mac);
    edited[20] = edited[20] == '0' ? '1' : '0';
    assert_int_equal(bench__snapshot_verify(h1, 0, edited, &vouched, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_int_equal(bench__snapshot_verify(h1, 0, "", &vouched, msg, sizeof msg), BENCH_EINVAL);
    assert_non_null(strstr(msg, "not signed"));
    /* Another user's key (another configuration directory): the same signature fails. */
    char other[160];
    path_of(other, sizeof other, "other-config");
    const char *mine = getenv("XDG_CONFIG_HOME");
    char saved[160];
    snprintf(saved, sizeof saved, "%s", mine);
    setenv("XDG_CONFIG_HOME", other, 1);
    assert_int_equal(bench__snapshot_verify(h1, 0, mac, &vouched, msg, sizeof msg), BENCH_EINVAL);
    assert_non_null(strstr(msg, "cannot be checked"));
    char mac2[BENCH__MAC_TEXT];
    assert_int_equal(bench__snapshot_sign(h1, 0, mac2, sizeof mac2, msg, sizeof msg), 0);
    assert_string_not_equal(mac, mac2);
    setenv("XDG_CONFIG_HOME", saved, 1);
}

static void test_size_is_signed(void **state)
{
    (void)state;
    char mac[BENCH__MAC_TEXT], old[BENCH__MAC_TEXT], msg[512];
    double vouched = -1;
    const char *h = "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    assert_int_equal(bench__snapshot_sign(h, 4096, mac, sizeof mac, msg, sizeof msg), 0);
    assert_int_equal(bench__snapshot_sign(h, 0, old, sizeof old, msg, sizeof msg), 0);
    assert_string_not_equal(mac, old);
    assert_int_equal(bench__snapshot_verify(h, 4096, mac, &vouched, msg, sizeof msg), 0);
    assert_true(vouched == 4096);
    /* An edited size, or none: the signature no longer matches. */
    assert_int_equal(bench__snapshot_verify(h, 4097, mac, &vouched, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_true(vouched == 0);
    assert_int_equal(bench__snapshot_verify(h, 0, mac, &vouched, msg, sizeof msg), BENCH_EINVAL);
    /* An older version's signature, without a size: good, but vouches for no size. */
    assert_int_equal(bench__snapshot_verify(h, 4096, old, &vouched, msg, sizeof msg), 0);
    assert_true(vouched == 0);
}

/* ---- the snapshot file ---- */

static void write_file(const char *path, const void *data, size_t n, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, n), (ssize_t)n);
    close(fd);
    assert_int_equal(chmod(path, mode), 0);
}

static void text_hash(const void *data, size_t n, char *out)
{
    memcpy(out, "sha256:", 7);
    hex_of(data, n, out + 7);
}

static void test_snapshot_checks(void **state)
{
    (void)state;
    char dir[160], path[192], msg[512], hash[BENCH__HASH_TEXT];
    path_of(dir, sizeof dir, "baselines");
    assert_int_equal(mkdir(dir, 0755), 0);
    /* An ELF header and some bytes: what a snapshot starts with (it is never run here). */
    unsigned char elf[4096];
    for (size_t i = 0; i < sizeof elf; i++)
        elf[i] = (unsigned char)(i * 7);
    memcpy(elf, "\177ELF", 4);
    text_hash(elf, sizeof elf, hash);
    snprintf(path, sizeof path, "%s/m.program", dir);
    write_file(path, elf, sizeof elf, 0755);
    int fd = -1;
    assert_int_equal(bench__snapshot_open(dir, "m.program", hash, 0, 0, &fd, msg, sizeof msg), 0);
    /* The copy holds the bytes that were checked, and no one can change it. */
    unsigned char back[sizeof elf + 1];
    assert_int_equal(pread(fd, back, sizeof back, 0), (ssize_t)sizeof elf);
    assert_memory_equal(back, elf, sizeof elf);
    assert_int_equal(write(fd, "x", 1), -1);
    int seals = fcntl(fd, F_GET_SEALS);
    assert_true(seals >= 0 && (seals & F_SEAL_WRITE) && (seals & F_SEAL_SEAL));
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    close(fd);

    /* Another hash than the one recorded. */
    char other[BENCH__HASH_TEXT];
    text_hash("x", 1, other);
    assert_int_equal(bench__snapshot_open(dir, "m.program", other, 0, 0, &fd, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_non_null(strstr(msg, "not the one it measured"));
    assert_int_equal(fd, -1);
    /* Writable by group or others: the file, then the directory. */
    assert_int_equal(chmod(path, 0775), 0);
    assert_int_equal(bench__snapshot_open(dir, "m.program", hash, 0, 0, &fd, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_non_null(strstr(msg, "other users may write it"));
    assert_int_equal(chmod(path, 0755), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    assert_int_equal(bench__snapshot_open(dir, "m.program", hash, 0, 0, &fd, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_non_null(strstr(msg, "directory is not safe"));
    assert_int_equal(chmod(dir, 0755), 0);
    /* Owned by another user (only root can make one). */
    if (geteuid() == 0) {
        assert_int_equal(chown(path, 65534, 65534), 0);
        assert_int_equal(bench__snapshot_open(dir, "m.program", hash, 0, 0, &fd, msg, sizeof msg),
                         BENCH_EINVAL);
        assert_non_null(strstr(msg, "owned by another user"));
        assert_int_equal(chown(path, 0, 0), 0);
    }
    /* A symbolic link to the very same bytes: never followed. */
    char real[192];
    snprintf(real, sizeof real, "%s/real", root);
    assert_int_equal(rename(path, real), 0);
    assert_int_equal(symlink(real, path), 0);
    assert_int_equal(bench__snapshot_open(dir, "m.program", hash, 0, 0, &fd, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_non_null(strstr(msg, "symbolic link"));
    assert_int_equal(unlink(path), 0);
    /* Missing. */
    assert_int_equal(bench__snapshot_open(dir, "m.program", hash, 0, 0, &fd, msg, sizeof msg),
                     BENCH_EUNAVAIL);
    assert_non_null(strstr(msg, "missing"));
    /* A script whose hash is recorded: not an ELF program, never run. */
    const char *script = "#!/bin/sh\necho ran\n";
    text_hash(script, strlen(script), hash);
    write_file(path, script, strlen(script), 0755);
    assert_int_equal(bench__snapshot_open(dir, "m.program", hash, 0, 0, &fd, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_non_null(strstr(msg, "not an ELF executable"));
    /* A directory in its place. */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(bench__snapshot_open(dir, "m.program", hash, 0, 0, &fd, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_int_equal(fd, -1);
}

/* A huge file (sparse: it takes no disk) with an ELF header and another hash than the one
 * recorded: refused before a byte is read when the size is signed, and without a size refused
 * from its hash alone, nothing of it kept. A file-size limit of 1 MiB, which a memory file obeys
 * too, would make any copy of it fail instead ("File too large"). */
static void test_huge_snapshot_is_not_copied(void **state)
{
    (void)state;
    char dir[160], path[192], msg[512], hash[BENCH__HASH_TEXT];
    path_of(dir, sizeof dir, "huge");
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/m.program", dir);
    unsigned char elf[4096] = {0x7f, 'E', 'L', 'F'};
    text_hash(elf, sizeof elf, hash);
    write_file(path, elf, sizeof elf, 0755);
    assert_int_equal(truncate(path, 64L << 20), 0);
    int fd = -1;
    assert_int_equal(bench__snapshot_open(dir, "m.program", hash, 4096, 0, &fd, msg, sizeof msg),
                     BENCH_EINVAL);
    assert_non_null(strstr(msg, "67108864 bytes, not the 4096 saved"));
    struct rlimit was, small;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
    small = was;
    small.rlim_cur = 1 << 20;
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGXFSZ, &ign, &old);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = bench__snapshot_open(dir, "m.program", hash, 0, 0, &fd, msg, sizeof msg);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
    sigaction(SIGXFSZ, &old, NULL);
    assert_int_equal(rc, BENCH_EINVAL);
    assert_non_null(strstr(msg, "its bytes changed since the save"));
    assert_int_equal(fd, -1);
    /* The program itself, at its signed size: opened. */
    assert_int_equal(truncate(path, sizeof elf), 0);
    assert_int_equal(bench__snapshot_open(dir, "m.program", hash, 4096, 0, &fd, msg, sizeof msg),
                     0);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_hmac_rfc4231),
        cmocka_unit_test(test_key_is_made_private_and_reused),
        cmocka_unit_test(test_signatures),
        cmocka_unit_test(test_size_is_signed),
        cmocka_unit_test(test_snapshot_checks),
        cmocka_unit_test(test_huge_snapshot_is_not_copied),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
