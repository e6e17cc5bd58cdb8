// Error bounds of generated values. The model (HLO.md, "Accuracy"): integer and pred results,
// and float results of add..divide, sqrt, convert, compare, maximum/minimum, floor/ceil/round,
// are bit-identical on every path given identical inputs; transcendentals are within a few ulp;
// reductions and dots may reassociate (bound relative to the sum of |terms|). From there an
// absolute error is propagated through Lipschitz-continuous ops; anything discontinuous on an
// inexact input is invalid.
#include "tests/testlib/random_hlo_bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"
#include "compiler/hlo/computation.h"
#include "core/dtype.h"

namespace tfjit::testlib {
namespace {

using hlo::Instruction;
using hlo::Opcode;
constexpr double kInf = std::numeric_limits<double>::infinity();

bool IsFloat(DType t) { return IsFloatingDType(t); }

// Unit roundoff of a float type.
double Eps(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 0x1p-11;
    case DType::kBFloat16:
      return 0x1p-8;
    case DType::kFloat32:
      return 0x1p-24;
    default:
      return 0x1p-53;
  }
}

double MaxFinite(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 65504.0;
    case DType::kBFloat16:
      return 3.38e38;
    case DType::kFloat32:
      return 3.4e38;
    default:
      return 1.7e308;
  }
}

double DenormMin(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 0x1p-24;
    case DType::kBFloat16:
      return 0x1p-133;
    case DType::kFloat32:
      return 0x1p-149;
    default:
      return 0x1p-1074;
  }
}

// Largest |value| of an integer type (pred: 1).
double IntMax(DType t) {
  switch (t) {
    case DType::kBool:
      return 1;
    case DType::kInt8:
      return 128;
    case DType::kUInt8:
      return 255;
    case DType::kInt16:
      return 32768;
    case DType::kUInt16:
      return 65535;
    case DType::kInt32:
      return 2147483648.0;
    case DType::kUInt32:
      return 4294967295.0;
    case DType::kInt64:
      return 9223372036854775808.0;
    default:
      return 18446744073709551615.0;
  }
}

// Relative error allowed for a transcendental result: 4 ulp in f32/f64 (the fast f32 kernels
// are documented <= 1.5 ulp), plus one ulp of the narrow type for f16/bf16, which are computed
// in f32 and rounded (a result near a rounding boundary may round either way).
double TransRel(DType t) {
  if (t == DType::kFloat64) return 8 * Eps(t);
  if (t == DType::kFloat32) return 8 * Eps(t);
  return 2 * Eps(t) + 8 * Eps(DType::kFloat32);
}

// The rounding error of one operation with a result bounded by `mag`.
double Round(DType t, double mag) { return 2 * Eps(t) * mag + DenormMin(t); }

// Absolute error of a bound (0 when exact; inf when relative on an unbounded value).
double AbsErr(const ValueBound& b) {
  if (b.exact) return 0;
  if (b.rel_err == 0) return b.abs_err;
  if (!std::isfinite(b.mag)) return kInf;
  return b.abs_err + b.rel_err * b.mag;
}

ValueBound Approx(double mag, double abs_err, double rel_err = 0) {
  ValueBound b;
  b.exact = false;
  b.mag = mag;
  b.abs_err = abs_err;
  b.rel_err = rel_err;
  // An error as large as the value itself makes the comparison vacuous.
  if (!(abs_err < kInf) || std::isnan(abs_err) || (std::isfinite(mag) && abs_err > mag + 1)) {
    return InvalidBound();
  }
  return b;
}

int64_t Product(const std::vector<int64_t>& dims, const std::vector<int64_t>& which) {
  int64_t n = 1;
  for (int64_t d : which) n *= dims[static_cast<size_t>(d)];
  return n;
}

// Rounding of a reassociated sum of `n` terms with sum of |terms| <= `sum_abs` (HLO.md's guide:
// 1e-5 * sum|terms| * log2(n) in f32, i.e. ~84 eps).
double SumRounding(DType t, int64_t n, double sum_abs) {
  const double log_n = std::max(1.0, std::log2(static_cast<double>(n)));
  return 84 * 2 * Eps(t) * log_n * sum_abs + static_cast<double>(n) * DenormMin(t);
}

bool IsDataMovement(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kGather:
    case Opcode::kSelect:
      return true;
    default:
      return false;
  }
}

// Operands that carry data (not indices or the select predicate).
std::vector<const ValueBound*> DataOperands(const Instruction& inst,
                                            const std::vector<const ValueBound*>& ops) {
  switch (inst.opcode()) {
    case Opcode::kDynamicSlice:
    case Opcode::kGather:
      return {ops[0]};
    case Opcode::kDynamicUpdateSlice:
      return {ops[0], ops[1]};
    case Opcode::kSelect:
      return {ops[1], ops[2]};
    default:
      return ops;
  }
}

Opcode CombinerOpcode(const Instruction& inst) {
  const hlo::Computation* c = inst.to_apply();
  return c != nullptr && c->root() != nullptr ? c->root()->opcode() : Opcode::kAdd;
}

// The bound on |result| of an exact (or approximate) operation on values bounded by `m`.
double ResultMag(const Instruction& inst, const std::vector<const ValueBound*>& ops) {
  const DType t = inst.shape().element_type();
  auto m = [&](int i) { return ops[static_cast<size_t>(i)]->mag; };
  double r = kInf;
  switch (inst.opcode()) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
      r = m(0) + m(1);
      break;
    case Opcode::kMultiply:
      r = m(0) * m(1);
      break;
    case Opcode::kDivide:
      r = IsFloat(t) ? kInf : std::max(m(0), 1.0);
      break;
    case Opcode::kRemainder:
      r = m(0);
      break;
    case Opcode::kSqrt:
      r = std::sqrt(m(0));
      break;
    case Opcode::kCbrt:
      r = std::cbrt(m(0));
      break;
    case Opcode::kAbs:
    case Opcode::kNegate:
      r = m(0);
      break;
    case Opcode::kSign:
    case Opcode::kCompare:
    case Opcode::kIsFinite:
      r = 1;
      break;
    case Opcode::kTanh:
    case Opcode::kLogistic:
    case Opcode::kSine:
    case Opcode::kCosine:
    case Opcode::kErf:
      r = 1;
      break;
    case Opcode::kAtan2:
      r = 3.15;
      break;
    case Opcode::kExp:
      r = std::exp(m(0));
      break;
    case Opcode::kExpm1:
      r = std::exp(m(0)) + 1;
      break;
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
      r = std::ceil(m(0));
      break;
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      r = std::max(m(0), m(1));
      break;
    case Opcode::kClamp:
      r = std::max({m(0), m(1), m(2)});
      break;
    case Opcode::kConvert: {
      const DType from = inst.operand(0)->shape().element_type();
      r = m(0);
      if (IsFloat(from) && !IsFloat(t)) r = std::min(std::ceil(m(0)), IntMax(t));
      break;
    }
    case Opcode::kIota: {
      int64_t d = inst.shape().dims().empty()
                      ? 1
                      : inst.shape().dim(static_cast<int>(inst.attrs().iota_dimension));
      r = static_cast<double>(std::max<int64_t>(d - 1, 0));
      break;
    }
    case Opcode::kReduce:
    case Opcode::kReduceWindow: {
      int64_t n = 1;
      if (inst.opcode() == Opcode::kReduce) {
        n = Product(inst.operand(0)->shape().dims(), inst.dimensions());
      } else {
        for (const hlo::WindowDim& w : inst.attrs().window) n *= w.size;
      }
      const Opcode c = CombinerOpcode(inst);
      if (c == Opcode::kAdd)
        r = static_cast<double>(n) * m(0);
      else if (c == Opcode::kMaximum || c == Opcode::kMinimum)
        r = std::max(m(0), m(1));
      break;
    }
    case Opcode::kDot: {
      const double k = static_cast<double>(
          Product(inst.operand(0)->shape().dims(), inst.attrs().dot.lhs_contracting));
      r = k * m(0) * m(1);
      break;
    }
    default:
      if (IsDataMovement(inst.opcode())) {
        r = 0;
        for (const ValueBound* b : DataOperands(inst, ops)) r = std::max(r, b->mag);
      }
      break;
  }
  if (std::isnan(r)) r = kInf;
  if (t == DType::kBool) return 1;
  if (!IsFloat(t)) return std::min(r, IntMax(t));
  return r > MaxFinite(t) ? kInf : r;
}

ValueBound Join(const std::vector<const ValueBound*>& bs) {
  ValueBound r;
  for (const ValueBound* b : bs) r = JoinBounds(r, *b);
  return r;
}

// Float ops whose result is bit-identical given identical inputs.
bool IsBitExact(Opcode op) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kSqrt:
    case Opcode::kAbs:
    case Opcode::kNegate:
    case Opcode::kSign:
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kIota:
      return true;
    default:
      return false;
  }
}

// Ops for which the sign of a zero operand matters beyond the sign of a zero result.
bool ZeroSignSensitive(Opcode op) {
  return op == Opcode::kDivide || op == Opcode::kAtan2 || op == Opcode::kPower ||
         op == Opcode::kRsqrt || op == Opcode::kBitcastConvert;
}

bool MakesZeroSignUnknown(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (op == Opcode::kMaximum || op == Opcode::kMinimum || op == Opcode::kClamp) return true;
  if (op == Opcode::kReduce || op == Opcode::kReduceWindow) {
    const Opcode c = CombinerOpcode(inst);
    return c == Opcode::kMaximum || c == Opcode::kMinimum;
  }
  return false;
}

// Float result, every float operand exact.
ValueBound ExactInputs(const Instruction& inst, const std::vector<const ValueBound*>& ops,
                       double mag, bool zsign) {
  const Opcode op = inst.opcode();
  const DType t = inst.shape().element_type();
  const double trans = TransRel(t);
  ValueBound exact = ExactBound(mag);
  exact.zsign = zsign || MakesZeroSignUnknown(inst);
  if (IsBitExact(op)) return exact;
  switch (op) {
    case Opcode::kReduce:
    case Opcode::kReduceWindow: {
      const Opcode c = CombinerOpcode(inst);
      if (c != Opcode::kAdd) return exact;  // max/min: order-independent
      int64_t n = 1;
      if (op == Opcode::kReduce) {
        n = Product(inst.operand(0)->shape().dims(), inst.dimensions());
      } else {
        for (const hlo::WindowDim& w : inst.attrs().window) n *= w.size;
      }
      if (n <= 2) return exact;  // init is the identity: no reassociation possible
      if (!std::isfinite(mag) || mag > MaxFinite(t) / 4) return InvalidBound();
      ValueBound b = Approx(mag, SumRounding(t, n, mag));
      b.zsign = true;
      return b;
    }
    case Opcode::kDot: {
      const int64_t k = Product(inst.operand(0)->shape().dims(), inst.attrs().dot.lhs_contracting);
      if (k <= 1) return exact;
      if (!std::isfinite(mag) || mag > MaxFinite(t) / 4) return InvalidBound();
      // f16/bf16 accumulate in f32 and round once: the final rounding plus f32's.
      double err =
          SumRounding(IsFloat(t) && Eps(t) > Eps(DType::kFloat32) ? DType::kFloat32 : t, k, mag) +
          Round(t, mag);
      ValueBound b = Approx(mag, err);
      b.zsign = true;
      return b;
    }
    case Opcode::kTanh:
    case Opcode::kLogistic:
    case Opcode::kSine:
    case Opcode::kCosine:
    case Opcode::kErf:
      return Approx(1, trans, trans);
    case Opcode::kAtan2:
      return Approx(3.15, 4 * trans, trans);
    case Opcode::kExp:
    case Opcode::kExpm1:
      if (std::isfinite(ops[0]->mag) && !std::isfinite(mag)) return InvalidBound();  // overflow
      if (std::isfinite(mag) && mag > MaxFinite(t) / 4) return InvalidBound();
      return Approx(mag, Round(t, 1), trans);
    default:
      // log, log1p, tan, power, rsqrt, cbrt, remainder: relative bound, unbounded values.
      return Approx(mag, DenormMin(t) * 4, trans);
  }
}

// Float result with at least one approximate float operand: Lipschitz ops only.
ValueBound ApproxInputs(const Instruction& inst, const std::vector<const ValueBound*>& ops,
                        double mag) {
  const DType t = inst.shape().element_type();
  if (!std::isfinite(mag)) return InvalidBound();
  for (const ValueBound* b : ops) {
    if (!std::isfinite(b->mag) || !std::isfinite(AbsErr(*b))) return InvalidBound();
  }
  auto e = [&](int i) { return AbsErr(*ops[static_cast<size_t>(i)]); };
  auto m = [&](int i) { return ops[static_cast<size_t>(i)]->mag; };
  double err = kInf;
  switch (inst.opcode()) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
      err = e(0) + e(1) + Round(t, mag);
      break;
    case Opcode::kMultiply:
      err = e(0) * m(1) + e(1) * m(0) + e(0) * e(1) + Round(t, mag);
      break;
    case Opcode::kAbs:
    case Opcode::kNegate:
      err = e(0);
      break;
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      err = std::max(e(0), e(1));
      break;
    case Opcode::kClamp:
      err = std::max({e(0), e(1), e(2)});
      break;
    case Opcode::kTanh:
    case Opcode::kSine:
    case Opcode::kCosine:
      err = e(0) + 2 * TransRel(t);
      break;
    case Opcode::kLogistic:
      err = 0.25 * e(0) + 2 * TransRel(t);
      break;
    case Opcode::kErf:
      err = 1.13 * e(0) + 2 * TransRel(t);
      break;
    case Opcode::kExp:
      if (e(0) > 1) return InvalidBound();
      err = std::exp(m(0) + e(0)) * e(0) * 1.01 + TransRel(t) * mag + Round(t, mag);
      break;
    case Opcode::kConvert: {
      const DType from = inst.operand(0)->shape().element_type();
      if (!IsFloat(from) || !IsFloat(t)) return InvalidBound();
      if (m(0) > MaxFinite(t) / 2) return InvalidBound();
      err = e(0) + Round(t, mag);
      break;
    }
    case Opcode::kReduce:
    case Opcode::kReduceWindow: {
      int64_t n = 1;
      if (inst.opcode() == Opcode::kReduce) {
        n = Product(inst.operand(0)->shape().dims(), inst.dimensions());
      } else {
        for (const hlo::WindowDim& w : inst.attrs().window) n *= w.size;
      }
      const Opcode c = CombinerOpcode(inst);
      if (c == Opcode::kMaximum || c == Opcode::kMinimum) {
        err = std::max(e(0), e(1));
      } else if (c == Opcode::kAdd) {
        if (mag > MaxFinite(t) / 4) return InvalidBound();
        err = static_cast<double>(n) * e(0) + e(1) + SumRounding(t, std::max<int64_t>(n, 2), mag);
      }
      break;
    }
    case Opcode::kDot: {
      const double k = static_cast<double>(
          Product(inst.operand(0)->shape().dims(), inst.attrs().dot.lhs_contracting));
      if (mag > MaxFinite(t) / 4) return InvalidBound();
      err = k * (e(0) * m(1) + e(1) * m(0) + e(0) * e(1)) +
            SumRounding(t, std::max<int64_t>(static_cast<int64_t>(k), 2), mag) + Round(t, mag);
      break;
    }
    default:
      return InvalidBound();
  }
  ValueBound b = Approx(mag, err);
  if (b.valid) b.zsign = true;
  return b;
}

}  // namespace

std::string ValueBound::ToString() const {
  if (!valid) return "invalid";
  if (!elements.empty()) {
    std::string s = "(";
    for (const ValueBound& e : elements) absl::StrAppend(&s, e.ToString(), "; ");
    return s + ")";
  }
  if (exact) return absl::StrFormat("exact%s |x|<=%g", zsign ? " (+-0)" : "", mag);
  return absl::StrFormat("abs<=%g rel<=%g |x|<=%g", abs_err, rel_err, mag);
}

ValueBound InvalidBound() {
  ValueBound b;
  b.valid = false;
  b.exact = false;
  b.mag = kInf;
  return b;
}

ValueBound ExactBound(double mag) {
  ValueBound b;
  b.mag = mag;
  return b;
}

ValueBound ParameterBound(const hlo::Shape& shape, bool edge_values) {
  if (shape.IsTuple()) {
    ValueBound b;
    for (const hlo::Shape& s : shape.tuple_shapes())
      b.elements.push_back(ParameterBound(s, edge_values));
    return b;
  }
  const DType t = shape.element_type();
  if (t == DType::kBool) return ExactBound(1);
  if (IsFloat(t)) return ExactBound(edge_values ? kInf : 2);
  if (edge_values) return ExactBound(IntMax(t));
  return ExactBound(IsSignedIntegerDType(t) ? 10 : 20);
}

ValueBound LiteralBound(const hlo::Literal& literal) {
  double mag = 0;
  const int64_t n = literal.shape().num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const double v = std::fabs(ElementAsDouble(literal.tensor(), i));
    mag = std::isnan(v) ? kInf : std::max(mag, v);
  }
  return ExactBound(mag);
}

ValueBound JoinBounds(const ValueBound& a, const ValueBound& b) {
  if (!a.valid || !b.valid) return InvalidBound();
  ValueBound r;
  if (!a.elements.empty() || !b.elements.empty()) {
    const ValueBound& t = a.elements.empty() ? b : a;
    const ValueBound& o = a.elements.empty() ? a : b;
    for (size_t i = 0; i < t.elements.size(); ++i) {
      r.elements.push_back(i < o.elements.size() ? JoinBounds(t.elements[i], o.elements[i])
                                                 : t.elements[i]);
    }
    return r;
  }
  r.exact = a.exact && b.exact;
  r.zsign = a.zsign || b.zsign;
  r.mag = std::max(a.mag, b.mag);
  r.abs_err = std::max(a.exact ? 0 : a.abs_err, b.exact ? 0 : b.abs_err);
  r.rel_err = std::max(a.exact ? 0 : a.rel_err, b.exact ? 0 : b.rel_err);
  return r;
}

ValueBound TransferBound(const Instruction& inst, const std::vector<const ValueBound*>& ops) {
  for (const ValueBound* b : ops) {
    if (!b->valid) return InvalidBound();
  }
  const Opcode op = inst.opcode();
  if (op == Opcode::kTuple) {
    ValueBound b;
    for (const ValueBound* e : ops) b.elements.push_back(*e);
    return b;
  }
  if (op == Opcode::kGetTupleElement) {
    const auto& els = ops[0]->elements;
    const size_t i = static_cast<size_t>(inst.attrs().tuple_index);
    return i < els.size() ? els[i] : InvalidBound();
  }
  if (!inst.shape().IsArray()) return InvalidBound();
  const DType t = inst.shape().element_type();
  bool all_exact = true, zsign = false;
  for (int i = 0; i < inst.operand_count(); ++i) {
    if (!IsFloat(inst.operand(i)->shape().element_type())) continue;
    all_exact = all_exact && ops[static_cast<size_t>(i)]->exact;
    zsign = zsign || ops[static_cast<size_t>(i)]->zsign;
  }
  const double mag = ResultMag(inst, ops);
  if (IsDataMovement(op)) {
    ValueBound b = Join(DataOperands(inst, ops));
    b.mag = mag;
    return b;
  }
  if (!IsFloat(t)) {
    // Integers and pred: exact, but only from exact floats (a compare, a float->int convert
    // or is-finite of an approximate value may flip).
    if (!all_exact) return InvalidBound();
    return ExactBound(mag);
  }
  if (zsign && ZeroSignSensitive(op)) return InvalidBound();
  if (all_exact) return ExactInputs(inst, ops, mag, zsign);
  return ApproxInputs(inst, ops, mag);
}

}  // namespace tfjit::testlib
