// CpuExecutable::Run: argument checks, output and arena allocation, the call into JIT code,
// and copies for outputs no kernel wrote in place (parameters, constants, repeated values);
// RunProfiled turns the entry's per-kernel counters into named kernel timings.
#include "backends/cpu/cpu_executable.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backends/cpu/orc_jit.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/cost.h"
#include "core/dtype.h"
#include "core/run_control.h"
#include "core/status.h"

namespace tfjit::cpu {

CpuExecutable::CpuExecutable(std::unique_ptr<hlo::Module> module, BufferPlan plan,
                             std::vector<std::string> profile_units, std::unique_ptr<OrcJit> jit,
                             EntryFn entry, backends::CompileStats stats)
    : module_(std::move(module)),
      plan_(std::move(plan)),
      jit_(std::move(jit)),
      entry_(entry),
      stats_(stats) {
  absl::flat_hash_map<absl::string_view, const hlo::Instruction*> by_name;
  for (const hlo::Computation* c : module_->computations()) {
    for (const hlo::Instruction* inst : c->instructions()) by_name.emplace(inst->name(), inst);
  }
  absl::flat_hash_map<std::string, size_t> entry_of;
  for (const std::string& name : profile_units) {
    auto [it, inserted] = entry_of.emplace(name, unit_kernels_.size());
    unit_entry_.push_back(it->second);
    if (!inserted) continue;
    backends::KernelTiming k;
    k.name = name;
    if (auto inst = by_name.find(name); inst != by_name.end()) {
      k.ops = hlo::OpsSummary(*inst->second);
      k.bytes = hlo::InstructionBytes(*inst->second);
      k.flops = hlo::InstructionFlops(*inst->second);
    }
    unit_kernels_.push_back(std::move(k));
  }
}

CpuExecutable::~CpuExecutable() {
  for (auto& [arena, bytes] : free_arenas_) std::free(arena);
}

absl::StatusOr<std::vector<Tensor>> CpuExecutable::Run(const std::vector<Tensor>& args,
                                                       ThreadPool* pool) const {
  return RunWith(args, pool, nullptr);
}

absl::StatusOr<std::vector<Tensor>> CpuExecutable::RunProfiled(
    const std::vector<Tensor>& args, ThreadPool* pool,
    std::vector<backends::KernelTiming>* kernels) const {
  kernels->clear();
  KernelCounters counters(unit_entry_.size());
  absl::StatusOr<std::vector<Tensor>> outputs = RunWith(args, pool, &counters);
  // Entries in the order their kernels first ran (emission order), units of one instruction
  // summed; kernels that never ran (an untaken branch's) left out.
  std::vector<int> position(unit_kernels_.size(), -1);
  for (size_t u = 0; u < unit_entry_.size(); ++u) {
    if (counters.calls[u] == 0) continue;
    const size_t e = unit_entry_[u];
    if (position[e] < 0) {
      position[e] = static_cast<int>(kernels->size());
      kernels->push_back(unit_kernels_[e]);
    }
    backends::KernelTiming& k = (*kernels)[static_cast<size_t>(position[e])];
    k.calls += counters.calls[u];
    k.ms += static_cast<double>(counters.ns[u]) / 1e6;
  }
  return outputs;
}

int64_t CpuExecutable::copied_output_bytes() const {
  int64_t bytes = 0;
  for (const OutputSource& source : plan_.outputs()) {
    if (!source.written_by_kernel) bytes += source.shape.byte_size();
  }
  return bytes;
}

absl::StatusOr<std::vector<Tensor>> CpuExecutable::RunWith(const std::vector<Tensor>& args,
                                                           ThreadPool* pool,
                                                           KernelCounters* counters) const {
  // A symbolic module runs at the batch size its arguments give (0 for a static one).
  int64_t batch = 0;
  TFJIT_RETURN_IF_ERROR(backends::CheckArguments(*module_, args, &batch));
  const int64_t arena_bytes = plan_.arena_bytes(batch);
  std::vector<void*> table(static_cast<size_t>(plan_.num_slots()), nullptr);
  for (size_t i = 0; i < args.size(); ++i) {
    // Compiled code never writes parameters.
    table[i] = const_cast<void*>(args[i].raw_data());
  }
  // Outputs and the arena count against the run's memory budget, checked before allocating
  // (core/run_control.h); the outputs' own allocations then charge it.
  const RunControl* control = CurrentRunControl();
  int64_t needed = arena_bytes;
  std::vector<hlo::Shape> output_shapes;
  for (const OutputSource& source : plan_.outputs()) {
    output_shapes.push_back(source.shape.IsSymbolic() ? source.shape.AtBatch(batch) : source.shape);
  }
  for (const hlo::Shape& shape : output_shapes) {
    int64_t bytes = 0;
    const std::vector<int64_t>& dims = shape.dims();
    // Negative dims (from arguments fed with them) hold nothing: Tensor lets them through.
    if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; })) continue;
    if (!TensorBytes(shape.element_type(), dims, &bytes) ||
        __builtin_add_overflow(needed, bytes, &needed)) {
      needed = -1;
      break;
    }
  }
  TFJIT_RETURN_IF_ERROR(CheckAllocation(needed,
                                        "the outputs and temporaries of the compiled "
                                        "module",
                                        absl::StrCat("module '", module_->name(), "'")));
  MemoryBudget* budget = control != nullptr ? control->memory() : nullptr;
  if (budget != nullptr) budget->Charge(arena_bytes);
  auto release_arena = [&](void*) {
    if (budget != nullptr) budget->Release(arena_bytes);
  };
  std::unique_ptr<void, decltype(release_arena)> arena_charge(&needed, release_arena);
  std::vector<Tensor> outputs;
  outputs.reserve(plan_.outputs().size());
  for (const hlo::Shape& shape : output_shapes) {
    // Every element is written below (by a kernel or the copy after the call).
    outputs.push_back(Tensor::Uninitialized(shape.element_type(), shape.dims()));
  }
  // One arena for every buffer not placed in an output (64-byte aligned offsets), handed
  // back for reuse when this Run ends; a symbolic module's run takes one large enough.
  // aligned_alloc needs a size that is a multiple of the alignment.
  const size_t arena_size = (static_cast<size_t>(arena_bytes) + 63) / 64 * 64;
  size_t arena_capacity = 0;
  auto give_back = [this, &arena_capacity](void* a) {
    std::lock_guard<std::mutex> lock(arena_mu_);
    free_arenas_.emplace_back(a, arena_capacity);
  };
  std::unique_ptr<void, decltype(give_back)> arena(nullptr, give_back);
  if (arena_bytes > 0) {
    {
      std::lock_guard<std::mutex> lock(arena_mu_);
      for (size_t i = free_arenas_.size(); i-- > 0;) {
        if (free_arenas_[i].second < arena_size) continue;
        arena_capacity = free_arenas_[i].second;
        arena.reset(free_arenas_[i].first);
        free_arenas_.erase(free_arenas_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    if (arena == nullptr) {
      arena_capacity = arena_size;
      arena.reset(std::aligned_alloc(64, arena_size));
    }
    if (arena == nullptr) {
      return ResourceExhausted("cannot allocate %d bytes of temporaries for module '%s'",
                               arena_bytes, module_->name());
    }
  }
  for (int slot = plan_.num_parameters(); slot < plan_.num_slots(); ++slot) {
    const int k = plan_.output_of(slot);
    if (const Tensor* constant = plan_.constant_of(slot)) {
      // Compiled code never writes constants.
      table[static_cast<size_t>(slot)] = const_cast<void*>(constant->raw_data());
      continue;
    }
    table[static_cast<size_t>(slot)] =
        k >= 0 ? outputs[static_cast<size_t>(k)].raw_data()
               : static_cast<char*>(arena.get()) + plan_.arena_offset(slot, batch);
  }
  RunContext ctx;
  ctx.batch = batch;
  ctx.pool = pool;
  ctx.control = control;
  ctx.profile = counters;
  CallEntry(entry_, table.data(), &ctx);
  if (ctx.stopped != 0) {  // stopped between kernels or in a While loop: not the results
    return control->Check(absl::StrCat("compiled module '", module_->name(), "'"));
  }
  for (size_t k = 0; k < plan_.outputs().size(); ++k) {
    const OutputSource& source = plan_.outputs()[k];
    if (source.written_by_kernel) continue;
    const void* from = source.copy_from.constant != nullptr
                           ? source.copy_from.constant->literal().tensor().raw_data()
                           : table[static_cast<size_t>(source.copy_from.id)];
    if (outputs[k].byte_size() > 0)
      std::memcpy(outputs[k].raw_data(), from, outputs[k].byte_size());
  }
  return outputs;
}

}  // namespace tfjit::cpu
