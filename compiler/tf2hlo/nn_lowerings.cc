// Lowerings of TF's neural-network ops: BiasAdd, Softmax, LogSoftmax and the activations Relu,
// Relu6, Elu, Selu, Softplus, Softsign, LeakyRelu; L2Loss; MaxPool and AvgPool as
// reduce-window (NHWC or NCHW). MatMul, BatchMatMul* and Einsum are in linalg_lowerings.cc.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/conv_attrs.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

absl::Status LowerBiasAdd(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * bias, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(std::string format, tf::GetStringAttrOr(node, "data_format", "NHWC"));
  const hlo::Shape& s = x->shape();
  if (s.rank() < 2 || bias->shape().rank() != 1) {
    return InvalidArgument("value must be at least rank 2 and bias a vector, got %s and %s",
                           s.ToString(), bias->shape().ToString());
  }
  const int64_t channel_dim = (format == "NCHW") ? 1 : s.rank() - 1;
  if (s.dim(static_cast<int>(channel_dim)) != bias->shape().dim(0)) {
    return InvalidArgument(
        "Must provide as many biases as the channel dimension of the input "
        "tensor: %s vs. %s in %s format",
        bias->shape().ToString(), s.ToString(), format);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * bb, ctx.b().Broadcast(bias, s.dims(), {channel_dim}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kAdd, x, bb));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Softmax(x) over the last axis: e = exp(x - max(x)); e / sum(e).
absl::Status LowerSoftmax(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape& s = x->shape();
  if (s.rank() < 1) return InvalidArgument("logits must have >= 1 dimension, got %s", s.ToString());
  const DType t = s.element_type();
  const int64_t last = s.rank() - 1;
  std::vector<int64_t> batch_dims(s.dims().begin(), s.dims().end() - 1);
  std::vector<int64_t> keep_map;
  for (int64_t d = 0; d < last; ++d) keep_map.push_back(d);

  TFJIT_ASSIGN_OR_RETURN(Instruction * neg_inf,
                         ctx.Splat(t, -std::numeric_limits<double>::infinity(), {}));
  hlo::Computation* max_comp =
      hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * mx, ctx.b().Reduce(x, neg_inf, {last}, max_comp));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mxb, ctx.b().Broadcast(mx, s.dims(), keep_map));
  TFJIT_ASSIGN_OR_RETURN(Instruction * shifted, ctx.b().Binary(Opcode::kSubtract, x, mxb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * e, ctx.b().Unary(Opcode::kExp, shifted));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, {}));
  hlo::Computation* add_comp = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum, ctx.b().Reduce(e, zero, {last}, add_comp));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sumb, ctx.b().Broadcast(sum, s.dims(), keep_map));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kDivide, e, sumb));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// LogSoftmax(x) over the last axis: s = x - max(x); s - log(sum(exp(s))).
absl::Status LowerLogSoftmax(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape& s = x->shape();
  if (s.rank() < 1) return InvalidArgument("logits must have >= 1 dimension, got %s", s.ToString());
  const DType t = s.element_type();
  const int64_t last = s.rank() - 1;
  std::vector<int64_t> keep_map;
  for (int64_t d = 0; d < last; ++d) keep_map.push_back(d);
  TFJIT_ASSIGN_OR_RETURN(Instruction * neg_inf,
                         ctx.Splat(t, -std::numeric_limits<double>::infinity(), {}));
  hlo::Computation* max_comp =
      hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * mx, ctx.b().Reduce(x, neg_inf, {last}, max_comp));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mxb, ctx.b().Broadcast(mx, s.dims(), keep_map));
  TFJIT_ASSIGN_OR_RETURN(Instruction * shifted, ctx.b().Binary(Opcode::kSubtract, x, mxb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * e, ctx.b().Unary(Opcode::kExp, shifted));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, {}));
  hlo::Computation* add_comp = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum, ctx.b().Reduce(e, zero, {last}, add_comp));
  TFJIT_ASSIGN_OR_RETURN(Instruction * log_sum, ctx.b().Unary(Opcode::kLog, sum));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lsb, ctx.b().Broadcast(log_sum, s.dims(), keep_map));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kSubtract, shifted, lsb));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Relu(x) => max(x, 0)
absl::Status LowerRelu(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero,
                         ctx.Splat(x->shape().element_type(), 0.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kMaximum, x, zero));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Relu6(x) => min(max(x, 0), 6)
absl::Status LowerRelu6(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * six, ctx.Splat(t, 6.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lo, ctx.b().Binary(Opcode::kMaximum, x, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kMinimum, lo, six));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Elu(x) => x < 0 ? expm1(x) : x; Selu(x) => x < 0 ? scale*alpha*expm1(x) : scale*x.
absl::Status LowerExpLinear(LoweringContext& ctx, const tf::Node& node, bool selu) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  const std::vector<int64_t>& dims = x->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * neg,
                         ctx.b().Compare(hlo::ComparisonDirection::kLt, x, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * em1, ctx.b().Unary(Opcode::kExpm1, x));
  Instruction* pos = x;
  if (selu) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * sa, ctx.Splat(t, kScale * kAlpha, dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * sc, ctx.Splat(t, kScale, dims));
    TFJIT_ASSIGN_OR_RETURN(em1, ctx.b().Binary(Opcode::kMultiply, em1, sa));
    TFJIT_ASSIGN_OR_RETURN(pos, ctx.b().Binary(Opcode::kMultiply, x, sc));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(neg, em1, pos));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}
absl::Status LowerElu(LoweringContext& ctx, const tf::Node& node) {
  return LowerExpLinear(ctx, node, false);
}
absl::Status LowerSelu(LoweringContext& ctx, const tf::Node& node) {
  return LowerExpLinear(ctx, node, true);
}

// Softplus as TF's kernel computes it: with th = log(epsilon) + 2, x > -th gives x, x < th
// gives exp(x), anything else log1p(exp(x)).
absl::Status LowerSoftplus(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  const std::vector<int64_t>& dims = x->shape().dims();
  double eps = std::numeric_limits<float>::epsilon();
  if (t == DType::kFloat64) eps = std::numeric_limits<double>::epsilon();
  if (t == DType::kFloat16) eps = 0.0009765625;  // 2^-10
  if (t == DType::kBFloat16) eps = 0.0078125;    // 2^-7
  const double threshold = std::log(eps) + 2.0;
  TFJIT_ASSIGN_OR_RETURN(Instruction * hi, ctx.Splat(t, -threshold, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lo, ctx.Splat(t, threshold, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * too_large,
                         ctx.b().Compare(hlo::ComparisonDirection::kGt, x, hi));
  TFJIT_ASSIGN_OR_RETURN(Instruction * too_small,
                         ctx.b().Compare(hlo::ComparisonDirection::kLt, x, lo));
  TFJIT_ASSIGN_OR_RETURN(Instruction * e, ctx.b().Unary(Opcode::kExp, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * l, ctx.b().Unary(Opcode::kLog1p, e));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(too_small, e, l));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Select(too_large, x, r));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Softsign(x) => x / (1 + |x|)
absl::Status LowerSoftsign(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one,
                         ctx.Splat(x->shape().element_type(), 1.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ax, ctx.b().Unary(Opcode::kAbs, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * d, ctx.b().Binary(Opcode::kAdd, one, ax));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kDivide, x, d));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// LeakyRelu(x) => x > 0 ? x : x * alpha
absl::Status LowerLeakyRelu(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(float alpha, tf::GetFloatAttrOr(node, "alpha", 0.2f));
  const DType t = x->shape().element_type();
  const std::vector<int64_t>& dims = x->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Splat(t, alpha, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * pos,
                         ctx.b().Compare(hlo::ComparisonDirection::kGt, x, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * xa, ctx.b().Binary(Opcode::kMultiply, x, a));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(pos, x, xa));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// L2Loss(t) => sum(t * t) / 2
absl::Status LowerL2Loss(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * sq, ctx.b().Binary(Opcode::kMultiply, x, x));
  std::vector<int64_t> all;
  for (int d = 0; d < x->shape().rank(); ++d) all.push_back(d);
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, {}));
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum, ctx.b().Reduce(sq, zero, all, add));
  TFJIT_ASSIGN_OR_RETURN(Instruction * half, ctx.Splat(t, 0.5, {}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kMultiply, sum, half));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Pooling ----

// The NHWC or NCHW reduce-window of a MaxPool/AvgPool node (geometry from frontend/conv_attrs.h, as
// the fallback kernel); `out` gets the output's H and W. reduce-window's own size rule,
// (in + pads - k) / s + 1 (0 when the window does not fit), gives the same sizes.
// An NCHW node pools dims 2 and 3 (`*h_dim` gets the H dim: 1 for NHWC, 2 for NCHW).
absl::StatusOr<std::vector<hlo::WindowDim>> PoolWindow(const tf::Node& node, const hlo::Shape& x,
                                                       std::vector<int64_t>* out, int64_t* h_dim) {
  TFJIT_ASSIGN_OR_RETURN(tf::WindowAttrs a,
                         tf::ReadPoolAttrs(node, x.dims(), tf::Layouts::kNhwcOrNchw));
  const std::vector<int64_t> nhwc = a.nchw ? tf::NchwToNhwc(x.dims()) : x.dims();
  TFJIT_ASSIGN_OR_RETURN(tf::Window2D geometry,
                         tf::ComputeWindow(node, a, nhwc[1], nhwc[2], a.ksize[1], a.ksize[2]));
  *h_dim = a.nchw ? 2 : 1;
  const tf::SpatialDim* spatial[] = {&geometry.h, &geometry.w};
  std::vector<hlo::WindowDim> window(4);
  out->assign(2, 0);
  for (size_t i = 0; i < 2; ++i) {
    hlo::WindowDim& w = window[i + static_cast<size_t>(*h_dim)];
    w.size = spatial[i]->k;
    w.stride = spatial[i]->stride;
    w.pad_lo = spatial[i]->pad_before;
    w.pad_hi = spatial[i]->pad_after;
    (*out)[i] = spatial[i]->out;
  }
  return window;
}

absl::Status LowerMaxPool(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  std::vector<int64_t> out;
  int64_t h_dim = 1;
  TFJIT_ASSIGN_OR_RETURN(std::vector<hlo::WindowDim> window,
                         PoolWindow(node, x->shape(), &out, &h_dim));
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * init, ctx.Splat(t, LowestValue(t), {}));
  hlo::Attributes attrs;
  attrs.window = std::move(window);
  hlo::Computation* max = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                         ctx.b().Add(Opcode::kReduceWindow, {x, init}, std::move(attrs), {max}));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Sum over the window (padding cells add 0), divided by the count of non-padding cells of
// each output position (a constant). 16-bit floats sum in f32 like the kernel.
absl::Status LowerAvgPool(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  std::vector<int64_t> out;
  int64_t h_dim = 1;
  TFJIT_ASSIGN_OR_RETURN(std::vector<hlo::WindowDim> window,
                         PoolWindow(node, x->shape(), &out, &h_dim));
  const DType t = x->shape().element_type();
  const DType acc_t = (t == DType::kFloat16 || t == DType::kBFloat16) ? DType::kFloat32 : t;
  if (acc_t != t) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, acc_t));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(acc_t, 0.0, {}));
  Tensor counts(acc_t, {out[0], out[1]});
  for (int64_t i = 0; i < out[0]; ++i) {
    for (int64_t j = 0; j < out[1]; ++j) {
      int64_t n = 1;
      for (int d = 0; d < 2; ++d) {
        const hlo::WindowDim& w = window[static_cast<size_t>(d + h_dim)];
        const int64_t start = (d == 0 ? i : j) * w.stride - w.pad_lo;
        const int64_t in = x->shape().dim(static_cast<int>(d + h_dim));
        n *= std::min(start + w.size, in) - std::max<int64_t>(start, 0);
      }
      // A window entirely in the padding (explicit padding only) divides 0 by 1, not by 0.
      const double c = static_cast<double>(std::max<int64_t>(n, 1));
      if (acc_t == DType::kFloat64)
        counts.data<double>()[i * out[1] + j] = c;
      else
        counts.data<float>()[i * out[1] + j] = static_cast<float>(c);
    }
  }
  hlo::Attributes attrs;
  attrs.window = std::move(window);
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, acc_t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum,
                         ctx.b().Add(Opcode::kReduceWindow, {x, zero}, std::move(attrs), {add}));
  Instruction* count = ctx.b().Constant(hlo::Literal::FromTensor(counts));
  TFJIT_ASSIGN_OR_RETURN(Instruction * countb,
                         ctx.b().Broadcast(count, sum->shape().dims(), {h_dim, h_dim + 1}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kDivide, sum, countb));
  if (acc_t != t) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

}  // namespace

void AppendNnLowerings(std::vector<OpLowering>* table) {
  table->insert(
      table->end(),
      {
          {"MaxPool", LowerMaxPool},
          {"AvgPool", LowerAvgPool, true},
          {"BiasAdd", LowerBiasAdd},
          {"BiasAddV1", LowerBiasAdd},  // no data_format attr: the bias is on the last dim
          {"Softmax", LowerSoftmax, /*float_only=*/true},
          {"LogSoftmax", LowerLogSoftmax, true},
          {"Elu", LowerElu, true},
          {"Selu", LowerSelu, true},
          {"Softplus", LowerSoftplus, true},
          {"Softsign", LowerSoftsign, true},
          {"Relu", LowerRelu},
          {"Relu6", LowerRelu6},
          {"LeakyRelu", LowerLeakyRelu, true},
          {"L2Loss", LowerL2Loss, true},
      });
}

}  // namespace tfjit::tf2hlo
