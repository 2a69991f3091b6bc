/*
 * report.h: output formats and the reporters that print results as they finish.
 */
#ifndef HARNESS_REPORT_H
#define HARNESS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compare/compare.h"
#include "core/result.h"
#include "sys/context.h"

/**
 * An output format: an index into bench__formats (formats.c). Only the two that other code
 * must tell apart have names.
 */
typedef unsigned bench__format;
#define BENCH__FMT_PRETTY 0u
#define BENCH__FMT_JSON 1u
#define BENCH__FMT_BMF 5u /* --history-show prints the newest run in it */

/** A reporter consumes results as they finish; `end` writes whatever waits for the whole run. */
typedef struct bench__reporter {
    void (*begin)(struct bench__reporter *rep, const bench__context *ctx);
    void (*result)(struct bench__reporter *rep, const bench__result *r);
    int (*end)(struct bench__reporter *rep, const bench__context *ctx,
               const bench__result *all, size_t n);
    FILE *out;
    bool color;
    /* The run's comparison settings (--noise-threshold, --significance-level), which size what
     * a saved comparison can see; NULL: the defaults. Borrowed; set after the make function. */
    const bench__compare_opts *cmp;
    /* The benchmarks a saved comparison of this run would compare (its Bonferroni factor), which
     * also sizes what it can see; 0: one. Set after the make function. */
    size_t tests;
} bench__reporter;

/** One line of the table of output formats: its --output-format name and its reporter. */
typedef struct bench__format_entry {
    const char *name;
    void (*make)(struct bench__reporter *rep, FILE *out); /* NULL: the mode's own (pretty) */
} bench__format_entry;
extern const bench__format_entry bench__formats[];
extern const size_t bench__nformats;

/**
 * Sets up a reporter that writes everything in `end`, once the whole run is known (JSON,
 * Markdown, bencher): its begin and result hooks do nothing.
 */
void bench__reporter_at_end(bench__reporter *rep, FILE *out,
                            int (*end)(bench__reporter *rep, const bench__context *ctx,
                                       const bench__result *all, size_t n));
void bench__reporter_pretty(bench__reporter *rep, FILE *out, bool color);
void bench__reporter_csv(bench__reporter *rep, FILE *out);
void bench__reporter_markdown(bench__reporter *rep, FILE *out);
void bench__reporter_json(bench__reporter *rep, FILE *out);
/** The line format continuous-benchmarking services read (report_interop.c). */
void bench__reporter_bencher(bench__reporter *rep, FILE *out);
/** The bencher Metric Format, bencher.dev's JSON (reporters.c). */
void bench__reporter_bmf(bench__reporter *rep, FILE *out);
/** Writes the results in Google Benchmark's JSON format, atomically (report_interop.c). */
int bench__gbench_write_file(const char *path, const bench__context *ctx, const bench__result *all,
                             size_t n, char *msg, size_t msglen);

/** Prints the heading of --explain's finding for one benchmark, "ID: VERDICT" (the id escaped;
 * report_compare.c). */
void bench__print_explained_heading(FILE *out, const char *id, bench__verdict v);
/** Prints --explain's finding under a benchmark's verdict: the functions the change went into,
 * how it was profiled, or why it was not explained (indented lines; report_compare.c). */
void bench__print_explanation(FILE *out, const bench__explanation *e);

/** Whether to color stdout (--color; auto: a terminal, NO_COLOR and TERM=dumb respected). */
bool bench__use_color(int mode);

#endif /* HARNESS_REPORT_H */
