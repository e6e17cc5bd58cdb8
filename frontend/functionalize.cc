// FunctionalizeLoops (functionalize.h). Per frame, innermost first:
//   1. Frames: each node's frame, from a topological walk that leaves out the NextIteration ->
//      Merge back edges (Enter opens a child frame, Exit returns to the parent, any other node
//      is in its inputs' frame; a node without inputs is in the root frame).
//   2. Loop variables: each Merge of the frame joins an Enter and a NextIteration, and the
//      Switch on it is predicated on the frame's one LoopCond; Switch:1 is the value in the
//      body, Switch:0 reaches the Exit. Other Enters are loop invariants.
//   3. cond(vars, invariants) = LoopCond's input; body(vars, invariants) = (NextIteration
//      inputs, invariants): the nodes each needs, with Merge and Switch:1 read as the
//      variable's arg and an invariant Enter as its arg.
//   4. A While node takes the Enters' inputs; each Exit becomes an Identity of its output.
// TensorArrays are rewritten first (functionalize_tensor_array.cc), and conditionals before
// each loop (functionalize_cond.cc), until neither changes anything.
#include "frontend/functionalize.h"

#include <algorithm>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "frontend/functionalize_internal.h"

namespace tfjit::tf {
namespace functionalize_internal {
namespace {

// Steps 2-4 for frame `f`. Returns false with `why` when the frame stays as it is.
class LoopRewriter {
 public:
  LoopRewriter(tensorflow::GraphDef* def, const FrameAnalysis& frames, int f)
      : def_(def), frames_(frames), f_(f) {}

  bool Run(std::string* why) {
    if (!Classify(why) || !FindExits(why) || !CheckOutsideReads(why)) return false;
    tensorflow::FunctionDef cond, body;
    if (!BuildCond(&cond, why) || !BuildBody(&body, why)) return false;
    Rewrite(std::move(cond), std::move(body));
    return true;
  }

 private:
  struct Var {
    int enter = -1, merge = -1, next = -1, sw = -1;
    tensorflow::DataType type = tensorflow::DT_INVALID;
    std::vector<int> exits;
  };
  const tensorflow::NodeDef& node(int i) const { return def_->node(i); }
  bool Fail(std::string* why, std::string text) {
    *why = std::move(text);
    return false;
  }

  bool Classify(std::string* why) {
    std::vector<int> merges, switches, loopconds;
    for (int i = 0; i < def_->node_size(); ++i) {
      if (frames_.frame_of(i) != f_) continue;
      members_.insert(i);
      const tensorflow::NodeDef& n = node(i);
      if (Is(n, "Exit")) {
        return Fail(
            why, absl::StrCat("it holds a loop that stays in the runtime (Exit '", n.name(), "')"));
      }
      if (Is(n, "Enter")) {
        enters_.push_back(i);
      } else if (Is(n, "Merge")) {
        merges.push_back(i);
      } else if (Is(n, "Switch")) {
        switches.push_back(i);
      } else if (n.op() == "LoopCond") {
        loopconds.push_back(i);
      } else if (!Is(n, "NextIteration")) {
        regular_.insert(i);
      }
    }
    if (loopconds.size() != 1) {
      return Fail(why, absl::StrCat("it has ", loopconds.size(), " LoopCond nodes; a loop has 1"));
    }
    loopcond_ = loopconds[0];
    for (int m : merges) {
      Var v;
      v.merge = m;
      int data = 0;
      for (const std::string& in : node(m).input()) {
        const Ref r = ParseRef(in);
        if (r.control) continue;
        ++data;
        const int p = frames_.index(r.node);
        if (Is(node(p), "Enter") && frames_.frame_of(p) == f_) v.enter = p;
        if (Is(node(p), "NextIteration") && frames_.frame_of(p) == f_) v.next = p;
      }
      if (data != 2 || v.enter < 0 || v.next < 0) {
        return Fail(why, absl::StrCat("Merge '", node(m).name(),
                                      "' is a TF1 conditional's, not "
                                      "a loop variable's (conditionals inside loops are not "
                                      "functionalized yet)"));
      }
      v.type = TypeAttr(node(v.enter));
      vars_.push_back(v);
      var_of_merge_[m] = vars_.size() - 1;
    }
    for (int s : switches) {
      const tensorflow::NodeDef& n = node(s);
      std::vector<Ref> data;
      for (const std::string& in : n.input()) {
        if (Ref r = ParseRef(in); !r.control) data.push_back(r);
      }
      auto var =
          data.size() == 2 ? var_of_merge_.find(frames_.index(data[0].node)) : var_of_merge_.end();
      if (var == var_of_merge_.end() || data[0].port != 0 ||
          frames_.index(data[1].node) != loopcond_) {
        return Fail(why, absl::StrCat("Switch '", n.name(),
                                      "' is a TF1 conditional's, not a "
                                      "loop variable's (conditionals inside loops are not "
                                      "functionalized yet)"));
      }
      if (vars_[var->second].sw >= 0) {
        const std::string merge = node(vars_[var->second].merge).name();
        return Fail(why, absl::StrCat("loop variable Merge '", merge, "' has two Switch nodes"));
      }
      vars_[var->second].sw = s;
      var_of_switch_[s] = var->second;
    }
    for (const Var& v : vars_) {
      if (v.sw < 0) {
        return Fail(why,
                    absl::StrCat("loop variable Merge '", node(v.merge).name(), "' has no Switch"));
      }
    }
    absl::flat_hash_set<int> var_enters;
    for (const Var& v : vars_) var_enters.insert(v.enter);
    for (int e : enters_) {
      if (node(e).op() == "RefEnter") return Fail(why, "it passes reference tensors (RefEnter)");
      if (!var_enters.contains(e)) {
        invariant_of_enter_[e] = invariants_.size();
        invariants_.push_back(e);
      }
    }
    return true;
  }

  bool FindExits(std::string* why) {
    for (int i = 0; i < def_->node_size(); ++i) {
      const tensorflow::NodeDef& n = node(i);
      if (!Is(n, "Exit") || members_.contains(i) || n.input_size() == 0) continue;
      const Ref r = ParseRef(n.input(0));
      const int p = frames_.index(r.node);
      if (!members_.contains(p)) continue;
      auto var = var_of_switch_.find(p);
      if (var == var_of_switch_.end() || r.port != 0) {
        return Fail(why, absl::StrCat("Exit '", n.name(),
                                      "' does not read a loop variable's "
                                      "Switch"));
      }
      vars_[var->second].exits.push_back(i);
      exits_.insert(i);
    }
    return true;
  }

  bool CheckOutsideReads(std::string* why) {
    for (int i = 0; i < def_->node_size(); ++i) {
      if (members_.contains(i) || exits_.contains(i)) continue;
      for (const std::string& in : node(i).input()) {
        const int p = frames_.index(ParseRef(in).node);
        if (members_.contains(p)) {
          return Fail(why, absl::StrCat("node '", node(i).name(), "' outside the loop reads '",
                                        node(p).name(), "' inside it"));
        }
      }
    }
    return true;
  }

  static std::string ArgName(size_t k) { return absl::StrCat("_tfjit_var_", k); }
  static std::string InvariantName(size_t j) { return absl::StrCat("_tfjit_invariant_", j); }

  // A reference from inside the loop as the function names it; nullopt when it cannot be.
  std::optional<std::string> Map(const std::string& ref, std::set<int>* free_constants) const {
    const Ref r = ParseRef(ref);
    const int p = frames_.index(r.node);
    const std::string control = r.control ? "^" : "";
    if (regular_.contains(p)) return ref;
    if (auto v = var_of_merge_.find(p); v != var_of_merge_.end() && (r.control || r.port == 0)) {
      return absl::StrCat(control, ArgName(v->second));
    }
    if (auto v = var_of_switch_.find(p); v != var_of_switch_.end() && (r.control || r.port == 1)) {
      return absl::StrCat(control, ArgName(v->second));
    }
    if (auto j = invariant_of_enter_.find(p); j != invariant_of_enter_.end()) {
      return absl::StrCat(control, InvariantName(j->second));
    }
    if (p >= 0 && frames_.IsFreeConstant(*def_, p)) {
      free_constants->insert(p);
      return ref;
    }
    return std::nullopt;
  }

  // The frame's nodes `roots` need (through regular nodes), in graph order.
  std::vector<int> Needed(const std::vector<std::string>& roots) const {
    std::set<int> seen;
    std::vector<int> work;
    auto visit = [&](const std::string& ref) {
      const int p = frames_.index(ParseRef(ref).node);
      if (regular_.contains(p) && seen.insert(p).second) work.push_back(p);
    };
    for (const std::string& r : roots) visit(r);
    while (!work.empty()) {
      const int i = work.back();
      work.pop_back();
      for (const std::string& in : node(i).input()) visit(in);
    }
    return std::vector<int>(seen.begin(), seen.end());
  }

  void AddSignatureInputs(tensorflow::OpDef* sig) const {
    for (size_t k = 0; k < vars_.size(); ++k) {
      auto* a = sig->add_input_arg();
      a->set_name(ArgName(k));
      a->set_type(vars_[k].type);
    }
    for (size_t j = 0; j < invariants_.size(); ++j) {
      auto* a = sig->add_input_arg();
      a->set_name(InvariantName(j));
      a->set_type(TypeAttr(node(invariants_[j])));
    }
  }

  // The nodes `roots` need, copied into `fn` with their inputs as `fn` names them.
  bool AddNodes(const std::vector<std::string>& roots, tensorflow::FunctionDef* fn,
                std::string* why) const {
    std::set<int> free_constants;
    std::vector<tensorflow::NodeDef> nodes;
    for (int i : Needed(roots)) {
      tensorflow::NodeDef copy = node(i);
      copy.clear_input();
      for (const std::string& in : node(i).input()) {
        std::optional<std::string> mapped = Map(in, &free_constants);
        if (!mapped.has_value()) {
          return Fail(why, absl::StrCat("node '", node(i).name(), "' reads '", in,
                                        "' across the loop's boundary without an Enter"));
        }
        copy.add_input(*mapped);
      }
      nodes.push_back(std::move(copy));
    }
    for (int c : free_constants) *fn->add_node_def() = node(c);
    for (tensorflow::NodeDef& n : nodes) *fn->add_node_def() = std::move(n);
    return true;
  }
  bool Fail(std::string* why, std::string text) const {
    *why = std::move(text);
    return false;
  }

  bool BuildCond(tensorflow::FunctionDef* cond, std::string* why) {
    const tensorflow::NodeDef& lc = node(loopcond_);
    if (lc.input_size() < 1) return Fail(why, "LoopCond has no input");
    cond->mutable_signature()->set_name(
        UniqueFunctionName(def_->library(), absl::StrCat("_tfjit_loop_cond_", Serial())));
    AddSignatureInputs(cond->mutable_signature());
    auto* out = cond->mutable_signature()->add_output_arg();
    out->set_name("pred");
    out->set_type(tensorflow::DT_BOOL);
    if (!AddNodes({lc.input(0)}, cond, why)) return false;
    std::set<int> free_constants;
    std::optional<std::string> pred = Map(lc.input(0), &free_constants);
    if (!pred.has_value() || !free_constants.empty()) {
      return Fail(why, absl::StrCat("LoopCond '", lc.name(), "' reads '", lc.input(0),
                                    "' from outside the loop"));
    }
    (*cond->mutable_ret())["pred"] = *pred;
    return true;
  }

  bool BuildBody(tensorflow::FunctionDef* body, std::string* why) {
    body->mutable_signature()->set_name(
        UniqueFunctionName(def_->library(), absl::StrCat("_tfjit_loop_body_", Serial())));
    AddSignatureInputs(body->mutable_signature());
    std::vector<std::string> roots;
    std::vector<std::string> controls;
    for (const Var& v : vars_) {
      for (const std::string& in : node(v.next).input()) {
        roots.push_back(in);
        if (!in.empty() && in.front() == '^') controls.push_back(in.substr(1));
      }
    }
    if (!AddNodes(roots, body, why)) return false;
    std::set<int> free_constants;
    for (size_t k = 0; k < vars_.size(); ++k) {
      std::optional<std::string> value;
      for (const std::string& in : node(vars_[k].next).input()) {
        if (in.empty() || in.front() != '^') value = Map(in, &free_constants);
      }
      if (!value.has_value() || !free_constants.empty()) {
        return Fail(why, absl::StrCat("NextIteration '", node(vars_[k].next).name(),
                                      "' has no value from inside the loop"));
      }
      auto* out = body->mutable_signature()->add_output_arg();
      out->set_name(absl::StrCat("next_", k));
      out->set_type(vars_[k].type);
      (*body->mutable_ret())[out->name()] = *value;
    }
    for (size_t j = 0; j < invariants_.size(); ++j) {
      auto* out = body->mutable_signature()->add_output_arg();
      out->set_name(absl::StrCat("invariant_", j));
      out->set_type(TypeAttr(node(invariants_[j])));
      (*body->mutable_ret())[out->name()] = InvariantName(j);
    }
    // What NextIteration waits for runs every iteration (control outputs of the body).
    for (const std::string& c : controls) {
      const int p = frames_.index(c);
      if (!regular_.contains(p)) continue;
      body->mutable_signature()->add_control_output(c);
      (*body->mutable_control_ret())[c] = c;
    }
    return true;
  }

  int Serial() const { return def_->library().function_size(); }

  void Rewrite(tensorflow::FunctionDef cond, tensorflow::FunctionDef body) {
    tensorflow::NodeDef loop;
    const std::string base = absl::StrCat(frames_.frames()[static_cast<size_t>(f_)].name.empty()
                                              ? std::string("loop")
                                              : frames_.frames()[static_cast<size_t>(f_)].name,
                                          "/functional_while");
    std::string name = base;
    for (int k = 1; frames_.index(name) >= 0; ++k) name = absl::StrCat(base, "_", k);
    loop.set_name(name);
    loop.set_op("While");
    tensorflow::AttrValue types;
    std::vector<int> inputs_from;
    for (const Var& v : vars_) inputs_from.push_back(v.enter);
    inputs_from.insert(inputs_from.end(), invariants_.begin(), invariants_.end());
    std::set<std::string> controls;
    int parallel = 10;
    for (int e : inputs_from) {
      const tensorflow::NodeDef& enter = node(e);
      for (const std::string& in : enter.input()) {
        if (!in.empty() && in.front() == '^') {
          controls.insert(in);
        } else {
          loop.add_input(in);
        }
      }
      types.mutable_list()->add_type(TypeAttr(enter));
      if (auto it = enter.attr().find("parallel_iterations"); it != enter.attr().end()) {
        parallel = static_cast<int>(it->second.i());
      }
      if (loop.device().empty()) loop.set_device(enter.device());
    }
    for (const std::string& c : controls) loop.add_input(c);
    (*loop.mutable_attr())["T"] = types;
    (*loop.mutable_attr())["cond"].mutable_func()->set_name(cond.signature().name());
    (*loop.mutable_attr())["body"].mutable_func()->set_name(body.signature().name());
    (*loop.mutable_attr())["parallel_iterations"].set_i(parallel);
    (*loop.mutable_attr())["output_shapes"].mutable_list();
    *def_->mutable_library()->add_function() = std::move(cond);
    *def_->mutable_library()->add_function() = std::move(body);
    // Exits keep their names: Identity of the While's output.
    for (size_t k = 0; k < vars_.size(); ++k) {
      for (int x : vars_[k].exits) {
        tensorflow::NodeDef* exit = def_->mutable_node(x);
        const std::string device = exit->device();
        const std::string exit_name = exit->name();
        exit->Clear();
        exit->set_name(exit_name);
        exit->set_op("Identity");
        exit->set_device(device);
        exit->add_input(absl::StrCat(name, ":", k));
        (*exit->mutable_attr())["T"].set_type(vars_[k].type);
      }
    }
    google::protobuf::RepeatedPtrField<tensorflow::NodeDef> kept;
    for (int i = 0; i < def_->node_size(); ++i) {
      if (!members_.contains(i)) *kept.Add() = std::move(*def_->mutable_node(i));
    }
    *kept.Add() = std::move(loop);
    def_->mutable_node()->Swap(&kept);
  }

  tensorflow::GraphDef* def_;
  const FrameAnalysis& frames_;
  const int f_;
  absl::flat_hash_set<int> members_, regular_, exits_;
  std::vector<int> enters_, invariants_;
  std::vector<Var> vars_;
  absl::flat_hash_map<int, size_t> var_of_merge_, var_of_switch_, invariant_of_enter_;
  int loopcond_ = -1;
};

}  // namespace
}  // namespace functionalize_internal

using functionalize_internal::Frame;
using functionalize_internal::FrameAnalysis;
using functionalize_internal::LoopRewriter;

absl::StatusOr<FunctionalizeResult> FunctionalizeLoops(tensorflow::GraphDef* def,
                                                       const FunctionalizeOptions& options) {
  FunctionalizeResult result;
  result.tensor_arrays = functionalize_internal::RewriteTensorArrays(def);
  std::set<std::string> left;            // frames given up on, by name
  std::set<std::string> conds_given_up;  // conditionals given up on, by Merge name
  for (;;) {
    FrameAnalysis frames;
    std::string why;
    if (!frames.Run(*def, &why)) {
      result.left.push_back({"graph", why});
      return result;
    }
    // Conditionals first (a loop holding one cannot be functionalized before), then the
    // deepest loop; then again, until neither changes anything.
    TFJIT_ASSIGN_OR_RETURN(bool changed, functionalize_internal::FunctionalizeOneCond(
                                             def, frames, options, &conds_given_up, &result));
    if (changed) continue;
    int pick = -1;
    for (size_t f = 1; f < frames.frames().size(); ++f) {
      const Frame& frame = frames.frames()[f];
      if (left.contains(frame.name)) continue;
      if (pick < 0 || frame.depth > frames.frames()[static_cast<size_t>(pick)].depth) {
        pick = static_cast<int>(f);
      }
    }
    if (pick < 0) return result;
    const std::string name = frames.frames()[static_cast<size_t>(pick)].name;
    LoopRewriter rewriter(def, frames, pick);
    if (rewriter.Run(&why)) {
      ++result.loops;
    } else {
      left.insert(name);
      result.left.push_back({absl::StrCat("loop frame '", name, "'"), why});
    }
  }
}

}  // namespace tfjit::tf
