/*
 * base.h: error codes, exit codes and the text helpers every file of the harness uses;
 * not installed. Error codes and their messages come from one table.
 */
#ifndef HARNESS_BASE_H
#define HARNESS_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- errors: one table gives the codes and their messages ---- */
#define BENCH__ERRORS(X)                                                                           \
    X(BENCH_EUSAGE, -1, "usage error")                                                             \
    X(BENCH_ENOMEM, -2, "out of memory")                                                           \
    X(BENCH_EIO, -3, "input/output error")                                                         \
    X(BENCH_EINVAL, -4, "invalid value")                                                           \
    X(BENCH_EDUP, -5, "duplicate benchmark id")                                                    \
    X(BENCH_EUNAVAIL, -6, "capability unavailable")

enum {
#define BENCH__ERR_ENUM(name, code, msg) name = code,
    BENCH__ERRORS(BENCH__ERR_ENUM)
#undef BENCH__ERR_ENUM
};

/** The message of an error code from the table above; "unknown error" otherwise. */
const char *bench__strerror(int code);

/* ---- exit codes of the program ---- */
enum {
    BENCH_EXIT_OK = 0,
    BENCH_EXIT_REGRESSION = 1,
    BENCH_EXIT_USAGE = 2,
    BENCH_EXIT_FAILED = 3,
};

/* ---- formatting shared by the text reporters ---- */

/** Formats a duration given in ns with a unit (ps, ns, µs, ms, s) and 4 significant digits. */
void bench__fmt_time(char *buf, size_t len, double ns);
/** Formats a rate (per second) with an SI prefix and the unit, e.g. "1.2345 GB/s". */
void bench__fmt_rate(char *buf, size_t len, double per_s, const char *unit);
/**
 * The bootstrap seed of one benchmark: the run's seed XOR the FNV-1a hash of its id, so a
 * benchmark's intervals depend on its samples and the seed, not on which others ran.
 */
uint64_t bench__id_seed(uint64_t seed, const char *id);

/*
 * Untrusted text (benchmark names, messages, strings read from files) goes through one escaping
 * before any text output: C0 controls (ESC, CR, BEL, newline, tab, ...), DEL, C1 controls and
 * bytes that are not valid UTF-8 become \xNN, the bidirectional formatting characters \uNNNN;
 * everything else, backslashes and valid UTF-8 included, is kept. Escaping is idempotent.
 */
/** Escapes s into buf (truncated at a character boundary to fit len); returns buf. */
const char *bench__escape(char *buf, size_t len, const char *s);
/** Writes s, escaped as bench__escape does, to o. */
void bench__fputs_escaped(FILE *o, const char *s);
/** Room for any escaped id of at most 255 bytes (4 escaped bytes per byte at most). */
#define BENCH__ESCAPED_ID 1024
/**
 * Whether a text cell of CSV output needs the OWASP guard (a leading single quote): it starts
 * with =, +, -, @, tab or CR and is not a plain number.
 */
bool bench__csv_needs_guard(const char *s);

/*
 * The start of a string compared with a prefix, the one way: no length is typed by hand beside
 * a literal (a prefix changed and its count not is a silent bug).
 */
/** Whether s begins with prefix. */
bool bench__starts_with(const char *s, const char *prefix);
/** What follows prefix in s, or NULL when s does not begin with it. */
const char *bench__skip_prefix(const char *s, const char *prefix);
/** Removes the temporary folder dir and all below it (links removed, never followed); errors
 * are ignored. */
void bench__remove_tree(const char *dir);

/* ---- messages on stderr: each begins with the program's name ---- */

/**
 * Sets the name every message on stderr begins with: the basename of argv0 (the program as it
 * was invoked), escaped; "bench" when argv0 is NULL or has no basename. bench_main calls it
 * before anything can fail or crash, and nothing calls it after: the crash handler reads the name
 * (crash.c).
 */
void bench__set_prog_name(const char *argv0);
/** The name bench__set_prog_name set ("bench" before): a static buffer, valid for the process's
 * life. */
const char *bench__prog_name(void);
/**
 * Writes "NAME: " and the formatted text (which ends in its own newline) to stderr in one
 * write(2), NAME being bench__prog_name(): every error, warning and note of the harness.
 */
void bench__errf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** snprintf that always terminates and never warns about truncation. */
/*
 * The few internal functions the components (libharness-counters, libharness-cuda) call in the
 * core: exported beside the public API, and nothing else (docs/architecture.md).
 */
#define BENCH__COMPONENT_API __attribute__((visibility("default")))

BENCH__COMPONENT_API void bench__msg(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Flushes stdout; a write error (full disk, closed pipe) turns exit code 0 into 2. */
int bench__finish_stdout(int exit_code);

#endif /* HARNESS_BASE_H */
