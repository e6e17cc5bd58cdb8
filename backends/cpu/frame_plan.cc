// Frame planning: leaf buffers per value (tuple plumbing and reshape alias, everything else
// owns fresh buffers), then in-place dynamic-update-slice where the old value is dead.
#include "backends/cpu/frame_plan.h"

#include <algorithm>

#include "core/status.h"

namespace tfjit::cpu {

using hlo::Instruction;
using hlo::Opcode;

namespace {

void AppendLeafShapes(const hlo::Shape& shape, std::vector<hlo::Shape>& out) {
  if (!shape.IsTuple()) {
    out.push_back(shape);
    return;
  }
  for (const hlo::Shape& s : shape.tuple_shapes()) AppendLeafShapes(s, out);
}

size_t LeafCount(const hlo::Shape& shape) {
  if (!shape.IsTuple()) return 1;
  size_t n = 0;
  for (const hlo::Shape& s : shape.tuple_shapes()) n += LeafCount(s);
  return n;
}

bool Contains(const Leaves& leaves, const ValueLocation& loc) {
  return std::find(leaves.begin(), leaves.end(), loc) != leaves.end();
}

// Instructions that only regroup or rename buffers: they read no memory themselves.
bool IsPlumbing(Opcode op) {
  return op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kTuple ||
         op == Opcode::kGetTupleElement || op == Opcode::kReshape;
}

}  // namespace

std::vector<hlo::Shape> LeafShapes(const hlo::Shape& shape) {
  std::vector<hlo::Shape> out;
  AppendLeafShapes(shape, out);
  return out;
}

absl::StatusOr<FramePlan> FramePlan::Build(const hlo::Computation& computation,
                                           std::vector<Leaves> params, bool params_writable,
                                           BufferPlan& buffers) {
  if (static_cast<int>(params.size()) != computation.num_parameters()) {
    return Internal("cpu backend: computation '%s' takes %d parameters, got %d",
                    computation.name(), computation.num_parameters(),
                    static_cast<int>(params.size()));
  }
  FramePlan plan;
  plan.computation_ = &computation;
  for (const Instruction* inst : computation.MakePostOrder()) plan.order_.push_back(inst);
  if (params_writable) {
    for (const Leaves& p : params) {
      for (const ValueLocation& loc : p) {
        if (loc.constant == nullptr && !buffers.IsParameterSlot(loc.slot)) {
          plan.writable_params_.insert(loc.slot);
        }
      }
    }
  }
  for (const Instruction* inst : plan.order_) {
    Leaves leaves;
    switch (inst->opcode()) {
      case Opcode::kParameter:
        leaves = params[static_cast<size_t>(inst->parameter_number())];
        break;
      case Opcode::kConstant:
        leaves.push_back(ValueLocation{-1, inst});
        break;
      case Opcode::kTuple:
        for (const Instruction* op : inst->operands()) {
          const Leaves& l = plan.leaves_.at(op);
          leaves.insert(leaves.end(), l.begin(), l.end());
        }
        break;
      case Opcode::kGetTupleElement: {
        const hlo::Shape& tuple = inst->operand(0)->shape();
        const int index = static_cast<int>(inst->attrs().tuple_index);
        size_t begin = 0;
        for (int j = 0; j < index; ++j) begin += LeafCount(tuple.tuple_shape(j));
        const Leaves& l = plan.leaves_.at(inst->operand(0));
        const size_t end = begin + LeafCount(inst->shape());
        leaves.assign(l.begin() + static_cast<std::ptrdiff_t>(begin),
                      l.begin() + static_cast<std::ptrdiff_t>(end));
        break;
      }
      case Opcode::kReshape:  // same row-major bytes
        leaves = plan.leaves_.at(inst->operand(0));
        break;
      default:
        for (const hlo::Shape& s : LeafShapes(inst->shape())) {
          const int slot = buffers.AddBuffer(s.byte_size());
          plan.owned_.insert(slot);
          leaves.push_back(ValueLocation{slot, nullptr});
        }
        break;
    }
    if (leaves.size() != LeafCount(inst->shape())) {
      return Internal("cpu backend: instruction '%s' has %d buffers for shape %s", inst->name(),
                      static_cast<int>(leaves.size()), inst->shape().ToString());
    }
    plan.leaves_[inst] = std::move(leaves);
  }
  plan.PlanInPlaceUpdates(buffers);
  return plan;
}

bool FramePlan::Writable(const ValueLocation& loc) const {
  return loc.constant == nullptr && loc.slot >= 0 &&
         (owned_.contains(loc.slot) || writable_params_.contains(loc.slot));
}

// Whether an instruction after position `pos`, or the frame's result, reads `loc` (whose value
// at that point is still the one from before order_[pos]).
bool FramePlan::OldValueNeeded(size_t pos, const ValueLocation& loc) const {
  for (size_t j = pos + 1; j < order_.size(); ++j) {
    const Instruction* user = order_[j];
    if (IsPlumbing(user->opcode())) continue;
    for (const Instruction* op : user->operands()) {
      if (Contains(leaves_.at(op), loc)) return true;
    }
  }
  return Contains(root(), loc);
}

void FramePlan::Rename(size_t from_pos, int from_slot, int to_slot) {
  for (size_t j = from_pos; j < order_.size(); ++j) {
    for (ValueLocation& loc : leaves_[order_[j]]) {
      if (loc.constant == nullptr && loc.slot == from_slot) loc.slot = to_slot;
    }
  }
}

void FramePlan::PlanInPlaceUpdates(BufferPlan& buffers) {
  for (size_t pos = 0; pos < order_.size(); ++pos) {
    const Instruction* dus = order_[pos];
    // Both write a part of their operand 0 and keep the rest.
    if (dus->opcode() != Opcode::kDynamicUpdateSlice && dus->opcode() != Opcode::kScatter) {
      continue;
    }
    const ValueLocation target = leaves_.at(dus->operand(0))[0];
    if (!Writable(target)) continue;
    bool overlaps = false;  // an update or an index is the buffer being written
    for (int k = 1; k < dus->operand_count(); ++k) {
      overlaps = overlaps || Contains(leaves_.at(dus->operand(k)), target);
    }
    if (overlaps || OldValueNeeded(pos, target)) continue;
    const int fresh = leaves_.at(dus)[0].slot;
    buffers.DropBuffer(fresh);
    owned_.erase(fresh);
    Rename(pos, fresh, target.slot);
    in_place_.insert(dus);
  }
}

}  // namespace tfjit::cpu
