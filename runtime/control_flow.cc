// While/If in the runtime: TF's predicate truthiness, the loop driver and the branch choice;
// every function call goes through FunctionRuntime::CallFunction (recursion guard, body jit
// mode, error context).
#include "runtime/control_flow.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/status.h"
#include "runtime/function_runtime.h"

namespace tfjit::runtime {
namespace {

// Calls `node`'s function `attr` and adds its statistics to *stats.
absl::Status Call(const tf::Node& node, const std::string& attr, const std::vector<Tensor>& in,
                  const ExecContext& ctx, std::vector<Tensor>* out, RunStats* stats) {
  RunStats nested;
  TFJIT_RETURN_IF_ERROR(ctx.functions->CallFunction(node, attr, in, ctx, out, &nested));
  AddNestedStats(nested, stats);
  return absl::OkStatus();
}

// The values a function returned must match the node's declared output types (While: T,
// If: Tout); `what` names the function attr.
absl::Status CheckOutputs(const tf::Node& node, const std::string& what,
                          const std::vector<Tensor>& values) {
  if (static_cast<int>(values.size()) != node.num_outputs()) {
    return AttachNode(InvalidArgument("node %s: function '%s' returned %d value(s), but the node "
                                      "has %d output(s)",
                                      node.DebugName(), what, values.size(), node.num_outputs()),
                      node.name(), node.op());
  }
  for (int k = 0; k < node.num_outputs(); ++k) {
    if (values[k].dtype() != node.output_types()[k]) {
      return AttachNode(InvalidArgument("node %s: function '%s' returns %s for output %d, but the "
                                        "node declares %s",
                                        node.DebugName(), what, DTypeName(values[k].dtype()), k,
                                        DTypeName(node.output_types()[k])),
                        node.name(), node.op());
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsControlFlowOp(absl::string_view op) {
  return op == "While" || op == "StatelessWhile" || op == "If" || op == "StatelessIf";
}

absl::StatusOr<bool> ToBool(const Tensor& t) {
  if (t.rank() != 0) return t.num_elements() > 0;
  switch (t.dtype()) {
    case DType::kBool:
      return *t.data<bool>();
    case DType::kFloat32:
      return *t.data<float>() != 0;
    case DType::kFloat64:
      return *t.data<double>() != 0;
    case DType::kInt32:
      return *t.data<int32_t>() != 0;
    case DType::kUInt8:
      return *t.data<uint8_t>() != 0;
    case DType::kInt16:
      return *t.data<int16_t>() != 0;
    case DType::kInt8:
      return *t.data<int8_t>() != 0;
    case DType::kInt64:
      return *t.data<int64_t>() != 0;
    default:
      return InvalidArgument("%s cannot be converted to a boolean", DTypeName(t.dtype()));
  }
}

absl::Status RunWhile(const tf::Node& node, const std::vector<Tensor>& inputs,
                      const ExecContext& ctx, std::vector<Tensor>* outputs, RunStats* stats) {
  std::vector<Tensor> vars = inputs;
  for (int64_t iteration = 0;; ++iteration) {
    // Each iteration: a loop whose cond stays true ends at the run's deadline or cancel.
    absl::Status stop = CheckRunControl(ctx, node);
    if (!stop.ok()) return AppendContext(stop, absl::StrCat("in iteration ", iteration));
    std::vector<Tensor> cond_out;
    TFJIT_RETURN_IF_ERROR(Call(node, "cond", vars, ctx, &cond_out, stats));
    if (cond_out.empty()) {
      return AttachNode(InvalidArgument("node %s: Expected a single scalar which can be converted "
                                        "to a boolean, got 0 tensors.",
                                        node.DebugName()),
                        node.name(), node.op());
    }
    absl::StatusOr<bool> keep_going = ToBool(cond_out[0]);
    if (!keep_going.ok()) {
      return AttachNode(
          AppendContext(keep_going.status(),
                        absl::StrCat("in the loop condition of node ", node.DebugName())),
          node.name(), node.op());
    }
    if (!*keep_going) break;
    std::vector<Tensor> next;
    TFJIT_RETURN_IF_ERROR(Call(node, "body", vars, ctx, &next, stats));
    absl::Status s = CheckOutputs(node, "body", next);
    if (!s.ok()) return AppendContext(s, absl::StrCat("in iteration ", iteration));
    vars = std::move(next);
  }
  *outputs = std::move(vars);
  return absl::OkStatus();
}

absl::Status RunIf(const tf::Node& node, const std::vector<Tensor>& inputs, const ExecContext& ctx,
                   std::vector<Tensor>* outputs, RunStats* stats) {
  if (inputs.empty()) {
    return AttachNode(InvalidArgument("node %s has no predicate input", node.DebugName()),
                      node.name(), node.op());
  }
  absl::StatusOr<bool> pred = ToBool(inputs[0]);
  if (!pred.ok()) {
    return AttachNode(
        AppendContext(pred.status(), absl::StrCat("in the predicate of node ", node.DebugName())),
        node.name(), node.op());
  }
  const std::string branch = *pred ? "then_branch" : "else_branch";
  const std::vector<Tensor> args(inputs.begin() + 1, inputs.end());
  TFJIT_RETURN_IF_ERROR(Call(node, branch, args, ctx, outputs, stats));
  return CheckOutputs(node, branch, *outputs);
}

absl::Status RunControlFlow(const tf::Node& node, const std::vector<Tensor>& inputs,
                            const ExecContext& ctx, std::vector<Tensor>* outputs, RunStats* stats) {
  if (ctx.functions == nullptr) {
    return AttachNode(Unimplemented("node %s runs functions, but this run has no function "
                                    "runtime",
                                    node.DebugName()),
                      node.name(), node.op());
  }
  RunStats local;
  RunStats* into = stats != nullptr ? stats : &local;
  if (node.op() == "While" || node.op() == "StatelessWhile") {
    return RunWhile(node, inputs, ctx, outputs, into);
  }
  return RunIf(node, inputs, ctx, outputs, into);
}

}  // namespace tfjit::runtime
