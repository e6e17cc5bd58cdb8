// The CPU backend: optimises an HLO module (simplify, fold, CSE, DCE, fuse), emits one LLVM
// module, optimises it at O3 for the host CPU and JIT-compiles it with ORC.
#ifndef TFJIT_BACKENDS_CPU_CPU_BACKEND_H_
#define TFJIT_BACKENDS_CPU_CPU_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>

#include "backends/backend.h"
#include "compiler/passes/fusion_policy.h"

namespace tfjit::cpu {

struct CpuBackendOptions {
  int opt_level = 3;     // LLVM optimisation level (0..3)
  bool parallel = true;  // split large kernels across the ThreadPool given to Run
  int64_t parallel_min_elements = 1 << 16;  // kernels smaller than this always run inline
  // Kernels outside loops touching at most this many elements are compiled for size
  // (IrEmitterOptions::small_kernel_elements); 0: none.
  int64_t small_kernel_elements = 256;
  bool verify_passes = true;  // run the HLO verifier after every pass
  // Threads LLVM's optimisation and code generation of one module are split over (the
  // module in up to 4 parts per thread, of at least 4 kernels each): 0 = up to 4, as many as
  // the hardware has; 1 = on the calling thread only.
  int compile_threads = 0;
  // Persistent cache of compiled code (object_cache.h): compiled modules are stored in this
  // directory and loaded from it by later compilations of the same module, in this process
  // or another, on the same CPU with the same LLVM and tfjit build. Empty: no disk cache.
  std::string cache_dir;
  // The cache directory's size cap; least recently used entries go first. <= 0: no cap.
  int64_t cache_max_bytes = int64_t{1} << 30;
  // XLA-style dumps (XLA_FLAGS=--xla_dump_to): with both set, each compiled module's HLO after
  // every pass whose name matches `dump_pass_regex` and its optimized LLVM IR are written to
  // `dump_dir` as <module>.<N>.<NN>_<pass>.hlo and <module>.<N>.ll. A dump compiles: the disk
  // cache is not read then (a hit would skip the LLVM IR asked for).
  std::string dump_dir;
  std::string dump_pass_regex;
};

// What the CPU fuses: the default policy (elemental producers into elemental consumers and
// reductions), and output fusions whose hero is a dot or convolution the runtime library
// computes (IsEpilogueHero): the library call applies the fused bias, activation or residual
// ops to each finished block of rows while it is in cache; and sibling reduce fusions
// merged into multi-output fusions, computed in one loop.
class CpuFusionPolicy : public passes::FusionPolicy {
 public:
  bool IsOutputFusionHero(const hlo::Instruction& inst) const override;
  bool FusesSiblings() const override { return true; }
};

// Compile returns UNIMPLEMENTED "cpu backend: opcode 'X' is not supported (instruction '%n')"
// for anything it cannot emit, so callers can fall back. Thread-safe: Compile may be called
// concurrently; each executable owns its JIT.
std::unique_ptr<backends::Backend> CreateCpuBackend(const CpuBackendOptions& options = {});

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_CPU_BACKEND_H_
