// ConstantFoldingPass: folds all-constant instructions by running the evaluator on them.
#include "compiler/passes/constant_folding.h"

#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/builder.h"
#include "core/status.h"

namespace tfjit::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool IsFoldable(const Instruction& inst, const ConstantFoldingOptions& options) {
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
      return false;  // nothing to fold
    case Opcode::kWhile:
      return false;  // the loop may not terminate; folding must never hang the compiler
    case Opcode::kRngBitGenerator:
    case Opcode::kCustomCall:
      return false;  // random bits and library calls belong to run time
    case Opcode::kBroadcast:
    case Opcode::kIota:
      // Backends produce these for free; folding would replace a scalar by a big literal.
      return false;
    default:
      break;
  }
  if (!inst.shape().IsArray()) return false;  // constants are arrays in the text form
  if (inst.shape().num_elements() > options.max_elements) return false;
  if (inst.operand_count() == 0) return false;
  for (const Instruction* operand : inst.operands()) {
    if (operand->opcode() != Opcode::kConstant) return false;
  }
  return true;
}

// Replaces `inst` by a constant holding its value; the old instruction is removed.
absl::Status Fold(hlo::Computation& computation, Instruction* inst) {
  std::vector<hlo::Literal> operands;
  for (const Instruction* operand : inst->operands()) operands.push_back(operand->literal());
  TFJIT_ASSIGN_OR_RETURN(hlo::Literal value, hlo::EvaluateInstruction(*inst, operands));
  hlo::Builder builder(&computation);
  builder.set_metadata(inst->metadata());
  Instruction* constant = builder.Constant(std::move(value));
  TFJIT_RETURN_IF_ERROR(computation.ReplaceAllUsesWith(inst, constant));
  return computation.RemoveInstruction(inst);
}

}  // namespace

absl::StatusOr<bool> ConstantFoldingPass::Run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* computation : module.computations()) {
    // Post order: a folded operand is already a constant when its users are visited, so
    // chains of constant arithmetic fold in one run.
    for (Instruction* inst : computation->MakePostOrder()) {
      if (!IsFoldable(*inst, options_)) continue;
      absl::Status folded = Fold(*computation, inst);
      // An evaluator gap (UNIMPLEMENTED) just leaves the instruction to run time.
      if (folded.code() == absl::StatusCode::kUnimplemented) continue;
      TFJIT_RETURN_IF_ERROR(folded);
      changed = true;
    }
  }
  return changed;
}

}  // namespace tfjit::passes
