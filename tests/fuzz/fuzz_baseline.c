/*
 * fuzz_baseline.c: the baseline loader under fuzzing. Each input is a results or baseline file's
 * text; it is parsed and validated as bench --baseline reads a file, and when it loads, every
 * entry is turned into a comparison side and compared with itself, as a comparison does with
 * the numbers read. Nothing may crash, leak, overflow or hit undefined behaviour, whatever the
 * bytes.
 *
 * Two builds of this file. With libFuzzer (HARNESS_FUZZ, clang): the fuzz target, which CI runs
 * for a fixed time (.ci/run). Without: a program that feeds it every file of the directories or
 * files named on its command line once, which ctest runs on the hostile fixtures and the corpus
 * (tests/fixtures/baselines, tests/fuzz/corpus), under AddressSanitizer and UBSan in the
 * sanitizer build.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/internal.h"
#include "compare/compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > BENCH__MAX_FILE_BYTES)
        return 0; /* the loader refuses larger files before reading them */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    bench__saved s;
    char msg[1024];
    if (bench__saved_parse("fuzz.json", text, size, &s, msg, sizeof msg) == 0) {
        bench__compare_opts o = {.significance_level = 0.05,
                                 .noise_threshold = 0.02,
                                 .default_run_noise = 0.015};
        for (size_t i = 0; i < s.n; i++) {
            const bench__entry *e = &s.entries[i];
            if (e->status != BENCH__OK)
                continue;
            bench__side side;
            if (bench__side_from_samples(e->iters, e->totals_ns, e->nsamples, 20, 0.95, 1,
                                         &side) != 0)
                continue;
            side.noise = e->noise;
            bench__change c;
            bench__compare_one(&side, &side, &o, &c);
            for (size_t m = 0; m < e->nmetrics; m++)
                bench__side_from_samples(e->iters, e->metrics[m].totals, e->nsamples, 20, 0.95,
                                         2, &side);
        }
        bench__saved_destroy(&s);
    } else {
        char shown[4 * sizeof msg];
        bench__escape(shown, sizeof shown, msg); /* messages quote the file: escaped on output */
    }
    free(text);
    return 0;
}

#ifndef HARNESS_LIBFUZZER

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *more = realloc(buf, cap * 2);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        return -1;
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

/* Feeds every regular file of the directories (or the files) named to the target, once. */
int main(int argc, char **argv)
{
    size_t files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) != 0)
                return 1;
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            if (run_file(path) != 0)
                return 1;
            files++;
        }
        if (d)
            closedir(d);
    }
    printf("fuzz_baseline: %zu inputs, no crash\n", files);
    return files > 0 ? 0 : 1;
}

#endif /* HARNESS_LIBFUZZER */
