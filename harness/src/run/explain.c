/*
 * explain.c: --explain, the functions behind a changed benchmark. A verdict says "regressed
 * +5.1%"; --explain profiles both programs on that one benchmark and says which functions the
 * change of its time (or instruction count) per iteration went into. This file holds the entry
 * points: which verdicts are explained, whether the profiler can run, one benchmark explained
 * in a private temporary folder (a sealed baseline program copied there first), and the items
 * of a paired comparison explained under a heading. The work is the modes': explain_perf.c
 * (time mode: perf's sampled stacks, noise from worker pairs) and explain_callgrind.c
 * (instruction mode: callgrind's exact counts); the table of functions and the temporary folder
 * they share are in explain_table.c (explain_int.h).
 */
#define _GNU_SOURCE /* pread */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "report/report.h"
#include "run/explain.h"
#include "run/explain_int.h"

bool bench__explain_wanted(bench__verdict v)
{
    const char *all = getenv("BENCH_EXPLAIN_ALL");
    if (all && *all && strcmp(all, "0") != 0)
        return v != BENCH__V_INCOMPARABLE && v != BENCH__V_SKIPPED && v != BENCH__V_NEW &&
               v != BENCH__V_REMOVED;
    return v == BENCH__V_REGRESSED || v == BENCH__V_IMPROVED;
}

/* Copies the program open on fd (from its start) to a new file `path`, executable by this user
 * alone. */
static int copy_program(int fd, const char *path, char *msg, size_t msglen)
{
    int to = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
    if (to < 0) {
        bench__msg(msg, msglen, "cannot write %s: %s", path, strerror(errno));
        return BENCH_EIO;
    }
    static char buf[1 << 16];
    off_t at = 0;
    int rc = 0;
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, at);
        if (n == 0)
            break;
        if (n < 0 || write(to, buf, (size_t)n) != n) {
            bench__msg(msg, msglen, "cannot copy the baseline's program to %s: %s", path,
                       strerror(errno));
            rc = BENCH_EIO;
            break;
        }
        at += n;
    }
    if (close(to) != 0 && rc == 0) {
        bench__msg(msg, msglen, "cannot write %s: %s", path, strerror(errno));
        rc = BENCH_EIO;
    }
    return rc;
}

int bench__explain_check(const bench__explain_opts *o, char *msg, size_t msglen)
{
    char path[4096];
    if (o->mode == BENCH__EXPLAIN_INSTRUCTIONS) {
        if (!bench__proc_which("valgrind", path, sizeof path)) {
            bench__msg(msg, msglen, "valgrind is not on PATH: install it (apt-get install "
                                    "valgrind), or explain by time without --instructions "
                                    "(perf)");
            return BENCH_EUNAVAIL;
        }
        return 0;
    }
    return bench__explain_perf_check(msg, msglen);
}

int bench__explain_one(const char *old_prog, int old_fd, const char *new_prog, int new_fd,
                       const char *id, uint64_t iters, const bench__change *ch,
                       const bench__explain_opts *o, bench__explanation *e)
{
    memset(e, 0, sizeof *e);
    e->mode = o->mode;
    e->attributed = NAN;
    e->z = o->mode == BENCH__EXPLAIN_TIME ? BENCH__EXPLAIN_Z : 0;
    int64_t t0 = bench__now_ns();
    const char *prog[2] = {old_prog, new_prog};
    int fd[2] = {old_fd, new_fd};
    char dir[4096], copy[2][4200];
    if (bench__explain_temp_make(dir, sizeof dir, e->message, sizeof e->message) != 0) {
        e->status = BENCH_EUNAVAIL;
        return 0;
    }
    /* A program given as a sealed descriptor (a checked baseline snapshot) would run from a
     * memfd, whose symbols perf cannot read: its checked bytes are copied into this private
     * folder (0700, this user's) and run from there. */
    for (int k = 0; k < 2; k++) {
        if (fd[k] < 0)
            continue;
        bench__msg(copy[k], sizeof copy[k], "%s/%s", dir, k ? "new.program" : "old.program");
        if (copy_program(fd[k], copy[k], e->message, sizeof e->message) != 0) {
            e->status = BENCH_EUNAVAIL;
            bench__remove_tree(dir);
            return 0;
        }
        prog[k] = copy[k];
        fd[k] = -1;
    }
    int rc = o->mode == BENCH__EXPLAIN_INSTRUCTIONS
                 ? bench__explain_instructions(prog, fd, id, ch, o, dir, e)
                 : bench__explain_time(prog, fd, id, iters, ch, o, dir, e);
    bench__remove_tree(dir);
    e->seconds = (double)(bench__now_ns() - t0) / 1e9;
    return rc;
}

int bench__explain_items(FILE *out, const char *old_prog, int old_fd, const char *new_prog,
                         int new_fd, const bench__ab_item *items, size_t n,
                         const bench__explain_opts *o, bench__explanation **found)
{
    size_t wanted = 0;
    for (size_t i = 0; i < n; i++)
        wanted += items[i].rc == 0 && bench__explain_wanted(items[i].change.verdict);
    if (wanted == 0)
        return 0;
    char msg[1024];
    if (bench__explain_check(o, msg, sizeof msg) != 0) {
        bench__explain_unavailable(out, msg);
        return 0;
    }
    if (out)
        fprintf(out, "Explained (--explain, %s):\n",
                o->mode == BENCH__EXPLAIN_INSTRUCTIONS ? "callgrind's exact counts of both "
                                                        "programs"
                                                      : "perf profiles of both programs, "
                                                        "interleaved");
    for (size_t i = 0; i < n; i++) {
        const bench__ab_item *it = &items[i];
        if (it->rc != 0 || !bench__explain_wanted(it->change.verdict))
            continue;
        if (out) {
            bench__print_explained_heading(out, it->id, it->change.verdict);
            fflush(out);
        }
        bench__explanation *e = malloc(sizeof *e);
        if (!e) {
            bench__errf("--explain: out of memory\n");
            break;
        }
        if (bench__explain_one(old_prog, old_fd, new_prog, new_fd, it->id, it->iters,
                               &it->change, o, e) == BENCH_EUSAGE) {
            bench__explanation_free(e);
            return BENCH_EUSAGE;
        }
        if (out) {
            bench__print_explanation(out, e);
            fflush(out);
        }
        if (found)
            found[i] = e;
        else
            bench__explanation_free(e);
    }
    if (out)
        fputc('\n', out);
    return 0;
}

void bench__explain_unavailable(FILE *out, const char *why)
{
    char shown[4096];
    if (!out)
        out = stderr;
    fprintf(out, "--explain: the changed benchmarks cannot be explained: %s\n\n",
            bench__escape(shown, sizeof shown, why));
    fflush(out);
}
