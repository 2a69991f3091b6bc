/*
 * code_id_file.c: the program's file read for its code identity (code_id.h): objdump's
 * disassembly of it fed to code_id.c line by line, the bytes of its symbol table's data objects,
 * and the hash of what is appended after everything its ELF headers describe. code_id.c knows
 * only text and bytes handed to it (and is tested on them); the files and processes are here.
 */
#include "sys/code_id.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "core/sha256.h"
#include "sys/clock.h"
#include "sys/proc.h"

/* Reads n bytes at off of fd into buf: true when all came. */
static bool read_at(int fd, void *buf, size_t n, off_t off)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}

/* The end of what a 64-bit little-endian ELF file's headers describe (its headers, segments,
 * sections and their table), or 0 when it is not one or a header cannot be read. */
static uint64_t elf_end(int fd)
{
    Elf64_Ehdr h;
    if (!read_at(fd, &h, sizeof h, 0) || memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 ||
        h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB ||
        h.e_phentsize != sizeof(Elf64_Phdr) || h.e_shentsize != sizeof(Elf64_Shdr))
        return 0;
    uint64_t end = sizeof h;
#define EXTEND(off, size)                                                                          \
    do {                                                                                           \
        if ((uint64_t)(off) + (uint64_t)(size) > end)                                              \
            end = (uint64_t)(off) + (uint64_t)(size);                                              \
    } while (0)
    EXTEND(h.e_phoff, (uint64_t)h.e_phnum * sizeof(Elf64_Phdr));
    EXTEND(h.e_shoff, (uint64_t)h.e_shnum * sizeof(Elf64_Shdr));
    for (unsigned i = 0; i < h.e_phnum; i++) {
        Elf64_Phdr ph;
        if (!read_at(fd, &ph, sizeof ph, (off_t)(h.e_phoff + i * sizeof ph)))
            return 0;
        EXTEND(ph.p_offset, ph.p_filesz);
    }
    for (unsigned i = 0; i < h.e_shnum; i++) {
        Elf64_Shdr sh;
        if (!read_at(fd, &sh, sizeof sh, (off_t)(h.e_shoff + i * sizeof sh)))
            return 0;
        if (sh.sh_type != SHT_NOBITS)
            EXTEND(sh.sh_offset, sh.sh_size);
    }
#undef EXTEND
    return end;
}

/* The data objects of a 64-bit little-endian ELF program's symbol table that have bytes in the
 * file (initialised data, constants), each with the hash of its bytes. 0, or BENCH_ENOMEM; a
 * file without a symbol table, or a malformed one, adds none. */
static int read_objects(bench__code_ids *c, int fd)
{
    Elf64_Ehdr h;
    struct stat st;
    if (!read_at(fd, &h, sizeof h, 0) || memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 ||
        h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB ||
        h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shnum == 0 || fstat(fd, &st) != 0)
        return 0;
    uint64_t size = (uint64_t)st.st_size;
    Elf64_Shdr *sh = calloc(h.e_shnum, sizeof *sh);
    if (!sh)
        return BENCH_ENOMEM;
    int rc = 0;
    char *names = NULL;
    Elf64_Sym *syms = NULL;
    unsigned char *bytes = NULL;
    if (!read_at(fd, sh, h.e_shnum * sizeof *sh, (off_t)h.e_shoff))
        goto out;
    unsigned t = 0;
    while (t < h.e_shnum && sh[t].sh_type != SHT_SYMTAB)
        t++;
    if (t == h.e_shnum || sh[t].sh_link >= h.e_shnum || sh[t].sh_entsize != sizeof(Elf64_Sym))
        goto out;
    const Elf64_Shdr *ss = &sh[t], *st_ = &sh[ss->sh_link];
    if (ss->sh_offset + ss->sh_size > size || st_->sh_offset + st_->sh_size > size ||
        st_->sh_size == 0 || ss->sh_size > (64u << 20) || st_->sh_size > (64u << 20))
        goto out;
    names = malloc(st_->sh_size + 1);
    syms = malloc(ss->sh_size ? ss->sh_size : 1);
    if (!names || !syms) {
        rc = BENCH_ENOMEM;
        goto out;
    }
    if (!read_at(fd, names, st_->sh_size, (off_t)st_->sh_offset) ||
        !read_at(fd, syms, ss->sh_size, (off_t)ss->sh_offset))
        goto out;
    names[st_->sh_size] = '\0';
    size_t nsyms = ss->sh_size / sizeof *syms;
    for (size_t i = 0; i < nsyms && rc == 0; i++) {
        const Elf64_Sym *y = &syms[i];
        if (ELF64_ST_TYPE(y->st_info) != STT_OBJECT || y->st_size == 0 ||
            y->st_size > (16u << 20) || y->st_shndx == SHN_UNDEF || y->st_shndx >= h.e_shnum ||
            y->st_name >= st_->sh_size)
            continue;
        const Elf64_Shdr *in = &sh[y->st_shndx];
        if (in->sh_type == SHT_NOBITS || !(in->sh_flags & SHF_ALLOC) ||
            y->st_value < in->sh_addr || y->st_value + y->st_size > in->sh_addr + in->sh_size)
            continue;
        uint64_t off = in->sh_offset + (y->st_value - in->sh_addr);
        if (off + y->st_size > size)
            continue;
        unsigned char *more = realloc(bytes, y->st_size);
        if (!more) {
            rc = BENCH_ENOMEM;
            break;
        }
        bytes = more;
        if (read_at(fd, bytes, y->st_size, (off_t)off))
            rc = bench__code_ids_object(c, names + y->st_name, bytes, y->st_size);
    }
out:
    free(bytes);
    free(syms);
    free(names);
    free(sh);
    return rc;
}

/* The hash of the bytes appended to the program's file beyond its ELF contents, when any. */
static int read_file(bench__code_ids *c, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return 0;
    if (read_objects(c, fd) != 0) {
        close(fd);
        return BENCH_ENOMEM;
    }
    uint64_t end = elf_end(fd);
    if (end > 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size > end) {
        bench__sha256_ctx s;
        bench__sha256_init(&s);
        char buf[65536];
        ssize_t r;
        off_t off = (off_t)end;
        while ((r = pread(fd, buf, sizeof buf, off)) > 0) {
            bench__sha256_update(&s, buf, (size_t)r);
            off += r;
        }
        unsigned char hash[BENCH__SHA256_BYTES];
        bench__sha256_final(&s, hash);
        bench__code_ids_overlay(c, hash);
    }
    close(fd);
    return 0;
}

int bench__code_ids_of_program(const char *path, double timeout_s, bench__code_ids **out,
                               char *why, size_t whylen)
{
    *out = NULL;
    char objdump[4096];
    if (!bench__proc_which("objdump", objdump, sizeof objdump)) {
        bench__msg(why, whylen, "objdump (binutils) is not on PATH");
        return -1;
    }
    char *const argv[] = {"objdump", "-d", "-T", "--no-show-raw-insn", "-w", "--",
                          (char *)path, NULL};
    bench__proc_spec spec = {.path = objdump, .argv = argv, .channel = BENCH__PROC_STDOUT,
                             .quiet = true};
    bench__proc p;
    char msg[256];
    if (bench__proc_start(&p, &spec, msg, sizeof msg) != 0) {
        bench__msg(why, whylen, "objdump did not start: %s", msg);
        return -1;
    }
    bench__code_ids *c = NULL;
    int64_t deadline = bench__now_ns() + (int64_t)(timeout_s * 1e9);
    int rc = bench__code_ids_new(&c);
    char line[4096];
    int got = 0;
    while (rc == 0 && (got = bench__proc_line(&p, line, sizeof line, deadline)) == 1) {
        if (p.line_len >= sizeof line) { /* cut: its pieces would read as other lines */
            rc = -1;
            bench__msg(why, whylen, "objdump wrote a line longer than %zu bytes",
                       sizeof line - 1);
            break;
        }
        if (bench__code_ids_line(c, line) != 0) {
            rc = -1;
            bench__msg(why, whylen, "out of memory");
        }
    }
    if (rc == 0 && got != 0) {
        rc = -1;
        bench__msg(why, whylen, got == BENCH_EUSAGE ? "interrupted" : "objdump timed out");
    }
    bench__proc_end end = BENCH__PROC_STOPPED;
    if (rc != 0)
        bench__proc_kill(&p);
    else
        end = bench__proc_wait(&p, deadline);
    /* objdump -T exits 1 on a static program ("not a dynamic object") and still disassembles
     * it: what counts is that it ended by itself and gave functions. */
    if (rc == 0 && (end != BENCH__PROC_EXITED || !c || bench__code_ids_functions(c) == 0)) {
        rc = -1;
        bench__msg(why, whylen, end != BENCH__PROC_EXITED ? "objdump did not finish"
                                                          : "objdump found no functions");
    }
    if (rc != 0) {
        bench__code_ids_free(c);
        return -1;
    }
    if (read_file(c, path) != 0) {
        bench__msg(why, whylen, "out of memory");
        bench__code_ids_free(c);
        return -1;
    }
    *out = c;
    return 0;
}
