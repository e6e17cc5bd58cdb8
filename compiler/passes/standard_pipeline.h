// The standard HLO optimization pipeline every backend runs before code generation.
#ifndef TFJIT_COMPILER_PASSES_STANDARD_PIPELINE_H_
#define TFJIT_COMPILER_PASSES_STANDARD_PIPELINE_H_

#include "compiler/passes/fusion_policy.h"
#include "compiler/passes/pass.h"

namespace tfjit::passes {

// Appends the standard passes before fusion: simplify, transpose sinking, constant folding,
// the transposed-convolution split, simplify, cse and dce (analyses that want the optimized
// module's instructions without fusions run these).
void AddSimplificationPasses(PassPipeline& pipeline);

// Appends simplify, constant-folding, cse, dce, fusion (asking `policy`, which must outlive
// the pipeline) and a final dce. The result satisfies the fusion contract in fusion.h.
void AddStandardPasses(PassPipeline& pipeline, const FusionPolicy* policy);

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_STANDARD_PIPELINE_H_
