// FusionPass: merges elemental producers into their consumers (loop and input fusions).
#ifndef TFJIT_COMPILER_PASSES_FUSION_H_
#define TFJIT_COMPILER_PASSES_FUSION_H_

#include <memory>

#include "compiler/passes/fusion_policy.h"
#include "compiler/passes/pass.h"

namespace tfjit::passes {

struct FusionOptions {
  bool fuse_reductions = true;  // form kInput fusions rooted at reduce
  // Merge sibling reduce fusions into multi-output fusions (see the contract); also on when
  // the policy says the backend emits them (FusionPolicy::FusesSiblings).
  bool sibling_fusion = false;
};

// Contract (backends rely on it exactly):
// - Creates `fusion` instructions with `kind=kLoop`, whose called computation (named
//   `fused_computation`, `fused_computation.1`, ...) has one parameter per fusion operand, in
//   order, and whose root is an elemental op (elementwise, broadcast, reshape, transpose,
//   slice, concatenate, iota, gather); and `kind=kInput` fusions whose root is a single-output
//   `reduce` whose operands are computed by fused elemental producers.
//   And `kind=kOutput` fusions: an elementwise root over exactly one dot or convolution (the
//   hero) that the policy accepts (FusionPolicy::IsOutputFusionHero), whose operands are
//   parameters of the fused computation, and whose value reaches the root only through
//   elementwise ops of the root's dims, so element i of the result needs element i of the
//   hero and nothing else of it; hero and root have the same shape (dims and element type).
//   This is the bias-and-activation epilogue of XLA's output fusion.
//   With FusionOptions::sibling_fusion, also multi-output `kind=kInput` fusions whose root is
//   a tuple of single-output reduces over the same index space (same operand dims, reduced
//   dims and result dims): sibling reduce fusions that share an operand, neither depending on
//   the other, merged so the operand is read once; their users read get-tuple-elements.
// - Every other fused instruction is one the policy accepts (FusionPolicy::ShouldFuse).
//   Control flow, call, custom-call, parameter, tuple, get-tuple-element, rng, scatter,
//   reduce-window and dynamic-update-slice are never fused; dot and convolution only as
//   heroes. Gather fuses like an elemental op (each output element reads one operand element),
//   but the operand it gathers from is never fused into it (it would be recomputed per read).
// - Greedy from the root backwards (reverse post order): a producer joins a fusion when all
//   its users are in it, or when it is cheap (a scalar constant, iota, a broadcast of a scalar
//   constant) and is then duplicated. A producer the policy calls expensive
//   (FusionPolicy::IsExpensive) does not join where the group would read each of its elements
//   several times (it feeds an expanding broadcast, directly or through other members). A group
//   with nothing but constants besides its root is left unfused. Fusions are never nested and never
//   merged with other fusions.
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
