// Known issue F's message (f_constant_inputs.h).
#include "compiler/rules/f_constant_inputs.h"

#include "compiler/rules/rule.h"
#include "core/status.h"

namespace tfjit::rules {
namespace {

// TF's text (shared/docs/known-issues.md), kept verbatim.
constexpr char kConstantExplanation[] =
    "XLA compilation requires that operator arguments that represent shapes or dimensions be "
    "evaluated to concrete values at compile time. This error means that a shape or dimension "
    "argument could not be evaluated at compile time, usually because the value of the argument "
    "depends on a parameter to the computation, on a variable, or on a stateful operation such "
    "as a random number generator.";

}  // namespace

absl::Status NotConstantError(const tf::Node& node, int input) {
  return Tag(AttachNode(InvalidArgument("Input %d to node `%s` with op %s must be a compile-time "
                                        "constant.\n\n%s",
                                        input, node.name(), node.op(), kConstantExplanation),
                        node.name(), node.op()),
             RuleId::kConstantInputs);
}

}  // namespace tfjit::rules
