// Known issue A's message (a_variable_device.h).
#include "compiler/rules/a_variable_device.h"

#include "compiler/rules/rule.h"
#include "core/status.h"

namespace tfjit::rules {

absl::Status VariableOnOtherDeviceError(const std::string& variable,
                                        const std::string& variable_device,
                                        const std::string& cluster_device, const tf::Node& user,
                                        const std::string& creator,
                                        const std::string& cluster_name) {
  return Tag(AttachNode(InvalidArgument(
                            "Trying to access resource %s located in device %s from device %s\n"
                            " Cf. https://www.tensorflow.org/xla/known_issues#tfvariable_on_a_"
                            "different_device\n"
                            " Node %s uses variable '%s' (created by '%s') in %s, compiled for %s. "
                            "Fix: create the variable on %s (int32 variables always stay in host "
                            "memory: use int64 on GPUs), or run with --autofix to copy it to the "
                            "cluster's device for the run and write it back.",
                            variable, variable_device, cluster_device, user.DebugName(), variable,
                            creator, cluster_name, cluster_device, cluster_device),
                        user.name(), user.op()),
             RuleId::kVariableDevice);
}

}  // namespace tfjit::rules
