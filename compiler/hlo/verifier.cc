// The HLO verifier: structure (defined operands, use lists, parameters, ROOT, unique names,
// acyclicity) and shapes (every instruction re-inferred). Failures are INTERNAL.
#include "compiler/hlo/verifier.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/shape_inference.h"
#include "compiler/hlo/symbolic.h"
#include "core/status.h"

namespace tfjit::hlo {
namespace {

absl::Status Bad(const Computation& comp, const Instruction& inst, absl::string_view why) {
  return Internal("verifier: computation %%%s: %s: %s", comp.name(), why, PrintInstruction(inst));
}

absl::Status VerifyUseLists(const Computation& comp, const Instruction& inst) {
  for (const Instruction* operand : inst.operands()) {
    if (operand == nullptr || operand->parent() != &comp) {
      return Bad(comp, inst, "operand is not defined in this computation");
    }
    const auto& users = operand->users();
    if (std::find(users.begin(), users.end(), &inst) == users.end()) {
      return Bad(comp, inst, "operand's user list misses this instruction");
    }
  }
  for (const Instruction* user : inst.users()) {
    const auto& ops = user->operands();
    if (std::find(ops.begin(), ops.end(), &inst) == ops.end()) {
      return Bad(comp, inst, "user list names an instruction that does not use it");
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyInstruction(const Module& module, const Computation& comp,
                               const Instruction& inst) {
  TFJIT_RETURN_IF_ERROR(VerifyUseLists(comp, inst));
  for (const Computation* callee : inst.called_computations()) {
    if (callee == nullptr || callee->parent() != &module) {
      return Bad(comp, inst, "calls a computation outside the module");
    }
  }
  if (inst.opcode() == Opcode::kParameter) {
    const int64_t n = inst.parameter_number();
    if (n < 0 || n >= comp.num_parameters() || comp.parameter(static_cast<int>(n)) != &inst) {
      return Bad(comp, inst, "parameter number is not registered with the computation");
    }
  }
  std::vector<const Shape*> shapes;
  for (const Instruction* operand : inst.operands()) shapes.push_back(&operand->shape());
  absl::StatusOr<Shape> inferred =
      InferShape(inst.opcode(), shapes, inst.attrs(), inst.called_computations(), inst.shape());
  if (!inferred.ok()) return Bad(comp, inst, inferred.status().message());
  if (*inferred != inst.shape()) {
    return Bad(comp, inst, absl::StrCat("shape should be ", inferred->ToString()));
  }
  return absl::OkStatus();
}

// Depth-first search with colours: an operand still on the stack closes a cycle.
absl::Status VerifyAcyclic(const Computation& comp) {
  enum Colour { kWhite, kGrey, kBlack };
  absl::flat_hash_map<const Instruction*, Colour> colour;
  for (const Instruction* start : comp.instructions()) {
    if (colour[start] != kWhite) continue;
    std::vector<std::pair<const Instruction*, int>> stack = {{start, 0}};
    colour[start] = kGrey;
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      if (next == inst->operand_count()) {
        colour[inst] = kBlack;
        stack.pop_back();
        continue;
      }
      const Instruction* operand = inst->operand(next++);
      Colour& c = colour[operand];
      if (c == kGrey) return Bad(comp, *inst, "operands form a cycle");
      if (c == kWhite) {
        c = kGrey;
        stack.push_back({operand, 0});
      }
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyComputation(const Module& module, const Computation& comp,
                               absl::flat_hash_set<std::string>* names) {
  if (comp.root() == nullptr || comp.root()->parent() != &comp) {
    return Internal("verifier: computation %%%s has no ROOT", comp.name());
  }
  for (int i = 0; i < comp.num_parameters(); ++i) {
    if (comp.parameter(i) == nullptr) {
      return Internal("verifier: computation %%%s has no parameter(%d)", comp.name(), i);
    }
  }
  TFJIT_RETURN_IF_ERROR(VerifyAcyclic(comp));
  for (const Instruction* inst : comp.instructions()) {
    if (!names->insert(inst->name()).second) {
      return Bad(comp, *inst, "instruction name is not unique in the module");
    }
    TFJIT_RETURN_IF_ERROR(VerifyInstruction(module, comp, *inst));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyModule(const Module& module) {
  if (const int64_t b = module.batch_representative(); b != 0) {
    // A symbolic module is valid when it is valid at every batch size it serves. Its values
    // are affine in the batch size, so two sizes settle each equation between them (a dim
    // that must equal another, element counts that must match).
    for (int64_t at : {b, b + 1}) {
      absl::Status s = VerifyModule(*Specialize(module, at));
      if (!s.ok()) return WithContext(s, absl::StrCat("the symbolic module at batch ", at));
    }
    return absl::OkStatus();
  }
  if (module.entry() == nullptr) {
    return Internal("verifier: module %s has no ENTRY computation", module.name());
  }
  absl::flat_hash_set<std::string> names;
  absl::flat_hash_set<std::string> computation_names;
  for (const Computation* comp : module.computations()) {
    if (!computation_names.insert(comp->name()).second) {
      return Internal("verifier: computation name %%%s is not unique", comp->name());
    }
    TFJIT_RETURN_IF_ERROR(VerifyComputation(module, *comp, &names));
  }
  return absl::OkStatus();
}

}  // namespace tfjit::hlo
