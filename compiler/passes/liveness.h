// Liveness of each computation's values over its schedule, per computation: the value-level
// view (`tfjit-opt --print-liveness`). The buffers that hold the values, and their live
// intervals over the emitted program's steps with nested computations and loops in place,
// are buffer_assignment.h's, which both backends read.
//
// A computation's schedule is its post order (Computation::MakePostOrder), one step per
// instruction. A value is an instruction's result. It lives from the step that defines it (-1
// for a parameter, which exists before the first step) to the last step of an instruction
// that reads it; the root's value lives to the end (step = the number of steps), as the caller
// receives it. Tuple and get-tuple-element only regroup values: they are `plumbing`, own no
// storage, and a value read through them lives as long as they are read. Each computation has
// its own steps: a while body, a branch or a called computation is analysed on its own, and
// its call site is one step of the caller. (Which other ops a backend lets share their
// operand's storage, e.g. the CPU's reshape, is the backend's say, not the analysis'.)
#ifndef TFJIT_COMPILER_PASSES_LIVENESS_H_
#define TFJIT_COMPILER_PASSES_LIVENESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/hlo/module.h"

namespace tfjit::passes {

struct LiveRange {
  int64_t def = 0;   // the defining step (-1: a parameter)
  int64_t last = 0;  // the last step that reads it (= def when nothing does)
};

class ComputationLiveness {
 public:
  explicit ComputationLiveness(const hlo::Computation& computation);
  const hlo::Computation& computation() const { return *computation_; }
  // The schedule: instruction at each step.
  const std::vector<const hlo::Instruction*>& schedule() const { return schedule_; }
  int64_t num_steps() const { return static_cast<int64_t>(schedule_.size()); }
  LiveRange range(const hlo::Instruction* value) const { return ranges_.at(value); }
  static bool IsPlumbing(const hlo::Instruction& instruction);
  // Whether `a` and `b`, both owning storage, are live at one step (they may not share it).
  bool Interfere(const hlo::Instruction* a, const hlo::Instruction* b) const;
  std::string ToString() const;

 private:
  const hlo::Computation* computation_;
  std::vector<const hlo::Instruction*> schedule_;
  absl::flat_hash_map<const hlo::Instruction*, LiveRange> ranges_;
};

// Every computation of a module, in the module's order.
class ModuleLiveness {
 public:
  explicit ModuleLiveness(const hlo::Module& module);
  const std::vector<ComputationLiveness>& computations() const { return computations_; }
  // Text form, for FileCheck tests (tfjit-opt --print-liveness): per computation its step
  // count, then per step "<step> %name <shape> [def, last]" and "plumbing" or "root".
  std::string ToString() const;

 private:
  std::vector<ComputationLiveness> computations_;
};

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_LIVENESS_H_
