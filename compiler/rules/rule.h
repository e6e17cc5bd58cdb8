// The known-issue rules (shared/docs/known-issues.md): XLA's six TF-interop limits and the
// unsupported-op rule, each in a file pair of this directory with its check where one is
// graph-level, TF's exact message and what its autofix (--autofix) does. This layer sits below
// compiler/tf2hlo, compiler/cluster and runtime/, where the rules fire (docs/decisions.md,
// "The known-issue rules"), and depends on frontend/ and core/ only.
//
// Every error a rule raises carries its id as a status payload (kRulePayloadUrl), so what
// fired can be named wherever the status ends up (RuleOfError). Each rule's test is
// tests/unit/rules/<its file>_test.cc.
#ifndef TFJIT_COMPILER_RULES_RULE_H_
#define TFJIT_COMPILER_RULES_RULE_H_

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tfjit::rules {

enum class RuleId {
  kVariableDevice,  // A: a variable on another device
  kListCrossing,    // B: a TensorList crossing the compiled boundary
  kBoundedList,     // C: loops accumulating into a list must be bounded
  kDynamicArray,    // D: TensorArray with dynamic_size=True
  kRandomSeeds,     // E: stateful random ops ignore their seeds when compiled
  kConstantInputs,  // F: arguments that must be compile-time constants
  kUnsupportedOps,  // ops with no lowering in must-compile code
};

struct RuleInfo {
  RuleId id;
  const char* letter;   // "A".."F", "-" for the unsupported-op rule
  const char* name;     // short and stable, e.g. "bounded-list"; what explain prints
  const char* summary;  // one line: what the rule says
  const char* autofix;  // one line: what --autofix does about it, or "none"
};

// Every rule, A to F, then the unsupported-op rule.
const std::vector<RuleInfo>& AllRules();
const RuleInfo& Info(RuleId id);

inline constexpr char kRulePayloadUrl[] = "tfjit/rule";

// `status` with `id` attached (an OK status stays OK).
absl::Status Tag(absl::Status status, RuleId id);
// The rule an error came from, if a rule raised it.
std::optional<RuleId> RuleOfError(const absl::Status& status);

}  // namespace tfjit::rules

#endif  // TFJIT_COMPILER_RULES_RULE_H_
