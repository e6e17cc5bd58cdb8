// The decompositions and solvers of core/linalg.h, on Eigen's dense solvers.
#include "core/linalg.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <limits>

#include "Eigen/Dense"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tfjit::linalg {
namespace {

constexpr const char* kNames[] = {
    "cholesky", "triangular_solve",  "inverse",    "solve", "log_determinant", "lu", "qr", "eig",
    "svd",      "tridiagonal_solve", "determinant"};
constexpr int kNumKinds = static_cast<int>(sizeof(kNames) / sizeof(kNames[0]));

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using Map = Eigen::Map<Mat<T>>;
template <typename T>
using ConstMap = Eigen::Map<const Mat<T>>;

using Dims = std::vector<int64_t>;

// Leading dims of `d` (all but the last `tail`), and their product.
bool SplitBatch(const Dims& d, size_t tail, Dims* batch_dims, int64_t* batch) {
  if (d.size() < tail) return false;
  batch_dims->assign(d.begin(), d.end() - static_cast<std::ptrdiff_t>(tail));
  *batch = 1;
  for (int64_t x : *batch_dims) *batch *= x;
  return true;
}
Dims With(Dims batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail.begin(), tail.end());
  return batch;
}

template <typename T>
using Real = typename Eigen::NumTraits<T>::Real;
template <typename T>
constexpr bool kComplex = Eigen::NumTraits<T>::IsComplex;

// The unit-modulus factor w that makes w * v real and positive (1 for v = 0); for real v,
// the sign flip (+1 or -1).
template <typename T>
T UnitToPositive(T v) {
  if constexpr (kComplex<T>) {
    const Real<T> m = std::abs(v);
    return m > Real<T>(0) ? std::conj(v) / m : T(1);
  } else {
    return v < T(0) ? T(-1) : T(1);
  }
}

// Scales column `c` of `m` (and of column `c` of `follow`, when given) by a unit factor so that
// its first largest-magnitude entry is positive (real, for complex values).
template <typename T>
void FixColumnSign(Mat<T>& m, int64_t c, Mat<T>* follow) {
  if (m.rows() == 0) return;
  int64_t best = 0;
  for (int64_t r = 1; r < m.rows(); ++r) {
    if (std::abs(m(r, c)) > std::abs(m(best, c))) best = r;
  }
  const T w = UnitToPositive(m(best, c));
  if (w != T(1)) {
    m.col(c) *= w;
    if (follow != nullptr) follow->col(c) *= w;
  }
}

template <typename T>
T Conj(T v) {
  if constexpr (kComplex<T>) {
    return std::conj(v);
  } else {
    return v;
  }
}

template <typename T>
bool IsNaNValue(T v) {
  if constexpr (kComplex<T>) {
    return std::isnan(v.real()) || std::isnan(v.imag());
  } else {
    return std::isnan(v);
  }
}

template <typename T>
bool RunOne(const Call& call, const Problem& p, const void* const* ins, void* const* outs,
            int64_t i) {
  const int64_t m = p.m, n = p.n, k = p.k;
  const T* a_ptr = static_cast<const T*>(ins[0]) + i * m * n;
  const bool adjoint = (call.flags & kAdjoint) != 0;
  using R = Real<T>;
  const T kNaN = T(std::numeric_limits<R>::quiet_NaN());
  switch (call.kind) {
    case Kind::kCholesky: {
      Map<T> l(static_cast<T*>(outs[0]) + i * n * n, n, n);
      if (n == 0) return true;
      Eigen::LLT<Mat<T>, Eigen::Lower> llt(ConstMap<T>(a_ptr, n, n));
      if (llt.info() != Eigen::Success) {
        l.setConstant(kNaN);
        return false;
      }
      l = llt.matrixL();
      return true;
    }
    case Kind::kTriangularSolve: {
      ConstMap<T> a(a_ptr, n, n);
      ConstMap<T> b(static_cast<const T*>(ins[1]) + i * n * k, n, k);
      Map<T> x(static_cast<T*>(outs[0]) + i * n * k, n, k);
      if (n == 0 || k == 0) return true;
      const bool lower = (call.flags & kLower) != 0;
      if (lower && !adjoint) x = a.template triangularView<Eigen::Lower>().solve(b);
      if (lower && adjoint) x = a.adjoint().template triangularView<Eigen::Upper>().solve(b);
      if (!lower && !adjoint) x = a.template triangularView<Eigen::Upper>().solve(b);
      if (!lower && adjoint) x = a.adjoint().template triangularView<Eigen::Lower>().solve(b);
      return a.diagonal().cwiseAbs().minCoeff() > R(0);
    }
    case Kind::kInverse:
    case Kind::kSolve: {
      if (n == 0) return true;
      Mat<T> a = ConstMap<T>(a_ptr, n, n);
      if (adjoint) a = a.adjoint().eval();
      Eigen::PartialPivLU<Mat<T>> lu(a);
      const bool ok = lu.matrixLU().diagonal().cwiseAbs().minCoeff() > R(0);
      if (call.kind == Kind::kInverse) {
        Map<T>(static_cast<T*>(outs[0]) + i * n * n, n, n) = lu.inverse();
      } else {
        ConstMap<T> b(static_cast<const T*>(ins[1]) + i * n * k, n, k);
        if (k > 0) Map<T>(static_cast<T*>(outs[0]) + i * n * k, n, k) = lu.solve(b);
      }
      return ok;
    }
    case Kind::kLogDeterminant:
    case Kind::kDeterminant: {
      // Complex values: the sign is the product of the pivots' unit phases (TF's), the log of
      // the modulus is real (held in T).
      T sign = T(1), log_abs = T(0);
      if (n > 0) {
        Eigen::PartialPivLU<Mat<T>> lu(ConstMap<T>(a_ptr, n, n));
        sign = static_cast<T>(static_cast<R>(lu.permutationP().determinant()));
        for (int64_t d = 0; d < n; ++d) {
          const T v = lu.matrixLU()(d, d);
          if (v == T(0) || IsNaNValue(v)) {
            sign = v == T(0) ? T(0) : kNaN;
            log_abs = v == T(0) ? T(-std::numeric_limits<R>::infinity()) : kNaN;
            break;
          }
          if constexpr (kComplex<T>) {
            sign *= v / std::abs(v);
          } else if (v < T(0)) {
            sign = -sign;
          }
          log_abs += T(std::log(std::abs(v)));
        }
      }
      if (call.kind == Kind::kDeterminant) {
        static_cast<T*>(outs[0])[i] = sign == T(0) ? T(0) : sign * std::exp(log_abs);
      } else {
        static_cast<T*>(outs[0])[i] = sign;
        static_cast<T*>(outs[1])[i] = log_abs;
      }
      return true;
    }
    case Kind::kLu: {
      Map<T> out(static_cast<T*>(outs[0]) + i * n * n, n, n);
      int32_t* perm = static_cast<int32_t*>(outs[1]) + i * n;
      if (n == 0) return true;
      Eigen::PartialPivLU<Mat<T>> lu(ConstMap<T>(a_ptr, n, n));
      out = lu.matrixLU();
      // P * a = L * U with row r of a moved to row indices(r): p[indices(r)] = r, so that
      // L * U == a[p] (TF's convention).
      const auto& indices = lu.permutationP().indices();
      for (int64_t r = 0; r < n; ++r) perm[indices(r)] = static_cast<int32_t>(r);
      return out.diagonal().cwiseAbs().minCoeff() > R(0);
    }
    case Kind::kQr: {
      const int64_t q_cols = (call.flags & kFullMatrices) ? m : std::min(m, n);
      Map<T> q(static_cast<T*>(outs[0]) + i * m * q_cols, m, q_cols);
      Map<T> r(static_cast<T*>(outs[1]) + i * q_cols * n, q_cols, n);
      if (m == 0 || n == 0) {
        q.setIdentity();
        r.setZero();
        return true;
      }
      Eigen::HouseholderQR<Mat<T>> qr(ConstMap<T>(a_ptr, m, n));
      Mat<T> qm = qr.householderQ() * Mat<T>::Identity(m, q_cols);
      Mat<T> rm = qr.matrixQR().topRows(q_cols).template triangularView<Eigen::Upper>();
      for (int64_t d = 0; d < std::min(m, n); ++d) {
        const T w = UnitToPositive(rm(d, d));  // R's diagonal real and nonnegative
        if (w != T(1)) {
          rm.row(d) *= w;
          qm.col(d) *= Conj(w);
        }
      }
      q = qm;
      r = rm;
      return true;
    }
    case Kind::kEig: {
      Map<T> e(static_cast<T*>(outs[0]) + i * n, 1, n);
      Map<T> v(static_cast<T*>(outs[1]) + i * n * n, n, n);
      if (n == 0) return true;
      Eigen::SelfAdjointEigenSolver<Mat<T>> eig(ConstMap<T>(a_ptr, n, n));
      Mat<T> vm = eig.eigenvectors();
      for (int64_t c = 0; c < n; ++c) FixColumnSign<T>(vm, c, nullptr);
      e = eig.eigenvalues().transpose().template cast<T>();
      v = vm;
      return eig.info() == Eigen::Success;
    }
    case Kind::kSvd: {
      const int64_t pn = std::min(m, n);
      const bool full = (call.flags & kFullMatrices) != 0;
      const int64_t uc = full ? m : pn, vc = full ? n : pn;
      Map<T> s(static_cast<T*>(outs[0]) + i * pn, 1, pn);
      Map<T> u(static_cast<T*>(outs[1]) + i * m * uc, m, uc);
      Map<T> v(static_cast<T*>(outs[2]) + i * n * vc, n, vc);
      if (pn == 0) {
        u.setIdentity();
        v.setIdentity();
        return true;
      }
      Eigen::JacobiSVD<Mat<T>> svd(ConstMap<T>(a_ptr, m, n),
                                   full ? (Eigen::ComputeFullU | Eigen::ComputeFullV)
                                        : (Eigen::ComputeThinU | Eigen::ComputeThinV));
      Mat<T> um = svd.matrixU(), vm = svd.matrixV();
      for (int64_t c = 0; c < pn; ++c) FixColumnSign<T>(um, c, &vm);
      s = svd.singularValues().transpose().template cast<T>();
      u = um;
      v = vm;
      return true;
    }
    case Kind::kTridiagonalSolve: {
      const T* diags = a_ptr;  // [3, n]: superdiagonal, main diagonal, subdiagonal
      Map<T> x(static_cast<T*>(outs[0]) + i * n * k, n, k);
      x = ConstMap<T>(static_cast<const T*>(ins[1]) + i * n * k, n, k);
      if (n == 0) return true;
      const bool pivot = (call.flags & kPartialPivoting) != 0;
      std::vector<T> du(diags, diags + n), d(diags + n, diags + 2 * n), dl(n, T(0)), du2(n, T(0));
      for (int64_t j = 0; j + 1 < n; ++j) dl[j] = diags[2 * n + j + 1];
      bool ok = true;
      for (int64_t j = 0; j + 1 < n; ++j) {
        if (!pivot || std::abs(d[j]) >= std::abs(dl[j])) {
          if (d[j] == T(0)) ok = false;
          const T f = dl[j] / d[j];
          d[j + 1] -= f * du[j];
          x.row(j + 1) -= f * x.row(j);
        } else {  // swap rows j and j + 1, then eliminate
          const T f = d[j] / dl[j];
          d[j] = dl[j];
          const T old_d1 = d[j + 1];
          d[j + 1] = du[j] - f * old_d1;
          if (j + 2 < n) {
            du2[j] = du[j + 1];
            du[j + 1] = -f * du2[j];
          }
          du[j] = old_d1;
          Eigen::Matrix<T, 1, Eigen::Dynamic> row_j = x.row(j);
          x.row(j) = x.row(j + 1);
          x.row(j + 1) = row_j - f * x.row(j);
        }
      }
      if (d[n - 1] == T(0)) ok = false;
      x.row(n - 1) /= d[n - 1];
      if (n > 1) x.row(n - 2) = (x.row(n - 2) - du[n - 2] * x.row(n - 1)) / d[n - 2];
      for (int64_t j = n - 3; j >= 0; --j) {
        x.row(j) = (x.row(j) - du[j] * x.row(j + 1) - du2[j] * x.row(j + 2)) / d[j];
      }
      return ok;
    }
  }
  return false;
}

}  // namespace

std::string TargetOf(const Call& call) {
  return absl::StrCat("tfjit.linalg.", kNames[static_cast<int>(call.kind)], ".", call.flags);
}

std::optional<Call> CallOfTarget(absl::string_view target) {
  if (!absl::ConsumePrefix(&target, "tfjit.linalg.")) return std::nullopt;
  const size_t dot = target.rfind('.');
  if (dot == absl::string_view::npos) return std::nullopt;
  int flags = 0;
  if (!absl::SimpleAtoi(target.substr(dot + 1), &flags) || flags < 0 || flags > 15) {
    return std::nullopt;
  }
  for (int kind = 0; kind < kNumKinds; ++kind) {
    if (target.substr(0, dot) == kNames[kind]) return Call{static_cast<Kind>(kind), flags};
  }
  return std::nullopt;
}

bool IsLinalgDType(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kComplex64 ||
         dtype == DType::kComplex128;
}

std::optional<Problem> MatchShapes(const Call& call, DType dtype, const std::vector<Dims>& ins,
                                   const std::vector<std::pair<DType, Dims>>& outs) {
  if (!IsLinalgDType(dtype) || ins.empty()) return std::nullopt;
  Problem p;
  Dims batch;
  if (!SplitBatch(ins[0], 2, &batch, &p.batch)) return std::nullopt;
  p.m = ins[0][ins[0].size() - 2];
  p.n = ins[0].back();
  std::vector<Dims> want_in = {ins[0]};
  std::vector<std::pair<DType, Dims>> want_out;
  const bool square =
      call.kind != Kind::kQr && call.kind != Kind::kSvd && call.kind != Kind::kTridiagonalSolve;
  if (square && p.m != p.n) return std::nullopt;
  const bool full = (call.flags & kFullMatrices) != 0;
  const int64_t pn = std::min(p.m, p.n);
  switch (call.kind) {
    case Kind::kCholesky:
    case Kind::kInverse:
      want_out = {{dtype, ins[0]}};
      break;
    case Kind::kTriangularSolve:
    case Kind::kSolve:
      if (ins.size() != 2 || ins[1].size() != ins[0].size()) return std::nullopt;
      p.k = ins[1].back();
      want_in.push_back(With(batch, {p.n, p.k}));
      want_out = {{dtype, want_in[1]}};
      break;
    case Kind::kTridiagonalSolve:
      if (ins.size() != 2 || ins[1].size() != ins[0].size() || p.m != 3) return std::nullopt;
      p.k = ins[1].back();
      want_in.push_back(With(batch, {p.n, p.k}));
      want_out = {{dtype, want_in[1]}};
      break;
    case Kind::kLogDeterminant:
      want_out = {{dtype, batch}, {dtype, batch}};
      break;
    case Kind::kDeterminant:
      want_out = {{dtype, batch}};
      break;
    case Kind::kLu:
      want_out = {{dtype, ins[0]}, {DType::kInt32, With(batch, {p.n})}};
      break;
    case Kind::kQr:
      want_out = {{dtype, With(batch, {p.m, full ? p.m : pn})},
                  {dtype, With(batch, {full ? p.m : pn, p.n})}};
      break;
    case Kind::kEig:
      want_out = {{dtype, With(batch, {p.n})}, {dtype, ins[0]}};
      break;
    case Kind::kSvd:
      want_out = {{dtype, With(batch, {pn})},
                  {dtype, With(batch, {p.m, full ? p.m : pn})},
                  {dtype, With(batch, {p.n, full ? p.n : pn})}};
      break;
  }
  if (ins != want_in || outs != want_out) return std::nullopt;
  return p;
}

namespace {

// Elements per matrix of each operand and each result (Kind's shapes), and which results are
// s32 (kLu's permutation).
struct Layout {
  std::vector<int64_t> ins, outs;
  std::vector<bool> out_s32;
};

Layout LayoutOf(const Call& call, const Problem& p) {
  const int64_t m = p.m, n = p.n, k = p.k, pn = std::min(m, n);
  const bool full = (call.flags & kFullMatrices) != 0;
  Layout l;
  l.ins = {m * n};
  switch (call.kind) {
    case Kind::kCholesky:
    case Kind::kInverse:
      l.outs = {n * n};
      break;
    case Kind::kTriangularSolve:
    case Kind::kSolve:
    case Kind::kTridiagonalSolve:
      l.ins.push_back(n * k);
      l.outs = {n * k};
      break;
    case Kind::kLogDeterminant:
      l.outs = {1, 1};
      break;
    case Kind::kDeterminant:
      l.outs = {1};
      break;
    case Kind::kLu:
      l.outs = {n * n, n};
      break;
    case Kind::kQr: {
      const int64_t qc = full ? m : pn;
      l.outs = {m * qc, qc * n};
      break;
    }
    case Kind::kEig:
      l.outs = {n, n * n};
      break;
    case Kind::kSvd:
      l.outs = {pn, m * (full ? m : pn), n * (full ? n : pn)};
      break;
  }
  l.out_s32.assign(l.outs.size(), false);
  if (call.kind == Kind::kLu) l.out_s32[1] = true;
  return l;
}

// complex64 matrix `i` computed in complex128: its operands widened, the decomposition run,
// the results rounded back. Eigen's decompositions for complex<float> compiled into a third of
// this file's build time, and complex64 linear algebra is rare; the widened results are the
// more accurate ones.
bool RunWidened(const Call& call, const Problem& p, const void* const* ins, void* const* outs,
                int64_t i) {
  using Narrow = std::complex<float>;
  using Wide = std::complex<double>;
  const Layout l = LayoutOf(call, p);
  std::vector<std::vector<Wide>> wide_ins(l.ins.size()), wide_outs(l.outs.size());
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (size_t j = 0; j < l.ins.size(); ++j) {
    const Narrow* src = static_cast<const Narrow*>(ins[j]) + i * l.ins[j];
    wide_ins[j].assign(src, src + l.ins[j]);
    in_ptrs.push_back(wide_ins[j].data());
  }
  for (size_t j = 0; j < l.outs.size(); ++j) {
    if (l.out_s32[j]) {
      out_ptrs.push_back(static_cast<int32_t*>(outs[j]) + i * l.outs[j]);
    } else {
      wide_outs[j].resize(static_cast<size_t>(l.outs[j]));
      out_ptrs.push_back(wide_outs[j].data());
    }
  }
  const bool ok = RunOne<Wide>(call, p, in_ptrs.data(), out_ptrs.data(), 0);
  for (size_t j = 0; j < l.outs.size(); ++j) {
    if (l.out_s32[j]) continue;
    Narrow* dst = static_cast<Narrow*>(outs[j]) + i * l.outs[j];
    for (int64_t e = 0; e < l.outs[j]; ++e) {
      const Wide w = wide_outs[j][static_cast<size_t>(e)];
      dst[e] = Narrow(static_cast<float>(w.real()), static_cast<float>(w.imag()));
    }
  }
  return ok;
}

}  // namespace

bool Run(const Call& call, DType dtype, const Problem& problem, const void* const* ins,
         void* const* outs, int64_t begin, int64_t end) {
  bool ok = true;
  for (int64_t i = begin; i < end; ++i) {
    switch (dtype) {
      case DType::kFloat64:
        ok = RunOne<double>(call, problem, ins, outs, i) && ok;
        break;
      case DType::kComplex64:
        ok = RunWidened(call, problem, ins, outs, i) && ok;
        break;
      case DType::kComplex128:
        ok = RunOne<std::complex<double>>(call, problem, ins, outs, i) && ok;
        break;
      default:
        ok = RunOne<float>(call, problem, ins, outs, i) && ok;
        break;
    }
  }
  return ok;
}

int64_t CostPerMatrix(const Call& call, const Problem& p) {
  const int64_t big = std::max(p.m, p.n);
  const int64_t work =
      call.kind == Kind::kTridiagonalSolve ? p.n * (p.k + 1) * 8 : big * big * (big + p.k) * 4;
  return std::max<int64_t>(work, 100);
}

}  // namespace tfjit::linalg
