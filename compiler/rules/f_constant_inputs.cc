// Known issue F's message and check (f_constant_inputs.h).
#include "compiler/rules/f_constant_inputs.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "compiler/rules/rule.h"
#include "core/status.h"

namespace tfjit::rules {
namespace {

// TF's text (shared/docs/known-issues.md), kept verbatim.
constexpr char kConstantExplanation[] =
    "XLA compilation requires that operator arguments that represent shapes or dimensions be "
    "evaluated to concrete values at compile time. This error means that a shape or dimension "
    "argument could not be evaluated at compile time, usually because the value of the argument "
    "depends on a parameter to the computation, on a variable, or on a stateful operation such "
    "as a random number generator.";

}  // namespace

absl::Status NotConstantError(const tf::Node& node, int input) {
  return Tag(AttachNode(InvalidArgument("Input %d to node `%s` with op %s must be a compile-time "
                                        "constant.\n\n%s",
                                        input, node.name(), node.op(), kConstantExplanation),
                        node.name(), node.op()),
             RuleId::kConstantInputs);
}

std::vector<int> InputsThatMustBeConstant(
    absl::Span<const tf::Node* const> nodes, absl::Span<const tf::Output> inputs,
    absl::FunctionRef<std::vector<int>(const tf::Node&)> constant_inputs_of,
    absl::FunctionRef<bool(const tf::Output&)> sized_at_run_time) {
  const absl::flat_hash_set<const tf::Node*> in_cluster(nodes.begin(), nodes.end());
  absl::flat_hash_set<std::pair<const tf::Node*, int>> needed;
  std::vector<tf::Output> work;
  for (const tf::Node* node : nodes) {
    for (int i : constant_inputs_of(*node)) {
      if (i < node->num_inputs()) work.push_back(node->input(i));
    }
  }
  // A needed value produced inside the cluster makes its producer's inputs needed, except
  // for ops whose value depends only on (static) input shapes.
  while (!work.empty()) {
    const tf::Output out = work.back();
    work.pop_back();
    if (!needed.insert({out.node, out.index}).second) continue;
    if (!in_cluster.contains(out.node) || sized_at_run_time(out)) continue;
    const std::string& op = out.node->op();
    if (op == "Shape" || op == "Size" || op == "Rank" || op == "Const") continue;
    for (const tf::Output& in : out.node->inputs()) work.push_back(in);
  }
  std::vector<int> result;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (needed.contains(std::pair<const tf::Node*, int>(inputs[i].node, inputs[i].index))) {
      result.push_back(static_cast<int>(i));
    }
  }
  return result;
}

}  // namespace tfjit::rules
