// Computation: instruction ownership, use-list maintenance, post order and dead-code removal.
#include "compiler/hlo/computation.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "compiler/hlo/module.h"
#include "core/status.h"

namespace tfjit::hlo {
namespace {

void AddUser(Instruction* operand, Instruction* user, std::vector<Instruction*>* users) {
  if (std::find(users->begin(), users->end(), user) == users->end()) users->push_back(user);
}

void EraseValue(std::vector<Instruction*>* v, Instruction* x) {
  v->erase(std::remove(v->begin(), v->end(), x), v->end());
}

}  // namespace

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> inst,
                                         const std::vector<Instruction*>& operands) {
  Instruction* raw = inst.get();
  raw->parent_ = this;
  if (parent_ != nullptr) {
    raw->unique_id_ = parent_->NextInstructionId();
    if (raw->name_.empty()) {
      raw->name_ = parent_->UniqueName(std::string(OpcodeName(raw->opcode())));
    } else if (!parent_->ReserveName(raw->name_)) {
      raw->name_ = parent_->UniqueName(raw->name_);
    }
  } else {
    raw->unique_id_ = static_cast<int64_t>(instructions_.size());
  }
  for (Instruction* operand : operands) {
    raw->operands_.push_back(operand);
    AddUser(operand, raw, &operand->users_);
  }
  if (raw->opcode() == Opcode::kParameter && raw->parameter_number() >= 0) {
    const size_t n = static_cast<size_t>(raw->parameter_number());
    if (parameters_.size() <= n) parameters_.resize(n + 1, nullptr);
    parameters_[n] = raw;
  }
  instructions_.push_back(std::move(inst));
  return raw;
}

std::vector<Instruction*> Computation::instructions() const {
  std::vector<Instruction*> out;
  out.reserve(instructions_.size());
  for (const auto& inst : instructions_) out.push_back(inst.get());
  return out;
}

std::vector<Instruction*> Computation::MakePostOrder() const {
  std::vector<Instruction*> order;
  order.reserve(instructions_.size());
  absl::flat_hash_set<const Instruction*> visited;
  // Iterative DFS: (instruction, next operand index) frames, so deep graphs cannot overflow.
  auto visit = [&](Instruction* start) {
    if (!visited.insert(start).second) return;
    std::vector<std::pair<Instruction*, int>> stack = {{start, 0}};
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      if (next < inst->operand_count()) {
        Instruction* operand = inst->operand(next++);
        if (visited.insert(operand).second) stack.push_back({operand, 0});
        continue;
      }
      order.push_back(inst);
      stack.pop_back();
    }
  };
  if (root_ != nullptr) visit(root_);
  for (const auto& inst : instructions_) visit(inst.get());
  return order;
}

absl::Status Computation::ReplaceAllUsesWith(Instruction* old_inst, Instruction* new_inst) {
  if (old_inst == new_inst) return absl::OkStatus();
  if (old_inst->shape() != new_inst->shape()) {
    return InvalidArgument("ReplaceAllUsesWith: shapes differ: %%%s is %s, %%%s is %s",
                           old_inst->name(), old_inst->shape().ToString(), new_inst->name(),
                           new_inst->shape().ToString());
  }
  // `new_inst` itself may use `old_inst` (replacing x by f(x)); that use is kept, otherwise
  // the rewrite would create a cycle.
  std::vector<Instruction*> users = old_inst->users_;
  for (Instruction* user : users) {
    if (user == new_inst) continue;
    for (Instruction*& operand : user->operands_) {
      if (operand == old_inst) operand = new_inst;
    }
    AddUser(new_inst, user, &new_inst->users_);
    EraseValue(&old_inst->users_, user);
  }
  if (root_ == old_inst) root_ = new_inst;
  return absl::OkStatus();
}

void Computation::ReplaceOperand(Instruction* user, int i, Instruction* new_operand) {
  Instruction* old = user->operands_[static_cast<size_t>(i)];
  if (old == new_operand) return;
  user->operands_[static_cast<size_t>(i)] = new_operand;
  const auto& ops = user->operands_;
  if (std::find(ops.begin(), ops.end(), old) == ops.end()) EraseValue(&old->users_, user);
  AddUser(new_operand, user, &new_operand->users_);
}

absl::Status Computation::RemoveInstruction(Instruction* inst) {
  if (!inst->users_.empty() || inst == root_ || inst->opcode() == Opcode::kParameter) {
    return FailedPrecondition("RemoveInstruction: %%%s still has users, is ROOT or a parameter",
                              inst->name());
  }
  for (Instruction* operand : inst->operands_) EraseValue(&operand->users_, inst);
  instructions_.erase(std::find_if(instructions_.begin(), instructions_.end(),
                                   [&](const auto& p) { return p.get() == inst; }));
  return absl::OkStatus();
}

int Computation::RemoveDeadInstructions() {
  absl::flat_hash_set<const Instruction*> live;
  std::vector<Instruction*> stack;
  if (root_ != nullptr) stack.push_back(root_);
  while (!stack.empty()) {
    Instruction* inst = stack.back();
    stack.pop_back();
    if (!live.insert(inst).second) continue;
    for (Instruction* operand : inst->operands_) stack.push_back(operand);
  }
  auto dead = [&](const Instruction* inst) {
    return !live.contains(inst) && inst->opcode() != Opcode::kParameter;
  };
  for (const auto& inst : instructions_) {
    if (!dead(inst.get())) continue;
    for (Instruction* operand : inst->operands_) EraseValue(&operand->users_, inst.get());
  }
  const size_t before = instructions_.size();
  instructions_.erase(std::remove_if(instructions_.begin(), instructions_.end(),
                                     [&](const auto& p) { return dead(p.get()); }),
                      instructions_.end());
  return static_cast<int>(before - instructions_.size());
}

}  // namespace tfjit::hlo
