// Lowerings of the gradients ops to HLO (docs/DESIGN.md, "Op families"), with the semantics of
// TF's XLA kernels (tf2xla): elementwise activation and math-op gradients, BiasAddGrad,
// BroadcastGradientArgs and ConcatOffset (folded from constant shapes), the softmax
// cross-entropy losses, DynamicStitch (constant indices), StridedSliceGrad and MirrorPadGrad.
// The windowed ops' gradients are in gradients_window_lowerings.cc.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/hlo/literal.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/conv_attrs.h"
#include "frontend/strided_slice_rule.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using hlo::Opcode;

constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluScaleAlpha = 1.7580993408473768599402175208123;

// ---- Elementwise gradients ----

// The two operands of an elementwise gradient: (gradients, features/outputs) must have one
// shape; (y, dy) of the math-op gradients only one element count (dy takes y's shape).
absl::Status GradOperands(LoweringContext& ctx, const tf::Node& node, bool same_shape,
                          Instruction** a, Instruction** b) {
  TFJIT_ASSIGN_OR_RETURN(*a, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(*b, ctx.Input(node, 1));
  const hlo::Shape& sa = (*a)->shape();
  const hlo::Shape& sb = (*b)->shape();
  if (sa.dims() == sb.dims()) return absl::OkStatus();
  if (same_shape) {
    return InvalidArgument("g and a must be the same size: %s vs %s", sa.ToString(), sb.ToString());
  }
  if (sa.num_elements() != sb.num_elements()) {
    return InvalidArgument(
        "The two arguments to a cwise op must have same number of elements, "
        "got %d and %d",
        sa.num_elements(), sb.num_elements());
  }
  TFJIT_ASSIGN_OR_RETURN(*b, ctx.b().Reshape(*b, sa.dims()));
  return absl::OkStatus();
}

// Small expression helpers over operands of one shape.
struct Ew {
  LoweringContext& ctx;
  DType t;
  std::vector<int64_t> dims;
  absl::StatusOr<Instruction*> K(double v) { return ctx.Splat(t, v, dims); }
  absl::StatusOr<Instruction*> Op(Opcode op, Instruction* x, Instruction* y) {
    return ctx.b().Binary(op, x, y);
  }
  absl::StatusOr<Instruction*> Cmp(ComparisonDirection dir, Instruction* x, double v) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * k, K(v));
    return ctx.b().Compare(dir, x, k);
  }
};

using GradBody = absl::StatusOr<Instruction*> (*)(Ew& e, const tf::Node& node, Instruction* a,
                                                  Instruction* b);

template <bool kSameShape, GradBody kBody>
absl::Status LowerGrad(LoweringContext& ctx, const tf::Node& node) {
  Instruction *a, *b;
  TFJIT_RETURN_IF_ERROR(GradOperands(ctx, node, kSameShape, &a, &b));
  Ew e{ctx, a->shape().element_type(), a->shape().dims()};
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, kBody(e, node, a, b));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// gradients * (features > 0), a multiply as in TF's CPU functor.
absl::StatusOr<Instruction*> ReluGradBody(Ew& e, const tf::Node&, Instruction* g, Instruction* f) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * pos, e.Cmp(ComparisonDirection::kGt, f, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mask, e.ctx.b().Convert(pos, e.t));
  return e.Op(Opcode::kMultiply, g, mask);
}
// gradients * (0 < features < 6).
absl::StatusOr<Instruction*> Relu6GradBody(Ew& e, const tf::Node&, Instruction* g, Instruction* f) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * pos, e.Cmp(ComparisonDirection::kGt, f, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * below, e.Cmp(ComparisonDirection::kLt, f, 6));
  TFJIT_ASSIGN_OR_RETURN(Instruction * in, e.Op(Opcode::kAnd, pos, below));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mask, e.ctx.b().Convert(in, e.t));
  return e.Op(Opcode::kMultiply, g, mask);
}
// outputs < 0 ? (outputs + 1) * gradients : gradients.
absl::StatusOr<Instruction*> EluGradBody(Ew& e, const tf::Node&, Instruction* g, Instruction* y) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * neg, e.Cmp(ComparisonDirection::kLt, y, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, e.K(1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y1, e.Op(Opcode::kAdd, y, one));
  TFJIT_ASSIGN_OR_RETURN(Instruction * scaled, e.Op(Opcode::kMultiply, y1, g));
  return e.ctx.b().Select(neg, scaled, g);
}
// outputs < 0 ? gradients * (outputs + scale * alpha) : gradients * scale.
absl::StatusOr<Instruction*> SeluGradBody(Ew& e, const tf::Node&, Instruction* g, Instruction* y) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * neg, e.Cmp(ComparisonDirection::kLt, y, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sa, e.K(kSeluScaleAlpha));
  TFJIT_ASSIGN_OR_RETURN(Instruction * s, e.K(kSeluScale));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ysa, e.Op(Opcode::kAdd, y, sa));
  TFJIT_ASSIGN_OR_RETURN(Instruction * on_neg, e.Op(Opcode::kMultiply, g, ysa));
  TFJIT_ASSIGN_OR_RETURN(Instruction * on_pos, e.Op(Opcode::kMultiply, g, s));
  return e.ctx.b().Select(neg, on_neg, on_pos);
}
// features > 0 ? gradients : gradients * alpha.
absl::StatusOr<Instruction*> LeakyReluGradBody(Ew& e, const tf::Node& node, Instruction* g,
                                               Instruction* f) {
  TFJIT_ASSIGN_OR_RETURN(float alpha, tf::GetFloatAttrOr(node, "alpha", 0.2f));
  TFJIT_ASSIGN_OR_RETURN(Instruction * pos, e.Cmp(ComparisonDirection::kGt, f, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, e.K(alpha));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ga, e.Op(Opcode::kMultiply, g, a));
  return e.ctx.b().Select(pos, g, ga);
}
// gradients / (exp(-features) + 1).
absl::StatusOr<Instruction*> SoftplusGradBody(Ew& e, const tf::Node&, Instruction* g,
                                              Instruction* f) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * nf, e.ctx.b().Unary(Opcode::kNegate, f));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ex, e.ctx.b().Unary(Opcode::kExp, nf));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, e.K(1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * d, e.Op(Opcode::kAdd, ex, one));
  return e.Op(Opcode::kDivide, g, d);
}
// gradients / (1 + |features|)^2.
absl::StatusOr<Instruction*> SoftsignGradBody(Ew& e, const tf::Node&, Instruction* g,
                                              Instruction* f) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * af, e.ctx.b().Unary(Opcode::kAbs, f));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, e.K(1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * d, e.Op(Opcode::kAdd, one, af));
  TFJIT_ASSIGN_OR_RETURN(Instruction * d2, e.Op(Opcode::kMultiply, d, d));
  return e.Op(Opcode::kDivide, g, d2);
}
// dy * y * (1 - y).
absl::StatusOr<Instruction*> SigmoidGradBody(Ew& e, const tf::Node&, Instruction* y,
                                             Instruction* dy) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, e.K(1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * omy, e.Op(Opcode::kSubtract, one, y));
  TFJIT_ASSIGN_OR_RETURN(Instruction * dyy, e.Op(Opcode::kMultiply, dy, y));
  return e.Op(Opcode::kMultiply, dyy, omy);
}
// dy * (1 - y * y).
absl::StatusOr<Instruction*> TanhGradBody(Ew& e, const tf::Node&, Instruction* y, Instruction* dy) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, e.K(1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * yy, e.Op(Opcode::kMultiply, y, y));
  TFJIT_ASSIGN_OR_RETURN(Instruction * d, e.Op(Opcode::kSubtract, one, yy));
  return e.Op(Opcode::kMultiply, dy, d);
}
// 0.5 * dy / y.
absl::StatusOr<Instruction*> SqrtGradBody(Ew& e, const tf::Node&, Instruction* y, Instruction* dy) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * half, e.K(0.5));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hdy, e.Op(Opcode::kMultiply, half, dy));
  return e.Op(Opcode::kDivide, hdy, y);
}
// -0.5 * y^3 * dy.
absl::StatusOr<Instruction*> RsqrtGradBody(Ew& e, const tf::Node&, Instruction* y,
                                           Instruction* dy) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * k, e.K(-0.5));
  TFJIT_ASSIGN_OR_RETURN(Instruction * yy, e.Op(Opcode::kMultiply, y, y));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y3, e.Op(Opcode::kMultiply, yy, y));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ky3, e.Op(Opcode::kMultiply, k, y3));
  return e.Op(Opcode::kMultiply, ky3, dy);
}
// -dy * y * y.
absl::StatusOr<Instruction*> ReciprocalGradBody(Ew& e, const tf::Node&, Instruction* y,
                                                Instruction* dy) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * ndy, e.ctx.b().Unary(Opcode::kNegate, dy));
  TFJIT_ASSIGN_OR_RETURN(Instruction * p, e.Op(Opcode::kMultiply, ndy, y));
  return e.Op(Opcode::kMultiply, p, y);
}

// ---- BiasAddGrad ----

// Sum over every dim but the channel dim; 16-bit floats accumulate in f32.
absl::Status LowerBiasAddGrad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::string format, tf::GetStringAttrOr(node, "data_format", "NHWC"));
  if (format != "NHWC" && format != "NCHW") {
    return InvalidArgument("Invalid data format: data_format must be NHWC or NCHW, got '%s'",
                           format);
  }
  const hlo::Shape& s = x->shape();
  if (s.rank() < 2) {
    return InvalidArgument("Input tensor must be at least 2D: out_backprop is %s", s.ToString());
  }
  const int64_t channel_dim = format == "NHWC" ? s.rank() - 1 : 1;
  std::vector<int64_t> reduce_dims;
  for (int64_t d = 0; d < s.rank(); ++d) {
    if (d != channel_dim) reduce_dims.push_back(d);
  }
  const DType t = s.element_type();
  const DType acc = Is16BitFloat(t) ? DType::kFloat32 : t;
  if (acc != t) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, acc));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(acc, 0.0, {}));
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, acc);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Reduce(x, zero, reduce_dims, add));
  if (acc != t) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Ops folded from constant shapes ----

// A rank-1 constant of `dtype` (int32 or int64) holding `v`.
Instruction* IntVector(LoweringContext& ctx, DType dtype, const std::vector<int64_t>& v) {
  Tensor t(dtype, {static_cast<int64_t>(v.size())});
  for (size_t k = 0; k < v.size(); ++k) {
    if (dtype == DType::kInt32) {
      t.data<int32_t>()[k] = static_cast<int32_t>(v[k]);
    } else {
      t.data<int64_t>()[k] = v[k];
    }
  }
  return ctx.b().Constant(hlo::Literal::FromTensor(t));
}

// TF's BCast reduction axes (see gradients_kernels.cc): none for equal shapes, else every
// axis where the right-aligned, 1-extended dim of the operand is 1.
absl::Status LowerBroadcastGradientArgs(LoweringContext& ctx, const tf::Node& node) {
  std::vector<int64_t> s[2];
  for (int i = 0; i < 2; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Tensor v, ctx.ConstantInput(node, i));
    if (v.rank() != 1)
      return InvalidArgument("In[%d] must be a vector. got %s", i, v.ShapeString());
    TFJIT_ASSIGN_OR_RETURN(s[i], ctx.ConstantInputAsInts(node, i));
  }
  std::vector<int64_t> r[2];
  if (s[0] != s[1]) {
    const size_t rank = std::max(s[0].size(), s[1].size());
    for (size_t k = 0; k < rank; ++k) {
      int64_t d[2];
      for (int i = 0; i < 2; ++i) {
        const size_t pad = rank - s[i].size();
        d[i] = k < pad ? 1 : s[i][k - pad];
      }
      if (d[0] != d[1] && d[0] != 1 && d[1] != 1) {
        return InvalidArgument("Incompatible shapes: [%s] vs. [%s]", absl::StrJoin(s[0], ","),
                               absl::StrJoin(s[1], ","));
      }
      for (int i = 0; i < 2; ++i) {
        if (d[i] == 1) r[i].push_back(static_cast<int64_t>(k));
      }
    }
  }
  for (int i = 0; i < 2; ++i) {
    ctx.SetOutput(node, i, IntVector(ctx, node.output_types()[static_cast<size_t>(i)], r[i]));
  }
  return absl::OkStatus();
}

absl::Status LowerConcatOffset(LoweringContext& ctx, const tf::Node& node) {
  const int n = node.num_inputs() - 1;
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> cdim_v, ctx.ConstantInputAsInts(node, 0));
  if (cdim_v.size() != 1) return InvalidArgument("Concat dim tensor should be a scalar");
  std::vector<std::vector<int64_t>> shapes(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(shapes[static_cast<size_t>(i)], ctx.ConstantInputAsInts(node, 1 + i));
  }
  const std::vector<int64_t>& s0 = shapes[0];
  const int64_t dims = static_cast<int64_t>(s0.size());
  const int64_t axis = cdim_v[0] < 0 ? cdim_v[0] + dims : cdim_v[0];
  if (axis < 0 || axis >= dims) {
    return InvalidArgument("Concat dim is out of range: %d vs. %d", cdim_v[0], dims);
  }
  int64_t offset = 0;
  for (int i = 0; i < n; ++i) {
    const std::vector<int64_t>& s = shapes[static_cast<size_t>(i)];
    if (static_cast<int64_t>(s.size()) != dims) {
      return InvalidArgument("input %d should contain %d elements, but got %d", i, dims, s.size());
    }
    std::vector<int64_t> out(static_cast<size_t>(dims), 0);
    for (int64_t k = 0; k < dims; ++k) {
      if (k != axis && s[static_cast<size_t>(k)] != s0[static_cast<size_t>(k)]) {
        return InvalidArgument(
            "All dimensions except %d must match. Input %d has shape [%s] "
            "and doesn't match input 0 with shape [%s].",
            axis, i, absl::StrJoin(s, " "), absl::StrJoin(s0, " "));
      }
    }
    out[static_cast<size_t>(axis)] = offset;
    offset += s[static_cast<size_t>(axis)];
    ctx.SetOutput(node, i, IntVector(ctx, node.output_types()[static_cast<size_t>(i)], out));
  }
  return absl::OkStatus();
}

// ---- Softmax cross-entropy ----

// Given logits x [batch, classes] (f32 or f64) and a label matrix `labels` of x's type,
// returns (loss [batch], backprop [batch, classes]) with TF's formulas:
// loss = sum(labels * (log(sum(exp(x - max))) - (x - max))), backprop = softmax(x) - labels.
absl::Status XentLoss(LoweringContext& ctx, Instruction* x, Instruction* labels, Instruction** loss,
                      Instruction** backprop) {
  const DType t = x->shape().element_type();
  const std::vector<int64_t>& dims = x->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(Instruction * neg_inf,
                         ctx.Splat(t, -std::numeric_limits<double>::infinity(), {}));
  hlo::Computation* max_comp =
      hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, t);
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, {}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mx, ctx.b().Reduce(x, neg_inf, {1}, max_comp));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mxb, ctx.b().Broadcast(mx, dims, {0}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * shifted, ctx.b().Binary(Opcode::kSubtract, x, mxb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * e, ctx.b().Unary(Opcode::kExp, shifted));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum, ctx.b().Reduce(e, zero, {1}, add));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sumb, ctx.b().Broadcast(sum, dims, {0}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * log_sum, ctx.b().Unary(Opcode::kLog, sumb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * diff, ctx.b().Binary(Opcode::kSubtract, log_sum, shifted));
  TFJIT_ASSIGN_OR_RETURN(Instruction * prod, ctx.b().Binary(Opcode::kMultiply, labels, diff));
  TFJIT_ASSIGN_OR_RETURN(*loss, ctx.b().Reduce(prod, zero, {1}, add));
  TFJIT_ASSIGN_OR_RETURN(Instruction * prob, ctx.b().Binary(Opcode::kDivide, e, sumb));
  TFJIT_ASSIGN_OR_RETURN(*backprop, ctx.b().Binary(Opcode::kSubtract, prob, labels));
  return absl::OkStatus();
}

absl::Status SetXentOutputs(LoweringContext& ctx, const tf::Node& node, DType t, Instruction* loss,
                            Instruction* backprop) {
  if (loss->shape().element_type() != t) {
    TFJIT_ASSIGN_OR_RETURN(loss, ctx.b().Convert(loss, t));
    TFJIT_ASSIGN_OR_RETURN(backprop, ctx.b().Convert(backprop, t));
  }
  ctx.SetOutput(node, 0, loss);
  ctx.SetOutput(node, 1, backprop);
  return absl::OkStatus();
}

absl::Status LowerSoftmaxXent(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * labels, ctx.Input(node, 1));
  std::vector<int64_t> dims = x->shape().dims();
  if (x->shape().dims() != labels->shape().dims()) {
    absl::StatusOr<std::vector<int64_t>> b =
        BroadcastDims(x->shape().dims(), labels->shape().dims());
    if (!b.ok()) {
      return InvalidArgument(
          "logits and labels must be broadcastable: logits_size=%s "
          "labels_size=%s",
          x->shape().ToString(), labels->shape().ToString());
    }
    dims = *b;
  }
  if (dims.size() != 2) {
    return InvalidArgument(
        "logits and labels must be either 2-dimensional, or broadcasted to "
        "be 2-dimensional: logits_size=%s labels_size=%s",
        x->shape().ToString(), labels->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(x, ctx.BroadcastTo(x, dims));
  TFJIT_ASSIGN_OR_RETURN(labels, ctx.BroadcastTo(labels, dims));
  const DType t = x->shape().element_type();
  if (Is16BitFloat(t)) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, DType::kFloat32));
    TFJIT_ASSIGN_OR_RETURN(labels, ctx.b().Convert(labels, DType::kFloat32));
  }
  Instruction *loss, *backprop;
  TFJIT_RETURN_IF_ERROR(XentLoss(ctx, x, labels, &loss, &backprop));
  return SetXentOutputs(ctx, node, t, loss, backprop);
}

// As XLA does, a label outside [0, classes) gives a NaN loss and a NaN backprop row (TF's CPU
// kernel fails instead; the fallback kernel follows it).
absl::Status LowerSparseSoftmaxXent(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * labels, ctx.Input(node, 1));
  const hlo::Shape& xs = x->shape();
  if (xs.rank() != 2) return InvalidArgument("logits must be 2-D, but got shape %s", xs.ToString());
  if (labels->shape().rank() != 1) {
    return InvalidArgument("labels must be 1-D, but got shape %s", labels->shape().ToString());
  }
  if (labels->shape().dim(0) != xs.dim(0)) {
    return InvalidArgument(
        "logits and labels must have the same first dimension, got logits "
        "shape %s and labels shape %s",
        xs.ToString(), labels->shape().ToString());
  }
  const int64_t classes = xs.dim(1);
  if (classes == 0 && xs.dim(0) > 0) {
    return InvalidArgument("Must have at least one class, but got logits shape %s", xs.ToString());
  }
  const DType t = xs.element_type();
  const std::vector<int64_t> dims = xs.dims();
  if (Is16BitFloat(t)) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, DType::kFloat32));
  }
  const DType ct = x->shape().element_type();
  const DType lt = labels->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * iota, ctx.b().Iota(hlo::Shape(lt, dims), 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lb, ctx.b().Broadcast(labels, dims, {0}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hot, ctx.b().Compare(ComparisonDirection::kEq, iota, lb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * onehot, ctx.b().Convert(hot, ct));
  Instruction *loss, *backprop;
  TFJIT_RETURN_IF_ERROR(XentLoss(ctx, x, onehot, &loss, &backprop));
  // valid = 0 <= label < classes, per row.
  const std::vector<int64_t> batch = {dims[0]};
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(lt, 0.0, batch));
  TFJIT_ASSIGN_OR_RETURN(Instruction * depth, ctx.Splat(lt, static_cast<double>(classes), batch));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ge, ctx.b().Compare(ComparisonDirection::kGe, labels, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lt_depth,
                         ctx.b().Compare(ComparisonDirection::kLt, labels, depth));
  TFJIT_ASSIGN_OR_RETURN(Instruction * valid, ctx.b().Binary(Opcode::kAnd, ge, lt_depth));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  TFJIT_ASSIGN_OR_RETURN(Instruction * nan_row, ctx.Splat(ct, nan, batch));
  TFJIT_ASSIGN_OR_RETURN(loss, ctx.b().Select(valid, loss, nan_row));
  TFJIT_ASSIGN_OR_RETURN(Instruction * valid2, ctx.b().Broadcast(valid, dims, {0}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * nan_mat, ctx.Splat(ct, nan, dims));
  TFJIT_ASSIGN_OR_RETURN(backprop, ctx.b().Select(valid2, backprop, nan_mat));
  return SetXentOutputs(ctx, node, t, loss, backprop);
}

// ---- DynamicStitch ----

// With constant indices: every data input reshaped to [count_i, slice...] and concatenated
// into one row list; merged is assembled from runs of consecutive source rows (the last
// writer of each index wins; rows no index names are zero).
absl::Status LowerDynamicStitch(LoweringContext& ctx, const tf::Node& node) {
  const int n = node.num_inputs() / 2;
  if (n == 0 || node.num_inputs() != 2 * n) {
    return InvalidArgument("expects N indices and N data inputs, got %d", node.num_inputs());
  }
  std::vector<std::vector<int64_t>> indices(static_cast<size_t>(n));
  std::vector<std::vector<int64_t>> index_dims(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Tensor t, ctx.ConstantInput(node, i));
    index_dims[static_cast<size_t>(i)] = t.dims();
    TFJIT_ASSIGN_OR_RETURN(indices[static_cast<size_t>(i)], ctx.ConstantInputAsInts(node, i));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * data0, ctx.Input(node, n));
  const std::vector<int64_t>& d0 = data0->shape().dims();
  const std::vector<int64_t>& i0 = index_dims[0];
  if (d0.size() < i0.size() || !std::equal(i0.begin(), i0.end(), d0.begin())) {
    return InvalidArgument("data[0].shape = [%s] does not start with indices[0].shape = [%s]",
                           absl::StrJoin(d0, ","), absl::StrJoin(i0, ","));
  }
  const std::vector<int64_t> slice(d0.begin() + static_cast<int64_t>(i0.size()), d0.end());
  const DType t = data0->shape().element_type();
  std::vector<Instruction*> rows;
  int64_t max_index = -1;
  for (int i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * d, ctx.Input(node, n + i));
    const std::vector<int64_t>& dd = d->shape().dims();
    const std::vector<int64_t>& id = index_dims[static_cast<size_t>(i)];
    if (dd.size() < id.size() || !std::equal(id.begin(), id.end(), dd.begin())) {
      return InvalidArgument("data[%d].shape = [%s] does not start with indices[%d].shape = [%s]",
                             i, absl::StrJoin(dd, ","), i, absl::StrJoin(id, ","));
    }
    const std::vector<int64_t> rest(dd.begin() + static_cast<int64_t>(id.size()), dd.end());
    if (rest != slice) {
      return InvalidArgument("Need data[0].shape[%d:] = [%s] to match data[%d].shape[%d:] = [%s]",
                             i0.size(), absl::StrJoin(slice, ","), i, id.size(),
                             absl::StrJoin(rest, ","));
    }
    for (size_t j = 0; j < indices[static_cast<size_t>(i)].size(); ++j) {
      const int64_t v = indices[static_cast<size_t>(i)][j];
      if (v < 0) return InvalidArgument("indices[%d][%d] = %d is out of range (negative)", i, j, v);
      max_index = std::max(max_index, v);
    }
    std::vector<int64_t> flat = {static_cast<int64_t>(indices[static_cast<size_t>(i)].size())};
    flat.insert(flat.end(), slice.begin(), slice.end());
    TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Reshape(d, flat));
    rows.push_back(r);
  }
  // source[k]: the flat source row of merged row k (-1: none).
  std::vector<int64_t> source(static_cast<size_t>(max_index + 1), -1);
  int64_t base = 0;
  for (const std::vector<int64_t>& idx : indices) {
    for (size_t j = 0; j < idx.size(); ++j) {
      source[static_cast<size_t>(idx[j])] = base + static_cast<int64_t>(j);
    }
    base += static_cast<int64_t>(idx.size());
  }
  std::vector<int64_t> out_dims = {max_index + 1};
  out_dims.insert(out_dims.end(), slice.begin(), slice.end());
  if (max_index < 0) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * empty, ctx.Splat(t, 0.0, out_dims));
    ctx.SetOutput(node, 0, empty);
    return absl::OkStatus();
  }
  Instruction* all = rows[0];
  if (rows.size() > 1) {
    TFJIT_ASSIGN_OR_RETURN(all, ctx.b().Concatenate(rows, 0));
  }
  std::vector<Instruction*> pieces;
  for (int64_t k = 0; k <= max_index;) {
    int64_t m = 1;  // run length
    const int64_t src = source[static_cast<size_t>(k)];
    while (k + m <= max_index && (src < 0 ? source[static_cast<size_t>(k + m)] < 0
                                          : source[static_cast<size_t>(k + m)] == src + m)) {
      ++m;
    }
    std::vector<int64_t> piece_dims = {m};
    piece_dims.insert(piece_dims.end(), slice.begin(), slice.end());
    Instruction* piece;
    if (src < 0) {
      TFJIT_ASSIGN_OR_RETURN(piece, ctx.Splat(t, 0.0, piece_dims));
    } else {
      std::vector<hlo::SliceDim> sl = {{src, src + m, 1}};
      for (int64_t d : slice) sl.push_back({0, d, 1});
      TFJIT_ASSIGN_OR_RETURN(piece, ctx.b().Slice(all, sl));
    }
    pieces.push_back(piece);
    k += m;
  }
  Instruction* r = pieces[0];
  if (pieces.size() > 1) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Concatenate(pieces, 0));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- StridedSliceGrad ----

// dy placed at the slice's positions of zeros(shape) (PlaceStridedSlice: reversed along
// negative strides, then padded into place). TF's rule is shared with the kernels
// (frontend/strided_slice_rule.h).
absl::Status LowerStridedSliceGrad(LoweringContext& ctx, const tf::Node& node) {
  std::vector<int64_t> shape, begin, end, strides;
  TFJIT_ASSIGN_OR_RETURN(shape, ctx.ConstantInputAsInts(node, 0));
  TFJIT_ASSIGN_OR_RETURN(begin, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(end, ctx.ConstantInputAsInts(node, 2));
  TFJIT_ASSIGN_OR_RETURN(strides, ctx.ConstantInputAsInts(node, 3));
  if (end.size() != begin.size() || strides.size() != begin.size()) {
    return InvalidArgument(
        "Expected begin, end, and strides to be 1D equal size tensors, but "
        "got %d, %d and %d values",
        begin.size(), end.size(), strides.size());
  }
  for (int64_t d : shape) {
    if (d < 0)
      return InvalidArgument("shape [%s] has a negative dimension", absl::StrJoin(shape, ","));
  }
  TFJIT_ASSIGN_OR_RETURN(tf::StridedMasks m, tf::GetStridedMasks(node));
  tf::StridedPlan plan;
  const std::string error = tf::PlanStridedSlice(shape, begin, end, strides, m, &plan);
  if (!error.empty()) return InvalidArgument("%s", error);
  TFJIT_ASSIGN_OR_RETURN(Instruction * dy, ctx.Input(node, 4));
  if (dy->shape().dims() != plan.final_dims) {
    return InvalidArgument("shape of dy was %s instead of [%s]", dy->shape().ToString(),
                           absl::StrJoin(plan.final_dims, ","));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, PlaceStridedSlice(ctx, dy, plan, shape));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- MirrorPadGrad ----

// Per dim: the middle of the padded gradient, plus each mirrored edge reversed and padded
// onto the positions it was copied from (REFLECT skips the border element: offset 1).
absl::Status LowerMirrorPadGrad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::string mode, tf::GetStringAttr(node, "mode"));
  if (mode != "REFLECT" && mode != "SYMMETRIC") {
    return InvalidArgument("mode must be either REFLECT or SYMMETRIC, got '%s'", mode);
  }
  const int64_t offset = mode == "REFLECT" ? 1 : 0;
  const int rank = x->shape().rank();
  TFJIT_ASSIGN_OR_RETURN(Tensor pt, ctx.ConstantInput(node, 1));
  if (pt.rank() != 2 || pt.dim(0) != rank || pt.dim(1) != 2) {
    return InvalidArgument(
        "The first dimension of paddings must be the rank of inputs[%d, 2]: "
        "paddings is %s",
        rank, pt.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ctx.ConstantInputAsInts(node, 1));
  for (int d = 0; d < rank; ++d) {
    const int64_t before = pads[2 * static_cast<size_t>(d)];
    const int64_t after = pads[2 * static_cast<size_t>(d) + 1];
    if (before < 0 || after < 0) {
      return InvalidArgument("Paddings must be non-negative: %d, %d", before, after);
    }
    const int64_t n = x->shape().dim(d) - (before + after);
    if (offset == 0 && (before > n || after > n)) {
      return InvalidArgument(
          "paddings must be no greater than the output dimension size: %d, "
          "%d greater than %d",
          before, after, n);
    }
    if (offset == 1 && (before >= n || after >= n)) {
      return InvalidArgument(
          "paddings must be less than the output dimension size: %d, %d not "
          "less than %d",
          before, after, n);
    }
    auto slice = [&](int64_t start, int64_t size) {
      std::vector<hlo::SliceDim> s;
      for (int64_t e : x->shape().dims()) s.push_back({0, e, 1});
      s[static_cast<size_t>(d)] = {start, start + size, 1};
      return ctx.b().Slice(x, s);
    };
    auto pad_dim = [&](Instruction* v, int64_t lo, int64_t hi) {
      std::vector<hlo::PadDim> p(static_cast<size_t>(rank));
      p[static_cast<size_t>(d)] = {lo, hi, 0};
      return PadWithZeros(ctx, v, p);
    };
    TFJIT_ASSIGN_OR_RETURN(Instruction * sum, slice(before, n));
    if (before > 0) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * left, slice(0, before));
      TFJIT_ASSIGN_OR_RETURN(left, ReverseDims(ctx, left, {d}));
      TFJIT_ASSIGN_OR_RETURN(left, pad_dim(left, offset, n - offset - before));
      TFJIT_ASSIGN_OR_RETURN(sum, ctx.b().Binary(Opcode::kAdd, sum, left));
    }
    if (after > 0) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * right, slice(before + n, after));
      TFJIT_ASSIGN_OR_RETURN(right, ReverseDims(ctx, right, {d}));
      TFJIT_ASSIGN_OR_RETURN(right, pad_dim(right, n - offset - after, offset));
      TFJIT_ASSIGN_OR_RETURN(sum, ctx.b().Binary(Opcode::kAdd, sum, right));
    }
    x = sum;
  }
  ctx.SetOutput(node, 0, x);
  return absl::OkStatus();
}

}  // namespace

void AppendGradientsLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(),
                {
                    {"ReluGrad", LowerGrad<true, ReluGradBody>},
                    {"Relu6Grad", LowerGrad<true, Relu6GradBody>},
                    {"EluGrad", LowerGrad<true, EluGradBody>, /*float_only=*/true},
                    {"SeluGrad", LowerGrad<true, SeluGradBody>, true},
                    {"LeakyReluGrad", LowerGrad<true, LeakyReluGradBody>, true},
                    {"SoftplusGrad", LowerGrad<true, SoftplusGradBody>, true},
                    {"SoftsignGrad", LowerGrad<true, SoftsignGradBody>, true},
                    {"SigmoidGrad", LowerGrad<false, SigmoidGradBody>, true},
                    {"TanhGrad", LowerGrad<false, TanhGradBody>, true},
                    {"SqrtGrad", LowerGrad<false, SqrtGradBody>, true},
                    {"RsqrtGrad", LowerGrad<false, RsqrtGradBody>, true},
                    {"ReciprocalGrad", LowerGrad<false, ReciprocalGradBody>, true},
                    {"InvGrad", LowerGrad<false, ReciprocalGradBody>, true},
                    {"BiasAddGrad", LowerBiasAddGrad},
                    {"BroadcastGradientArgs", LowerBroadcastGradientArgs},
                    {"ConcatOffset", LowerConcatOffset},
                    {"SoftmaxCrossEntropyWithLogits", LowerSoftmaxXent, true},
                    {"SparseSoftmaxCrossEntropyWithLogits", LowerSparseSoftmaxXent, true},
                    {"DynamicStitch", LowerDynamicStitch},
                    {"ParallelDynamicStitch", LowerDynamicStitch},
                    {"StridedSliceGrad", LowerStridedSliceGrad},
                    {"MirrorPadGrad", LowerMirrorPadGrad},
                });
  AppendGradientsWindowLowerings(table);  // gradients_window_lowerings.cc
}

}  // namespace tfjit::tf2hlo
