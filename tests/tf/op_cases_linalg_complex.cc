// Differential cases of the linalg ops on complex64/complex128 (docs/DESIGN.md, "Op families"),
// each against an independent reference in std::complex<double>: tests/tf/linalg_ref.h's Gauss
// elimination with partial pivoting (Lu, MatrixSolve, MatrixInverse, determinants, the
// tridiagonal solve), Cholesky-Banachiewicz and substitution, modified Gram-Schmidt (Qr, whose R
// then has a real positive diagonal, the convention of core/linalg.h), and matrices built from
// known unitary factors for SelfAdjointEigV2 and Svd (eigen and singular vectors with their
// largest-magnitude entry made real and positive). Complex decompositions run on the fallback
// kernels (tf2hlo compiles complex values only in the complex lowerings), so must-compile mode
// refuses them, which kernel_only checks.
#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "tests/tf/linalg_ref.h"
#include "tests/tf/linalg_tensor_ref.h"
#include "tests/tf/op_cases.h"

namespace tfjit::optest {
namespace {

using C = std::complex<double>;

using CM = linalg_ref::Mat<C>;
using linalg_ref::Adjoint;
using linalg_ref::Cholesky;
using linalg_ref::Decompose;
using linalg_ref::Solve;
using linalg_ref::TriSolve;

using linalg_ref::BatchCount;
using linalg_ref::NoTail;
using linalg_ref::RhsTail;
using linalg_ref::SquareTail;
using linalg_ref::StoreAt;
using linalg_ref::WithTail;
Dims BatchOf(const Tensor& t) { return linalg_ref::BatchDims(t); }
CM MatrixAt(const Tensor& t, int64_t b) { return linalg_ref::MatrixAt<C>(t, b); }
void SetComplex(Tensor& t, int64_t k, C v) { linalg_ref::SetElement(t, k, v); }

CM Mul(const CM& a, const CM& b) {
  CM p(a.r, b.c);
  for (int64_t i = 0; i < a.r; ++i)
    for (int64_t k = 0; k < a.c; ++k)
      for (int64_t j = 0; j < b.c; ++j) p(i, j) += a(i, k) * b(k, j);
  return p;
}
CM Eye(int64_t n) { return linalg_ref::Identity<C>(n); }

// Modified Gram-Schmidt on the columns of a tall full-rank `a`: Q [m, n], R [n, n].
void Qr(const CM& a, CM* q, CM* r) {
  *q = a;
  *r = CM(a.c, a.c);
  for (int64_t j = 0; j < a.c; ++j) {
    for (int64_t k = 0; k < j; ++k) {
      C dot = 0;
      for (int64_t i = 0; i < a.r; ++i) dot += std::conj((*q)(i, k)) * (*q)(i, j);
      (*r)(k, j) = dot;
      for (int64_t i = 0; i < a.r; ++i) (*q)(i, j) -= dot * (*q)(i, k);
    }
    double norm = 0;
    for (int64_t i = 0; i < a.r; ++i) norm += std::norm((*q)(i, j));
    norm = std::sqrt(norm);
    (*r)(j, j) = norm;
    for (int64_t i = 0; i < a.r; ++i) (*q)(i, j) /= norm;
  }
}
// The unit factor w making w * (column j's first largest-magnitude entry) real and positive,
// applied to column j of `m` (and of `follow`).
void FixPhase(CM& m, int64_t j, CM* follow) {
  int64_t best = 0;
  for (int64_t i = 1; i < m.r; ++i) {
    if (std::abs(m(i, j)) > std::abs(m(best, j))) best = i;
  }
  const C w = std::abs(m(best, j)) > 0 ? std::conj(m(best, j)) / std::abs(m(best, j)) : C(1);
  for (int64_t i = 0; i < m.r; ++i) m(i, j) *= w;
  if (follow != nullptr) {
    for (int64_t i = 0; i < follow->r; ++i) (*follow)(i, j) *= w;
  }
}
// A Householder reflector I - 2 w w^H / (w^H w): unitary and Hermitian.
CM Unitary(int64_t n, int seed) {
  std::vector<C> w(static_cast<size_t>(n));
  double norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    w[static_cast<size_t>(i)] = C(std::cos(1.3 * i + seed), std::sin(0.7 * i + 2 * seed) + 0.5);
    norm += std::norm(w[static_cast<size_t>(i)]);
  }
  CM u = Eye(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      u(i, j) -= 2.0 * w[static_cast<size_t>(i)] * std::conj(w[static_cast<size_t>(j)]) / norm;
    }
  return u;
}

// ---- Inputs ----

// A well-conditioned general complex [..., r, c] (diagonally dominant where square).
Tensor General(DType t, const Dims& batch, int64_t r, int64_t c, int seed) {
  Tensor out(t, WithTail(batch, {r, c}));
  for (int64_t k = 0; k < out.num_elements(); ++k) {
    const int64_t col = k % c, row = (k / c) % r, b = k / (r * c);
    C v(std::cos(2.3 * row + 1.1 * col * col + seed + 0.7 * b),
        std::sin(1.9 * row - 0.6 * col + seed + 0.3 * b));
    if (row == col) v += 3.0 + 0.5 * row;
    SetComplex(out, k, v);
  }
  return out;
}
// Hermitian positive definite: B B^H + 2n I.
Tensor Hpd(DType t, const Dims& batch, int64_t n, int seed) {
  Tensor g = General(t, batch, n, n, seed);
  Tensor out(t, g.dims());
  for (int64_t b = 0; b < BatchCount(g); ++b) {
    CM m = MatrixAt(g, b);
    CM h = Mul(m, Adjoint(m));
    for (int64_t i = 0; i < n; ++i) h(i, i) += 2.0 * n;
    StoreAt(out, b * n * n, h);
  }
  return out;
}
// Hermitian with eigenvalues 1, 4, 7, ... and eigenvectors the columns of Unitary(n, seed).
Tensor HermitianKnown(DType t, int64_t n, int seed) {
  const CM u = Unitary(n, seed);
  CM d(n, n);
  for (int64_t i = 0; i < n; ++i) d(i, i) = 1.0 + 3.0 * i;
  Tensor out(t, {n, n});
  StoreAt(out, 0, Mul(Mul(u, d), Adjoint(u)));
  return out;
}
// [m, n] = U[:, :p] diag(9, 6, 3, ...) V[:, :p]^H with Householder unitaries U, V.
Tensor SvdKnown(DType t, int64_t m, int64_t n, int seed) {
  const int64_t p = std::min(m, n);
  const CM u = Unitary(m, seed), v = Unitary(n, seed + 1);
  CM a(m, n);
  for (int64_t k = 0; k < p; ++k) {
    const double s = 3.0 * (p - k);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) a(i, j) += u(i, k) * s * std::conj(v(j, k));
  }
  Tensor out(t, {m, n});
  StoreAt(out, 0, a);
  return out;
}

RefFn Batched(linalg_ref::TailFn tail, linalg_ref::PerMatrix<C> f) {
  return linalg_ref::Batched<C>(std::move(tail), std::move(f));
}

OpCase Make(const std::string& name, const std::string& op, DType t, std::vector<Tensor> feeds,
            RefFn ref, int output = 0) {
  OpCase c;
  c.name = absl::StrCat(name, "_", DTypeName(t));
  c.op = op;
  c.dtype = t;
  for (const Tensor& f : feeds) c.inputs.push_back(f.dims());
  c.feed_values = std::move(feeds);
  c.reference = std::move(ref);
  c.output = output;
  c.kernel_only = true;
  // float32 parts round at each step: a bound of eps * n * cond, well inside these.
  c.atol = t == DType::kComplex64 ? 1e-4 : 1e-10;
  return c;
}

CM Scalar(C v) {
  CM m(1, 1);
  m(0, 0) = v;
  return m;
}

}  // namespace

std::vector<OpCase> LinalgComplexCases() {
  std::vector<OpCase> cases;
  const std::vector<std::pair<Dims, int64_t>> shapes = {{{}, 1}, {{}, 3}, {{2}, 4}};
  for (DType t : {DType::kComplex64, DType::kComplex128}) {
    for (const auto& [batch, n] : shapes) {
      const std::string tag = DimsName(WithTail(batch, {n, n}));
      cases.push_back(
          Make("Cholesky_" + tag, "Cholesky", t, {Hpd(t, batch, n, 1)},
               Batched(SquareTail, [](const CM& a, const CM*) { return Cholesky(a); })));
      for (int adjoint = 0; adjoint < 2; ++adjoint) {
        OpCase inv = Make(absl::StrCat("MatrixInverse_", tag, "_adj", adjoint), "MatrixInverse", t,
                          {General(t, batch, n, n, 2)},
                          Batched(SquareTail, [adjoint](const CM& a, const CM*) {
                            return Solve(adjoint ? Adjoint(a) : a, Eye(a.r));
                          }));
        inv.attrs["adjoint"] = BoolAttr(adjoint);
        cases.push_back(inv);
        OpCase solve = Make(absl::StrCat("MatrixSolve_", tag, "_adj", adjoint), "MatrixSolve", t,
                            {General(t, batch, n, n, 3), General(t, batch, n, 2, 4)},
                            Batched(RhsTail, [adjoint](const CM& a, const CM* b) {
                              return Solve(adjoint ? Adjoint(a) : a, *b);
                            }));
        solve.attrs["adjoint"] = BoolAttr(adjoint);
        cases.push_back(solve);
        for (int lower = 0; lower < 2; ++lower) {
          OpCase tri = Make(
              absl::StrCat("MatrixTriangularSolve_", tag, "_adj", adjoint, "_lower", lower),
              "MatrixTriangularSolve", t, {General(t, batch, n, n, 5), General(t, batch, n, 3, 6)},
              Batched(RhsTail, [adjoint, lower](const CM& a, const CM* b) {
                // adjoint: the conjugate transpose of the chosen triangle.
                return adjoint ? TriSolve(Adjoint(a), *b, !lower) : TriSolve(a, *b, lower);
              }));
          tri.attrs["lower"] = BoolAttr(lower);
          tri.attrs["adjoint"] = BoolAttr(adjoint);
          cases.push_back(tri);
        }
      }
      cases.push_back(Make("MatrixDeterminant_" + tag, "MatrixDeterminant", t,
                           {General(t, batch, n, n, 7)},
                           Batched(NoTail, [](const CM& a, const CM*) {
                             const linalg_ref::Lu<C> f = Decompose(a);
                             C det = f.swaps % 2 ? -1.0 : 1.0;
                             for (int64_t i = 0; i < a.r; ++i) det *= f.lu(i, i);
                             return Scalar(det);
                           })));
      // LogMatrixDeterminant: sign the unit phase of the determinant, log of its modulus.
      for (int output = 0; output < 2; ++output) {
        cases.push_back(Make(absl::StrCat("LogMatrixDeterminant_", tag, "_out", output),
                             "LogMatrixDeterminant", t, {General(t, batch, n, n, 8)},
                             Batched(NoTail,
                                     [output](const CM& a, const CM*) {
                                       const linalg_ref::Lu<C> f = Decompose(a);
                                       C det = f.swaps % 2 ? -1.0 : 1.0;
                                       for (int64_t i = 0; i < a.r; ++i) det *= f.lu(i, i);
                                       return Scalar(output == 0 ? det / std::abs(det)
                                                                 : C(std::log(std::abs(det)), 0));
                                     }),
                             output));
      }
      cases.push_back(
          Make("Lu_" + tag + "_lu", "Lu", t, {General(t, batch, n, n, 9)},
               Batched(SquareTail, [](const CM& a, const CM*) { return Decompose(a).lu; })));
      OpCase perm = Make("Lu_" + tag + "_p", "Lu", t, {General(t, batch, n, n, 10)}, nullptr, 1);
      perm.reference = [](const std::vector<Tensor>& in) {
        const int64_t n = in[0].dim(in[0].rank() - 1);
        Tensor out(DType::kInt32, WithTail(BatchOf(in[0]), {n}));
        for (int64_t b = 0; b < BatchCount(in[0]); ++b) {
          const linalg_ref::Lu<C> f = Decompose(MatrixAt(in[0], b));
          for (int64_t i = 0; i < n; ++i) {
            out.data<int32_t>()[b * n + i] = static_cast<int32_t>(f.perm[static_cast<size_t>(i)]);
          }
        }
        return out;
      };
      cases.push_back(perm);
    }
    // Qr (thin) of tall and square matrices.
    for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{{3, 3}, {5, 3}, {4, 1}}) {
      const int64_t m = shape.first, n = shape.second;
      for (int output = 0; output < 2; ++output) {
        cases.push_back(Make(absl::StrCat("Qr_", m, "x", n, "_out", output), "Qr", t,
                             {General(t, {}, m, n, 11)},
                             Batched(
                                 [output](const Tensor& a, const Tensor*) {
                                   const int64_t r = a.dim(0), c = a.dim(1);
                                   return output == 0 ? Dims{r, c} : Dims{c, c};
                                 },
                                 [output](const CM& a, const CM*) {
                                   CM q(0, 0), r(0, 0);
                                   Qr(a, &q, &r);
                                   return output == 0 ? q : r;
                                 }),
                             output));
      }
    }
    // SelfAdjointEigV2: eigenvalues ascending (real, held in T), eigenvectors phase-fixed.
    for (int64_t n : {1, 3, 4}) {
      for (int output = 0; output < 2; ++output) {
        cases.push_back(Make(
            absl::StrCat("SelfAdjointEigV2_", n, "_out", output), "SelfAdjointEigV2", t,
            {HermitianKnown(t, n, 12)},
            [n, output](const std::vector<Tensor>& in) {
              CM u = Unitary(n, 12);
              for (int64_t j = 0; j < n; ++j) FixPhase(u, j, nullptr);
              Tensor out(in[0].dtype(), output == 0 ? Dims{n} : Dims{n, n});
              if (output == 0) {
                for (int64_t i = 0; i < n; ++i) SetComplex(out, i, 1.0 + 3.0 * i);
              } else {
                StoreAt(out, 0, u);
              }
              return out;
            },
            output));
      }
    }
    // Svd (thin): singular values descending, left vectors phase-fixed, right ones follow.
    for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{{3, 3}, {4, 2}, {2, 5}}) {
      const int64_t m = shape.first, n = shape.second;
      for (int output = 0; output < 3; ++output) {
        cases.push_back(Make(
            absl::StrCat("Svd_", m, "x", n, "_out", output), "Svd", t, {SvdKnown(t, m, n, 13)},
            [m, n, output](const std::vector<Tensor>& in) {
              const int64_t p = std::min(m, n);
              const CM uf = Unitary(m, 13), vf = Unitary(n, 14);
              CM u(m, p), v(n, p);
              for (int64_t k = 0; k < p; ++k) {
                for (int64_t i = 0; i < m; ++i) u(i, k) = uf(i, k);
                for (int64_t j = 0; j < n; ++j) v(j, k) = vf(j, k);
              }
              for (int64_t k = 0; k < p; ++k) FixPhase(u, k, &v);
              Tensor out(in[0].dtype(), output == 0   ? Dims{p}
                                        : output == 1 ? Dims{m, p}
                                                      : Dims{n, p});
              if (output == 0) {
                for (int64_t k = 0; k < p; ++k) SetComplex(out, k, 3.0 * (p - k));
              } else {
                StoreAt(out, 0, output == 1 ? u : v);
              }
              return out;
            },
            output));
      }
    }
    // TridiagonalMatMul and TridiagonalSolve (diagonals [3, n]: super, main, sub).
    {
      const int64_t n = 4;
      const Tensor sup = General(t, {}, 1, n, 15), mid = General(t, {}, 1, n, 16),
                   sub = General(t, {}, 1, n, 17), rhs = General(t, {}, n, 2, 18);
      cases.push_back(Make("TridiagonalMatMul_4x2", "TridiagonalMatMul", t, {sup, mid, sub, rhs},
                           [n](const std::vector<Tensor>& in) {
                             CM a(n, n);
                             for (int64_t i = 0; i < n; ++i) {
                               a(i, i) = ElementAsComplex(in[1], i);
                               if (i > 0) a(i, i - 1) = ElementAsComplex(in[2], i);
                               if (i + 1 < n) a(i, i + 1) = ElementAsComplex(in[0], i);
                             }
                             Tensor out(in[3].dtype(), {n, 2});
                             StoreAt(out, 0, Mul(a, MatrixAt(in[3], 0)));
                             return out;
                           }));
      // The main diagonal dominates, so the solve is stable with or without pivoting.
      Tensor diags(t, {3, n});
      for (int64_t i = 0; i < n; ++i) {
        SetComplex(diags, i, ElementAsComplex(sup, i));
        SetComplex(diags, n + i, ElementAsComplex(mid, i) + C(4, 1));
        SetComplex(diags, 2 * n + i, ElementAsComplex(sub, i));
      }
      for (int pivot = 0; pivot < 2; ++pivot) {
        OpCase solve = Make(absl::StrCat("TridiagonalSolve_4x2_pivot", pivot), "TridiagonalSolve",
                            t, {diags, rhs}, [n](const std::vector<Tensor>& in) {
                              CM a(n, n);
                              for (int64_t i = 0; i < n; ++i) {
                                a(i, i) = ElementAsComplex(in[0], n + i);
                                if (i + 1 < n) a(i, i + 1) = ElementAsComplex(in[0], i);
                                if (i > 0) a(i, i - 1) = ElementAsComplex(in[0], 2 * n + i);
                              }
                              Tensor out(in[1].dtype(), {n, 2});
                              StoreAt(out, 0, Solve(a, MatrixAt(in[1], 0)));
                              return out;
                            });
        solve.attrs["partial_pivoting"] = BoolAttr(pivot);
        cases.push_back(solve);
      }
    }
  }
  return cases;
}

}  // namespace tfjit::optest
