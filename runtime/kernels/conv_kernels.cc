// Convolution-family kernels (NHWC): Conv2D, DepthwiseConv2dNative, Conv2DBackpropInput, the
// fused contractions _FusedConv2D / FusedDepthwiseConv2dNative / _FusedMatMul (formats.md 3.5)
// and tfjs's Prelu.
//
// Conv2D and the transposed convolution gather one patch row per output pixel (im2col) into a
// small per-chunk buffer and multiply it with the filter matrix (Eigen GEMM). Chunks of output
// pixels run on the intra-op pool, and each chunk's fused epilogue runs while it is in cache.
// Depthwise convolution is a direct loop whose inner loop runs over contiguous channels.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "Eigen/Core"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/conv_attrs.h"
#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

template <typename T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;

using tf::FusedActivation;
using tf::FusedEpilogue;
using tf::SpatialDim;
using tf::Window2D;

// Runs typed(T{}, out) for float32/float64 (the types these kernels have) and sets `out` as
// output 0. With `skip_empty`, an empty output is set as it is, without the dtype check (the
// kernels compute nothing for it).
template <typename Typed>
absl::Status RunFloatOrDouble(KernelContext& ctx, DType dtype, Tensor out, bool skip_empty,
                              const Typed& typed) {
  absl::Status status = absl::OkStatus();
  if (!skip_empty || out.num_elements() > 0) {
    bool supported = false;
    DispatchFloat(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        supported = true;
        status = typed(T{}, out);
      }
    });
    if (!supported) return UnsupportedDType(ctx, dtype, "float32, float64");
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
        case FusedActivation::kNone: break;
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

// ---- Patch GEMM driver ----

// out[rows, n] (row-major, leading dim ldo) = patches * weights[k, n] (leading dim ldw), where
// fill(row, dst) writes the k-wide patch of `row`. Runs in chunks of rows on the pool; each
// chunk calls done(first_row, count) when its rows are final (the epilogue).
template <typename T, typename Fill, typename Done>
void PatchGemm(const KernelContext& ctx, int64_t rows, int64_t k, int64_t n, const T* weights,
               int64_t ldw, T* out, int64_t ldo, const Fill& fill, const Done& done) {
  // About 64K patch values per chunk: the buffer stays in L2 while the GEMM streams it.
  const int64_t chunk = std::max<int64_t>(8, 65536 / std::max<int64_t>(k, 1));
  const int64_t chunks = (rows + chunk - 1) / chunk;
  Eigen::Map<const RowMajor<T>, 0, Stride> w(weights, k, n, Stride(ldw));
  ParallelFor(ctx, chunks, chunk * k * n * 2 + 1, [&](int64_t begin, int64_t end) {
    RowMajor<T> patches;
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * chunk, count = std::min(chunk, rows - r0);
      patches.resize(count, k);
      for (int64_t r = 0; r < count; ++r) fill(r0 + r, patches.data() + r * k);
      Eigen::Map<RowMajor<T>, 0, Stride> o(out + r0 * ldo, count, n, Stride(ldo));
      if (k == 0) {
        o.setZero();
      } else {
        o.noalias() = patches * w;
      }
      done(r0, count);
    }
  });
}

// ---- Conv2D / _FusedConv2D ----

template <typename T>
absl::Status Conv2DTyped(KernelContext& ctx, const Window2D& window, const FusedEpilogue& spec,
                         Tensor& out) {
  const SpatialDim& h = window.h;
  const SpatialDim& w = window.w;
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  const int64_t batch = input.dim(0), in_c = input.dim(3);
  const int64_t group_c = filter.dim(2), out_c = filter.dim(3);
  const int64_t groups = in_c / group_c, group_out = out_c / groups;
  TFJIT_ASSIGN_OR_RETURN(Epilogue<T> epi, BindEpilogue<T>(ctx, spec, out_c, input.dtype()));
  const T* x = input.data<T>();
  const T* f = filter.data<T>();
  T* y = out.data<T>();
  const int64_t rows = batch * h.out * w.out;
  const int64_t k = h.k * w.k * group_c;
  auto done = [&](int64_t r0, int64_t count) {
    if (!epi.empty()) epi.Apply(y + r0 * out_c, count);
  };
  // A 1x1 stride-1 unpadded convolution is a plain matrix product of the pixels.
  const bool pointwise = h.k == 1 && w.k == 1 && h.stride == 1 && w.stride == 1 &&
                         h.out == h.in && w.out == w.in && groups == 1;
  for (int64_t g = 0; g < groups; ++g) {
    const bool last_group = g + 1 == groups;
    auto fill = [&](int64_t row, T* dst) {
      const int64_t ox = row % w.out, oy = (row / w.out) % h.out, n = row / (w.out * h.out);
      if (pointwise) {
        std::copy_n(x + row * in_c, in_c, dst);
        return;
      }
      for (int64_t kh = 0; kh < h.k; ++kh) {
        const int64_t iy = oy * h.stride + kh * h.dilation - h.pad_before;
        for (int64_t kw = 0; kw < w.k; ++kw, dst += group_c) {
          const int64_t ix = ox * w.stride + kw * w.dilation - w.pad_before;
          if (iy < 0 || iy >= h.in || ix < 0 || ix >= w.in) {
            std::fill_n(dst, group_c, T(0));
          } else {
            std::copy_n(x + ((n * h.in + iy) * w.in + ix) * in_c + g * group_c, group_c, dst);
          }
        }
      }
    };
    // The epilogue needs every group's channels: it runs with the last group.
    PatchGemm<T>(ctx, rows, k, group_out, f + g * group_out, out_c, y + g * group_out, out_c,
                 fill, [&](int64_t r0, int64_t count) {
                   if (last_group) done(r0, count);
                 });
  }
  return absl::OkStatus();
}

// ---- DepthwiseConv2dNative / FusedDepthwiseConv2dNative ----

template <typename T>
absl::Status DepthwiseTyped(KernelContext& ctx, const Window2D& window,
                            const FusedEpilogue& spec, Tensor& out) {
  const SpatialDim& h = window.h;
  const SpatialDim& w = window.w;
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  const int64_t in_c = input.dim(3), mult = filter.dim(3), out_c = in_c * mult;
  TFJIT_ASSIGN_OR_RETURN(Epilogue<T> epi, BindEpilogue<T>(ctx, spec, out_c, input.dtype()));
  const T* x = input.data<T>();
  const T* f = filter.data<T>();
  T* y = out.data<T>();
  const int64_t out_rows = input.dim(0) * h.out;  // one task = one output image row
  const int64_t cost = w.out * h.k * w.k * out_c * 2 + 1;
  ParallelFor(ctx, out_rows, cost, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / h.out, oy = r % h.out;
      T* row = y + r * w.out * out_c;
      std::fill_n(row, w.out * out_c, T(0));
      for (int64_t ox = 0; ox < w.out; ++ox) {
        T* acc = row + ox * out_c;
        for (int64_t kh = 0; kh < h.k; ++kh) {
          const int64_t iy = oy * h.stride + kh * h.dilation - h.pad_before;
          if (iy < 0 || iy >= h.in) continue;
          for (int64_t kw = 0; kw < w.k; ++kw) {
            const int64_t ix = ox * w.stride + kw * w.dilation - w.pad_before;
            if (ix < 0 || ix >= w.in) continue;
            const T* px = x + ((n * h.in + iy) * w.in + ix) * in_c;
            const T* pf = f + (kh * w.k + kw) * out_c;
            if (mult == 1) {
              for (int64_t c = 0; c < in_c; ++c) acc[c] += px[c] * pf[c];
            } else {
              for (int64_t c = 0; c < in_c; ++c) {
                for (int64_t m = 0; m < mult; ++m) acc[c * mult + m] += px[c] * pf[c * mult + m];
              }
            }
          }
        }
      }
      if (!epi.empty()) epi.Apply(row, w.out);
    }
  });
  return absl::OkStatus();
}

// ---- Entry point of the four convolutions ----

// Conv2D, _FusedConv2D, DepthwiseConv2dNative and FusedDepthwiseConv2dNative.
absl::Status ConvKernel(KernelContext& ctx) {
  const std::string& op = ctx.node().op();
  const bool depthwise = op == "DepthwiseConv2dNative" || op == "FusedDepthwiseConv2dNative";
  if (ctx.num_inputs() < 2) return KernelError(ctx, "needs input and filter");
  FusedEpilogue spec;
  if (op == "_FusedConv2D" || op == "FusedDepthwiseConv2dNative") {
    TFJIT_ASSIGN_OR_RETURN(spec, tf::ParseFusedOps(ctx.node()));
  } else {
    TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  }
  TFJIT_ASSIGN_OR_RETURN(tf::WindowAttrs attrs, tf::ReadConvAttrs(ctx.node()));
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  if (input.dtype() != filter.dtype()) {
    return KernelError(ctx, "input and filter dtypes differ: %s vs %s", input.ShapeString(),
                       filter.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(tf::ConvGeometry g, tf::Conv2DGeometry(ctx.node(), attrs, input.dims(),
                                                                filter.dims(), depthwise));
  Tensor out(input.dtype(), {input.dim(0), g.window.h.out, g.window.w.out, g.out_channels});
  return RunFloatOrDouble(ctx, input.dtype(), std::move(out), /*skip_empty=*/true,
                          [&](auto tag, Tensor& y) {
                            using T = decltype(tag);
                            return depthwise ? DepthwiseTyped<T>(ctx, g.window, spec, y)
                                             : Conv2DTyped<T>(ctx, g.window, spec, y);
                          });
}

// ---- Conv2DBackpropInput ----

// dx[n, iy, ix, c] = sum over (kh, kw, o) with iy = oy * stride + kh * dilation - pad_before
// of dy[n, oy, ox, o] * filter[kh, kw, c, o]. Each input pixel gathers its (kh, kw) taps of dy
// into one patch row, multiplied by the filter transposed to [(kh, kw, o), c]; rows are
// independent, so they parallelise without scatter conflicts.
template <typename T>
absl::Status BackpropInputTyped(KernelContext& ctx, const Window2D& window, Tensor& out) {
  const SpatialDim& h = window.h;
  const SpatialDim& w = window.w;
  const Tensor& filter = ctx.input(1);
  const Tensor& dy = ctx.input(2);
  const int64_t in_c = filter.dim(2), out_c = filter.dim(3);
  const int64_t taps = h.k * w.k;
  std::vector<T> wt(static_cast<size_t>(taps * out_c * in_c));
  const T* f = filter.data<T>();
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t c = 0; c < in_c; ++c) {
      for (int64_t o = 0; o < out_c; ++o) {
        wt[static_cast<size_t>((t * out_c + o) * in_c + c)] = f[(t * in_c + c) * out_c + o];
      }
    }
  }
  const T* g = dy.data<T>();
  auto fill = [&](int64_t row, T* dst) {
    const int64_t ix = row % w.in, iy = (row / w.in) % h.in, n = row / (w.in * h.in);
    for (int64_t kh = 0; kh < h.k; ++kh) {
      const int64_t ty = iy + h.pad_before - kh * h.dilation;
      const int64_t oy = ty / h.stride;
      const bool y_ok = ty >= 0 && ty % h.stride == 0 && oy < h.out;
      for (int64_t kw = 0; kw < w.k; ++kw, dst += out_c) {
        const int64_t tx = ix + w.pad_before - kw * w.dilation;
        const int64_t ox = tx / w.stride;
        if (y_ok && tx >= 0 && tx % w.stride == 0 && ox < w.out) {
          std::copy_n(g + ((n * h.out + oy) * w.out + ox) * out_c, out_c, dst);
        } else {
          std::fill_n(dst, out_c, T(0));
        }
      }
    }
  };
  PatchGemm<T>(ctx, out.num_elements() / in_c, taps * out_c, in_c, wt.data(), in_c,
               out.data<T>(), in_c, fill, [](int64_t, int64_t) {});
  return absl::OkStatus();
}

absl::Status BackpropInputKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  TFJIT_ASSIGN_OR_RETURN(tf::WindowAttrs attrs, tf::ReadConvAttrs(ctx.node()));
  std::vector<int64_t> sizes;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(0), "input_sizes", &sizes));
  const Tensor& filter = ctx.input(1);
  const Tensor& dy = ctx.input(2);
  if (filter.dtype() != dy.dtype()) {
    return KernelError(ctx, "filter and out_backprop dtypes differ: %s vs %s",
                       filter.ShapeString(), dy.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(Window2D window, tf::BackpropInputGeometry(ctx.node(), attrs, sizes,
                                                                    filter.dims(), dy.dims()));
  return RunFloatOrDouble(ctx, dy.dtype(), Tensor(dy.dtype(), sizes), /*skip_empty=*/true,
                          [&](auto tag, Tensor& out) {
                            return BackpropInputTyped<decltype(tag)>(ctx, window, out);
                          });
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
    return KernelError(ctx, "a and b must be matrices of one dtype, got %s and %s",
                       a.ShapeString(), b.ShapeString());
  }
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t kb = tb ? b.dim(1) : b.dim(0), n = tb ? b.dim(0) : b.dim(1);
  if (k != kb) {
    return KernelError(ctx,
                       "Matrix size-incompatible: In[0]: %s, In[1]: %s (transpose_a=%d, "
                       "transpose_b=%d)",
                       a.ShapeString(), b.ShapeString(), ta, tb);
  }
  return RunFloatOrDouble(ctx, a.dtype(), Tensor(a.dtype(), {m, n}), /*skip_empty=*/false,
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
