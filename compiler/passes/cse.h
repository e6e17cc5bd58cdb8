// CsePass: common-subexpression elimination within each computation.
#ifndef TFJIT_COMPILER_PASSES_CSE_H_
#define TFJIT_COMPILER_PASSES_CSE_H_

#include "compiler/passes/pass.h"

namespace tfjit::passes {

// Contract: two instructions of one computation with the same opcode, shape, operands (the
// same instructions, in order), attributes and called computations compute the same value;
// every use of the later one (in post order) is redirected to the earlier one and the later
// one is removed. Constants are merged by value (bitwise). Parameters and custom-calls (a
// library call may have effects we cannot see) are never merged. Keeps the module verified.
class CsePass : public Pass {
 public:
  absl::string_view name() const override { return "cse"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override;
};

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_CSE_H_
