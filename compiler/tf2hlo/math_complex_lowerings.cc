// Lowerings for complex values (complex_values.h): the math_complex family (Complex, Real,
// Imag, Conj, ComplexAbs, Angle), the complex paths of TF's arithmetic, comparisons, Cast,
// Const, MatMul/BatchMatMul; the linear ops whose real lowering runs once on each part
// (data movement, Add/Sub/Neg, AddN, Sum/Mean, Cumsum, ...) are
// math_complex_linear_lowerings.cc's. Formulas follow what TF's CPU
// kernels compute with std::complex: Smith's scaled division, hypot-style magnitudes, and
// (a+bi)(c+di) = (ac - bd) + (ad + bc)i.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/complex_values.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {

using hlo::Instruction;
using hlo::Opcode;

absl::StatusOr<ComplexParts> SplitComplex(LoweringContext& ctx, Instruction* z) {
  const std::vector<int64_t>& dims = z->shape().dims();
  if (dims.empty() || dims.back() != 2) {
    return Internal("tf2hlo: %s does not hold a complex value", z->shape().ToString());
  }
  const std::vector<int64_t> part_dims(dims.begin(), dims.end() - 1);
  ComplexParts parts;
  for (int64_t k = 0; k < 2; ++k) {
    std::vector<hlo::SliceDim> slice;
    for (int64_t d : part_dims) slice.push_back({0, d, 1});
    slice.push_back({k, k + 1, 1});
    TFJIT_ASSIGN_OR_RETURN(Instruction * s, ctx.b().Slice(z, slice));
    TFJIT_ASSIGN_OR_RETURN(s, ctx.b().Reshape(s, part_dims));
    (k == 0 ? parts.re : parts.im) = s;
  }
  return parts;
}

absl::StatusOr<Instruction*> JoinComplex(LoweringContext& ctx, const ComplexParts& z) {
  std::vector<int64_t> dims = z.re->shape().dims();
  dims.push_back(1);
  TFJIT_ASSIGN_OR_RETURN(Instruction * re, ctx.b().Reshape(z.re, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * im, ctx.b().Reshape(z.im, dims));
  return ctx.b().Concatenate({re, im}, static_cast<int64_t>(dims.size()) - 1);
}

absl::StatusOr<ComplexParts> ComplexInput(LoweringContext& ctx, const tf::Node& node, int i) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
  if (IsComplexDType(node.input_types()[static_cast<size_t>(i)])) return SplitComplex(ctx, x);
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero,
                         ctx.Splat(x->shape().element_type(), 0.0, x->shape().dims()));
  return ComplexParts{x, zero};
}

absl::Status SetComplexOutput(LoweringContext& ctx, const tf::Node& node, int i,
                              const ComplexParts& z) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * v, JoinComplex(ctx, z));
  ctx.SetOutput(node, i, v);
  return absl::OkStatus();
}

namespace {

// Real arithmetic on parts of one shape.
struct PartMath {
  LoweringContext& ctx;
  absl::StatusOr<Instruction*> Add(Instruction* a, Instruction* b) {
    return ctx.b().Binary(Opcode::kAdd, a, b);
  }
  absl::StatusOr<Instruction*> Sub(Instruction* a, Instruction* b) {
    return ctx.b().Binary(Opcode::kSubtract, a, b);
  }
  absl::StatusOr<Instruction*> Mul(Instruction* a, Instruction* b) {
    return ctx.b().Binary(Opcode::kMultiply, a, b);
  }
  absl::StatusOr<Instruction*> Div(Instruction* a, Instruction* b) {
    return ctx.b().Binary(Opcode::kDivide, a, b);
  }
  absl::StatusOr<Instruction*> Neg(Instruction* a) { return ctx.b().Unary(Opcode::kNegate, a); }
  absl::StatusOr<Instruction*> Abs(Instruction* a) { return ctx.b().Unary(Opcode::kAbs, a); }
  absl::StatusOr<Instruction*> Splat(Instruction* like, double v) {
    return ctx.Splat(like->shape().element_type(), v, like->shape().dims());
  }

  // (a + bi)(c + di).
  absl::StatusOr<ComplexParts> Multiply(const ComplexParts& x, const ComplexParts& y) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * ac, Mul(x.re, y.re));
    TFJIT_ASSIGN_OR_RETURN(Instruction * bd, Mul(x.im, y.im));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ad, Mul(x.re, y.im));
    TFJIT_ASSIGN_OR_RETURN(Instruction * bc, Mul(x.im, y.re));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, Sub(ac, bd));
    TFJIT_ASSIGN_OR_RETURN(r.im, Add(ad, bc));
    return r;
  }

  // x / y by Smith's algorithm: divide by the larger of |c| and |d| first, so that no
  // intermediate overflows where the quotient does not.
  absl::StatusOr<ComplexParts> Divide(const ComplexParts& x, const ComplexParts& y) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * abs_c, Abs(y.re));
    TFJIT_ASSIGN_OR_RETURN(Instruction * abs_d, Abs(y.im));
    TFJIT_ASSIGN_OR_RETURN(Instruction * c_larger,
                           ctx.b().Compare(hlo::ComparisonDirection::kGe, abs_c, abs_d));
    // |c| >= |d|: r = d/c, den = c + d r, re = (a + b r)/den, im = (b - a r)/den.
    TFJIT_ASSIGN_OR_RETURN(Instruction * r1, Div(y.im, y.re));
    TFJIT_ASSIGN_OR_RETURN(Instruction * t1, Mul(y.im, r1));
    TFJIT_ASSIGN_OR_RETURN(Instruction * den1, Add(y.re, t1));
    TFJIT_ASSIGN_OR_RETURN(Instruction * br1, Mul(x.im, r1));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ar1, Mul(x.re, r1));
    TFJIT_ASSIGN_OR_RETURN(Instruction * n_re1, Add(x.re, br1));
    TFJIT_ASSIGN_OR_RETURN(Instruction * n_im1, Sub(x.im, ar1));
    TFJIT_ASSIGN_OR_RETURN(Instruction * re1, Div(n_re1, den1));
    TFJIT_ASSIGN_OR_RETURN(Instruction * im1, Div(n_im1, den1));
    // |d| > |c|: r = c/d, den = d + c r, re = (a r + b)/den, im = (b r - a)/den.
    TFJIT_ASSIGN_OR_RETURN(Instruction * r2, Div(y.re, y.im));
    TFJIT_ASSIGN_OR_RETURN(Instruction * t2, Mul(y.re, r2));
    TFJIT_ASSIGN_OR_RETURN(Instruction * den2, Add(y.im, t2));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ar2, Mul(x.re, r2));
    TFJIT_ASSIGN_OR_RETURN(Instruction * br2, Mul(x.im, r2));
    TFJIT_ASSIGN_OR_RETURN(Instruction * n_re2, Add(ar2, x.im));
    TFJIT_ASSIGN_OR_RETURN(Instruction * n_im2, Sub(br2, x.re));
    TFJIT_ASSIGN_OR_RETURN(Instruction * re2, Div(n_re2, den2));
    TFJIT_ASSIGN_OR_RETURN(Instruction * im2, Div(n_im2, den2));
    ComplexParts q;
    TFJIT_ASSIGN_OR_RETURN(q.re, ctx.b().Select(c_larger, re1, re2));
    TFJIT_ASSIGN_OR_RETURN(q.im, ctx.b().Select(c_larger, im1, im2));
    return q;
  }

  // |re + i im| without overflow or underflow in the squares: m * sqrt(1 + (n/m)^2) with
  // m = max(|re|, |im|), n = min; 0 when both are 0; inf when either is inf.
  absl::StatusOr<Instruction*> Magnitude(const ComplexParts& z) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * a, Abs(z.re));
    TFJIT_ASSIGN_OR_RETURN(Instruction * b, Abs(z.im));
    TFJIT_ASSIGN_OR_RETURN(Instruction * m, ctx.b().Binary(Opcode::kMaximum, a, b));
    TFJIT_ASSIGN_OR_RETURN(Instruction * n, ctx.b().Binary(Opcode::kMinimum, a, b));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ratio, Div(n, m));
    TFJIT_ASSIGN_OR_RETURN(Instruction * sq, Mul(ratio, ratio));
    TFJIT_ASSIGN_OR_RETURN(Instruction * one, Splat(m, 1.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * s, Add(one, sq));
    TFJIT_ASSIGN_OR_RETURN(s, ctx.b().Unary(Opcode::kSqrt, s));
    TFJIT_ASSIGN_OR_RETURN(Instruction * r, Mul(m, s));
    // m == 0 (0/0) and m == inf (inf/inf) make the ratio NaN: the answer is m itself, unless
    // the other part is NaN (then NaN, as hypot(inf, nan) = inf is the one exception TF's
    // std::abs keeps: an infinite part wins).
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Splat(m, 0.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * inf, Splat(m, std::numeric_limits<double>::infinity()));
    TFJIT_ASSIGN_OR_RETURN(Instruction * is_zero,
                           ctx.b().Compare(hlo::ComparisonDirection::kEq, m, zero));
    TFJIT_ASSIGN_OR_RETURN(Instruction * a_inf,
                           ctx.b().Compare(hlo::ComparisonDirection::kEq, a, inf));
    TFJIT_ASSIGN_OR_RETURN(Instruction * b_inf,
                           ctx.b().Compare(hlo::ComparisonDirection::kEq, b, inf));
    TFJIT_ASSIGN_OR_RETURN(Instruction * any_inf, ctx.b().Binary(Opcode::kOr, a_inf, b_inf));
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Select(is_zero, zero, r));
    return ctx.b().Select(any_inf, inf, r);
  }

  absl::StatusOr<Instruction*> Atan2(Instruction* y, Instruction* x) {
    return ctx.b().Binary(Opcode::kAtan2, y, x);
  }
  absl::StatusOr<Instruction*> Un(Opcode op, Instruction* a) { return ctx.b().Unary(op, a); }
  absl::StatusOr<Instruction*> Scale(Instruction* a, double k) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * c, Splat(a, k));
    return Mul(a, c);
  }
  absl::StatusOr<Instruction*> Cmp(hlo::ComparisonDirection d, Instruction* a, double v) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * c, Splat(a, v));
    return ctx.b().Compare(d, a, c);
  }
  // z == 0 (both parts).
  absl::StatusOr<Instruction*> IsZero(const ComplexParts& z) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * re0, Cmp(hlo::ComparisonDirection::kEq, z.re, 0.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * im0, Cmp(hlo::ComparisonDirection::kEq, z.im, 0.0));
    return ctx.b().Binary(Opcode::kAnd, re0, im0);
  }
  // x < 0, or x is -0: the sign bit of a non-NaN value (1 / -0 = -inf).
  absl::StatusOr<Instruction*> SignBit(Instruction* x) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * lt, Cmp(hlo::ComparisonDirection::kLt, x, 0.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * eq, Cmp(hlo::ComparisonDirection::kEq, x, 0.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * one, Splat(x, 1.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * inv, Div(one, x));
    TFJIT_ASSIGN_OR_RETURN(Instruction * inv_neg, Cmp(hlo::ComparisonDirection::kLt, inv, 0.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * neg_zero, ctx.b().Binary(Opcode::kAnd, eq, inv_neg));
    return ctx.b().Binary(Opcode::kOr, lt, neg_zero);
  }
  absl::StatusOr<ComplexParts> SelectParts(Instruction* pred, const ComplexParts& t,
                                           const ComplexParts& f) {
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, ctx.b().Select(pred, t.re, f.re));
    TFJIT_ASSIGN_OR_RETURN(r.im, ctx.b().Select(pred, t.im, f.im));
    return r;
  }
  absl::StatusOr<ComplexParts> Zero(Instruction* like) {
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, Splat(like, 0.0));
    r.im = r.re;
    return r;
  }
  // sinh and cosh of a real part: sinh from expm1 (no cancellation near 0).
  absl::StatusOr<Instruction*> Sinh(Instruction* x) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * p, Un(Opcode::kExpm1, x));
    TFJIT_ASSIGN_OR_RETURN(Instruction * nx, Neg(x));
    TFJIT_ASSIGN_OR_RETURN(Instruction * q, Un(Opcode::kExpm1, nx));
    TFJIT_ASSIGN_OR_RETURN(Instruction * d, Sub(p, q));
    return Scale(d, 0.5);
  }
  absl::StatusOr<Instruction*> Cosh(Instruction* x) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * p, Un(Opcode::kExp, x));
    TFJIT_ASSIGN_OR_RETURN(Instruction * nx, Neg(x));
    TFJIT_ASSIGN_OR_RETURN(Instruction * q, Un(Opcode::kExp, nx));
    TFJIT_ASSIGN_OR_RETURN(Instruction * d, Add(p, q));
    return Scale(d, 0.5);
  }

  absl::StatusOr<ComplexParts> Exp(const ComplexParts& z) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * e, Un(Opcode::kExp, z.re));
    TFJIT_ASSIGN_OR_RETURN(Instruction * c, Un(Opcode::kCosine, z.im));
    TFJIT_ASSIGN_OR_RETURN(Instruction * s, Un(Opcode::kSine, z.im));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, Mul(e, c));
    TFJIT_ASSIGN_OR_RETURN(r.im, Mul(e, s));
    return r;
  }
  absl::StatusOr<ComplexParts> Log(const ComplexParts& z) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * mag, Magnitude(z));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, Un(Opcode::kLog, mag));
    TFJIT_ASSIGN_OR_RETURN(r.im, Atan2(z.im, z.re));
    return r;
  }
  absl::StatusOr<ComplexParts> Reciprocal(const ComplexParts& z) {
    ComplexParts one;
    TFJIT_ASSIGN_OR_RETURN(one.re, Splat(z.re, 1.0));
    TFJIT_ASSIGN_OR_RETURN(one.im, Splat(z.re, 0.0));
    return Divide(one, z);
  }
  // The principal square root (C99's csqrt): t = sqrt((|a| + |z|) / 2); a >= 0 gives
  // (t, b / 2t), a < 0 gives (|b| / 2t, t with b's sign, a zero's too: sqrt(-4 - 0i) = -2i,
  // the side of the branch cut the inverse trigonometry below relies on); sqrt(0) = 0.
  absl::StatusOr<ComplexParts> Sqrt(const ComplexParts& z) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * mag, Magnitude(z));
    TFJIT_ASSIGN_OR_RETURN(Instruction * abs_a, Abs(z.re));
    TFJIT_ASSIGN_OR_RETURN(Instruction * sum, Add(abs_a, mag));
    TFJIT_ASSIGN_OR_RETURN(Instruction * half, Scale(sum, 0.5));
    TFJIT_ASSIGN_OR_RETURN(Instruction * t, Un(Opcode::kSqrt, half));
    TFJIT_ASSIGN_OR_RETURN(Instruction * two_t, Scale(t, 2.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * b_over, Div(z.im, two_t));
    TFJIT_ASSIGN_OR_RETURN(Instruction * abs_b, Abs(z.im));
    TFJIT_ASSIGN_OR_RETURN(Instruction * abs_b_over, Div(abs_b, two_t));
    TFJIT_ASSIGN_OR_RETURN(Instruction * neg_t, Neg(t));
    TFJIT_ASSIGN_OR_RETURN(Instruction * b_neg, SignBit(z.im));
    TFJIT_ASSIGN_OR_RETURN(Instruction * signed_t, ctx.b().Select(b_neg, neg_t, t));
    TFJIT_ASSIGN_OR_RETURN(Instruction * a_pos, Cmp(hlo::ComparisonDirection::kGe, z.re, 0.0));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, ctx.b().Select(a_pos, t, abs_b_over));
    TFJIT_ASSIGN_OR_RETURN(r.im, ctx.b().Select(a_pos, b_over, signed_t));
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, IsZero(z));
    TFJIT_ASSIGN_OR_RETURN(ComplexParts z0, Zero(z.re));
    z0.im = z.im;
    return SelectParts(zero, z0, r);
  }
  // tanh(a + bi) = (sinh 2a + i sin 2b) / (cosh 2a + cos 2b); for |a| > 20 the quotient is
  // (sign a, 0) to the type's precision, and the formula would divide inf by inf.
  absl::StatusOr<ComplexParts> Tanh(const ComplexParts& z) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * a2, Scale(z.re, 2.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * b2, Scale(z.im, 2.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * sh, Sinh(a2));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ch, Cosh(a2));
    TFJIT_ASSIGN_OR_RETURN(Instruction * sb, Un(Opcode::kSine, b2));
    TFJIT_ASSIGN_OR_RETURN(Instruction * cb, Un(Opcode::kCosine, b2));
    TFJIT_ASSIGN_OR_RETURN(Instruction * den, Add(ch, cb));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, Div(sh, den));
    TFJIT_ASSIGN_OR_RETURN(r.im, Div(sb, den));
    TFJIT_ASSIGN_OR_RETURN(Instruction * abs_a, Abs(z.re));
    TFJIT_ASSIGN_OR_RETURN(Instruction * big, Cmp(hlo::ComparisonDirection::kGt, abs_a, 20.0));
    ComplexParts limit;
    TFJIT_ASSIGN_OR_RETURN(limit.re, Un(Opcode::kSign, z.re));
    TFJIT_ASSIGN_OR_RETURN(limit.im, Splat(z.re, 0.0));
    return SelectParts(big, limit, r);
  }

  // ---- Inverse trigonometry (Kahan, "Branch cuts for complex elementary functions", 1987) ----
  // Built from the principal square roots of 1 ± z and z ± 1, whose signed zeros put each
  // branch cut's two sides where C99's casin & co. (the kernel's std::asin) put them. 1 - z is
  // (1 - a, -b), not (1 - a, 0 - b), so that a +0 imaginary part turns into -0.

  // (k + s a, s b): k + z (s = 1) or k - z (s = -1).
  absl::StatusOr<ComplexParts> Offset(const ComplexParts& z, double k, double s) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * kk, Splat(z.re, k));
    ComplexParts r;
    if (s > 0) {
      TFJIT_ASSIGN_OR_RETURN(r.re, Add(z.re, kk));
      r.im = z.im;
    } else {
      TFJIT_ASSIGN_OR_RETURN(r.re, Sub(kk, z.re));
      TFJIT_ASSIGN_OR_RETURN(r.im, Neg(z.im));
    }
    return r;
  }
  // sqrt(1 - z) and sqrt(1 + z) (asin, acos), or sqrt(z - 1) and sqrt(z + 1) (acosh).
  absl::StatusOr<std::pair<ComplexParts, ComplexParts>> Roots(const ComplexParts& z,
                                                              bool one_minus_z) {
    TFJIT_ASSIGN_OR_RETURN(ComplexParts lo,
                           one_minus_z ? Offset(z, 1.0, -1.0) : Offset(z, -1.0, 1.0));
    TFJIT_ASSIGN_OR_RETURN(ComplexParts hi, Offset(z, 1.0, 1.0));
    TFJIT_ASSIGN_OR_RETURN(lo, Sqrt(lo));
    TFJIT_ASSIGN_OR_RETURN(hi, Sqrt(hi));
    return std::make_pair(lo, hi);
  }
  // a b + s c d, s = ±1.
  absl::StatusOr<Instruction*> Cross(Instruction* a, Instruction* b, Instruction* c, Instruction* d,
                                     double s) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * ab, Mul(a, b));
    TFJIT_ASSIGN_OR_RETURN(Instruction * cd, Mul(c, d));
    return s > 0 ? Add(ab, cd) : Sub(ab, cd);
  }
  // asin z = atan2(a, Re(sqrt(1 - z) sqrt(1 + z))) + i asinh(Im(conj(sqrt(1 - z)) sqrt(1 + z))).
  absl::StatusOr<ComplexParts> Asin(const ComplexParts& z) {
    TFJIT_ASSIGN_OR_RETURN(auto roots, Roots(z, true));
    const auto& [s1, s2] = roots;
    TFJIT_ASSIGN_OR_RETURN(Instruction * den, Cross(s1.re, s2.re, s1.im, s2.im, -1));
    TFJIT_ASSIGN_OR_RETURN(Instruction * arg, Cross(s1.re, s2.im, s1.im, s2.re, -1));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, Atan2(z.re, den));
    TFJIT_ASSIGN_OR_RETURN(r.im, AsinhValue(ctx, arg));
    return r;
  }
  // acos z = 2 atan2(Re sqrt(1 - z), Re sqrt(1 + z)) + i asinh(Im(conj(sqrt(1 + z)) sqrt(1 - z))).
  absl::StatusOr<ComplexParts> Acos(const ComplexParts& z) {
    TFJIT_ASSIGN_OR_RETURN(auto roots, Roots(z, true));
    const auto& [s1, s2] = roots;
    TFJIT_ASSIGN_OR_RETURN(Instruction * angle, Atan2(s1.re, s2.re));
    TFJIT_ASSIGN_OR_RETURN(Instruction * arg, Cross(s2.re, s1.im, s2.im, s1.re, -1));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, Scale(angle, 2.0));
    TFJIT_ASSIGN_OR_RETURN(r.im, AsinhValue(ctx, arg));
    return r;
  }
  // acosh z = asinh(Re(conj(sqrt(z - 1)) sqrt(z + 1))) + i 2 atan2(Im sqrt(z - 1), Re sqrt(z + 1)).
  absl::StatusOr<ComplexParts> Acosh(const ComplexParts& z) {
    TFJIT_ASSIGN_OR_RETURN(auto roots, Roots(z, false));
    const auto& [s1, s2] = roots;
    TFJIT_ASSIGN_OR_RETURN(Instruction * arg, Cross(s1.re, s2.re, s1.im, s2.im, 1));
    TFJIT_ASSIGN_OR_RETURN(Instruction * angle, Atan2(s1.im, s2.re));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, AsinhValue(ctx, arg));
    TFJIT_ASSIGN_OR_RETURN(r.im, Scale(angle, 2.0));
    return r;
  }
  // atanh z = (log1p(z) - log1p(-z)) / 2: the real part (log|1 + z| - log|1 - z|) / 2 keeps
  // small |z| accurate through log1p, and the imaginary part's atan2s take the cut's side from
  // the sign of b's zero.
  absl::StatusOr<ComplexParts> Atanh(const ComplexParts& z) {
    ComplexParts nz;
    TFJIT_ASSIGN_OR_RETURN(nz.re, Neg(z.re));
    TFJIT_ASSIGN_OR_RETURN(nz.im, Neg(z.im));
    TFJIT_ASSIGN_OR_RETURN(ComplexParts p, Log1p(z));
    TFJIT_ASSIGN_OR_RETURN(ComplexParts q, Log1p(nz));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(Instruction * dre, Sub(p.re, q.re));
    TFJIT_ASSIGN_OR_RETURN(Instruction * dim, Sub(p.im, q.im));
    TFJIT_ASSIGN_OR_RETURN(r.re, Scale(dre, 0.5));
    TFJIT_ASSIGN_OR_RETURN(r.im, Scale(dim, 0.5));
    return r;
  }
  // (log1p(2a + a^2 + b^2) / 2, atan2(b, 1 + a)).
  absl::StatusOr<ComplexParts> Log1p(const ComplexParts& z) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * two, Splat(z.re, 2.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * t, Add(two, z.re));
    TFJIT_ASSIGN_OR_RETURN(t, Mul(z.re, t));
    TFJIT_ASSIGN_OR_RETURN(Instruction * bb, Mul(z.im, z.im));
    TFJIT_ASSIGN_OR_RETURN(t, Add(t, bb));
    TFJIT_ASSIGN_OR_RETURN(t, Un(Opcode::kLog1p, t));
    TFJIT_ASSIGN_OR_RETURN(Instruction * one, Splat(z.re, 1.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * a1, Add(one, z.re));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, Scale(t, 0.5));
    TFJIT_ASSIGN_OR_RETURN(r.im, Atan2(z.im, a1));
    return r;
  }
  // f(iz) rotated back by -i: asinh z = -i asin(iz), atan z = -i atanh(iz).
  template <typename F>
  absl::StatusOr<ComplexParts> Rotated(const ComplexParts& z, F f) {
    ComplexParts iz;
    TFJIT_ASSIGN_OR_RETURN(iz.re, Neg(z.im));
    iz.im = z.re;
    TFJIT_ASSIGN_OR_RETURN(ComplexParts w, f(iz));
    ComplexParts r;
    r.re = w.im;
    TFJIT_ASSIGN_OR_RETURN(r.im, Neg(w.re));
    return r;
  }
};

// Both inputs of a binary op as parts broadcast to their common dims (TF's broadcasting).
absl::StatusOr<std::pair<ComplexParts, ComplexParts>> BinaryParts(LoweringContext& ctx,
                                                                  const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts x, ComplexInput(ctx, node, 0));
  TFJIT_ASSIGN_OR_RETURN(ComplexParts y, ComplexInput(ctx, node, 1));
  absl::StatusOr<std::vector<int64_t>> dims =
      BroadcastDims(x.re->shape().dims(), y.re->shape().dims());
  if (!dims.ok()) {
    return InvalidArgument(
        "node %s: %s; the two inputs of %s must have broadcast-compatible "
        "shapes",
        node.DebugName(), dims.status().message(), node.op());
  }
  for (ComplexParts* p : {&x, &y}) {
    TFJIT_ASSIGN_OR_RETURN(p->re, ctx.BroadcastTo(p->re, *dims));
    TFJIT_ASSIGN_OR_RETURN(p->im, ctx.BroadcastTo(p->im, *dims));
  }
  return std::make_pair(x, y);
}

// ---- The math_complex family ----

// Complex(real, imag): broadcast, then paired.
absl::Status LowerComplex(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(auto xy, ctx.BroadcastBinaryInputs(node));
  return SetComplexOutput(ctx, node, 0, ComplexParts{xy.first, xy.second});
}

absl::Status LowerReal(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, ComplexInput(ctx, node, 0));
  ctx.SetOutput(node, 0, z.re);
  return absl::OkStatus();
}

absl::Status LowerImag(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, ComplexInput(ctx, node, 0));
  ctx.SetOutput(node, 0, z.im);
  return absl::OkStatus();
}

absl::Status LowerConj(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, ComplexInput(ctx, node, 0));
  PartMath m{ctx};
  TFJIT_ASSIGN_OR_RETURN(z.im, m.Neg(z.im));
  return SetComplexOutput(ctx, node, 0, z);
}

absl::Status LowerComplexAbs(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, ComplexInput(ctx, node, 0));
  PartMath m{ctx};
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, m.Magnitude(z));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerAngle(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, ComplexInput(ctx, node, 0));
  PartMath m{ctx};
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, m.Atan2(z.im, z.re));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Arithmetic ----

absl::Status LowerComplexMul(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(auto xy, BinaryParts(ctx, node));
  PartMath m{ctx};
  TFJIT_ASSIGN_OR_RETURN(ComplexParts r, m.Multiply(xy.first, xy.second));
  return SetComplexOutput(ctx, node, 0, r);
}

absl::Status LowerComplexDiv(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(auto xy, BinaryParts(ctx, node));
  PartMath m{ctx};
  TFJIT_ASSIGN_OR_RETURN(ComplexParts r, m.Divide(xy.first, xy.second));
  return SetComplexOutput(ctx, node, 0, r);
}

// DivNoNan / MulNoNan: 0 where y == 0, else x / y (x * y).
template <bool kDiv>
absl::Status LowerComplexNoNan(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(auto xy, BinaryParts(ctx, node));
  const ComplexParts& y = xy.second;
  PartMath m{ctx};
  ComplexParts r;
  if (kDiv) {
    TFJIT_ASSIGN_OR_RETURN(r, m.Divide(xy.first, y));
  } else {
    TFJIT_ASSIGN_OR_RETURN(r, m.Multiply(xy.first, y));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, m.Splat(y.re, 0.0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * re0,
                         ctx.b().Compare(hlo::ComparisonDirection::kEq, y.re, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * im0,
                         ctx.b().Compare(hlo::ComparisonDirection::kEq, y.im, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * is_zero, ctx.b().Binary(Opcode::kAnd, re0, im0));
  TFJIT_ASSIGN_OR_RETURN(r.re, ctx.b().Select(is_zero, zero, r.re));
  TFJIT_ASSIGN_OR_RETURN(r.im, ctx.b().Select(is_zero, zero, r.im));
  return SetComplexOutput(ctx, node, 0, r);
}

// (x - y) * conj(x - y) = |x - y|^2 + 0i.
absl::Status LowerComplexSquaredDifference(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(auto xy, BinaryParts(ctx, node));
  PartMath m{ctx};
  TFJIT_ASSIGN_OR_RETURN(Instruction * dr, m.Sub(xy.first.re, xy.second.re));
  TFJIT_ASSIGN_OR_RETURN(Instruction * di, m.Sub(xy.first.im, xy.second.im));
  TFJIT_ASSIGN_OR_RETURN(Instruction * rr, m.Mul(dr, dr));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ii, m.Mul(di, di));
  ComplexParts r;
  TFJIT_ASSIGN_OR_RETURN(r.re, m.Add(rr, ii));
  TFJIT_ASSIGN_OR_RETURN(r.im, m.Splat(dr, 0.0));
  return SetComplexOutput(ctx, node, 0, r);
}

absl::Status LowerComplexSquare(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, ComplexInput(ctx, node, 0));
  PartMath m{ctx};
  TFJIT_ASSIGN_OR_RETURN(ComplexParts r, m.Multiply(z, z));
  return SetComplexOutput(ctx, node, 0, r);
}

// The complex unary functions, each in PartMath's formulas.
enum class Fn {
  kReciprocal,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kSign,
  kTanh,
  kTan,
  kSin,
  kCos,
  kSinh,
  kCosh,
  kExpm1,
  kLog1p,
  kSigmoid,
  kOnesLike,
  kAsin,
  kAcos,
  kAtan,
  kAsinh,
  kAcosh,
  kAtanh
};

absl::StatusOr<ComplexParts> Apply(PartMath& m, Fn fn, const ComplexParts& z) {
  switch (fn) {
    case Fn::kReciprocal:
      return m.Reciprocal(z);
    case Fn::kExp:
      return m.Exp(z);
    case Fn::kLog:
      return m.Log(z);
    case Fn::kSqrt:
      return m.Sqrt(z);
    case Fn::kRsqrt: {
      TFJIT_ASSIGN_OR_RETURN(ComplexParts r, m.Sqrt(z));
      return m.Reciprocal(r);
    }
    case Fn::kSign: {  // z / |z|, 0 at 0
      TFJIT_ASSIGN_OR_RETURN(Instruction * mag, m.Magnitude(z));
      ComplexParts r;
      TFJIT_ASSIGN_OR_RETURN(r.re, m.Div(z.re, mag));
      TFJIT_ASSIGN_OR_RETURN(r.im, m.Div(z.im, mag));
      TFJIT_ASSIGN_OR_RETURN(Instruction * zero, m.IsZero(z));
      TFJIT_ASSIGN_OR_RETURN(ComplexParts z0, m.Zero(z.re));
      return m.SelectParts(zero, z0, r);
    }
    case Fn::kTanh:
      return m.Tanh(z);
    case Fn::kTan: {  // tan z = -i tanh(iz)
      ComplexParts iz;
      TFJIT_ASSIGN_OR_RETURN(iz.re, m.Neg(z.im));
      iz.im = z.re;
      TFJIT_ASSIGN_OR_RETURN(ComplexParts t, m.Tanh(iz));
      ComplexParts r;
      r.re = t.im;
      TFJIT_ASSIGN_OR_RETURN(r.im, m.Neg(t.re));
      return r;
    }
    case Fn::kSin:    // (sin a cosh b, cos a sinh b)
    case Fn::kCos: {  // (cos a cosh b, -sin a sinh b)
      TFJIT_ASSIGN_OR_RETURN(Instruction * sa, m.Un(Opcode::kSine, z.re));
      TFJIT_ASSIGN_OR_RETURN(Instruction * ca, m.Un(Opcode::kCosine, z.re));
      TFJIT_ASSIGN_OR_RETURN(Instruction * shb, m.Sinh(z.im));
      TFJIT_ASSIGN_OR_RETURN(Instruction * chb, m.Cosh(z.im));
      ComplexParts r;
      if (fn == Fn::kSin) {
        TFJIT_ASSIGN_OR_RETURN(r.re, m.Mul(sa, chb));
        TFJIT_ASSIGN_OR_RETURN(r.im, m.Mul(ca, shb));
      } else {
        TFJIT_ASSIGN_OR_RETURN(r.re, m.Mul(ca, chb));
        TFJIT_ASSIGN_OR_RETURN(Instruction * p, m.Mul(sa, shb));
        TFJIT_ASSIGN_OR_RETURN(r.im, m.Neg(p));
      }
      return r;
    }
    case Fn::kSinh:    // (sinh a cos b, cosh a sin b)
    case Fn::kCosh: {  // (cosh a cos b, sinh a sin b)
      TFJIT_ASSIGN_OR_RETURN(Instruction * sha, m.Sinh(z.re));
      TFJIT_ASSIGN_OR_RETURN(Instruction * cha, m.Cosh(z.re));
      TFJIT_ASSIGN_OR_RETURN(Instruction * sb, m.Un(Opcode::kSine, z.im));
      TFJIT_ASSIGN_OR_RETURN(Instruction * cb, m.Un(Opcode::kCosine, z.im));
      ComplexParts r;
      TFJIT_ASSIGN_OR_RETURN(r.re, m.Mul(fn == Fn::kSinh ? sha : cha, cb));
      TFJIT_ASSIGN_OR_RETURN(r.im, m.Mul(fn == Fn::kSinh ? cha : sha, sb));
      return r;
    }
    case Fn::kExpm1: {  // (expm1(a) cos b - 2 sin^2(b/2), e^a sin b): no cancellation near 0
      TFJIT_ASSIGN_OR_RETURN(Instruction * em, m.Un(Opcode::kExpm1, z.re));
      TFJIT_ASSIGN_OR_RETURN(Instruction * e, m.Un(Opcode::kExp, z.re));
      TFJIT_ASSIGN_OR_RETURN(Instruction * cb, m.Un(Opcode::kCosine, z.im));
      TFJIT_ASSIGN_OR_RETURN(Instruction * sb, m.Un(Opcode::kSine, z.im));
      TFJIT_ASSIGN_OR_RETURN(Instruction * hb, m.Scale(z.im, 0.5));
      TFJIT_ASSIGN_OR_RETURN(Instruction * shb, m.Un(Opcode::kSine, hb));
      TFJIT_ASSIGN_OR_RETURN(Instruction * sq, m.Mul(shb, shb));
      TFJIT_ASSIGN_OR_RETURN(sq, m.Scale(sq, 2.0));
      TFJIT_ASSIGN_OR_RETURN(Instruction * p, m.Mul(em, cb));
      ComplexParts r;
      TFJIT_ASSIGN_OR_RETURN(r.re, m.Sub(p, sq));
      TFJIT_ASSIGN_OR_RETURN(r.im, m.Mul(e, sb));
      return r;
    }
    case Fn::kLog1p:
      return m.Log1p(z);
    case Fn::kAsin:
      return m.Asin(z);
    case Fn::kAcos:
      return m.Acos(z);
    case Fn::kAcosh:
      return m.Acosh(z);
    case Fn::kAtanh:
      return m.Atanh(z);
    case Fn::kAsinh:
      return m.Rotated(z, [&](const ComplexParts& w) { return m.Asin(w); });
    case Fn::kAtan:
      return m.Rotated(z, [&](const ComplexParts& w) { return m.Atanh(w); });
    case Fn::kSigmoid: {  // 1 / (1 + e^-z)
      ComplexParts nz;
      TFJIT_ASSIGN_OR_RETURN(nz.re, m.Neg(z.re));
      TFJIT_ASSIGN_OR_RETURN(nz.im, m.Neg(z.im));
      TFJIT_ASSIGN_OR_RETURN(ComplexParts e, m.Exp(nz));
      TFJIT_ASSIGN_OR_RETURN(Instruction * one, m.Splat(z.re, 1.0));
      TFJIT_ASSIGN_OR_RETURN(e.re, m.Add(one, e.re));
      return m.Reciprocal(e);
    }
    case Fn::kOnesLike: {
      ComplexParts r;
      TFJIT_ASSIGN_OR_RETURN(r.re, m.Splat(z.re, 1.0));
      TFJIT_ASSIGN_OR_RETURN(r.im, m.Splat(z.re, 0.0));
      return r;
    }
  }
  return Internal("tf2hlo: unknown complex function");
}

template <Fn kFn>
absl::Status LowerComplexUnary(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, ComplexInput(ctx, node, 0));
  PartMath m{ctx};
  TFJIT_ASSIGN_OR_RETURN(ComplexParts r, Apply(m, kFn, z));
  return SetComplexOutput(ctx, node, 0, r);
}

// Pow(x, y) = exp(y log x), 0 where x == 0 (libstdc++'s pow); Xdivy(x, y) = x / y and
// Xlogy(x, y) = x log y, 0 where x == 0.
enum class Bin { kPow, kXdivy, kXlogy };

template <Bin kOp>
absl::Status LowerComplexXBinary(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(auto xy, BinaryParts(ctx, node));
  const ComplexParts& x = xy.first;
  const ComplexParts& y = xy.second;
  PartMath m{ctx};
  ComplexParts r;
  if (kOp == Bin::kPow) {
    TFJIT_ASSIGN_OR_RETURN(ComplexParts lx, m.Log(x));
    TFJIT_ASSIGN_OR_RETURN(ComplexParts p, m.Multiply(y, lx));
    TFJIT_ASSIGN_OR_RETURN(r, m.Exp(p));
  } else if (kOp == Bin::kXdivy) {
    TFJIT_ASSIGN_OR_RETURN(r, m.Divide(x, y));
  } else {
    TFJIT_ASSIGN_OR_RETURN(ComplexParts ly, m.Log(y));
    TFJIT_ASSIGN_OR_RETURN(r, m.Multiply(x, ly));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, m.IsZero(x));
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z0, m.Zero(x.re));
  TFJIT_ASSIGN_OR_RETURN(r, m.SelectParts(zero, z0, r));
  return SetComplexOutput(ctx, node, 0, r);
}

// Equal / NotEqual: both parts compared.
template <bool kEqual>
absl::Status LowerComplexEqual(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(auto xy, BinaryParts(ctx, node));
  const hlo::ComparisonDirection dir =
      kEqual ? hlo::ComparisonDirection::kEq : hlo::ComparisonDirection::kNe;
  TFJIT_ASSIGN_OR_RETURN(Instruction * re, ctx.b().Compare(dir, xy.first.re, xy.second.re));
  TFJIT_ASSIGN_OR_RETURN(Instruction * im, ctx.b().Compare(dir, xy.first.im, xy.second.im));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                         ctx.b().Binary(kEqual ? Opcode::kAnd : Opcode::kOr, re, im));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Cast to, from and between complex types: a real source gets a zero imaginary part; a
// complex source cast to a real type keeps its real part (TF's static_cast semantics).
absl::Status LowerComplexCast(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(DType dst, tf::GetTypeAttr(node, "DstT"));
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, ComplexInput(ctx, node, 0));
  const DType part = ComplexPartDType(dst);
  for (Instruction** p : {&z.re, &z.im}) {
    if ((*p)->shape().element_type() != part) {
      TFJIT_ASSIGN_OR_RETURN(*p, ctx.b().Convert(*p, part));
    }
  }
  if (IsComplexDType(dst)) return SetComplexOutput(ctx, node, 0, z);
  ctx.SetOutput(node, 0, z.re);
  return absl::OkStatus();
}

absl::Status LowerComplexConst(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Tensor value, tf::GetTensorAttr(node, "value"));
  std::vector<int64_t> dims = value.dims();
  dims.push_back(2);
  const Tensor parts = value.BitcastView(ComplexPartDType(value.dtype()), std::move(dims));
  ctx.SetOutput(node, 0, ctx.b().Constant(hlo::Literal::FromTensor(parts)));
  return absl::OkStatus();
}

// MatMul / BatchMatMul*: four real products. BatchMatMul's adj_x/adj_y are adjoints: the
// conjugate transpose (MatMul's transpose_a/b transpose only).
absl::Status LowerComplexMatMul(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts a, ComplexInput(ctx, node, 0));
  TFJIT_ASSIGN_OR_RETURN(ComplexParts b, ComplexInput(ctx, node, 1));
  const bool batch = node.op() != "MatMul";
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(node, batch ? "adj_x" : "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(node, batch ? "adj_y" : "transpose_b", false));
  PartMath m{ctx};
  if (batch && ta) {
    TFJIT_ASSIGN_OR_RETURN(a.im, m.Neg(a.im));
  }
  if (batch && tb) {
    TFJIT_ASSIGN_OR_RETURN(b.im, m.Neg(b.im));
  }
  auto product = [&](Instruction* x, Instruction* y) -> absl::StatusOr<Instruction*> {
    return batch ? BatchMatMulValues(ctx, node, x, y, ta, tb) : MatMulValues(ctx, x, y, ta, tb);
  };
  TFJIT_ASSIGN_OR_RETURN(Instruction * rr, product(a.re, b.re));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ii, product(a.im, b.im));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ri, product(a.re, b.im));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ir, product(a.im, b.re));
  ComplexParts r;
  TFJIT_ASSIGN_OR_RETURN(r.re, m.Sub(rr, ii));
  TFJIT_ASSIGN_OR_RETURN(r.im, m.Add(ri, ir));
  return SetComplexOutput(ctx, node, 0, r);
}

// ---- Gradients of the unary math ops on complex values ----

// The (y, dy) -> z gradients as TF's complex functors (cwise_ops_gradients.h): sigmoid
// dy * y * (1 - y), tanh dy * (1 - y^2), sqrt 0.5 * dy / conj(y), rsqrt -0.5 * conj(y)^3 * dy,
// reciprocal -dy * conj(y)^2; dy takes y's shape (equal element counts, as the kernels check).
enum class MathGrad { kSigmoid, kTanh, kSqrt, kRsqrt, kReciprocal };

template <MathGrad kG>
absl::Status LowerComplexMathGrad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts y, ComplexInput(ctx, node, 0));
  TFJIT_ASSIGN_OR_RETURN(ComplexParts dy, ComplexInput(ctx, node, 1));
  if (y.re->shape().num_elements() != dy.re->shape().num_elements()) {
    return InvalidArgument(
        "node %s: The two arguments to a cwise op must have same number of "
        "elements, got %d and %d",
        node.DebugName(), y.re->shape().num_elements(), dy.re->shape().num_elements());
  }
  if (dy.re->shape().dims() != y.re->shape().dims()) {
    for (Instruction** p : {&dy.re, &dy.im}) {
      TFJIT_ASSIGN_OR_RETURN(*p, ctx.b().Reshape(*p, y.re->shape().dims()));
    }
  }
  PartMath m{ctx};
  auto scale = [&](const ComplexParts& z, double k) -> absl::StatusOr<ComplexParts> {
    TFJIT_ASSIGN_OR_RETURN(Instruction * kk, m.Splat(z.re, k));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, m.Mul(z.re, kk));
    TFJIT_ASSIGN_OR_RETURN(r.im, m.Mul(z.im, kk));
    return r;
  };
  // 1 - z.
  auto one_minus = [&](const ComplexParts& z) -> absl::StatusOr<ComplexParts> {
    TFJIT_ASSIGN_OR_RETURN(Instruction * one, m.Splat(z.re, 1.0));
    ComplexParts r;
    TFJIT_ASSIGN_OR_RETURN(r.re, m.Sub(one, z.re));
    TFJIT_ASSIGN_OR_RETURN(r.im, m.Neg(z.im));
    return r;
  };
  ComplexParts yc = y;
  TFJIT_ASSIGN_OR_RETURN(yc.im, m.Neg(y.im));
  ComplexParts r;
  if constexpr (kG == MathGrad::kSigmoid) {
    TFJIT_ASSIGN_OR_RETURN(ComplexParts t, one_minus(y));
    TFJIT_ASSIGN_OR_RETURN(t, m.Multiply(y, t));
    TFJIT_ASSIGN_OR_RETURN(r, m.Multiply(dy, t));
  } else if constexpr (kG == MathGrad::kTanh) {
    TFJIT_ASSIGN_OR_RETURN(ComplexParts t, m.Multiply(y, y));
    TFJIT_ASSIGN_OR_RETURN(t, one_minus(t));
    TFJIT_ASSIGN_OR_RETURN(r, m.Multiply(dy, t));
  } else if constexpr (kG == MathGrad::kSqrt) {
    TFJIT_ASSIGN_OR_RETURN(ComplexParts half, scale(dy, 0.5));
    TFJIT_ASSIGN_OR_RETURN(r, m.Divide(half, yc));
  } else if constexpr (kG == MathGrad::kRsqrt) {
    TFJIT_ASSIGN_OR_RETURN(ComplexParts t, m.Multiply(yc, yc));
    TFJIT_ASSIGN_OR_RETURN(t, m.Multiply(t, yc));
    TFJIT_ASSIGN_OR_RETURN(t, scale(t, -0.5));
    TFJIT_ASSIGN_OR_RETURN(r, m.Multiply(t, dy));
  } else {
    TFJIT_ASSIGN_OR_RETURN(ComplexParts t, m.Multiply(dy, yc));
    TFJIT_ASSIGN_OR_RETURN(t, m.Multiply(t, yc));
    TFJIT_ASSIGN_OR_RETURN(r, scale(t, -1.0));
  }
  return SetComplexOutput(ctx, node, 0, r);
}

// ApproximateEqual: |x - y| < tolerance, the modulus compared in the parts' type (the kernel's
// std::abs of the complex difference).
absl::Status LowerComplexApproximateEqual(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts x, ComplexInput(ctx, node, 0));
  TFJIT_ASSIGN_OR_RETURN(ComplexParts y, ComplexInput(ctx, node, 1));
  if (x.re->shape().dims() != y.re->shape().dims()) {
    return InvalidArgument("node %s: x and y must be of the same shape. x shape: %s y shape: %s",
                           node.DebugName(), DimsString(x.re->shape().dims()),
                           DimsString(y.re->shape().dims()));
  }
  TFJIT_ASSIGN_OR_RETURN(float tol, tf::GetFloatAttrOr(node, "tolerance", 1e-5f));
  PartMath m{ctx};
  ComplexParts d;
  TFJIT_ASSIGN_OR_RETURN(d.re, m.Sub(x.re, y.re));
  TFJIT_ASSIGN_OR_RETURN(d.im, m.Sub(x.im, y.im));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mag, m.Magnitude(d));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                         m.Cmp(hlo::ComparisonDirection::kLt, mag, static_cast<double>(tol)));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Prod over complex values: the reduced dims moved last and flattened to one of n elements,
// padded with ones to a power of two, then halved by pairwise complex products (log2 n levels
// of elementwise work; a reduce would need a combiner on pairs).
absl::Status LowerComplexProd(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, ComplexInput(ctx, node, 0));
  const std::vector<int64_t> dims = z.re->shape().dims();
  const int rank = static_cast<int>(dims.size());
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReductionAxes(ctx, node, rank));
  TFJIT_ASSIGN_OR_RETURN(bool keep_dims, tf::GetBoolAttrOr(node, "keep_dims", false));
  std::vector<int64_t> perm, kept;
  int64_t n = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
      perm.push_back(d);
      kept.push_back(dims[static_cast<size_t>(d)]);
    }
  }
  for (int64_t a : axes) {
    perm.push_back(a);
    n *= dims[static_cast<size_t>(a)];
  }
  PartMath m{ctx};
  ComplexParts r;
  std::vector<int64_t> flat = kept;
  flat.push_back(n);
  for (Instruction** p : {&z.re, &z.im}) {
    TFJIT_ASSIGN_OR_RETURN(*p, ctx.b().Transpose(*p, perm));
    TFJIT_ASSIGN_OR_RETURN(*p, ctx.b().Reshape(*p, flat));
  }
  int64_t width = 1;
  while (width < n) width *= 2;
  if (n == 0) {
    TFJIT_ASSIGN_OR_RETURN(r.re, ctx.Splat(z.re->shape().element_type(), 1.0, kept));
    TFJIT_ASSIGN_OR_RETURN(r.im, ctx.Splat(z.re->shape().element_type(), 0.0, kept));
  } else {
    if (width != n) {  // pad with 1 + 0i
      std::vector<hlo::PadDim> pads(kept.size(), hlo::PadDim{});
      pads.push_back({0, width - n, 0});
      for (int k = 0; k < 2; ++k) {
        Instruction*& p = k == 0 ? z.re : z.im;
        TFJIT_ASSIGN_OR_RETURN(Instruction * fill,
                               ctx.Splat(p->shape().element_type(), k == 0 ? 1.0 : 0.0, {}));
        hlo::Attributes attrs;
        attrs.padding = pads;
        TFJIT_ASSIGN_OR_RETURN(p, ctx.b().Add(Opcode::kPad, {p, fill}, std::move(attrs)));
      }
    }
    for (; width > 1; width /= 2) {
      ComplexParts lo, hi;
      for (int k = 0; k < 2; ++k) {
        std::vector<hlo::SliceDim> first, second;
        for (int64_t d : kept) {
          first.push_back({0, d, 1});
          second.push_back({0, d, 1});
        }
        first.push_back({0, width / 2, 1});
        second.push_back({width / 2, width, 1});
        Instruction* p = k == 0 ? z.re : z.im;
        TFJIT_ASSIGN_OR_RETURN((k == 0 ? lo.re : lo.im), ctx.b().Slice(p, first));
        TFJIT_ASSIGN_OR_RETURN((k == 0 ? hi.re : hi.im), ctx.b().Slice(p, second));
      }
      TFJIT_ASSIGN_OR_RETURN(z, m.Multiply(lo, hi));
    }
    TFJIT_ASSIGN_OR_RETURN(r.re, ctx.b().Reshape(z.re, kept));
    TFJIT_ASSIGN_OR_RETURN(r.im, ctx.b().Reshape(z.im, kept));
  }
  if (keep_dims) {
    std::vector<int64_t> out = dims;
    for (int64_t a : axes) out[static_cast<size_t>(a)] = 1;
    TFJIT_ASSIGN_OR_RETURN(r.re, ctx.b().Reshape(r.re, out));
    TFJIT_ASSIGN_OR_RETURN(r.im, ctx.b().Reshape(r.im, out));
  }
  return SetComplexOutput(ctx, node, 0, r);
}

// Cumprod over complex values (exclusive, reverse as TF): the axis moved last, then a
// Hillis-Steele scan: log2 n steps each multiplying by the value d places earlier (1 + 0i
// before the start). Exclusive shifts the inclusive result by one; reverse scans the
// reversed axis.
absl::Status LowerComplexCumprod(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, ComplexInput(ctx, node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(bool exclusive, tf::GetBoolAttrOr(node, "exclusive", false));
  TFJIT_ASSIGN_OR_RETURN(bool reverse, tf::GetBoolAttrOr(node, "reverse", false));
  const std::vector<int64_t> dims = z.re->shape().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (axis_v.size() != 1 || axis_v[0] < -rank || axis_v[0] >= rank) {
    return InvalidArgument("node %s: axis must be a scalar in [-%d, %d)", node.DebugName(), rank,
                           rank);
  }
  const int64_t axis = axis_v[0] < 0 ? axis_v[0] + rank : axis_v[0];
  const int64_t n = dims[static_cast<size_t>(axis)];
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) perm.push_back(d);
  }
  perm.push_back(axis);
  std::vector<int64_t> inverse(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) inverse[static_cast<size_t>(perm[static_cast<size_t>(d)])] = d;
  std::vector<int64_t> moved;
  for (int64_t d : perm) moved.push_back(dims[static_cast<size_t>(d)]);
  const int64_t last = rank - 1;
  PartMath m{ctx};
  // Parts shifted `by` places along the last axis, 1 + 0i filling the front.
  auto shift = [&](const ComplexParts& x, int64_t by) -> absl::StatusOr<ComplexParts> {
    ComplexParts r;
    for (int k = 0; k < 2; ++k) {
      Instruction* p = k == 0 ? x.re : x.im;
      std::vector<hlo::PadDim> pads(static_cast<size_t>(rank), hlo::PadDim{});
      pads.back() = {by, -by, 0};
      TFJIT_ASSIGN_OR_RETURN(Instruction * fill,
                             ctx.Splat(p->shape().element_type(), k == 0 ? 1.0 : 0.0, {}));
      hlo::Attributes attrs;
      attrs.padding = pads;
      TFJIT_ASSIGN_OR_RETURN((k == 0 ? r.re : r.im),
                             ctx.b().Add(Opcode::kPad, {p, fill}, std::move(attrs)));
    }
    return r;
  };
  for (Instruction** p : {&z.re, &z.im}) {
    TFJIT_ASSIGN_OR_RETURN(*p, ctx.b().Transpose(*p, perm));
    if (reverse) {
      TFJIT_ASSIGN_OR_RETURN(*p, ReverseDims(ctx, *p, {last}));
    }
  }
  for (int64_t d = 1; d < n; d *= 2) {
    TFJIT_ASSIGN_OR_RETURN(ComplexParts earlier, shift(z, d));
    TFJIT_ASSIGN_OR_RETURN(z, m.Multiply(z, earlier));
  }
  if (exclusive && n > 0) {
    TFJIT_ASSIGN_OR_RETURN(z, shift(z, 1));
  }
  for (Instruction** p : {&z.re, &z.im}) {
    if (reverse) {
      TFJIT_ASSIGN_OR_RETURN(*p, ReverseDims(ctx, *p, {last}));
    }
    TFJIT_ASSIGN_OR_RETURN(*p, ctx.b().Transpose(*p, inverse));
  }
  return SetComplexOutput(ctx, node, 0, z);
}

// ConjugateTranspose: the transpose of each part, then the imaginary part negated.
absl::Status LowerComplexConjugateTranspose(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_RETURN_IF_ERROR(LowerComponentwise(ctx, node));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y, ctx.Value(tf::Output{const_cast<tf::Node*>(&node), 0}));
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, SplitComplex(ctx, y));
  PartMath m{ctx};
  TFJIT_ASSIGN_OR_RETURN(z.im, m.Neg(z.im));
  return SetComplexOutput(ctx, node, 0, z);
}

std::vector<OpLowering> MakeComplexTable() {
  std::vector<OpLowering> t = {
      {"Complex", LowerComplex},
      {"Real", LowerReal},
      {"Imag", LowerImag},
      {"Conj", LowerConj},
      {"ComplexAbs", LowerComplexAbs},
      {"Angle", LowerAngle},
      {"Mul", LowerComplexMul},
      {"Div", LowerComplexDiv},
      {"RealDiv", LowerComplexDiv},
      {"DivNoNan", LowerComplexNoNan<true>},
      {"MulNoNan", LowerComplexNoNan<false>},
      {"SquaredDifference", LowerComplexSquaredDifference},
      {"Square", LowerComplexSquare},
      {"Reciprocal", LowerComplexUnary<Fn::kReciprocal>},
      {"Inv", LowerComplexUnary<Fn::kReciprocal>},
      {"Exp", LowerComplexUnary<Fn::kExp>},
      {"Log", LowerComplexUnary<Fn::kLog>},
      {"Sqrt", LowerComplexUnary<Fn::kSqrt>},
      {"Rsqrt", LowerComplexUnary<Fn::kRsqrt>},
      {"Sign", LowerComplexUnary<Fn::kSign>},
      {"Tanh", LowerComplexUnary<Fn::kTanh>},
      {"Tan", LowerComplexUnary<Fn::kTan>},
      {"Sin", LowerComplexUnary<Fn::kSin>},
      {"Cos", LowerComplexUnary<Fn::kCos>},
      {"Sinh", LowerComplexUnary<Fn::kSinh>},
      {"Cosh", LowerComplexUnary<Fn::kCosh>},
      {"Expm1", LowerComplexUnary<Fn::kExpm1>},
      {"Log1p", LowerComplexUnary<Fn::kLog1p>},
      {"Sigmoid", LowerComplexUnary<Fn::kSigmoid>},
      {"OnesLike", LowerComplexUnary<Fn::kOnesLike>},
      {"Asin", LowerComplexUnary<Fn::kAsin>},
      {"Acos", LowerComplexUnary<Fn::kAcos>},
      {"Atan", LowerComplexUnary<Fn::kAtan>},
      {"Asinh", LowerComplexUnary<Fn::kAsinh>},
      {"Acosh", LowerComplexUnary<Fn::kAcosh>},
      {"Atanh", LowerComplexUnary<Fn::kAtanh>},
      {"Pow", LowerComplexXBinary<Bin::kPow>},
      {"Xdivy", LowerComplexXBinary<Bin::kXdivy>},
      {"Xlogy", LowerComplexXBinary<Bin::kXlogy>},
      {"Equal", LowerComplexEqual<true>},
      {"NotEqual", LowerComplexEqual<false>},
      {"Cast", LowerComplexCast},
      {"Const", LowerComplexConst},
      {"MatMul", LowerComplexMatMul},
      {"BatchMatMul", LowerComplexMatMul},
      {"BatchMatMulV2", LowerComplexMatMul},
      {"BatchMatMulV3", LowerComplexMatMul},
      {"Prod", LowerComplexProd},
      {"ConjugateTranspose", LowerComplexConjugateTranspose},
      {"Cumprod", LowerComplexCumprod},
      {"ApproximateEqual", LowerComplexApproximateEqual},
      {"SigmoidGrad", LowerComplexMathGrad<MathGrad::kSigmoid>},
      {"TanhGrad", LowerComplexMathGrad<MathGrad::kTanh>},
      {"SqrtGrad", LowerComplexMathGrad<MathGrad::kSqrt>},
      {"RsqrtGrad", LowerComplexMathGrad<MathGrad::kRsqrt>},
      {"ReciprocalGrad", LowerComplexMathGrad<MathGrad::kReciprocal>},
      {"InvGrad", LowerComplexMathGrad<MathGrad::kReciprocal>},
  };
  AppendComplexLinearLowerings(&t);  // math_complex_linear_lowerings.cc
  // Where reads a complex input itself (an element is nonzero when either part is); Bitcast
  // reinterprets the held parts' bytes, which are std::complex's.
  for (const char* op : {"Where", "Bitcast"}) {
    if (const OpLowering* l = FindOpLowering(op)) t.push_back(*l);
  }
  AppendFftComplexLowerings(&t);
  return t;
}

}  // namespace

const OpLowering* FindComplexLowering(absl::string_view op) {
  static const auto* table = [] {
    auto* m = new absl::flat_hash_map<std::string, OpLowering>();
    for (const OpLowering& l : MakeComplexTable()) (*m)[l.op] = l;
    return m;
  }();
  auto it = table->find(op);
  return it == table->end() ? nullptr : &it->second;
}

}  // namespace tfjit::tf2hlo
