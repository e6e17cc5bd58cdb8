// Fallback kernels of the 3-D windowed ops' gradients (the gradients family, docs/DESIGN.md
// "Op families"), with TF's CPU semantics and messages: AvgPool3DGrad, MaxPool3DGrad (ties
// credit the first maximum), Conv3DBackpropInputV2 and Conv3DBackpropFilterV2, on NDHWC
// (NCDHW nodes run transposed). The 4-D ones are in gradients_window_kernels.cc.
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

// ---- 3-D pooling and convolution gradients (NDHWC; NCDHW runs transposed) ----

const std::vector<int> kToNdhwc = {0, 2, 3, 4, 1};
const std::vector<int> kToNcdhw = {0, 4, 1, 2, 3};

std::vector<int64_t> ChannelsLast5(std::vector<int64_t> v) {
  if (v.size() == 5) std::rotate(v.begin() + 1, v.begin() + 2, v.end());
  return v;
}

// The validated attrs and geometry of a 3-D window node over an input of `x_dims` (node
// layout): `ksize` (pools, node layout) or the filter's spatial sizes `k` (convolutions).
struct Window3D {
  std::vector<tf::SpatialDim> d;  // D, H, W
  std::vector<int64_t> x;         // NDHWC input dims
  bool ncdhw = false;
  std::vector<int64_t> OutDims(int64_t channels) const {
    return {x[0], d[0].out, d[1].out, d[2].out, channels};
  }
};

absl::StatusOr<Window3D> Window3DOf(const KernelContext& ctx, const std::vector<int64_t>& x_dims,
                                    bool pool, std::vector<int64_t> k) {
  Window3D w;
  TFJIT_ASSIGN_OR_RETURN(std::string format,
                         tf::GetStringAttrOr(ctx.node(), "data_format", "NDHWC"));
  if (format != "NDHWC" && format != "NCDHW") {
    return KernelError(ctx, "Invalid data format: %s", format);
  }
  w.ncdhw = format == "NCDHW";
  if (x_dims.size() != 5) {
    return KernelError(ctx, "input must be 5-dimensional, got %s", DimsString(x_dims));
  }
  w.x = w.ncdhw ? ChannelsLast5(x_dims) : x_dims;
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, tf::GetIntListAttr(ctx.node(), "strides"));
  std::vector<int64_t> dil(5, 1);
  if (!pool && tf::FindAttr(ctx.node(), "dilations") != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(dil, tf::GetIntListAttr(ctx.node(), "dilations"));
  }
  if (strides.size() != 5) {
    return KernelError(ctx, "Sliding window %s field must specify 5 dimensions",
                       pool ? "stride" : "strides");
  }
  if (dil.size() != 5) return KernelError(ctx, "Dilation rates field must specify 5 dimensions");
  if (pool) {
    if (k.size() != 5)
      return KernelError(ctx, "Sliding window ksize field must specify 5 dimensions");
    if (w.ncdhw) k = ChannelsLast5(k);
  }
  if (w.ncdhw) {
    strides = ChannelsLast5(strides);
    dil = ChannelsLast5(dil);
  }
  if (pool && (k[0] != 1 || strides[0] != 1)) {
    return KernelError(ctx, "Pooling is not yet supported on the batch dimension.");
  }
  if (pool && (k[4] != 1 || strides[4] != 1)) {
    return KernelError(ctx, "%s is not yet supported on the depth dimension.",
                       ctx.node().op() == "MaxPool3DGrad" ? "MaxPooling3d" : "Pooling");
  }
  if (!pool && (strides[0] != 1 || strides[4] != 1 || dil[0] != 1 || dil[4] != 1)) {
    return KernelError(ctx,
                       "Current implementation does not yet support strides or dilations "
                       "in the batch and depth dimensions.");
  }
  TFJIT_ASSIGN_OR_RETURN(std::string padding, tf::GetStringAttr(ctx.node(), "padding"));
  if (padding != "SAME" && padding != "VALID") {
    return KernelError(ctx, "padding must be SAME or VALID, got '%s'", padding);
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
      return KernelError(ctx,
                         "window sizes, strides and dilations must be positive, got %s, %s "
                         "and %s",
                         DimsString(k), DimsString(strides), DimsString(dil));
    }
    TFJIT_ASSIGN_OR_RETURN(tf::SpatialDim s, tf::ComputeSpatialDim(ctx.node(), a, d, w.x[i], kd));
    w.d.push_back(s);
  }
  return w;
}

// Calls f(o, lo, hi) for every output position o (flat over [D', H', W']) of batch entry n,
// lo/hi the window clipped to the input (pools: no dilation).
template <typename F>
void ForEachWindow3D(const Window3D& w, F f) {
  int64_t o = 0;
  int64_t lo[3], hi[3];
  for (int64_t a = 0; a < w.d[0].out; ++a) {
    for (int64_t b = 0; b < w.d[1].out; ++b) {
      for (int64_t c = 0; c < w.d[2].out; ++c, ++o) {
        const int64_t pos[3] = {a, b, c};
        for (int i = 0; i < 3; ++i) {
          const tf::SpatialDim& s = w.d[static_cast<size_t>(i)];
          const int64_t start = pos[i] * s.stride - s.pad_before;
          lo[i] = std::max<int64_t>(start, 0);
          hi[i] = std::min(start + s.k, s.in);
        }
        f(o, lo, hi);
      }
    }
  }
}

// AvgPool3DGrad(orig_input_shape, grad): each gradient divided by its window's count of
// in-bounds cells (rounded to T, as the 2-D AvgPoolGrad) and added at every cell.
absl::Status AvgPool3DGradKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& shape_t = ctx.input(0);
  if (shape_t.rank() != 1 || shape_t.num_elements() != 5) {
    return KernelError(ctx, "orig_input_shape must be 1-dimensional and 5 elements, got %s",
                       shape_t.ShapeString());
  }
  std::vector<int64_t> shape;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, shape_t, "orig_input_shape", &shape));
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, ctx.input(1).dtype(), shape));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, tf::GetIntListAttr(ctx.node(), "ksize"));
  TFJIT_ASSIGN_OR_RETURN(Window3D w, Window3DOf(ctx, shape, /*pool=*/true, ksize));
  const Tensor grad = w.ncdhw && ctx.input(1).rank() == 5
                          ? TransposeTensor(ctx, ctx.input(1), kToNdhwc)
                          : ctx.input(1);
  const int64_t depth = w.x[4];
  if (grad.dims() != w.OutDims(depth)) {
    return KernelError(ctx, "grad has shape %s but the pool's output shape is %s (NDHWC)",
                       grad.ShapeString(), DimsString(w.OutDims(depth)));
  }
  Tensor out(grad.dtype(), w.x);
  const int64_t cells = w.x[1] * w.x[2] * w.x[3], outs = w.d[0].out * w.d[1].out * w.d[2].out;
  const bool ok = DispatchFloat(grad.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* g = grad.data<T>();
    T* y = out.data<T>();
    ParallelFor(ctx, w.x[0], outs * depth * 8 + 1, [&](int64_t b, int64_t e) {
      std::vector<C> acc(static_cast<size_t>(cells * depth));
      for (int64_t n = b; n < e; ++n) {
        std::fill(acc.begin(), acc.end(), C(0));
        ForEachWindow3D(w, [&](int64_t o, const int64_t* lo, const int64_t* hi) {
          const int64_t count = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
          if (count <= 0) return;
          for (int64_t c = 0; c < depth; ++c) {
            const C v = static_cast<C>(
                static_cast<T>(C(g[(n * outs + o) * depth + c]) / static_cast<C>(count)));
            for (int64_t i = lo[0]; i < hi[0]; ++i) {
              for (int64_t j = lo[1]; j < hi[1]; ++j) {
                for (int64_t k = lo[2]; k < hi[2]; ++k) {
                  acc[static_cast<size_t>(((i * w.x[2] + j) * w.x[3] + k) * depth + c)] += v;
                }
              }
            }
          }
        });
        T* yn = y + n * cells * depth;
        for (size_t k = 0; k < acc.size(); ++k) yn[k] = static_cast<T>(acc[k]);
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, grad.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, w.ncdhw ? TransposeTensor(ctx, out, kToNcdhw) : std::move(out));
  return absl::OkStatus();
}

// MaxPool3DGrad(orig_input, orig_output, grad): each gradient goes to the first maximum of its
// window (row-major window order). On ties TF's CPU kernel credits every cell equal to the
// maximum, XLA's select-and-scatter the first; tfjit follows XLA (and its 2-D MaxPoolGrad).
absl::Status MaxPool3DGradKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  static constexpr const char* kNames[] = {"orig_input", "orig_output", "grad"};
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).rank() != 5) {
      return KernelError(ctx, "%s must be 5-dimensional, got %s", kNames[i],
                         ctx.input(i).ShapeString());
    }
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, tf::GetIntListAttr(ctx.node(), "ksize"));
  TFJIT_ASSIGN_OR_RETURN(Window3D w, Window3DOf(ctx, ctx.input(0).dims(), /*pool=*/true, ksize));
  auto ndhwc = [&](const Tensor& t) { return w.ncdhw ? TransposeTensor(ctx, t, kToNdhwc) : t; };
  const int64_t depth = w.x[4];
  const std::vector<int64_t> out_dims = w.OutDims(depth);
  for (int i = 1; i < 3; ++i) {
    const std::vector<int64_t> d =
        w.ncdhw ? ChannelsLast5(ctx.input(i).dims()) : ctx.input(i).dims();
    if (d != out_dims) {
      return KernelError(ctx, "%s has shape %s but the pool's output shape is %s (NDHWC)",
                         kNames[i], ctx.input(i).ShapeString(), DimsString(out_dims));
    }
  }
  if (ctx.input(0).dtype() != ctx.input(1).dtype()) {
    return KernelError(ctx, "orig_input and orig_output must have one dtype");
  }
  const Tensor x = ndhwc(ctx.input(0));
  const Tensor grad = ndhwc(ctx.input(2));
  const int64_t cells = w.x[1] * w.x[2] * w.x[3], outs = w.d[0].out * w.d[1].out * w.d[2].out;
  // The flat NDHWC index of each window's first maximum (per output element), from x in double.
  std::vector<int64_t> arg(static_cast<size_t>(grad.num_elements()), -1);
  const bool x_ok = DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xv = x.data<T>();
    ParallelFor(ctx, w.x[0], outs * depth * 8 + 1, [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        const int64_t base = n * cells * depth;
        ForEachWindow3D(w, [&](int64_t o, const int64_t* lo, const int64_t* hi) {
          for (int64_t c = 0; c < depth; ++c) {
            int64_t best = -1;
            for (int64_t i = lo[0]; i < hi[0]; ++i) {
              for (int64_t j = lo[1]; j < hi[1]; ++j) {
                for (int64_t k = lo[2]; k < hi[2]; ++k) {
                  const int64_t at = base + ((i * w.x[2] + j) * w.x[3] + k) * depth + c;
                  if (best < 0 || xv[at] > xv[best]) best = at;
                }
              }
            }
            arg[static_cast<size_t>((n * outs + o) * depth + c)] = best;
          }
        });
      }
    });
  });
  if (!x_ok) return UnsupportedDType(ctx, x.dtype(), "float16, bfloat16, float32");
  Tensor out(grad.dtype(), w.x);
  const bool ok = DispatchFloat(grad.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* g = grad.data<T>();
    std::vector<C> acc(static_cast<size_t>(out.num_elements()), C(0));
    for (size_t k = 0; k < arg.size(); ++k) {
      if (arg[k] >= 0) acc[static_cast<size_t>(arg[k])] += C(g[k]);
    }
    T* y = out.data<T>();
    for (size_t k = 0; k < acc.size(); ++k) y[k] = static_cast<T>(acc[k]);
  });
  if (!ok) return UnsupportedDType(ctx, grad.dtype(), "float16, bfloat16, float32");
  ctx.set_output(0, w.ncdhw ? TransposeTensor(ctx, out, kToNcdhw) : std::move(out));
  return absl::OkStatus();
}

// The sizes input (5 entries, node layout) of a 3-D convolution backprop.
absl::StatusOr<std::vector<int64_t>> Sizes5(const KernelContext& ctx, int i, const char* what) {
  std::vector<int64_t> v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(i), what, &v));
  if (ctx.input(i).rank() != 1 || v.size() != 5) {
    return KernelError(ctx, "%s must be a vector of 5 entries, got %s", what,
                       ctx.input(i).ShapeString());
  }
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, ctx.input(i == 0 ? 1 : 0).dtype(), v));
  return v;
}

// Checks filter [kd, kh, kw, in_c, out_c] against the NDHWC input and out_backprop (node
// layout) against the forward output; returns out_backprop NDHWC.
absl::StatusOr<Tensor> Conv3DGradOperands(const KernelContext& ctx, const Window3D& w,
                                          const std::vector<int64_t>& f, const Tensor& dy_in) {
  if (f.size() != 5) return KernelError(ctx, "filter must be 5-dimensional, got %s", DimsString(f));
  if (w.x[4] != f[3]) {
    return KernelError(ctx, "Input depth must be equal to filter depth: %d vs %d", w.x[4], f[3]);
  }
  const std::vector<int64_t> want = w.OutDims(f[4]);
  const std::vector<int64_t> dy = w.ncdhw ? ChannelsLast5(dy_in.dims()) : dy_in.dims();
  if (dy_in.rank() != 5 || dy != want) {
    return KernelError(ctx,
                       "out_backprop has shape %s but the convolution's output shape is %s "
                       "(NDHWC)",
                       dy_in.ShapeString(), DimsString(want));
  }
  return w.ncdhw ? TransposeTensor(ctx, dy_in, kToNdhwc) : dy_in;
}

// Calls f(o, tap, i) for each output position o and filter tap (flat) whose input position i
// (flat over [D, H, W]) is inside the input.
template <typename F>
void ForEachConvTap3D(const Window3D& w, F f) {
  const int64_t taps = w.d[0].k * w.d[1].k * w.d[2].k;
  int64_t o = 0;
  for (int64_t a = 0; a < w.d[0].out; ++a) {
    for (int64_t b = 0; b < w.d[1].out; ++b) {
      for (int64_t c = 0; c < w.d[2].out; ++c, ++o) {
        const int64_t pos[3] = {a, b, c};
        for (int64_t t = 0; t < taps; ++t) {
          const int64_t kk[3] = {t / (w.d[1].k * w.d[2].k), (t / w.d[2].k) % w.d[1].k,
                                 t % w.d[2].k};
          int64_t flat = 0;
          bool inside = true;
          for (int i = 0; i < 3; ++i) {
            const tf::SpatialDim& s = w.d[static_cast<size_t>(i)];
            const int64_t p = pos[i] * s.stride + kk[i] * s.dilation - s.pad_before;
            inside = inside && p >= 0 && p < s.in;
            flat = flat * s.in + p;
          }
          if (inside) f(o, t, flat);
        }
      }
    }
  }
}

// Conv3DBackpropInputV2(input_sizes, filter, out_backprop):
// dx[n, i, c] = sum over (o, tap) reading i of dy[n, o, f] * filter[tap, c, f].
absl::Status Conv3DBackpropInputKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, Sizes5(ctx, 0, "input_sizes"));
  const Tensor& filter = ctx.input(1);
  if (filter.rank() != 5) {
    return KernelError(ctx, "filter must be 5-dimensional, got %s", filter.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(Window3D w, Window3DOf(ctx, sizes, /*pool=*/false,
                                                {filter.dim(0), filter.dim(1), filter.dim(2)}));
  TFJIT_ASSIGN_OR_RETURN(Tensor dy, Conv3DGradOperands(ctx, w, filter.dims(), ctx.input(2)));
  if (filter.dtype() != dy.dtype()) {
    return KernelError(ctx, "filter is %s but out_backprop is %s", filter.ShapeString(),
                       dy.ShapeString());
  }
  Tensor out(dy.dtype(), w.x);
  const int64_t in_c = w.x[4], out_c = filter.dim(4), cells = w.x[1] * w.x[2] * w.x[3];
  const int64_t outs = w.d[0].out * w.d[1].out * w.d[2].out;
  const bool ok = DispatchFloat(dy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* pf = filter.data<T>();
    const T* pg = dy.data<T>();
    T* y = out.data<T>();
    ParallelFor(ctx, w.x[0],
                dy.num_elements() / std::max<int64_t>(1, w.x[0]) * filter.num_elements() /
                        std::max<int64_t>(1, out_c) +
                    1,
                [&](int64_t b, int64_t e) {
                  std::vector<C> acc(static_cast<size_t>(cells * in_c));
                  for (int64_t n = b; n < e; ++n) {
                    std::fill(acc.begin(), acc.end(), C(0));
                    ForEachConvTap3D(w, [&](int64_t o, int64_t t, int64_t i) {
                      const T* gr = pg + (n * outs + o) * out_c;
                      const T* fr = pf + t * in_c * out_c;
                      C* ar = acc.data() + i * in_c;
                      for (int64_t c = 0; c < in_c; ++c) {
                        C s = 0;
                        for (int64_t f = 0; f < out_c; ++f) s += C(gr[f]) * C(fr[c * out_c + f]);
                        ar[c] += s;
                      }
                    });
                    T* yn = y + n * cells * in_c;
                    for (size_t k = 0; k < acc.size(); ++k) yn[k] = static_cast<T>(acc[k]);
                  }
                });
  });
  if (!ok) return UnsupportedDType(ctx, dy.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, w.ncdhw ? TransposeTensor(ctx, out, kToNcdhw) : std::move(out));
  return absl::OkStatus();
}

// Conv3DBackpropFilterV2(input, filter_sizes, out_backprop):
// df[tap, c, f] = sum over (n, o) with tap reading i of x[n, i, c] * dy[n, o, f].
absl::Status Conv3DBackpropFilterKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> fsizes, Sizes5(ctx, 1, "filter_sizes"));
  TFJIT_ASSIGN_OR_RETURN(Window3D w, Window3DOf(ctx, ctx.input(0).dims(), /*pool=*/false,
                                                {fsizes[0], fsizes[1], fsizes[2]}));
  TFJIT_ASSIGN_OR_RETURN(Tensor dy, Conv3DGradOperands(ctx, w, fsizes, ctx.input(2)));
  const Tensor x = w.ncdhw ? TransposeTensor(ctx, ctx.input(0), kToNdhwc) : ctx.input(0);
  if (x.dtype() != dy.dtype()) {
    return KernelError(ctx, "input is %s but out_backprop is %s", x.ShapeString(),
                       dy.ShapeString());
  }
  Tensor out(x.dtype(), fsizes);
  const int64_t in_c = w.x[4], out_c = fsizes[4], cells = w.x[1] * w.x[2] * w.x[3];
  const int64_t outs = w.d[0].out * w.d[1].out * w.d[2].out;
  const int64_t taps = fsizes[0] * fsizes[1] * fsizes[2];
  const bool ok = DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* px = x.data<T>();
    const T* pg = dy.data<T>();
    T* y = out.data<T>();
    // Per filter tap: accumulate over the batch and output positions.
    ParallelFor(ctx, taps, dy.num_elements() * in_c + 1, [&](int64_t b, int64_t e) {
      std::vector<C> acc(static_cast<size_t>(in_c * out_c));
      for (int64_t t = b; t < e; ++t) {
        std::fill(acc.begin(), acc.end(), C(0));
        const int64_t kk[3] = {t / (w.d[1].k * w.d[2].k), (t / w.d[2].k) % w.d[1].k, t % w.d[2].k};
        for (int64_t n = 0; n < w.x[0]; ++n) {
          for (int64_t o = 0; o < outs; ++o) {
            const int64_t pos[3] = {o / (w.d[1].out * w.d[2].out), (o / w.d[2].out) % w.d[1].out,
                                    o % w.d[2].out};
            int64_t i = 0;
            bool inside = true;
            for (int d = 0; d < 3; ++d) {
              const tf::SpatialDim& s = w.d[static_cast<size_t>(d)];
              const int64_t p = pos[d] * s.stride + kk[d] * s.dilation - s.pad_before;
              inside = inside && p >= 0 && p < s.in;
              i = i * s.in + p;
            }
            if (!inside) continue;
            const T* xr = px + (n * cells + i) * in_c;
            const T* gr = pg + (n * outs + o) * out_c;
            for (int64_t c = 0; c < in_c; ++c) {
              const C xv = C(xr[c]);
              C* ar = acc.data() + c * out_c;
              for (int64_t f = 0; f < out_c; ++f) ar[f] += xv * C(gr[f]);
            }
          }
        }
        T* dst = y + t * in_c * out_c;
        for (size_t k = 0; k < acc.size(); ++k) dst[k] = static_cast<T>(acc[k]);
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, x.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterGradients3dKernels(KernelRegistry& registry) {
  registry.Register("AvgPool3DGrad", &AvgPool3DGradKernel);
  registry.Register("MaxPool3DGrad", &MaxPool3DGradKernel);
  registry.Register("Conv3DBackpropInputV2", &Conv3DBackpropInputKernel);
  registry.Register("Conv3DBackpropFilterV2", &Conv3DBackpropFilterKernel);
}

}  // namespace tfjit::runtime
