/*
 * internal.h: every private header of the harness at once, for the files that use most of them
 * and for the unit tests; not installed. Each header holds one concern:
 *   base.h      error and exit codes, message and escaping helpers
 *   options.h   settings of a benchmark, run-wide options
 *   registry.h  the registered benchmark instances
 *   probe.h     the probe interface (what is measured around a sample)
 *   result.h    what one benchmark's run produced
 *   run.h       running benchmarks: in process, in workers, A/B, calibration, crashes
 *   context.h   the system context and its identity facts
 *   report.h    output formats and reporters
 *   store.h     results and baseline files, atomic writes, locks, program snapshots
 * Headers of one file (sys/clock.h, measure/plan.h, probes/probes.h, report/report_compare.h, ...)
 * are included where they are used.
 */
#ifndef HARNESS_INTERNAL_H
#define HARNESS_INTERNAL_H

#include "core/base.h"
#include "core/options.h"
#include "core/probe.h"
#include "core/registry.h"
#include "core/result.h"
#include "report/report.h"
#include "measure/run.h"
#include "store/store.h"
#include "sys/context.h"

#endif /* HARNESS_INTERNAL_H */
