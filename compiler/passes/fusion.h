// FusionPass: merges elemental producers into their consumers (loop and input fusions).
#ifndef TFJIT_COMPILER_PASSES_FUSION_H_
#define TFJIT_COMPILER_PASSES_FUSION_H_

#include <memory>

#include "compiler/passes/fusion_policy.h"
#include "compiler/passes/pass.h"

namespace tfjit::passes {

struct FusionOptions {
  bool fuse_reductions = true;  // form kInput fusions rooted at reduce
};

// Contract (backends rely on it exactly):
// - Creates `fusion` instructions with `kind=kLoop`, whose called computation (named
//   `fused_computation`, `fused_computation.1`, ...) has one parameter per fusion operand, in
//   order, and whose root is an elemental op (elementwise, broadcast, reshape, transpose,
//   slice, concatenate, iota); and `kind=kInput` fusions whose root is a single-output
//   `reduce` whose operands are computed by fused elemental producers.
// - Every fused instruction is one the policy accepts (FusionPolicy::ShouldFuse). Dot,
//   convolution, control flow, call, custom-call, parameter, tuple, get-tuple-element, rng,
//   gather, scatter, reduce-window and dynamic-update-slice are never fused.
// - Greedy from the root backwards (reverse post order): a producer joins a fusion when all
//   its users are in it, or when it is cheap (a scalar constant, iota, a broadcast of a scalar
//   constant) and is then duplicated. A group with nothing but constants besides its root is
//   left unfused. Fusions are never nested and never merged with other fusions.
// - Runs on the entry computation and on while/conditional/call bodies, never inside fused
//   computations or reduction combiners. Results are unchanged (the evaluator checks this).
class FusionPass : public Pass {
 public:
  // `policy` (not owned) must outlive the pass; nullptr means the default FusionPolicy.
  explicit FusionPass(const FusionPolicy* policy = nullptr, FusionOptions options = {});
  absl::string_view name() const override { return "fusion"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override;

 private:
  std::unique_ptr<FusionPolicy> default_policy_;
  const FusionPolicy* policy_;
  FusionOptions options_;
};

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_FUSION_H_
