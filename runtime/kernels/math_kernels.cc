// Math kernels: MatMul (Eigen GEMM, rows split across the pool) and Cast; registers the
// elementwise and reduction families too.
#include <cmath>
#include <limits>
#include <type_traits>

#include "Eigen/Core"
#include "frontend/attr.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// c[m,n] = op(a) * op(b) with row blocks of c computed in parallel; op transposes when asked.
template <typename T>
void Gemm(const KernelContext& ctx, const Eigen::Map<const RowMajorMatrix<T>>& a, bool ta,
          const Eigen::Map<const RowMajorMatrix<T>>& b, bool tb, Eigen::Map<RowMajorMatrix<T>>& c) {
  const int64_t m = c.rows();
  const int64_t k = ta ? a.rows() : a.cols();
  const int64_t cost = std::max<int64_t>(1, 2 * k * c.cols());
  ParallelFor(ctx, m, cost, [&](int64_t begin, int64_t end) {
    const int64_t rows = end - begin;
    auto out = c.middleRows(begin, rows);
    if (ta && tb) {
      out.noalias() = a.transpose().middleRows(begin, rows) * b.transpose();
    } else if (ta) {
      out.noalias() = a.transpose().middleRows(begin, rows) * b;
    } else if (tb) {
      out.noalias() = a.middleRows(begin, rows) * b.transpose();
    } else {
      out.noalias() = a.middleRows(begin, rows) * b;
    }
  });
}

template <typename T>
void MatMulTyped(const KernelContext& ctx, const Tensor& a, bool ta, const Tensor& b, bool tb,
                 Tensor& out) {
  using MapC = Eigen::Map<const RowMajorMatrix<T>>;
  MapC ma(a.data<T>(), a.dim(0), a.dim(1));
  MapC mb(b.data<T>(), b.dim(0), b.dim(1));
  Eigen::Map<RowMajorMatrix<T>> mc(out.data<T>(), out.dim(0), out.dim(1));
  Gemm<T>(ctx, ma, ta, mb, tb, mc);
}

// 16-bit floats multiply in float (TF does the same on CPU), then round once.
template <typename T>
void MatMulViaFloat(const KernelContext& ctx, const Tensor& a, bool ta, const Tensor& b, bool tb,
                    Tensor& out) {
  using MapT = Eigen::Map<const RowMajorMatrix<T>>;
  RowMajorMatrix<float> fa = MapT(a.data<T>(), a.dim(0), a.dim(1)).template cast<float>();
  RowMajorMatrix<float> fb = MapT(b.data<T>(), b.dim(0), b.dim(1)).template cast<float>();
  RowMajorMatrix<float> fc(out.dim(0), out.dim(1));
  Eigen::Map<const RowMajorMatrix<float>> ma(fa.data(), fa.rows(), fa.cols());
  Eigen::Map<const RowMajorMatrix<float>> mb(fb.data(), fb.rows(), fb.cols());
  Eigen::Map<RowMajorMatrix<float>> mc(fc.data(), fc.rows(), fc.cols());
  Gemm<float>(ctx, ma, ta, mb, tb, mc);
  Eigen::Map<RowMajorMatrix<T>>(out.data<T>(), out.dim(0), out.dim(1)) = fc.template cast<T>();
}

// How to fix mismatched inner dimensions, e.g. "set transpose_b" when that would match.
std::string MatMulHint(const Tensor& a, bool ta, const Tensor& b, bool tb, int64_t k) {
  const int64_t b_other = tb ? b.dim(0) : b.dim(1);
  if (b_other == k) return tb ? "clear transpose_b" : "set transpose_b";
  const int64_t a_other = ta ? a.dim(1) : a.dim(0);
  const int64_t kb = tb ? b.dim(1) : b.dim(0);
  if (a_other == kb) return ta ? "clear transpose_a" : "set transpose_a";
  return absl::StrFormat("feed b with shape %s",
                         tb ? absl::StrFormat("[N,%d]", k) : absl::StrFormat("[%d,N]", k));
}

absl::Status MatMulKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(ctx.node(), "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(ctx.node(), "transpose_b", false));
  if (a.dtype() != b.dtype()) {
    return KernelError(ctx, "operands have different dtypes: a is %s, b is %s; add a Cast",
                       a.ShapeString(), b.ShapeString());
  }
  if (a.rank() != 2 || b.rank() != 2) {
    return KernelError(ctx,
                       "operands must be matrices (rank 2): a is %s, b is %s; use "
                       "BatchMatMulV2 or reshape to 2-D",
                       a.ShapeString(), b.ShapeString());
  }
  const int64_t k = ta ? a.dim(0) : a.dim(1);
  const int64_t kb = tb ? b.dim(1) : b.dim(0);
  if (k != kb) {
    return KernelError(ctx, "inner dimensions differ: a is %s%s, b is %s%s; %s", a.ShapeString(),
                       ta ? " (transposed)" : "", b.ShapeString(), tb ? " (transposed)" : "",
                       MatMulHint(a, ta, b, tb, k));
  }
  Tensor out(a.dtype(), {ta ? a.dim(1) : a.dim(0), tb ? b.dim(0) : b.dim(1)});
  const bool ok = DispatchFloatInt(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, ComputeType<T>>) {
      MatMulTyped<T>(ctx, a, ta, b, tb, out);
    } else {
      MatMulViaFloat<T>(ctx, a, ta, b, tb, out);
    }
  });
  if (!ok)
    return UnsupportedDType(ctx, a.dtype(), "float16, bfloat16, float32, float64, int32, int64");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Float -> integer as x86's truncating conversions (what static_cast compiles to, and so what
// TF's CPU Cast produces): in-range values truncate toward zero; NaN and out-of-range values
// give the "integer indefinite" value (the lowest int32/int64), then narrow by wrapping.
template <typename To, typename F>
To FloatToInt(F f) {
  if constexpr (sizeof(To) == 8 || std::is_same_v<To, uint32_t>) {
    const bool in_range = f >= F(-9223372036854775808.0) && f < F(9223372036854775808.0);
    if constexpr (std::is_same_v<To, uint64_t>) {
      if (f >= F(0) && f < F(18446744073709551616.0)) return static_cast<uint64_t>(f);
    }
    const int64_t v = in_range ? static_cast<int64_t>(f) : std::numeric_limits<int64_t>::min();
    return static_cast<To>(v);
  } else {
    const bool in_range = f >= F(-2147483648.0) && f < F(2147483648.0);
    const int32_t v = in_range ? static_cast<int32_t>(f) : std::numeric_limits<int32_t>::min();
    return static_cast<To>(v);
  }
}

template <typename To, typename From>
To CastScalar(From from) {
  using C = ComputeType<From>;
  const C v = C(from);
  if constexpr (std::is_same_v<To, bool>) {
    return v != C(0);
  } else if constexpr (kIsInt<To> && kIsFloat<C>) {
    return FloatToInt<To>(v);
  } else if constexpr (std::is_same_v<To, half> || std::is_same_v<To, bfloat16>) {
    return To(static_cast<float>(v));
  } else {
    // int -> narrower int wraps (defined since C++20); int/bool -> float rounds.
    return static_cast<To>(v);
  }
}

absl::Status CastKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(DType dst, tf::GetTypeAttr(ctx.node(), "DstT"));
  Tensor out(dst, in.dims());
  bool dst_ok = true;
  const bool src_ok = DispatchNumeric(in.dtype(), [&](auto src_tag) {
    using From = decltype(src_tag);
    dst_ok = DispatchNumeric(dst, [&](auto dst_tag) {
      using To = decltype(dst_tag);
      const From* src = in.data<From>();
      To* dst_data = out.data<To>();
      ParallelFor(ctx, in.num_elements(), 2, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) dst_data[i] = CastScalar<To>(src[i]);
      });
    });
  });
  if (!src_ok || !dst_ok) {
    return KernelError(ctx, "cannot cast %s to %s: only numeric types and bool are supported",
                       in.ShapeString(), DTypeName(dst));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterMathKernels(KernelRegistry& registry) {
  RegisterCwiseKernels(registry);
  RegisterReductionKernels(registry);
  registry.Register("MatMul", &MatMulKernel);
  registry.Register("Cast", &CastKernel);
}

}  // namespace tfjit::runtime
