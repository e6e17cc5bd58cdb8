// Fallback kernels of the gradients ops (docs/DESIGN.md, "Op families"), with TF's CPU
// semantics, dtypes and error messages: the activation gradients (relu_op_functor.h,
// softplus_op.h, softsign_op.h), the (y, dy) gradients of unary math ops (cwise_ops.h),
// BiasAddGrad, BroadcastGradientArgs (bcast.h), the softmax cross-entropy losses
// (xent_op.cc, sparse_xent_op.cc), DynamicStitch, ConcatOffset, StridedSliceGrad,
// and MirrorPadGrad. The windowed ops' gradients (pooling, convolution, resize, batch norm,
// LRN, Dilation2D) are in gradients_window_kernels.cc.
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

constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluScaleAlpha = 1.7580993408473768599402175208123;

// ---- Elementwise gradients: out[i] = fn(a[i], b[i]) in ComputeType. ----

// The activation gradients take (gradients, features/outputs) of one shape (TF's
// ReluHelpers::ValidateSameSize); the (y, dy) gradients of math ops only need equal element
// counts (TF's BinaryOp without broadcasting), and take y's shape.
enum class GradShape { kSameShape, kSameCount };

template <typename T, typename Fn>
void MapGrad(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out, Fn fn) {
  using C = ComputeType<T>;
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  ParallelFor(ctx, out.num_elements(), 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) po[i] = static_cast<T>(fn(C(pa[i]), C(pb[i])));
  });
}

// Runs `make_fn(T{})` (which returns the scalar functor for T) over inputs 0 and 1; with
// kComplex, complex64/complex128 too (TF registers the math gradients for them).
template <TypeSet S, GradShape kShape, bool kComplex = false, typename MakeFn>
absl::Status GradKernelImpl(KernelContext& ctx, MakeFn make_fn) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) {
    return KernelError(ctx, "inputs have different dtypes: %s and %s", a.ShapeString(),
                       b.ShapeString());
  }
  if (kShape == GradShape::kSameShape && a.dims() != b.dims()) {
    return KernelError(
        ctx, "g and a must be the same size: gradients is %s, %s is %s", a.ShapeString(),
        ctx.node().op() == "EluGrad" || ctx.node().op() == "SeluGrad" ? "outputs" : "features",
        b.ShapeString());
  }
  if (kShape == GradShape::kSameCount && a.num_elements() != b.num_elements()) {
    return KernelError(ctx,
                       "The two arguments to a cwise op must have same number of elements, "
                       "got %d and %d (y is %s, dy is %s)",
                       a.num_elements(), b.num_elements(), a.ShapeString(), b.ShapeString());
  }
  Tensor out(a.dtype(), a.dims());
  const auto map = [&](auto tag) {
    using T = decltype(tag);
    MapGrad<T>(ctx, a, b, out, make_fn(tag));
  };
  bool ok = DispatchSet<S>(a.dtype(), map);
  if constexpr (kComplex) ok = ok || DispatchComplex(a.dtype(), map);
  if (!ok) {
    return UnsupportedDType(ctx, a.dtype(),
                            kComplex ? absl::StrCat(TypeSetName(S), ", complex64, complex128")
                                     : std::string(TypeSetName(S)));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// The complex conjugate (TF's complex math gradients use it); the value itself for reals.
template <typename C>
C Conjugate(C v) {
  if constexpr (IsComplexType<C>) {
    return std::conj(v);
  } else {
    return v;
  }
}

// A constant of the op's dtype T (rounded to T first, as TF's functors hold it), in C.
template <typename T, typename C>
C InT(double v) {
  return static_cast<C>(static_cast<T>(v));
}

// (gradients, features) -> gradients * (features > 0): a multiply, so a NaN or infinite
// gradient at a non-positive feature gives NaN as in TF's functor.
absl::Status ReluGradKernel(KernelContext& ctx) {
  return GradKernelImpl<TypeSet::kReal, GradShape::kSameShape>(ctx, [](auto) {
    return [](auto g, auto f) {
      using C = decltype(g);
      return static_cast<C>(g * static_cast<C>(f > C(0) ? 1 : 0));
    };
  });
}
// gradients * (0 < features < 6).
absl::Status Relu6GradKernel(KernelContext& ctx) {
  return GradKernelImpl<TypeSet::kReal, GradShape::kSameShape>(ctx, [](auto) {
    return [](auto g, auto f) {
      using C = decltype(g);
      return static_cast<C>(g * static_cast<C>(f > C(0) && f < C(6) ? 1 : 0));
    };
  });
}
// outputs < 0 ? (outputs + 1) * gradients : gradients.
absl::Status EluGradKernel(KernelContext& ctx) {
  return GradKernelImpl<TypeSet::kFloat, GradShape::kSameShape>(ctx, [](auto) {
    return [](auto g, auto y) {
      using C = decltype(g);
      return y < C(0) ? (y + C(1)) * g : g;
    };
  });
}
// outputs < 0 ? gradients * (outputs + scale * alpha) : gradients * scale.
absl::Status SeluGradKernel(KernelContext& ctx) {
  return GradKernelImpl<TypeSet::kFloat, GradShape::kSameShape>(ctx, [](auto tag) {
    using T = decltype(tag);
    return [](auto g, auto y) {
      using C = decltype(g);
      return y < C(0) ? g * (y + InT<T, C>(kSeluScaleAlpha)) : g * InT<T, C>(kSeluScale);
    };
  });
}
// features > 0 ? gradients : gradients * alpha, alpha rounded to T.
absl::Status LeakyReluGradKernel(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(float alpha, tf::GetFloatAttrOr(ctx.node(), "alpha", 0.2f));
  return GradKernelImpl<TypeSet::kFloat, GradShape::kSameShape>(ctx, [alpha](auto tag) {
    using T = decltype(tag);
    return [a = static_cast<double>(alpha)](auto g, auto f) {
      using C = decltype(g);
      return f > C(0) ? g : g * InT<T, C>(a);
    };
  });
}
// gradients / (exp(-features) + 1).
absl::Status SoftplusGradKernel(KernelContext& ctx) {
  return GradKernelImpl<TypeSet::kFloat, GradShape::kSameShape>(ctx, [](auto) {
    return [](auto g, auto f) {
      using C = decltype(g);
      return g / (std::exp(-f) + C(1));
    };
  });
}
// gradients / (1 + |features|)^2.
absl::Status SoftsignGradKernel(KernelContext& ctx) {
  return GradKernelImpl<TypeSet::kFloat, GradShape::kSameShape>(ctx, [](auto) {
    return [](auto g, auto f) {
      using C = decltype(g);
      const C d = C(1) + std::abs(f);
      return g / (d * d);
    };
  });
}
// dy * y * (1 - y).
absl::Status SigmoidGradKernel(KernelContext& ctx) {
  return GradKernelImpl<TypeSet::kFloat, GradShape::kSameCount, true>(ctx, [](auto) {
    return [](auto y, auto dy) {
      using C = decltype(y);
      return dy * y * (C(1) - y);
    };
  });
}
// dy * (1 - y * y).
absl::Status TanhGradKernel(KernelContext& ctx) {
  return GradKernelImpl<TypeSet::kFloat, GradShape::kSameCount, true>(ctx, [](auto) {
    return [](auto y, auto dy) {
      using C = decltype(y);
      return dy * (C(1) - y * y);
    };
  });
}
// 0.5 * dy / conj(y) (conj: complex values' gradients, as TF's functors).
absl::Status SqrtGradKernel(KernelContext& ctx) {
  return GradKernelImpl<TypeSet::kFloat, GradShape::kSameCount, true>(ctx, [](auto) {
    return [](auto y, auto dy) {
      using C = decltype(y);
      return C(0.5) * dy / Conjugate(y);
    };
  });
}
// -0.5 * conj(y)^3 * dy.
absl::Status RsqrtGradKernel(KernelContext& ctx) {
  return GradKernelImpl<TypeSet::kFloat, GradShape::kSameCount, true>(ctx, [](auto) {
    return [](auto y, auto dy) {
      using C = decltype(y);
      const C yc = Conjugate(y);
      return C(-0.5) * (yc * yc * yc) * dy;
    };
  });
}
// -dy * conj(y)^2 (ReciprocalGrad and its older name InvGrad).
absl::Status ReciprocalGradKernel(KernelContext& ctx) {
  return GradKernelImpl<TypeSet::kFloat, GradShape::kSameCount, true>(ctx, [](auto) {
    return [](auto y, auto dy) {
      const auto yc = Conjugate(y);
      return -dy * yc * yc;
    };
  });
}

// ---- BiasAddGrad ----

// The sum of out_backprop over every dim but the channel dim (last for NHWC, 1 for NCHW).
// 16-bit floats accumulate in float; integers wrap.
absl::Status BiasAddGradKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(std::string format,
                         tf::GetStringAttrOr(ctx.node(), "data_format", "NHWC"));
  if (format != "NHWC" && format != "NCHW") {
    return KernelError(ctx, "Invalid data format: data_format must be NHWC or NCHW, got '%s'",
                       format);
  }
  if (in.rank() < 2) {
    return KernelError(ctx, "Input tensor must be at least 2D: out_backprop is %s",
                       in.ShapeString());
  }
  const int channel_dim = format == "NHWC" ? in.rank() - 1 : 1;
  const int64_t channels = in.dim(channel_dim);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < channel_dim; ++d) outer *= in.dim(d);
  for (int d = channel_dim + 1; d < in.rank(); ++d) inner *= in.dim(d);
  Tensor out(in.dtype(), {channels});
  const auto sum = [&](auto tag) {
    using T = decltype(tag);
    using Acc = std::conditional_t<kIsInt<T>, uint64_t, ComputeType<T>>;
    const T* src = in.data<T>();
    T* dst = out.data<T>();
    ParallelFor(ctx, channels, std::max<int64_t>(1, outer * inner), [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        Acc acc = Acc(0);
        for (int64_t o = 0; o < outer; ++o) {
          const T* row = src + (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) acc += static_cast<Acc>(row[i]);
        }
        dst[c] = static_cast<T>(acc);
      }
    });
  };
  // TF registers BiasAddGrad for every number type, complex included.
  const bool ok = DispatchReal(in.dtype(), sum) || DispatchComplex(in.dtype(), sum);
  if (!ok) {
    return UnsupportedDType(ctx, in.dtype(),
                            absl::StrCat(TypeSetName(TypeSet::kReal), ", complex64, complex128"));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- BroadcastGradientArgs ----

// The reduction axes of each operand under TF's BCast: with equal shapes none; otherwise,
// right-aligned against the longer shape, every axis where the operand's (1-extended) dim is
// 1. False when the shapes do not broadcast.
bool BroadcastReduceAxes(const std::vector<int64_t>& s0, const std::vector<int64_t>& s1,
                         std::vector<int64_t>* r0, std::vector<int64_t>* r1) {
  r0->clear();
  r1->clear();
  if (s0 == s1) return true;
  const size_t rank = std::max(s0.size(), s1.size());
  for (size_t k = 0; k < rank; ++k) {
    const size_t pad0 = rank - s0.size(), pad1 = rank - s1.size();
    const int64_t d0 = k < pad0 ? 1 : s0[k - pad0];
    const int64_t d1 = k < pad1 ? 1 : s1[k - pad1];
    if (d0 != d1 && d0 != 1 && d1 != 1) return false;
    if (d0 == 1) r0->push_back(static_cast<int64_t>(k));
    if (d1 == 1) r1->push_back(static_cast<int64_t>(k));
  }
  return true;
}

absl::Status BroadcastGradientArgsKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  std::vector<int64_t> shapes[2];
  for (int i = 0; i < 2; ++i) {
    const Tensor& s = ctx.input(i);
    if (s.rank() != 1) {
      return KernelError(ctx, "In[%d] must be a vector. got %s", i, s.ShapeString());
    }
    TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, s, i == 0 ? "s0" : "s1", &shapes[i]));
  }
  std::vector<int64_t> r0, r1;
  if (!BroadcastReduceAxes(shapes[0], shapes[1], &r0, &r1)) {
    return KernelError(ctx, "Incompatible shapes: [%s] vs. [%s]", absl::StrJoin(shapes[0], ","),
                       absl::StrJoin(shapes[1], ","));
  }
  const DType t = ctx.input(0).dtype();
  int i = 0;
  for (const std::vector<int64_t>* r : {&r0, &r1}) {
    Tensor out(t, {static_cast<int64_t>(r->size())});
    for (size_t k = 0; k < r->size(); ++k) {
      if (t == DType::kInt32) {
        out.data<int32_t>()[k] = static_cast<int32_t>((*r)[k]);
      } else {
        out.data<int64_t>()[k] = (*r)[k];
      }
    }
    ctx.set_output(i++, std::move(out));
  }
  return absl::OkStatus();
}

// ---- Softmax cross-entropy ----

// Row `r` of logits (n classes, element stride 1 from `x`): writes softmax(x) - labels to
// `backprop` and returns sum(labels * (log(sum(exp(x - max))) - (x - max))). `label_at(j)`
// gives labels[r, j].
template <typename T, typename LabelAt>
ComputeType<T> XentRow(const T* x, int64_t n, LabelAt label_at, T* backprop) {
  using C = ComputeType<T>;
  C mx = -std::numeric_limits<C>::infinity();
  for (int64_t j = 0; j < n; ++j) mx = std::max(mx, C(x[j]));
  C sum = C(0);
  for (int64_t j = 0; j < n; ++j) sum += std::exp(C(x[j]) - mx);
  const C log_sum = std::log(sum);
  C loss = C(0);
  for (int64_t j = 0; j < n; ++j) {
    const C shifted = C(x[j]) - mx;
    const C label = label_at(j);
    loss += label * (log_sum - shifted);
    backprop[j] = static_cast<T>(std::exp(shifted) / sum - label);
  }
  return loss;
}

// Logits and labels broadcast to a matrix [batch, classes] (TF allows any pair of shapes
// that broadcast to rank 2).
absl::Status SoftmaxXentKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& logits = ctx.input(0);
  const Tensor& labels = ctx.input(1);
  std::vector<int64_t> out_dims = logits.dims();
  if (logits.dims() != labels.dims()) {
    const size_t rank = std::max<size_t>(logits.rank(), labels.rank());
    out_dims.assign(rank, 1);
    for (size_t k = 0; k < rank; ++k) {
      const size_t pa = rank - logits.dims().size(), pb = rank - labels.dims().size();
      const int64_t a = k < pa ? 1 : logits.dims()[k - pa];
      const int64_t b = k < pb ? 1 : labels.dims()[k - pb];
      if (a != b && a != 1 && b != 1) {
        return KernelError(ctx,
                           "logits and labels must be broadcastable: logits_size=%s "
                           "labels_size=%s",
                           DimsString(logits.dims()), DimsString(labels.dims()));
      }
      out_dims[k] = a == 1 ? b : a;
    }
  }
  if (out_dims.size() != 2) {
    return KernelError(ctx,
                       "logits and labels must be either 2-dimensional, or broadcasted to be "
                       "2-dimensional: logits_size=%s labels_size=%s",
                       DimsString(logits.dims()), DimsString(labels.dims()));
  }
  const int64_t batch = out_dims[0], classes = out_dims[1];
  // Strides of each operand over [batch, classes] (0 along a broadcast dim).
  auto strides = [&](const Tensor& t) {
    std::vector<int64_t> d = t.dims();
    while (d.size() < 2) d.insert(d.begin(), 1);
    return std::pair<int64_t, int64_t>{d[0] == 1 && batch != 1 ? 0 : d[1],
                                       d[1] == 1 && classes != 1 ? 0 : 1};
  };
  const auto [lrow, lcol] = strides(logits);
  const auto [brow, bcol] = strides(labels);
  Tensor loss(logits.dtype(), {batch});
  Tensor backprop(logits.dtype(), {batch, classes});
  const bool ok = DispatchFloat(logits.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* x = logits.data<T>();
    const T* y = labels.data<T>();
    ParallelFor(ctx, batch, 20 * std::max<int64_t>(1, classes), [&](int64_t b, int64_t e) {
      std::vector<T> row(static_cast<size_t>(classes));
      for (int64_t r = b; r < e; ++r) {
        const T* xr = x + r * lrow;
        if (lcol != 1) {  // a broadcast logits row: materialise it
          for (int64_t j = 0; j < classes; ++j) row[static_cast<size_t>(j)] = xr[0];
          xr = row.data();
        }
        const T* yr = y + r * brow;
        const int64_t ys = bcol;
        loss.data<T>()[r] = static_cast<T>(XentRow<T>(
            xr, classes, [&](int64_t j) { return C(yr[j * ys]); },
            backprop.data<T>() + r * classes));
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, logits.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, std::move(loss));
  ctx.set_output(1, std::move(backprop));
  return absl::OkStatus();
}

absl::Status SparseSoftmaxXentKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& logits = ctx.input(0);
  const Tensor& labels = ctx.input(1);
  if (logits.rank() != 2) {
    return KernelError(ctx, "logits must be 2-D, but got shape %s", DimsString(logits.dims()));
  }
  if (labels.rank() != 1) {
    return KernelError(ctx, "labels must be 1-D, but got shape %s", DimsString(labels.dims()));
  }
  if (logits.dim(0) != labels.dim(0)) {
    return KernelError(ctx,
                       "logits and labels must have the same first dimension, got logits "
                       "shape %s and labels shape %s",
                       DimsString(logits.dims()), DimsString(labels.dims()));
  }
  const int64_t batch = logits.dim(0), classes = logits.dim(1);
  if (classes == 0 && batch > 0) {
    return KernelError(ctx, "Must have at least one class, but got logits shape %s",
                       DimsString(logits.dims()));
  }
  std::vector<int64_t> label;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, labels, "labels", &label));
  for (int64_t v : label) {
    if (v < 0 || v >= classes) {
      std::vector<int64_t> shown(label.begin(), label.begin() + std::min<size_t>(label.size(), 32));
      return KernelError(ctx,
                         "Received a label value of %d which is outside the valid range of "
                         "[0, %d).  Label values: %s%s",
                         v, classes, absl::StrJoin(shown, " "), label.size() > 32 ? " ..." : "");
    }
  }
  Tensor loss(logits.dtype(), {batch});
  Tensor backprop(logits.dtype(), {batch, classes});
  const bool ok = DispatchFloat(logits.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* x = logits.data<T>();
    ParallelFor(ctx, batch, 20 * std::max<int64_t>(1, classes), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t l = label[static_cast<size_t>(r)];
        loss.data<T>()[r] = static_cast<T>(XentRow<T>(
            x + r * classes, classes, [l](int64_t j) { return C(j == l ? 1 : 0); },
            backprop.data<T>() + r * classes));
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, logits.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, std::move(loss));
  ctx.set_output(1, std::move(backprop));
  return absl::OkStatus();
}

// ---- DynamicStitch / ParallelDynamicStitch ----

// merged[indices[i][j...], ...] = data[i][j..., ...]; later (i, j) win on duplicates (TF's
// sequential order; ParallelDynamicStitch leaves it unspecified). Rows no index names are
// zero. merged has max(index) + 1 rows.
absl::Status DynamicStitchKernel(KernelContext& ctx) {
  if (ctx.num_inputs() % 2 != 0 || ctx.num_inputs() == 0) {
    return KernelError(ctx, "expects N indices and N data inputs, got %d inputs", ctx.num_inputs());
  }
  const int n = ctx.num_inputs() / 2;
  const Tensor& data0 = ctx.input(n);
  const Tensor& indices0 = ctx.input(0);
  if (data0.dtype() == DType::kString || DTypeSize(data0.dtype()) == 0) {
    return UnsupportedDType(ctx, data0.dtype(), "numeric types and bool");
  }
  if (data0.rank() < indices0.rank() ||
      !std::equal(indices0.dims().begin(), indices0.dims().end(), data0.dims().begin())) {
    return KernelError(ctx, "data[0].shape = %s does not start with indices[0].shape = %s",
                       DimsString(data0.dims()), DimsString(indices0.dims()));
  }
  const std::vector<int64_t> slice_dims(data0.dims().begin() + indices0.rank(), data0.dims().end());
  int64_t slice_size = 1;
  for (int64_t d : slice_dims) slice_size *= d;
  int64_t max_index = -1;
  for (int i = 0; i < n; ++i) {
    const Tensor& idx = ctx.input(i);
    const Tensor& data = ctx.input(n + i);
    if (idx.dtype() != DType::kInt32) {
      return KernelError(ctx, "indices[%d] must be int32, got %s", i, idx.ShapeString());
    }
    if (data.dtype() != data0.dtype()) {
      return KernelError(ctx, "data[%d] is %s but data[0] is %s", i, data.ShapeString(),
                         data0.ShapeString());
    }
    if (data.rank() < idx.rank() ||
        !std::equal(idx.dims().begin(), idx.dims().end(), data.dims().begin())) {
      return KernelError(ctx, "data[%d].shape = %s does not start with indices[%d].shape = %s", i,
                         DimsString(data.dims()), i, DimsString(idx.dims()));
    }
    const std::vector<int64_t> rest(data.dims().begin() + idx.rank(), data.dims().end());
    if (rest != slice_dims) {
      return KernelError(ctx, "Need data[0].shape[%d:] = %s to match data[%d].shape[%d:] = %s",
                         indices0.rank(), DimsString(slice_dims), i, idx.rank(), DimsString(rest));
    }
    for (int64_t j = 0; j < idx.num_elements(); ++j) {
      const int64_t v = idx.data<int32_t>()[j];
      if (v < 0) {
        return KernelError(ctx, "indices[%d][%d] = %d is out of range (negative)", i, j, v);
      }
      max_index = std::max(max_index, v);
    }
  }
  std::vector<int64_t> out_dims = {max_index + 1};
  out_dims.insert(out_dims.end(), slice_dims.begin(), slice_dims.end());
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, data0.dtype(), out_dims));
  Tensor out(data0.dtype(), out_dims);
  const size_t row_bytes = static_cast<size_t>(slice_size) * DTypeSize(data0.dtype());
  char* dst = static_cast<char*>(out.raw_data());
  for (int i = 0; i < n; ++i) {
    const Tensor& idx = ctx.input(i);
    const char* src = static_cast<const char*>(ctx.input(n + i).raw_data());
    for (int64_t j = 0; j < idx.num_elements(); ++j) {
      if (row_bytes == 0) break;
      std::memcpy(dst + static_cast<size_t>(idx.data<int32_t>()[j]) * row_bytes,
                  src + static_cast<size_t>(j) * row_bytes, row_bytes);
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- ConcatOffset ----

// offset[i] is zero but along the concat axis, where it is the sum of the earlier shapes'
// sizes. Every shape must match shape[0] off the axis.
absl::Status ConcatOffsetKernel(KernelContext& ctx) {
  if (ctx.num_inputs() < 3) {
    return KernelError(ctx, "expects concat_dim and at least 2 shapes, got %d inputs",
                       ctx.num_inputs());
  }
  const Tensor& cdim_t = ctx.input(0);
  if (cdim_t.rank() != 0 || cdim_t.dtype() != DType::kInt32) {
    return KernelError(ctx, "Concat dim tensor should be a scalar integer, but got %s",
                       cdim_t.ShapeString());
  }
  const int64_t cdim = cdim_t.data<int32_t>()[0];
  const int n = ctx.num_inputs() - 1;
  const Tensor& inp0 = ctx.input(1);
  if (inp0.rank() != 1) {
    return KernelError(ctx, "input 0 should be a vector, but got %s", inp0.ShapeString());
  }
  std::vector<int64_t> s0;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, inp0, "shape[0]", &s0));
  const int64_t dims = static_cast<int64_t>(s0.size());
  const int64_t axis = cdim < 0 ? cdim + dims : cdim;
  if (axis < 0 || axis >= dims) {
    return KernelError(ctx, "Concat dim is out of range: %d vs. %d", cdim, dims);
  }
  int64_t offset = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& inp = ctx.input(1 + i);
    if (inp.dtype() != inp0.dtype()) {
      return KernelError(ctx, "shape[%d] is %s but shape[0] is %s", i, inp.ShapeString(),
                         inp0.ShapeString());
    }
    if (inp.rank() != 1) {
      return KernelError(ctx, "input %d should be a vector, but got %s", i, inp.ShapeString());
    }
    std::vector<int64_t> s;
    TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, inp, "shape", &s));
    if (static_cast<int64_t>(s.size()) != dims) {
      return KernelError(ctx, "input %d should contain %d elements, but got %d", i, dims, s.size());
    }
    Tensor out(inp.dtype(), {dims});
    for (int64_t k = 0; k < dims; ++k) {
      if (k != axis && s[static_cast<size_t>(k)] != s0[static_cast<size_t>(k)]) {
        return KernelError(ctx,
                           "All dimensions except %d must match. Input %d has shape [%s] and "
                           "doesn't match input 0 with shape [%s].",
                           axis, i, absl::StrJoin(s, " "), absl::StrJoin(s0, " "));
      }
      const int64_t v = k == axis ? offset : 0;
      if (inp.dtype() == DType::kInt32) {
        out.data<int32_t>()[k] = static_cast<int32_t>(v);
      } else {
        out.data<int64_t>()[k] = v;
      }
    }
    offset += s[static_cast<size_t>(axis)];
    ctx.set_output(i, std::move(out));
  }
  return absl::OkStatus();
}

// ---- StridedSliceGrad ----

// output = zeros(shape) with dy written at the strided slice's positions (TF's rule,
// frontend/strided_slice_rule.h, shared with StridedSlice and the lowering).
absl::Status StridedSliceGradKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 5));
  std::vector<int64_t> shape;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(0), "shape", &shape));
  const Tensor& dy = ctx.input(4);
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, dy.dtype(), shape));
  TFJIT_ASSIGN_OR_RETURN(tf::StridedPlan plan, PlanStridedSliceInputs(ctx, shape));
  if (dy.dims() != plan.final_dims) {
    return KernelError(ctx, "shape of dy was %s instead of %s", DimsString(dy.dims()),
                       DimsString(plan.final_dims));
  }
  if (dy.dtype() == DType::kString || DTypeSize(dy.dtype()) == 0) {
    return UnsupportedDType(ctx, dy.dtype(), "numeric types and bool");
  }
  Tensor out(dy.dtype(), shape);
  ScatterByOffsets(dy.Reshaped(StridedProcessingDims(plan)), StridedSliceOffsets(plan, shape), out);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- MirrorPadGrad ----

// Checks MirrorPadGrad's paddings (an int [rank, 2] of non-negative pads within the mode's
// limit) and reads them into `pads` (before/after pairs) and the output dims into `out_dims`.
absl::Status MirrorPadGradDims(const KernelContext& ctx, const Tensor& in, const Tensor& paddings,
                               int64_t offset, std::vector<int64_t>& pads,
                               std::vector<int64_t>& out_dims) {
  const int rank = in.rank();
  if (paddings.rank() != 2 || paddings.dim(0) != rank || paddings.dim(1) != 2 ||
      (paddings.dtype() != DType::kInt32 && paddings.dtype() != DType::kInt64)) {
    return KernelError(ctx,
                       "The first dimension of paddings must be the rank of inputs[%d, 2]: "
                       "paddings is %s",
                       rank, paddings.ShapeString());
  }
  TFJIT_RETURN_IF_ERROR(
      ReadIndexVector(ctx, paddings.Reshaped({2 * static_cast<int64_t>(rank)}), "paddings", &pads));
  out_dims.assign(static_cast<size_t>(rank), 0);
  for (int d = 0; d < rank; ++d) {
    const int64_t before = pads[2 * static_cast<size_t>(d)];
    const int64_t after = pads[2 * static_cast<size_t>(d) + 1];
    if (before < 0 || after < 0) {
      return KernelError(ctx, "Paddings must be non-negative: %d, %d", before, after);
    }
    const int64_t size = in.dim(d) - (before + after);
    if (offset == 0 && (before > size || after > size)) {
      return KernelError(ctx,
                         "paddings must be no greater than the output dimension size: %d, %d "
                         "greater than %d",
                         before, after, size);
    }
    if (offset == 1 && (before >= size || after >= size)) {
      return KernelError(ctx,
                         "paddings must be less than the output dimension size: %d, %d not "
                         "less than %d",
                         before, after, size);
    }
    out_dims[static_cast<size_t>(d)] = size;
  }
  return absl::OkStatus();
}

// src[d][p]: the output index that padded position p of dim d reads.
std::vector<std::vector<int64_t>> MirrorSources(const Tensor& in, const std::vector<int64_t>& pads,
                                                const std::vector<int64_t>& out_dims,
                                                int64_t offset) {
  const int rank = in.rank();
  std::vector<std::vector<int64_t>> src(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) {
    const int64_t before = pads[2 * static_cast<size_t>(d)], n = out_dims[static_cast<size_t>(d)];
    for (int64_t p = 0; p < in.dim(d); ++p) {
      const int64_t q = p - before;
      src[static_cast<size_t>(d)].push_back(q < 0    ? -q - 1 + offset
                                            : q >= n ? 2 * n - 1 - offset - q
                                                     : q);
    }
  }
  return src;
}

// Adds every element of `in` into the output element `src` maps it to, in input order.
template <typename T>
void SumMirrored(const Tensor& in, const std::vector<std::vector<int64_t>>& src, Tensor& out) {
  const int rank = in.rank();
  std::vector<int64_t> row(static_cast<size_t>(rank), 1);
  for (int d = rank - 2; d >= 0; --d) {
    row[static_cast<size_t>(d)] = row[static_cast<size_t>(d) + 1] * out.dim(d + 1);
  }
  // (bool is compiled but never dispatched: DispatchReal skips it.)
  using Acc = std::conditional_t<kIsInt<T> || std::is_same_v<T, bool>, uint64_t, ComputeType<T>>;
  std::vector<Acc> acc(static_cast<size_t>(out.num_elements()), Acc(0));
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  const T* x = in.data<T>();
  for (int64_t k = 0; k < in.num_elements(); ++k) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) {
      off += src[static_cast<size_t>(d)][static_cast<size_t>(idx[static_cast<size_t>(d)])] *
             row[static_cast<size_t>(d)];
    }
    acc[static_cast<size_t>(off)] += static_cast<Acc>(x[k]);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[static_cast<size_t>(d)] < in.dim(d)) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
  T* y = out.data<T>();
  for (size_t k = 0; k < acc.size(); ++k) y[k] = static_cast<T>(acc[k]);
}

// The gradient of MirrorPad: each element of the padded gradient is added to the input
// position it was mirrored from (REFLECT skips the border element, SYMMETRIC repeats it).
absl::Status MirrorPadGradKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  const Tensor& paddings = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(std::string mode, tf::GetStringAttr(ctx.node(), "mode"));
  if (mode != "REFLECT" && mode != "SYMMETRIC") {
    return KernelError(ctx, "mode must be either REFLECT or SYMMETRIC, got '%s'", mode);
  }
  const int64_t offset = mode == "REFLECT" ? 1 : 0;
  std::vector<int64_t> pads, out_dims;
  TFJIT_RETURN_IF_ERROR(MirrorPadGradDims(ctx, in, paddings, offset, pads, out_dims));
  const std::vector<std::vector<int64_t>> src = MirrorSources(in, pads, out_dims, offset);
  Tensor out(in.dtype(), out_dims);
  const auto sum_into = [&](auto tag) { SumMirrored<decltype(tag)>(in, src, out); };
  // TF registers MirrorPadGrad on CPU for every number type, complex included.
  const bool ok = DispatchReal(in.dtype(), sum_into) || DispatchComplex(in.dtype(), sum_into);
  if (!ok) {
    return UnsupportedDType(ctx, in.dtype(),
                            absl::StrCat(TypeSetName(TypeSet::kReal), ", complex64, complex128"));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterGradientsKernels(KernelRegistry& registry) {
  registry.Register("ReluGrad", &ReluGradKernel);
  registry.Register("Relu6Grad", &Relu6GradKernel);
  registry.Register("EluGrad", &EluGradKernel);
  registry.Register("SeluGrad", &SeluGradKernel);
  registry.Register("LeakyReluGrad", &LeakyReluGradKernel);
  registry.Register("SoftplusGrad", &SoftplusGradKernel);
  registry.Register("SoftsignGrad", &SoftsignGradKernel);
  registry.Register("SigmoidGrad", &SigmoidGradKernel);
  registry.Register("TanhGrad", &TanhGradKernel);
  registry.Register("SqrtGrad", &SqrtGradKernel);
  registry.Register("RsqrtGrad", &RsqrtGradKernel);
  registry.Register("ReciprocalGrad", &ReciprocalGradKernel);
  registry.Register("InvGrad", &ReciprocalGradKernel);
  registry.Register("BiasAddGrad", &BiasAddGradKernel);
  registry.Register("BroadcastGradientArgs", &BroadcastGradientArgsKernel);
  registry.Register("SoftmaxCrossEntropyWithLogits", &SoftmaxXentKernel);
  registry.Register("SparseSoftmaxCrossEntropyWithLogits", &SparseSoftmaxXentKernel);
  registry.Register("DynamicStitch", &DynamicStitchKernel);
  registry.Register("ParallelDynamicStitch", &DynamicStitchKernel);
  registry.Register("ConcatOffset", &ConcatOffsetKernel);
  registry.Register("StridedSliceGrad", &StridedSliceGradKernel);
  registry.Register("MirrorPadGrad", &MirrorPadGradKernel);
  RegisterGradientsWindowKernels(registry);  // gradients_window_kernels.cc
}

}  // namespace tfjit::runtime
