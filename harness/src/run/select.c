/*
 * select.c: the pipeline's first stage: which benchmarks the FILTERs select (regular
 * expressions, or exact ids with --exact), with the patterns that would make the matcher
 * exponential or exhaust memory refused before the matcher sees them.
 */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "core/base.h"
#include "run/pipeline.h"
#include "run/select.h"

/*
 * What glibc's matcher could spend on a FILTER, bounded before it sees one: a back-reference
 * (\1 to \9) makes matching exponential in the id's length ("(a*)*\1x" over an id of 160
 * characters took 8 s here, and 255 characters minutes), and a repetition count {m,n} copies its
 * atom n times, nested counts multiplying ("((((a{1,100}){1,100}){1,100}){1,100})" exhausted
 * memory, "(a{1,100}){1,100}x" took 1.5 s per id). So back-references are refused, and so is a
 * pattern whose counted copies add up to more than BENCH__FILTER_MAX_STATES.
 */
#define BENCH__FILTER_MAX_STATES 1000
/** Groups nested deeper are refused too (regcomp, like this count, recurses per level). */
#define BENCH__FILTER_MAX_DEPTH 64

/* The states the ERE at *p expands to, up to the closing parenthesis of this group (or the end);
 * *backref is set on \1-\9. Saturates well above the limit. */
static double filter_states(const char **p, int depth, bool *backref)
{
    double total = 0, atom = 0;
    while (**p && !(**p == ')' && depth > 0)) {
        const char *q = *p;
        if (*q == '(') {
            (*p)++;
            if (depth >= BENCH__FILTER_MAX_DEPTH)
                return 1e12; /* refused: said as too many states */
            atom = 1 + filter_states(p, depth + 1, backref);
            if (**p == ')')
                (*p)++;
        } else if (*q == '[') {
            /* A bracket expression is one state; "]" first (after an optional "^") is a
             * member, and "[:alpha:]"-style classes hold their own "]". */
            q++;
            if (*q == '^')
                q++;
            if (*q == ']')
                q++;
            while (*q && *q != ']') {
                if (q[0] == '[' && (q[1] == ':' || q[1] == '.' || q[1] == '=')) {
                    char close = q[1];
                    q += 2;
                    while (*q && !(q[0] == close && q[1] == ']'))
                        q++;
                    q += *q ? 2 : 0;
                } else {
                    q++;
                }
            }
            *p = *q ? q + 1 : q;
            atom = 1;
        } else if (*q == '\\') {
            if (q[1] >= '1' && q[1] <= '9')
                *backref = true;
            *p = q[1] ? q + 2 : q + 1;
            atom = 1;
        } else if (*q == '{' && q[1] >= '0' && q[1] <= '9') {
            /* {m} and {m,n} copy the atom before it m and n times, {m,} m + 1 times. */
            char *end;
            double lo = strtod(q + 1, &end), copies = lo;
            if (*end == ',') {
                end++;
                copies = *end >= '0' && *end <= '9' ? strtod(end, &end) : lo + 1;
            }
            while (*end && *end != '}')
                end++;
            *p = *end ? end + 1 : end;
            copies = fmax(copies, 1);
            total += atom * (copies - 1);
            atom *= copies;
            if (total > 1e12)
                total = 1e12;
            continue;
        } else if (*q == '|') {
            (*p)++;
            atom = 0;
            continue;
        } else {
            (*p)++;
            if (*q == '*' || *q == '+' || *q == '?')
                continue;
            atom = 1;
        }
        total += atom;
    }
    return total;
}

/* Why a FILTER is refused before regcomp sees it, into why; false when it is fine. */
static bool filter_refused(const char *re, char *why, size_t len)
{
    bool backref = false;
    const char *p = re;
    double states = 0;
    while (*p) {
        states += filter_states(&p, 0, &backref);
        if (*p == ')')
            p++; /* unbalanced: regcomp says so */
    }
    if (backref) {
        bench__msg(why, len, "%s", "back-references (\\1 to \\9) are not supported in FILTERs "
                                   "(matching them can take exponential time)");
        return true;
    }
    if (states > BENCH__FILTER_MAX_STATES) {
        bench__msg(why, len, "it expands to more than %d states (repetition counts {m,n} "
                             "copy what they repeat, nested ones multiply; groups nest at most "
                             "%d deep): matching would take too long",
                   BENCH__FILTER_MAX_STATES, BENCH__FILTER_MAX_DEPTH);
        return true;
    }
    return false;
}

/* The part of N (0-based) that benchmark id falls in: FNV-1a (64-bit) of its bytes, mixed by
 * SplitMix64's finaliser (FNV alone spreads similar ids badly over a few parts), mod N. */
static unsigned shard_of(const char *id, unsigned n)
{
    uint64_t h = 14695981039346656037ULL;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
    return (unsigned)((h ^ (h >> 31)) % n);
}

/* Marks which of the ids the filters (and --shard) select. */
int bench__select(const bench__request *c, const char *const *ids, size_t n, bool *selected)
{
    regex_t re[BENCH__MAX_FILTERS];
    size_t compiled = 0;
    int rc = 0;
    if (!c->exact) {
        for (; compiled < c->nfilters; compiled++) {
            char refused[256];
            if (filter_refused(c->filters[compiled], refused, sizeof refused)) {
                char shown[BENCH__ESCAPED_ID * 4];
                bench__errf("filter '%s' is refused: %s\n",
                            bench__escape(shown, sizeof shown, c->filters[compiled]), refused);
                rc = -1;
                goto done;
            }
            int e = regcomp(&re[compiled], c->filters[compiled], REG_EXTENDED | REG_NOSUB);
            if (e != 0) {
                char why[128];
                regerror(e, &re[compiled], why, sizeof why);
                bench__errf("filter '%s' is not a valid regular expression: %s\n",
                            c->filters[compiled], why);
                rc = -1;
                goto done;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        bool match = c->nfilters == 0;
        for (size_t f = 0; f < c->nfilters && !match; f++)
            match = c->exact ? strcmp(ids[i], c->filters[f]) == 0
                             : regexec(&re[f], ids[i], 0, NULL, 0) == 0;
        /* --shard: a part by a hash of the id alone, so an id stays in its part when other
         * benchmarks come or go. */
        selected[i] = match &&
                      (c->shard_n == 0 || shard_of(ids[i], c->shard_n) == c->shard_k - 1);
    }
done:
    for (size_t f = 0; f < compiled; f++)
        regfree(&re[f]);
    return rc;
}
