// CPU IR emission: one LLVM module per HLO module, with one function per kernel (fixed kernel
// ABI: buffer table, run context, partition range; see runtime_abi.h) and an entry function
// that runs the kernels in order, splitting large ones across the thread pool, with while and
// conditional as loops and branches around their computations' kernels. Each kernel the entry
// runs sits between two profile hooks (a call each, which returns at once unless profiled).
#ifndef TFJIT_BACKENDS_CPU_IR_EMITTER_H_
#define TFJIT_BACKENDS_CPU_IR_EMITTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/cpu/buffer_plan.h"
#include "compiler/hlo/module.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tfjit::cpu {

// `void tfjit_entry(void** buffers, RunContext* ctx)`.
inline constexpr char kEntryFunctionName[] = "tfjit_entry";

struct IrEmitterOptions {
  bool parallel = true;                     // emit tfjit_cpu_parallel_for for large kernels
  int64_t parallel_min_elements = 1 << 16;  // smaller kernels always run inline
  // Kernels outside loops that touch (read or write) at most this many elements are compiled
  // for size (LLVM's minsize: no vectorisation or unrolling). Scalar code costs such a kernel
  // well under a microsecond per run; vector code with its remainder loops cost 3-10 ms of
  // LLVM each (handtrack's post-processing clusters of 8 such kernels: 48 -> 24 ms to
  // compile). Kernels in loops may run thousands of times per run and keep vector code.
  // 0: every kernel is compiled for speed.
  int64_t small_kernel_elements = 256;
};

struct EmittedModule {
  EmittedModule();
  ~EmittedModule();
  EmittedModule(EmittedModule&&) noexcept;
  EmittedModule& operator=(EmittedModule&&) noexcept;

  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  BufferPlan plan;  // the buffer table the entry function expects
  int num_kernels = 0;
  // The HLO instruction each kernel function "kernel.<i>" computes (for profiles).
  std::vector<std::string> kernel_names;
  // The HLO instruction of each kernel the entry function sequences between the profile hooks
  // (runtime_abi.h, tfjit_cpu_profile_end's `unit`), in emission order; an instruction emitted
  // in several places (a computation called twice) appears once per place.
  std::vector<std::string> profile_units;
};

// OK iff every instruction the entry computation and its callees contain can be emitted;
// otherwise UNIMPLEMENTED "cpu backend: opcode 'X' is not supported (instruction '%name')".
absl::Status CheckCpuSupport(const hlo::Module& module);  // cpu_support.cc
// That UNIMPLEMENTED status for `inst`.
absl::Status UnsupportedOpcode(const hlo::Instruction& inst);

// Emits `module` (already optimised and fused, and accepted by CheckCpuSupport) and plans its
// buffer table. The LLVM module has no target set; the caller configures and optimises it.
absl::StatusOr<EmittedModule> EmitCpuModule(const hlo::Module& module,
                                            const IrEmitterOptions& options);

// EmitCpuModule's LLVM IR as text, before any LLVM pass (`tfjit-opt --emit-llvm`, the
// tests/hlo/cpu FileCheck suite); CheckCpuSupport's error first.
absl::StatusOr<std::string> EmitCpuModuleText(const hlo::Module& module,
                                              const IrEmitterOptions& options);

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_IR_EMITTER_H_
