/*
 * perf_events.h: the parts of the perf_event counter layer that need neither the kernel nor
 * libpfm4, plus the interface of the name resolver (perf_pfm.c with libpfm4, perf_pfm_none.c
 * without). perf.c opens, reads and closes the counters; everything here is a pure function, so
 * the unit tests check it with bytes they build themselves.
 *
 * The pieces: parsing a --perf-events list (presets expanded, aliases of software events made
 * canonical, duplicates removed); the tables of the kernel's generic software and hardware
 * events, which need no libpfm4; grouping events (software events by the kernel PMU that
 * implements them, hardware events in groups of at most a few counters) and the order of
 * reading them; decoding one read() of a PERF_FORMAT_GROUP group and turning two of them into
 * one sample's values, scaled when the group was multiplexed; ratios of sums for the derived
 * metrics.
 */
#ifndef HARNESS_PERF_EVENTS_H
#define HARNESS_PERF_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/base.h"

/** Most events one --perf-events list may name (after expansion and de-duplication). */
#define BENCH__PERF_MAX_EVENTS 16
/** Room for an event name, NUL included: metric names are 1 to 63 characters. */
#define BENCH__PERF_NAME_MAX 64
/** Most hardware events put in one group: fits the general counters of every x86 PMU since
 * Core 2 with hyper-threading on (4), AMD since family 15h (6) and ARMv8 cores (6). */
#define BENCH__PERF_HW_GROUP_MAX 4

/* perf_event_attr.type of the kernel's generic events (linux/perf_event.h), repeated here so the
 * pure parts need no kernel header. */
#define BENCH__PERF_TYPE_HARDWARE 0
#define BENCH__PERF_TYPE_SOFTWARE 1

/** A parsed --perf-events list: event names in the order given, presets expanded, unique. */
typedef struct bench__perf_names {
    size_t n;
    char name[BENCH__PERF_MAX_EVENTS][BENCH__PERF_NAME_MAX];
} bench__perf_names;

/**
 * Parses a comma-separated list of event names and presets (ipc, cache, branch, sw) into *out:
 * items are trimmed of blanks, presets replaced by their events, software-event aliases (faults,
 * cs, migrations, any case) replaced by the canonical name, and later duplicates dropped.
 * Returns 0, or BENCH_EINVAL with the reason in msg (an empty item, a name longer than 63
 * characters or with a character outside printable ASCII, more than BENCH__PERF_MAX_EVENTS
 * events). Does not decide whether a name is known: that is the resolver's job.
 */
int bench__perf_parse_spec(const char *spec, bench__perf_names *out, char *msg, size_t msglen);

/** The events of a preset ("ipc", "cache", "branch", "sw"), comma-separated; NULL otherwise. */
const char *bench__perf_preset(const char *name);

/** How a software event fares when the kernel only lets us count in user mode. */
typedef enum bench__perf_user_mode {
    BENCH__PERF_USER_SAME,    /* counts the same (the clocks: they count time, not events) */
    BENCH__PERF_USER_PARTIAL, /* misses the events taken in kernel mode (faults in syscalls) */
    BENCH__PERF_USER_NEVER,   /* always 0: the event only happens in kernel mode */
} bench__perf_user_mode;

/** One of the kernel's generic software events (PERF_TYPE_SOFTWARE). */
typedef struct bench__perf_sw_event {
    const char *name;  /* canonical, as perf(1) spells it */
    const char *alias; /* another name perf(1) accepts, or NULL */
    uint64_t config;   /* PERF_COUNT_SW_* */
    const char *unit;  /* "ns" for the clocks, "events" otherwise */
    bench__perf_user_mode user_mode;
    const char *what;  /* one line for --list-events and the docs */
} bench__perf_sw_event;

/** The software event with this name or alias (case ignored), or NULL. */
BENCH__COMPONENT_API const bench__perf_sw_event *bench__perf_sw_find(const char *name);
/** The software event with this PERF_COUNT_SW_* number, or NULL. */
BENCH__COMPONENT_API const bench__perf_sw_event *bench__perf_sw_by_config(uint64_t config);
/** The whole software-event table; *n gets its length. */
const bench__perf_sw_event *bench__perf_sw_table(size_t *n);
/** Whether name is one of the kernel's generic hardware or hardware-cache event names (cycles,
 * L1-dcache-load-misses, ...; case ignored). */
bool bench__perf_is_generic_hw(const char *name);

/**
 * An event resolved to what perf_event_open needs, in the layer's own terms (libpfm4 has its own
 * copy of struct perf_event_attr; only perf_pfm.c sees it).
 */
typedef struct bench__perf_event {
    char name[BENCH__PERF_NAME_MAX]; /* as given: the metric's name */
    uint32_t type;                    /* perf_event_attr.type */
    uint64_t config, config1, config2;
    bool exclude_user, exclude_kernel, exclude_hv, exclude_guest, exclude_host;
    bool software; /* type is PERF_TYPE_SOFTWARE: goes into the software group */
    bool kernel_by_default; /* kernel mode counted because we chose to, not because the name
                             * asked (":k"): may fall back to user mode when refused */
    const char *unit;
    bench__perf_user_mode user_mode; /* software events only */
} bench__perf_event;

/**
 * Resolves a name through the software table and the kernel's generic hardware events
 * (PERF_TYPE_HARDWARE: cycles, instructions, branch-misses, ...): what a build without libpfm4
 * knows. The clocks and counts of the software table get exclude_kernel = false (see perf.c for
 * why); a hardware event counts user mode only, as libpfm4 encodes it. Returns 0; BENCH_EINVAL
 * with a message naming the event for any other name (a hardware-cache name is said to need
 * libpfm4).
 */
BENCH__COMPONENT_API int bench__perf_resolve_sw(const char *name, bench__perf_event *ev, char *msg,
                                              size_t msglen);

/* ---- the resolver: perf_pfm.c (libpfm4) or perf_pfm_none.c ----
 *
 * The core library resolves names through the generic tables alone (perf_pfm_none.c). The
 * counters component (libharness-counters, perf_pfm.c, libpfm4) registers its resolver from a
 * constructor when a program links it; the functions below dispatch to the registered one. */

/** A resolver: the three functions below, as one component provides them. */
typedef struct bench__perf_resolver {
    int (*resolve)(const char *name, bench__perf_event *ev, char *msg, size_t msglen);
    const char *(*backend)(char *buf, size_t len);
    void (*list_pmus)(FILE *out);
} bench__perf_resolver;

/** Makes r (static storage) the resolver; called by the counters component before main(). */
BENCH__COMPONENT_API void bench__perf_set_resolver(const bench__perf_resolver *r);

/**
 * Why hardware names are unknown without a registered resolver: "this build has no libpfm4"
 * (libpfm4 was not found when the library was built) or that the program does not link the
 * counters component. with_fix appends what to do, in parentheses.
 */
const char *bench__perf_no_pfm(bool with_fix);

/** The `bench --version` text of the counters layer: "perf_event counters: ...". */
const char *bench__perf_feature(void);

/**
 * Defined by the counters component only; its link flags name it as undefined so a static
 * archive's registering object is linked in (see cuda_component.c for the CUDA component's twin).
 */
extern const int bench__counters_component;

/**
 * Resolves an event name: software events through the table above, anything else through
 * libpfm4 (pfm_get_os_event_encoding, PFM_OS_PERF_EVENT_EXT, user mode by default). Returns 0;
 * BENCH_EINVAL with a one-line reason naming the event when nobody knows it (or, without
 * libpfm4, when it is not a software event).
 */
int bench__perf_resolve(const char *name, bench__perf_event *ev, char *msg, size_t msglen);
/** "libpfm4 4.13" style text for the build's resolver; NULL without libpfm4. */
const char *bench__perf_backend(char *buf, size_t len);
/** --list-events: the PMUs libpfm4 detected and their events (a line saying none otherwise). */
void bench__perf_list_pmus(FILE *out);

/* ---- groups ---- */

/**
 * The group kind of an event: 0 for a hardware (PMU) event; for a software event a number
 * naming the kernel PMU that implements it: the two clocks each have their own (task-clock,
 * cpu-clock), the other software events share one. Events of different kernel PMUs must not
 * share a group: measured on Linux 6.18, a group led by task-clock does not count its
 * page-faults member (nor a page-faults leader its task-clock member) until the thread is next
 * scheduled in, which a CPU-bound benchmark may never be.
 */
unsigned bench__perf_group_kind(const bench__perf_event *ev);

/**
 * Where a group of this kind is read, from 0 (outermost: read first at start and last at stop)
 * to 2 (innermost: next to the wall clock). A counter includes whatever the reads of the groups
 * inside it cost, so the groups most sensitive to that go innermost: the clocks (each read()
 * of a group costs them the whole system call, about 1.3 µs in a VM), then hardware groups (user
 * mode only: they see the few instructions of a read's user side); the software counts
 * outermost (a read() takes no page fault and no context switch).
 */
unsigned bench__perf_read_rank(unsigned kind);

/**
 * The first grouping of n events by their kinds (bench__perf_group_kind): all software events of
 * one kind in one group, hardware events in order in groups of at most hw_max (at least 1).
 * Writes each event's group number to group_of[i] (groups numbered from 0 in order of their first
 * event) and returns the number of groups.
 */
size_t bench__perf_plan(const unsigned *kind, size_t n, size_t hw_max, unsigned *group_of);

/* ---- reading a group ---- */

/**
 * One read() of a group opened with read_format PERF_FORMAT_GROUP |
 * PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING: the u64 words nr,
 * time_enabled, time_running, then nr values, in the leader-then-members order of opening.
 */
typedef struct bench__perf_reading {
    uint64_t nr;             /* events in the group */
    uint64_t enabled;        /* ns the group was enabled, since it was opened */
    uint64_t running;        /* ns it was on the PMU (< enabled: multiplexed) */
    const uint64_t *values;  /* nr counts, pointing into the buffer */
} bench__perf_reading;

/** Words one read of an n-event group returns. */
#define BENCH__PERF_READ_WORDS(n) (3 + (n))

/**
 * Decodes a group read of `nbytes` bytes in buf (what read() returned) into *out. Returns 0, or
 * BENCH_EINVAL when the size is not that of `expect` events or nr differs from it.
 */
int bench__perf_parse_read(const uint64_t *buf, size_t nbytes, size_t expect,
                           bench__perf_reading *out);

/**
 * One sample's values from the readings before and after it: per event (after - before), scaled
 * by enabled/running of the sample when the group ran for only part of it (multiplexing). Writes
 * n values and returns the fraction running/enabled of the sample (1 when it ran throughout, or
 * when no time passed). A group that did not run at all gives values 0 and fraction 0: nothing
 * can be estimated. Never allocates.
 */
double bench__perf_delta(const bench__perf_reading *before, const bench__perf_reading *after,
                         size_t n, double *values);

/* ---- derived metrics ---- */

/** A ratio of two events shown when both were counted, e.g. IPC = instructions / cycles. */
typedef struct bench__perf_derived {
    const char *name;        /* fact name, e.g. "ipc" */
    const char *numerator;   /* event name */
    const char *denominator; /* event name */
    const char *unit;        /* e.g. "instr/cycle" */
} bench__perf_derived;

/** The derived metrics; *n gets their number. */
const bench__perf_derived *bench__perf_derived_table(size_t *n);

/** sum(num) / sum(den) over n samples (a ratio of totals, not a mean of ratios); NaN when the
 * denominator's sum is not positive. */
double bench__perf_ratio_of_sums(const double *num, const double *den, size_t n);

#endif /* HARNESS_PERF_EVENTS_H */
