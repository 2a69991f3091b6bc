/*
 * ab.h: the paired comparison of two programs (ab.c): --ab, and the paired runs that confirm a
 * baseline's suspects and a history's steps, with the paired workers --explain profiles. A mode
 * of its own: it drives worker processes of two programs over the worker protocol (run.h,
 * protocol.h), sample by sample.
 */
#ifndef HARNESS_RUN_AB_H
#define HARNESS_RUN_AB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "compare/compare.h"
#include "compare/verdict.h"
#include "core/registry.h"
#include "measure/run.h"

/** Where the two workers of a pair run (--ab-schedule). */
typedef enum bench__ab_schedule {
    BENCH__AB_PINNED = 0, /* both on one CPU, taking turns; pairs go round the allowed CPUs */
    BENCH__AB_DUET,       /* at the same moment on two CPUs, swapped between samples */
    BENCH__AB_UNPINNED,   /* wherever the scheduler puts them, taking turns */
} bench__ab_schedule;

/** "pinned", "duet", "unpinned". */
const char *bench__ab_schedule_name(bench__ab_schedule s);

struct bench__ab_item;

struct bench__code_ids;

typedef struct bench__ab_options {
    double seconds;            /* budget per benchmark on average: the comparison may spend
                                * seconds x benchmarks, on the undecided ones */
    int max_pairs;             /* the looks' schedule runs up to this many pairs */
    bool pairs_capped;         /* --ab-pairs given: max_pairs is also the most pairs of one
                                * benchmark; otherwise one still open after the last look goes
                                * on while the budget lasts, to one more look at its end */
    double sample_ms;          /* target duration of one sample, ms */
    double significance_level; /* alpha over all benchmarks and looks (Bonferroni) */
    double noise_threshold;    /* smallest relative change reported as a regression */
    bench__ab_schedule schedule;
    bool fixed_layout;         /* no layout randomisation of the workers */
    double timeout_s;          /* a worker that takes longer to answer (its setup, a sample) is
                                * stopped; <= 0: BENCH__DEFAULT_TIMEOUT (--timeout) */
    uint64_t seed;             /* layouts are drawn from it */
    bool progress;             /* live progress on stderr */
    const char *const *removed; /* ids the old build lists for the FILTERs and this one lacks */
    size_t nremoved;
    /* Called with the decided items, after their verdicts and before the summary (--explain,
     * explain.c; NULL: none); a non-zero return is the run's interruption (BENCH_EUSAGE). */
    int (*after)(const char *old_prog, const char *new_prog, const struct bench__ab_item *items,
                 size_t n, void *arg);
    void *after_arg;
    /* The two programs' disassemblies (sys/code_id.h), for each benchmark's code identity on
     * both sides: the same code is not blamed for what its placement does (NULL: unknown). */
    struct bench__code_ids *old_code, *new_code;
    const char *json_path; /* --json FILE: the outcome written there (bench__ab_json_write) after
                            * the summary; NULL: none */
} bench__ab_options;

/** The looks of the sequential design: the first at this many pairs (or max_pairs) ... */
#define BENCH__AB_FIRST_LOOK 6
/** ... each next one this many times as many, the last at max_pairs. */
#define BENCH__AB_LOOK_GROWTH 1.5
/** Defaults: seconds per benchmark, most pairs (looks at 6, 9, 14, 21, 32), sample length. */
#define BENCH__AB_DEFAULT_SECONDS 5
#define BENCH__AB_DEFAULT_MAX_PAIRS 32
#define BENCH__AB_DEFAULT_SAMPLE_MS 0.5
/** A pair measures at least this many rounds (a benchmark of long iterations takes longer). */
#define BENCH__AB_MIN_ROUNDS 10

/** The pair counts at which a benchmark is looked at, for at most max_pairs pairs, into
 * looks[0..cap); returns how many (the last is max_pairs). */
size_t bench__ab_looks(int max_pairs, size_t *looks, size_t cap);

/**
 * The paired A/B test from n >= 2 worker pairs: pair_log[i] is the median of
 * ln(new/old) over pair i's rounds. A one-sample t statistic over the pairs (n - 1 degrees of
 * freedom; the pairs are independent, the rounds of one pair are not) gives D (their mean) and
 * its standard error, decided by bench__decide with `tests` (benchmarks compared times the looks
 * of the sequential design). Fills c (old_median and new_median stay 0); with n < 2 the verdict
 * is "not compared".
 */
void bench__ab_stats(const double *pair_log, size_t n, double tests, const bench__compare_opts *o,
                     bench__change *c);

/** What a look at a benchmark of a paired comparison decides (bench__ab_look). */
typedef enum bench__ab_step {
    BENCH__AB_GO_ON = 0, /* undecided: more pairs */
    BENCH__AB_DECIDED,   /* decided (regressed, improved, no change, within noise), or its last
                          * look: stop with the verdict it has */
    BENCH__AB_FUTILE,    /* even `reach` pairs would leave it undecided: stop, inconclusive */
} bench__ab_step;

/**
 * One look of the sequential design at a benchmark's n pair values: decides it into c
 * (bench__ab_stats at `tests`) and says whether to stop. `last`: its last look, where it stops
 * whatever the verdict. `reach`: the pairs the budget left could still give it (the futility
 * rule, bench__verdict_futile); 0 leaves the rule out. `same_code`: its code identity is the
 * same on both sides, so no verdict will be given on it: it stops at this look, its numbers
 * measured.
 */
bench__ab_step bench__ab_look(const double *pair_log, size_t n, bool last, bool same_code,
                              double reach, double tests, const bench__compare_opts *o,
                              bench__change *c);

/**
 * The one budget of a paired comparison, shared by all its benchmarks: the pairs a benchmark
 * with `pairs` pairs can still reach when the `open` benchmarks still undecided share the time
 * left (left_ns) equally, at its cost a pair (cost_ns, its mean so far): pairs + left / (cost x
 * open). As benchmarks settle, open falls and each one still open reaches further. A benchmark
 * whose next pair does not fit in the time left (bench__ab_affords) stops at the pairs it has.
 */
double bench__ab_reach(size_t pairs, double left_ns, double cost_ns, size_t open);

/** Whether the time left (left_ns) holds one more pair at cost_ns: a pair starts only then, so
 * the comparison stays within its total but for the spread of one pair's cost. */
bool bench__ab_affords(double left_ns, double cost_ns);

/** One benchmark of a paired comparison: its id in, its outcome out. */
typedef struct bench__ab_item {
    const char *id;
    bench__change change; /* its verdict and numbers (old_median: A's time per iteration, the
                           * geometric mean over pairs; new_median: that times the ratio) */
    int rc;               /* 0; BENCH_EINVAL: the old program lacks it; BENCH_EUNAVAIL: skipped;
                           * BENCH_EIO: a worker failed or could not start (message says why) */
    char message[512];
    size_t pairs;         /* worker pairs that measured */
    size_t rounds;        /* rounds of ABBA+BAAB over all pairs */
    size_t looks;         /* looks taken */
    bool futile;          /* stopped at a look because even the budget left could not decide it
                           * (bench__verdict_futile): inconclusive */
    double reach;         /* pairs it could still have reached at its last look (the futility
                           * rule's cap); 0 when not projected */
    uint64_t iters;       /* iterations per sample */
    double seconds;       /* wall time spent on it */
    double pair_sd;       /* sd of the pairs' ln(B/A) */
    char old_code[65];    /* the code hash of its benchmark in A and in B; "" unknown */
    char new_code[65];
} bench__ab_item;

/** Called with each item as soon as it is decided (or failed). */
typedef void (*bench__ab_done_fn)(bench__ab_item *item, void *arg);

/**
 * Compares A with new_prog (B) on the n benchmarks items[i].id, in pairs of their worker
 * processes, spending at most o->seconds x n (one pair's overrun beyond) on those still
 * undecided. A's workers start from old_fd when it is >= 0 (a sealed copy of a saved program
 * snapshot that bench__snapshot_open checked: never from a path read again), else from
 * old_prog; old_prog names A in messages either way. B's likewise from new_fd or new_prog.
 * Fills each item; `done` (may be NULL) sees each once it is final. Returns 0, or BENCH_EUSAGE
 * when interrupted (items then incomplete), or BENCH_ENOMEM.
 */
int bench__ab_compare(const char *old_prog, int old_fd, const char *new_prog, int new_fd,
                      bench__ab_item *items, size_t n, const bench__ab_options *o,
                      bench__ab_done_fn done, void *arg);

/* ---- ab_worker.c: one driven worker of a pair (also --explain's profiles, explain_perf.c) ---- */
struct bench__proc;
struct bench__layout;
/** Pins process pid to `cpu` (-1: leaves it where it is). 0, or -1 with errno. */
int bench__ab_pin(pid_t pid, int cpu);
/**
 * Which side of pair `pair` (0-based, of one benchmark) starts first and which stops first (0:
 * A, 1: B), drawn from rng: a fixed pattern lets one side inherit its own memory. A process gets
 * the pages that the last one to exit on its CPU freed last; with the sides alternating and the
 * pairs going round the CPUs in step, on one CPU the same side always started first and took
 * over the same side's pages, so where those pages lay in the caches held for the whole
 * comparison (two identical builds: every other pair off by 5%, at z = -4.9). Drawn, each side
 * gets the other's pages as often as its own, and that luck varies between pairs, where the
 * interval sees it. B (this build) starts the first pair: a benchmark it skips is "skipped" even
 * when the old build lacks it.
 */
void bench__ab_pair_order(bench__rng *rng, size_t pair, int *first, int *stop_first);

/** Starts `prog` (from exec_fd when >= 0: the sealed copy of a checked snapshot) as the driven
 * worker of benchmark `id` with layout `lay`, pinned to `cpu` (-1: not), and waits (at most
 * timeout_s) until its setup is done. 0; BENCH_EINVAL when prog lacks the benchmark;
 * BENCH_EUNAVAIL when it skips it; BENCH_EUSAGE when the run was interrupted; BENCH_EIO
 * otherwise, with the reason in msg. */
int bench__ab_worker_start(struct bench__proc *w, const char *prog, int exec_fd, const char *id,
                           const struct bench__layout *lay, int cpu, double timeout_s, char *msg,
                           size_t msglen);
/** Commands one sample of `iters` iterations (its time is read with bench__ab_worker_read, so
 * that two workers can run at once). 0, or BENCH_EIO. */
int bench__ab_worker_send(struct bench__proc *w, uint64_t iters);
/** Reads the time of the sample last commanded into *ns: 0; BENCH_EIO when the worker ends
 * instead; BENCH_EINVAL for any other line; BENCH_EUSAGE when the run was interrupted. */
int bench__ab_worker_read(struct bench__proc *w, int64_t deadline, double *ns);
/** One sample of `iters` iterations; its time in *ns. 0, BENCH_EUSAGE, or BENCH_EIO. */
int bench__ab_worker_sample(struct bench__proc *w, uint64_t iters, int64_t deadline, double *ns);

/** The iteration count that makes a sample of the driven worker w last about sample_ns, found on
 * warm iterations (ab_worker.c). 0, or bench__ab_worker_sample's error. */
int bench__ab_worker_calibrate(struct bench__proc *w, double sample_ns, double timeout_s,
                               uint64_t *iters);
/** Asks the worker to end, and reaps it. */
void bench__ab_worker_stop(struct bench__proc *w, double timeout_s);

/** Coordinator side of --ab: compares `other` (old) with this program (new). Exit code. */
int bench__ab_run(const char *other, const bench__instance *all, const bool *selected, size_t n,
                  const bench__ab_options *o, const bench__gate *gate, bool color);

/** The time a saved-baseline comparison gives the interleaved run that confirms its suspects
 * against the baseline's program snapshot (--confirm-time S: S per suspect): by default
 * BENCH__DEFAULT_CONFIRM_TIME per suspect, or a share of BENCH__CONFIRM_BUDGET when there are
 * more suspects than that fits, but never less than BENCH__CONFIRM_MIN_TIME each. */
#define BENCH__DEFAULT_CONFIRM_TIME 5
#define BENCH__CONFIRM_BUDGET 40
#define BENCH__CONFIRM_MIN_TIME 2

#endif /* HARNESS_RUN_AB_H */
