#include "compiler/passes/liveness.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"

namespace tfjit::passes {

bool ComputationLiveness::IsPlumbing(const hlo::Instruction& instruction) {
  return instruction.opcode() == hlo::Opcode::kTuple ||
         instruction.opcode() == hlo::Opcode::kGetTupleElement;
}

ComputationLiveness::ComputationLiveness(const hlo::Computation& computation)
    : computation_(&computation) {
  absl::flat_hash_map<const hlo::Instruction*, int64_t> step;
  for (const hlo::Instruction* i : computation.MakePostOrder()) {
    step[i] = static_cast<int64_t>(schedule_.size());
    schedule_.push_back(i);
  }
  const int64_t end = num_steps();
  // Users come after their operands in the schedule: walking it backwards, a plumbing user's
  // last step is known before its operands ask for it.
  for (auto it = schedule_.rbegin(); it != schedule_.rend(); ++it) {
    const hlo::Instruction* value = *it;
    LiveRange r;
    r.def = value->opcode() == hlo::Opcode::kParameter ? -1 : step.at(value);
    r.last = r.def;
    if (value == computation.root()) r.last = end;
    for (const hlo::Instruction* user : value->users()) {
      auto at = step.find(user);
      if (at == step.end()) continue;  // a user outside this computation's schedule
      r.last = std::max(r.last, IsPlumbing(*user) ? ranges_.at(user).last : at->second);
    }
    ranges_[value] = r;
  }
}

bool ComputationLiveness::Interfere(const hlo::Instruction* a, const hlo::Instruction* b) const {
  const LiveRange ra = range(a), rb = range(b);
  return ra.def <= rb.last && rb.def <= ra.last;
}

std::string ComputationLiveness::ToString() const {
  std::string out =
      absl::StrCat("computation %", computation_->name(), ": ", num_steps(), " steps\n");
  for (int64_t s = 0; s < num_steps(); ++s) {
    const hlo::Instruction* i = schedule_[static_cast<size_t>(s)];
    const LiveRange r = range(i);
    absl::StrAppend(&out, "  ", s, " %", i->name(), " ", i->shape().ToString(), " [", r.def, ", ",
                    r.last, "]", IsPlumbing(*i) ? " plumbing" : "",
                    i == computation_->root() ? " root" : "", "\n");
  }
  return out;
}

ModuleLiveness::ModuleLiveness(const hlo::Module& module) {
  for (const hlo::Computation* c : module.computations()) computations_.emplace_back(*c);
}

std::string ModuleLiveness::ToString() const {
  std::string out;
  for (const ComputationLiveness& c : computations_) absl::StrAppend(&out, c.ToString());
  return out;
}

}  // namespace tfjit::passes
