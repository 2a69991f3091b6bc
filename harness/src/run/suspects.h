/*
 * suspects.h: a saved-baseline comparison's suspect verdicts settled beyond the saved numbers
 * (suspects.c).
 */
#ifndef HARNESS_RUN_SUSPECTS_H
#define HARNESS_RUN_SUSPECTS_H

#include <stddef.h>

#include "compare/compare.h"
#include "run/pipeline.h"
#include "store/store.h"
#include "sys/context.h"

/**
 * Settles the suspect verdicts of a saved-baseline comparison (ch[0..m), ids naming them) by
 * the program's identity or an interleaved run of the baseline's snapshot; with --explain,
 * explains those the run confirmed as changed (explained[j], malloc'd, the caller's; may be
 * NULL); 0, or -1 when interrupted.
 */
struct bench__explanation;
int bench__confirm_suspects(const bench__request *c, const bench__saved *old,
                                const bench__context *ctx, const char *const *ids,
                                bench__change *ch, size_t m, double drift,
                                struct bench__explanation **explained);

#endif /* HARNESS_RUN_SUSPECTS_H */
