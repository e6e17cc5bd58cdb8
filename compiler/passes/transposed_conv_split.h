// TransposedConvolutionSplitPass: a transposed convolution (a convolution whose input is
// dilated, lhs_dilate = s > 1: TF's Conv2DBackpropInput, Keras' Conv2DTranspose) becomes s^2
// (per 2-D) ordinary convolutions over the undilated input, whose outputs interleave.
//
// With the input dilated by s, s - 1 of every s input rows are zeros, so a direct evaluation
// spends (s^2 - 1) / s^2 of its multiplications on zeros (3/4 for stride 2). Output row
// y = s*q + r only meets the filter taps k = k0 + s*t with k0 = (pad_lo - r) mod s, so each
// output phase r is a convolution of the undilated input with the filter taps of that phase
// (the "sub-pixel" form; TF's and ONNX Runtime's CPU kernels get the same saving from
// GEMM + col2im instead).
#ifndef TFJIT_COMPILER_PASSES_TRANSPOSED_CONV_SPLIT_H_
#define TFJIT_COMPILER_PASSES_TRANSPOSED_CONV_SPLIT_H_

#include "compiler/passes/pass.h"

namespace tfjit::passes {

// Contract: rewrites a convolution whose window has lhs_dilate > 1 in some spatial dim and
// stride 1 and rhs_dilate 1 in every spatial dim as
//   reshape(concatenate(...reshape(convolution(x', w'), phase dims)...))
// followed by a slice when an output size is not a multiple of its dilation. Per spatial dim
// with dilation s, filter size K, padding lo/hi, input size n and output size m: Q = ceil(m/s)
// outputs per phase, and phase r uses taps k0, k0+s, ... (k0 = (lo - r) mod s) with padding
// lo' = (lo - r - k0)/s and hi' = Q - 1 + T - n - lo' (T its number of taps); x' is x, or a
// slice of it where lo' or hi' is negative (that padding becomes 0). w' holds the phase's taps
// (a strided slice of w) in spatial-input-output order (HWIO in 2-D, the layout the CPU
// backend's convolution kernels take), folded when w is a constant. A phase that no tap of an
// input element reaches is a broadcast zero. Values: a convolution's padding cells and
// dilation holes contribute no term (docs/HLO.md), and every term of every output is still
// computed, from the same input and filter elements, in the same per-output order; the
// evaluator gives bit-identical results before and after.
class TransposedConvolutionSplitPass : public Pass {
 public:
  absl::string_view name() const override { return "split-transposed-conv"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override;
};

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_TRANSPOSED_CONV_SPLIT_H_
