// Known issue F: inputs that decide shapes or axes (the op catalog lists them per op) must be
// known when compiling. A cluster input feeding one is read at launch and joins the cache key
// (tf2hlo::MustBeConstantInputs, the cluster kernel); a value computed inside the cluster from
// something unknown at compile time (a variable written earlier in it, a stateful op, a loop
// induction variable) fails when lowering (LoweringContext::ConstantInput). Autofix: a loop
// whose induction variable feeds one is unrolled when its trip count is static and small.
#ifndef TFJIT_COMPILER_RULES_F_CONSTANT_INPUTS_H_
#define TFJIT_COMPILER_RULES_F_CONSTANT_INPUTS_H_

#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "frontend/graph.h"

namespace tfjit::rules {

// TF's INVALID_ARGUMENT "Input <i> to node `<node>` with op <Op> must be a compile-time
// constant.", a blank line, then TF's explanation, verbatim so users can search for it.
absl::Status NotConstantError(const tf::Node& node, int input);

// The check: which of a cluster's `inputs` must be known when compiling. Walks back from every
// input of `nodes` that `constant_inputs_of(node)` names, through the cluster's own nodes, and
// stops at values known from shapes alone (Shape, Size, Rank, Const) and at values
// `sized_at_run_time` says are computed from a size known only at run time (the lowering takes
// those as expressions or bounds). Returns the indices into `inputs` the walk reaches.
std::vector<int> InputsThatMustBeConstant(
    absl::Span<const tf::Node* const> nodes, absl::Span<const tf::Output> inputs,
    absl::FunctionRef<std::vector<int>(const tf::Node&)> constant_inputs_of,
    absl::FunctionRef<bool(const tf::Output&)> sized_at_run_time);

}  // namespace tfjit::rules

#endif  // TFJIT_COMPILER_RULES_F_CONSTANT_INPUTS_H_
