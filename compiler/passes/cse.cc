// CsePass: keys each instruction by its printed form minus name and metadata (constants by
// their shape and bytes).
#include "compiler/passes/cse.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "compiler/hlo/printer.h"
#include "core/status.h"

namespace tfjit::passes {
namespace {

using hlo::Instruction;

// The text form round-trips, so it names every attribute, the called computations, the
// shape and the operands (by their module-unique names): two instructions with equal text
// after " = " are interchangeable. Constants are keyed by shape and a hash of their bytes
// (printing megabytes of weights as text took most of a large model's compile time); equal
// keys are then compared bitwise, which also tells NaN payloads apart.
std::string Key(const Instruction& inst) {
  if (inst.opcode() == hlo::Opcode::kConstant && inst.shape().IsArray()) {
    const Tensor& t = inst.literal().tensor();
    const absl::string_view bytes(static_cast<const char*>(t.raw_data()),
                                  static_cast<size_t>(t.byte_size()));
    return absl::StrCat("constant ", inst.shape().ToString(), " ", absl::HashOf(bytes));
  }
  hlo::PrintOptions options;
  options.print_metadata = false;
  std::string text = hlo::PrintInstruction(inst, options);
  const size_t eq = text.find(" = ");
  return eq == std::string::npos ? text : text.substr(eq + 3);
}

bool Mergeable(const Instruction& inst) {
  return inst.opcode() != hlo::Opcode::kParameter && inst.opcode() != hlo::Opcode::kCustomCall;
}

absl::StatusOr<bool> RunOnComputation(hlo::Computation& computation) {
  bool changed = false;
  absl::flat_hash_map<std::string, std::vector<Instruction*>> seen;
  for (Instruction* inst : computation.MakePostOrder()) {
    if (!Mergeable(*inst)) continue;
    std::vector<Instruction*>& candidates = seen[Key(*inst)];
    Instruction* match = nullptr;
    for (Instruction* candidate : candidates) {
      if (inst->opcode() != hlo::Opcode::kConstant ||
          candidate->literal().BitwiseEquals(inst->literal())) {
        match = candidate;
        break;
      }
    }
    if (match == nullptr) {
      candidates.push_back(inst);
      continue;
    }
    TFJIT_RETURN_IF_ERROR(computation.ReplaceAllUsesWith(inst, match));
    TFJIT_RETURN_IF_ERROR(computation.RemoveInstruction(inst));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> CsePass::Run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* computation : module.computations()) {
    TFJIT_ASSIGN_OR_RETURN(bool changed_here, RunOnComputation(*computation));
    changed = changed || changed_here;
  }
  return changed;
}

}  // namespace tfjit::passes
