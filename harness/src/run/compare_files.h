/*
 * compare_files.h: two saved runs compared without measuring (compare_files.c).
 */
#ifndef HARNESS_COMPARE_FILES_H
#define HARNESS_COMPARE_FILES_H

#include "run/pipeline.h"

/** --load-baseline NEW --baseline OLD: compares two files, runs nothing; the exit code. */
int bench__compare_files(const bench__request *c);

#endif /* HARNESS_COMPARE_FILES_H */
