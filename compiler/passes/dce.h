// DcePass: dead-code elimination of instructions and computations.
#ifndef TFJIT_COMPILER_PASSES_DCE_H_
#define TFJIT_COMPILER_PASSES_DCE_H_

#include "compiler/passes/pass.h"

namespace tfjit::passes {

// Contract: removes every instruction not reachable from its computation's ROOT (parameters
// stay, so signatures never change) and every computation no live instruction calls (the
// entry stays). Needs a verified module; keeps it verified. The IR has no side-effecting
// opcodes, so reachability is the only liveness criterion.
class DcePass : public Pass {
 public:
  absl::string_view name() const override { return "dce"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override;
};

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_DCE_H_
