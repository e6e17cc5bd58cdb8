// AlgebraicSimplifierPass: each rule is one function returning the replacement of an
// instruction (or nullptr when the rule does not apply).
#include "compiler/passes/algebraic_simplifier.h"

#include <cmath>

#include "compiler/hlo/builder.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// A constant whose elements all equal `value`, possibly behind a broadcast.
bool IsConstantSplat(const Instruction* inst, double value) {
  if (inst->opcode() == Opcode::kBroadcast) inst = inst->operand(0);
  if (inst->opcode() != Opcode::kConstant || !inst->shape().IsArray()) return false;
  const Tensor& t = inst->literal().tensor();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (ElementAsDouble(t, i) != value) return false;
  }
  return true;
}

bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// add(x, 0) => x  (integers only: for floats -0.0 + 0.0 is +0.0, so x would differ)
Instruction* AddZero(Instruction* inst) {
  if (inst->opcode() != Opcode::kAdd || !IsIntegerDType(inst->shape().element_type())) {
    return nullptr;
  }
  if (IsConstantSplat(inst->operand(1), 0)) return inst->operand(0);
  if (IsConstantSplat(inst->operand(0), 0)) return inst->operand(1);
  return nullptr;
}

// multiply(x, 1) => x  (any numeric type except pred, whose "1" is true and AND is exact too)
Instruction* MultiplyOne(Instruction* inst) {
  if (inst->opcode() != Opcode::kMultiply) return nullptr;
  if (IsConstantSplat(inst->operand(1), 1)) return inst->operand(0);
  if (IsConstantSplat(inst->operand(0), 1)) return inst->operand(1);
  return nullptr;
}

// reshape(x) => x  when x already has the result shape
Instruction* ReshapeIsNoop(Instruction* inst) {
  if (inst->opcode() != Opcode::kReshape) return nullptr;
  return inst->operand(0)->shape() == inst->shape() ? inst->operand(0) : nullptr;
}

// reshape(reshape(x)) => reshape(x)  (row-major reinterpretations compose)
absl::StatusOr<Instruction*> ReshapeOfReshape(hlo::Computation& c, Instruction* inst) {
  if (inst->opcode() != Opcode::kReshape || inst->operand(0)->opcode() != Opcode::kReshape) {
    return nullptr;
  }
  hlo::Builder builder(&c);
  builder.set_metadata(inst->metadata());
  return builder.Reshape(inst->operand(0)->operand(0), inst->shape().dims());
}

// transpose(x) => x  when the permutation is the identity
Instruction* TransposeIsNoop(Instruction* inst) {
  if (inst->opcode() != Opcode::kTranspose || !IsIdentityPermutation(inst->dimensions())) {
    return nullptr;
  }
  return inst->operand(0);
}

// transpose(transpose(x, inner), outer) => transpose(x, c) with c[i] = inner[outer[i]]
absl::StatusOr<Instruction*> TransposeOfTranspose(hlo::Computation& c, Instruction* inst) {
  if (inst->opcode() != Opcode::kTranspose || inst->operand(0)->opcode() != Opcode::kTranspose) {
    return nullptr;
  }
  const std::vector<int64_t>& outer = inst->dimensions();
  const std::vector<int64_t>& inner = inst->operand(0)->dimensions();
  std::vector<int64_t> composed(outer.size());
  for (size_t i = 0; i < outer.size(); ++i) composed[i] = inner[static_cast<size_t>(outer[i])];
  Instruction* x = inst->operand(0)->operand(0);
  if (IsIdentityPermutation(composed)) return x;
  hlo::Builder builder(&c);
  builder.set_metadata(inst->metadata());
  return builder.Transpose(x, composed);
}

// convert(x) => x  when x already has the target element type
Instruction* ConvertIsNoop(Instruction* inst) {
  if (inst->opcode() != Opcode::kConvert) return nullptr;
  return inst->operand(0)->shape() == inst->shape() ? inst->operand(0) : nullptr;
}

// broadcast(x) => x  when the result shape is x's shape (dimensions are then the identity)
Instruction* BroadcastIsNoop(Instruction* inst) {
  if (inst->opcode() != Opcode::kBroadcast) return nullptr;
  return inst->operand(0)->shape() == inst->shape() ? inst->operand(0) : nullptr;
}

// convolution(pad(x, 0), w) => convolution(x, w) with the padding in its window (Keras'
// ZeroPadding2D before a VALID convolution): only zero padding of the spatial dims, not
// negative or interior, and without lhs dilation there. Window padding skips taps instead of
// multiplying zeros, which differs only for a non-finite filter element (0 * inf is NaN):
// the filter must be a constant with finite elements.
absl::StatusOr<Instruction*> ConvolutionOfPad(hlo::Computation& c, Instruction* inst) {
  if (inst->opcode() != Opcode::kConvolution) return nullptr;
  Instruction* pad = inst->operand(0);
  if (pad->opcode() != Opcode::kPad || !IsConstantSplat(pad->operand(1), 0) ||
      !IsFiniteConstant(inst->operand(1))) {
    return nullptr;
  }
  const hlo::ConvDims& cd = inst->attrs().conv;
  const std::vector<hlo::PadDim>& padding = pad->attrs().padding;
  auto padded = [&](int64_t d) {
    return d < 0 || d >= static_cast<int64_t>(padding.size()) ||
           !(padding[static_cast<size_t>(d)] == hlo::PadDim{});
  };
  if (padded(cd.input_batch) || padded(cd.input_feature)) return nullptr;
  hlo::Attributes attrs = inst->attrs();
  if (attrs.window.size() != cd.input_spatial.size()) return nullptr;
  for (size_t i = 0; i < cd.input_spatial.size(); ++i) {
    const hlo::PadDim& p = padding[static_cast<size_t>(cd.input_spatial[i])];
    hlo::WindowDim& w = attrs.window[i];
    if (p.interior != 0 || p.lo < 0 || p.hi < 0 || w.lhs_dilate != 1) return nullptr;
    w.pad_lo += p.lo;
    w.pad_hi += p.hi;
  }
  hlo::Builder builder(&c);
  builder.set_metadata(inst->metadata());
  return builder.Add(Opcode::kConvolution, {pad->operand(0), inst->operand(1)}, std::move(attrs),
                     {}, inst->shape());
}

absl::StatusOr<Instruction*> Simplify(hlo::Computation& c, Instruction* inst) {
  for (Instruction* (*rule)(Instruction*) :
       {AddZero, MultiplyOne, ReshapeIsNoop, TransposeIsNoop, ConvertIsNoop, BroadcastIsNoop}) {
    if (Instruction* r = rule(inst)) return r;
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ReshapeOfReshape(c, inst));
  if (r != nullptr) return r;
  TFJIT_ASSIGN_OR_RETURN(r, ConvolutionOfPad(c, inst));
  if (r != nullptr) return r;
  return TransposeOfTranspose(c, inst);
}

absl::StatusOr<bool> SimplifyOnce(hlo::Computation& c) {
  bool changed = false;
  for (Instruction* inst : c.MakePostOrder()) {
    // A dead instruction gains nothing, and a rule might add a new (dead) instruction.
    if (inst->user_count() == 0 && !inst->IsRoot()) continue;
    TFJIT_ASSIGN_OR_RETURN(Instruction * replacement, Simplify(c, inst));
    if (replacement == nullptr || replacement == inst) continue;
    TFJIT_RETURN_IF_ERROR(c.ReplaceAllUsesWith(inst, replacement));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> AlgebraicSimplifierPass::Run(hlo::Module& module) {
  constexpr int kMaxSweeps = 16;  // every rule shrinks the graph, so this is never reached
  return SweepToFixedPoint(module, kMaxSweeps, SimplifyOnce);
}

}  // namespace tfjit::passes
