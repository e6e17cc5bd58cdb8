// Known issue D's message and checks (d_dynamic_array.h).
#include "compiler/rules/d_dynamic_array.h"

#include "compiler/rules/rule.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::rules {

absl::Status DynamicArrayError(const tf::Node& node) {
  return Tag(AttachNode(Unimplemented("TensorArrays with dynamic size are not supported by XLA."),
                        node.name(), node.op()),
             RuleId::kDynamicArray);
}

bool IsDynamicTensorArray(const tf::Node& node) {
  return node.op() == "TensorArrayV3" &&
         tf::GetBoolAttrOr(node, "dynamic_size", false).value_or(false);
}

bool GrowsTensorList(const tf::Node& node) {
  if (node.op() == "TensorListResize") return true;
  return node.op() == "TensorListSetItem" &&
         tf::GetBoolAttrOr(node, "resize_if_index_out_of_bounds", false).value_or(false);
}

absl::Status CheckListGrowth(const tf::Node& node, bool bounded) {
  if (!GrowsTensorList(node)) return absl::OkStatus();
  if (bounded && node.op() != "TensorListResize") return absl::OkStatus();
  return DynamicArrayError(node);
}

}  // namespace tfjit::rules
