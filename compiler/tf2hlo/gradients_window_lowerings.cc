// Lowerings of the windowed ops' gradients (the gradients family, docs/DESIGN.md "Op
// families") with the semantics of TF's XLA kernels (tf2xla): FusedBatchNormGrad/V2/V3, the
// window gradients built per window tap from slices and interior padding (AvgPoolGrad,
// MaxPoolGrad/V2, Conv2DBackpropFilter and the depthwise backprops, MaxPoolGradGrad/V2), the
// resize gradients as two dots with constant weight matrices, and LRNGrad as reduce-windows
// over depth. The 3-D gradients are in gradients_3d_lowerings.cc; the elementwise, loss and
// shape-op gradients in gradients_lowerings.cc.
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

namespace tfjit::tf2hlo {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using hlo::Opcode;

// ---- AvgPoolGrad, MaxPoolGrad ----

// The pool geometry of a *PoolGrad node over an input of `input_dims` (node layout).
// MaxPoolGradV2's window attrs: ksize and strides from constant inputs 3 and 4.
absl::StatusOr<tf::WindowAttrs> PoolAttrsV2(LoweringContext& ctx, const tf::Node& node) {
  tf::WindowAttrs a;
  TFJIT_ASSIGN_OR_RETURN(std::string format, tf::GetStringAttrOr(node, "data_format", "NHWC"));
  if (format != "NHWC" && format != "NCHW")
    return InvalidArgument("Invalid data format: %s", format);
  a.nchw = format == "NCHW";
  TFJIT_ASSIGN_OR_RETURN(a.ksize, ctx.ConstantInputAsInts(node, 3));
  TFJIT_ASSIGN_OR_RETURN(a.strides, ctx.ConstantInputAsInts(node, 4));
  if (a.ksize.size() != 4 || a.strides.size() != 4) {
    return InvalidArgument("Sliding window ksize and strides must specify 4 dimensions");
  }
  if (a.nchw) {
    a.ksize = tf::NchwToNhwc(a.ksize);
    a.strides = tf::NchwToNhwc(a.strides);
  }
  if (a.ksize[0] != 1 || a.strides[0] != 1) {
    return InvalidArgument("Pooling is not yet supported on the batch dimension.");
  }
  if (a.ksize[3] != 1 || a.strides[3] != 1) {
    return InvalidArgument("Pooling is not yet supported on the depth dimension.");
  }
  for (int d = 1; d <= 2; ++d) {
    if (a.ksize[static_cast<size_t>(d)] <= 0 || a.strides[static_cast<size_t>(d)] <= 0) {
      return InvalidArgument("ksize and strides must be positive");
    }
  }
  TFJIT_ASSIGN_OR_RETURN(std::string padding, tf::GetStringAttr(node, "padding"));
  if (padding != "SAME" && padding != "VALID") {
    return InvalidArgument("padding must be SAME or VALID, got '%s'", padding);
  }
  a.padding = padding == "SAME" ? tf::Padding::kSame : tf::Padding::kValid;
  return a;
}

absl::StatusOr<tf::Window2D> PoolGradGeometry(LoweringContext& ctx, const tf::Node& node,
                                              const std::vector<int64_t>& input_dims, bool* nchw,
                                              std::vector<int64_t>* nhwc_dims) {
  tf::WindowAttrs a;
  if (node.op() == "MaxPoolGradV2" || node.op() == "MaxPoolGradGradV2") {
    if (input_dims.size() != 4) return InvalidArgument("orig_input must be 4-dimensional");
    TFJIT_ASSIGN_OR_RETURN(a, PoolAttrsV2(ctx, node));
  } else {
    TFJIT_ASSIGN_OR_RETURN(a, tf::ReadPoolAttrs(node, input_dims, tf::Layouts::kNhwcOrNchw));
  }
  *nchw = a.nchw;
  *nhwc_dims = a.nchw ? tf::NchwToNhwc(input_dims) : input_dims;
  return tf::ComputeWindow(node, a, (*nhwc_dims)[1], (*nhwc_dims)[2], a.ksize[1], a.ksize[2]);
}

absl::StatusOr<Instruction*> ToNhwc(LoweringContext& ctx, Instruction* x, bool nchw) {
  if (!nchw) return x;
  return ctx.b().Transpose(x, {0, 2, 3, 1});
}

absl::Status CheckGradShape(Instruction* grad, const std::vector<int64_t>& in,
                            const tf::Window2D& w) {
  const std::vector<int64_t> want = {in[0], w.h.out, w.w.out, in[3]};
  if (grad->shape().dims() != want) {
    return InvalidArgument(
        "the gradient has shape %s but the pool's output shape is [%s] "
        "(NHWC)",
        grad->shape().ToString(), absl::StrJoin(want, ","));
  }
  return absl::OkStatus();
}

// For window tap (i, j): the values `v` [N, OH, OW, C] placed at the input positions the tap
// reads (o * stride + tap * dilation in the padded input), zero elsewhere, cut back to the unpadded
// input [N, H, W, C].
absl::StatusOr<Instruction*> ScatterTap(LoweringContext& ctx, Instruction* v, const tf::Window2D& w,
                                        const std::vector<int64_t>& in, int64_t i, int64_t j) {
  const int64_t hp = in[1] + w.h.pad_before + w.h.pad_after;
  const int64_t wp = in[2] + w.w.pad_before + w.w.pad_after;
  std::vector<hlo::PadDim> pads(4);
  const int64_t oi = i * w.h.dilation, oj = j * w.w.dilation;  // the tap's offset
  pads[1] = {oi, hp - (oi + (w.h.out - 1) * w.h.stride + 1), w.h.stride - 1};
  pads[2] = {oj, wp - (oj + (w.w.out - 1) * w.w.stride + 1), w.w.stride - 1};
  TFJIT_ASSIGN_OR_RETURN(Instruction * p, PadWithZeros(ctx, v, pads));
  return ctx.b().Slice(p, {{0, in[0], 1},
                           {w.h.pad_before, w.h.pad_before + in[1], 1},
                           {w.w.pad_before, w.w.pad_before + in[2], 1},
                           {0, in[3], 1}});
}

// Sums ScatterTap over every tap, `tap_value(i, j)` giving the values of tap (i, j).
template <typename TapValue>
absl::StatusOr<Instruction*> SumTaps(LoweringContext& ctx, DType t, const tf::Window2D& w,
                                     const std::vector<int64_t>& in, TapValue tap_value) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum, ctx.Splat(t, 0.0, in));
  if (w.h.out == 0 || w.w.out == 0) return sum;
  for (int64_t i = 0; i < w.h.k; ++i) {
    for (int64_t j = 0; j < w.w.k; ++j) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * v, tap_value(i, j));
      if (v == nullptr) continue;
      TFJIT_ASSIGN_OR_RETURN(Instruction * s, ScatterTap(ctx, v, w, in, i, j));
      TFJIT_ASSIGN_OR_RETURN(sum, ctx.b().Binary(Opcode::kAdd, sum, s));
    }
  }
  return sum;
}

// Each output gradient divided by its window's count of non-padding cells (a compile-time
// constant), then added back at every tap.
absl::Status LowerAvgPoolGrad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.ConstantInputAsInts(node, 0));
  if (shape.size() != 4) {
    return InvalidArgument("orig_input_shape must be 1-dimensional and 4 elements, got %d",
                           shape.size());
  }
  bool nchw = false;
  std::vector<int64_t> in;
  TFJIT_ASSIGN_OR_RETURN(tf::Window2D w, PoolGradGeometry(ctx, node, shape, &nchw, &in));
  TFJIT_ASSIGN_OR_RETURN(Instruction * grad, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(grad, ToNhwc(ctx, grad, nchw));
  TFJIT_RETURN_IF_ERROR(CheckGradShape(grad, in, w));
  const DType t = grad->shape().element_type();
  // counts[oh, ow]: the window clipped to the input.
  Tensor counts(DType::kFloat64, {w.h.out, w.w.out});
  auto extent = [](const tf::SpatialDim& d, int64_t o, int64_t n) {
    const int64_t s = o * d.stride - d.pad_before;
    return std::max<int64_t>(0, std::min(s + d.k, n) - std::max<int64_t>(s, 0));
  };
  for (int64_t oh = 0; oh < w.h.out; ++oh) {
    for (int64_t ow = 0; ow < w.w.out; ++ow) {
      const int64_t c = extent(w.h, oh, in[1]) * extent(w.w, ow, in[2]);
      counts.data<double>()[oh * w.w.out + ow] = static_cast<double>(std::max<int64_t>(c, 1));
    }
  }
  Instruction* cnt = ctx.b().Constant(hlo::Literal::FromTensor(counts));
  TFJIT_ASSIGN_OR_RETURN(cnt, ctx.b().Convert(cnt, t));
  TFJIT_ASSIGN_OR_RETURN(cnt, ctx.b().Broadcast(cnt, grad->shape().dims(), {1, 2}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * share, ctx.b().Binary(Opcode::kDivide, grad, cnt));
  TFJIT_ASSIGN_OR_RETURN(
      Instruction * r,
      SumTaps(ctx, t, w, in,
              [&](int64_t, int64_t) -> absl::StatusOr<Instruction*> { return share; }));
  if (nchw) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Transpose(r, {0, 3, 1, 2}));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Per tap, the input values the tap reads (the padded input strided-sliced); the window max;
// then each gradient goes to the first tap equal to the max (TF's argmax order).
absl::Status LowerMaxPoolGrad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  bool nchw = false;
  std::vector<int64_t> in;
  TFJIT_ASSIGN_OR_RETURN(tf::Window2D w,
                         PoolGradGeometry(ctx, node, x->shape().dims(), &nchw, &in));
  TFJIT_ASSIGN_OR_RETURN(Instruction * orig_out, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(orig_out, ToNhwc(ctx, orig_out, nchw));
  TFJIT_RETURN_IF_ERROR(CheckGradShape(orig_out, in, w));
  TFJIT_ASSIGN_OR_RETURN(Instruction * grad, ctx.Input(node, 2));
  TFJIT_ASSIGN_OR_RETURN(grad, ToNhwc(ctx, grad, nchw));
  TFJIT_RETURN_IF_ERROR(CheckGradShape(grad, in, w));
  TFJIT_ASSIGN_OR_RETURN(x, ToNhwc(ctx, x, nchw));
  const DType t = x->shape().element_type();
  Instruction* r = nullptr;
  if (w.h.out == 0 || w.w.out == 0) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.Splat(t, 0.0, in));
  } else {
    TFJIT_ASSIGN_OR_RETURN(Instruction * low, ctx.Splat(t, LowestValue(t), {}));
    hlo::Attributes attrs;
    attrs.padding = {{0, 0, 0},
                     {w.h.pad_before, w.h.pad_after, 0},
                     {w.w.pad_before, w.w.pad_after, 0},
                     {0, 0, 0}};
    TFJIT_ASSIGN_OR_RETURN(Instruction * xp, ctx.b().Add(Opcode::kPad, {x, low}, attrs));
    std::vector<Instruction*> taps;
    Instruction* mx = nullptr;
    for (int64_t i = 0; i < w.h.k; ++i) {
      for (int64_t j = 0; j < w.w.k; ++j) {
        TFJIT_ASSIGN_OR_RETURN(
            Instruction * v, ctx.b().Slice(xp, {{0, in[0], 1},
                                                {i, i + (w.h.out - 1) * w.h.stride + 1, w.h.stride},
                                                {j, j + (w.w.out - 1) * w.w.stride + 1, w.w.stride},
                                                {0, in[3], 1}}));
        taps.push_back(v);
        if (mx == nullptr) {
          mx = v;
        } else {
          TFJIT_ASSIGN_OR_RETURN(mx, ctx.b().Binary(Opcode::kMaximum, mx, v));
        }
      }
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, grad->shape().dims()));
    Instruction* taken = nullptr;  // some earlier tap already holds the max
    TFJIT_ASSIGN_OR_RETURN(
        r, SumTaps(ctx, t, w, in, [&](int64_t i, int64_t j) -> absl::StatusOr<Instruction*> {
          Instruction* v = taps[static_cast<size_t>(i * w.w.k + j)];
          TFJIT_ASSIGN_OR_RETURN(Instruction * hit,
                                 ctx.b().Compare(ComparisonDirection::kEq, v, mx));
          Instruction* first = hit;
          if (taken != nullptr) {
            TFJIT_ASSIGN_OR_RETURN(Instruction * not_taken, ctx.b().Unary(Opcode::kNot, taken));
            TFJIT_ASSIGN_OR_RETURN(first, ctx.b().Binary(Opcode::kAnd, hit, not_taken));
            TFJIT_ASSIGN_OR_RETURN(taken, ctx.b().Binary(Opcode::kOr, taken, hit));
          } else {
            taken = hit;
          }
          return ctx.b().Select(first, grad, zero);
        }));
  }
  if (nchw) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Transpose(r, {0, 3, 1, 2}));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- FusedBatchNormGrad, V2, V3 ----

// TF's formulas (see gradients_kernels.cc) in f32, reductions over every dim but the channel.
absl::Status LowerFusedBatchNormGrad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * dy, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * scale, ctx.Input(node, 2));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mean, ctx.Input(node, 3));
  TFJIT_ASSIGN_OR_RETURN(Instruction * var, ctx.Input(node, 4));
  TFJIT_ASSIGN_OR_RETURN(float epsilon, tf::GetFloatAttrOr(node, "epsilon", 1e-4f));
  TFJIT_ASSIGN_OR_RETURN(bool training, tf::GetBoolAttrOr(node, "is_training", true));
  TFJIT_ASSIGN_OR_RETURN(std::string format, tf::GetStringAttrOr(node, "data_format", "NHWC"));
  const bool channels_last = format == "NHWC" || format == "NDHWC";
  if (!channels_last && format != "NCHW" && format != "NCDHW") {
    return InvalidArgument("Invalid data format: %s", format);
  }
  const int want_rank = format.size() == 5 ? 5 : 4;
  const hlo::Shape& xs = x->shape();
  if (xs.rank() != want_rank || dy->shape().dims() != xs.dims()) {
    return InvalidArgument("x and y_backprop must be %d-dimensional with one shape: %s and %s",
                           want_rank, xs.ToString(), dy->shape().ToString());
  }
  const int64_t cdim = channels_last ? xs.rank() - 1 : 1;
  const int64_t channels = xs.dim(static_cast<int>(cdim));
  for (Instruction* v : {scale, mean, var}) {
    if (v->shape().dims() != std::vector<int64_t>{channels}) {
      return InvalidArgument(
          "scale, reserve_space_1 and reserve_space_2 must be vectors of "
          "the channel count %d, got %s",
          channels, v->shape().ToString());
    }
  }
  const DType t = xs.element_type();
  const std::vector<int64_t> dims = xs.dims();
  if (t != DType::kFloat32) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, DType::kFloat32));
    TFJIT_ASSIGN_OR_RETURN(dy, ctx.b().Convert(dy, DType::kFloat32));
  }
  std::vector<int64_t> others;
  int64_t count = 1;
  for (int64_t d = 0; d < xs.rank(); ++d) {
    if (d != cdim) {
      others.push_back(d);
      count *= dims[static_cast<size_t>(d)];
    }
  }
  const DType f = DType::kFloat32;
  auto bc = [&](Instruction* v) { return ctx.b().Broadcast(v, dims, {cdim}); };
  auto sum = [&](Instruction* v) -> absl::StatusOr<Instruction*> {
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(f, 0.0, {}));
    return ctx.b().Reduce(v, zero, others,
                          hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, f));
  };
  auto op = [&](Opcode o, Instruction* a, Instruction* b) { return ctx.b().Binary(o, a, b); };
  TFJIT_ASSIGN_OR_RETURN(Instruction * eps, ctx.Splat(f, epsilon, {channels}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ve, op(Opcode::kAdd, var, eps));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Unary(Opcode::kRsqrt, ve));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mean_b, bc(mean));
  TFJIT_ASSIGN_OR_RETURN(Instruction * xc, op(Opcode::kSubtract, x, mean_b));
  TFJIT_ASSIGN_OR_RETURN(Instruction * dyxc, op(Opcode::kMultiply, dy, xc));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum_dy, sum(dy));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum_dyxc, sum(dyxc));
  TFJIT_ASSIGN_OR_RETURN(Instruction * dscale, op(Opcode::kMultiply, sum_dyxc, r));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sr, op(Opcode::kMultiply, scale, r));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sr_b, bc(sr));
  Instruction* dx = nullptr;
  if (training) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * n, ctx.Splat(f, static_cast<double>(count), {channels}));
    TFJIT_ASSIGN_OR_RETURN(Instruction * mean_dy, op(Opcode::kDivide, sum_dy, n));
    TFJIT_ASSIGN_OR_RETURN(Instruction * mean_dyxc, op(Opcode::kDivide, sum_dyxc, n));
    TFJIT_ASSIGN_OR_RETURN(Instruction * k, op(Opcode::kDivide, mean_dyxc, ve));
    TFJIT_ASSIGN_OR_RETURN(Instruction * mean_dy_b, bc(mean_dy));
    TFJIT_ASSIGN_OR_RETURN(Instruction * k_b, bc(k));
    TFJIT_ASSIGN_OR_RETURN(Instruction * a, op(Opcode::kSubtract, dy, mean_dy_b));
    TFJIT_ASSIGN_OR_RETURN(Instruction * xck, op(Opcode::kMultiply, xc, k_b));
    TFJIT_ASSIGN_OR_RETURN(a, op(Opcode::kSubtract, a, xck));
    TFJIT_ASSIGN_OR_RETURN(dx, op(Opcode::kMultiply, sr_b, a));
  } else {
    TFJIT_ASSIGN_OR_RETURN(dx, op(Opcode::kMultiply, dy, sr_b));
  }
  if (t != DType::kFloat32) {
    TFJIT_ASSIGN_OR_RETURN(dx, ctx.b().Convert(dx, t));
  }
  ctx.SetOutput(node, 0, dx);
  ctx.SetOutput(node, 1, dscale);
  ctx.SetOutput(node, 2, sum_dy);
  for (int i = 3; i < 5; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * empty, ctx.Splat(f, 0.0, {0}));
    ctx.SetOutput(node, i, empty);
  }
  return absl::OkStatus();
}

// ---- Conv2DBackpropFilter, DepthwiseConv2dNativeBackpropInput/Filter ----

struct ConvGradPlan {
  tf::Window2D w;
  std::vector<int64_t> x;  // NHWC input dims
  bool nchw = false;
  int64_t out_c = 0;
};

absl::StatusOr<ConvGradPlan> PlanConvGrad(const tf::Node& node, const std::vector<int64_t>& x_dims,
                                          const std::vector<int64_t>& filter_dims,
                                          const std::vector<int64_t>& dy_dims, bool depthwise) {
  TFJIT_ASSIGN_OR_RETURN(tf::WindowAttrs attrs, tf::ReadConvAttrs(node, tf::Layouts::kNhwcOrNchw));
  if (x_dims.size() != 4 || dy_dims.size() != 4) {
    return InvalidArgument("input and out_backprop must be 4-dimensional, got [%s] and [%s]",
                           absl::StrJoin(x_dims, ","), absl::StrJoin(dy_dims, ","));
  }
  ConvGradPlan p;
  p.nchw = attrs.nchw;
  p.x = attrs.nchw ? tf::NchwToNhwc(x_dims) : x_dims;
  TFJIT_ASSIGN_OR_RETURN(tf::ConvGeometry g,
                         tf::Conv2DGeometry(node, attrs, p.x, filter_dims, depthwise));
  if (!depthwise && g.groups != 1) {
    return InvalidArgument("input depth %d must equal the filter's in_depth %d", p.x[3],
                           filter_dims[2]);
  }
  p.w = g.window;
  p.out_c = g.out_channels;
  const std::vector<int64_t> want = {p.x[0], p.w.h.out, p.w.w.out, p.out_c};
  const std::vector<int64_t> dy = attrs.nchw ? tf::NchwToNhwc(dy_dims) : dy_dims;
  if (dy != want) {
    return InvalidArgument(
        "out_backprop has shape [%s] but the convolution's output shape is "
        "[%s] (NHWC)",
        absl::StrJoin(dy, ","), absl::StrJoin(want, ","));
  }
  return p;
}

bool AnyZero(const std::vector<int64_t>& d) { return std::find(d.begin(), d.end(), 0) != d.end(); }

// The input values filter tap (i, j) meets: [N, OH, OW, C] from the zero-padded input.
absl::StatusOr<Instruction*> TapInput(LoweringContext& ctx, Instruction* xp, const ConvGradPlan& p,
                                      int64_t i, int64_t j) {
  const tf::Window2D& w = p.w;
  const int64_t oi = i * w.h.dilation, oj = j * w.w.dilation;
  return ctx.b().Slice(xp, {{0, p.x[0], 1},
                            {oi, oi + (w.h.out - 1) * w.h.stride + 1, w.h.stride},
                            {oj, oj + (w.w.out - 1) * w.w.stride + 1, w.w.stride},
                            {0, p.x[3], 1}});
}

// Past this size the filter gradient's patches are not built; each tap makes its own GEMM.
constexpr int64_t kMaxPatchBytes = int64_t{128} << 20;

// The patches (each output position's window of input values, [N*OH*OW, KH*KW*C]) times
// out_backprop [N*OH*OW, O] in one GEMM; when the patches would pass kMaxPatchBytes, and for
// depthwise filters, per filter tap: the tap's input values contracted with out_backprop over
// (N, OH, OW) (depthwise: multiplied channel by channel and summed); in f32 for 16-bit types; the
// taps concatenated into [KH, KW, C, O] (depthwise [KH, KW, C, M]).
absl::Status LowerConvBackpropFilter(LoweringContext& ctx, const tf::Node& node) {
  const bool depthwise = node.op() == "DepthwiseConv2dNativeBackpropFilter";
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> fsizes, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * dy, ctx.Input(node, 2));
  if (fsizes.size() != 4) return InvalidArgument("filter_sizes must have 4 entries");
  TFJIT_ASSIGN_OR_RETURN(
      ConvGradPlan p, PlanConvGrad(node, x->shape().dims(), fsizes, dy->shape().dims(), depthwise));
  const DType t = x->shape().element_type();
  if (AnyZero(fsizes) || AnyZero(p.x) || p.w.h.out == 0 || p.w.w.out == 0) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(t, 0.0, fsizes));
    ctx.SetOutput(node, 0, zeros);
    return absl::OkStatus();
  }
  TFJIT_ASSIGN_OR_RETURN(x, ToNhwc(ctx, x, p.nchw));
  TFJIT_ASSIGN_OR_RETURN(dy, ToNhwc(ctx, dy, p.nchw));
  const DType ct = Is16BitFloat(t) ? DType::kFloat32 : t;
  if (ct != t) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, ct));
    TFJIT_ASSIGN_OR_RETURN(dy, ctx.b().Convert(dy, ct));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(ct, 0.0, {}));
  hlo::Attributes pad;
  pad.padding = {{0, 0, 0},
                 {p.w.h.pad_before, p.w.h.pad_after, 0},
                 {p.w.w.pad_before, p.w.w.pad_after, 0},
                 {0, 0, 0}};
  TFJIT_ASSIGN_OR_RETURN(Instruction * xp, ctx.b().Add(Opcode::kPad, {x, zero}, pad));
  const int64_t c = p.x[3], m = fsizes[3];
  const std::vector<int64_t> split = {p.x[0], p.w.h.out, p.w.w.out, c, m};
  Instruction* dy_split = nullptr;
  if (depthwise) {
    TFJIT_ASSIGN_OR_RETURN(dy_split, ctx.b().Reshape(dy, split));
  }
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, ct);
  // Rows of the GEMMs below: every output position of every example.
  const int64_t rows = p.x[0] * p.w.h.out * p.w.w.out;
  Instruction* dy_rows = nullptr;
  if (!depthwise) {
    TFJIT_ASSIGN_OR_RETURN(dy_rows, ctx.b().Reshape(dy, {rows, m}));
  }
  const int64_t taps_count = p.w.h.k * p.w.w.k;
  const int64_t patch_bytes = rows * taps_count * c * static_cast<int64_t>(DTypeSize(ct));
  if (!depthwise && taps_count > 1 && patch_bytes <= kMaxPatchBytes) {
    // One GEMM: the patches transposed, [KH*KW*C, rows] (im2col in the filter's (kh, kw, c)
    // order; each tap's input values transposed to [C, rows] and stacked along the major
    // dim, so the copy's inner loop runs along one tap's rows), times dy [rows, O].
    std::vector<Instruction*> cols;
    for (int64_t i = 0; i < p.w.h.k; ++i) {
      for (int64_t j = 0; j < p.w.w.k; ++j) {
        TFJIT_ASSIGN_OR_RETURN(Instruction * xt, TapInput(ctx, xp, p, i, j));
        TFJIT_ASSIGN_OR_RETURN(xt, ctx.b().Transpose(xt, {3, 0, 1, 2}));
        TFJIT_ASSIGN_OR_RETURN(xt, ctx.b().Reshape(xt, {c, rows}));
        cols.push_back(xt);
      }
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * patches, ctx.b().Concatenate(cols, 0));
    hlo::DotDims dd;
    dd.lhs_contracting = {1};
    dd.rhs_contracting = {0};
    TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Dot(patches, dy_rows, dd));
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, fsizes));
    if (ct != t) {
      TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
    }
    ctx.SetOutput(node, 0, r);
    return absl::OkStatus();
  }
  std::vector<Instruction*> taps;
  for (int64_t i = 0; i < p.w.h.k; ++i) {
    for (int64_t j = 0; j < p.w.w.k; ++j) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * xt, TapInput(ctx, xp, p, i, j));
      Instruction* g = nullptr;
      if (depthwise) {
        TFJIT_ASSIGN_OR_RETURN(Instruction * xb, ctx.b().Broadcast(xt, split, {0, 1, 2, 3}));
        TFJIT_ASSIGN_OR_RETURN(Instruction * prod, ctx.b().Binary(Opcode::kMultiply, xb, dy_split));
        TFJIT_ASSIGN_OR_RETURN(g, ctx.b().Reduce(prod, zero, {0, 1, 2}, add));
      } else {  // the tap's [rows, C]^T x dy [rows, O], a GEMM
        TFJIT_ASSIGN_OR_RETURN(xt, ctx.b().Reshape(xt, {rows, c}));
        hlo::DotDims dd;
        dd.lhs_contracting = {0};
        dd.rhs_contracting = {0};
        TFJIT_ASSIGN_OR_RETURN(g, ctx.b().Dot(xt, dy_rows, dd));
      }
      TFJIT_ASSIGN_OR_RETURN(g, ctx.b().Reshape(g, {1, fsizes[2], fsizes[3]}));
      taps.push_back(g);
    }
  }
  Instruction* r = taps[0];
  if (taps.size() > 1) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Concatenate(taps, 0));
  }
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, fsizes));
  if (ct != t) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Per filter tap: out_backprop [N, OH, OW, C, M] times the tap's filter [C, M], summed over M,
// placed back at the input positions the tap reads (ScatterTap) and summed over taps.
absl::Status LowerDepthwiseBackpropInput(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ctx.ConstantInputAsInts(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * f, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * dy, ctx.Input(node, 2));
  if (sizes.size() != 4) return InvalidArgument("input_sizes must have 4 entries");
  TFJIT_ASSIGN_OR_RETURN(ConvGradPlan p,
                         PlanConvGrad(node, sizes, f->shape().dims(), dy->shape().dims(), true));
  const DType t = f->shape().element_type();
  Instruction* r = nullptr;
  if (AnyZero(p.x) || AnyZero(f->shape().dims()) || p.w.h.out == 0 || p.w.w.out == 0) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.Splat(t, 0.0, p.x));
  } else {
    TFJIT_ASSIGN_OR_RETURN(dy, ToNhwc(ctx, dy, p.nchw));
    const DType ct = Is16BitFloat(t) ? DType::kFloat32 : t;
    if (ct != t) {
      TFJIT_ASSIGN_OR_RETURN(dy, ctx.b().Convert(dy, ct));
      TFJIT_ASSIGN_OR_RETURN(f, ctx.b().Convert(f, ct));
    }
    const int64_t c = p.x[3], m = f->shape().dim(3);
    const std::vector<int64_t> split = {p.x[0], p.w.h.out, p.w.w.out, c, m};
    TFJIT_ASSIGN_OR_RETURN(Instruction * dy_split, ctx.b().Reshape(dy, split));
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(ct, 0.0, {}));
    hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, ct);
    TFJIT_ASSIGN_OR_RETURN(
        r, SumTaps(ctx, ct, p.w, p.x, [&](int64_t i, int64_t j) -> absl::StatusOr<Instruction*> {
          TFJIT_ASSIGN_OR_RETURN(
              Instruction * ft,
              ctx.b().Slice(f, {{i, i + 1, 1}, {j, j + 1, 1}, {0, c, 1}, {0, m, 1}}));
          TFJIT_ASSIGN_OR_RETURN(ft, ctx.b().Reshape(ft, {c, m}));
          TFJIT_ASSIGN_OR_RETURN(Instruction * fb, ctx.b().Broadcast(ft, split, {3, 4}));
          TFJIT_ASSIGN_OR_RETURN(Instruction * prod,
                                 ctx.b().Binary(Opcode::kMultiply, dy_split, fb));
          return ctx.b().Reduce(prod, zero, {4}, add);
        }));
    if (ct != t) {
      TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
    }
  }
  if (p.nchw) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Transpose(r, {0, 3, 1, 2}));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- ResizeBilinearGrad, ResizeNearestNeighborGrad ----

// (The fallback kernel's source-row rules, gradients_kernels.cc.)
// One resized coordinate's two source rows (or columns) and the upper one's weight: TF's
// compute_interpolation_weights (legacy or half-pixel scaler), in float.
struct LerpTaps {
  int64_t lower = 0, upper = 0;
  float lerp = 0;
};
std::vector<LerpTaps> BilinearTaps(int64_t in, int64_t out, bool align, bool half_pixel) {
  const float scale = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                         : static_cast<float>(in) / static_cast<float>(out);
  std::vector<LerpTaps> r(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const float src =
        half_pixel ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
    const float f = std::floor(src);
    r[static_cast<size_t>(i)] = {std::max<int64_t>(static_cast<int64_t>(f), 0),
                                 std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1),
                                 src - f};
  }
  return r;
}

// The source row of each of `out` resized rows for nearest-neighbour resizing of `in` rows.
std::vector<int64_t> NearestTaps(int64_t in, int64_t out, bool align, bool half_pixel) {
  const float scale = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                         : static_cast<float>(in) / static_cast<float>(out);
  std::vector<int64_t> r(static_cast<size_t>(out));
  for (int64_t x = 0; x < out; ++x) {
    const float src =
        half_pixel ? (static_cast<float>(x) + 0.5f) * scale : static_cast<float>(x) * scale;
    int64_t i =
        align ? static_cast<int64_t>(std::round(src)) : static_cast<int64_t>(std::floor(src));
    i = std::min(i, in - 1);
    if (half_pixel) i = std::max<int64_t>(i, 0);
    r[static_cast<size_t>(x)] = i;
  }
  return r;
}

// Both resize gradients are separable linear maps: out = Wy^T . grads . Wx with constant
// [resized, original] weight matrices, two dots over the resized H and W.
absl::StatusOr<Instruction*> ApplyResizeWeights(LoweringContext& ctx, Instruction* g,
                                                const Tensor& wy, const Tensor& wx) {
  Instruction* my = ctx.b().Constant(hlo::Literal::FromTensor(wy));
  Instruction* mx = ctx.b().Constant(hlo::Literal::FromTensor(wx));
  hlo::DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {0};
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.b().Dot(g, my, d));  // [N, OW, C, H]
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ctx.b().Dot(a, mx, d));  // [N, C, H, W]
  return ctx.b().Transpose(b, {0, 2, 3, 1});
}

absl::Status ResizeGradFlags(const tf::Node& node, bool* align, bool* half_pixel) {
  TFJIT_ASSIGN_OR_RETURN(*align, tf::GetBoolAttrOr(node, "align_corners", false));
  TFJIT_ASSIGN_OR_RETURN(*half_pixel, tf::GetBoolAttrOr(node, "half_pixel_centers", false));
  if (*align && *half_pixel) {
    return InvalidArgument("If half_pixel_centers is True, align_corners must be False.");
  }
  return absl::OkStatus();
}

absl::Status LowerResizeBilinearGrad(LoweringContext& ctx, const tf::Node& node) {
  bool align = false, half_pixel = false;
  TFJIT_RETURN_IF_ERROR(ResizeGradFlags(node, &align, &half_pixel));
  TFJIT_ASSIGN_OR_RETURN(Instruction * g, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * image, ctx.Input(node, 1));
  const std::vector<int64_t>& gd = g->shape().dims();
  const std::vector<int64_t>& id = image->shape().dims();
  if (gd.size() != 4 || id.size() != 4 || gd[0] != id[0] || gd[3] != id[3]) {
    return InvalidArgument(
        "input_grad %s and original_image %s must be 4-dimensional with the "
        "same batch and channel sizes",
        g->shape().ToString(), image->shape().ToString());
  }
  const DType t = image->shape().element_type();
  if (AnyZero(gd) || AnyZero(id)) {
    if (!AnyZero(gd)) {
      return InvalidArgument("original_image %s is empty but input_grad %s is not",
                             image->shape().ToString(), g->shape().ToString());
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(t, 0.0, id));
    ctx.SetOutput(node, 0, zeros);
    return absl::OkStatus();
  }
  const DType ct = t == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  auto weights = [&](int64_t in, int64_t out) {
    Tensor m(DType::kFloat64, {out, in});
    const std::vector<LerpTaps> taps = BilinearTaps(in, out, align, half_pixel);
    for (int64_t i = 0; i < out; ++i) {
      const LerpTaps& tap = taps[static_cast<size_t>(i)];
      m.data<double>()[i * in + tap.lower] += 1.0f - tap.lerp;
      m.data<double>()[i * in + tap.upper] += tap.lerp;
    }
    return ct == DType::kFloat64 ? m : [&] {
      Tensor f(DType::kFloat32, m.dims());
      for (int64_t k = 0; k < m.num_elements(); ++k)
        f.data<float>()[k] = static_cast<float>(m.data<double>()[k]);
      return f;
    }();
  };
  if (ct != DType::kFloat32) {
    TFJIT_ASSIGN_OR_RETURN(g, ctx.b().Convert(g, ct));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                         ApplyResizeWeights(ctx, g, weights(id[1], gd[1]), weights(id[2], gd[2])));
  if (t != ct) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerResizeNearestGrad(LoweringContext& ctx, const tf::Node& node) {
  bool align = false, half_pixel = false;
  TFJIT_RETURN_IF_ERROR(ResizeGradFlags(node, &align, &half_pixel));
  TFJIT_ASSIGN_OR_RETURN(Instruction * g, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ctx.ConstantInputAsInts(node, 1));
  const std::vector<int64_t>& gd = g->shape().dims();
  if (gd.size() != 4 || size.size() != 2 || size[0] < 0 || size[1] < 0) {
    return InvalidArgument(
        "grads must be 4-dimensional and size hold 2 non-negative values, "
        "got %s and [%s]",
        g->shape().ToString(), absl::StrJoin(size, ","));
  }
  const std::vector<int64_t> out = {gd[0], size[0], size[1], gd[3]};
  const DType t = g->shape().element_type();
  if (AnyZero(gd) || AnyZero(out)) {
    if (!AnyZero(gd)) {
      return InvalidArgument("size [%d, %d] is empty but the gradient %s is not", size[0], size[1],
                             g->shape().ToString());
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(t, 0.0, out));
    ctx.SetOutput(node, 0, zeros);
    return absl::OkStatus();
  }
  const DType ct = Is16BitFloat(t) ? DType::kFloat32 : t;
  auto onehot = [&](int64_t in, int64_t n) {
    const std::vector<int64_t> src = NearestTaps(in, n, align, half_pixel);
    Tensor m(DType::kFloat64, {n, in});
    for (int64_t i = 0; i < n; ++i) m.data<double>()[i * in + src[static_cast<size_t>(i)]] = 1;
    Tensor typed(ct, m.dims());
    DispatchNumeric(ct, [&](auto tag) {
      using T = decltype(tag);
      for (int64_t k = 0; k < m.num_elements(); ++k) {
        typed.data<T>()[k] = static_cast<T>(m.data<double>()[k]);
      }
    });
    return typed;
  };
  if (ct != t) {
    TFJIT_ASSIGN_OR_RETURN(g, ctx.b().Convert(g, ct));
  }
  TFJIT_ASSIGN_OR_RETURN(
      Instruction * r, ApplyResizeWeights(ctx, g, onehot(size[0], gd[1]), onehot(size[1], gd[2])));
  if (ct != t) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- MaxPoolGradGrad / V2 ----

// Per tap, the input values and the (zero-padded) grad values the tap reads; each output takes
// grad at the first tap equal to the window max (a select chain built from the last tap back),
// as TF's CPU kernel (first cell equal to orig_output) and XLA agree on ties.
absl::Status LowerMaxPoolGradGrad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * orig_out, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * grad, ctx.Input(node, 2));
  for (Instruction* v : {x, orig_out, grad}) {
    if (v->shape().rank() != 4) {
      return InvalidArgument(
          "tensor_in, tensor_out and out_grad_backprop must be 4-dimensional, "
          "got %s",
          v->shape().ToString());
    }
  }
  if (grad->shape().dims() != x->shape().dims()) {
    return InvalidArgument("Expected grad shape to be %s, but got %s", x->shape().ToString(),
                           grad->shape().ToString());
  }
  bool nchw = false;
  std::vector<int64_t> in;
  TFJIT_ASSIGN_OR_RETURN(tf::Window2D w,
                         PoolGradGeometry(ctx, node, x->shape().dims(), &nchw, &in));
  TFJIT_ASSIGN_OR_RETURN(orig_out, ToNhwc(ctx, orig_out, nchw));
  TFJIT_RETURN_IF_ERROR(CheckGradShape(orig_out, in, w));
  TFJIT_ASSIGN_OR_RETURN(x, ToNhwc(ctx, x, nchw));
  TFJIT_ASSIGN_OR_RETURN(grad, ToNhwc(ctx, grad, nchw));
  const DType t = x->shape().element_type();
  const std::vector<int64_t> out_dims = {in[0], w.h.out, w.w.out, in[3]};
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.Splat(t, 0.0, out_dims));
  if (w.h.out > 0 && w.w.out > 0 && in[0] > 0 && in[3] > 0) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * low, ctx.Splat(t, LowestValue(t), {}));
    hlo::Attributes attrs;
    attrs.padding = {{0, 0, 0},
                     {w.h.pad_before, w.h.pad_after, 0},
                     {w.w.pad_before, w.w.pad_after, 0},
                     {0, 0, 0}};
    TFJIT_ASSIGN_OR_RETURN(Instruction * xp, ctx.b().Add(Opcode::kPad, {x, low}, attrs));
    TFJIT_ASSIGN_OR_RETURN(Instruction * gp, PadWithZeros(ctx, grad, attrs.padding));
    std::vector<Instruction*> xt, gt;
    Instruction* mx = nullptr;
    for (int64_t i = 0; i < w.h.k; ++i) {
      for (int64_t j = 0; j < w.w.k; ++j) {
        const std::vector<hlo::SliceDim> sl = {{0, in[0], 1},
                                               {i, i + (w.h.out - 1) * w.h.stride + 1, w.h.stride},
                                               {j, j + (w.w.out - 1) * w.w.stride + 1, w.w.stride},
                                               {0, in[3], 1}};
        TFJIT_ASSIGN_OR_RETURN(Instruction * v, ctx.b().Slice(xp, sl));
        TFJIT_ASSIGN_OR_RETURN(Instruction * g, ctx.b().Slice(gp, sl));
        xt.push_back(v);
        gt.push_back(g);
        if (mx == nullptr) {
          mx = v;
        } else {
          TFJIT_ASSIGN_OR_RETURN(mx, ctx.b().Binary(Opcode::kMaximum, mx, v));
        }
      }
    }
    for (size_t k = xt.size(); k-- > 0;) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * hit,
                             ctx.b().Compare(ComparisonDirection::kEq, xt[k], mx));
      TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Select(hit, gt[k], r));
    }
  }
  if (nchw) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Transpose(r, {0, 3, 1, 2}));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- LRNGrad ----

// tf2xla's form of TF's formula (see gradients_kernels.cc), in f32: with
// norm = bias + alpha * window-sum(input^2), output = input_grads * norm^-beta -
// 2 * alpha * beta * input * window-sum(input_grads * output_image / norm); the windows span
// depth_radius on either side in depth (zero-padded).
absl::Status LowerLrnGrad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * dy, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y, ctx.Input(node, 2));
  const hlo::Shape& s = dy->shape();
  if (s.rank() != 4 || x->shape().rank() != 4) {
    return InvalidArgument("inputs must be 4-dimensional, got %s and %s", s.ToString(),
                           x->shape().ToString());
  }
  if (x->shape().dims() != s.dims() || y->shape().dims() != s.dims()) {
    return InvalidArgument(
        "input_grads, input_image, and out_image should have the same shape, "
        "got %s, %s and %s",
        s.ToString(), x->shape().ToString(), y->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(int64_t radius, tf::GetIntAttrOr(node, "depth_radius", 5));
  TFJIT_ASSIGN_OR_RETURN(float bias, tf::GetFloatAttrOr(node, "bias", 1.0f));
  TFJIT_ASSIGN_OR_RETURN(float alpha, tf::GetFloatAttrOr(node, "alpha", 1.0f));
  TFJIT_ASSIGN_OR_RETURN(float beta, tf::GetFloatAttrOr(node, "beta", 0.5f));
  if (radius < 0 || radius > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("depth_radius = %d larger than int max or negative", radius);
  }
  const DType t = s.element_type();
  const DType f = DType::kFloat32;
  const std::vector<int64_t> dims = s.dims();
  TFJIT_ASSIGN_OR_RETURN(dy, ctx.b().Convert(dy, f));
  TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, f));
  TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Convert(y, f));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(f, 0.0, {}));
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, f);
  auto window_sum = [&](Instruction* v) -> absl::StatusOr<Instruction*> {
    hlo::Attributes attrs;
    attrs.window.resize(4);
    attrs.window[3].size = 2 * radius + 1;
    attrs.window[3].pad_lo = radius;
    attrs.window[3].pad_hi = radius;
    return ctx.b().Add(Opcode::kReduceWindow, {v, zero}, std::move(attrs), {add});
  };
  auto op = [&](Opcode o, Instruction* a, Instruction* b) { return ctx.b().Binary(o, a, b); };
  TFJIT_ASSIGN_OR_RETURN(Instruction * sq, op(Opcode::kMultiply, x, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum, window_sum(sq));
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Splat(f, alpha, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ctx.Splat(f, bias, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * nb, ctx.Splat(f, -beta, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * k, ctx.Splat(f, -2.0 * alpha * beta, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * scaled, op(Opcode::kMultiply, sum, a));
  TFJIT_ASSIGN_OR_RETURN(Instruction * norm, op(Opcode::kAdd, scaled, b));
  TFJIT_ASSIGN_OR_RETURN(Instruction * gy, op(Opcode::kMultiply, dy, y));
  TFJIT_ASSIGN_OR_RETURN(Instruction * gyn, op(Opcode::kDivide, gy, norm));
  TFJIT_ASSIGN_OR_RETURN(Instruction * red, window_sum(gyn));
  TFJIT_ASSIGN_OR_RETURN(Instruction * kx, op(Opcode::kMultiply, k, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * cross, op(Opcode::kMultiply, kx, red));
  TFJIT_ASSIGN_OR_RETURN(Instruction * pw, op(Opcode::kPower, norm, nb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * direct, op(Opcode::kMultiply, dy, pw));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, op(Opcode::kAdd, direct, cross));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

}  // namespace

void AppendGradientsWindowLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(),
                {
                    {"AvgPoolGrad", LowerAvgPoolGrad, true},
                    {"MaxPoolGrad", LowerMaxPoolGrad},
                    {"MaxPoolGradV2", LowerMaxPoolGrad},
                    {"FusedBatchNormGrad", LowerFusedBatchNormGrad, true},
                    {"Conv2DBackpropFilter", LowerConvBackpropFilter, true},
                    {"ResizeBilinearGrad", LowerResizeBilinearGrad, true},
                    {"ResizeNearestNeighborGrad", LowerResizeNearestGrad},
                    {"DepthwiseConv2dNativeBackpropFilter", LowerConvBackpropFilter, true},
                    {"DepthwiseConv2dNativeBackpropInput", LowerDepthwiseBackpropInput, true},
                    {"FusedBatchNormGradV2", LowerFusedBatchNormGrad, true},
                    {"FusedBatchNormGradV3", LowerFusedBatchNormGrad, true},
                    {"MaxPoolGradGrad", LowerMaxPoolGradGrad},
                    {"MaxPoolGradGradV2", LowerMaxPoolGradGrad},
                    {"LRNGrad", LowerLrnGrad, true},
                });
  AppendGradients3dLowerings(table);  // gradients_3d_lowerings.cc
}

}  // namespace tfjit::tf2hlo
