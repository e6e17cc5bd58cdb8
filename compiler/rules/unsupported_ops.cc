// The unsupported-op rule's message (unsupported_ops.h).
#include "compiler/rules/unsupported_ops.h"

#include "absl/strings/str_join.h"
#include "compiler/rules/rule.h"
#include "core/status.h"

namespace tfjit::rules {

absl::Status UnsupportedOpsError(absl::string_view graph, absl::string_view device,
                                 const std::vector<std::string>& entries) {
  return Tag(InvalidArgument("Detected unsupported operations when trying to compile graph %s on "
                             "%s: %s",
                             std::string(graph), std::string(device), absl::StrJoin(entries, "; ")),
             RuleId::kUnsupportedOps);
}

}  // namespace tfjit::rules
