// GEMM micro-kernels and depthwise tiles generated through LLVM for the CPU the process runs on
// (issue 20, item 1): instead of intrinsics written for one ISA, the register block is emitted
// as LLVM IR with vectors of the target's width and compiled for that target, then handed to
// core/gemm.h's drivers (gemm::InstallMicroKernels); the GEMM's packs b into panels two
// vectors wide.
//
// Register blocking per ISA: with 16 vector registers (AVX2) a 6 x 16 block keeps 12
// accumulators, 2 panel vectors and 1 broadcast live; with 32 (AVX-512) the same 6 x 32 block
// as the hand-written kernels, and 7- and 8-row blocks for 1- or 2-row tails in both (the
// driver's choice, as for the AVX-512 kernels). Each output is one FMA chain in k order, so
// every ISA's kernels give the same bits (and those of the AVX-512 intrinsics).
//
// Depthwise tiles (gemm::DepthwiseTileFn): 8 pixels x 1 vector inside the row, with no checks,
// over any number of 8-pixel blocks per call; 8x1, 4x2 and 2x4 tiles with taps checked
// against the row for the rest and the edges (short runs keep 8 accumulators by taking more
// channel vectors per pixel). Same FMA chains as the AVX-512 depthwise row, so same bits.
#ifndef TFJIT_BACKENDS_CPU_GEMM_KERNELS_H_
#define TFJIT_BACKENDS_CPU_GEMM_KERNELS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "backends/cpu/object_cache.h"
#include "backends/cpu/orc_jit.h"
#include "core/gemm.h"

namespace tfjit::cpu {

enum class GemmIsa {
  kAvx2,    // 8-float vectors (ymm), LLVM CPU "x86-64-v3": runs on every AVX2+FMA host
  kAvx512,  // 16-float vectors (zmm), the host's own CPU and features
};
const char* GemmIsaName(GemmIsa isa);
// Whether this host can run code generated for `isa`.
bool HostRuns(GemmIsa isa);

// One ISA's generated kernels; the JIT owns their code.
struct GeneratedKernels {
  std::unique_ptr<OrcJit> jit;
  gemm::MicroKernelSet set;
  bool from_cache = false;  // loaded from the disk cache rather than compiled
};
// Generates and compiles the kernels for `isa` (the host must run them), or, with a `cache`,
// loads their object files from it when a process on this machine stored them before (and
// stores them after compiling): the ~0.4 s of LLVM is paid once per machine and tfjit build.
absl::StatusOr<std::unique_ptr<GeneratedKernels>> CompileGeneratedKernels(GemmIsa isa,
                                                                          const ObjectCache* cache);

// CompileGeneratedKernels' kernels for `isa`, made on first use and kept for the process's
// lifetime (thread-safe; `cache` serves the first call). UNAVAILABLE when the host cannot run
// them.
absl::StatusOr<const gemm::MicroKernelSet*> GetGemmMicroKernels(GemmIsa isa,
                                                                const ObjectCache* cache = nullptr);

// The LLVM IR text (before optimisation) of the kernel for `rows` x `vectors` vectors, for
// tests and for reading what is generated.
std::string GemmMicroKernelIr(GemmIsa isa, int rows, int vectors);
// The same for a depthwise tile.
std::string DepthwiseTileIr(GemmIsa isa, gemm::DepthwiseTile tile);

// What the CPU backend calls once: on a host without AVX-512, installs the AVX2 kernels as
// gemm::GemmF32's and gemm::DepthwiseRowF32's path (hosts with AVX-512 keep the hand-written
// kernels), through the disk cache in `cache_dir` when it is not empty. Errors are returned
// (the backend logs them): kernels that failed to compile (GemmF32 then keeps Eigen), or an
// unknown TFJIT_GEMM value (treated as auto). The environment variable TFJIT_GEMM overrides:
// "generated" (the widest generated kernels the host runs, also on AVX-512 hosts), "avx2"
// (the AVX2 ones), "eigen" (none), "auto" (the default).
absl::Status InstallHostGemmKernels(const std::string& cache_dir = "", int64_t cache_max_bytes = 0);

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_GEMM_KERNELS_H_
