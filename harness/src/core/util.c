/*
 * util.c: small helpers shared by the harness: the error table's messages, bounded message
 * formatting, the human formatting of times and rates used by every text reporter, the one
 * escaping of untrusted text (benchmark names, messages, strings read from files) that every
 * text output goes through, the one way a message reaches stderr: after the program's name, and
 * the removal of a temporary folder.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "core/options.h"
#include "core/result.h"

const char *bench_version(void)
{
    return HARNESS_VERSION;
}

const char *bench__strerror(int code)
{
    switch (code) {
#define BENCH__ERR_CASE(name, value, text)                                                         \
    case value:                                                                                    \
        return text;
        BENCH__ERRORS(BENCH__ERR_CASE)
#undef BENCH__ERR_CASE
    default:
        return "unknown error";
    }
}

void bench__msg(char *buf, size_t len, const char *fmt, ...)
{
    if (!buf || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n < 0)
        buf[0] = '\0';
}

/* ---- escaping of untrusted text ---- */

/*
 * Length of the UTF-8 sequence at s (1 to 4) when it is well formed, not overlong and not a
 * surrogate; 0 otherwise. *cp receives the code point.
 */
static size_t utf8_seq(const unsigned char *s, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    size_t n;
    uint32_t c, min;
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2, c = s[0] & 0x1f, min = 0x80;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3, c = s[0] & 0x0f, min = 0x800;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4, c = s[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

/* Code points a terminal acts on rather than shows: C0, DEL, C1 and the bidirectional
 * formatting characters (which can make a name read as another). */
static bool is_control(uint32_t c)
{
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
           (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/*
 * The escaped form of the character at s: its bytes as they are, or "\xNN" per byte (C0, DEL,
 * C1 and bytes that are not valid UTF-8), or "\uNNNN" (bidirectional controls). Writes at most
 * 11 bytes plus a NUL to out; returns how many bytes of s it consumed.
 */
static size_t escape_one(const char *s, char out[12])
{
    uint32_t cp = 0;
    size_t n = utf8_seq((const unsigned char *)s, &cp);
    if (n == 0) {
        snprintf(out, 12, "\\x%02x", (unsigned char)s[0]);
        return 1;
    }
    if (!is_control(cp)) {
        memcpy(out, s, n);
        out[n] = '\0';
        return n;
    }
    if (cp <= 0x9f) /* C0, DEL and C1: the code point (for C1, not its two bytes) */
        snprintf(out, 12, "\\x%02x", (unsigned)cp);
    else
        snprintf(out, 12, "\\u%04x", (unsigned)cp);
    return n;
}

const char *bench__escape(char *buf, size_t len, const char *s)
{
    if (!buf || len == 0)
        return "";
    size_t o = 0;
    buf[0] = '\0';
    while (s && *s) {
        char one[12];
        size_t used = escape_one(s, one);
        size_t w = strlen(one);
        if (o + w >= len)
            break; /* truncated at a character boundary */
        memcpy(buf + o, one, w + 1);
        o += w;
        s += used;
    }
    return buf;
}

void bench__fputs_escaped(FILE *o, const char *s)
{
    while (s && *s) {
        char one[12];
        s += escape_one(s, one);
        fputs(one, o);
    }
}

const char *bench__skip_prefix(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

bool bench__starts_with(const char *s, const char *prefix)
{
    return bench__skip_prefix(s, prefix) != NULL;
}

bool bench__csv_needs_guard(const char *s)
{
    /* OWASP CSV injection: a cell that a spreadsheet would read as a formula. A cell that is a
     * plain number ("-5", "+1.5e3") is data, not a formula, and is left alone. */
    if (!s || s[0] == '\0' || !strchr("=+-@\t\r", s[0]))
        return false;
    if (s[0] != '+' && s[0] != '-')
        return true;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    return end == s || *end != '\0' || errno != 0 || !isfinite(d);
}

/* Writes v with 4 significant digits (trailing zeros kept, as Criterion prints). */
static void fmt_sig4(char *buf, size_t len, double v, const char *unit)
{
    int decimals = 3;
    double a = fabs(v);
    if (a >= 1000.0)
        decimals = 0;
    else if (a >= 100.0)
        decimals = 1;
    else if (a >= 10.0)
        decimals = 2;
    snprintf(buf, len, "%.*f %s", decimals, v, unit);
}

void bench__fmt_time(char *buf, size_t len, double ns)
{
    if (!isfinite(ns)) {
        snprintf(buf, len, "%s", "n/a");
        return;
    }
    /* Thresholds sit where 4 significant digits would round up to 1000 of the smaller unit. */
    double a = fabs(ns);
    if (a < 0.99995)
        fmt_sig4(buf, len, ns * 1e3, "ps");
    else if (a < 999.95)
        fmt_sig4(buf, len, ns, "ns");
    else if (a < 999.95e3)
        fmt_sig4(buf, len, ns / 1e3, "\xc2\xb5s");
    else if (a < 999.95e6)
        fmt_sig4(buf, len, ns / 1e6, "ms");
    else
        fmt_sig4(buf, len, ns / 1e9, "s");
}

void bench__fmt_rate(char *buf, size_t len, double per_s, const char *unit)
{
    static const char *const prefix[] = {"", "K", "M", "G", "T", "P"};
    if (!isfinite(per_s)) {
        snprintf(buf, len, "%s", "n/a");
        return;
    }
    int p = 0;
    while (fabs(per_s) >= 999.95 && p < 5) {
        per_s /= 1000.0;
        p++;
    }
    char u[32];
    snprintf(u, sizeof u, "%s%s/s", prefix[p], unit);
    fmt_sig4(buf, len, per_s, u);
}

const char *bench__status_name(bench__status s)
{
    return s == BENCH__OK ? "ok" : s == BENCH__SKIPPED ? "skipped" : "failed";
}

const char *bench__failure_name(bench__failure f)
{
    switch (f) {
    case BENCH__FAIL_NONE:
        return "";
    case BENCH__FAIL_ERROR:
        return "error";
    case BENCH__FAIL_CRASHED:
        return "crashed";
    case BENCH__FAIL_EXITED:
        return "exited";
    case BENCH__FAIL_TIMED_OUT:
        return "timed out";
    }
    return "";
}

uint64_t bench__id_seed(uint64_t seed, const char *id)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (; *id; id++)
        h = (h ^ (unsigned char)*id) * 0x100000001b3ULL;
    return seed ^ h;
}

const char *bench__sampling_name(bench_sampling s)
{
    switch (s) {
    case BENCH_SAMPLING_LINEAR:
        return "linear";
    case BENCH_SAMPLING_FLAT:
        return "flat";
    default:
        return "auto";
    }
}

/* ---- messages on stderr ---- */

/* The program's name as invoked, escaped: set once at the start (bench_main), read by every
 * message and by the crash handler, which may not compute it (crash.c). */
static char prog_name[BENCH__ESCAPED_ID] = "bench";

void bench__set_prog_name(const char *argv0)
{
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    const char *base = slash ? slash + 1 : argv0;
    bench__escape(prog_name, sizeof prog_name, base && *base ? base : "bench");
}

const char *bench__prog_name(void)
{
    return prog_name;
}

void bench__errf(const char *fmt, ...)
{
    /* One write: lines of concurrent processes (a manager and its workers share stderr) never
     * interleave inside a message. */
    char small[2048], *buf = small;
    size_t pre = strlen(prog_name) + 2;
    memcpy(buf, prog_name, pre - 2);
    memcpy(buf + pre - 2, ": ", 2);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + pre, sizeof small - pre, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = pre + (size_t)n;
    if (len >= sizeof small) {
        char *big = malloc(len + 1);
        if (big) {
            memcpy(big, small, pre);
            va_start(ap, fmt);
            vsnprintf(big + pre, len + 1 - pre, fmt, ap);
            va_end(ap);
            buf = big;
        } else {
            len = sizeof small - 1; /* the message cut short rather than lost */
        }
    }
    fflush(stderr); /* after what stdio already holds for stderr */
    for (size_t done = 0; done < len;) {
        ssize_t w = write(STDERR_FILENO, buf + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (buf != small)
        free(buf);
}

/* Set in a worker process that is not its benchmark's first (options.h). */
bool bench__quiet_warnings;

/* Flushes stdout and reports a write error (a full disk, a closed pipe) as exit code 2. */
int bench__finish_stdout(int exit_code)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        bench__errf("writing to stdout failed\n");
        return exit_code == BENCH_EXIT_OK ? BENCH_EXIT_USAGE : exit_code;
    }
    return exit_code;
}

void bench__remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        char path[4200];
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            bench__msg(path, sizeof path, "%s/%s", dir, de->d_name);
            struct stat st;
            /* lstat: a link inside is removed, never followed */
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                bench__remove_tree(path);
            else
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}
