// BufferPlan: where every value of an entry computation lives when the CPU executable runs.
// The buffer table passed to compiled code is [parameters | outputs | temporaries].
#ifndef TFJIT_BACKENDS_CPU_BUFFER_PLAN_H_
#define TFJIT_BACKENDS_CPU_BUFFER_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "compiler/hlo/module.h"

namespace tfjit::cpu {

// Where an array value lives: a slot of the buffer table, or an array constant (a global of
// the compiled module).
struct ValueLocation {
  int slot = -1;                                // buffer table index, or -1
  const hlo::Instruction* constant = nullptr;   // when the value is a constant's literal
};

// What Run does for output k after the compiled code returns.
struct OutputSource {
  hlo::Shape shape;
  bool written_by_kernel = false;  // a kernel wrote it in place: nothing to do
  ValueLocation copy_from;         // otherwise: copy these bytes into the output
};

class BufferPlan {
 public:
  // Plans `module`'s entry computation. Instructions that need no kernel: parameter,
  // constant, tuple, get-tuple-element (of a tuple instruction) and reshape (aliases its
  // operand: row-major bytes are identical). Every other instruction is a kernel with its own
  // buffer: an output slot when it produces a root element, else a temporary.
  // UNIMPLEMENTED for tuple-shaped parameters and get-tuple-element of non-tuple values.
  static absl::StatusOr<BufferPlan> Build(const hlo::Module& module);

  int num_parameters() const { return num_parameters_; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  int num_slots() const { return num_parameters() + num_outputs() + num_temps(); }
  int num_temps() const { return static_cast<int>(temp_offsets_.size()); }
  // Byte offset of temporary t in the per-Run arena (64-byte aligned), and the arena size.
  int64_t temp_offset(int t) const { return temp_offsets_[static_cast<size_t>(t)]; }
  int64_t temp_bytes() const { return temp_bytes_; }
  int first_output_slot() const { return num_parameters_; }
  int first_temp_slot() const { return num_parameters_ + num_outputs(); }

  // Kernels in execution order (operands before users).
  const std::vector<const hlo::Instruction*>& kernels() const { return kernels_; }
  const std::vector<OutputSource>& outputs() const { return outputs_; }
  // The location of an array value of the entry computation.
  absl::StatusOr<ValueLocation> LocationOf(const hlo::Instruction* inst) const;

 private:
  int num_parameters_ = 0;
  std::vector<const hlo::Instruction*> kernels_;
  std::vector<OutputSource> outputs_;
  std::vector<int64_t> temp_offsets_;
  int64_t temp_bytes_ = 0;
  absl::flat_hash_map<const hlo::Instruction*, ValueLocation> locations_;
};

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_BUFFER_PLAN_H_
