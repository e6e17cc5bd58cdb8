// The standard pass list, shared by the CPU and interpreter backends.
#include "compiler/passes/standard_pipeline.h"

#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/fusion.h"
#include "compiler/passes/transpose_sinking.h"
#include "compiler/passes/transposed_conv_split.h"

namespace tfjit::passes {

void AddSimplificationPasses(PassPipeline& pipeline) {
  pipeline.AddPass<AlgebraicSimplifierPass>();
  // Before folding, which folds the transposes of constants it adds; the simplifier after
  // it cancels the transposes it brings together.
  pipeline.AddPass<TransposeSinkingPass>();
  pipeline.AddPass<ConstantFoldingPass>();
  // After folding: it needs the filter as a constant (to know its elements are finite).
  pipeline.AddPass<TransposedConvolutionSplitPass>();
  // Again: folding makes operands constant that rules ask about (a convolution's filter, once
  // its transposes and reshapes are folded, lets a zero pad move into the window).
  pipeline.AddPass<AlgebraicSimplifierPass>();
  pipeline.AddPass<CsePass>();
  pipeline.AddPass<DcePass>();
}

void AddStandardPasses(PassPipeline& pipeline, const FusionPolicy* policy) {
  AddSimplificationPasses(pipeline);
  pipeline.AddPass<FusionPass>(policy);
  pipeline.AddPass<DcePass>();
}

}  // namespace tfjit::passes
