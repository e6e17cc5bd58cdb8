// Differential cases of the linalg ops (docs/DESIGN.md, "Op families"): kernel vs evaluator
// vs CPU JIT, each against an independent reference. The structural ops are checked against
// loops written from TF's op documentation (plus TF's documented examples, hand-copied); the
// decompositions against textbook algorithms in double (Cholesky-Banachiewicz, Gauss
// elimination with partial pivoting and substitution from tests/tf/linalg_ref.h; modified
// Gram-Schmidt and cyclic Jacobi here), which share nothing with core/linalg. Where TF leaves signs
// free, the reference applies core/linalg.h's documented convention (R's diagonal nonnegative; each
// eigenvector's and left singular vector's largest entry positive).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/dtype.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tests/tf/linalg_ref.h"
#include "tests/tf/linalg_tensor_ref.h"
#include "tests/tf/op_cases.h"
#include "tfjit/session.h"

namespace tfjit::optest {
namespace {

// ---- Small dense matrices in double (row-major; tests/tf/linalg_ref.h) ----

using M = linalg_ref::Mat<double>;
using LuRef = linalg_ref::Lu<double>;
using linalg_ref::Decompose;

using linalg_ref::BatchCount;
using linalg_ref::BatchDims;
using linalg_ref::NoTail;
using linalg_ref::RhsTail;
using linalg_ref::SquareTail;
using linalg_ref::StoreAt;
using linalg_ref::VecTail;
using linalg_ref::WithTail;
M MatrixOf(const Tensor& t, int64_t b) { return linalg_ref::MatrixAt<double>(t, b); }
RefFn Batched(linalg_ref::TailFn tail, linalg_ref::PerMatrix<double> f) {
  return linalg_ref::Batched<double>(std::move(tail), std::move(f));
}

M Transpose(const M& a) { return linalg_ref::Adjoint(a); }
M CholeskyRef(const M& a) { return linalg_ref::Cholesky(a); }
M SolveRef(const M& a, const M& b) { return linalg_ref::Solve(a, b); }
M Identity(int64_t n) { return linalg_ref::Identity<double>(n); }
M TriSolveRef(const M& a, const M& b, bool lower) { return linalg_ref::TriSolve(a, b, lower); }

// Cyclic Jacobi on a symmetric matrix: eigenvalues ascending, eigenvectors as columns.
void JacobiEig(M a, std::vector<double>* e, M* v) {
  const int64_t n = a.r;
  *v = Identity(n);
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) off += a(p, q) * a(p, q);
    if (off < 1e-40) break;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        if (a(p, q) == 0) continue;
        const double theta = (a(q, q) - a(p, p)) / (2 * a(p, q));
        const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < n; ++k) {  // a = J^T a J
          const double akp = a(k, p), akq = a(k, q);
          a(k, p) = c * akp - s * akq;
          a(k, q) = s * akp + c * akq;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double apk = a(p, k), aqk = a(q, k);
          a(p, k) = c * apk - s * aqk;
          a(q, k) = s * apk + c * aqk;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double vkp = (*v)(k, p), vkq = (*v)(k, q);
          (*v)(k, p) = c * vkp - s * vkq;
          (*v)(k, q) = s * vkp + c * vkq;
        }
      }
    }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return a(x, x) < a(y, y); });
  M sorted(n, n);
  e->clear();
  for (int64_t j = 0; j < n; ++j) {
    const int64_t src = order[static_cast<size_t>(j)];
    e->push_back(a(src, src));
    for (int64_t k = 0; k < n; ++k) sorted(k, j) = (*v)(k, src);
  }
  *v = sorted;
}

// Flips column j of `m` (and of `follow`) so its first largest-magnitude entry is positive.
void FixSign(M& m, int64_t j, M* follow) {
  int64_t best = 0;
  for (int64_t i = 1; i < m.r; ++i) {
    if (std::abs(m(i, j)) > std::abs(m(best, j))) best = i;
  }
  if (m(best, j) < 0) {
    for (int64_t i = 0; i < m.r; ++i) m(i, j) = -m(i, j);
    if (follow != nullptr) {
      for (int64_t i = 0; i < follow->r; ++i) (*follow)(i, j) = -(*follow)(i, j);
    }
  }
}

// Thin SVD from the eigen-decomposition of the Gram matrix of the smaller side, refined: with
// a well separated spectrum (the cases' inputs) the singular vectors are unique up to sign.
void SvdRef(const M& a, std::vector<double>* s, M* u, M* v) {
  const bool tall = a.r >= a.c;
  const M b = tall ? a : Transpose(a);  // b is tall: b = U' S V'^T
  const int64_t n = b.c;
  M g(n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < b.r; ++k) g(i, j) += b(k, i) * b(k, j);
  std::vector<double> e;
  M w(0, 0);
  JacobiEig(g, &e, &w);
  M vv(n, n), uu(b.r, n);
  s->clear();
  for (int64_t j = 0; j < n; ++j) {  // descending
    const int64_t src = n - 1 - j;
    for (int64_t k = 0; k < n; ++k) vv(k, j) = w(k, src);
    double norm = 0;
    for (int64_t i = 0; i < b.r; ++i) {
      double acc = 0;
      for (int64_t k = 0; k < n; ++k) acc += b(i, k) * vv(k, j);
      uu(i, j) = acc;
      norm += acc * acc;
    }
    norm = std::sqrt(norm);
    s->push_back(norm);
    for (int64_t i = 0; i < b.r; ++i) uu(i, j) /= norm;
  }
  *u = tall ? uu : vv;
  *v = tall ? vv : uu;
  for (int64_t j = 0; j < n; ++j) FixSign(*u, j, v);
}

// ---- Fixed, well-conditioned inputs ----

// A symmetric positive definite [..., n, n]: B B^T + n I with B from a fixed pattern.
Tensor Spd(DType t, const Dims& batch, int64_t n, int seed) {
  Tensor out(t, WithTail(batch, {n, n}));
  int64_t count = 1;
  for (int64_t d : batch) count *= d;
  for (int64_t b = 0; b < count; ++b) {
    M bm(n, n), a(n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) bm(i, j) = std::sin(1.7 * (i + 1) + 0.9 * j + seed + 3 * b);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t k = 0; k < n; ++k) a(i, j) += bm(i, k) * bm(j, k);
        // Eigenvalues spread 4n apart: float32 eigenvectors are then accurate to ~1e-7 (their
        // error grows as eps * |A| / gap), within the differential test's tolerance on any ISA.
        if (i == j) a(i, j) += 4.0 * static_cast<double>(n) * static_cast<double>(i + 1);
      }
    StoreAt(out, b * n * n, a);
  }
  return out;
}
// A general well-conditioned [..., r, c] (diagonally dominant where square).
Tensor General(DType t, const Dims& batch, int64_t r, int64_t c, int seed) {
  return Build(t, WithTail(batch, {r, c}), [&](const Dims& i) {
    const size_t k = i.size();
    double b = 0;
    for (size_t d = 0; d + 2 < k; ++d) b = b * 5 + static_cast<double>(i[d]);
    const double row = static_cast<double>(i[k - 2]), col = static_cast<double>(i[k - 1]);
    double v = std::cos(2.3 * row + 1.1 * col * col + seed + 0.7 * b);
    if (row == col) v += 3 + 0.5 * row;
    return v;
  });
}

// `t` with row 0 of every matrix negated (a negative determinant).
Tensor NegateRow0(Tensor t) {
  const int64_t r = t.dim(t.rank() - 2), c = t.dim(t.rank() - 1);
  for (int64_t b = 0; b < BatchCount(t); ++b) {
    for (int64_t j = 0; j < c; ++j)
      SetFromDouble(t, b * r * c + j, -ElementAsDouble(t, b * r * c + j));
  }
  return t;
}

OpCase Case(const std::string& name, const std::string& op, DType t, std::vector<Tensor> feeds,
            RefFn ref, int output = 0) {
  OpCase c;
  c.name = name;
  c.op = op;
  c.dtype = t;
  for (const Tensor& f : feeds) c.inputs.push_back(f.dims());
  c.feed_values = std::move(feeds);
  c.reference = std::move(ref);
  c.output = output;
  return c;
}

// ---- Structural references (from TF's op documentation) ----

RefFn BandPartRef(int64_t lower, int64_t upper) {
  return [=](const std::vector<Tensor>& in) {
    const int r = in[0].rank();
    return Build(in[0].dtype(), in[0].dims(), [&](const Dims& i) {
      const int64_t row = i[static_cast<size_t>(r - 2)], col = i[static_cast<size_t>(r - 1)];
      const bool keep = (lower < 0 || row - col <= lower) && (upper < 0 || col - row <= upper);
      return keep ? At(in[0], i) : 0.0;
    });
  };
}

// Slot of element q of diagonal d (of [rows, cols] matrices) in rows of `width` slots.
int64_t Slot(int64_t d, int64_t q, int64_t rows, int64_t cols, int64_t width,
             const std::string& align) {
  const int64_t len = std::min(rows + std::min<int64_t>(0, d), cols - std::max<int64_t>(0, d));
  const std::string side =
      d >= 0 ? align.substr(0, align.find('_')) : align.substr(align.find('_') + 1);
  return side == "RIGHT" ? q + width - len : q;
}

// MatrixDiagV3 with the given k range, output size, padding and align.
RefFn MatrixDiagRef(int64_t lo, int64_t hi, int64_t rows, int64_t cols, double pad,
                    std::string align) {
  return [=](const std::vector<Tensor>& in) {
    const Tensor& dg = in[0];
    const size_t tail = lo == hi ? 1 : 2;
    Dims out_dims(dg.dims().begin(), dg.dims().end() - static_cast<std::ptrdiff_t>(tail));
    const size_t nb = out_dims.size();
    out_dims.push_back(rows);
    out_dims.push_back(cols);
    const int64_t width = dg.dims().back();
    return Build(dg.dtype(), out_dims, [&](const Dims& i) {
      const int64_t row = i[nb], col = i[nb + 1], d = col - row;
      if (d < lo || d > hi) return pad;
      Dims at(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(nb));
      if (lo != hi) at.push_back(hi - d);
      at.push_back(Slot(d, std::min(row, col), rows, cols, width, align));
      return At(dg, at);
    });
  };
}

RefFn MatrixDiagPartRef(int64_t lo, int64_t hi, double pad, std::string align) {
  return [=](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    const size_t nb = static_cast<size_t>(x.rank() - 2);
    const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
    const int64_t width = std::max<int64_t>(
        0, std::min(rows + std::min<int64_t>(hi, 0), cols - std::max<int64_t>(lo, 0)));
    Dims out_dims(x.dims().begin(), x.dims().end() - 2);
    if (lo != hi) out_dims.push_back(hi - lo + 1);
    out_dims.push_back(width);
    Tensor out = Build(x.dtype(), out_dims, [&](const Dims&) { return pad; });
    for (int64_t k = 0; k < x.num_elements(); ++k) {
      const Dims i = Unravel(k, x.dims());
      const int64_t row = i[nb], col = i[nb + 1], d = col - row;
      if (d < lo || d > hi) continue;
      Dims at(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(nb));
      if (lo != hi) at.push_back(hi - d);
      at.push_back(Slot(d, std::min(row, col), rows, cols, width, align));
      SetFromDouble(out, Ravel(at, out_dims), At(x, i));
    }
    return out;
  };
}

RefFn MatrixSetDiagRef(int64_t lo, int64_t hi, std::string align) {
  return [=](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    const Tensor& dg = in[1];
    const size_t nb = static_cast<size_t>(x.rank() - 2);
    const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
    const int64_t width = dg.dims().back();
    return Build(x.dtype(), x.dims(), [&](const Dims& i) {
      const int64_t row = i[nb], col = i[nb + 1], d = col - row;
      if (d < lo || d > hi) return At(x, i);
      Dims at(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(nb));
      if (lo != hi) at.push_back(hi - d);
      at.push_back(Slot(d, std::min(row, col), rows, cols, width, align));
      return At(dg, at);
    });
  };
}

Tensor Scalar(DType t, double v) { return Floats(t, {}, {v}); }

void AddStructuralCases(std::vector<OpCase>& cases) {
  // MatrixBandPart: dtypes, batch, size-0, unbounded (-1) sides.
  const std::vector<std::pair<int64_t, int64_t>> bands = {{1, 0}, {0, -1}, {-1, 2}, {2, 1}};
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                  DType::kInt32, DType::kInt64, DType::kUInt8, DType::kBool}) {
    for (const auto& [lo, up] : bands) {
      for (const Dims& d : {Dims{4, 5}, Dims{2, 3, 3}, Dims{0, 2}}) {
        if (t != DType::kFloat32 && d.size() != 3) continue;
        // TF rejects bounds past the matrix.
        if (lo > d[d.size() - 2] || up > d.back()) continue;
        OpCase c{absl::StrCat("MatrixBandPart_", DTypeName(t), "_", DimsName(d), "_", lo, "_", up),
                 "MatrixBandPart",
                 t,
                 {d},
                 {Ints({static_cast<int32_t>(lo)}, true), Ints({static_cast<int32_t>(up)}, true)}};
        c.attrs["Tindex"] = TypeAttr(DType::kInt32);
        c.reference = BandPartRef(lo, up);
        cases.push_back(c);
      }
    }
  }
  OpCase band64{"MatrixBandPart_int64_bounds",
                "MatrixBandPart",
                DType::kFloat32,
                {{3, 6}},
                {Ints64({2}, true), Ints64({0}, true)}};
  band64.reference = BandPartRef(2, 0);
  cases.push_back(band64);

  // MatrixDiag V1/V2/V3.
  for (DType t : {DType::kFloat32, DType::kInt32, DType::kFloat16, DType::kBool}) {
    OpCase c{absl::StrCat("MatrixDiag_", DTypeName(t)), "MatrixDiag", t, {{2, 4}}};
    c.reference = MatrixDiagRef(0, 0, 4, 4, 0, "LEFT_LEFT");
    cases.push_back(c);
  }
  struct DiagSpec {
    int64_t lo, hi, rows, cols, width;
    int64_t want_rows, want_cols;
  };
  // (k range, num_rows, num_cols (-1 = infer), diagonal length) and the resulting size.
  const std::vector<DiagSpec> specs = {
      {0, 0, -1, -1, 3, 3, 3},  {1, 1, -1, -1, 3, 4, 4}, {-2, -2, -1, -1, 2, 4, 4},
      {-1, 2, -1, -1, 3, 3, 3}, {-2, 1, 5, -1, 3, 5, 3}, {0, 0, 3, 5, 3, 3, 5},
      {-1, 1, 4, -1, 3, 4, 3},  {1, 2, -1, 5, 2, 2, 5},
  };
  for (const char* op : {"MatrixDiagV2", "MatrixDiagV3"}) {
    for (const char* align : {"LEFT_LEFT", "LEFT_RIGHT", "RIGHT_LEFT", "RIGHT_RIGHT"}) {
      const bool v2 = std::string(op) == "MatrixDiagV2";
      if (v2 && std::string(align) != "LEFT_LEFT") continue;
      for (const DiagSpec& s : specs) {
        for (DType t : {DType::kFloat32, DType::kInt64}) {
          if (t == DType::kInt64 && std::string(align) != "LEFT_RIGHT" && !v2) continue;
          Dims dims = {2};
          if (s.lo != s.hi) dims.push_back(s.hi - s.lo + 1);
          dims.push_back(s.width);
          std::vector<int32_t> k = {static_cast<int32_t>(s.lo)};
          if (s.lo != s.hi) k.push_back(static_cast<int32_t>(s.hi));
          OpCase c{absl::StrCat(op, "_", align, "_", DTypeName(t), "_k", s.lo, "_", s.hi, "_",
                                s.rows, "x", s.cols),
                   op,
                   t,
                   {dims},
                   {Ints(k, k.size() == 1), Ints({static_cast<int32_t>(s.rows)}, true),
                    Ints({static_cast<int32_t>(s.cols)}, true), Scalar(t, 7)}};
          if (!v2) c.attrs["align"] = StringAttr(align);
          c.reference = MatrixDiagRef(s.lo, s.hi, s.want_rows, s.want_cols, 7, align);
          cases.push_back(c);
        }
      }
    }
  }

  // MatrixDiagPart V1/V2/V3, including TF's documented example (hand-copied).
  for (DType t : {DType::kFloat32, DType::kInt32, DType::kBFloat16, DType::kBool}) {
    for (const Dims& d : {Dims{3, 5}, Dims{2, 4, 3}, Dims{2, 0, 3}}) {
      OpCase c{absl::StrCat("MatrixDiagPart_", DTypeName(t), "_", DimsName(d)),
               "MatrixDiagPart",
               t,
               {d}};
      c.reference = MatrixDiagPartRef(0, 0, 0, "LEFT_LEFT");
      cases.push_back(c);
    }
  }
  const std::vector<std::pair<int64_t, int64_t>> ks = {{0, 0},  {1, 1}, {-2, -2}, {-1, 1},
                                                       {-2, 3}, {1, 3}, {-3, -1}};
  for (const char* op : {"MatrixDiagPartV2", "MatrixDiagPartV3"}) {
    for (const char* align : {"LEFT_LEFT", "LEFT_RIGHT", "RIGHT_LEFT", "RIGHT_RIGHT"}) {
      const bool v2 = std::string(op) == "MatrixDiagPartV2";
      if (v2 && std::string(align) != "LEFT_LEFT") continue;
      for (const auto& [lo, hi] : ks) {
        for (const Dims& d : {Dims{4, 5}, Dims{2, 5, 4}}) {
          std::vector<int32_t> k = {static_cast<int32_t>(lo)};
          if (lo != hi) k.push_back(static_cast<int32_t>(hi));
          OpCase c{absl::StrCat(op, "_", align, "_k", lo, "_", hi, "_", DimsName(d)),
                   op,
                   DType::kFloat32,
                   {d},
                   {Ints(k, k.size() == 1), Scalar(DType::kFloat32, -9)}};
          if (!v2) c.attrs["align"] = StringAttr(align);
          c.reference = MatrixDiagPartRef(lo, hi, -9, align);
          cases.push_back(c);
        }
      }
    }
  }
  const Tensor doc_in = Floats(DType::kInt32, {2, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 8, 7, 6,
                                                          5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8});
  for (const char* align : {"RIGHT_LEFT", "LEFT_RIGHT"}) {
    const bool rl = std::string(align) == "RIGHT_LEFT";
    const Tensor want = rl ? Floats(DType::kInt32, {2, 3, 3},
                                    {2, 7, 6, 1, 6, 7, 5, 8, 0, 4, 3, 8, 5, 2, 7, 1, 6, 0})
                           : Floats(DType::kInt32, {2, 3, 3},
                                    {2, 7, 6, 1, 6, 7, 0, 5, 8, 4, 3, 8, 5, 2, 7, 0, 1, 6});
    OpCase c = Case(absl::StrCat("MatrixDiagPartV3_tf_doc_", align), "MatrixDiagPartV3",
                    DType::kInt32, {doc_in}, [want](const std::vector<Tensor>&) { return want; });
    c.consts = {Ints({-1, 1}), Scalar(DType::kInt32, 0)};
    c.attrs["align"] = StringAttr(align);
    cases.push_back(c);
  }

  // MatrixSetDiag V1/V2/V3.
  for (DType t : {DType::kFloat32, DType::kInt32, DType::kFloat64, DType::kBool}) {
    OpCase c{absl::StrCat("MatrixSetDiag_", DTypeName(t)), "MatrixSetDiag", t, {{2, 3, 5}, {2, 3}}};
    c.reference = MatrixSetDiagRef(0, 0, "LEFT_LEFT");
    cases.push_back(c);
  }
  for (const char* op : {"MatrixSetDiagV2", "MatrixSetDiagV3"}) {
    for (const char* align : {"LEFT_LEFT", "LEFT_RIGHT", "RIGHT_LEFT", "RIGHT_RIGHT"}) {
      const bool v2 = std::string(op) == "MatrixSetDiagV2";
      if (v2 && std::string(align) != "LEFT_LEFT") continue;
      for (const auto& [lo, hi] : ks) {
        const Dims in = {2, 5, 4};
        const int64_t width = std::min(5 + std::min<int64_t>(hi, 0), 4 - std::max<int64_t>(lo, 0));
        Dims dd = {2};
        if (lo != hi) dd.push_back(hi - lo + 1);
        dd.push_back(width);
        std::vector<int32_t> k = {static_cast<int32_t>(lo)};
        if (lo != hi) k.push_back(static_cast<int32_t>(hi));
        OpCase c{absl::StrCat(op, "_", align, "_k", lo, "_", hi),
                 op,
                 DType::kFloat32,
                 {in, dd},
                 {Ints(k, k.size() == 1)}};
        if (!v2) c.attrs["align"] = StringAttr(align);
        c.reference = MatrixSetDiagRef(lo, hi, align);
        cases.push_back(c);
      }
    }
  }

  // Diag / DiagPart.
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                  DType::kInt32, DType::kInt64}) {
    for (const Dims& d : {Dims{3}, Dims{2, 3}, Dims{0}}) {
      if (t != DType::kFloat32 && d.size() != 2) continue;
      OpCase diag{absl::StrCat("Diag_", DTypeName(t), "_", DimsName(d)), "Diag", t, {d}};
      diag.reference = [](const std::vector<Tensor>& in) {
        Dims out = in[0].dims();
        out.insert(out.end(), in[0].dims().begin(), in[0].dims().end());
        const int64_t n = in[0].num_elements();
        return Build(in[0].dtype(), out, [&](const Dims& i) {
          const int64_t r = Ravel(
              Dims(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(i.size() / 2)), in[0].dims());
          const int64_t c = Ravel(
              Dims(i.begin() + static_cast<std::ptrdiff_t>(i.size() / 2), i.end()), in[0].dims());
          return r == c && r < n ? ElementAsDouble(in[0], r) : 0.0;
        });
      };
      cases.push_back(diag);
      Dims sq = d;
      sq.insert(sq.end(), d.begin(), d.end());
      OpCase part{absl::StrCat("DiagPart_", DTypeName(t), "_", DimsName(sq)), "DiagPart", t, {sq}};
      part.reference = [](const std::vector<Tensor>& in) {
        const Dims half(in[0].dims().begin(), in[0].dims().begin() + in[0].rank() / 2);
        Tensor out(in[0].dtype(), half);
        const int64_t n = out.num_elements();
        for (int64_t k = 0; k < n; ++k) SetFromDouble(out, k, ElementAsDouble(in[0], k * n + k));
        return out;
      };
      cases.push_back(part);
    }
  }

  // Cross.
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32, DType::kInt64,
                  DType::kInt8, DType::kUInt16}) {
    for (const Dims& d : {Dims{3}, Dims{4, 3}, Dims{2, 0, 3}, Dims{2, 5, 3}}) {
      if (t != DType::kFloat32 && d.size() != 2) continue;
      OpCase c{absl::StrCat("Cross_", DTypeName(t), "_", DimsName(d)), "Cross", t, {d, d}};
      c.reference = [](const std::vector<Tensor>& in) {
        Tensor out(in[0].dtype(), in[0].dims());
        for (int64_t v = 0; v < in[0].num_elements() / 3; ++v) {
          double a[3], b[3];
          for (int i = 0; i < 3; ++i) {
            a[i] = ElementAsDouble(in[0], 3 * v + i);
            b[i] = ElementAsDouble(in[1], 3 * v + i);
          }
          const double r[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                               a[0] * b[1] - a[1] * b[0]};
          for (int i = 0; i < 3; ++i) {
            double x = r[i];
            if (out.dtype() == DType::kUInt16) x = std::fmod(x + 65536.0 * 4, 65536.0);
            SetFromDouble(out, 3 * v + i, x);
          }
        }
        return out;
      };
      cases.push_back(c);
    }
  }

  // SparseMatMul: Ta/Tb in {float, bfloat16}, transposes, hints (ignored).
  for (DType ta : {DType::kFloat32, DType::kBFloat16}) {
    for (DType tb : {DType::kFloat32, DType::kBFloat16}) {
      for (int tr = 0; tr < 4; ++tr) {
        const bool t_a = tr & 1, t_b = tr & 2;
        const Dims a = t_a ? Dims{5, 3} : Dims{3, 5}, b = t_b ? Dims{4, 5} : Dims{5, 4};
        OpCase c{absl::StrCat("SparseMatMul_", DTypeName(ta), "_", DTypeName(tb), "_t", tr),
                 "SparseMatMul",
                 DType::kFloat32,
                 {a, b}};
        c.has_t = false;
        c.input_dtypes = {ta, tb};
        c.attrs["Ta"] = TypeAttr(ta);
        c.attrs["Tb"] = TypeAttr(tb);
        c.attrs["transpose_a"] = BoolAttr(t_a);
        c.attrs["transpose_b"] = BoolAttr(t_b);
        c.attrs["a_is_sparse"] = BoolAttr(tr == 1);
        c.reference = [t_a, t_b](const std::vector<Tensor>& in) {
          M x = MatrixOf(in[0], 0), y = MatrixOf(in[1], 0);
          if (t_a) x = Transpose(x);
          if (t_b) y = Transpose(y);
          Tensor out(DType::kFloat32, {x.r, y.c});
          for (int64_t i = 0; i < x.r; ++i)
            for (int64_t j = 0; j < y.c; ++j) {
              double s = 0;
              for (int64_t k = 0; k < x.c; ++k) s += x(i, k) * y(k, j);
              SetFromDouble(out, i * y.c + j, s);
            }
          return out;
        };
        cases.push_back(c);
      }
    }
  }

  // TridiagonalMatMul.
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    for (const auto& [batch, m, n] : std::vector<std::tuple<Dims, int64_t, int64_t>>{
             {{}, 5, 3}, {{2}, 4, 1}, {{2, 2}, 1, 2}, {{}, 3, 0}}) {
      const Dims diag = WithTail(batch, {1, m}), rhs = WithTail(batch, {m, n});
      OpCase c{absl::StrCat("TridiagonalMatMul_", DTypeName(t), "_", DimsName(rhs)),
               "TridiagonalMatMul",
               t,
               {diag, diag, diag, rhs}};
      c.reference = [](const std::vector<Tensor>& in) {
        const Tensor& x = in[3];
        Tensor out(x.dtype(), x.dims());
        const int64_t m = x.dim(x.rank() - 2), n = x.dim(x.rank() - 1);
        for (int64_t b = 0; b < BatchCount(x); ++b) {
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double s = 0;
              for (int64_t k = std::max<int64_t>(0, i - 1); k <= std::min(m - 1, i + 1); ++k) {
                const int which = k == i + 1 ? 0 : k == i ? 1 : 2;
                s += ElementAsDouble(in[static_cast<size_t>(which)], b * m + i) *
                     ElementAsDouble(x, (b * m + k) * n + j);
              }
              SetFromDouble(out, (b * m + i) * n + j, s);
            }
        }
        return out;
      };
      cases.push_back(c);
    }
  }
}

// ---- Decompositions and solvers ----

void AddDecompositionCases(std::vector<OpCase>& cases) {
  const std::vector<std::pair<Dims, int64_t>> shapes = {{{}, 1}, {{}, 4}, {{2, 3}, 3}, {{2}, 7}};
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    for (const auto& [batch, n] : shapes) {
      const std::string tag = absl::StrCat(DTypeName(t), "_", DimsName(WithTail(batch, {n, n})));
      if (t == DType::kFloat16 && n > 4) continue;
      cases.push_back(
          Case("Cholesky_" + tag, "Cholesky", t, {Spd(t, batch, n, 1)},
               Batched(SquareTail, [](const M& a, const M*) { return CholeskyRef(a); })));
      for (int adjoint = 0; adjoint < 2; ++adjoint) {
        OpCase inv =
            Case(absl::StrCat("MatrixInverse_", tag, "_adj", adjoint), "MatrixInverse", t,
                 {General(t, batch, n, n, 2)}, Batched(SquareTail, [adjoint](const M& a, const M*) {
                   return SolveRef(adjoint ? Transpose(a) : a, Identity(a.r));
                 }));
        inv.attrs["adjoint"] = BoolAttr(adjoint);
        cases.push_back(inv);
        OpCase solve = Case(absl::StrCat("MatrixSolve_", tag, "_adj", adjoint), "MatrixSolve", t,
                            {General(t, batch, n, n, 3), General(t, batch, n, 2, 4)},
                            Batched(RhsTail, [adjoint](const M& a, const M* b) {
                              return SolveRef(adjoint ? Transpose(a) : a, *b);
                            }));
        solve.attrs["adjoint"] = BoolAttr(adjoint);
        cases.push_back(solve);
        for (int lower = 0; lower < 2; ++lower) {
          OpCase tri = Case(
              absl::StrCat("MatrixTriangularSolve_", tag, "_adj", adjoint, "_lower", lower),
              "MatrixTriangularSolve", t, {General(t, batch, n, n, 5), General(t, batch, n, 3, 6)},
              Batched(RhsTail, [adjoint, lower](const M& a, const M* b) {
                // adjoint solves with the transpose of the chosen triangle.
                return adjoint ? TriSolveRef(Transpose(a), *b, !lower) : TriSolveRef(a, *b, lower);
              }));
          tri.attrs["lower"] = BoolAttr(lower);
          tri.attrs["adjoint"] = BoolAttr(adjoint);
          cases.push_back(tri);
        }
      }
      cases.push_back(Case("MatrixDeterminant_" + tag, "MatrixDeterminant", t,
                           {General(t, batch, n, n, 7)}, Batched(NoTail, [](const M& a, const M*) {
                             const LuRef f = Decompose(a);
                             double det = f.swaps % 2 ? -1 : 1;
                             for (int64_t i = 0; i < a.r; ++i) det *= f.lu(i, i);
                             M r(1, 1);
                             r.v[0] = det;
                             return r;
                           })));
      for (int output = 0; output < 2; ++output) {
        cases.push_back(Case(absl::StrCat("LogMatrixDeterminant_", tag, "_out", output),
                             "LogMatrixDeterminant", t, {NegateRow0(General(t, batch, n, n, 8))},
                             Batched(NoTail,
                                     [output](const M& a, const M*) {
                                       const LuRef f = Decompose(a);
                                       double sign = f.swaps % 2 ? -1 : 1, log_abs = 0;
                                       for (int64_t i = 0; i < a.r; ++i) {
                                         if (f.lu(i, i) < 0) sign = -sign;
                                         log_abs += std::log(std::abs(f.lu(i, i)));
                                       }
                                       M r(1, 1);
                                       r.v[0] = output == 0 ? sign : log_abs;
                                       return r;
                                     }),
                             output));
      }
      // Lu: the packed factors and the permutation, for both index types.
      cases.push_back(
          Case("Lu_" + tag + "_lu", "Lu", t, {General(t, batch, n, n, 9)},
               Batched(SquareTail, [](const M& a, const M*) { return Decompose(a).lu; })));
      if (t != DType::kFloat16) {
        for (DType idx : {DType::kInt32, DType::kInt64}) {
          OpCase p = Case(absl::StrCat("Lu_", tag, "_p_", DTypeName(idx)), "Lu", t,
                          {General(t, batch, n, n, 10)}, nullptr, 1);
          p.attrs["output_idx_type"] = TypeAttr(idx);
          p.reference = [idx](const std::vector<Tensor>& in) {
            const int64_t n = in[0].dim(in[0].rank() - 1);
            Tensor out(idx, WithTail(BatchDims(in[0]), {n}));
            for (int64_t b = 0; b < BatchCount(in[0]); ++b) {
              const LuRef f = Decompose(MatrixOf(in[0], b));
              for (int64_t i = 0; i < n; ++i) {
                SetFromDouble(out, b * n + i, static_cast<double>(f.perm[static_cast<size_t>(i)]));
              }
            }
            return out;
          };
          cases.push_back(p);
        }
      }
      // SelfAdjointEigV2: eigenvalues ascending, eigenvectors sign-normalised.
      for (int output = 0; output < 2; ++output) {
        if (t == DType::kFloat16 && output == 1) continue;
        cases.push_back(Case(absl::StrCat("SelfAdjointEigV2_", tag, "_out", output),
                             "SelfAdjointEigV2", t, {Spd(t, batch, n, 11)},
                             Batched(output == 0 ? VecTail : SquareTail,
                                     [output](const M& a, const M*) {
                                       std::vector<double> e;
                                       M v(0, 0);
                                       JacobiEig(a, &e, &v);
                                       if (output == 1) {
                                         for (int64_t j = 0; j < v.c; ++j) FixSign(v, j, nullptr);
                                         return v;
                                       }
                                       M r(1, static_cast<int64_t>(e.size()));
                                       r.v = e;
                                       return r;
                                     }),
                             output));
      }
    }
  }
  OpCase eig_values_only = Case(
      "SelfAdjointEigV2_f32_compute_v_false", "SelfAdjointEigV2", DType::kFloat32,
      {Spd(DType::kFloat32, {2}, 3, 12)},
      [](const std::vector<Tensor>& in) { return Tensor(in[0].dtype(), {0}); }, 1);
  eig_values_only.attrs["compute_v"] = BoolAttr(false);
  cases.push_back(eig_values_only);

  // MatrixTriangularSolve broadcasting of batch dims.
  OpCase bcast =
      Case("MatrixTriangularSolve_f32_broadcast", "MatrixTriangularSolve", DType::kFloat32,
           {General(DType::kFloat32, {2, 1}, 3, 3, 13), General(DType::kFloat32, {3}, 3, 2, 14)},
           [](const std::vector<Tensor>& in) {
             Tensor out(DType::kFloat32, {2, 3, 3, 2});
             for (int64_t i = 0; i < 2; ++i)
               for (int64_t j = 0; j < 3; ++j) {
                 StoreAt(out, (i * 3 + j) * 6,
                         TriSolveRef(MatrixOf(in[0], i), MatrixOf(in[1], j), true));
               }
             return out;
           });
  cases.push_back(bcast);

  // Qr and Svd on square, tall and wide matrices.
  const std::vector<std::tuple<Dims, int64_t, int64_t>> rect = {
      {{}, 4, 4}, {{2}, 5, 3}, {{}, 3, 5}, {{2, 2}, 2, 2}, {{}, 1, 3}};
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    for (const auto& [batch, m, n] : rect) {
      const std::string tag = absl::StrCat(DTypeName(t), "_", DimsName(WithTail(batch, {m, n})));
      for (int full = 0; full < 2; ++full) {
        if (full && m > n) continue;  // Q's extra columns are not unique
        for (int output = 0; output < 2; ++output) {
          OpCase qr = Case(
              absl::StrCat("Qr_", tag, "_full", full, "_out", output), "Qr", t,
              {General(t, batch, m, n, 15)},
              [output, full](const std::vector<Tensor>& in) {
                const int64_t m = in[0].dim(in[0].rank() - 2);
                const int64_t n = in[0].dim(in[0].rank() - 1);
                const int64_t p = full ? m : std::min(m, n);
                Tensor out(in[0].dtype(),
                           WithTail(BatchDims(in[0]), {output == 0 ? m : p, output == 0 ? p : n}));
                for (int64_t b = 0; b < BatchCount(in[0]); ++b) {
                  const M a = MatrixOf(in[0], b);
                  M q(m, p), r(p, n);  // modified Gram-Schmidt on a's columns
                  M w = a;
                  for (int64_t j = 0; j < p; ++j) {
                    double norm = 0;
                    for (int64_t i = 0; i < m; ++i) norm += w(i, j) * w(i, j);
                    r(j, j) = std::sqrt(norm);
                    for (int64_t i = 0; i < m; ++i) q(i, j) = w(i, j) / r(j, j);
                    for (int64_t k = j + 1; k < n; ++k) {
                      double dot = 0;
                      for (int64_t i = 0; i < m; ++i) dot += q(i, j) * w(i, k);
                      r(j, k) = dot;
                      for (int64_t i = 0; i < m; ++i) w(i, k) -= dot * q(i, j);
                    }
                  }
                  StoreAt(out, b * out.num_elements() / BatchCount(in[0]), output == 0 ? q : r);
                }
                return out;
              },
              output);
          qr.attrs["full_matrices"] = BoolAttr(full);
          cases.push_back(qr);
        }
      }
      for (int output = 0; output < 3; ++output) {
        OpCase svd = Case(
            absl::StrCat("Svd_", tag, "_out", output), "Svd", t, {General(t, batch, m, n, 16)},
            [output](const std::vector<Tensor>& in) {
              const int64_t m = in[0].dim(in[0].rank() - 2);
              const int64_t n = in[0].dim(in[0].rank() - 1);
              const int64_t p = std::min(m, n);
              const Dims tail = output == 0 ? Dims{p} : output == 1 ? Dims{m, p} : Dims{n, p};
              Dims dims = BatchDims(in[0]);
              dims.insert(dims.end(), tail.begin(), tail.end());
              Tensor out(in[0].dtype(), dims);
              const int64_t per = out.num_elements() / BatchCount(in[0]);
              for (int64_t b = 0; b < BatchCount(in[0]); ++b) {
                std::vector<double> s;
                M u(0, 0), v(0, 0);
                SvdRef(MatrixOf(in[0], b), &s, &u, &v);
                if (output == 0) {
                  for (int64_t i = 0; i < p; ++i) {
                    SetFromDouble(out, b * per + i, s[static_cast<size_t>(i)]);
                  }
                } else {
                  StoreAt(out, b * per, output == 1 ? u : v);
                }
              }
              return out;
            },
            output);
        cases.push_back(svd);
      }
    }
  }
  OpCase s_only = Case(
      "Svd_f64_compute_uv_false", "Svd", DType::kFloat64, {General(DType::kFloat64, {}, 3, 3, 17)},
      [](const std::vector<Tensor>& in) { return Tensor(in[0].dtype(), {0}); }, 2);
  s_only.attrs["compute_uv"] = BoolAttr(false);
  cases.push_back(s_only);

  // TridiagonalSolve: with and without pivoting (a small main diagonal forces a swap).
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    for (int pivot = 0; pivot < 2; ++pivot) {
      for (const auto& [batch, n, k] :
           std::vector<std::tuple<Dims, int64_t, int64_t>>{{{}, 5, 2}, {{2}, 1, 3}, {{3}, 4, 1}}) {
        Tensor diags = Build(t, WithTail(batch, {3, n}), [&](const Dims& i) {
          const size_t r = i.size() - 2;
          const double j = static_cast<double>(i[r + 1]);
          if (i[r] == 1) return pivot ? 0.25 * std::sin(j + 1) : 4 + j;
          return std::cos(1.3 * j + static_cast<double>(i[r]));
        });
        OpCase c = Case(absl::StrCat("TridiagonalSolve_", DTypeName(t), "_",
                                     DimsName(WithTail(batch, {n, k})), "_pivot", pivot),
                        "TridiagonalSolve", t, {diags, General(t, batch, n, k, 18)},
                        [](const std::vector<Tensor>& in) {
                          const Tensor& d = in[0];
                          const int64_t n = d.dim(d.rank() - 1);
                          const int64_t k = in[1].dim(in[1].rank() - 1);
                          Tensor out(in[1].dtype(), in[1].dims());
                          for (int64_t b = 0; b < BatchCount(d); ++b) {
                            M a(n, n);
                            for (int64_t i = 0; i < n; ++i) {
                              a(i, i) = ElementAsDouble(d, (b * 3 + 1) * n + i);
                              if (i + 1 < n) a(i, i + 1) = ElementAsDouble(d, b * 3 * n + i);
                              if (i > 0) a(i, i - 1) = ElementAsDouble(d, (b * 3 + 2) * n + i);
                            }
                            StoreAt(out, b * n * k, SolveRef(a, MatrixOf(in[1], b)));
                          }
                          return out;
                        });
        c.attrs["partial_pivoting"] = BoolAttr(pivot);
        cases.push_back(c);
      }
    }
  }
}

}  // namespace

// BatchMatMulV2/V3 and Einsum (linalg_matmul_kernels.cc), each against explicit sums.
std::vector<OpCase> BatchMatMulCases() {
  std::vector<OpCase> cases;
  // BatchMatMulV2 (broadcast batch dims, adjoints) and Einsum: reference by explicit sums.
  struct BM {
    Dims x, y;
    bool ax, ay;
  };
  for (const BM& m : std::vector<BM>{{{2, 3, 4}, {2, 4, 5}, false, false},
                                     {{2, 4, 3}, {4, 5}, true, false},
                                     {{1, 3, 4}, {3, 5, 4}, false, true},
                                     {{2, 1, 2, 3}, {3, 3, 2}, false, false},
                                     {{0, 2, 3}, {3, 4}, false, false}}) {
    for (const char* op : {"BatchMatMulV2", "BatchMatMulV3"}) {
      OpCase c{absl::StrCat(op, "_", DimsName(m.x), "_", DimsName(m.y), m.ax ? "_ax" : "",
                            m.ay ? "_ay" : ""),
               op,
               DType::kFloat32,
               {m.x, m.y}};
      c.attrs["adj_x"] = BoolAttr(m.ax);
      c.attrs["adj_y"] = BoolAttr(m.ay);
      if (std::string(op) == "BatchMatMulV3") {
        c.has_t = false;
        c.attrs["Ta"] = TypeAttr(DType::kFloat32);
        c.attrs["Tb"] = TypeAttr(DType::kFloat32);
        c.attrs["Tout"] = TypeAttr(DType::kFloat32);
      }
      const bool ax = m.ax, ay = m.ay;
      c.reference = [ax, ay](const std::vector<Tensor>& in) {
        Dims x = in[0].dims(), y = in[1].dims();
        const size_t rank = std::max(x.size(), y.size());
        x.insert(x.begin(), rank - x.size(), 1);
        y.insert(y.begin(), rank - y.size(), 1);
        Dims out(rank);
        for (size_t k = 0; k + 2 < rank; ++k) out[k] = std::max(x[k], y[k]);
        const int64_t rows = ax ? x[rank - 1] : x[rank - 2];
        const int64_t inner = ax ? x[rank - 2] : x[rank - 1];
        out[rank - 2] = rows;
        out[rank - 1] = ay ? y[rank - 2] : y[rank - 1];
        if (std::find(x.begin(), x.end() - 2, 0) != x.end() - 2) out[0] = 0;
        return Build(DType::kFloat32, out, [&](const Dims& o) {
          double sum = 0;
          for (int64_t k = 0; k < inner; ++k) {
            Dims xi(rank), yi(rank);
            for (size_t b = 0; b + 2 < rank; ++b) {
              xi[b] = x[b] == 1 ? 0 : o[b];
              yi[b] = y[b] == 1 ? 0 : o[b];
            }
            xi[rank - 2] = ax ? k : o[rank - 2];
            xi[rank - 1] = ax ? o[rank - 2] : k;
            yi[rank - 2] = ay ? o[rank - 1] : k;
            yi[rank - 1] = ay ? k : o[rank - 1];
            Dims xs(xi.end() - static_cast<int64_t>(in[0].rank()), xi.end());
            Dims ys(yi.end() - static_cast<int64_t>(in[1].rank()), yi.end());
            sum += At(in[0], xs) * At(in[1], ys);
          }
          return sum;
        });
      };
      cases.push_back(c);
    }
  }
  struct E {
    std::string eq;
    std::vector<Dims> in;
  };
  for (const E& e : std::vector<E>{{"ij,jk->ik", {{3, 4}, {4, 5}}},
                                   {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
                                   {"ij,kj->ik", {{3, 4}, {5, 4}}},
                                   {"i,i->", {{7}, {7}}},
                                   {"i,j->ij", {{3}, {4}}},
                                   {"bij,jk->kbi", {{2, 3, 4}, {4, 5}}},
                                   {"abc,cd->abd", {{2, 3, 4}, {4, 2}}},
                                   {"ij->ji", {{3, 4}}},
                                   {"ij->i", {{3, 4}}},
                                   {"ijk,k->ij", {{2, 3, 4}, {4}}},
                                   {"ik,jkl->ijl", {{2, 3}, {4, 3, 5}}},
                                   {"...ij,...jk->...ik", {{2, 3, 4}, {2, 4, 5}}}}) {
    std::string name = e.eq;
    for (char& ch : name) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    OpCase c{absl::StrCat("Einsum_", name), "Einsum", DType::kFloat32, e.in};
    c.attrs["N"] = IntAttr(static_cast<int64_t>(e.in.size()));
    c.attrs["equation"] = StringAttr(e.eq);
    c.reference = EinsumRef(e.eq);
    cases.push_back(c);
  }
  return cases;
}

RefFn EinsumRef(const std::string& eq) {
  return [eq](const std::vector<Tensor>& in) {
    // Brute force over all label values (no ellipsis after this rewrite: '...' -> 'Z'), in
    // complex<double> for real and complex operands alike.
    // absl::StrReplaceAll instead of a find/replace loop: GCC 12 misreads the loop's
    // std::string::replace as an oversized memcpy (-Wstringop-overflow).
    const std::string q = absl::StrReplaceAll(eq, {{"...", "Z"}});
    const size_t arrow = q.find("->");
    const std::string out = q.substr(arrow + 2);
    std::vector<std::string> terms = absl::StrSplit(q.substr(0, arrow), ',');
    std::map<char, int64_t> size;
    for (size_t t = 0; t < terms.size(); ++t) {
      for (size_t k = 0; k < terms[t].size(); ++k) size[terms[t][k]] = in[t].dims()[k];
    }
    Dims od;
    for (char l : out) od.push_back(size[l]);
    std::string sum_labels;
    for (auto [l, n] : size) {
      if (out.find(l) == std::string::npos) sum_labels.push_back(l);
    }
    Dims sd;
    for (char l : sum_labels) sd.push_back(size[l]);
    int64_t sn = 1;
    for (int64_t d : sd) sn *= d;
    Tensor y(in[0].dtype(), od);
    for (int64_t k = 0; k < y.num_elements(); ++k) {
      const Dims o = Unravel(k, od);
      complex128 total = 0;
      for (int64_t s = 0; s < sn; ++s) {
        Dims si = Unravel(s, sd);
        std::map<char, int64_t> v;
        for (size_t j = 0; j < out.size(); ++j) v[out[j]] = o[j];
        for (size_t j = 0; j < sum_labels.size(); ++j) v[sum_labels[j]] = si[j];
        complex128 prod = 1;
        for (size_t t = 0; t < terms.size(); ++t) {
          Dims ti;
          for (char l : terms[t]) ti.push_back(v[l]);
          prod *= ElementAsComplex(in[t], Ravel(ti, in[t].dims()));
        }
        total += prod;
      }
      if (y.dtype() == DType::kComplex64) {
        y.data<complex64>()[k] =
            complex64(static_cast<float>(total.real()), static_cast<float>(total.imag()));
      } else if (y.dtype() == DType::kComplex128) {
        y.data<complex128>()[k] = total;
      } else {
        SetFromDouble(y, k, total.real());
      }
    }
    return y;
  };
}

std::vector<OpCase> LinalgCases() {
  std::vector<OpCase> cases;
  AddStructuralCases(cases);
  AddDecompositionCases(cases);
  return cases;
}

}  // namespace tfjit::optest

// TF's CPU errors for invalid input to the decompositions, and XLA's NaN results in compiled
// code (tf2xla does not check).
namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

StatusOr<std::vector<Tensor>> RunOne(const std::string& op, const std::string& extra, JitMode jit,
                                     const Tensor& x) {
  const std::string graph = absl::StrCat(
      R"pb(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "op" op: ")pb",
      op, R"pb(" input: "x" attr { key: "T" value { type: DT_FLOAT } } )pb", extra, "}\n");
  const std::string path = WriteTempFile(absl::StrCat("linalg_err_", op, ".pbtxt"), graph);
  SessionOptions options;
  options.jit = jit;
  options.backend = "interpreter";
  auto session = Session::Load(path, options);
  std::filesystem::remove(path);
  if (!session.ok()) return session.status();
  return (*session)->Run({{"x", x}}, {"op"});
}

TEST(LinalgKernels, CholeskyOfANonPositiveDefiniteMatrixFailsLikeTf) {
  const Tensor x = Tensor::FromVector<float>(DType::kFloat32, {2, 2}, {1, 2, 2, 1});
  auto kernel = RunOne("Cholesky", "", JitMode::kNone, x);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument) << kernel.status();
  EXPECT_TRUE(absl::StrContains(kernel.status().message(),
                                "Cholesky decomposition was not successful. The input might not "
                                "be valid."))
      << kernel.status();
  auto compiled = RunOne("Cholesky", "", JitMode::kAll, x);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  for (int64_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan((*compiled)[0].data<float>()[i]));
}

TEST(LinalgKernels, SingularMatrixInverseFailsLikeTf) {
  const Tensor x = Tensor::FromVector<float>(DType::kFloat32, {2, 2}, {1, 2, 2, 4});
  auto kernel = RunOne("MatrixInverse", "", JitMode::kNone, x);
  ASSERT_FALSE(kernel.ok());
  EXPECT_TRUE(absl::StrContains(kernel.status().message(), "Input is not invertible."))
      << kernel.status();
  auto non_square = RunOne("MatrixInverse", "", JitMode::kNone,
                           Tensor::FromVector<float>(DType::kFloat32, {1, 2}, {1, 2}));
  ASSERT_FALSE(non_square.ok());
  EXPECT_TRUE(absl::StrContains(non_square.status().message(), "must be square"))
      << non_square.status();
}

}  // namespace
}  // namespace tfjit
