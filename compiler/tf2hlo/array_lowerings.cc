// Lowerings of TF's array ops: constants, identities, reshapes, transposes, squeeze, concat,
// pack, shape queries (Shape, ShapeN, Size, Rank), BroadcastTo and constant Range; GatherNd as
// gather; Where as the custom-call tfjit.where, its output padded with a run-time row count.
#include <cmath>
#include <cstdlib>
#include <optional>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/complex_values.h"
#include "compiler/tf2hlo/dynamic_sizes.h"
#include "compiler/tf2hlo/lowering_context.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/range.h"
#include "core/status.h"
#include "core/where.h"
#include "frontend/attr.h"
#include "frontend/reshape_rule.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

absl::Status LowerConst(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Tensor value, tf::GetTensorAttr(node, "value"));
  ctx.SetOutput(node, 0, ctx.b().Constant(hlo::Literal::FromTensor(value)));
  return absl::OkStatus();
}

// Identity, StopGradient, IdentityN: outputs are the inputs.
absl::Status LowerIdentity(LoweringContext& ctx, const tf::Node& node) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    // A variable handle passes through as the same variable.
    if (ctx.AliasResource({const_cast<tf::Node*>(&node), i}, node.input(i))) continue;
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    ctx.SetOutput(node, i, x);
  }
  return absl::OkStatus();
}

absl::Status LowerReshape(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(dims, tf::ResolveReshape(x->shape().dims(), std::move(dims)));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Reshape(x, dims));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerTranspose(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ctx.ConstantInputAsInts(node, 1));
  const int rank = x->shape().rank();
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  bool valid = static_cast<int>(perm.size()) == rank;
  for (int64_t p : perm) {
    if (!valid || p < 0 || p >= rank || seen[static_cast<size_t>(p)]) {
      valid = false;
      break;
    }
    seen[static_cast<size_t>(p)] = true;
  }
  if (!valid) {
    return InvalidArgument("perm {%s} is not a permutation of 0..%d for an input of rank %d",
                           absl::StrJoin(perm, ","), rank - 1, rank);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Transpose(x, perm));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int rank, const char* what) {
  if (axis < -rank || axis >= rank) {
    return InvalidArgument("%s %d is out of range for rank %d; expected [-%d, %d)", what, axis,
                           rank, rank, rank);
  }
  return axis < 0 ? axis + rank : axis;
}

// Concat and ConcatV2: inputs [first, first + n) joined along the constant axis input.
absl::Status LowerConcatInputs(LoweringContext& ctx, const tf::Node& node, int first, int n,
                               int axis_input) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, ctx.ConstantInputAsInts(node, axis_input));
  if (axis_v.size() != 1) {
    return InvalidArgument("node %s: the concat axis must be a scalar", node.DebugName());
  }
  std::vector<Instruction*> xs;
  for (int i = first; i < first + n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    xs.push_back(x);
  }
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_v[0], xs[0]->shape().rank(), "axis"));
  for (size_t i = 1; i < xs.size(); ++i) {
    const hlo::Shape& s0 = xs[0]->shape();
    const hlo::Shape& si = xs[i]->shape();
    bool ok = s0.rank() == si.rank();
    for (int d = 0; ok && d < s0.rank(); ++d) ok = d == axis || s0.dim(d) == si.dim(d);
    if (!ok) {
      return InvalidArgument(
          "ConcatOp: Dimension mismatch: input 0 is %s and input %d is %s; "
          "all dims except axis %d must match",
          s0.ToString(), i, si.ToString(), axis);
    }
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Concatenate(xs, axis));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ConcatV2: the axis comes last.
absl::Status LowerConcatV2(LoweringContext& ctx, const tf::Node& node) {
  const int n = node.num_inputs() - 1;
  return LowerConcatInputs(ctx, node, 0, n, n);
}

// A constant integer tensor of `dtype` (int32 or int64) holding `values`.
Instruction* IntConstant(LoweringContext& ctx, DType dtype, const std::vector<int64_t>& values,
                         bool scalar) {
  Tensor t(dtype, scalar ? std::vector<int64_t>{}
                         : std::vector<int64_t>{static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kInt32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      t.data<int64_t>()[i] = values[i];
    }
  }
  return ctx.b().Constant(hlo::Literal::FromTensor(t));
}

absl::Status LowerShape(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType out = node.output_types()[0];
  const std::vector<int64_t>& dims = x->shape().dims();
  if (const DynamicDim* d = ctx.DynamicInput(node, 0)) {
    // A padded dim: its run-time size, the others constants (and their expressions).
    std::vector<SymExpr> exprs(dims.size());
    std::vector<Instruction*> parts;
    for (size_t i = 0; i < dims.size(); ++i) {
      Instruction* dim = nullptr;
      if (static_cast<int>(i) == d->dim) {
        exprs[i] = d->size;
        TFJIT_ASSIGN_OR_RETURN(dim, ctx.SizeValue(d->size));
        TFJIT_ASSIGN_OR_RETURN(dim, ctx.b().Convert(dim, out));
        TFJIT_ASSIGN_OR_RETURN(dim, ctx.b().Reshape(dim, {1}));
      } else {
        exprs[i].constant = dims[i];
        dim = IntConstant(ctx, out, {dims[i]}, /*scalar=*/false);
      }
      parts.push_back(dim);
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Concatenate(parts, 0));
    ctx.SetOutput(node, 0, r);
    ctx.SetSymbolic({const_cast<tf::Node*>(&node), 0}, std::move(exprs));
    return absl::OkStatus();
  }
  Tensor t(out, {static_cast<int64_t>(dims.size())});
  for (size_t i = 0; i < dims.size(); ++i) {
    if (out == DType::kInt32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
    } else {
      t.data<int64_t>()[i] = dims[i];
    }
  }
  ctx.SetOutput(node, 0, ctx.b().Constant(hlo::Literal::FromTensor(t)));
  return absl::OkStatus();
}

// Pack(xs, axis) => concatenate(reshape(x_i with a 1 inserted at axis)).
absl::Status LowerPack(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(int64_t axis_attr, tf::GetIntAttrOr(node, "axis", 0));
  std::vector<Instruction*> parts;
  for (int i = 0; i < node.num_inputs(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    parts.push_back(x);
  }
  const hlo::Shape& s0 = parts[0]->shape();
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_attr, s0.rank() + 1, "axis"));
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i]->shape().dims() != s0.dims()) {
      return InvalidArgument(
          "Shapes of all inputs must match: values[0].shape = %s != "
          "values[%d].shape = %s",
          s0.ToString(), i, parts[i]->shape().ToString());
    }
    std::vector<int64_t> dims = s0.dims();
    dims.insert(dims.begin() + axis, 1);
    TFJIT_ASSIGN_OR_RETURN(parts[i], ctx.b().Reshape(parts[i], dims));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Concatenate(parts, axis));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerExpandDims(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, ctx.ConstantInputAsInts(node, 1));
  if (axis_v.size() != 1) return InvalidArgument("dim must be a scalar");
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_v[0], x->shape().rank() + 1, "dim"));
  std::vector<int64_t> dims = x->shape().dims();
  dims.insert(dims.begin() + axis, 1);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Reshape(x, dims));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Fill(dims, value): dims are a compile-time constant (known issue F when they are not).
absl::Status LowerFill(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ctx.ConstantInputAsInts(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * value, ctx.Input(node, 1));
  if (value->shape().rank() != 0) {
    return InvalidArgument("node %s: value must be a scalar, got %s", node.DebugName(),
                           value->shape().ToString());
  }
  for (int64_t d : dims) {
    if (d < 0) {
      return InvalidArgument("node %s: dims must be non-negative, got [%s]", node.DebugName(),
                             absl::StrJoin(dims, ","));
    }
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.BroadcastTo(value, dims));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Squeeze: drops the size-1 dims listed in squeeze_dims (all size-1 dims when empty).
absl::Status LowerSqueeze(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape& s = x->shape();
  std::vector<int64_t> axes;
  if (tf::FindAttr(node, "squeeze_dims") != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(axes, tf::GetIntListAttr(node, "squeeze_dims"));
  }
  std::vector<bool> squeeze(static_cast<size_t>(s.rank()), axes.empty());
  for (int64_t a : axes) {
    TFJIT_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, s.rank(), "squeeze_dims entry"));
    if (const DynamicDim* padded = ctx.DynamicInput(node, 0); padded && padded->dim == axis) {
      return Unimplemented("node %s: squeezes dim %d, whose size is known only at run time",
                           node.DebugName(), axis);
    }
    if (s.dim(static_cast<int>(axis)) != 1) {
      return InvalidArgument(
          "node %s: Can not squeeze dim[%d], expected a dimension of 1, got "
          "%d (input is %s)",
          node.DebugName(), axis, s.dim(static_cast<int>(axis)), s.ToString());
    }
    squeeze[static_cast<size_t>(axis)] = true;
  }
  std::vector<int64_t> dims;
  const DynamicDim* padded = ctx.DynamicInput(node, 0);
  if (padded != nullptr && axes.empty()) {
    // TF squeezes every dim whose run-time size is 1, which would change the rank with it.
    return Unimplemented(
        "node %s: squeezes every size-1 dim of a value whose dim %d has a size "
        "known only at run time; name the dims in squeeze_dims",
        node.DebugName(), padded->dim);
  }
  std::optional<DynamicDim> out_padded;
  for (int d = 0; d < s.rank(); ++d) {
    const bool dropped = squeeze[static_cast<size_t>(d)] && s.dim(d) == 1;
    if (padded != nullptr && padded->dim == d) {
      if (dropped) {
        return Unimplemented(
            "node %s: squeezes dim %d, whose size is known only at run time "
            "(padded to 1): name the dims to squeeze in squeeze_dims",
            node.DebugName(), d);
      }
      out_padded = DynamicDim{static_cast<int>(dims.size()), padded->size};
    }
    if (!dropped) dims.push_back(s.dim(d));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Reshape(x, dims));
  ctx.SetOutput(node, 0, r);
  if (out_padded.has_value()) ctx.SetDynamic({const_cast<tf::Node*>(&node), 0}, *out_padded);
  return absl::OkStatus();
}

// Size and Rank depend only on the static shape, and Size on a padded dim's run-time size.
absl::Status LowerSize(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  if (const DynamicDim* d = ctx.DynamicInput(node, 0)) {
    int64_t others = 1;
    for (int i = 0; i < x->shape().rank(); ++i) {
      if (i != d->dim) others *= x->shape().dim(i);
    }
    const SymExpr size = Scaled(d->size, others);
    TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.SizeValue(size));
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, node.output_types()[0]));
    ctx.SetOutput(node, 0, r);
    ctx.SetSymbolic({const_cast<tf::Node*>(&node), 0}, {size});
    return absl::OkStatus();
  }
  ctx.SetOutput(node, 0,
                IntConstant(ctx, node.output_types()[0], {x->shape().num_elements()}, true));
  return absl::OkStatus();
}

absl::Status LowerRank(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  ctx.SetOutput(node, 0, IntConstant(ctx, DType::kInt32, {x->shape().rank()}, true));
  return absl::OkStatus();
}

absl::Status LowerShapeN(LoweringContext& ctx, const tf::Node& node) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    ctx.SetOutput(
        node, i,
        IntConstant(ctx, node.output_types()[static_cast<size_t>(i)], x->shape().dims(), false));
  }
  return absl::OkStatus();
}

// Concat (v1): the axis comes first.
absl::Status LowerConcat(LoweringContext& ctx, const tf::Node& node) {
  return LowerConcatInputs(ctx, node, 1, node.num_inputs() - 1, 0);
}

// BroadcastTo(x, shape): NumPy broadcasting to the constant shape.
absl::Status LowerBroadcastTo(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ctx.ConstantInputAsInts(node, 1));
  for (int64_t d : dims) {
    if (d < 0) {
      return InvalidArgument("node %s: shape must be non-negative, got [%s]", node.DebugName(),
                             absl::StrJoin(dims, ","));
    }
  }
  absl::StatusOr<Instruction*> r = ctx.BroadcastTo(x, dims);
  if (!r.ok()) {
    return InvalidArgument(
        "node %s: Unable to broadcast tensor of shape %s to tensor of shape "
        "[%s]",
        node.DebugName(), x->shape().ToString(), absl::StrJoin(dims, ","));
  }
  ctx.SetOutput(node, 0, *r);
  return absl::OkStatus();
}

absl::Status LowerRange(LoweringContext& ctx, const tf::Node& node) {
  std::vector<Tensor> in;
  for (int i = 0; i < 3; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Tensor t, ctx.ConstantInput(node, i));
    if (t.num_elements() != 1) {
      return InvalidArgument("node %s: start, limit and delta must be scalars, input %d is %s",
                             node.DebugName(), i, t.ShapeString());
    }
    in.push_back(std::move(t));
  }
  // The kernel's dtypes (core/range.h); the folded constant is the kernel's own values.
  absl::StatusOr<Tensor> out = InvalidArgument("node %s: Range of %s is not supported",
                                               node.DebugName(), DTypeName(in[0].dtype()));
  DispatchNumeric(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                  std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      const T start = *in[0].data<T>();
      absl::StatusOr<int64_t> n = range::Size(start, *in[1].data<T>(), *in[2].data<T>());
      if (!n.ok()) {
        out = InvalidArgument("node %s: %s", node.DebugName(), n.status().message());
        return;
      }
      Tensor t(DTypeOf<T>::value, {*n});
      range::Fill(start, *in[2].data<T>(), *n, t.data<T>());
      out = std::move(t);
    }
  });
  if (!out.ok()) return out.status();
  ctx.SetOutput(node, 0, ctx.b().Constant(hlo::Literal::FromTensor(*out)));
  return absl::OkStatus();
}

// ---- GatherNd ----

// As GatherV2 (array_slice_lowerings.cc EmitGather): HLO's gather clamps out-of-range indices where
// TF's kernel fails, so constant indices are checked here and others at run time
// (AddIndexCheck); inside loop/branch bodies indices must be constants.
absl::Status LowerGatherNd(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * params, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, ctx.Input(node, 1));
  absl::StatusOr<Tensor> known = ctx.ConstantInput(node, 1);
  if (!known.ok() && !ctx.CanAddRuntimeChecks()) {
    return Unimplemented(
        "node %s: GatherNd inside a loop or conditional body compiles only "
        "with compile-time-constant indices (HLO gather clamps out-of-range "
        "indices where TF's kernel fails)",
        node.DebugName());
  }
  const hlo::Shape& ps = params->shape();
  const hlo::Shape& is = indices->shape();
  if (ps.rank() < 1 || is.rank() < 1) {
    return InvalidArgument("node %s: params and indices must be at least vectors, got %s and %s",
                           node.DebugName(), ps.ToString(), is.ToString());
  }
  const int64_t k = is.dim(is.rank() - 1);
  if (k > ps.rank()) {
    return InvalidArgument(
        "node %s: index innermost dimension length must be <= params rank; "
        "saw: %d vs. %d",
        node.DebugName(), k, ps.rank());
  }
  if (!known.ok()) {
    // The kernel's message: the flat index-vector number and the whole vector.
    std::vector<int64_t> limits(ps.dims().begin(), ps.dims().begin() + k);
    TFJIT_RETURN_IF_ERROR(
        ctx.AddIndexCheck(node, indices, limits,
                          absl::StrCat("indices{pos} = {value} does not index into param shape ",
                                       DimsString(ps.dims())),
                          /*flat_position=*/true, {}, /*vector_value=*/true, params));
  }
  for (int64_t r = 0; known.ok() && k > 0 && r < known->num_elements() / k; ++r) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t v = ElementAsInt64(*known, r * k + j);
      if (v < 0 || v >= ps.dim(static_cast<int>(j))) {
        std::vector<int64_t> idx;
        for (int64_t q = 0; q < k; ++q) idx.push_back(ElementAsInt64(*known, r * k + q));
        return InvalidArgument("node %s: indices[%d] = [%s] does not index into param shape %s",
                               node.DebugName(), r, absl::StrJoin(idx, ", "),
                               DimsString(ps.dims()));
      }
    }
  }
  const int64_t batch_rank = is.rank() - 1;
  std::vector<int64_t> out_dims(is.dims().begin(), is.dims().end() - 1);
  out_dims.insert(out_dims.end(), ps.dims().begin() + k, ps.dims().end());
  int64_t count = 1;
  for (int64_t d : out_dims) count *= d;
  Instruction* r = nullptr;
  if (count == 0) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.Splat(ps.element_type(), 0.0, out_dims));
  } else if (k == 0) {
    // Every index vector is empty: each picks all of params.
    std::vector<int64_t> map;
    for (int64_t d = 0; d < ps.rank(); ++d) map.push_back(batch_rank + d);
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Broadcast(params, out_dims, map));
  } else {
    hlo::Attributes attrs;
    hlo::GatherDims& g = attrs.gather;
    g.index_vector_dim = batch_rank;
    g.slice_sizes = ps.dims();
    for (int64_t j = 0; j < k; ++j) {
      g.start_index_map.push_back(j);
      g.collapsed_slice_dims.push_back(j);
      g.slice_sizes[static_cast<size_t>(j)] = 1;
    }
    for (int64_t d = 0; d < ps.rank() - k; ++d) g.offset_dims.push_back(batch_rank + d);
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Add(Opcode::kGather, {params, indices}, std::move(attrs)));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// NoOp: a control dependency inside the cluster, which its order already keeps.
absl::Status LowerNoOp(LoweringContext&, const tf::Node&) { return absl::OkStatus(); }

// ---- Where ----

// The custom-call tfjit.where (core/where.h, the kernel's routine) on the input's nonzero mask
// (a complex element is nonzero when either part is): the coordinates padded with zero rows to
// one row per element, and the real row count, known only at run time: XLA's bounded dynamic
// dimension (dynamic_sizes.h). Read on inside the cluster by the ops that know padding, or cut
// to its rows by the runtime when it leaves an ENTRY computation.
absl::Status LowerWhere(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  Instruction* mask = nullptr;
  if (IsComplexDType(node.input_types()[0])) {
    TFJIT_ASSIGN_OR_RETURN(ComplexParts z, SplitComplex(ctx, x));
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero,
                           ctx.Splat(z.re->shape().element_type(), 0.0, z.re->shape().dims()));
    TFJIT_ASSIGN_OR_RETURN(Instruction * re,
                           ctx.b().Compare(hlo::ComparisonDirection::kNe, z.re, zero));
    TFJIT_ASSIGN_OR_RETURN(Instruction * im,
                           ctx.b().Compare(hlo::ComparisonDirection::kNe, z.im, zero));
    TFJIT_ASSIGN_OR_RETURN(mask, ctx.b().Binary(Opcode::kOr, re, im));
  } else if (x->shape().element_type() == DType::kBool) {
    mask = x;
  } else {
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero,
                           ctx.Splat(x->shape().element_type(), 0.0, x->shape().dims()));
    TFJIT_ASSIGN_OR_RETURN(mask, ctx.b().Compare(hlo::ComparisonDirection::kNe, x, zero));
  }
  const hlo::Shape& ms = mask->shape();
  const hlo::Shape coords(DType::kInt64, {ms.num_elements(), ms.rank()});
  hlo::Attributes attrs;
  attrs.custom_call_target = where::kWhereTarget;
  TFJIT_ASSIGN_OR_RETURN(Instruction * call,
                         ctx.b().Add(Opcode::kCustomCall, {mask}, std::move(attrs), {},
                                     hlo::Shape::Tuple({coords, hlo::Shape(DType::kInt64, {})})));
  TFJIT_ASSIGN_OR_RETURN(Instruction * rows, ctx.b().GetTupleElement(call, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * count, ctx.b().GetTupleElement(call, 1));
  ctx.SetOutput(node, 0, rows);
  ctx.SetDynamic({const_cast<tf::Node*>(&node), 0},
                 DynamicDim{0, ctx.NewSizeAtom(count, coords.dim(0))});
  return absl::OkStatus();
}

}  // namespace

void AppendArrayLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(),
                {
                    {"Const", LowerConst},
                    {"GatherNd", LowerGatherNd},
                    {"Where", LowerWhere},
                    // Identities pass TensorLists (HLO tuples) through as they are.
                    {"Identity", LowerIdentity, false, nullptr, true, true},
                    {"IdentityN", LowerIdentity, false, nullptr, true, true},
                    {"StopGradient", LowerIdentity},
                    {"Fill", LowerFill},
                    {"Reshape", LowerReshape},
                    {"Transpose", LowerTranspose},
                    {"ConjugateTranspose", LowerTranspose},  // real types: no conjugate
                    {"ConcatV2", LowerConcatV2},
                    {"Shape", LowerShape},
                    {"Pack", LowerPack},
                    {"ExpandDims", LowerExpandDims},
                    {"Snapshot", LowerIdentity},
                    {"PreventGradient", LowerIdentity},
                    {"Squeeze", LowerSqueeze},
                    {"Size", LowerSize},
                    {"Rank", LowerRank},
                    {"ShapeN", LowerShapeN},
                    {"Concat", LowerConcat},
                    {"BroadcastTo", LowerBroadcastTo},
                    {"NoOp", LowerNoOp},
                    {"Range", LowerRange},
                });
}

}  // namespace tfjit::tf2hlo
