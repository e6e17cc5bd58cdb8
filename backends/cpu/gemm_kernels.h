// GEMM micro-kernels generated through LLVM for the CPU the process runs on (issue 20, item 1):
// instead of intrinsics written for one ISA, the register block is emitted as LLVM IR with
// vectors of the target's width and compiled for that target, then handed to core/gemm.h's
// blocked driver (gemm::InstallMicroKernels), which packs b into panels two vectors wide.
//
// Register blocking per ISA: with 16 vector registers (AVX2) a 6 x 16 block keeps 12
// accumulators, 2 panel vectors and 1 broadcast live; with 32 (AVX-512) the same 6 x 32 block
// as the hand-written kernels, and 7- and 8-row blocks for 1- or 2-row tails in both (the
// driver's choice, as for the AVX-512 kernels). Each output is one FMA chain in k order, so
// every ISA's kernels give the same bits (and those of the AVX-512 intrinsics).
#ifndef TFJIT_BACKENDS_CPU_GEMM_KERNELS_H_
#define TFJIT_BACKENDS_CPU_GEMM_KERNELS_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/gemm.h"

namespace tfjit::cpu {

enum class GemmIsa {
  kAvx2,    // 8-float vectors (ymm), LLVM CPU "x86-64-v3": runs on every AVX2+FMA host
  kAvx512,  // 16-float vectors (zmm), the host's own CPU and features
};
const char* GemmIsaName(GemmIsa isa);
// Whether this host can run code generated for `isa`.
bool HostRuns(GemmIsa isa);

// The micro-kernels for `isa`, generated and compiled on first use and kept for the process's
// lifetime (thread-safe). UNAVAILABLE when the host cannot run them.
absl::StatusOr<const gemm::MicroKernelSet*> GetGemmMicroKernels(GemmIsa isa);

// The LLVM IR text (before optimisation) of the kernel for `rows` x `vectors` vectors, for
// tests and for reading what is generated.
std::string GemmMicroKernelIr(GemmIsa isa, int rows, int vectors);

// What the CPU backend calls once: on a host without AVX-512, installs the AVX2 kernels as
// gemm::GemmF32's path (hosts with AVX-512 keep the hand-written kernels). Errors are returned
// (the backend logs them): kernels that failed to compile (GemmF32 then keeps Eigen), or an
// unknown TFJIT_GEMM value (treated as auto). The environment variable TFJIT_GEMM overrides: "generated"
// (the widest generated kernels the host runs, also on AVX-512 hosts), "avx2" (the AVX2 ones),
// "eigen" (none), "auto" (the default).
absl::Status InstallHostGemmKernels();

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_GEMM_KERNELS_H_
