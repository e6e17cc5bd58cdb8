// ConstantFoldingPass: evaluates instructions whose operands are all constants.
#ifndef TFJIT_COMPILER_PASSES_CONSTANT_FOLDING_H_
#define TFJIT_COMPILER_PASSES_CONSTANT_FOLDING_H_

#include <cstdint>

#include "compiler/passes/pass.h"

namespace tfjit::passes {

struct ConstantFoldingOptions {
  // Results with more elements stay unfolded: a folded literal lives in the module (and its
  // text dumps) forever, while the unfolded op costs one pass over the data at run time.
  int64_t max_elements = int64_t{1} << 20;
};

// Contract: replaces every array-shaped instruction whose operands are all `constant`s by a
// constant computed with the reference evaluator (so folding can never disagree with the
// oracle). Skips parameters, constants, while (may not terminate), rng-bit-generator and
// custom-call, broadcast and iota (they would turn a few bytes into a big literal; backends
// generate them for free), tuple-shaped results and results above `max_elements`. Folded
// operands that become dead are left for DcePass. Keeps the module verified; metadata of the
// folded instruction moves to the new constant.
class ConstantFoldingPass : public Pass {
 public:
  explicit ConstantFoldingPass(ConstantFoldingOptions options = {}) : options_(options) {}
  absl::string_view name() const override { return "constant-folding"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override;

 private:
  ConstantFoldingOptions options_;
};

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_CONSTANT_FOLDING_H_
