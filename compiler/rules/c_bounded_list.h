// Known issue C: a list that a loop accumulates into needs a fixed maximum size when compiled
// (EmptyTensorList's max_num_elements, TensorListReserve's num_elements; TF2 gradient
// accumulators take the While's maximum_iterations, -1 when the user gave none). Checked when
// the list is lowered (CheckListBounded, from compiler/tf2hlo/state_list_lowerings.cc). Autofix:
// the loop's trip count, when the graph proves it (compiler/tf2hlo/loop_analysis.h,
// LoweringContext::ListBound).
#ifndef TFJIT_COMPILER_RULES_C_BOUNDED_LIST_H_
#define TFJIT_COMPILER_RULES_C_BOUNDED_LIST_H_

#include <cstdint>

#include "absl/status/status.h"
#include "frontend/graph.h"

namespace tfjit::rules {

// TF's INVALID_ARGUMENT "XLA compilation requires a fixed tensor list size. Set the max number
// of elements. ..." (`reserve`: TensorListReserve's wording, "Set the number of elements.").
absl::Status UnboundedListError(const tf::Node& node, bool reserve);

// The lowering's check for the list `node` makes (EmptyTensorList or TensorListReserve):
// UnboundedListError, in the op's words, when its `declared` size is unknown (negative) and the
// autofix proved no bound (`has_bound`); OK otherwise.
absl::Status CheckListBounded(const tf::Node& node, int64_t declared, bool has_bound);

}  // namespace tfjit::rules

#endif  // TFJIT_COMPILER_RULES_C_BOUNDED_LIST_H_
