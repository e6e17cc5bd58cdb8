// Slicing kernels: Slice, StridedSlice (all five masks, TF's dense-spec expansion), Split,
// SplitV, Unpack and Concat (v1, forwarded to ConcatV2). Every dtype is supported (data
// movement by element width).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "frontend/attr.h"
#include "runtime/kernels/gather_util.h"

namespace tfjit::runtime {
namespace {

// Copies the box [begin, begin + size) of `in` into a new tensor.
Tensor SliceBox(const KernelContext& ctx, const Tensor& in, const std::vector<int64_t>& begin,
                const std::vector<int64_t>& size) {
  const std::vector<int64_t> strides = RowStrides(in.dims());
  std::vector<std::vector<int64_t>> offsets;
  for (size_t d = 0; d < size.size(); ++d) {
    offsets.push_back(StepOffsets(begin[d], 1, size[d], strides[d]));
  }
  Tensor out(in.dtype(), size);
  GatherByOffsets(ctx, in, offsets, nullptr, out);
  return out;
}

absl::Status SliceKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> begin, size;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "begin", &begin));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(2), "size", &size));
  if (ctx.input(1).rank() != 1 || ctx.input(2).rank() != 1 ||
      static_cast<int>(begin.size()) != in.rank() || static_cast<int>(size.size()) != in.rank()) {
    return KernelError(ctx,
                       "Expected begin and size arguments to be 1-D tensors of size %d, but got "
                       "shapes %s and %s instead; pass one entry per input dimension",
                       in.rank(), ctx.input(1).ShapeString(), ctx.input(2).ShapeString());
  }
  for (int d = 0; d < in.rank(); ++d) {
    const size_t k = static_cast<size_t>(d);
    if (begin[k] < 0 || begin[k] > in.dim(d)) {
      return KernelError(ctx, "Expected begin[%d] in [0, %d], but got %d (input is %s)", d,
                         in.dim(d), begin[k], in.ShapeString());
    }
    if (size[k] == -1) size[k] = in.dim(d) - begin[k];
    if (size[k] < 0 || begin[k] + size[k] > in.dim(d)) {
      return KernelError(ctx,
                         "Expected size[%d] in [0, %d], but got %d (input is %s); use -1 for "
                         "\"to the end\"",
                         d, in.dim(d) - begin[k], size[k], in.ShapeString());
    }
  }
  ctx.set_output(0, SliceBox(ctx, in, begin, size));
  return absl::OkStatus();
}

// ---- StridedSlice ----

// One dim of the dense spec after the sparse spec's ellipsis and new axes are expanded.
struct DenseDim {
  int64_t begin = 0, end = 0, stride = 1;
  bool begin_masked = false, end_masked = false, shrink = false;
};
struct StridedSpec {
  std::vector<DenseDim> dims;    // one per input dim
  std::vector<int> final_shape;  // dense dim per output dim; -1 = new axis of size 1
};

struct SparseSpec {
  std::vector<int64_t> begin, end, strides;
  int64_t begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask;
};

// TF's BuildDenseSpec: a missing ellipsis is implied at the end; the ellipsis covers the
// input dims the other (non-new-axis) entries do not name.
absl::StatusOr<StridedSpec> BuildDenseSpec(const KernelContext& ctx, const SparseSpec& s,
                                           int rank) {
  const int n = static_cast<int>(s.begin.size());
  int64_t ellipsis = s.ellipsis_mask;
  int sparse_dims = n;
  if ((ellipsis & (ellipsis - 1)) != 0) {
    return KernelError(ctx, "Multiple ellipses in slice spec not allowed (ellipsis_mask %d)",
                       ellipsis);
  }
  if (ellipsis == 0) ellipsis = int64_t{1} << sparse_dims++;
  int new_axes_after_ellipsis = 0;
  for (int i = n - 1; i >= 0 && !((ellipsis >> i) & 1); --i) {
    if ((s.new_axis_mask >> i) & 1) ++new_axes_after_ellipsis;
  }
  StridedSpec spec;
  spec.dims.resize(static_cast<size_t>(rank));
  int full = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    if ((ellipsis >> i) & 1) {
      const int next = std::min(rank - (sparse_dims - i) + 1 + new_axes_after_ellipsis, rank);
      for (; full < next; ++full) {
        spec.dims[static_cast<size_t>(full)] = {0, 0, 1, true, true, false};
        spec.final_shape.push_back(full);
      }
    } else if ((s.new_axis_mask >> i) & 1) {
      spec.final_shape.push_back(-1);
    } else {
      if (full >= rank) {
        return KernelError(ctx,
                           "Index out of range using input dim %d; input has only %d dims; "
                           "the slice spec names more dimensions than the input has",
                           full, rank);
      }
      const size_t k = static_cast<size_t>(i);
      DenseDim& d = spec.dims[static_cast<size_t>(full)];
      d = {s.begin[k],
           s.end[k],
           s.strides[k],
           ((s.begin_mask >> i) & 1) != 0,
           ((s.end_mask >> i) & 1) != 0,
           ((s.shrink_mask >> i) & 1) != 0};
      if (!d.shrink) spec.final_shape.push_back(full);
      ++full;
    }
  }
  return spec;
}

// Canonicalises one dense dim against extent n (Python slice rules, clamped); returns the
// number of elements it selects.
absl::StatusOr<int64_t> CanonicalDim(const KernelContext& ctx, int dim, int64_t n, DenseDim& d) {
  if (d.stride == 0) return KernelError(ctx, "strides[%d] must be non-zero", dim);
  if (d.shrink) {
    const int64_t x = d.begin < 0 ? d.begin + n : d.begin;
    if (x < 0 || x >= n) {
      return KernelError(ctx,
                         "slice index %d of dimension %d out of bounds (the dimension has size "
                         "%d)",
                         d.begin, dim, n);
    }
    d.begin = x;
    d.stride = 1;  // a[i] picks element i whatever the stride
    return 1;
  }
  const bool fwd = d.stride > 0;
  auto canon = [&](int64_t v, bool masked, bool is_begin) {
    if (masked) {
      if (is_begin) return fwd ? int64_t{0} : n - 1;
      return fwd ? n : int64_t{-1};
    }
    if (v < 0) v += n;
    return fwd ? std::clamp<int64_t>(v, 0, n) : std::clamp<int64_t>(v, -1, n - 1);
  };
  d.begin = canon(d.begin, d.begin_masked, true);
  d.end = canon(d.end, d.end_masked, false);
  const int64_t span = fwd ? d.end - d.begin : d.begin - d.end;
  if (span <= 0) return 0;
  const int64_t step = fwd ? d.stride : -d.stride;
  return (span + step - 1) / step;
}

absl::StatusOr<SparseSpec> ReadSparseSpec(const KernelContext& ctx) {
  SparseSpec s;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "begin", &s.begin));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(2), "end", &s.end));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(3), "strides", &s.strides));
  if (ctx.input(1).rank() != 1 || s.end.size() != s.begin.size() ||
      s.strides.size() != s.begin.size() || ctx.input(2).rank() != 1 || ctx.input(3).rank() != 1) {
    return KernelError(ctx,
                       "Expected begin, end, and strides to be 1D equal size tensors, but got "
                       "shapes %s, %s, and %s instead",
                       ctx.input(1).ShapeString(), ctx.input(2).ShapeString(),
                       ctx.input(3).ShapeString());
  }
  const tf::Node& node = ctx.node();
  TFJIT_ASSIGN_OR_RETURN(s.begin_mask, tf::GetIntAttrOr(node, "begin_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(s.end_mask, tf::GetIntAttrOr(node, "end_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(s.ellipsis_mask, tf::GetIntAttrOr(node, "ellipsis_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(s.new_axis_mask, tf::GetIntAttrOr(node, "new_axis_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(s.shrink_mask, tf::GetIntAttrOr(node, "shrink_axis_mask", 0));
  return s;
}

absl::Status StridedSliceKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(SparseSpec sparse, ReadSparseSpec(ctx));
  TFJIT_ASSIGN_OR_RETURN(StridedSpec spec, BuildDenseSpec(ctx, sparse, in.rank()));
  const std::vector<int64_t> strides = RowStrides(in.dims());
  std::vector<std::vector<int64_t>> offsets;
  std::vector<int64_t> processing_dims;
  for (int d = 0; d < in.rank(); ++d) {
    DenseDim& dim = spec.dims[static_cast<size_t>(d)];
    TFJIT_ASSIGN_OR_RETURN(int64_t size, CanonicalDim(ctx, d, in.dim(d), dim));
    processing_dims.push_back(size);
    offsets.push_back(StepOffsets(dim.begin, dim.stride, size, strides[static_cast<size_t>(d)]));
  }
  std::vector<int64_t> final_dims;
  for (int src : spec.final_shape) {
    final_dims.push_back(src < 0 ? 1 : processing_dims[static_cast<size_t>(src)]);
  }
  Tensor out(in.dtype(), processing_dims);
  GatherByOffsets(ctx, in, offsets, nullptr, out);
  ctx.set_output(0, out.Reshaped(final_dims));
  return absl::OkStatus();
}

// ---- Split, SplitV, Unpack ----

// Sets output k to the slice [starts[k], starts[k] + sizes[k]) of `in` along `axis`.
void EmitSplits(KernelContext& ctx, const Tensor& in, int64_t axis,
                const std::vector<int64_t>& sizes) {
  std::vector<int64_t> begin(static_cast<size_t>(in.rank()), 0);
  std::vector<int64_t> size = in.dims();
  int64_t start = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    begin[static_cast<size_t>(axis)] = start;
    size[static_cast<size_t>(axis)] = sizes[k];
    ctx.set_output(static_cast<int>(k), SliceBox(ctx, in, begin, size));
    start += sizes[k];
  }
}

// Reads a scalar split_dim and canonicalises it against `in`.
absl::StatusOr<int64_t> SplitAxis(const KernelContext& ctx, const Tensor& dim_t, const Tensor& in) {
  std::vector<int64_t> v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, dim_t, "split_dim", &v));
  if (dim_t.rank() != 0) {
    return KernelError(ctx, "split_dim must be a scalar, got %s", dim_t.ShapeString());
  }
  int64_t axis;
  TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, v[0], in.rank(), &axis));
  return axis;
}

absl::Status SplitKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, SplitAxis(ctx, ctx.input(0), in));
  const int n = ctx.node().num_outputs();
  const int64_t dim = in.dim(static_cast<int>(axis));
  if (n <= 0 || dim % n != 0) {
    return KernelError(ctx,
                       "Number of ways to split should evenly divide the split dimension, but "
                       "got split_dim %d (size = %d) and num_split %d",
                       axis, dim, n);
  }
  EmitSplits(ctx, in, axis, std::vector<int64_t>(static_cast<size_t>(n), dim / n));
  return absl::OkStatus();
}

absl::Status SplitVKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, SplitAxis(ctx, ctx.input(2), in));
  std::vector<int64_t> sizes;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "size_splits", &sizes));
  const int n = ctx.node().num_outputs();
  if (static_cast<int>(sizes.size()) != n) {
    return KernelError(ctx, "size_splits has %d entries but num_split is %d; they must match",
                       sizes.size(), n);
  }
  const int64_t dim = in.dim(static_cast<int>(axis));
  int64_t known = 0, unknown = -1;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] == -1) {
      if (unknown >= 0) return KernelError(ctx, "There can only be one -1 in the input.");
      unknown = static_cast<int64_t>(k);
    } else if (sizes[k] < 0) {
      return KernelError(ctx, "size_splits[%d] = %d must be non-negative or -1", k, sizes[k]);
    } else {
      known += sizes[k];
    }
  }
  if ((unknown < 0 && known != dim) || (unknown >= 0 && known > dim)) {
    return KernelError(ctx,
                       "Determined shape must either match input shape along split_dim exactly "
                       "if fully specified, or be less than the size of the input along "
                       "split_dim if not fully specified.  Got: %d (split_dim %d of %s, "
                       "size_splits [%s])",
                       known, axis, in.ShapeString(), absl::StrJoin(sizes, ","));
  }
  if (unknown >= 0) sizes[static_cast<size_t>(unknown)] = dim - known;
  EmitSplits(ctx, in, axis, sizes);
  return absl::OkStatus();
}

absl::Status UnpackKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(int64_t axis_attr, tf::GetIntAttrOr(ctx.node(), "axis", 0));
  int64_t axis;
  TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, axis_attr, in.rank(), &axis));
  const int n = ctx.node().num_outputs();
  if (in.dim(static_cast<int>(axis)) != n) {
    return KernelError(ctx, "Input shape axis %d must equal %d, got shape %s", axis, n,
                       in.ShapeString());
  }
  std::vector<int64_t> out_dims = in.dims();
  out_dims.erase(out_dims.begin() + axis);
  std::vector<int64_t> slice_dims = in.dims();
  slice_dims[static_cast<size_t>(axis)] = 1;
  const std::vector<int64_t> strides = RowStrides(in.dims());
  for (int k = 0; k < n; ++k) {
    std::vector<std::vector<int64_t>> offsets;
    for (int d = 0; d < in.rank(); ++d) {
      const int64_t stride = strides[static_cast<size_t>(d)];
      offsets.push_back(d == axis ? StepOffsets(k, 1, 1, stride)
                                  : StepOffsets(0, 1, in.dim(d), stride));
    }
    Tensor out(in.dtype(), slice_dims);
    GatherByOffsets(ctx, in, offsets, nullptr, out);
    ctx.set_output(k, out.Reshaped(out_dims));
  }
  return absl::OkStatus();
}

// Concat (v1): concat_dim comes first; runs ConcatV2 on the reordered inputs.
absl::Status ConcatKernel(KernelContext& ctx) {
  if (ctx.num_inputs() < 2) {
    return KernelError(ctx, "Concat needs concat_dim and at least one value; got %d inputs",
                       ctx.num_inputs());
  }
  std::vector<Tensor> inputs;
  for (int i = 1; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
  inputs.push_back(ctx.input(0));
  KernelContext v2(ctx.node(), inputs, ctx.pool());
  TFJIT_RETURN_IF_ERROR(ConcatV2Kernel(v2));
  ctx.set_output(0, std::move(v2.outputs()[0]));
  return absl::OkStatus();
}

}  // namespace

void RegisterSliceKernels(KernelRegistry& registry) {
  registry.Register("Slice", &SliceKernel);
  registry.Register("StridedSlice", &StridedSliceKernel);
  registry.Register("Split", &SplitKernel);
  registry.Register("SplitV", &SplitVKernel);
  registry.Register("Unpack", &UnpackKernel);
  registry.Register("Concat", &ConcatKernel);
}

}  // namespace tfjit::runtime
