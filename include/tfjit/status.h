// Public error type: tfjit reports every failure as an absl::Status (no exceptions).
#ifndef TFJIT_INCLUDE_TFJIT_STATUS_H_
#define TFJIT_INCLUDE_TFJIT_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tfjit {

using Status = absl::Status;
template <typename T>
using StatusOr = absl::StatusOr<T>;

// Type URL of the payload that names the graph node an error is about. Its value is
// "<node name>\t<op type>": status.GetPayload(kNodePayloadUrl) returns it (absent for errors
// about no particular node).
inline constexpr char kNodePayloadUrl[] = "tfjit.dev/node";

}  // namespace tfjit

#endif  // TFJIT_INCLUDE_TFJIT_STATUS_H_
