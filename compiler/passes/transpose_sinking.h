// TransposeSinkingPass: moves transposes below the layout-agnostic instructions that consume
// them, so that transposes which undo each other meet and cancel.
//
// Graphs converted from ONNX or PyTorch keep NCHW between convolutions: each Conv2D sits
// between a transpose to NHWC and one back, with the bias, activation and padding done in
// NCHW in between. Moving the transpose after a convolution down through those instructions
// brings it next to the transpose before the next convolution, where the simplifier's
// transpose(transpose(x)) rule removes both; the elementwise work then fuses into the
// convolution's epilogue. ONNX Runtime's transpose optimizer does the same for such models.
#ifndef TFJIT_COMPILER_PASSES_TRANSPOSE_SINKING_H_
#define TFJIT_COMPILER_PASSES_TRANSPOSE_SINKING_H_

#include "compiler/passes/pass.h"

namespace tfjit::passes {

// Contract: rewrites, until none applies (bounded number of sweeps),
//   op(transpose(a, p), ...) => transpose(op'(a, ...), p)
// for `op` elementwise (hlo::IsElementwise), pad or concatenate, where every other operand is
// transpose(b, p) with the same p, a scalar, a constant (transposed by p's inverse, folded by
// ConstantFoldingPass) or a broadcast whose mapped dims stay increasing under p's inverse (a
// bias vector's does), and op' is op with its padding or concatenation dim permuted. Applies
// only when every user of each operand transpose can take the same rewrite or is itself a
// transpose, so no transpose is left computed beside the moved one. Values are bit-identical:
// each element is computed from the same elements by the same operation. Replaced
// instructions are left for DcePass; new ones copy the metadata of the one they replace.
class TransposeSinkingPass : public Pass {
 public:
  absl::string_view name() const override { return "transpose-sinking"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override;
};

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_TRANSPOSE_SINKING_H_
