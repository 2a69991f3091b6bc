/*
 * program_build.c: how the benchmark program itself was compiled, as the compiler recorded it in
 * the executable, kept apart from how the harness library was built (context.compiler_flags):
 * the two differ whenever a user builds a program at -O2 against a library built at -O3.
 *
 * Two records are read, in this order: the DW_AT_producer of the DWARF compilation unit of a
 * BENCH_FN file (GCC puts its version and switches there with -g, -grecord-gcc-switches being
 * its default; clang its version, and its command line with -grecord-command-line), then the
 * .GCC.command.line section (-frecord-gcc-switches: the switches of every file compiled with
 * it). With neither, the flags are unknown: never guessed, and never the library's. The file is
 * mapped read-only and only read within its bounds: an executable that is not 64-bit
 * little-endian ELF, a compressed debug section or a malformed unit gives "unknown", never an
 * error.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "sys/user_build.h"

/* ---- reading within bounds ---- */

typedef struct rd {
    const uint8_t *p, *end;
    bool bad; /* a read went past the end: every later read gives 0 */
} rd;

static uint64_t fixed(rd *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) /* little-endian */
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

static uint64_t uleb(rd *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint64_t b = fixed(r, 1);
        if (r->bad)
            return 0;
        if (shift < 64)
            v |= (b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
}

static void skip(rd *r, uint64_t n)
{
    if (r->bad || (uint64_t)(r->end - r->p) < n)
        r->bad = true;
    else
        r->p += n;
}

/* A NUL-terminated string at p within [p, end); NULL when it does not end there. */
static const char *cstr(const uint8_t *p, const uint8_t *end)
{
    return p < end && memchr(p, 0, (size_t)(end - p)) ? (const char *)p : NULL;
}

/* ---- ELF ---- */

typedef struct section {
    const uint8_t *p;
    size_t len; /* 0: absent (or compressed: not read) */
} section;

typedef struct elf_sections {
    section info, abbrev, str, line_str, str_offsets, cmdline;
} elf_sections;

#define SHF_COMPRESSED_FLAG 0x800
#define SHT_NOBITS_TYPE 8

/* The sections of a 64-bit little-endian ELF file image; false when it is not one. */
static bool elf_find(const uint8_t *img, size_t len, elf_sections *s)
{
    memset(s, 0, sizeof *s);
    if (len < 64 || memcmp(img, ELFMAG, SELFMAG) != 0 || img[4] != 2 /* 64-bit */ ||
        img[5] != 1 /* little-endian */)
        return false;
    rd h = {img + 0x28, img + len, false};
    uint64_t shoff = fixed(&h, 8);
    skip(&h, 6); /* e_flags, e_ehsize */
    skip(&h, 4); /* e_phentsize, e_phnum */
    uint64_t shentsize = fixed(&h, 2), shnum = fixed(&h, 2), shstrndx = fixed(&h, 2);
    if (h.bad || shentsize < 64 || shnum == 0 || shstrndx >= shnum || shoff > len ||
        (len - shoff) / shentsize < shnum)
        return false;
    const uint8_t *sh = img + shoff;
    const uint8_t *names = NULL;
    size_t names_len = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t i = 0; i < shnum; i++) {
            if (pass == 0 && i != shstrndx)
                continue;
            rd e = {sh + i * shentsize, sh + i * shentsize + 64, false};
            uint64_t name = fixed(&e, 4), type = fixed(&e, 4), flags = fixed(&e, 8);
            skip(&e, 8); /* sh_addr */
            uint64_t off = fixed(&e, 8), size = fixed(&e, 8);
            if (e.bad || type == SHT_NOBITS_TYPE || off > len || size > len - off)
                continue;
            if (pass == 0) {
                names = img + off;
                names_len = size;
                continue;
            }
            const char *nm = name < names_len ? cstr(names + name, names + names_len) : NULL;
            if (!nm || (flags & SHF_COMPRESSED_FLAG))
                continue;
            section sec = {img + off, size};
            if (strcmp(nm, ".debug_info") == 0)
                s->info = sec;
            else if (strcmp(nm, ".debug_abbrev") == 0)
                s->abbrev = sec;
            else if (strcmp(nm, ".debug_str") == 0)
                s->str = sec;
            else if (strcmp(nm, ".debug_line_str") == 0)
                s->line_str = sec;
            else if (strcmp(nm, ".debug_str_offsets") == 0)
                s->str_offsets = sec;
            else if (strcmp(nm, ".GCC.command.line") == 0)
                s->cmdline = sec;
        }
        if (!names)
            return false;
    }
    return true;
}

/* ---- DWARF: the name and producer of each compilation unit ---- */

enum {
    AT_NAME = 0x03,
    AT_PRODUCER = 0x25,
    AT_STR_OFFSETS_BASE = 0x72,
    FORM_SEC_OFFSET = 0x17,
    FORM_STRING = 0x08,
    FORM_STRP = 0x0e,
    FORM_INDIRECT = 0x16,
    FORM_IMPLICIT_CONST = 0x21,
    FORM_LINE_STRP = 0x1f,
};

/* The string a form gives, or NULL; skips the value of any other form (r->bad when unknown).
 * An index into the string offsets (DWARF 5's strx forms, clang's) goes into *strx. */
static const char *form_value(rd *r, uint64_t form, unsigned offsize, unsigned addrsize,
                              unsigned version, const elf_sections *s, uint64_t *strx)
{
    *strx = UINT64_MAX;
    static const unsigned char strx_bytes[] = {[0x25] = 1, [0x26] = 2, [0x27] = 3, [0x28] = 4};
    if (form == 0x1a) { /* strx */
        *strx = uleb(r);
        return NULL;
    }
    if (form >= 0x25 && form <= 0x28) {
        *strx = fixed(r, strx_bytes[form]);
        return NULL;
    }
    static const signed char sizes[] = {
        /* bytes of each fixed-size form 0x00..0x2c; -1: variable, handled below */
        [0x01] = -1, [0x05] = 2,  [0x06] = 4,  [0x07] = 8,  [0x0b] = 1,  [0x0c] = 1,
        [0x11] = 1,  [0x12] = 2,  [0x13] = 4,  [0x14] = 8,  [0x19] = 0,  [0x1c] = 4,
        [0x1e] = 16, [0x20] = 8,  [0x21] = 0,  [0x24] = 8,  [0x25] = 1,  [0x26] = 2,
        [0x27] = 3,  [0x28] = 4,  [0x29] = 1,  [0x2a] = 2,  [0x2b] = 3,  [0x2c] = 4,
    };
    switch (form) {
    case 0x01: /* addr */
        skip(r, addrsize);
        return NULL;
    case FORM_STRING: {
        const char *v = cstr(r->p, r->end);
        if (!v)
            r->bad = true;
        else
            skip(r, strlen(v) + 1);
        return v;
    }
    case FORM_STRP:
    case FORM_LINE_STRP: {
        uint64_t off = fixed(r, offsize);
        const section *sec = form == FORM_STRP ? &s->str : &s->line_str;
        return !r->bad && off < sec->len ? cstr(sec->p + off, sec->p + sec->len) : NULL;
    }
    case 0x03: /* block2 */
        skip(r, fixed(r, 2));
        return NULL;
    case 0x04: /* block4 */
        skip(r, fixed(r, 4));
        return NULL;
    case 0x09: /* block */
    case 0x18: /* exprloc */
        skip(r, uleb(r));
        return NULL;
    case 0x0a: /* block1 */
        skip(r, fixed(r, 1));
        return NULL;
    case 0x0d: /* sdata */
    case 0x0f: /* udata */
    case 0x15: /* ref_udata */
    case 0x1b: /* addrx */
    case 0x22: /* loclistx */
    case 0x23: /* rnglistx */
        (void)uleb(r);
        return NULL;
    case 0x10: /* ref_addr: the address size in DWARF 2 */
        skip(r, version <= 2 ? addrsize : offsize);
        return NULL;
    case 0x17:   /* sec_offset */
    case 0x1d:   /* strp_sup */
    case 0x1f20: /* GNU_ref_alt */
    case 0x1f21: /* GNU_strp_alt */
        skip(r, offsize);
        return NULL;
    case FORM_INDIRECT:
        return form_value(r, uleb(r), offsize, addrsize, version, s, strx);
    default:
        if (form < sizeof sizes && (sizes[form] > 0 || form == 0x19 || form == 0x21)) {
            skip(r, (uint64_t)sizes[form]);
            return NULL;
        }
        r->bad = true;
        return NULL;
    }
}

/* The string at index x of the string offsets table at base (strx forms); NULL when out of
 * bounds or x is UINT64_MAX (no index). */
static const char *str_index(const elf_sections *s, uint64_t base, uint64_t x, unsigned offsize)
{
    const section *t = &s->str_offsets;
    if (x == UINT64_MAX || base > t->len || x >= (t->len - base) / offsize)
        return NULL;
    rd r = {t->p + base + x * offsize, t->p + t->len, false};
    uint64_t off = fixed(&r, offsize);
    return !r.bad && off < s->str.len ? cstr(s->str.p + off, s->str.p + s->str.len) : NULL;
}

/* Whether a unit's DW_AT_name names the BENCH_FN file `file`: the same path, or one ends with
 * the other after a '/' (a relative name against an absolute __FILE__, or the reverse). */
static bool same_file(const char *name, const char *file)
{
    size_t a = strlen(name), b = strlen(file);
    if (a == b)
        return strcmp(name, file) == 0;
    const char *longer = a > b ? name : file, *shorter = a > b ? file : name;
    size_t d = a > b ? a - b : b - a;
    return shorter[0] && strcmp(longer + d, shorter) == 0 && longer[d - 1] == '/';
}

/* The producer of the first unit named by one of the builds' files; NULL when none is. */
static const char *dwarf_producer(const elf_sections *s, const bench__user_builds *b)
{
    rd u = {s->info.p, s->info.p + s->info.len, false};
    while (!u.bad && u.p < u.end) {
        uint64_t length = fixed(&u, 4);
        unsigned offsize = 4;
        if (length == 0xffffffffu) {
            length = fixed(&u, 8);
            offsize = 8;
        }
        if (u.bad || length > (uint64_t)(u.end - u.p))
            return NULL;
        rd c = {u.p, u.p + length, false};
        u.p += length;
        unsigned version = (unsigned)fixed(&c, 2);
        uint64_t abbrev_off;
        unsigned addrsize;
        if (version >= 5) {
            uint64_t type = fixed(&c, 1);
            addrsize = (unsigned)fixed(&c, 1);
            abbrev_off = fixed(&c, offsize);
            if (type != 1 && type != 3) /* DW_UT_compile, DW_UT_partial */
                continue;
        } else if (version >= 2) {
            abbrev_off = fixed(&c, offsize);
            addrsize = (unsigned)fixed(&c, 1);
        } else {
            continue;
        }
        uint64_t code = uleb(&c);
        if (c.bad || code == 0 || abbrev_off >= s->abbrev.len)
            continue;
        /* The unit's first DIE's abbreviation: find its code in the unit's table. */
        rd a = {s->abbrev.p + abbrev_off, s->abbrev.p + s->abbrev.len, false};
        bool found = false;
        while (!a.bad && !found) {
            uint64_t k = uleb(&a);
            if (k == 0)
                break;
            (void)uleb(&a); /* tag */
            skip(&a, 1);    /* children */
            found = k == code;
            if (found)
                break;
            for (;;) {
                uint64_t at = uleb(&a), form = uleb(&a);
                if (form == FORM_IMPLICIT_CONST)
                    (void)uleb(&a);
                if (a.bad || (at == 0 && form == 0))
                    break;
            }
        }
        if (!found)
            continue;
        const char *name = NULL, *producer = NULL;
        uint64_t name_x = UINT64_MAX, producer_x = UINT64_MAX;
        uint64_t base = offsize == 8 ? 16 : 8; /* past the offsets table's header */
        for (;;) {
            uint64_t at = uleb(&a), form = uleb(&a), x;
            if (form == FORM_IMPLICIT_CONST)
                (void)uleb(&a); /* the value is in the table, none in the unit */
            if (a.bad || c.bad || (at == 0 && form == 0))
                break;
            if (at == AT_STR_OFFSETS_BASE && form == FORM_SEC_OFFSET) {
                base = fixed(&c, offsize);
                continue;
            }
            const char *v = form_value(&c, form, offsize, addrsize, version, s, &x);
            if (at == AT_NAME) {
                name = v;
                name_x = x;
            } else if (at == AT_PRODUCER) {
                producer = v;
                producer_x = x;
            }
        }
        if (!name)
            name = str_index(s, base, name_x, offsize);
        if (!producer)
            producer = str_index(s, base, producer_x, offsize);
        if (!name || !producer)
            continue;
        for (size_t k = 0; k < b->n; k++)
            if (same_file(name, b->v[k].file))
                return producer;
    }
    return NULL;
}

/* ---- the record ---- */

/* Appends " word" (its first w bytes) to out (room len) unless it is already there as a word. */
static void add_word(char *out, size_t len, const char *word, size_t w)
{
    for (const char *p = out; *p;) {
        size_t have = strcspn(p, " ");
        if (have == w && strncmp(p, word, w) == 0)
            return;
        p += have + (p[have] == ' ');
    }
    size_t at = strlen(out);
    if (at + (at ? 1 : 0) + w < len)
        bench__msg(out + at, len - at, "%s%.*s", at ? " " : "", (int)w, word);
}

/* Splits a producer ("GNU C17 12.2.0 -O2 -g") into its compiler (when *compiler is still "")
 * and its switches, added word by word to flags. A string that starts with '-' is switches. */
static void split_producer(const char *producer, char *compiler, size_t clen, char *flags,
                           size_t flen)
{
    const char *sw = producer[0] == '-' ? producer : strstr(producer, " -");
    if (sw != producer && !compiler[0])
        bench__msg(compiler, clen, "%.*s", (int)(sw ? (size_t)(sw - producer) : strlen(producer)),
                   producer);
    for (const char *p = sw; p && *p;) {
        p += strspn(p, " ");
        size_t w = strcspn(p, " ");
        if (w)
            add_word(flags, flen, p, w);
        p += w;
    }
}

void bench__program_build_read(const char *exe, const bench__user_builds *b,
                               bench__program_build *out)
{
    memset(out, 0, sizeof *out);
    out->source = "none";
    int fd = open(exe, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 64) {
        close(fd);
        return;
    }
    size_t len = (size_t)st.st_size;
    void *img = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (img == MAP_FAILED)
        return;
    elf_sections s;
    if (elf_find(img, len, &s)) {
        const char *producer = b && b->n && s.info.len && s.abbrev.len ? dwarf_producer(&s, b)
                                                                       : NULL;
        if (producer) {
            /* "GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2": the compiler, then the
             * switches from the first " -". */
            split_producer(producer, out->compiler, sizeof out->compiler, out->flags,
                           sizeof out->flags);
            out->source = "debug info";
        }
        if (!out->flags[0] && s.cmdline.len) {
            /* NUL-separated strings, merged by the linker across the files that have them:
             * one producer-like string per file (GCC 12), or one switch each (older GCC). */
            const uint8_t *p = s.cmdline.p, *end = p + s.cmdline.len;
            while (p < end) {
                const char *w = cstr(p, end);
                if (!w)
                    break;
                split_producer(w, out->compiler, sizeof out->compiler, out->flags,
                               sizeof out->flags);
                p += strlen(w) + 1;
            }
            if (out->flags[0])
                out->source = "command line record";
        }
        if (!out->flags[0])
            out->source = "none"; /* a producer without switches: the compiler alone */
    }
    munmap(img, len);
}
