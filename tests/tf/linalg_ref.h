// Textbook dense linear algebra in double or std::complex<double>, the independent references of
// the linalg op cases (op_cases_linalg.cc, op_cases_linalg_complex.cc): row-major matrices,
// Gauss elimination with partial pivoting, substitution and Cholesky-Banachiewicz. They share
// nothing with core/linalg (Eigen).
#ifndef TFJIT_TESTS_TF_LINALG_REF_H_
#define TFJIT_TESTS_TF_LINALG_REF_H_

#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace tfjit::optest::linalg_ref {

template <typename S>
constexpr bool kIsComplex = !std::is_floating_point_v<S>;

// The complex conjugate; the value itself for reals.
template <typename S>
S Conj(S v) {
  if constexpr (kIsComplex<S>) {
    return std::conj(v);
  } else {
    return v;
  }
}

template <typename S>
struct Mat {
  int64_t r = 0, c = 0;
  std::vector<S> v;
  Mat(int64_t rows, int64_t cols) : r(rows), c(cols), v(static_cast<size_t>(rows * cols), S(0)) {}
  S& operator()(int64_t i, int64_t j) { return v[static_cast<size_t>(i * c + j)]; }
  S operator()(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * c + j)]; }
};

// The conjugate transpose (the transpose for reals).
template <typename S>
Mat<S> Adjoint(const Mat<S>& a) {
  Mat<S> t(a.c, a.r);
  for (int64_t i = 0; i < a.r; ++i)
    for (int64_t j = 0; j < a.c; ++j) t(j, i) = Conj(a(i, j));
  return t;
}

template <typename S>
Mat<S> Identity(int64_t n) {
  Mat<S> e(n, n);
  for (int64_t i = 0; i < n; ++i) e(i, i) = S(1);
  return e;
}

// Cholesky-Banachiewicz: a = L L^H, L lower with a real positive diagonal.
template <typename S>
Mat<S> Cholesky(const Mat<S>& a) {
  Mat<S> l(a.r, a.r);
  for (int64_t i = 0; i < a.r; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      S s = a(i, j);
      for (int64_t k = 0; k < j; ++k) s -= l(i, k) * Conj(l(j, k));
      l(i, j) = i == j ? S(std::sqrt(std::real(s))) : s / l(j, j);
    }
  }
  return l;
}

// Gauss elimination with partial pivoting (the first entry of largest modulus): LU in place,
// perm[i] = the row of `a` at row i.
template <typename S>
struct Lu {
  Mat<S> lu;
  std::vector<int64_t> perm;
  int swaps = 0;
};
template <typename S>
Lu<S> Decompose(const Mat<S>& a) {
  Lu<S> f{a, {}, 0};
  const int64_t n = a.r;
  for (int64_t i = 0; i < n; ++i) f.perm.push_back(i);
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i) {
      if (std::abs(f.lu(i, k)) > std::abs(f.lu(p, k))) p = i;
    }
    if (p != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(f.lu(k, j), f.lu(p, j));
      std::swap(f.perm[static_cast<size_t>(k)], f.perm[static_cast<size_t>(p)]);
      ++f.swaps;
    }
    for (int64_t i = k + 1; i < n; ++i) {
      f.lu(i, k) /= f.lu(k, k);
      for (int64_t j = k + 1; j < n; ++j) f.lu(i, j) -= f.lu(i, k) * f.lu(k, j);
    }
  }
  return f;
}

// a x = b by Decompose and substitution.
template <typename S>
Mat<S> Solve(const Mat<S>& a, const Mat<S>& b) {
  const Lu<S> f = Decompose(a);
  const int64_t n = a.r;
  Mat<S> x(n, b.c);
  for (int64_t col = 0; col < b.c; ++col) {
    std::vector<S> y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      S s = b(f.perm[static_cast<size_t>(i)], col);
      for (int64_t k = 0; k < i; ++k) s -= f.lu(i, k) * y[static_cast<size_t>(k)];
      y[static_cast<size_t>(i)] = s;
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      S s = y[static_cast<size_t>(i)];
      for (int64_t k = i + 1; k < n; ++k) s -= f.lu(i, k) * x(k, col);
      x(i, col) = s / f.lu(i, i);
    }
  }
  return x;
}

// Substitution with the lower or upper triangle of `a` (the other triangle is ignored).
template <typename S>
Mat<S> TriSolve(const Mat<S>& a, const Mat<S>& b, bool lower) {
  const int64_t n = a.r;
  Mat<S> x(n, b.c);
  for (int64_t col = 0; col < b.c; ++col) {
    for (int64_t s = 0; s < n; ++s) {
      const int64_t i = lower ? s : n - 1 - s;
      S acc = b(i, col);
      for (int64_t k = 0; k < n; ++k) {
        if ((lower && k < i) || (!lower && k > i)) acc -= a(i, k) * x(k, col);
      }
      x(i, col) = acc / a(i, i);
    }
  }
  return x;
}

}  // namespace tfjit::optest::linalg_ref

#endif  // TFJIT_TESTS_TF_LINALG_REF_H_
