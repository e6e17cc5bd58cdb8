// Fallback kernels of the complex math ops (docs/DESIGN.md, "Op families"), with TF's CPU
// semantics: Complex, Real, Imag, Angle, Conj, ComplexAbs, and the complex64/complex128 paths
// of the elementwise, cast, reduction and matmul ops TF registers for complex (Add, Mul, Exp,
// Cast, Sum, MatMul, ...). The complex paths wrap the ops' existing kernels: a node with a
// complex input or output runs here, any other node runs the kernel registered before
// (RegisterMathComplexKernels runs last). Compiled code holds complex values as real pairs
// (compiler/tf2hlo/complex_values.h); these kernels run what does not compile, and are the
// reference the compiled forms are tested against.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "frontend/attr.h"
#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

template <typename T>
inline constexpr bool kIsComplex = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;

DType OutType(const KernelContext& ctx, int i = 0) {
  const std::vector<DType>& t = ctx.node().output_types();
  return static_cast<size_t>(i) < t.size() ? t[static_cast<size_t>(i)] : DType::kInvalid;
}

// The real part type of complex C.
template <typename C>
using PartOf = typename C::value_type;

DType PartDType(DType complex_type) {
  return complex_type == DType::kComplex64 ? DType::kFloat32 : DType::kFloat64;
}
DType ComplexOfPart(DType part) {
  return part == DType::kFloat32   ? DType::kComplex64
         : part == DType::kFloat64 ? DType::kComplex128
                                   : DType::kInvalid;
}

// ---- Broadcasting binary ops: out[i] = fn(a[i], b[i]) ----

template <typename In, typename Out, typename Fn>
absl::Status BinaryLoop(KernelContext& ctx, DType out_type, Fn fn) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  std::optional<BroadcastPlan> plan = MakeBroadcastPlan({a.dims(), b.dims()});
  if (!plan.has_value()) {
    return KernelError(ctx, "Incompatible shapes: %s vs. %s", DimsString(a.dims()),
                       DimsString(b.dims()));
  }
  Tensor out(out_type, plan->out_dims);
  const In* pa = a.data<In>();
  const In* pb = b.data<In>();
  Out* po = out.data<Out>();
  const int64_t sa = plan->inner_stride(0), sb = plan->inner_stride(1);
  ParallelFor(ctx, plan->num_elements, 8, [&](int64_t begin, int64_t end) {
    ForEachRun(*plan, begin, end, [&](int64_t i, const int64_t* off, int64_t len) {
      for (int64_t j = 0; j < len; ++j) po[i + j] = fn(pa[off[0] + j * sa], pb[off[1] + j * sb]);
    });
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status CheckSameDType(const KernelContext& ctx) {
  if (ctx.input(0).dtype() != ctx.input(1).dtype()) {
    return KernelError(ctx, "operands have different dtypes: %s vs %s",
                       DTypeName(ctx.input(0).dtype()), DTypeName(ctx.input(1).dtype()));
  }
  return absl::OkStatus();
}

enum class BinOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kDivNoNan,
  kMulNoNan,
  kSquaredDifference,
  kPow,
  kXdivy,
  kXlogy
};

template <BinOp Op>
absl::Status ComplexBinary(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_RETURN_IF_ERROR(CheckSameDType(ctx));
  absl::Status status;
  const bool ok = DispatchComplex(ctx.input(0).dtype(), [&](auto tag) {
    using T = decltype(tag);
    status = BinaryLoop<T, T>(ctx, ctx.input(0).dtype(), [](T x, T y) -> T {
      if constexpr (Op == BinOp::kAdd) return x + y;
      if constexpr (Op == BinOp::kSub) return x - y;
      if constexpr (Op == BinOp::kMul) return x * y;
      if constexpr (Op == BinOp::kDiv) return x / y;
      if constexpr (Op == BinOp::kDivNoNan) return y == T(0) ? T(0) : x / y;
      if constexpr (Op == BinOp::kMulNoNan) return y == T(0) ? T(0) : x * y;
      if constexpr (Op == BinOp::kSquaredDifference) {
        const T d = x - y;
        return d * std::conj(d);
      }
      if constexpr (Op == BinOp::kPow) return std::pow(x, y);
      if constexpr (Op == BinOp::kXdivy) return x == T(0) ? T(0) : x / y;
      if constexpr (Op == BinOp::kXlogy) return x == T(0) ? T(0) : x * std::log(y);
    });
  });
  if (!ok) return UnsupportedDType(ctx, ctx.input(0).dtype(), "complex64, complex128");
  return status;
}

template <bool Equal>
absl::Status ComplexCompare(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_RETURN_IF_ERROR(CheckSameDType(ctx));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (!MakeBroadcastPlan({a.dims(), b.dims()}).has_value()) {
    TFJIT_ASSIGN_OR_RETURN(const bool strict,
                           tf::GetBoolAttrOr(ctx.node(), "incompatible_shape_error", true));
    if (!strict) {  // TF: a scalar saying "not equal"
      Tensor out(DType::kBool, {});
      out.data<bool>()[0] = !Equal;
      ctx.set_output(0, std::move(out));
      return absl::OkStatus();
    }
  }
  absl::Status status;
  DispatchComplex(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    status =
        BinaryLoop<T, bool>(ctx, DType::kBool, [](T x, T y) { return Equal ? x == y : x != y; });
  });
  return status;
}

// ---- Unary ops ----

enum class UnOp {
  kNeg,
  kSquare,
  kExp,
  kExpm1,
  kLog,
  kLog1p,
  kSqrt,
  kRsqrt,
  kReciprocal,
  kSign,
  kSin,
  kCos,
  kTan,
  kSinh,
  kCosh,
  kTanh,
  kSigmoid,
  kConj,
  kOnesLike,
  kAcos,
  kAsin,
  kAtan,
  kAcosh,
  kAsinh,
  kAtanh
};

template <UnOp Op>
absl::Status ComplexUnary(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  Tensor out(in.dtype(), in.dims());
  const bool ok = DispatchComplex(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using R = PartOf<T>;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    ParallelFor(ctx, in.num_elements(), 20, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T v = x[i];
        T r;
        if constexpr (Op == UnOp::kNeg) r = -v;
        if constexpr (Op == UnOp::kSquare) r = v * v;
        if constexpr (Op == UnOp::kExp) r = std::exp(v);
        if constexpr (Op == UnOp::kExpm1) r = std::exp(v) - T(1);
        if constexpr (Op == UnOp::kLog) r = std::log(v);
        if constexpr (Op == UnOp::kLog1p) r = std::log(T(1) + v);
        if constexpr (Op == UnOp::kSqrt) r = std::sqrt(v);
        if constexpr (Op == UnOp::kRsqrt) r = T(1) / std::sqrt(v);
        if constexpr (Op == UnOp::kReciprocal) r = T(1) / v;
        if constexpr (Op == UnOp::kSign) {
          const R m = std::abs(v);
          r = m == R(0) ? T(0) : v / m;
        }
        if constexpr (Op == UnOp::kSin) r = std::sin(v);
        if constexpr (Op == UnOp::kCos) r = std::cos(v);
        if constexpr (Op == UnOp::kTan) r = std::tan(v);
        if constexpr (Op == UnOp::kSinh) r = std::sinh(v);
        if constexpr (Op == UnOp::kCosh) r = std::cosh(v);
        if constexpr (Op == UnOp::kTanh) r = std::tanh(v);
        if constexpr (Op == UnOp::kSigmoid) r = T(1) / (T(1) + std::exp(-v));
        if constexpr (Op == UnOp::kConj) r = std::conj(v);
        if constexpr (Op == UnOp::kOnesLike) r = T(1);
        // The principal branches of C's complex functions (TF's Eigen kernels call the same).
        if constexpr (Op == UnOp::kAcos) r = std::acos(v);
        if constexpr (Op == UnOp::kAsin) r = std::asin(v);
        if constexpr (Op == UnOp::kAtan) r = std::atan(v);
        if constexpr (Op == UnOp::kAcosh) r = std::acosh(v);
        if constexpr (Op == UnOp::kAsinh) r = std::asinh(v);
        if constexpr (Op == UnOp::kAtanh) r = std::atanh(v);
        y[i] = r;
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "complex64, complex128");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Complex -> real part ops: Real, Imag, Angle, ComplexAbs ----

enum class PartOp { kReal, kImag, kAngle, kAbs };

template <PartOp Op>
absl::Status ComplexToReal(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  const DType out_type = OutType(ctx);
  if (!IsComplexDType(in.dtype()) || out_type != PartDType(in.dtype())) {
    return KernelError(ctx,
                       "no kernel for T=%s, Tout=%s: TF registers complex64 -> float32 and "
                       "complex128 -> float64",
                       DTypeName(in.dtype()), DTypeName(out_type));
  }
  Tensor out(out_type, in.dims());
  DispatchComplex(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using R = PartOf<T>;
    const T* x = in.data<T>();
    R* y = out.data<R>();
    ParallelFor(ctx, in.num_elements(), 10, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if constexpr (Op == PartOp::kReal) y[i] = x[i].real();
        if constexpr (Op == PartOp::kImag) y[i] = x[i].imag();
        if constexpr (Op == PartOp::kAngle) y[i] = std::arg(x[i]);
        if constexpr (Op == PartOp::kAbs) y[i] = std::abs(x[i]);
      }
    });
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Complex(real, imag): broadcasting; float32 -> complex64, float64 -> complex128.
absl::Status ComplexKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_RETURN_IF_ERROR(CheckSameDType(ctx));
  const DType in_type = ctx.input(0).dtype();
  const DType out_type = OutType(ctx);
  if (ComplexOfPart(in_type) == DType::kInvalid || out_type != ComplexOfPart(in_type)) {
    return KernelError(ctx,
                       "no kernel for T=%s, Tout=%s: TF registers float32 -> complex64 and "
                       "float64 -> complex128",
                       DTypeName(in_type), DTypeName(out_type));
  }
  absl::Status status;
  DispatchComplex(out_type, [&](auto tag) {
    using T = decltype(tag);
    using R = PartOf<T>;
    status = BinaryLoop<R, T>(ctx, out_type, [](R re, R im) { return T(re, im); });
  });
  return status;
}

// ---- Cast to / from complex ----

template <typename To, typename From>
To CastValue(From v) {
  if constexpr (kIsComplex<From> && kIsComplex<To>) {
    return To(static_cast<PartOf<To>>(v.real()), static_cast<PartOf<To>>(v.imag()));
  } else if constexpr (kIsComplex<From>) {
    if constexpr (std::is_same_v<To, bool>) {
      return v != From(0);
    } else if constexpr (std::is_same_v<To, half> || std::is_same_v<To, bfloat16>) {
      return static_cast<To>(static_cast<float>(v.real()));
    } else {
      return static_cast<To>(v.real());  // TF drops the imaginary part
    }
  } else {
    using R = PartOf<To>;
    if constexpr (std::is_same_v<From, half> || std::is_same_v<From, bfloat16>) {
      return To(static_cast<R>(static_cast<float>(v)), R(0));
    } else {
      return To(static_cast<R>(v), R(0));
    }
  }
}

absl::Status ComplexCast(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(const DType dst, tf::GetTypeAttr(ctx.node(), "DstT"));
  Tensor out(dst, in.dims());
  bool ok = false;
  auto run = [&](auto from_tag, auto to_tag) {
    using From = decltype(from_tag);
    using To = decltype(to_tag);
    if constexpr (kIsComplex<From> || kIsComplex<To>) {
      const From* x = in.data<From>();
      To* y = out.data<To>();
      ParallelFor(ctx, in.num_elements(), 4, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = CastValue<To>(x[i]);
      });
      ok = true;
    }
  };
  auto with_dst = [&](auto from_tag) {
    if (!DispatchComplex(dst, [&](auto to_tag) { run(from_tag, to_tag); })) {
      DispatchNumeric(dst, [&](auto to_tag) { run(from_tag, to_tag); });
    }
  };
  if (!DispatchComplex(in.dtype(), with_dst)) DispatchNumeric(in.dtype(), with_dst);
  if (!ok) {
    return KernelError(ctx,
                       "cannot cast %s to %s: only numeric types, bool and complex are "
                       "supported",
                       in.ShapeString(), DTypeName(dst));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- AddN ----

absl::Status ComplexAddN(KernelContext& ctx) {
  if (ctx.num_inputs() < 1) return KernelError(ctx, "AddN needs at least one input");
  const Tensor& first = ctx.input(0);
  for (int k = 1; k < ctx.num_inputs(); ++k) {
    if (ctx.input(k).dims() != first.dims() || ctx.input(k).dtype() != first.dtype()) {
      return KernelError(ctx,
                         "Inputs to operation AddN must have the same size and shape.  "
                         "Input 0: %s != input %d: %s",
                         DimsString(first.dims()), k, DimsString(ctx.input(k).dims()));
    }
  }
  Tensor out(first.dtype(), first.dims());
  DispatchComplex(first.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* y = out.data<T>();
    ParallelFor(ctx, out.num_elements(), 2 * ctx.num_inputs(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        T s(0);
        for (int k = 0; k < ctx.num_inputs(); ++k) s += ctx.input(k).data<T>()[i];
        y[i] = s;
      }
    });
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Reductions: Sum, Prod, Mean ----

enum class RedOp { kSum, kProd, kMean };

template <RedOp Op>
absl::Status ComplexReduce(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> axes;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "reduction_indices", &axes));
  TFJIT_ASSIGN_OR_RETURN(const bool keep_dims, tf::GetBoolAttrOr(ctx.node(), "keep_dims", false));
  const int rank = in.rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return KernelError(ctx, "Invalid reduction dimension (%d for input with %d dimension(s)", a,
                         rank);
    }
    reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  }
  // Each output element sums `count` input elements: its kept-dims base offset plus every
  // combination of the reduced dims (strides in the input).
  std::vector<int64_t> out_dims, kept_sizes, kept_strides, red_sizes, red_strides;
  int64_t count = 1, stride = 1;
  std::vector<int64_t> in_strides(static_cast<size_t>(rank));
  for (int d = rank - 1; d >= 0; --d) {
    in_strides[static_cast<size_t>(d)] = stride;
    stride *= in.dim(d);
  }
  for (int d = 0; d < rank; ++d) {
    if (reduced[static_cast<size_t>(d)]) {
      count *= in.dim(d);
      red_sizes.push_back(in.dim(d));
      red_strides.push_back(in_strides[static_cast<size_t>(d)]);
      if (keep_dims) out_dims.push_back(1);
    } else {
      out_dims.push_back(in.dim(d));
      kept_sizes.push_back(in.dim(d));
      kept_strides.push_back(in_strides[static_cast<size_t>(d)]);
    }
  }
  auto offset = [](int64_t flat, const std::vector<int64_t>& sizes,
                   const std::vector<int64_t>& strides) {
    int64_t off = 0;
    for (size_t d = sizes.size(); d-- > 0;) {
      off += (flat % sizes[d]) * strides[d];
      flat /= sizes[d];
    }
    return off;
  };
  Tensor out(in.dtype(), out_dims);
  const bool ok = DispatchComplex(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* y = out.data<T>();
    const T* x = in.data<T>();
    ParallelFor(ctx, out.num_elements(), 4 * count + 8, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const int64_t base = offset(o, kept_sizes, kept_strides);
        T acc = Op == RedOp::kProd ? T(1) : T(0);
        for (int64_t r = 0; r < count; ++r) {
          const T v = x[base + offset(r, red_sizes, red_strides)];
          if constexpr (Op == RedOp::kProd) {
            acc *= v;
          } else {
            acc += v;
          }
        }
        if constexpr (Op == RedOp::kMean) acc /= static_cast<PartOf<T>>(count);
        y[o] = acc;
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "complex64, complex128");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Cumsum / Cumprod (exclusive, reverse) ----

template <bool Prod>
absl::Status ComplexCum(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  if (in.rank() == 0) return KernelError(ctx, "input must be at least rank 1, got a scalar");
  const Tensor& axis_t = ctx.input(1);
  if (axis_t.rank() != 0) {
    return KernelError(ctx, "axis must be a scalar, got %s", axis_t.ShapeString());
  }
  std::vector<int64_t> axis_v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, axis_t.Reshaped({1}), "axis", &axis_v));
  int64_t axis;
  TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, axis_v[0], in.rank(), &axis));
  TFJIT_ASSIGN_OR_RETURN(const bool exclusive, tf::GetBoolAttrOr(ctx.node(), "exclusive", false));
  TFJIT_ASSIGN_OR_RETURN(const bool reverse, tf::GetBoolAttrOr(ctx.node(), "reverse", false));
  int64_t outer = 1, n = in.dim(static_cast<int>(axis)), inner = 1;
  for (int d = 0; d < in.rank(); ++d) {
    if (d < axis) outer *= in.dim(d);
    if (d > axis) inner *= in.dim(d);
  }
  Tensor out(in.dtype(), in.dims());
  const bool ok = DispatchComplex(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data<T>();
    T* y = out.data<T>();
    ParallelFor(ctx, outer * inner, 4 * n, [&](int64_t begin, int64_t end) {
      for (int64_t line = begin; line < end; ++line) {
        const int64_t base = (line / inner) * n * inner + line % inner;
        T acc = Prod ? T(1) : T(0);
        for (int64_t s = 0; s < n; ++s) {
          const int64_t j = reverse ? n - 1 - s : s;
          const T v = x[base + j * inner];
          if (!exclusive) acc = Prod ? acc * v : acc + v;
          y[base + j * inner] = acc;
          if (exclusive) acc = Prod ? acc * v : acc + v;
        }
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "complex64, complex128");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- MatMul / BatchMatMul(V2) ----

template <typename T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

absl::Status ComplexMatMul(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_RETURN_IF_ERROR(CheckSameDType(ctx));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(const bool ta, tf::GetBoolAttrOr(ctx.node(), "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(const bool tb, tf::GetBoolAttrOr(ctx.node(), "transpose_b", false));
  if (a.rank() != 2 || b.rank() != 2) {
    return KernelError(ctx, "In[0] and In[1] must be matrices, got %s and %s", a.ShapeString(),
                       b.ShapeString());
  }
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t k2 = tb ? b.dim(1) : b.dim(0), n = tb ? b.dim(0) : b.dim(1);
  if (k != k2) {
    return KernelError(ctx, "Matrix size-incompatible: In[0]: %s, In[1]: %s", DimsString(a.dims()),
                       DimsString(b.dims()));
  }
  Tensor out(a.dtype(), {m, n});
  DispatchComplex(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Eigen::Map<const RowMajor<T>> ma(a.data<T>(), a.dim(0), a.dim(1));
    Eigen::Map<const RowMajor<T>> mb(b.data<T>(), b.dim(0), b.dim(1));
    Eigen::Map<RowMajor<T>> mo(out.data<T>(), m, n);
    if (m == 0 || n == 0) return;
    if (k == 0) {
      mo.setZero();
      return;
    }
    if (ta && tb) {
      mo.noalias() = ma.transpose() * mb.transpose();
    } else if (ta) {
      mo.noalias() = ma.transpose() * mb;
    } else if (tb) {
      mo.noalias() = ma * mb.transpose();
    } else {
      mo.noalias() = ma * mb;
    }
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// BatchMatMul (equal batch dims) and BatchMatMulV2 (broadcast batch dims); adj_x/adj_y take
// the conjugate transpose.
absl::Status ComplexBatchMatMul(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_RETURN_IF_ERROR(CheckSameDType(ctx));
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(const bool adj_x, tf::GetBoolAttrOr(ctx.node(), "adj_x", false));
  TFJIT_ASSIGN_OR_RETURN(const bool adj_y, tf::GetBoolAttrOr(ctx.node(), "adj_y", false));
  if (x.rank() < 2 || y.rank() < 2) {
    return KernelError(ctx, "In[0] and In[1] must have rank >= 2, got %s and %s", x.ShapeString(),
                       y.ShapeString());
  }
  const int64_t xr = x.dim(x.rank() - 2), xc = x.dim(x.rank() - 1);
  const int64_t yr = y.dim(y.rank() - 2), yc = y.dim(y.rank() - 1);
  const int64_t m = adj_x ? xc : xr, k = adj_x ? xr : xc;
  const int64_t k2 = adj_y ? yc : yr, n = adj_y ? yr : yc;
  if (k != k2) {
    return KernelError(ctx, "Matrix size-incompatible: In[0]: %s, In[1]: %s", DimsString(x.dims()),
                       DimsString(y.dims()));
  }
  std::vector<int64_t> xb(x.dims().begin(), x.dims().end() - 2);
  std::vector<int64_t> yb(y.dims().begin(), y.dims().end() - 2);
  if (ctx.node().op() == "BatchMatMul" && xb != yb) {
    return KernelError(ctx, "In[0] and In[1] must have compatible batch dimensions: %s vs. %s",
                       x.ShapeString(), y.ShapeString());
  }
  // Broadcast the batch dims: walk them with a plan over [batch..., 1] shapes.
  std::vector<int64_t> xs = xb, ys = yb;
  xs.push_back(1);
  ys.push_back(1);
  std::optional<BroadcastPlan> plan = MakeBroadcastPlan({xs, ys});
  if (!plan.has_value()) {
    return KernelError(ctx, "In[0] and In[1] must have compatible batch dimensions: %s vs. %s",
                       x.ShapeString(), y.ShapeString());
  }
  std::vector<int64_t> out_dims(plan->out_dims.begin(), plan->out_dims.end() - 1);
  out_dims.push_back(m);
  out_dims.push_back(n);
  Tensor out(x.dtype(), out_dims);
  const int64_t batches = plan->num_elements;
  DispatchComplex(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (m == 0 || n == 0) return;
    ParallelFor(ctx, batches, m * n * std::max<int64_t>(k, 1) * 4, [&](int64_t begin, int64_t end) {
      int64_t off[2];
      for (int64_t bi = begin; bi < end; ++bi) {
        plan->Offsets(bi, off);
        Eigen::Map<const RowMajor<T>> mx(x.data<T>() + off[0] * xr * xc, xr, xc);
        Eigen::Map<const RowMajor<T>> my(y.data<T>() + off[1] * yr * yc, yr, yc);
        Eigen::Map<RowMajor<T>> mo(out.data<T>() + bi * m * n, m, n);
        if (k == 0) {
          mo.setZero();
        } else if (adj_x && adj_y) {
          mo.noalias() = mx.adjoint() * my.adjoint();
        } else if (adj_x) {
          mo.noalias() = mx.adjoint() * my;
        } else if (adj_y) {
          mo.noalias() = mx * my.adjoint();
        } else {
          mo.noalias() = mx * my;
        }
      }
    });
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Wrapping the existing kernels ----

struct Wrapped {
  const char* op;
  KernelFn complex_fn;
};

constexpr Wrapped kWrapped[] = {
    {"Add", &ComplexBinary<BinOp::kAdd>},
    {"AddV2", &ComplexBinary<BinOp::kAdd>},
    {"Sub", &ComplexBinary<BinOp::kSub>},
    {"Mul", &ComplexBinary<BinOp::kMul>},
    {"Div", &ComplexBinary<BinOp::kDiv>},
    {"RealDiv", &ComplexBinary<BinOp::kDiv>},
    {"DivNoNan", &ComplexBinary<BinOp::kDivNoNan>},
    {"MulNoNan", &ComplexBinary<BinOp::kMulNoNan>},
    {"SquaredDifference", &ComplexBinary<BinOp::kSquaredDifference>},
    {"Pow", &ComplexBinary<BinOp::kPow>},
    {"Xdivy", &ComplexBinary<BinOp::kXdivy>},
    {"Xlogy", &ComplexBinary<BinOp::kXlogy>},
    {"Equal", &ComplexCompare<true>},
    {"NotEqual", &ComplexCompare<false>},
    {"Neg", &ComplexUnary<UnOp::kNeg>},
    {"Square", &ComplexUnary<UnOp::kSquare>},
    {"Exp", &ComplexUnary<UnOp::kExp>},
    {"Expm1", &ComplexUnary<UnOp::kExpm1>},
    {"Log", &ComplexUnary<UnOp::kLog>},
    {"Log1p", &ComplexUnary<UnOp::kLog1p>},
    {"Sqrt", &ComplexUnary<UnOp::kSqrt>},
    {"Rsqrt", &ComplexUnary<UnOp::kRsqrt>},
    {"Reciprocal", &ComplexUnary<UnOp::kReciprocal>},
    {"Inv", &ComplexUnary<UnOp::kReciprocal>},
    {"Sign", &ComplexUnary<UnOp::kSign>},
    {"Sin", &ComplexUnary<UnOp::kSin>},
    {"Cos", &ComplexUnary<UnOp::kCos>},
    {"Tan", &ComplexUnary<UnOp::kTan>},
    {"Sinh", &ComplexUnary<UnOp::kSinh>},
    {"Cosh", &ComplexUnary<UnOp::kCosh>},
    {"Tanh", &ComplexUnary<UnOp::kTanh>},
    {"Sigmoid", &ComplexUnary<UnOp::kSigmoid>},
    {"OnesLike", &ComplexUnary<UnOp::kOnesLike>},
    {"Acos", &ComplexUnary<UnOp::kAcos>},
    {"Asin", &ComplexUnary<UnOp::kAsin>},
    {"Atan", &ComplexUnary<UnOp::kAtan>},
    {"Acosh", &ComplexUnary<UnOp::kAcosh>},
    {"Asinh", &ComplexUnary<UnOp::kAsinh>},
    {"Atanh", &ComplexUnary<UnOp::kAtanh>},
    {"Cast", &ComplexCast},
    {"AddN", &ComplexAddN},
    {"Sum", &ComplexReduce<RedOp::kSum>},
    {"Prod", &ComplexReduce<RedOp::kProd>},
    {"Mean", &ComplexReduce<RedOp::kMean>},
    {"Cumsum", &ComplexCum<false>},
    {"Cumprod", &ComplexCum<true>},
    {"MatMul", &ComplexMatMul},
    {"BatchMatMul", &ComplexBatchMatMul},
    {"BatchMatMulV2", &ComplexBatchMatMul},
    {"BatchMatMulV3", &ComplexBatchMatMul},
};
constexpr size_t kNumWrapped = sizeof(kWrapped) / sizeof(kWrapped[0]);

// The kernels registered before the complex paths (set at registration; every registry
// holds the same functions, so a later registration stores the same values).
std::atomic<KernelFn> g_real_kernels[kNumWrapped] = {};

bool TouchesComplex(const KernelContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (IsComplexDType(ctx.input(i).dtype())) return true;
  }
  for (DType t : ctx.node().output_types()) {
    if (IsComplexDType(t)) return true;
  }
  return false;
}

template <size_t I>
absl::Status WrappedKernel(KernelContext& ctx) {
  if (TouchesComplex(ctx)) return kWrapped[I].complex_fn(ctx);
  const KernelFn real = g_real_kernels[I].load(std::memory_order_relaxed);
  if (real == nullptr) {
    return Unimplemented("node %s: no CPU kernel for op %s on non-complex types",
                         ctx.node().DebugName(), kWrapped[I].op);
  }
  return real(ctx);
}

template <size_t I>
void RegisterOneWrapped(KernelRegistry& registry) {
  const KernelFn real = registry.Find(kWrapped[I].op);
  if (real == &WrappedKernel<I>) return;  // this registry is wrapped already
  if (real != nullptr) g_real_kernels[I].store(real, std::memory_order_relaxed);
  registry.Register(kWrapped[I].op, &WrappedKernel<I>);
}

template <size_t... I>
void RegisterWrapped(KernelRegistry& registry, std::index_sequence<I...>) {
  (RegisterOneWrapped<I>(registry), ...);
}

}  // namespace

void RegisterMathComplexKernels(KernelRegistry& registry) {
  registry.Register("Complex", &ComplexKernel);
  registry.Register("Real", &ComplexToReal<PartOp::kReal>);
  registry.Register("Imag", &ComplexToReal<PartOp::kImag>);
  registry.Register("Angle", &ComplexToReal<PartOp::kAngle>);
  registry.Register("ComplexAbs", &ComplexToReal<PartOp::kAbs>);
  registry.Register("Conj", &ComplexUnary<UnOp::kConj>);
  // Registered last (kernel_registry.cc), so Find returns the real-typed kernels.
  RegisterWrapped(registry, std::make_index_sequence<kNumWrapped>{});
}

}  // namespace tfjit::runtime
