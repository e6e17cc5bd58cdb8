// Lowerings of the 3-D window gradients (the gradients family, docs/DESIGN.md "Op families")
// with the semantics of TF's XLA kernels (tf2xla): AvgPool3DGrad, MaxPool3DGrad and
// Conv3DBackpropFilterV2 built per window tap from slices and interior padding, and
// Conv3DBackpropInputV2 as an lhs-dilated convolution. The 2-D ones are in
// gradients_window_lowerings.cc.
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

bool AnyZero(const std::vector<int64_t>& d) { return std::find(d.begin(), d.end(), 0) != d.end(); }

// The geometry of a 3-D window node over an input of `x_dims` (node layout), channels-last
// (the same checks as the fallback kernel's Window3DOf): `k` is the pool's ksize (node layout)
// or the filter's three spatial sizes.
struct Plan3D {
  std::vector<tf::SpatialDim> d;  // D, H, W
  std::vector<int64_t> x;         // NDHWC
  bool ncdhw = false;
  std::vector<int64_t> OutDims(int64_t c) const { return {x[0], d[0].out, d[1].out, d[2].out, c}; }
  bool Empty() const { return AnyZero(x) || d[0].out == 0 || d[1].out == 0 || d[2].out == 0; }
};

std::vector<int64_t> ChannelsLast5(std::vector<int64_t> v) {
  if (v.size() == 5) std::rotate(v.begin() + 1, v.begin() + 2, v.end());
  return v;
}

absl::StatusOr<Plan3D> PlanWindow3D(const tf::Node& node, const std::vector<int64_t>& x_dims,
                                    bool pool, std::vector<int64_t> k) {
  Plan3D p;
  TFJIT_ASSIGN_OR_RETURN(std::string format, tf::GetStringAttrOr(node, "data_format", "NDHWC"));
  if (format != "NDHWC" && format != "NCDHW")
    return InvalidArgument("Invalid data format: %s", format);
  p.ncdhw = format == "NCDHW";
  if (x_dims.size() != 5) {
    return InvalidArgument("input must be 5-dimensional, got [%s]", absl::StrJoin(x_dims, ","));
  }
  p.x = p.ncdhw ? ChannelsLast5(x_dims) : x_dims;
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, tf::GetIntListAttr(node, "strides"));
  std::vector<int64_t> dil(5, 1);
  if (!pool && tf::FindAttr(node, "dilations") != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(dil, tf::GetIntListAttr(node, "dilations"));
  }
  if (strides.size() != 5) {
    return InvalidArgument("Sliding window %s field must specify 5 dimensions",
                           pool ? "stride" : "strides");
  }
  if (dil.size() != 5) return InvalidArgument("Dilation rates field must specify 5 dimensions");
  if (pool) {
    if (k.size() != 5)
      return InvalidArgument("Sliding window ksize field must specify 5 dimensions");
    if (p.ncdhw) k = ChannelsLast5(k);
  }
  if (p.ncdhw) {
    strides = ChannelsLast5(strides);
    dil = ChannelsLast5(dil);
  }
  if (pool && (k[0] != 1 || strides[0] != 1)) {
    return InvalidArgument("Pooling is not yet supported on the batch dimension.");
  }
  if (pool && (k[4] != 1 || strides[4] != 1)) {
    return InvalidArgument("%s is not yet supported on the depth dimension.",
                           node.op() == "MaxPool3DGrad" ? "MaxPooling3d" : "Pooling");
  }
  if (!pool && (strides[0] != 1 || strides[4] != 1 || dil[0] != 1 || dil[4] != 1)) {
    return InvalidArgument(
        "Current implementation does not yet support strides or dilations "
        "in the batch and depth dimensions.");
  }
  TFJIT_ASSIGN_OR_RETURN(std::string padding, tf::GetStringAttr(node, "padding"));
  if (padding != "SAME" && padding != "VALID") {
    return InvalidArgument("padding must be SAME or VALID, got '%s'", padding);
  }
  tf::WindowAttrs a;
  a.padding = padding == "SAME" ? tf::Padding::kSame : tf::Padding::kValid;
  a.strides = strides;
  a.dilations = dil;
  a.explicit_paddings.assign(10, 0);
  for (int d = 1; d <= 3; ++d) {
    const size_t i = static_cast<size_t>(d);
    const int64_t kd = pool ? k[i] : k[i - 1];
    if (kd <= 0 || strides[i] <= 0 || dil[i] <= 0) {
      return InvalidArgument("window sizes, strides and dilations must be positive");
    }
    TFJIT_ASSIGN_OR_RETURN(tf::SpatialDim s, tf::ComputeSpatialDim(node, a, d, p.x[i], kd));
    p.d.push_back(s);
  }
  return p;
}

absl::StatusOr<Instruction*> ToNdhwc(LoweringContext& ctx, Instruction* x, bool ncdhw) {
  if (!ncdhw) return x;
  return ctx.b().Transpose(x, {0, 2, 3, 4, 1});
}
absl::StatusOr<Instruction*> FromNdhwc(LoweringContext& ctx, Instruction* x, bool ncdhw) {
  if (!ncdhw) return x;
  return ctx.b().Transpose(x, {0, 4, 1, 2, 3});
}

// The three tap offsets of flat tap t.
std::vector<int64_t> Tap3D(const Plan3D& p, int64_t t) {
  return {t / (p.d[1].k * p.d[2].k), (t / p.d[2].k) % p.d[1].k, t % p.d[2].k};
}
int64_t NumTaps3D(const Plan3D& p) { return p.d[0].k * p.d[1].k * p.d[2].k; }

// What tap `tap` reads from the padded input `xp` [N, Dp, Hp, Wp, C]: [N, D', H', W', C].
absl::StatusOr<Instruction*> TapSlice3D(LoweringContext& ctx, Instruction* xp, const Plan3D& p,
                                        const std::vector<int64_t>& tap, int64_t channels) {
  std::vector<hlo::SliceDim> sl = {{0, p.x[0], 1}};
  for (size_t i = 0; i < 3; ++i) {
    const tf::SpatialDim& s = p.d[i];
    const int64_t o = tap[i] * s.dilation;
    sl.push_back({o, o + (s.out - 1) * s.stride + 1, s.stride});
  }
  sl.push_back({0, channels, 1});
  return ctx.b().Slice(xp, sl);
}

std::vector<hlo::PadDim> Pads3D(const Plan3D& p) {
  return {{0, 0, 0},
          {p.d[0].pad_before, p.d[0].pad_after, 0},
          {p.d[1].pad_before, p.d[1].pad_after, 0},
          {p.d[2].pad_before, p.d[2].pad_after, 0},
          {0, 0, 0}};
}

// Values v [N, D', H', W', C] put back at the input cells tap `tap` reads, zero elsewhere:
// [N, D, H, W, C].
absl::StatusOr<Instruction*> ScatterTap3D(LoweringContext& ctx, Instruction* v, const Plan3D& p,
                                          const std::vector<int64_t>& tap) {
  std::vector<hlo::PadDim> pads(5);
  std::vector<hlo::SliceDim> sl = {{0, p.x[0], 1}};
  for (size_t i = 0; i < 3; ++i) {
    const tf::SpatialDim& s = p.d[i];
    const int64_t padded = s.in + s.pad_before + s.pad_after;
    const int64_t o = tap[i] * s.dilation;
    pads[i + 1] = {o, padded - (o + (s.out - 1) * s.stride + 1), s.stride - 1};
    sl.push_back({s.pad_before, s.pad_before + s.in, 1});
  }
  sl.push_back({0, p.x[4], 1});
  TFJIT_ASSIGN_OR_RETURN(Instruction * padded, PadWithZeros(ctx, v, pads));
  return ctx.b().Slice(padded, sl);
}

// AvgPool3DGrad: each gradient divided by its window's in-bounds count (a constant), added back
// at every tap.
absl::Status LowerAvgPool3DGrad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.ConstantInputAsInts(node, 0));
  if (shape.size() != 5) {
    return InvalidArgument("orig_input_shape must be 1-dimensional and 5 elements, got %d",
                           shape.size());
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, tf::GetIntListAttr(node, "ksize"));
  TFJIT_ASSIGN_OR_RETURN(Plan3D p, PlanWindow3D(node, shape, true, ksize));
  TFJIT_ASSIGN_OR_RETURN(Instruction * grad, ctx.Input(node, 1));
  if (grad->shape().rank() != 5) return InvalidArgument("grad must be 5-dimensional");
  TFJIT_ASSIGN_OR_RETURN(grad, ToNdhwc(ctx, grad, p.ncdhw));
  if (grad->shape().dims() != p.OutDims(p.x[4])) {
    return InvalidArgument("grad has shape %s but the pool's output shape is [%s] (NDHWC)",
                           grad->shape().ToString(), absl::StrJoin(p.OutDims(p.x[4]), ","));
  }
  const DType t = grad->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.Splat(t, 0.0, p.x));
  if (!p.Empty()) {
    const std::vector<int64_t> so = {p.d[0].out, p.d[1].out, p.d[2].out};
    Tensor counts(DType::kFloat64, so);
    auto extent = [](const tf::SpatialDim& d, int64_t o) {
      const int64_t s = o * d.stride - d.pad_before;
      return std::max<int64_t>(0, std::min(s + d.k, d.in) - std::max<int64_t>(s, 0));
    };
    for (int64_t a = 0; a < so[0]; ++a) {
      for (int64_t b = 0; b < so[1]; ++b) {
        for (int64_t c = 0; c < so[2]; ++c) {
          const int64_t n = extent(p.d[0], a) * extent(p.d[1], b) * extent(p.d[2], c);
          counts.data<double>()[(a * so[1] + b) * so[2] + c] =
              static_cast<double>(std::max<int64_t>(n, 1));
        }
      }
    }
    Instruction* cnt = ctx.b().Constant(hlo::Literal::FromTensor(counts));
    TFJIT_ASSIGN_OR_RETURN(cnt, ctx.b().Convert(cnt, t));
    TFJIT_ASSIGN_OR_RETURN(cnt, ctx.b().Broadcast(cnt, grad->shape().dims(), {1, 2, 3}));
    TFJIT_ASSIGN_OR_RETURN(Instruction * share, ctx.b().Binary(Opcode::kDivide, grad, cnt));
    for (int64_t t3 = 0; t3 < NumTaps3D(p); ++t3) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * v, ScatterTap3D(ctx, share, p, Tap3D(p, t3)));
      TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kAdd, r, v));
    }
  }
  TFJIT_ASSIGN_OR_RETURN(r, FromNdhwc(ctx, r, p.ncdhw));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// MaxPool3DGrad: per tap the input values it reads (padded with the lowest value), the window
// max, and each gradient scattered back at the first tap equal to the max (XLA's
// select-and-scatter order; TF's CPU kernel credits every tied cell).
absl::Status LowerMaxPool3DGrad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * orig_out, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * grad, ctx.Input(node, 2));
  for (Instruction* v : {x, orig_out, grad}) {
    if (v->shape().rank() != 5) {
      return InvalidArgument("orig_input, orig_output and grad must be 5-dimensional, got %s",
                             v->shape().ToString());
    }
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, tf::GetIntListAttr(node, "ksize"));
  TFJIT_ASSIGN_OR_RETURN(Plan3D p, PlanWindow3D(node, x->shape().dims(), true, ksize));
  const std::vector<int64_t> out_dims = p.OutDims(p.x[4]);
  TFJIT_ASSIGN_OR_RETURN(x, ToNdhwc(ctx, x, p.ncdhw));
  TFJIT_ASSIGN_OR_RETURN(orig_out, ToNdhwc(ctx, orig_out, p.ncdhw));
  TFJIT_ASSIGN_OR_RETURN(grad, ToNdhwc(ctx, grad, p.ncdhw));
  for (Instruction* v : {orig_out, grad}) {
    if (v->shape().dims() != out_dims) {
      return InvalidArgument(
          "orig_output and grad must have the pool's output shape [%s] "
          "(NDHWC), got %s",
          absl::StrJoin(out_dims, ","), v->shape().ToString());
    }
  }
  const DType t = grad->shape().element_type();
  const DType xt = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.Splat(t, 0.0, p.x));
  if (!p.Empty()) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * low, ctx.Splat(xt, LowestValue(xt), {}));
    hlo::Attributes attrs;
    attrs.padding = Pads3D(p);
    TFJIT_ASSIGN_OR_RETURN(Instruction * xp, ctx.b().Add(Opcode::kPad, {x, low}, attrs));
    std::vector<Instruction*> taps;
    Instruction* mx = nullptr;
    for (int64_t k = 0; k < NumTaps3D(p); ++k) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * v, TapSlice3D(ctx, xp, p, Tap3D(p, k), p.x[4]));
      taps.push_back(v);
      if (mx == nullptr) {
        mx = v;
      } else {
        TFJIT_ASSIGN_OR_RETURN(mx, ctx.b().Binary(Opcode::kMaximum, mx, v));
      }
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, out_dims));
    Instruction* taken = nullptr;
    for (int64_t k = 0; k < NumTaps3D(p); ++k) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * hit, ctx.b().Compare(ComparisonDirection::kEq,
                                                                taps[static_cast<size_t>(k)], mx));
      Instruction* first = hit;
      if (taken != nullptr) {
        TFJIT_ASSIGN_OR_RETURN(Instruction * not_taken, ctx.b().Unary(Opcode::kNot, taken));
        TFJIT_ASSIGN_OR_RETURN(first, ctx.b().Binary(Opcode::kAnd, hit, not_taken));
        TFJIT_ASSIGN_OR_RETURN(taken, ctx.b().Binary(Opcode::kOr, taken, hit));
      } else {
        taken = hit;
      }
      TFJIT_ASSIGN_OR_RETURN(Instruction * g, ctx.b().Select(first, grad, zero));
      TFJIT_ASSIGN_OR_RETURN(Instruction * s, ScatterTap3D(ctx, g, p, Tap3D(p, k)));
      TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kAdd, r, s));
    }
  }
  TFJIT_ASSIGN_OR_RETURN(r, FromNdhwc(ctx, r, p.ncdhw));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Checks a 3-D convolution backprop's filter dims and out_backprop (node layout) against the
// plan.
absl::Status CheckConv3DGrad(const Plan3D& p, const std::vector<int64_t>& f,
                             const std::vector<int64_t>& dy) {
  if (f.size() != 5) return InvalidArgument("filter must be 5-dimensional");
  if (p.x[4] != f[3]) {
    return InvalidArgument("Input depth must be equal to filter depth: %d vs %d", p.x[4], f[3]);
  }
  const std::vector<int64_t> want = p.OutDims(f[4]);
  if (dy.size() != 5 || (p.ncdhw ? ChannelsLast5(dy) : dy) != want) {
    return InvalidArgument(
        "out_backprop has shape [%s] but the convolution's output shape is "
        "[%s] (NDHWC)",
        absl::StrJoin(dy, ","), absl::StrJoin(want, ","));
  }
  return absl::OkStatus();
}

// Conv3DBackpropInputV2: the convolution of out_backprop dilated by the stride (lhs_dilate)
// with the spatially reversed filter, its io swapped, padded e - 1 - p before and
// in - 1 - (out - 1) * s + p after (as Conv2DBackpropInput), in the node's layout.
absl::Status LowerConv3DBackpropInput(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ctx.ConstantInputAsInts(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * f, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * dy, ctx.Input(node, 2));
  if (sizes.size() != 5) return InvalidArgument("input_sizes must be a vector of 5 entries");
  const std::vector<int64_t> fd = f->shape().dims();
  if (fd.size() != 5) return InvalidArgument("filter must be 5-dimensional");
  TFJIT_ASSIGN_OR_RETURN(Plan3D p, PlanWindow3D(node, sizes, false, {fd[0], fd[1], fd[2]}));
  TFJIT_RETURN_IF_ERROR(CheckConv3DGrad(p, fd, dy->shape().dims()));
  const DType t = dy->shape().element_type();
  if (p.Empty() || AnyZero(fd)) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(t, 0.0, sizes));
    ctx.SetOutput(node, 0, zeros);
    return absl::OkStatus();
  }
  hlo::Attributes a;
  for (const tf::SpatialDim& s : p.d) {
    hlo::WindowDim d;
    d.size = s.k;
    d.lhs_dilate = s.stride;
    d.rhs_dilate = s.dilation;
    d.pad_lo = s.effective_k() - 1 - s.pad_before;
    d.pad_hi = s.in - 1 - (s.out - 1) * s.stride + s.pad_before;
    a.window.push_back(d);
  }
  const int64_t feature = p.ncdhw ? 1 : 4, first = p.ncdhw ? 2 : 1;
  hlo::ConvDims& c = a.conv;
  c.input_batch = c.output_batch = 0;
  c.input_feature = c.output_feature = feature;
  c.input_spatial = c.output_spatial = {first, first + 1, first + 2};
  c.kernel_spatial = {0, 1, 2};
  c.kernel_input_feature = 4;
  c.kernel_output_feature = 3;
  TFJIT_ASSIGN_OR_RETURN(Instruction * fr, ReverseDims(ctx, f, {0, 1, 2}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Add(Opcode::kConvolution, {dy, fr}, a));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Conv3DBackpropFilterV2: per filter tap, the input values the tap reads contracted with
// out_backprop over (N, D', H', W') (f32 for 16-bit types), the taps concatenated into
// [KD, KH, KW, C, O].
absl::Status LowerConv3DBackpropFilter(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> fsizes, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * dy, ctx.Input(node, 2));
  if (fsizes.size() != 5) return InvalidArgument("filter_sizes must be a vector of 5 entries");
  TFJIT_ASSIGN_OR_RETURN(
      Plan3D p, PlanWindow3D(node, x->shape().dims(), false, {fsizes[0], fsizes[1], fsizes[2]}));
  TFJIT_RETURN_IF_ERROR(CheckConv3DGrad(p, fsizes, dy->shape().dims()));
  const DType t = x->shape().element_type();
  if (p.Empty() || AnyZero(fsizes)) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(t, 0.0, fsizes));
    ctx.SetOutput(node, 0, zeros);
    return absl::OkStatus();
  }
  TFJIT_ASSIGN_OR_RETURN(x, ToNdhwc(ctx, x, p.ncdhw));
  TFJIT_ASSIGN_OR_RETURN(dy, ToNdhwc(ctx, dy, p.ncdhw));
  const DType ct = Is16BitFloat(t) ? DType::kFloat32 : t;
  if (ct != t) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, ct));
    TFJIT_ASSIGN_OR_RETURN(dy, ctx.b().Convert(dy, ct));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * xp, PadWithZeros(ctx, x, Pads3D(p)));
  std::vector<Instruction*> taps;
  for (int64_t k = 0; k < NumTaps3D(p); ++k) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * xt, TapSlice3D(ctx, xp, p, Tap3D(p, k), p.x[4]));
    hlo::DotDims dd;
    dd.lhs_contracting = {0, 1, 2, 3};
    dd.rhs_contracting = {0, 1, 2, 3};
    TFJIT_ASSIGN_OR_RETURN(Instruction * g, ctx.b().Dot(xt, dy, dd));
    TFJIT_ASSIGN_OR_RETURN(g, ctx.b().Reshape(g, {1, fsizes[3], fsizes[4]}));
    taps.push_back(g);
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

}  // namespace

void AppendGradients3dLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
                                  {"AvgPool3DGrad", LowerAvgPool3DGrad, true},
                                  {"MaxPool3DGrad", LowerMaxPool3DGrad, true},
                                  {"Conv3DBackpropInputV2", LowerConv3DBackpropInput, true},
                                  {"Conv3DBackpropFilterV2", LowerConv3DBackpropFilter, true},
                              });
}

}  // namespace tfjit::tf2hlo
