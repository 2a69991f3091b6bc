/*
 * explain_callgrind.c: --explain in instruction mode, the functions behind a changed benchmark
 * by callgrind's exact counts. Each program counts the benchmark with its own --instructions
 * run (the plan {1, N, 2N}, callgrind collecting inside samples only) and keeps each sample's
 * dump (BENCH_INSTR_KEEP); a function's exact count per iteration is (Ir(2N) - Ir(N)) / N, its
 * own (self) and with the functions it calls (total). Counts are exact: a difference of half an
 * instruction per iteration or more is a change.
 */
#define _GNU_SOURCE /* getline, setenv */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "run/explain_int.h"
#include "run/instr.h"

/* ---- instruction mode: callgrind's dumps ---- */

/* The function of a "fn=" or "cfn=" value: "(id) name" defines id, "(id)" refers to it, a bare
 * name is itself. ids maps compressed ids to rows. */
static long dump_fn(bench__explain_table *t, const char *v, long **ids, size_t *nids)
{
    if (*v != '(')
        return bench__explain_table_row(t, v);
    char *end;
    long id = strtol(v + 1, &end, 10);
    if (id < 0 || *end != ')')
        return -1;
    const char *name = end + 1;
    while (*name == ' ')
        name++;
    if ((size_t)id >= *nids) {
        size_t nn = (size_t)id + 1024;
        long *m = realloc(*ids, nn * sizeof *m);
        if (!m)
            return -1;
        for (size_t i = *nids; i < nn; i++)
            m[i] = -1;
        *ids = m;
        *nids = nn;
    }
    if (*name)
        (*ids)[id] = bench__explain_table_row(t, name);
    return (*ids)[id];
}

/* Reads one callgrind dump into the table: side sd, slot (0: N iterations, 1: 2N), each
 * function's own Ir (self) and with the calls it made (total; a call to itself is not added
 * again). */
static int read_dump(const char *path, bench__explain_table *t, int sd, int slot, char *msg,
                     size_t msglen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        bench__msg(msg, msglen, "cannot read the callgrind dump %s: %s", path, strerror(errno));
        return BENCH_EIO;
    }
    char *line = NULL;
    size_t cap = 0;
    long *ids = NULL, cur = -1, callee = -1;
    size_t nids = 0;
    int ir = 0, npos = 1;
    bool after_calls = false;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        char c = line[0];
        const char *v;
        if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*') {
            char *p = line, *end;
            for (int k = 0; k < npos; k++) {
                while (*p == ' ')
                    p++;
                while (*p && *p != ' ')
                    p++;
            }
            double cost = 0;
            for (int k = 0; k <= ir; k++) {
                cost = strtod(p, &end);
                if (end == p) {
                    cost = 0; /* callgrind leaves trailing zero counts out */
                    break;
                }
                p = end;
            }
            if (cur >= 0) {
                if (after_calls) {
                    if (callee != cur)
                        t->rows[cur].total[sd][slot] += cost;
                } else {
                    t->rows[cur].self[sd][slot] += cost;
                    t->rows[cur].total[sd][slot] += cost;
                }
            }
            after_calls = false;
        } else if ((v = bench__skip_prefix(line, "fn="))) {
            cur = dump_fn(t, v, &ids, &nids);
            after_calls = false;
        } else if ((v = bench__skip_prefix(line, "cfn="))) {
            callee = dump_fn(t, v, &ids, &nids);
        } else if (bench__starts_with(line, "calls=")) {
            after_calls = true;
        } else if ((v = bench__skip_prefix(line, "events:"))) {
            int k = 0;
            char *save = NULL;
            for (char *tok = strtok_r((char *)v, " ", &save); tok;
                 tok = strtok_r(NULL, " ", &save), k++)
                if (strcmp(tok, "Ir") == 0)
                    ir = k;
        } else if ((v = bench__skip_prefix(line, "positions:"))) {
            npos = 0;
            char *save = NULL;
            for (char *tok = strtok_r((char *)v, " ", &save); tok;
                 tok = strtok_r(NULL, " ", &save))
                npos++;
            if (npos < 1)
                npos = 1;
        }
    }
    free(line);
    free(ids);
    fclose(f);
    (void)msg, (void)msglen;
    return 0;
}

/* Counts benchmark id in side sd's program under callgrind with N iterations a sample, keeping
 * the dumps in dir/A or dir/B, and reads those of N and 2N iterations. */
static int count_side(const char *prog, int fd, const char *id, uint64_t n, const char *dir,
                      int sd, bench__explain_table *t, const bench__explain_opts *o, char *msg,
                      size_t msglen)
{
    char keep[4200], iters[32];
    bench__msg(keep, sizeof keep, "%s/%c", dir, sd ? 'B' : 'A');
    if (mkdir(keep, 0700) != 0) {
        bench__msg(msg, msglen, "cannot create %s: %s", keep, strerror(errno));
        return BENCH_EIO;
    }
    bench__msg(iters, sizeof iters, "%llu", (unsigned long long)n);
    char *argv[] = {(char *)prog, "--instructions", "--instructions-iterations", iters,
                    "--exact", "--color", "never", "--no-last", (char *)id, NULL};
    bench__proc p;
    memset(&p, 0, sizeof p);
    bench__proc_spec spec = {.path = prog, .argv = argv, .channel = BENCH__PROC_NONE,
                             .quiet = true, .exec_by_fd = fd >= 0, .exec_fd = fd};
    setenv(BENCH__INSTR_KEEP_ENV, keep, 1);
    int rc = bench__proc_start(&p, &spec, msg, msglen);
    unsetenv(BENCH__INSTR_KEEP_ENV);
    if (rc != 0)
        return BENCH_EIO;
    double timeout = o->timeout_s > 0 ? 50 * o->timeout_s : 15000;
    bench__proc_end end = bench__proc_wait(&p, bench__now_ns() + (int64_t)(timeout * 1e9));
    if (bench__proc_interrupted())
        return BENCH_EUSAGE;
    if (end != BENCH__PROC_EXITED || p.code != 0) {
        char how[128];
        bench__proc_describe(&p, timeout, how, sizeof how);
        bench__msg(msg, msglen, "counting it under callgrind in %s failed: it %s", prog, how);
        return BENCH_EIO;
    }
    for (int k = 1; k <= 2; k++) {
        char path[4300];
        bench__msg(path, sizeof path, "%s/sample%d.cg", keep, k);
        if (access(path, R_OK) != 0) {
            bench__msg(msg, msglen, "%s kept no callgrind dump of its samples (built with a "
                                    "harness older than --explain? rebuild it with this one)",
                       prog);
            return BENCH_EIO;
        }
        if ((rc = read_dump(path, t, sd, k - 1, msg, msglen)) != 0)
            return rc;
    }
    return 0;
}

int bench__explain_instructions(const char *prog[2], const int fd[2], const char *id,
                                const bench__change *ch, const bench__explain_opts *o,
                                const char *dir, bench__explanation *e)
{
    /* N: samples of about 2^22 ns-equivalents of work, the same N for both programs. */
    double per = ch->old_median > 0 ? ch->old_median : 1;
    uint64_t n = 1;
    while (n < (UINT64_C(1) << 20) && (double)(2 * n) * per <= (double)(1u << 22))
        n *= 2;
    bench__msg(e->how, sizeof e->how, "callgrind: (Ir(2N) - Ir(N)) / N per function, N = %llu",
               (unsigned long long)n);
    bench__explain_table t = {0};
    int rc = 0;
    for (int sd = 0; sd < 2 && rc == 0; sd++)
        rc = count_side(prog[sd], fd[sd], id, n, dir, sd, &t, o, e->message, sizeof e->message);
    if (rc == BENCH_EUSAGE) {
        bench__explain_table_free(&t);
        return BENCH_EUSAGE;
    }
    if (rc != 0) {
        e->status = BENCH_EUNAVAIL;
        bench__explain_table_free(&t);
        return 0;
    }
    bench__explain_rank *rank = calloc(t.n ? t.n : 1, sizeof *rank);
    size_t nr = 0;
    double dn = (double)n;
    for (size_t i = 0; i < t.n; i++) {
        bench__explain_row *r = &t.rows[i];
        double a = (r->self[0][1] - r->self[0][0]) / dn, b = (r->self[1][1] - r->self[1][0]) / dn;
        e->old_value += a;
        e->new_value += b;
        if (rank && fabs(b - a) >= 0.5)
            rank[nr++] = (bench__explain_rank){.row = i, .d = b - a, .sd = 0,
                                  .total_d = ((r->total[1][1] - r->total[1][0]) -
                                              (r->total[0][1] - r->total[0][0])) / dn,
                                  .old_v = a, .new_v = b};
    }
    e->change = e->new_value - e->old_value;
    if (rank)
        bench__explain_name_functions(e, &t, rank, nr);
    free(rank);
    bench__explain_table_free(&t);
    return 0;
}
