// BufferPlan: the buffer table compiled code indexes and where each slot's memory comes from
// when the CPU executable runs. The table is [entry parameters | buffers]; a buffer lives in a
// 64-byte aligned per-Run arena, or directly in an output tensor. Which values share which
// buffers is the shared buffer assignment's (compiler/passes/buffer_assignment.h; FramePlan
// applies it with the CPU's policy); the IR emitter adds the buffers as it goes.
//
// Arena buffers share memory by liveness, through the shared ArenaAssignment: the emitter
// reports every access to a slot (Touch) at a step of the emitted program order (NextStep,
// one per instruction), and brackets loops (BeginLoop/EndLoop): a slot used inside a loop is
// live for the whole loop, since an iteration may read what the previous one wrote. Two
// buffers may overlap in the arena only when their [first, last] step intervals are disjoint,
// so compiled code never sees a buffer change under it. A buffer never touched keeps memory of
// its own; a buffer Run copies into an output after the compiled code returns stays live to
// the end. The CPU's own parts are the output tensors and the read-only constant slots.
#ifndef TFJIT_BACKENDS_CPU_BUFFER_PLAN_H_
#define TFJIT_BACKENDS_CPU_BUFFER_PLAN_H_

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "compiler/hlo/module.h"
#include "compiler/passes/buffer_assignment.h"
#include "core/gemm.h"
#include "tfjit/tensor.h"

namespace tfjit::cpu {

// Where an array value lives: a slot of the buffer table (`id`), or an array constant (a
// global of the compiled module, or a read-only slot AddConstant gives).
using ValueLocation = passes::BufferRef;

// The arena's alignment: a cache line, and the widest vector.
inline constexpr int64_t kCpuArenaAlignment = 64;

// What Run does for output k after the compiled code returns.
struct OutputSource {
  hlo::Shape shape;
  bool written_by_kernel = false;  // a buffer placed in the output tensor holds it: nothing to do
  ValueLocation copy_from;         // otherwise: copy these bytes into the output
};

class BufferPlan {
 public:
  BufferPlan() = default;
  // A plan with `num_parameters` read-only parameter slots and one output per shape.
  BufferPlan(int num_parameters, std::vector<hlo::Shape> output_shapes);

  // A new buffer slot of `bytes` bytes (arena memory unless PlaceInOutput is called);
  // `label` names it in the printed assignment.
  int AddBuffer(int64_t bytes, std::string label = "");
  // The read-only slot through which compiled code reads the array constant `constant` (the
  // executable points it at the literal's bytes): large constants stay out of the LLVM
  // module, which makes compiling and caching it cheaper. One slot per constant, however
  // often asked.
  int AddConstant(const hlo::Instruction* constant);
  // The read-only slot holding the float32 array constant `constant` packed for the GEMM
  // micro-kernel (gemm::Pack with `packing`, which must be nonempty): done here, once, at
  // compile time (and again when a disk-cache entry is loaded). One slot per constant and
  // packing.
  int AddPackedConstant(const hlo::Instruction* constant, const gemm::Packing& packing);
  // The constant behind `slot` (packed, for a packed slot), or null for any other slot.
  const Tensor* constant_of(int slot) const {
    return IsParameterSlot(slot) || !buffer(slot).is_constant ? nullptr : &buffer(slot).constant;
  }
  // The buffer `slot` turned out unused (its value went to another buffer): it gets no memory.
  void DropBuffer(int slot);
  // Buffer `slot` lives in output k's tensor, so whatever writes it writes the output.
  void PlaceInOutput(int slot, int k);
  // Liveness (see the file comment): the emitted program's next step; an access to `slot` at
  // the current step; a loop's start and end (nested loops nest).
  void NextStep() { ++step_; }
  void Touch(int slot);
  void BeginLoop() { loop_starts_.push_back(step_); }
  void EndLoop();
  // After the last AddBuffer: the arena layout, buffers with disjoint live ranges sharing
  // memory (ArenaAssignment::Finalize).
  void Finalize();
  // A symbolic module (docs/HLO.md) emitted at its representative batch size (this plan) and
  // at the next one (`at_next`, from the same emission at representative + 1): each buffer's
  // size is k * b + c; the arena is packed again to hold at every batch size (ArenaAssignment::
  // FinalizeSymbolic). FAILED_PRECONDITION when the two plans differ in anything but sizes.
  absl::Status MakeSymbolic(const BufferPlan& at_next, int64_t representative);
  bool symbolic() const { return symbolic_; }
  // The arena's bytes, and buffer `slot`'s offset in it, at batch size `batch` (a static
  // plan's whatever the batch).
  int64_t arena_bytes(int64_t batch) const { return arena_bytes_ + unit_bytes_ * batch; }
  int64_t arena_offset(int slot, int64_t batch) const {
    return buffer(slot).offset + buffer(slot).unit_offset * batch;
  }
  // The arena's buffers as the shared assignment prints them (after Finalize, before the plan
  // is copied or cached: a plan read from the disk cache has offsets only).
  const passes::ArenaAssignment& arena() const { return arena_; }

  bool IsParameterSlot(int slot) const { return slot >= 0 && slot < num_parameters_; }
  int num_parameters() const { return num_parameters_; }
  int num_slots() const { return num_parameters_ + static_cast<int>(buffers_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  std::vector<OutputSource>& mutable_outputs() { return outputs_; }
  const std::vector<OutputSource>& outputs() const { return outputs_; }

  // For buffer slot `slot` (>= num_parameters): the output it lives in, or -1, and otherwise
  // its byte offset in the arena (valid after Finalize).
  int output_of(int slot) const { return buffer(slot).output; }
  int64_t arena_offset(int slot) const { return buffer(slot).offset; }
  int64_t arena_bytes() const { return arena_bytes_; }
  // The arena without sharing (every buffer its own memory): what the reuse saved.
  int64_t unshared_bytes() const { return unshared_bytes_; }

 private:
  struct Buffer {
    int64_t bytes = 0;
    int64_t offset = 0;
    int64_t unit_offset = 0;  // symbolic plans: + unit_offset * batch
    int output = -1;
    bool is_constant = false;  // AddConstant: no memory of its own
    const hlo::Instruction* constant_inst = nullptr;
    Tensor constant;
    gemm::Packing packing;  // AddPackedConstant: `constant` holds the packed form
  };
  // The packed form of `constant` (AddPackedConstant).
  static Tensor PackConstant(const hlo::Instruction* constant, const gemm::Packing& packing);
  friend struct PlanCodec;  // the disk cache's serialization (object_cache.cc)
  const Buffer& buffer(int slot) const {
    return buffers_[static_cast<size_t>(slot - num_parameters_)];
  }
  Buffer& buffer(int slot) { return buffers_[static_cast<size_t>(slot - num_parameters_)]; }

  int num_parameters_ = 0;
  std::vector<Buffer> buffers_;
  std::vector<OutputSource> outputs_;
  int64_t arena_bytes_ = 0;
  int64_t unit_bytes_ = 0;  // symbolic plans: the arena grows by this per batch row
  bool symbolic_ = false;
  int64_t unshared_bytes_ = 0;
  int64_t step_ = 0;
  std::vector<int64_t> loop_starts_;
  passes::ArenaAssignment arena_;  // one entry per buffer (constants excluded)
  absl::flat_hash_map<const hlo::Instruction*, int> constant_slots_;
  absl::flat_hash_map<std::tuple<const hlo::Instruction*, int64_t, int64_t, int64_t, int64_t>, int>
      packed_slots_;
};

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_BUFFER_PLAN_H_
