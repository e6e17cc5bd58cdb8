// Lowerings of TF's elementwise ops beyond the basic arithmetic of math_lowerings.cc:
// rounding, trigonometry, predicates (ApproximateEqual among them), floor/truncating division
// and modulus, power, bitwise ops and the *NoNan family. The special functions (Erf, Xdivy,
// Xlogy, ...) are in special_lowerings.cc.
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using hlo::Opcode;

// The node's inputs 0 and 1 broadcast to their common shape (TF's binary-op broadcasting).
absl::StatusOr<std::pair<Instruction*, Instruction*>> BroadcastPair(LoweringContext& ctx,
                                                                    const tf::Node& node) {
  return ctx.BroadcastBinaryInputs(node);
}

absl::StatusOr<Instruction*> Zeros(LoweringContext& ctx, Instruction* like) {
  return ctx.Splat(like->shape().element_type(), 0.0, like->shape().dims());
}

absl::StatusOr<Instruction*> IsZero(LoweringContext& ctx, Instruction* x) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Zeros(ctx, x));
  return ctx.b().Compare(ComparisonDirection::kEq, x, zero);
}

absl::StatusOr<Instruction*> IsNegative(LoweringContext& ctx, Instruction* x) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Zeros(ctx, x));
  return ctx.b().Compare(ComparisonDirection::kLt, x, zero);
}

absl::Status Done(LoweringContext& ctx, const tf::Node& node, absl::StatusOr<Instruction*> result) {
  if (!result.ok()) return result.status();
  ctx.SetOutput(node, 0, *result);
  return absl::OkStatus();
}

absl::Status LowerUnaryOp(LoweringContext& ctx, const tf::Node& node, Opcode opcode) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  // Rounding an integer is the identity (TF's Round/Floor/... on ints return x).
  if (!IsFloatingDType(x->shape().element_type()) &&
      (opcode == Opcode::kRoundNearestEven || opcode == Opcode::kFloor ||
       opcode == Opcode::kCeil)) {
    ctx.SetOutput(node, 0, x);
    return absl::OkStatus();
  }
  return Done(ctx, node, ctx.b().Unary(opcode, x));
}

absl::Status LowerBinaryOp(LoweringContext& ctx, const tf::Node& node, Opcode opcode) {
  TFJIT_ASSIGN_OR_RETURN(auto ab, BroadcastPair(ctx, node));
  return Done(ctx, node, ctx.b().Binary(opcode, ab.first, ab.second));
}

#define TFJIT_UNARY(Name, opcode)                                        \
  absl::Status Lower##Name(LoweringContext& ctx, const tf::Node& node) { \
    return LowerUnaryOp(ctx, node, Opcode::opcode);                      \
  }
#define TFJIT_BINARY(Name, opcode)                                       \
  absl::Status Lower##Name(LoweringContext& ctx, const tf::Node& node) { \
    return LowerBinaryOp(ctx, node, Opcode::opcode);                     \
  }
TFJIT_UNARY(Floor, kFloor)
TFJIT_UNARY(Ceil, kCeil)
// TF's Round and Rint both round half to even.
TFJIT_UNARY(Round, kRoundNearestEven)
TFJIT_UNARY(Sign, kSign)
TFJIT_UNARY(Sin, kSine)
TFJIT_UNARY(Cos, kCosine)
TFJIT_UNARY(Tan, kTan)
TFJIT_UNARY(Expm1, kExpm1)
TFJIT_UNARY(Log1p, kLog1p)
TFJIT_UNARY(IsFinite, kIsFinite)
TFJIT_UNARY(Invert, kNot)
TFJIT_BINARY(Atan2, kAtan2)
TFJIT_BINARY(BitwiseAnd, kAnd)
TFJIT_BINARY(BitwiseOr, kOr)
TFJIT_BINARY(BitwiseXor, kXor)
#undef TFJIT_UNARY
#undef TFJIT_BINARY

// Reciprocal(x), Inv(x) => 1 / x
absl::Status LowerReciprocal(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one,
                         ctx.Splat(x->shape().element_type(), 1.0, x->shape().dims()));
  return Done(ctx, node, ctx.b().Binary(Opcode::kDivide, one, x));
}

// IsNan(x) => x != x
absl::Status LowerIsNan(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  return Done(ctx, node, ctx.b().Compare(ComparisonDirection::kNe, x, x));
}

// IsInf(x) => |x| == inf
absl::Status LowerIsInf(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ax, ctx.b().Unary(Opcode::kAbs, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * inf,
                         ctx.Splat(x->shape().element_type(),
                                   std::numeric_limits<double>::infinity(), x->shape().dims()));
  return Done(ctx, node, ctx.b().Compare(ComparisonDirection::kEq, ax, inf));
}

// ApproximateEqual: |x - y| < tolerance in T (integers: the tolerance truncates to 0).
absl::Status LowerApproximateEqual(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y, ctx.Input(node, 1));
  if (x->shape().dims() != y->shape().dims()) {
    return InvalidArgument("node %s: x and y must be of the same shape. x shape: %s y shape: %s",
                           node.DebugName(), x->shape().ToString(), y->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(float tol, tf::GetFloatAttrOr(node, "tolerance", 1e-5f));
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * d, ctx.b().Binary(Opcode::kSubtract, x, y));
  if (!IsUnsignedIntegerDType(t)) {
    TFJIT_ASSIGN_OR_RETURN(d, ctx.b().Unary(Opcode::kAbs, d));
  }
  Instruction* limit = nullptr;
  if (IsFloatingDType(t)) {
    TFJIT_ASSIGN_OR_RETURN(limit, ctx.Splat(t, static_cast<double>(tol), x->shape().dims()));
  } else {
    TFJIT_ASSIGN_OR_RETURN(limit,
                           ctx.Splat(t, std::trunc(static_cast<double>(tol)), x->shape().dims()));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Compare(ComparisonDirection::kLt, d, limit));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerFilledLike(LoweringContext& ctx, const tf::Node& node, double value) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  return Done(ctx, node, ctx.Splat(x->shape().element_type(), value, x->shape().dims()));
}
absl::Status LowerZerosLike(LoweringContext& ctx, const tf::Node& node) {
  return LowerFilledLike(ctx, node, 0.0);
}
absl::Status LowerOnesLike(LoweringContext& ctx, const tf::Node& node) {
  return LowerFilledLike(ctx, node, 1.0);
}

// Asin(x) => atan2(x, sqrt(1 - x^2)); Acos(x) => atan2(sqrt(1 - x^2), x); Atan(x) =>
// atan2(x, 1). |x| > 1 gives NaN through the sqrt, as asin/acos do.
absl::Status LowerInverseTrig(LoweringContext& ctx, const tf::Node& node, bool acos) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, ctx.Splat(t, 1.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x2, ctx.b().Binary(Opcode::kMultiply, x, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * d, ctx.b().Binary(Opcode::kSubtract, one, x2));
  TFJIT_ASSIGN_OR_RETURN(Instruction * s, ctx.b().Unary(Opcode::kSqrt, d));
  if (acos) return Done(ctx, node, ctx.b().Binary(Opcode::kAtan2, s, x));
  return Done(ctx, node, ctx.b().Binary(Opcode::kAtan2, x, s));
}
absl::Status LowerAsin(LoweringContext& ctx, const tf::Node& node) {
  return LowerInverseTrig(ctx, node, false);
}
absl::Status LowerAcos(LoweringContext& ctx, const tf::Node& node) {
  return LowerInverseTrig(ctx, node, true);
}
absl::Status LowerAtan(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one,
                         ctx.Splat(x->shape().element_type(), 1.0, x->shape().dims()));
  return Done(ctx, node, ctx.b().Binary(Opcode::kAtan2, x, one));
}

// Sinh(x) => (expm1(x) - expm1(-x)) / 2 (expm1 keeps small |x| accurate);
// Cosh(x) => (exp(x) + exp(-x)) / 2.
absl::Status LowerHyperbolic(LoweringContext& ctx, const tf::Node& node, bool cosh) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const Opcode e = cosh ? Opcode::kExp : Opcode::kExpm1;
  TFJIT_ASSIGN_OR_RETURN(Instruction * nx, ctx.b().Unary(Opcode::kNegate, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ep, ctx.b().Unary(e, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * en, ctx.b().Unary(e, nx));
  TFJIT_ASSIGN_OR_RETURN(Instruction * s,
                         ctx.b().Binary(cosh ? Opcode::kAdd : Opcode::kSubtract, ep, en));
  TFJIT_ASSIGN_OR_RETURN(Instruction * half,
                         ctx.Splat(x->shape().element_type(), 0.5, x->shape().dims()));
  return Done(ctx, node, ctx.b().Binary(Opcode::kMultiply, s, half));
}
absl::Status LowerSinh(LoweringContext& ctx, const tf::Node& node) {
  return LowerHyperbolic(ctx, node, false);
}
absl::Status LowerCosh(LoweringContext& ctx, const tf::Node& node) {
  return LowerHyperbolic(ctx, node, true);
}

// Beyond this |x|, x^2 + 1 == x^2 in the type: asinh and acosh take the log(|x|) + log(2) form
// (past 2^(mantissa bits / 2 + 1)).
double InverseHyperbolicFar(DType t) { return t == DType::kFloat64 ? 1e8 : 1e4; }

// log(|x|) + log(2): asinh(|x|) and acosh(x) beyond InverseHyperbolicFar.
absl::StatusOr<Instruction*> FarInverseHyperbolic(LoweringContext& ctx, Instruction* x) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * ax, ctx.b().Unary(Opcode::kAbs, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * log_ax, ctx.b().Unary(Opcode::kLog, ax));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ln2,
                         ctx.Splat(x->shape().element_type(), std::log(2.0), x->shape().dims()));
  return ctx.b().Binary(Opcode::kAdd, log_ax, ln2);
}

}  // namespace

// Asinh(x) => sign(x) * log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), log(|x|) + log(2) far out.
absl::StatusOr<Instruction*> AsinhValue(LoweringContext& ctx, Instruction* x) {
  const DType t = x->shape().element_type();
  const std::vector<int64_t>& dims = x->shape().dims();
  hlo::Builder& b = ctx.b();
  auto k = [&](double v) { return ctx.Splat(t, v, dims); };
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, k(1.0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ax, b.Unary(Opcode::kAbs, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * far, FarInverseHyperbolic(ctx, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * big_k, k(InverseHyperbolicFar(t)));
  TFJIT_ASSIGN_OR_RETURN(Instruction * is_big, b.Compare(ComparisonDirection::kGt, ax, big_k));
  // Clamp first so the unused branch cannot overflow to inf * 0 = NaN.
  TFJIT_ASSIGN_OR_RETURN(Instruction * c, b.Binary(Opcode::kMinimum, ax, big_k));
  TFJIT_ASSIGN_OR_RETURN(Instruction * c2, b.Binary(Opcode::kMultiply, c, c));
  TFJIT_ASSIGN_OR_RETURN(Instruction * c2p1, b.Binary(Opcode::kAdd, c2, one));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, b.Unary(Opcode::kSqrt, c2p1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * den, b.Binary(Opcode::kAdd, r, one));
  TFJIT_ASSIGN_OR_RETURN(Instruction * frac, b.Binary(Opcode::kDivide, c2, den));
  TFJIT_ASSIGN_OR_RETURN(Instruction * arg, b.Binary(Opcode::kAdd, c, frac));
  TFJIT_ASSIGN_OR_RETURN(Instruction * near, b.Unary(Opcode::kLog1p, arg));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mag, b.Select(is_big, far, near));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sign, b.Unary(Opcode::kSign, x));
  // sign(±0) = ±0 keeps asinh(-0) = -0; NaN stays NaN through the sign.
  return b.Binary(Opcode::kMultiply, sign, mag);
}

namespace {

// The inverse hyperbolic functions, written so small |x| keeps full relative accuracy and
// large |x| does not overflow through x^2:
//   Asinh(x) => AsinhValue
//   Acosh(x) => log1p((x - 1) + sqrt((x - 1) * (x + 1)))    (NaN below 1, through the sqrt)
//   Atanh(x) => 0.5 * log1p(2x / (1 - x))                   (NaN beyond ±1, ±inf at ±1)
absl::Status LowerInverseHyperbolic(LoweringContext& ctx, const tf::Node& node, char which) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  if (which == 's') return Done(ctx, node, AsinhValue(ctx, x));
  const DType t = x->shape().element_type();
  const std::vector<int64_t>& dims = x->shape().dims();
  hlo::Builder& b = ctx.b();
  auto k = [&](double v) { return ctx.Splat(t, v, dims); };
  TFJIT_ASSIGN_OR_RETURN(Instruction * one, k(1.0));
  if (which == 't') {
    TFJIT_ASSIGN_OR_RETURN(Instruction * two_x, b.Binary(Opcode::kAdd, x, x));
    TFJIT_ASSIGN_OR_RETURN(Instruction * d, b.Binary(Opcode::kSubtract, one, x));
    TFJIT_ASSIGN_OR_RETURN(Instruction * q, b.Binary(Opcode::kDivide, two_x, d));
    TFJIT_ASSIGN_OR_RETURN(Instruction * l, b.Unary(Opcode::kLog1p, q));
    TFJIT_ASSIGN_OR_RETURN(Instruction * half, k(0.5));
    return Done(ctx, node, b.Binary(Opcode::kMultiply, l, half));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * far, FarInverseHyperbolic(ctx, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * big_k, k(InverseHyperbolicFar(t)));
  TFJIT_ASSIGN_OR_RETURN(Instruction * c, b.Binary(Opcode::kMinimum, x, big_k));
  TFJIT_ASSIGN_OR_RETURN(Instruction * cm1, b.Binary(Opcode::kSubtract, c, one));
  TFJIT_ASSIGN_OR_RETURN(Instruction * cp1, b.Binary(Opcode::kAdd, c, one));
  TFJIT_ASSIGN_OR_RETURN(Instruction * prod, b.Binary(Opcode::kMultiply, cm1, cp1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, b.Unary(Opcode::kSqrt, prod));
  TFJIT_ASSIGN_OR_RETURN(Instruction * arg, b.Binary(Opcode::kAdd, cm1, r));
  TFJIT_ASSIGN_OR_RETURN(Instruction * near, b.Unary(Opcode::kLog1p, arg));
  TFJIT_ASSIGN_OR_RETURN(Instruction * is_big_pos, b.Compare(ComparisonDirection::kGt, x, big_k));
  return Done(ctx, node, b.Select(is_big_pos, far, near));
}
absl::Status LowerAsinh(LoweringContext& ctx, const tf::Node& node) {
  return LowerInverseHyperbolic(ctx, node, 's');
}
absl::Status LowerAcosh(LoweringContext& ctx, const tf::Node& node) {
  return LowerInverseHyperbolic(ctx, node, 'c');
}
absl::Status LowerAtanh(LoweringContext& ctx, const tf::Node& node) {
  return LowerInverseHyperbolic(ctx, node, 't');
}

// LeftShift / RightShift (TF's bitwise_ops): TF's CPU functors clamp the shift amount to
// [0, bits - 1], so the lowering clamps too (HLO alone would give 0 or the sign fill past the
// width, as tf2xla's lowering does; tfjit keeps the kernel's answer on every path). Right
// shifts are arithmetic for signed types, logical for unsigned ones.
absl::Status LowerShift(LoweringContext& ctx, const tf::Node& node, bool left) {
  TFJIT_ASSIGN_OR_RETURN(auto ab, BroadcastPair(ctx, node));
  const DType t = ab.first->shape().element_type();
  const std::vector<int64_t>& dims = ab.second->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(Instruction * lo, ctx.Splat(t, 0.0, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hi,
                         ctx.Splat(t, static_cast<double>(DTypeSize(t) * 8 - 1), dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * n, ctx.b().Clamp(lo, ab.second, hi));
  const Opcode op = left ? Opcode::kShiftLeft
                         : (IsUnsignedIntegerDType(t) ? Opcode::kShiftRightLogical
                                                      : Opcode::kShiftRightArithmetic);
  return Done(ctx, node, ctx.b().Binary(op, ab.first, n));
}
absl::Status LowerLeftShift(LoweringContext& ctx, const tf::Node& node) {
  return LowerShift(ctx, node, true);
}
absl::Status LowerRightShift(LoweringContext& ctx, const tf::Node& node) {
  return LowerShift(ctx, node, false);
}

// SquaredDifference(x, y) => (x - y) * (x - y)
absl::Status LowerSquaredDifference(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(auto ab, BroadcastPair(ctx, node));
  TFJIT_ASSIGN_OR_RETURN(Instruction * d, ctx.b().Binary(Opcode::kSubtract, ab.first, ab.second));
  return Done(ctx, node, ctx.b().Binary(Opcode::kMultiply, d, d));
}

// Integer division, modulus and power: TF's kernels fail on a zero divisor (or a negative
// exponent), with these messages. A compile-time-constant right-hand side is checked here; any
// other is checked at run time (AddConditionCheck) in a cluster's ENTRY computation. Inside a
// loop or branch body, where no run-time check can be carried out, the op compiles as TF's XLA
// bridge compiles it: such elements get HLO's defined results (x / 0 = -1, x % 0 = x, negative
// exponents 0 except for bases ±1) where the kernel would fail.
absl::Status CheckIntegerRhs(LoweringContext& ctx, const tf::Node& node, bool is_pow) {
  const char* message =
      is_pow ? "Integers to negative integer powers are not allowed" : "Integer division by zero";
  absl::StatusOr<Tensor> rhs = ctx.ConstantInput(node, 1);
  if (!rhs.ok()) {
    if (!ctx.CanAddRuntimeChecks()) return absl::OkStatus();
    TFJIT_ASSIGN_OR_RETURN(Instruction * y, ctx.Input(node, 1));
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Zeros(ctx, y));
    TFJIT_ASSIGN_OR_RETURN(
        Instruction * bad,
        ctx.b().Compare(is_pow ? ComparisonDirection::kLt : ComparisonDirection::kEq, y, zero));
    return ctx.AddConditionCheck(node, bad, message);
  }
  for (int64_t k = 0; k < rhs->num_elements(); ++k) {
    const int64_t v = ElementAsInt64(*rhs, k);
    if (is_pow ? v < 0 : v == 0) return InvalidArgument("node %s: %s", node.DebugName(), message);
  }
  return absl::OkStatus();
}

bool IsIntegerOp(const tf::Node& node) {
  return !node.input_types().empty() && IsIntegerDType(node.input_types()[0]);
}

// Pow(x, y): floats pow; integers exact repeated squaring (constant non-negative exponent).
absl::Status LowerPow(LoweringContext& ctx, const tf::Node& node) {
  if (IsIntegerOp(node)) {
    TFJIT_RETURN_IF_ERROR(CheckIntegerRhs(ctx, node, /*is_pow=*/true));
  }
  return LowerBinaryOp(ctx, node, Opcode::kPower);
}

// Div: floats divide; integers truncate toward zero.
absl::Status LowerDiv(LoweringContext& ctx, const tf::Node& node) {
  if (IsIntegerOp(node)) {
    TFJIT_RETURN_IF_ERROR(CheckIntegerRhs(ctx, node, false));
  }
  return LowerBinaryOp(ctx, node, Opcode::kDivide);
}

// TruncateDiv: integers as Div; floats (TF's kernels from 2.16) trunc(x / y), the quotient
// rounded toward zero: ceil below zero, floor otherwise (trunc(-0.5) = -0, NaN stays NaN).
absl::Status LowerTruncateDiv(LoweringContext& ctx, const tf::Node& node) {
  if (IsIntegerOp(node)) return LowerDiv(ctx, node);
  TFJIT_ASSIGN_OR_RETURN(auto ab, BroadcastPair(ctx, node));
  TFJIT_ASSIGN_OR_RETURN(Instruction * q, ctx.b().Binary(Opcode::kDivide, ab.first, ab.second));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Zeros(ctx, q));
  TFJIT_ASSIGN_OR_RETURN(Instruction * negative,
                         ctx.b().Compare(ComparisonDirection::kLt, q, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * up, ctx.b().Unary(Opcode::kCeil, q));
  TFJIT_ASSIGN_OR_RETURN(Instruction * down, ctx.b().Unary(Opcode::kFloor, q));
  return Done(ctx, node, ctx.b().Select(negative, up, down));
}

// Mod, TruncateMod: the remainder has the dividend's sign (C's % and fmod).
absl::Status LowerTruncateMod(LoweringContext& ctx, const tf::Node& node) {
  if (IsIntegerOp(node)) {
    TFJIT_RETURN_IF_ERROR(CheckIntegerRhs(ctx, node, false));
  }
  return LowerBinaryOp(ctx, node, Opcode::kRemainder);
}

// FloorDiv: floats floor(x / y); integers q = x / y, minus 1 when the division was inexact
// and the operands' signs differ (TF's google_floor_div).
absl::Status LowerFloorDiv(LoweringContext& ctx, const tf::Node& node) {
  const bool is_int = IsIntegerOp(node);
  if (is_int) {
    TFJIT_RETURN_IF_ERROR(CheckIntegerRhs(ctx, node, false));
  }
  TFJIT_ASSIGN_OR_RETURN(auto ab, BroadcastPair(ctx, node));
  auto [x, y] = ab;
  TFJIT_ASSIGN_OR_RETURN(Instruction * q, ctx.b().Binary(Opcode::kDivide, x, y));
  if (!is_int) return Done(ctx, node, ctx.b().Unary(Opcode::kFloor, q));
  if (IsUnsignedIntegerDType(x->shape().element_type())) return Done(ctx, node, q);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kRemainder, x, y));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r_zero, IsZero(ctx, r));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x_neg, IsNegative(ctx, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y_neg, IsNegative(ctx, y));
  TFJIT_ASSIGN_OR_RETURN(Instruction * signs_differ, ctx.b().Binary(Opcode::kXor, x_neg, y_neg));
  TFJIT_ASSIGN_OR_RETURN(Instruction * inexact, ctx.b().Unary(Opcode::kNot, r_zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * adjust, ctx.b().Binary(Opcode::kAnd, inexact, signs_differ));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one,
                         ctx.Splat(q->shape().element_type(), 1.0, q->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * q1, ctx.b().Binary(Opcode::kSubtract, q, one));
  return Done(ctx, node, ctx.b().Select(adjust, q1, q));
}

// FloorMod: r = x rem y (sign of x); r + y when r != 0 and r, y have different signs
// (TF's google_floor_fmod for floats and floor-mod for integers).
absl::Status LowerFloorMod(LoweringContext& ctx, const tf::Node& node) {
  const bool is_int = IsIntegerOp(node);
  if (is_int) {
    TFJIT_RETURN_IF_ERROR(CheckIntegerRhs(ctx, node, false));
  }
  TFJIT_ASSIGN_OR_RETURN(auto ab, BroadcastPair(ctx, node));
  auto [x, y] = ab;
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kRemainder, x, y));
  if (IsUnsignedIntegerDType(x->shape().element_type())) return Done(ctx, node, r);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r_zero, IsZero(ctx, r));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r_neg, IsNegative(ctx, r));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y_neg, IsNegative(ctx, y));
  TFJIT_ASSIGN_OR_RETURN(Instruction * signs_differ, ctx.b().Binary(Opcode::kXor, r_neg, y_neg));
  TFJIT_ASSIGN_OR_RETURN(Instruction * nonzero, ctx.b().Unary(Opcode::kNot, r_zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * adjust, ctx.b().Binary(Opcode::kAnd, nonzero, signs_differ));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ry, ctx.b().Binary(Opcode::kAdd, r, y));
  return Done(ctx, node, ctx.b().Select(adjust, ry, r));
}

// DivNoNan(x, y) => y == 0 ? 0 : x / y; MulNoNan(x, y) => y == 0 ? 0 : x * y.
absl::Status LowerNoNan(LoweringContext& ctx, const tf::Node& node, Opcode opcode) {
  TFJIT_ASSIGN_OR_RETURN(auto ab, BroadcastPair(ctx, node));
  auto [x, y] = ab;
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(opcode, x, y));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y_zero, IsZero(ctx, y));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Zeros(ctx, r));
  return Done(ctx, node, ctx.b().Select(y_zero, zero, r));
}
absl::Status LowerDivNoNan(LoweringContext& ctx, const tf::Node& node) {
  return LowerNoNan(ctx, node, Opcode::kDivide);
}
absl::Status LowerMulNoNan(LoweringContext& ctx, const tf::Node& node) {
  return LowerNoNan(ctx, node, Opcode::kMultiply);
}

// Ops whose inputs must be floating point although the output is bool (IsNan, ...).
bool FloatInput(const tf::Node& node, std::string* why) {
  if (!node.input_types().empty() && IsFloatingDType(node.input_types()[0])) return true;
  *why = absl::StrCat("op ", node.op(), " is compiled for floating-point inputs only");
  return false;
}

// Bitwise ops: integers only.
bool IntegerInput(const tf::Node& node, std::string* why) {
  if (!node.input_types().empty() && IsIntegerDType(node.input_types()[0])) return true;
  *why = absl::StrCat("op ", node.op(), " is compiled for integer inputs only");
  return false;
}

}  // namespace

void AppendElementwiseLowerings(std::vector<OpLowering>* table) {
  constexpr bool kFloat = true;
  table->insert(table->end(), {
                                  {"Floor", LowerFloor, kFloat},
                                  {"Ceil", LowerCeil, kFloat},
                                  {"Round", LowerRound},
                                  {"Rint", LowerRound, kFloat},
                                  {"Sign", LowerSign},
                                  {"Sin", LowerSin, kFloat},
                                  {"Cos", LowerCos, kFloat},
                                  {"Tan", LowerTan, kFloat},
                                  {"Expm1", LowerExpm1, kFloat},
                                  {"Log1p", LowerLog1p, kFloat},
                                  {"Reciprocal", LowerReciprocal, kFloat},
                                  {"Inv", LowerReciprocal, kFloat},
                                  {"Asin", LowerAsin, kFloat},
                                  {"Acos", LowerAcos, kFloat},
                                  {"Atan", LowerAtan, kFloat},
                                  {"Sinh", LowerSinh, kFloat},
                                  {"Cosh", LowerCosh, kFloat},
                                  {"Asinh", LowerAsinh, kFloat},
                                  {"Acosh", LowerAcosh, kFloat},
                                  {"Atanh", LowerAtanh, kFloat},
                                  {"LeftShift", LowerLeftShift, false, IntegerInput},
                                  {"RightShift", LowerRightShift, false, IntegerInput},
                                  {"IsFinite", LowerIsFinite, false, FloatInput},
                                  {"IsNan", LowerIsNan, false, FloatInput},
                                  {"IsInf", LowerIsInf, false, FloatInput},
                                  {"ApproximateEqual", LowerApproximateEqual},
                                  {"ZerosLike", LowerZerosLike},
                                  {"OnesLike", LowerOnesLike},
                                  {"Invert", LowerInvert, false, IntegerInput},
                                  {"SquaredDifference", LowerSquaredDifference},
                                  {"Pow", LowerPow},
                                  {"Div", LowerDiv},
                                  {"TruncateDiv", LowerTruncateDiv},
                                  {"Mod", LowerTruncateMod},
                                  {"TruncateMod", LowerTruncateMod},
                                  {"FloorDiv", LowerFloorDiv},
                                  {"FloorMod", LowerFloorMod},
                                  {"Atan2", LowerAtan2, kFloat},
                                  {"DivNoNan", LowerDivNoNan, kFloat},
                                  {"MulNoNan", LowerMulNoNan, kFloat},
                                  {"BitwiseAnd", LowerBitwiseAnd, false, IntegerInput},
                                  {"BitwiseOr", LowerBitwiseOr, false, IntegerInput},
                                  {"BitwiseXor", LowerBitwiseXor, false, IntegerInput},
                              });
}

}  // namespace tfjit::tf2hlo
