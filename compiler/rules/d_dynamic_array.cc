// Known issue D's message (d_dynamic_array.h).
#include "compiler/rules/d_dynamic_array.h"

#include "compiler/rules/rule.h"
#include "core/status.h"

namespace tfjit::rules {

absl::Status DynamicArrayError(const tf::Node& node) {
  return Tag(AttachNode(Unimplemented("TensorArrays with dynamic size are not supported by XLA."),
                        node.name(), node.op()),
             RuleId::kDynamicArray);
}

}  // namespace tfjit::rules
