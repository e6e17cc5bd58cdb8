// CallInlinerPass: copy the callee's instructions into the entry, wire them to the call's
// operands and users.
#include "compiler/passes/call_inliner.h"

#include <memory>

#include "absl/container/flat_hash_map.h"
#include "core/status.h"

namespace tfjit::passes {

using hlo::Instruction;
using hlo::Opcode;

absl::StatusOr<bool> CallInlinerPass::Run(hlo::Module& module) {
  hlo::Computation* entry = module.entry();
  if (entry == nullptr) return false;
  bool changed = false;
  // A copied callee may hold calls of its own: repeat until none is left.
  for (bool again = true; again;) {
    again = false;
    for (Instruction* call : entry->MakePostOrder()) {
      if (call->opcode() != Opcode::kCall) continue;
      const hlo::Computation* callee = call->to_apply();
      if (callee == nullptr) return Internal("call '%s' has no computation", call->name());
      absl::flat_hash_map<const Instruction*, Instruction*> copies;
      for (const Instruction* inst : callee->MakePostOrder()) {
        if (inst->opcode() == Opcode::kParameter) {
          copies[inst] = call->operand(static_cast<int>(inst->parameter_number()));
          continue;
        }
        std::vector<Instruction*> operands;
        for (const Instruction* operand : inst->operands()) operands.push_back(copies.at(operand));
        auto copy = std::make_unique<Instruction>(inst->opcode(), inst->shape());
        copy->mutable_attrs() = inst->attrs();
        copy->set_called_computations(inst->called_computations());
        copy->set_metadata(inst->metadata());
        copies[inst] = entry->AddInstruction(std::move(copy), operands);
      }
      TFJIT_RETURN_IF_ERROR(entry->ReplaceAllUsesWith(call, copies.at(callee->root())));
      TFJIT_RETURN_IF_ERROR(entry->RemoveInstruction(call));
      changed = again = true;
      break;  // the post order is stale
    }
  }
  return changed;
}

}  // namespace tfjit::passes
