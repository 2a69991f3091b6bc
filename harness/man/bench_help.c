/*
 * bench_help.c: the program whose --help and version help2man turn into the man page bench(1)
 * (harness/CMakeLists.txt). It is any benchmark program's command line with no benchmarks: the
 * help comes from the library (cli_help.c), so the man page cannot drift from --help.
 */
#include <harness/bench.h>

int main(int argc, char **argv)
{
    return bench_main(argc, argv);
}
