// The CPU backend: optimises an HLO module (simplify, fold, CSE, DCE, fuse), emits one LLVM
// module, optimises it at O3 for the host CPU and JIT-compiles it with ORC.
#ifndef TFJIT_BACKENDS_CPU_CPU_BACKEND_H_
#define TFJIT_BACKENDS_CPU_CPU_BACKEND_H_

#include <cstdint>
#include <memory>

#include "backends/backend.h"
#include "compiler/passes/fusion_policy.h"

namespace tfjit::cpu {

struct CpuBackendOptions {
  int opt_level = 3;        // LLVM optimisation level (0..3)
  bool parallel = true;     // split large kernels across the ThreadPool given to Run
  int64_t parallel_min_elements = 1 << 16;  // kernels smaller than this always run inline
  bool verify_passes = true;  // run the HLO verifier after every pass
};

// What the CPU fuses. The default policy already matches what the elemental emitter does
// best (elemental producers into elemental consumers and reductions; reduce, dot and
// convolution stay kernels of their own, the latter two calls into the runtime library whose
// bias/activation epilogues fuse with the elementwise ops after them); this type is the place
// for CPU-specific limits.
class CpuFusionPolicy : public passes::FusionPolicy {};

// Compile returns UNIMPLEMENTED "cpu backend: opcode 'X' is not supported (instruction '%n')"
// for anything it cannot emit, so callers can fall back. Thread-safe: Compile may be called
// concurrently; each executable owns its JIT.
std::unique_ptr<backends::Backend> CreateCpuBackend(const CpuBackendOptions& options = {});

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_CPU_BACKEND_H_
