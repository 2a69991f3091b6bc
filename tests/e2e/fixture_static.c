/*
 * fixture_static.c: e2e_alloc_static, a statically linked program (-static) with the harness's
 * allocation layer (alloc.c) in it, as a static user program has. Debian ships no static cJSON,
 * so the whole harness cannot be linked this way here; this program holds the part that
 * matters: the library must not define malloc (a static link with libc.a would then fail with
 * duplicate definitions), the program's own allocator must work, and --alloc-stats must say
 * that it is unavailable (no dynamic loader to preload the shim) instead of counting zeros.
 *
 * Run with no argument: allocates and prints "static: allocations work". With --alloc-stats:
 * what bench_main does with that flag (exit 2 and the reason on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/internal.h"
#include "probes/alloc.h"

/* The runner's functions that alloc.c's probe calls; never reached here. */
int bench__metric_add(struct bench__result *r, const char *name, const char *unit,
                      const char *source)
{
    (void)r, (void)name, (void)unit, (void)source;
    return -1;
}

void bench__fact_add(struct bench__result *r, const char *name, const char *unit, double value)
{
    (void)r, (void)name, (void)unit, (void)value;
}

int main(int argc, char **argv)
{
    char *volatile p = malloc(1000);
    if (!p)
        return 1;
    memset(p, 7, 1000);
    free(p);
    if (argc > 1 && strcmp(argv[1], "--alloc-stats") == 0) {
        char msg[1024];
        bench__set_prog_name(argv[0]);
        if (bench__alloc_preload(argc, argv, msg, sizeof msg) != 0) {
            bench__errf("--alloc-stats: %s\n", msg);
            return 2;
        }
        bench__probe *probe;
        if (bench__alloc_probe_create(&probe, msg, sizeof msg) != 0) {
            bench__errf("--alloc-stats: %s\n", msg);
            return 2;
        }
    }
    puts("static: allocations work");
    return 0;
}
