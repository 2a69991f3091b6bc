/*
 * report_metrics.h: the pretty reporter's block of per-iteration metrics and facts
 * (report_metrics.c), called from report_text.c under each result.
 */
#ifndef HARNESS_REPORT_METRICS_H
#define HARNESS_REPORT_METRICS_H

#include <stdbool.h>
#include <stdio.h>

#include "core/result.h"

/**
 * Prints one line per metric of r (median per iteration with its interval; "(scaled: counted
 * N% of the time)" when it was multiplexed), then one per fact (derived ratios such as IPC),
 * indented under the result's time line. Prints nothing for a result that is not OK or has
 * neither metrics nor facts.
 */
void bench__print_metrics(FILE *o, const bench__result *r, bool color);

/** Formats a count with 4 significant digits and an SI prefix from k up ("1.234 k"). */
void bench__fmt_count(char *buf, size_t len, double v);

/**
 * Formats a metric's value in its unit: "ns" as a time ("1.234 µs"), "events" as a bare count
 * ("16.00", "1.234 k"), any other unit after the count ("512.0 B", "1.234 kB").
 */
void bench__fmt_metric(char *buf, size_t len, double v, const char *unit);

#endif /* HARNESS_REPORT_METRICS_H */
