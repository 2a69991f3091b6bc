/*
 * code_id.c: a benchmark's code identity from its program's disassembly (code_id.h).
 *
 * Why. Two builds whose benchmark code is the same can still measure a few percent apart: the
 * code sits at other addresses relative to code that did not move (the C library, the vDSO) and
 * to cache-line and branch-predictor boundaries, and that difference is fixed for the two
 * programs, so pairing cannot cancel it. A comparison that knows the code is the same can say
 * what it measured without blaming the code for it.
 *
 * How. objdump (binutils, present wherever a C compiler is) disassembles the program once; its
 * functions and instructions are kept. A benchmark's code is its body, bench__fn_GROUP__NAME
 * (BENCH_FN's static function), and every function of the program it names in an instruction
 * (calls, jumps, function addresses taken: a comparator handed to qsort), transitively. The
 * harness's own functions (bench_ and bench__ names) are named, not followed: they are the
 * measuring, not the measured code. Each instruction is reduced to what does not depend on
 * placement: its address dropped; a branch within its function turned into the index of the
 * target instruction; a call or jump elsewhere named by its target's symbol; a RIP-relative
 * displacement and the address in objdump's comment dropped, keeping the symbol it names (not
 * the offset from it, which moves with unrelated data); padding (nops, int3) left out. Each
 * function hashes to a SHA-256 of its reduced instructions, and the benchmark's hash is the
 * SHA-256 of its functions' names and hashes in name order.
 *
 * The data objects the code names (a constant table, an initialised array: symbols of the
 * program's symbol table with bytes in the file) are part of it too, by the hash of their bytes:
 * a changed table is a changed benchmark. Data without a symbol (string literals) is not.
 * Bytes appended to the program's file after everything its ELF headers describe are data the
 * program may read (a payload it finds in /proc/self/exe): their hash is part of every
 * benchmark's identity, so a copy with something appended is not "the same code".
 *
 * Limits. Data the code reaches without naming a symbol (string literals, what a pointer
 * points to, files it reads) is not in it.
 * Code in shared libraries is not in the program's disassembly: a call to one through the PLT
 * keeps the identity only when the library is the C runtime's (a versioned symbol, GLIBC_...),
 * a sanitizer's runtime or the harness's; a call to any other (a user's library, linked shared) makes it unknown,
 * since that library may differ between the builds compared while the program does not.
 */
#include "sys/code_id.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/sha256.h"

typedef struct insn {
    uint64_t addr;
    char *text; /* as objdump wrote it, whitespace collapsed (owned) */
    bool pad;   /* padding: nop, int3 */
} insn;

typedef struct fn {
    char *name; /* owned */
    uint64_t start;
    size_t first, n; /* its instructions: ins[first .. first + n) */
} fn;

/* A data object of the program (its symbol table's): the SHA-256 of its bytes in the file. */
typedef struct object {
    char *name; /* owned */
    unsigned char hash[BENCH__SHA256_BYTES];
} object;

struct bench__code_ids {
    object *objs; /* sorted by name once the program is read */
    size_t nobjs, capo;
    fn *fns;
    size_t nfns, capf;
    insn *ins;
    size_t nins, capi;
    char **foreign; /* undefined dynamic symbols without a version: another shared library's */
    size_t nforeign, capfo;
    bool in_dynsym; /* between "DYNAMIC SYMBOL TABLE:" and the first "Disassembly of" */
    bool sorted;    /* fns sorted by name (done before the first hash; feeding ends then) */
    fn *current;    /* the function whose instructions come now; NULL none */
    /* Bytes appended to the program's file after everything its ELF headers describe, which
     * the program may read as data (a payload): their SHA-256, part of every identity. */
    bool overlay;
    unsigned char overlay_hash[BENCH__SHA256_BYTES];
};

int bench__code_ids_new(bench__code_ids **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : BENCH_ENOMEM;
}

void bench__code_ids_overlay(bench__code_ids *c, const unsigned char hash[BENCH__SHA256_BYTES])
{
    memcpy(c->overlay_hash, hash, sizeof c->overlay_hash);
    c->overlay = true;
}

size_t bench__code_ids_functions(const bench__code_ids *c)
{
    return c->nfns;
}

void bench__code_ids_free(bench__code_ids *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nfns; i++)
        free(c->fns[i].name);
    for (size_t i = 0; i < c->nins; i++)
        free(c->ins[i].text);
    for (size_t i = 0; i < c->nforeign; i++)
        free(c->foreign[i]);
    for (size_t i = 0; i < c->nobjs; i++)
        free(c->objs[i].name);
    free(c->objs);
    free(c->fns);
    free(c->ins);
    free(c->foreign);
    free(c);
}

/* Grows *arr (of elements of `size` bytes, *cap of them) to hold one more than n. */
static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t more = *cap ? *cap * 2 : 64;
    void *p = realloc(*arr, more * size);
    if (!p)
        return BENCH_ENOMEM;
    *arr = p;
    *cap = more;
    return 0;
}

static bool is_hex(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
}

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* The next whitespace-separated token of *s into tok (cut to len), advancing *s; false at the
 * end. */
static bool token(const char **s, char *tok, size_t len)
{
    const char *p = *s;
    while (is_space(*p))
        p++;
    if (!*p)
        return false;
    size_t k = 0;
    while (*p && !is_space(*p)) {
        if (k + 1 < len)
            tok[k++] = *p;
        p++;
    }
    tok[k] = '\0';
    *s = p;
    return true;
}

/* A dynamic symbol table row: "ADDR FLAGS *UND* SIZE [VERSION] NAME". An undefined symbol with
 * no version ("Base", or none) is another shared library's than the C runtime's. */
static int dynsym_line(bench__code_ids *c, const char *line)
{
    const char *und = strstr(line, "*UND*");
    if (!und)
        return 0;
    const char *p = und + 5;
    char t[3][256];
    int k = 0;
    while (k < 3 && token(&p, t[k], sizeof t[k]))
        k++;
    /* t[0] the size; then NAME alone, or VERSION NAME */
    bool versioned = k == 3 && strcmp(t[1], "Base") != 0 && strcmp(t[1], "(Base)") != 0;
    if (k < 2 || versioned)
        return 0;
    if (grow((void **)&c->foreign, &c->capfo, c->nforeign, sizeof *c->foreign) != 0 ||
        !(c->foreign[c->nforeign] = strdup(t[k - 1])))
        return BENCH_ENOMEM;
    c->nforeign++;
    return 0;
}

/* Whether a collapsed instruction text is padding: a nop of any length or prefix, int3. */
static bool is_padding(const char *text)
{
    const char *p = text;
    char tok[32];
    while (token(&p, tok, sizeof tok)) {
        if (strcmp(tok, "cs") == 0 || strcmp(tok, "ds") == 0 || strcmp(tok, "data16") == 0 ||
            strcmp(tok, "addr32") == 0)
            continue; /* prefixes of a long nop */
        return bench__starts_with(tok, "nop") || strcmp(tok, "int3") == 0 ||
               strcmp(text, "xchg %ax,%ax") == 0;
    }
    return true; /* nothing but prefixes */
}

/* "ADDR <NAME>:" starts a function. */
static int label_line(bench__code_ids *c, const char *line, size_t hex)
{
    const char *name = line + hex + 2;
    size_t len = strlen(name);
    if (len < 3 || name[len - 1] != ':' || name[len - 2] != '>')
        return 0;
    if (grow((void **)&c->fns, &c->capf, c->nfns, sizeof *c->fns) != 0)
        return BENCH_ENOMEM;
    fn *f = &c->fns[c->nfns];
    memset(f, 0, sizeof *f);
    if (!(f->name = strndup(name, len - 2)))
        return BENCH_ENOMEM;
    f->start = strtoull(line, NULL, 16);
    f->first = c->nins;
    c->current = f;
    c->nfns++;
    return 0;
}

int bench__code_ids_line(bench__code_ids *c, const char *line)
{
    if (c->sorted)
        return 0;
    if (bench__starts_with(line, "DYNAMIC SYMBOL TABLE:")) {
        c->in_dynsym = true;
        return 0;
    }
    if (bench__starts_with(line, "Disassembly of section")) {
        c->in_dynsym = false;
        c->current = NULL;
        return 0;
    }
    if (c->in_dynsym)
        return dynsym_line(c, line);
    size_t hex = 0;
    while (is_hex(line[hex]))
        hex++;
    if (hex > 0 && line[hex] == ' ' && line[hex + 1] == '<')
        return label_line(c, line, hex);
    /* "  ADDR:<TAB>TEXT": an instruction of the current function. */
    const char *p = line;
    while (*p == ' ')
        p++;
    const char *digits = p;
    while (is_hex(*p))
        p++;
    if (!c->current || p == digits || digits == line || *p != ':' || p[1] != '\t')
        return 0;
    const char *text = p + 2;
    size_t len = strlen(text);
    char *t = malloc(len + 1);
    if (!t)
        return BENCH_ENOMEM;
    size_t k = 0;
    for (const char *q = text; *q; q++) /* whitespace collapsed, trailing dropped */
        if (!is_space(*q))
            t[k++] = *q;
        else if (k > 0 && t[k - 1] != ' ')
            t[k++] = ' ';
    while (k > 0 && t[k - 1] == ' ')
        k--;
    t[k] = '\0';
    if (k == 0 || strcmp(t, "...") == 0) {
        free(t);
        return 0;
    }
    if (grow((void **)&c->ins, &c->capi, c->nins, sizeof *c->ins) != 0) {
        free(t);
        return BENCH_ENOMEM;
    }
    c->ins[c->nins] = (insn){.addr = strtoull(digits, NULL, 16), .text = t,
                             .pad = is_padding(t)};
    c->nins++;
    c->current->n++;
    return 0;
}

int bench__code_ids_object(bench__code_ids *c, const char *name, const void *bytes, size_t n)
{
    if (grow((void **)&c->objs, &c->capo, c->nobjs, sizeof *c->objs) != 0)
        return BENCH_ENOMEM;
    object *o = &c->objs[c->nobjs];
    if (!(o->name = strdup(name)))
        return BENCH_ENOMEM;
    bench__sha256(bytes, n, o->hash);
    c->nobjs++;
    return 0;
}

/* ---- hashing ---- */

static int obj_by_name(const void *a, const void *b)
{
    const object *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d ? d : memcmp(x->hash, y->hash, sizeof x->hash);
}

/* The first object named exactly `name` (len characters), or c->nobjs. */
static size_t find_obj(const bench__code_ids *c, const char *name, size_t len)
{
    size_t lo = 0, hi = c->nobjs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int d = strncmp(c->objs[mid].name, name, len);
        if (d == 0 && c->objs[mid].name[len] != '\0')
            d = 1;
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int by_name(const void *a, const void *b)
{
    const fn *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d ? d : (x->start > y->start) - (x->start < y->start);
}

/* The first function named exactly `name` (len characters), or c->nfns. */
static size_t find_fn(const bench__code_ids *c, const char *name, size_t len)
{
    size_t lo = 0, hi = c->nfns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int d = strncmp(c->fns[mid].name, name, len);
        if (d == 0 && c->fns[mid].name[len] != '\0')
            d = 1;
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->nfns && strncmp(c->fns[lo].name, name, len) == 0 &&
        c->fns[lo].name[len] == '\0')
        return lo;
    return c->nfns;
}

static bool is_foreign(const bench__code_ids *c, const char *name, size_t len)
{
    for (size_t i = 0; i < c->nforeign; i++)
        if (strncmp(c->foreign[i], name, len) == 0 && c->foreign[i][len] == '\0')
            return true;
    return false;
}

/* The functions of one benchmark's code, found so far, and a buffer for one instruction. */
typedef struct walk {
    bench__code_ids *c;
    unsigned char *seen; /* per function: 1 when in the list */
    size_t *list, n;     /* the functions found, in the order found */
    unsigned char *seen_obj; /* per data object: 1 when the code names it */
    bool unknown;        /* a call into a foreign shared library */
    char buf[8192];
} walk;

/* A sanitizer's runtime (-fsanitize=...): its checks are instrumentation the compiler put into
 * both builds alike, from an unversioned shared library that is not the code under test. */
static bool sanitizer_runtime(const char *name)
{
    static const char *const prefixes[] = {"__asan_", "__ubsan_", "__sanitizer_", "__tsan_",
                                           "__msan_", "__lsan_"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (bench__starts_with(name, prefixes[i]))
            return true;
    return false;
}

/* Adds every function named `name` (len characters) to the walk. */
static void reach(walk *w, const char *name, size_t len)
{
    if (bench__starts_with(name, "bench_") || sanitizer_runtime(name))
        return; /* the harness, a sanitizer's checks: named, not followed */
    const char *at = memchr(name, '@', len);
    if (at) { /* another object's: memcpy@plt, free@GLIBC_2.2.5, lib_fn@Base */
        if (is_foreign(w->c, name, (size_t)(at - name)))
            w->unknown = true;
        return;
    }
    if (is_foreign(w->c, name, len)) {
        w->unknown = true;
        return;
    }
    for (size_t i = find_fn(w->c, name, len);
         i < w->c->nfns && strncmp(w->c->fns[i].name, name, len) == 0 &&
         w->c->fns[i].name[len] == '\0';
         i++)
        if (!w->seen[i]) {
            w->seen[i] = 1;
            w->list[w->n++] = i;
        }
    for (size_t i = find_obj(w->c, name, len);
         i < w->c->nobjs && strncmp(w->c->objs[i].name, name, len) == 0 &&
         w->c->objs[i].name[len] == '\0';
         i++)
        w->seen_obj[i] = 1;
}

/* The index among f's non-padding instructions of the first one at or after addr. */
static size_t index_of(const bench__code_ids *c, const fn *f, uint64_t addr)
{
    size_t k = 0;
    for (size_t i = 0; i < f->n; i++) {
        const insn *x = &c->ins[f->first + i];
        if (x->addr >= addr)
            break;
        k += !x->pad;
    }
    return k;
}

/* Appends s (len characters) to w->buf at *k, cut at its end. */
static void put(walk *w, size_t *k, const char *s, size_t len)
{
    size_t room = sizeof w->buf - 1 - *k;
    if (len > room)
        len = room;
    memcpy(w->buf + *k, s, len);
    *k += len;
    w->buf[*k] = '\0';
}

/* One instruction of f reduced to what does not depend on placement (the file's comment), into
 * w->buf; the functions it names are reached. */
static void reduce(walk *w, const fn *f, const char *t)
{
    size_t k = 0;
    bool comment = false;
    w->buf[0] = '\0';
    for (const char *p = t; *p;) {
        if (*p == '#') {
            comment = true;
            put(w, &k, "#", 1);
            p++;
            while (*p == ' ')
                p++;
            const char *h = p; /* the address objdump shows: dropped */
            while (is_hex(*p))
                p++;
            if (*p != ' ' && *p != '\0')
                p = h;
            continue;
        }
        if (*p == '<') {
            const char *end = strchr(p, '>');
            if (!end)
                end = p + strlen(p);
            /* The target's address before it ("call 1030 <f>"): dropped. */
            size_t back = k;
            while (back > 0 && w->buf[back - 1] == ' ')
                back--;
            size_t digits = back;
            while (digits > 0 && is_hex(w->buf[digits - 1]))
                digits--;
            if (digits < back && (digits == 0 || w->buf[digits - 1] == ' '))
                k = digits;
            const char *sym = p + 1;
            size_t len = (size_t)(end - sym), base = len;
            const char *plus = NULL;
            for (size_t i = 0; i + 2 < len; i++)
                if (sym[i] == '+' && sym[i + 1] == '0' && sym[i + 2] == 'x') {
                    plus = sym + i;
                    base = i;
                }
            char cell[64];
            if (!comment && base == strlen(f->name) && strncmp(sym, f->name, base) == 0) {
                /* Within this function: the target instruction's index. */
                uint64_t off = plus ? strtoull(plus + 1, NULL, 16) : 0;
                bench__msg(cell, sizeof cell, "<.%zu>", index_of(w->c, f, f->start + off));
                put(w, &k, cell, strlen(cell));
            } else {
                put(w, &k, "<", 1);
                /* In a comment (a RIP-relative operand) the symbol, not the offset from it. */
                put(w, &k, sym, comment ? base : len);
                put(w, &k, ">", 1);
                reach(w, sym, base);
            }
            p = *end ? end + 1 : end;
            continue;
        }
        if ((p[0] == '0' && p[1] == 'x') || (p[0] == '-' && p[1] == '0' && p[2] == 'x')) {
            /* A displacement from %rip: where the target is relative to this instruction. */
            const char *q = p + (p[0] == '-' ? 3 : 2);
            while (is_hex(*q))
                q++;
            if (bench__starts_with(q, "(%rip)")) {
                p = q;
                continue;
            }
        }
        put(w, &k, p, 1);
        p++;
    }
    while (k > 0 && w->buf[k - 1] == ' ')
        w->buf[--k] = '\0';
}

/* The SHA-256 of f's reduced instructions, padding left out. */
static void hash_fn(walk *w, const fn *f, unsigned char out[BENCH__SHA256_BYTES])
{
    bench__sha256_ctx s;
    bench__sha256_init(&s);
    for (size_t i = 0; i < f->n; i++) {
        const insn *x = &w->c->ins[f->first + i];
        if (x->pad)
            continue;
        reduce(w, f, x->text);
        bench__sha256_update(&s, w->buf, strlen(w->buf) + 1);
    }
    bench__sha256_final(&s, out);
}

typedef struct named_hash {
    const char *name;
    unsigned char h[BENCH__SHA256_BYTES];
} named_hash;

static int by_name_hash(const void *a, const void *b)
{
    const named_hash *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d ? d : memcmp(x->h, y->h, sizeof x->h);
}

void bench__code_hash(bench__code_ids *c, const char *id, char out[BENCH__CODE_HASH_TEXT])
{
    out[0] = '\0';
    if (!c || !id)
        return;
    if (!c->sorted) {
        qsort(c->fns, c->nfns, sizeof *c->fns, by_name);
        qsort(c->objs, c->nobjs, sizeof *c->objs, obj_by_name);
        c->sorted = true;
        c->current = NULL;
    }
    /* BENCH_FN(group, name) defines bench__fn_group__name; the id starts "group/name". */
    const char *slash = strchr(id, '/');
    if (!slash)
        return;
    size_t glen = (size_t)(slash - id), nlen = strcspn(slash + 1, "/");
    char root[600];
    if (glen + nlen + 16 > sizeof root)
        return;
    bench__msg(root, sizeof root, "bench__fn_%.*s__%.*s", (int)glen, id, (int)nlen, slash + 1);
    size_t r = find_fn(c, root, strlen(root));
    if (r == c->nfns) { /* a compiler's private copy: bench__fn_g__n.lto_priv.0 */
        size_t len = strlen(root);
        for (size_t i = 0; i < c->nfns && r == c->nfns; i++)
            if (strncmp(c->fns[i].name, root, len) == 0 && c->fns[i].name[len] == '.')
                r = i;
    }
    walk *w = calloc(1, sizeof *w);
    if (r == c->nfns || !w) {
        free(w);
        return;
    }
    w->c = c;
    w->seen = calloc(c->nfns, 1);
    w->list = calloc(c->nfns, sizeof *w->list);
    w->seen_obj = calloc(c->nobjs + 1, 1);
    named_hash *hs = calloc(c->nfns, sizeof *hs);
    if (w->seen && w->list && w->seen_obj && hs) {
        w->seen[r] = 1;
        w->list[w->n++] = r;
        /* Each function found is hashed, which reaches the functions it names. */
        for (size_t i = 0; i < w->n; i++) {
            const fn *f = &c->fns[w->list[i]];
            hs[i].name = f->name;
            hash_fn(w, f, hs[i].h);
        }
        if (!w->unknown) {
            qsort(hs, w->n, sizeof *hs, by_name_hash);
            bench__sha256_ctx s;
            bench__sha256_init(&s);
            for (size_t i = 0; i < w->n; i++) {
                bench__sha256_update(&s, hs[i].name, strlen(hs[i].name) + 1);
                bench__sha256_update(&s, hs[i].h, sizeof hs[i].h);
            }
            /* The data objects the code names, in name order (objs is sorted): their bytes. */
            for (size_t i = 0; i < c->nobjs; i++)
                if (w->seen_obj[i]) {
                    bench__sha256_update(&s, "data", 5);
                    bench__sha256_update(&s, c->objs[i].name, strlen(c->objs[i].name) + 1);
                    bench__sha256_update(&s, c->objs[i].hash, sizeof c->objs[i].hash);
                }
            if (c->overlay) {
                bench__sha256_update(&s, "overlay", 8);
                bench__sha256_update(&s, c->overlay_hash, sizeof c->overlay_hash);
            }
            unsigned char d[BENCH__SHA256_BYTES];
            bench__sha256_final(&s, d);
            bench__hex(d, sizeof d, out);
        }
    }
    free(hs);
    free(w->seen_obj);
    free(w->seen);
    free(w->list);
    free(w);
}
