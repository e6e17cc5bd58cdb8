// Known issue B: the boundary check, the auto-clustering test and the autofix
// (b_list_crossing.h).
#include "compiler/rules/b_list_crossing.h"

#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/rules/rule.h"
#include "core/status.h"

namespace tfjit::rules {

absl::Status ListCrossingError(const tf::Output& crossing, absl::string_view cluster, bool output) {
  const tf::Node& node = *crossing.node;
  return Tag(
      AttachNode(
          Unimplemented("Support for TensorList crossing the XLA/TF boundary is not implemented\n"
                        "\tThe TensorList %s:%d (from %s) %s the compiled %s. Fix: compile the "
                        "code that %s the list too (e.g. put it in the same tf.function(jit_compile"
                        "=True)), or run with --autofix to keep the list in the runtime.",
                        node.name(), crossing.index, node.DebugName(),
                        output ? "would leave" : "would enter", std::string(cluster),
                        output ? "consumes" : "produces"),
          node.name(), node.op()),
      RuleId::kListCrossing);
}

absl::Status CheckNoListCrosses(absl::Span<const tf::Output> inputs,
                                absl::Span<const tf::Output> outputs, absl::string_view cluster) {
  for (const tf::Output& out : outputs) {
    if (out.node->output_types()[out.index] == DType::kVariant) {
      return ListCrossingError(out, cluster, /*output=*/true);
    }
  }
  for (const tf::Output& in : inputs) {
    if (in.node->output_types()[in.index] == DType::kVariant) {
      return ListCrossingError(in, cluster, /*output=*/false);
    }
  }
  return absl::OkStatus();
}

bool CarriesTensorList(const tf::Node& node) {
  auto variant = [](DType t) { return t == DType::kVariant; };
  return std::any_of(node.input_types().begin(), node.input_types().end(), variant) ||
         std::any_of(node.output_types().begin(), node.output_types().end(), variant) ||
         absl::StartsWith(node.op(), "TensorArray");
}

namespace {

// Why `node`, which would compile, passes a list across the boundary ("" when it does not).
std::string WhyItCrosses(const tf::Node& node, absl::FunctionRef<bool(const tf::Node&)> runs,
                         const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fetched,
                         const std::vector<bool>& compiled) {
  std::string why;
  for (int k = 0; k < node.num_outputs() && why.empty(); ++k) {
    if (node.output_types()[k] != DType::kVariant) continue;
    if (fetched.contains({&node, k})) why = "its TensorList is an output of the function";
    for (const auto& [consumer, slot] : node.data_consumers()) {
      if (!runs(*consumer)) continue;
      if (consumer->input(slot).index == k && !compiled[consumer->id()]) {
        why = absl::StrCat("its TensorList goes to ", consumer->DebugName(),
                           ", which runs in the runtime");
      }
    }
  }
  for (int i = 0; i < node.num_inputs() && why.empty(); ++i) {
    const tf::Output& in = node.input(i);
    if (node.input_types()[i] == DType::kVariant && !compiled[in.node->id()]) {
      why = absl::StrCat("its TensorList comes from ", in.node->DebugName(),
                         ", which runs in the runtime");
    }
  }
  return why;
}

}  // namespace

std::vector<KeptInRuntime> KeepListsOnOneSide(
    const tf::Graph& graph, absl::FunctionRef<bool(const tf::Node&)> runs,
    const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fetched,
    std::vector<bool>& compiled) {
  std::vector<KeptInRuntime> kept;
  for (bool changed = true; changed;) {
    changed = false;
    for (const tf::Node* node : graph.topological_order()) {
      if (!compiled[node->id()]) continue;
      std::string why = WhyItCrosses(*node, runs, fetched, compiled);
      if (why.empty()) continue;
      compiled[node->id()] = false;
      kept.push_back({node, std::move(why)});
      changed = true;
    }
  }
  return kept;
}

}  // namespace tfjit::rules
