// Functional control flow in the runtime: While/StatelessWhile and If/StatelessIf nodes run
// their cond/body/branch functions through the FunctionRuntime, one call per iteration.
#ifndef TFJIT_RUNTIME_CONTROL_FLOW_H_
#define TFJIT_RUNTIME_CONTROL_FLOW_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontend/graph.h"
#include "runtime/executor.h"
#include "tfjit/session.h"
#include "tfjit/tensor.h"

namespace tfjit::runtime {

// While, StatelessWhile, If, StatelessIf.
bool IsControlFlowOp(absl::string_view op);

// TF's truthiness of a predicate (functional_ops' ToBool): a scalar is true when nonzero
// (bool, float, double, int8/16/32/64, uint8; a string when non-empty); a non-scalar is true
// when it has elements. INVALID_ARGUMENT "<dtype> cannot be converted to a boolean" otherwise.
absl::StatusOr<bool> ToBool(const Tensor& t);

// Loop: while ToBool(cond(vars)) do vars = body(vars); the outputs are the final vars. Loop
// variables may change shape between iterations (they never do in compiled code);
// `parallel_iterations` is ignored: iterations run one after the other.
absl::Status RunWhile(const tf::Node& node, const std::vector<Tensor>& inputs,
                      const ExecContext& ctx, std::vector<Tensor>* outputs, RunStats* stats);

// outputs = (ToBool(inputs[0]) ? then_branch : else_branch)(inputs[1..]).
absl::Status RunIf(const tf::Node& node, const std::vector<Tensor>& inputs, const ExecContext& ctx,
                   std::vector<Tensor>* outputs, RunStats* stats);

// Dispatches to RunWhile / RunIf by op. `stats` receives the sum over every function call.
absl::Status RunControlFlow(const tf::Node& node, const std::vector<Tensor>& inputs,
                            const ExecContext& ctx, std::vector<Tensor>* outputs, RunStats* stats);

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_CONTROL_FLOW_H_
