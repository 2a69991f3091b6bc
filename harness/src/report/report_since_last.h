/*
 * report_since_last.h: the block "Since the last run" in words (report_since_last.c), its
 * comparisons already made (run/since_last.c) and decided (compare/).
 */
#ifndef HARNESS_REPORT_SINCE_LAST_H
#define HARNESS_REPORT_SINCE_LAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compare/compare.h"

/** One benchmark of the block: what it is, what it was compared with, and its change. */
typedef struct bench__since_line {
    const char *id;      /* the benchmark (escaped here) */
    const char *against; /* what the last run is called ("run 12, abc123"; escaped here) */
    const bench__change *change; /* the comparison, decided */
    bool machine_moved;  /* the same program measured both: what moved is the machine's
                          * (bench__verdict_machine_moved) */
} bench__since_line;

/**
 * The block on o: a blank line, "WHAT (WHERE; --no-last hides this):" (where as given: the
 * caller escapes it) and a line per benchmark of lines[0..n): its change with its interval and
 * verdict, or, when the comparison decided nothing and could not see a change of half the time,
 * its change and the smallest change it could tell (and the runs' drift beyond their spread
 * when that is above noise_threshold). Nothing when n is 0.
 */
void bench__report_since(FILE *o, const char *what, const char *where,
                         const bench__since_line *lines, size_t n, double noise_threshold);

#endif /* HARNESS_REPORT_SINCE_LAST_H */
