/*
 * cuda_component.c: what makes the CUDA component (libharness-cuda) take effect. Linked into a
 * program, its constructor registers the CUDA backend (cuda_backend.cu) with the core library
 * before main(), in place of the core's none backend (cuda_none.c).
 *
 * Nothing in a program refers to the component's code, so a static archive would leave it out
 * and --as-needed would drop a shared one. The component's link flags therefore name
 * bench__cuda_component as undefined (pulling this object, and through bench__cuda_ops_cuda the
 * backend, out of libharness-cuda.a) and keep the shared library with --no-as-needed:
 * harness-cuda.pc and the CMake target harness::cuda carry both (docs/gpu.md).
 */
#include "probes/cuda_backend.h"

#ifndef HARNESS_CUDA_FEATURE
#define HARNESS_CUDA_FEATURE "CUDA"
#endif

const int bench__cuda_component = 1;

__attribute__((constructor)) static void register_cuda(void)
{
    bench__cuda_register(bench__cuda_ops_cuda(), "CUDA events: " HARNESS_CUDA_FEATURE);
}
