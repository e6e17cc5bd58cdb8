// LLVM target setup shared by the backends: one-time initialisation, host detection, target
// machines, and the O-level module optimisation pipeline (new pass manager).
#ifndef TFJIT_BACKENDS_LLVM_TARGET_H_
#define TFJIT_BACKENDS_LLVM_TARGET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace llvm {
class Function;
class Module;
class TargetMachine;
}  // namespace llvm

namespace tfjit::llvm_ir {

// Initialises the native target (and NVPTX when linked) exactly once; thread-safe.
void InitializeLlvm();

// What the JIT compiles for: the process's host CPU as LLVM detects it.
struct HostTarget {
  std::string triple;    // "x86_64-pc-linux-gnu"
  std::string cpu;       // "znver5", "sapphirerapids", ...
  std::string features;  // "+avx512f,+fma,..."
  bool has_avx512 = false;
};
// Detected once per process (cached).
const HostTarget& GetHostTarget();

// A TargetMachine for the host with CodeGenOptLevel::Aggressive (opt_level >= 2) or None.
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateHostTargetMachine(int opt_level);
// The same for the host's triple with another CPU and feature string (e.g. "x86-64-v3" for
// AVX2+FMA code that a host with AVX-512 also runs).
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(
    const std::string& cpu, const std::string& features, int opt_level);

// Sets "target-cpu", "target-features" and, on AVX-512 hosts, "prefer-vector-width"="512"
// (LLVM defaults to 256-bit vectors on Intel AVX-512 parts).
void SetHostFunctionAttributes(llvm::Function& function);

// Sets the module's triple and data layout from `tm`.
void ConfigureModuleForTarget(llvm::Module& module, llvm::TargetMachine& tm);

// Runs the new pass manager's default per-module pipeline at O0..O3 with `tm`'s analyses.
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm, int opt_level);

// Machine code for `module` (configured for `tm`): a relocatable object file, in memory.
absl::StatusOr<std::string> EmitObjectFile(llvm::Module& module, llvm::TargetMachine& tm);

// Optimises `module` at `opt_level` and compiles it for the host into `parts` relocatable
// objects on `threads` threads (each takes the next part until none is left): the module is
// split by function (llvm::SplitModule; what one part uses of another's becomes a hidden
// global), and each part is optimised and compiled in an LLVMContext of its own (round trip
// through bitcode; contexts are not shared between threads). The objects are meant to be
// linked into one JIT together. parts or threads <= 1: one object, on this thread. `module`
// is consumed (left split up). First, at opt_level > 0, identical functions are merged
// (MergeIdenticalFunctions): identical fusions are optimised and compiled once.
absl::StatusOr<std::vector<std::string>> CompileForHostInParts(llvm::Module& module, int opt_level,
                                                               int parts, int threads);
// Merges functions of `module` whose bodies are identical (llvm::MergeFunctionsPass: an
// internal one's uses are redirected to its twin, an external one becomes a call to it), before
// any optimisation; returns how many functions it removed.
int MergeIdenticalFunctions(llvm::Module& module);
// The same for another CPU and feature string of the host's triple (CreateTargetMachine).
absl::StatusOr<std::vector<std::string>> CompileInParts(llvm::Module& module,
                                                        const std::string& cpu,
                                                        const std::string& features, int opt_level,
                                                        int parts, int threads);

}  // namespace tfjit::llvm_ir

#endif  // TFJIT_BACKENDS_LLVM_TARGET_H_
