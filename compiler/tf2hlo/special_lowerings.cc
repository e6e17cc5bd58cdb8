// Lowerings of the special ops to HLO (docs/DESIGN.md, "Op families"): elementwise f64
// formulas with fixed term counts (XLA's math library style), the same algorithms as
// special_kernels.cc: Newton steps from Giles' guess (Erfinv, Ndtri), power and asymptotic
// series (BesselI0e/I1e), series and continued fractions in fixed-count while loops
// (Igamma(c), Betainc), Euler-Maclaurin (Zeta, Polygamma). Every type computes in f64, where
// the CPU backend calls libm, so compiled code agrees with the kernels to a few ulps; lgamma
// is Lanczos' (g = 7, 9 terms). Also the lowerings of Erfc, Lgamma and Digamma, and of Erf,
// Xdivy and Xlogy, which stay in T with HLO's erf, divide and log. The domains where the fixed
// counts are exact to double precision: Igamma(c) a <~ 1000, Betainc a, b <~ 1000, Zeta and
// Polygamma q > -2.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using hlo::Opcode;

constexpr double kPi = 3.14159265358979323846;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr DType kF64 = DType::kFloat64;

// f64 elementwise expressions over one shape in one computation. The first builder error is
// kept in status() (later calls then return an operand unchanged), so formulas read as
// formulas.
class Math {
 public:
  Math(hlo::Builder& b, std::vector<int64_t> dims) : b_(b), dims_(std::move(dims)) {}

  hlo::Builder& b() { return b_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  const absl::Status& status() const { return status_; }

  Instruction* K(double v) {
    return Take(b_.Broadcast(b_.ScalarConstant<double>(kF64, v), dims_, {}), nullptr);
  }
  Instruction* Add(Instruction* a, Instruction* c) { return Bin(Opcode::kAdd, a, c); }
  Instruction* Sub(Instruction* a, Instruction* c) { return Bin(Opcode::kSubtract, a, c); }
  Instruction* Mul(Instruction* a, Instruction* c) { return Bin(Opcode::kMultiply, a, c); }
  Instruction* Div(Instruction* a, Instruction* c) { return Bin(Opcode::kDivide, a, c); }
  Instruction* Max(Instruction* a, Instruction* c) { return Bin(Opcode::kMaximum, a, c); }
  Instruction* Min(Instruction* a, Instruction* c) { return Bin(Opcode::kMinimum, a, c); }
  Instruction* Pow(Instruction* a, Instruction* c) { return Bin(Opcode::kPower, a, c); }
  Instruction* Rem(Instruction* a, Instruction* c) { return Bin(Opcode::kRemainder, a, c); }
  Instruction* Add(Instruction* a, double c) { return Add(a, K(c)); }
  Instruction* Sub(Instruction* a, double c) { return Sub(a, K(c)); }
  Instruction* Mul(Instruction* a, double c) { return Mul(a, K(c)); }
  Instruction* Div(Instruction* a, double c) { return Div(a, K(c)); }
  Instruction* Sub(double a, Instruction* c) { return Sub(K(a), c); }
  Instruction* Div(double a, Instruction* c) { return Div(K(a), c); }
  Instruction* Un(Opcode op, Instruction* a) { return Take(b_.Unary(op, a), a); }
  Instruction* Exp(Instruction* a) { return Un(Opcode::kExp, a); }
  Instruction* Log(Instruction* a) { return Un(Opcode::kLog, a); }
  Instruction* Log1p(Instruction* a) { return Un(Opcode::kLog1p, a); }
  Instruction* Sqrt(Instruction* a) { return Un(Opcode::kSqrt, a); }
  Instruction* Abs(Instruction* a) { return Un(Opcode::kAbs, a); }
  Instruction* Neg(Instruction* a) { return Un(Opcode::kNegate, a); }
  Instruction* Floor(Instruction* a) { return Un(Opcode::kFloor, a); }
  Instruction* Cmp(ComparisonDirection d, Instruction* a, Instruction* c) {
    return Take(b_.Compare(d, a, c), a);
  }
  Instruction* Lt(Instruction* a, Instruction* c) { return Cmp(ComparisonDirection::kLt, a, c); }
  Instruction* Le(Instruction* a, Instruction* c) { return Cmp(ComparisonDirection::kLe, a, c); }
  Instruction* Gt(Instruction* a, Instruction* c) { return Cmp(ComparisonDirection::kGt, a, c); }
  Instruction* Eq(Instruction* a, Instruction* c) { return Cmp(ComparisonDirection::kEq, a, c); }
  Instruction* Ne(Instruction* a, Instruction* c) { return Cmp(ComparisonDirection::kNe, a, c); }
  Instruction* Lt(Instruction* a, double c) { return Lt(a, K(c)); }
  Instruction* Le(Instruction* a, double c) { return Le(a, K(c)); }
  Instruction* Gt(Instruction* a, double c) { return Gt(a, K(c)); }
  Instruction* Eq(Instruction* a, double c) { return Eq(a, K(c)); }
  Instruction* And(Instruction* a, Instruction* c) { return Bin(Opcode::kAnd, a, c); }
  Instruction* Or(Instruction* a, Instruction* c) { return Bin(Opcode::kOr, a, c); }
  Instruction* IsNan(Instruction* a) { return Ne(a, a); }
  Instruction* Sel(Instruction* p, Instruction* t, Instruction* f) {
    return Take(b_.Select(p, t, f), t);
  }
  Instruction* Sel(Instruction* p, double t, Instruction* f) { return Sel(p, K(t), f); }
  Instruction* Take(absl::StatusOr<Instruction*> r, Instruction* fallback) {
    if (r.ok()) return *r;
    if (status_.ok()) status_ = r.status();
    return fallback;
  }

 private:
  Instruction* Bin(Opcode op, Instruction* a, Instruction* c) {
    return Take(b_.Binary(op, a, c), a);
  }

  hlo::Builder& b_;
  std::vector<int64_t> dims_;
  absl::Status status_;
};

// A while loop of `trips` iterations over f64 values of m's shape: body(m', i, state, inv)
// gives the next state (i: the iteration number as an f64 value, 0-based; inv: `invariants`,
// values of the enclosing computation the body reads, carried through the loop unchanged).
using LoopBody = std::function<std::vector<Instruction*>(
    Math&, Instruction*, const std::vector<Instruction*>&, const std::vector<Instruction*>&)>;

absl::StatusOr<std::vector<Instruction*>> FixedLoop(LoweringContext& ctx, Math& m,
                                                    const std::string& name, int64_t trips,
                                                    const std::vector<Instruction*>& state_init,
                                                    const std::vector<Instruction*>& invariants,
                                                    const LoopBody& body) {
  TFJIT_RETURN_IF_ERROR(m.status());
  std::vector<Instruction*> init = state_init;
  init.insert(init.end(), invariants.begin(), invariants.end());
  const size_t n_state = state_init.size();
  std::vector<hlo::Shape> shapes = {hlo::Shape::Scalar(kF64)};
  for (Instruction* v : init) shapes.push_back(v->shape());
  const hlo::Shape state_shape = hlo::Shape::Tuple(shapes);
  hlo::Computation* cond = ctx.module()->AddComputation(name + "_cond");
  {
    hlo::Builder cb(cond);
    Instruction* p = cb.Parameter(0, state_shape, "state");
    TFJIT_ASSIGN_OR_RETURN(Instruction * i, cb.GetTupleElement(p, 0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * lt,
                           cb.Compare(ComparisonDirection::kLt, i,
                                      cb.ScalarConstant<double>(kF64, static_cast<double>(trips))));
    cond->set_root(lt);
  }
  hlo::Computation* loop = ctx.module()->AddComputation(name + "_body");
  {
    hlo::Builder lb(loop);
    Instruction* p = lb.Parameter(0, state_shape, "state");
    TFJIT_ASSIGN_OR_RETURN(Instruction * i, lb.GetTupleElement(p, 0));
    std::vector<Instruction*> state;
    for (size_t k = 0; k < init.size(); ++k) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * v, lb.GetTupleElement(p, static_cast<int64_t>(k + 1)));
      state.push_back(v);
    }
    Math inner(lb, m.dims());
    TFJIT_ASSIGN_OR_RETURN(Instruction * iv, lb.Broadcast(i, m.dims(), {}));
    const std::vector<Instruction*> inv(state.begin() + static_cast<std::ptrdiff_t>(n_state),
                                        state.end());
    state.resize(n_state);
    std::vector<Instruction*> next = body(inner, iv, state, inv);
    TFJIT_RETURN_IF_ERROR(inner.status());
    next.insert(next.end(), inv.begin(), inv.end());
    TFJIT_ASSIGN_OR_RETURN(Instruction * i1,
                           lb.Binary(Opcode::kAdd, i, lb.ScalarConstant<double>(kF64, 1.0)));
    next.insert(next.begin(), i1);
    TFJIT_ASSIGN_OR_RETURN(Instruction * root, lb.Tuple(next));
    loop->set_root(root);
  }
  std::vector<Instruction*> all = {m.b().ScalarConstant<double>(kF64, 0.0)};
  all.insert(all.end(), init.begin(), init.end());
  TFJIT_ASSIGN_OR_RETURN(Instruction * tuple, m.b().Tuple(all));
  TFJIT_ASSIGN_OR_RETURN(Instruction * w, m.b().Add(Opcode::kWhile, {tuple}, {}, {cond, loop}));
  std::vector<Instruction*> out;
  for (size_t k = 0; k < n_state; ++k) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * v, m.b().GetTupleElement(w, static_cast<int64_t>(k + 1)));
    out.push_back(v);
  }
  return out;
}

// ---- Shared pieces ----

// lgamma for x > 0 (Lanczos, g = 7, 9 coefficients) with the reflection below 1/2.
Instruction* Lgamma(Math& m, Instruction* x) {
  static constexpr double kC[] = {
      0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
      771.32342877765313,   -176.61502916214059,   12.507343278686905,
      -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  Instruction* small = m.Lt(x, 0.5);
  Instruction* z = m.Sel(small, m.Sub(1.0, x), x);
  Instruction* zm = m.Sub(z, 1.0);
  Instruction* a = m.K(kC[0]);
  for (int i = 1; i < 9; ++i) a = m.Add(a, m.Div(kC[i], m.Add(zm, static_cast<double>(i))));
  Instruction* t = m.Add(zm, 7.5);
  Instruction* lg = m.Add(
      m.Sub(m.Add(m.K(0.5 * std::log(2 * kPi)), m.Mul(m.Add(zm, 0.5), m.Log(t))), t), m.Log(a));
  Instruction* s = m.Abs(m.Un(Opcode::kSine, m.Mul(x, kPi)));
  Instruction* reflected = m.Sub(m.Log(m.Div(kPi, s)), lg);
  return m.Sel(small, reflected, lg);
}

// Giles' single-precision erfinv for y given w = -log(1 - y^2).
Instruction* GilesErfinv(Math& m, Instruction* y, Instruction* w) {
  Instruction* w1 = m.Sub(w, 2.5);
  Instruction* p1 = m.K(2.81022636e-08);
  for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                   -0.00417768164, 0.246640727, 1.50140941}) {
    p1 = m.Add(m.Mul(p1, w1), c);
  }
  Instruction* w2 = m.Sub(m.Sqrt(w), 3.0);
  Instruction* p2 = m.K(-0.000200214257);
  for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                   0.00943887047, 1.00167406, 2.83297682}) {
    p2 = m.Add(m.Mul(p2, w2), c);
  }
  return m.Mul(m.Sel(m.Lt(w, 5.0), p1, p2), y);
}

// erfc: 1 - erf(|z|) below 2, the 60-term continued fraction above, reflected for z < 0.
Instruction* Erfc(Math& m, Instruction* z) {
  Instruction* az = m.Abs(z);
  Instruction* near = m.Sub(1.0, m.Un(Opcode::kErf, az));
  Instruction* zz = m.Max(az, m.K(2.0));
  Instruction* f = zz;
  for (int n = 60; n >= 1; --n) f = m.Add(zz, m.Div(n / 2.0, f));
  Instruction* far = m.Div(m.Exp(m.Neg(m.Mul(zz, zz))), m.Mul(f, std::sqrt(kPi)));
  Instruction* e = m.Sel(m.Lt(az, 2.0), near, far);
  return m.Sel(m.Lt(z, 0.0), m.Sub(2.0, e), e);
}

// ---- Unary ops ----

Instruction* Erfinv(Math& m, Instruction* y) {
  Instruction* w = m.Neg(m.Log(m.Mul(m.Sub(1.0, y), m.Add(y, 1.0))));
  Instruction* x = GilesErfinv(m, y, w);
  for (int i = 0; i < 3; ++i) {
    Instruction* err = m.Sub(m.Un(Opcode::kErf, x), y);
    Instruction* slope = m.Mul(m.Exp(m.Neg(m.Mul(x, x))), 2 / std::sqrt(kPi));
    x = m.Sub(x, m.Div(err, slope));
  }
  return m.Sel(m.Eq(m.Abs(y), 1.0), m.Mul(y, kInf), x);
}

// The Newton steps run in a loop: unrolled, each step's uses of the previous x make the fused
// expression a DAG whose elemental emission grows exponentially with the step count.
absl::StatusOr<Instruction*> Ndtri(LoweringContext& ctx, Math& m, Instruction* p) {
  Instruction* q = m.Min(p, m.Sub(1.0, p));
  Instruction* w = m.Neg(m.Log(m.Mul(m.Mul(q, 4.0), m.Sub(1.0, q))));
  Instruction* guess = m.Mul(GilesErfinv(m, m.Sub(m.Mul(q, 2.0), 1.0), w), std::sqrt(2.0));
  Instruction* l = m.Mul(m.Log(q), -2.0);
  Instruction* tail = m.Neg(m.Sqrt(m.Sub(m.Sub(l, m.Log(l)), std::log(2 * kPi))));
  TFJIT_ASSIGN_OR_RETURN(
      std::vector<Instruction*> s,
      FixedLoop(ctx, m, "ndtri_newton", 4, {m.Sel(m.Lt(w, 25.0), guess, tail), q}, {},
                [](Math& n, Instruction*, const std::vector<Instruction*>& st,
                   const std::vector<Instruction*>&) {
                  Instruction* x = st[0];
                  Instruction* r = n.Sub(
                      n.Div(n.Mul(Erfc(n, n.Div(n.Neg(x), std::sqrt(2.0))), 0.5), st[1]), 1.0);
                  Instruction* scale = n.Exp(n.Add(n.Log(st[1]), n.Mul(n.Mul(x, x), 0.5)));
                  return std::vector<Instruction*>{
                      n.Sub(x, n.Mul(n.Mul(r, std::sqrt(2 * kPi)), scale)), st[1]};
                }));
  Instruction* x = s[0];
  Instruction* r = m.Sel(m.Le(p, 0.5), x, m.Neg(x));
  r = m.Sel(m.Eq(p, 1.0), kInf, r);
  return m.Sel(m.Eq(p, 0.0), -kInf, r);
}

Instruction* BesselIe(Math& m, Instruction* x, int nu) {
  Instruction* ax = m.Abs(x);
  Instruction* q = m.Div(m.Mul(x, x), 4.0);
  Instruction* t = nu == 0 ? m.K(1.0) : m.Div(x, 2.0);
  Instruction* s = t;
  for (int k = 1; k <= 50; ++k) {
    t = m.Mul(t, m.Div(q, static_cast<double>(k * (k + nu))));
    s = m.Add(s, t);
  }
  Instruction* series = m.Mul(m.Exp(m.Neg(ax)), s);
  Instruction* az = m.Max(ax, m.K(25.0));
  Instruction* c = m.K(1.0);
  Instruction* a = m.K(1.0);
  for (int k = 1; k <= 30; ++k) {
    const double num = -(4.0 * nu * nu - (2.0 * k - 1) * (2.0 * k - 1));
    c = m.Mul(c, m.Div(num / (8.0 * k), az));
    a = m.Add(a, c);
  }
  Instruction* asym = m.Div(a, m.Sqrt(m.Mul(az, 2 * kPi)));
  if (nu == 1) asym = m.Sel(m.Lt(x, 0.0), m.Neg(asym), asym);
  asym = m.Sel(m.Eq(ax, kInf), 0.0, asym);
  return m.Sel(m.Le(ax, 25.0), series, asym);
}

Instruction* Digamma(Math& m, Instruction* x) {
  Instruction* neg = m.Lt(x, 0.0);
  Instruction* shift = m.Sel(neg, m.Neg(m.Div(kPi, m.Un(Opcode::kTan, m.Mul(x, kPi)))), m.K(0.0));
  Instruction* xr = m.Sel(neg, m.Sub(1.0, x), x);
  Instruction* acc = m.K(0.0);
  for (int i = 0; i < 10; ++i) acc = m.Sub(acc, m.Div(1.0, m.Add(xr, static_cast<double>(i))));
  Instruction* v = m.Add(xr, 10.0);
  Instruction* r = m.Div(1.0, m.Mul(v, v));
  Instruction* tail =
      m.Sub(m.K(1.0 / 240), m.Mul(r, m.Sub(m.K(1.0 / 132), m.Mul(r, 691.0 / 32760))));
  Instruction* series = m.Mul(
      r, m.Sub(m.K(1.0 / 12),
               m.Mul(r, m.Sub(m.K(1.0 / 120), m.Mul(r, m.Sub(m.K(1.0 / 252), m.Mul(r, tail)))))));
  Instruction* y = m.Add(m.Add(m.Sub(m.Sub(m.Log(v), m.Div(0.5, v)), series), acc), shift);
  Instruction* pole = m.And(m.Le(x, 0.0), m.Eq(x, m.Floor(x)));
  return m.Sel(pole, kNaN, y);
}

Instruction* Zeta(Math& m, Instruction* x, Instruction* q) {
  static constexpr double kA[] = {12.0,
                                  -720.0,
                                  30240.0,
                                  -1209600.0,
                                  47900160.0,
                                  -1.8924375803183791606e9,
                                  7.47242496e10,
                                  -2.950130727918164224e12,
                                  1.1646782814350067249e14,
                                  -4.5979787224074726105e15,
                                  1.8152105401943546773e17,
                                  -7.1661652561756670113e18};
  Instruction* nx = m.Neg(x);
  Instruction* s = m.K(0.0);
  for (int i = 0; i < 12; ++i) s = m.Add(s, m.Pow(m.Add(q, static_cast<double>(i)), nx));
  Instruction* w = m.Add(q, 12.0);
  Instruction* b = m.Pow(w, nx);
  s = m.Add(s, b);
  s = m.Sub(m.Add(s, m.Div(m.Mul(b, w), m.Sub(x, 1.0))), m.Mul(b, 0.5));
  Instruction* a = m.K(1.0);
  double k = 0;
  for (double coeff : kA) {
    a = m.Mul(a, m.Add(x, k));
    b = m.Div(b, w);
    s = m.Add(s, m.Div(m.Mul(a, b), coeff));
    k += 1;
    a = m.Mul(a, m.Add(x, k));
    b = m.Div(b, w);
    k += 1;
  }
  Instruction* qneg = m.Le(q, 0.0);
  s = m.Sel(m.And(qneg, m.Ne(x, m.Floor(x))), kNaN, s);
  s = m.Sel(m.And(qneg, m.Eq(q, m.Floor(q))), kInf, s);
  s = m.Sel(m.Lt(x, 1.0), kNaN, s);
  return m.Sel(m.Eq(x, 1.0), kInf, s);
}

Instruction* Polygamma(Math& m, Instruction* n, Instruction* x) {
  Instruction* sign = m.Sel(m.Eq(m.Rem(n, m.K(2.0)), 0.0), -1.0, m.K(1.0));
  Instruction* n1 = m.Add(n, 1.0);
  Instruction* r = m.Mul(m.Mul(sign, m.Exp(Lgamma(m, m.Max(n1, m.K(1.0))))), Zeta(m, n1, x));
  r = m.Sel(m.Eq(n, 0.0), Digamma(m, x), r);
  return m.Sel(m.Or(m.Lt(n, 0.0), m.Ne(n, m.Floor(n))), kNaN, r);
}

// ---- Incomplete gamma and beta: fixed-count loops ----

constexpr int64_t kGammaTerms = 300;
constexpr int64_t kBetaTerms = 200;

// P(a, x) by its series and Q(a, x) by the continued fraction, both for every element; the
// caller selects (as the kernel branches) and masks the domain.
absl::StatusOr<std::pair<Instruction*, Instruction*>> GammaParts(LoweringContext& ctx, Math& m,
                                                                 Instruction* a, Instruction* x) {
  Instruction* prefix = m.Exp(m.Sub(m.Sub(m.Mul(a, m.Log(x)), x), Lgamma(m, a)));
  TFJIT_ASSIGN_OR_RETURN(
      std::vector<Instruction*> series,
      FixedLoop(ctx, m, "igamma_series", kGammaTerms, {a, m.K(1.0), m.K(1.0)}, {x},
                [](Math& l, Instruction*, const std::vector<Instruction*>& s,
                   const std::vector<Instruction*>& inv) {
                  Instruction* r = l.Add(s[0], 1.0);
                  Instruction* c = l.Mul(s[1], l.Div(inv[0], r));
                  return std::vector<Instruction*>{r, c, l.Add(s[2], c)};
                }));
  Instruction* p = m.Div(m.Mul(series[2], prefix), a);
  Instruction* y0 = m.Sub(1.0, a);
  Instruction* z0 = m.Add(m.Add(x, y0), 1.0);
  Instruction* pkm1 = m.Add(x, 1.0);
  Instruction* qkm1 = m.Mul(z0, x);
  TFJIT_ASSIGN_OR_RETURN(
      std::vector<Instruction*> cf,
      FixedLoop(ctx, m, "igammac_fraction", kGammaTerms,
                {y0, z0, m.K(0.0), m.K(1.0), x, pkm1, qkm1, m.Div(pkm1, qkm1)}, {},
                [](Math& l, Instruction*, const std::vector<Instruction*>& s,
                   const std::vector<Instruction*>&) {
                  constexpr double kBig = 4503599627370496.0;
                  Instruction* c = l.Add(s[2], 1.0);
                  Instruction* y = l.Add(s[0], 1.0);
                  Instruction* z = l.Add(s[1], 2.0);
                  Instruction* yc = l.Mul(y, c);
                  Instruction* pk = l.Sub(l.Mul(s[5], z), l.Mul(s[3], yc));
                  Instruction* qk = l.Sub(l.Mul(s[6], z), l.Mul(s[4], yc));
                  Instruction* ans = l.Sel(l.Ne(qk, l.K(0.0)), l.Div(pk, qk), s[7]);
                  Instruction* big = l.Gt(l.Abs(pk), kBig);
                  auto scaled = [&](Instruction* v) { return l.Sel(big, l.Div(v, kBig), v); };
                  return std::vector<Instruction*>{
                      y, z, c, scaled(s[5]), scaled(s[6]), scaled(pk), scaled(qk), ans};
                }));
  Instruction* q = m.Mul(cf[7], prefix);
  return std::make_pair(p, q);
}

absl::StatusOr<Instruction*> Igamma(LoweringContext& ctx, Math& m, Instruction* a, Instruction* x,
                                    bool upper) {
  TFJIT_ASSIGN_OR_RETURN(auto parts, GammaParts(ctx, m, a, x));
  Instruction* use_fraction = m.And(m.Gt(x, 1.0), m.Gt(x, a));
  Instruction* r = upper ? m.Sel(use_fraction, parts.second, m.Sub(1.0, parts.first))
                         : m.Sel(use_fraction, m.Sub(1.0, parts.second), parts.first);
  r = m.Sel(m.Eq(x, kInf), upper ? 0.0 : 1.0, r);
  r = m.Sel(m.Eq(x, 0.0), upper ? 1.0 : 0.0, r);
  Instruction* bad = m.Or(m.Or(m.Le(a, 0.0), m.Lt(x, 0.0)), m.Or(m.IsNan(a), m.IsNan(x)));
  return m.Sel(bad, kNaN, r);
}

// The continued fraction of I_x(a, b) by modified Lentz, kBetaTerms steps.
absl::StatusOr<Instruction*> BetaFraction(LoweringContext& ctx, Math& m, Instruction* a,
                                          Instruction* b, Instruction* x) {
  constexpr double kTiny = 1e-300;
  auto guard = [](Math& l, Instruction* v) { return l.Sel(l.Lt(l.Abs(v), l.K(kTiny)), kTiny, v); };
  Instruction* d = m.Div(1.0, guard(m, m.Sub(1.0, m.Div(m.Mul(m.Add(a, b), x), m.Add(a, 1.0)))));
  TFJIT_ASSIGN_OR_RETURN(
      std::vector<Instruction*> s,
      FixedLoop(ctx, m, "betainc_fraction", kBetaTerms, {m.K(1.0), d, d}, {a, b, x},
                [guard](Math& l, Instruction* i, const std::vector<Instruction*>& st,
                        const std::vector<Instruction*>& inv) {
                  Instruction* a = inv[0];
                  Instruction* b = inv[1];
                  Instruction* x = inv[2];
                  Instruction* mm = l.Add(i, 1.0);
                  Instruction* m2 = l.Mul(mm, 2.0);
                  Instruction* c = st[0];
                  Instruction* dd = st[1];
                  Instruction* h = st[2];
                  auto step = [&](Instruction* aa) {
                    dd = l.Div(1.0, guard(l, l.Add(l.Mul(aa, dd), l.K(1.0))));
                    c = guard(l, l.Add(l.Div(aa, c), l.K(1.0)));
                    h = l.Mul(h, l.Mul(dd, c));
                  };
                  step(l.Div(l.Mul(l.Mul(mm, l.Sub(b, mm)), x),
                             l.Mul(l.Sub(l.Add(a, m2), l.K(1.0)), l.Add(a, m2))));
                  step(l.Neg(l.Div(l.Mul(l.Mul(l.Add(a, mm), l.Add(l.Add(a, b), mm)), x),
                                   l.Mul(l.Add(a, m2), l.Add(l.Add(a, m2), l.K(1.0))))));
                  return std::vector<Instruction*>{c, dd, h};
                }));
  return s[2];
}

absl::StatusOr<Instruction*> Betainc(LoweringContext& ctx, Math& m, Instruction* a, Instruction* b,
                                     Instruction* x) {
  Instruction* front = m.Exp(m.Add(
      m.Add(m.Sub(m.Sub(Lgamma(m, m.Add(a, b)), Lgamma(m, a)), Lgamma(m, b)), m.Mul(a, m.Log(x))),
      m.Mul(b, m.Log1p(m.Neg(x)))));
  Instruction* swap = m.Le(m.Div(m.Add(a, 1.0), m.Add(m.Add(a, b), 2.0)), x);
  Instruction* aa = m.Sel(swap, b, a);
  Instruction* bb = m.Sel(swap, a, b);
  Instruction* xx = m.Sel(swap, m.Sub(1.0, x), x);
  TFJIT_ASSIGN_OR_RETURN(Instruction * h, BetaFraction(ctx, m, aa, bb, xx));
  Instruction* t = m.Div(m.Mul(front, h), aa);
  Instruction* r = m.Sel(swap, m.Sub(1.0, t), t);
  r = m.Sel(m.Eq(x, 1.0), 1.0, r);
  r = m.Sel(m.Eq(x, 0.0), 0.0, r);
  Instruction* bad = m.Or(m.Or(m.Le(a, 0.0), m.Le(b, 0.0)), m.Or(m.Lt(x, 0.0), m.Gt(x, 1.0)));
  bad = m.Or(bad, m.Or(m.IsNan(a), m.Or(m.IsNan(b), m.IsNan(x))));
  return m.Sel(bad, kNaN, r);
}

// ---- The lowerings: inputs to f64, the formula, back to T ----

absl::StatusOr<std::vector<Instruction*>> WideInputs(LoweringContext& ctx, const tf::Node& node,
                                                     int n, std::vector<int64_t>* dims) {
  std::vector<Instruction*> xs;
  for (int i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    xs.push_back(x);
  }
  if (n == 2) {
    TFJIT_ASSIGN_OR_RETURN(auto pair, ctx.BroadcastBinaryInputs(node));
    xs = {pair.first, pair.second};
  }
  if (n == 3) {
    // Betainc: each input has the result's shape or is a scalar.
    for (Instruction* x : xs) {
      if (x->shape().rank() == 0) continue;
      if (!dims->empty() && x->shape().dims() != *dims) {
        return InvalidArgument("node %s: Shapes of a, b and x are inconsistent: %s vs. %s vs. %s",
                               node.DebugName(), xs[0]->shape().ToString(),
                               xs[1]->shape().ToString(), xs[2]->shape().ToString());
      }
      *dims = x->shape().dims();
    }
  } else {
    *dims = xs[0]->shape().dims();
  }
  for (Instruction*& x : xs) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, kF64));
    TFJIT_ASSIGN_OR_RETURN(x, ctx.BroadcastTo(x, *dims));
  }
  return xs;
}

using Formula = std::function<absl::StatusOr<Instruction*>(LoweringContext&, Math&,
                                                           const std::vector<Instruction*>&)>;

absl::Status LowerWith(LoweringContext& ctx, const tf::Node& node, int n, const Formula& f) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * first, ctx.Input(node, 0));
  const DType t = first->shape().element_type();
  std::vector<int64_t> dims;
  TFJIT_ASSIGN_OR_RETURN(std::vector<Instruction*> xs, WideInputs(ctx, node, n, &dims));
  Math m(ctx.b(), dims);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, f(ctx, m, xs));
  TFJIT_RETURN_IF_ERROR(m.status());
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

template <Instruction* (*F)(Math&, Instruction*)>
absl::Status LowerUnary(LoweringContext& ctx, const tf::Node& node) {
  return LowerWith(ctx, node, 1,
                   [](LoweringContext&, Math& m, const std::vector<Instruction*>& x)
                       -> absl::StatusOr<Instruction*> { return F(m, x[0]); });
}

absl::Status LowerNdtri(LoweringContext& ctx, const tf::Node& node) {
  return LowerWith(ctx, node, 1,
                   [](LoweringContext& c, Math& m, const std::vector<Instruction*>& v) {
                     return Ndtri(c, m, v[0]);
                   });
}

// Erfc, Lgamma and Digamma: their catalog entries and kernels predate this file; these are
// their lowerings.
Instruction* ErfcOp(Math& m, Instruction* x) { return Erfc(m, x); }
Instruction* LgammaOp(Math& m, Instruction* x) {
  Instruction* pole = m.Or(m.And(m.Le(x, 0.0), m.Eq(x, m.Floor(x))), m.Eq(m.Abs(x), kInf));
  return m.Sel(pole, kInf, Lgamma(m, x));
}
Instruction* DigammaOp(Math& m, Instruction* x) { return Digamma(m, x); }
Instruction* I0e(Math& m, Instruction* x) { return BesselIe(m, x, 0); }
Instruction* I1e(Math& m, Instruction* x) { return BesselIe(m, x, 1); }

absl::Status LowerXlog1py(LoweringContext& ctx, const tf::Node& node) {
  return LowerWith(ctx, node, 2,
                   [](LoweringContext&, Math& m,
                      const std::vector<Instruction*>& v) -> absl::StatusOr<Instruction*> {
                     return m.Sel(m.Eq(v[0], 0.0), 0.0, m.Mul(v[0], m.Log1p(v[1])));
                   });
}

// ---- Erf, Xdivy, Xlogy: one HLO op each in T, not the f64 formulas ----

// Erf(x) => erf(x)
absl::Status LowerErf(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Unary(Opcode::kErf, x));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Xdivy(x, y) => x == 0 ? 0 : x / y; Xlogy(x, y) => x == 0 ? 0 : x * log(y).
absl::Status LowerXop(LoweringContext& ctx, const tf::Node& node, bool log) {
  TFJIT_ASSIGN_OR_RETURN(auto ab, ctx.BroadcastBinaryInputs(node));
  auto [x, y] = ab;
  Instruction* r = nullptr;
  if (log) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * ly, ctx.b().Unary(Opcode::kLog, y));
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kMultiply, x, ly));
  } else {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kDivide, x, y));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * x_zeros,
                         ctx.Splat(x->shape().element_type(), 0.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x_zero,
                         ctx.b().Compare(ComparisonDirection::kEq, x, x_zeros));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero,
                         ctx.Splat(r->shape().element_type(), 0.0, r->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * out, ctx.b().Select(x_zero, zero, r));
  ctx.SetOutput(node, 0, out);
  return absl::OkStatus();
}
absl::Status LowerXdivy(LoweringContext& ctx, const tf::Node& node) {
  return LowerXop(ctx, node, false);
}
absl::Status LowerXlogy(LoweringContext& ctx, const tf::Node& node) {
  return LowerXop(ctx, node, true);
}

template <bool kUpper>
absl::Status LowerIgamma(LoweringContext& ctx, const tf::Node& node) {
  return LowerWith(ctx, node, 2,
                   [](LoweringContext& c, Math& m, const std::vector<Instruction*>& v) {
                     return Igamma(c, m, v[0], v[1], kUpper);
                   });
}

absl::Status LowerBetainc(LoweringContext& ctx, const tf::Node& node) {
  return LowerWith(ctx, node, 3,
                   [](LoweringContext& c, Math& m, const std::vector<Instruction*>& v) {
                     return Betainc(c, m, v[0], v[1], v[2]);
                   });
}

absl::Status LowerZeta(LoweringContext& ctx, const tf::Node& node) {
  return LowerWith(ctx, node, 2,
                   [](LoweringContext&, Math& m, const std::vector<Instruction*>& v)
                       -> absl::StatusOr<Instruction*> { return Zeta(m, v[0], v[1]); });
}

absl::Status LowerPolygamma(LoweringContext& ctx, const tf::Node& node) {
  return LowerWith(ctx, node, 2,
                   [](LoweringContext&, Math& m, const std::vector<Instruction*>& v)
                       -> absl::StatusOr<Instruction*> { return Polygamma(m, v[0], v[1]); });
}

}  // namespace

void AppendSpecialLowerings(std::vector<OpLowering>* table) {
  const OpLowering lowerings[] = {
      {"Erfinv", LowerUnary<Erfinv>, true},
      {"Ndtri", LowerNdtri, true},
      {"BesselI0e", LowerUnary<I0e>, true},
      {"BesselI1e", LowerUnary<I1e>, true},
      {"Xlog1py", LowerXlog1py, true},
      {"Igamma", LowerIgamma<false>, true},
      {"Igammac", LowerIgamma<true>, true},
      {"Betainc", LowerBetainc, true},
      {"Zeta", LowerZeta, true},
      {"Polygamma", LowerPolygamma, true},
      {"Erfc", LowerUnary<ErfcOp>, true},
      {"Lgamma", LowerUnary<LgammaOp>, true},
      {"Digamma", LowerUnary<DigammaOp>, true},
      {"Erf", LowerErf, true},
      {"Xdivy", LowerXdivy, true},
      {"Xlogy", LowerXlogy, true},
  };
  table->insert(table->end(), std::begin(lowerings), std::end(lowerings));
}

}  // namespace tfjit::tf2hlo
