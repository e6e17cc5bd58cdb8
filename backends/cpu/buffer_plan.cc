// Buffer planning for the CPU executable: aliases (reshape, tuple plumbing), output slots
// written in place by their kernels, and a 64-byte aligned arena of temporaries.
#include "backends/cpu/buffer_plan.h"

#include "core/status.h"

namespace tfjit::cpu {

using hlo::Instruction;
using hlo::Opcode;

namespace {

bool IsKernel(const Instruction* inst) {
  switch (inst->opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kReshape:
      return false;
    default:
      return true;
  }
}

// The instruction whose buffer holds `inst`'s bytes: through reshape (same row-major bytes)
// and get-tuple-element of a tuple instruction.
absl::StatusOr<const Instruction*> Owner(const Instruction* inst) {
  while (true) {
    if (inst->opcode() == Opcode::kReshape) {
      inst = inst->operand(0);
    } else if (inst->opcode() == Opcode::kGetTupleElement) {
      const Instruction* tuple = inst->operand(0);
      if (tuple->opcode() != Opcode::kTuple) {
        return Unimplemented(
            "cpu backend: get-tuple-element of a non-tuple instruction is not supported "
            "(instruction '%s')",
            inst->name());
      }
      inst = tuple->operand(static_cast<int>(inst->attrs().tuple_index));
    } else {
      return inst;
    }
  }
}

// The array values a root stands for, tuples flattened depth-first.
void FlattenRoot(const Instruction* inst, std::vector<const Instruction*>& out) {
  if (inst->opcode() == Opcode::kTuple) {
    for (const Instruction* op : inst->operands()) FlattenRoot(op, out);
  } else if (inst->opcode() == Opcode::kGetTupleElement &&
             inst->operand(0)->opcode() == Opcode::kTuple) {
    FlattenRoot(inst->operand(0)->operand(static_cast<int>(inst->attrs().tuple_index)), out);
  } else {
    out.push_back(inst);
  }
}

int64_t AlignUp(int64_t x) { return (x + 63) / 64 * 64; }

}  // namespace

absl::StatusOr<BufferPlan> BufferPlan::Build(const hlo::Module& module) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr || entry->root() == nullptr) {
    return InvalidArgument("module '%s' has no entry computation", module.name());
  }
  BufferPlan plan;
  plan.num_parameters_ = entry->num_parameters();
  for (const Instruction* p : entry->parameters()) {
    if (!p->shape().IsArray()) {
      return Unimplemented("cpu backend: tuple-shaped parameters are not supported "
                           "(instruction '%s')", p->name());
    }
  }
  std::vector<const Instruction*> roots;
  FlattenRoot(entry->root(), roots);
  absl::flat_hash_map<const Instruction*, int> output_of;
  std::vector<const Instruction*> owners;
  for (size_t k = 0; k < roots.size(); ++k) {
    TFJIT_ASSIGN_OR_RETURN(const Instruction* owner, Owner(roots[k]));
    OutputSource source;
    source.shape = roots[k]->shape();
    if (IsKernel(owner) && !output_of.contains(owner)) {
      output_of[owner] = static_cast<int>(k);
      source.written_by_kernel = true;
    }
    plan.outputs_.push_back(source);
    owners.push_back(owner);
  }
  const int first_temp = plan.num_parameters_ + static_cast<int>(roots.size());
  for (const Instruction* inst : entry->MakePostOrder()) {
    ValueLocation loc;
    switch (inst->opcode()) {
      case Opcode::kParameter:
        loc.slot = static_cast<int>(inst->parameter_number());
        break;
      case Opcode::kConstant:
        loc.constant = inst;
        break;
      case Opcode::kTuple:
        continue;
      case Opcode::kReshape:
      case Opcode::kGetTupleElement: {
        if (!inst->shape().IsArray()) continue;
        TFJIT_ASSIGN_OR_RETURN(const Instruction* owner, Owner(inst));
        loc = plan.locations_.at(owner);
        break;
      }
      default: {
        auto it = output_of.find(inst);
        if (it != output_of.end()) {
          loc.slot = plan.num_parameters_ + it->second;
        } else {
          loc.slot = first_temp + plan.num_temps();
          plan.temp_offsets_.push_back(plan.temp_bytes_);
          plan.temp_bytes_ += AlignUp(inst->shape().byte_size());
        }
        plan.kernels_.push_back(inst);
        break;
      }
    }
    plan.locations_[inst] = loc;
  }
  for (size_t k = 0; k < roots.size(); ++k) {
    if (!plan.outputs_[k].written_by_kernel) {
      plan.outputs_[k].copy_from = plan.locations_.at(owners[k]);
    }
  }
  return plan;
}

absl::StatusOr<ValueLocation> BufferPlan::LocationOf(const Instruction* inst) const {
  auto it = locations_.find(inst);
  if (it == locations_.end()) {
    return Internal("buffer plan: no location for instruction '%s'", inst->name());
  }
  return it->second;
}

}  // namespace tfjit::cpu
