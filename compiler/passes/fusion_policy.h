// FusionPolicy: the backend's say in what the fusion pass may merge. The pass never tests
// which backend it runs for; it asks the policy.
#ifndef TFJIT_COMPILER_PASSES_FUSION_POLICY_H_
#define TFJIT_COMPILER_PASSES_FUSION_POLICY_H_

#include "compiler/hlo/instruction.h"

namespace tfjit::passes {

class FusionPolicy {
 public:
  virtual ~FusionPolicy() = default;
  // Whether `producer` may be fused into its consumer `consumer` (which is itself fusible or
  // already a fusion). Default: elementwise ops, broadcast, reshape, transpose, convert,
  // iota, gather and scalar constants fuse into elementwise consumers and reductions.
  virtual bool ShouldFuse(const hlo::Instruction& producer, const hlo::Instruction& consumer) const;
  // Whether `inst` can root a loop fusion or be fused at all.
  virtual bool IsFusible(const hlo::Instruction& inst) const;
  // Whether recomputing `inst` for every read costs real work (transcendentals, divisions,
  // gathers): such a producer is not fused where the group reads its elements repeatedly
  // (through a broadcast that expands them), so it is computed once into a buffer.
  virtual bool IsExpensive(const hlo::Instruction& inst) const;
  // Whether the backend emits multi-output (sibling) fusions (fusion.h). Default: no.
  virtual bool FusesSiblings() const { return false; }
  // Whether `inst` (a dot or convolution) may be the hero of an output fusion (fusion.h): the
  // backend computes it by a call that applies the fused elementwise ops to each finished
  // block of the result in place, while the block is still in cache. Default: never.
  virtual bool IsOutputFusionHero(const hlo::Instruction& inst) const {
    (void)inst;
    return false;
  }
};

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_FUSION_POLICY_H_
