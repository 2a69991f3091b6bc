/*
 * formats.c: the table of output formats (--output-format NAME). A format is its reporter's
 * file plus one line here: the command line's choices and their message, and the pipeline that
 * makes the run's reporter, all read this table.
 */
#include <stddef.h>

#include "report/report.h"

/* In the order the choice message lists them; the index is the bench__format value. "pretty"
 * has no function: the run's mode prints its own (times or instruction counts). */
const bench__format_entry bench__formats[] = {
    {"pretty", NULL},
    {"json", bench__reporter_json},
    {"csv", bench__reporter_csv},
    {"markdown", bench__reporter_markdown},
    {"bencher", bench__reporter_bencher},
    {"bmf", bench__reporter_bmf},
};
const size_t bench__nformats = sizeof bench__formats / sizeof bench__formats[0];
