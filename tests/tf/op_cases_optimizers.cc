// Differential cases of the optimizers ops (docs/DESIGN.md, "Op families"): kernel vs evaluator
// vs CPU JIT, each against an independent reference where one is given.
//
// Every optimizer op updates variables (Ref(T) inputs or resource handles), which a one-op
// graph of placeholders cannot express; their cases live in training_graphs_test.cc
// (OptimizerTest: kernel, compiled update and a hand-written formula, step by step).
#include "tests/tf/op_cases.h"

namespace tfjit::optest {

std::vector<OpCase> OptimizersCases() {
  std::vector<OpCase> cases;
  return cases;
}

}  // namespace tfjit::optest
