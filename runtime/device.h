// Device names in TF's spelling and the set of devices a session has.
#ifndef TFJIT_RUNTIME_DEVICE_H_
#define TFJIT_RUNTIME_DEVICE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tfjit::runtime {

struct DeviceName {
  std::string type;  // "CPU" or "GPU"
  int index = 0;
  // "/job:localhost/replica:0/task:0/device:CPU:0"
  std::string FullName() const;
  bool operator==(const DeviceName&) const = default;
};

// Accepts "cpu:0", "CPU:0", "/cpu:0", "/device:CPU:0", "/job:localhost/replica:0/task:0/
// device:CPU:0" and "/job:localhost/replica:0/task:0/cpu:0". INVALID_ARGUMENT otherwise.
absl::StatusOr<DeviceName> ParseDeviceName(absl::string_view text);

// The devices of a session: CPU:0..n-1, and GPU:0..m-1 for the GPUs the CUDA driver reports
// (none without a driver; backends/gpu/gpu_backend.h).
class DeviceSet {
 public:
  explicit DeviceSet(int logical_cpus) : logical_cpus_(logical_cpus) {}
  // FAILED_PRECONDITION naming the device and what exists when it is absent.
  absl::Status Check(const DeviceName& device) const;
  int logical_cpus() const { return logical_cpus_; }

 private:
  int logical_cpus_;
};

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_DEVICE_H_
