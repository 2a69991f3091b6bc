/*
 * code_identity.c: the code identity of the benchmarks in a run (code_identity.h). Each program
 * is disassembled once, in the manager, before anything is measured: objdump must not share the
 * CPUs with a measurement. A run of times gives each result its code_hash; --ab reads both
 * programs; a saved comparison sets the suspects whose code is the same as the baseline entry's
 * to no change (their numbers kept), before any of them is confirmed by a paired run.
 */
#include "run/code_identity.h"

#include <string.h>

#include "core/base.h"
#include "report/report.h"
#include "sys/proc.h"

bench__code_ids *bench__program_code(const bench__request *c, const char *path)
{
    bench__code_ids *ids = NULL;
    char why[256], shown[4 * sizeof why];
    if (bench__code_ids_of_program(path, bench__request_timeout(c), &ids, why,
                                   sizeof why) != 0 &&
        (c->ab || c->baseline))
        bench__errf("note: the code identity of %s's benchmarks is unknown (%s): the same "
                    "code on both sides cannot be told from a change\n",
                    path, bench__escape(shown, sizeof shown, why));
    return ids;
}

bench__code_ids *bench__self_code(const bench__request *c)
{
    char self[4096], why[512];
    if (bench__proc_self(self, sizeof self, why, sizeof why) != 0)
        return NULL;
    return bench__program_code(c, self);
}

bench__code_ids *bench__run_code(const bench__request *c)
{
    bool kept = c->json_path || c->format == BENCH__FMT_JSON || c->save_baseline ||
                c->baseline || c->history_path;
    return kept ? bench__self_code(c) : NULL;
}

void bench__same_code_as_saved(const bench__saved *old, const char *program_hash,
                               const char *id, const char *code, bench__change *ch)
{
    const bench__entry *e = bench__saved_find(old, id);
    if (e && !(program_hash[0] && strcmp(e->program_hash, program_hash) == 0))
        (void)bench__verdict_same_code(ch, e->code_hash, code);
}
