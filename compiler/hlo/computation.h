// Computation: a DAG of instructions with parameters and one ROOT. Owns its instructions and
// is the only place that edits operand/user lists.
#ifndef TFJIT_COMPILER_HLO_COMPUTATION_H_
#define TFJIT_COMPILER_HLO_COMPUTATION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/hlo/instruction.h"

namespace tfjit::hlo {

class Module;

class Computation {
 public:
  Computation(std::string name, Module* parent) : name_(std::move(name)), parent_(parent) {}
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  Module* parent() const { return parent_; }

  // Adds `inst` with `operands` (users are updated). A name is generated from the opcode when
  // `inst` has none; names are unique per module. Parameters register in parameter order.
  Instruction* AddInstruction(std::unique_ptr<Instruction> inst,
                              const std::vector<Instruction*>& operands = {});

  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }

  // parameter(i) instructions by number; size = number of parameters.
  const std::vector<Instruction*>& parameters() const { return parameters_; }
  Instruction* parameter(int i) const { return parameters_[static_cast<size_t>(i)]; }
  int num_parameters() const { return static_cast<int>(parameters_.size()); }

  // All instructions in insertion order (operands are always inserted before users).
  std::vector<Instruction*> instructions() const;
  int instruction_count() const { return static_cast<int>(instructions_.size()); }
  // Operands before users, reachable from the root first (then unreachable ones in insertion
  // order so passes see every instruction). Deterministic.
  std::vector<Instruction*> MakePostOrder() const;

  // Rewires every use of `old_inst` (including ROOT) to `new_inst`. Shapes must match.
  absl::Status ReplaceAllUsesWith(Instruction* old_inst, Instruction* new_inst);
  // Replaces operand `i` of `user` with `new_operand`.
  void ReplaceOperand(Instruction* user, int i, Instruction* new_operand);
  // Removes an instruction that has no users and is not the root or a parameter.
  absl::Status RemoveInstruction(Instruction* inst);
  // Removes every instruction not reachable from the root (parameters stay). Returns count.
  int RemoveDeadInstructions();

  // "(x: f32[4,8], y: f32[8]) -> f32[4]" parts.
  Shape ResultShape() const { return root_ ? root_->shape() : Shape(); }

 private:
  std::string name_;
  Module* parent_;
  std::vector<std::unique_ptr<Instruction>> instructions_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
};

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_COMPUTATION_H_
