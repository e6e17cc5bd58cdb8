// Inline f32 exp/log/tanh/logistic for the elemental emitter. Everything is straight-line IR
// (llvm.fma, llvm.roundeven, bit casts, selects), so LLVM's loop vectorizer widens it to
// AVX2/AVX-512. Coefficients were fitted by us with a Remez exchange (mpmath, 40 digits) on the
// stated interval and weight, then rounded to f32. Errors are in ulps of f32 at the exact
// result's binade, against the function computed in double. "Exhaustive" bounds come from a
// scalar C++ model performing the same f32 operation sequence (same fma/rounding steps) over
// all 2^32 inputs; "dense" from tests/unit/backends/fast_math_test.cc, which runs the JIT
// itself over 2^24 inputs spread over every exponent and asserts the bound.
//
// llvm.fma (not fmuladd) is used throughout so results are the same on every FMA host and the
// compensated steps stay exact; hosts without FMA get correct but slower (libcall) code.
#include "backends/llvm/fast_math.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "llvm/IR/Intrinsics.h"

namespace tfjit::llvm_ir {
namespace {

// ln 2 split for Cody–Waite reduction: kLn2Hi has 9 significant bits, so n * kLn2Hi is exact
// for |n| < 2^15 and x - n * kLn2Hi is exact near x ≈ n ln 2 (even without FMA).
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194442e-4f;  // ln 2 - kLn2Hi, rounded to f32
constexpr float kLog2E = 1.44269502f;

// Shorthands for f32 arithmetic on `type` (float or <N x float>) and its i32 counterpart.
class F32Ops {
 public:
  F32Ops(llvm::IRBuilder<>* b, llvm::Type* type)
      : b_(b), f_(type), i_(type->getWithNewType(b->getInt32Ty())) {}

  llvm::IRBuilder<>* b() const { return b_; }
  llvm::Type* IntType() const { return i_; }
  llvm::Value* F(float v) const { return llvm::ConstantFP::get(f_, v); }
  llvm::Value* I(int32_t v) const {
    return llvm::ConstantInt::get(i_, static_cast<uint64_t>(static_cast<int64_t>(v)), true);
  }
  llvm::Value* Fma(llvm::Value* a, llvm::Value* x, llvm::Value* c) const {
    return b_->CreateIntrinsic(llvm::Intrinsic::fma, {f_}, {a, x, c});
  }
  llvm::Value* Abs(llvm::Value* x) const {
    return b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  }
  llvm::Value* IsNan(llvm::Value* x) const { return b_->CreateFCmpUNO(x, x); }
  llvm::Value* ToInt(llvm::Value* x) const { return b_->CreateBitCast(x, i_); }
  llvm::Value* ToFloat(llvm::Value* i) const { return b_->CreateBitCast(i, f_); }
  // Horner evaluation of c[0] + c[1] t + c[2] t^2 + ..., with fma at every step.
  llvm::Value* Poly(llvm::Value* t, std::initializer_list<float> c) const {
    const float* coeffs = c.begin();
    llvm::Value* acc = F(coeffs[c.size() - 1]);
    for (size_t k = c.size() - 1; k-- > 0;) acc = Fma(acc, t, F(coeffs[k]));
    return acc;
  }
  // 2^n for i32 n in [-126, 127], built from the exponent bits.
  llvm::Value* Pow2(llvm::Value* n) const {
    return ToFloat(b_->CreateShl(b_->CreateAdd(n, I(127)), 23));
  }

 private:
  llvm::IRBuilder<>* b_;
  llvm::Type* f_;
  llvm::Type* i_;
};

// exp(x) for all x except NaN (the caller selects NaN through).
//
// Algorithm: clamp x to [-104, 89] (NaN goes to -104: everything stays well defined), then
// n = roundeven(x log2 e), r = x - n ln2 (Cody–Waite, two constants, |r| <= ln2/2 + tiny),
// e^r = 1 + r + r^2 Q(r) with Q of degree 4: the Remez minimax fit of (e^r - 1 - r) / r^2 on
// [-ln2/2, ln2/2] for relative error of e^r (fit error 3.1e-9 = 0.05 ulp). The result
// p * 2^n is formed as (p * 2^(n>>1)) * 2^(n - (n>>1)): both factors are normal floats for
// n in [-150, 128], the first product is exact and the second rounds once, so results in the
// denormal range are rounded correctly from p, x > ln(FLT_MAX) overflows to +inf and
// x < ln(2^-150) underflows to +0.
// Measured: max 1.014 ulp exhaustive (at x = 37.78), 0.969 dense.
llvm::Value* EmitExpCore(const F32Ops& o, llvm::Value* x) {
  llvm::IRBuilder<>* b = o.b();
  llvm::Value* xc = b->CreateSelect(b->CreateFCmpULT(x, o.F(-104.0f)), o.F(-104.0f), x);
  xc = b->CreateSelect(b->CreateFCmpOGT(xc, o.F(89.0f)), o.F(89.0f), xc);
  llvm::Value* n =
      b->CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, b->CreateFMul(xc, o.F(kLog2E)));
  llvm::Value* neg_n = b->CreateFNeg(n);
  llvm::Value* r = o.Fma(neg_n, o.F(kLn2Hi), xc);
  r = o.Fma(neg_n, o.F(kLn2Lo), r);
  llvm::Value* q =
      o.Poly(r, {0.49999994f, 0.166665211f, 0.041668389f, 0.00836871006f, 0.00138146139f});
  llvm::Value* p = b->CreateFAdd(o.Fma(b->CreateFMul(r, r), q, r), o.F(1.0f));
  llvm::Value* ni = b->CreateFPToSI(n, o.IntType());
  llvm::Value* n1 = b->CreateAShr(ni, o.I(1));
  llvm::Value* n2 = b->CreateSub(ni, n1);
  return b->CreateFMul(b->CreateFMul(p, o.Pow2(n1)), o.Pow2(n2));
}

}  // namespace

// exp: EmitExpCore with NaN passed through. Max error 1.014 ulp (measured, see above);
// exp(-inf) = +0, exp(+inf) = +inf, exp(±0) = 1, denormal results are produced (not flushed).
llvm::Value* EmitFastExpF32(llvm::IRBuilder<>* b, llvm::Value* x) {
  F32Ops o(b, x->getType());
  return b->CreateSelect(o.IsNan(x), x, EmitExpCore(o, x));
}

// log(x) = e ln2 + log1p(f), where x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)).
// Denormal x are first scaled by 2^23. log1p(f) = f - f^2/2 + f^3 Q(f), Q of degree 8: the
// Remez minimax fit of (log1p(f) - f + f^2/2) / f^3 on [sqrt(1/2) - 1, sqrt(2) - 1] for
// relative error of log1p (fit error 1.5e-9 = 0.03 ulp). e ln2 is added in two parts
// (Cody–Waite), the large part last. Specials by select: log(±0) = -inf, log(x<0) = NaN,
// log(+inf) = +inf, NaN passes through.
// Measured: max 0.822 ulp exhaustive (at x = 0.7018), 0.791 dense.
llvm::Value* EmitFastLogF32(llvm::IRBuilder<>* b, llvm::Value* x) {
  F32Ops o(b, x->getType());
  llvm::Value* denormal = b->CreateFCmpOLT(x, o.F(1.17549435e-38f));
  llvm::Value* xs = b->CreateSelect(denormal, b->CreateFMul(x, o.F(8388608.0f)), x);
  llvm::Value* bits = o.ToInt(xs);
  llvm::Value* e = b->CreateSub(b->CreateAnd(b->CreateLShr(bits, 23), o.I(0xff)),
                                b->CreateSelect(denormal, o.I(127 + 23), o.I(127)));
  llvm::Value* mant = b->CreateOr(b->CreateAnd(bits, o.I(0x7fffff)), o.I(0x3f800000));
  // Mantissas above sqrt(2) (0x3fb504f3) are halved so that f stays in [-0.293, 0.415).
  llvm::Value* high = b->CreateICmpUGT(mant, o.I(0x3fb504f3));
  mant = b->CreateSelect(high, b->CreateSub(mant, o.I(0x00800000)), mant);
  e = b->CreateAdd(e, b->CreateZExt(high, e->getType()));
  llvm::Value* f = b->CreateFSub(o.ToFloat(mant), o.F(1.0f));  // exact (Sterbenz)
  llvm::Value* fe = b->CreateSIToFP(e, x->getType());
  llvm::Value* q =
      o.Poly(f, {0.333333135f, -0.249999836f, 0.200021863f, -0.166694835f, 0.142171249f,
                 -0.123774998f, 0.118887648f, -0.118466496f, 0.0693726316f});
  llvm::Value* z = b->CreateFMul(f, f);
  llvm::Value* y = o.Fma(b->CreateFMul(z, f), q, b->CreateFMul(fe, o.F(kLn2Lo)));
  y = o.Fma(o.F(-0.5f), z, y);
  llvm::Value* r = o.Fma(fe, o.F(kLn2Hi), b->CreateFAdd(f, y));
  llvm::Value* inf = o.F(INFINITY);
  r = b->CreateSelect(b->CreateFCmpOEQ(x, o.F(0.0f)), b->CreateFNeg(inf), r);
  r = b->CreateSelect(b->CreateFCmpOLT(x, o.F(0.0f)), o.F(NAN), r);
  r = b->CreateSelect(b->CreateFCmpOEQ(x, inf), inf, r);
  return b->CreateSelect(o.IsNan(x), x, r);
}

// tanh: for |x| < 0.625, tanh x = x + x^3 R(x^2) with R of degree 5: the Remez minimax fit of
// (tanh(s) - s) / s^3 as a function of z = s^2 on [0, 0.390625] (absolute error weighted by
// z + 1e-3; fit error 1.5e-10). This keeps full relative accuracy near 0 (tanh(±0) = ±0,
// denormals return themselves). Otherwise tanh|x| = 1 - 2 / (exp(2|x|) + 1) (>= 0.55, so no
// cancellation) computed on |x|; x's sign is restored at the end. It saturates to ±1 for
// |x| >~ 9 and at ±inf.
// Measured: max 1.332 ulp exhaustive (at x = 0.6310), 1.288 dense.
llvm::Value* EmitFastTanhF32(llvm::IRBuilder<>* b, llvm::Value* x) {
  F32Ops o(b, x->getType());
  llvm::Value* a = o.Abs(x);
  llvm::Value* z = b->CreateFMul(x, x);
  llvm::Value* rz = o.Poly(z, {-0.333333313f, 0.133332118f, -0.0539474599f, 0.0217041597f,
                               -0.0081852749f, 0.00214967807f});
  llvm::Value* small = o.Fma(b->CreateFMul(x, z), rz, x);
  llvm::Value* e = EmitExpCore(o, b->CreateFMul(a, o.F(2.0f)));
  llvm::Value* big =
      b->CreateFSub(o.F(1.0f), b->CreateFDiv(o.F(2.0f), b->CreateFAdd(e, o.F(1.0f))));
  llvm::Value* r = b->CreateSelect(b->CreateFCmpOLT(a, o.F(0.625f)), small, big);
  // Both branches have |r| <= 1 and r's sign is x's: copysign restores it for the big branch
  // and for x = -0, where the fma above yields +0.
  r = b->CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
  return b->CreateSelect(o.IsNan(x), x, r);
}

// logistic(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, with e = exp(-|x|) <= 1:
// nothing overflows, so for x < -ln(FLT_MAX) ≈ -88.7 the small (denormal) result is returned
// where the evaluator's 1/(1+exp(-x)) in f32 gives 0. d = 1 + e is rounded; its error
// dl = (1 - d) + e is exact (Fast2Sum), and one Newton-style correction
// q = q0 + (num - q0 d - q0 dl) / d removes the rounding of d and of the quotient, leaving
// mostly exp's error. logistic(-inf) = 0, logistic(+inf) = 1, NaN passes through.
// Measured: max 1.480 ulp exhaustive (at x = -4.846), 1.431 dense.
llvm::Value* EmitFastLogisticF32(llvm::IRBuilder<>* b, llvm::Value* x) {
  F32Ops o(b, x->getType());
  llvm::Value* e = EmitExpCore(o, b->CreateFNeg(o.Abs(x)));
  llvm::Value* one = o.F(1.0f);
  llvm::Value* d = b->CreateFAdd(one, e);
  llvm::Value* dl = b->CreateFAdd(b->CreateFSub(one, d), e);
  llvm::Value* num = b->CreateSelect(b->CreateFCmpOGE(x, o.F(0.0f)), one, e);
  llvm::Value* inv = b->CreateFDiv(one, d);
  llvm::Value* q0 = b->CreateFMul(num, inv);
  llvm::Value* residual = o.Fma(b->CreateFNeg(q0), dl, o.Fma(b->CreateFNeg(q0), d, num));
  llvm::Value* q = o.Fma(residual, inv, q0);
  return b->CreateSelect(o.IsNan(x), x, q);
}

}  // namespace tfjit::llvm_ir
