// Lowerings of the nn_more ops to HLO (docs/DESIGN.md, "Op families"), with the semantics of
// TF's XLA kernels (tf2xla): FusedBatchNorm/V2/V3 as reductions and elementwise arithmetic in
// float (inference and training), MaxPoolV2 / MaxPool3D / AvgPool3D as reduce-window in the
// node's own layout, Conv3D as a 3-D convolution, LRN as a reduce-window over depth of the squares.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

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

// ---- FusedBatchNorm / V2 / V3 ----

// Per-channel vector `v` broadcast to `dims` along `feature`.
absl::StatusOr<Instruction*> AlongFeature(LoweringContext& ctx, Instruction* v,
                                          const std::vector<int64_t>& dims, int64_t feature) {
  return ctx.b().Broadcast(v, dims, {feature});
}

absl::StatusOr<Instruction*> SumOverAllBut(LoweringContext& ctx, Instruction* x, int64_t feature) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (d != feature) dims.push_back(d);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(DType::kFloat32, 0.0, {}));
  hlo::Computation* add =
      hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, DType::kFloat32);
  return ctx.b().Reduce(x, zero, dims, add);
}

struct BatchNormNode {
  float epsilon = 1e-4f, factor = 1.0f;
  bool training = true;
  int64_t feature = 3, channels = 0, count = 0;
};

absl::StatusOr<BatchNormNode> ReadBatchNorm(const tf::Node& node, const hlo::Shape& x) {
  BatchNormNode b;
  TFJIT_ASSIGN_OR_RETURN(b.epsilon, tf::GetFloatAttrOr(node, "epsilon", 1e-4f));
  TFJIT_ASSIGN_OR_RETURN(b.factor, tf::GetFloatAttrOr(node, "exponential_avg_factor", 1.0f));
  TFJIT_ASSIGN_OR_RETURN(b.training, tf::GetBoolAttrOr(node, "is_training", true));
  TFJIT_ASSIGN_OR_RETURN(std::string format, tf::GetStringAttrOr(node, "data_format", "NHWC"));
  const bool last = format == "NHWC" || format == "NDHWC";
  if (!last && format != "NCHW" && format != "NCDHW") {
    return InvalidArgument("node %s: Invalid data format: %s", node.DebugName(), format);
  }
  if ((x.rank() != 4 && x.rank() != 5) || static_cast<int64_t>(format.size()) != x.rank()) {
    return InvalidArgument(
        "node %s: input must be 4 or 5-dimensional matching data_format %s, "
        "got %s",
        node.DebugName(), format, x.ToString());
  }
  b.feature = last ? x.rank() - 1 : 1;
  b.channels = x.dim(static_cast<int>(b.feature));
  b.count = b.channels == 0 ? 0 : x.num_elements() / b.channels;
  return b;
}

// Inference: the given statistics; training: the batch's, as the fallback kernel (see
// FusedBatchNormKernel for the outputs).
absl::Status LowerFusedBatchNorm(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(BatchNormNode bn, ReadBatchNorm(node, x->shape()));
  std::vector<Instruction*> p(5, nullptr);
  static constexpr const char* kNames[] = {"", "scale", "offset", "mean", "variance"};
  for (int i = 1; i <= 4; ++i) {
    TFJIT_ASSIGN_OR_RETURN(p[static_cast<size_t>(i)], ctx.Input(node, i));
    const hlo::Shape& s = p[static_cast<size_t>(i)]->shape();
    const bool need = i <= 2 || !bn.training || bn.factor != 1.0f;
    if (s.rank() != 1 || s.element_type() != DType::kFloat32 || (need && s.dim(0) != bn.channels)) {
      return InvalidArgument("node %s: %s must be a float32 vector of the %d channels of x, got %s",
                             node.DebugName(), kNames[i], bn.channels, s.ToString());
    }
  }
  const DType t = x->shape().element_type();
  const std::vector<int64_t> dims = x->shape().dims();
  const std::vector<int64_t> cdims = {bn.channels};
  TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, DType::kFloat32));
  Instruction *mean = p[3], *var = p[4], *out_mean = p[3], *out_var = p[4];
  Instruction* centered = nullptr;
  if (bn.training) {
    const double n = static_cast<double>(bn.count);
    if (bn.count == 0) {
      TFJIT_ASSIGN_OR_RETURN(mean, ctx.Splat(DType::kFloat32, std::nan(""), cdims));
      var = out_mean = out_var = mean;
    } else {
      TFJIT_ASSIGN_OR_RETURN(Instruction * inv_n, ctx.Splat(DType::kFloat32, 1.0 / n, cdims));
      TFJIT_ASSIGN_OR_RETURN(Instruction * sum, SumOverAllBut(ctx, x, bn.feature));
      TFJIT_ASSIGN_OR_RETURN(mean, ctx.b().Binary(Opcode::kMultiply, sum, inv_n));
      TFJIT_ASSIGN_OR_RETURN(Instruction * mb, AlongFeature(ctx, mean, dims, bn.feature));
      TFJIT_ASSIGN_OR_RETURN(centered, ctx.b().Binary(Opcode::kSubtract, x, mb));
      TFJIT_ASSIGN_OR_RETURN(Instruction * sq,
                             ctx.b().Binary(Opcode::kMultiply, centered, centered));
      TFJIT_ASSIGN_OR_RETURN(Instruction * sqs, SumOverAllBut(ctx, sq, bn.feature));
      TFJIT_ASSIGN_OR_RETURN(var, ctx.b().Binary(Opcode::kMultiply, sqs, inv_n));
      TFJIT_ASSIGN_OR_RETURN(Instruction * bessel,
                             ctx.Splat(DType::kFloat32, n / std::max(n - 1.0, 1.0), cdims));
      TFJIT_ASSIGN_OR_RETURN(out_var, ctx.b().Binary(Opcode::kMultiply, var, bessel));
      out_mean = mean;
      if (bn.factor != 1.0f) {
        TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Splat(DType::kFloat32, 1.0 - bn.factor, cdims));
        TFJIT_ASSIGN_OR_RETURN(Instruction * f, ctx.Splat(DType::kFloat32, bn.factor, cdims));
        auto blend = [&](Instruction* old, Instruction* now) -> absl::StatusOr<Instruction*> {
          TFJIT_ASSIGN_OR_RETURN(Instruction * l, ctx.b().Binary(Opcode::kMultiply, old, a));
          TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kMultiply, now, f));
          return ctx.b().Binary(Opcode::kAdd, l, r);
        };
        TFJIT_ASSIGN_OR_RETURN(out_mean, blend(p[3], mean));
        TFJIT_ASSIGN_OR_RETURN(out_var, blend(p[4], out_var));
      }
    }
  }
  // y = x * mul + add with mul = scale / sqrt(var + eps), add = offset - mean * mul.
  Instruction* y = x;
  if (x->shape().num_elements() > 0) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * eps, ctx.Splat(DType::kFloat32, bn.epsilon, cdims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ve, ctx.b().Binary(Opcode::kAdd, var, eps));
    TFJIT_ASSIGN_OR_RETURN(Instruction * sd, ctx.b().Unary(Opcode::kSqrt, ve));
    TFJIT_ASSIGN_OR_RETURN(Instruction * mul, ctx.b().Binary(Opcode::kDivide, p[1], sd));
    TFJIT_ASSIGN_OR_RETURN(Instruction * mm, ctx.b().Binary(Opcode::kMultiply, mean, mul));
    TFJIT_ASSIGN_OR_RETURN(Instruction * add, ctx.b().Binary(Opcode::kSubtract, p[2], mm));
    TFJIT_ASSIGN_OR_RETURN(Instruction * mulb, AlongFeature(ctx, mul, dims, bn.feature));
    TFJIT_ASSIGN_OR_RETURN(Instruction * addb, AlongFeature(ctx, add, dims, bn.feature));
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kMultiply, x, mulb));
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Binary(Opcode::kAdd, y, addb));
  }
  TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Convert(y, t));
  ctx.SetOutput(node, 0, y);
  ctx.SetOutput(node, 1, out_mean);
  ctx.SetOutput(node, 2, out_var);
  ctx.SetOutput(node, 3, mean);
  ctx.SetOutput(node, 4, var);
  if (node.num_outputs() > 5) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(DType::kFloat32, 0.0, {}));
    ctx.SetOutput(node, 5, zero);
  }
  return absl::OkStatus();
}

// ---- N-d pools ----

// The reduce-window of a pool over every dim of x (in the node's layout) and, for AvgPool,
// the output's spatial sizes and the first spatial dim.
struct NdPool {
  std::vector<hlo::WindowDim> window;
  std::vector<int64_t> spatial_out;
  int64_t first_spatial = 1;
};

absl::StatusOr<NdPool> PoolOf(const tf::Node& node, const hlo::Shape& x,
                              const std::vector<int64_t>& ksize,
                              const std::vector<int64_t>& strides) {
  const int rank = x.rank();
  TFJIT_ASSIGN_OR_RETURN(std::string format,
                         tf::GetStringAttrOr(node, "data_format", rank == 5 ? "NDHWC" : "NHWC"));
  const bool first = format == "NCHW" || format == "NCDHW";
  if (static_cast<int>(format.size()) != rank ||
      (format != "NHWC" && format != "NDHWC" && !first)) {
    return InvalidArgument("node %s: data_format '%s' does not fit input %s", node.DebugName(),
                           format, x.ToString());
  }
  if (static_cast<int>(ksize.size()) != rank || static_cast<int>(strides.size()) != rank) {
    return InvalidArgument(
        "node %s: Sliding window ksize and strides must specify %d "
        "dimensions",
        node.DebugName(), rank);
  }
  const int feature = first ? 1 : rank - 1;
  if (ksize[0] != 1 || strides[0] != 1 || ksize[static_cast<size_t>(feature)] != 1 ||
      strides[static_cast<size_t>(feature)] != 1) {
    return InvalidArgument(
        "node %s: Pooling is not yet supported on the batch or depth "
        "dimension.",
        node.DebugName());
  }
  TFJIT_ASSIGN_OR_RETURN(std::string padding, tf::GetStringAttr(node, "padding"));
  if (padding != "SAME" && padding != "VALID") {
    return InvalidArgument("node %s: padding must be SAME or VALID, got '%s'", node.DebugName(),
                           padding);
  }
  tf::WindowAttrs a;
  a.padding = padding == "SAME" ? tf::Padding::kSame : tf::Padding::kValid;
  a.strides = strides;
  a.dilations.assign(static_cast<size_t>(rank), 1);
  a.explicit_paddings.assign(2 * static_cast<size_t>(rank), 0);
  NdPool p;
  p.first_spatial = first ? 2 : 1;
  p.window.resize(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) {
    if (d == 0 || d == feature) continue;
    const size_t i = static_cast<size_t>(d);
    if (ksize[i] <= 0 || strides[i] <= 0) {
      return InvalidArgument("node %s: ksize and strides must be positive", node.DebugName());
    }
    TFJIT_ASSIGN_OR_RETURN(tf::SpatialDim s, tf::ComputeSpatialDim(node, a, d, x.dim(d), ksize[i]));
    p.window[i].size = s.k;
    p.window[i].stride = s.stride;
    p.window[i].pad_lo = s.pad_before;
    p.window[i].pad_hi = s.pad_after;
    p.spatial_out.push_back(s.out);
  }
  return p;
}

absl::Status EmitMaxPool(LoweringContext& ctx, const tf::Node& node, Instruction* x, NdPool pool) {
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * init, ctx.Splat(t, LowestValue(t), {}));
  hlo::Attributes attrs;
  attrs.window = std::move(pool.window);
  hlo::Computation* max = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                         ctx.b().Add(Opcode::kReduceWindow, {x, init}, std::move(attrs), {max}));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Sum over the window divided by the count of in-bounds cells (a constant over the spatial
// output dims); 16-bit floats sum in f32.
absl::Status EmitAvgPool(LoweringContext& ctx, const tf::Node& node, Instruction* x, NdPool pool) {
  const DType t = x->shape().element_type();
  const DType acc_t = (t == DType::kFloat16 || t == DType::kBFloat16) ? DType::kFloat32 : t;
  const std::vector<int64_t> in_dims = x->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, acc_t));
  const size_t k = pool.spatial_out.size();
  Tensor counts(acc_t, pool.spatial_out);
  std::vector<int64_t> bdims;
  for (size_t j = 0; j < k; ++j) bdims.push_back(pool.first_spatial + static_cast<int64_t>(j));
  for (int64_t e = 0; e < counts.num_elements(); ++e) {
    int64_t rest = e, n = 1;
    for (size_t j = k; j-- > 0;) {
      const int64_t o = rest % pool.spatial_out[j];
      rest /= pool.spatial_out[j];
      const size_t d = static_cast<size_t>(bdims[j]);
      const hlo::WindowDim& w = pool.window[d];
      const int64_t start = o * w.stride - w.pad_lo;
      n *= std::min(start + w.size, in_dims[d]) - std::max<int64_t>(start, 0);
    }
    const double c = static_cast<double>(std::max<int64_t>(n, 1));
    if (acc_t == DType::kFloat64)
      counts.data<double>()[e] = c;
    else
      counts.data<float>()[e] = static_cast<float>(c);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(acc_t, 0.0, {}));
  hlo::Attributes attrs;
  attrs.window = std::move(pool.window);
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, acc_t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum,
                         ctx.b().Add(Opcode::kReduceWindow, {x, zero}, std::move(attrs), {add}));
  Instruction* count = ctx.b().Constant(hlo::Literal::FromTensor(counts));
  TFJIT_ASSIGN_OR_RETURN(Instruction * cb, ctx.b().Broadcast(count, sum->shape().dims(), bdims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kDivide, sum, cb));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerMaxPoolV2(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, ctx.ConstantInputAsInts(node, 2));
  if (x->shape().rank() != 4) {
    return InvalidArgument("node %s: input must be 4-dimensional, got %s", node.DebugName(),
                           x->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(NdPool pool, PoolOf(node, x->shape(), ksize, strides));
  return EmitMaxPool(ctx, node, x, std::move(pool));
}

template <bool kMax>
absl::Status LowerPool3D(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, tf::GetIntListAttr(node, "ksize"));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, tf::GetIntListAttr(node, "strides"));
  if (x->shape().rank() != 5) {
    return InvalidArgument("node %s: input must be 5-dimensional, got %s", node.DebugName(),
                           x->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(NdPool pool, PoolOf(node, x->shape(), ksize, strides));
  if constexpr (kMax) return EmitMaxPool(ctx, node, x, std::move(pool));
  return EmitAvgPool(ctx, node, x, std::move(pool));
}

// ---- Conv3D ----

// A convolution with three spatial dims in the node's layout (NDHWC or NCDHW) and the
// [kd, kh, kw, in, out] filter; groups = input depth / filter in-depth.
absl::Status LowerConv3D(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * f, ctx.Input(node, 1));
  const hlo::Shape& xs = x->shape();
  const hlo::Shape& fs = f->shape();
  TFJIT_ASSIGN_OR_RETURN(std::string format, tf::GetStringAttrOr(node, "data_format", "NDHWC"));
  const bool nc = format == "NCDHW";
  if ((format != "NDHWC" && !nc) || xs.rank() != 5 || fs.rank() != 5) {
    return InvalidArgument("node %s: need NDHWC/NCDHW and 5-D input and filter, got %s, %s and %s",
                           node.DebugName(), format, xs.ToString(), fs.ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, tf::GetIntListAttr(node, "strides"));
  std::vector<int64_t> dil(5, 1);
  if (tf::FindAttr(node, "dilations") != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(dil, tf::GetIntListAttr(node, "dilations"));
  }
  TFJIT_ASSIGN_OR_RETURN(std::string padding, tf::GetStringAttr(node, "padding"));
  const int64_t feature = nc ? 1 : 4, first = nc ? 2 : 1;
  const int64_t in_c = xs.dim(static_cast<int>(feature));
  if (strides.size() != 5 || dil.size() != 5 || strides[0] != 1 || dil[0] != 1 ||
      strides[static_cast<size_t>(feature)] != 1 || dil[static_cast<size_t>(feature)] != 1 ||
      (padding != "SAME" && padding != "VALID") || fs.dim(3) <= 0 || in_c % fs.dim(3) != 0 ||
      fs.dim(4) % (in_c / fs.dim(3)) != 0) {
    return InvalidArgument(
        "node %s: bad Conv3D attrs or shapes: strides %d entries, padding %s, "
        "input %s, filter %s",
        node.DebugName(), strides.size(), padding, xs.ToString(), fs.ToString());
  }
  tf::WindowAttrs a;
  a.padding = padding == "SAME" ? tf::Padding::kSame : tf::Padding::kValid;
  a.strides = strides;
  a.dilations = dil;
  a.explicit_paddings.assign(10, 0);
  hlo::Attributes attrs;
  for (int64_t j = 0; j < 3; ++j) {
    const int d = static_cast<int>(first + j);
    TFJIT_ASSIGN_OR_RETURN(tf::SpatialDim s, tf::ComputeSpatialDim(node, a, d, xs.dim(d),
                                                                   fs.dim(static_cast<int>(j))));
    hlo::WindowDim w;
    w.size = s.k;
    w.stride = s.stride;
    w.pad_lo = s.pad_before;
    w.pad_hi = s.pad_after;
    w.rhs_dilate = s.dilation;
    attrs.window.push_back(w);
  }
  hlo::ConvDims& c = attrs.conv;
  c.input_batch = c.output_batch = 0;
  c.input_feature = c.output_feature = feature;
  c.input_spatial = c.output_spatial = {first, first + 1, first + 2};
  c.kernel_spatial = {0, 1, 2};
  c.kernel_input_feature = 3;
  c.kernel_output_feature = 4;
  attrs.feature_group_count = in_c / fs.dim(3);
  TFJIT_ASSIGN_OR_RETURN(Instruction * y,
                         ctx.b().Add(Opcode::kConvolution, {x, f}, std::move(attrs)));
  ctx.SetOutput(node, 0, y);
  return absl::OkStatus();
}

// ---- LRN ----

// sqr_sum = reduce-window(x^2) over depth (window 2r + 1, padded r); y = x * (bias + alpha *
// sqr_sum)^-beta, in f32 for 16-bit types.
absl::Status LowerLrn(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape& s = x->shape();
  if (s.rank() != 4) {
    return InvalidArgument("node %s: input must be 4-dimensional, got %s", node.DebugName(),
                           s.ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(int64_t radius, tf::GetIntAttrOr(node, "depth_radius", 5));
  TFJIT_ASSIGN_OR_RETURN(float bias, tf::GetFloatAttrOr(node, "bias", 1.0f));
  TFJIT_ASSIGN_OR_RETURN(float alpha, tf::GetFloatAttrOr(node, "alpha", 1.0f));
  TFJIT_ASSIGN_OR_RETURN(float beta, tf::GetFloatAttrOr(node, "beta", 0.5f));
  if (radius < 0 || radius > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("node %s: depth_radius = %d larger than int max or negative",
                           node.DebugName(), radius);
  }
  const DType t = s.element_type();
  const std::vector<int64_t> dims = s.dims();
  TFJIT_ASSIGN_OR_RETURN(Instruction * xf, ctx.b().Convert(x, DType::kFloat32));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sq, ctx.b().Binary(Opcode::kMultiply, xf, xf));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(DType::kFloat32, 0.0, {}));
  hlo::Attributes attrs;
  attrs.window.resize(4);
  attrs.window[3].size = 2 * radius + 1;
  attrs.window[3].pad_lo = radius;
  attrs.window[3].pad_hi = radius;
  hlo::Computation* add =
      hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, DType::kFloat32);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum,
                         ctx.b().Add(Opcode::kReduceWindow, {sq, zero}, std::move(attrs), {add}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Splat(DType::kFloat32, alpha, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ctx.Splat(DType::kFloat32, bias, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * scaled, ctx.b().Binary(Opcode::kMultiply, sum, a));
  TFJIT_ASSIGN_OR_RETURN(Instruction * base, ctx.b().Binary(Opcode::kAdd, scaled, b));
  // base^-beta. TF's default beta = 0.5 is rsqrt (sqrt and a division, which vectorize; pow is
  // a libm call per element); beta = 1 a division. Both round within an ulp of pow's result.
  Instruction* pw = nullptr;
  if (beta == 0.5f) {
    TFJIT_ASSIGN_OR_RETURN(pw, ctx.b().Unary(Opcode::kRsqrt, base));
  } else if (beta == 1.0f) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * one, ctx.Splat(DType::kFloat32, 1.0, dims));
    TFJIT_ASSIGN_OR_RETURN(pw, ctx.b().Binary(Opcode::kDivide, one, base));
  } else {
    TFJIT_ASSIGN_OR_RETURN(Instruction * nb, ctx.Splat(DType::kFloat32, -beta, dims));
    TFJIT_ASSIGN_OR_RETURN(pw, ctx.b().Binary(Opcode::kPower, base, nb));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * y, ctx.b().Binary(Opcode::kMultiply, xf, pw));
  TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Convert(y, t));
  ctx.SetOutput(node, 0, y);
  return absl::OkStatus();
}

}  // namespace

void AppendNnMoreLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
                                  {"FusedBatchNorm", LowerFusedBatchNorm, /*float_only=*/true},
                                  {"FusedBatchNormV2", LowerFusedBatchNorm, true},
                                  {"FusedBatchNormV3", LowerFusedBatchNorm, true},
                                  {"MaxPoolV2", LowerMaxPoolV2},
                                  {"MaxPool3D", LowerPool3D<true>, true},
                                  {"AvgPool3D", LowerPool3D<false>, true},
                                  {"LRN", LowerLrn, true},
                                  {"Conv3D", LowerConv3D, true},
                              });
}

}  // namespace tfjit::tf2hlo
