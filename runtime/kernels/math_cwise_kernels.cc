// Elementwise math kernels: unary (Neg, Abs, Exp, Log, Tanh, Sigmoid, Sqrt, Rsqrt, Square,
// Floor), binary with broadcasting (Add..Pow, comparisons) and Select/SelectV2.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/cwise_ops.h"

namespace tfjit::runtime {
namespace {

// ---- Unary ops: Apply maps an Eigen array expression. ----
struct NegOp {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename X>
  static auto Apply(const X& x) {
    return -x;
  }
};
struct AbsOp {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename X>
  static auto Apply(const X& x) {
    return x.abs();
  }
};
struct ExpOp {
  static constexpr TypeSet kTypes = TypeSet::kFloat;
  template <typename X>
  static auto Apply(const X& x) {
    return x.exp();
  }
};
struct LogOp {
  static constexpr TypeSet kTypes = TypeSet::kFloat;
  template <typename X>
  static auto Apply(const X& x) {
    return x.log();
  }
};
struct TanhOp {
  static constexpr TypeSet kTypes = TypeSet::kFloat;
  template <typename X>
  static auto Apply(const X& x) {
    return x.tanh();
  }
};
struct SigmoidOp {
  static constexpr TypeSet kTypes = TypeSet::kFloat;
  // 1 / (1 + e^-x): e^-x overflows to inf for very negative x, giving exactly 0, never NaN.
  template <typename X>
  static auto Apply(const X& x) {
    return ((-x).exp() + 1).inverse();
  }
};
// Sqrt and Rsqrt use the exact per-element square root: Eigen 3.4's vectorised sqrt under its
// default EIGEN_FAST_MATH (rsqrt estimate + Newton step) gives NaN for +inf, where TF gives
// sqrt(inf) = inf and rsqrt(inf) = 0 (found by the NaN/Inf graphs of hostile_input_test).
struct SqrtOp {
  static constexpr TypeSet kTypes = TypeSet::kFloat;
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return x.unaryExpr([](T v) { return Eigen::numext::sqrt(v); });
  }
};
struct RsqrtOp {
  static constexpr TypeSet kTypes = TypeSet::kFloat;
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return x.unaryExpr([](T v) { return T(1) / Eigen::numext::sqrt(v); });
  }
};
struct SquareOp {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename X>
  static auto Apply(const X& x) {
    return x.square();
  }
};
struct FloorOp {
  static constexpr TypeSet kTypes = TypeSet::kFloat;
  template <typename X>
  static auto Apply(const X& x) {
    return x.floor();
  }
};

// ---- Binary ops: Apply combines two ComputeType scalars. ----
struct AddOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static C Apply(C a, C b) {
    return Wrapping(a, b, [](auto x, auto y) { return x + y; });
  }
};
struct SubOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static C Apply(C a, C b) {
    return Wrapping(a, b, [](auto x, auto y) { return x - y; });
  }
};
struct MulOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static C Apply(C a, C b) {
    return Wrapping(a, b, [](auto x, auto y) { return x * y; });
  }
};
struct RealDivOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kFloat;
  template <typename C>
  static C Apply(C a, C b) {
    return a / b;
  }
};

// TF's Div: true division for floats; for integers C's truncating division (TF's safe_div
// functor), with division by zero an error.
struct DivOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename T>
  static const char* Validate(const Tensor& rhs) {
    if constexpr (kIsInt<T>) {
      if (AnyElement<T>(rhs, [](T v) { return v == 0; })) return "Integer division by zero";
    }
    return "";
  }
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsInt<C>) {
      if (b == 0) return 0;  // rejected by Validate; keeps the loop trap-free
      // lowest / -1 overflows (and traps on x86): wrap like TF's result.
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return Wrapping(C(0), a, [](auto x, auto y) { return x - y; });
      }
    }
    return a / b;
  }
};
// NaN-propagating, as TF's maximum/minimum functors (Eigen::PropagateNaN).
struct MaximumOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsFloat<C>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    }
    return a > b ? a : b;
  }
};
struct MinimumOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsFloat<C>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    }
    return a < b ? a : b;
  }
};
struct SquaredDifferenceOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kFloatInt;
  template <typename C>
  static C Apply(C a, C b) {
    const C d = Wrapping(a, b, [](auto x, auto y) { return x - y; });
    return Wrapping(d, d, [](auto x, auto y) { return x * y; });
  }
};
// Integer Pow is exact repeated squaring; negative integer exponents are an error as in TF.
struct PowOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kFloatInt;
  template <typename T>
  static const char* Validate(const Tensor& rhs) {
    if constexpr (kIsInt<T>) {
      if (AnyElement<T>(rhs, [](T v) { return v < 0; })) {
        return "Integers to negative integer powers are not allowed";
      }
    }
    return "";
  }
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsInt<C>) {
      C result = 1;
      while (b > 0) {
        if (b & 1) result = Wrapping(result, a, [](auto x, auto y) { return x * y; });
        a = Wrapping(a, a, [](auto x, auto y) { return x * y; });
        b >>= 1;
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
};

struct LessOp : CompareBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static bool Apply(C a, C b) {
    return a < b;
  }
};
struct LessEqualOp : CompareBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static bool Apply(C a, C b) {
    return a <= b;
  }
};
struct GreaterOp : CompareBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static bool Apply(C a, C b) {
    return a > b;
  }
};
struct GreaterEqualOp : CompareBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static bool Apply(C a, C b) {
    return a >= b;
  }
};
struct EqualOp : CompareBase {
  static constexpr TypeSet kTypes = TypeSet::kAll;
  template <typename C>
  static bool Apply(C a, C b) {
    return a == b;
  }
};
struct NotEqualOp : CompareBase {
  static constexpr TypeSet kTypes = TypeSet::kAll;
  template <typename C>
  static bool Apply(C a, C b) {
    return a != b;
  }
};
// LogicalAnd/LogicalOr: the catalog admits bool inputs only (loop conditions of TF2 While).
struct LogicalAndOp : CompareBase {
  static constexpr TypeSet kTypes = TypeSet::kAll;
  template <typename C>
  static bool Apply(C a, C b) {
    return a != C(0) && b != C(0);
  }
};
struct LogicalOrOp : CompareBase {
  static constexpr TypeSet kTypes = TypeSet::kAll;
  template <typename C>
  static bool Apply(C a, C b) {
    return a != C(0) || b != C(0);
  }
};

absl::Status LogicalNotKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  if (in.dtype() != DType::kBool) return UnsupportedDType(ctx, in.dtype(), "bool");
  Tensor out(DType::kBool, in.dims());
  for (int64_t i = 0; i < in.num_elements(); ++i) out.data<bool>()[i] = !in.data<bool>()[i];
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// out[i] = cond[i] ? t[i] : e[i] over a 3-operand broadcast plan, copying raw elements.
template <typename W>
void SelectLoop(const KernelContext& ctx, const BroadcastPlan& plan, const bool* cond, const W* t,
                const W* e, W* out) {
  ParallelFor(ctx, plan.num_elements, 2, [&](int64_t begin, int64_t end) {
    ForEachRun(plan, begin, end, [&](int64_t o, const int64_t* off, int64_t len) {
      for (int64_t j = 0; j < len; ++j) {
        const bool c = cond[off[0] + j * plan.inner_stride(0)];
        out[o + j] =
            c ? t[off[1] + j * plan.inner_stride(1)] : e[off[2] + j * plan.inner_stride(2)];
      }
    });
  });
}

absl::Status RunSelect(KernelContext& ctx, const std::vector<int64_t>& cond_dims) {
  const Tensor& cond = ctx.input(0);
  const Tensor& t = ctx.input(1);
  const Tensor& e = ctx.input(2);
  if (cond.dtype() != DType::kBool) {
    return KernelError(ctx, "condition must be bool, got %s", cond.ShapeString());
  }
  if (t.dtype() != e.dtype()) {
    return KernelError(ctx, "t and e have different dtypes: t is %s, e is %s", t.ShapeString(),
                       e.ShapeString());
  }
  std::optional<BroadcastPlan> plan = MakeBroadcastPlan({cond_dims, t.dims(), e.dims()});
  if (!plan.has_value()) {
    return KernelError(ctx,
                       "condition, t and e cannot be broadcast together: condition is %s, "
                       "t is %s, e is %s",
                       cond.ShapeString(), t.ShapeString(), e.ShapeString());
  }
  Tensor out(t.dtype(), plan->out_dims);
  const bool ok = DispatchByWidth(t.dtype(), [&](auto tag) {
    using W = decltype(tag);
    SelectLoop<W>(ctx, *plan, cond.data<bool>(), t.data<W>(), e.data<W>(), out.data<W>());
  });
  if (!ok) return UnsupportedDType(ctx, t.dtype(), "numeric types and bool");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Select (v1): condition has t's shape, is a scalar, or is a vector selecting rows of t.
absl::Status SelectKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& cond = ctx.input(0);
  const Tensor& t = ctx.input(1);
  const Tensor& e = ctx.input(2);
  if (t.dims() != e.dims()) {
    return KernelError(ctx,
                       "t and e must have the same shape: t is %s, e is %s; use SelectV2 "
                       "for broadcasting",
                       t.ShapeString(), e.ShapeString());
  }
  if (cond.dims() == t.dims() || cond.rank() == 0) return RunSelect(ctx, cond.dims());
  if (cond.rank() == 1 && t.rank() >= 1 && cond.dim(0) == t.dim(0)) {
    // A row selector: view the condition as [n, 1, ..., 1] so it broadcasts over each row.
    std::vector<int64_t> dims(static_cast<size_t>(t.rank()), 1);
    dims[0] = cond.dim(0);
    return RunSelect(ctx, dims);
  }
  return KernelError(ctx,
                     "condition must be a scalar, have t's shape, or be a vector of t's "
                     "first dimension: condition is %s, t is %s",
                     cond.ShapeString(), t.ShapeString());
}

absl::Status SelectV2Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  return RunSelect(ctx, ctx.input(0).dims());
}

}  // namespace

void RegisterMathCwiseKernels(KernelRegistry& registry) {
  registry.Register("Neg", &UnaryKernel<NegOp>);
  registry.Register("Abs", &UnaryKernel<AbsOp>);
  registry.Register("Exp", &UnaryKernel<ExpOp>);
  registry.Register("Log", &UnaryKernel<LogOp>);
  registry.Register("Tanh", &UnaryKernel<TanhOp>);
  registry.Register("Sigmoid", &UnaryKernel<SigmoidOp>);
  registry.Register("Sqrt", &UnaryKernel<SqrtOp>);
  registry.Register("Rsqrt", &UnaryKernel<RsqrtOp>);
  registry.Register("Square", &UnaryKernel<SquareOp>);
  registry.Register("Floor", &UnaryKernel<FloorOp>);
  registry.Register("Add", &BinaryKernel<AddOp>);
  registry.Register("AddV2", &BinaryKernel<AddOp>);
  registry.Register("Sub", &BinaryKernel<SubOp>);
  registry.Register("Mul", &BinaryKernel<MulOp>);
  registry.Register("RealDiv", &BinaryKernel<RealDivOp>);
  registry.Register("Div", &BinaryKernel<DivOp>);
  registry.Register("Maximum", &BinaryKernel<MaximumOp>);
  registry.Register("Minimum", &BinaryKernel<MinimumOp>);
  registry.Register("SquaredDifference", &BinaryKernel<SquaredDifferenceOp>);
  registry.Register("Pow", &BinaryKernel<PowOp>);
  registry.Register("Less", &BinaryKernel<LessOp>);
  registry.Register("LessEqual", &BinaryKernel<LessEqualOp>);
  registry.Register("Greater", &BinaryKernel<GreaterOp>);
  registry.Register("GreaterEqual", &BinaryKernel<GreaterEqualOp>);
  registry.Register("Equal", &BinaryKernel<EqualOp>);
  registry.Register("NotEqual", &BinaryKernel<NotEqualOp>);
  registry.Register("LogicalAnd", &BinaryKernel<LogicalAndOp>);
  registry.Register("LogicalOr", &BinaryKernel<LogicalOrOp>);
  registry.Register("LogicalNot", &LogicalNotKernel);
  registry.Register("Select", &SelectKernel);
  registry.Register("SelectV2", &SelectV2Kernel);
}

}  // namespace tfjit::runtime
