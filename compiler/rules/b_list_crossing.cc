// Known issue B's message (b_list_crossing.h).
#include "compiler/rules/b_list_crossing.h"

#include <string>

#include "compiler/rules/rule.h"
#include "core/status.h"

namespace tfjit::rules {

absl::Status ListCrossingError(const tf::Output& crossing, absl::string_view cluster, bool output) {
  const tf::Node& node = *crossing.node;
  return Tag(
      AttachNode(
          Unimplemented("Support for TensorList crossing the XLA/TF boundary is not implemented\n"
                        "\tThe TensorList %s:%d (from %s) %s the compiled %s. Fix: compile the "
                        "code that %s the list too (e.g. put it in the same tf.function(jit_compile"
                        "=True)), or run with --autofix to keep the list in the runtime.",
                        node.name(), crossing.index, node.DebugName(),
                        output ? "would leave" : "would enter", std::string(cluster),
                        output ? "consumes" : "produces"),
          node.name(), node.op()),
      RuleId::kListCrossing);
}

}  // namespace tfjit::rules
