/*
 * history_none.c: the run history of a build without SQLite (libsqlite3 was not found, or
 * -DHARNESS_SQLITE=OFF): every call says so, and --history, --history-show and --history-gate
 * exit 2.
 */
#include "store/history.h"

static int unavailable(char *msg, size_t len)
{
    bench__msg(msg, len, "%s", "this program was built without SQLite (libsqlite3-dev), so it "
                               "keeps no run history");
    return BENCH_EUNAVAIL;
}

int bench__history_check(const char *path, char *msg, size_t len)
{
    (void)path;
    return unavailable(msg, len);
}

int bench__history_append(const char *path, const bench__context *ctx,
                          const bench__result *results, size_t n, const char *baseline,
                          long long *run_id, char *msg, size_t len)
{
    (void)run_id;
    (void)path;
    (void)ctx;
    (void)results;
    (void)n;
    (void)baseline;
    return unavailable(msg, len);
}

int bench__history_show(FILE *o, const char *path, bench__history_selector select, void *arg,
                        char *msg, size_t len)
{
    (void)o;
    (void)path;
    (void)select;
    (void)arg;
    return unavailable(msg, len);
}

int bench__history_gate(FILE *o, const char *path, long long run_id, size_t window,
                        double noise_threshold, double alpha, bool *regressed, char *msg,
                        size_t len)
{
    (void)o;
    (void)path;
    (void)run_id;
    (void)window;
    (void)noise_threshold;
    (void)alpha;
    *regressed = false;
    return unavailable(msg, len);
}
