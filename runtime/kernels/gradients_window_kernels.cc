// Fallback kernels of the windowed ops' gradients (the gradients family, docs/DESIGN.md "Op
// families"), with TF's CPU semantics, dtypes and error messages: the pooling gradients
// (AvgPoolGrad, MaxPoolGrad/V2, MaxPoolGradGrad/V2), FusedBatchNormGrad/V2/V3, the convolution
// backprops (Conv2DBackpropFilter, DepthwiseConv2dNativeBackpropInput/Filter), the resize
// gradients (ResizeBilinearGrad, ResizeNearestNeighborGrad), LRNGrad and the TF-only
// Dilation2DBackpropInput/Filter; the 3-D ones are in gradients_3d_kernels.cc. The 4-D image ops
// run NHWC and the 3-D ones NDHWC; channels-first nodes are transposed in and out (TF's CPU kernels
// take channels-last only, XLA's both). The elementwise, loss and shape-op gradients are in
// gradients_kernels.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "frontend/attr.h"
#include "frontend/conv_attrs.h"
#include "runtime/kernels/cwise_ops.h"
#include "runtime/kernels/gather_util.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

// ---- AvgPoolGrad, MaxPoolGrad ----

// The pooling window of a *PoolGrad node over an input of `input_dims` (node layout); `nchw`
// tells the caller to run on NHWC-transposed tensors (TF's CPU kernels take NHWC only; its XLA
// kernels take both).
// MaxPoolGradV2's window attrs: ksize and strides from inputs 3 and 4 (node layout), padding
// SAME or VALID.
absl::StatusOr<tf::WindowAttrs> PoolAttrsV2(const KernelContext& ctx) {
  tf::WindowAttrs a;
  TFJIT_ASSIGN_OR_RETURN(std::string format,
                         tf::GetStringAttrOr(ctx.node(), "data_format", "NHWC"));
  if (format != "NHWC" && format != "NCHW") {
    return KernelError(ctx, "Invalid data format: %s", format);
  }
  a.nchw = format == "NCHW";
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(3), "ksize", &a.ksize));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(4), "strides", &a.strides));
  if (a.ksize.size() != 4) {
    return KernelError(ctx, "Sliding window ksize field must specify 4 dimensions");
  }
  if (a.strides.size() != 4) {
    return KernelError(ctx, "Sliding window strides field must specify 4 dimensions");
  }
  if (a.nchw) {
    a.ksize = tf::NchwToNhwc(a.ksize);
    a.strides = tf::NchwToNhwc(a.strides);
  }
  if (a.ksize[0] != 1 || a.strides[0] != 1) {
    return KernelError(ctx, "Pooling is not yet supported on the batch dimension.");
  }
  if (a.ksize[3] != 1 || a.strides[3] != 1) {
    return KernelError(ctx, "Pooling is not yet supported on the depth dimension.");
  }
  for (int d = 1; d <= 2; ++d) {
    if (a.ksize[static_cast<size_t>(d)] <= 0 || a.strides[static_cast<size_t>(d)] <= 0) {
      return KernelError(ctx, "ksize and strides must be positive, got ksize %s strides %s",
                         DimsString(a.ksize), DimsString(a.strides));
    }
  }
  TFJIT_ASSIGN_OR_RETURN(std::string padding, tf::GetStringAttr(ctx.node(), "padding"));
  if (padding != "SAME" && padding != "VALID") {
    return KernelError(ctx, "padding must be SAME or VALID, got '%s'", padding);
  }
  a.padding = padding == "SAME" ? tf::Padding::kSame : tf::Padding::kValid;
  return a;
}

absl::StatusOr<tf::Window2D> PoolGradWindow(const KernelContext& ctx,
                                            const std::vector<int64_t>& input_dims, bool* nchw,
                                            std::vector<int64_t>* nhwc_dims) {
  tf::WindowAttrs attrs;
  if (ctx.node().op() == "MaxPoolGradV2" || ctx.node().op() == "MaxPoolGradGradV2") {
    if (input_dims.size() != 4) {
      return KernelError(ctx, "orig_input must be 4-dimensional, got %s", DimsString(input_dims));
    }
    TFJIT_ASSIGN_OR_RETURN(attrs, PoolAttrsV2(ctx));
  } else {
    TFJIT_ASSIGN_OR_RETURN(attrs,
                           tf::ReadPoolAttrs(ctx.node(), input_dims, tf::Layouts::kNhwcOrNchw));
  }
  *nchw = attrs.nchw;
  *nhwc_dims = attrs.nchw ? tf::NchwToNhwc(input_dims) : input_dims;
  return tf::ComputeWindow(ctx.node(), attrs, (*nhwc_dims)[1], (*nhwc_dims)[2], attrs.ksize[1],
                           attrs.ksize[2]);
}

// Checks that the gradient (NHWC) has the pool's output shape.
absl::Status CheckPoolGradShape(const KernelContext& ctx, const Tensor& grad,
                                const std::vector<int64_t>& in, const tf::Window2D& w) {
  const std::vector<int64_t> want = {in[0], w.h.out, w.w.out, in[3]};
  if (grad.dims() != want) {
    return KernelError(ctx, "the gradient has shape %s but the pool's output shape is %s (NHWC)",
                       DimsString(grad.dims()), DimsString(want));
  }
  return absl::OkStatus();
}

// Visits the windows of batch entry n: cell(h0, h1, w0, w1, o) with the window clipped to the
// input and o the flat NHWC offset of its output position's first channel.
template <typename Cell>
void ForEachPoolWindow(int64_t n, const tf::Window2D& win, int64_t in_h, int64_t in_w,
                       int64_t depth, Cell cell) {
  const tf::SpatialDim& h = win.h;
  const tf::SpatialDim& w = win.w;
  for (int64_t oh = 0; oh < h.out; ++oh) {
    const int64_t hs = oh * h.stride - h.pad_before;
    const int64_t h0 = std::max<int64_t>(hs, 0), h1 = std::min(hs + h.k, in_h);
    for (int64_t ow = 0; ow < w.out; ++ow) {
      const int64_t ws = ow * w.stride - w.pad_before;
      const int64_t w0 = std::max<int64_t>(ws, 0), w1 = std::min(ws + w.k, in_w);
      cell(h0, h1, w0, w1, ((n * h.out + oh) * w.out + ow) * depth);
    }
  }
}

// AvgPoolGrad(orig_input_shape, grad): each output gradient spread evenly over the
// non-padding cells of its window (TF's AvgPool divides by that count).
absl::Status AvgPoolGradKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& shape_t = ctx.input(0);
  if (shape_t.rank() != 1 || shape_t.num_elements() != 4) {
    return KernelError(ctx, "orig_input_shape must be 1-dimensional and 4 elements, got %s",
                       shape_t.ShapeString());
  }
  std::vector<int64_t> shape;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, shape_t, "orig_input_shape", &shape));
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, ctx.input(1).dtype(), shape));
  bool nchw = false;
  std::vector<int64_t> in;
  TFJIT_ASSIGN_OR_RETURN(tf::Window2D win, PoolGradWindow(ctx, shape, &nchw, &in));
  const Tensor grad = nchw ? TransposeTensor(ctx, ctx.input(1), {0, 2, 3, 1}) : ctx.input(1);
  TFJIT_RETURN_IF_ERROR(CheckPoolGradShape(ctx, grad, in, win));
  Tensor out(grad.dtype(), in);
  const int64_t depth = in[3];
  const bool ok = DispatchFloat(grad.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* g = grad.data<T>();
    T* y = out.data<T>();
    ParallelFor(ctx, in[0], grad.num_elements() / std::max<int64_t>(1, in[0]) * win.h.k * win.w.k,
                [&](int64_t b, int64_t e) {
                  std::vector<C> acc(static_cast<size_t>(in[1] * in[2] * depth));
                  for (int64_t n = b; n < e; ++n) {
                    std::fill(acc.begin(), acc.end(), C(0));
                    ForEachPoolWindow(
                        n, win, in[1], in[2], depth,
                        [&](int64_t h0, int64_t h1, int64_t w0, int64_t w1, int64_t o) {
                          const int64_t count = (h1 - h0) * (w1 - w0);
                          if (count == 0) return;
                          for (int64_t c = 0; c < depth; ++c) {
                            const C v =
                                static_cast<C>(static_cast<T>(C(g[o + c]) / static_cast<C>(count)));
                            for (int64_t i = h0; i < h1; ++i) {
                              for (int64_t j = w0; j < w1; ++j)
                                acc[static_cast<size_t>((i * in[2] + j) * depth + c)] += v;
                            }
                          }
                        });
                    T* yn = y + n * in[1] * in[2] * depth;
                    for (size_t k = 0; k < acc.size(); ++k) yn[k] = static_cast<T>(acc[k]);
                  }
                });
  });
  if (!ok) return UnsupportedDType(ctx, grad.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, nchw ? TransposeTensor(ctx, out, {0, 3, 1, 2}) : std::move(out));
  return absl::OkStatus();
}

// MaxPoolGrad(orig_input, orig_output, grad): each output gradient goes to its window's
// maximum, the first one in row-major window order on ties (TF's CPU argmax; XLA's
// select-and-scatter with >= agrees).
absl::Status MaxPoolGradKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, ctx.node().op() == "MaxPoolGradV2" ? 5 : 3));
  bool nchw = false;
  std::vector<int64_t> in;
  TFJIT_ASSIGN_OR_RETURN(tf::Window2D win, PoolGradWindow(ctx, ctx.input(0).dims(), &nchw, &in));
  auto nhwc = [&](const Tensor& t) { return nchw ? TransposeTensor(ctx, t, {0, 2, 3, 1}) : t; };
  const Tensor x = nhwc(ctx.input(0));
  const Tensor grad = nhwc(ctx.input(2));
  const std::vector<int64_t> out_dims = {in[0], win.h.out, win.w.out, in[3]};
  const std::vector<int64_t> orig_out =
      nchw ? tf::NchwToNhwc(ctx.input(1).dims()) : ctx.input(1).dims();
  if (orig_out != out_dims) {
    return KernelError(ctx, "orig_output has shape %s but the pool's output shape is %s",
                       ctx.input(1).ShapeString(), DimsString(out_dims));
  }
  TFJIT_RETURN_IF_ERROR(CheckPoolGradShape(ctx, grad, in, win));
  if (x.dtype() != grad.dtype()) {
    return KernelError(ctx, "orig_input is %s but grad is %s", x.ShapeString(), grad.ShapeString());
  }
  Tensor out(grad.dtype(), in);
  const int64_t depth = in[3];
  const bool ok = DispatchReal(grad.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = std::conditional_t<kIsInt<T> || std::is_same_v<T, bool>, uint64_t, ComputeType<T>>;
    const T* xv = x.data<T>();
    const T* g = grad.data<T>();
    T* y = out.data<T>();
    ParallelFor(ctx, in[0], grad.num_elements() / std::max<int64_t>(1, in[0]) * win.h.k * win.w.k,
                [&](int64_t b, int64_t e) {
                  std::vector<C> acc(static_cast<size_t>(in[1] * in[2] * depth));
                  for (int64_t n = b; n < e; ++n) {
                    std::fill(acc.begin(), acc.end(), C(0));
                    const T* xn = xv + n * in[1] * in[2] * depth;
                    ForEachPoolWindow(
                        n, win, in[1], in[2], depth,
                        [&](int64_t h0, int64_t h1, int64_t w0, int64_t w1, int64_t o) {
                          for (int64_t c = 0; c < depth; ++c) {
                            int64_t best = -1;
                            for (int64_t i = h0; i < h1; ++i) {
                              for (int64_t j = w0; j < w1; ++j) {
                                const int64_t at = (i * in[2] + j) * depth + c;
                                if (best < 0 || xn[at] > xn[best]) best = at;
                              }
                            }
                            if (best >= 0)
                              acc[static_cast<size_t>(best)] += static_cast<C>(g[o + c]);
                          }
                        });
                    T* yn = y + n * in[1] * in[2] * depth;
                    for (size_t k = 0; k < acc.size(); ++k) yn[k] = static_cast<T>(acc[k]);
                  }
                });
  });
  if (!ok) return UnsupportedDType(ctx, grad.dtype(), TypeSetName(TypeSet::kReal));
  ctx.set_output(0, nchw ? TransposeTensor(ctx, out, {0, 3, 1, 2}) : std::move(out));
  return absl::OkStatus();
}

// ---- FusedBatchNormGrad, V2, V3 ----

// Checks FusedBatchNormGrad's inputs: x and y_backprop of one shape and dtype with the
// format's rank, and scale, reserve_space_1 and reserve_space_2 float32 vectors of the
// channel count. Returns the channel dim of x.
absl::StatusOr<int> CheckBatchNormGradInputs(const KernelContext& ctx, int want_rank,
                                             bool channels_last) {
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  if (x.rank() != want_rank || dy.rank() != want_rank) {
    return KernelError(ctx, "input must be %d-dimensional: x is %s, y_backprop is %s", want_rank,
                       x.ShapeString(), dy.ShapeString());
  }
  if (x.dims() != dy.dims()) {
    return KernelError(ctx,
                       "x and y_backprop must have same shape, but x has shape %s and "
                       "y_backprop has shape %s",
                       DimsString(x.dims()), DimsString(dy.dims()));
  }
  if (x.dtype() != dy.dtype()) {
    return KernelError(ctx, "x is %s but y_backprop is %s", x.ShapeString(), dy.ShapeString());
  }
  const int cdim = channels_last ? x.rank() - 1 : 1;
  const int64_t channels = x.dim(cdim);
  for (int i = 2; i < 5; ++i) {
    const Tensor& t = ctx.input(i);
    static const char* const kNames[] = {"", "", "scale", "reserve_space_1", "reserve_space_2"};
    if (t.dtype() != DType::kFloat32) {
      return KernelError(ctx, "%s must be float32, got %s", kNames[i], t.ShapeString());
    }
    if (t.rank() != 1 || t.dim(0) != channels) {
      return KernelError(ctx,
                         "%s must be 1-dimensional with %d elements (the channel count), "
                         "got %s",
                         kNames[i], channels, t.ShapeString());
    }
  }
  return cdim;
}

// FusedBatchNormGrad's view of x as [outer, channels, inner], its attrs and its float inputs.
struct BatchNormGradPlan {
  int64_t outer = 1, channels = 0, inner = 1;
  float epsilon = 0;
  bool training = true;
  const float* scale = nullptr;
  const float* mean = nullptr;
  const float* var = nullptr;
};

// Computes dx, dscale and doffset channel by channel (the formulas above
// FusedBatchNormGradKernel), channels spread over the pool.
template <typename T>
void BatchNormGradChannels(const KernelContext& ctx, const BatchNormGradPlan& p, const Tensor& x,
                           const Tensor& dy, Tensor& dx, Tensor& dscale, Tensor& doffset) {
  const int64_t outer = p.outer, channels = p.channels, inner = p.inner;
  const double count = static_cast<double>(outer * inner);
  const float* scale = p.scale;
  const float* mean = p.mean;
  const float* var = p.var;
  const T* px = x.data<T>();
  const T* pdy = dy.data<T>();
  T* pdx = dx.data<T>();
  ParallelFor(ctx, channels, 8 * std::max<int64_t>(1, outer * inner), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      auto at = [&](int64_t o, int64_t i) { return (o * channels + c) * inner + i; };
      double sum_dy = 0, sum_dyx = 0;
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const double g = static_cast<float>(pdy[at(o, i)]);
          sum_dy += g;
          sum_dyx += g * (static_cast<float>(px[at(o, i)]) - mean[c]);
        }
      }
      const double r = 1.0 / std::sqrt(static_cast<double>(var[c]) + p.epsilon);
      dscale.data<float>()[c] = static_cast<float>(sum_dyx * r);
      doffset.data<float>()[c] = static_cast<float>(sum_dy);
      const double mean_dy = sum_dy / count, mean_dyx = sum_dyx / count;
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const double g = static_cast<float>(pdy[at(o, i)]);
          const double xc = static_cast<double>(static_cast<float>(px[at(o, i)])) - mean[c];
          const double v =
              p.training ? scale[c] * r * (g - mean_dy - xc * mean_dyx * r * r) : g * scale[c] * r;
          pdx[at(o, i)] = static_cast<T>(static_cast<float>(v));
        }
      }
    }
  });
}

// With m = reserve_space_1 (the mean), v = reserve_space_2 (the variance) and
// r = rsqrt(v + epsilon), per channel over the other dims:
//   training:  x_backprop = scale * r * (dy - mean(dy) - (x - m) * mean(dy * (x - m)) * r^2)
//   inference: x_backprop = dy * scale * r
//   scale_backprop = sum(dy * (x - m)) * r, offset_backprop = sum(dy);
// reserve_space_3/4 (V3: 4/5) are empty float vectors, as TF's CPU kernel makes them.
absl::Status FusedBatchNormGradKernel(KernelContext& ctx) {
  const bool v3 = ctx.node().op() == "FusedBatchNormGradV3";
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, v3 ? 6 : 5));
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  BatchNormGradPlan p;
  TFJIT_ASSIGN_OR_RETURN(p.epsilon, tf::GetFloatAttrOr(ctx.node(), "epsilon", 1e-4f));
  TFJIT_ASSIGN_OR_RETURN(p.training, tf::GetBoolAttrOr(ctx.node(), "is_training", true));
  TFJIT_ASSIGN_OR_RETURN(std::string format,
                         tf::GetStringAttrOr(ctx.node(), "data_format", "NHWC"));
  const bool channels_last = format == "NHWC" || format == "NDHWC";
  if (!channels_last && format != "NCHW" && format != "NCDHW") {
    return KernelError(ctx, "Invalid data format: %s", format);
  }
  const int want_rank = format.size() == 5 ? 5 : 4;
  TFJIT_ASSIGN_OR_RETURN(const int cdim, CheckBatchNormGradInputs(ctx, want_rank, channels_last));
  p.channels = x.dim(cdim);
  for (int d = 0; d < cdim; ++d) p.outer *= x.dim(d);
  for (int d = cdim + 1; d < x.rank(); ++d) p.inner *= x.dim(d);
  p.scale = ctx.input(2).data<float>();
  p.mean = ctx.input(3).data<float>();
  p.var = ctx.input(4).data<float>();
  Tensor dx(x.dtype(), x.dims());
  Tensor dscale(DType::kFloat32, {p.channels}), doffset(DType::kFloat32, {p.channels});
  const bool ok = DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) {
      BatchNormGradChannels<T>(ctx, p, x, dy, dx, dscale, doffset);
    }
  });
  const bool supported = ok && x.dtype() != DType::kFloat64 &&
                         (ctx.node().op() != "FusedBatchNormGrad" || x.dtype() == DType::kFloat32);
  if (!supported) {
    return UnsupportedDType(
        ctx, x.dtype(),
        ctx.node().op() == "FusedBatchNormGrad" ? "float32" : "float16, bfloat16, float32");
  }
  ctx.set_output(0, std::move(dx));
  ctx.set_output(1, std::move(dscale));
  ctx.set_output(2, std::move(doffset));
  ctx.set_output(3, Tensor(DType::kFloat32, {0}));
  ctx.set_output(4, Tensor(DType::kFloat32, {0}));
  return absl::OkStatus();
}

// ---- Conv2DBackpropFilter, DepthwiseConv2dNativeBackpropInput/Filter ----

// The forward convolution's geometry for a backprop node: `x_dims` (node layout) and the
// filter's dims; checks that out_backprop (NHWC) has the forward output's shape.
struct ConvGradGeometry {
  tf::Window2D window;
  std::vector<int64_t> x;  // NHWC
  std::vector<int64_t> filter;
  bool nchw = false;
};
absl::StatusOr<ConvGradGeometry> ConvGradGeometryOf(const KernelContext& ctx,
                                                    const std::vector<int64_t>& x_dims,
                                                    const std::vector<int64_t>& filter_dims,
                                                    const std::vector<int64_t>& dy_dims,
                                                    bool depthwise) {
  TFJIT_ASSIGN_OR_RETURN(tf::WindowAttrs attrs,
                         tf::ReadConvAttrs(ctx.node(), tf::Layouts::kNhwcOrNchw));
  ConvGradGeometry g;
  g.nchw = attrs.nchw;
  if (x_dims.size() != 4 || dy_dims.size() != 4) {
    return KernelError(ctx, "input and out_backprop must be 4-dimensional, got %s and %s",
                       DimsString(x_dims), DimsString(dy_dims));
  }
  g.x = attrs.nchw ? tf::NchwToNhwc(x_dims) : x_dims;
  g.filter = filter_dims;
  TFJIT_ASSIGN_OR_RETURN(tf::ConvGeometry cg,
                         tf::Conv2DGeometry(ctx.node(), attrs, g.x, filter_dims, depthwise));
  if (!depthwise && cg.groups != 1) {
    return KernelError(ctx, "input depth %d must equal the filter's in_depth %d", g.x[3],
                       filter_dims[2]);
  }
  g.window = cg.window;
  const std::vector<int64_t> want = {g.x[0], g.window.h.out, g.window.w.out, cg.out_channels};
  const std::vector<int64_t> dy = attrs.nchw ? tf::NchwToNhwc(dy_dims) : dy_dims;
  if (dy != want) {
    return KernelError(ctx,
                       "out_backprop has shape %s but the convolution's output shape is %s "
                       "(NHWC)",
                       DimsString(dy), DimsString(want));
  }
  return g;
}

// Calls f(n, oy, ox, kh, kw, iy, ix) for every (output position, filter tap) whose input
// position is inside the input.
template <typename F>
void ForEachTap(int64_t n, const tf::Window2D& w, int64_t in_h, int64_t in_w, F f) {
  for (int64_t oy = 0; oy < w.h.out; ++oy) {
    for (int64_t kh = 0; kh < w.h.k; ++kh) {
      const int64_t iy = oy * w.h.stride + kh * w.h.dilation - w.h.pad_before;
      if (iy < 0 || iy >= in_h) continue;
      for (int64_t ox = 0; ox < w.w.out; ++ox) {
        for (int64_t kw = 0; kw < w.w.k; ++kw) {
          const int64_t ix = ox * w.w.stride + kw * w.w.dilation - w.w.pad_before;
          if (ix < 0 || ix >= in_w) continue;
          f(oy, ox, kh, kw, iy, ix);
        }
      }
    }
  }
}

std::vector<int64_t> ReadSizes(const KernelContext& ctx, int i, absl::Status* status) {
  std::vector<int64_t> v;
  *status = ReadIndexVector(ctx, ctx.input(i), "sizes", &v);
  if (status->ok() && v.size() != 4) {
    *status = KernelError(ctx, "%s must have 4 entries, got %s",
                          i == 0 ? "input_sizes" : "filter_sizes", ctx.input(i).ShapeString());
  }
  if (status->ok()) *status = CheckOutputShape(ctx, ctx.input(i == 0 ? 1 : 0).dtype(), v);
  return v;
}

// Conv2DBackpropFilter(input, filter_sizes, out_backprop) and
// DepthwiseConv2dNativeBackpropFilter: df[kh, kw, c, o] = sum over (n, oy, ox) of
// x[n, iy, ix, c] * dy[n, oy, ox, o] (depthwise: o = c * multiplier + m).
absl::Status ConvBackpropFilterKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const bool depthwise = ctx.node().op() == "DepthwiseConv2dNativeBackpropFilter";
  absl::Status status;
  const std::vector<int64_t> fsizes = ReadSizes(ctx, 1, &status);
  TFJIT_RETURN_IF_ERROR(status);
  TFJIT_ASSIGN_OR_RETURN(ConvGradGeometry g, ConvGradGeometryOf(ctx, ctx.input(0).dims(), fsizes,
                                                                ctx.input(2).dims(), depthwise));
  auto nhwc = [&](const Tensor& t) { return g.nchw ? TransposeTensor(ctx, t, {0, 2, 3, 1}) : t; };
  const Tensor x = nhwc(ctx.input(0));
  const Tensor dy = nhwc(ctx.input(2));
  if (x.dtype() != dy.dtype()) {
    return KernelError(ctx, "input is %s but out_backprop is %s", x.ShapeString(),
                       dy.ShapeString());
  }
  Tensor out(x.dtype(), fsizes);
  const tf::Window2D& w = g.window;
  const int64_t in_h = g.x[1], in_w = g.x[2], in_c = g.x[3];
  const int64_t out_c = dy.dim(3), mult = depthwise ? fsizes[3] : 1;
  const bool ok = DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* px = x.data<T>();
    const T* pdy = dy.data<T>();
    // Per filter tap (kh, kw): accumulate over the batch and output positions.
    ParallelFor(ctx, w.h.k * w.w.k, dy.num_elements() * in_c + 1, [&](int64_t b, int64_t e) {
      std::vector<C> acc;
      for (int64_t tap = b; tap < e; ++tap) {
        const int64_t kh = tap / w.w.k, kw = tap % w.w.k;
        const int64_t per_tap = depthwise ? in_c * mult : in_c * out_c;
        acc.assign(static_cast<size_t>(per_tap), C(0));
        for (int64_t n = 0; n < g.x[0]; ++n) {
          for (int64_t oy = 0; oy < w.h.out; ++oy) {
            const int64_t iy = oy * w.h.stride + kh * w.h.dilation - w.h.pad_before;
            if (iy < 0 || iy >= in_h) continue;
            for (int64_t ox = 0; ox < w.w.out; ++ox) {
              const int64_t ix = ox * w.w.stride + kw * w.w.dilation - w.w.pad_before;
              if (ix < 0 || ix >= in_w) continue;
              const T* xr = px + ((n * in_h + iy) * in_w + ix) * in_c;
              const T* gr = pdy + ((n * w.h.out + oy) * w.w.out + ox) * out_c;
              if (depthwise) {
                for (int64_t c = 0; c < in_c; ++c) {
                  for (int64_t m = 0; m < mult; ++m) {
                    acc[static_cast<size_t>(c * mult + m)] += C(xr[c]) * C(gr[c * mult + m]);
                  }
                }
              } else {
                for (int64_t c = 0; c < in_c; ++c) {
                  const C xv = C(xr[c]);
                  C* row = acc.data() + c * out_c;
                  for (int64_t o = 0; o < out_c; ++o) row[o] += xv * C(gr[o]);
                }
              }
            }
          }
        }
        T* dst = out.data<T>() + tap * per_tap;
        for (int64_t k = 0; k < per_tap; ++k) dst[k] = static_cast<T>(acc[static_cast<size_t>(k)]);
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, x.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// DepthwiseConv2dNativeBackpropInput(input_sizes, filter, out_backprop):
// dx[n, iy, ix, c] = sum over taps and m of dy[n, oy, ox, c * M + m] * filter[kh, kw, c, m].
absl::Status DepthwiseBackpropInputKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  absl::Status status;
  const std::vector<int64_t> sizes = ReadSizes(ctx, 0, &status);
  TFJIT_RETURN_IF_ERROR(status);
  const Tensor& filter = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(ConvGradGeometry g,
                         ConvGradGeometryOf(ctx, sizes, filter.dims(), ctx.input(2).dims(), true));
  const Tensor dy = g.nchw ? TransposeTensor(ctx, ctx.input(2), {0, 2, 3, 1}) : ctx.input(2);
  if (filter.dtype() != dy.dtype()) {
    return KernelError(ctx, "filter is %s but out_backprop is %s", filter.ShapeString(),
                       dy.ShapeString());
  }
  Tensor out(dy.dtype(), g.x);
  const tf::Window2D& w = g.window;
  const int64_t in_h = g.x[1], in_w = g.x[2], in_c = g.x[3], mult = filter.dim(3);
  const bool ok = DispatchFloat(dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* pdy = dy.data<T>();
    const T* pf = filter.data<T>();
    ParallelFor(
        ctx, g.x[0], dy.num_elements() / std::max<int64_t>(1, g.x[0]) * w.h.k * w.w.k + 1,
        [&](int64_t b, int64_t e) {
          std::vector<C> acc(static_cast<size_t>(in_h * in_w * in_c));
          for (int64_t n = b; n < e; ++n) {
            std::fill(acc.begin(), acc.end(), C(0));
            ForEachTap(n, w, in_h, in_w,
                       [&](int64_t oy, int64_t ox, int64_t kh, int64_t kw, int64_t iy, int64_t ix) {
                         const T* gr = pdy + ((n * w.h.out + oy) * w.w.out + ox) * in_c * mult;
                         const T* fr = pf + (kh * w.w.k + kw) * in_c * mult;
                         C* dst = acc.data() + (iy * in_w + ix) * in_c;
                         for (int64_t c = 0; c < in_c; ++c) {
                           C sum = C(0);
                           for (int64_t m = 0; m < mult; ++m)
                             sum += C(gr[c * mult + m]) * C(fr[c * mult + m]);
                           dst[c] += sum;
                         }
                       });
            T* yn = out.data<T>() + n * in_h * in_w * in_c;
            for (size_t k = 0; k < acc.size(); ++k) yn[k] = static_cast<T>(acc[k]);
          }
        });
  });
  if (!ok) return UnsupportedDType(ctx, dy.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, g.nchw ? TransposeTensor(ctx, out, {0, 3, 1, 2}) : std::move(out));
  return absl::OkStatus();
}

// ---- ResizeBilinearGrad, ResizeNearestNeighborGrad ----

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

// ResizeBilinearGrad(grads: float, original_image): each resized pixel's gradient split over
// its four source pixels by the forward op's weights; accumulated in double.
absl::Status ResizeBilinearGradKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  bool align = false, half_pixel = false;
  TFJIT_RETURN_IF_ERROR(ResizeFlags(ctx, &align, &half_pixel));
  const Tensor& grads = ctx.input(0);
  const Tensor& image = ctx.input(1);
  if (grads.rank() != 4 || grads.dtype() != DType::kFloat32) {
    return KernelError(ctx, "input_grad must be 4-dimensional float32, got %s",
                       grads.ShapeString());
  }
  if (image.rank() != 4) {
    return KernelError(ctx, "original_image must be 4-dimensional, got %s", image.ShapeString());
  }
  if (grads.dim(0) != image.dim(0) || grads.dim(3) != image.dim(3)) {
    return KernelError(ctx,
                       "input_grad %s and original_image %s must have the same batch and "
                       "channel sizes",
                       grads.ShapeString(), image.ShapeString());
  }
  const int64_t n = image.dim(0), h = image.dim(1), w = image.dim(2), c = image.dim(3);
  const int64_t oh = grads.dim(1), ow = grads.dim(2);
  if ((h == 0 || w == 0) && grads.num_elements() > 0) {
    return KernelError(ctx, "original_image %s is empty but input_grad %s is not",
                       image.ShapeString(), grads.ShapeString());
  }
  const std::vector<LerpTaps> ys = BilinearTaps(h, oh, align, half_pixel);
  const std::vector<LerpTaps> xs = BilinearTaps(w, ow, align, half_pixel);
  Tensor out(image.dtype(), image.dims());
  const bool ok = DispatchFloat(image.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const float* g = grads.data<float>();
    ParallelFor(ctx, n, oh * ow * c * 8 + 1, [&](int64_t b, int64_t e) {
      std::vector<double> acc(static_cast<size_t>(h * w * c));
      for (int64_t bi = b; bi < e; ++bi) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t y = 0; y < oh; ++y) {
          const LerpTaps& ty = ys[static_cast<size_t>(y)];
          for (int64_t x = 0; x < ow; ++x) {
            const LerpTaps& tx = xs[static_cast<size_t>(x)];
            const float* gp = g + ((bi * oh + y) * ow + x) * c;
            const double wy[2] = {1.0f - ty.lerp, ty.lerp};
            const double wx[2] = {1.0f - tx.lerp, tx.lerp};
            const int64_t ry[2] = {ty.lower, ty.upper}, rx[2] = {tx.lower, tx.upper};
            for (int a = 0; a < 2; ++a) {
              for (int bb = 0; bb < 2; ++bb) {
                double* dst = acc.data() + (ry[a] * w + rx[bb]) * c;
                const double wgt = wy[a] * wx[bb];
                for (int64_t k = 0; k < c; ++k) dst[k] += wgt * gp[k];
              }
            }
          }
        }
        T* dst = out.data<T>() + bi * h * w * c;
        for (size_t k = 0; k < acc.size(); ++k) dst[k] = static_cast<T>(acc[k]);
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, image.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ResizeNearestNeighborGrad(grads, size): each resized pixel's gradient added to the source
// pixel the forward op copied it from.
absl::Status ResizeNearestGradKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  bool align = false, half_pixel = false;
  TFJIT_RETURN_IF_ERROR(ResizeFlags(ctx, &align, &half_pixel));
  const Tensor& grads = ctx.input(0);
  if (grads.rank() != 4) {
    return KernelError(ctx, "input must be 4-dimensional, got %s", grads.ShapeString());
  }
  std::vector<int64_t> size;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "size", &size));
  if (ctx.input(1).rank() != 1 || size.size() != 2) {
    return KernelError(ctx, "shape_t must be 1-dimensional with 2 elements, got %s",
                       ctx.input(1).ShapeString());
  }
  const int64_t n = grads.dim(0), oh = grads.dim(1), ow = grads.dim(2), c = grads.dim(3);
  const std::vector<int64_t> out_dims = {n, size[0], size[1], c};
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, grads.dtype(), out_dims));
  if ((size[0] == 0 || size[1] == 0) && grads.num_elements() > 0) {
    return KernelError(ctx, "size [%d, %d] is empty but the gradient %s is not", size[0], size[1],
                       grads.ShapeString());
  }
  const std::vector<int64_t> ys = NearestTaps(size[0], oh, align, half_pixel);
  const std::vector<int64_t> xs = NearestTaps(size[1], ow, align, half_pixel);
  Tensor out(grads.dtype(), out_dims);
  const bool ok = DispatchReal(grads.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = std::conditional_t<kIsInt<T> || std::is_same_v<T, bool>, uint64_t, double>;
    const T* g = grads.data<T>();
    ParallelFor(ctx, n, oh * ow * c + 1, [&](int64_t b, int64_t e) {
      std::vector<Acc> acc(static_cast<size_t>(size[0] * size[1] * c));
      for (int64_t bi = b; bi < e; ++bi) {
        std::fill(acc.begin(), acc.end(), Acc(0));
        for (int64_t y = 0; y < oh; ++y) {
          for (int64_t x = 0; x < ow; ++x) {
            const T* gp = g + ((bi * oh + y) * ow + x) * c;
            Acc* dst = acc.data() +
                       (ys[static_cast<size_t>(y)] * size[1] + xs[static_cast<size_t>(x)]) * c;
            for (int64_t k = 0; k < c; ++k) dst[k] += static_cast<Acc>(gp[k]);
          }
        }
        T* dst = out.data<T>() + bi * size[0] * size[1] * c;
        for (size_t k = 0; k < acc.size(); ++k) dst[k] = static_cast<T>(acc[k]);
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, grads.dtype(), TypeSetName(TypeSet::kReal));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- MaxPoolGradGrad / V2 ----

// MaxPoolGradGrad(orig_input, orig_output, grad): grad has orig_input's shape; each output (of
// orig_output's shape) takes grad at its window's maximum of orig_input. TF's CPU kernel takes
// the first cell (row-major window order) equal to orig_output, i.e. the first maximum; XLA's
// agrees, so ties go to the first maximum here too.
absl::Status MaxPoolGradGradKernel(KernelContext& ctx) {
  const bool v2 = ctx.node().op() == "MaxPoolGradGradV2";
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, v2 ? 5 : 3));
  static constexpr const char* kNames[] = {"tensor_in", "tensor_out", "out_grad_backprop"};
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).rank() != 4) {
      return KernelError(ctx, "%s must be 4-dimensional, got %s", kNames[i],
                         ctx.input(i).ShapeString());
    }
  }
  bool nchw = false;
  std::vector<int64_t> in;
  TFJIT_ASSIGN_OR_RETURN(tf::Window2D win, PoolGradWindow(ctx, ctx.input(0).dims(), &nchw, &in));
  auto nhwc = [&](const Tensor& t) { return nchw ? TransposeTensor(ctx, t, {0, 2, 3, 1}) : t; };
  if (ctx.input(2).dims() != ctx.input(0).dims()) {
    return KernelError(ctx, "Expected grad shape to be %s, but got %s", ctx.input(0).ShapeString(),
                       ctx.input(2).ShapeString());
  }
  const std::vector<int64_t> out_dims = {in[0], win.h.out, win.w.out, in[3]};
  const std::vector<int64_t> orig_out =
      nchw ? tf::NchwToNhwc(ctx.input(1).dims()) : ctx.input(1).dims();
  if (orig_out != out_dims) {
    return KernelError(ctx, "orig_output has shape %s but the pool's output shape is %s (NHWC)",
                       ctx.input(1).ShapeString(), DimsString(out_dims));
  }
  if (ctx.input(0).dtype() != ctx.input(2).dtype()) {
    return KernelError(ctx, "orig_input is %s but grad is %s", ctx.input(0).ShapeString(),
                       ctx.input(2).ShapeString());
  }
  const Tensor x = nhwc(ctx.input(0));
  const Tensor grad = nhwc(ctx.input(2));
  Tensor out(grad.dtype(), out_dims);
  const int64_t depth = in[3];
  const bool ok = DispatchReal(grad.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xv = x.data<T>();
    const T* g = grad.data<T>();
    T* y = out.data<T>();
    ParallelFor(ctx, in[0], out.num_elements() / std::max<int64_t>(1, in[0]) * win.h.k * win.w.k,
                [&](int64_t b, int64_t e) {
                  for (int64_t n = b; n < e; ++n) {
                    const int64_t base = n * in[1] * in[2] * depth;
                    ForEachPoolWindow(
                        n, win, in[1], in[2], depth,
                        [&](int64_t h0, int64_t h1, int64_t w0, int64_t w1, int64_t o) {
                          for (int64_t c = 0; c < depth; ++c) {
                            int64_t best = -1;
                            for (int64_t i = h0; i < h1; ++i) {
                              for (int64_t j = w0; j < w1; ++j) {
                                const int64_t at = base + (i * in[2] + j) * depth + c;
                                if (best < 0 || xv[at] > xv[best]) best = at;
                              }
                            }
                            y[o + c] = best < 0 ? T(0) : g[best];
                          }
                        });
                  }
                });
  });
  if (!ok) return UnsupportedDType(ctx, grad.dtype(), TypeSetName(TypeSet::kReal));
  ctx.set_output(0, nchw ? TransposeTensor(ctx, out, {0, 3, 1, 2}) : std::move(out));
  return absl::OkStatus();
}

// ---- LRNGrad ----

// TF's lrn_op.cc: per depth row, with norm[j] = bias + alpha * sum of input^2 over
// [j - r, j + r] (clipped), output[k] = sum over j with |j - k| <= r of
// input_grads[j] * ([k == j] * norm[j]^-beta - 2 * alpha * beta * input[k] * output_image[j] /
// norm[j]), in float.
absl::Status LrnGradKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (dy.rank() != 4 || x.rank() != 4) {
    return KernelError(ctx, "inputs must be 4-dimensional, got %s and %s", dy.ShapeString(),
                       x.ShapeString());
  }
  if (x.dims() != dy.dims() || y.dims() != dy.dims()) {
    return KernelError(ctx,
                       "input_grads, input_image, and out_image should have the same shape, "
                       "got %s, %s and %s",
                       dy.ShapeString(), x.ShapeString(), y.ShapeString());
  }
  if (x.dtype() != dy.dtype() || y.dtype() != dy.dtype()) {
    return KernelError(ctx, "inputs must have one dtype");
  }
  TFJIT_ASSIGN_OR_RETURN(int64_t radius, tf::GetIntAttrOr(ctx.node(), "depth_radius", 5));
  TFJIT_ASSIGN_OR_RETURN(float bias, tf::GetFloatAttrOr(ctx.node(), "bias", 1.0f));
  TFJIT_ASSIGN_OR_RETURN(float alpha, tf::GetFloatAttrOr(ctx.node(), "alpha", 1.0f));
  TFJIT_ASSIGN_OR_RETURN(float beta, tf::GetFloatAttrOr(ctx.node(), "beta", 0.5f));
  if (radius < 0 || radius > std::numeric_limits<int32_t>::max()) {
    return KernelError(ctx, "depth_radius = %d larger than int max or negative", radius);
  }
  Tensor out(dy.dtype(), dy.dims());
  const int64_t depth = dy.dim(3), rows = depth == 0 ? 0 : dy.num_elements() / depth;
  const bool ok = DispatchFloat(dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) {
      const T* pg = dy.data<T>();
      const T* px = x.data<T>();
      const T* py = y.data<T>();
      T* po = out.data<T>();
      ParallelFor(ctx, rows, depth * (4 * radius + 8) + 1, [&](int64_t begin, int64_t end) {
        std::vector<float> norm(static_cast<size_t>(depth)), acc(norm.size());
        for (int64_t r = begin; r < end; ++r) {
          const int64_t off = r * depth;
          for (int64_t j = 0; j < depth; ++j) {
            float sum = 0;
            const int64_t lo = std::max<int64_t>(j - radius, 0),
                          hi = std::min(j + radius, depth - 1);
            for (int64_t k = lo; k <= hi; ++k) {
              const float v = static_cast<float>(px[off + k]);
              sum += v * v;
            }
            norm[static_cast<size_t>(j)] = bias + alpha * sum;
          }
          std::fill(acc.begin(), acc.end(), 0.0f);
          for (int64_t j = 0; j < depth; ++j) {
            const float nj = norm[static_cast<size_t>(j)];
            const float g = static_cast<float>(pg[off + j]);
            const float yj = static_cast<float>(py[off + j]);
            const int64_t lo = std::max<int64_t>(j - radius, 0),
                          hi = std::min(j + radius, depth - 1);
            for (int64_t k = lo; k <= hi; ++k) {
              float d = -2.0f * alpha * beta * static_cast<float>(px[off + k]) * yj / nj;
              if (k == j) d += std::pow(nj, -beta);
              acc[static_cast<size_t>(k)] += d * g;
            }
          }
          for (int64_t k = 0; k < depth; ++k)
            po[off + k] = static_cast<T>(acc[static_cast<size_t>(k)]);
        }
      });
    }
  });
  if (!ok || dy.dtype() == DType::kFloat64) {
    return UnsupportedDType(ctx, dy.dtype(), "float16, bfloat16, float32");
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Dilation2DBackpropInput / Filter (TF-only) ----

// Checks Dilation2DBackprop's input (4-D), filter (3-D, the input's depth), dtypes and its
// strides, rates and padding attrs; returns the forward window after checking out_backprop
// has the forward output's shape.
absl::StatusOr<tf::Window2D> Dilation2DBackpropWindow(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& f = ctx.input(1);
  const Tensor& dy = ctx.input(2);
  if (x.rank() != 4)
    return KernelError(ctx, "input must be 4-dimensional, got %s", x.ShapeString());
  if (f.rank() != 3)
    return KernelError(ctx, "filter must be 3-dimensional, got %s", f.ShapeString());
  if (f.dim(2) != x.dim(3)) {
    return KernelError(ctx, "input and filter must have the same depth: %d vs %d", x.dim(3),
                       f.dim(2));
  }
  if (f.dtype() != x.dtype() || dy.dtype() != x.dtype()) {
    return KernelError(ctx, "input, filter and out_backprop must have one dtype");
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, tf::GetIntListAttr(ctx.node(), "strides"));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> rates, tf::GetIntListAttr(ctx.node(), "rates"));
  for (const auto* v : {&strides, &rates}) {
    if (v->size() != 4) {
      return KernelError(ctx, "Sliding window %s field must specify 4 dimensions",
                         v == &strides ? "strides" : "rates");
    }
    if ((*v)[0] != 1 || (*v)[3] != 1) {
      return KernelError(ctx,
                         "Current implementation does not yet support %s in the batch "
                         "and depth dimensions.",
                         v == &strides ? "strides" : "rates");
    }
    if ((*v)[1] < 1 || (*v)[2] < 1) {
      return KernelError(ctx, "%s must be positive, got %s", v == &strides ? "strides" : "rates",
                         DimsString(*v));
    }
  }
  TFJIT_ASSIGN_OR_RETURN(std::string padding, tf::GetStringAttr(ctx.node(), "padding"));
  if (padding != "SAME" && padding != "VALID") {
    return KernelError(ctx, "padding must be SAME or VALID, got '%s'", padding);
  }
  tf::WindowAttrs a;
  a.padding = padding == "SAME" ? tf::Padding::kSame : tf::Padding::kValid;
  a.strides = strides;
  a.dilations = rates;
  TFJIT_ASSIGN_OR_RETURN(tf::Window2D win,
                         tf::ComputeWindow(ctx.node(), a, x.dim(1), x.dim(2), f.dim(0), f.dim(1)));
  const std::vector<int64_t> want = {x.dim(0), win.h.out, win.w.out, x.dim(3)};
  if (dy.dims() != want) {
    return KernelError(ctx, "out_backprop has incompatible size: %s, expected %s", dy.ShapeString(),
                       DimsString(want));
  }
  return win;
}

// Accumulates every out_backprop value into `out` (the filter's or the input's gradient) at
// its window's argmax (the rule above Dilation2DBackpropKernel).
template <typename T>
void Dilation2DBackpropSum(const Tensor& x, const Tensor& f, const Tensor& dy,
                           const tf::Window2D& win, bool filter_grad, Tensor& out) {
  using C = ComputeType<T>;
  const int64_t h = x.dim(1), w = x.dim(2), depth = x.dim(3);
  const T* px = x.data<T>();
  const T* pf = f.data<T>();
  const T* pg = dy.data<T>();
  std::vector<C> acc(static_cast<size_t>(out.num_elements()), C(0));
  // Serial: windows overlap in both outputs (TF's CPU kernel is serial too).
  for (int64_t n = 0; n < x.dim(0); ++n) {
    for (int64_t oy = 0; oy < win.h.out; ++oy) {
      const int64_t y0 = oy * win.h.stride - win.h.pad_before;
      for (int64_t ox = 0; ox < win.w.out; ++ox) {
        const int64_t x0 = ox * win.w.stride - win.w.pad_before;
        for (int64_t c = 0; c < depth; ++c) {
          C best = std::numeric_limits<C>::lowest();
          int64_t by = y0 < 0 ? 0 : y0, bx = x0 < 0 ? 0 : x0, bh = 0, bw = 0;
          for (int64_t i = 0; i < f.dim(0); ++i) {
            const int64_t iy = y0 + i * win.h.dilation;
            if (iy < 0 || iy >= h) continue;
            for (int64_t j = 0; j < f.dim(1); ++j) {
              const int64_t ix = x0 + j * win.w.dilation;
              if (ix < 0 || ix >= w) continue;
              // The sum rounded to T, as TF adds in T.
              const C v = static_cast<C>(
                  static_cast<T>(static_cast<C>(px[((n * h + iy) * w + ix) * depth + c]) +
                                 static_cast<C>(pf[(i * f.dim(1) + j) * depth + c])));
              if (v > best) {
                best = v;
                by = iy;
                bx = ix;
                bh = i;
                bw = j;
              }
            }
          }
          const C g = static_cast<C>(pg[((n * win.h.out + oy) * win.w.out + ox) * depth + c]);
          if (filter_grad) {
            acc[static_cast<size_t>((bh * f.dim(1) + bw) * depth + c)] += g;
          } else if (by < h && bx < w) {
            acc[static_cast<size_t>(((n * h + by) * w + bx) * depth + c)] += g;
          }
        }
      }
    }
  }
  T* y = out.data<T>();
  for (size_t k = 0; k < acc.size(); ++k) y[k] = static_cast<T>(acc[k]);
}

// TF's dilation_ops.cc: each out_backprop value goes to the (input cell, filter tap) of its
// window's maximum of input + filter over the in-bounds taps, the first in (row, col) scan
// order with a strict > from the type's lowest value (ties: the first tap). A window with no
// in-bounds tap credits tap (0, 0) and the clamped window start, as TF's initial argmax.
absl::Status Dilation2DBackpropKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const bool filter_grad = ctx.node().op() == "Dilation2DBackpropFilter";
  const Tensor& x = ctx.input(0);
  const Tensor& f = ctx.input(1);
  const Tensor& dy = ctx.input(2);
  TFJIT_ASSIGN_OR_RETURN(const tf::Window2D win, Dilation2DBackpropWindow(ctx));
  Tensor out(x.dtype(), filter_grad ? f.dims() : x.dims());
  const bool ok = DispatchReal(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      Dilation2DBackpropSum<T>(x, f, dy, win, filter_grad, out);
    }
  });
  if (!ok || x.dtype() == DType::kBool) {
    return UnsupportedDType(ctx, x.dtype(), "floating-point and integer types");
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterGradientsWindowKernels(KernelRegistry& registry) {
  registry.Register("AvgPoolGrad", &AvgPoolGradKernel);
  registry.Register("MaxPoolGrad", &MaxPoolGradKernel);
  registry.Register("MaxPoolGradV2", &MaxPoolGradKernel);
  registry.Register("Conv2DBackpropFilter", &ConvBackpropFilterKernel);
  registry.Register("ResizeBilinearGrad", &ResizeBilinearGradKernel);
  registry.Register("ResizeNearestNeighborGrad", &ResizeNearestGradKernel);
  registry.Register("DepthwiseConv2dNativeBackpropFilter", &ConvBackpropFilterKernel);
  registry.Register("DepthwiseConv2dNativeBackpropInput", &DepthwiseBackpropInputKernel);
  registry.Register("MaxPoolGradGrad", &MaxPoolGradGradKernel);
  registry.Register("MaxPoolGradGradV2", &MaxPoolGradGradKernel);
  registry.Register("LRNGrad", &LrnGradKernel);
  registry.Register("Dilation2DBackpropInput", &Dilation2DBackpropKernel);
  registry.Register("Dilation2DBackpropFilter", &Dilation2DBackpropKernel);
  for (const char* op : {"FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
    registry.Register(op, &FusedBatchNormGradKernel);
  }
  RegisterGradients3dKernels(registry);  // gradients_3d_kernels.cc
}

}  // namespace tfjit::runtime
