// CpuExecutable: JIT-compiled code for one HLO module plus its buffer plan. Run validates the
// arguments, allocates outputs, takes an arena of temporaries that no other Run is using (so
// Run is reentrant and thread-safe), and calls the entry function.
#ifndef TFJIT_BACKENDS_CPU_CPU_EXECUTABLE_H_
#define TFJIT_BACKENDS_CPU_CPU_EXECUTABLE_H_

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/buffer_plan.h"
#include "backends/cpu/runtime_abi.h"

namespace tfjit::cpu {

class OrcJit;

class CpuExecutable : public backends::Executable {
 public:
  // `entry` lives in `jit`; the plan and `profile_units` (EmittedModule::profile_units) refer
  // to instructions of `module`.
  CpuExecutable(std::unique_ptr<hlo::Module> module, BufferPlan plan,
                std::vector<std::string> profile_units, std::unique_ptr<OrcJit> jit, EntryFn entry,
                backends::CompileStats stats);
  ~CpuExecutable() override;

  // INVALID_ARGUMENT when the argument count, a dtype or dims differ from the parameters.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& args,
                                          ThreadPool* pool) const override;
  absl::StatusOr<std::vector<Tensor>> RunProfiled(
      const std::vector<Tensor>& args, ThreadPool* pool,
      std::vector<backends::KernelTiming>* kernels) const override;
  const backends::CompileStats& stats() const override { return stats_; }
  int64_t copied_output_bytes() const override;
  const hlo::Module& module() const override { return *module_; }

 private:
  absl::StatusOr<std::vector<Tensor>> RunWith(const std::vector<Tensor>& args, ThreadPool* pool,
                                              KernelCounters* counters) const;

  std::unique_ptr<hlo::Module> module_;
  BufferPlan plan_;
  // Per profile unit: its kernel's name, ops, bytes and flops (calls and time 0), and the
  // index of its entry in a profile (units of one instruction share an entry).
  std::vector<backends::KernelTiming> unit_kernels_;
  std::vector<size_t> unit_entry_;
  std::unique_ptr<OrcJit> jit_;
  EntryFn entry_;
  backends::CompileStats stats_;
  // Arenas of finished Runs, reused by later ones: a fresh multi-megabyte allocation is
  // mmapped and page-faulted in on every Run, which cost more than many kernels.
  mutable std::mutex arena_mu_;
  // Arenas of earlier runs, with their sizes (a symbolic module's vary with the batch size).
  mutable std::vector<std::pair<void*, size_t>> free_arenas_;
};

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_CPU_EXECUTABLE_H_
