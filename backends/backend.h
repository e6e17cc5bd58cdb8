// Backend interface: compile an HLO module into an Executable the runtime can call. The
// runtime only sees this interface (it never includes LLVM or CUDA headers).
#ifndef TFJIT_BACKENDS_BACKEND_H_
#define TFJIT_BACKENDS_BACKEND_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "compiler/hlo/module.h"
#include "compiler/passes/fusion_policy.h"
#include "core/thread_pool.h"
#include "tfjit/tensor.h"

namespace tfjit::backends {

struct CompileStats {
  double optimize_ms = 0;           // HLO passes
  double codegen_ms = 0;            // IR emission + LLVM optimisation + JIT link
  int num_kernels = 0;              // loops / library calls emitted
  int64_t flops = 0;                // of the convolutions and dots, hlo::MatmulFlops
  int64_t temp_bytes = 0;           // temporaries per run, buffers shared by liveness
  int64_t temp_bytes_unshared = 0;  // what they would take without sharing
  // A symbolic executable's temporaries grow by this per batch row: temp_bytes is then their
  // size at batch size 0 (the static part), and temp_bytes_unshared is at the representative.
  int64_t temp_bytes_per_row = 0;
  // The code came from a persistent cache of compiled code instead of LLVM (codegen_ms is
  // then the time to load and link it).
  bool loaded_from_disk_cache = false;
};

// One compiled kernel's share of a profiled run (Executable::RunProfiled): a loop nest or a
// library call the code generator sequenced, fused epilogue included.
struct KernelTiming {
  std::string name;   // the HLO instruction it computes (a fusion's name)
  std::string ops;    // its HLO ops (hlo::OpsSummary), e.g. "convolution+add+clamp"
  int64_t calls = 0;  // more than 1 inside loops
  double ms = 0;      // wall time, summed over the calls
  int64_t bytes = 0;  // bytes of its operands and results, per call (hlo::InstructionBytes)
  int64_t flops = 0;  // of its dots and convolutions, per call (hlo::InstructionFlops)
};

class Executable {
 public:
  virtual ~Executable() = default;
  // One tensor per entry parameter (dtype and dims as the parameter's shape; INVALID_ARGUMENT
  // otherwise). Returns the root's value: one tensor for an array root, the flattened elements
  // for a tuple root. Thread-safe: Run may be called concurrently. `pool` may be null.
  virtual absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& args,
                                                  ThreadPool* pool) const = 0;
  // Run, timing each kernel: `kernels` gets one entry per kernel that ran, in the order they
  // first ran (entries of one instruction emitted twice are summed). A backend that cannot
  // time its kernels leaves it empty.
  virtual absl::StatusOr<std::vector<Tensor>> RunProfiled(
      const std::vector<Tensor>& args, ThreadPool* pool, std::vector<KernelTiming>* kernels) const {
    kernels->clear();
    return Run(args, pool);
  }
  virtual const CompileStats& stats() const = 0;
  // Bytes each Run copies, on the host, into results that no kernel wrote (a parameter or a
  // constant returned as it is). A variable update computed by a kernel is written straight
  // into its result's buffer and costs none.
  virtual int64_t copied_output_bytes() const { return 0; }
  // The optimized module that was compiled (for dumps and explain).
  virtual const hlo::Module& module() const = 0;
};

// A cluster's module lowered at batch size `batch` (compiler/hlo/symbolic.h).
struct BatchProbeModule {
  int64_t batch = 0;
  std::unique_ptr<hlo::Module> module;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual absl::string_view name() const = 0;
  virtual const passes::FusionPolicy& fusion_policy() const = 0;
  // Optimizes (the backend's pass pipeline, fusion included) and compiles `module`.
  virtual absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::unique_ptr<hlo::Module> module) const = 0;
  // Compiles one executable for every batch size from `probes`, the same cluster lowered at
  // several batch sizes (the first is the representative: hlo::Symbolize). Its Run takes the
  // batch size from its arguments (ArgumentsBatch); the caller keeps batch sizes below the
  // probes' smallest away from it. FAILED_PRECONDITION with the reason when the probes'
  // optimized modules do not make a symbolic module; UNIMPLEMENTED where the backend does
  // not compile symbolic modules (the default).
  virtual absl::StatusOr<std::unique_ptr<Executable>> CompileSymbolic(
      std::vector<BatchProbeModule> probes) const;
  // Whether CompileSymbolic may succeed (the runtime lowers no probes for a backend that
  // cannot).
  virtual bool compiles_symbolic() const { return false; }
};

// Runs `optimize` (a backend's pass pipeline) on each probe's module, then derives the
// symbolic module (hlo::Symbolize), held at the first probe's batch size.
absl::StatusOr<std::unique_ptr<hlo::Module>> OptimizeAndSymbolize(
    std::vector<BatchProbeModule>& probes,
    const std::function<absl::Status(hlo::Module&)>& optimize);

// The batch size `args` give `module`'s symbolic parameters (b with k*b+c = the argument's
// dim 0, the same b for every one); 0 for a static module. INVALID_ARGUMENT when an argument
// fits no batch size or two disagree.
absl::StatusOr<int64_t> ArgumentsBatch(const hlo::Module& module, const std::vector<Tensor>& args);

// The check every Executable::Run starts with: one tensor per entry parameter, with the
// parameter's dtype and dims (a symbolic module's at the arguments' batch size, which `batch`
// gets when not null). INVALID_ARGUMENT naming the module and argument otherwise.
absl::Status CheckArguments(const hlo::Module& module, const std::vector<Tensor>& args,
                            int64_t* batch = nullptr);

// "<module>.<N>." with N unique in the process: the file-name prefix of one compilation's
// XLA-style dumps (XLA_FLAGS=--xla_dump_to).
std::string DumpPrefix(const hlo::Module& module);

}  // namespace tfjit::backends

#endif  // TFJIT_BACKENDS_BACKEND_H_
