// Module: computation ownership, name uniquing, reachability and deep copies.
#include "compiler/hlo/module.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace tfjit::hlo {

std::string SubstituteBatch(const std::string& text, int64_t batch) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('{', i);
    const size_t close = open == std::string::npos ? open : text.find('}', open);
    if (close == std::string::npos) break;
    const std::string inner = text.substr(open + 1, close - open - 1);
    const size_t b = inner.find("?b");
    int64_t k = 1, c = 0;
    bool ok = b != std::string::npos;
    if (ok && b > 0) {
      // "k*?b"
      ok = inner[b - 1] == '*' && absl::SimpleAtoi(inner.substr(0, b - 1), &k);
    }
    if (ok && b + 2 < inner.size()) {
      std::string rest = inner.substr(b + 2);
      if (rest[0] == '+') rest = rest.substr(1);
      ok = absl::SimpleAtoi(rest, &c);
    }
    out += text.substr(i, open - i);
    out += ok ? absl::StrCat(k * batch + c) : text.substr(open, close - open + 1);
    i = close + 1;
  }
  out += text.substr(std::min(i, text.size()));
  return out;
}

std::string RuntimeCheck::Message(const std::vector<int64_t>& result, int64_t batch) const {
  const int64_t position = result.empty() ? -1 : result[0];
  std::string pos;
  if (flat_position || position < 0) {
    pos = absl::StrCat("[", position, "]");
  } else {
    std::vector<int64_t> idx(position_dims.size());
    int64_t flat = position;
    for (size_t d = position_dims.size(); d-- > 0;) {
      const int64_t n = position_dims[d] > 0 ? position_dims[d] : 1;
      idx[d] = flat % n;
      flat /= n;
    }
    // Scalar indices have no position, as in TF's "indices = 7 is not in [0, 5)".
    pos = idx.empty() ? std::string() : absl::StrCat("[", absl::StrJoin(idx, ","), "]");
  }
  std::vector<int64_t> components(result.begin() + (result.empty() ? 0 : 1), result.end());
  // Index values as TF prints them: "[3, 2]" (TF joins the components with ", ").
  std::string value = vector_value         ? absl::StrCat("[", absl::StrJoin(components, ", "), "]")
                      : components.empty() ? std::string("?")
                                           : absl::StrCat(components[0]);
  // "{index}": the components as TF's sparse ops print an index, "[3,2]".
  const std::string index = absl::StrCat("[", absl::StrJoin(components, ","), "]");
  return absl::StrReplaceAll(
      batch > 0 ? SubstituteBatch(message_template, batch) : message_template,
      {{"{pos}", pos}, {"{value}", value}, {"{index}", index}});
}

Computation* Module::AddComputation(const std::string& name) {
  std::string unique = name;
  for (int64_t n = 1; FindComputation(unique) != nullptr; ++n) unique = absl::StrCat(name, ".", n);
  computations_.push_back(std::make_unique<Computation>(unique, this));
  return computations_.back().get();
}

std::vector<Computation*> Module::computations() const {
  std::vector<Computation*> out;
  out.reserve(computations_.size());
  for (const auto& c : computations_) out.push_back(c.get());
  return out;
}

Computation* Module::FindComputation(const std::string& name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

int Module::RemoveUnusedComputations() {
  if (entry_ == nullptr) return 0;
  absl::flat_hash_set<const Computation*> reachable;
  std::vector<const Computation*> stack = {entry_};
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    if (!reachable.insert(c).second) continue;
    for (const Instruction* inst : c->instructions()) {
      for (const Computation* callee : inst->called_computations()) stack.push_back(callee);
    }
  }
  const size_t before = computations_.size();
  std::erase_if(computations_, [&](const auto& c) { return !reachable.contains(c.get()); });
  return static_cast<int>(before - computations_.size());
}

std::string Module::UniqueName(const std::string& prefix) {
  if (ReserveName(prefix)) return prefix;
  int64_t& next = next_suffix_[prefix];
  if (next == 0) next = 1;
  while (true) {
    std::string candidate = absl::StrCat(prefix, ".", next++);
    if (ReserveName(candidate)) return candidate;
  }
}

bool Module::ReserveName(const std::string& name) { return names_.insert(name).second; }

namespace {

// A literal with its own buffers, so a clone never aliases the original's constants.
Literal DeepCopyLiteral(const Literal& literal) {
  if (literal.shape().IsTuple()) {
    std::vector<Literal> elements;
    for (const Literal& e : literal.elements()) elements.push_back(DeepCopyLiteral(e));
    return Literal::MakeTuple(std::move(elements));
  }
  return Literal::FromTensor(literal.tensor().Clone());
}

}  // namespace

std::unique_ptr<Module> Module::Clone() const {
  auto clone = std::make_unique<Module>(name_);
  absl::flat_hash_map<const Computation*, Computation*> comp_map;
  absl::flat_hash_map<const Instruction*, Instruction*> inst_map;
  // Computations first: a pass may have created a callee after its caller.
  for (const auto& old_comp : computations_) {
    comp_map[old_comp.get()] = clone->AddComputation(old_comp->name());
  }
  for (const auto& old_comp : computations_) {
    Computation* comp = comp_map.at(old_comp.get());
    // Post order puts operands first even after rewrites rewired uses to later instructions.
    for (const Instruction* old : old_comp->MakePostOrder()) {
      auto inst = std::make_unique<Instruction>(old->opcode(), old->shape());
      inst->set_name(old->name());
      inst->mutable_attrs() = old->attrs();
      if (old->attrs().literal.has_value()) {
        inst->mutable_attrs().literal = DeepCopyLiteral(*old->attrs().literal);
      }
      inst->set_metadata(old->metadata());
      std::vector<Computation*> called;
      for (const Computation* c : old->called_computations()) called.push_back(comp_map.at(c));
      inst->set_called_computations(std::move(called));
      std::vector<Instruction*> operands;
      for (const Instruction* o : old->operands()) operands.push_back(inst_map.at(o));
      inst_map[old] = comp->AddInstruction(std::move(inst), operands);
    }
    if (old_comp->root() != nullptr) comp->set_root(inst_map.at(old_comp->root()));
  }
  if (entry_ != nullptr) clone->set_entry(comp_map.at(entry_));
  clone->runtime_checks_ = runtime_checks_;
  clone->row_counted_outputs_ = row_counted_outputs_;
  clone->batch_representative_ = batch_representative_;
  return clone;
}

}  // namespace tfjit::hlo
