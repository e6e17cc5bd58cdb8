// Fallback kernels of the linalg ops (docs/DESIGN.md, "Op families"), with TF's CPU
// semantics, dtypes and error messages: the structural ops (band part, the matrix diag family,
// Diag/DiagPart, Cross, SparseMatMul, TridiagonalMatMul) and the decompositions and solvers,
// which run core/linalg.h, the routine compiled code's custom-calls share.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "core/linalg.h"
#include "frontend/attr.h"
#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cwise_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

using Dims = std::vector<int64_t>;

// Product of dims[begin, end).
int64_t Prod(const Dims& d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= d[i];
  return p;
}

absl::Status ScalarIndex(const KernelContext& ctx, const Tensor& t, const char* what,
                         int64_t* out) {
  std::vector<int64_t> v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, t, what, &v));
  if (t.rank() != 0)
    return KernelError(ctx, "%s must be scalar, got shape %s", what, t.ShapeString());
  *out = v[0];
  return absl::OkStatus();
}

// ---- MatrixBandPart ----

absl::Status MatrixBandPartKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& in = ctx.input(0);
  if (in.rank() < 2) {
    return KernelError(ctx, "input must be at least 2-dim, received shape: %s", in.ShapeString());
  }
  const int64_t rows = in.dim(in.rank() - 2), cols = in.dim(in.rank() - 1);
  int64_t lower, upper;
  TFJIT_RETURN_IF_ERROR(ScalarIndex(ctx, ctx.input(1), "num_lower", &lower));
  TFJIT_RETURN_IF_ERROR(ScalarIndex(ctx, ctx.input(2), "num_upper", &upper));
  if (lower > rows) {
    return KernelError(ctx,
                       "num_lower must be negative or less or equal to number of rows (%d) "
                       "got: %d",
                       rows, lower);
  }
  if (upper > cols) {
    return KernelError(ctx,
                       "num_upper must be negative or less or equal to number of columns "
                       "(%d) got: %d",
                       cols, upper);
  }
  Tensor out(in.dtype(), in.dims());
  const bool ok = DispatchByWidth(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = in.data<T>();
    T* q = out.data<T>();
    const int64_t mats = rows * cols == 0 ? 0 : in.num_elements() / (rows * cols);
    ParallelFor(ctx, mats * rows, cols, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t i = r % rows;
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper);
          q[r * cols + j] = keep ? p[r * cols + j] : T{};
        }
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kAll));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- The matrix diag family ----

// Diagonals lo..hi of [rows, cols] matrices, each stored in max_len slots: diagonal d sits at
// index hi - d, its element along the diagonal q at slot q + Offset(d) (the alignment).
struct DiagLayout {
  int64_t lo = 0, hi = 0, rows = 0, cols = 0, max_len = 0;
  bool left_super = true, left_sub = true;  // LEFT_LEFT: V1 and V2
  int64_t Len(int64_t d) const {
    return std::min(rows + std::min<int64_t>(0, d), cols - std::max<int64_t>(0, d));
  }
  int64_t Offset(int64_t d) const {
    const bool right = (d >= 0 && !left_super) || (d <= 0 && !left_sub);
    return right ? max_len - Len(d) : 0;
  }
  int64_t num_diags() const { return hi - lo + 1; }
};

absl::Status ReadAlign(const KernelContext& ctx, DiagLayout* l) {
  if (ctx.node().op() != "MatrixDiagV3" && ctx.node().op() != "MatrixDiagPartV3" &&
      ctx.node().op() != "MatrixSetDiagV3") {
    return absl::OkStatus();
  }
  TFJIT_ASSIGN_OR_RETURN(std::string align, tf::GetStringAttrOr(ctx.node(), "align", "RIGHT_LEFT"));
  if (align == "LEFT_LEFT" || align == "LEFT_RIGHT" || align == "RIGHT_LEFT" ||
      align == "RIGHT_RIGHT") {
    l->left_super = align.substr(0, 4) == "LEFT";
    l->left_sub = align.substr(align.size() - 4) == "LEFT";
    return absl::OkStatus();
  }
  return KernelError(ctx,
                     "Attr align has value '%s' not in list of allowed values: "
                     "\"LEFT_RIGHT\", \"RIGHT_LEFT\", \"LEFT_LEFT\", \"RIGHT_RIGHT\"",
                     align);
}

absl::Status ReadK(const KernelContext& ctx, const Tensor& k, DiagLayout* l) {
  std::vector<int64_t> v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, k, "k", &v));
  if (v.empty() || v.size() > 2) {
    return KernelError(ctx,
                       "diag_index must have only one or two elements, received %d "
                       "elements.",
                       static_cast<int64_t>(v.size()));
  }
  l->lo = v[0];
  l->hi = v.size() == 2 ? v[1] : v[0];
  if (l->lo > l->hi) {
    return KernelError(ctx, "lower_diag_index must not be larger than upper_diag_index: %d > %d",
                       l->lo, l->hi);
  }
  return absl::OkStatus();
}

absl::Status CheckPadding(const KernelContext& ctx, const Tensor& pad) {
  if (pad.rank() != 0) {
    return KernelError(ctx, "padding_value must be a scalar, received shape: %s",
                       pad.ShapeString());
  }
  return absl::OkStatus();
}

// Diagonal indices must name a diagonal of the matrix (or be 0).
absl::Status CheckDiagBounds(const KernelContext& ctx, const DiagLayout& l) {
  for (int64_t d : {l.lo, l.hi}) {
    if (!((-l.rows < d && d < l.cols) || d == 0)) {
      return KernelError(ctx, "%s_diag_index is out of bound: %d. It must be between %d and %d",
                         d == l.lo ? "lower" : "upper", d, -l.rows, l.cols);
    }
  }
  return absl::OkStatus();
}

// MatrixDiag (V1: k = 0, square), V2 and V3.
absl::Status MatrixDiagKernel(KernelContext& ctx) {
  const bool v1 = ctx.node().op() == "MatrixDiag";
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, v1 ? 1 : 5));
  const Tensor& diag = ctx.input(0);
  DiagLayout l;
  int64_t rows = -1, cols = -1;
  if (!v1) {
    TFJIT_RETURN_IF_ERROR(ReadK(ctx, ctx.input(1), &l));
    TFJIT_RETURN_IF_ERROR(ScalarIndex(ctx, ctx.input(2), "num_rows", &rows));
    TFJIT_RETURN_IF_ERROR(ScalarIndex(ctx, ctx.input(3), "num_cols", &cols));
    TFJIT_RETURN_IF_ERROR(CheckPadding(ctx, ctx.input(4)));
    if (ctx.input(4).dtype() != diag.dtype()) {
      return KernelError(ctx, "padding_value must have the diagonal's dtype");
    }
    TFJIT_RETURN_IF_ERROR(ReadAlign(ctx, &l));
  }
  const int min_rank = l.lo == l.hi ? 1 : 2;
  if (diag.rank() < min_rank) {
    return KernelError(ctx, "diagonal must be at least %d-dim, received shape: %s", min_rank,
                       diag.ShapeString());
  }
  if (l.lo != l.hi && diag.dim(diag.rank() - 2) != l.num_diags()) {
    return KernelError(ctx,
                       "The number of diagonals provided in the input does not match the "
                       "lower_diag_index and upper_diag_index range.");
  }
  l.max_len = diag.dim(diag.rank() - 1);
  const int64_t min_rows = l.max_len - std::min<int64_t>(l.hi, 0);
  const int64_t min_cols = l.max_len + std::max<int64_t>(l.lo, 0);
  if (rows == -1 && cols == -1) {
    rows = cols = std::max(min_rows, min_cols);
  } else if (rows == -1) {
    rows = min_rows;
  } else if (cols == -1) {
    cols = min_cols;
  }
  if (rows < min_rows) return KernelError(ctx, "The number of rows is too small.");
  if (cols < min_cols) return KernelError(ctx, "The number of columns is too small.");
  if (rows != min_rows && cols != min_cols) {
    return KernelError(ctx,
                       "The number of rows or columns is not consistent with the specified "
                       "d_lower, d_upper, and diagonal.");
  }
  l.rows = rows;
  l.cols = cols;
  Dims out_dims(diag.dims().begin(), diag.dims().end() - min_rank);
  out_dims.push_back(rows);
  out_dims.push_back(cols);
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, diag.dtype(), out_dims));
  Tensor out(diag.dtype(), out_dims);
  const int64_t batch = Prod(out_dims, 0, out_dims.size() - 2);
  const bool ok = DispatchByWidth(diag.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T pad = v1 ? T{} : ctx.input(4).data<T>()[0];
    const T* p = diag.data<T>();
    T* q = out.data<T>();
    const int64_t per_batch = l.num_diags() * l.max_len;
    ParallelFor(ctx, batch * rows, cols, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = r / rows, i = r % rows;
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t d = j - i;
          T v = pad;
          if (d >= l.lo && d <= l.hi) {
            v = p[b * per_batch + (l.hi - d) * l.max_len + std::min(i, j) + l.Offset(d)];
          }
          q[r * cols + j] = v;
        }
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, diag.dtype(), TypeSetName(TypeSet::kAll));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// MatrixDiagPart (V1: k = 0, padding 0), V2 and V3.
absl::Status MatrixDiagPartKernel(KernelContext& ctx) {
  const bool v1 = ctx.node().op() == "MatrixDiagPart";
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, v1 ? 1 : 3));
  const Tensor& in = ctx.input(0);
  if (in.rank() < 2) {
    return KernelError(ctx, "input must be at least 2-dim, received shape: %s", in.ShapeString());
  }
  DiagLayout l;
  l.rows = in.dim(in.rank() - 2);
  l.cols = in.dim(in.rank() - 1);
  if (!v1) {
    TFJIT_RETURN_IF_ERROR(ReadK(ctx, ctx.input(1), &l));
    TFJIT_RETURN_IF_ERROR(CheckPadding(ctx, ctx.input(2)));
    if (ctx.input(2).dtype() != in.dtype()) {
      return KernelError(ctx, "padding_value must have the input's dtype");
    }
    TFJIT_RETURN_IF_ERROR(ReadAlign(ctx, &l));
    TFJIT_RETURN_IF_ERROR(CheckDiagBounds(ctx, l));
  }
  l.max_len = std::max<int64_t>(
      0, std::min(l.rows + std::min<int64_t>(l.hi, 0), l.cols - std::max<int64_t>(l.lo, 0)));
  Dims out_dims(in.dims().begin(), in.dims().end() - 2);
  if (l.lo != l.hi) out_dims.push_back(l.num_diags());
  out_dims.push_back(l.max_len);
  Tensor out(in.dtype(), out_dims);
  const int64_t batch = Prod(in.dims(), 0, in.dims().size() - 2);
  const bool ok = DispatchByWidth(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T pad = v1 ? T{} : ctx.input(2).data<T>()[0];
    const T* p = in.data<T>();
    T* q = out.data<T>();
    const int64_t nd = l.num_diags();
    ParallelFor(ctx, batch * nd, l.max_len, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = r / nd, d = l.hi - r % nd;
        const int64_t len = l.Len(d), off = l.Offset(d);
        for (int64_t s = 0; s < l.max_len; ++s) {
          const int64_t t = s - off;
          T v = pad;
          if (t >= 0 && t < len) {
            v = p[(b * l.rows + t + std::max<int64_t>(0, -d)) * l.cols + t +
                  std::max<int64_t>(0, d)];
          }
          q[r * l.max_len + s] = v;
        }
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kAll));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// MatrixSetDiag (V1: k = 0), V2 and V3.
absl::Status MatrixSetDiagKernel(KernelContext& ctx) {
  const bool v1 = ctx.node().op() == "MatrixSetDiag";
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, v1 ? 2 : 3));
  const Tensor& in = ctx.input(0);
  const Tensor& diag = ctx.input(1);
  if (in.rank() < 2) {
    return KernelError(ctx, "input must be at least 2-dim, received shape: %s", in.ShapeString());
  }
  DiagLayout l;
  l.rows = in.dim(in.rank() - 2);
  l.cols = in.dim(in.rank() - 1);
  if (!v1) {
    TFJIT_RETURN_IF_ERROR(ReadK(ctx, ctx.input(2), &l));
    TFJIT_RETURN_IF_ERROR(ReadAlign(ctx, &l));
    TFJIT_RETURN_IF_ERROR(CheckDiagBounds(ctx, l));
  }
  l.max_len = std::max<int64_t>(
      0, std::min(l.rows + std::min<int64_t>(l.hi, 0), l.cols - std::max<int64_t>(l.lo, 0)));
  Dims want(in.dims().begin(), in.dims().end() - 2);
  if (l.lo != l.hi) want.push_back(l.num_diags());
  want.push_back(l.max_len);
  if (diag.dims() != want || diag.dtype() != in.dtype()) {
    return KernelError(ctx, "diagonal must have shape %s for input %s and k = [%d, %d], got %s",
                       DimsString(want), in.ShapeString(), l.lo, l.hi, diag.ShapeString());
  }
  Tensor out = in.Clone();
  const int64_t batch = Prod(in.dims(), 0, in.dims().size() - 2);
  const bool ok = DispatchByWidth(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = diag.data<T>();
    T* q = out.data<T>();
    const int64_t nd = l.num_diags();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t d = l.lo; d <= l.hi; ++d) {
        const int64_t len = l.Len(d), off = l.Offset(d);
        for (int64_t t = 0; t < len; ++t) {
          q[(b * l.rows + t + std::max<int64_t>(0, -d)) * l.cols + t + std::max<int64_t>(0, d)] =
              p[(b * nd + l.hi - d) * l.max_len + t + off];
        }
      }
    }
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kAll));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Diag, DiagPart ----

bool IsDiagType(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 ||
         t == DType::kFloat64 || t == DType::kInt32 || t == DType::kInt64 || IsComplexDType(t);
}
constexpr char kDiagTypes[] =
    "bfloat16, float16, float32, float64, int32, int64, complex64, complex128";

absl::Status DiagKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  if (!IsDiagType(in.dtype())) return UnsupportedDType(ctx, in.dtype(), kDiagTypes);
  if (in.rank() == 0) return KernelError(ctx, "Input must be at least rank 1, got 0");
  Dims out_dims = in.dims();
  out_dims.insert(out_dims.end(), in.dims().begin(), in.dims().end());
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, in.dtype(), out_dims));
  Tensor out(in.dtype(), out_dims);
  const int64_t n = in.num_elements();
  DispatchByWidth(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) out.data<T>()[i * n + i] = in.data<T>()[i];
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status DiagPartKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  if (!IsDiagType(in.dtype())) return UnsupportedDType(ctx, in.dtype(), kDiagTypes);
  if (in.rank() == 0 || in.rank() % 2 != 0) {
    return KernelError(ctx, "The rank of the tensor should be even and positive, got shape %s",
                       in.ShapeString());
  }
  const int half = in.rank() / 2;
  for (int i = 0; i < half; ++i) {
    if (in.dim(i) != in.dim(i + half)) {
      return KernelError(ctx, "Invalid shape %s: dimensions %d and %d do not match.",
                         in.ShapeString(), i, i + half);
    }
  }
  Tensor out(in.dtype(), Dims(in.dims().begin(), in.dims().begin() + half));
  const int64_t n = out.num_elements();
  DispatchByWidth(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) out.data<T>()[i] = in.data<T>()[i * n + i];
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Cross ----

absl::Status CrossKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dims() != b.dims()) {
    return KernelError(ctx, "Both inputs must be of same shape: %s vs. %s", a.ShapeString(),
                       b.ShapeString());
  }
  if (a.rank() < 1) return KernelError(ctx, "Input must be at least 1D%s", a.ShapeString());
  if (a.dim(a.rank() - 1) != 3) {
    return KernelError(ctx, "Cross-products are only defined for 3-element vectors.");
  }
  Tensor out(a.dtype(), a.dims());
  const bool ok = DispatchReal(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    T* z = out.data<T>();
    for (int64_t v = 0; v < a.num_elements() / 3; ++v) {
      const C a0 = C(x[3 * v]), a1 = C(x[3 * v + 1]), a2 = C(x[3 * v + 2]);
      const C b0 = C(y[3 * v]), b1 = C(y[3 * v + 1]), b2 = C(y[3 * v + 2]);
      z[3 * v] = static_cast<T>(Wrapping(a1 * b2, a2 * b1, [](auto p, auto q) { return p - q; }));
      z[3 * v + 1] =
          static_cast<T>(Wrapping(a2 * b0, a0 * b2, [](auto p, auto q) { return p - q; }));
      z[3 * v + 2] =
          static_cast<T>(Wrapping(a0 * b1, a1 * b0, [](auto p, auto q) { return p - q; }));
    }
  });
  if (!ok) return UnsupportedDType(ctx, a.dtype(), TypeSetName(TypeSet::kReal));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- SparseMatMul: a dense float product; the sparsity attrs are hints. ----

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

absl::StatusOr<RowMajorF> ToFloatMatrix(const KernelContext& ctx, const Tensor& t,
                                        const char* what) {
  if (t.rank() != 2) return KernelError(ctx, "%s is not a matrix: %s", what, t.ShapeString());
  RowMajorF m(t.dim(0), t.dim(1));
  if (t.dtype() == DType::kFloat32) {
    std::memcpy(m.data(), t.raw_data(), t.byte_size());
  } else if (t.dtype() == DType::kBFloat16) {
    for (int64_t i = 0; i < t.num_elements(); ++i) m.data()[i] = float(t.data<bfloat16>()[i]);
  } else {
    return UnsupportedDType(ctx, t.dtype(), "float32, bfloat16");
  }
  return m;
}

absl::Status SparseMatMulKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(ctx.node(), "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(ctx.node(), "transpose_b", false));
  TFJIT_ASSIGN_OR_RETURN(RowMajorF a, ToFloatMatrix(ctx, ctx.input(0), "a"));
  TFJIT_ASSIGN_OR_RETURN(RowMajorF b, ToFloatMatrix(ctx, ctx.input(1), "b"));
  if (ta) a.transposeInPlace();
  if (tb) b.transposeInPlace();
  if (a.cols() != b.rows()) {
    return KernelError(ctx, "Matrix size incompatible: a: %s, b: %s", ctx.input(0).ShapeString(),
                       ctx.input(1).ShapeString());
  }
  Tensor out(DType::kFloat32, {a.rows(), b.cols()});
  Eigen::Map<RowMajorF>(out.data<float>(), a.rows(), b.cols()).noalias() = a * b;
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- TridiagonalMatMul ----

absl::Status TridiagonalMatMulKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  const Tensor& rhs = ctx.input(3);
  if (rhs.rank() < 2) {
    return KernelError(ctx, "Input must have rank >= 2, but got %s", rhs.ShapeString());
  }
  const int64_t m = rhs.dim(rhs.rank() - 2), n = rhs.dim(rhs.rank() - 1);
  Dims want(rhs.dims().begin(), rhs.dims().end() - 2);
  want.push_back(1);
  want.push_back(m);
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).dims() != want || ctx.input(i).dtype() != rhs.dtype()) {
      return KernelError(ctx, "Expected %s to have shape %s (one row per batch matrix), got %s",
                         i == 0   ? "superdiag"
                         : i == 1 ? "maindiag"
                                  : "subdiag",
                         DimsString(want), ctx.input(i).ShapeString());
    }
  }
  Tensor out(rhs.dtype(), rhs.dims());
  const int64_t batch = m == 0 ? 0 : rhs.num_elements() / std::max<int64_t>(1, m * n);
  const auto product = [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* sup = ctx.input(0).data<T>();
    const T* mid = ctx.input(1).data<T>();
    const T* sub = ctx.input(2).data<T>();
    const T* x = rhs.data<T>();
    T* y = out.data<T>();
    for (int64_t b = 0; b < (n == 0 ? 0 : batch); ++b) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const int64_t at = (b * m + i) * n + j;
          C v = C(mid[b * m + i]) * C(x[at]);
          if (i > 0) v += C(sub[b * m + i]) * C(x[at - n]);
          if (i + 1 < m) v += C(sup[b * m + i]) * C(x[at + n]);
          y[at] = static_cast<T>(v);
        }
      }
    }
  };
  const bool ok = DispatchFloat(rhs.dtype(), product) || DispatchComplex(rhs.dtype(), product);
  if (!ok) {
    return UnsupportedDType(ctx, rhs.dtype(),
                            "float16, bfloat16, float32, float64, complex64, "
                            "complex128");
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Decompositions and solvers (core/linalg.h) ----

// f16/bf16 are computed in float32 (as compiled code does); f32/f64 as is.
Tensor ToCompute(const Tensor& t) {
  if (t.dtype() != DType::kFloat16 && t.dtype() != DType::kBFloat16) return t;
  Tensor f(DType::kFloat32, t.dims());
  DispatchFloat(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < t.num_elements(); ++i) f.data<float>()[i] = float(t.data<T>()[i]);
  });
  return f;
}
Tensor FromCompute(const Tensor& t, DType to) {
  if (t.dtype() == to || t.dtype() != DType::kFloat32) return t;
  Tensor r(to, t.dims());
  DispatchFloat(to, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < t.num_elements(); ++i)
      r.data<T>()[i] = static_cast<T>(t.data<float>()[i]);
  });
  return r;
}

absl::Status CheckMatrixInput(const KernelContext& ctx, const Tensor& t, int index, bool square) {
  if (t.dtype() != DType::kFloat16 && t.dtype() != DType::kFloat32 &&
      t.dtype() != DType::kFloat64 && t.dtype() != DType::kBFloat16 && !IsComplexDType(t.dtype())) {
    return UnsupportedDType(ctx, t.dtype(), "float16, float32, float64, complex64, complex128");
  }
  if (t.rank() < 2) {
    return KernelError(ctx, "Input tensor %d must have rank >= 2, got shape %s", index,
                       t.ShapeString());
  }
  if (square && t.dim(t.rank() - 1) != t.dim(t.rank() - 2)) {
    return KernelError(ctx, "Input matrix must be square. Got shape %s", t.ShapeString());
  }
  return absl::OkStatus();
}

// Runs `call` over the batch of `ins` (compute dtype) into `outs` (allocated by the caller in
// the compute dtype); false when a matrix failed (core/linalg.h Run).
absl::StatusOr<bool> RunLinalg(const KernelContext& ctx, const linalg::Call& call,
                               const std::vector<Tensor>& ins, std::vector<Tensor>& outs) {
  const DType dtype = ins[0].dtype();
  std::vector<Dims> in_dims;
  std::vector<const void*> in_ptrs;
  for (const Tensor& t : ins) in_dims.push_back(t.dims()), in_ptrs.push_back(t.raw_data());
  std::vector<std::pair<DType, Dims>> out_shapes;
  std::vector<void*> out_ptrs;
  for (Tensor& t : outs)
    out_shapes.push_back({t.dtype(), t.dims()}), out_ptrs.push_back(t.raw_data());
  const std::optional<linalg::Problem> p = linalg::MatchShapes(call, dtype, in_dims, out_shapes);
  if (!p.has_value()) {
    return absl::InternalError(absl::StrFormat("node %s: linalg shapes do not match %s",
                                               ctx.node().name(), linalg::TargetOf(call)));
  }
  std::atomic<bool> ok{true};
  ParallelFor(ctx, p->batch, linalg::CostPerMatrix(call, *p), [&](int64_t begin, int64_t end) {
    if (!linalg::Run(call, dtype, *p, in_ptrs.data(), out_ptrs.data(), begin, end)) ok = false;
  });
  return ok.load();
}

Dims Batch(const Tensor& t) { return Dims(t.dims().begin(), t.dims().end() - 2); }
Dims Append(Dims d, std::initializer_list<int64_t> tail) {
  d.insert(d.end(), tail.begin(), tail.end());
  return d;
}

// Single-input ops whose outputs are in the input's dtype except Lu's p.
absl::Status CholeskyKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_RETURN_IF_ERROR(CheckMatrixInput(ctx, ctx.input(0), 0, true));
  const Tensor a = ToCompute(ctx.input(0));
  std::vector<Tensor> outs = {Tensor(a.dtype(), a.dims())};
  TFJIT_ASSIGN_OR_RETURN(bool ok, RunLinalg(ctx, {linalg::Kind::kCholesky, 0}, {a}, outs));
  if (!ok) {
    return KernelError(ctx,
                       "Cholesky decomposition was not successful. The input might not be "
                       "valid.");
  }
  ctx.set_output(0, FromCompute(outs[0], ctx.input(0).dtype()));
  return absl::OkStatus();
}

absl::Status MatrixInverseKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_RETURN_IF_ERROR(CheckMatrixInput(ctx, ctx.input(0), 0, true));
  TFJIT_ASSIGN_OR_RETURN(bool adjoint, tf::GetBoolAttrOr(ctx.node(), "adjoint", false));
  const Tensor a = ToCompute(ctx.input(0));
  std::vector<Tensor> outs = {Tensor(a.dtype(), a.dims())};
  TFJIT_ASSIGN_OR_RETURN(
      bool ok, RunLinalg(ctx, {linalg::Kind::kInverse, adjoint ? linalg::kAdjoint : 0}, {a}, outs));
  if (!ok) return KernelError(ctx, "Input is not invertible.");
  ctx.set_output(0, FromCompute(outs[0], ctx.input(0).dtype()));
  return absl::OkStatus();
}

absl::Status DeterminantKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_RETURN_IF_ERROR(CheckMatrixInput(ctx, ctx.input(0), 0, true));
  const Tensor a = ToCompute(ctx.input(0));
  const bool log = ctx.node().op() == "LogMatrixDeterminant";
  std::vector<Tensor> outs = {Tensor(a.dtype(), Batch(a))};
  if (log) outs.push_back(Tensor(a.dtype(), Batch(a)));
  TFJIT_RETURN_IF_ERROR(
      RunLinalg(ctx, {log ? linalg::Kind::kLogDeterminant : linalg::Kind::kDeterminant, 0}, {a},
                outs)
          .status());
  for (size_t i = 0; i < outs.size(); ++i) {
    ctx.set_output(static_cast<int>(i), FromCompute(outs[i], ctx.input(0).dtype()));
  }
  return absl::OkStatus();
}

absl::Status LuKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_RETURN_IF_ERROR(CheckMatrixInput(ctx, ctx.input(0), 0, true));
  TFJIT_ASSIGN_OR_RETURN(DType idx, tf::GetTypeAttr(ctx.node(), "output_idx_type"));
  if (idx != DType::kInt32 && idx != DType::kInt64) {
    return KernelError(ctx, "output_idx_type must be int32 or int64, got %s", DTypeName(idx));
  }
  const Tensor a = ToCompute(ctx.input(0));
  const int64_t n = a.dim(a.rank() - 1);
  std::vector<Tensor> outs = {Tensor(a.dtype(), a.dims()),
                              Tensor(DType::kInt32, Append(Batch(a), {n}))};
  TFJIT_ASSIGN_OR_RETURN(bool ok, RunLinalg(ctx, {linalg::Kind::kLu, 0}, {a}, outs));
  if (!ok) return KernelError(ctx, "Input is not invertible.");
  ctx.set_output(0, FromCompute(outs[0], ctx.input(0).dtype()));
  if (idx == DType::kInt64) {
    Tensor wide(DType::kInt64, outs[1].dims());
    for (int64_t i = 0; i < wide.num_elements(); ++i) {
      wide.data<int64_t>()[i] = outs[1].data<int32_t>()[i];
    }
    outs[1] = std::move(wide);
  }
  ctx.set_output(1, std::move(outs[1]));
  return absl::OkStatus();
}

absl::Status QrKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_RETURN_IF_ERROR(CheckMatrixInput(ctx, ctx.input(0), 0, false));
  TFJIT_ASSIGN_OR_RETURN(bool full, tf::GetBoolAttrOr(ctx.node(), "full_matrices", false));
  const Tensor a = ToCompute(ctx.input(0));
  const int64_t m = a.dim(a.rank() - 2), n = a.dim(a.rank() - 1), p = std::min(m, n);
  std::vector<Tensor> outs = {Tensor(a.dtype(), Append(Batch(a), {m, full ? m : p})),
                              Tensor(a.dtype(), Append(Batch(a), {full ? m : p, n}))};
  TFJIT_RETURN_IF_ERROR(
      RunLinalg(ctx, {linalg::Kind::kQr, full ? linalg::kFullMatrices : 0}, {a}, outs).status());
  for (int i = 0; i < 2; ++i) ctx.set_output(i, FromCompute(outs[i], ctx.input(0).dtype()));
  return absl::OkStatus();
}

absl::Status SelfAdjointEigV2Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_RETURN_IF_ERROR(CheckMatrixInput(ctx, ctx.input(0), 0, true));
  TFJIT_ASSIGN_OR_RETURN(bool compute_v, tf::GetBoolAttrOr(ctx.node(), "compute_v", true));
  const Tensor a = ToCompute(ctx.input(0));
  const int64_t n = a.dim(a.rank() - 1);
  std::vector<Tensor> outs = {Tensor(a.dtype(), Append(Batch(a), {n})),
                              Tensor(a.dtype(), a.dims())};
  TFJIT_ASSIGN_OR_RETURN(bool ok, RunLinalg(ctx, {linalg::Kind::kEig, 0}, {a}, outs));
  if (!ok) {
    return KernelError(ctx,
                       "Self-adjoint eigen decomposition was not successful. The input "
                       "might not be valid.");
  }
  ctx.set_output(0, FromCompute(outs[0], ctx.input(0).dtype()));
  ctx.set_output(1, compute_v ? FromCompute(outs[1], ctx.input(0).dtype())
                              : Tensor(ctx.input(0).dtype(), {0}));
  return absl::OkStatus();
}

absl::Status SvdKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_RETURN_IF_ERROR(CheckMatrixInput(ctx, ctx.input(0), 0, false));
  TFJIT_ASSIGN_OR_RETURN(bool compute_uv, tf::GetBoolAttrOr(ctx.node(), "compute_uv", true));
  TFJIT_ASSIGN_OR_RETURN(bool full, tf::GetBoolAttrOr(ctx.node(), "full_matrices", false));
  const Tensor a = ToCompute(ctx.input(0));
  const int64_t m = a.dim(a.rank() - 2), n = a.dim(a.rank() - 1), p = std::min(m, n);
  std::vector<Tensor> outs = {Tensor(a.dtype(), Append(Batch(a), {p})),
                              Tensor(a.dtype(), Append(Batch(a), {m, full ? m : p})),
                              Tensor(a.dtype(), Append(Batch(a), {n, full ? n : p}))};
  TFJIT_RETURN_IF_ERROR(
      RunLinalg(ctx, {linalg::Kind::kSvd, full ? linalg::kFullMatrices : 0}, {a}, outs).status());
  for (int i = 0; i < 3; ++i) {
    ctx.set_output(i, i == 0 || compute_uv ? FromCompute(outs[i], ctx.input(0).dtype())
                                           : Tensor(ctx.input(0).dtype(), {0}));
  }
  return absl::OkStatus();
}

// Broadcasts the batch dims of `t` ([..., r, c]) to `batch`.
Tensor BroadcastBatch(const Tensor& t, const Dims& batch) {
  const int64_t r = t.dim(t.rank() - 2), c = t.dim(t.rank() - 1);
  const Dims tb = Batch(t);
  if (tb == batch) return t;
  Tensor out(t.dtype(), Append(batch, {r, c}));
  const int64_t mat = r * c * static_cast<int64_t>(DTypeSize(t.dtype()));
  const int64_t count = Prod(batch, 0, batch.size());
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, src = 0, scale = 1;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      const size_t off = batch.size() - tb.size();
      if (d >= off) {
        const int64_t dim = tb[d - off];
        src += (dim == 1 ? 0 : idx) * scale;
        scale *= dim;
      }
    }
    std::memcpy(static_cast<char*>(out.raw_data()) + i * mat,
                static_cast<const char*>(t.raw_data()) + src * mat, static_cast<size_t>(mat));
  }
  return out;
}

// MatrixTriangularSolve (batch dims broadcast), MatrixSolve (equal batch dims) and
// TridiagonalSolve (diagonals [..., 3, M]).
absl::Status SolveKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const std::string& op = ctx.node().op();
  const bool tri = op == "MatrixTriangularSolve", tridiag = op == "TridiagonalSolve";
  const Tensor& a0 = ctx.input(0);
  const Tensor& b0 = ctx.input(1);
  TFJIT_RETURN_IF_ERROR(CheckMatrixInput(ctx, a0, 0, !tridiag));
  TFJIT_RETURN_IF_ERROR(CheckMatrixInput(ctx, b0, 1, false));
  if (a0.dtype() != b0.dtype()) return KernelError(ctx, "matrix and rhs dtypes differ");
  if (tridiag && a0.dtype() != DType::kFloat32 && a0.dtype() != DType::kFloat64 &&
      !IsComplexDType(a0.dtype())) {
    return UnsupportedDType(ctx, a0.dtype(), "float32, float64, complex64, complex128");
  }
  const int64_t n = a0.dim(a0.rank() - 1);
  if (tridiag && a0.dim(a0.rank() - 2) != 3) {
    return KernelError(ctx, "Expected diagonals to have shape [..., 3, num_rows], got %s",
                       a0.ShapeString());
  }
  if (b0.dim(b0.rank() - 2) != n) {
    return KernelError(ctx,
                       "Input matrix and right-hand side must have the same number of rows, "
                       "got %s and %s",
                       a0.ShapeString(), b0.ShapeString());
  }
  Tensor a = a0, b = b0;
  if (tri) {
    std::optional<BroadcastPlan> plan = MakeBroadcastPlan({Batch(a0), Batch(b0)});
    if (!plan.has_value()) {
      return KernelError(ctx, "Incompatible batch shapes: %s vs. %s", a0.ShapeString(),
                         b0.ShapeString());
    }
    Dims batch = Batch(a0).size() == 0 && Batch(b0).size() == 0 ? Dims{} : plan->out_dims;
    a = BroadcastBatch(a0, batch);
    b = BroadcastBatch(b0, batch);
  } else if (Batch(a0) != Batch(b0)) {
    return KernelError(ctx, "All input tensors must have the same outer dimensions, got %s and %s",
                       a0.ShapeString(), b0.ShapeString());
  }
  a = ToCompute(a);
  b = ToCompute(b);
  linalg::Call call;
  if (tri) {
    TFJIT_ASSIGN_OR_RETURN(bool lower, tf::GetBoolAttrOr(ctx.node(), "lower", true));
    TFJIT_ASSIGN_OR_RETURN(bool adjoint, tf::GetBoolAttrOr(ctx.node(), "adjoint", false));
    call = {linalg::Kind::kTriangularSolve,
            (lower ? linalg::kLower : 0) | (adjoint ? linalg::kAdjoint : 0)};
  } else if (tridiag) {
    TFJIT_ASSIGN_OR_RETURN(bool pivot, tf::GetBoolAttrOr(ctx.node(), "partial_pivoting", true));
    TFJIT_ASSIGN_OR_RETURN(bool perturb, tf::GetBoolAttrOr(ctx.node(), "perturb_singular", false));
    if (perturb) return KernelError(ctx, "perturb_singular is not supported");
    call = {linalg::Kind::kTridiagonalSolve, pivot ? linalg::kPartialPivoting : 0};
  } else {
    TFJIT_ASSIGN_OR_RETURN(bool adjoint, tf::GetBoolAttrOr(ctx.node(), "adjoint", false));
    call = {linalg::Kind::kSolve, adjoint ? linalg::kAdjoint : 0};
  }
  std::vector<Tensor> outs = {Tensor(b.dtype(), b.dims())};
  TFJIT_ASSIGN_OR_RETURN(bool ok, RunLinalg(ctx, call, {a, b}, outs));
  if (!ok) {
    if (tridiag) {
      return KernelError(ctx, call.flags != 0
                                  ? "The matrix is not invertible."
                                  : "The matrix is either not invertible, or requires pivoting. "
                                    "Try setting partial_pivoting = True.");
    }
    return KernelError(ctx, "Input matrix is not invertible.");
  }
  ctx.set_output(0, FromCompute(outs[0], b0.dtype()));
  return absl::OkStatus();
}

}  // namespace

void RegisterLinalgKernels(KernelRegistry& registry) {
  registry.Register("MatrixBandPart", &MatrixBandPartKernel);
  for (const char* op : {"MatrixDiag", "MatrixDiagV2", "MatrixDiagV3"}) {
    registry.Register(op, &MatrixDiagKernel);
  }
  for (const char* op : {"MatrixDiagPart", "MatrixDiagPartV2", "MatrixDiagPartV3"}) {
    registry.Register(op, &MatrixDiagPartKernel);
  }
  for (const char* op : {"MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3"}) {
    registry.Register(op, &MatrixSetDiagKernel);
  }
  registry.Register("Diag", &DiagKernel);
  registry.Register("DiagPart", &DiagPartKernel);
  registry.Register("Cross", &CrossKernel);
  registry.Register("SparseMatMul", &SparseMatMulKernel);
  registry.Register("TridiagonalMatMul", &TridiagonalMatMulKernel);
  registry.Register("Cholesky", &CholeskyKernel);
  registry.Register("MatrixInverse", &MatrixInverseKernel);
  registry.Register("MatrixDeterminant", &DeterminantKernel);
  registry.Register("LogMatrixDeterminant", &DeterminantKernel);
  registry.Register("Lu", &LuKernel);
  registry.Register("Qr", &QrKernel);
  registry.Register("SelfAdjointEigV2", &SelfAdjointEigV2Kernel);
  registry.Register("Svd", &SvdKernel);
  registry.Register("MatrixTriangularSolve", &SolveKernel);
  registry.Register("MatrixSolve", &SolveKernel);
  registry.Register("TridiagonalSolve", &SolveKernel);
}

}  // namespace tfjit::runtime
