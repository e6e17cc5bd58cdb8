// Known issue D: a TensorArray that may grow cannot compile (TF2: TensorListSetItem with
// resize_if_index_out_of_bounds, or TensorListResize; TF1: TensorArrayV3 with dynamic_size).
// TF has no single message; tfjit uses one for every form. Checked when lowering and, in
// must-compile mode, by clustering. Autofix: a fixed size when the writes' indices are bounded
// by a provable trip count.
#ifndef TFJIT_COMPILER_RULES_D_DYNAMIC_ARRAY_H_
#define TFJIT_COMPILER_RULES_D_DYNAMIC_ARRAY_H_

#include "absl/status/status.h"
#include "frontend/graph.h"

namespace tfjit::rules {

// UNIMPLEMENTED "TensorArrays with dynamic size are not supported by XLA.", on `node`.
absl::Status DynamicArrayError(const tf::Node& node);

}  // namespace tfjit::rules

#endif  // TFJIT_COMPILER_RULES_D_DYNAMIC_ARRAY_H_
