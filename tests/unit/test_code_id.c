/*
 * test_code_id.c: the code identity of a benchmark (sys/code_id.c) from hand-made disassembly,
 * in the form `objdump -d -T --no-show-raw-insn -w` writes: the same code at other addresses
 * (every call, jump and RIP-relative displacement moved, padding of another length) hashes the
 * same; one changed instruction, a changed callee, a callee reached only through a function
 * address, other contents of a table the code reads, all hash otherwise; the harness's own functions are named and not followed; a call
 * into a user's shared library, a program without the body's symbol, an id without a group,
 * are unknown ("").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/code_id.h"

/* The program: a body that calls helper (a static function), the harness's bench__loop_next
 * and memcpy from the C library, loops, reads a table RIP-relative and hands cmp to qsort.
 * `shift` moves all code by that many bytes (data stays), `pad` adds that many more nop bytes
 * after the body (and 2 before its loop's head); `insn` replaces the body's add (a changed instruction), `helper_op` helper's
 * imul (a changed callee), `cmp_op` the comparator's sub, `loop_op` the harness's code. */
typedef struct variant {
    unsigned shift, pad;
    const char *insn, *helper_op, *cmp_op, *loop_op, *body_name;
    bool foreign_call; /* the body calls lib_fn of an unversioned shared library */
    unsigned char tab; /* added to every byte of the table the body reads (its data) */
    bool sanitized;    /* the body calls AddressSanitizer's runtime */
} variant;

static void hash_of(const variant *v, const char *id, char out[BENCH__CODE_HASH_TEXT])
{
    bench__code_ids *c = NULL;
    assert_int_equal(bench__code_ids_new(&c), 0);
    unsigned s = v->shift, body = 0x1140 + s, helper = 0x11a0 + s + v->pad,
             cmp = 0x11c0 + s + v->pad, loop = 0x1200 + s + v->pad;
    char l[256];
#define FEED(...)                                                                                  \
    do {                                                                                           \
        snprintf(l, sizeof l, __VA_ARGS__);                                                        \
        assert_int_equal(bench__code_ids_line(c, l), 0);                                          \
    } while (0)
    FEED("prog:     file format elf64-x86-64");
    FEED("DYNAMIC SYMBOL TABLE:");
    FEED("0000000000000000      DF *UND*\t0000000000000000 (GLIBC_2.14) memcpy");
    FEED("0000000000000000      DF *UND*\t0000000000000000 (GLIBC_2.2.5) qsort");
    FEED("0000000000000000      DF *UND*\t0000000000000000  Base        lib_fn");
    FEED("0000000000000000      DF *UND*\t0000000000000000  Base        __asan_report_load4");
    FEED("Disassembly of section .plt:");
    FEED("%016x <memcpy@plt>:", 0x1030 + s);
    FEED("    %x:\tjmp    *0x2fca(%%rip)        # 4000 <memcpy@GLIBC_2.14>", 0x1030 + s);
    FEED("Disassembly of section .text:");
    FEED("%016x <%s>:", body, v->body_name ? v->body_name : "bench__fn_g__n");
    FEED("    %x:\tpush   %%rbx", body);
    FEED("    %x:\tlea    0x%x(%%rip),%%rcx        # %x <cmp>", body + 1, cmp - (body + 8), cmp);
    FEED("    %x:\tmov    0x%x(%%rip),%%rax        # 4020 <tab+0x10>", body + 8, 0x4020 - (body + 15));
    FEED("    %x:\tcall   %x <bench__loop_next>", body + 15, loop);
    FEED("    %x:\tcall   %x <memcpy@plt>", body + 20, 0x1030 + s);
    if (v->sanitized) /* a sanitizer's check: its runtime is no code under test */
        FEED("    %x:\tcall   %x <__asan_report_load4@plt>", body + 20, 0x1050 + s);
    if (v->foreign_call)
        FEED("    %x:\tcall   *0x2f00(%%rip)        # 3f00 <lib_fn@Base>", body + 25);
    FEED("    %x:\tnopl   0x0(%%rax,%%rax,1)", body + 31);
    /* The loop's head aligned: placed elsewhere, its padding differs (here 2 bytes more). */
    unsigned lp = 40;
    if (v->pad) {
        FEED("    %x:\txchg   %%ax,%%ax", body + 40);
        lp = 42;
    }
    FEED("    %x:\t%s", body + lp, v->insn ? v->insn : "add    $0x1,%esi");
    FEED("    %x:\tcall   %x <helper>", body + lp + 3, helper);
    FEED("    %x:\tcmp    %%esi,%%ebx", body + lp + 8);
    FEED("    %x:\tjne    %x <%s+0x%x>", body + lp + 10, body + lp,
         v->body_name ? v->body_name : "bench__fn_g__n", lp);
    FEED("    %x:\tpop    %%rbx", body + lp + 12);
    FEED("    %x:\tret", body + lp + 13);
    for (unsigned i = 0; i < 2 + v->pad / 8; i++) /* padding to the next function */
        FEED("    %x:\tcs nopw 0x0(%%rax,%%rax,1)", body + lp + 14 + 8 * i);
    FEED("%s", "");
    FEED("%016x <helper>:", helper);
    FEED("    %x:\t%s", helper, v->helper_op ? v->helper_op : "imul   %edi,%eax");
    FEED("    %x:\tret", helper + 3);
    FEED("    %x:\txchg   %%ax,%%ax", helper + 4);
    FEED("%016x <cmp>:", cmp);
    FEED("    %x:\tmov    (%%rdi),%%eax", cmp);
    FEED("    %x:\t%s", cmp + 2, v->cmp_op ? v->cmp_op : "sub    (%rsi),%eax");
    FEED("    %x:\tret", cmp + 4);
    FEED("%016x <bench__loop_next>:", loop);
    FEED("    %x:\t%s", loop, v->loop_op ? v->loop_op : "mov    %rdi,%rax");
    FEED("    %x:\tjmp    %x <qsort@plt>", loop + 3, 0x1040 + s);
#undef FEED
    unsigned char tab[32], other[8] = {0};
    for (unsigned i = 0; i < sizeof tab; i++)
        tab[i] = (unsigned char)(i + v->tab);
    assert_int_equal(bench__code_ids_object(c, "tab", tab, sizeof tab), 0);
    other[0] = (unsigned char)v->shift; /* data the code does not name: no part of it */
    assert_int_equal(bench__code_ids_object(c, "unrelated", other, sizeof other), 0);
    bench__code_hash(c, id, out);
    bench__code_ids_free(c);
}

static void hash_v(const variant *v, char out[BENCH__CODE_HASH_TEXT])
{
    hash_of(v, "g/n/size=64", out);
}

static void test_same_code_elsewhere_same_hash(void **state)
{
    (void)state;
    char a[BENCH__CODE_HASH_TEXT], b[BENCH__CODE_HASH_TEXT], c[BENCH__CODE_HASH_TEXT];
    hash_v(&(variant){0}, a);
    assert_int_equal(strlen(a), 64);
    /* 0x80 bytes later, and 24 bytes more padding between the body and its callees. */
    hash_v(&(variant){.shift = 0x80}, b);
    hash_v(&(variant){.shift = 0x1234, .pad = 24}, c);
    assert_string_equal(a, b);
    assert_string_equal(a, c);
    /* Every id of one BENCH_FN (its parameters, its grid) runs the same code. */
    hash_of(&(variant){0}, "g/n", b);
    assert_string_equal(a, b);
}

static void test_changed_instruction_other_hash(void **state)
{
    (void)state;
    char a[BENCH__CODE_HASH_TEXT], b[BENCH__CODE_HASH_TEXT];
    hash_v(&(variant){0}, a);
    hash_v(&(variant){.shift = 0x80, .insn = "add    $0x2,%esi"}, b);
    assert_string_not_equal(a, b);
    assert_int_equal(strlen(b), 64);
}

static void test_changed_callee_other_hash(void **state)
{
    (void)state;
    char a[BENCH__CODE_HASH_TEXT], b[BENCH__CODE_HASH_TEXT], c[BENCH__CODE_HASH_TEXT];
    hash_v(&(variant){0}, a);
    hash_v(&(variant){.helper_op = "imul   %esi,%eax"}, b);
    assert_string_not_equal(a, b);
    /* A function reached only through its address (qsort's comparator) is the code too. */
    hash_v(&(variant){.cmp_op = "sub    %esi,%eax"}, c);
    assert_string_not_equal(a, c);
}

static void test_changed_data_other_hash(void **state)
{
    (void)state;
    char a[BENCH__CODE_HASH_TEXT], b[BENCH__CODE_HASH_TEXT];
    hash_v(&(variant){0}, a);
    /* The same instructions reading a table of other contents. */
    hash_v(&(variant){.shift = 0x80, .tab = 1}, b);
    assert_string_not_equal(a, b);
}

static void test_harness_named_not_followed(void **state)
{
    (void)state;
    char a[BENCH__CODE_HASH_TEXT], b[BENCH__CODE_HASH_TEXT];
    hash_v(&(variant){0}, a);
    hash_v(&(variant){.loop_op = "mov    %rsi,%rax"}, b);
    assert_string_equal(a, b);
}

static void test_unknown(void **state)
{
    (void)state;
    char h[BENCH__CODE_HASH_TEXT] = "x";
    /* A user's shared library (an unversioned undefined symbol): its code is not here. */
    hash_v(&(variant){.foreign_call = true}, h);
    assert_string_equal(h, "");
    /* No body of that name (a stripped program), or an id without group and name. */
    strcpy(h, "x");
    hash_of(&(variant){0}, "g/other", h);
    assert_string_equal(h, "");
    strcpy(h, "x");
    hash_of(&(variant){0}, "g", h);
    assert_string_equal(h, "");
    /* No disassembly at all. */
    strcpy(h, "x");
    bench__code_hash(NULL, "g/n", h);
    assert_string_equal(h, "");
    /* A sanitizer's runtime, though an unversioned shared library's, keeps it known. */
    hash_v(&(variant){.sanitized = true}, h);
    assert_int_equal(strlen(h), 64);
    /* A compiler's private copy of the body is found by its prefix. */
    hash_v(&(variant){.body_name = "bench__fn_g__n.lto_priv.0"}, h);
    assert_int_equal(strlen(h), 64);
}

static void test_program_without_objdump(void **state)
{
    (void)state;
    bench__code_ids *c = (bench__code_ids *)1;
    char why[256] = "";
    const char *path = getenv("PATH");
    char *saved = path ? strdup(path) : NULL;
    setenv("PATH", "/nonexistent", 1);
    assert_int_equal(bench__code_ids_of_program("/bin/true", 5, &c, why, sizeof why), -1);
    if (saved) {
        setenv("PATH", saved, 1);
        free(saved);
    }
    assert_null(c);
    assert_non_null(strstr(why, "objdump"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_code_elsewhere_same_hash),
        cmocka_unit_test(test_changed_instruction_other_hash),
        cmocka_unit_test(test_changed_callee_other_hash),
        cmocka_unit_test(test_changed_data_other_hash),
        cmocka_unit_test(test_harness_named_not_followed),
        cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_program_without_objdump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
