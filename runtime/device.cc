// Device-name parsing and device presence checks.
#include "runtime/device.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/gpu/gpu_backend.h"
#include "core/status.h"

namespace tfjit::runtime {

std::string DeviceName::FullName() const {
  return absl::StrCat("/job:localhost/replica:0/task:0/device:", type, ":", index);
}

absl::StatusOr<DeviceName> ParseDeviceName(absl::string_view text) {
  // Keep the last "TYPE:N" pair: every accepted spelling ends with it, after an optional
  // "device:" component.
  std::vector<std::string> parts = absl::StrSplit(text, '/', absl::SkipEmpty());
  if (!parts.empty()) {
    std::string last = parts.back();
    if (absl::StartsWith(last, "device:")) last = last.substr(7);
    std::vector<std::string> tn = absl::StrSplit(last, ':');
    int index = 0;
    if (tn.size() == 2 && absl::SimpleAtoi(tn[1], &index) && index >= 0) {
      std::string type = absl::AsciiStrToUpper(tn[0]);
      if (type == "CPU" || type == "GPU") return DeviceName{type, index};
    }
  }
  return InvalidArgument(
      "invalid device name '%s'; use e.g. 'cpu:0', 'CPU:1' or "
      "'/job:localhost/replica:0/task:0/device:CPU:0'",
      text);
}

absl::Status DeviceSet::Check(const DeviceName& device) const {
  if (device.type == "GPU") {
    const absl::Status gpu = gpu::CheckGpu(device.index);
    if (gpu.ok()) return gpu;
    return FailedPrecondition("device %s does not exist: %s; use --device cpu:0", device.FullName(),
                              gpu.message());
  }
  if (device.index >= logical_cpus_) {
    return FailedPrecondition(
        "device %s does not exist: the session has %d logical CPU "
        "device(s); raise the number of logical CPUs (--logical-cpus %d)",
        device.FullName(), logical_cpus_, device.index + 1);
  }
  return absl::OkStatus();
}

}  // namespace tfjit::runtime
