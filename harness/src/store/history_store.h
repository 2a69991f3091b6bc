/*
 * history_store.h: what a store of the run history provides to the code both stores share
 * (history.c, history_show.c): the SQL of each question the readers ask, and the connection.
 * A store answers with rows as they are in the database; the shared code validates them,
 * computes the series' tests and the gate's decisions, and prints. history_sqlite.c is the
 * SQLite store and history_pg.c the PostgreSQL one; each has a "none" twin for a build without
 * its library.
 *
 * Every operation returns 0, or a negative error code with the cause alone in why ("connection
 * to server ... lost", "no such column"); the shared code names the history around it. Strings
 * a store returns are its caller's to free (NULL: the column was NULL).
 */
#ifndef HARNESS_HISTORY_STORE_H
#define HARNESS_HISTORY_STORE_H

#include "store/history.h"

/** How a stored value was typed, for the median checks (a store with typed columns never
 * returns TEXT or BLOB for a number). */
typedef enum bench__hv_type {
    BENCH__HV_NULL,
    BENCH__HV_NUMBER,
    BENCH__HV_TEXT,
    BENCH__HV_BLOB,
} bench__hv_type;

/** A stored value that should be a median. */
typedef struct bench__hval {
    bench__hv_type type;
    double x;     /* the number (type NUMBER) */
    char raw[16]; /* the start of its text as the database gives it, for the warning */
} bench__hval;

/** The facts of a run a series is told apart by, in the order a store selects them: the
 * machine's (BENCH__HF_CPU to BENCH__HF_VIRT: another machine is another series) and its
 * environment's (the others: a change splits a series' tests and is shown as a diff). The
 * last, BENCH__HF_CODE, is the benchmark's own (its result's code_hash), not its run's. */
enum {
    BENCH__HF_CPU,
    BENCH__HF_CORES,
    BENCH__HF_THREADS,
    BENCH__HF_MEMORY, /* bytes, as an integer */
    BENCH__HF_VIRT,   /* the hypervisor ("none": bare metal): a VM is never a bare machine */
    BENCH__HF_KERNEL,
    BENCH__HF_GOVERNOR,
    BENCH__HF_COMPILER,
    BENCH__HF_FLAGS,
    BENCH__HF_CODE, /* the benchmark's code identity: a change says "benchmark code changed" */
    BENCH__HFACTS
};
/** How many of them are the machine's (the first ones). */
#define BENCH__HF_MACHINE (BENCH__HF_VIRT + 1)
/** Their names as --history-show prints a change. */
extern const char *const bench__history_fact_names[BENCH__HFACTS];

/** One ok result of a benchmark's series. */
typedef struct bench__hpoint {
    long long run;
    char *revision; /* the run's git_revision, else its cwd_git_revision */
    char *program;  /* the run's program_hash */
    bench__hval median;
    char *facts[BENCH__HFACTS]; /* the run's facts as text (NULL: not recorded) */
} bench__hpoint;

/* ---- a run as stored, for copying a history between stores (bench__history_copy) ---- */

/** The columns of a run both stores have, in this order (the SQL of both stores' copies). */
#define BENCH__HCOPY_RUN_SQL                                                                       \
    "id, time, git_revision, cwd_git_revision, git_dirty, hostname, os, kernel, cpu_brand,"      \
    " cores, threads, memory_bytes, governor, compiler, compiler_flags, build_type,"              \
    " harness_version, program_hash, program_libs, quick, seed, confidence_level, baseline,"     \
    " virtualization"
#define BENCH__HCOPY_RUN_COLUMNS 24
/** Their kinds: i integer, r real, t text. */
#define BENCH__HCOPY_RUN_KINDS "itttittttiirtttttttiirtt"
/** The columns of a result both stores have, but run_id, in this order. */
#define BENCH__HCOPY_RESULT_SQL                                                                    \
    "benchmark, status, median_ns, lower_ns, upper_ns, samples, processes, process_cv, verdict,"  \
    " ratio, ratio_lower, ratio_upper, code_hash"
#define BENCH__HCOPY_RESULT_COLUMNS 13
#define BENCH__HCOPY_RESULT_KINDS "ttrrriirtrrrt"

/** One result as stored: its columns as text (NULL: SQL NULL) and its process medians. */
typedef struct bench__hcopy_result {
    char *col[BENCH__HCOPY_RESULT_COLUMNS];
    char **pm; /* the process medians as text, process 0 first */
    size_t npm;
} bench__hcopy_result;

/** One run as stored, with its results. */
typedef struct bench__hcopy_run {
    char *col[BENCH__HCOPY_RUN_COLUMNS]; /* col[0] is its id */
    bench__hcopy_result *r;
    size_t n;
} bench__hcopy_run;

void bench__hcopy_run_free(bench__hcopy_run *run);

typedef struct bench__history_ops {
    int (*append)(bench__history *h, const bench__context *ctx, const bench__result *results,
                  size_t n, const char *baseline, const char *run_key, long long *run_id,
                  char *why, size_t len);
    /** The distinct benchmark ids of the results, in byte order. */
    int (*ids)(bench__history *h, char ***ids, size_t *n, char *why, size_t len);
    /** Every run, by id. */
    int (*runs)(bench__history *h, bench__hrun **rows, size_t *n, char *why, size_t len);
    /** The ok results of benchmark id in runs up to `upto` (0: all), oldest first, each with
     * its run's facts. */
    int (*series)(bench__history *h, const char *id, long long upto, bench__hpoint **pts,
                  size_t *n, char *why, size_t len);
    /** The benchmarks that ran ok in run `run` (by id), with their medians. */
    int (*run_ok)(bench__history *h, long long run, char ***ids, bench__hval **medians,
                  size_t *n, char *why, size_t len);
    /** The newest run on `machine` (facts BENCH__HF_CPU to BENCH__HF_VIRT as text, NULL:
     * any; a run that did not record one matches) where benchmark id ran ok in 2 or more
     * processes (*run 0: none), with its revision and program, and its process medians. */
    int (*last)(bench__history *h, const char *id, const char *const *machine, long long *run,
                char **revision, char **program, bench__hval **medians, size_t *n, char *why,
                size_t len);
    /** The program hash of run `run` and, when it is kept, this user's signature of it. */
    int (*program)(bench__history *h, long long run, char **hash, char **mac, char *why,
                   size_t len);
    /** Keeps the running program (history.h, bench__history_keep_program); msg is whole. */
    int (*keep_program)(bench__history *h, const bench__context *ctx, size_t keep,
                        double timeout_s, char *msg, size_t len);
    /** The ids of every run, ascending. */
    int (*run_ids)(bench__history *h, long long **ids, size_t *n, char *msg, size_t len);
    /** Run `id` as stored, into *out (zeroed first; bench__hcopy_run_free releases it). */
    int (*copy_read)(bench__history *h, long long id, bench__hcopy_run *out, char *msg,
                     size_t len);
    /** Writes run `run` with its id, in one transaction (a file is made when absent): *same
     * true, and nothing written, when a run of that id with the same time and program is
     * there; a run of that id that differs is refused (BENCH_EINVAL). */
    int (*copy_write)(bench__history *h, const bench__hcopy_run *run, bool *same, char *msg,
                      size_t len);
    /** The folder of the programs kept. */
    void (*programs_dir)(const bench__history *h, char *dir, size_t len);
    /** The copy of program `hash` the history itself holds, as stored (not checked): *bytes
     * (the caller's to free) and *n, or *bytes NULL when there is none; one larger than
     * BENCH__HISTORY_PROGRAM_MAX is refused (BENCH_EINVAL). With bytes NULL, only its size
     * into *n (0: none), nothing transferred. NULL: a store that holds no programs (a file's
     * stay beside it). */
    int (*program_copy)(bench__history *h, const char *hash, unsigned char **bytes, size_t *n,
                        char *msg, size_t len);
    void (*close)(bench__history *h);
} bench__history_ops;

struct bench__history {
    const bench__history_ops *ops;
    char name[4200]; /* how messages name it: a path, or a URL without its password */
    bool exists;     /* false: a file not made yet (no rows to read) */
    void *store;     /* the store's own state */
};

/** The SQLite store (history_sqlite.c, or its none twin): opens path into h. */
int bench__history_sqlite_open(bench__history *h, const char *path, bool create, char *msg,
                               size_t len);
/** The PostgreSQL store (history_pg.c, or its none twin): connects to url into h. */
int bench__history_pg_open(bench__history *h, const char *url, bool create, char *msg,
                           size_t len);

/** The message of a median that is not a positive finite number, on stderr; whether it is one
 * (a NULL is skipped silently). */
bool bench__history_median_ok(const bench__history *h, const bench__hval *v, long long run,
                              const char *id);
void bench__history_points_free(bench__hpoint *p, size_t n);
void bench__history_strings_free(char **s, size_t n);

/**
 * Copies the running program into the folder open as dfd and pinned (`pinned`, its
 * /proc/self/fd name), as HEX.program unless it is there, and signs its hash and size with this
 * user's key into mac. 0, or a negative error code with the reason in why.
 */
int bench__history_copy_program(const char *pinned, const bench__context *ctx, double timeout_s,
                                char *mac, size_t maclen, char *why, size_t len);
/** The message of a part of a run (--run-id run_key) whose benchmark id run `run` holds. */
void bench__history_msg_part(const bench__history *h, char *msg, size_t len, const char *id,
                             long long run, const char *run_key);
/** Whether hash names a program file: "sha256:" and exactly 64 lowercase hex digits. */
bool bench__history_program_hash_ok(const char *hash);

#endif /* HARNESS_HISTORY_STORE_H */
