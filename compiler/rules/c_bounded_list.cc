// Known issue C's message and check (c_bounded_list.h).
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

absl::Status CheckListBounded(const tf::Node& node, int64_t declared, bool has_bound) {
  if (declared >= 0 || has_bound) return absl::OkStatus();
  return UnboundedListError(node, /*reserve=*/node.op() == "TensorListReserve");
}

}  // namespace tfjit::rules
