// Known issue B: a TensorList (a DT_VARIANT value: what a TF2 TensorArray is) may not cross
// between compiled code and the runtime. Checked when a cluster is lowered (CheckNoListCrosses,
// from tf2hlo::LowerCluster: an input or output of variant type); auto-clustering without the
// autofix keeps every node that carries a list in the runtime (CarriesTensorList), as TF does.
// Autofix (KeepListsOnOneSide, from clustering): list ops compile, and those at a boundary of
// what compiles stay in the runtime with every list op on their path, so no list crosses.
#ifndef TFJIT_COMPILER_RULES_B_LIST_CROSSING_H_
#define TFJIT_COMPILER_RULES_B_LIST_CROSSING_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "frontend/graph.h"

namespace tfjit::rules {

// TF's UNIMPLEMENTED "Support for TensorList crossing the XLA/TF boundary is not implemented",
// then which list would enter (`output` false) or leave (`output` true) cluster `cluster` and
// the fix; attached to the list's producer.
absl::Status ListCrossingError(const tf::Output& crossing, absl::string_view cluster, bool output);

// The check at a cluster's boundary: ListCrossingError for the first output, then the first
// input, of variant type; OK when none is.
absl::Status CheckNoListCrosses(absl::Span<const tf::Output> inputs,
                                absl::Span<const tf::Output> outputs, absl::string_view cluster);

// Whether `node` takes or gives a TensorList (a variant) or is a TF1 TensorArray op.
bool CarriesTensorList(const tf::Node& node);

// A node the autofix moved to the runtime, and why (for explain and the log).
struct KeptInRuntime {
  const tf::Node* node;
  std::string why;
};

// Autofix B. `compiled[node id]` says what would compile; a node that would give a list to the
// runtime (a consumer that does not compile, or an output in `fetched`) or take one from it is
// unmarked, until nothing changes. `runs(node)` says whether a consumer runs at all (one outside
// the pruned subgraph does not). Returns the unmarked nodes in the order unmarked.
std::vector<KeptInRuntime> KeepListsOnOneSide(
    const tf::Graph& graph, absl::FunctionRef<bool(const tf::Node&)> runs,
    const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fetched,
    std::vector<bool>& compiled);

}  // namespace tfjit::rules

#endif  // TFJIT_COMPILER_RULES_B_LIST_CROSSING_H_
