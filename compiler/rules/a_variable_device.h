// Known issue A: a compiled cluster runs on one device and reads or writes only the variables
// on that device. Checked at launch, before compiling, for every resource input (the cluster
// kernel, runtime/cluster_kernel.cc); auto-clustering keeps a node whose variable lives on
// another device out of clusters, as TF does (VariableOnOtherDevice). Autofix: the variable is
// copied to the cluster's device for the run and written back. Placement keeps int32 variables
// asked for on a GPU on CPU:0, as TF does (runtime/placement.h), so a GPU cluster touching one
// meets this rule.
#ifndef TFJIT_COMPILER_RULES_A_VARIABLE_DEVICE_H_
#define TFJIT_COMPILER_RULES_A_VARIABLE_DEVICE_H_

#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "frontend/graph.h"

namespace tfjit::rules {

// TF's INVALID_ARGUMENT "Trying to access resource <var> located in device <d> from device
// <d'>" with its known-issues link, then where and how to fix it. `user`: the cluster node
// that reads the variable; `creator`: the node that created it.
absl::Status VariableOnOtherDeviceError(const std::string& variable,
                                        const std::string& variable_device,
                                        const std::string& cluster_device, const tf::Node& user,
                                        const std::string& creator,
                                        const std::string& cluster_name);

// Auto-clustering's check: whether `user`, a resource op whose input 0 is its variable's
// handle, runs on another device than the VarHandleOp that made the variable (`device_of`
// gives each node's device). Returns why, for explain, when it does.
std::optional<std::string> VariableOnOtherDevice(
    const tf::Node& user, absl::FunctionRef<const std::string&(const tf::Node&)> device_of);

}  // namespace tfjit::rules

#endif  // TFJIT_COMPILER_RULES_A_VARIABLE_DEVICE_H_
