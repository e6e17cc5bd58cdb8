// The unsupported-op rule: must-compile code (a jit_compile function, --jit all) whose nodes
// include one that cannot compile fails before anything runs, naming every such node and why
// (compiler/cluster's FindClusters, the executor for TF1 control flow, the function runtime).
// No autofix: auto-clustering leaves such nodes to the runtime, which is the fix.
#ifndef TFJIT_COMPILER_RULES_UNSUPPORTED_OPS_H_
#define TFJIT_COMPILER_RULES_UNSUPPORTED_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tfjit::rules {

// TF's INVALID_ARGUMENT "Detected unsupported operations when trying to compile graph <g> on
// <device>: <entries>" with the entries ("Op (why){{node name}}") joined by "; ".
absl::Status UnsupportedOpsError(absl::string_view graph, absl::string_view device,
                                 const std::vector<std::string>& entries);

}  // namespace tfjit::rules

#endif  // TFJIT_COMPILER_RULES_UNSUPPORTED_OPS_H_
