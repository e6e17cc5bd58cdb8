// Lowerings of the convolution family (NHWC; the unfused ones also NCHW through the
// convolution's dimension numbers): Conv2D, DepthwiseConv2dNative (a grouped
// convolution with one group per input channel), Conv2DBackpropInput (a convolution of the
// lhs-dilated out_backprop with the spatially reversed, io-swapped filter), the fused
// contractions _FusedConv2D / FusedDepthwiseConv2dNative / _FusedMatMul (the contraction
// followed by elementwise HLO for fused_ops; formats.md 3.5) and tfjs's Prelu.
#include <algorithm>
#include <string>
#include <vector>

#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/conv_attrs.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

using tf::FusedActivation;
using tf::FusedEpilogue;
using tf::SpatialDim;

// Attrs, window geometry and fused_ops come from frontend/conv_attrs.h, shared with the
// fallback kernels.

// NHWC (or, with `nchw`, NCHW) activations and an HWIO-style filter.
hlo::ConvDims Nhwc(int64_t kernel_in, int64_t kernel_out, bool nchw = false) {
  hlo::ConvDims c;
  c.input_batch = 0;
  c.input_spatial = nchw ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{1, 2};
  c.input_feature = nchw ? 1 : 3;
  c.kernel_spatial = {0, 1};
  c.kernel_input_feature = kernel_in;
  c.kernel_output_feature = kernel_out;
  c.output_batch = 0;
  c.output_spatial = c.input_spatial;
  c.output_feature = c.input_feature;
  return c;
}

// ---- Fused epilogues ----

// A vector argument of `channels` values broadcast along the last dim of `dims`.
absl::StatusOr<Instruction*> ChannelArg(LoweringContext& ctx, const tf::Node& node, int input,
                                        const char* what, const std::vector<int64_t>& dims) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * v, ctx.Input(node, input));
  const int64_t channels = dims.back();
  if (v->shape().rank() != 1 || v->shape().dim(0) != channels) {
    return InvalidArgument("node %s: %s must be a vector of the %d output channels, got %s",
                           node.DebugName(), what, channels, v->shape().ToString());
  }
  return ctx.b().Broadcast(v, dims, {static_cast<int64_t>(dims.size()) - 1});
}

// Applies `spec` to the contraction result `y` (channels last); args start at input 2.
absl::StatusOr<Instruction*> ApplyEpilogue(LoweringContext& ctx, const tf::Node& node,
                                           const FusedEpilogue& spec, Instruction* y) {
  const std::vector<int64_t> dims = y->shape().dims();
  const DType t = y->shape().element_type();
  int next = 2;
  if (spec.bias) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * bias, ChannelArg(ctx, node, next++, "bias", dims));
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kAdd, y, bias));
  }
  if (spec.batch_norm) {
    // (y - mean) * (scale / sqrt(variance + epsilon)) + offset, as TF's fused kernel.
    TFJIT_ASSIGN_OR_RETURN(Instruction * scale, ChannelArg(ctx, node, next++, "scale", dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * offset, ChannelArg(ctx, node, next++, "offset", dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * mean, ChannelArg(ctx, node, next++, "mean", dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * var, ChannelArg(ctx, node, next++, "variance", dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * e, ctx.Splat(t, spec.epsilon, dims));
    TFJIT_ASSIGN_OR_RETURN(var, ctx.b().Binary(Opcode::kAdd, var, e));
    TFJIT_ASSIGN_OR_RETURN(var, ctx.b().Unary(Opcode::kSqrt, var));
    TFJIT_ASSIGN_OR_RETURN(scale, ctx.b().Binary(Opcode::kDivide, scale, var));
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kSubtract, y, mean));
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kMultiply, y, scale));
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kAdd, y, offset));
  }
  if (spec.activation == FusedActivation::kNone) return y;
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, dims));
  switch (spec.activation) {
    case FusedActivation::kRelu:
      return ctx.b().Binary(Opcode::kMaximum, y, zero);
    case FusedActivation::kRelu6: {
      TFJIT_ASSIGN_OR_RETURN(Instruction * six, ctx.Splat(t, 6.0, dims));
      TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kMaximum, y, zero));
      return ctx.b().Binary(Opcode::kMinimum, y, six);
    }
    case FusedActivation::kElu: {
      TFJIT_ASSIGN_OR_RETURN(Instruction * neg,
                             ctx.b().Compare(hlo::ComparisonDirection::kLt, y, zero));
      TFJIT_ASSIGN_OR_RETURN(Instruction * em1, ctx.b().Unary(Opcode::kExpm1, y));
      return ctx.b().Select(neg, em1, y);
    }
    case FusedActivation::kLeakyRelu: {
      TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Splat(t, spec.leakyrelu_alpha, dims));
      TFJIT_ASSIGN_OR_RETURN(Instruction * pos,
                             ctx.b().Compare(hlo::ComparisonDirection::kGt, y, zero));
      TFJIT_ASSIGN_OR_RETURN(Instruction * ya, ctx.b().Binary(Opcode::kMultiply, y, a));
      return ctx.b().Select(pos, y, ya);
    }
    case FusedActivation::kSigmoid:
      return ctx.b().Unary(Opcode::kLogistic, y);
    case FusedActivation::kTanh:
      return ctx.b().Unary(Opcode::kTanh, y);
    case FusedActivation::kPrelu: {
      TFJIT_ASSIGN_OR_RETURN(Instruction * alpha, ctx.Input(node, next));
      TFJIT_ASSIGN_OR_RETURN(bool scalar,
                             tf::PreluAlphaIsScalar(node, alpha->shape().dims(), dims.back()));
      Instruction* ab = nullptr;
      if (scalar) {
        TFJIT_ASSIGN_OR_RETURN(alpha, ctx.b().Reshape(alpha, {}));
        TFJIT_ASSIGN_OR_RETURN(ab, ctx.b().Broadcast(alpha, dims, {}));
      } else {
        TFJIT_ASSIGN_OR_RETURN(alpha, ctx.b().Reshape(alpha, {dims.back()}));
        TFJIT_ASSIGN_OR_RETURN(
            ab, ctx.b().Broadcast(alpha, dims, {static_cast<int64_t>(dims.size()) - 1}));
      }
      TFJIT_ASSIGN_OR_RETURN(Instruction * pos,
                             ctx.b().Compare(hlo::ComparisonDirection::kGe, y, zero));
      TFJIT_ASSIGN_OR_RETURN(Instruction * ya, ctx.b().Binary(Opcode::kMultiply, ab, y));
      return ctx.b().Select(pos, y, ya);
    }
    case FusedActivation::kNone:
      break;
  }
  return y;
}

// ---- Convolutions ----

absl::StatusOr<Instruction*> Convolution(LoweringContext& ctx, Instruction* lhs, Instruction* rhs,
                                         const tf::Window2D& window, int64_t groups, bool nchw) {
  hlo::Attributes attrs;
  for (const SpatialDim* s : {&window.h, &window.w}) {
    hlo::WindowDim d;
    d.size = s->k;
    d.stride = s->stride;
    d.pad_lo = s->pad_before;
    d.pad_hi = s->pad_after;
    d.rhs_dilate = s->dilation;
    attrs.window.push_back(d);
  }
  attrs.conv = Nhwc(2, 3, nchw);
  attrs.feature_group_count = groups;
  return ctx.b().Add(Opcode::kConvolution, {lhs, rhs}, std::move(attrs));
}

// Conv2D, _FusedConv2D, DepthwiseConv2dNative, FusedDepthwiseConv2dNative.
absl::Status LowerConv(LoweringContext& ctx, const tf::Node& node) {
  const std::string& op = node.op();
  const bool depthwise = op == "DepthwiseConv2dNative" || op == "FusedDepthwiseConv2dNative";
  const bool fused = op == "_FusedConv2D" || op == "FusedDepthwiseConv2dNative";
  FusedEpilogue spec;
  if (fused) {
    TFJIT_ASSIGN_OR_RETURN(spec, tf::ParseFusedOps(node));
  }
  // NCHW (unfused only, as the kernels) sets the convolution's dimension numbers.
  TFJIT_ASSIGN_OR_RETURN(
      tf::WindowAttrs attrs,
      tf::ReadConvAttrs(node, fused ? tf::Layouts::kNhwc : tf::Layouts::kNhwcOrNchw));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * f, ctx.Input(node, 1));
  const hlo::Shape& xs = x->shape();
  const hlo::Shape& fs = f->shape();
  if (attrs.nchw && xs.rank() != 4) {
    return InvalidArgument("node %s: input must be 4-D (NCHW), got %s", node.DebugName(),
                           xs.ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(
      tf::ConvGeometry g,
      tf::Conv2DGeometry(node, attrs, attrs.nchw ? tf::NchwToNhwc(xs.dims()) : xs.dims(), fs.dims(),
                         depthwise));
  if (depthwise) {
    // [h, w, in, mult] -> [h, w, 1, in * mult]: group c owns output features c * mult + m,
    // TF's depthwise output order.
    TFJIT_ASSIGN_OR_RETURN(f, ctx.b().Reshape(f, {fs.dim(0), fs.dim(1), 1, g.out_channels}));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * y, Convolution(ctx, x, f, g.window, g.groups, attrs.nchw));
  TFJIT_ASSIGN_OR_RETURN(y, ApplyEpilogue(ctx, node, spec, y));
  ctx.SetOutput(node, 0, y);
  return absl::OkStatus();
}

// Conv2DBackpropInput(input_sizes, filter, out_backprop): with the forward geometry (stride s,
// dilation d, leading pad p, effective size e = (k - 1) * d + 1), dx is the convolution of dy
// dilated by s (lhs_dilate) with the reversed filter, padded e - 1 - p before and
// in - 1 - (out - 1) * s + p after so that exactly `in` outputs remain.
absl::Status LowerConv2DBackpropInput(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(tf::WindowAttrs attrs, tf::ReadConvAttrs(node, tf::Layouts::kNhwcOrNchw));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ctx.ConstantInputAsInts(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * f, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * dy, ctx.Input(node, 2));
  const hlo::Shape& fs = f->shape();
  const hlo::Shape& ds = dy->shape();
  if (attrs.nchw && (sizes.size() != 4 || ds.rank() != 4)) {
    return InvalidArgument(
        "node %s: input_sizes must have 4 entries and out_backprop be 4-D "
        "(NCHW), got %d entries and %s",
        node.DebugName(), sizes.size(), ds.ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(
      tf::Window2D window,
      tf::BackpropInputGeometry(node, attrs, attrs.nchw ? tf::NchwToNhwc(sizes) : sizes, fs.dims(),
                                attrs.nchw ? tf::NchwToNhwc(ds.dims()) : ds.dims()));
  const DType t = ds.element_type();
  int64_t elements = 1;
  for (int64_t s : sizes) elements *= s;
  if (elements == 0 || ds.num_elements() == 0 || fs.num_elements() == 0) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(t, 0.0, sizes));
    ctx.SetOutput(node, 0, zeros);
    return absl::OkStatus();
  }
  hlo::Attributes a;
  for (const SpatialDim* s : {&window.h, &window.w}) {
    hlo::WindowDim d;
    d.size = s->k;
    d.lhs_dilate = s->stride;
    d.rhs_dilate = s->dilation;
    d.pad_lo = s->effective_k() - 1 - s->pad_before;
    d.pad_hi = s->in - 1 - (s->out - 1) * s->stride + s->pad_before;
    a.window.push_back(d);
  }
  // The filter reversed in space with its in/out features swapped ([KH, KW, O, C]) by an
  // explicit transpose (filter-sized, cheap), so the convolution has the forward layout that
  // the backends' convolution library calls take (backends/gemm_match.h).
  a.conv = Nhwc(/*kernel_in=*/2, /*kernel_out=*/3, attrs.nchw);
  hlo::Attributes rev;
  rev.dimensions = {0, 1};
  TFJIT_ASSIGN_OR_RETURN(Instruction * fr, ctx.b().Add(Opcode::kReverse, {f}, std::move(rev)));
  TFJIT_ASSIGN_OR_RETURN(fr, ctx.b().Transpose(fr, {0, 1, 3, 2}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Add(Opcode::kConvolution, {dy, fr}, a));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// _FusedMatMul(a, b, args...): dot with the transposes, then the epilogue.
absl::Status LowerFusedMatMul(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(FusedEpilogue spec, tf::ParseFusedOps(node));
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(node, "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(node, "transpose_b", false));
  const hlo::Shape& sa = a->shape();
  const hlo::Shape& sb = b->shape();
  if (sa.rank() != 2 || sb.rank() != 2 || sa.dim(ta ? 0 : 1) != sb.dim(tb ? 1 : 0)) {
    return InvalidArgument(
        "node %s: Matrix size-incompatible: In[0]: %s, In[1]: %s "
        "(transpose_a=%d, transpose_b=%d)",
        node.DebugName(), sa.ToString(), sb.ToString(), ta, tb);
  }
  hlo::DotDims dims;
  dims.lhs_contracting = {ta ? 0 : 1};
  dims.rhs_contracting = {tb ? 1 : 0};
  TFJIT_ASSIGN_OR_RETURN(Instruction * y, ctx.b().Dot(a, b, dims));
  TFJIT_ASSIGN_OR_RETURN(y, ApplyEpilogue(ctx, node, spec, y));
  ctx.SetOutput(node, 0, y);
  return absl::OkStatus();
}

// Prelu(x, alpha) => x >= 0 ? x : alpha * x, broadcasting as tfjs does.
absl::Status LowerPrelu(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(auto xa, ctx.BroadcastBinaryInputs(node));
  auto [x, alpha] = xa;
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero,
                         ctx.Splat(x->shape().element_type(), 0.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * pos,
                         ctx.b().Compare(hlo::ComparisonDirection::kGe, x, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ax, ctx.b().Binary(Opcode::kMultiply, alpha, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(pos, x, ax));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Auto-clustering leaves nodes with attrs the lowerings reject to the fallback kernels.
bool Accepted(const absl::Status& status, std::string* why) {
  if (!status.ok()) *why = std::string(status.message());
  return status.ok();
}

bool CanLowerConvAttrs(const tf::Node& node, std::string* why) {
  return Accepted(tf::ReadConvAttrs(node, tf::Layouts::kNhwcOrNchw).status(), why);
}

bool CanLowerFusedConv(const tf::Node& node, std::string* why) {
  return Accepted(tf::ParseFusedOps(node).status(), why) &&
         Accepted(tf::ReadConvAttrs(node).status(), why);
}

bool CanLowerFusedMatMul(const tf::Node& node, std::string* why) {
  return Accepted(tf::ParseFusedOps(node).status(), why);
}

}  // namespace

void AppendConvLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(),
                {
                    {"Conv2D", LowerConv, /*float_only=*/true, CanLowerConvAttrs},
                    {"_FusedConv2D", LowerConv, true, CanLowerFusedConv},
                    {"DepthwiseConv2dNative", LowerConv, true, CanLowerConvAttrs},
                    {"FusedDepthwiseConv2dNative", LowerConv, true, CanLowerFusedConv},
                    {"Conv2DBackpropInput", LowerConv2DBackpropInput, true, CanLowerConvAttrs},
                    {"_FusedMatMul", LowerFusedMatMul, true, CanLowerFusedMatMul},
                    {"Prelu", LowerPrelu, true},
                });
}

}  // namespace tfjit::tf2hlo
