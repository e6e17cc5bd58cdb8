// Convolution-family kernels (NHWC; the unfused ones also NCHW, transposed to NHWC and back):
// Conv2D, DepthwiseConv2dNative, Conv2DBackpropInput, the fused contractions _FusedConv2D /
// FusedDepthwiseConv2dNative / _FusedMatMul (formats.md 3.5) and tfjs's Prelu.
//
// The convolution arithmetic is core/conv2d.h, the same code the CPU backend's compiled
// convolutions call, so the fallback and compiled paths cannot drift apart: these kernels turn
// TF attrs (frontend/conv_attrs) into its HLO-style geometry, run it on the intra-op pool and
// apply the fused epilogue to each finished chunk of output pixels while it is in cache.
// Conv2DBackpropInput is the transposed convolution: the forward filter flipped and transposed,
// run over out_backprop dilated by the stride (lhs dilation).
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "Eigen/Core"
#include "core/conv2d.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/conv_attrs.h"
#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

template <typename T>
using RowMajor = conv::RowMajorMatrix<T>;

using tf::FusedActivation;
using tf::FusedEpilogue;
using tf::SpatialDim;
using tf::Window2D;

// Runs typed(T{}, out) for float32/float64 (the types these kernels have; int64 too for the
// convolutions' int32, widened by WidenedConv) and sets `out` as output 0. With `skip_empty`, an
// empty output is set as it is, without the dtype check (the kernels compute nothing for it).
template <typename Typed>
absl::Status RunFloatOrDouble(KernelContext& ctx, DType dtype, Tensor out, bool skip_empty,
                              const Typed& typed) {
  absl::Status status = absl::OkStatus();
  if (!skip_empty || out.num_elements() > 0) {
    bool supported = false;
    DispatchFloatInt(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, int64_t>) {
        supported = true;
        status = typed(T{}, out);
      }
    });
    if (!supported) return UnsupportedDType(ctx, dtype, "float16, bfloat16, float32, float64");
  }
  TFJIT_RETURN_IF_ERROR(status);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Fused epilogues (parsed by tf::ParseFusedOps) ----

// The epilogue bound to its argument tensors, applied to rows of `channels` values.
template <typename T>
struct Epilogue {
  FusedEpilogue spec;
  int64_t channels = 0;
  const T* bias = nullptr;
  std::vector<T> bn_mean, bn_scale, bn_offset;  // y = (y - mean) * scale + offset
  const T* alpha = nullptr;
  bool alpha_scalar = false;

  bool empty() const { return spec.empty(); }

  void Apply(T* y, int64_t rows) const {
    const int64_t c_n = channels;
    const T six = T(6), zero = T(0), leaky = static_cast<T>(spec.leakyrelu_alpha);
    for (int64_t r = 0; r < rows; ++r) {
      T* row = y + r * c_n;
      if (bias != nullptr) {
        for (int64_t c = 0; c < c_n; ++c) row[c] += bias[c];
      }
      if (spec.batch_norm) {
        for (int64_t c = 0; c < c_n; ++c) {
          row[c] = (row[c] - bn_mean[static_cast<size_t>(c)]) * bn_scale[static_cast<size_t>(c)] +
                   bn_offset[static_cast<size_t>(c)];
        }
      }
      switch (spec.activation) {
        case FusedActivation::kNone:
          break;
        case FusedActivation::kRelu:
          for (int64_t c = 0; c < c_n; ++c) row[c] = row[c] < zero ? zero : row[c];
          break;
        case FusedActivation::kRelu6:
          for (int64_t c = 0; c < c_n; ++c) {
            row[c] = row[c] < zero ? zero : (row[c] > six ? six : row[c]);
          }
          break;
        case FusedActivation::kElu:
          for (int64_t c = 0; c < c_n; ++c) row[c] = row[c] < zero ? std::expm1(row[c]) : row[c];
          break;
        case FusedActivation::kLeakyRelu:
          for (int64_t c = 0; c < c_n; ++c) row[c] = row[c] > zero ? row[c] : row[c] * leaky;
          break;
        case FusedActivation::kSigmoid:
          for (int64_t c = 0; c < c_n; ++c) row[c] = T(1) / (T(1) + std::exp(-row[c]));
          break;
        case FusedActivation::kTanh:
          for (int64_t c = 0; c < c_n; ++c) row[c] = std::tanh(row[c]);
          break;
        case FusedActivation::kPrelu:
          for (int64_t c = 0; c < c_n; ++c) {
            const T a = alpha[alpha_scalar ? 0 : c];
            row[c] = row[c] >= zero ? row[c] : a * row[c];
          }
          break;
      }
    }
  }
};

// Binds the spec's args (inputs 2..) after checking their shapes against `channels`.
template <typename T>
absl::StatusOr<Epilogue<T>> BindEpilogue(const KernelContext& ctx, const FusedEpilogue& spec,
                                         int64_t channels, DType dtype) {
  Epilogue<T> e;
  e.spec = spec;
  e.channels = channels;
  for (int i = 2; i < 2 + spec.num_args; ++i) {
    if (ctx.input(i).dtype() != dtype) {
      return KernelError(ctx, "fused argument %d is %s but the input is %s", i - 2,
                         ctx.input(i).ShapeString(), DTypeName(dtype));
    }
  }
  int next = 2;
  auto vector_arg = [&](const char* what) -> absl::StatusOr<const T*> {
    const Tensor& t = ctx.input(next++);
    if (t.rank() != 1 || t.dim(0) != channels) {
      return KernelError(ctx, "%s must be a vector of the %d output channels, got %s", what,
                         channels, t.ShapeString());
    }
    return t.data<T>();
  };
  if (spec.bias) {
    TFJIT_ASSIGN_OR_RETURN(e.bias, vector_arg("bias"));
  }
  if (spec.batch_norm) {
    TFJIT_ASSIGN_OR_RETURN(const T* scale, vector_arg("batch-norm scale"));
    TFJIT_ASSIGN_OR_RETURN(const T* offset, vector_arg("batch-norm offset"));
    TFJIT_ASSIGN_OR_RETURN(const T* mean, vector_arg("batch-norm mean"));
    TFJIT_ASSIGN_OR_RETURN(const T* variance, vector_arg("batch-norm variance"));
    for (int64_t c = 0; c < channels; ++c) {
      e.bn_mean.push_back(mean[c]);
      e.bn_offset.push_back(offset[c]);
      e.bn_scale.push_back(scale[c] / std::sqrt(variance[c] + static_cast<T>(spec.epsilon)));
    }
  }
  if (spec.activation == FusedActivation::kPrelu) {
    const Tensor& a = ctx.input(next++);
    TFJIT_ASSIGN_OR_RETURN(e.alpha_scalar, tf::PreluAlphaIsScalar(ctx.node(), a.dims(), channels));
    e.alpha = a.data<T>();
  }
  return e;
}

// ---- core/conv2d.h on the kernel context ----

// The intra-op pool of `ctx` (or inline) as core/conv2d.h's parallel-for.
conv::ParallelForFn PoolFor(const KernelContext& ctx) {
  return [&ctx](int64_t n, int64_t cost_per_unit, const std::function<void(int64_t, int64_t)>& fn) {
    ParallelFor(ctx, n, cost_per_unit, fn);
  };
}

// One spatial dim in core/conv2d.h's geometry (pad = leading pad, may be negative).
struct ConvDim {
  int64_t in, k, out, stride, pad, lhs_dilate, rhs_dilate;
};
// A forward TF window dim: no lhs dilation, TF's dilation is the rhs (filter) dilation.
ConvDim Forward(const SpatialDim& d) {
  return {d.in, d.k, d.out, d.stride, d.pad_before, 1, d.dilation};
}

conv::Conv2DParams MakeParams(int64_t batch, int64_t in_c, int64_t out_c, int64_t groups,
                              const ConvDim& h, const ConvDim& w) {
  conv::Conv2DParams p;
  p.batch = batch;
  p.in_c = in_c;
  p.out_c = out_c;
  p.groups = groups;
  p.in_h = h.in;
  p.k_h = h.k;
  p.out_h = h.out;
  p.stride_h = h.stride;
  p.pad_top = h.pad;
  p.lhs_dilate_h = h.lhs_dilate;
  p.rhs_dilate_h = h.rhs_dilate;
  p.in_w = w.in;
  p.k_w = w.k;
  p.out_w = w.out;
  p.stride_w = w.stride;
  p.pad_left = w.pad;
  p.lhs_dilate_w = w.lhs_dilate;
  p.rhs_dilate_w = w.rhs_dilate;
  return p;
}

// ---- Conv2D / _FusedConv2D / DepthwiseConv2dNative / FusedDepthwiseConv2dNative ----

// A depthwise filter [h, w, in_c, multiplier] is, in memory, the grouped filter
// [h, w, 1, in_c * multiplier] with groups = in_c, which core/conv2d.h runs directly.
template <typename T>
absl::Status ConvTyped(KernelContext& ctx, const Tensor& input, const tf::ConvGeometry& g,
                       const FusedEpilogue& spec, Tensor& out) {
  const int64_t out_c = g.out_channels;
  TFJIT_ASSIGN_OR_RETURN(Epilogue<T> epi, BindEpilogue<T>(ctx, spec, out_c, input.dtype()));
  const conv::Conv2DParams p = MakeParams(input.dim(0), input.dim(3), out_c, g.groups,
                                          Forward(g.window.h), Forward(g.window.w));
  T* y = out.data<T>();
  conv::Conv2D<T>(p, input.data<T>(), ctx.input(1).data<T>(), y, PoolFor(ctx),
                  [&](int64_t r0, int64_t count) {
                    if (!epi.empty()) epi.Apply(y + r0 * out_c, count);
                  });
  return absl::OkStatus();
}

// ---- Entry point of the four convolutions ----

// Conv2D, _FusedConv2D, DepthwiseConv2dNative and FusedDepthwiseConv2dNative.
// The dtypes TF's CPU convolutions have beyond float32/float64 (float16, bfloat16; int32 for
// Conv2D and its input gradient) run `kernel` widened (kernel_util.h, RunWidened); nullopt for
// the others, which the kernel runs itself.
std::optional<absl::Status> WidenedConv(KernelContext& ctx, KernelFn kernel, DType dtype,
                                        bool with_int32) {
  if (Is16BitFloat(dtype)) return RunWidened(ctx, kernel, dtype, DType::kFloat32);
  if (with_int32 && dtype == DType::kInt32) {
    return RunWidened(ctx, kernel, DType::kInt32, DType::kInt64);
  }
  return std::nullopt;
}

absl::Status ConvKernel(KernelContext& ctx) {
  const std::string& op = ctx.node().op();
  if (ctx.num_inputs() >= 1) {
    const bool conv2d = op == "Conv2D" || op == "_FusedConv2D";
    if (auto widened = WidenedConv(ctx, &ConvKernel, ctx.input(0).dtype(), conv2d)) {
      return *widened;
    }
  }
  const bool depthwise = op == "DepthwiseConv2dNative" || op == "FusedDepthwiseConv2dNative";
  if (ctx.num_inputs() < 2) return KernelError(ctx, "needs input and filter");
  const bool fused = op == "_FusedConv2D" || op == "FusedDepthwiseConv2dNative";
  FusedEpilogue spec;
  if (fused) {
    TFJIT_ASSIGN_OR_RETURN(spec, tf::ParseFusedOps(ctx.node()));
  } else {
    TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  }
  // The unfused convolutions also run NCHW (a GPU-trained graph's layout), transposed to NHWC
  // around the NHWC arithmetic as XLA's CPU path effectively does.
  TFJIT_ASSIGN_OR_RETURN(
      tf::WindowAttrs attrs,
      tf::ReadConvAttrs(ctx.node(), fused ? tf::Layouts::kNhwc : tf::Layouts::kNhwcOrNchw));
  const Tensor& filter = ctx.input(1);
  if (ctx.input(0).dtype() != filter.dtype()) {
    return KernelError(ctx, "input and filter dtypes differ: %s vs %s", ctx.input(0).ShapeString(),
                       filter.ShapeString());
  }
  if (attrs.nchw && ctx.input(0).rank() != 4) {
    return KernelError(ctx, "input must be 4-D (NCHW), got %s", ctx.input(0).ShapeString());
  }
  const Tensor input = attrs.nchw ? TransposeTensor(ctx, ctx.input(0), {0, 2, 3, 1}) : ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(tf::ConvGeometry g, tf::Conv2DGeometry(ctx.node(), attrs, input.dims(),
                                                                filter.dims(), depthwise));
  Tensor out(input.dtype(), {input.dim(0), g.window.h.out, g.window.w.out, g.out_channels});
  TFJIT_RETURN_IF_ERROR(RunFloatOrDouble(ctx, input.dtype(), std::move(out), /*skip_empty=*/true,
                                         [&](auto tag, Tensor& y) {
                                           using T = decltype(tag);
                                           return ConvTyped<T>(ctx, input, g, spec, y);
                                         }));
  if (attrs.nchw) ctx.set_output(0, TransposeTensor(ctx, ctx.outputs()[0], {0, 3, 1, 2}));
  return absl::OkStatus();
}

// ---- Conv2DBackpropInput ----

// dx[n, iy, ix, c] = sum over (kh, kw, o) with iy = oy * stride + kh * dilation - pad_before
// of dy[n, oy, ox, o] * filter[kh, kw, c, o]: the convolution of dy dilated by the stride
// (lhs dilation) with the filter flipped in space and transposed to [kh, kw, o, c], padded by
// effective_k - 1 - pad_before (negative when the forward padding exceeds the window; the
// header crops then). Each input pixel gathers its own taps, so rows parallelise without
// scatter conflicts; a 1x1 stride-1 filter is the header's plain GEMM of dy.
template <typename T>
absl::Status BackpropInputTyped(KernelContext& ctx, const Window2D& window, const Tensor& dy,
                                Tensor& out) {
  const SpatialDim& h = window.h;
  const SpatialDim& w = window.w;
  const Tensor& filter = ctx.input(1);
  const int64_t in_c = filter.dim(2), out_c = filter.dim(3);
  std::vector<T> flipped(static_cast<size_t>(h.k * w.k * out_c * in_c));
  const T* f = filter.data<T>();
  for (int64_t kh = 0; kh < h.k; ++kh) {
    for (int64_t kw = 0; kw < w.k; ++kw) {
      const T* src = f + ((h.k - 1 - kh) * w.k + (w.k - 1 - kw)) * in_c * out_c;
      T* dst = flipped.data() + (kh * w.k + kw) * out_c * in_c;
      for (int64_t c = 0; c < in_c; ++c) {
        for (int64_t o = 0; o < out_c; ++o) dst[o * in_c + c] = src[c * out_c + o];
      }
    }
  }
  auto transposed = [](const SpatialDim& d) {
    return ConvDim{d.out, d.k, d.in, 1, d.effective_k() - 1 - d.pad_before, d.stride, d.dilation};
  };
  const conv::Conv2DParams p =
      MakeParams(dy.dim(0), out_c, in_c, /*groups=*/1, transposed(h), transposed(w));
  conv::Conv2D<T>(p, dy.data<T>(), flipped.data(), out.data<T>(), PoolFor(ctx),
                  [](int64_t, int64_t) {});
  return absl::OkStatus();
}

absl::Status BackpropInputKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  if (auto widened = WidenedConv(ctx, &BackpropInputKernel, ctx.input(2).dtype(), true)) {
    return *widened;
  }
  TFJIT_ASSIGN_OR_RETURN(tf::WindowAttrs attrs,
                         tf::ReadConvAttrs(ctx.node(), tf::Layouts::kNhwcOrNchw));
  std::vector<int64_t> sizes;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(0), "input_sizes", &sizes));
  const Tensor& filter = ctx.input(1);
  if (filter.dtype() != ctx.input(2).dtype()) {
    return KernelError(ctx, "filter and out_backprop dtypes differ: %s vs %s", filter.ShapeString(),
                       ctx.input(2).ShapeString());
  }
  // NCHW: input_sizes and out_backprop in NHWC order, the result transposed back.
  if (attrs.nchw && (sizes.size() != 4 || ctx.input(2).rank() != 4)) {
    return KernelError(ctx,
                       "input_sizes must have 4 entries and out_backprop be 4-D (NCHW), "
                       "got %s and %s",
                       DimsString(sizes), ctx.input(2).ShapeString());
  }
  if (attrs.nchw) sizes = tf::NchwToNhwc(sizes);
  const Tensor dy = attrs.nchw ? TransposeTensor(ctx, ctx.input(2), {0, 2, 3, 1}) : ctx.input(2);
  TFJIT_ASSIGN_OR_RETURN(Window2D window, tf::BackpropInputGeometry(ctx.node(), attrs, sizes,
                                                                    filter.dims(), dy.dims()));
  TFJIT_RETURN_IF_ERROR(RunFloatOrDouble(
      ctx, dy.dtype(), Tensor(dy.dtype(), sizes), /*skip_empty=*/true, [&](auto tag, Tensor& out) {
        return BackpropInputTyped<decltype(tag)>(ctx, window, dy, out);
      }));
  if (attrs.nchw) ctx.set_output(0, TransposeTensor(ctx, ctx.outputs()[0], {0, 3, 1, 2}));
  return absl::OkStatus();
}

// ---- _FusedMatMul ----

absl::Status FusedMatMulKernel(KernelContext& ctx) {
  if (ctx.num_inputs() < 2) return KernelError(ctx, "needs a and b");
  TFJIT_ASSIGN_OR_RETURN(FusedEpilogue spec, tf::ParseFusedOps(ctx.node()));
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(ctx.node(), "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(ctx.node(), "transpose_b", false));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() != 2 || b.rank() != 2 || a.dtype() != b.dtype()) {
    return KernelError(ctx, "a and b must be matrices of one dtype, got %s and %s", a.ShapeString(),
                       b.ShapeString());
  }
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t kb = tb ? b.dim(1) : b.dim(0), n = tb ? b.dim(0) : b.dim(1);
  if (k != kb) {
    return KernelError(ctx,
                       "Matrix size-incompatible: In[0]: %s, In[1]: %s (transpose_a=%d, "
                       "transpose_b=%d)",
                       a.ShapeString(), b.ShapeString(), ta, tb);
  }
  return RunFloatOrDouble(
      ctx, a.dtype(), Tensor(a.dtype(), {m, n}), /*skip_empty=*/false,
      [&](auto tag, Tensor& out) -> absl::Status {
        using T = decltype(tag);
        TFJIT_ASSIGN_OR_RETURN(Epilogue<T> epi, BindEpilogue<T>(ctx, spec, n, a.dtype()));
        Eigen::Map<const RowMajor<T>> am(a.data<T>(), a.dim(0), a.dim(1));
        Eigen::Map<const RowMajor<T>> bm(b.data<T>(), b.dim(0), b.dim(1));
        const RowMajor<T> bt = tb ? RowMajor<T>(bm.transpose()) : RowMajor<T>(bm);
        const int64_t chunk = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n));
        const int64_t chunks = (m + chunk - 1) / chunk;
        ParallelFor(ctx, chunks, chunk * k * n * 2 + 1, [&](int64_t begin, int64_t end) {
          for (int64_t c = begin; c < end; ++c) {
            const int64_t r0 = c * chunk, count = std::min(chunk, m - r0);
            Eigen::Map<RowMajor<T>> o(out.data<T>() + r0 * n, count, n);
            if (k == 0) {
              o.setZero();
            } else if (ta) {
              o.noalias() = am.transpose().middleRows(r0, count) * bt;
            } else {
              o.noalias() = am.middleRows(r0, count) * bt;
            }
            if (!epi.empty()) epi.Apply(o.data(), count);
          }
        });
        return absl::OkStatus();
      });
}

// ---- Prelu ----

// y = x >= 0 ? x : alpha * x, alpha broadcast against x (NumPy rules), as tfjs's prelu.
absl::Status PreluKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& alpha = ctx.input(1);
  if (x.dtype() != alpha.dtype()) {
    return KernelError(ctx, "x and alpha dtypes differ: %s vs %s", x.ShapeString(),
                       alpha.ShapeString());
  }
  std::optional<BroadcastPlan> plan = MakeBroadcastPlan({x.dims(), alpha.dims()});
  if (!plan.has_value()) {
    return KernelError(ctx, "x %s and alpha %s are not broadcast-compatible", x.ShapeString(),
                       alpha.ShapeString());
  }
  Tensor out(x.dtype(), plan->out_dims);
  const bool ok = DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* px = x.data<T>();
    const T* pa = alpha.data<T>();
    T* py = out.data<T>();
    ParallelFor(ctx, plan->num_elements, 4, [&](int64_t begin, int64_t end) {
      ForEachRun(*plan, begin, end, [&](int64_t i, const int64_t* off, int64_t len) {
        const int64_t sx = plan->inner_stride(0), sa = plan->inner_stride(1);
        for (int64_t j = 0; j < len; ++j) {
          const C v = static_cast<C>(px[off[0] + j * sx]);
          const C a = static_cast<C>(pa[off[1] + j * sa]);
          py[i + j] = static_cast<T>(v >= C(0) ? v : a * v);
        }
      });
    });
  });
  if (!ok) return UnsupportedDType(ctx, x.dtype(), "float16, bfloat16, float32, float64");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterConvKernels(KernelRegistry& registry) {
  registry.Register("Conv2D", &ConvKernel);
  registry.Register("_FusedConv2D", &ConvKernel);
  registry.Register("DepthwiseConv2dNative", &ConvKernel);
  registry.Register("FusedDepthwiseConv2dNative", &ConvKernel);
  registry.Register("Conv2DBackpropInput", &BackpropInputKernel);
  registry.Register("_FusedMatMul", &FusedMatMulKernel);
  registry.Register("Prelu", &PreluKernel);
}

}  // namespace tfjit::runtime
