// The elementwise kernel templates shared by the math_cwise, special and nn kernels:
// dtype sets mirroring TF's registrations, UnaryKernel<Op> over Eigen arrays and
// BinaryKernel<Op> over a broadcast plan (with per-op right-hand-side validation).
#ifndef TFJIT_RUNTIME_KERNELS_CWISE_OPS_H_
#define TFJIT_RUNTIME_KERNELS_CWISE_OPS_H_

#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "runtime/kernels/cwise.h"

namespace tfjit::runtime {

// Which dtypes an op accepts, mirroring TF's kernel registrations.
enum class TypeSet { kFloat, kFloatInt, kReal, kAll, kInt };

inline const char* TypeSetName(TypeSet s) {
  switch (s) {
    case TypeSet::kFloat:
      return "float16, bfloat16, float32, float64";
    case TypeSet::kFloatInt:
      return "float16, bfloat16, float32, float64, int32, int64";
    case TypeSet::kReal:
      return "floating-point and integer types";
    case TypeSet::kAll:
      return "numeric types and bool";
    case TypeSet::kInt:
      return "integer types";
  }
  return "";
}

// Integer types only (bitwise ops, TruncateDiv): DispatchReal's integers, without
// instantiating `f` for floating-point types.
template <typename F>
bool DispatchInt(DType dtype, F&& f) {
  if (!IsIntegerDType(dtype)) return false;
  return DispatchReal(dtype, [&](auto tag) {
    if constexpr (kIsInt<decltype(tag)>) f(tag);
  });
}

template <TypeSet S, typename F>
bool DispatchSet(DType dtype, F&& f) {
  if constexpr (S == TypeSet::kFloat) return DispatchFloat(dtype, std::forward<F>(f));
  if constexpr (S == TypeSet::kFloatInt) return DispatchFloatInt(dtype, std::forward<F>(f));
  if constexpr (S == TypeSet::kReal) return DispatchReal(dtype, std::forward<F>(f));
  if constexpr (S == TypeSet::kAll) return DispatchNumeric(dtype, std::forward<F>(f));
  if constexpr (S == TypeSet::kInt) return DispatchInt(dtype, std::forward<F>(f));
}

// Signed overflow wraps (as TF's CPU kernels do in practice) without undefined behaviour.
// Types narrower than unsigned int compute in unsigned int: uint16 * uint16 would otherwise
// promote to (signed) int and overflow.
template <typename C, typename Fn>
C Wrapping(C a, C b, Fn fn) {
  if constexpr (kIsInt<C>) {
    using U = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
    return static_cast<C>(static_cast<U>(fn(static_cast<U>(a), static_cast<U>(b))));
  } else {
    return fn(a, b);
  }
}

// True when any element of the (integer) tensor satisfies pred.
template <typename T, typename Pred>
bool AnyElement(const Tensor& t, Pred pred) {
  const T* p = t.data<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (pred(p[i])) return true;
  }
  return false;
}

// Unary ops provide kTypes and Apply(x) mapping an Eigen array expression of ComputeType.
template <typename Op>
absl::Status UnaryKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  Tensor out(in.dtype(), in.dims());
  const bool ok = DispatchSet<Op::kTypes>(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    MapUnary<T>(ctx, in, out, 8, [](const auto& x) { return Op::Apply(x); });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(Op::kTypes));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// TFJIT_SCALAR_FN(Name, expr): a scalar functor Name whose operator()(C x) returns expr.
#define TFJIT_SCALAR_FN(Name, expr) \
  struct Name {                     \
    template <typename C>           \
    C operator()(C x) const {       \
      return expr;                  \
    }                               \
  };

// A unary op of a scalar functor F (applied in ComputeType) over the dtypes of S; FloatUnary
// over the floating-point types.
template <TypeSet S, typename F>
struct ScalarUnary {
  static constexpr TypeSet kTypes = S;
  template <typename X>
  static auto Apply(const X& x) {
    return x.unaryExpr(F{});
  }
};
template <typename F>
using FloatUnary = ScalarUnary<TypeSet::kFloat, F>;

// Binary ops: Apply combines two ComputeType scalars.
// Validate<T>(rhs) returns an error message for right-hand values TF rejects, or "".
struct BinaryBase {
  static constexpr bool kBoolOutput = false;
  template <typename T>
  static const char* Validate(const Tensor&) {
    return "";
  }
};
struct CompareBase : BinaryBase {
  static constexpr bool kBoolOutput = true;
};

// The broadcast plan of two operands, or TF's "Incompatible shapes" error with a hint.
inline absl::StatusOr<BroadcastPlan> BinaryPlan(const KernelContext& ctx, const Tensor& a,
                                                const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    return KernelError(ctx, "operands have different dtypes: x is %s, y is %s; add a Cast",
                       a.ShapeString(), b.ShapeString());
  }
  std::optional<BroadcastPlan> plan = MakeBroadcastPlan({a.dims(), b.dims()});
  if (!plan.has_value()) {
    return KernelError(ctx,
                       "Incompatible shapes: x is %s, y is %s; aligned from the right, each "
                       "dimension pair must be equal or one of them 1",
                       a.ShapeString(), b.ShapeString());
  }
  return *std::move(plan);
}

template <typename Op>
absl::Status BinaryKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(BroadcastPlan plan, BinaryPlan(ctx, a, b));
  Tensor out(Op::kBoolOutput ? DType::kBool : a.dtype(), plan.out_dims);
  absl::Status status;
  const bool ok = DispatchSet<Op::kTypes>(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Out = std::conditional_t<Op::kBoolOutput, bool, T>;
    const char* invalid = plan.num_elements > 0 ? Op::template Validate<T>(b) : "";
    if (*invalid != '\0') {
      status = KernelError(ctx, "%s (x is %s, y is %s)", invalid, a.ShapeString(), b.ShapeString());
      return;
    }
    MapBinary<T, Out>(ctx, plan, a.data<T>(), b.data<T>(), out.data<Out>(),
                      [](auto x, auto y) { return Op::Apply(x, y); });
  });
  if (!ok) return UnsupportedDType(ctx, a.dtype(), TypeSetName(Op::kTypes));
  TFJIT_RETURN_IF_ERROR(status);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_KERNELS_CWISE_OPS_H_
