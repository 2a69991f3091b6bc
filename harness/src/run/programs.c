/*
 * programs.c: which benchmarks a program has: this program's instances by id (a saved run's
 * entries kept or listed as removed by it), and the list another program prints for the same
 * FILTERs (--ab: the benchmarks the old build has and this one lacks), read from the program
 * run under --timeout like every child of the harness.
 */
#include <stdlib.h>
#include <string.h>

#include "run/pipeline.h"
#include "run/programs.h"
#include "sys/clock.h"
#include "sys/proc.h"

/* Whether `id` is one of the n instances. (Their order, with parameters compared as numbers,
 * is not strcmp's: no binary search.) */
bool bench__has_instance(const bench__instance *all, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].id, id) == 0)
            return true;
    return false;
}

bool bench__in_program(const void *where, const char *id)
{
    const struct program *p = where;
    return bench__has_instance(p->all, p->n, id);
}

/*
 * --ab: what `OTHER --list [--exact] -- FILTER...` prints, so that the benchmarks the old build
 * has for the same FILTERs and this one lacks are reported as removed. Returns the malloc'd text
 * (caller frees), or NULL when OTHER cannot run or lists nothing (it then has nothing more to
 * report; errors about OTHER are bench__ab_run's to print).
 */
char *bench__ab_other_list(const bench__request *c, const char *prog)
{
    const char **argv = calloc(c->nfilters + 5, sizeof *argv);
    if (!argv)
        return NULL;
    size_t k = 0;
    argv[k++] = prog;
    argv[k++] = "--list";
    if (c->exact)
        argv[k++] = "--exact";
    argv[k++] = "--";
    for (size_t i = 0; i < c->nfilters; i++)
        argv[k++] = c->filters[i];
    /* Like every child of the harness, under a deadline: --timeout, as its workers are. */
    bench__proc p;
    bench__proc_spec spec = {.path = prog, .argv = (char *const *)argv,
                             .channel = BENCH__PROC_STDOUT, .quiet = true};
    char why[256];
    bench__proc_interrupts_install();
    int rc = bench__proc_start(&p, &spec, why, sizeof why);
    free(argv);
    if (rc != 0)
        return NULL;
    double timeout = bench__request_timeout(c);
    int64_t deadline = bench__now_ns() + (int64_t)(timeout * 1e9);
    size_t len = 0, cap = 4096;
    char *text = malloc(cap), line[512];
    while (text && (rc = bench__proc_line(&p, line, sizeof line, deadline)) == 1) {
        size_t n = strlen(line);
        if (len + n + 2 > cap) {
            char *more = cap > BENCH__MAX_FILE_BYTES ? NULL : realloc(text, cap * 2);
            if (!more) {
                free(text);
                text = NULL;
                break;
            }
            text = more;
            cap *= 2;
        }
        memcpy(text + len, line, n);
        len += n;
        text[len++] = '\n';
    }
    bench__proc_end end = bench__proc_wait(&p, deadline);
    if (text && (rc != 0 || end != BENCH__PROC_EXITED || p.code != 0)) {
        free(text);
        text = NULL;
    }
    if (text)
        text[len] = '\0';
    return text;
}
