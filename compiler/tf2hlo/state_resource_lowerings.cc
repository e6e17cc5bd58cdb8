// Lowerings of resource-variable ops. A cluster receives each variable it touches as a
// parameter holding the value at launch; reads and writes update the variable's current
// value in dependency order, and the executor writes back every written variable's final
// value (extra results after the cluster outputs, see ResourceUpdateInputs).
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

absl::StatusOr<hlo::Instruction*> CurrentValue(LoweringContext& ctx, const tf::Node& node,
                                               const ResourceState& var) {
  if (var.value == nullptr) return VariableNotFoundError(var.container, var.name);
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(node, "dtype"));
  if (dtype != var.dtype) {
    return InvalidArgument("node %s: Trying to read variable with wrong dtype. Expected %s got %s",
                           node.DebugName(), DTypeName(var.dtype), DTypeName(dtype));
  }
  return var.value;
}

absl::Status LowerReadVariableOp(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, 0));
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * value, CurrentValue(ctx, node, *var));
  if (var->written) {
    // TF does not look through a write earlier in the cluster: the value read is unknown at
    // compile time (known issue F). A same-shape reshape marks this use only.
    TFJIT_ASSIGN_OR_RETURN(value, ctx.b().Reshape(value, value->shape().dims()));
    ctx.MarkNotConstant(value);
  }
  ctx.SetOutput(node, 0, value);
  return absl::OkStatus();
}

absl::Status CheckAssignedDType(const tf::Node& node, const ResourceState& var,
                                const hlo::Instruction* value) {
  if (value->shape().element_type() != var.dtype) {
    return InvalidArgument(
        "node %s: Variable and value dtypes don't match; respectively, %s and "
        "%s",
        node.DebugName(), DTypeName(var.dtype), DTypeName(value->shape().element_type()));
  }
  return absl::OkStatus();
}

absl::Status LowerAssignVariableOp(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, 0));
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * value, ctx.Input(node, 1));
  TFJIT_RETURN_IF_ERROR(CheckAssignedDType(node, *var, value));
  var->value = value;
  var->written = true;
  return absl::OkStatus();
}

template <hlo::Opcode kOp>
absl::Status LowerAssignUpdate(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, 0));
  if (var->value == nullptr) return VariableNotFoundError(var->container, var->name);
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * delta, ctx.Input(node, 1));
  TFJIT_RETURN_IF_ERROR(CheckAssignedDType(node, *var, delta));
  if (delta->shape().dims() != var->value->shape().dims()) {
    return InvalidArgument(
        "node %s: Cannot update variable with shape %s using a Tensor with "
        "shape %s, shapes must be equal.",
        node.DebugName(), var->value->shape().ToString(), delta->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(var->value, ctx.b().Binary(kOp, var->value, delta));
  var->written = true;
  return absl::OkStatus();
}

absl::Status LowerVarIsInitializedOp(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, 0));
  ctx.SetOutput(node, 0, ctx.b().ScalarConstant<bool>(DType::kBool, var->value != nullptr));
  return absl::OkStatus();
}

// The variable's shape, a constant: every value a cluster sees has a static shape.
absl::Status LowerVariableShape(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, 0));
  if (var->value == nullptr) return VariableNotFoundError(var->container, var->name);
  const hlo::Instruction* value = var->value;  // VariableShape has no dtype attr to check
  TFJIT_ASSIGN_OR_RETURN(DType out_type, tf::GetTypeAttr(node, "out_type"));
  const std::vector<int64_t>& dims = value->shape().dims();
  Tensor shape =
      out_type == DType::kInt32
          ? Tensor::FromVector<int32_t>(out_type, {static_cast<int64_t>(dims.size())},
                                        std::vector<int32_t>(dims.begin(), dims.end()))
          : Tensor::FromVector<int64_t>(out_type, {static_cast<int64_t>(dims.size())}, dims);
  ctx.SetOutput(node, 0, ctx.b().Constant(hlo::Literal::FromTensor(shape)));
  return absl::OkStatus();
}

// TF1 reference-variable updates (Assign, AssignAdd, AssignSub; --autofix only, see
// CompilableRefUpdateInputs): the variable's cluster input is bound like a resource, and the
// op's output, the reference again, reads the updated value.
template <LoweringFn kUpdate>
absl::Status LowerRefUpdate(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, 0));
  if (node.op() == "Assign") {
    // The kernel's rule: an initialized variable keeps its shape unless validate_shape=false.
    TFJIT_ASSIGN_OR_RETURN(bool validate, tf::GetBoolAttrOr(node, "validate_shape", true));
    TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * value, ctx.Input(node, 1));
    if (validate && var->value != nullptr && var->value->shape().dims() != value->shape().dims()) {
      return InvalidArgument(
          "node %s: Assign requires shapes of both tensors to match. lhs "
          "shape= %s rhs shape= %s",
          node.DebugName(), var->value->shape().ToString(), value->shape().ToString());
    }
  } else if (var->value == nullptr) {
    return FailedPrecondition("Attempting to use uninitialized value %s", var->name);
  }
  TFJIT_RETURN_IF_ERROR(kUpdate(ctx, node));
  ctx.AliasResource({const_cast<tf::Node*>(&node), 0}, node.input(0));
  return absl::OkStatus();
}

}  // namespace

void AppendResourceLowerings(std::vector<OpLowering>* table) {
  table->push_back({"Assign", LowerRefUpdate<LowerAssignVariableOp>});
  table->push_back({"AssignAdd", LowerRefUpdate<LowerAssignUpdate<hlo::Opcode::kAdd>>});
  table->push_back({"AssignSub", LowerRefUpdate<LowerAssignUpdate<hlo::Opcode::kSubtract>>});
  auto add = [&](const char* op, LoweringFn fn) {
    OpLowering l{op, fn};
    l.takes_resource = true;
    table->push_back(l);
  };
  add("ReadVariableOp", LowerReadVariableOp);
  add("AssignVariableOp", LowerAssignVariableOp);
  add("AssignAddVariableOp", LowerAssignUpdate<hlo::Opcode::kAdd>);
  add("AssignSubVariableOp", LowerAssignUpdate<hlo::Opcode::kSubtract>);
  add("VarIsInitializedOp", LowerVarIsInitializedOp);
  add("VariableShape", LowerVariableShape);
}

}  // namespace tfjit::tf2hlo
