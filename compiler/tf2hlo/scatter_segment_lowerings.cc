// Lowerings of the scatter_segment ops to HLO (docs/DESIGN.md, "Op families"), with the semantics
// of TF's CPU kernels where tf2xla's differ: ScatterNd, TensorScatter{Update,Add,Sub,Min,Max},
// UnsortedSegment{Sum,Prod,Max,Min} and the resource-variable scatters ResourceScatter* and
// ResourceScatterNd*, each one HLO scatter with the op's combiner, and SparseToDense.
//
// HLO's scatter skips out-of-bounds updates where TF's kernels fail, so indices are checked:
// compile-time-constant ones here (a bad one is a compile error naming the node), fed ones at
// run time (LoweringContext::AddIndexCheck) with the kernel's message. Inside loop/branch
// bodies, where no run-time check can be returned, indices must be constants. UnsortedSegment*
// drop negative ids (as TF does) and check the others against num_segments; empty segments
// hold the combiner's identity (TF's lowest/highest finite value for Max/Min).
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/sparse_to_dense_rule.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

enum class Combiner { kAssign, kAdd, kSub, kMul, kDiv, kMin, kMax };

// The scalar computation combining an operand element (p0) with an update (p1).
hlo::Computation* CombinerComputation(hlo::Module* module, Combiner c, DType t) {
  switch (c) {
    case Combiner::kAdd:
      // bool adds as TF's bool ScatterNd does: a logical or.
      return hlo::GetOrAddScalarBinaryComputation(
          module, t == DType::kBool ? Opcode::kOr : Opcode::kAdd, t);
    case Combiner::kSub:
      return hlo::GetOrAddScalarBinaryComputation(module, Opcode::kSubtract, t);
    case Combiner::kMul:
      return hlo::GetOrAddScalarBinaryComputation(module, Opcode::kMultiply, t);
    case Combiner::kDiv:
      return hlo::GetOrAddScalarBinaryComputation(module, Opcode::kDivide, t);
    case Combiner::kMin:
      return hlo::GetOrAddScalarBinaryComputation(module, Opcode::kMinimum, t);
    case Combiner::kMax:
      return hlo::GetOrAddScalarBinaryComputation(module, Opcode::kMaximum, t);
    case Combiner::kAssign:
      break;
  }
  // Assignment: the update replaces the element.
  const std::string name = absl::StrCat("scatter_assign_", DTypeName(t));
  if (hlo::Computation* existing = module->FindComputation(name)) return existing;
  hlo::Computation* comp = module->AddComputation(name);
  hlo::Builder b(comp);
  b.Parameter(0, hlo::Shape::Scalar(t), "old");
  comp->set_root(b.Parameter(1, hlo::Shape::Scalar(t), "update"));
  return comp;
}

// scatter(operand, indices, updates) with index vectors along `index_vector_dim` of indices
// addressing operand dims [0, k), the trailing update dims the window over operand dims [k, ...).
absl::StatusOr<Instruction*> EmitScatter(LoweringContext& ctx, Instruction* operand,
                                         Instruction* indices, Instruction* updates,
                                         int64_t index_vector_dim, int64_t k, Combiner c) {
  if (updates->shape().num_elements() == 0 || operand->shape().num_elements() == 0) {
    return operand;
  }
  hlo::Attributes attrs;
  hlo::ScatterDims& s = attrs.scatter;
  s.index_vector_dim = index_vector_dim;
  const int64_t batch = updates->shape().rank() - (operand->shape().rank() - k);
  for (int64_t d = batch; d < updates->shape().rank(); ++d) s.update_window_dims.push_back(d);
  for (int64_t d = 0; d < k; ++d) {
    s.inserted_window_dims.push_back(d);
    s.scatter_dims_to_operand_dims.push_back(d);
  }
  hlo::Computation* combiner =
      CombinerComputation(ctx.module(), c, operand->shape().element_type());
  return ctx.b().Add(Opcode::kScatter, {operand, indices, updates}, std::move(attrs), {combiner});
}

// ---- ScatterNd, TensorScatter*, ResourceScatterNd* ----

enum class NdFlavor { kScatterNd, kTensorScatter, kVariable };

// TF's shape checks of a ScatterNd-style update (the kernel's, scatter_segment_kernels.cc):
// indices [..., K], updates = indices.shape[:-1] + shape[K:]. Sets *k.
absl::Status CheckNdShapes(const tf::Node& node, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& id, const std::vector<int64_t>& ud,
                           NdFlavor flavor, int64_t* k) {
  auto err = [&](const std::string& m) {
    return InvalidArgument("node %s: %s", node.DebugName(), m);
  };
  const std::string is = DimsString(id), us = DimsString(ud), ss = DimsString(shape);
  const int rank = static_cast<int>(shape.size());
  const int irank = static_cast<int>(id.size()), urank = static_cast<int>(ud.size());
  auto count = [](const std::vector<int64_t>& d) {
    int64_t n = 1;
    for (int64_t x : d) n *= x;
    return n;
  };
  const int64_t ne = count(shape), ni = count(id), nu = count(ud);
  const bool valid_empty = (ni == 0 && nu == 0) || (ne != 0 && ni != 0 && nu != 0);
  if (flavor != NdFlavor::kVariable) {
    if (irank < 1)
      return err(absl::StrCat("Indices shape must have rank at least one. Found:", is));
    if (urank < 1)
      return err(absl::StrCat("Updates shape must have rank at least one. Found:", us));
    if (!valid_empty) return err("Indices and updates specified for empty output shape");
    const int outer = irank - 1;
    for (int i = 0; i < outer; ++i) {
      if (i >= urank || id[i] != ud[i]) {
        if (flavor == NdFlavor::kTensorScatter) {
          return err(
              absl::StrCat("Outer dimensions of indices and update must match. Indices "
                           "shape: ",
                           is, ", updates shape:", us));
        }
        return err(absl::StrCat("Dimensions [0,", outer, ") of indices[shape=", is,
                                "] must match dimensions [0,", outer, ") of updates[shape=", us,
                                "]"));
      }
    }
    const int64_t ix = id[outer];
    bool inner_ok = urank - outer == rank - ix;
    for (int i = 0; inner_ok && i + outer < urank; ++i) inner_ok = ud[i + outer] == shape[ix + i];
    if (!inner_ok) {
      if (flavor == NdFlavor::kTensorScatter) {
        return err(
            absl::StrCat("Inner dimensions of output shape must match inner dimensions of "
                         "updates shape. Output: ",
                         ss, " updates: ", us));
      }
      return err(absl::StrCat("Dimensions [", ix, ",", rank, ") of input[shape=", ss,
                              "] must match dimensions [", outer, ",", urank,
                              ") of updates[shape=", us, "]"));
    }
  }
  if (rank < 1) return err(absl::StrCat("Output must be at least 1-D, got shape: ", ss));
  if (!valid_empty) {
    return err(
        absl::StrCat("Indices and updates specified for empty output.  indices shape: ", is));
  }
  if (irank < 1 || urank < 1 || ud[0] != id[0]) {
    return err(absl::StrCat("Dimensions [0,1) of indices[shape=", is, "] = ", irank < 1 ? 0 : id[0],
                            " must match dimensions [0,1) of updates[shape=", us,
                            "] = ", urank < 1 ? 0 : ud[0]));
  }
  *k = irank > 1 ? id[irank - 1] : 1;
  const int batch = irank > 1 ? irank - 1 : 1;
  bool ok = urank >= batch && *k <= rank && urank == batch + rank - *k;
  for (int d = 0; ok && d < batch; ++d) ok = ud[d] == id[d];
  for (int d = 0; ok && d + batch < urank; ++d) ok = ud[d + batch] == shape[d + *k];
  if (!ok) {
    return err(
        absl::StrCat("Must have updates.shape = indices.shape[:batch_dim] + "
                     "params_shape[slice_dim:], got updates.shape: ",
                     us, ", indices.shape: ", is, ", params_shape: ", ss, ", slice_dim: ", *k,
                     ", and batch_dim: ", batch));
  }
  if (ne != 0 && (*k < 1 || *k > 7)) {
    return err(
        absl::StrCat("Only indices.shape[-1] values between 1 and 5 are currently "
                     "supported.  Requested rank: ",
                     *k));
  }
  return absl::OkStatus();
}

// Range check of the index rows (each of k components) of input `input` against shape[:k]:
// at compile time when constant, else at run time.
absl::Status CheckNdIndices(LoweringContext& ctx, const tf::Node& node, int input,
                            Instruction* indices, const std::vector<int64_t>& shape, int64_t k) {
  const std::vector<int64_t>& id = indices->shape().dims();
  std::vector<int64_t> pos_dims(id.begin(), id.end() - 1);
  std::vector<int64_t> limits(shape.begin(), shape.begin() + k);
  const std::string tail = absl::StrCat(" does not index into shape ", DimsString(shape));
  absl::StatusOr<Tensor> known = ctx.ConstantInput(node, input);
  if (known.ok()) {
    hlo::RuntimeCheck msg;
    msg.message_template = absl::StrCat("indices{pos} = {value}", tail);
    msg.flat_position = false;
    msg.position_dims = pos_dims;
    msg.vector_value = true;
    for (int64_t r = 0; k > 0 && r < known->num_elements() / k; ++r) {
      std::vector<int64_t> result = {r};
      bool bad = false;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t v = ElementAsInt64(*known, r * k + j);
        bad = bad || v < 0 || v >= limits[static_cast<size_t>(j)];
        result.push_back(v);
      }
      if (bad) return InvalidArgument("node %s: %s", node.DebugName(), msg.Message(result));
    }
    return absl::OkStatus();
  }
  if (!ctx.CanAddRuntimeChecks()) {
    return Unimplemented(
        "node %s: %s inside a loop or conditional body compiles only with "
        "compile-time-constant indices (HLO scatter skips out-of-range "
        "indices where TF's kernel fails)",
        node.DebugName(), node.op());
  }
  return ctx.AddIndexCheck(node, indices, limits, absl::StrCat("indices{pos} = {value}", tail),
                           /*flat_position=*/false, pos_dims, /*vector_value=*/true);
}

// The ScatterNd-style update of `operand` by inputs `indices_input` and `updates_input`.
absl::StatusOr<Instruction*> EmitScatterNd(LoweringContext& ctx, const tf::Node& node,
                                           Instruction* operand, int indices_input,
                                           int updates_input, NdFlavor flavor, Combiner c) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, ctx.Input(node, indices_input));
  TFJIT_ASSIGN_OR_RETURN(Instruction * updates, ctx.Input(node, updates_input));
  if (updates->shape().element_type() != operand->shape().element_type()) {
    return InvalidArgument("node %s: updates must have dtype %s, got %s", node.DebugName(),
                           DTypeName(operand->shape().element_type()),
                           DTypeName(updates->shape().element_type()));
  }
  const std::vector<int64_t>& shape = operand->shape().dims();
  int64_t k = 0;
  TFJIT_RETURN_IF_ERROR(
      CheckNdShapes(node, shape, indices->shape().dims(), updates->shape().dims(), flavor, &k));
  if (operand->shape().num_elements() == 0 || updates->shape().num_elements() == 0) {
    return operand;
  }
  TFJIT_RETURN_IF_ERROR(CheckNdIndices(ctx, node, indices_input, indices, shape, k));
  return EmitScatter(ctx, operand, indices, updates, indices->shape().rank() - 1, k, c);
}

absl::Status LowerScatterNd(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.ConstantInputAsInts(node, 2));
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument("node %s: Dimension %d must be >= 0", node.DebugName(), d);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * updates, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zeros,
                         ctx.Splat(updates->shape().element_type(), 0.0, shape));
  TFJIT_ASSIGN_OR_RETURN(
      Instruction * r, EmitScatterNd(ctx, node, zeros, 0, 1, NdFlavor::kScatterNd, Combiner::kAdd));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

template <Combiner kC>
absl::Status LowerTensorScatter(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * tensor, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                         EmitScatterNd(ctx, node, tensor, 1, 2, NdFlavor::kTensorScatter, kC));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- SparseToDense ----

// default_value broadcast to output_shape (a compile-time constant, as in tf2xla), then
// sparse_values assigned at the rows of sparse_indices ([N, R], [N] or a scalar index), with the
// kernel's shape checks. Constant indices get all of the kernel's checks here, order and
// repeats included (validate_indices); fed ones are range-checked at run time as the kernel
// does, their order not (tf2xla checks neither; a repeated index keeps one of its values).
absl::Status LowerSparseToDense(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * values, ctx.Input(node, 2));
  TFJIT_ASSIGN_OR_RETURN(Instruction * def, ctx.Input(node, 3));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.ConstantInputAsInts(node, 1));
  auto err = [&](const absl::Status& s) {
    return InvalidArgument("node %s: %s", node.DebugName(), s.message());
  };
  absl::StatusOr<tf::SparseIndexRows> rows = tf::CheckSparseToDenseShapes(
      indices->shape().dims(), shape, values->shape().dims(), def->shape().dims());
  if (!rows.ok()) return err(rows.status());
  const int64_t n = rows->num, r = rows->rank;
  const std::vector<int64_t>& vd = values->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(Instruction * out, ctx.b().Broadcast(def, shape, {}));
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  if (n == 0 || elements == 0) {
    ctx.SetOutput(node, 0, out);
    return absl::OkStatus();
  }
  if (r == 0) {
    // A scalar output that every (empty) index addresses: the last value wins, as in the
    // kernel.
    if (!vd.empty()) {
      TFJIT_ASSIGN_OR_RETURN(values, ctx.b().Slice(values, {{n - 1, n, 1}}));
      TFJIT_ASSIGN_OR_RETURN(values, ctx.b().Reshape(values, {}));
    }
    ctx.SetOutput(node, 0, values);
    return absl::OkStatus();
  }
  TFJIT_ASSIGN_OR_RETURN(indices, ctx.b().Reshape(indices, {n, r}));
  absl::StatusOr<Tensor> known = ctx.ConstantInput(node, 0);
  if (known.ok()) {
    TFJIT_ASSIGN_OR_RETURN(bool validate, tf::GetBoolAttrOr(node, "validate_indices", true));
    absl::Status indices_ok = tf::CheckSparseToDenseIndices(*known, *rows, shape, validate);
    if (!indices_ok.ok()) return err(indices_ok);
  } else {
    if (!ctx.CanAddRuntimeChecks()) {
      return Unimplemented(
          "node %s: SparseToDense inside a loop or conditional body compiles "
          "only with compile-time-constant indices",
          node.DebugName());
    }
    TFJIT_RETURN_IF_ERROR(ctx.AddIndexCheck(
        node, indices, shape,
        absl::StrCat("indices{pos} = {index} is out of bounds: need 0 <= index < ",
                     DimsString(shape)),
        /*flat_position=*/true, {n}, /*vector_value=*/true));
  }
  if (vd.empty()) {
    TFJIT_ASSIGN_OR_RETURN(values, ctx.b().Broadcast(values, {n}, {}));
  }
  TFJIT_ASSIGN_OR_RETURN(out, EmitScatter(ctx, out, indices, values, 1, r, Combiner::kAssign));
  ctx.SetOutput(node, 0, out);
  return absl::OkStatus();
}

// ---- Resource-variable scatters ----

absl::StatusOr<ResourceState*> ScatteredVariable(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, 0));
  if (var->value == nullptr) return VariableNotFoundError(var->container, var->name);
  TFJIT_ASSIGN_OR_RETURN(Instruction * updates, ctx.Input(node, 2));
  if (updates->shape().element_type() != var->dtype) {
    return InvalidArgument(
        "node %s: Variable and value dtypes don't match; respectively, %s and "
        "%s",
        node.DebugName(), DTypeName(var->dtype), DTypeName(updates->shape().element_type()));
  }
  return var;
}

template <Combiner kC>
absl::Status LowerResourceScatterNd(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ScatteredVariable(ctx, node));
  TFJIT_ASSIGN_OR_RETURN(var->value,
                         EmitScatterNd(ctx, node, var->value, 1, 2, NdFlavor::kVariable, kC));
  var->written = true;
  return absl::OkStatus();
}

// ResourceScatter*: rows of params [N, ...] picked by indices (any shape), updates of shape
// indices.shape + params.shape[1:] or a scalar for every row.
template <Combiner kC>
absl::Status LowerResourceScatter(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ScatteredVariable(ctx, node));
  Instruction* params = var->value;
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * updates, ctx.Input(node, 2));
  const std::vector<int64_t>& pd = params->shape().dims();
  const std::vector<int64_t>& id = indices->shape().dims();
  if (pd.empty()) {
    return InvalidArgument("node %s: params must be at least 1-D, got shape %s", node.DebugName(),
                           DimsString(pd));
  }
  std::vector<int64_t> want = id;
  want.insert(want.end(), pd.begin() + 1, pd.end());
  const bool scalar = updates->shape().rank() == 0;
  if (!scalar && updates->shape().dims() != want) {
    return InvalidArgument(
        "node %s: Must have updates.shape = indices.shape + params.shape[1:] "
        "or updates.shape = [], got updates.shape %s, indices.shape %s, "
        "params.shape %s",
        node.DebugName(), DimsString(updates->shape().dims()), DimsString(id), DimsString(pd));
  }
  if (scalar) {
    TFJIT_ASSIGN_OR_RETURN(updates, ctx.b().Broadcast(updates, want, {}));
  }
  const int64_t limit = pd[0];
  absl::StatusOr<Tensor> known = ctx.ConstantInput(node, 1);
  if (known.ok()) {
    for (int64_t i = 0; i < known->num_elements(); ++i) {
      const int64_t v = ElementAsInt64(*known, i);
      if (v < 0 || v >= limit) {
        hlo::RuntimeCheck msg;
        msg.message_template = absl::StrCat("indices{pos} = {value} is not in [0, ", limit, ")");
        msg.flat_position = false;
        msg.position_dims = id;
        return InvalidArgument("node %s: %s", node.DebugName(), msg.Message({i, v}));
      }
    }
  } else if (!ctx.CanAddRuntimeChecks()) {
    return Unimplemented(
        "node %s: %s inside a loop or conditional body compiles only with "
        "compile-time-constant indices (HLO scatter skips out-of-range "
        "indices where TF's kernel fails)",
        node.DebugName(), node.op());
  } else if (indices->shape().num_elements() > 0) {
    TFJIT_RETURN_IF_ERROR(ctx.AddIndexCheck(
        node, indices, {limit}, absl::StrCat("indices{pos} = {value} is not in [0, ", limit, ")"),
        /*flat_position=*/false, id, /*vector_value=*/false));
  }
  TFJIT_ASSIGN_OR_RETURN(
      var->value, EmitScatter(ctx, params, indices, updates, indices->shape().rank(), 1, kC));
  var->written = true;
  return absl::OkStatus();
}

// ---- UnsortedSegment* ----

// A scalar of `t` holding T's lowest (max = false) or highest finite value.
Instruction* Extreme(LoweringContext& ctx, DType t, bool highest) {
  Tensor v(t, {});
  DispatchNumeric(t, [&](auto tag) {
    using T = decltype(tag);
    *v.data<T>() = highest ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
  });
  return ctx.b().Constant(hlo::Literal::FromTensor(v));
}

template <Combiner kC>
absl::Status LowerUnsortedSegment(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * data, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ids, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Tensor num, ctx.ConstantInput(node, 2));
  const std::vector<int64_t>& dd = data->shape().dims();
  const std::vector<int64_t>& sd = ids->shape().dims();
  if (num.rank() != 0) {
    return InvalidArgument("node %s: num_segments should be a scalar, not shape %s",
                           node.DebugName(), DimsString(num.dims()));
  }
  bool prefix = sd.size() <= dd.size();
  for (size_t d = 0; prefix && d < sd.size(); ++d) prefix = sd[d] == dd[d];
  if (!prefix) {
    return InvalidArgument("node %s: data.shape = %s does not start with segment_ids.shape = %s",
                           node.DebugName(), DimsString(dd), DimsString(sd));
  }
  const int64_t segments = ElementAsInt64(num, 0);
  if (segments < 0) {
    return InvalidArgument("node %s: Input num_segments == %d must not be negative.",
                           node.DebugName(), segments);
  }
  const DType t = data->shape().element_type();
  std::vector<int64_t> out_dims = {segments};
  out_dims.insert(out_dims.end(), dd.begin() + static_cast<int64_t>(sd.size()), dd.end());
  Instruction* init = nullptr;
  if (kC == Combiner::kMax || kC == Combiner::kMin) {
    init = Extreme(ctx, t, kC == Combiner::kMin);
    TFJIT_ASSIGN_OR_RETURN(init, ctx.b().Broadcast(init, out_dims, {}));
  } else {
    TFJIT_ASSIGN_OR_RETURN(init, ctx.Splat(t, kC == Combiner::kMul ? 1.0 : 0.0, out_dims));
  }
  const std::string message =
      absl::StrCat("segment_ids{pos} = {value} is out of range [0, ", segments, ")");
  absl::StatusOr<Tensor> known = ctx.ConstantInput(node, 1);
  if (known.ok()) {
    for (int64_t i = 0; i < known->num_elements(); ++i) {
      const int64_t v = ElementAsInt64(*known, i);
      if (v >= segments) {
        hlo::RuntimeCheck msg;
        msg.message_template = message;
        msg.flat_position = false;
        msg.position_dims = sd;
        return InvalidArgument("node %s: %s", node.DebugName(), msg.Message({i, v}));
      }
    }
  } else if (!ctx.CanAddRuntimeChecks()) {
    return Unimplemented(
        "node %s: %s inside a loop or conditional body compiles only with "
        "compile-time-constant segment_ids (HLO scatter skips ids >= "
        "num_segments where TF's kernel fails)",
        node.DebugName(), node.op());
  } else if (ids->shape().num_elements() > 0 && segments == 0) {
    // Every id >= 0 fails and negative ones are dropped; an index check (which flags both)
    // cannot tell them apart.
    return Unimplemented(
        "node %s: %s with num_segments = 0 compiles only with "
        "compile-time-constant segment_ids",
        node.DebugName(), node.op());
  } else if (ids->shape().num_elements() > 0) {
    // Negative ids are dropped, not errors: check max(id, 0) against num_segments.
    const DType it = ids->shape().element_type();
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(it, 0.0, sd));
    TFJIT_ASSIGN_OR_RETURN(Instruction * neg,
                           ctx.b().Compare(hlo::ComparisonDirection::kLt, ids, zero));
    TFJIT_ASSIGN_OR_RETURN(Instruction * checked, ctx.b().Select(neg, zero, ids));
    TFJIT_RETURN_IF_ERROR(ctx.AddIndexCheck(node, checked, {segments}, message,
                                            /*flat_position=*/false, sd, /*vector_value=*/false));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                         EmitScatter(ctx, init, ids, data, static_cast<int64_t>(sd.size()), 1, kC));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

}  // namespace

void AppendScatterSegmentLowerings(std::vector<OpLowering>* table) {
  table->push_back({"ScatterNd", LowerScatterNd});
  table->push_back({"SparseToDense", LowerSparseToDense});
  table->push_back({"TensorScatterUpdate", LowerTensorScatter<Combiner::kAssign>});
  table->push_back({"TensorScatterAdd", LowerTensorScatter<Combiner::kAdd>});
  table->push_back({"TensorScatterSub", LowerTensorScatter<Combiner::kSub>});
  table->push_back({"TensorScatterMin", LowerTensorScatter<Combiner::kMin>});
  table->push_back({"TensorScatterMax", LowerTensorScatter<Combiner::kMax>});
  table->push_back({"UnsortedSegmentSum", LowerUnsortedSegment<Combiner::kAdd>});
  table->push_back({"UnsortedSegmentProd", LowerUnsortedSegment<Combiner::kMul>});
  table->push_back({"UnsortedSegmentMax", LowerUnsortedSegment<Combiner::kMax>});
  table->push_back({"UnsortedSegmentMin", LowerUnsortedSegment<Combiner::kMin>});
  auto resource = [&](const char* op, LoweringFn fn) {
    OpLowering l{op, fn};
    l.takes_resource = true;
    table->push_back(l);
  };
  resource("ResourceScatterUpdate", LowerResourceScatter<Combiner::kAssign>);
  resource("ResourceScatterAdd", LowerResourceScatter<Combiner::kAdd>);
  resource("ResourceScatterSub", LowerResourceScatter<Combiner::kSub>);
  resource("ResourceScatterMul", LowerResourceScatter<Combiner::kMul>);
  resource("ResourceScatterDiv", LowerResourceScatter<Combiner::kDiv>);
  resource("ResourceScatterMin", LowerResourceScatter<Combiner::kMin>);
  resource("ResourceScatterMax", LowerResourceScatter<Combiner::kMax>);
  resource("ResourceScatterNdUpdate", LowerResourceScatterNd<Combiner::kAssign>);
  resource("ResourceScatterNdAdd", LowerResourceScatterNd<Combiner::kAdd>);
  resource("ResourceScatterNdSub", LowerResourceScatterNd<Combiner::kSub>);
}

}  // namespace tfjit::tf2hlo
