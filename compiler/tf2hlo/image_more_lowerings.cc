// Lowerings of the image_more ops to HLO (docs/DESIGN.md, "Op families"), with the semantics of
// TF's XLA kernels (tf2xla): ResizeNearestNeighbor as two gathers of compile-time source
// indices (core/image_ops.h, as the kernel), RGBToHSV / HSVToRGB / AdjustHue /
// AdjustSaturation as elementwise HLO on the three channel slices, AdjustContrastv2 as a mean
// over H and W, ExtractImagePatches as pad and strided slices.
#include <string>
#include <vector>

#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/image_ops.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// ---- ResizeNearestNeighbor ----

// x with dim `axis` replaced by x[..., index[k], ...] for each k.
absl::StatusOr<Instruction*> TakeAlong(LoweringContext& ctx, Instruction* x, int64_t axis,
                                       const std::vector<int64_t>& index) {
  Tensor t(DType::kInt32, {static_cast<int64_t>(index.size()), 1});
  for (size_t i = 0; i < index.size(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(index[i]);
  hlo::Attributes attrs;
  hlo::GatherDims& g = attrs.gather;
  g.index_vector_dim = 1;
  g.start_index_map = {axis};
  g.collapsed_slice_dims = {axis};
  g.slice_sizes = x->shape().dims();
  g.slice_sizes[static_cast<size_t>(axis)] = 1;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (d != axis) g.offset_dims.push_back(d);
  }
  Instruction* indices = ctx.b().Constant(hlo::Literal::FromTensor(t));
  return ctx.b().Add(Opcode::kGather, {x, indices}, std::move(attrs));
}

absl::Status LowerResizeNearest(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(bool align, tf::GetBoolAttrOr(node, "align_corners", false));
  TFJIT_ASSIGN_OR_RETURN(bool half_pixel, tf::GetBoolAttrOr(node, "half_pixel_centers", false));
  if (align && half_pixel) {
    return InvalidArgument("node %s: If half_pixel_centers is True, align_corners must be False.",
                           node.DebugName());
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ctx.ConstantInputAsInts(node, 1));
  const hlo::Shape& s = x->shape();
  if (s.rank() != 4 || size.size() != 2 || size[0] <= 0 || size[1] <= 0 || s.dim(1) == 0 ||
      s.dim(2) == 0) {
    return InvalidArgument(
        "node %s: need a non-empty 4-D input and 2 positive output sizes, "
        "got %s and %d sizes",
        node.DebugName(), s.ToString(), size.size());
  }
  TFJIT_ASSIGN_OR_RETURN(
      x, TakeAlong(ctx, x, 1, image::NearestSourceIndices(s.dim(1), size[0], align, half_pixel)));
  TFJIT_ASSIGN_OR_RETURN(
      x, TakeAlong(ctx, x, 2, image::NearestSourceIndices(s.dim(2), size[1], align, half_pixel)));
  ctx.SetOutput(node, 0, x);
  return absl::OkStatus();
}

// ---- Colour ----

struct Channels {
  Instruction* c[3];
};

absl::StatusOr<Channels> SplitChannels(LoweringContext& ctx, const tf::Node& node, Instruction* x) {
  const hlo::Shape& s = x->shape();
  if (s.rank() < 1 || s.dim(s.rank() - 1) != 3) {
    return InvalidArgument("node %s: input must have 3 channels, got %s", node.DebugName(),
                           s.ToString());
  }
  Channels ch;
  for (int64_t k = 0; k < 3; ++k) {
    std::vector<hlo::SliceDim> slice;
    for (int64_t d = 0; d < s.rank(); ++d) {
      slice.push_back(d == s.rank() - 1 ? hlo::SliceDim{k, k + 1, 1}
                                        : hlo::SliceDim{0, s.dim(static_cast<int>(d)), 1});
    }
    TFJIT_ASSIGN_OR_RETURN(ch.c[k], ctx.b().Slice(x, slice));
  }
  return ch;
}

// Elementwise helpers on same-shaped operands.
class Ew {
 public:
  Ew(LoweringContext& ctx, const hlo::Shape& shape) : ctx_(ctx), shape_(shape) {}
  absl::StatusOr<Instruction*> K(double v) {
    return ctx_.Splat(shape_.element_type(), v, shape_.dims());
  }
  absl::StatusOr<Instruction*> Bin(Opcode op, Instruction* a, Instruction* b) {
    return ctx_.b().Binary(op, a, b);
  }
  absl::StatusOr<Instruction*> Cmp(hlo::ComparisonDirection d, Instruction* a, Instruction* b) {
    return ctx_.b().Compare(d, a, b);
  }
  absl::StatusOr<Instruction*> Sel(Instruction* p, Instruction* a, Instruction* b) {
    return ctx_.b().Select(p, a, b);
  }

 private:
  LoweringContext& ctx_;
  hlo::Shape shape_;
};

// tf2xla's RGBToHSV on channel slices.
absl::StatusOr<Channels> RgbToHsv(LoweringContext& ctx, const Channels& rgb) {
  using D = hlo::ComparisonDirection;
  Ew e(ctx, rgb.c[0]->shape());
  Instruction *r = rgb.c[0], *g = rgb.c[1], *b = rgb.c[2];
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, e.K(0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, e.K(1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * v, e.Bin(Opcode::kMaximum, r, g));
  TFJIT_ASSIGN_OR_RETURN(v, e.Bin(Opcode::kMaximum, v, b));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mn, e.Bin(Opcode::kMinimum, r, g));
  TFJIT_ASSIGN_OR_RETURN(mn, e.Bin(Opcode::kMinimum, mn, b));
  TFJIT_ASSIGN_OR_RETURN(Instruction * range, e.Bin(Opcode::kSubtract, v, mn));
  TFJIT_ASSIGN_OR_RETURN(Instruction * vpos, e.Cmp(D::kGt, v, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * rv, e.Bin(Opcode::kDivide, range, v));
  TFJIT_ASSIGN_OR_RETURN(Instruction * s, e.Sel(vpos, rv, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sixth, e.K(1.0 / 6.0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * norm, e.Bin(Opcode::kDivide, sixth, range));
  // norm * (a - b) + offset
  auto part = [&](Instruction* a, Instruction* c, double offset) -> absl::StatusOr<Instruction*> {
    TFJIT_ASSIGN_OR_RETURN(Instruction * d, e.Bin(Opcode::kSubtract, a, c));
    TFJIT_ASSIGN_OR_RETURN(Instruction * m, e.Bin(Opcode::kMultiply, norm, d));
    if (offset == 0) return m;
    TFJIT_ASSIGN_OR_RETURN(Instruction * o, e.K(offset));
    return e.Bin(Opcode::kAdd, m, o);
  };
  TFJIT_ASSIGN_OR_RETURN(Instruction * hg, part(b, r, 2.0 / 6.0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hb, part(r, g, 4.0 / 6.0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hr, part(g, b, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * geq, e.Cmp(D::kEq, g, v));
  TFJIT_ASSIGN_OR_RETURN(Instruction * h, e.Sel(geq, hg, hb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * req, e.Cmp(D::kEq, r, v));
  TFJIT_ASSIGN_OR_RETURN(h, e.Sel(req, hr, h));
  TFJIT_ASSIGN_OR_RETURN(Instruction * rpos, e.Cmp(D::kGt, range, zero));
  TFJIT_ASSIGN_OR_RETURN(h, e.Sel(rpos, h, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hneg, e.Cmp(D::kLt, h, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * h1, e.Bin(Opcode::kAdd, h, one));
  TFJIT_ASSIGN_OR_RETURN(h, e.Sel(hneg, h1, h));
  return Channels{{h, s, v}};
}

// tf2xla's HSVToRGB: v * (1 - s + s * clamp(ramp(h * 6), 0, 1)) per channel.
absl::StatusOr<Channels> HsvToRgb(LoweringContext& ctx, const Channels& hsv) {
  Ew e(ctx, hsv.c[0]->shape());
  Instruction *h = hsv.c[0], *s = hsv.c[1], *v = hsv.c[2];
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, e.K(0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, e.K(1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * six, e.K(6));
  TFJIT_ASSIGN_OR_RETURN(Instruction * dh, e.Bin(Opcode::kMultiply, h, six));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one_s, e.Bin(Opcode::kSubtract, one, s));
  // sign * |dh - center| + bias, clamped, then the channel.
  auto channel = [&](double center, bool rising, double bias) -> absl::StatusOr<Instruction*> {
    TFJIT_ASSIGN_OR_RETURN(Instruction * c, e.K(center));
    TFJIT_ASSIGN_OR_RETURN(Instruction * bb, e.K(bias));
    TFJIT_ASSIGN_OR_RETURN(Instruction * d, e.Bin(Opcode::kSubtract, dh, c));
    TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.b().Unary(Opcode::kAbs, d));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ramp, rising ? e.Bin(Opcode::kSubtract, a, bb)
                                                      : e.Bin(Opcode::kSubtract, bb, a));
    TFJIT_ASSIGN_OR_RETURN(ramp, ctx.b().Clamp(zero, ramp, one));
    TFJIT_ASSIGN_OR_RETURN(Instruction * sr, e.Bin(Opcode::kMultiply, s, ramp));
    TFJIT_ASSIGN_OR_RETURN(Instruction * sum, e.Bin(Opcode::kAdd, one_s, sr));
    return e.Bin(Opcode::kMultiply, sum, v);
  };
  Channels rgb;
  TFJIT_ASSIGN_OR_RETURN(rgb.c[0], channel(3, true, 1));
  TFJIT_ASSIGN_OR_RETURN(rgb.c[1], channel(2, false, 2));
  TFJIT_ASSIGN_OR_RETURN(rgb.c[2], channel(4, false, 2));
  return rgb;
}

absl::StatusOr<Instruction*> Join(LoweringContext& ctx, const Channels& ch) {
  return ctx.b().Concatenate({ch.c[0], ch.c[1], ch.c[2]}, ch.c[0]->shape().rank() - 1);
}

absl::Status LowerRgbToHsv(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Channels rgb, SplitChannels(ctx, node, x));
  TFJIT_ASSIGN_OR_RETURN(Channels hsv, RgbToHsv(ctx, rgb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, Join(ctx, hsv));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerHsvToRgb(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Channels hsv, SplitChannels(ctx, node, x));
  TFJIT_ASSIGN_OR_RETURN(Channels rgb, HsvToRgb(ctx, hsv));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, Join(ctx, rgb));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// The scalar float input 1 broadcast to `shape`, after the images' rank check.
absl::StatusOr<Instruction*> ScalarArg(LoweringContext& ctx, const tf::Node& node,
                                       const hlo::Shape& images, const hlo::Shape& shape) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Input(node, 1));
  if (images.rank() < 3 || a->shape().rank() != 0) {
    return InvalidArgument(
        "node %s: input must be at least 3-D and the factor a scalar, got "
        "%s and %s",
        node.DebugName(), images.ToString(), a->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(a, ctx.b().Convert(a, shape.element_type()));
  return ctx.b().Broadcast(a, shape.dims(), {});
}

// AdjustHue / AdjustSaturation: HSV in float, adjust, back to RGB in the images' type.
template <bool kHue>
absl::Status LowerAdjustHsv(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, DType::kFloat32));
  TFJIT_ASSIGN_OR_RETURN(Channels rgb, SplitChannels(ctx, node, x));
  const hlo::Shape& cs = rgb.c[0]->shape();
  TFJIT_ASSIGN_OR_RETURN(Instruction * f, ScalarArg(ctx, node, x->shape(), cs));
  TFJIT_ASSIGN_OR_RETURN(Channels hsv, RgbToHsv(ctx, rgb));
  Ew e(ctx, cs);
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, e.K(0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, e.K(1));
  if constexpr (kHue) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * h, e.Bin(Opcode::kAdd, hsv.c[0], f));
    TFJIT_ASSIGN_OR_RETURN(h, e.Bin(Opcode::kRemainder, h, one));
    TFJIT_ASSIGN_OR_RETURN(Instruction * neg, e.Cmp(hlo::ComparisonDirection::kLt, h, zero));
    TFJIT_ASSIGN_OR_RETURN(Instruction * h1, e.Bin(Opcode::kAdd, h, one));
    TFJIT_ASSIGN_OR_RETURN(h, e.Sel(neg, h1, h));
    hsv.c[0] = h;
  } else {
    TFJIT_ASSIGN_OR_RETURN(Instruction * s, e.Bin(Opcode::kMultiply, hsv.c[1], f));
    TFJIT_ASSIGN_OR_RETURN(hsv.c[1], ctx.b().Clamp(zero, s, one));
  }
  TFJIT_ASSIGN_OR_RETURN(Channels out, HsvToRgb(ctx, hsv));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, Join(ctx, out));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// (x - mean) * factor + mean with the mean over H and W (dims -3, -2) in float, as the kernel.
absl::Status LowerAdjustContrast(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, DType::kFloat32));
  const hlo::Shape& s = x->shape();
  TFJIT_ASSIGN_OR_RETURN(Instruction * f, ScalarArg(ctx, node, s, s));
  const int64_t r = s.rank(), hw = s.dim(static_cast<int>(r - 3)) * s.dim(static_cast<int>(r - 2));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(DType::kFloat32, 0.0, {}));
  hlo::Computation* add =
      hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, DType::kFloat32);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum, ctx.b().Reduce(x, zero, {r - 3, r - 2}, add));
  TFJIT_ASSIGN_OR_RETURN(Instruction * n,
                         ctx.Splat(DType::kFloat32, static_cast<double>(hw), sum->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mean, ctx.b().Binary(Opcode::kDivide, sum, n));
  std::vector<int64_t> bdims;
  for (int64_t d = 0; d < r - 3; ++d) bdims.push_back(d);
  bdims.push_back(r - 1);
  TFJIT_ASSIGN_OR_RETURN(Instruction * mb, ctx.b().Broadcast(mean, s.dims(), bdims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * d, ctx.b().Binary(Opcode::kSubtract, x, mb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y, ctx.b().Binary(Opcode::kMultiply, d, f));
  TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kAdd, y, mb));
  TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Convert(y, t));
  ctx.SetOutput(node, 0, y);
  return absl::OkStatus();
}

// ---- ExtractImagePatches ----

// Zero-pad H and W, then one strided slice per window tap (i, j), concatenated along depth in
// TF's (i, j, c) order: data movement only, so every dtype compiles.
absl::Status LowerExtractImagePatches(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape& s = x->shape();
  std::vector<int64_t> k, st, rt;
  TFJIT_ASSIGN_OR_RETURN(k, tf::GetIntListAttr(node, "ksizes"));
  TFJIT_ASSIGN_OR_RETURN(st, tf::GetIntListAttr(node, "strides"));
  TFJIT_ASSIGN_OR_RETURN(rt, tf::GetIntListAttr(node, "rates"));
  TFJIT_ASSIGN_OR_RETURN(std::string padding, tf::GetStringAttr(node, "padding"));
  for (const auto* v : {&k, &st, &rt}) {
    if (v->size() != 4 || (*v)[0] != 1 || (*v)[3] != 1 || (*v)[1] < 1 || (*v)[2] < 1) {
      return InvalidArgument("node %s: ksizes, strides and rates must be [1, h, w, 1]",
                             node.DebugName());
    }
  }
  if (s.rank() != 4 || (padding != "SAME" && padding != "VALID")) {
    return InvalidArgument("node %s: need a 4-D input and SAME or VALID padding, got %s, %s",
                           node.DebugName(), s.ToString(), padding);
  }
  int64_t out[3] = {0, 0, 0};
  hlo::Attributes pad;
  pad.padding.resize(4);
  for (int d = 1; d <= 2; ++d) {
    const size_t i = static_cast<size_t>(d);
    const int64_t in = s.dim(d), eff = (k[i] - 1) * rt[i] + 1;
    if (padding == "SAME") {
      out[d] = (in + st[i] - 1) / st[i];
      const int64_t total = std::max<int64_t>((out[d] - 1) * st[i] + eff - in, 0);
      pad.padding[i].lo = total / 2;
      pad.padding[i].hi = total - total / 2;
    } else {
      out[d] = in >= eff ? (in - eff) / st[i] + 1 : 0;
    }
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(s.element_type(), 0.0, {}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * xp, ctx.b().Add(Opcode::kPad, {x, zero}, std::move(pad)));
  std::vector<Instruction*> taps;
  for (int64_t i = 0; i < k[1]; ++i) {
    for (int64_t j = 0; j < k[2]; ++j) {
      const int64_t y0 = i * rt[1], x0 = j * rt[2];
      std::vector<hlo::SliceDim> slice = {
          {0, s.dim(0), 1},
          {y0, out[1] == 0 ? y0 : y0 + (out[1] - 1) * st[1] + 1, st[1]},
          {x0, out[2] == 0 ? x0 : x0 + (out[2] - 1) * st[2] + 1, st[2]},
          {0, s.dim(3), 1}};
      TFJIT_ASSIGN_OR_RETURN(Instruction * t, ctx.b().Slice(xp, slice));
      taps.push_back(t);
    }
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Concatenate(taps, 3));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

}  // namespace

void AppendImageMoreLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
                                  {"ResizeNearestNeighbor", LowerResizeNearest},
                                  {"RGBToHSV", LowerRgbToHsv, /*float_only=*/true},
                                  {"HSVToRGB", LowerHsvToRgb, true},
                                  {"AdjustHue", LowerAdjustHsv<true>, true},
                                  {"AdjustSaturation", LowerAdjustHsv<false>, true},
                                  {"AdjustContrastv2", LowerAdjustContrast, true},
                                  {"ExtractImagePatches", LowerExtractImagePatches},
                              });
}

}  // namespace tfjit::tf2hlo
