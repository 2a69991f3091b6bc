/*
 * explain_int.h: what the files of --explain share, not for the rest of the library. explain.c
 * holds the entry points (explain.h) and calls the two modes: explain_perf.c (time mode, perf's
 * sampled stacks) and explain_callgrind.c (instruction mode, callgrind's exact counts). Both
 * modes fill the table of functions by name and rank its rows with explain_table.c, which also
 * makes and removes the private temporary folder a profile is kept in. Calls go one way:
 * explain.c to the modes, the modes to explain_table.c, never back.
 */
#ifndef HARNESS_EXPLAIN_INT_H
#define HARNESS_EXPLAIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "run/explain.h"

/* ---- functions by name (explain_table.c) ---- */

/* Per function: counts of each side (0: A, 1: B) in each slot (time mode: a worker pair;
 * instruction mode: the dumps of N and 2N iterations). */
typedef struct bench__explain_row {
    char *name;
    double self[2][BENCH__EXPLAIN_PAIRS];  /* samples (time mode) or Ir (instruction mode) */
    double total[2][BENCH__EXPLAIN_PAIRS]; /* the same, with the functions it calls */
} bench__explain_row;

/** The functions of both profiles by name, each row once (zeroed: empty). */
typedef struct bench__explain_table {
    bench__explain_row *rows;
    size_t n, cap;
    size_t *slots; /* open addressing: row index + 1, 0 empty */
    size_t nslots;
} bench__explain_table;

/** A function whose difference is beyond noise: its row, its self change d and that change's
 * sd, its total change total_d, its self values old_v and new_v (all per iteration, in the
 * explanation's unit: ns or instructions). */
typedef struct bench__explain_rank {
    size_t row;
    double d, sd, total_d, old_v, new_v;
} bench__explain_rank;

/** Frees the table's rows and names, and leaves it empty. */
void bench__explain_table_free(bench__explain_table *t);

/** The index of the row of `name`, made (zeroed) when new; -1 when out of memory. */
long bench__explain_table_row(bench__explain_table *t, const char *name);

/** Names the functions beyond noise into e (rank[0..n): all candidates, sorted here largest
 * first; at most BENCH__EXPLAIN_TOP named), and the share of e's change they account for. */
void bench__explain_name_functions(bench__explanation *e, const bench__explain_table *t,
                                   bench__explain_rank *rank, size_t n);

/* ---- time mode's samples (explain_perf.c) ---- */

/** Whether a profile's frame, as named in the table (kernel functions end in "_[k]"), marks
 * the machine's kernel work rather than the code's: the scheduler's context switch
 * (`__schedule_[k]`) or the entry of an external interrupt (x86-64 `asm_sysvec_*_[k]`,
 * `asm_common_interrupt_[k]`). System calls and exceptions (page faults) are the code's. */
bool bench__explain_machine_frame(const char *name);

/**
 * Folds `count` samples of one stack into t, side `sd` (0: A, 1: B), worker pair `slot`:
 * frames[0..nf) are rows of t, innermost first; self to frames[0], total once to each function
 * on the stack. A stack holding a frame of the machine's (bench__explain_machine_frame) is
 * counted nowhere. Returns the samples counted (count, or 0 when the machine's or empty).
 */
double bench__explain_fold(bench__explain_table *t, const long *frames, size_t nf, int sd,
                           int slot, double count);

/**
 * The rows of t whose self change lies beyond BENCH__EXPLAIN_Z sd of the noise
 * (bench__explain_diff_sd), into rank (room for t->n): na[j], nb[j] the programs' own samples
 * in pair j < pairs (the machine's left out), ta and tb their times per iteration, log_se the
 * standard error of ln(tb / ta); total_d is NAN unless `walked` (call stacks complete).
 * Returns how many; rank unsorted (bench__explain_name_functions sorts them).
 */
size_t bench__explain_beyond(const bench__explain_table *t, const double *na, const double *nb,
                             size_t pairs, double ta, double tb, double log_se, bool walked,
                             bench__explain_rank *rank);

/* ---- a temporary folder (explain_table.c) ---- */

/** Makes a private folder (0700) under $TMPDIR (else /tmp), its path into dir. 0, or BENCH_EIO
 * with one line in msg. */
int bench__explain_temp_make(char *dir, size_t len, char *msg, size_t msglen);


/* ---- the two modes ---- */

/**
 * Time mode (explain_perf.c): whether perf is on PATH and may record, and with which event and
 * rate (kept for bench__explain_time). 0; or BENCH_EUNAVAIL with one line in msg saying why and
 * how to enable it.
 */
int bench__explain_perf_check(char *msg, size_t msglen);

/**
 * Time mode (explain_perf.c): prog[0] (A) and prog[1] (B) profiled by perf on benchmark id in
 * BENCH__EXPLAIN_PAIRS worker pairs, samples of at least `iters` iterations, their profiles'
 * FIFOs and files in dir; the change `ch` attributed into e. bench__explain_perf_check has run.
 * 0 (e->status says whether it was explained), or BENCH_EUSAGE when the run was interrupted.
 */
int bench__explain_time(const char *prog[2], const int fd[2], const char *id, uint64_t iters,
                        const bench__change *ch, const bench__explain_opts *o, const char *dir,
                        bench__explanation *e);

/**
 * Instruction mode (explain_callgrind.c): prog[0] (A) and prog[1] (B) counted under callgrind
 * on benchmark id, their dumps kept in dir; the change attributed into e. 0 (e->status says
 * whether it was explained), or BENCH_EUSAGE when the run was interrupted.
 */
int bench__explain_instructions(const char *prog[2], const int fd[2], const char *id,
                                const bench__change *ch, const bench__explain_opts *o,
                                const char *dir, bench__explanation *e);

#endif /* HARNESS_EXPLAIN_INT_H */
