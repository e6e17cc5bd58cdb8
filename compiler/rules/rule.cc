// The rule table and the status payload that names a rule (rule.h).
#include "compiler/rules/rule.h"

#include <string>

#include "absl/strings/cord.h"

namespace tfjit::rules {

const std::vector<RuleInfo>& AllRules() {
  static const std::vector<RuleInfo>* const rules = new std::vector<RuleInfo>{
      {RuleId::kVariableDevice, "A", "variable-device",
       "a compiled cluster reads or writes only variables on its own device",
       "copy the variable to the cluster's device for the run and write it back"},
      {RuleId::kListCrossing, "B", "list-crossing",
       "a TensorList may not cross between compiled code and the runtime",
       "keep the list's producers and consumers together, in the runtime or in the cluster"},
      {RuleId::kBoundedList, "C", "bounded-list",
       "a list a loop accumulates into needs a fixed maximum size",
       "use the loop's trip count when the graph proves it"},
      {RuleId::kDynamicArray, "D", "dynamic-array",
       "a TensorArray that may grow (dynamic_size=True) cannot compile",
       "treat it as fixed-size when its writes are bounded by a provable trip count"},
      {RuleId::kRandomSeeds, "E", "random-seeds",
       "compiled stateful random ops ignore their seeds (XLA's stream), with TF's warning",
       "honour the seeds: the compiled stream continues the kernel's"},
      {RuleId::kConstantInputs, "F", "constant-inputs",
       "inputs that decide shapes or axes must be known when compiling",
       "unroll a loop whose induction variable feeds one, when its trip count is static"},
      {RuleId::kUnsupportedOps, "-", "unsupported-ops",
       "must-compile code with an op that has no lowering fails, naming every such op", "none"},
  };
  return *rules;
}

const RuleInfo& Info(RuleId id) { return AllRules()[static_cast<size_t>(id)]; }

absl::Status Tag(absl::Status status, RuleId id) {
  if (status.ok()) return status;
  status.SetPayload(kRulePayloadUrl, absl::Cord(Info(id).name));
  return status;
}

std::optional<RuleId> RuleOfError(const absl::Status& status) {
  const auto name = status.GetPayload(kRulePayloadUrl);  // absl::optional<absl::Cord>
  if (!name.has_value()) return std::nullopt;
  for (const RuleInfo& rule : AllRules()) {
    if (*name == rule.name) return rule.id;
  }
  return std::nullopt;
}

}  // namespace tfjit::rules
