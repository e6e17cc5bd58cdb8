// DcePass: removes unreachable instructions, then computations nothing calls any more.
#include "compiler/passes/dce.h"

namespace tfjit::passes {

absl::StatusOr<bool> DcePass::Run(hlo::Module& module) {
  bool changed = false;
  // Removing a dead caller can make its callees unused, and removing an unused computation
  // never makes an instruction dead, so one sweep of each suffices; loop anyway for safety.
  while (true) {
    int removed = 0;
    for (hlo::Computation* computation : module.computations()) {
      removed += computation->RemoveDeadInstructions();
    }
    removed += module.RemoveUnusedComputations();
    if (removed == 0) break;
    changed = true;
  }
  return changed;
}

}  // namespace tfjit::passes
