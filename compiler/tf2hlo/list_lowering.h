// TF's errors for TensorLists that cannot compile (known issues C and D), shared by the list
// lowerings and the clustering of TF1 TensorArrays.
#ifndef TFJIT_COMPILER_TF2HLO_LIST_LOWERING_H_
#define TFJIT_COMPILER_TF2HLO_LIST_LOWERING_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/hlo/shape.h"
#include "frontend/graph.h"

namespace tfjit::hlo {
class Instruction;
}  // namespace tfjit::hlo

namespace tfjit::tf2hlo {

class LoweringContext;

// Zeros of a list buffer holding `capacity` elements of shape `element`: [capacity, dims...],
// or for a list of lists (an element that is a (buffer, length) tuple) each part stacked so.
absl::StatusOr<hlo::Instruction*> StackedListZeros(LoweringContext& ctx, int64_t capacity,
                                                   const hlo::Shape& element);

// "function/node": how LoweringOptions keys list writes across nested function bodies.
std::string ListWriteKey(const tf::Node& node);

// The TensorListReserve or TensorListFromTensor whose length the TensorList `list` still has:
// followed back through ops that keep the length (writes that do not resize, scatters into
// the list, identities, and While loops whose body passes that loop variable through such
// ops); nullopt when some op on the way may change it. The length is then known when the
// list's cluster compiles (TF1 TensorArraySizeV3 after functionalization: the stacks after a
// tf.map_fn take their Range bounds from it).
std::optional<tf::Output> ListLengthOrigin(const tf::Output& list);

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_LIST_LOWERING_H_
