// Lowerings of the nn_more ops to HLO (docs/DESIGN.md, "Op families"), with the semantics of
// TF's XLA kernels (tf2xla).
#include "compiler/tf2hlo/op_lowerings.h"

namespace tfjit::tf2hlo {

void AppendNnMoreLowerings(std::vector<OpLowering>* table) {
  (void)table;
}

}  // namespace tfjit::tf2hlo
