// Lowerings of the graph family (docs/DESIGN.md, "Op families"): Assert. The graph family's
// pass-through ops (Const, Identity, NoOp, ...) share array_lowerings.cc's code.
#include <vector>

#include "compiler/tf2hlo/op_lowerings.h"

namespace tfjit::tf2hlo {
namespace {

// Assert produces no values; XLA drops Assert from compiled code.
absl::Status LowerAssert(LoweringContext&, const tf::Node&) { return absl::OkStatus(); }

}  // namespace

void AppendGraphLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
                                  {"Assert", LowerAssert},
                              });
}

}  // namespace tfjit::tf2hlo
