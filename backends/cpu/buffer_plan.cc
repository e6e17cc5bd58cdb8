// The CPU buffer table layout: read-only parameter slots, then buffers placed in output tensors
// or in a 64-byte aligned arena allocated once per Run, shared by buffers whose live ranges
// are disjoint.
#include "backends/cpu/buffer_plan.h"

#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace tfjit::cpu {

BufferPlan::BufferPlan(int num_parameters, std::vector<hlo::Shape> output_shapes)
    : num_parameters_(num_parameters) {
  for (hlo::Shape& shape : output_shapes) {
    OutputSource source;
    source.shape = std::move(shape);
    outputs_.push_back(std::move(source));
  }
}

int BufferPlan::AddBuffer(int64_t bytes, std::string label) {
  Buffer b;
  b.bytes = bytes;
  buffers_.push_back(b);
  arena_.Add(bytes, std::move(label));
  return num_slots() - 1;
}

int BufferPlan::AddConstant(const hlo::Instruction* constant) {
  auto [it, inserted] = constant_slots_.try_emplace(constant, -1);
  if (!inserted) return it->second;
  Buffer b;
  b.is_constant = true;
  b.constant_inst = constant;
  b.constant = constant->literal().tensor();
  buffers_.push_back(std::move(b));
  arena_.Exclude(arena_.Add(0, absl::StrCat("%", constant->name(), " (constant)")));
  it->second = num_slots() - 1;
  return it->second;
}

Tensor BufferPlan::PackConstant(const hlo::Instruction* constant, const gemm::Packing& packing) {
  Tensor packed(DType::kFloat32, {gemm::PackedFloats(packing)});
  gemm::Pack(packing, constant->literal().tensor().data<float>(), packed.data<float>());
  return packed;
}

int BufferPlan::AddPackedConstant(const hlo::Instruction* constant, const gemm::Packing& packing) {
  auto [it, inserted] = packed_slots_.try_emplace(
      std::make_tuple(constant, packing.blocks, packing.k, packing.n, packing.stride), -1);
  if (!inserted) return it->second;
  Buffer b;
  b.is_constant = true;
  b.constant_inst = constant;
  b.constant = PackConstant(constant, packing);
  b.packing = packing;
  buffers_.push_back(std::move(b));
  arena_.Exclude(arena_.Add(0, absl::StrCat("%", constant->name(), " (packed constant)")));
  it->second = num_slots() - 1;
  return it->second;
}

void BufferPlan::DropBuffer(int slot) {
  buffer(slot).bytes = 0;
  arena_.Exclude(slot - num_parameters_);
}

void BufferPlan::PlaceInOutput(int slot, int k) {
  buffer(slot).output = k;
  arena_.Exclude(slot - num_parameters_);
}

void BufferPlan::Touch(int slot) {
  if (slot < num_parameters_ || slot >= num_slots()) return;  // parameters are not planned
  if (buffer(slot).is_constant) return;
  arena_.Touch(slot - num_parameters_, step_);
}

void BufferPlan::EndLoop() {
  if (loop_starts_.empty()) return;
  const int64_t start = loop_starts_.back();
  loop_starts_.pop_back();
  ++step_;  // the loop's back edge: later steps start after it
  arena_.Loop(start, step_);
  ++step_;
}

void BufferPlan::Finalize() {
  // Buffers Run copies into an output after the compiled code returns are read after every
  // step.
  for (const OutputSource& source : outputs_) {
    const int slot = source.copy_from.id;
    if (source.written_by_kernel || slot < num_parameters_ || slot >= num_slots()) continue;
    if (!buffer(slot).is_constant) arena_.KeepToEnd(slot - num_parameters_);
  }
  arena_.Finalize(kCpuArenaAlignment);
  arena_bytes_ = arena_.arena_bytes();
  unshared_bytes_ = arena_.unshared_bytes();
  for (size_t i = 0; i < buffers_.size(); ++i) {
    buffers_[i].offset = arena_.offset(static_cast<int>(i));
  }
}

absl::Status BufferPlan::MakeSymbolic(const BufferPlan& at_next, int64_t representative) {
  if (at_next.buffers_.size() != buffers_.size() || at_next.outputs_.size() != outputs_.size() ||
      at_next.num_parameters_ != num_parameters_) {
    return FailedPrecondition("the CPU buffer plan has %d buffers at batch %d and %d at batch %d",
                              buffers_.size(), representative, at_next.buffers_.size(),
                              representative + 1);
  }
  std::vector<int64_t> per_batch(buffers_.size(), 0);
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& a = buffers_[i];
    const Buffer& b = at_next.buffers_[i];
    if (a.output != b.output || a.is_constant != b.is_constant || b.bytes < a.bytes) {
      return FailedPrecondition("CPU buffer %d differs between batch %d and %d", i, representative,
                                representative + 1);
    }
    per_batch[i] = b.bytes - a.bytes;
  }
  for (size_t k = 0; k < outputs_.size(); ++k) {
    if (outputs_[k].written_by_kernel != at_next.outputs_[k].written_by_kernel ||
        outputs_[k].copy_from.id != at_next.outputs_[k].copy_from.id) {
      return FailedPrecondition("CPU output %d is placed differently at batch %d and %d", k,
                                representative, representative + 1);
    }
  }
  arena_.FinalizeSymbolic(kCpuArenaAlignment, per_batch, representative);
  arena_bytes_ = arena_.arena_bytes();
  unit_bytes_ = arena_.unit_bytes();
  unshared_bytes_ = arena_.unshared_bytes();
  for (size_t i = 0; i < buffers_.size(); ++i) {
    buffers_[i].offset = arena_.offset(static_cast<int>(i));
    buffers_[i].unit_offset = arena_.unit_offset(static_cast<int>(i));
  }
  symbolic_ = true;
  return absl::OkStatus();
}

}  // namespace tfjit::cpu
