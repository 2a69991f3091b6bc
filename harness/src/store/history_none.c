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
                        bench__history_view *view, char *msg, size_t len)
{
    if (view)
        view->n = 0, view->s = NULL, view->trend_tests = 0;
    (void)o;
    (void)path;
    (void)select;
    (void)arg;
    return unavailable(msg, len);
}

int bench__history_gate(FILE *o, const char *path, long long run_id, size_t window,
                        double noise_threshold, double alpha, bool *regressed,
                        bench__history_steps *steps, char *msg, size_t len)
{
    if (steps)
        steps->s = NULL, steps->n = 0;
    (void)o;
    (void)path;
    (void)run_id;
    (void)window;
    (void)noise_threshold;
    (void)alpha;
    *regressed = false;
    return unavailable(msg, len);
}

void bench__history_view_free(bench__history_view *v)
{
    (void)v;
}

void bench__history_programs_dir(const char *path, char *dir, size_t len)
{
    bench__msg(dir, len, "%s.programs", path);
}

int bench__history_keep_program(const char *path, const bench__context *ctx, size_t keep,
                                double timeout_s, char *msg, size_t len)
{
    (void)path;
    (void)ctx;
    (void)keep;
    (void)timeout_s;
    return unavailable(msg, len);
}

int bench__history_program(const char *path, long long run_id, char *hash, size_t hlen,
                           char *mac, size_t mlen, char *msg, size_t len)
{
    (void)path;
    (void)run_id;
    if (hlen)
        hash[0] = '\0';
    if (mlen)
        mac[0] = '\0';
    return unavailable(msg, len);
}

void bench__history_steps_free(bench__history_steps *s)
{
    (void)s;
}

int bench__history_last_runs(const char *path, const char *const *ids, size_t n,
                             bench__history_last *out, char *msg, size_t len)
{
    (void)path;
    (void)ids;
    for (size_t i = 0; i < n; i++)
        out[i] = (bench__history_last){0};
    return unavailable(msg, len);
}

void bench__history_last_free(bench__history_last *l, size_t n)
{
    (void)l;
    (void)n;
}
