/*
 * store.h: files: results and baselines written and read back (json_*.c), atomic writes,
 * temporary files and locks (files.c), program snapshots (snapshot.c).
 */
#ifndef HARNESS_STORE_H
#define HARNESS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/result.h"
#include "core/sha256.h"
#include "sys/clock.h"
#include "sys/context.h"

/** Prints the results as one JSON document on out (--output-format json); 0 or an error code. */
int bench__json_print(FILE *out, const bench__context *ctx, const bench__result *all, size_t n);

/** One benchmark as the bencher Metric Format (BMF) carries it: its median time per iteration
 * with the interval. */
typedef struct bench__bmf_entry {
    const char *id;      /* borrowed */
    double median_ns;    /* ns per iteration */
    double lower_ns;     /* the interval's ends, ns; NAN: none */
    double upper_ns;
} bench__bmf_entry;

/**
 * Prints entries e[0..n) as one bencher Metric Format document on out: per benchmark id a
 * "latency" measure (value, lower_value, upper_value: ns per iteration) and a "throughput"
 * measure (iterations per second, the same interval inverted). An entry whose median is not a
 * positive finite number is left out. 0, or a negative error code.
 */
int bench__bmf_print(FILE *out, const bench__bmf_entry *e, size_t n);

/** One benchmark of a paired A/B comparison (--ab) as bench__ab_json_write writes it. */
typedef struct bench__ab_outcome {
    const char *id;                     /* borrowed */
    const struct bench__change *change; /* its verdict and ratio interval (new / old) */
    const char *why; /* why it was not compared, as its report says; NULL: compared, or removed */
    size_t pairs;    /* worker pairs measured */
} bench__ab_outcome;

/**
 * Writes the outcome of a paired A/B comparison (--ab --json; docs/results-format.md, "Paired
 * A/B results") to `path` atomically, as bench__json_write_file: the programs old (A) and new
 * (B), the comparison's noise threshold (relative) and significance level, and the benchmarks
 * o[0..n) in the order of the report's summary. 0, or a negative error code with one line in msg.
 */
int bench__ab_json_write(const char *path, const char *old_prog, const char *new_prog,
                         double noise_threshold, double significance_level,
                         const bench__ab_outcome *o, size_t n, char *msg, size_t msglen);

/**
 * Writes the results as JSON to `path` atomically (temporary file in the same directory, fsync,
 * rename): a failed write leaves any previous file untouched. Returns 0 or a negative error code
 * with a one-line reason in msg.
 */
int bench__json_write_file(const char *path, const bench__context *ctx, const bench__result *all,
                           size_t n, char *msg, size_t msglen);

/**
 * Writes text (and a final newline) to path (files.c). A regular file or a new name is replaced
 * atomically: a temporary file PATH.tmp.PID.XXXXXX in the same directory, fsync, mode 0644,
 * rename, fsync of the directory; a failed write leaves any previous file untouched and no
 * temporary file, even when a terminating signal or a file-size limit stops it. A character
 * device or FIFO (/dev/null, /dev/stdout, a pipe) is written directly, never renamed over; a
 * symbolic link to a regular file replaces that file; a directory, block device, socket or
 * dangling link is refused. Returns 0 or a negative error code with a one-line reason in msg.
 */
int bench__write_atomic(const char *path, const char *text, char *msg, size_t msglen);
/** bench__write_atomic of len bytes of data as they are (no newline added): a binary file. */
int bench__write_atomic_bytes(const char *path, const void *data, size_t len, char *msg,
                              size_t msglen);
/** mkdir -p of top, mode 0700 for what it makes (caches of this user's); each part must be a
 * folder. 0, or BENCH_EIO with one line in msg. */
int bench__make_dirs(const char *top, char *msg, size_t msglen);

/** Temporary files older than this (s) whose process is gone are removed by a later save. */
#define BENCH__STALE_TMP_S 600.0
/** Default wait (s) for another run's lock on a baseline; $BENCH_LOCK_TIMEOUT replaces it. */
#define BENCH__LOCK_TIMEOUT_S 600.0

/**
 * Names a temporary file that a terminating signal must remove (files.c); returns its slot for
 * bench__tmp_unregister, or -1 when the registry is full (the file is then not cleaned up).
 */
int bench__tmp_register(const char *name);
/** Forgets a temporary file (renamed or removed); -1 is a no-op. */
void bench__tmp_unregister(int slot);
/**
 * While a temporary file is being written (files.c, snapshot.c): a terminating signal at its
 * default action removes the registered files and then ends the process as it would have, and
 * SIGXFSZ is ignored (a write past the file-size limit fails with EFBIG). Pairs nest.
 */
void bench__tmp_guard(void);
/** Undoes bench__tmp_guard. */
void bench__tmp_unguard(void);
/**
 * Removes the regular files this user owns in dir named like temporary files (ANY.tmp.PID.XXXXXX,
 * the snapshot copies of older versions, .NAME.program.PID.tmp) whose process PID is gone and
 * that were last modified at least older_than_s seconds ago.
 */
void bench__tmp_sweep(const char *dir, double older_than_s);
/** bench__tmp_sweep of the folder that holds path, and path's own history being made,
 * PATH.new-PID with its SQLite -journal, -wal, -shm, on the same terms (no other file). */
void bench__tmp_sweep_beside(const char *path, double older_than_s);

struct stat;
/**
 * Opens path for reading without waiting (a FIFO would block forever) and refuses anything that
 * is not a regular file (BENCH_EIO, msg names the path and what it is). On success *fd is a
 * blocking descriptor the caller closes and *st describes the file.
 */
int bench__open_regular(const char *path, int *fd, struct stat *st, char *msg, size_t msglen);

/**
 * Opens path to append to it (created, mode 0644, when absent) without waiting (a FIFO) and
 * refuses anything that is not a regular file, a symbolic link included (BENCH_EIO, msg names
 * the path and what it is). On success *fd is a non-blocking descriptor the caller closes.
 */
int bench__open_append(const char *path, int *fd, char *msg, size_t msglen);
/**
 * Why st (a file or folder) is not safe to act on as this user, into buf and returned, or NULL
 * when it is: owned by another user than this one and root, or writable by group or others.
 */
const char *bench__unsafe_owner(const struct stat *st, char *buf, size_t len);
/**
 * Opens the folder dir (relative to the folder descriptor at, or AT_FDCWD; flags adds to
 * O_DIRECTORY, e.g. O_NOFOLLOW) and refuses one bench__unsafe_owner finds unsafe. On success *fd
 * is its close-on-exec descriptor, the caller's to close, and pinned is "/proc/self/fd/FD": a path
 * that names that very folder for as long as fd is open, however its names change afterwards (no
 * name is resolved again). Returns 0; BENCH_EUNAVAIL when it does not exist; BENCH_EINVAL when
 * it is unsafe; BENCH_EIO otherwise (a symbolic link with O_NOFOLLOW, no /proc); why says why.
 */
int bench__dir_pin(int at, const char *dir, int flags, int *fd, char *pinned, size_t plen,
                   char *why, size_t whylen);

/**
 * Takes the exclusive lock of a baseline: flock on PATH.lock beside it, created when missing.
 * When another run holds it and wait is false: BENCH_EUNAVAIL at once. With wait, prints
 * "waiting for lock held by another run" on stderr and waits up to $BENCH_LOCK_TIMEOUT seconds
 * (default BENCH__LOCK_TIMEOUT_S), then fails (BENCH_EIO).
 * On success *fd holds the lock until bench__lock_release(*fd).
 */
int bench__lock_acquire(const char *path, bool wait, int *fd, char *msg, size_t msglen);
/** Releases a lock taken by bench__lock_acquire; -1 is a no-op. */
void bench__lock_release(int fd);
/** bench__write_atomic of text printed by cJSON, then frees it; NULL text: out of memory. */
int bench__write_json_text(const char *path, char *text, char *msg, size_t msglen);

/* ---- saved runs: baselines and results files ---- */

/** One benchmark read back from a file. */
typedef struct bench__entry {
    char id[256];
    bench__status status;
    size_t nsamples;
    double *iters;     /* per sample: iterations */
    double *totals_ns; /* per sample: total ns */
    uint32_t *process; /* per sample: the worker process it came from; NULL: one process */
    unsigned processes; /* worker processes (1 + the largest index); 0 without `process` */
    uint64_t bytes_per_iter;
    uint64_t elements_per_iter;
    /* The program that measured it (a baseline's "program" of the entry): its hash and its
     * shared libraries' hash, as in the context; "" when the file does not say (older files). */
    char program_hash[BENCH__HASH_TEXT];
    char program_libs[BENCH__HASH_TEXT];
    /* The benchmark's code identity when it was measured (bench__result.code_hash); "" when the
     * file does not say. */
    char code_hash[65];
    /* The start of the run that measured it (that run's context.timestamp, to the second); ""
     * when the file does not say. */
    char timestamp[32];
    bench__noise noise;
    size_t nmetrics;
    struct bench__saved_metric *metrics; /* per-sample metrics, as in bench__result */
} bench__entry;

/** A metric read back from a file: its per-sample totals. */
typedef struct bench__saved_metric {
    char name[64];
    char unit[16];
    char source[16]; /* what recorded it ("perf", "callgrind", ...); "": the file does not say */
    double *totals; /* nsamples values */
} bench__saved_metric;

/** A results or baseline file, validated. Entries are sorted by id and unique. */
typedef struct bench__saved {
    bench__context_id ctx;
    size_t n;
    bench__entry *entries;
} bench__saved;

/** Largest file the loader reads, in bytes, and the most entries and samples it accepts. */
#define BENCH__MAX_FILE_BYTES (16u * 1024 * 1024)
#define BENCH__MAX_ENTRIES 100000
#define BENCH__MAX_SAMPLES 100000
/** Largest run-to-run sd of ln(median) a calibrated entry may claim (a factor e between runs). */
#define BENCH__MAX_LOG_SD 1.0
/** Room beyond sd * sqrt(runs) between an entry's log_median_mean and its own log-median. */
#define BENCH__LOG_MEAN_SLACK 0.05

/**
 * Reads and validates a results or baseline file. Returns 0; BENCH_EIO when the file cannot be
 * read (msg says why, e.g. it does not exist); BENCH_EINVAL when its content is not a valid
 * file of schema_version 1 (msg names the file, the JSON path and what is wrong); BENCH_ENOMEM.
 * On failure *out is empty. Never crashes on hostile input; allocation is bounded by the limits.
 */
int bench__saved_load(const char *path, bench__saved *out, char *msg, size_t msglen);
/**
 * bench__saved_load of a text in memory (the fuzz target's entry point): `name` stands for the
 * file in messages; text[len] must be a NUL byte (text itself may hold others: rejected).
 */
int bench__saved_parse(const char *name, const char *text, size_t len, bench__saved *out,
                       char *msg, size_t msglen);
/** Frees what a saved run owns; safe on a zeroed one. */
void bench__saved_destroy(bench__saved *s);
/** The entry with this id, or NULL. */
const bench__entry *bench__saved_find(const bench__saved *s, const char *id);
/** Median ns per iteration of a saved entry's samples (NAN without memory). */
double bench__entry_median(const bench__entry *e);
/** A saved entry's metric per ns of time over all its samples; -1 when it has no such metric. */
double bench__entry_rate(const bench__entry *e, const char *metric);

/**
 * Saves results as the baseline at `path`: entries of an existing valid file whose ids are not
 * in `all` are kept; the others are replaced. Atomic like bench__json_write_file. Refuses to
 * replace an existing file that is not a valid baseline (BENCH_EINVAL, message names it).
 */
int bench__baseline_save(const char *path, const bench__context *ctx, const bench__result *all,
                         size_t n, char *msg, size_t msglen);
/**
 * bench__baseline_save that also calls after(arg, msg, msglen) under the baseline's lock, once
 * the file was replaced (NULL: nothing): a snapshot renamed there can never be paired with
 * another save's file. Each entry saved records the program that measured it (ctx's program
 * hash and libraries). Before anything is replaced, the text to be written is held to the
 * loader's limits: a save that would make a file the loader refuses (over BENCH__MAX_FILE_BYTES,
 * more than BENCH__MAX_ENTRIES entries) fails with BENCH_EINVAL and keeps the old file.
 * Returns 0 or a negative error code (after's, when it fails) with a one-line reason in msg.
 */
int bench__baseline_save_then(const char *path, const bench__context *ctx,
                              const bench__result *all, size_t n,
                              int (*after)(void *arg, char *msg, size_t msglen), void *arg,
                              char *msg, size_t msglen);

/**
 * Whether a baseline of counts (`counts`, --instructions) or of times may later be saved over
 * what is at path, checked before a run measures anything, so that a save bound to be refused
 * is refused at once: 0 when nothing is there or a valid baseline of the same kind; otherwise
 * the error code and reason that bench__baseline_save_then would give, in msg.
 */
int bench__baseline_replaceable(const char *path, bool counts, char *msg, size_t msglen);

/* ---- the last run of each program on this machine (last.c) ---- */

/**
 * The file that keeps the last run of `program` (its path; resolved to its real path) on this
 * machine, into path: in $BENCH_LAST_DIR, else $XDG_CACHE_HOME/harness/last (an absolute
 * XDG_CACHE_HOME), else $HOME/.cache/harness/last; named NAME-HASH.json, NAME the program's file
 * name, HASH from a SHA-256 of its real path and the machine (/etc/machine-id, else the host name
 * and CPU model in ctx). A folder that another user owns or that group or others may write holds
 * the file in this user's folder inside it, FOLDER/UID/ (made 0700 by bench__last_keep). Only
 * bench__last_load and bench__last_keep use the path, and only the one the latest call gave: they
 * open the folder once, check its owner and mode and reach the file through its descriptor.
 * Returns 0; BENCH_EUNAVAIL, silently, when BENCH_LAST_DIR is set and empty or no folder is
 * named; BENCH_EIO with the reason in msg.
 */
int bench__last_path(const char *program, const bench__context *ctx, char *path, size_t len,
                     char *msg, size_t msglen);
/**
 * Reads the last-run file at path into *out (bench__saved_load, then a run of times only); a
 * symbolic link, or a file another user owns, is not read. BENCH_EUNAVAIL, silently, when there
 * is none yet; other errors with the reason in msg.
 */
int bench__last_load(const char *path, bench__saved *out, char *msg, size_t msglen);
/**
 * Keeps the OK results among all[0..n) (the caller leaves out the others) in the last-run file
 * at path, making its folder (0700) when missing: merged by id like a baseline, but a file that
 * cannot be read as a run of times is replaced, and old entries of benchmarks `present(where,
 * id)` does not know are dropped; a file that is not a regular file, or is another user's, is
 * not replaced (BENCH_EIO). Does not wait for another run saving the same file at once
 * (BENCH_EUNAVAIL). 0, or an error code with the reason in msg.
 */
int bench__last_keep(const char *path, const bench__context *ctx, const bench__result *all,
                     size_t n, bool (*present)(const void *where, const char *id),
                     const void *where, char *msg, size_t msglen);
/** The merge and atomic write of bench__last_keep (json_merge.c), under PATH.lock. */
int bench__last_save(const char *path, const bench__context *ctx, const bench__result *all,
                     size_t n, bool (*present)(const void *where, const char *id),
                     const void *where, char *msg, size_t msglen);

/* ---- program identity and snapshots (snapshot.c) ---- */

/**
 * Hashes the file at path (SHA-256 of its bytes) into out as "sha256:HEX" (room for
 * BENCH__HASH_TEXT); *bytes (may be NULL) gets its size. Returns 0, or BENCH_EIO with the reason
 * in msg.
 */
int bench__program_hash(const char *path, char *out, size_t len, double *bytes, char *msg,
                        size_t msglen);
/**
 * Hashes the shared libraries this process runs code from (every executable file mapping in
 * /proc/self/maps but the program itself: paths and contents, in path order) into out as
 * "fnv1a64:HEX" (64-bit FNV-1a: an identity, not a security measure). A snapshot of the program
 * runs with whatever libraries are installed when it runs, so a change of these makes a
 * confirmation against it unsound.
 */
int bench__libraries_hash(char *out, size_t len, char *msg, size_t msglen);

/** A snapshot being saved: its temporary copy until it is committed or discarded. */
typedef struct bench__snapshot {
    char tmp[4200];               /* DIR/NAME.program.tmp.PID.XXXXXX; "" when none */
    int slot;                     /* its entry in the temporary-file registry; -1 none */
    char hash[BENCH__HASH_TEXT];  /* "sha256:HEX" of the bytes copied */
    double bytes;                 /* size, bytes */
} bench__snapshot;

/**
 * Copies the running program into a temporary file in dir (mode 0755, fsynced) and hashes it
 * into s. Stops after timeout_s seconds, and when the run is interrupted (BENCH_EUSAGE); a
 * file-size limit or a full disk is an error, not the end of the process. Returns 0, or a
 * negative error code with the reason in msg (nothing is left behind then).
 */
int bench__snapshot_prepare(const char *dir, const char *name, double timeout_s,
                            bench__snapshot *s, char *msg, size_t msglen);
/** Renames a prepared snapshot to DIR/NAME.program; 0, or BENCH_EIO (the copy is removed). */
int bench__snapshot_commit(const char *dir, const char *name, bench__snapshot *s, char *msg,
                           size_t msglen);
/** Removes a prepared snapshot that will not be committed; safe to call again. */
void bench__snapshot_discard(bench__snapshot *s);

/* ---- trust in snapshots (trust.c; docs/comparison.md#threat-model) ---- */

/**
 * This user's key ($XDG_CONFIG_HOME/harness/key, else ~/.config/harness/key) into key; with
 * create, made (0600, in a 0700 directory) when there is none. Returns 0; BENCH_EUNAVAIL when
 * there is no key (and none was made) or no configuration directory; BENCH_EIO when the key or
 * its directory is unsafe (a symbolic link, owned by another user, open to others) or malformed.
 * msg says why.
 */
int bench__user_key(bool create, unsigned char key[32], char *msg, size_t msglen);
/**
 * Signs a snapshot's hash and its size (bytes; 0: none, as older versions signed) with this
 * user's key (made when missing) into mac; 0 or as above.
 */
int bench__snapshot_sign(const char *hash, double bytes, char *mac, size_t maclen, char *msg,
                         size_t msglen);
/**
 * Whether mac is this user's signature of hash, with its size bytes (0: unknown) or without a
 * size (older versions): 0, with *signed_bytes the size it vouches for (0 none), or BENCH_EINVAL
 * with the reason in msg (unsigned, no key to check with, or signed with another key).
 */
int bench__snapshot_verify(const char *hash, double bytes, const char *mac, double *signed_bytes,
                           char *msg, size_t msglen);
/**
 * Opens the snapshot dir/file to run it: refuses a directory or file owned by another user than
 * this one and root, or writable by group or others; a symbolic link; anything but a regular ELF
 * file; a file whose size is not `bytes` (> 0: a size the signature vouches for) before reading
 * it; without such a size, one whose bytes do not hash to `hash`, hashed without keeping them;
 * then copies its bytes into a sealed memory file while hashing them, until deadline_ns
 * (bench__now_ns clock; <= 0: none), and requires that hash to be `hash`. On success *fd is a
 * read-only, close-on-exec descriptor of the sealed copy, to start workers from
 * (bench__proc_spec.exec_fd); the caller closes it. Returns 0; BENCH_EUNAVAIL when the file is
 * missing; BENCH_EINVAL when it may not run; BENCH_EIO when it could not be read or copied;
 * BENCH_EUSAGE when the run was interrupted. msg says why.
 */
int bench__snapshot_open(const char *dir, const char *file, const char *hash, double bytes,
                         int64_t deadline_ns, int *fd, char *msg, size_t msglen);

#endif /* HARNESS_STORE_H */
