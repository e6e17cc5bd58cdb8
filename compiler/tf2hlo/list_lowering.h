// TF's errors for TensorLists that cannot compile (known issues C and D), shared by the list
// lowerings and the clustering of TF1 TensorArrays.
#ifndef TFJIT_COMPILER_TF2HLO_LIST_LOWERING_H_
#define TFJIT_COMPILER_TF2HLO_LIST_LOWERING_H_

#include <string>

#include "absl/status/status.h"
#include "frontend/graph.h"

namespace tfjit::tf2hlo {

// INVALID_ARGUMENT "XLA compilation requires a fixed tensor list size. ..." (known issue C);
// `reserve` selects TensorListReserve's wording ("Set the number of elements.").
absl::Status FixedListSizeError(const tf::Node& node, bool reserve);

// "function/node": how LoweringOptions keys list writes across nested function bodies.
std::string ListWriteKey(const tf::Node& node);

// UNIMPLEMENTED "TensorArrays with dynamic size are not supported by XLA." (known issue D).
absl::Status DynamicSizeError(const tf::Node& node);

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_LIST_LOWERING_H_
