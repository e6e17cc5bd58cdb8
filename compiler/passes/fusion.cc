// FusionPass: builds fusion groups greedily from the root backwards, then outlines each
// group into a `fused_computation` called by one `fusion` instruction.
//
// Algorithm, per computation:
//   1. Walk the post order backwards; each instruction not yet fused that the policy accepts
//      as a fusion root starts a group.
//   2. Walk further back: a producer joins when some user is in the group, the policy accepts
//      it for every such user, and every user is in the group (or it is cheap and may be
//      duplicated). Users are always visited before producers, so membership is final. One
//      dot or convolution the policy names a hero may join an elementwise group as the hero
//      of an output fusion when its value reaches the root elementwise; its operands never
//      join. A producer whose code the group would emit more than kMaxEmissions times
//      (operands reused along chains) stays out.
//   3. Outline the group: operands from outside become parameters (in first-use order), the
//      members are cloned in post order, a fusion replaces the root, and originals left
//      without users are removed.
#include "compiler/passes/fusion.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/status.h"

namespace tfjit::passes {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

using InstSet = absl::flat_hash_set<const Instruction*>;

// Cheap to recompute and with only constant inputs, so duplicating it into several fusions
// costs nothing and cannot create a cycle.
bool IsCheap(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kConstant:
      return inst.shape().IsScalar();
    case Opcode::kIota:
      return true;
    case Opcode::kBroadcast:
      return inst.operand(0)->opcode() == Opcode::kConstant && inst.operand(0)->shape().IsScalar();
    default:
      return false;
  }
}

// The most times a producer's code may be emitted in one fusion (XLA's
// kAllowedCodeDuplication is the same 15).
constexpr int64_t kMaxEmissions = 15;

bool HasOutsideUse(const Instruction& inst, const InstSet& group) {
  if (inst.IsRoot()) return true;
  for (const Instruction* user : inst.users()) {
    if (!group.contains(user)) return true;
  }
  return false;
}

// Step 2: members in post order (producers first, the root last). `hero` gets the dot or
// convolution of an output fusion, if one joined.
std::vector<Instruction*> BuildGroup(const FusionPolicy& policy,
                                     const std::vector<Instruction*>& order, size_t root_pos,
                                     const InstSet& fused, const Instruction** hero) {
  Instruction* root = order[root_pos];
  InstSet group = {root};
  std::vector<Instruction*> members = {root};
  // Members whose element i is read only at the root's element i: reached from the root
  // through elementwise ops of the root's dims (an output fusion's hero must be one).
  InstSet identity;
  if (hlo::IsElementwise(root->opcode())) identity.insert(root);
  // Members whose elements the group reads more than once each: upstream of a broadcast
  // that expands its operand.
  InstSet reused;
  auto expands = [](const Instruction& inst) {
    return inst.opcode() == Opcode::kBroadcast &&
           inst.shape().num_elements() > inst.operand(0)->shape().num_elements();
  };
  // How many times the backends' elemental emitters emit each member's code: once for the
  // root, and for a producer the sum over its users in the group of the user's count times
  // the operand slots it fills (a concatenate emits each operand once, an elementwise op each
  // slot: select(x > 0, x, 0.1 * x) emits x three times). Chains of such reuse multiply (a
  // box decoder reusing its previous stage per coordinate emitted one body of 50K lines of
  // IR), so a producer past kMaxEmissions stays a buffer, as in XLA's fusion.
  absl::flat_hash_map<const Instruction*, int64_t> emissions = {{root, 1}};
  // Where a member emitted once is read: an id per (index, block) the emitter evaluates it at.
  // The root has context 0; an elementwise user passes its own index to an operand of its
  // dims, and a broadcast that expands passes a subset of its coordinates, so readers in one
  // context read the producer at the same index values. The emitters evaluate a value with
  // several users once per index and block (ElementalEmitter::Cached), so a producer read only
  // in one context is emitted once, however many users read it there: Philox's rounds, where
  // each word feeds two words of the next round, stay one kernel.
  absl::flat_hash_map<const Instruction*, int64_t> context = {{root, 0}};
  std::map<std::pair<int64_t, std::vector<int64_t>>, int64_t> broadcast_contexts;
  int64_t next_context = 1;
  auto read_context = [&](const Instruction& user, const Instruction& operand) -> int64_t {
    auto it = context.find(&user);
    if (it == context.end() || emissions[&user] != 1) return -1;
    if (hlo::IsElementwise(user.opcode()) && user.shape().dims() == operand.shape().dims()) {
      return it->second;
    }
    if (expands(user)) {
      std::vector<int64_t> key = user.dimensions();
      key.push_back(-1);
      for (int64_t d : operand.shape().dims()) key.push_back(d);
      auto [at, inserted] = broadcast_contexts.try_emplace({it->second, key}, next_context);
      if (inserted) ++next_context;
      return at->second;
    }
    return -1;
  };
  *hero = nullptr;
  for (size_t j = root_pos; j-- > 0;) {
    Instruction* p = order[j];
    if (fused.contains(p) || p->opcode() == Opcode::kReduce) continue;
    bool any_user = false, accepted = true, identity_path = true, feeds_hero = false;
    bool read_repeatedly = false;
    int64_t emitted = 0;
    int64_t slots = 0;
    std::optional<int64_t> one_context;  // the context every read is in, if there is one
    bool same_context = true;
    for (const Instruction* user : p->users()) {
      if (!group.contains(user)) continue;
      const auto& operands = user->operands();
      const int64_t reads = std::count(operands.begin(), operands.end(), p);
      emitted += emissions[user] * reads;
      slots += reads;
      const int64_t c = read_context(*user, *p);
      if (c < 0 || (one_context.has_value() && *one_context != c)) same_context = false;
      one_context = c;
      any_user = true;
      feeds_hero = feeds_hero || user == *hero;
      accepted = accepted && policy.ShouldFuse(*p, *user);
      identity_path = identity_path && identity.contains(user);
      read_repeatedly = read_repeatedly || reused.contains(user) || expands(*user);
    }
    // The hero's operands stay buffers: the backend's library call reads them. An expensive
    // producer read repeatedly would be recomputed for every read: it stays a buffer too.
    if (!any_user || feeds_hero) continue;
    // Read in one context: emitted once when the emitter caches it (several users), else once
    // per read slot of its one user.
    const bool cached = p->user_count() > 1;
    if (same_context && (cached || slots == 1)) emitted = 1;
    if (read_repeatedly && policy.IsExpensive(*p)) continue;
    if (emitted > kMaxEmissions && !IsCheap(*p)) continue;
    const bool same_dims = p->shape().IsArray() && p->shape().dims() == root->shape().dims();
    if (accepted) {
      if (HasOutsideUse(*p, group) && !IsCheap(*p)) continue;
    } else {
      if (*hero != nullptr || !identity_path || !same_dims ||
          p->shape().element_type() != root->shape().element_type() ||
          !policy.IsOutputFusionHero(*p) || HasOutsideUse(*p, group)) {
        continue;
      }
      *hero = p;
    }
    group.insert(p);
    members.push_back(p);
    emissions[p] = std::max<int64_t>(emitted, 1);
    context[p] = same_context && emitted == 1 ? *one_context : next_context++;
    if (read_repeatedly) reused.insert(p);
    if (identity_path && same_dims && hlo::IsElementwise(p->opcode())) identity.insert(p);
  }
  std::reverse(members.begin(), members.end());
  return members;
}

bool Worthwhile(const std::vector<Instruction*>& members) {
  for (size_t i = 0; i + 1 < members.size(); ++i) {
    if (members[i]->opcode() != Opcode::kConstant) return true;
  }
  return false;
}

std::unique_ptr<Instruction> CloneShell(const Instruction& inst) {
  auto clone = std::make_unique<Instruction>(inst.opcode(), inst.shape());
  clone->mutable_attrs() = inst.attrs();
  clone->set_called_computations(inst.called_computations());
  clone->set_metadata(inst.metadata());
  return clone;
}

// The next parameter of the fused computation `fused`, standing for the outer value `outer`,
// which joins the fusion's operands.
Instruction* AddFusionParameter(Computation& fused, Instruction* outer,
                                std::vector<Instruction*>& fusion_operands) {
  const int64_t number = static_cast<int64_t>(fusion_operands.size());
  auto param = std::make_unique<Instruction>(Opcode::kParameter, outer->shape());
  param->mutable_attrs().parameter_number = number;
  param->set_name("param_" + std::to_string(number));
  fusion_operands.push_back(outer);
  return fused.AddInstruction(std::move(param));
}

// Step 3. Adds the members it removed (all but duplicated cheap ones) to `removed`.
absl::Status Outline(Computation& computation, const std::vector<Instruction*>& members,
                     absl::string_view kind, InstSet& removed) {
  Instruction* root = members.back();
  const InstSet group(members.begin(), members.end());
  Computation* fused = computation.parent()->AddComputation("fused_computation");
  absl::flat_hash_map<const Instruction*, Instruction*> clones;
  std::vector<Instruction*> fusion_operands;
  for (Instruction* member : members) {
    std::vector<Instruction*> operands;
    for (Instruction* operand : member->operands()) {
      if (group.contains(operand)) {
        operands.push_back(clones.at(operand));
        continue;
      }
      auto [it, inserted] = clones.try_emplace(operand, nullptr);
      if (inserted) it->second = AddFusionParameter(*fused, operand, fusion_operands);
      operands.push_back(it->second);
    }
    clones[member] = fused->AddInstruction(CloneShell(*member), operands);
  }
  fused->set_root(clones.at(root));
  auto fusion = std::make_unique<Instruction>(Opcode::kFusion, root->shape());
  fusion->mutable_attrs().fusion_kind = std::string(kind);
  fusion->set_called_computations({fused});
  fusion->set_metadata(root->metadata());
  Instruction* fusion_inst = computation.AddInstruction(std::move(fusion), fusion_operands);
  TFJIT_RETURN_IF_ERROR(computation.ReplaceAllUsesWith(root, fusion_inst));
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    if ((*it)->user_count() == 0 && !(*it)->IsRoot()) {
      removed.insert(*it);
      TFJIT_RETURN_IF_ERROR(computation.RemoveInstruction(*it));
    }
  }
  return absl::OkStatus();
}

// ---- Sibling (multi-output) fusion ----

// A single-output reduce, or a kInput fusion whose root is one: the reduce, else null.
const Instruction* InputFusionReduce(const Instruction& inst) {
  const Instruction* r = &inst;
  if (inst.opcode() == Opcode::kFusion && inst.attrs().fusion_kind == "kInput") {
    r = inst.called_computations()[0]->root();
  }
  return r->opcode() == Opcode::kReduce && r->operand_count() == 2 && r->shape().IsArray()
             ? r
             : nullptr;
}

// Two reduce fusions that walk the same index space: same operand shape, reduced dims and
// result shape.
bool SameReduction(const Instruction& a, const Instruction& b) {
  const Instruction* ra = InputFusionReduce(a);
  const Instruction* rb = InputFusionReduce(b);
  return ra != nullptr && rb != nullptr &&
         ra->operand(0)->shape().dims() == rb->operand(0)->shape().dims() &&
         ra->dimensions() == rb->dimensions() && ra->shape().dims() == rb->shape().dims();
}

// Whether `target` is `from` or one of its (transitive) operands.
bool DependsOn(const Instruction* from, const Instruction* target) {
  std::vector<const Instruction*> stack = {from};
  InstSet seen;
  while (!stack.empty()) {
    const Instruction* x = stack.back();
    stack.pop_back();
    if (x == target) return true;
    if (!seen.insert(x).second) continue;
    for (const Instruction* op : x->operands()) stack.push_back(op);
  }
  return false;
}

// Merges the reduce fusions `a` and `b` into one fusion whose root is tuple(a's reduce, b's
// reduce) over the union of their operands; a's and b's users read get-tuple-elements.
absl::Status MergeSiblingPair(Computation& computation, Instruction* a, Instruction* b) {
  Computation* fused = computation.parent()->AddComputation("fused_computation");
  std::vector<Instruction*> operands;
  absl::flat_hash_map<const Instruction*, Instruction*> params;  // outer operand -> parameter
  std::vector<Instruction*> roots;
  // A plain reduce counts as a fusion of itself: its operands become parameters.
  auto param_for = [&](Instruction* outer) {
    auto [it, inserted] = params.try_emplace(outer, nullptr);
    if (inserted) it->second = AddFusionParameter(*fused, outer, operands);
    return it->second;
  };
  for (Instruction* f : {a, b}) {
    if (f->opcode() == Opcode::kReduce) {
      std::vector<Instruction*> ops;
      for (Instruction* op : f->operands()) ops.push_back(param_for(op));
      roots.push_back(fused->AddInstruction(CloneShell(*f), ops));
      continue;
    }
    const Computation* body = f->called_computations()[0];
    absl::flat_hash_map<const Instruction*, Instruction*> clones;
    for (const Instruction* inst : body->MakePostOrder()) {
      if (inst->opcode() == Opcode::kParameter) {
        Instruction* outer = f->operand(static_cast<int>(inst->parameter_number()));
        clones[inst] = param_for(outer);
        continue;
      }
      std::vector<Instruction*> ops;
      for (const Instruction* op : inst->operands()) ops.push_back(clones.at(op));
      clones[inst] = fused->AddInstruction(CloneShell(*inst), ops);
    }
    roots.push_back(clones.at(body->root()));
  }
  auto tuple = std::make_unique<Instruction>(
      Opcode::kTuple, hlo::Shape::Tuple({roots[0]->shape(), roots[1]->shape()}));
  fused->set_root(fused->AddInstruction(std::move(tuple), roots));
  auto fusion = std::make_unique<Instruction>(Opcode::kFusion, fused->root()->shape());
  fusion->mutable_attrs().fusion_kind = "kInput";
  fusion->set_called_computations({fused});
  fusion->set_metadata(a->metadata());
  Instruction* merged = computation.AddInstruction(std::move(fusion), operands);
  int index = 0;
  for (Instruction* f : {a, b}) {
    auto gte = std::make_unique<Instruction>(Opcode::kGetTupleElement, f->shape());
    gte->mutable_attrs().tuple_index = index++;
    Instruction* element = computation.AddInstruction(std::move(gte), {merged});
    TFJIT_RETURN_IF_ERROR(computation.ReplaceAllUsesWith(f, element));
    TFJIT_RETURN_IF_ERROR(computation.RemoveInstruction(f));
  }
  return absl::OkStatus();
}

// Step 4: reduce fusions that read a common operand and walk the same index space merge,
// pairwise and repeatedly, when neither depends on the other (so no cycle can form). The
// operand is then read once: the CPU backend computes all outputs in one loop.
absl::StatusOr<bool> MergeSiblings(Computation& computation) {
  bool changed = false;
  for (bool merged = true; merged;) {
    merged = false;
    for (Instruction* operand : computation.MakePostOrder()) {
      std::vector<Instruction*> users;
      for (Instruction* u : operand->users()) {
        if (InputFusionReduce(*u) != nullptr &&
            std::find(users.begin(), users.end(), u) == users.end()) {
          users.push_back(u);
        }
      }
      for (size_t i = 0; i < users.size() && !merged; ++i) {
        for (size_t j = i + 1; j < users.size() && !merged; ++j) {
          Instruction* a = users[i];
          Instruction* b = users[j];
          if (!SameReduction(*a, *b) || a->IsRoot() || b->IsRoot() || DependsOn(a, b) ||
              DependsOn(b, a)) {
            continue;
          }
          TFJIT_RETURN_IF_ERROR(MergeSiblingPair(computation, a, b));
          merged = changed = true;
        }
      }
      if (merged) break;
    }
  }
  return changed;
}

// Computations the pass may rewrite: the entry and bodies of control flow and calls.
std::vector<Computation*> FusibleComputations(const hlo::Module& module) {
  absl::flat_hash_set<const Computation*> wanted = {module.entry()};
  for (const Computation* c : module.computations()) {
    for (const Instruction* inst : c->instructions()) {
      const Opcode op = inst->opcode();
      if (op != Opcode::kWhile && op != Opcode::kConditional && op != Opcode::kCall) continue;
      for (const Computation* callee : inst->called_computations()) wanted.insert(callee);
    }
  }
  std::vector<Computation*> result;
  for (Computation* c : module.computations()) {
    if (wanted.contains(c)) result.push_back(c);
  }
  return result;
}

}  // namespace

FusionPass::FusionPass(const FusionPolicy* policy, FusionOptions options) : options_(options) {
  if (policy == nullptr) {
    default_policy_ = std::make_unique<FusionPolicy>();
    policy = default_policy_.get();
  }
  policy_ = policy;
}

absl::StatusOr<bool> FusionPass::Run(hlo::Module& module) {
  bool changed = false, merged_siblings = false;
  for (Computation* computation : FusibleComputations(module)) {
    const std::vector<Instruction*> order = computation->MakePostOrder();
    // Members already outlined and removed (dangling pointers: compared, never dereferenced).
    // Duplicated cheap members stay behind for their other users and may join later groups.
    InstSet fused;
    for (size_t i = order.size(); i-- > 0;) {
      Instruction* root = order[i];
      if (fused.contains(root) || !policy_->IsFusible(*root)) continue;
      const bool is_reduce = root->opcode() == Opcode::kReduce;
      if (is_reduce && !options_.fuse_reductions) continue;
      if (!is_reduce && root->opcode() == Opcode::kConstant) continue;
      const Instruction* hero = nullptr;
      const std::vector<Instruction*> members = BuildGroup(*policy_, order, i, fused, &hero);
      if (!Worthwhile(members)) continue;
      const char* kind = is_reduce ? "kInput" : hero != nullptr ? "kOutput" : "kLoop";
      TFJIT_RETURN_IF_ERROR(Outline(*computation, members, kind, fused));
      changed = true;
    }
    if (options_.sibling_fusion || policy_->FusesSiblings()) {
      TFJIT_ASSIGN_OR_RETURN(bool merged, MergeSiblings(*computation));
      merged_siblings = merged_siblings || merged;
    }
  }
  // The merged fusions' own computations are no longer called.
  if (merged_siblings) module.RemoveUnusedComputations();
  return changed || merged_siblings;
}

}  // namespace tfjit::passes
