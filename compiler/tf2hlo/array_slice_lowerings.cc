// Lowerings of TF's slicing, splitting, gathering, padding and tiling ops: Slice,
// StridedSlice and its assignments (TensorStridedSliceUpdate, ResourceStridedSliceAssign), Split,
// SplitV, Unpack, GatherV2/Gather/ResourceGather, OneHot, Tile, Pad, PadV2, MirrorPad, ReverseV2.
// Shape arguments are compile-time constants (known issue F).
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/dynamic_sizes.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/strided_slice_rule.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

absl::StatusOr<int64_t> Axis(const tf::Node& node, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    return InvalidArgument("node %s: axis %d is out of range for rank %d; expected [-%d, %d)",
                           node.DebugName(), axis, rank, rank, rank);
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<int64_t> ScalarConstant(LoweringContext& ctx, const tf::Node& node, int i) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.ConstantInputAsInts(node, i));
  if (v.size() != 1) {
    return InvalidArgument("node %s: input %d must be a scalar, got %d values", node.DebugName(), i,
                           v.size());
  }
  return v[0];
}

// x[start:start+size] along `dim` (stride 1), every other dim whole.
absl::StatusOr<Instruction*> SliceDimension(LoweringContext& ctx, Instruction* x, int64_t dim,
                                            int64_t start, int64_t size) {
  std::vector<hlo::SliceDim> s;
  for (int64_t d : x->shape().dims()) s.push_back({0, d, 1});
  s[static_cast<size_t>(dim)] = {start, start + size, 1};
  return ctx.b().Slice(x, s);
}

// Slice(input, begin, size): size -1 means "to the end".
absl::Status LowerSlice(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> begin, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ctx.ConstantInputAsInts(node, 2));
  const hlo::Shape& shape = x->shape();
  const size_t rank = static_cast<size_t>(shape.rank());
  if (begin.size() != rank || size.size() != rank) {
    return InvalidArgument(
        "node %s: Expected begin and size arguments to be 1-D tensors of "
        "size %d, but got %d and %d values instead",
        node.DebugName(), rank, begin.size(), size.size());
  }
  std::vector<hlo::SliceDim> s(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = shape.dim(static_cast<int>(d));
    const int64_t b = begin[d];
    const int64_t n = size[d] == -1 ? dim - b : size[d];
    if (b < 0 || b > dim) {
      return InvalidArgument("node %s: Expected begin[%d] in [0, %d], but got %d", node.DebugName(),
                             d, dim, b);
    }
    if (n < 0 || b + n > dim) {
      return InvalidArgument("node %s: Expected size[%d] in [0, %d], but got %d", node.DebugName(),
                             d, dim - b, n);
    }
    s[d] = {b, b + n, 1};
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Slice(x, s));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// begin/end/strides (inputs 1-3, compile-time constants) and the masks, planned by TF's rule
// (frontend/strided_slice_rule.h, shared with the kernels) for a value of dims `shape`.
absl::StatusOr<tf::StridedPlan> PlanStridedSliceNode(LoweringContext& ctx, const tf::Node& node,
                                                     const std::vector<int64_t>& shape) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> begin, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> end, ctx.ConstantInputAsInts(node, 2));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, ctx.ConstantInputAsInts(node, 3));
  if (end.size() != begin.size() || strides.size() != begin.size()) {
    return InvalidArgument(
        "node %s: Expected begin, end, and strides to be 1D equal size "
        "tensors, but got %d, %d and %d values",
        node.DebugName(), begin.size(), end.size(), strides.size());
  }
  TFJIT_ASSIGN_OR_RETURN(tf::StridedMasks masks, tf::GetStridedMasks(node));
  tf::StridedPlan plan;
  const std::string error = tf::PlanStridedSlice(shape, begin, end, strides, masks, &plan);
  if (!error.empty()) return InvalidArgument("node %s: %s", node.DebugName(), error);
  return plan;
}

// StridedSlice => reverse (dims with negative strides) + slice + reshape (new/shrunk axes).
absl::Status LowerStridedSlice(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const std::vector<int64_t>& dims = x->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(tf::StridedPlan plan, PlanStridedSliceNode(ctx, node, dims));
  std::vector<hlo::SliceDim> slice(dims.size());
  std::vector<int64_t> reversed;
  for (size_t d = 0; d < dims.size(); ++d) {
    const tf::StridedDimPlan& p = plan.dims[d];
    int64_t start = p.begin, step = p.stride;
    if (step < 0) {  // in the reversed dim, element b sits at dim - 1 - b
      reversed.push_back(static_cast<int64_t>(d));
      start = dims[d] - 1 - p.begin;
      step = -step;
    }
    slice[d] = p.size == 0 ? hlo::SliceDim{0, 0, 1}
                           : hlo::SliceDim{start, start + (p.size - 1) * step + 1, step};
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ReverseDims(ctx, x, reversed));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Slice(r, slice));
  if (plan.final_dims != r->shape().dims()) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, plan.final_dims));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// `old` with the planned strided slice replaced by `value` (of the slice's final shape): the
// value placed by PlaceStridedSlice, selected where a placed all-true mask is set.
absl::StatusOr<Instruction*> AssignStridedSlice(LoweringContext& ctx, const tf::Node& node,
                                                Instruction* old, Instruction* value,
                                                const tf::StridedPlan& plan) {
  const std::vector<int64_t>& dims = old->shape().dims();
  int64_t count = 1;
  for (const tf::StridedDimPlan& p : plan.dims) count *= p.size;
  if (count == 0) return old;
  if (value->shape().dims() != plan.final_dims) {
    return Unimplemented(
        "node %s: sliced l-value shape [%s] does not match r-value shape [%s]. "
        "Automatic broadcasting not yet implemented.",
        node.DebugName(), absl::StrJoin(plan.final_dims, ","),
        absl::StrJoin(value->shape().dims(), ","));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * placed, PlaceStridedSlice(ctx, value, plan, dims));
  std::vector<int64_t> processing;
  for (const tf::StridedDimPlan& p : plan.dims) processing.push_back(p.size);
  TFJIT_ASSIGN_OR_RETURN(
      Instruction * taken,
      ctx.b().Broadcast(ctx.b().ScalarConstant<bool>(DType::kBool, true), processing, {}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mask, PlaceStridedSlice(ctx, taken, plan, dims));
  return ctx.b().Select(mask, placed, old);
}

// TensorStridedSliceUpdate(input, begin, end, strides, value): input with the slice replaced.
absl::Status LowerTensorStridedSliceUpdate(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * value, ctx.Input(node, 4));
  TFJIT_ASSIGN_OR_RETURN(tf::StridedPlan plan, PlanStridedSliceNode(ctx, node, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, AssignStridedSlice(ctx, node, x, value, plan));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ResourceStridedSliceAssign(ref, begin, end, strides, value): the variable's slice replaced.
absl::Status LowerResourceStridedSliceAssign(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, 0));
  if (var->value == nullptr) return VariableNotFoundError(var->container, var->name);
  TFJIT_ASSIGN_OR_RETURN(Instruction * value, ctx.Input(node, 4));
  if (value->shape().element_type() != var->dtype) {
    return InvalidArgument("node %s: l-value dtype %s does not match r-value dtype %s",
                           node.DebugName(), DTypeName(var->dtype),
                           DTypeName(value->shape().element_type()));
  }
  TFJIT_ASSIGN_OR_RETURN(tf::StridedPlan plan,
                         PlanStridedSliceNode(ctx, node, var->value->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(var->value, AssignStridedSlice(ctx, node, var->value, value, plan));
  var->written = true;
  return absl::OkStatus();
}

// Split(split_dim, value): num_split equal pieces along split_dim.
absl::Status LowerSplit(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(int64_t axis_v, ScalarConstant(ctx, node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, Axis(node, axis_v, x->shape().rank()));
  const int64_t n = node.num_outputs();
  const int64_t dim = x->shape().dim(static_cast<int>(axis));
  if (n <= 0 || dim % n != 0) {
    return InvalidArgument(
        "node %s: Number of ways to split should evenly divide the split "
        "dimension, but got split_dim %d (size = %d) and num_split %d",
        node.DebugName(), axis, dim, n);
  }
  for (int64_t i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * piece,
                           SliceDimension(ctx, x, axis, i * (dim / n), dim / n));
    ctx.SetOutput(node, static_cast<int>(i), piece);
  }
  return absl::OkStatus();
}

// SplitV(value, size_splits, split_dim): pieces of the given sizes; one size may be -1.
absl::Status LowerSplitV(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(int64_t axis_v, ScalarConstant(ctx, node, 2));
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, Axis(node, axis_v, x->shape().rank()));
  const int64_t dim = x->shape().dim(static_cast<int>(axis));
  if (static_cast<int>(sizes.size()) != node.num_outputs()) {
    return InvalidArgument("node %s: size_splits has %d values but num_split is %d",
                           node.DebugName(), sizes.size(), node.num_outputs());
  }
  int64_t known = 0;
  int unknown = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (unknown >= 0) {
        return InvalidArgument("node %s: There can only be one -1 in the input.", node.DebugName());
      }
      unknown = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      return InvalidArgument("node %s: Split size at index %d must be >= 0. Got: %d",
                             node.DebugName(), i, sizes[i]);
    } else {
      known += sizes[i];
    }
  }
  if ((unknown < 0 && known != dim) || (unknown >= 0 && known > dim)) {
    return InvalidArgument(
        "node %s: Determined shape must either match input shape along "
        "split_dim exactly if fully specified, or be less than the size of "
        "the input along split_dim if not fully specified.  Got: %d",
        node.DebugName(), known);
  }
  if (unknown >= 0) sizes[static_cast<size_t>(unknown)] = dim - known;
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * piece, SliceDimension(ctx, x, axis, start, sizes[i]));
    ctx.SetOutput(node, static_cast<int>(i), piece);
    start += sizes[i];
  }
  return absl::OkStatus();
}

// Unpack(value, num, axis): output i = value[..., i, ...] with `axis` removed.
absl::Status LowerUnpack(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(int64_t axis_v, tf::GetIntAttrOr(node, "axis", 0));
  const hlo::Shape& shape = x->shape();
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, Axis(node, axis_v, shape.rank()));
  const int64_t n = node.num_outputs();
  if (shape.dim(static_cast<int>(axis)) != n) {
    return InvalidArgument("node %s: Input shape axis %d must equal %d, got shape %s",
                           node.DebugName(), axis, n, shape.ToString());
  }
  std::vector<int64_t> out_dims = shape.dims();
  out_dims.erase(out_dims.begin() + axis);
  for (int64_t i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * piece, SliceDimension(ctx, x, axis, i, 1));
    TFJIT_ASSIGN_OR_RETURN(piece, ctx.b().Reshape(piece, out_dims));
    ctx.SetOutput(node, static_cast<int>(i), piece);
  }
  return absl::OkStatus();
}

// params gathered along `axis` at `indices` (batch_dims = 0): output shape
// params[:axis] + indices + params[axis+1:]. HLO's gather clamps out-of-range indices where
// TF's CPU kernel fails: compile-time-constant indices are checked here (a bad one is a
// compile error naming the node); others get a run-time check (LoweringContext::AddIndexCheck)
// that fails the run with the kernel's message. Inside loop/branch bodies, where no run-time
// check can be returned, indices must still be constants (UNIMPLEMENTED otherwise).
absl::StatusOr<Instruction*> EmitGather(LoweringContext& ctx, const tf::Node& node,
                                        Instruction* params, int indices_input, int64_t axis) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, ctx.Input(node, indices_input));
  const hlo::Shape& ps = params->shape();
  const int64_t limit = ps.dim(static_cast<int>(axis));
  absl::StatusOr<Tensor> known = ctx.ConstantInput(node, indices_input);
  if (known.ok()) {
    for (int64_t k = 0; k < known->num_elements(); ++k) {
      const int64_t v = ElementAsInt64(*known, k);
      if (v < 0 || v >= limit) {
        return InvalidArgument("node %s: indices[%d] = %d is not in [0, %d)", node.DebugName(), k,
                               v, limit);
      }
    }
  } else if (!ctx.CanAddRuntimeChecks()) {
    return Unimplemented(
        "node %s: %s inside a loop or conditional body compiles only with "
        "compile-time-constant indices (HLO gather clamps out-of-range "
        "indices where TF's kernel fails)",
        node.DebugName(), node.op());
  } else {
    // The kernels' messages: GatherV2/Gather name the multi-index, ResourceGather the flat one.
    const bool flat = node.op() == "ResourceGather";
    TFJIT_RETURN_IF_ERROR(ctx.AddIndexCheck(
        node, indices, {limit}, absl::StrCat("indices{pos} = {value} is not in [0, ", limit, ")"),
        flat, indices->shape().dims(), /*vector_value=*/false, axis == 0 ? params : nullptr));
  }
  const hlo::Shape& is = indices->shape();
  std::vector<int64_t> out_dims(ps.dims().begin(), ps.dims().begin() + axis);
  out_dims.insert(out_dims.end(), is.dims().begin(), is.dims().end());
  out_dims.insert(out_dims.end(), ps.dims().begin() + axis + 1, ps.dims().end());
  int64_t count = 1;
  for (int64_t d : out_dims) count *= d;
  if (count == 0) return ctx.Splat(ps.element_type(), 0.0, out_dims);
  hlo::Attributes attrs;
  hlo::GatherDims& g = attrs.gather;
  g.index_vector_dim = is.rank();
  g.start_index_map = {axis};
  g.collapsed_slice_dims = {axis};
  g.slice_sizes = ps.dims();
  g.slice_sizes[static_cast<size_t>(axis)] = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(out_dims.size()); ++d) {
    if (d < axis || d >= axis + is.rank()) g.offset_dims.push_back(d);
  }
  return ctx.b().Add(Opcode::kGather, {params, indices}, std::move(attrs));
}

absl::Status LowerGatherV2(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * params, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(int64_t axis_v, ScalarConstant(ctx, node, 2));
  if (params->shape().rank() < 1) {
    return InvalidArgument("node %s: params must be at least 1 dimensional", node.DebugName());
  }
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, Axis(node, axis_v, params->shape().rank()));
  const DynamicDim* padded_params = ctx.DynamicInput(node, 0);
  const DynamicDim* padded_indices = ctx.DynamicInput(node, 1);
  if (padded_params == nullptr && padded_indices == nullptr) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * r, EmitGather(ctx, node, params, 1, axis));
    ctx.SetOutput(node, 0, r);
    return absl::OkStatus();
  }
  // Padded operands (dynamic_sizes.h). Padding rows of the indices become 0 (the real rows
  // alone are range-checked, as TF's kernel sees only them) and pad the output on; indices
  // into a padded params dim are checked against its run-time size; a padded params dim
  // elsewhere pads the output on.
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, ctx.Input(node, 1));
  const int irank = indices->shape().rank();
  std::optional<DynamicDim> out;
  Instruction* real_rows = nullptr;  // pred: the index is a real one
  if (padded_indices != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(indices->shape().element_type(), 0.0, {}));
    TFJIT_ASSIGN_OR_RETURN(
        indices, MaskBeyond(ctx, indices, padded_indices->dim, padded_indices->size, zero));
    out = DynamicDim{static_cast<int>(axis) + padded_indices->dim, padded_indices->size};
    TFJIT_ASSIGN_OR_RETURN(
        Instruction * iota,
        ctx.b().Iota(hlo::Shape(DType::kInt64, indices->shape().dims()), padded_indices->dim));
    TFJIT_ASSIGN_OR_RETURN(Instruction * count, ctx.SizeValue(padded_indices->size));
    TFJIT_ASSIGN_OR_RETURN(count, ctx.b().Broadcast(count, indices->shape().dims(), {}));
    TFJIT_ASSIGN_OR_RETURN(real_rows, ctx.b().Compare(hlo::ComparisonDirection::kLt, iota, count));
  }
  if (padded_params != nullptr && padded_params->dim == axis) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * wide, ctx.b().Convert(indices, DType::kInt64));
    TFJIT_ASSIGN_OR_RETURN(Instruction * size, ctx.SizeValue(padded_params->size));
    TFJIT_ASSIGN_OR_RETURN(size, ctx.b().Broadcast(size, indices->shape().dims(), {}));
    TFJIT_ASSIGN_OR_RETURN(Instruction * bad,
                           ctx.b().Compare(hlo::ComparisonDirection::kGe, wide, size));
    if (real_rows != nullptr) {
      TFJIT_ASSIGN_OR_RETURN(bad, ctx.b().Binary(Opcode::kAnd, bad, real_rows));
    }
    TFJIT_RETURN_IF_ERROR(
        ctx.AddConditionCheck(node, bad,
                              absl::StrCat("indices are not in [0, n), n the run-time size of dim ",
                                           axis, " of params (a padded value, at most ",
                                           params->shape().dim(static_cast<int>(axis)), ")")));
  } else if (padded_params != nullptr) {
    if (out.has_value()) {
      return Unimplemented(
          "node %s: params and indices both have a size known only at run "
          "time, in different output dims",
          node.DebugName());
    }
    const int d = padded_params->dim;
    out = DynamicDim{d < axis ? d : d + irank - 1, padded_params->size};
  }
  ctx.OverrideInputs(node, {nullptr, indices});
  absl::StatusOr<Instruction*> r = EmitGather(ctx, node, params, 1, axis);
  ctx.ClearInputOverride();
  if (!r.ok()) return r.status();
  ctx.SetOutput(node, 0, *r);
  if (out.has_value()) ctx.SetDynamic({const_cast<tf::Node*>(&node), 0}, *out);
  return absl::OkStatus();
}

absl::Status LowerGather(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * params, ctx.Input(node, 0));
  if (params->shape().rank() < 1) {
    return InvalidArgument("node %s: params must be at least 1 dimensional", node.DebugName());
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, EmitGather(ctx, node, params, 1, 0));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerResourceGather(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, 0));
  if (var->value == nullptr) return VariableNotFoundError(var->container, var->name);
  if (var->value->shape().rank() < 1) {
    return InvalidArgument("node %s: params must be at least 1 dimensional", node.DebugName());
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, EmitGather(ctx, node, var->value, 1, 0));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

bool BatchDimsZero(const tf::Node& node, std::string* why) {
  if (tf::GetIntAttrOr(node, "batch_dims", 0).value_or(1) == 0) return true;
  *why = absl::StrCat("op ", node.op(), " is compiled only with batch_dims=0");
  return false;
}

// OneHot(indices, depth, on, off, axis): indices == iota along the new axis ? on : off;
// negative or too-large indices give a row of `off`, as in TF.
absl::Status LowerOneHot(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(int64_t depth, ScalarConstant(ctx, node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * on, ctx.Input(node, 2));
  TFJIT_ASSIGN_OR_RETURN(Instruction * off, ctx.Input(node, 3));
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, tf::GetIntAttrOr(node, "axis", -1));
  const hlo::Shape& is = indices->shape();
  if (axis < -1 || axis > is.rank()) {
    return InvalidArgument(
        "node %s: Expected axis to be -1 or between [0, %d).  But received: "
        "%d",
        node.DebugName(), is.rank() + 1, axis);
  }
  if (depth < 0) {
    return InvalidArgument("node %s: depth must be non-negative, got: %d", node.DebugName(), depth);
  }
  if (on->shape().rank() != 0 || off->shape().rank() != 0) {
    return InvalidArgument("node %s: on_value and off_value must be scalars", node.DebugName());
  }
  if (axis == -1) axis = is.rank();
  std::vector<int64_t> out_dims = is.dims();
  out_dims.insert(out_dims.begin() + axis, depth);
  std::vector<int64_t> mapping;
  for (int64_t d = 0; d < static_cast<int64_t>(out_dims.size()); ++d) {
    if (d != axis) mapping.push_back(d);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * ib, ctx.b().Broadcast(indices, out_dims, mapping));
  TFJIT_ASSIGN_OR_RETURN(Instruction * iota,
                         ctx.b().Iota(hlo::Shape(is.element_type(), out_dims), axis));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hit,
                         ctx.b().Compare(hlo::ComparisonDirection::kEq, ib, iota));
  TFJIT_ASSIGN_OR_RETURN(Instruction * onb, ctx.b().Broadcast(on, out_dims, {}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * offb, ctx.b().Broadcast(off, out_dims, {}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(hit, onb, offb));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Tile(x, multiples) => reshape(broadcast(x to [m0, d0, m1, d1, ...])).
absl::Status LowerTile(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> multiples, ctx.ConstantInputAsInts(node, 1));
  const hlo::Shape& shape = x->shape();
  if (static_cast<int>(multiples.size()) != shape.rank()) {
    return InvalidArgument(
        "node %s: Expected multiples argument to be a vector of length %d "
        "but got length %d",
        node.DebugName(), shape.rank(), multiples.size());
  }
  std::vector<int64_t> wide, mapping, out;
  for (int d = 0; d < shape.rank(); ++d) {
    const int64_t m = multiples[static_cast<size_t>(d)];
    if (m < 0) {
      return InvalidArgument("node %s: Expected multiples[%d] >= 0, but got %d", node.DebugName(),
                             d, m);
    }
    wide.push_back(m);
    wide.push_back(shape.dim(d));
    mapping.push_back(2 * d + 1);
    out.push_back(m * shape.dim(d));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Broadcast(x, wide, mapping));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, out));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// The [rank, 2] paddings matrix of Pad/PadV2/MirrorPad as (before, after) pairs.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> Paddings(LoweringContext& ctx,
                                                                  const tf::Node& node, int rank) {
  TFJIT_ASSIGN_OR_RETURN(Tensor t, ctx.ConstantInput(node, 1));
  if (t.rank() != 2 || t.dim(0) != rank || t.dim(1) != 2) {
    return InvalidArgument(
        "node %s: The first dimension of paddings must be the rank of "
        "inputs [%d, 2], got %s",
        node.DebugName(), rank, t.ShapeString());
  }
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (int d = 0; d < rank; ++d) {
    const int64_t lo = ElementAsInt64(t, 2 * d), hi = ElementAsInt64(t, 2 * d + 1);
    if (lo < 0 || hi < 0) {
      return InvalidArgument("node %s: Paddings must be non-negative: %d %d", node.DebugName(), lo,
                             hi);
    }
    pads.push_back({lo, hi});
  }
  return pads;
}

}  // namespace

absl::StatusOr<Instruction*> PadConstantValue(LoweringContext& ctx, const tf::Node& node,
                                              DType type) {
  if (node.num_inputs() <= 2) return ctx.Splat(type, 0.0, {});
  TFJIT_ASSIGN_OR_RETURN(Instruction * value, ctx.Input(node, 2));
  if (value->shape().rank() != 0) {
    return InvalidArgument("node %s: constant_values must be a scalar, got %s", node.DebugName(),
                           value->shape().ToString());
  }
  return value;
}

namespace {

// Pad(x, paddings) pads with 0; PadV2 with its scalar constant_values input.
absl::Status LowerPad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  if (ctx.DynamicInput(node, 0) != nullptr ||
      (ctx.HasSymbolic(node.input(1)) && !ctx.ConstantInput(node, 1).ok())) {
    return LowerDynamicPad(ctx, node);
  }
  TFJIT_ASSIGN_OR_RETURN(auto pads, Paddings(ctx, node, x->shape().rank()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * value,
                         PadConstantValue(ctx, node, x->shape().element_type()));
  hlo::Attributes attrs;
  for (const auto& [lo, hi] : pads) attrs.padding.push_back({lo, hi, 0});
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Add(Opcode::kPad, {x, value}, attrs));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// MirrorPad: per dim, concatenate(reverse(left edge), x, reverse(right edge)); REFLECT
// excludes the border element (offset 1), SYMMETRIC repeats it (offset 0).
absl::Status LowerMirrorPad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::string mode, tf::GetStringAttr(node, "mode"));
  if (mode != "REFLECT" && mode != "SYMMETRIC") {
    return InvalidArgument("node %s: mode must be REFLECT or SYMMETRIC, got '%s'", node.DebugName(),
                           mode);
  }
  const int64_t offset = mode == "REFLECT" ? 1 : 0;
  TFJIT_ASSIGN_OR_RETURN(auto pads, Paddings(ctx, node, x->shape().rank()));
  for (int d = 0; d < x->shape().rank(); ++d) {
    const auto [lo, hi] = pads[static_cast<size_t>(d)];
    const int64_t dim = x->shape().dim(d);
    if (lo > dim - offset || hi > dim - offset) {
      return InvalidArgument(
          "node %s: paddings must be no greater than the dimension size "
          "minus %d: %d, %d greater than %d",
          node.DebugName(), offset, lo, hi, dim - offset);
    }
    std::vector<Instruction*> parts;
    if (lo > 0) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * left, SliceDimension(ctx, x, d, offset, lo));
      TFJIT_ASSIGN_OR_RETURN(left, ReverseDims(ctx, left, {d}));
      parts.push_back(left);
    }
    parts.push_back(x);
    if (hi > 0) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * right, SliceDimension(ctx, x, d, dim - offset - hi, hi));
      TFJIT_ASSIGN_OR_RETURN(right, ReverseDims(ctx, right, {d}));
      parts.push_back(right);
    }
    if (parts.size() > 1) {
      TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Concatenate(parts, d));
    }
  }
  ctx.SetOutput(node, 0, x);
  return absl::OkStatus();
}

absl::Status LowerReverseV2(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.ConstantInputAsInts(node, 1));
  const int rank = x->shape().rank();
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& a : axes) {
    TFJIT_ASSIGN_OR_RETURN(a, Axis(node, a, rank));
    if (seen[static_cast<size_t>(a)]) {
      return InvalidArgument("node %s: axis %d specified more than once.", node.DebugName(), a);
    }
    seen[static_cast<size_t>(a)] = true;
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ReverseDims(ctx, x, axes));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<hlo::Instruction*> ReverseDims(LoweringContext& ctx, hlo::Instruction* x,
                                              std::vector<int64_t> dims) {
  if (dims.empty()) return x;
  std::sort(dims.begin(), dims.end());
  hlo::Attributes attrs;
  attrs.dimensions = std::move(dims);
  return ctx.b().Add(Opcode::kReverse, {x}, std::move(attrs));
}

absl::StatusOr<hlo::Instruction*> PadWithZeros(LoweringContext& ctx, hlo::Instruction* x,
                                               const std::vector<hlo::PadDim>& pads) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(x->shape().element_type(), 0.0, {}));
  hlo::Attributes attrs;
  attrs.padding = pads;
  return ctx.b().Add(Opcode::kPad, {x, zero}, std::move(attrs));
}

absl::StatusOr<hlo::Instruction*> PlaceStridedSlice(LoweringContext& ctx, hlo::Instruction* value,
                                                    const tf::StridedPlan& plan,
                                                    const std::vector<int64_t>& shape) {
  std::vector<int64_t> processing;
  for (const tf::StridedDimPlan& p : plan.dims) processing.push_back(p.size);
  if (value->shape().dims() != processing) {
    TFJIT_ASSIGN_OR_RETURN(value, ctx.b().Reshape(value, processing));
  }
  std::vector<int64_t> reversed;
  std::vector<hlo::PadDim> pads;
  for (size_t d = 0; d < plan.dims.size(); ++d) {
    const tf::StridedDimPlan& p = plan.dims[d];
    const int64_t n = shape[d];
    if (p.size == 0) {
      pads.push_back({n, 0, 0});
      continue;
    }
    const int64_t last = p.begin + (p.size - 1) * p.stride;
    const int64_t lo = std::min(p.begin, last), hi = std::max(p.begin, last);
    if (p.stride < 0 && p.size > 1) reversed.push_back(static_cast<int64_t>(d));
    pads.push_back({lo, n - 1 - hi, std::abs(p.stride) - 1});
  }
  TFJIT_ASSIGN_OR_RETURN(value, ReverseDims(ctx, value, reversed));
  return PadWithZeros(ctx, value, pads);
}

void AppendSliceLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
                                  {"Slice", LowerSlice},
                                  {"StridedSlice", LowerStridedSlice},
                                  {"TensorStridedSliceUpdate", LowerTensorStridedSliceUpdate},
                                  {"Split", LowerSplit},
                                  {"SplitV", LowerSplitV},
                                  {"Unpack", LowerUnpack},
                                  {"GatherV2", LowerGatherV2, false, BatchDimsZero},
                                  {"Gather", LowerGather},
                                  {"OneHot", LowerOneHot},
                                  {"Tile", LowerTile},
                                  {"Pad", LowerPad},
                                  {"PadV2", LowerPad},
                                  {"MirrorPad", LowerMirrorPad},
                                  {"ReverseV2", LowerReverseV2},
                              });
  OpLowering resource_gather{"ResourceGather", LowerResourceGather, false, BatchDimsZero};
  resource_gather.takes_resource = true;
  table->push_back(resource_gather);
  OpLowering assign{"ResourceStridedSliceAssign", LowerResourceStridedSliceAssign};
  assign.takes_resource = true;
  table->push_back(assign);
}

}  // namespace tfjit::tf2hlo
