// FramePlan: where every value of one emitted instance ("frame") of a computation lives.
// A value is a list of array buffers (its tuple leaves, flattened depth-first); tuple and
// get-tuple-element only regroup buffers, reshape aliases its operand, and every other
// instruction owns fresh buffers (added to the BufferPlan, so nothing is allocated per loop
// iteration). A dynamic-update-slice (or scatter) writes into its operand's buffer when no
// later reader needs the operand's old value: the loop-accumulator pattern then costs
// O(update) per step.
#ifndef TFJIT_BACKENDS_CPU_FRAME_PLAN_H_
#define TFJIT_BACKENDS_CPU_FRAME_PLAN_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "backends/cpu/buffer_plan.h"
#include "compiler/hlo/computation.h"

namespace tfjit::cpu {

// The array buffers of one value, tuple leaves flattened depth-first.
using Leaves = std::vector<ValueLocation>;

// The array shapes of `shape`'s leaves, depth-first (one entry for an array).
std::vector<hlo::Shape> LeafShapes(const hlo::Shape& shape);

class FramePlan {
 public:
  // Plans `computation` called with one value per parameter. `params_writable`: the frame may
  // update its parameters' buffers in place (a while body, whose parameter is the loop state
  // the body's result replaces anyway); never for entry parameters. New buffers go to
  // `buffers`. Everything in post order (the order the emitter runs instructions in).
  static absl::StatusOr<FramePlan> Build(const hlo::Computation& computation,
                                         std::vector<Leaves> params, bool params_writable,
                                         BufferPlan& buffers);

  const hlo::Computation& computation() const { return *computation_; }
  const std::vector<const hlo::Instruction*>& order() const { return order_; }
  const Leaves& leaves(const hlo::Instruction* inst) const { return leaves_.at(inst); }
  const Leaves& root() const { return leaves(computation_->root()); }
  // A dynamic-update-slice or scatter whose result lives in its operand's buffer.
  bool in_place(const hlo::Instruction* inst) const { return in_place_.contains(inst); }
  // A buffer this frame added (not a parameter's or a constant).
  bool owns(const ValueLocation& loc) const { return owned_.contains(loc.slot); }

 private:
  bool Writable(const ValueLocation& loc) const;
  bool OldValueNeeded(size_t pos, const ValueLocation& loc) const;
  void Rename(size_t from_pos, int from_slot, int to_slot);
  void PlanInPlaceUpdates(BufferPlan& buffers);

  const hlo::Computation* computation_ = nullptr;
  std::vector<const hlo::Instruction*> order_;
  absl::flat_hash_map<const hlo::Instruction*, Leaves> leaves_;
  absl::flat_hash_set<const hlo::Instruction*> in_place_;
  absl::flat_hash_set<int> owned_;
  absl::flat_hash_set<int> writable_params_;
};

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_FRAME_PLAN_H_
