// Evaluator: elementwise unary/binary math, compare, select, clamp, convert, bitcast-convert
// and is-finite, with the edge cases of HLO.md (integer wrap, x/0, NaN rules, saturation).
#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/evaluator/evaluator_internal.h"
#include "core/status.h"

namespace tfjit::hlo::eval {
namespace {

// ---- Integer helpers: arithmetic through the unsigned type so that overflow wraps. ----
template <typename T>
T WrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
T WrapSub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename T>
T WrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // Promote to at least unsigned int so that u16*u16 does not overflow a signed int.
  using P = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(
      static_cast<U>(static_cast<P>(static_cast<U>(a)) * static_cast<P>(static_cast<U>(b))));
}

template <typename T>
T IntDivide(T a, T b) {
  if (b == 0) return static_cast<T>(-1);  // -1 signed, all ones unsigned: no trap
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) return a;
  }
  return static_cast<T>(a / b);
}

template <typename T>
T IntRemainder(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;  // INT_MIN % -1 would trap
  }
  return static_cast<T>(a % b);
}

template <typename T>
T IntPower(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  T result = 1;
  using U = std::make_unsigned_t<T>;
  U e = static_cast<U>(exp);
  while (e != 0) {
    if (e & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    e >>= 1;
  }
  return result;
}

template <typename T>
T IntShift(Opcode op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  using S = std::make_signed_t<T>;
  constexpr U kBits = sizeof(T) * 8;
  const U amount = static_cast<U>(b);  // negative amounts are huge: treated as >= width
  switch (op) {
    case Opcode::kShiftLeft:
      return amount >= kBits ? T(0) : static_cast<T>(static_cast<U>(static_cast<U>(a) << amount));
    case Opcode::kShiftRightLogical:
      return amount >= kBits ? T(0) : static_cast<T>(static_cast<U>(a) >> amount);
    default: {
      const S s = static_cast<S>(a);
      if (amount >= kBits) return static_cast<T>(s < 0 ? S(-1) : S(0));
      return static_cast<T>(static_cast<S>(s >> amount));
    }
  }
}

template <typename T>
T IntBinary(Opcode op, T a, T b) {
  switch (op) {
    case Opcode::kAdd:
      return WrapAdd(a, b);
    case Opcode::kSubtract:
      return WrapSub(a, b);
    case Opcode::kMultiply:
      return WrapMul(a, b);
    case Opcode::kDivide:
      return IntDivide(a, b);
    case Opcode::kRemainder:
      return IntRemainder(a, b);
    case Opcode::kMaximum:
      return a > b ? a : b;
    case Opcode::kMinimum:
      return a < b ? a : b;
    case Opcode::kPower:
      return IntPower(a, b);
    case Opcode::kAnd:
      return static_cast<T>(a & b);
    case Opcode::kOr:
      return static_cast<T>(a | b);
    case Opcode::kXor:
      return static_cast<T>(a ^ b);
    case Opcode::kAtan2:
      return static_cast<T>(std::atan2(static_cast<double>(a), static_cast<double>(b)));
    default:
      return IntShift(op, a, b);
  }
}

// pred arithmetic: add/or = logical or, multiply/and = logical and, the rest as 0/1 integers.
bool BoolBinary(Opcode op, bool a, bool b) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kOr:
    case Opcode::kMaximum:
      return a || b;
    case Opcode::kMultiply:
    case Opcode::kAnd:
    case Opcode::kMinimum:
      return a && b;
    case Opcode::kXor:
    case Opcode::kSubtract:
      return a != b;
    default:
      return IntBinary<uint8_t>(op, a, b) != 0;
  }
}

template <typename C>
C FloatBinary(Opcode op, C a, C b) {
  switch (op) {
    case Opcode::kAdd:
      return a + b;
    case Opcode::kSubtract:
      return a - b;
    case Opcode::kMultiply:
      return a * b;
    case Opcode::kDivide:
      return a / b;
    case Opcode::kRemainder:
      return std::fmod(a, b);
    case Opcode::kMaximum:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
      return a > b ? a : b;
    case Opcode::kMinimum:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
      return a < b ? a : b;
    case Opcode::kPower:
      return std::pow(a, b);
    case Opcode::kAtan2:
      return std::atan2(a, b);
    default:
      return std::numeric_limits<C>::quiet_NaN();  // rejected before the loop
  }
}

template <typename T>
T BinaryScalar(Opcode op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return BoolBinary(op, a, b);
  } else if constexpr (kIsFloat<T>) {
    using C = ComputeT<T>;
    return static_cast<T>(FloatBinary<C>(op, static_cast<C>(a), static_cast<C>(b)));
  } else {
    return IntBinary<T>(op, a, b);
  }
}

bool IsBitwise(Opcode op) {
  return op == Opcode::kAnd || op == Opcode::kOr || op == Opcode::kXor || op == Opcode::kNot ||
         op == Opcode::kShiftLeft || op == Opcode::kShiftRightLogical ||
         op == Opcode::kShiftRightArithmetic;
}

template <typename C>
C FloatUnary(Opcode op, C x) {
  switch (op) {
    case Opcode::kAbs:
      return std::fabs(x);
    case Opcode::kNegate:
      return -x;
    case Opcode::kSign:
      if (std::isnan(x) || x == C(0)) return x;
      return x < C(0) ? C(-1) : C(1);
    case Opcode::kFloor:
      return std::floor(x);
    case Opcode::kCeil:
      return std::ceil(x);
    case Opcode::kRoundNearestAfz:
      return std::round(x);
    case Opcode::kRoundNearestEven:
      return std::nearbyint(x);
    case Opcode::kExp:
      return std::exp(x);
    case Opcode::kExpm1:
      return std::expm1(x);
    case Opcode::kLog:
      return std::log(x);
    case Opcode::kLog1p:
      return std::log1p(x);
    case Opcode::kSqrt:
      return std::sqrt(x);
    case Opcode::kRsqrt:
      return C(1) / std::sqrt(x);
    case Opcode::kCbrt:
      return std::cbrt(x);
    case Opcode::kTanh:
      return std::tanh(x);
    case Opcode::kLogistic:
      return C(1) / (C(1) + std::exp(-x));
    case Opcode::kSine:
      return std::sin(x);
    case Opcode::kCosine:
      return std::cos(x);
    case Opcode::kTan:
      return std::tan(x);
    case Opcode::kErf:
      return std::erf(x);
    default:
      return std::numeric_limits<C>::quiet_NaN();  // rejected before the loop
  }
}

template <typename T>
T IntUnary(Opcode op, T x) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case Opcode::kAbs:
      if constexpr (std::is_signed_v<T>) {
        return x < 0 ? static_cast<T>(static_cast<U>(0) - static_cast<U>(x)) : x;  // MIN stays
      } else {
        return x;
      }
    case Opcode::kNegate:
      return static_cast<T>(static_cast<U>(0) - static_cast<U>(x));
    case Opcode::kSign:
      if constexpr (std::is_signed_v<T>)
        return x < 0 ? T(-1) : (x > 0 ? T(1) : T(0));
      else
        return x > 0 ? T(1) : T(0);
    case Opcode::kNot:
      return static_cast<T>(~x);
    default:
      return x;  // floor/ceil/round of an integer is itself
  }
}

template <typename T>
T UnaryScalar(Opcode op, T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return op == Opcode::kNot ? !x : x;
  } else if constexpr (kIsFloat<T>) {
    using C = ComputeT<T>;
    return static_cast<T>(FloatUnary<C>(op, static_cast<C>(x)));
  } else {
    return IntUnary<T>(op, x);
  }
}

bool FloatOnlyUnary(Opcode op) {
  switch (op) {
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kCbrt:
    case Opcode::kTanh:
    case Opcode::kLogistic:
    case Opcode::kSine:
    case Opcode::kCosine:
    case Opcode::kTan:
    case Opcode::kErf:
      return true;
    default:
      return false;
  }
}

template <typename T>
bool CompareScalar(ComparisonDirection dir, T a, T b) {
  using C = ComputeT<T>;
  const C x = static_cast<C>(a), y = static_cast<C>(b);
  switch (dir) {
    case ComparisonDirection::kEq:
      return x == y;
    case ComparisonDirection::kNe:
      return x != y;  // true for NaN, as IEEE says
    case ComparisonDirection::kLt:
      return x < y;
    case ComparisonDirection::kLe:
      return x <= y;
    case ComparisonDirection::kGt:
      return x > y;
    case ComparisonDirection::kGe:
      return x >= y;
  }
  return false;
}

// float -> integer: NaN -> 0, saturating at the target's range (HLO.md convert).
template <typename To>
To FloatToInt(double v) {
  if (std::isnan(v)) return To(0);
  constexpr double kMax = static_cast<double>(std::numeric_limits<To>::max());
  constexpr double kMin = static_cast<double>(std::numeric_limits<To>::min());
  if (v >= kMax) return std::numeric_limits<To>::max();
  if (v <= kMin) return std::numeric_limits<To>::min();
  return static_cast<To>(v);
}

template <typename To, typename From>
To ConvertScalar(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<ComputeT<From>>(x) != static_cast<ComputeT<From>>(0);
  } else if constexpr (kIsFloat<From> && !kIsFloat<To>) {
    return FloatToInt<To>(static_cast<double>(static_cast<ComputeT<From>>(x)));
  } else if constexpr (kIsHalfLike<To> || kIsHalfLike<From>) {
    // Eigen's half/bfloat16 convert through float with round-to-nearest-even.
    return static_cast<To>(static_cast<float>(x));
  } else {
    return static_cast<To>(x);  // int->int wraps (C++20), int/float->float rounds to even
  }
}

absl::Status CheckSameShapes(const Instruction& inst, const Operands& ops) {
  for (const Literal* op : ops) {
    if (op->shape().dims() != inst.shape().dims()) {
      return InvalidArgument("%s: operand shape %s does not match result %s", inst.name(),
                             op->shape().ToString(), inst.shape().ToString());
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyBinary(Opcode opcode, DType dtype, const void* a, const void* b, void* out,
                         int64_t n) {
  if (IsBitwise(opcode) && (dtype == DType::kFloat16 || dtype == DType::kBFloat16 ||
                            dtype == DType::kFloat32 || dtype == DType::kFloat64)) {
    return InvalidArgument("%s is not defined on %s", OpcodeName(opcode), DTypeHloName(dtype));
  }
  const bool ok = DispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a);
    const T* y = static_cast<const T*>(b);
    T* z = static_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) z[i] = BinaryScalar<T>(opcode, x[i], y[i]);
  });
  if (!ok) return InvalidArgument("binary %s on non-numeric type", OpcodeName(opcode));
  return absl::OkStatus();
}

absl::StatusOr<Literal> EvalBinary(const Instruction& inst, const Operands& ops) {
  TFJIT_RETURN_IF_ERROR(CheckSameShapes(inst, ops));
  Literal out(inst.shape());
  TFJIT_RETURN_IF_ERROR(ApplyBinary(inst.opcode(), inst.shape().element_type(),
                                    ops[0]->tensor().raw_data(), ops[1]->tensor().raw_data(),
                                    out.mutable_tensor().raw_data(), inst.shape().num_elements()));
  return out;
}

absl::StatusOr<Literal> EvalUnary(const Instruction& inst, const Operands& ops) {
  TFJIT_RETURN_IF_ERROR(CheckSameShapes(inst, ops));
  const DType dtype = inst.shape().element_type();
  const Opcode op = inst.opcode();
  if ((FloatOnlyUnary(op) && !IsFloatingDType(dtype)) ||
      (op == Opcode::kNot && IsFloatingDType(dtype))) {
    return InvalidArgument("%s: %s is not defined on %s", inst.name(), OpcodeName(op),
                           DTypeHloName(dtype));
  }
  Literal out(inst.shape());
  const int64_t n = inst.shape().num_elements();
  DispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = ops[0]->data<T>();
    T* z = out.data<T>();
    for (int64_t i = 0; i < n; ++i) z[i] = UnaryScalar<T>(op, x[i]);
  });
  return out;
}

absl::StatusOr<Literal> EvalCompare(const Instruction& inst, const Operands& ops) {
  TFJIT_RETURN_IF_ERROR(CheckSameShapes(inst, ops));
  Literal out(inst.shape());
  const int64_t n = inst.shape().num_elements();
  const ComparisonDirection dir = inst.attrs().comparison;
  DispatchNumeric(ops[0]->shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = ops[0]->data<T>();
    const T* y = ops[1]->data<T>();
    bool* z = out.data<bool>();
    for (int64_t i = 0; i < n; ++i) z[i] = CompareScalar<T>(dir, x[i], y[i]);
  });
  return out;
}

absl::StatusOr<Literal> EvalSelect(const Instruction& inst, const Operands& ops) {
  Literal out(inst.shape());
  const int64_t n = inst.shape().num_elements();
  const int64_t bytes = ElementBytes(out);
  const bool scalar_pred = ops[0]->shape().IsScalar();
  const bool* pred = ops[0]->data<bool>();
  for (int64_t i = 0; i < n; ++i) {
    const Literal* src = pred[scalar_pred ? 0 : i] ? ops[1] : ops[2];
    std::memcpy(MutableElementPtr(out, i), ElementPtr(*src, i), static_cast<size_t>(bytes));
  }
  return out;
}

// clamp(lo, x, hi) = min(max(x, lo), hi) with the NaN-propagating max/min; lo/hi may be scalars.
absl::StatusOr<Literal> EvalClamp(const Instruction& inst, const Operands& ops) {
  Literal out(inst.shape());
  const int64_t n = inst.shape().num_elements();
  const bool lo_scalar = ops[0]->shape().IsScalar(), hi_scalar = ops[2]->shape().IsScalar();
  DispatchNumeric(inst.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* lo = ops[0]->data<T>();
    const T* x = ops[1]->data<T>();
    const T* hi = ops[2]->data<T>();
    T* z = out.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const T m = BinaryScalar<T>(Opcode::kMaximum, x[i], lo[lo_scalar ? 0 : i]);
      z[i] = BinaryScalar<T>(Opcode::kMinimum, m, hi[hi_scalar ? 0 : i]);
    }
  });
  return out;
}

absl::StatusOr<Literal> EvalConvert(const Instruction& inst, const Operands& ops) {
  Literal out(inst.shape());
  const int64_t n = inst.shape().num_elements();
  DispatchNumeric(ops[0]->shape().element_type(), [&](auto from_tag) {
    using From = decltype(from_tag);
    DispatchNumeric(inst.shape().element_type(), [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* x = ops[0]->data<From>();
      To* z = out.data<To>();
      for (int64_t i = 0; i < n; ++i) z[i] = ConvertScalar<To, From>(x[i]);
    });
  });
  return out;
}

absl::StatusOr<Literal> EvalBitcastConvert(const Instruction& inst, const Operands& ops) {
  Literal out(inst.shape());
  if (out.tensor().byte_size() != ops[0]->tensor().byte_size()) {
    return Unimplemented("%s: bitcast-convert between types of different width (%s -> %s)",
                         inst.name(), ops[0]->shape().ToString(), inst.shape().ToString());
  }
  std::memcpy(out.mutable_tensor().raw_data(), ops[0]->tensor().raw_data(),
              out.tensor().byte_size());
  return out;
}

absl::StatusOr<Literal> EvalIsFinite(const Instruction& inst, const Operands& ops) {
  Literal out(inst.shape());
  const int64_t n = inst.shape().num_elements();
  DispatchNumeric(ops[0]->shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = ops[0]->data<T>();
    bool* z = out.data<bool>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (kIsFloat<T>) {
        z[i] = std::isfinite(static_cast<ComputeT<T>>(x[i]));
      } else {
        z[i] = true;
      }
    }
  });
  return out;
}

}  // namespace tfjit::hlo::eval
