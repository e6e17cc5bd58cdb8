// Lowerings of the linalg ops to HLO (docs/DESIGN.md, "Op families"), with the semantics of
// TF's XLA kernels (tf2xla); the products (MatMul, BatchMatMul*, Einsum, SparseMatMul) are
// linalg_matmul_lowerings.cc. The structural ops are plain HLO (iota
// masks, select, pad, reduce); the decompositions and solvers are the custom-calls
// tfjit.linalg.<op>.<flags> of core/linalg.h, the routine the fallback kernels run, computed in
// float32 for 16-bit floats.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/linalg.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using hlo::Opcode;
using Dims = std::vector<int64_t>;

Dims Leading(const Dims& d, size_t drop) {
  return Dims(d.begin(), d.end() - static_cast<std::ptrdiff_t>(drop));
}
Dims Append(Dims d, std::initializer_list<int64_t> tail) {
  d.insert(d.end(), tail.begin(), tail.end());
  return d;
}
Dims Range(int64_t n) {
  Dims r;
  for (int64_t i = 0; i < n; ++i) r.push_back(i);
  return r;
}

// j - i over a [..., rows, cols] shape (s32), for masks of diagonals.
absl::StatusOr<Instruction*> DiagIndex(LoweringContext& ctx, const Dims& dims) {
  const hlo::Shape s(DType::kInt32, dims);
  const int64_t rank = static_cast<int64_t>(dims.size());
  TFJIT_ASSIGN_OR_RETURN(Instruction * i, ctx.b().Iota(s, rank - 2));
  TFJIT_ASSIGN_OR_RETURN(Instruction * j, ctx.b().Iota(s, rank - 1));
  return ctx.b().Binary(Opcode::kSubtract, j, i);
}
absl::StatusOr<Instruction*> IsDiag(LoweringContext& ctx, Instruction* index, int64_t d) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * c,
                         ctx.Splat(DType::kInt32, static_cast<double>(d), index->shape().dims()));
  return ctx.b().Compare(ComparisonDirection::kEq, index, c);
}

absl::StatusOr<Instruction*> SliceLast(LoweringContext& ctx, Instruction* x, int64_t start,
                                       int64_t limit) {
  std::vector<hlo::SliceDim> sl;
  for (int64_t d : x->shape().dims()) sl.push_back({0, d, 1});
  sl.back() = {start, limit, 1};
  return ctx.b().Slice(x, sl);
}
absl::StatusOr<Instruction*> PadLast(LoweringContext& ctx, Instruction* x, Instruction* value,
                                     int64_t lo, int64_t hi) {
  hlo::Attributes attrs;
  attrs.padding.assign(x->shape().rank(), {0, 0, 0});
  attrs.padding.back() = {lo, hi, 0};
  return ctx.b().Add(Opcode::kPad, {x, value}, attrs);
}

// ---- MatrixBandPart ----

absl::Status LowerMatrixBandPart(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const Dims& dims = x->shape().dims();
  if (dims.size() < 2) {
    return InvalidArgument("node %s: input must be at least 2-dim, received shape: %s",
                           node.DebugName(), x->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * index, DiagIndex(ctx, dims));  // j - i
  Instruction* keep = nullptr;
  for (int k = 1; k <= 2; ++k) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * bound, ctx.Input(node, k));
    if (bound->shape().rank() != 0) {
      return InvalidArgument("node %s: %s must be scalar, got shape %s", node.DebugName(),
                             k == 1 ? "num_lower" : "num_upper", bound->shape().ToString());
    }
    TFJIT_ASSIGN_OR_RETURN(bound, ctx.b().Convert(bound, DType::kInt32));
    TFJIT_ASSIGN_OR_RETURN(bound, ctx.b().Broadcast(bound, dims, {}));
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(DType::kInt32, 0, dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * unbounded,
                           ctx.b().Compare(ComparisonDirection::kLt, bound, zero));
    Instruction* dist = index;  // j - i for num_upper, i - j for num_lower
    if (k == 1) {
      TFJIT_ASSIGN_OR_RETURN(dist, ctx.b().Unary(Opcode::kNegate, index));
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * inside,
                           ctx.b().Compare(ComparisonDirection::kLe, dist, bound));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ok, ctx.b().Binary(Opcode::kOr, unbounded, inside));
    if (keep == nullptr) {
      keep = ok;
    } else {
      TFJIT_ASSIGN_OR_RETURN(keep, ctx.b().Binary(Opcode::kAnd, keep, ok));
    }
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(x->shape().element_type(), 0, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(keep, x, zeros));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- The matrix diag family ----

// Diagonals lo..hi of [rows, cols] matrices, each in max_len slots: diagonal d sits at index
// hi - d, its q-th element at slot q + Offset(d) (the alignment; V1 and V2 align LEFT_LEFT).
struct DiagLayout {
  int64_t lo = 0, hi = 0, rows = 0, cols = 0, max_len = 0;
  bool left_super = true, left_sub = true;
  int64_t Len(int64_t d) const {
    return std::min(rows + std::min<int64_t>(0, d), cols - std::max<int64_t>(0, d));
  }
  int64_t Offset(int64_t d) const {
    const bool right = (d >= 0 && !left_super) || (d <= 0 && !left_sub);
    return right ? max_len - Len(d) : 0;
  }
  int64_t num_diags() const { return hi - lo + 1; }
};

absl::Status ReadAlign(const tf::Node& node, DiagLayout* l) {
  if (node.op() != "MatrixDiagV3" && node.op() != "MatrixDiagPartV3" &&
      node.op() != "MatrixSetDiagV3") {
    return absl::OkStatus();
  }
  TFJIT_ASSIGN_OR_RETURN(std::string align, tf::GetStringAttrOr(node, "align", "RIGHT_LEFT"));
  if (align != "LEFT_LEFT" && align != "LEFT_RIGHT" && align != "RIGHT_LEFT" &&
      align != "RIGHT_RIGHT") {
    return InvalidArgument(
        "node %s: Attr align has value '%s' not in list of allowed values: "
        "\"LEFT_RIGHT\", \"RIGHT_LEFT\", \"LEFT_LEFT\", \"RIGHT_RIGHT\"",
        node.DebugName(), align);
  }
  l->left_super = align.substr(0, 4) == "LEFT";
  l->left_sub = align.substr(align.size() - 4) == "LEFT";
  return absl::OkStatus();
}

absl::Status ReadK(LoweringContext& ctx, const tf::Node& node, int input, DiagLayout* l) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> k, ctx.ConstantInputAsInts(node, input));
  if (k.empty() || k.size() > 2) {
    return InvalidArgument(
        "node %s: diag_index must have only one or two elements, received "
        "%d elements.",
        node.DebugName(), static_cast<int64_t>(k.size()));
  }
  l->lo = k[0];
  l->hi = k.size() == 2 ? k[1] : k[0];
  if (l->lo > l->hi) {
    return InvalidArgument(
        "node %s: lower_diag_index must not be larger than "
        "upper_diag_index: %d > %d",
        node.DebugName(), l->lo, l->hi);
  }
  return absl::OkStatus();
}

absl::Status CheckDiagBounds(const tf::Node& node, const DiagLayout& l) {
  for (int64_t d : {l.lo, l.hi}) {
    if (!((-l.rows < d && d < l.cols) || d == 0)) {
      return InvalidArgument(
          "node %s: %s_diag_index is out of bound: %d. It must be between %d "
          "and %d",
          node.DebugName(), d == l.lo ? "lower" : "upper", d, -l.rows, l.cols);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Instruction*> ScalarInput(LoweringContext& ctx, const tf::Node& node, int i,
                                         const char* what, DType dtype) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * v, ctx.Input(node, i));
  if (v->shape().rank() != 0 || v->shape().element_type() != dtype) {
    return InvalidArgument(
        "node %s: %s must be a scalar of the input's dtype, received shape: "
        "%s",
        node.DebugName(), what, v->shape().ToString());
  }
  return v;
}

// Writes the diagonals of `diag` ([B..., (num_diags,) max_len]) into `acc` ([B..., rows, cols])
// by layout `l`: per diagonal d, the row of slots is shifted to the columns it occupies,
// broadcast over rows and selected where j - i == d.
absl::StatusOr<Instruction*> PlaceDiagonals(LoweringContext& ctx, const DiagLayout& l,
                                            Instruction* diag, Instruction* acc) {
  const Dims& out_dims = acc->shape().dims();
  const int64_t nb = static_cast<int64_t>(out_dims.size()) - 2;
  const Dims batch = Leading(out_dims, 2);
  TFJIT_ASSIGN_OR_RETURN(Instruction * index, DiagIndex(ctx, out_dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(diag->shape().element_type(), 0, {}));
  Dims bdims = Range(nb);
  bdims.push_back(nb + 1);
  for (int64_t d = l.lo; d <= l.hi; ++d) {
    const int64_t len = l.Len(d), off = l.Offset(d);
    if (len <= 0) continue;
    Instruction* row = diag;
    if (l.lo != l.hi) {
      std::vector<hlo::SliceDim> sl;
      for (int64_t x : diag->shape().dims()) sl.push_back({0, x, 1});
      sl[static_cast<size_t>(nb)] = {l.hi - d, l.hi - d + 1, 1};
      TFJIT_ASSIGN_OR_RETURN(row, ctx.b().Slice(diag, sl));
      TFJIT_ASSIGN_OR_RETURN(row, ctx.b().Reshape(row, Append(batch, {l.max_len})));
    }
    TFJIT_ASSIGN_OR_RETURN(row, SliceLast(ctx, row, off, off + len));
    const int64_t first = std::max<int64_t>(0, d);
    TFJIT_ASSIGN_OR_RETURN(row, PadLast(ctx, row, zero, first, l.cols - first - len));
    TFJIT_ASSIGN_OR_RETURN(row, ctx.b().Broadcast(row, out_dims, bdims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * mask, IsDiag(ctx, index, d));
    TFJIT_ASSIGN_OR_RETURN(acc, ctx.b().Select(mask, row, acc));
  }
  return acc;
}

absl::Status LowerMatrixDiag(LoweringContext& ctx, const tf::Node& node) {
  const bool v1 = node.op() == "MatrixDiag";
  TFJIT_ASSIGN_OR_RETURN(Instruction * diag, ctx.Input(node, 0));
  const DType t = diag->shape().element_type();
  DiagLayout l;
  int64_t rows = -1, cols = -1;
  Instruction* pad = nullptr;
  if (v1) {
    TFJIT_ASSIGN_OR_RETURN(pad, ctx.Splat(t, 0, {}));
  } else {
    TFJIT_RETURN_IF_ERROR(ReadK(ctx, node, 1, &l));
    TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> r, ctx.ConstantInputAsInts(node, 2));
    TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> c, ctx.ConstantInputAsInts(node, 3));
    if (r.size() != 1 || c.size() != 1) {
      return InvalidArgument("node %s: num_rows and num_cols must be scalars", node.DebugName());
    }
    rows = r[0];
    cols = c[0];
    TFJIT_ASSIGN_OR_RETURN(pad, ScalarInput(ctx, node, 4, "padding_value", t));
    TFJIT_RETURN_IF_ERROR(ReadAlign(node, &l));
  }
  const Dims& dd = diag->shape().dims();
  const size_t min_rank = l.lo == l.hi ? 1 : 2;
  if (dd.size() < min_rank) {
    return InvalidArgument("node %s: diagonal must be at least %d-dim, received shape: %s",
                           node.DebugName(), static_cast<int64_t>(min_rank),
                           diag->shape().ToString());
  }
  if (l.lo != l.hi && dd[dd.size() - 2] != l.num_diags()) {
    return InvalidArgument(
        "node %s: The number of diagonals provided in the input does not "
        "match the lower_diag_index and upper_diag_index range.",
        node.DebugName());
  }
  l.max_len = dd.back();
  const int64_t min_rows = l.max_len - std::min<int64_t>(l.hi, 0);
  const int64_t min_cols = l.max_len + std::max<int64_t>(l.lo, 0);
  if (rows == -1 && cols == -1) {
    rows = cols = std::max(min_rows, min_cols);
  } else if (rows == -1) {
    rows = min_rows;
  } else if (cols == -1) {
    cols = min_cols;
  }
  if (rows < min_rows)
    return InvalidArgument("node %s: The number of rows is too small.", node.DebugName());
  if (cols < min_cols)
    return InvalidArgument("node %s: The number of columns is too small.", node.DebugName());
  if (rows != min_rows && cols != min_cols) {
    return InvalidArgument(
        "node %s: The number of rows or columns is not consistent with the "
        "specified d_lower, d_upper, and diagonal.",
        node.DebugName());
  }
  l.rows = rows;
  l.cols = cols;
  const Dims out_dims = Append(Leading(dd, min_rank), {rows, cols});
  TFJIT_ASSIGN_OR_RETURN(Instruction * acc, ctx.b().Broadcast(pad, out_dims, {}));
  TFJIT_ASSIGN_OR_RETURN(acc, PlaceDiagonals(ctx, l, diag, acc));
  ctx.SetOutput(node, 0, acc);
  return absl::OkStatus();
}

absl::Status LowerMatrixSetDiag(LoweringContext& ctx, const tf::Node& node) {
  const bool v1 = node.op() == "MatrixSetDiag";
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * diag, ctx.Input(node, 1));
  const Dims& dims = x->shape().dims();
  if (dims.size() < 2) {
    return InvalidArgument("node %s: input must be at least 2-dim, received shape: %s",
                           node.DebugName(), x->shape().ToString());
  }
  DiagLayout l;
  l.rows = dims[dims.size() - 2];
  l.cols = dims.back();
  if (!v1) {
    TFJIT_RETURN_IF_ERROR(ReadK(ctx, node, 2, &l));
    TFJIT_RETURN_IF_ERROR(ReadAlign(node, &l));
    TFJIT_RETURN_IF_ERROR(CheckDiagBounds(node, l));
  }
  l.max_len = std::max<int64_t>(
      0, std::min(l.rows + std::min<int64_t>(l.hi, 0), l.cols - std::max<int64_t>(l.lo, 0)));
  Dims want = Leading(dims, 2);
  if (l.lo != l.hi) want.push_back(l.num_diags());
  want.push_back(l.max_len);
  if (diag->shape().dims() != want || diag->shape().element_type() != x->shape().element_type()) {
    return InvalidArgument(
        "node %s: diagonal must have shape %s for input %s and k = [%d, %d], "
        "got %s",
        node.DebugName(), hlo::Shape(x->shape().element_type(), want).ToString(),
        x->shape().ToString(), l.lo, l.hi, diag->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, PlaceDiagonals(ctx, l, diag, x));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Diagonal d of [..., rows, cols] as [..., cols]: entry j holds x[..., j - d, j] (a masked
// sum over rows; or for pred).
absl::StatusOr<Instruction*> DiagonalByColumn(LoweringContext& ctx, Instruction* x,
                                              Instruction* index, int64_t d) {
  const DType t = x->shape().element_type();
  const Dims& dims = x->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(Instruction * mask, IsDiag(ctx, index, d));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(t, 0, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * masked, ctx.b().Select(mask, x, zeros));
  TFJIT_ASSIGN_OR_RETURN(Instruction * init, ctx.Splat(t, 0, {}));
  hlo::Computation* sum = hlo::GetOrAddScalarBinaryComputation(
      ctx.module(), t == DType::kBool ? Opcode::kOr : Opcode::kAdd, t);
  return ctx.b().Reduce(masked, init, {static_cast<int64_t>(dims.size()) - 2}, sum);
}

absl::Status LowerMatrixDiagPart(LoweringContext& ctx, const tf::Node& node) {
  const bool v1 = node.op() == "MatrixDiagPart";
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  const Dims& dims = x->shape().dims();
  if (dims.size() < 2) {
    return InvalidArgument("node %s: input must be at least 2-dim, received shape: %s",
                           node.DebugName(), x->shape().ToString());
  }
  DiagLayout l;
  l.rows = dims[dims.size() - 2];
  l.cols = dims.back();
  Instruction* pad = nullptr;
  if (v1) {
    TFJIT_ASSIGN_OR_RETURN(pad, ctx.Splat(t, 0, {}));
  } else {
    TFJIT_RETURN_IF_ERROR(ReadK(ctx, node, 1, &l));
    TFJIT_ASSIGN_OR_RETURN(pad, ScalarInput(ctx, node, 2, "padding_value", t));
    TFJIT_RETURN_IF_ERROR(ReadAlign(node, &l));
    TFJIT_RETURN_IF_ERROR(CheckDiagBounds(node, l));
  }
  l.max_len = std::max<int64_t>(
      0, std::min(l.rows + std::min<int64_t>(l.hi, 0), l.cols - std::max<int64_t>(l.lo, 0)));
  const Dims batch = Leading(dims, 2);
  const int64_t nb = static_cast<int64_t>(batch.size());
  TFJIT_ASSIGN_OR_RETURN(Instruction * index, DiagIndex(ctx, dims));
  std::vector<Instruction*> rows;
  for (int64_t d = l.hi; d >= l.lo; --d) {
    const int64_t len = l.Len(d), off = l.Offset(d);
    Instruction* row = nullptr;
    if (len <= 0) {
      TFJIT_ASSIGN_OR_RETURN(row, ctx.b().Broadcast(pad, Append(batch, {l.max_len}), {}));
    } else {
      TFJIT_ASSIGN_OR_RETURN(row, DiagonalByColumn(ctx, x, index, d));
      const int64_t first = std::max<int64_t>(0, d);
      TFJIT_ASSIGN_OR_RETURN(row, SliceLast(ctx, row, first, first + len));
      TFJIT_ASSIGN_OR_RETURN(row, PadLast(ctx, row, pad, off, l.max_len - off - len));
    }
    if (l.lo != l.hi) {
      TFJIT_ASSIGN_OR_RETURN(row, ctx.b().Reshape(row, Append(batch, {1, l.max_len})));
    }
    rows.push_back(row);
  }
  Instruction* r = rows[0];
  if (rows.size() > 1) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Concatenate(rows, nb));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Diag, DiagPart ----

absl::Status LowerDiag(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const Dims& dims = x->shape().dims();
  if (dims.empty()) {
    return InvalidArgument("node %s: Input must be at least rank 1, got 0", node.DebugName());
  }
  const int64_t n = x->shape().num_elements();
  TFJIT_ASSIGN_OR_RETURN(Instruction * flat, ctx.b().Reshape(x, {n}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * cols, ctx.b().Broadcast(flat, {n, n}, {1}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * index, DiagIndex(ctx, {n, n}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mask, IsDiag(ctx, index, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(x->shape().element_type(), 0, {n, n}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(mask, cols, zeros));
  Dims out = dims;
  out.insert(out.end(), dims.begin(), dims.end());
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, out));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerDiagPart(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const Dims& dims = x->shape().dims();
  if (dims.empty() || dims.size() % 2 != 0) {
    return InvalidArgument(
        "node %s: The rank of the tensor should be even and positive, got "
        "shape %s",
        node.DebugName(), x->shape().ToString());
  }
  const size_t half = dims.size() / 2;
  int64_t n = 1;
  for (size_t i = 0; i < half; ++i) {
    if (dims[i] != dims[i + half]) {
      return InvalidArgument("node %s: Invalid shape %s: dimensions %d and %d do not match.",
                             node.DebugName(), x->shape().ToString(), static_cast<int64_t>(i),
                             static_cast<int64_t>(i + half));
    }
    n *= dims[i];
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * sq, ctx.b().Reshape(x, {n, n}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * index, DiagIndex(ctx, {n, n}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, DiagonalByColumn(ctx, sq, index, 0));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, Dims(dims.begin(), dims.begin() + half)));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Cross ----

absl::Status LowerCross(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ctx.Input(node, 1));
  if (a->shape() != b->shape()) {
    return InvalidArgument("node %s: Both inputs must be of same shape: %s vs. %s",
                           node.DebugName(), a->shape().ToString(), b->shape().ToString());
  }
  if (a->shape().rank() < 1 || a->shape().dims().back() != 3) {
    return InvalidArgument("node %s: Cross-products are only defined for 3-element vectors.",
                           node.DebugName());
  }
  Instruction* ac[3];
  Instruction* bc[3];
  for (int i = 0; i < 3; ++i) {
    TFJIT_ASSIGN_OR_RETURN(ac[i], SliceLast(ctx, a, i, i + 1));
    TFJIT_ASSIGN_OR_RETURN(bc[i], SliceLast(ctx, b, i, i + 1));
  }
  std::vector<Instruction*> parts;
  for (int i = 0; i < 3; ++i) {
    const int p = (i + 1) % 3, q = (i + 2) % 3;
    TFJIT_ASSIGN_OR_RETURN(Instruction * l, ctx.b().Binary(Opcode::kMultiply, ac[p], bc[q]));
    TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kMultiply, ac[q], bc[p]));
    TFJIT_ASSIGN_OR_RETURN(Instruction * c, ctx.b().Binary(Opcode::kSubtract, l, r));
    parts.push_back(c);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Concatenate(parts, a->shape().rank() - 1));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- TridiagonalMatMul ----

absl::Status LowerTridiagonalMatMul(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * rhs, ctx.Input(node, 3));
  const Dims& dims = rhs->shape().dims();
  if (dims.size() < 2) {
    return InvalidArgument("node %s: Input must have rank >= 2, but got %s", node.DebugName(),
                           rhs->shape().ToString());
  }
  const int64_t m = dims[dims.size() - 2];
  const Dims batch = Leading(dims, 2);
  const int64_t nb = static_cast<int64_t>(batch.size());
  Instruction* diag[3];
  for (int i = 0; i < 3; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * d, ctx.Input(node, i));
    if (d->shape() != hlo::Shape(rhs->shape().element_type(), Append(batch, {1, m}))) {
      return InvalidArgument(
          "node %s: Expected %s to have shape %s (one row per batch matrix), "
          "got %s",
          node.DebugName(),
          i == 0   ? "superdiag"
          : i == 1 ? "maindiag"
                   : "subdiag",
          hlo::Shape(rhs->shape().element_type(), Append(batch, {1, m})).ToString(),
          d->shape().ToString());
    }
    TFJIT_ASSIGN_OR_RETURN(d, ctx.b().Reshape(d, Append(batch, {m})));
    TFJIT_ASSIGN_OR_RETURN(diag[i], ctx.b().Broadcast(d, dims, Range(nb + 1)));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kMultiply, diag[1], rhs));
  if (m > 1) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(rhs->shape().element_type(), 0, {}));
    hlo::Attributes down, up;  // rows shifted: down[i] = rhs[i - 1], up[i] = rhs[i + 1]
    down.padding.assign(dims.size(), {0, 0, 0});
    up.padding = down.padding;
    std::vector<hlo::SliceDim> head, tail;
    for (int64_t x : dims) head.push_back({0, x, 1});
    tail = head;
    head[static_cast<size_t>(nb)] = {0, m - 1, 1};
    tail[static_cast<size_t>(nb)] = {1, m, 1};
    TFJIT_ASSIGN_OR_RETURN(Instruction * h, ctx.b().Slice(rhs, head));
    TFJIT_ASSIGN_OR_RETURN(Instruction * t, ctx.b().Slice(rhs, tail));
    down.padding[static_cast<size_t>(nb)] = {1, 0, 0};
    up.padding[static_cast<size_t>(nb)] = {0, 1, 0};
    TFJIT_ASSIGN_OR_RETURN(Instruction * prev, ctx.b().Add(Opcode::kPad, {h, zero}, down));
    TFJIT_ASSIGN_OR_RETURN(Instruction * next, ctx.b().Add(Opcode::kPad, {t, zero}, up));
    TFJIT_ASSIGN_OR_RETURN(Instruction * s, ctx.b().Binary(Opcode::kMultiply, diag[2], prev));
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kAdd, r, s));
    TFJIT_ASSIGN_OR_RETURN(Instruction * u, ctx.b().Binary(Opcode::kMultiply, diag[0], next));
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kAdd, r, u));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Decompositions and solvers: custom-calls of core/linalg.h ----

bool IsLinalgInputType(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 ||
         t == DType::kFloat64;
}

// The input `i` of `node` as a matrix batch in the compute dtype (f32 for 16-bit floats).
absl::StatusOr<Instruction*> MatrixInput(LoweringContext& ctx, const tf::Node& node, int i,
                                         bool square) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
  const hlo::Shape& s = x->shape();
  if (!IsLinalgInputType(s.element_type())) {
    return InvalidArgument("node %s: unsupported dtype %s (float16, float32, float64)",
                           node.DebugName(), DTypeName(s.element_type()));
  }
  if (s.rank() < 2) {
    return InvalidArgument("node %s: Input tensor %d must have rank >= 2, got shape %s",
                           node.DebugName(), i, s.ToString());
  }
  if (square && s.dims().back() != s.dims()[s.dims().size() - 2]) {
    return InvalidArgument("node %s: Input matrix must be square. Got shape %s", node.DebugName(),
                           s.ToString());
  }
  if (s.element_type() == DType::kFloat16 || s.element_type() == DType::kBFloat16) {
    return ctx.b().Convert(x, DType::kFloat32);
  }
  return x;
}

// The custom-call of `call` on `ins`; `outs` are its results' (dtype, dims), returned as
// values (converted to `out_type` where they are in the compute dtype).
absl::StatusOr<std::vector<Instruction*>> LinalgCall(
    LoweringContext& ctx, const tf::Node& node, const linalg::Call& call,
    const std::vector<Instruction*>& ins, const std::vector<std::pair<DType, Dims>>& outs,
    DType out_type) {
  const DType dtype = ins[0]->shape().element_type();
  std::vector<Dims> in_dims;
  for (Instruction* x : ins) in_dims.push_back(x->shape().dims());
  if (!linalg::MatchShapes(call, dtype, in_dims, outs).has_value()) {
    return Internal("node %s: shapes do not fit custom-call %s", node.DebugName(),
                    linalg::TargetOf(call));
  }
  std::vector<hlo::Shape> shapes;
  for (const auto& [t, d] : outs) shapes.push_back(hlo::Shape(t, d));
  hlo::Attributes attrs;
  attrs.custom_call_target = linalg::TargetOf(call);
  TFJIT_ASSIGN_OR_RETURN(Instruction * cc, ctx.b().Add(Opcode::kCustomCall, ins, std::move(attrs),
                                                       {}, hlo::Shape::Tuple(shapes)));
  std::vector<Instruction*> r;
  for (size_t i = 0; i < outs.size(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * v, ctx.b().GetTupleElement(cc, static_cast<int64_t>(i)));
    if (outs[i].first == dtype && out_type != dtype) {
      TFJIT_ASSIGN_OR_RETURN(v, ctx.b().Convert(v, out_type));
    }
    r.push_back(v);
  }
  return r;
}

DType InputType(LoweringContext& ctx, const tf::Node& node) {
  auto x = ctx.Input(node, 0);
  return x.ok() ? (*x)->shape().element_type() : DType::kInvalid;
}

absl::Status LowerCholesky(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, MatrixInput(ctx, node, 0, true));
  const DType t = a->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(std::vector<Instruction*> r,
                         LinalgCall(ctx, node, {linalg::Kind::kCholesky, 0}, {a},
                                    {{t, a->shape().dims()}}, InputType(ctx, node)));
  ctx.SetOutput(node, 0, r[0]);
  return absl::OkStatus();
}

absl::Status LowerMatrixInverse(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, MatrixInput(ctx, node, 0, true));
  TFJIT_ASSIGN_OR_RETURN(bool adjoint, tf::GetBoolAttrOr(node, "adjoint", false));
  const DType t = a->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(
      std::vector<Instruction*> r,
      LinalgCall(ctx, node, {linalg::Kind::kInverse, adjoint ? linalg::kAdjoint : 0}, {a},
                 {{t, a->shape().dims()}}, InputType(ctx, node)));
  ctx.SetOutput(node, 0, r[0]);
  return absl::OkStatus();
}

absl::Status LowerDeterminant(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, MatrixInput(ctx, node, 0, true));
  const DType t = a->shape().element_type();
  const bool log = node.op() == "LogMatrixDeterminant";
  const Dims batch = Leading(a->shape().dims(), 2);
  std::vector<std::pair<DType, Dims>> outs = {{t, batch}};
  if (log) outs.push_back({t, batch});
  TFJIT_ASSIGN_OR_RETURN(
      std::vector<Instruction*> r,
      LinalgCall(ctx, node, {log ? linalg::Kind::kLogDeterminant : linalg::Kind::kDeterminant, 0},
                 {a}, outs, InputType(ctx, node)));
  for (size_t i = 0; i < r.size(); ++i) ctx.SetOutput(node, static_cast<int>(i), r[i]);
  return absl::OkStatus();
}

absl::Status LowerLu(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, MatrixInput(ctx, node, 0, true));
  TFJIT_ASSIGN_OR_RETURN(DType idx, tf::GetTypeAttr(node, "output_idx_type"));
  if (idx != DType::kInt32 && idx != DType::kInt64) {
    return InvalidArgument("node %s: output_idx_type must be int32 or int64, got %s",
                           node.DebugName(), DTypeName(idx));
  }
  const DType t = a->shape().element_type();
  const Dims& dims = a->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(
      std::vector<Instruction*> r,
      LinalgCall(ctx, node, {linalg::Kind::kLu, 0}, {a},
                 {{t, dims}, {DType::kInt32, Leading(dims, 1)}}, InputType(ctx, node)));
  if (idx == DType::kInt64) {
    TFJIT_ASSIGN_OR_RETURN(r[1], ctx.b().Convert(r[1], DType::kInt64));
  }
  ctx.SetOutput(node, 0, r[0]);
  ctx.SetOutput(node, 1, r[1]);
  return absl::OkStatus();
}

absl::Status LowerQr(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, MatrixInput(ctx, node, 0, false));
  TFJIT_ASSIGN_OR_RETURN(bool full, tf::GetBoolAttrOr(node, "full_matrices", false));
  const DType t = a->shape().element_type();
  const Dims& dims = a->shape().dims();
  const int64_t m = dims[dims.size() - 2], n = dims.back(), p = std::min(m, n);
  const Dims batch = Leading(dims, 2);
  TFJIT_ASSIGN_OR_RETURN(
      std::vector<Instruction*> r,
      LinalgCall(ctx, node, {linalg::Kind::kQr, full ? linalg::kFullMatrices : 0}, {a},
                 {{t, Append(batch, {m, full ? m : p})}, {t, Append(batch, {full ? m : p, n})}},
                 InputType(ctx, node)));
  ctx.SetOutput(node, 0, r[0]);
  ctx.SetOutput(node, 1, r[1]);
  return absl::OkStatus();
}

absl::Status LowerSelfAdjointEigV2(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, MatrixInput(ctx, node, 0, true));
  TFJIT_ASSIGN_OR_RETURN(bool compute_v, tf::GetBoolAttrOr(node, "compute_v", true));
  const DType t = a->shape().element_type();
  const Dims& dims = a->shape().dims();
  const DType out_type = InputType(ctx, node);
  TFJIT_ASSIGN_OR_RETURN(std::vector<Instruction*> r,
                         LinalgCall(ctx, node, {linalg::Kind::kEig, 0}, {a},
                                    {{t, Leading(dims, 1)}, {t, dims}}, out_type));
  ctx.SetOutput(node, 0, r[0]);
  if (!compute_v) {
    TFJIT_ASSIGN_OR_RETURN(r[1], ctx.Splat(out_type, 0, {0}));
  }
  ctx.SetOutput(node, 1, r[1]);
  return absl::OkStatus();
}

absl::Status LowerSvd(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, MatrixInput(ctx, node, 0, false));
  TFJIT_ASSIGN_OR_RETURN(bool compute_uv, tf::GetBoolAttrOr(node, "compute_uv", true));
  TFJIT_ASSIGN_OR_RETURN(bool full, tf::GetBoolAttrOr(node, "full_matrices", false));
  const DType t = a->shape().element_type();
  const Dims& dims = a->shape().dims();
  const int64_t m = dims[dims.size() - 2], n = dims.back(), p = std::min(m, n);
  const Dims batch = Leading(dims, 2);
  const DType out_type = InputType(ctx, node);
  TFJIT_ASSIGN_OR_RETURN(
      std::vector<Instruction*> r,
      LinalgCall(ctx, node, {linalg::Kind::kSvd, full ? linalg::kFullMatrices : 0}, {a},
                 {{t, Append(batch, {p})},
                  {t, Append(batch, {m, full ? m : p})},
                  {t, Append(batch, {n, full ? n : p})}},
                 out_type));
  for (int i = 0; i < 3; ++i) {
    if (i > 0 && !compute_uv) {
      TFJIT_ASSIGN_OR_RETURN(r[static_cast<size_t>(i)], ctx.Splat(out_type, 0, {0}));
    }
    ctx.SetOutput(node, i, r[static_cast<size_t>(i)]);
  }
  return absl::OkStatus();
}

// MatrixTriangularSolve (batch dims broadcast), MatrixSolve and TridiagonalSolve.
absl::Status LowerSolve(LoweringContext& ctx, const tf::Node& node) {
  const bool tri = node.op() == "MatrixTriangularSolve";
  const bool tridiag = node.op() == "TridiagonalSolve";
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, MatrixInput(ctx, node, 0, !tridiag));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, MatrixInput(ctx, node, 1, false));
  const DType out_type = InputType(ctx, node);
  if (a->shape().element_type() != b->shape().element_type()) {
    return InvalidArgument("node %s: matrix and rhs dtypes differ", node.DebugName());
  }
  Dims ad = a->shape().dims(), bd = b->shape().dims();
  const int64_t n = ad.back();
  if (tridiag && ad[ad.size() - 2] != 3) {
    return InvalidArgument("node %s: Expected diagonals to have shape [..., 3, num_rows], got %s",
                           node.DebugName(), a->shape().ToString());
  }
  if (bd[bd.size() - 2] != n) {
    return InvalidArgument(
        "node %s: Input matrix and right-hand side must have the same number "
        "of rows, got %s and %s",
        node.DebugName(), a->shape().ToString(), b->shape().ToString());
  }
  linalg::Call call;
  if (tri) {
    // Broadcast the batch dims (TF's MatrixTriangularSolve does since 2.2).
    Dims ab = Leading(ad, 2), bb = Leading(bd, 2);
    const size_t rank = std::max(ab.size(), bb.size());
    ab.insert(ab.begin(), rank - ab.size(), 1);
    bb.insert(bb.begin(), rank - bb.size(), 1);
    Dims batch;
    for (size_t i = 0; i < rank; ++i) {
      if (ab[i] != bb[i] && ab[i] != 1 && bb[i] != 1) {
        return InvalidArgument("node %s: Incompatible batch shapes: %s vs. %s", node.DebugName(),
                               a->shape().ToString(), b->shape().ToString());
      }
      batch.push_back(ab[i] == 1 ? bb[i] : ab[i]);
    }
    TFJIT_ASSIGN_OR_RETURN(a, ctx.BroadcastTo(a, Append(batch, {n, n})));
    TFJIT_ASSIGN_OR_RETURN(b, ctx.BroadcastTo(b, Append(batch, {n, bd.back()})));
    TFJIT_ASSIGN_OR_RETURN(bool lower, tf::GetBoolAttrOr(node, "lower", true));
    TFJIT_ASSIGN_OR_RETURN(bool adjoint, tf::GetBoolAttrOr(node, "adjoint", false));
    call = {linalg::Kind::kTriangularSolve,
            (lower ? linalg::kLower : 0) | (adjoint ? linalg::kAdjoint : 0)};
  } else {
    if (Leading(ad, 2) != Leading(bd, 2)) {
      return InvalidArgument(
          "node %s: All input tensors must have the same outer dimensions, "
          "got %s and %s",
          node.DebugName(), a->shape().ToString(), b->shape().ToString());
    }
    if (tridiag) {
      if (out_type != DType::kFloat32 && out_type != DType::kFloat64) {
        return InvalidArgument("node %s: unsupported dtype %s (float32, float64)", node.DebugName(),
                               DTypeName(out_type));
      }
      TFJIT_ASSIGN_OR_RETURN(bool pivot, tf::GetBoolAttrOr(node, "partial_pivoting", true));
      TFJIT_ASSIGN_OR_RETURN(bool perturb, tf::GetBoolAttrOr(node, "perturb_singular", false));
      if (perturb) {
        return Unimplemented("node %s: perturb_singular is not supported", node.DebugName());
      }
      call = {linalg::Kind::kTridiagonalSolve, pivot ? linalg::kPartialPivoting : 0};
    } else {
      TFJIT_ASSIGN_OR_RETURN(bool adjoint, tf::GetBoolAttrOr(node, "adjoint", false));
      call = {linalg::Kind::kSolve, adjoint ? linalg::kAdjoint : 0};
    }
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<Instruction*> r,
                         LinalgCall(ctx, node, call, {a, b},
                                    {{b->shape().element_type(), b->shape().dims()}}, out_type));
  ctx.SetOutput(node, 0, r[0]);
  return absl::OkStatus();
}

}  // namespace

void AppendLinalgLowerings(std::vector<OpLowering>* table) {
  table->push_back({"MatrixBandPart", LowerMatrixBandPart});
  for (const char* op : {"MatrixDiag", "MatrixDiagV2", "MatrixDiagV3"}) {
    table->push_back({op, LowerMatrixDiag});
  }
  for (const char* op : {"MatrixDiagPart", "MatrixDiagPartV2", "MatrixDiagPartV3"}) {
    table->push_back({op, LowerMatrixDiagPart});
  }
  for (const char* op : {"MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3"}) {
    table->push_back({op, LowerMatrixSetDiag});
  }
  table->push_back({"Diag", LowerDiag});
  table->push_back({"DiagPart", LowerDiagPart});
  table->push_back({"Cross", LowerCross});
  table->push_back({"TridiagonalMatMul", LowerTridiagonalMatMul, /*float_only=*/true});
  for (const auto& [op, fn] : std::initializer_list<std::pair<const char*, LoweringFn>>{
           {"Cholesky", LowerCholesky},
           {"MatrixInverse", LowerMatrixInverse},
           {"MatrixDeterminant", LowerDeterminant},
           {"LogMatrixDeterminant", LowerDeterminant},
           {"Lu", LowerLu},
           {"Qr", LowerQr},
           {"SelfAdjointEigV2", LowerSelfAdjointEigV2},
           {"Svd", LowerSvd},
           {"MatrixTriangularSolve", LowerSolve},
           {"MatrixSolve", LowerSolve},
           {"TridiagonalSolve", LowerSolve}}) {
    table->push_back({op, fn});  // MatrixInput checks the dtypes
  }
}

}  // namespace tfjit::tf2hlo
