/*
 * cli.h: the command line of the bench program: parsed (cli_options.c) into the request the
 * pipeline runs (run/pipeline.h), and the help (cli_help.c).
 */
#ifndef HARNESS_CLI_H
#define HARNESS_CLI_H

#include <stdio.h>

#include "run/pipeline.h"

/**
 * Parses argv into *c (built-in defaults first) and checks the combinations and FILTERs.
 * Returns 0, or -1 after one line on stderr (exit code 2).
 */
int bench__cli_parse(bench__request *c, int argc, char **argv);
/**
 * Checks the combinations of the options in *c (cli_checks.c): 0, or -1 after one line on stderr
 * naming the options that do not go together (exit code 2).
 */
int bench__cli_check_combinations(const bench__request *c);
/**
 * Checks the options that need a history once $BENCH_HISTORY has had its say (cli_checks.c): 0,
 * or -1 after one line on stderr (exit code 2).
 */
int bench__cli_check_history(const bench__request *c);
/** Prints the help; its usage line names the program as its messages do (bench__prog_name). */
void bench__cli_print_usage(FILE *o);

#endif /* HARNESS_CLI_H */
