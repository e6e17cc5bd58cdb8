// Lowerings of the convolution family (NHWC): Conv2D, DepthwiseConv2dNative (a grouped
// convolution with one group per input channel), Conv2DBackpropInput (a convolution of the
// lhs-dilated out_backprop with the spatially reversed, io-swapped filter), the fused
// contractions _FusedConv2D / FusedDepthwiseConv2dNative / _FusedMatMul (the contraction
// followed by elementwise HLO for fused_ops; formats.md 3.5) and tfjs's Prelu.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// ---- Attrs and window geometry (TF's GetWindowedOutputSize) ----

struct ConvAttrs {
  std::string padding;
  std::vector<int64_t> strides, dilations, explicit_paddings;
};

// Checks the attrs TF's CPU kernels accept; the message names the node and the fix.
absl::StatusOr<ConvAttrs> ReadConvAttrs(const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::string format, tf::GetStringAttrOr(node, "data_format", "NHWC"));
  if (format != "NHWC") {
    return Unimplemented("node %s: data_format '%s' is not compiled; only NHWC is (convert the "
                         "model with NHWC layout)", node.DebugName(), format);
  }
  ConvAttrs a;
  TFJIT_ASSIGN_OR_RETURN(a.strides, tf::GetIntListAttr(node, "strides"));
  TFJIT_ASSIGN_OR_RETURN(a.padding, tf::GetStringAttr(node, "padding"));
  a.dilations = {1, 1, 1, 1};
  if (tf::FindAttr(node, "dilations") != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(a.dilations, tf::GetIntListAttr(node, "dilations"));
  }
  for (const auto* list : {&a.strides, &a.dilations}) {
    const char* what = list == &a.strides ? "strides" : "dilations";
    if (list->size() != 4 || (*list)[0] != 1 || (*list)[3] != 1 || (*list)[1] < 1 ||
        (*list)[2] < 1) {
      return InvalidArgument("node %s: %s must have 4 entries >= 1 with 1 in the batch and "
                             "depth dimensions, got [%s]",
                             node.DebugName(), what, absl::StrJoin(*list, ","));
    }
  }
  if (a.padding == "EXPLICIT") {
    TFJIT_ASSIGN_OR_RETURN(a.explicit_paddings, tf::GetIntListAttr(node, "explicit_paddings"));
    const auto& p = a.explicit_paddings;
    if (p.size() != 8 || p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0 ||
        *std::min_element(p.begin(), p.end()) < 0) {
      return InvalidArgument("node %s: explicit_paddings must have 8 non-negative entries with "
                             "zero batch and depth padding, got [%s]",
                             node.DebugName(), absl::StrJoin(p, ","));
    }
  } else if (a.padding != "SAME" && a.padding != "VALID") {
    return InvalidArgument("node %s: padding must be SAME, VALID or EXPLICIT, got '%s'",
                           node.DebugName(), a.padding);
  }
  return a;
}

// One spatial dim of the forward convolution: output size and padding.
struct SpatialDim {
  int64_t in = 0, k = 0, stride = 1, dilation = 1, out = 0, pad_lo = 0, pad_hi = 0;
};

absl::StatusOr<SpatialDim> Spatial(const tf::Node& node, const ConvAttrs& a, int d, int64_t in,
                                   int64_t k) {
  SpatialDim s;
  s.in = in;
  s.k = k;
  s.stride = a.strides[static_cast<size_t>(d)];
  s.dilation = a.dilations[static_cast<size_t>(d)];
  const int64_t eff = (k - 1) * s.dilation + 1;
  if (a.padding == "SAME") {
    s.out = (in + s.stride - 1) / s.stride;
    const int64_t total = std::max<int64_t>((s.out - 1) * s.stride + eff - in, 0);
    s.pad_lo = total / 2;
    s.pad_hi = total - s.pad_lo;
    return s;
  }
  if (a.padding == "EXPLICIT") {
    s.pad_lo = a.explicit_paddings[static_cast<size_t>(2 * d)];
    s.pad_hi = a.explicit_paddings[static_cast<size_t>(2 * d + 1)];
  }
  const int64_t num = in + s.pad_lo + s.pad_hi - eff + s.stride;
  if (num < 0) {
    return InvalidArgument("node %s: Computed output size would be negative [input_size: %d, "
                           "effective_filter_size: %d, stride: %d]",
                           node.DebugName(), in, eff, s.stride);
  }
  s.out = num / s.stride;
  return s;
}

hlo::ConvDims Nhwc(int64_t kernel_in, int64_t kernel_out) {
  hlo::ConvDims c;
  c.input_batch = 0;
  c.input_spatial = {1, 2};
  c.input_feature = 3;
  c.kernel_spatial = {0, 1};
  c.kernel_input_feature = kernel_in;
  c.kernel_output_feature = kernel_out;
  c.output_batch = 0;
  c.output_spatial = {1, 2};
  c.output_feature = 3;
  return c;
}

// ---- Fused epilogues ----

enum class Activation { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kSigmoid, kTanh, kPrelu };

struct EpilogueSpec {
  bool bias = false, batch_norm = false;
  Activation act = Activation::kNone;
  int num_args = 0;
};

// fused_ops as TF's remapper and the tfjs converter write them (case-insensitive, as tfjs
// matches): [], or [BiasAdd|FusedBatchNorm|NoOp] optionally followed by one activation.
absl::StatusOr<EpilogueSpec> ParseEpilogue(const tf::Node& node) {
  EpilogueSpec e;
  std::vector<std::string> raw, ops;
  if (const tensorflow::AttrValue* v = tf::FindAttr(node, "fused_ops"); v != nullptr) {
    raw.assign(v->list().s().begin(), v->list().s().end());
  }
  for (const std::string& s : raw) ops.push_back(absl::AsciiStrToLower(s));
  const absl::Status unsupported = Unimplemented(
      "node %s: fused_ops [%s] is not supported; supported: [BiasAdd|FusedBatchNorm|NoOp] "
      "optionally followed by one of Relu, Relu6, Elu, LeakyRelu, Sigmoid, Tanh, Prelu",
      node.DebugName(), absl::StrJoin(raw, ","));
  if (!ops.empty()) {
    if (ops[0] == "biasadd") {
      e.bias = true;
      e.num_args = 1;
    } else if (ops[0] == "fusedbatchnorm") {
      e.batch_norm = true;
      e.num_args = 4;
    } else if (ops[0] != "noop") {
      return unsupported;
    }
    if (ops.size() > 2) return unsupported;
    if (ops.size() == 2) {
      const std::string& a = ops[1];
      if (a == "relu") e.act = Activation::kRelu;
      else if (a == "relu6") e.act = Activation::kRelu6;
      else if (a == "elu") e.act = Activation::kElu;
      else if (a == "leakyrelu") e.act = Activation::kLeakyRelu;
      else if (a == "sigmoid") e.act = Activation::kSigmoid;
      else if (a == "tanh") e.act = Activation::kTanh;
      else if (a == "prelu") e.act = Activation::kPrelu;
      else return unsupported;
      if (e.act == Activation::kPrelu) ++e.num_args;
    }
  }
  TFJIT_ASSIGN_OR_RETURN(int64_t num_args, tf::GetIntAttrOr(node, "num_args", 0));
  if (num_args != e.num_args || node.num_inputs() < 2 + num_args) {
    return InvalidArgument("node %s: fused_ops [%s] needs %d extra input(s), but num_args is "
                           "%d and the node has %d input(s)",
                           node.DebugName(), absl::StrJoin(raw, ","), e.num_args, num_args,
                           node.num_inputs());
  }
  return e;
}

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
                                           const EpilogueSpec& spec, Instruction* y) {
  const std::vector<int64_t> dims = y->shape().dims();
  const DType t = y->shape().element_type();
  int next = 2;
  if (spec.bias) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * bias, ChannelArg(ctx, node, next++, "bias", dims));
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kAdd, y, bias));
  }
  if (spec.batch_norm) {
    // (y - mean) * (scale / sqrt(variance + epsilon)) + offset, as TF's fused kernel.
    TFJIT_ASSIGN_OR_RETURN(float eps, tf::GetFloatAttrOr(node, "epsilon", 1e-4f));
    TFJIT_ASSIGN_OR_RETURN(Instruction * scale, ChannelArg(ctx, node, next++, "scale", dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * offset, ChannelArg(ctx, node, next++, "offset", dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * mean, ChannelArg(ctx, node, next++, "mean", dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * var, ChannelArg(ctx, node, next++, "variance", dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * e, ctx.Splat(t, eps, dims));
    TFJIT_ASSIGN_OR_RETURN(var, ctx.b().Binary(Opcode::kAdd, var, e));
    TFJIT_ASSIGN_OR_RETURN(var, ctx.b().Unary(Opcode::kSqrt, var));
    TFJIT_ASSIGN_OR_RETURN(scale, ctx.b().Binary(Opcode::kDivide, scale, var));
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kSubtract, y, mean));
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kMultiply, y, scale));
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kAdd, y, offset));
  }
  if (spec.act == Activation::kNone) return y;
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, dims));
  switch (spec.act) {
    case Activation::kRelu:
      return ctx.b().Binary(Opcode::kMaximum, y, zero);
    case Activation::kRelu6: {
      TFJIT_ASSIGN_OR_RETURN(Instruction * six, ctx.Splat(t, 6.0, dims));
      TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kMaximum, y, zero));
      return ctx.b().Binary(Opcode::kMinimum, y, six);
    }
    case Activation::kElu: {
      TFJIT_ASSIGN_OR_RETURN(Instruction * neg,
                             ctx.b().Compare(hlo::ComparisonDirection::kLt, y, zero));
      TFJIT_ASSIGN_OR_RETURN(Instruction * em1, ctx.b().Unary(Opcode::kExpm1, y));
      return ctx.b().Select(neg, em1, y);
    }
    case Activation::kLeakyRelu: {
      TFJIT_ASSIGN_OR_RETURN(float alpha, tf::GetFloatAttrOr(node, "leakyrelu_alpha", 0.2f));
      TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Splat(t, alpha, dims));
      TFJIT_ASSIGN_OR_RETURN(Instruction * pos,
                             ctx.b().Compare(hlo::ComparisonDirection::kGt, y, zero));
      TFJIT_ASSIGN_OR_RETURN(Instruction * ya, ctx.b().Binary(Opcode::kMultiply, y, a));
      return ctx.b().Select(pos, y, ya);
    }
    case Activation::kSigmoid:
      return ctx.b().Unary(Opcode::kLogistic, y);
    case Activation::kTanh:
      return ctx.b().Unary(Opcode::kTanh, y);
    case Activation::kPrelu: {
      TFJIT_ASSIGN_OR_RETURN(Instruction * alpha, ctx.Input(node, next));
      const hlo::Shape& as = alpha->shape();
      bool leading_ones = as.rank() >= 1;
      for (int d = 0; d + 1 < as.rank(); ++d) leading_ones = leading_ones && as.dim(d) == 1;
      Instruction* ab = nullptr;
      if (as.num_elements() == 1) {
        TFJIT_ASSIGN_OR_RETURN(alpha, ctx.b().Reshape(alpha, {}));
        TFJIT_ASSIGN_OR_RETURN(ab, ctx.b().Broadcast(alpha, dims, {}));
      } else if (leading_ones && as.dim(as.rank() - 1) == dims.back()) {
        TFJIT_ASSIGN_OR_RETURN(alpha, ctx.b().Reshape(alpha, {dims.back()}));
        TFJIT_ASSIGN_OR_RETURN(ab, ctx.b().Broadcast(
                                       alpha, dims, {static_cast<int64_t>(dims.size()) - 1}));
      } else {
        return Unimplemented("node %s: prelu alpha %s must hold one value or one per output "
                             "channel (%d)", node.DebugName(), as.ToString(), dims.back());
      }
      TFJIT_ASSIGN_OR_RETURN(Instruction * pos,
                             ctx.b().Compare(hlo::ComparisonDirection::kGe, y, zero));
      TFJIT_ASSIGN_OR_RETURN(Instruction * ya, ctx.b().Binary(Opcode::kMultiply, ab, y));
      return ctx.b().Select(pos, y, ya);
    }
    case Activation::kNone:
      break;
  }
  return y;
}

// ---- Convolutions ----

absl::StatusOr<Instruction*> Convolution(LoweringContext& ctx, Instruction* lhs,
                                         Instruction* rhs, const SpatialDim& h,
                                         const SpatialDim& w, int64_t groups) {
  hlo::Attributes attrs;
  for (const SpatialDim* s : {&h, &w}) {
    hlo::WindowDim d;
    d.size = s->k;
    d.stride = s->stride;
    d.pad_lo = s->pad_lo;
    d.pad_hi = s->pad_hi;
    d.rhs_dilate = s->dilation;
    attrs.window.push_back(d);
  }
  attrs.conv = Nhwc(2, 3);
  attrs.feature_group_count = groups;
  return ctx.b().Add(Opcode::kConvolution, {lhs, rhs}, std::move(attrs));
}

// Conv2D, _FusedConv2D, DepthwiseConv2dNative, FusedDepthwiseConv2dNative.
absl::Status LowerConv(LoweringContext& ctx, const tf::Node& node) {
  const std::string& op = node.op();
  const bool depthwise = op == "DepthwiseConv2dNative" || op == "FusedDepthwiseConv2dNative";
  const bool fused = op == "_FusedConv2D" || op == "FusedDepthwiseConv2dNative";
  EpilogueSpec spec;
  if (fused) {
    TFJIT_ASSIGN_OR_RETURN(spec, ParseEpilogue(node));
  }
  TFJIT_ASSIGN_OR_RETURN(ConvAttrs attrs, ReadConvAttrs(node));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * f, ctx.Input(node, 1));
  const hlo::Shape& xs = x->shape();
  const hlo::Shape& fs = f->shape();
  if (xs.rank() != 4 || fs.rank() != 4) {
    return InvalidArgument("node %s: input must be 4-D (NHWC) and filter 4-D, got %s and %s",
                           node.DebugName(), xs.ToString(), fs.ToString());
  }
  const int64_t in_c = xs.dim(3);
  int64_t groups = 1;
  if (depthwise) {
    if (fs.dim(2) != in_c) {
      return InvalidArgument("node %s: filter %s must be [h, w, %d, multiplier] for input %s",
                             node.DebugName(), fs.ToString(), in_c, xs.ToString());
    }
    // [h, w, in, mult] -> [h, w, 1, in * mult]: group c owns output features c * mult + m,
    // TF's depthwise output order.
    TFJIT_ASSIGN_OR_RETURN(f, ctx.b().Reshape(f, {fs.dim(0), fs.dim(1), 1, in_c * fs.dim(3)}));
    groups = in_c;
  } else {
    const int64_t fc = fs.dim(2);
    if (fc == 0 || in_c % fc != 0 || fs.dim(3) % (in_c / fc) != 0) {
      return InvalidArgument("node %s: input depth must be evenly divisible by filter depth, "
                             "and the filter's output depth by the group count: input %s, "
                             "filter %s",
                             node.DebugName(), xs.ToString(), fs.ToString());
    }
    groups = in_c / fc;
  }
  TFJIT_ASSIGN_OR_RETURN(SpatialDim h, Spatial(node, attrs, 1, xs.dim(1), fs.dim(0)));
  TFJIT_ASSIGN_OR_RETURN(SpatialDim w, Spatial(node, attrs, 2, xs.dim(2), fs.dim(1)));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y, Convolution(ctx, x, f, h, w, groups));
  TFJIT_ASSIGN_OR_RETURN(y, ApplyEpilogue(ctx, node, spec, y));
  ctx.SetOutput(node, 0, y);
  return absl::OkStatus();
}

// Conv2DBackpropInput(input_sizes, filter, out_backprop): with the forward geometry (stride s,
// dilation d, leading pad p, effective size e = (k - 1) * d + 1), dx is the convolution of dy
// dilated by s (lhs_dilate) with the reversed filter, padded e - 1 - p before and
// in - 1 - (out - 1) * s + p after so that exactly `in` outputs remain.
absl::Status LowerConv2DBackpropInput(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ConvAttrs attrs, ReadConvAttrs(node));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ctx.ConstantInputAsInts(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * f, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * dy, ctx.Input(node, 2));
  const hlo::Shape& fs = f->shape();
  const hlo::Shape& ds = dy->shape();
  if (sizes.size() != 4 || fs.rank() != 4 || ds.rank() != 4 ||
      *std::min_element(sizes.begin(), sizes.end()) < 0 || sizes[3] != fs.dim(2) ||
      ds.dim(0) != sizes[0] || ds.dim(3) != fs.dim(3)) {
    return InvalidArgument("node %s: input_sizes [%s], filter %s and out_backprop %s disagree: "
                           "need 4 input sizes, input depth = filter in_channels, out_backprop "
                           "depth = filter out_channels, equal batch",
                           node.DebugName(), absl::StrJoin(sizes, ","), fs.ToString(),
                           ds.ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(SpatialDim h, Spatial(node, attrs, 1, sizes[1], fs.dim(0)));
  TFJIT_ASSIGN_OR_RETURN(SpatialDim w, Spatial(node, attrs, 2, sizes[2], fs.dim(1)));
  if (h.out != ds.dim(1) || w.out != ds.dim(2)) {
    return InvalidArgument("node %s: out_backprop %s does not match the forward output size "
                           "[%d, %d] computed from input_sizes [%s] and the filter",
                           node.DebugName(), ds.ToString(), h.out, w.out,
                           absl::StrJoin(sizes, ","));
  }
  const DType t = ds.element_type();
  int64_t elements = 1;
  for (int64_t s : sizes) elements *= s;
  if (elements == 0 || ds.num_elements() == 0 || fs.num_elements() == 0) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(t, 0.0, sizes));
    ctx.SetOutput(node, 0, zeros);
    return absl::OkStatus();
  }
  hlo::Attributes a;
  for (const SpatialDim* s : {&h, &w}) {
    const int64_t eff = (s->k - 1) * s->dilation + 1;
    hlo::WindowDim d;
    d.size = s->k;
    d.lhs_dilate = s->stride;
    d.rhs_dilate = s->dilation;
    d.pad_lo = eff - 1 - s->pad_lo;
    d.pad_hi = s->in - 1 - (s->out - 1) * s->stride + s->pad_lo;
    a.window.push_back(d);
  }
  a.conv = Nhwc(/*kernel_in=*/3, /*kernel_out=*/2);  // the filter's io swap
  hlo::Attributes rev;
  rev.dimensions = {0, 1};
  TFJIT_ASSIGN_OR_RETURN(Instruction * fr, ctx.b().Add(Opcode::kReverse, {f}, std::move(rev)));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Add(Opcode::kConvolution, {dy, fr}, a));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// _FusedMatMul(a, b, args...): dot with the transposes, then the epilogue.
absl::Status LowerFusedMatMul(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(EpilogueSpec spec, ParseEpilogue(node));
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(node, "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(node, "transpose_b", false));
  const hlo::Shape& sa = a->shape();
  const hlo::Shape& sb = b->shape();
  if (sa.rank() != 2 || sb.rank() != 2 || sa.dim(ta ? 0 : 1) != sb.dim(tb ? 1 : 0)) {
    return InvalidArgument("node %s: Matrix size-incompatible: In[0]: %s, In[1]: %s "
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
bool CanLowerConvAttrs(const tf::Node& node, std::string* why) {
  absl::StatusOr<ConvAttrs> attrs = ReadConvAttrs(node);
  if (!attrs.ok()) {
    *why = std::string(attrs.status().message());
    return false;
  }
  return true;
}

bool CanLowerFusedConv(const tf::Node& node, std::string* why) {
  absl::StatusOr<EpilogueSpec> spec = ParseEpilogue(node);
  if (!spec.ok()) {
    *why = std::string(spec.status().message());
    return false;
  }
  return CanLowerConvAttrs(node, why);
}

bool CanLowerFusedMatMul(const tf::Node& node, std::string* why) {
  absl::StatusOr<EpilogueSpec> spec = ParseEpilogue(node);
  if (!spec.ok()) {
    *why = std::string(spec.status().message());
    return false;
  }
  return true;
}

}  // namespace

void AppendConvLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
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
