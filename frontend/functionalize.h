// TF1 loops functionalized: each Enter/Merge/Switch/LoopCond/NextIteration/Exit frame of a
// GraphDef becomes one functional While node whose cond and body are new library functions,
// as XLA's bridge does before clustering, so the loop compiles like a tf.while_loop written
// in TF2. Innermost frames go first; an outer loop then holds the inner one's While node.
//
// A frame is left as it is (the runtime's frame executor runs it, node by node) when it holds
// TF1 conditionals (Switch/Merge that are not its loop variables'), a loop that could not be
// functionalized, or reads that cross its boundary other than through Enter and Exit; the
// result says which frames and why. Semantics kept: loop-invariant Enters (is_constant)
// become loop variables the body passes through; every stateful node of the frame runs once
// per iteration (body control outputs); Exit nodes keep their names (Identity of the While's
// output), so consumers, fetches and signatures are unchanged; a loop whose inputs are dead
// (in an untaken TF1 branch) is a While node with dead inputs, which the frame executor does
// not run.
#ifndef TFJIT_FRONTEND_FUNCTIONALIZE_H_
#define TFJIT_FRONTEND_FUNCTIONALIZE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/proto/graph.pb.h"

namespace tfjit::tf {

struct FunctionalizeResult {
  int loops = 0;  // frames that became While nodes
  int conds = 0;  // TF1 conditionals (Switch/Merge of one predicate) that became If nodes
  // TF1 TensorArrays (TensorArrayV3 and its Read/Write/Gather/Scatter/Size/Close) turned into
  // TensorList ops, whose list the flow tensor now carries (XLA represents them the same way).
  int tensor_arrays = 0;
  // What was left as it was: ("loop frame 'name'" or "conditional at Merge 'name'", why).
  std::vector<std::pair<std::string, std::string>> left;
};

struct FunctionalizeOptions {
  // Whether conditionals outside loops become If nodes too. Inside a loop a conditional must
  // (the loop cannot become a While otherwise). The session turns them in auto and all mode:
  // a compiled If needs both branches to return the same shapes, and one that does not fails
  // its auto cluster once and is then left to the runtime (runtime::LearnedExclusions).
  bool conditionals_outside_loops = true;
};

// Rewrites `def` in place (its library gains the cond and body functions). On an error the
// graph may be half rewritten: callers work on a copy.
absl::StatusOr<FunctionalizeResult> FunctionalizeLoops(tensorflow::GraphDef* def,
                                                       const FunctionalizeOptions& options = {});

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_FUNCTIONALIZE_H_
