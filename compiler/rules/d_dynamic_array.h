// Known issue D: a TensorArray that may grow cannot compile (TF2: TensorListSetItem with
// resize_if_index_out_of_bounds, or TensorListResize; TF1: TensorArrayV3 with dynamic_size).
// TF has no single message; tfjit uses one for every form. Checked when lowering
// (CheckListGrowth, from tf2hlo's list lowerings) and, in must-compile mode, by clustering
// (IsDynamicTensorArray: TF1 arrays are split into list ops before lowering). Autofix: a fixed
// size when the writes' indices are bounded by a provable trip count (the lowering's loop
// analysis, compiler/tf2hlo/loop_analysis.h, decides `bounded`).
#ifndef TFJIT_COMPILER_RULES_D_DYNAMIC_ARRAY_H_
#define TFJIT_COMPILER_RULES_D_DYNAMIC_ARRAY_H_

#include "absl/status/status.h"
#include "frontend/graph.h"

namespace tfjit::rules {

// UNIMPLEMENTED "TensorArrays with dynamic size are not supported by XLA.", on `node`.
absl::Status DynamicArrayError(const tf::Node& node);

// Whether `node` is a TF1 TensorArrayV3 with dynamic_size=true.
bool IsDynamicTensorArray(const tf::Node& node);

// Whether `node` may grow a TF2 list: TensorListResize, or TensorListSetItem with
// resize_if_index_out_of_bounds.
bool GrowsTensorList(const tf::Node& node);

// The lowering's check: DynamicArrayError when `node` grows a list and the growth is not
// `bounded` by a trip count the autofix proved; OK otherwise (TensorListResize always fails:
// no autofix sizes it).
absl::Status CheckListGrowth(const tf::Node& node, bool bounded);

}  // namespace tfjit::rules

#endif  // TFJIT_COMPILER_RULES_D_DYNAMIC_ARRAY_H_
