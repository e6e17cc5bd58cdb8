// CpuExecutable: JIT-compiled code for one HLO module plus its buffer plan. Run validates the
// arguments, allocates outputs and a per-Run arena of temporaries (so Run is reentrant and
// thread-safe), and calls the entry function.
#ifndef TFJIT_BACKENDS_CPU_CPU_EXECUTABLE_H_
#define TFJIT_BACKENDS_CPU_CPU_EXECUTABLE_H_

#include <memory>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/buffer_plan.h"
#include "backends/cpu/runtime_abi.h"

namespace tfjit::cpu {

class OrcJit;

class CpuExecutable : public backends::Executable {
 public:
  // `entry` lives in `jit`; the plan refers to instructions of `module`.
  CpuExecutable(std::unique_ptr<hlo::Module> module, BufferPlan plan, std::unique_ptr<OrcJit> jit,
                EntryFn entry, backends::CompileStats stats);
  ~CpuExecutable() override;

  // INVALID_ARGUMENT when the argument count, a dtype or dims differ from the parameters.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& args,
                                          ThreadPool* pool) const override;
  const backends::CompileStats& stats() const override { return stats_; }
  const hlo::Module& module() const override { return *module_; }

 private:
  std::unique_ptr<hlo::Module> module_;
  BufferPlan plan_;
  std::unique_ptr<OrcJit> jit_;
  EntryFn entry_;
  backends::CompileStats stats_;
};

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_CPU_EXECUTABLE_H_
