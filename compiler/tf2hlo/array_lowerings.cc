// Lowerings of TF's array ops: constants, identities, reshapes, transposes, concat, pack.
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;

absl::Status LowerConst(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Tensor value, tf::GetTensorAttr(node, "value"));
  ctx.SetOutput(node, 0, ctx.b().Constant(hlo::Literal::FromTensor(value)));
  return absl::OkStatus();
}

// Identity, StopGradient, IdentityN: outputs are the inputs.
absl::Status LowerIdentity(LoweringContext& ctx, const tf::Node& node) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    ctx.SetOutput(node, i, x);
  }
  return absl::OkStatus();
}

absl::Status LowerReshape(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ctx.ConstantInputAsInts(node, 1));
  const int64_t n = x->shape().num_elements();
  int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (unknown >= 0) {
        return InvalidArgument("only one input size may be -1, not both %d and %d", unknown,
                               i);
      }
      unknown = static_cast<int>(i);
    } else if (dims[i] < 0) {
      return InvalidArgument("size %d must be non-negative, not %d", i, dims[i]);
    } else {
      known *= dims[i];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || n % known != 0) {
      return InvalidArgument("Input to reshape is a tensor with %d values, but the requested "
                             "shape requires a multiple of %d",
                             n, known);
    }
    dims[static_cast<size_t>(unknown)] = n / known;
  } else if (known != n) {
    return InvalidArgument("Input to reshape is a tensor with %d values, but the requested "
                           "shape has %d",
                           n, known);
  }
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

absl::Status LowerConcatV2(LoweringContext& ctx, const tf::Node& node) {
  const int n = node.num_inputs() - 1;
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, ctx.ConstantInputAsInts(node, n));
  if (axis_v.size() != 1) return InvalidArgument("axis must be a scalar");
  std::vector<Instruction*> xs;
  for (int i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    xs.push_back(x);
  }
  TFJIT_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_v[0], xs[0]->shape().rank(), "axis"));
  for (int i = 1; i < n; ++i) {
    const hlo::Shape& s0 = xs[0]->shape();
    const hlo::Shape& si = xs[static_cast<size_t>(i)]->shape();
    bool ok = s0.rank() == si.rank();
    for (int d = 0; ok && d < s0.rank(); ++d) ok = d == axis || s0.dim(d) == si.dim(d);
    if (!ok) {
      return InvalidArgument("ConcatOp: Dimension mismatch: input 0 is %s and input %d is %s; "
                             "all dims except axis %d must match",
                             s0.ToString(), i, si.ToString(), axis);
    }
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Concatenate(xs, axis));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerShape(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType out = node.output_types()[0];
  const std::vector<int64_t>& dims = x->shape().dims();
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
      return InvalidArgument("Shapes of all inputs must match: values[0].shape = %s != "
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

}  // namespace

void AppendArrayLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
      {"Const", LowerConst},
      // Identities pass TensorLists (HLO tuples) through as they are.
      {"Identity", LowerIdentity, false, nullptr, false, true},
      {"IdentityN", LowerIdentity, false, nullptr, false, true},
      {"StopGradient", LowerIdentity},
      {"Fill", LowerFill},
      {"Reshape", LowerReshape},
      {"Transpose", LowerTranspose},
      {"ConcatV2", LowerConcatV2},
      {"Shape", LowerShape},
      {"Pack", LowerPack},
      {"ExpandDims", LowerExpandDims},
  });
}

}  // namespace tfjit::tf2hlo
