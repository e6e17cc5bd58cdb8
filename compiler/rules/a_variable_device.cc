// Known issue A's message and clustering's check (a_variable_device.h).
#include "compiler/rules/a_variable_device.h"

#include "absl/strings/str_cat.h"
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

std::optional<std::string> VariableOnOtherDevice(
    const tf::Node& user, absl::FunctionRef<const std::string&(const tf::Node&)> device_of) {
  if (user.num_inputs() == 0) return std::nullopt;
  const tf::Node& handle = *user.input(0).node;
  if (handle.op() != "VarHandleOp") return std::nullopt;
  const std::string& var_device = device_of(handle);
  const std::string& user_device = device_of(user);
  if (var_device == user_device) return std::nullopt;
  return absl::StrCat("its variable '", handle.name(), "' lives on ", var_device,
                      ", the node runs on ", user_device,
                      " (a cluster touches only variables on its own device)");
}

}  // namespace tfjit::rules
