// Known issue B: a TensorList (a DT_VARIANT value: what a TF2 TensorArray is) may not cross
// between compiled code and the runtime. Checked when a cluster is lowered
// (tf2hlo::LowerCluster: an input or output of variant type) and, in must-compile mode, by
// clustering. Autofix: auto-clustering keeps the list's producers and consumers on one side.
#ifndef TFJIT_COMPILER_RULES_B_LIST_CROSSING_H_
#define TFJIT_COMPILER_RULES_B_LIST_CROSSING_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "frontend/graph.h"

namespace tfjit::rules {

// TF's UNIMPLEMENTED "Support for TensorList crossing the XLA/TF boundary is not implemented",
// then which list would enter (`output` false) or leave (`output` true) cluster `cluster` and
// the fix; attached to the list's producer.
absl::Status ListCrossingError(const tf::Output& crossing, absl::string_view cluster, bool output);

}  // namespace tfjit::rules

#endif  // TFJIT_COMPILER_RULES_B_LIST_CROSSING_H_
