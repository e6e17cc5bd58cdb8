// Differential cases of the nn_more ops (docs/DESIGN.md, "Op families"): kernel vs evaluator
// vs CPU JIT, each against an independent reference where one is given.
#include "tests/tf/op_cases.h"

namespace tfjit::optest {

std::vector<OpCase> NnMoreCases() {
  std::vector<OpCase> cases;
  return cases;
}

}  // namespace tfjit::optest
