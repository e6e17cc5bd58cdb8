// Known issue C's message (c_bounded_list.h).
#include "compiler/rules/c_bounded_list.h"

#include "compiler/rules/rule.h"
#include "core/status.h"

namespace tfjit::rules {

absl::Status UnboundedListError(const tf::Node& node, bool reserve) {
  return Tag(AttachNode(InvalidArgument(
                            "XLA compilation requires a fixed tensor list size. Set the %s This "
                            "could also happen if you're using a TensorArray in a while loop that "
                            "does not have its maximum_iteration set, you can fix this by setting "
                            "maximum_iteration to a suitable value.",
                            reserve ? "number of elements." : "max number of elements."),
                        node.name(), node.op()),
             RuleId::kBoundedList);
}

}  // namespace tfjit::rules
