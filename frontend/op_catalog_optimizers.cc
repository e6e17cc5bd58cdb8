// Catalog entries of the optimizers ops (docs/DESIGN.md, "Op families"): TF's arg names, type
// attrs, allowed dtypes and attr defaults (from TF's op registry), compile-time-constant and
// host-memory inputs, statefulness.
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddOptimizersOps(std::vector<OpDef>* ops) {
  (void)ops;
}

}  // namespace tfjit::tf::catalog
