// The GPU backend: optimises an HLO module (the standard passes; the default fusion policy:
// elementwise producers into their consumers and reductions), builds a GpuProgram (PTX
// kernels through LLVM's NVPTX target, dots through cuBLAS) and runs it on one GPU through the
// CUDA driver, loaded with dlopen. Executables take host tensors and return host tensors:
// Run copies the arguments into a device arena from a caching allocator, runs the steps on
// one stream, and copies the outputs back.
#ifndef TFJIT_BACKENDS_GPU_GPU_BACKEND_H_
#define TFJIT_BACKENDS_GPU_GPU_BACKEND_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "backends/backend.h"
#include "backends/gpu/gpu_program.h"

namespace tfjit::gpu {

struct GpuBackendOptions {
  int device_ordinal = 0;  // GPU:N
  // The PTX target; empty: the one the device needs (PtxTargetFor). Set, Compile works
  // without a driver (Run then fails FAILED_PRECONDITION): tests and cross-compiling.
  std::string sm;
  bool verify_passes = true;
  // XLA-style dumps, as CpuBackendOptions: the HLO after each matching pass and the PTX
  // (<module>.<N>.ptx).
  std::string dump_dir;
  std::string dump_pass_regex;
};

// FAILED_PRECONDITION saying what is missing when no sm is given and the driver or the device
// is absent. Compile is thread-safe; so is Run (runs of one executable take turns).
absl::StatusOr<std::unique_ptr<backends::Backend>> CreateGpuBackend(
    const GpuBackendOptions& options = {});

// The program a GPU executable runs (tests and tools); null for another executable.
const GpuProgram* ProgramOf(const backends::Executable& executable);

// Device time of a GPU executable's steps alone (no host copies; the arena's contents are
// whatever it holds), after one warm-up run: milliseconds per run over `iterations` runs
// timed with CUDA events. For benchmarks.
absl::StatusOr<double> TimeStepsOnDevice(const backends::Executable& executable, int iterations);
// A device-to-device copy of `bytes` (cuMemcpyDtoDAsync), milliseconds per copy.
absl::StatusOr<double> TimeDeviceCopy(int64_t bytes, int iterations, int ordinal = 0);
// cuBLAS's float32 GEMM m x n x k called directly, milliseconds per call.
absl::StatusOr<double> TimeCublasSgemm(int m, int n, int k, int iterations, int ordinal = 0);

// How many GPUs the CUDA driver reports (CUDA_VISIBLE_DEVICES applies): 0 without a driver or
// a device, and `why` (optional) then gets the reason.
int VisibleGpuCount(std::string* why = nullptr);

// OK when GPU:`ordinal` exists and tfjit compiles for it (compute capability 8.0 or newer);
// otherwise FAILED_PRECONDITION whose message says why ("no CUDA driver: ...", "the CUDA
// driver reports 1 GPU(s); ...", "it is Tesla T4: ... compute capability 7.5 ...").
absl::Status CheckGpu(int ordinal);

}  // namespace tfjit::gpu

#endif  // TFJIT_BACKENDS_GPU_GPU_BACKEND_H_
