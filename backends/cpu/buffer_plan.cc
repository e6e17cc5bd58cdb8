// The CPU buffer table layout: read-only parameter slots, then buffers placed in output tensors
// or in a 64-byte aligned arena allocated once per Run, shared by buffers whose live ranges
// are disjoint.
#include "backends/cpu/buffer_plan.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace tfjit::cpu {
namespace {

int64_t AlignUp(int64_t x) { return (x + 63) / 64 * 64; }

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

}  // namespace

BufferPlan::BufferPlan(int num_parameters, std::vector<hlo::Shape> output_shapes)
    : num_parameters_(num_parameters) {
  for (hlo::Shape& shape : output_shapes) {
    OutputSource source;
    source.shape = std::move(shape);
    outputs_.push_back(std::move(source));
  }
}

int BufferPlan::AddBuffer(int64_t bytes) {
  Buffer b;
  b.bytes = bytes;
  buffers_.push_back(b);
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
  it->second = num_slots() - 1;
  return it->second;
}

void BufferPlan::DropBuffer(int slot) { buffer(slot).bytes = 0; }

void BufferPlan::PlaceInOutput(int slot, int k) { buffer(slot).output = k; }

void BufferPlan::Touch(int slot) {
  if (slot < num_parameters_ || slot >= num_slots()) return;  // parameters are not planned
  Buffer& b = buffer(slot);
  if (b.is_constant) return;
  if (b.first < 0) b.first = step_;
  b.last = std::max(b.last, step_);
}

void BufferPlan::EndLoop() {
  if (loop_starts_.empty()) return;
  const int64_t start = loop_starts_.back();
  loop_starts_.pop_back();
  ++step_;  // the loop's back edge: later steps start after it
  for (Buffer& b : buffers_) {
    if (b.first < 0 || b.last < start) continue;  // not used inside the loop
    b.first = std::min(b.first, start);
    b.last = std::max(b.last, step_);
  }
  ++step_;
}

void BufferPlan::Finalize() {
  // Buffers Run copies into an output after the compiled code returns are read after every
  // step; a buffer no access was reported for gets memory of its own, conservatively.
  for (const OutputSource& source : outputs_) {
    const int slot = source.copy_from.slot;
    if (source.written_by_kernel || slot < num_parameters_ || slot >= num_slots()) continue;
    Buffer& b = buffer(slot);
    if (b.first < 0) b.first = 0;
    b.last = kForever;
  }
  std::vector<size_t> order;
  unshared_bytes_ = 0;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    Buffer& b = buffers_[i];
    b.offset = 0;
    if (b.output >= 0 || b.bytes == 0 || b.is_constant) continue;
    if (b.first < 0) {
      b.first = 0;
      b.last = kForever;
    }
    unshared_bytes_ += AlignUp(b.bytes);
    order.push_back(i);
  }
  // First fit, largest first: each buffer goes to the lowest offset that overlaps no placed
  // buffer live at the same time.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers_[a].bytes > buffers_[b].bytes;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of live-overlapping buffers
  arena_bytes_ = 0;
  for (size_t i : order) {
    Buffer& b = buffers_[i];
    busy.clear();
    for (size_t j : placed) {
      const Buffer& o = buffers_[j];
      if (o.first <= b.last && b.first <= o.last) busy.emplace_back(o.offset, o.offset + AlignUp(o.bytes));
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    const int64_t size = AlignUp(b.bytes);
    for (const auto& [begin, end] : busy) {
      if (begin >= offset + size) break;
      offset = std::max(offset, end);
    }
    b.offset = offset;
    arena_bytes_ = std::max(arena_bytes_, offset + size);
    placed.push_back(i);
  }
}

}  // namespace tfjit::cpu
