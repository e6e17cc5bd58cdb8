// Placement (placement.h): nodes to devices, and the exclusions a session learns.
#include "runtime/placement.h"

#include "absl/strings/match.h"
#include "core/logging.h"
#include "frontend/attr.h"
#include "runtime/device.h"

namespace tfjit::runtime {

// Each node's device: the one it asks for when that device exists, else the default (TF's
// soft placement: a graph written for a GPU still runs where there is none).
std::vector<std::string> PlaceNodes(const tf::Graph& graph, const Placement& placement) {
  std::vector<std::string> device_of(static_cast<size_t>(graph.num_nodes()),
                                     placement.default_device);
  DeviceSet devices(placement.logical_cpus);
  for (const auto& node : graph.nodes()) {
    if (!node->requested_device().empty()) {
      absl::StatusOr<DeviceName> d = ParseDeviceName(node->requested_device());
      if (d.ok() && devices.Check(*d).ok()) {
        device_of[node->id()] = d->FullName();
      } else {
        Log(LogLevel::kInfo, "node %s asks for device '%s', which does not exist; placed on %s",
            node->DebugName(), node->requested_device(), placement.default_device);
      }
    }
    // TF has no GPU kernels for int32 variables: they stay in host memory, on CPU:0 (so a GPU
    // cluster using one meets known issue A; the workaround is int64).
    if ((node->op() == "VarHandleOp" || node->op() == "VariableV2") &&
        absl::StrContains(device_of[node->id()], "device:GPU:")) {
      absl::StatusOr<DType> dtype = tf::GetTypeAttr(*node, "dtype");
      if (dtype.ok() && *dtype == DType::kInt32) {
        device_of[node->id()] = DeviceName{"CPU", 0}.FullName();
      }
    }
  }
  return device_of;
}

bool LearnedExclusions::Add(const tf::Graph* graph, const tf::Node& node, std::string why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (excluded_.size() >= 64) return false;
  if (!excluded_.insert({{graph, node.id()}, std::move(why)}).second) return false;
  ++generation_;
  return true;
}

void LearnedExclusions::AddTo(const tf::Graph* graph,
                              absl::flat_hash_map<int, std::string>* excluded) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, why] : excluded_) {
    if (key.first == graph) excluded->insert({key.second, why});
  }
}

int LearnedExclusions::generation() const { return generation_.load(); }

}  // namespace tfjit::runtime
