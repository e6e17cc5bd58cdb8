// AlgebraicSimplifierPass: local rewrites that remove no-op and redundant instructions.
#ifndef TFJIT_COMPILER_PASSES_ALGEBRAIC_SIMPLIFIER_H_
#define TFJIT_COMPILER_PASSES_ALGEBRAIC_SIMPLIFIER_H_

#include "compiler/passes/pass.h"

namespace tfjit::passes {

// Contract: applies the rules below until none fires (bounded number of sweeps). Every rule
// is exact (bit-identical results, NaN payloads aside), so the pass never changes values:
//   add(x, 0) => x               integers only (float: -0.0 + 0.0 = +0.0, not -0.0)
//   multiply(x, 1) => x          any type (x * 1 is exact in IEEE, NaN stays NaN)
//   reshape(x) to x's shape => x
//   reshape(reshape(x)) => reshape(x)
//   transpose(x) with the identity permutation => x
//   transpose(transpose(x)) => transpose(x) with the composed permutation
//   convert(x) to x's type => x
//   broadcast(x) to x's shape (identity dimensions) => x
// "0" and "1" are constants whose every element has that value, or broadcasts of them.
// Replaced instructions become dead and are left for DcePass. Keeps the module verified;
// new instructions copy the metadata of the one they replace.
class AlgebraicSimplifierPass : public Pass {
 public:
  absl::string_view name() const override { return "simplify"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override;
};

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_ALGEBRAIC_SIMPLIFIER_H_
