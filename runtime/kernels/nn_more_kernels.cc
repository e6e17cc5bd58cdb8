// Fallback kernels of the nn_more ops (docs/DESIGN.md, "Op families"), with TF's CPU
// semantics, dtypes and error messages: FusedBatchNorm/V2/V3 (inference and training, NHWC,
// NCHW and their 5-D forms), MaxPoolV2 (ksize/strides as inputs), MaxPool3D/AvgPool3D
// (NDHWC/NCDHW), Conv3D, LRN, and the TF-only MaxPoolWithArgmax, Dilation2D and recurrent
// cells LSTMBlockCell, BlockLSTM and GRUBlockCell. Pools run channels-last; channels-first layouts
// are transposed there and back, as the 2-D pools (nn_kernels.cc) do.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "frontend/attr.h"
#include "frontend/conv_attrs.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

using tf::SpatialDim;

// ---- FusedBatchNorm / V2 / V3 ----

// x viewed as [outer, channels, inner]: NHWC-style layouts have inner 1, NCHW-style outer N.
struct ChannelView {
  int64_t outer = 1, channels = 0, inner = 1;
  int64_t count() const { return outer * inner; }
  int64_t Index(int64_t o, int64_t c, int64_t i) const { return (o * channels + c) * inner + i; }
};

absl::StatusOr<ChannelView> BatchNormView(const KernelContext& ctx, const Tensor& x) {
  TFJIT_ASSIGN_OR_RETURN(std::string format,
                         tf::GetStringAttrOr(ctx.node(), "data_format", "NHWC"));
  const bool channels_last = format == "NHWC" || format == "NDHWC";
  if (!channels_last && format != "NCHW" && format != "NCDHW") {
    return KernelError(ctx, "Invalid data format: %s", format);
  }
  if (x.rank() != 4 && x.rank() != 5) {
    return KernelError(ctx, "input must be 4 or 5-dimensional, got %s", x.ShapeString());
  }
  if (static_cast<int>(format.size()) != x.rank()) {
    return KernelError(ctx, "data_format %s does not match the rank of x %s", format,
                       x.ShapeString());
  }
  const int feature = channels_last ? x.rank() - 1 : 1;
  ChannelView v;
  v.channels = x.dim(feature);
  for (int d = 0; d < feature; ++d) v.outer *= x.dim(d);
  for (int d = feature + 1; d < x.rank(); ++d) v.inner *= x.dim(d);
  return v;
}

// Checks scale/offset (and mean/variance where they are read) against the channel count.
absl::Status CheckBatchNormParams(const KernelContext& ctx, int64_t channels, bool need_stats) {
  static constexpr const char* kNames[] = {"", "scale", "offset", "mean", "variance"};
  for (int i = 1; i <= 4; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != DType::kFloat32) {
      return KernelError(ctx, "%s must be float32, got %s", kNames[i], DTypeName(t.dtype()));
    }
    if (t.rank() != 1) {
      return KernelError(ctx, "%s must be 1-dimensional, got %s", kNames[i], t.ShapeString());
    }
    if ((i <= 2 || need_stats) && t.dim(0) != channels) {
      return KernelError(ctx,
                         "%s must have the same number of elements as the channels of x, got "
                         "%d and %d",
                         kNames[i], t.dim(0), channels);
    }
  }
  return absl::OkStatus();
}

// Per-channel batch statistics in double: mean and the biased (1/N) variance, two passes.
template <typename T>
void BatchMoments(const KernelContext& ctx, const T* x, const ChannelView& v,
                  std::vector<double>* mean, std::vector<double>* var) {
  mean->assign(static_cast<size_t>(v.channels), 0.0);
  var->assign(static_cast<size_t>(v.channels), 0.0);
  const double n = static_cast<double>(v.count());
  ParallelFor(ctx, v.channels, 4 * v.count() + 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double sum = 0;
      for (int64_t o = 0; o < v.outer; ++o) {
        for (int64_t i = 0; i < v.inner; ++i) sum += static_cast<double>(x[v.Index(o, c, i)]);
      }
      const double m = sum / n;
      double sq = 0;
      for (int64_t o = 0; o < v.outer; ++o) {
        for (int64_t i = 0; i < v.inner; ++i) {
          const double d = static_cast<double>(x[v.Index(o, c, i)]) - m;
          sq += d * d;
        }
      }
      (*mean)[static_cast<size_t>(c)] = m;
      (*var)[static_cast<size_t>(c)] = sq / n;
    }
  });
}

// y = (x - mean) * scale / sqrt(variance + epsilon) + offset per channel.
template <typename T>
void Normalize(const KernelContext& ctx, const T* x, const ChannelView& v,
               const std::vector<double>& mean, const std::vector<double>& var, const float* scale,
               const float* offset, float epsilon, T* y) {
  std::vector<float> mul(static_cast<size_t>(v.channels)), add(mul.size());
  for (size_t c = 0; c < mul.size(); ++c) {
    mul[c] = static_cast<float>(scale[c] / std::sqrt(var[c] + static_cast<double>(epsilon)));
    add[c] = static_cast<float>(offset[c] - mean[c] * mul[c]);
  }
  const int64_t rows = v.outer * v.channels;
  ParallelFor(ctx, rows, 2 * v.inner + 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / v.channels, c = r % v.channels;
      (void)o;
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t k = r * v.inner + i;
        y[k] = static_cast<T>(static_cast<float>(x[k]) * mul[static_cast<size_t>(c)] +
                              add[static_cast<size_t>(c)]);
      }
    }
  });
}

Tensor FloatVector(const std::vector<double>& v) {
  Tensor t(DType::kFloat32, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = static_cast<float>(v[i]);
  return t;
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> r(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < r.size(); ++i) r[i] = t.data<float>()[i];
  return r;
}

// Inference: normalise with the given mean/variance, which outputs 1-4 repeat. Training:
// normalise with the batch's moments; batch_mean and batch_variance (Bessel-corrected,
// N / max(N - 1, 1)) blended into the running inputs by exponential_avg_factor; the reserve
// spaces hold the batch mean and the biased variance (TF's CPU kernel). An empty x gives NaN
// statistics. V3's reserve_space_3 is TF's CPU placeholder, a float scalar 0.
absl::Status FusedBatchNormKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 5));
  const Tensor& x = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(float epsilon, tf::GetFloatAttrOr(ctx.node(), "epsilon", 1e-4f));
  TFJIT_ASSIGN_OR_RETURN(float factor,
                         tf::GetFloatAttrOr(ctx.node(), "exponential_avg_factor", 1.0f));
  TFJIT_ASSIGN_OR_RETURN(bool training, tf::GetBoolAttrOr(ctx.node(), "is_training", true));
  TFJIT_ASSIGN_OR_RETURN(ChannelView v, BatchNormView(ctx, x));
  TFJIT_RETURN_IF_ERROR(CheckBatchNormParams(ctx, v.channels, !training || factor != 1.0f));
  const float* scale = ctx.input(1).data<float>();
  const float* offset = ctx.input(2).data<float>();
  Tensor y(x.dtype(), x.dims());
  std::vector<double> mean, var;
  Tensor out_mean, out_var, reserve_mean, reserve_var;
  const bool ok = DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) {
      const T* px = x.data<T>();
      if (!training) {
        mean = ToDoubles(ctx.input(3));
        var = ToDoubles(ctx.input(4));
        Normalize<T>(ctx, px, v, mean, var, scale, offset, epsilon, y.data<T>());
        out_mean = reserve_mean = ctx.input(3);
        out_var = reserve_var = ctx.input(4);
        return;
      }
      if (v.count() == 0) {
        mean.assign(static_cast<size_t>(v.channels), std::nan(""));
        var = mean;
        out_mean = reserve_mean = FloatVector(mean);
        out_var = reserve_var = FloatVector(var);
        return;
      }
      BatchMoments<T>(ctx, px, v, &mean, &var);
      Normalize<T>(ctx, px, v, mean, var, scale, offset, epsilon, y.data<T>());
      const double n = static_cast<double>(v.count());
      std::vector<double> corrected(var.size()), new_mean = mean;
      for (size_t c = 0; c < var.size(); ++c) {
        corrected[c] = var[c] * n / std::max(n - 1.0, 1.0);
      }
      if (factor != 1.0f) {
        const float* old_mean = ctx.input(3).data<float>();
        const float* old_var = ctx.input(4).data<float>();
        const double f = factor;
        for (size_t c = 0; c < var.size(); ++c) {
          new_mean[c] = (1.0 - f) * old_mean[c] + f * mean[c];
          corrected[c] = (1.0 - f) * old_var[c] + f * corrected[c];
        }
      }
      out_mean = FloatVector(new_mean);
      out_var = FloatVector(corrected);
      reserve_mean = FloatVector(mean);
      reserve_var = FloatVector(var);
    }
  });
  const bool supported = ok && x.dtype() != DType::kFloat64 &&
                         (ctx.node().op() != "FusedBatchNorm" || x.dtype() == DType::kFloat32);
  if (!supported) {
    return UnsupportedDType(
        ctx, x.dtype(),
        ctx.node().op() == "FusedBatchNorm" ? "float32" : "float16, bfloat16, float32");
  }
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, out_mean);
  ctx.set_output(2, out_var);
  ctx.set_output(3, reserve_mean);
  ctx.set_output(4, reserve_var);
  if (ctx.node().num_outputs() > 5) {
    ctx.set_output(5, Tensor(DType::kFloat32, {}));
  }
  return absl::OkStatus();
}

// ---- N-d pooling, channels last ----

// A pool over the spatial dims 1..k of a channels-last input [N, S1..Sk, C].
struct PoolGeometry {
  std::vector<SpatialDim> dims;
  std::vector<int64_t> OutDims(const Tensor& x) const {
    std::vector<int64_t> out = {x.dim(0)};
    for (const SpatialDim& d : dims) out.push_back(d.out);
    out.push_back(x.dim(x.rank() - 1));
    return out;
  }
};

// Validates ksize/strides (one entry per dim of the node's layout), permutes them to
// channels-last order and computes each spatial dim (SAME or VALID).
absl::StatusOr<PoolGeometry> PoolGeometryOf(const KernelContext& ctx,
                                            const std::vector<int64_t>& x_dims, bool nchw,
                                            std::vector<int64_t> ksize,
                                            std::vector<int64_t> strides) {
  const size_t rank = x_dims.size();
  if (ksize.size() != rank || strides.size() != rank) {
    return KernelError(ctx,
                       "Sliding window ksize and strides must specify %d dimensions, got "
                       "%s and %s",
                       rank, DimsString(ksize), DimsString(strides));
  }
  auto to_last = [&](std::vector<int64_t> v) {
    if (nchw) std::rotate(v.begin() + 1, v.begin() + 2, v.end());
    return v;
  };
  ksize = to_last(ksize);
  strides = to_last(strides);
  const std::vector<int64_t> dims = to_last(x_dims);
  if (ksize[0] != 1 || strides[0] != 1) {
    return KernelError(ctx, "Pooling is not yet supported on the batch dimension.");
  }
  if (ksize[rank - 1] != 1 || strides[rank - 1] != 1) {
    return KernelError(ctx, "Pooling is not yet supported on the depth dimension.");
  }
  TFJIT_ASSIGN_OR_RETURN(std::string padding, tf::GetStringAttr(ctx.node(), "padding"));
  tf::WindowAttrs a;
  if (padding == "SAME") {
    a.padding = tf::Padding::kSame;
  } else if (padding != "VALID") {
    return KernelError(ctx, "padding must be SAME or VALID, got '%s'", padding);
  }
  a.strides = strides;
  a.dilations.assign(rank, 1);
  a.explicit_paddings.assign(2 * rank, 0);
  PoolGeometry g;
  for (size_t d = 1; d + 1 < rank; ++d) {
    if (ksize[d] <= 0 || strides[d] <= 0) {
      return KernelError(ctx, "ksize and strides must be positive, got %s and %s",
                         DimsString(ksize), DimsString(strides));
    }
    TFJIT_ASSIGN_OR_RETURN(
        SpatialDim s, tf::ComputeSpatialDim(ctx.node(), a, static_cast<int>(d), dims[d], ksize[d]));
    g.dims.push_back(s);
  }
  return g;
}

// out[n, o..., c] = max (or mean over the in-bounds cells) of x over the clipped window.
template <typename T, bool kMax>
void PoolChannelsLast(const KernelContext& ctx, const Tensor& x, const PoolGeometry& g,
                      Tensor& out) {
  using C = ComputeType<T>;
  const int k = static_cast<int>(g.dims.size());
  const int64_t depth = x.dim(x.rank() - 1);
  std::vector<int64_t> in_stride(static_cast<size_t>(k), depth);
  for (int d = k - 2; d >= 0; --d) {
    in_stride[static_cast<size_t>(d)] = in_stride[static_cast<size_t>(d + 1)] * x.dim(d + 2);
  }
  const int64_t batch_stride = k > 0 ? in_stride[0] * x.dim(1) : depth;
  int64_t positions = 1;
  for (const SpatialDim& d : g.dims) positions *= d.out;
  const T* px = x.data<T>();
  T* py = out.data<T>();
  const C init = kMax ? (std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                              : std::numeric_limits<C>::lowest())
                      : C(0);
  ParallelFor(ctx, x.dim(0) * positions, depth * 8 + 1, [&](int64_t begin, int64_t end) {
    std::vector<C> acc(static_cast<size_t>(depth));
    std::vector<int64_t> lo(static_cast<size_t>(k)), hi(lo.size()), idx(lo.size());
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / positions;
      int64_t rest = p % positions, cells = 1;
      bool empty = false;
      for (int d = k - 1; d >= 0; --d) {
        const SpatialDim& s = g.dims[static_cast<size_t>(d)];
        const int64_t o = rest % s.out;
        rest /= s.out;
        const int64_t start = o * s.stride - s.pad_before;
        lo[static_cast<size_t>(d)] = std::max<int64_t>(start, 0);
        hi[static_cast<size_t>(d)] = std::min(start + s.k, s.in);
        cells *= std::max<int64_t>(hi[static_cast<size_t>(d)] - lo[static_cast<size_t>(d)], 0);
        empty = empty || hi[static_cast<size_t>(d)] <= lo[static_cast<size_t>(d)];
      }
      std::fill(acc.begin(), acc.end(), init);
      idx = lo;
      while (!empty) {
        int64_t off = n * batch_stride;
        for (int d = 0; d < k; ++d)
          off += idx[static_cast<size_t>(d)] * in_stride[static_cast<size_t>(d)];
        for (int64_t c = 0; c < depth; ++c) {
          const C v = static_cast<C>(px[off + c]);
          if constexpr (kMax) {
            C& a = acc[static_cast<size_t>(c)];
            if (v > a || v != v) a = a != a ? a : v;  // NaN propagates
          } else {
            acc[static_cast<size_t>(c)] += v;
          }
        }
        int d = k - 1;
        for (; d >= 0; --d) {
          if (++idx[static_cast<size_t>(d)] < hi[static_cast<size_t>(d)]) break;
          idx[static_cast<size_t>(d)] = lo[static_cast<size_t>(d)];
        }
        if (d < 0) break;
      }
      for (int64_t c = 0; c < depth; ++c) {
        C a = acc[static_cast<size_t>(c)];
        if constexpr (!kMax) a = cells > 0 ? a / static_cast<C>(cells) : a;
        py[p * depth + c] = static_cast<T>(a);
      }
    }
  });
}

// Channels-first layouts (NCHW, NCDHW) run transposed to channels-last and back.
std::vector<int> ToLastPerm(int rank) {
  std::vector<int> p = {0};
  for (int d = 2; d < rank; ++d) p.push_back(d);
  p.push_back(1);
  return p;
}
std::vector<int> ToFirstPerm(int rank) {
  std::vector<int> p = {0, rank - 1};
  for (int d = 1; d < rank - 1; ++d) p.push_back(d);
  return p;
}

template <bool kMax>
absl::Status RunPool(KernelContext& ctx, int rank, const std::vector<int64_t>& ksize,
                     const std::vector<int64_t>& strides, bool float_only) {
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(std::string format, tf::GetStringAttrOr(ctx.node(), "data_format",
                                                                 rank == 5 ? "NDHWC" : "NHWC"));
  const bool nchw = format == "NCHW" || format == "NCDHW";
  if (format != (rank == 5 ? "NDHWC" : "NHWC") && format != (rank == 5 ? "NCDHW" : "NCHW")) {
    return KernelError(ctx, "data_format '%s' is not supported for a %d-D pool", format, rank);
  }
  if (in.rank() != rank) {
    return KernelError(ctx, "input must be %d-dimensional, got %s", rank, in.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(PoolGeometry g, PoolGeometryOf(ctx, in.dims(), nchw, ksize, strides));
  const Tensor x = nchw ? TransposeTensor(ctx, in, ToLastPerm(rank)) : in;
  Tensor out(in.dtype(), g.OutDims(x));
  auto run = [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) PoolChannelsLast<T, kMax>(ctx, x, g, out);
  };
  const bool ok = float_only ? DispatchFloat(in.dtype(), run) : DispatchReal(in.dtype(), run);
  if (!ok) {
    return UnsupportedDType(
        ctx, in.dtype(), float_only ? "floating-point types" : "floating-point and integer types");
  }
  ctx.set_output(0, nchw ? TransposeTensor(ctx, out, ToFirstPerm(rank)) : std::move(out));
  return absl::OkStatus();
}

// MaxPoolV2(input, ksize, strides): MaxPool with the window as int32 inputs.
absl::Status MaxPoolV2Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  std::vector<int64_t> ksize, strides;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "ksize", &ksize));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(2), "strides", &strides));
  return RunPool<true>(ctx, 4, ksize, strides, /*float_only=*/false);
}

template <bool kMax>
absl::Status Pool3DKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, tf::GetIntListAttr(ctx.node(), "ksize"));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, tf::GetIntListAttr(ctx.node(), "strides"));
  return RunPool<kMax>(ctx, 5, ksize, strides, /*float_only=*/true);
}

// ---- Conv3D ----

// Direct 3-D convolution, channels last: x [N, D, H, W, C], filter [kd, kh, kw, C / groups,
// O]; output channel o reads input channels of group o / (O / groups). NCDHW runs transposed.
template <typename T>
void Conv3DTyped(const KernelContext& ctx, const Tensor& x, const Tensor& f,
                 const std::vector<SpatialDim>& sd, int64_t groups, Tensor& out) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t in_c = x.dim(4), f_in = f.dim(3), out_c = f.dim(4), per_group = out_c / groups;
  const int64_t positions = x.dim(0) * sd[0].out * sd[1].out * sd[2].out;
  const T* px = x.data<T>();
  const T* pf = f.data<T>();
  T* py = out.data<T>();
  ParallelFor(
      ctx, positions, out_c * f.num_elements() / std::max<int64_t>(out_c, 1) * 2 + 1,
      [&](int64_t begin, int64_t end) {
        std::vector<C> acc(static_cast<size_t>(out_c));
        for (int64_t p = begin; p < end; ++p) {
          int64_t rest = p;
          const int64_t ow = rest % sd[2].out;
          rest /= sd[2].out;
          const int64_t oh = rest % sd[1].out;
          rest /= sd[1].out;
          const int64_t od = rest % sd[0].out;
          const int64_t n = rest / sd[0].out;
          std::fill(acc.begin(), acc.end(), C(0));
          const int64_t o_pos[3] = {od, oh, ow};
          for (int64_t kd = 0; kd < f.dim(0); ++kd) {
            for (int64_t kh = 0; kh < f.dim(1); ++kh) {
              for (int64_t kw = 0; kw < f.dim(2); ++kw) {
                const int64_t k_pos[3] = {kd, kh, kw};
                int64_t i_pos[3];
                bool inside = true;
                for (int d = 0; d < 3; ++d) {
                  const SpatialDim& s = sd[static_cast<size_t>(d)];
                  i_pos[d] = o_pos[d] * s.stride + k_pos[d] * s.dilation - s.pad_before;
                  inside = inside && i_pos[d] >= 0 && i_pos[d] < s.in;
                }
                if (!inside) continue;
                const T* xp =
                    px + (((n * x.dim(1) + i_pos[0]) * x.dim(2) + i_pos[1]) * x.dim(3) + i_pos[2]) *
                             in_c;
                const T* fp = pf + ((kd * f.dim(1) + kh) * f.dim(2) + kw) * f_in * out_c;
                for (int64_t o = 0; o < out_c; ++o) {
                  const int64_t c0 = (o / per_group) * f_in;
                  C a = 0;
                  for (int64_t c = 0; c < f_in; ++c) {
                    a += static_cast<C>(xp[c0 + c]) * static_cast<C>(fp[c * out_c + o]);
                  }
                  acc[static_cast<size_t>(o)] += a;
                }
              }
            }
          }
          for (int64_t o = 0; o < out_c; ++o)
            py[p * out_c + o] = static_cast<T>(acc[static_cast<size_t>(o)]);
        }
      });
}

absl::Status Conv3DKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  const Tensor& f = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(std::string format,
                         tf::GetStringAttrOr(ctx.node(), "data_format", "NDHWC"));
  if (format != "NDHWC" && format != "NCDHW") {
    return KernelError(ctx, "data_format must be NDHWC or NCDHW, got '%s'", format);
  }
  const bool nc = format == "NCDHW";
  if (in.rank() != 5 || f.rank() != 5 || in.dtype() != f.dtype()) {
    return KernelError(ctx, "input and filter must be 5-dimensional of one dtype, got %s and %s",
                       in.ShapeString(), f.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, tf::GetIntListAttr(ctx.node(), "strides"));
  std::vector<int64_t> dil(5, 1);
  if (tf::FindAttr(ctx.node(), "dilations") != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(dil, tf::GetIntListAttr(ctx.node(), "dilations"));
  }
  if (strides.size() != 5 || dil.size() != 5) {
    return KernelError(ctx, "strides and dilations must have 5 entries, got %s and %s",
                       DimsString(strides), DimsString(dil));
  }
  const Tensor x = nc ? TransposeTensor(ctx, in, ToLastPerm(5)) : in;
  if (nc) {
    std::rotate(strides.begin() + 1, strides.begin() + 2, strides.end());
    std::rotate(dil.begin() + 1, dil.begin() + 2, dil.end());
  }
  if (strides[0] != 1 || strides[4] != 1 || dil[0] != 1 || dil[4] != 1) {
    return KernelError(ctx,
                       "Current implementation does not yet support strides or dilations "
                       "in the batch and depth dimensions.");
  }
  if (f.dim(3) <= 0 || x.dim(4) % f.dim(3) != 0 || f.dim(4) % (x.dim(4) / f.dim(3)) != 0) {
    return KernelError(ctx,
                       "Input depth must be evenly divisible by filter depth: input %s, "
                       "filter %s",
                       x.ShapeString(), f.ShapeString());
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
  std::vector<SpatialDim> sd;
  for (int d = 1; d <= 3; ++d) {
    if (strides[static_cast<size_t>(d)] < 1 || dil[static_cast<size_t>(d)] < 1) {
      return KernelError(ctx, "strides and dilations must be >= 1, got %s and %s",
                         DimsString(strides), DimsString(dil));
    }
    TFJIT_ASSIGN_OR_RETURN(SpatialDim s,
                           tf::ComputeSpatialDim(ctx.node(), a, d, x.dim(d), f.dim(d - 1)));
    sd.push_back(s);
  }
  Tensor out(in.dtype(), {x.dim(0), sd[0].out, sd[1].out, sd[2].out, f.dim(4)});
  const int64_t groups = x.dim(4) / f.dim(3);
  const bool ok = DispatchFloat(
      in.dtype(), [&](auto tag) { Conv3DTyped<decltype(tag)>(ctx, x, f, sd, groups, out); });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "float16, bfloat16, float32, float64");
  ctx.set_output(0, nc ? TransposeTensor(ctx, out, ToFirstPerm(5)) : std::move(out));
  return absl::OkStatus();
}

// ---- MaxPoolWithArgmax / Dilation2D (NHWC; XLA leaves both to TF) ----

// The SAME/VALID windows of a 4-D NHWC node whose lists are [1, h, w, 1] (`sizes` the window
// extent per spatial dim; `rates` dilate it, 1 for pools).
absl::StatusOr<std::vector<SpatialDim>> Window4D(const KernelContext& ctx, const Tensor& x,
                                                 const std::vector<int64_t>& sizes,
                                                 const std::vector<int64_t>& strides,
                                                 const std::vector<int64_t>& rates) {
  if (x.rank() != 4) {
    return KernelError(ctx, "input must be 4-dimensional, got %s", x.ShapeString());
  }
  for (const auto* v : {&strides, &rates}) {
    if (v->size() != 4 || (*v)[0] != 1 || (*v)[3] != 1 || (*v)[1] < 1 || (*v)[2] < 1) {
      return KernelError(ctx,
                         "strides and rates must be [1, h, w, 1] with positive h and w, got %s",
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
  std::vector<SpatialDim> dims;
  for (int d = 1; d <= 2; ++d) {
    TFJIT_ASSIGN_OR_RETURN(SpatialDim s, tf::ComputeSpatialDim(ctx.node(), a, d, x.dim(d),
                                                               sizes[static_cast<size_t>(d - 1)]));
    dims.push_back(s);
  }
  return dims;
}

// output = MaxPool; argmax = the flat index of the first maximum of each window in the
// input's [(b *) h, w, c] order (TF's strict > scan), int64 or int32 (Targmax).
absl::Status MaxPoolWithArgmaxKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, tf::GetIntListAttr(ctx.node(), "ksize"));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, tf::GetIntListAttr(ctx.node(), "strides"));
  TFJIT_ASSIGN_OR_RETURN(bool with_batch,
                         tf::GetBoolAttrOr(ctx.node(), "include_batch_in_index", false));
  if (ksize.size() != 4 || ksize[0] != 1 || ksize[3] != 1 || ksize[1] < 1 || ksize[2] < 1) {
    return KernelError(ctx,
                       "Pooling is not yet supported on the batch or depth dimension; "
                       "ksize must be [1, h, w, 1], got %s",
                       DimsString(ksize));
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<SpatialDim> sd,
                         Window4D(ctx, x, {ksize[1], ksize[2]}, strides, {1, 1, 1, 1}));
  const DType index_type =
      ctx.node().num_outputs() > 1 ? ctx.node().output_types()[1] : DType::kInt64;
  if (index_type != DType::kInt64 && index_type != DType::kInt32) {
    return KernelError(ctx, "Targmax must be int32 or int64, got %s", DTypeName(index_type));
  }
  const std::vector<int64_t> out_dims = {x.dim(0), sd[0].out, sd[1].out, x.dim(3)};
  Tensor out(x.dtype(), out_dims), argmax(index_type, out_dims);
  const int64_t h = x.dim(1), w = x.dim(2), depth = x.dim(3);
  const bool ok = DispatchReal(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = ComputeType<T>;
      const T* px = x.data<T>();
      T* py = out.data<T>();
      ParallelFor(ctx, x.dim(0) * sd[0].out * sd[1].out, depth * ksize[1] * ksize[2] + 1,
                  [&](int64_t begin, int64_t end) {
                    for (int64_t p = begin; p < end; ++p) {
                      const int64_t ox = p % sd[1].out, oy = (p / sd[1].out) % sd[0].out;
                      const int64_t n = p / (sd[1].out * sd[0].out);
                      const int64_t y0 = oy * sd[0].stride - sd[0].pad_before;
                      const int64_t x0 = ox * sd[1].stride - sd[1].pad_before;
                      for (int64_t c = 0; c < depth; ++c) {
                        C best = std::numeric_limits<C>::lowest();
                        int64_t best_index = -1;
                        for (int64_t iy = std::max<int64_t>(y0, 0); iy < std::min(y0 + ksize[1], h);
                             ++iy) {
                          for (int64_t ix = std::max<int64_t>(x0, 0);
                               ix < std::min(x0 + ksize[2], w); ++ix) {
                            const int64_t flat = ((n * h + iy) * w + ix) * depth + c;
                            const C v = static_cast<C>(px[flat]);
                            if (best_index < 0 || v > best) {
                              best = v;
                              best_index = with_batch ? flat : flat - n * h * w * depth;
                            }
                          }
                        }
                        py[p * depth + c] = static_cast<T>(best);
                        if (index_type == DType::kInt64) {
                          argmax.data<int64_t>()[p * depth + c] = best_index;
                        } else {
                          argmax.data<int32_t>()[p * depth + c] = static_cast<int32_t>(best_index);
                        }
                      }
                    }
                  });
    }
  });
  if (!ok || x.dtype() == DType::kBool) {
    return UnsupportedDType(ctx, x.dtype(), "floating-point and integer types");
  }
  ctx.set_output(0, std::move(out));
  ctx.set_output(1, std::move(argmax));
  return absl::OkStatus();
}

// Grayscale dilation: out[b, y, x, c] = max over the in-bounds taps (dy, dx) of
// input[b, y * sh + dy * rh - pad_top, x * sw + dx * rw - pad_left, c] + filter[dy, dx, c].
absl::Status Dilation2DKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& f = ctx.input(1);
  if (f.rank() != 3 || x.rank() != 4 || f.dim(2) != x.dim(3) || f.dtype() != x.dtype()) {
    return KernelError(ctx,
                       "input must be 4-D and filter 3-D [h, w, depth] of the input's "
                       "depth and dtype, got %s and %s",
                       x.ShapeString(), f.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, tf::GetIntListAttr(ctx.node(), "strides"));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> rates, tf::GetIntListAttr(ctx.node(), "rates"));
  TFJIT_ASSIGN_OR_RETURN(std::vector<SpatialDim> sd,
                         Window4D(ctx, x, {f.dim(0), f.dim(1)}, strides, rates));
  Tensor out(x.dtype(), {x.dim(0), sd[0].out, sd[1].out, x.dim(3)});
  const int64_t h = x.dim(1), w = x.dim(2), depth = x.dim(3);
  const bool ok = DispatchReal(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = ComputeType<T>;
      const T* px = x.data<T>();
      const T* pf = f.data<T>();
      T* py = out.data<T>();
      ParallelFor(
          ctx, x.dim(0) * sd[0].out * sd[1].out, depth * f.dim(0) * f.dim(1) + 1,
          [&](int64_t begin, int64_t end) {
            for (int64_t p = begin; p < end; ++p) {
              const int64_t ox = p % sd[1].out, oy = (p / sd[1].out) % sd[0].out;
              const int64_t n = p / (sd[1].out * sd[0].out);
              for (int64_t c = 0; c < depth; ++c) {
                C best = std::numeric_limits<C>::lowest();
                for (int64_t dy = 0; dy < f.dim(0); ++dy) {
                  const int64_t iy = oy * sd[0].stride + dy * sd[0].dilation - sd[0].pad_before;
                  if (iy < 0 || iy >= h) continue;
                  for (int64_t dx = 0; dx < f.dim(1); ++dx) {
                    const int64_t ix = ox * sd[1].stride + dx * sd[1].dilation - sd[1].pad_before;
                    if (ix < 0 || ix >= w) continue;
                    const C v = static_cast<C>(px[((n * h + iy) * w + ix) * depth + c]) +
                                static_cast<C>(pf[(dy * f.dim(1) + dx) * depth + c]);
                    best = v > best ? v : best;
                  }
                }
                py[p * depth + c] = static_cast<T>(best);
              }
            }
          });
    }
  });
  if (!ok || x.dtype() == DType::kBool) {
    return UnsupportedDType(ctx, x.dtype(), "floating-point and integer types");
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- LSTMBlockCell / BlockLSTM / GRUBlockCell (TF-only recurrent cells) ----

float Sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// The checked shapes of an LSTM step: x [batch, input], state [batch, cell], w [input + cell,
// 4 * cell], peepholes [cell], b [4 * cell].
struct LstmShape {
  int64_t batch = 0, input = 0, cell = 0;
};

absl::StatusOr<LstmShape> CheckLstm(const KernelContext& ctx, const Tensor& x, int first_state) {
  const Tensor& cs = ctx.input(first_state);
  const Tensor& h = ctx.input(first_state + 1);
  const Tensor& w = ctx.input(first_state + 2);
  const Tensor& b = ctx.input(first_state + 6);
  LstmShape s;
  if (x.rank() != 2 || cs.rank() != 2 || w.rank() != 2 || b.rank() != 1) {
    return KernelError(ctx,
                       "x, cs_prev, h_prev and w must be matrices and b a vector, got %s, "
                       "%s, %s, %s",
                       x.ShapeString(), cs.ShapeString(), w.ShapeString(), b.ShapeString());
  }
  s.batch = x.dim(0);
  s.input = x.dim(1);
  s.cell = cs.dim(1);
  if (cs.dims() != std::vector<int64_t>{s.batch, s.cell} || h.dims() != cs.dims() ||
      w.dims() != std::vector<int64_t>{s.input + s.cell, 4 * s.cell} || b.dim(0) != 4 * s.cell) {
    return KernelError(ctx,
                       "shapes disagree: x %s, cs_prev %s, h_prev %s, w %s (want [%d, %d]), "
                       "b %s",
                       x.ShapeString(), cs.ShapeString(), h.ShapeString(), w.ShapeString(),
                       s.input + s.cell, 4 * s.cell, b.ShapeString());
  }
  for (int i = first_state + 3; i < first_state + 6; ++i) {
    if (ctx.input(i).rank() != 1 || ctx.input(i).dim(0) != s.cell) {
      return KernelError(ctx, "peephole weights must be vectors of %d, got %s", s.cell,
                         ctx.input(i).ShapeString());
    }
  }
  for (int i = first_state; i <= first_state + 6; ++i) {
    if (ctx.input(i).dtype() != x.dtype()) {
      return KernelError(ctx, "all inputs must have x's dtype %s", DTypeName(x.dtype()));
    }
  }
  return s;
}

struct LstmAttrs {
  float forget_bias = 1.0f, cell_clip = 3.0f;
  bool peephole = false;
};

absl::StatusOr<LstmAttrs> ReadLstmAttrs(const KernelContext& ctx) {
  LstmAttrs a;
  TFJIT_ASSIGN_OR_RETURN(a.forget_bias, tf::GetFloatAttrOr(ctx.node(), "forget_bias", 1.0f));
  TFJIT_ASSIGN_OR_RETURN(a.cell_clip, tf::GetFloatAttrOr(ctx.node(), "cell_clip", 3.0f));
  TFJIT_ASSIGN_OR_RETURN(a.peephole, tf::GetBoolAttrOr(ctx.node(), "use_peephole", false));
  return a;
}

// One LSTM step for every batch row: [i, ci, f, o] = [x, h_prev] * w + b; i = sigmoid(i +
// cs_prev * wci), f = sigmoid(f + forget_bias + cs_prev * wcf), ci = tanh(ci), cs = clip(ci * i
// + cs_prev * f), o = sigmoid(o + cs * wco), co = tanh(cs), h = co * o. Outputs (i, cs, f, o,
// ci, co, h) are written at row offset `out_row` of the seven [.., cell] buffers.
template <typename T>
void LstmStep(const LstmShape& s, const LstmAttrs& a, const T* x, const T* cs_prev, const T* h_prev,
              const T* w, const T* wci, const T* wcf, const T* wco, const T* b, T* const out[7]) {
  std::vector<float> gates(static_cast<size_t>(4 * s.cell));
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t g = 0; g < 4 * s.cell; ++g) {
      float acc = static_cast<float>(b[g]);
      for (int64_t k = 0; k < s.input; ++k) {
        acc += static_cast<float>(x[n * s.input + k]) * static_cast<float>(w[k * 4 * s.cell + g]);
      }
      for (int64_t k = 0; k < s.cell; ++k) {
        acc += static_cast<float>(h_prev[n * s.cell + k]) *
               static_cast<float>(w[(s.input + k) * 4 * s.cell + g]);
      }
      gates[static_cast<size_t>(g)] = acc;
    }
    for (int64_t c = 0; c < s.cell; ++c) {
      auto peep = [&](const T* v) { return a.peephole ? static_cast<float>(v[c]) : 0.0f; };
      const float cp = static_cast<float>(cs_prev[n * s.cell + c]);
      const float i = Sigmoid(gates[static_cast<size_t>(c)] + cp * peep(wci));
      const float ci = std::tanh(gates[static_cast<size_t>(s.cell + c)]);
      const float f =
          Sigmoid(gates[static_cast<size_t>(2 * s.cell + c)] + a.forget_bias + cp * peep(wcf));
      float cs = ci * i + cp * f;
      if (a.cell_clip > 0) cs = std::min(std::max(cs, -a.cell_clip), a.cell_clip);
      const float o = Sigmoid(gates[static_cast<size_t>(3 * s.cell + c)] + cs * peep(wco));
      const float co = std::tanh(cs);
      const float values[7] = {i, cs, f, o, ci, co, co * o};
      for (int k = 0; k < 7; ++k) out[k][n * s.cell + c] = static_cast<T>(values[k]);
    }
  }
}

absl::Status LstmBlockCellKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 8));
  const Tensor& x = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(LstmShape s, CheckLstm(ctx, x, 1));
  TFJIT_ASSIGN_OR_RETURN(LstmAttrs a, ReadLstmAttrs(ctx));
  std::vector<Tensor> outs(7);
  for (Tensor& t : outs) t = Tensor(x.dtype(), {s.batch, s.cell});
  const bool ok = DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half>) {
      T* const out[7] = {outs[0].data<T>(), outs[1].data<T>(), outs[2].data<T>(), outs[3].data<T>(),
                         outs[4].data<T>(), outs[5].data<T>(), outs[6].data<T>()};
      LstmStep<T>(s, a, x.data<T>(), ctx.input(1).data<T>(), ctx.input(2).data<T>(),
                  ctx.input(3).data<T>(), ctx.input(4).data<T>(), ctx.input(5).data<T>(),
                  ctx.input(6).data<T>(), ctx.input(7).data<T>(), out);
    }
  });
  if (!ok || (x.dtype() != DType::kFloat32 && x.dtype() != DType::kFloat16)) {
    return UnsupportedDType(ctx, x.dtype(), "float16, float32");
  }
  for (int k = 0; k < 7; ++k) ctx.set_output(k, outs[static_cast<size_t>(k)]);
  return absl::OkStatus();
}

// BlockLSTM(seq_len_max, x [time, batch, input], cs_prev, h_prev, w, wci, wcf, wco, b): the
// cell over time steps t < seq_len_max, each step's state feeding the next; later steps are 0.
absl::Status BlockLstmKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 9));
  const Tensor& len = ctx.input(0);
  const Tensor& x = ctx.input(1);
  if (len.dtype() != DType::kInt64 || len.rank() != 0) {
    return KernelError(ctx, "seq_len_max must be an int64 scalar, got %s", len.ShapeString());
  }
  if (x.rank() != 3) return KernelError(ctx, "x must be 3-D, got %s", x.ShapeString());
  const int64_t time = x.dim(0), max_len = len.data<int64_t>()[0];
  const Tensor x0(x.dtype(), {x.dim(1), x.dim(2)});
  TFJIT_ASSIGN_OR_RETURN(LstmShape s, CheckLstm(ctx, x0, 2));
  TFJIT_ASSIGN_OR_RETURN(LstmAttrs a, ReadLstmAttrs(ctx));
  if (max_len < 0 || max_len > time) {
    return KernelError(ctx, "seq_len_max %d must be in [0, %d] (the time steps of x)", max_len,
                       time);
  }
  std::vector<Tensor> outs(7);
  for (Tensor& t : outs) t = Tensor(x.dtype(), {time, s.batch, s.cell});
  const bool ok = DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half>) {
      const int64_t step = s.batch * s.cell;
      for (int64_t t = 0; t < max_len; ++t) {
        T* const out[7] = {outs[0].data<T>() + t * step, outs[1].data<T>() + t * step,
                           outs[2].data<T>() + t * step, outs[3].data<T>() + t * step,
                           outs[4].data<T>() + t * step, outs[5].data<T>() + t * step,
                           outs[6].data<T>() + t * step};
        const T* cs_prev = t == 0 ? ctx.input(2).data<T>() : outs[1].data<T>() + (t - 1) * step;
        const T* h_prev = t == 0 ? ctx.input(3).data<T>() : outs[6].data<T>() + (t - 1) * step;
        LstmStep<T>(s, a, x.data<T>() + t * s.batch * s.input, cs_prev, h_prev,
                    ctx.input(4).data<T>(), ctx.input(5).data<T>(), ctx.input(6).data<T>(),
                    ctx.input(7).data<T>(), ctx.input(8).data<T>(), out);
      }
    }
  });
  if (!ok || (x.dtype() != DType::kFloat32 && x.dtype() != DType::kFloat16)) {
    return UnsupportedDType(ctx, x.dtype(), "float16, float32");
  }
  for (int k = 0; k < 7; ++k) ctx.set_output(k, outs[static_cast<size_t>(k)]);
  return absl::OkStatus();
}

// GRUBlockCell(x, h_prev, w_ru, w_c, b_ru, b_c): [r, u] = sigmoid([x, h_prev] * w_ru + b_ru);
// c = tanh([x, r * h_prev] * w_c + b_c); h = u * h_prev + (1 - u) * c. Outputs r, u, c, h.
absl::Status GruBlockCellKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 6));
  const Tensor& x = ctx.input(0);
  const Tensor& h = ctx.input(1);
  const Tensor& w_ru = ctx.input(2);
  const Tensor& w_c = ctx.input(3);
  const Tensor& b_ru = ctx.input(4);
  const Tensor& b_c = ctx.input(5);
  if (x.rank() != 2 || h.rank() != 2) {
    return KernelError(ctx, "x and h_prev must be matrices, got %s and %s", x.ShapeString(),
                       h.ShapeString());
  }
  const int64_t batch = x.dim(0), input = x.dim(1), cell = h.dim(1);
  if (h.dim(0) != batch || w_ru.dims() != std::vector<int64_t>{input + cell, 2 * cell} ||
      w_c.dims() != std::vector<int64_t>{input + cell, cell} ||
      b_ru.dims() != std::vector<int64_t>{2 * cell} || b_c.dims() != std::vector<int64_t>{cell}) {
    return KernelError(ctx, "shapes disagree: x %s, h_prev %s, w_ru %s, w_c %s, b_ru %s, b_c %s",
                       x.ShapeString(), h.ShapeString(), w_ru.ShapeString(), w_c.ShapeString(),
                       b_ru.ShapeString(), b_c.ShapeString());
  }
  for (int i = 1; i < 6; ++i) {
    if (ctx.input(i).dtype() != x.dtype()) {
      return KernelError(ctx, "all inputs must have x's dtype %s", DTypeName(x.dtype()));
    }
  }
  if (x.dtype() != DType::kFloat32) return UnsupportedDType(ctx, x.dtype(), "float32");
  Tensor r(x.dtype(), {batch, cell}), u(r.dtype(), r.dims()), c(r.dtype(), r.dims()),
      hn(r.dtype(), r.dims());
  const float *px = x.data<float>(), *ph = h.data<float>(), *wru = w_ru.data<float>(),
              *wc = w_c.data<float>(), *bru = b_ru.data<float>(), *bc = b_c.data<float>();
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t g = 0; g < 2 * cell; ++g) {
      float acc = bru[g];
      for (int64_t k = 0; k < input; ++k) acc += px[n * input + k] * wru[k * 2 * cell + g];
      for (int64_t k = 0; k < cell; ++k) acc += ph[n * cell + k] * wru[(input + k) * 2 * cell + g];
      (g < cell ? r : u).data<float>()[n * cell + g % cell] = Sigmoid(acc);
    }
    for (int64_t g = 0; g < cell; ++g) {
      float acc = bc[g];
      for (int64_t k = 0; k < input; ++k) acc += px[n * input + k] * wc[k * cell + g];
      for (int64_t k = 0; k < cell; ++k) {
        acc += ph[n * cell + k] * r.data<float>()[n * cell + k] * wc[(input + k) * cell + g];
      }
      const float cv = std::tanh(acc), uv = u.data<float>()[n * cell + g];
      c.data<float>()[n * cell + g] = cv;
      hn.data<float>()[n * cell + g] = uv * ph[n * cell + g] + (1 - uv) * cv;
    }
  }
  ctx.set_output(0, std::move(r));
  ctx.set_output(1, std::move(u));
  ctx.set_output(2, std::move(c));
  ctx.set_output(3, std::move(hn));
  return absl::OkStatus();
}

// ---- LRN ----

// y = x / (bias + alpha * sum of x^2 over depth_radius neighbours in depth)^beta, 4-D input.
absl::Status LrnKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  if (in.rank() != 4) {
    return KernelError(ctx, "input must be 4-dimensional, got %s", in.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(int64_t radius, tf::GetIntAttrOr(ctx.node(), "depth_radius", 5));
  TFJIT_ASSIGN_OR_RETURN(float bias, tf::GetFloatAttrOr(ctx.node(), "bias", 1.0f));
  TFJIT_ASSIGN_OR_RETURN(float alpha, tf::GetFloatAttrOr(ctx.node(), "alpha", 1.0f));
  TFJIT_ASSIGN_OR_RETURN(float beta, tf::GetFloatAttrOr(ctx.node(), "beta", 0.5f));
  if (radius < 0 || radius > std::numeric_limits<int32_t>::max()) {
    return KernelError(ctx, "depth_radius = %d larger than int max or negative", radius);
  }
  Tensor out(in.dtype(), in.dims());
  const int64_t depth = in.dim(3), rows = depth == 0 ? 0 : in.num_elements() / depth;
  const bool ok = DispatchFloat(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, double>) {
      const T* px = in.data<T>();
      T* py = out.data<T>();
      ParallelFor(ctx, rows, depth * (2 * radius + 4) + 1, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* x = px + r * depth;
          for (int64_t d = 0; d < depth; ++d) {
            float sum = 0;
            for (int64_t j = std::max<int64_t>(d - radius, 0); j <= std::min(d + radius, depth - 1);
                 ++j) {
              const float v = static_cast<float>(x[j]);
              sum += v * v;
            }
            const float v = static_cast<float>(x[d]);
            py[r * depth + d] = static_cast<T>(v * std::pow(bias + alpha * sum, -beta));
          }
        }
      });
    }
  });
  if (!ok || in.dtype() == DType::kFloat64) {
    return UnsupportedDType(ctx, in.dtype(), "float16, bfloat16, float32");
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterNnMoreKernels(KernelRegistry& registry) {
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    registry.Register(op, &FusedBatchNormKernel);
  }
  registry.Register("MaxPoolV2", &MaxPoolV2Kernel);
  registry.Register("MaxPool3D", &Pool3DKernel<true>);
  registry.Register("AvgPool3D", &Pool3DKernel<false>);
  registry.Register("LRN", &LrnKernel);
  registry.Register("Conv3D", &Conv3DKernel);
  registry.Register("MaxPoolWithArgmax", &MaxPoolWithArgmaxKernel);
  registry.Register("Dilation2D", &Dilation2DKernel);
  registry.Register("LSTMBlockCell", &LstmBlockCellKernel);
  registry.Register("BlockLSTM", &BlockLstmKernel);
  registry.Register("GRUBlockCell", &GruBlockCellKernel);
}

}  // namespace tfjit::runtime
