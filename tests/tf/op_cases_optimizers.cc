// Differential cases of the optimizers ops (docs/DESIGN.md, "Op families"): kernel vs evaluator
// vs CPU JIT, each against an independent reference where one is given.
#include "tests/tf/op_cases.h"

namespace tfjit::optest {

std::vector<OpCase> OptimizersCases() {
  std::vector<OpCase> cases;
  return cases;
}

}  // namespace tfjit::optest
