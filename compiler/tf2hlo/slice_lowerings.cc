// Lowerings of TF's slicing, splitting, gathering, padding and tiling ops: Slice,
// StridedSlice, Split, SplitV, Unpack, GatherV2/Gather/ResourceGather, OneHot, Tile, Pad,
// PadV2, MirrorPad, ReverseV2. Shape arguments are compile-time constants (known issue F).
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"

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
    return InvalidArgument("node %s: input %d must be a scalar, got %d values",
                           node.DebugName(), i, v.size());
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

absl::StatusOr<Instruction*> Reverse(LoweringContext& ctx, Instruction* x,
                                     std::vector<int64_t> dims) {
  if (dims.empty()) return x;
  std::sort(dims.begin(), dims.end());
  hlo::Attributes attrs;
  attrs.dimensions = std::move(dims);
  return ctx.b().Add(Opcode::kReverse, {x}, std::move(attrs));
}

// Slice(input, begin, size): size -1 means "to the end".
absl::Status LowerSlice(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> begin, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ctx.ConstantInputAsInts(node, 2));
  const hlo::Shape& shape = x->shape();
  const size_t rank = static_cast<size_t>(shape.rank());
  if (begin.size() != rank || size.size() != rank) {
    return InvalidArgument("node %s: Expected begin and size arguments to be 1-D tensors of "
                           "size %d, but got %d and %d values instead",
                           node.DebugName(), rank, begin.size(), size.size());
  }
  std::vector<hlo::SliceDim> s(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = shape.dim(static_cast<int>(d));
    const int64_t b = begin[d];
    const int64_t n = size[d] == -1 ? dim - b : size[d];
    if (b < 0 || b > dim) {
      return InvalidArgument("node %s: Expected begin[%d] in [0, %d], but got %d",
                             node.DebugName(), d, dim, b);
    }
    if (n < 0 || b + n > dim) {
      return InvalidArgument("node %s: Expected size[%d] in [0, %d], but got %d",
                             node.DebugName(), d, dim - b, n);
    }
    s[d] = {b, b + n, 1};
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Slice(x, s));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// StridedSlice's per-dimension plan after TF's dense-spec expansion (ValidateStridedSliceOp).
struct StridedDim {
  int64_t begin = 0, stride = 1, size = 0;
};
constexpr int64_t kNewAxis = -1;
constexpr int64_t kShrinkAxis = -2;

struct StridedSpec {
  std::vector<int64_t> begin, end, stride;
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_mask = 0;
};

// Expands the sparse spec to one entry per input dim; `final_dims` lists for each output dim
// the input dim it comes from, or kNewAxis; shrunk dims are recorded as kShrinkAxis.
absl::Status BuildDenseSpec(const tf::Node& node, const StridedSpec& sparse, int rank,
                            StridedSpec* dense, std::vector<int64_t>* final_dims) {
  const int64_t n = static_cast<int64_t>(sparse.begin.size());
  int64_t ellipsis = sparse.ellipsis_mask;
  int64_t sparse_dims = n;
  if (ellipsis == 0) {  // an implicit ellipsis at the end
    ellipsis = int64_t{1} << n;
    ++sparse_dims;
  }
  if ((ellipsis & (ellipsis - 1)) != 0) {
    return InvalidArgument("node %s: Multiple ellipses in slice spec not allowed",
                           node.DebugName());
  }
  int64_t new_axis_after_ellipsis = 0;
  bool seen_ellipsis = false;
  for (int64_t i = 0; i < sparse_dims; ++i) {
    if (seen_ellipsis && ((sparse.new_axis_mask >> i) & 1)) ++new_axis_after_ellipsis;
    if ((ellipsis >> i) & 1) seen_ellipsis = true;
  }
  dense->begin.assign(rank, 0);
  dense->end.assign(rank, 0);
  dense->stride.assign(rank, 1);
  int64_t full = 0;
  for (int64_t i = 0; i < sparse_dims; ++i) {
    if ((ellipsis >> i) & 1) {
      const int64_t next = std::min<int64_t>(rank - (sparse_dims - i) + 1 + new_axis_after_ellipsis,
                                             rank);
      for (; full < next; ++full) {
        dense->begin_mask |= int64_t{1} << full;
        dense->end_mask |= int64_t{1} << full;
        final_dims->push_back(full);
      }
    } else if ((sparse.new_axis_mask >> i) & 1) {
      final_dims->push_back(kNewAxis);
    } else {
      if (full == rank) {
        return InvalidArgument("node %s: Index out of range using input dim %d; input has only "
                               "%d dims", node.DebugName(), full, rank);
      }
      dense->begin[full] = sparse.begin[i];
      dense->end[full] = sparse.end[i];
      dense->stride[full] = sparse.stride[i];
      if ((sparse.begin_mask >> i) & 1) dense->begin_mask |= int64_t{1} << full;
      if ((sparse.end_mask >> i) & 1) dense->end_mask |= int64_t{1} << full;
      if ((sparse.shrink_mask >> i) & 1) {
        dense->shrink_mask |= int64_t{1} << full;
        final_dims->push_back(kShrinkAxis);
      } else {
        final_dims->push_back(full);
      }
      ++full;
    }
  }
  return absl::OkStatus();
}

// One dense dimension: TF's canonicalisation of begin/end (masks, negative indices, clamping
// to [0, dim] for positive strides and [-1, dim-1] for negative ones) and the slice length.
absl::StatusOr<StridedDim> CanonicalDim(const tf::Node& node, const StridedSpec& dense, int d,
                                        int64_t dim) {
  const int64_t stride = dense.stride[d];
  if (stride == 0) {
    return InvalidArgument("node %s: strides[%d] must be non-zero", node.DebugName(), d);
  }
  const bool shrink = (dense.shrink_mask >> d) & 1;
  int64_t b = dense.begin[d], e = dense.end[d];
  if (shrink) {
    if (stride <= 0) {
      return InvalidArgument("node %s: only stride 1 allowed on non-range indexing.",
                             node.DebugName());
    }
    const int64_t fwd = b < 0 ? dim + b : b;
    if (fwd < 0 || fwd >= dim) {
      return InvalidArgument("node %s: slice index %d of dimension %d out of bounds.",
                             node.DebugName(), b, d);
    }
    return StridedDim{fwd, 1, 1};
  }
  const int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
  auto canonical = [&](int64_t x, bool masked, bool is_end) {
    if (masked) return (stride > 0) == is_end ? hi : lo;
    const int64_t fwd = x < 0 ? dim + x : x;
    return std::clamp(fwd, lo, hi);
  };
  b = canonical(b, (dense.begin_mask >> d) & 1, false);
  e = canonical(e, (dense.end_mask >> d) & 1, true);
  const int64_t len = e - b;
  int64_t size = 0;
  if (len != 0 && ((len < 0) == (stride < 0))) size = len / stride + (len % stride != 0 ? 1 : 0);
  return StridedDim{b, stride, size};
}

absl::StatusOr<StridedSpec> ReadStridedSpec(LoweringContext& ctx, const tf::Node& node) {
  StridedSpec spec;
  TFJIT_ASSIGN_OR_RETURN(spec.begin, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(spec.end, ctx.ConstantInputAsInts(node, 2));
  TFJIT_ASSIGN_OR_RETURN(spec.stride, ctx.ConstantInputAsInts(node, 3));
  if (spec.begin.size() != spec.end.size() || spec.begin.size() != spec.stride.size()) {
    return InvalidArgument("node %s: Expected begin, end, and strides to be 1D equal size "
                           "tensors, but got %d, %d and %d values",
                           node.DebugName(), spec.begin.size(), spec.end.size(),
                           spec.stride.size());
  }
  TFJIT_ASSIGN_OR_RETURN(spec.begin_mask, tf::GetIntAttrOr(node, "begin_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(spec.end_mask, tf::GetIntAttrOr(node, "end_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(spec.ellipsis_mask, tf::GetIntAttrOr(node, "ellipsis_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(spec.new_axis_mask, tf::GetIntAttrOr(node, "new_axis_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(spec.shrink_mask, tf::GetIntAttrOr(node, "shrink_axis_mask", 0));
  return spec;
}

// StridedSlice => reverse (dims with negative strides) + slice + reshape (new/shrunk axes).
absl::Status LowerStridedSlice(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(StridedSpec sparse, ReadStridedSpec(ctx, node));
  const hlo::Shape& shape = x->shape();
  const int rank = shape.rank();
  StridedSpec dense;
  std::vector<int64_t> final_dims;
  TFJIT_RETURN_IF_ERROR(BuildDenseSpec(node, sparse, rank, &dense, &final_dims));
  std::vector<hlo::SliceDim> slice(static_cast<size_t>(rank));
  std::vector<int64_t> reversed, sizes;
  for (int d = 0; d < rank; ++d) {
    const int64_t dim = shape.dim(d);
    TFJIT_ASSIGN_OR_RETURN(StridedDim sd, CanonicalDim(node, dense, d, dim));
    sizes.push_back(sd.size);
    int64_t start = sd.begin, step = sd.stride;
    if (step < 0) {  // in the reversed dim, element b sits at dim - 1 - b
      reversed.push_back(d);
      start = dim - 1 - sd.begin;
      step = -step;
    }
    slice[static_cast<size_t>(d)] =
        sd.size == 0 ? hlo::SliceDim{0, 0, 1}
                     : hlo::SliceDim{start, start + (sd.size - 1) * step + 1, step};
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, Reverse(ctx, x, reversed));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Slice(r, slice));
  std::vector<int64_t> out_dims;
  for (int64_t f : final_dims) {
    if (f == kNewAxis) {
      out_dims.push_back(1);
    } else if (f >= 0) {
      out_dims.push_back(sizes[static_cast<size_t>(f)]);
    }
  }
  if (out_dims != r->shape().dims()) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, out_dims));
  }
  ctx.SetOutput(node, 0, r);
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
    return InvalidArgument("node %s: Number of ways to split should evenly divide the split "
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
        return InvalidArgument("node %s: There can only be one -1 in the input.",
                               node.DebugName());
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
    return InvalidArgument("node %s: Determined shape must either match input shape along "
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
        return InvalidArgument("node %s: indices[%d] = %d is not in [0, %d)", node.DebugName(),
                               k, v, limit);
      }
    }
  } else if (!ctx.CanAddRuntimeChecks()) {
    return Unimplemented("node %s: %s inside a loop or conditional body compiles only with "
                         "compile-time-constant indices (HLO gather clamps out-of-range "
                         "indices where TF's kernel fails)",
                         node.DebugName(), node.op());
  } else {
    // The kernels' messages: GatherV2/Gather name the multi-index, ResourceGather the flat one.
    const bool flat = node.op() == "ResourceGather";
    TFJIT_RETURN_IF_ERROR(ctx.AddIndexCheck(
        node, indices, {limit}, absl::StrCat("indices{pos} = {value} is not in [0, ", limit, ")"),
        flat, indices->shape().dims(), /*vector_value=*/false));
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
    return InvalidArgument("node %s: params must be at least 1 dimensional",
                           node.DebugName());
  }
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, Axis(node, axis_v, params->shape().rank()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, EmitGather(ctx, node, params, 1, axis));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerGather(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * params, ctx.Input(node, 0));
  if (params->shape().rank() < 1) {
    return InvalidArgument("node %s: params must be at least 1 dimensional",
                           node.DebugName());
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, EmitGather(ctx, node, params, 1, 0));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerResourceGather(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, 0));
  if (var->value == nullptr) return VariableNotFoundError(var->container, var->name);
  if (var->value->shape().rank() < 1) {
    return InvalidArgument("node %s: params must be at least 1 dimensional",
                           node.DebugName());
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
    return InvalidArgument("node %s: Expected axis to be -1 or between [0, %d).  But received: "
                           "%d", node.DebugName(), is.rank() + 1, axis);
  }
  if (depth < 0) {
    return InvalidArgument("node %s: depth must be non-negative, got: %d", node.DebugName(),
                           depth);
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
    return InvalidArgument("node %s: Expected multiples argument to be a vector of length %d "
                           "but got length %d", node.DebugName(), shape.rank(),
                           multiples.size());
  }
  std::vector<int64_t> wide, mapping, out;
  for (int d = 0; d < shape.rank(); ++d) {
    const int64_t m = multiples[static_cast<size_t>(d)];
    if (m < 0) {
      return InvalidArgument("node %s: Expected multiples[%d] >= 0, but got %d",
                             node.DebugName(), d, m);
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
                                                                  const tf::Node& node,
                                                                  int rank) {
  TFJIT_ASSIGN_OR_RETURN(Tensor t, ctx.ConstantInput(node, 1));
  if (t.rank() != 2 || t.dim(0) != rank || t.dim(1) != 2) {
    return InvalidArgument("node %s: The first dimension of paddings must be the rank of "
                           "inputs [%d, 2], got %s", node.DebugName(), rank, t.ShapeString());
  }
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (int d = 0; d < rank; ++d) {
    const int64_t lo = ElementAsInt64(t, 2 * d), hi = ElementAsInt64(t, 2 * d + 1);
    if (lo < 0 || hi < 0) {
      return InvalidArgument("node %s: Paddings must be non-negative: %d %d", node.DebugName(),
                             lo, hi);
    }
    pads.push_back({lo, hi});
  }
  return pads;
}

// Pad(x, paddings) pads with 0; PadV2 with its scalar constant_values input.
absl::Status LowerPad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(auto pads, Paddings(ctx, node, x->shape().rank()));
  Instruction* value = nullptr;
  if (node.num_inputs() > 2) {
    TFJIT_ASSIGN_OR_RETURN(value, ctx.Input(node, 2));
    if (value->shape().rank() != 0) {
      return InvalidArgument("node %s: constant_values must be a scalar, got %s",
                             node.DebugName(), value->shape().ToString());
    }
  } else {
    TFJIT_ASSIGN_OR_RETURN(value, ctx.Splat(x->shape().element_type(), 0.0, {}));
  }
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
    return InvalidArgument("node %s: mode must be REFLECT or SYMMETRIC, got '%s'",
                           node.DebugName(), mode);
  }
  const int64_t offset = mode == "REFLECT" ? 1 : 0;
  TFJIT_ASSIGN_OR_RETURN(auto pads, Paddings(ctx, node, x->shape().rank()));
  for (int d = 0; d < x->shape().rank(); ++d) {
    const auto [lo, hi] = pads[static_cast<size_t>(d)];
    const int64_t dim = x->shape().dim(d);
    if (lo > dim - offset || hi > dim - offset) {
      return InvalidArgument("node %s: paddings must be no greater than the dimension size "
                             "minus %d: %d, %d greater than %d",
                             node.DebugName(), offset, lo, hi, dim - offset);
    }
    std::vector<Instruction*> parts;
    if (lo > 0) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * left, SliceDimension(ctx, x, d, offset, lo));
      TFJIT_ASSIGN_OR_RETURN(left, Reverse(ctx, left, {d}));
      parts.push_back(left);
    }
    parts.push_back(x);
    if (hi > 0) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * right,
                             SliceDimension(ctx, x, d, dim - offset - hi, hi));
      TFJIT_ASSIGN_OR_RETURN(right, Reverse(ctx, right, {d}));
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
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, Reverse(ctx, x, axes));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

}  // namespace

void AppendSliceLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
      {"Slice", LowerSlice},
      {"StridedSlice", LowerStridedSlice},
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
}

}  // namespace tfjit::tf2hlo
