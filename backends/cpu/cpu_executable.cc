// CpuExecutable::Run: argument checks, output and arena allocation, the call into JIT code,
// and copies for outputs no kernel wrote in place (parameters, constants, repeated values).
#include "backends/cpu/cpu_executable.h"

#include <cstdlib>
#include <cstring>

#include "backends/cpu/orc_jit.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::cpu {

CpuExecutable::CpuExecutable(std::unique_ptr<hlo::Module> module, BufferPlan plan,
                             std::unique_ptr<OrcJit> jit, EntryFn entry,
                             backends::CompileStats stats)
    : module_(std::move(module)), plan_(std::move(plan)), jit_(std::move(jit)), entry_(entry),
      stats_(stats) {}

CpuExecutable::~CpuExecutable() = default;

absl::StatusOr<std::vector<Tensor>> CpuExecutable::Run(const std::vector<Tensor>& args,
                                                       ThreadPool* pool) const {
  TFJIT_RETURN_IF_ERROR(backends::CheckArguments(*module_, args));
  std::vector<void*> table(static_cast<size_t>(plan_.num_slots()), nullptr);
  for (size_t i = 0; i < args.size(); ++i) {
    // Compiled code never writes parameters.
    table[i] = const_cast<void*>(args[i].raw_data());
  }
  std::vector<Tensor> outputs;
  outputs.reserve(plan_.outputs().size());
  for (size_t k = 0; k < plan_.outputs().size(); ++k) {
    const hlo::Shape& shape = plan_.outputs()[k].shape;
    outputs.emplace_back(shape.element_type(), shape.dims());
    table[static_cast<size_t>(plan_.first_output_slot()) + k] = outputs.back().raw_data();
  }
  // One arena for every temporary of this Run (64-byte aligned offsets).
  std::unique_ptr<void, decltype(&std::free)> arena(nullptr, &std::free);
  if (plan_.temp_bytes() > 0) {
    arena.reset(std::aligned_alloc(64, static_cast<size_t>(plan_.temp_bytes())));
    if (arena == nullptr) {
      return ResourceExhausted("cannot allocate %d bytes of temporaries for module '%s'",
                               static_cast<int>(plan_.temp_bytes()), module_->name());
    }
  }
  for (int t = 0; t < plan_.num_temps(); ++t) {
    table[static_cast<size_t>(plan_.first_temp_slot() + t)] =
        static_cast<char*>(arena.get()) + plan_.temp_offset(t);
  }
  RunContext ctx;
  ctx.pool = pool;
  entry_(table.data(), &ctx);
  for (size_t k = 0; k < plan_.outputs().size(); ++k) {
    const OutputSource& source = plan_.outputs()[k];
    if (source.written_by_kernel) continue;
    const void* from = source.copy_from.constant != nullptr
                           ? source.copy_from.constant->literal().tensor().raw_data()
                           : table[static_cast<size_t>(source.copy_from.slot)];
    if (outputs[k].byte_size() > 0) std::memcpy(outputs[k].raw_data(), from, outputs[k].byte_size());
  }
  return outputs;
}

}  // namespace tfjit::cpu
