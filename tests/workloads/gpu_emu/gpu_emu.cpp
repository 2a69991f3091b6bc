/*
 * gpu_emu.cpp: the scheduler of the CPU emulation of CUDA (see cuda_runtime.h beside it).
 */
/* longjmp between stacks is what this file does on purpose: no fortified longjmp check. */
#undef _FORTIFY_SOURCE
#include "cuda_runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#define EMU_SWAPCONTEXT_ONLY 1 /* ASan follows swapcontext, not longjmp between stacks */
#endif

emu_uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
emu_state emu;

static const size_t STACK_BYTES = 64 * 1024;
static std::vector<std::vector<char>> stacks;

bool emu_ready(unsigned i)
{
    const emu_thread &t = emu.th[i];
    if (t.wait == EMU_RUN)
        return true;
    unsigned lo = 0, hi = emu.nt;
    if (t.wait == EMU_WARP) {
        lo = i - i % 32;
        hi = std::min(lo + 32, emu.nt);
    }
    for (unsigned j = lo; j < hi; j++) {
        const emu_thread &o = emu.th[j];
        if (o.done)
            continue;
        if (t.wait == EMU_BLOCK ? o.block_syncs < t.block_syncs : o.warp_syncs < t.warp_syncs)
            return false;
    }
    return true;
}

void emu_switch_to_scheduler(emu_thread &t)
{
#ifdef EMU_SWAPCONTEXT_ONLY
    swapcontext(&t.ctx, &emu.sched);
#else
    if (!_setjmp(t.jb))
        _longjmp(emu.sched_jb, 1);
#endif
}

static void entry()
{
    emu.body();
    emu.th[emu.cur].done = true;
#ifdef EMU_SWAPCONTEXT_ONLY
    swapcontext(&emu.th[emu.cur].ctx, &emu.sched);
#else
    _longjmp(emu.sched_jb, 1);
#endif
}

/* Runs thread t until it yields or ends. */
static void resume(emu_thread &t)
{
#ifdef EMU_SWAPCONTEXT_ONLY
    swapcontext(&emu.sched, &t.ctx);
#else
    if (!_setjmp(emu.sched_jb)) {
        if (!t.started) {
            t.started = true;
            ucontext_t here; /* abandoned: the thread comes back through sched_jb */
            swapcontext(&here, &t.ctx);
        } else {
            _longjmp(t.jb, 1);
        }
    }
#endif
}

void emu_run_blocks(dim3 grid, dim3 block)
{
    unsigned nt = block.x * block.y * block.z;
    if (nt > 1024) {
        fprintf(stderr, "gpu_emu: %u threads per block\n", nt);
        abort();
    }
    if (stacks.size() < nt)
        stacks.resize(nt, std::vector<char>(STACK_BYTES));
    blockDim = block;
    gridDim = grid;
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                blockIdx = {bx, by, bz};
                emu.nt = nt;
                emu.th.assign(nt, emu_thread());
                for (unsigned t = 0; t < nt; t++) {
                    emu_thread &e = emu.th[t];
                    e.tid = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
                    e.wait = EMU_RUN;
                    getcontext(&e.ctx);
                    e.ctx.uc_stack.ss_sp = stacks[t].data();
                    e.ctx.uc_stack.ss_size = STACK_BYTES;
                    e.ctx.uc_link = nullptr;
                    makecontext(&e.ctx, entry, 0);
                }
                unsigned left = nt;
                while (left > 0) {
                    bool progress = false;
                    for (unsigned t = 0; t < nt; t++) {
                        if (emu.th[t].done || !emu_ready(t))
                            continue;
                        emu.cur = t;
                        threadIdx = emu.th[t].tid;
                        emu.th[t].wait = EMU_RUN;
                        resume(emu.th[t]);
                        progress = true;
                        if (emu.th[t].done)
                            left--;
                    }
                    if (!progress) {
                        fprintf(stderr, "gpu_emu: the block's threads wait on each other forever "
                                        "(a barrier not reached by all threads)\n");
                        abort();
                    }
                }
            }
}
