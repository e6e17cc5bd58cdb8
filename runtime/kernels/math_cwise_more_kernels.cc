// Elementwise kernels beyond the basic arithmetic of math_cwise_kernels.cc: rounding,
// trigonometry, Expm1/Log1p/Reciprocal, predicates, floor/truncating division and modulus, the
// *NoNan family, bitwise ops and shifts, AddN, ClipByValue and ApproximateEqual. Semantics
// follow TF's CPU functors (cwise_ops.h in TF).
#include <climits>
#include <cmath>
#include <limits>
#include <type_traits>

#include "frontend/attr.h"
#include "runtime/kernels/cwise_ops.h"

namespace tfjit::runtime {
namespace {

TFJIT_SCALAR_FN(CeilFn, std::ceil(x))
TFJIT_SCALAR_FN(RintFn, std::nearbyint(x))  // half to even under the default rounding mode
TFJIT_SCALAR_FN(SinFn, std::sin(x))
TFJIT_SCALAR_FN(CosFn, std::cos(x))
TFJIT_SCALAR_FN(TanFn, std::tan(x))
TFJIT_SCALAR_FN(AsinFn, std::asin(x))
TFJIT_SCALAR_FN(AcosFn, std::acos(x))
TFJIT_SCALAR_FN(AtanFn, std::atan(x))
TFJIT_SCALAR_FN(SinhFn, std::sinh(x))
TFJIT_SCALAR_FN(CoshFn, std::cosh(x))
TFJIT_SCALAR_FN(AsinhFn, std::asinh(x))
TFJIT_SCALAR_FN(AcoshFn, std::acosh(x))
TFJIT_SCALAR_FN(AtanhFn, std::atanh(x))
TFJIT_SCALAR_FN(Expm1Fn, std::expm1(x))
TFJIT_SCALAR_FN(Log1pFn, std::log1p(x))
TFJIT_SCALAR_FN(ReciprocalFn, C(1) / x)

// Round: half to even for floats (TF's round functor), the identity for integers.
struct RoundFn {
  template <typename C>
  C operator()(C x) const {
    if constexpr (kIsFloat<C>) return std::nearbyint(x);
    return x;
  }
};

// Sign: -1, 0 or 1; NaN stays NaN and -0 stays -0 (Eigen's sign for reals; XLA agrees).
struct SignFn {
  template <typename C>
  C operator()(C x) const {
    if constexpr (kIsFloat<C>) {
      if (std::isnan(x) || x == C(0)) return x;
    }
    if constexpr (std::is_signed_v<C>) {
      if (x < C(0)) return C(-1);
    }
    return x > C(0) ? C(1) : C(0);
  }
};

// Bitwise not of integers (the cast undoes the promotion of narrow types).
struct InvertFn {
  template <typename C>
  C operator()(C x) const {
    return static_cast<C>(~x);
  }
};

// IsNan / IsInf / IsFinite: floating-point input, bool output.
template <int kWhich>  // 0 IsNan, 1 IsInf, 2 IsFinite
absl::Status PredicateKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  Tensor out(DType::kBool, in.dims());
  const bool ok = DispatchFloat(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = in.data<T>();
    bool* dst = out.data<bool>();
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      const double v = static_cast<double>(static_cast<ComputeType<T>>(src[i]));
      dst[i] = kWhich == 0 ? std::isnan(v) : kWhich == 1 ? std::isinf(v) : std::isfinite(v);
    }
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Binary ops (BinaryKernel<Op>, cwise_ops.h). ----

// TF's safe_div/safe_mod family fails on any zero divisor of an integer type.
template <typename T>
const char* RejectZeroDivisor(const Tensor& rhs) {
  if constexpr (kIsInt<T>) {
    if (AnyElement<T>(rhs, [](T v) { return v == 0; })) return "Integer division by zero";
  }
  return "";
}
struct IntDivBase : BinaryBase {
  template <typename T>
  static const char* Validate(const Tensor& rhs) {
    return RejectZeroDivisor<T>(rhs);
  }
};

// Truncating integer quotient and remainder without UB: b == 0 is rejected by Validate (0
// here keeps the loop trap-free); lowest / -1 wraps to lowest and lowest % -1 is 0.
template <typename C>
C TruncQuot(C a, C b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<C>) {
    if (b == -1) return Wrapping(C(0), a, [](auto x, auto y) { return x - y; });
  }
  return static_cast<C>(a / b);
}
template <typename C>
C TruncRem(C a, C b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<C>) {
    if (b == -1) return 0;
  }
  return static_cast<C>(a % b);
}

struct FloorDivOp : IntDivBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsFloat<C>) {
      return std::floor(a / b);
    } else {
      const C q = TruncQuot(a, b);
      if constexpr (std::is_signed_v<C>) {
        // Round toward -inf: step down when inexact and the signs differ.
        if (TruncRem(a, b) != 0 && ((a < 0) != (b < 0))) return static_cast<C>(q - 1);
      }
      return q;
    }
  }
};
// The result takes the divisor's sign (Python's %): TF's floor_fmod / google_floor_mod.
struct FloorModOp : IntDivBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static C Apply(C a, C b) {
    C r;
    if constexpr (kIsFloat<C>) {
      r = std::fmod(a, b);
    } else {
      r = TruncRem(a, b);
    }
    if constexpr (std::is_signed_v<C> || kIsFloat<C>) {
      if (r != C(0) && ((r < C(0)) != (b < C(0)))) r = static_cast<C>(r + b);
    }
    return r;
  }
};
// Mod and TruncateMod: the remainder has the dividend's sign (C's % and fmod).
struct TruncateModOp : IntDivBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kIsFloat<C>) {
      return std::fmod(a, b);
    } else {
      return TruncRem(a, b);
    }
  }
};
// Integers, and (as TF registers from 2.16 on) floats: the quotient rounded toward zero.
struct TruncateDivOp : IntDivBase {
  static constexpr TypeSet kTypes = TypeSet::kReal;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
      return std::trunc(a / b);
    } else {
      return TruncQuot(a, b);
    }
  }
};
struct Atan2Op : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kFloat;
  template <typename C>
  static C Apply(C y, C x) {
    return std::atan2(y, x);
  }
};
struct DivNoNanOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kFloat;
  template <typename C>
  static C Apply(C a, C b) {
    return b == C(0) ? C(0) : a / b;
  }
};
struct MulNoNanOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kFloat;
  template <typename C>
  static C Apply(C a, C b) {
    return b == C(0) ? C(0) : a * b;
  }
};
template <char kOp>
struct BitwiseOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kInt;
  template <typename C>
  static C Apply(C a, C b) {
    if constexpr (kOp == '&') return static_cast<C>(a & b);
    if constexpr (kOp == '|') return static_cast<C>(a | b);
    return static_cast<C>(a ^ b);
  }
};
// Shifts clamp the amount to [0, bits - 1] as TF's functors do; left shifts run unsigned
// (no UB), right shifts of signed values are arithmetic.
template <bool kLeft>
struct ShiftOp : BinaryBase {
  static constexpr TypeSet kTypes = TypeSet::kInt;
  template <typename C>
  static C Apply(C a, C b) {
    constexpr C kMaxShift = static_cast<C>(sizeof(C) * CHAR_BIT - 1);
    const C n = b < C(0) ? C(0) : (b > kMaxShift ? kMaxShift : b);
    using U = std::make_unsigned_t<C>;
    if constexpr (kLeft) return static_cast<C>(static_cast<U>(static_cast<U>(a) << n));
    return static_cast<C>(a >> n);
  }
};

// ---- AddN and ClipByValue ----

// AddN: the sum of N same-shaped tensors, added left to right in ComputeType.
absl::Status AddNKernel(KernelContext& ctx) {
  const int n = ctx.num_inputs();
  if (n < 1) return KernelError(ctx, "AddN needs at least one input; got none");
  const Tensor& first = ctx.input(0);
  for (int i = 1; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != first.dtype() || t.dims() != first.dims()) {
      return KernelError(ctx,
                         "Inputs to AddN must have the same dtype and shape: input 0 is %s, "
                         "input %d is %s; broadcast or reshape them first",
                         first.ShapeString(), i, t.ShapeString());
    }
  }
  Tensor out(first.dtype(), first.dims());
  const bool ok = DispatchReal(first.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    T* dst = out.data<T>();
    ParallelFor(ctx, first.num_elements(), n, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        C acc = C(ctx.input(0).data<T>()[k]);
        for (int i = 1; i < n; ++i) {
          acc = Wrapping(acc, C(ctx.input(i).data<T>()[k]), [](auto x, auto y) { return x + y; });
        }
        dst[k] = static_cast<T>(acc);
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, first.dtype(), TypeSetName(TypeSet::kReal));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ClipByValue: min(max(t, lo), hi) where lo and hi are scalars or have t's shape.
absl::Status ClipByValueKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& t = ctx.input(0);
  const Tensor& lo = ctx.input(1);
  const Tensor& hi = ctx.input(2);
  for (const Tensor* bound : {&lo, &hi}) {
    if (bound->dtype() != t.dtype() || (bound->rank() != 0 && bound->dims() != t.dims())) {
      return KernelError(ctx,
                         "clip_value_min and clip_value_max must be either scalars or have the "
                         "same shape and dtype as t: t is %s, clip_value_min is %s, "
                         "clip_value_max is %s",
                         t.ShapeString(), lo.ShapeString(), hi.ShapeString());
    }
  }
  Tensor out(t.dtype(), t.dims());
  const bool ok = DispatchReal(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const int64_t lo_step = lo.rank() == 0 ? 0 : 1;
    const int64_t hi_step = hi.rank() == 0 ? 0 : 1;
    const T* x = t.data<T>();
    T* dst = out.data<T>();
    ParallelFor(ctx, t.num_elements(), 2, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const C h = C(hi.data<T>()[k * hi_step]);
        const C l = C(lo.data<T>()[k * lo_step]);
        C v = C(x[k]);
        v = h < v ? h : v;
        v = v < l ? l : v;
        dst[k] = static_cast<T>(v);
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, t.dtype(), TypeSetName(TypeSet::kReal));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ApproximateEqual: |x - y| < tolerance, computed in T (integers: tolerance truncated).
absl::Status ApproximateEqualKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.dims() != y.dims() || x.dtype() != y.dtype()) {
    return KernelError(ctx, "x and y must be of the same shape. x shape: %s y shape: %s",
                       x.ShapeString(), y.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(float tol, tf::GetFloatAttrOr(ctx.node(), "tolerance", 1e-5f));
  Tensor out(DType::kBool, x.dims());
  bool ok = DispatchReal(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const C t = C(static_cast<T>(tol));
    const T* a = x.data<T>();
    const T* b = y.data<T>();
    bool* z = out.data<bool>();
    ParallelFor(ctx, x.num_elements(), 3, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C d = C(static_cast<T>(Wrapping(C(a[i]), C(b[i]), [](auto p, auto q) { return p - q; })));
        if constexpr (std::is_signed_v<C> || kIsFloat<C>) {
          if (d < C(0)) d = static_cast<C>(Wrapping(C(0), d, [](auto p, auto q) { return p - q; }));
        }
        z[i] = d < t;
      }
    });
  });
  // Complex: |x - y| < tolerance, the modulus as TF's abs of a complex difference.
  ok = ok || DispatchComplex(x.dtype(), [&](auto tag) {
         using T = decltype(tag);
         const T* a = x.data<T>();
         const T* b = y.data<T>();
         bool* z = out.data<bool>();
         ParallelFor(ctx, x.num_elements(), 10, [&](int64_t begin, int64_t end) {
           for (int64_t i = begin; i < end; ++i) z[i] = std::abs(a[i] - b[i]) < tol;
         });
       });
  if (!ok) return UnsupportedDType(ctx, x.dtype(), "number types");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterMathCwiseMoreKernels(KernelRegistry& registry) {
  registry.Register("Ceil", &UnaryKernel<FloatUnary<CeilFn>>);
  registry.Register("Rint", &UnaryKernel<FloatUnary<RintFn>>);
  registry.Register("Round", &UnaryKernel<ScalarUnary<TypeSet::kReal, RoundFn>>);
  registry.Register("Sign", &UnaryKernel<ScalarUnary<TypeSet::kReal, SignFn>>);
  registry.Register("Sin", &UnaryKernel<FloatUnary<SinFn>>);
  registry.Register("Cos", &UnaryKernel<FloatUnary<CosFn>>);
  registry.Register("Tan", &UnaryKernel<FloatUnary<TanFn>>);
  registry.Register("Asin", &UnaryKernel<FloatUnary<AsinFn>>);
  registry.Register("Acos", &UnaryKernel<FloatUnary<AcosFn>>);
  registry.Register("Atan", &UnaryKernel<FloatUnary<AtanFn>>);
  registry.Register("Sinh", &UnaryKernel<FloatUnary<SinhFn>>);
  registry.Register("Cosh", &UnaryKernel<FloatUnary<CoshFn>>);
  registry.Register("Asinh", &UnaryKernel<FloatUnary<AsinhFn>>);
  registry.Register("Acosh", &UnaryKernel<FloatUnary<AcoshFn>>);
  registry.Register("Atanh", &UnaryKernel<FloatUnary<AtanhFn>>);
  registry.Register("Expm1", &UnaryKernel<FloatUnary<Expm1Fn>>);
  registry.Register("Log1p", &UnaryKernel<FloatUnary<Log1pFn>>);
  registry.Register("Reciprocal", &UnaryKernel<FloatUnary<ReciprocalFn>>);
  registry.Register("Inv", &UnaryKernel<FloatUnary<ReciprocalFn>>);
  registry.Register("Invert", &UnaryKernel<ScalarUnary<TypeSet::kInt, InvertFn>>);
  registry.Register("IsNan", &PredicateKernel<0>);
  registry.Register("IsInf", &PredicateKernel<1>);
  registry.Register("IsFinite", &PredicateKernel<2>);
  registry.Register("FloorDiv", &BinaryKernel<FloorDivOp>);
  registry.Register("FloorMod", &BinaryKernel<FloorModOp>);
  registry.Register("Mod", &BinaryKernel<TruncateModOp>);
  registry.Register("TruncateMod", &BinaryKernel<TruncateModOp>);
  registry.Register("TruncateDiv", &BinaryKernel<TruncateDivOp>);
  registry.Register("Atan2", &BinaryKernel<Atan2Op>);
  registry.Register("DivNoNan", &BinaryKernel<DivNoNanOp>);
  registry.Register("MulNoNan", &BinaryKernel<MulNoNanOp>);
  registry.Register("BitwiseAnd", &BinaryKernel<BitwiseOp<'&'>>);
  registry.Register("BitwiseOr", &BinaryKernel<BitwiseOp<'|'>>);
  registry.Register("BitwiseXor", &BinaryKernel<BitwiseOp<'^'>>);
  registry.Register("LeftShift", &BinaryKernel<ShiftOp<true>>);
  registry.Register("RightShift", &BinaryKernel<ShiftOp<false>>);
  registry.Register("AddN", &AddNKernel);
  registry.Register("ClipByValue", &ClipByValueKernel);
  registry.Register("ApproximateEqual", &ApproximateEqualKernel);
}

}  // namespace tfjit::runtime
