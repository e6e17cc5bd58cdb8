// Slicing kernels: Slice, StridedSlice (all five masks, TF's dense-spec expansion), the
// strided-slice assignments (TensorStridedSliceUpdate, ResourceStridedSliceAssign,
// StridedSliceAssign on TF1 references), Split, SplitV, Unpack and Concat (v1, forwarded to
// ConcatV2). Every dtype is supported (data
// movement by element width).
#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/attr.h"
#include "runtime/kernels/gather_util.h"
#include "runtime/resource_mgr.h"

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

// ---- StridedSlice and the strided-slice assignments ----

absl::Status StridedSliceKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(tf::StridedPlan plan, PlanStridedSliceInputs(ctx, in.dims()));
  Tensor out(in.dtype(), StridedProcessingDims(plan));
  GatherByOffsets(ctx, in, StridedSliceOffsets(plan, in.dims()), nullptr, out);
  ctx.set_output(0, out.Reshaped(plan.final_dims));
  return absl::OkStatus();
}

// `value` written over the strided slice of a copy of `old`, with TF's checks: the value's
// shape must be the slice's final shape exactly (TF does not broadcast here) unless the slice
// is empty.
absl::StatusOr<Tensor> AssignSlice(const KernelContext& ctx, const Tensor& old,
                                   const Tensor& value) {
  if (old.dtype() != value.dtype()) {
    return KernelError(ctx, "l-value dtype %s does not match r-value dtype %s",
                       DTypeName(old.dtype()), DTypeName(value.dtype()));
  }
  if (DTypeSize(old.dtype()) == 0) {
    return UnsupportedDType(ctx, old.dtype(), "numeric types and bool");
  }
  TFJIT_ASSIGN_OR_RETURN(tf::StridedPlan plan, PlanStridedSliceInputs(ctx, old.dims()));
  Tensor next = old.Clone();
  const std::vector<int64_t> processing = StridedProcessingDims(plan);
  int64_t count = 1;
  for (int64_t d : processing) count *= d;
  if (count == 0) return next;
  if (value.dims() != plan.final_dims) {
    const tf::Node& node = ctx.node();
    return AttachNode(Unimplemented("node '%s' (%s): sliced l-value shape %s does not match "
                                    "r-value shape %s. Automatic broadcasting not yet "
                                    "implemented.",
                                    node.name(), node.op(), DimsString(plan.final_dims),
                                    DimsString(value.dims())),
                      node.name(), node.op());
  }
  ScatterByOffsets(value.Reshaped(processing), StridedSliceOffsets(plan, old.dims()), next);
  return next;
}

// TensorStridedSliceUpdate: output = input with the slice replaced by value.
absl::Status TensorStridedSliceUpdateKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 5));
  TFJIT_ASSIGN_OR_RETURN(Tensor next, AssignSlice(ctx, ctx.input(0), ctx.input(4)));
  ctx.set_output(0, std::move(next));
  return absl::OkStatus();
}

// ResourceStridedSliceAssign (no output) and StridedSliceAssign (a TF1 reference; outputs the
// new value, as TF forwards the ref): the variable's slice replaced by value, atomically.
absl::Status StridedSliceAssignKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 5));
  TFJIT_ASSIGN_OR_RETURN(VarTarget target, VariableTarget(ctx, 0));
  std::lock_guard<std::mutex> lock(target.var->update_mu());
  TFJIT_ASSIGN_OR_RETURN(Tensor old, InitializedValue(target));
  TFJIT_ASSIGN_OR_RETURN(Tensor next, AssignSlice(ctx, old, ctx.input(4)));
  target.var->Set(next);
  if (ctx.node().num_outputs() > 0) ctx.set_output(0, next);
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
  registry.Register("TensorStridedSliceUpdate", &TensorStridedSliceUpdateKernel);
  registry.Register("ResourceStridedSliceAssign", &StridedSliceAssignKernel);
  registry.Register("StridedSliceAssign", &StridedSliceAssignKernel);
  registry.Register("Split", &SplitKernel);
  registry.Register("SplitV", &SplitVKernel);
  registry.Register("Unpack", &UnpackKernel);
  registry.Register("Concat", &ConcatKernel);
}

}  // namespace tfjit::runtime
