// NN kernels: Relu, Relu6, BiasAdd (NHWC/NCHW), Softmax and LogSoftmax over the last axis, the
// activations Elu, Selu, Softsign, Softplus and LeakyRelu, L2Loss, and the 2-D pools MaxPool and
// AvgPool (NHWC; NCHW runs transposed), whose geometry and messages follow TF's CPU kernels
// (pooling_ops_common).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "frontend/attr.h"
#include "frontend/conv_attrs.h"
#include "runtime/kernels/cwise_ops.h"

namespace tfjit::runtime {
namespace {

// max(x, 0) and min(max(x, 0), 6); NaN stays NaN as in TF.
template <typename T, bool kSix>
void ReluTyped(const KernelContext& ctx, const Tensor& in, Tensor& out) {
  MapUnary<T>(ctx, in, out, 1, [](const auto& x) {
    using C = typename std::decay_t<decltype(x)>::Scalar;
    return x.unaryExpr([](C v) {
      if (!(v > C(0)) && v == v) return C(0);  // v == v is false only for NaN
      if constexpr (kSix) return v > C(6) ? C(6) : v;
      return v;
    });
  });
}

template <bool kSix>
absl::Status ReluKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  Tensor out(in.dtype(), in.dims());
  const bool ok =
      DispatchReal(in.dtype(), [&](auto tag) { ReluTyped<decltype(tag), kSix>(ctx, in, out); });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "floating-point and integer types");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// BiasAdd: out = value + bias broadcast along the channel dim (last for NHWC; dim 1 for
// NCHW). Runs as a broadcast Add with the bias viewed as [C, 1, ..., 1] for NCHW.
absl::Status BiasAddKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& value = ctx.input(0);
  const Tensor& bias = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(std::string format,
                         tf::GetStringAttrOr(ctx.node(), "data_format", "NHWC"));
  if (format != "NHWC" && format != "NCHW") {
    return KernelError(ctx, "data_format must be NHWC or NCHW, got '%s'", format);
  }
  if (value.rank() < 2) {
    return KernelError(ctx, "Input tensor must be at least 2D: value is %s", value.ShapeString());
  }
  if (bias.rank() != 1) {
    return KernelError(ctx, "Biases must be 1D: bias is %s", bias.ShapeString());
  }
  if (value.dtype() != bias.dtype()) {
    return KernelError(ctx, "value and bias have different dtypes: value is %s, bias is %s",
                       value.ShapeString(), bias.ShapeString());
  }
  const int channel_dim = format == "NHWC" ? value.rank() - 1 : 1;
  if (bias.dim(0) != value.dim(channel_dim)) {
    return KernelError(ctx,
                       "Must provide as many biases as the channel dimension (%d, %s) of "
                       "the input: bias is %s, value is %s",
                       channel_dim, format, bias.ShapeString(), value.ShapeString());
  }
  std::vector<int64_t> bias_dims(static_cast<size_t>(value.rank() - channel_dim), 1);
  bias_dims[0] = bias.dim(0);
  std::optional<BroadcastPlan> plan = MakeBroadcastPlan({value.dims(), bias_dims});
  if (!plan.has_value()) return Internal("BiasAdd: bias does not broadcast");
  Tensor out(value.dtype(), value.dims());
  auto add = [&](auto tag) {
    using T = decltype(tag);
    MapBinary<T, T>(ctx, *plan, value.data<T>(), bias.data<T>(), out.data<T>(),
                    [](auto x, auto y) { return static_cast<decltype(x)>(x + y); });
  };
  // TF registers BiasAdd for every number type, complex included.
  const bool ok = DispatchReal(value.dtype(), add) || DispatchComplex(value.dtype(), add);
  if (!ok) {
    return UnsupportedDType(ctx, value.dtype(), "floating-point, integer and complex types");
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Numerically stable softmax of one row: shift by the max before exponentiating.
template <typename T, bool kLog>
void SoftmaxRow(const T* in, T* out, int64_t n) {
  using C = ComputeType<T>;
  Eigen::Array<C, Eigen::Dynamic, 1> x = ConstArrayMap<T>(in, n).template cast<C>();
  const C shifted_max = x.maxCoeff();
  x -= shifted_max;
  if constexpr (kLog) {
    const C log_sum = std::log(x.exp().sum());
    ArrayMap<T>(out, n) = (x - log_sum).template cast<T>();
  } else {
    x = x.exp();
    ArrayMap<T>(out, n) = (x / x.sum()).template cast<T>();
  }
}

template <bool kLog>
absl::Status SoftmaxKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  if (in.rank() < 1) {
    return KernelError(ctx, "logits must have >= 1 dimension, got %s", in.ShapeString());
  }
  Tensor out(in.dtype(), in.dims());
  const int64_t n = in.dim(in.rank() - 1);
  const int64_t rows = n == 0 ? 0 : in.num_elements() / n;
  const bool ok = DispatchFloat(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = in.data<T>();
    T* dst = out.data<T>();
    ParallelFor(ctx, rows, 10 * n, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) SoftmaxRow<T, kLog>(src + r * n, dst + r * n, n);
    });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "float16, bfloat16, float32, float64");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- The activations Elu, Selu, Softsign, Softplus and LeakyRelu ----
TFJIT_SCALAR_FN(SoftsignFn, x / (C(1) + std::abs(x)))
TFJIT_SCALAR_FN(EluFn, x < C(0) ? std::expm1(x) : x)

// Selu with TF's constants: scale * (x < 0 ? alpha * expm1(x) : x).
struct SeluFn {
  template <typename C>
  C operator()(C x) const {
    constexpr double kAlpha = 1.6732632423543772848170429916717;
    constexpr double kScale = 1.0507009873554804934193349852946;
    return x < C(0) ? C(kScale * kAlpha) * std::expm1(x) : C(kScale) * x;
  }
};

// Softplus exactly as TF's functor: with th = log(epsilon of T) + 2, x > -th gives x, x < th
// gives exp(x), anything else log1p(exp(x)). T's epsilon, though 16-bit types compute in float.
template <typename T>
struct SoftplusFn {
  template <typename C>
  C operator()(C x) const {
    const C threshold = C(std::log(static_cast<double>(std::numeric_limits<T>::epsilon())) + 2);
    if (x > -threshold) return x;
    if (x < threshold) return std::exp(x);
    return std::log1p(std::exp(x));
  }
};

absl::Status SoftplusKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  Tensor out(in.dtype(), in.dims());
  const bool ok = DispatchFloat(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    MapUnary<T>(ctx, in, out, 20, [](const auto& x) { return x.unaryExpr(SoftplusFn<T>{}); });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// LeakyRelu: x > 0 ? x : x * alpha, alpha (float attr, default 0.2) converted to T's compute
// type first as TF's functor does.
absl::Status LeakyReluKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_ASSIGN_OR_RETURN(float alpha, tf::GetFloatAttrOr(ctx.node(), "alpha", 0.2f));
  const Tensor& in = ctx.input(0);
  Tensor out(in.dtype(), in.dims());
  const bool ok = DispatchFloat(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    MapUnary<T>(ctx, in, out, 2, [alpha](const auto& x) {
      using C = typename std::decay_t<decltype(x)>::Scalar;
      const C a = static_cast<C>(alpha);
      return x.unaryExpr([a](C v) { return v > C(0) ? v : v * a; });
    });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// L2Loss: sum(t^2) / 2 over every element, a scalar (accumulated in double).
absl::Status L2LossKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  Tensor out(in.dtype(), {});
  const bool ok = DispatchFloat(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    double sum = 0;
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      const double x = static_cast<double>(static_cast<ComputeType<T>>(in.data<T>()[i]));
      sum += x * x;
    }
    out.data<T>()[0] = static_cast<T>(static_cast<ComputeType<T>>(sum / 2));
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Pooling ----

using tf::SpatialDim;

// Runs `cell(n, oh, ow, h0, h1, w0, w1, out_offset)` for every output position, where
// [h0, h1) x [w0, w1) is the window clipped to the input.
template <typename Cell>
void ForEachWindow(const KernelContext& ctx, const Tensor& in, const SpatialDim& h,
                   const SpatialDim& w, Cell cell) {
  const int64_t rows = in.dim(0) * h.out;
  ParallelFor(ctx, rows, w.out * h.k * w.k * in.dim(3) + 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / h.out, oh = r % h.out;
      const int64_t hs = oh * h.stride - h.pad_before;
      const int64_t h0 = std::max<int64_t>(hs, 0), h1 = std::min(hs + h.k, in.dim(1));
      for (int64_t ow = 0; ow < w.out; ++ow) {
        const int64_t ws = ow * w.stride - w.pad_before;
        const int64_t w0 = std::max<int64_t>(ws, 0), w1 = std::min(ws + w.k, in.dim(2));
        cell(n, h0, h1, w0, w1, (r * w.out + ow) * in.dim(3));
      }
    }
  });
}

template <bool kMax>
absl::Status PoolKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  // TF's CPU pooling kernels reject NCHW, but XLA's accept it and a GPU-trained graph has it:
  // NCHW runs transposed to NHWC and back. Other layouts are INVALID_ARGUMENT, as in TF's CPU
  // kernels.
  TFJIT_ASSIGN_OR_RETURN(std::string format,
                         tf::GetStringAttrOr(ctx.node(), "data_format", "NHWC"));
  if (format != "NCHW") {
    TFJIT_RETURN_IF_ERROR(tf::CheckNhwc(ctx.node(), absl::StatusCode::kInvalidArgument));
  }
  TFJIT_ASSIGN_OR_RETURN(tf::WindowAttrs attrs, tf::ReadPoolAttrs(ctx.node(), ctx.input(0).dims(),
                                                                  tf::Layouts::kNhwcOrNchw));
  const Tensor in = attrs.nchw ? TransposeTensor(ctx, ctx.input(0), {0, 2, 3, 1}) : ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(
      tf::Window2D window,
      tf::ComputeWindow(ctx.node(), attrs, in.dim(1), in.dim(2), attrs.ksize[1], attrs.ksize[2]));
  const SpatialDim& h = window.h;
  const SpatialDim& w = window.w;
  Tensor out(in.dtype(), {in.dim(0), h.out, w.out, in.dim(3)});
  const int64_t depth = in.dim(3), width = in.dim(2), height = in.dim(1);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    ForEachWindow(
        ctx, in, h, w, [&](int64_t n, int64_t h0, int64_t h1, int64_t w0, int64_t w1, int64_t o) {
          for (int64_t c = 0; c < depth; ++c) {
            C acc =
                kMax ? (std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                             : std::numeric_limits<C>::lowest())
                     : C(0);
            for (int64_t i = h0; i < h1; ++i) {
              for (int64_t j = w0; j < w1; ++j) {
                const C v = static_cast<C>(x[((n * height + i) * width + j) * depth + c]);
                if constexpr (kMax) {
                  // NaN propagates, as HLO's maximum does.
                  if (v > acc || v != v) acc = v;
                  if (acc != acc) break;
                } else {
                  acc += v;
                }
              }
            }
            if constexpr (!kMax) {
              // The count of non-padding cells (TF's AvgPool); a window entirely in the padding
              // cannot happen with SAME/VALID.
              const int64_t count = (h1 - h0) * (w1 - w0);
              if (count > 0) acc /= static_cast<C>(count);
            }
            y[o + c] = static_cast<T>(acc);
          }
        });
  };
  const bool ok = kMax ? DispatchReal(in.dtype(), run) : DispatchFloat(in.dtype(), run);
  if (!ok) {
    return UnsupportedDType(ctx, in.dtype(),
                            kMax ? "floating-point and integer types" : "floating-point types");
  }
  ctx.set_output(0, attrs.nchw ? TransposeTensor(ctx, out, {0, 3, 1, 2}) : std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterNnKernels(KernelRegistry& registry) {
  registry.Register("Relu", &ReluKernel<false>);
  registry.Register("Relu6", &ReluKernel<true>);
  registry.Register("BiasAdd", &BiasAddKernel);
  registry.Register("BiasAddV1", &BiasAddKernel);
  registry.Register("Softmax", &SoftmaxKernel<false>);
  registry.Register("LogSoftmax", &SoftmaxKernel<true>);
  registry.Register("Elu", &UnaryKernel<FloatUnary<EluFn>>);
  registry.Register("Selu", &UnaryKernel<FloatUnary<SeluFn>>);
  registry.Register("Softsign", &UnaryKernel<FloatUnary<SoftsignFn>>);
  registry.Register("Softplus", &SoftplusKernel);
  registry.Register("LeakyRelu", &LeakyReluKernel);
  registry.Register("L2Loss", &L2LossKernel);
  registry.Register("MaxPool", &PoolKernel<true>);
  registry.Register("AvgPool", &PoolKernel<false>);
}

}  // namespace tfjit::runtime
