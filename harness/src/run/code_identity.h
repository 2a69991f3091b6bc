/*
 * code_identity.h: the code identity of the benchmarks (sys/code_id.h) brought to a run
 * (code_identity.c): the programs' disassemblies, read before anything is measured, and the
 * verdicts of a saved comparison on benchmarks whose code is the same on both sides.
 */
#ifndef HARNESS_RUN_CODE_IDENTITY_H
#define HARNESS_RUN_CODE_IDENTITY_H

#include "compare/compare.h"
#include "run/pipeline.h"
#include "store/store.h"
#include "sys/code_id.h"

/**
 * The disassembly of program `path` (sys/code_id.h), or NULL: its identities are then unknown,
 * which a comparison (--ab, --baseline) says in one note on stderr; the verdicts are then the
 * numbers' as before. The caller frees it (bench__code_ids_free).
 */
bench__code_ids *bench__program_code(const bench__request *c, const char *path);

/** This program's disassembly (bench__program_code of the file this process runs), or NULL. */
bench__code_ids *bench__self_code(const bench__request *c);

/**
 * For a run of the pipeline: this program's disassembly when the run keeps or compares its
 * results (--json, the json format, --save-baseline, --baseline, --history), else NULL: objdump
 * costs about 0.2 s of CPU for a 2 MB program, which a run that only prints need not pay.
 */
bench__code_ids *bench__run_code(const bench__request *c);

/**
 * A saved comparison's change `ch` of benchmark `id`, whose code hash in this run is `code`:
 * no verdict on the code when the baseline's entry has the same code hash
 * (bench__verdict_same_code); otherwise, or when the entry was measured by this very program
 * (`program_hash`: the stronger rule of the same program settles it, run/baselines.c), left as
 * it is.
 */
void bench__same_code_as_saved(const bench__saved *old, const char *program_hash,
                               const char *id, const char *code, bench__change *ch);

#endif /* HARNESS_RUN_CODE_IDENTITY_H */
