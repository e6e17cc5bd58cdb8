// Fallback kernels of the scatter_segment ops (docs/DESIGN.md, "Op families"), with TF's CPU
// semantics, dtypes and error messages: ScatterNd and TensorScatter*, the scatters into
// resource variables (ResourceScatter*, ResourceScatterNd*) and TF1 reference variables
// (Scatter*, ScatterNd*), the sorted Segment* and UnsortedSegment* reductions,
// DynamicPartition, Bincount and SparseToDense.
//
// Every scatter checks all its indices before it writes anything (TF's CPU kernels stop at the
// first bad index, having applied the rows before it to a variable; here a failed scatter
// leaves the variable as it was). Rows with duplicate indices combine in index order.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/attr.h"
#include "frontend/sparse_to_dense_rule.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/resource_mgr.h"

namespace tfjit::runtime {
namespace {

enum class UpdateOp { kAssign, kAdd, kSub, kMul, kDiv, kMin, kMax };

// TF's SliceDebugString: "" for rank 0, "[i]" for rank 1, the multi-index "[a,b]" otherwise.
std::string SlicePosition(const std::vector<int64_t>& dims, int64_t flat) {
  if (dims.empty()) return "";
  std::vector<int64_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    const int64_t n = dims[d] > 0 ? dims[d] : 1;
    idx[d] = flat % n;
    flat /= n;
  }
  return absl::StrCat("[", absl::StrJoin(idx, ","), "]");
}

bool IsIndexDType(DType t) { return IsIntegerDType(t) && t != DType::kBool; }

absl::Status CheckIndexDType(const KernelContext& ctx, const Tensor& t, absl::string_view what) {
  if (!IsIndexDType(t.dtype())) {
    return KernelError(ctx, "%s must be an integer tensor, got %s", what, DTypeName(t.dtype()));
  }
  return absl::OkStatus();
}

// (Complex values have no order: ApplyRows refuses min/max for them before this runs.)
template <typename C>
C Combine(UpdateOp op, C a, C b) {
  switch (op) {
    case UpdateOp::kAssign:
      return b;
    case UpdateOp::kAdd:
      return a + b;
    case UpdateOp::kSub:
      return a - b;
    case UpdateOp::kMul:
      return a * b;
    case UpdateOp::kDiv:
      return a / b;
    case UpdateOp::kMin:
      if constexpr (!IsComplexType<C>) return b < a ? b : a;
      break;
    case UpdateOp::kMax:
      if constexpr (!IsComplexType<C>) return b > a ? b : a;
      break;
  }
  return a;
}

// out[rows[i] + s] op= updates[i * slice + s] (updates[0] when `scalar_update`), for every
// row i in order and s in [0, slice). Rows are element offsets, already range-checked.
absl::Status ApplyRows(const KernelContext& ctx, Tensor& out, const std::vector<int64_t>& rows,
                       int64_t slice, const Tensor& updates, bool scalar_update, UpdateOp op) {
  if (updates.dtype() != out.dtype()) {
    return KernelError(ctx, "updates must have dtype %s, got %s", DTypeName(out.dtype()),
                       DTypeName(updates.dtype()));
  }
  // bool assigns, and adds as TF's bool ScatterNd does (Eigen's bool +, a logical or).
  if (out.dtype() == DType::kBool && op != UpdateOp::kAssign && op != UpdateOp::kAdd) {
    return UnsupportedDType(ctx, out.dtype(), "numeric types");
  }
  if (IsComplexDType(out.dtype()) && (op == UpdateOp::kMin || op == UpdateOp::kMax)) {
    return UnsupportedDType(ctx, out.dtype(), "real number types (complex values have no order)");
  }
  if (IsIntegerDType(out.dtype()) && op == UpdateOp::kDiv) {
    for (int64_t i = 0; i < updates.num_elements(); ++i) {
      if (ElementAsInt64(updates, i) == 0) return KernelError(ctx, "Integer division by zero");
    }
  }
  const auto apply = [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    T* o = out.data<T>();
    const T* u = updates.data<T>();
    for (size_t i = 0; i < rows.size(); ++i) {
      T* dst = o + rows[i];
      const T* src = scalar_update ? u : u + static_cast<int64_t>(i) * slice;
      for (int64_t s = 0; s < slice; ++s) {
        if constexpr (std::is_same_v<T, bool>) {
          const bool v = scalar_update ? src[0] : src[s];
          dst[s] = op == UpdateOp::kAdd ? (dst[s] || v) : v;
        } else {
          dst[s] = static_cast<T>(Combine<C>(op, C(dst[s]), C(scalar_update ? src[0] : src[s])));
        }
      }
    }
  };
  const bool ok = DispatchNumeric(out.dtype(), apply) || DispatchComplex(out.dtype(), apply);
  if (!ok) return UnsupportedDType(ctx, out.dtype(), "numeric types");
  return absl::OkStatus();
}

// ---- ScatterNd, TensorScatter*, ScatterNd* and ResourceScatterNd* ----

// Which op's messages the shape checks use: ScatterNd, TensorScatter*, or the variable
// updates (ScatterNd* on refs, ResourceScatterNd*), whose checks are TF's common ones only.
enum class NdFlavor { kScatterNd, kTensorScatter, kVariable };

// The shape checks ScatterNd and TensorScatter* make before TF's common ones, with their own
// messages.
absl::Status CheckScatterNdOpShapes(const KernelContext& ctx, const std::vector<int64_t>& shape,
                                    const Tensor& indices, const Tensor& updates, NdFlavor flavor,
                                    bool valid_empty) {
  const std::string is = DimsString(indices.dims()), us = DimsString(updates.dims()),
                    ss = DimsString(shape);
  const int rank = static_cast<int>(shape.size());
  if (indices.rank() < 1) {
    return KernelError(ctx, "Indices shape must have rank at least one. Found:%s", is);
  }
  if (updates.rank() < 1) {
    return KernelError(ctx, "Updates shape must have rank at least one. Found:%s", us);
  }
  if (!valid_empty) return KernelError(ctx, "Indices and updates specified for empty output shape");
  const int outer = indices.rank() - 1;
  for (int i = 0; i < outer; ++i) {
    if (i >= updates.rank() || indices.dim(i) != updates.dim(i)) {
      if (flavor == NdFlavor::kTensorScatter) {
        return KernelError(ctx,
                           "Outer dimensions of indices and update must match. Indices "
                           "shape: %s, updates shape:%s",
                           is, us);
      }
      return KernelError(ctx,
                         "Dimensions [0,%d) of indices[shape=%s] must match dimensions "
                         "[0,%d) of updates[shape=%s]",
                         outer, is, outer, us);
    }
  }
  const int64_t ix = indices.dim(outer);
  bool inner_ok = updates.rank() - outer == rank - ix;
  for (int i = 0; inner_ok && i + outer < updates.rank(); ++i) {
    inner_ok = updates.dim(i + outer) == shape[static_cast<size_t>(ix + i)];
  }
  if (!inner_ok) {
    if (flavor == NdFlavor::kTensorScatter) {
      return KernelError(ctx,
                         "Inner dimensions of output shape must match inner dimensions of "
                         "updates shape. Output: %s updates: %s",
                         ss, us);
    }
    return KernelError(ctx,
                       "Dimensions [%d,%d) of input[shape=%s] must match dimensions "
                       "[%d,%d) of updates[shape=%s]",
                       ix, rank, ss, outer, updates.rank(), us);
  }
  return absl::OkStatus();
}

// TF's common scatter-nd shape checks: a 1-D or larger output, and updates =
// indices.shape[:batch_dim] + shape[slice_dim:].
absl::Status CheckScatterNdCommonShapes(const KernelContext& ctx, const std::vector<int64_t>& shape,
                                        const Tensor& indices, const Tensor& updates,
                                        bool valid_empty) {
  const std::string is = DimsString(indices.dims()), us = DimsString(updates.dims()),
                    ss = DimsString(shape);
  const int rank = static_cast<int>(shape.size());
  if (rank < 1) return KernelError(ctx, "Output must be at least 1-D, got shape: %s", ss);
  if (!valid_empty) {
    return KernelError(ctx, "Indices and updates specified for empty output.  indices shape: %s",
                       is);
  }
  if (indices.rank() < 1 || updates.rank() < 1 || updates.dim(0) != indices.dim(0)) {
    return KernelError(ctx,
                       "Dimensions [0,1) of indices[shape=%s] = %d must match dimensions "
                       "[0,1) of updates[shape=%s] = %d",
                       is, indices.rank() < 1 ? 0 : indices.dim(0), us,
                       updates.rank() < 1 ? 0 : updates.dim(0));
  }
  const int64_t k = indices.rank() > 1 ? indices.dim(indices.rank() - 1) : 1;
  const int batch = indices.rank() > 1 ? indices.rank() - 1 : 1;
  bool ok = updates.rank() >= batch && k <= rank && updates.rank() == batch + rank - k;
  for (int d = 0; ok && d < batch; ++d) ok = updates.dim(d) == indices.dim(d);
  for (int d = 0; ok && d + batch < updates.rank(); ++d) {
    ok = updates.dim(d + batch) == shape[static_cast<size_t>(d + k)];
  }
  if (!ok) {
    return KernelError(ctx,
                       "Must have updates.shape = indices.shape[:batch_dim] + "
                       "params_shape[slice_dim:], got updates.shape: %s, indices.shape: %s, "
                       "params_shape: %s, slice_dim: %d, and batch_dim: %d",
                       us, is, ss, k, batch);
  }
  return absl::OkStatus();
}

// Turns each index row (k values) into the element offset of its slice in the output,
// failing on the first index outside `shape`.
absl::Status ScatterNdOffsets(const KernelContext& ctx, const std::vector<int64_t>& shape,
                              const Tensor& indices, int64_t k, int64_t slice,
                              std::vector<int64_t>* rows) {
  const int64_t n = indices.num_elements() / k;
  std::vector<int64_t> pos_dims(indices.dims().begin(), indices.dims().end() - 1);
  rows->assign(static_cast<size_t>(n), 0);
  for (int64_t r = 0; r < n; ++r) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t v = ElementAsInt64(indices, r * k + j);
      const int64_t dim = shape[static_cast<size_t>(j)];
      if (v < 0 || v >= dim) {
        std::vector<int64_t> idx;
        for (int64_t q = 0; q < k; ++q) idx.push_back(ElementAsInt64(indices, r * k + q));
        return KernelError(ctx, "indices%s = [%s] does not index into shape %s",
                           SlicePosition(pos_dims, r), absl::StrJoin(idx, ", "), DimsString(shape));
      }
      offset = offset * dim + v;
    }
    (*rows)[static_cast<size_t>(r)] = offset * slice;
  }
  return absl::OkStatus();
}

// Checks indices [..., K] and updates = indices.shape[:-1] + shape[K:] against the output
// shape, and turns each index row into an element offset of the output (validating its
// range). *slice is the element count of shape[K:].
absl::Status ScatterNdRows(const KernelContext& ctx, const std::vector<int64_t>& shape,
                           const Tensor& indices, const Tensor& updates, NdFlavor flavor,
                           std::vector<int64_t>* rows, int64_t* slice) {
  TFJIT_RETURN_IF_ERROR(CheckIndexDType(ctx, indices, "indices"));
  const int rank = static_cast<int>(shape.size());
  int64_t shape_elems = 1;
  for (int64_t d : shape) shape_elems *= d;
  const bool valid_empty =
      (indices.num_elements() == 0 && updates.num_elements() == 0) ||
      (shape_elems != 0 && indices.num_elements() != 0 && updates.num_elements() != 0);
  if (flavor != NdFlavor::kVariable) {
    TFJIT_RETURN_IF_ERROR(
        CheckScatterNdOpShapes(ctx, shape, indices, updates, flavor, valid_empty));
  }
  TFJIT_RETURN_IF_ERROR(CheckScatterNdCommonShapes(ctx, shape, indices, updates, valid_empty));
  if (shape_elems == 0) {
    rows->clear();
    *slice = 0;
    return absl::OkStatus();
  }
  const int64_t k = indices.rank() > 1 ? indices.dim(indices.rank() - 1) : 1;
  if (k < 1 || k > 7) {
    return KernelError(ctx,
                       "Only indices.shape[-1] values between 1 and 5 are currently "
                       "supported.  Requested rank: %d",
                       k);
  }
  *slice = 1;
  for (int d = static_cast<int>(k); d < rank; ++d) *slice *= shape[static_cast<size_t>(d)];
  return ScatterNdOffsets(ctx, shape, indices, k, *slice, rows);
}

absl::Status ScatterNdKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& indices = ctx.input(0);
  const Tensor& updates = ctx.input(1);
  const Tensor& shape_in = ctx.input(2);
  TFJIT_RETURN_IF_ERROR(CheckIndexDType(ctx, shape_in, "shape"));
  if (shape_in.rank() != 1) return KernelError(ctx, "Shape must be a vector");
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < shape_in.num_elements(); ++i) {
    shape.push_back(ElementAsInt64(shape_in, i));
    if (shape.back() < 0) return KernelError(ctx, "Dimension %d must be >= 0", shape.back());
  }
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, updates.dtype(), shape));
  std::vector<int64_t> rows;
  int64_t slice = 0;
  TFJIT_RETURN_IF_ERROR(
      ScatterNdRows(ctx, shape, indices, updates, NdFlavor::kScatterNd, &rows, &slice));
  Tensor out(updates.dtype(), shape);
  TFJIT_RETURN_IF_ERROR(ApplyRows(ctx, out, rows, slice, updates, false, UpdateOp::kAdd));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

template <UpdateOp kOp>
absl::Status TensorScatterKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& tensor = ctx.input(0);
  std::vector<int64_t> rows;
  int64_t slice = 0;
  TFJIT_RETURN_IF_ERROR(ScatterNdRows(ctx, tensor.dims(), ctx.input(1), ctx.input(2),
                                      NdFlavor::kTensorScatter, &rows, &slice));
  Tensor out = tensor.Clone();
  TFJIT_RETURN_IF_ERROR(ApplyRows(ctx, out, rows, slice, ctx.input(2), false, kOp));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Scatter* (first-dimension rows) ----

// Rows of params [N, ...] picked by `indices` (any shape), with updates of shape
// indices.shape + params.shape[1:] or a scalar; TF's scatter_op.cc checks and messages.
absl::Status ScatterRows(const KernelContext& ctx, const Tensor& params, const Tensor& indices,
                         const Tensor& updates, std::vector<int64_t>* rows, int64_t* slice,
                         bool* scalar_update) {
  TFJIT_RETURN_IF_ERROR(CheckIndexDType(ctx, indices, "indices"));
  if (params.rank() < 1) {
    return KernelError(ctx, "params must be at least 1-D, got shape %s", DimsString(params.dims()));
  }
  *scalar_update = updates.rank() == 0;
  bool ok = *scalar_update || updates.rank() == indices.rank() + params.rank() - 1;
  for (int d = 0; ok && !*scalar_update && d < updates.rank(); ++d) {
    ok = updates.dim(d) ==
         (d < indices.rank() ? indices.dim(d) : params.dim(d - indices.rank() + 1));
  }
  if (!ok) {
    return KernelError(ctx,
                       "Must have updates.shape = indices.shape + params.shape[1:] or "
                       "updates.shape = [], got updates.shape %s, indices.shape %s, "
                       "params.shape %s",
                       DimsString(updates.dims()), DimsString(indices.dims()),
                       DimsString(params.dims()));
  }
  *slice = 1;
  for (int d = 1; d < params.rank(); ++d) *slice *= params.dim(d);
  const int64_t limit = params.dim(0);
  rows->assign(static_cast<size_t>(indices.num_elements()), 0);
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    const int64_t v = ElementAsInt64(indices, i);
    if (v < 0 || v >= limit) {
      return KernelError(ctx, "indices%s = %d is not in [0, %d)", SlicePosition(indices.dims(), i),
                         v, limit);
    }
    (*rows)[static_cast<size_t>(i)] = v * *slice;
  }
  return absl::OkStatus();
}

// Scatter into a variable (resource or ref): `nd` picks ScatterNd's geometry over Scatter's.
// Ref ops output the new value (TF forwards the ref).
template <UpdateOp kOp, bool kNd>
absl::Status VariableScatterKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  TFJIT_ASSIGN_OR_RETURN(VarTarget target, VariableTarget(ctx, 0));
  Var& var = *target.var;
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  if (updates.dtype() != var.dtype()) {
    return KernelError(ctx, "Variable and value dtypes don't match; respectively, %s and %s",
                       DTypeName(var.dtype()), DTypeName(updates.dtype()));
  }
  std::lock_guard<std::mutex> lock(var.update_mu());
  TFJIT_ASSIGN_OR_RETURN(Tensor old, InitializedValue(target));
  std::vector<int64_t> rows;
  int64_t slice = 0;
  bool scalar_update = false;
  if constexpr (kNd) {
    TFJIT_RETURN_IF_ERROR(
        ScatterNdRows(ctx, old.dims(), indices, updates, NdFlavor::kVariable, &rows, &slice));
  } else {
    TFJIT_RETURN_IF_ERROR(ScatterRows(ctx, old, indices, updates, &rows, &slice, &scalar_update));
  }
  Tensor next = old.Clone();
  TFJIT_RETURN_IF_ERROR(ApplyRows(ctx, next, rows, slice, updates, scalar_update, kOp));
  var.Set(next);
  if (ctx.node().num_outputs() > 0) ctx.set_output(0, next);
  return absl::OkStatus();
}

// ---- Segment reductions ----

enum class Reduce { kSum, kMean, kProd, kMax, kMin };

// The identity of `r` over T, as its compute type (the extremes are T's, not float's).
// (Complex values take only sum, mean and product: the kernels refuse max/min for them.)
template <typename T, typename C = ComputeType<T>>
C Identity(Reduce r) {
  if constexpr (IsComplexType<T>) return r == Reduce::kProd ? C(1) : C(0);
  switch (r) {
    case Reduce::kProd:
      return C(1);
    case Reduce::kMax:
      return C(std::numeric_limits<T>::lowest());
    case Reduce::kMin:
      return C(std::numeric_limits<T>::max());
    default:
      return C(0);
  }
}

template <typename C>
C Accumulate(Reduce r, C a, C b) {
  switch (r) {
    case Reduce::kProd:
      return a * b;
    case Reduce::kMax:
      if constexpr (!IsComplexType<C>) return b > a ? b : a;
      break;
    case Reduce::kMin:
      if constexpr (!IsComplexType<C>) return b < a ? b : a;
      break;
    default:
      return a + b;
  }
  return a;
}

// out[seg[i]] (+)= data row i for every i with seg[i] >= 0, over `rows` output rows of `slice`
// elements. Rows no id reaches hold `empty` when given, the identity otherwise; kMean divides
// by the count. The extreme identities are TF's (lowest/highest finite value).
void SegmentReduce(const Tensor& data, const std::vector<int64_t>& seg, int64_t slice, Reduce r,
                   bool empty_is_zero, Tensor& out) {
  const auto reduce = [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = ComputeType<T>;
      const int64_t rows = slice == 0 ? 0 : out.num_elements() / slice;
      std::vector<C> acc(static_cast<size_t>(out.num_elements()), Identity<T>(r));
      std::vector<int64_t> count(static_cast<size_t>(rows), 0);
      const T* x = data.data<T>();
      for (size_t i = 0; i < seg.size(); ++i) {
        if (seg[i] < 0) continue;
        ++count[static_cast<size_t>(seg[i])];
        C* a = acc.data() + seg[i] * slice;
        const T* src = x + static_cast<int64_t>(i) * slice;
        for (int64_t s = 0; s < slice; ++s) a[s] = Accumulate<C>(r, a[s], C(src[s]));
      }
      T* o = out.data<T>();
      for (int64_t row = 0; row < rows; ++row) {
        const int64_t c = count[static_cast<size_t>(row)];
        for (int64_t s = 0; s < slice; ++s) {
          C v = acc[static_cast<size_t>(row * slice + s)];
          if (c == 0 && empty_is_zero) v = C(0);
          if (r == Reduce::kMean && c > 0) v = v / static_cast<C>(c);
          o[row * slice + s] = static_cast<T>(v);
        }
      }
    }
  };
  DispatchNumeric(data.dtype(), reduce) || DispatchComplex(data.dtype(), reduce);
}

// The real number types, and complex for the reductions that need no order (TF registers
// complex sum, mean and product segment kernels).
bool ReduceDTypeOk(DType t, Reduce r) {
  if (IsComplexDType(t)) return r == Reduce::kSum || r == Reduce::kMean || r == Reduce::kProd;
  return t != DType::kBool && IsNumericDType(t);
}

template <Reduce kR>
absl::Status SegmentKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& data = ctx.input(0);
  const Tensor& ids = ctx.input(1);
  TFJIT_RETURN_IF_ERROR(CheckIndexDType(ctx, ids, "segment_ids"));
  if (!ReduceDTypeOk(data.dtype(), kR)) {
    return UnsupportedDType(
        ctx, data.dtype(),
        kR == Reduce::kMax || kR == Reduce::kMin ? "real types" : "real and complex types");
  }
  if (data.rank() < 1) return KernelError(ctx, "input must be at least rank 1");
  if (ids.rank() != 1) return KernelError(ctx, "segment_ids should be a vector.");
  const int64_t n = ids.num_elements();
  if (n != data.dim(0)) {
    return KernelError(ctx, "segment_ids should be the same size as dimension 0 of input.");
  }
  const int64_t rows = n > 0 ? ElementAsInt64(ids, n - 1) + 1 : 0;
  if (rows < 0) return KernelError(ctx, "segment ids must be >= 0");
  std::vector<int64_t> seg(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = ElementAsInt64(ids, i);
    if (i > 0 && v < seg[static_cast<size_t>(i - 1)]) {
      return KernelError(ctx, "segment ids are not increasing");
    }
    if (v < 0 || v >= rows) {
      return KernelError(ctx,
                         "Segment id %d out of range [0, %d), possibly because "
                         "'segment_ids' input is not sorted.",
                         v, rows);
    }
    seg[static_cast<size_t>(i)] = v;
  }
  std::vector<int64_t> dims = data.dims();
  dims[0] = rows;
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, data.dtype(), dims));
  Tensor out(data.dtype(), dims);
  const int64_t slice = n == 0 ? 0 : data.num_elements() / n;
  // Empty segments hold 0, SegmentProd's 1.
  if (slice > 0) SegmentReduce(data, seg, slice, kR, /*empty_is_zero=*/kR != Reduce::kProd, out);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Empty segments hold the identity (TF's lowest/highest finite value for Max/Min); negative
// ids drop their row, ids >= num_segments fail.
template <Reduce kR>
absl::Status UnsortedSegmentKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& data = ctx.input(0);
  const Tensor& ids = ctx.input(1);
  const Tensor& num = ctx.input(2);
  TFJIT_RETURN_IF_ERROR(CheckIndexDType(ctx, ids, "segment_ids"));
  TFJIT_RETURN_IF_ERROR(CheckIndexDType(ctx, num, "num_segments"));
  if (!ReduceDTypeOk(data.dtype(), kR)) {
    return UnsupportedDType(
        ctx, data.dtype(),
        kR == Reduce::kMax || kR == Reduce::kMin ? "real types" : "real and complex types");
  }
  if (num.rank() != 0) {
    return KernelError(ctx, "num_segments should be a scalar, not shape %s",
                       DimsString(num.dims()));
  }
  bool prefix = ids.rank() <= data.rank();
  for (int d = 0; prefix && d < ids.rank(); ++d) prefix = ids.dim(d) == data.dim(d);
  if (!prefix) {
    return KernelError(ctx, "data.shape = %s does not start with segment_ids.shape = %s",
                       DimsString(data.dims()), DimsString(ids.dims()));
  }
  const int64_t segments = ElementAsInt64(num, 0);
  if (segments < 0) {
    return KernelError(ctx, "Input num_segments == %d must not be negative.", segments);
  }
  std::vector<int64_t> dims = {segments};
  dims.insert(dims.end(), data.dims().begin() + ids.rank(), data.dims().end());
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, data.dtype(), dims));
  Tensor out(data.dtype(), dims);
  const int64_t n = ids.num_elements();
  int64_t slice = 1;
  for (size_t d = 1; d < dims.size(); ++d) slice *= dims[d];
  std::vector<int64_t> seg(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = ElementAsInt64(ids, i);
    if (v >= segments) {
      return KernelError(ctx, "segment_ids%s = %d is out of range [0, %d)",
                         SlicePosition(ids.dims(), i), v, segments);
    }
    seg[static_cast<size_t>(i)] = v;  // negative: dropped
  }
  if (out.num_elements() > 0) {
    SegmentReduce(data, seg, slice, kR, /*empty_is_zero=*/false, out);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- DynamicPartition ----

absl::Status DynamicPartitionKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& data = ctx.input(0);
  const Tensor& parts = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(int64_t num, tf::GetIntAttrOr(ctx.node(), "num_partitions", 1));
  if (num < 1) return KernelError(ctx, "num_partitions must be at least 1, got %d", num);
  if (parts.dtype() != DType::kInt32) return UnsupportedDType(ctx, parts.dtype(), "int32");
  if (DTypeSize(data.dtype()) == 0) return UnsupportedDType(ctx, data.dtype(), "numeric types");
  bool prefix = parts.rank() <= data.rank();
  for (int d = 0; prefix && d < parts.rank(); ++d) prefix = parts.dim(d) == data.dim(d);
  if (!prefix) {
    return KernelError(ctx,
                       "data.shape must start with partitions.shape, got data.shape = %s, "
                       "partitions.shape = %s",
                       DimsString(data.dims()), DimsString(parts.dims()));
  }
  const int64_t n = parts.num_elements();
  std::vector<int64_t> counts(static_cast<size_t>(num), 0);
  const int32_t* p = parts.data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] < 0 || p[i] >= num) {
      return KernelError(ctx, "partitions%s = %d is not in [0, %d)", SlicePosition(parts.dims(), i),
                         p[i], num);
    }
    ++counts[static_cast<size_t>(p[i])];
  }
  std::vector<int64_t> inner(data.dims().begin() + parts.rank(), data.dims().end());
  int64_t slice = 1;
  for (int64_t d : inner) slice *= d;
  const size_t bytes = static_cast<size_t>(slice) * DTypeSize(data.dtype());
  std::vector<Tensor> outs;
  for (int64_t q = 0; q < num; ++q) {
    std::vector<int64_t> dims = {counts[static_cast<size_t>(q)]};
    dims.insert(dims.end(), inner.begin(), inner.end());
    outs.emplace_back(data.dtype(), dims);
  }
  std::vector<int64_t> next(static_cast<size_t>(num), 0);
  const char* src = static_cast<const char*>(data.raw_data());
  for (int64_t i = 0; i < n && bytes > 0; ++i) {
    const size_t q = static_cast<size_t>(p[i]);
    char* dst = static_cast<char*>(outs[q].raw_data()) + static_cast<size_t>(next[q]++) * bytes;
    std::memcpy(dst, src + static_cast<size_t>(i) * bytes, bytes);
  }
  for (int64_t q = 0; q < num; ++q)
    ctx.set_output(static_cast<int>(q), outs[static_cast<size_t>(q)]);
  return absl::OkStatus();
}

// ---- Bincount ----

absl::Status BincountKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& arr = ctx.input(0);
  const Tensor& size_t_in = ctx.input(1);
  const Tensor& weights = ctx.input(2);
  if (arr.dtype() != DType::kInt32) return UnsupportedDType(ctx, arr.dtype(), "int32");
  if (size_t_in.rank() != 0) {
    return KernelError(ctx, "Shape must be rank 0 but is rank %d for size", size_t_in.rank());
  }
  const int64_t size = ElementAsInt64(size_t_in, 0);
  if (size < 0) return KernelError(ctx, "size (%d) must be non-negative", size);
  const DType t = weights.dtype();
  if (t != DType::kInt32 && t != DType::kInt64 && t != DType::kFloat32 && t != DType::kFloat64) {
    return UnsupportedDType(ctx, t, "int32, int64, float32, float64");
  }
  const bool weighted = weights.num_elements() > 0;
  if (weighted && weights.dims() != arr.dims()) {
    return KernelError(ctx,
                       "Input arr and weights must have the same shape; arr shape %s, "
                       "weights shape %s",
                       DimsString(arr.dims()), DimsString(weights.dims()));
  }
  const int32_t* a = arr.data<int32_t>();
  for (int64_t i = 0; i < arr.num_elements(); ++i) {
    if (a[i] < 0) return KernelError(ctx, "Input arr must be non-negative!");
  }
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, t, {size}));
  Tensor out(t, {size});
  DispatchFloatInt(t, [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T* w = weighted ? weights.data<T>() : nullptr;
    for (int64_t i = 0; i < arr.num_elements(); ++i) {
      if (a[i] >= size) continue;
      o[a[i]] += w != nullptr ? w[i] : T(1);
    }
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- SparseTensorDenseAdd ----

// output = b, then output[a_indices[i]] += a_values[i] (TF's SparseTensorDenseAddOp: the
// shapes must agree and every index be in range).
absl::Status SparseTensorDenseAddKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  const Tensor& idx = ctx.input(0);
  const Tensor& values = ctx.input(1);
  const Tensor& shape = ctx.input(2);
  const Tensor& b = ctx.input(3);
  if (idx.rank() != 2) {
    return KernelError(ctx, "Input a_indices should be a matrix but received shape: %s",
                       idx.ShapeString());
  }
  if (values.rank() != 1 || shape.rank() != 1) {
    return KernelError(ctx,
                       "Inputs a_values and a_shape should be vectors but received "
                       "shapes: %s and %s",
                       values.ShapeString(), shape.ShapeString());
  }
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, shape, "a_shape", &dims));
  if (dims != b.dims()) {
    return KernelError(ctx, "Dimension mismatch: a_shape is %s and b is %s", DimsString(dims),
                       b.ShapeString());
  }
  const int64_t n = idx.dim(0), rank = idx.dim(1);
  if (values.dim(0) != n || rank != b.rank()) {
    return KernelError(ctx, "a_indices %s, a_values %s and b %s do not agree", idx.ShapeString(),
                       values.ShapeString(), b.ShapeString());
  }
  if (values.dtype() != b.dtype()) {
    return KernelError(ctx, "a_values and b have different dtypes");
  }
  Tensor out = b.Clone();
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  for (int64_t d = rank - 2; d >= 0; --d) {
    strides[static_cast<size_t>(d)] =
        strides[static_cast<size_t>(d + 1)] * b.dim(static_cast<int>(d + 1));
  }
  std::vector<int64_t> offsets(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t v = ElementAsInt64(idx, i * rank + d);
      if (v < 0 || v >= b.dim(static_cast<int>(d))) {
        std::vector<int64_t> row;
        for (int64_t q = 0; q < rank; ++q) row.push_back(ElementAsInt64(idx, i * rank + q));
        return KernelError(ctx, "Index tuple (%s) is out of bounds", absl::StrJoin(row, ","));
      }
      off += v * strides[static_cast<size_t>(d)];
    }
    offsets[static_cast<size_t>(i)] = off;
  }
  const auto add = [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    T* o = out.data<T>();
    const T* v = values.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      T& slot = o[offsets[static_cast<size_t>(i)]];
      slot = static_cast<T>(C(slot) + C(v[i]));
    }
  };
  const bool ok = DispatchReal(b.dtype(), add) || DispatchComplex(b.dtype(), add);
  if (!ok) return UnsupportedDType(ctx, b.dtype(), "number types");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- SparseToDense ----

// dense = default_value everywhere, then dense[sparse_indices[i]] = sparse_values[i] (or the
// scalar sparse_values). With validate_indices, indices must be in bounds, sorted
// lexicographically and unique, as TF checks; without it, out-of-bounds indices still fail.
absl::Status SparseToDenseKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  const Tensor& idx = ctx.input(0);
  const Tensor& shape_t = ctx.input(1);
  const Tensor& values = ctx.input(2);
  const Tensor& def = ctx.input(3);
  if (idx.dtype() != DType::kInt32 && idx.dtype() != DType::kInt64) {
    return KernelError(ctx, "sparse_indices must be int32 or int64, got %s",
                       DTypeName(idx.dtype()));
  }
  if (shape_t.rank() != 1) {
    return KernelError(ctx, "output_shape should be a vector, got shape %s", shape_t.ShapeString());
  }
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, shape_t, "output_shape", &dims));
  absl::StatusOr<tf::SparseIndexRows> rows =
      tf::CheckSparseToDenseShapes(idx.dims(), dims, values.dims(), def.dims());
  if (!rows.ok()) return NodeError(ctx, rows.status().message());
  if (values.dtype() != def.dtype() || DTypeSize(values.dtype()) == 0) {
    return UnsupportedDType(ctx, values.dtype(),
                            "numeric types (sparse_values and "
                            "default_value of one type)");
  }
  TFJIT_ASSIGN_OR_RETURN(bool validate, tf::GetBoolAttrOr(ctx.node(), "validate_indices", true));
  absl::Status indices_ok = tf::CheckSparseToDenseIndices(idx, *rows, dims, validate);
  if (!indices_ok.ok()) return NodeError(ctx, indices_ok.message());
  Tensor out(values.dtype(), dims);
  const size_t elem = DTypeSize(values.dtype());
  char* y = static_cast<char*>(out.raw_data());
  for (int64_t i = 0; i < out.num_elements(); ++i) std::memcpy(y + i * elem, def.raw_data(), elem);
  for (int64_t i = 0; i < rows->num; ++i) {
    int64_t flat = 0;
    for (int64_t d = 0; d < rows->rank; ++d) {
      flat = flat * dims[static_cast<size_t>(d)] + ElementAsInt64(idx, i * rows->rank + d);
    }
    const char* src = static_cast<const char*>(values.raw_data()) +
                      (values.rank() == 0 ? 0 : static_cast<size_t>(i) * elem);
    std::memcpy(y + static_cast<size_t>(flat) * elem, src, elem);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterScatterSegmentKernels(KernelRegistry& registry) {
  registry.Register("ScatterNd", ScatterNdKernel);
  registry.Register("SparseToDense", SparseToDenseKernel);
  registry.Register("TensorScatterUpdate", TensorScatterKernel<UpdateOp::kAssign>);
  registry.Register("TensorScatterAdd", TensorScatterKernel<UpdateOp::kAdd>);
  registry.Register("TensorScatterSub", TensorScatterKernel<UpdateOp::kSub>);
  registry.Register("TensorScatterMin", TensorScatterKernel<UpdateOp::kMin>);
  registry.Register("TensorScatterMax", TensorScatterKernel<UpdateOp::kMax>);
  // Resource variables and TF1 reference variables share the kernels (VariableTarget tells them
  // apart).
  for (const char* prefix : {"ResourceScatter", "Scatter"}) {
    const std::string p = prefix;
    registry.Register(p + "Update", VariableScatterKernel<UpdateOp::kAssign, false>);
    registry.Register(p + "Add", VariableScatterKernel<UpdateOp::kAdd, false>);
    registry.Register(p + "Sub", VariableScatterKernel<UpdateOp::kSub, false>);
    registry.Register(p + "Mul", VariableScatterKernel<UpdateOp::kMul, false>);
    registry.Register(p + "Div", VariableScatterKernel<UpdateOp::kDiv, false>);
    registry.Register(p + "Min", VariableScatterKernel<UpdateOp::kMin, false>);
    registry.Register(p + "Max", VariableScatterKernel<UpdateOp::kMax, false>);
    registry.Register(p + "NdUpdate", VariableScatterKernel<UpdateOp::kAssign, true>);
    registry.Register(p + "NdAdd", VariableScatterKernel<UpdateOp::kAdd, true>);
    registry.Register(p + "NdSub", VariableScatterKernel<UpdateOp::kSub, true>);
  }
  registry.Register("SegmentSum", SegmentKernel<Reduce::kSum>);
  registry.Register("SegmentMean", SegmentKernel<Reduce::kMean>);
  registry.Register("SegmentProd", SegmentKernel<Reduce::kProd>);
  registry.Register("SegmentMax", SegmentKernel<Reduce::kMax>);
  registry.Register("SegmentMin", SegmentKernel<Reduce::kMin>);
  registry.Register("UnsortedSegmentSum", UnsortedSegmentKernel<Reduce::kSum>);
  registry.Register("UnsortedSegmentProd", UnsortedSegmentKernel<Reduce::kProd>);
  registry.Register("UnsortedSegmentMax", UnsortedSegmentKernel<Reduce::kMax>);
  registry.Register("UnsortedSegmentMin", UnsortedSegmentKernel<Reduce::kMin>);
  registry.Register("DynamicPartition", DynamicPartitionKernel);
  registry.Register("Bincount", BincountKernel);
  registry.Register("SparseTensorDenseAdd", SparseTensorDenseAddKernel);
}

}  // namespace tfjit::runtime
