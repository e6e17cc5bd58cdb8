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
#include "frontend/functionalize.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "frontend/function.h"

namespace tfjit::tf {
namespace {

struct Ref {
  std::string node;
  int port = 0;
  bool control = false;
};

Ref ParseRef(const std::string& s) {
  Ref r;
  if (!s.empty() && s.front() == '^') {
    r.control = true;
    r.node = s.substr(1);
    return r;
  }
  const size_t colon = s.rfind(':');
  int port = 0;
  if (colon != std::string::npos && absl::SimpleAtoi(s.substr(colon + 1), &port)) {
    r.node = s.substr(0, colon);
    r.port = port;
  } else {
    r.node = s;
  }
  return r;
}

bool Is(const tensorflow::NodeDef& n, const char* op) {
  return n.op() == op || n.op() == absl::StrCat("Ref", op);
}

struct Frame {
  std::string name;
  int parent = -1;
  int depth = 0;
};

// Step 1: the frame of every node of `def` (frame 0 is the root).
class FrameAnalysis {
 public:
  bool Run(const tensorflow::GraphDef& def, std::string* why) {
    const int n = def.node_size();
    for (int i = 0; i < n; ++i) index_[def.node(i).name()] = i;
    std::vector<std::vector<int>> consumers(static_cast<size_t>(n));
    std::vector<int> pending(static_cast<size_t>(n), 0);
    inputs_.assign(static_cast<size_t>(n), {});
    for (int i = 0; i < n; ++i) {
      const tensorflow::NodeDef& node = def.node(i);
      for (const std::string& in : node.input()) {
        const Ref r = ParseRef(in);
        auto it = index_.find(r.node);
        if (it == index_.end()) {
          *why = absl::StrCat("node '", node.name(), "' reads '", r.node, "', which is no node");
          return false;
        }
        if (Is(node, "Merge") && Is(def.node(it->second), "NextIteration")) continue;
        inputs_[static_cast<size_t>(i)].push_back(it->second);
        consumers[static_cast<size_t>(it->second)].push_back(i);
        ++pending[static_cast<size_t>(i)];
      }
    }
    frames_ = {Frame{"", -1, 0}};
    frame_of_.assign(static_cast<size_t>(n), -1);
    std::deque<int> ready;
    for (int i = 0; i < n; ++i) {
      if (pending[static_cast<size_t>(i)] == 0) ready.push_back(i);
    }
    int visited = 0;
    while (!ready.empty()) {
      const int i = ready.front();
      ready.pop_front();
      ++visited;
      if (!Assign(def, i, why)) return false;
      for (int c : consumers[static_cast<size_t>(i)]) {
        if (--pending[static_cast<size_t>(c)] == 0) ready.push_back(c);
      }
    }
    if (visited != n) {
      *why = "the graph has a cycle other than loops' NextIteration -> Merge edges";
      return false;
    }
    return true;
  }

  int frame_of(int node) const { return frame_of_[static_cast<size_t>(node)]; }
  const std::vector<Frame>& frames() const { return frames_; }
  int index(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }
  // Nodes without any input, in the root frame: constants a loop may read without an Enter.
  bool IsFreeConstant(const tensorflow::GraphDef& def, int node) const {
    return frame_of(node) == 0 && def.node(node).input_size() == 0;
  }

 private:
  bool Assign(const tensorflow::GraphDef& def, int i, std::string* why) {
    const tensorflow::NodeDef& node = def.node(i);
    const std::vector<int>& in = inputs_[static_cast<size_t>(i)];
    int frame = 0;
    if (Is(node, "Enter") && !in.empty()) {
      const int parent = frame_of(in[0]);
      auto name = node.attr().find("frame_name");
      const std::string frame_name = name == node.attr().end() ? "" : name->second.s();
      auto [it, inserted] = child_.try_emplace({parent, frame_name}, 0);
      if (inserted) {
        it->second = static_cast<int>(frames_.size());
        frames_.push_back(Frame{frame_name, parent, frames_[static_cast<size_t>(parent)].depth + 1});
      }
      frame = it->second;
    } else if (Is(node, "Exit") && !in.empty()) {
      frame = frames_[static_cast<size_t>(frame_of(in[0]))].parent;
      if (frame < 0) {
        *why = absl::StrCat("Exit '", node.name(), "' is not inside a loop frame");
        return false;
      }
    } else {
      // The inputs' frame; constants of the root frame may feed any frame.
      std::optional<int> seen;
      for (int p : in) {
        if (frame_of(p) == 0 && def.node(p).input_size() == 0) continue;
        if (seen.has_value() && *seen != frame_of(p)) {
          *why = absl::StrCat("node '", node.name(), "' reads from two frames ('",
                              frames_[static_cast<size_t>(*seen)].name, "' and '",
                              frames_[static_cast<size_t>(frame_of(p))].name, "')");
          return false;
        }
        seen = frame_of(p);
      }
      frame = seen.value_or(0);
    }
    frame_of_[static_cast<size_t>(i)] = frame;
    return true;
  }

  absl::flat_hash_map<std::string, int> index_;
  std::vector<std::vector<int>> inputs_;
  std::vector<Frame> frames_;
  std::vector<int> frame_of_;
  std::map<std::pair<int, std::string>, int> child_;
};

tensorflow::DataType TypeAttr(const tensorflow::NodeDef& n) {
  auto it = n.attr().find("T");
  return it == n.attr().end() ? tensorflow::DT_INVALID : it->second.type();
}

std::string UniqueFunctionName(const tensorflow::FunctionDefLibrary& library,
                               const std::string& base) {
  std::string name = base;
  for (int k = 1; FindFunction(library, name) != nullptr; ++k) name = absl::StrCat(base, "_", k);
  return name;
}

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
        return Fail(why, absl::StrCat("it holds a loop that stays in the runtime (Exit '",
                                      n.name(), "')"));
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
        return Fail(why, absl::StrCat("Merge '", node(m).name(), "' is a TF1 conditional's, not "
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
      auto var = data.size() == 2 ? var_of_merge_.find(frames_.index(data[0].node))
                                  : var_of_merge_.end();
      if (var == var_of_merge_.end() || data[0].port != 0 ||
          frames_.index(data[1].node) != loopcond_) {
        return Fail(why, absl::StrCat("Switch '", n.name(), "' is a TF1 conditional's, not a "
                                      "loop variable's (conditionals inside loops are not "
                                      "functionalized yet)"));
      }
      if (vars_[var->second].sw >= 0) {
        return Fail(why, absl::StrCat("loop variable Merge '", node(vars_[var->second].merge).name(),
                                      "' has two Switch nodes"));
      }
      vars_[var->second].sw = s;
      var_of_switch_[s] = var->second;
    }
    for (const Var& v : vars_) {
      if (v.sw < 0) {
        return Fail(why, absl::StrCat("loop variable Merge '", node(v.merge).name(),
                                      "' has no Switch"));
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
        return Fail(why, absl::StrCat("Exit '", n.name(), "' does not read a loop variable's "
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

// ---- TF1 TensorArrays as TensorLists ----

bool IsForwarding(const tensorflow::NodeDef& n) {
  return n.op() == "Identity" || Is(n, "Enter") || Is(n, "Merge") || Is(n, "Switch") ||
         Is(n, "Exit") || Is(n, "NextIteration");
}

// TensorArrayV3 and its ops become the TensorList ops XLA also represents them with: the
// handle's uses go away and the float "flow", which already orders the ops, carries the list.
// A TensorArray is left as it is when it grows (dynamic_size), or when its handle or flow
// reaches an op without a list form (Concat, Split, gradients, or anything else).
class TensorArrayRewriter {
 public:
  explicit TensorArrayRewriter(tensorflow::GraphDef* def) : def_(def) {
    for (int i = 0; i < def_->node_size(); ++i) {
      index_[def_->node(i).name()] = i;
      for (int k = 0; k < def_->node(i).input_size(); ++k) {
        const Ref r = ParseRef(def_->node(i).input(k));
        consumers_[r.node].push_back({i, k});
      }
    }
  }

  // Returns how many TensorArrays were rewritten.
  int Run() {
    int rewritten = 0;
    for (int i = 0; i < def_->node_size(); ++i) {
      if (def_->node(i).op() != "TensorArrayV3") continue;
      if (Rewrite(i)) ++rewritten;
    }
    if (rewritten > 0) RemoveDeadHandles();
    return rewritten;
  }

 private:
  using Use = std::pair<int, int>;  // (consumer, input slot)

  // The consumers of output `port` of node `i` (data edges).
  std::vector<Use> DataUses(int i, int port) const {
    std::vector<Use> out;
    auto it = consumers_.find(def_->node(i).name());
    if (it == consumers_.end()) return out;
    for (const Use& u : it->second) {
      if (u.second >= def_->node(u.first).input_size()) continue;  // rewritten meanwhile
      const Ref r = ParseRef(def_->node(u.first).input(u.second));
      if (!r.control && r.port == port) out.push_back(u);
    }
    return out;
  }
  int Outputs(const tensorflow::NodeDef& n) const { return Is(n, "Switch") ? 2 : 1; }

  bool Rewrite(int ta) {
    const tensorflow::NodeDef& node = def_->node(ta);
    if (auto d = node.attr().find("dynamic_size"); d != node.attr().end() && d->second.b()) {
      return false;
    }
    // The handle reaches TensorArray ops (slot 0) through forwarding nodes only.
    std::set<int> handle_nodes, ops;
    if (!Reach({{ta, 0}}, tensorflow::DT_RESOURCE, &handle_nodes, [&](int c, int slot) {
          if (slot != 0 || !kListForm.contains(def_->node(c).op())) return false;
          ops.insert(c);
          return true;
        })) {
      return false;
    }
    // The flow: from the TensorArray and the ops that write, through forwarding nodes, into
    // the ops' flow inputs only.
    std::set<int> flow_nodes;
    std::vector<std::pair<int, int>> flows = {{ta, 1}};
    for (int op : ops) {
      const std::string& o = def_->node(op).op();
      if (o == "TensorArrayWriteV3" || o == "TensorArrayScatterV3") flows.push_back({op, 0});
    }
    if (!Reach(flows, tensorflow::DT_FLOAT, &flow_nodes, [&](int c, int slot) {
          return ops.contains(c) && slot == FlowSlot(def_->node(c).op());
        })) {
      return false;
    }
    // Rewrite: the TensorArray becomes TensorListReserve; its flow output is the list.
    const tensorflow::DataType dtype = node.attr().at("dtype").type();
    const std::string name = node.name();
    const tensorflow::TensorShapeProto shape =
        node.attr().contains("element_shape") ? node.attr().at("element_shape").shape()
                                              : tensorflow::TensorShapeProto();
    {
      tensorflow::NodeDef reserve;
      reserve.set_name(name);
      reserve.set_op("TensorListReserve");
      reserve.set_device(node.device());
      const std::string es = AddElementShape(name, shape, "");
      reserve.add_input(es);
      for (const std::string& in : node.input()) reserve.add_input(in);  // size, controls
      (*reserve.mutable_attr())["element_dtype"].set_type(dtype);
      (*reserve.mutable_attr())["shape_type"].set_type(tensorflow::DT_INT32);
      *def_->mutable_node(ta) = std::move(reserve);
    }
    for (const Use& u : DataUses(ta, 1)) {
      def_->mutable_node(u.first)->set_input(u.second, name);
    }
    for (int f : flow_nodes) {
      (*def_->mutable_node(f)->mutable_attr())["T"].set_type(tensorflow::DT_VARIANT);
    }
    for (int op : ops) RewriteOp(op, shape);
    dead_handles_.insert(handle_nodes.begin(), handle_nodes.end());
    return true;
  }

  // Follows the outputs `starts` (node, output) through forwarding nodes of `type` (collected
  // in `forwarding`); every other consumer must satisfy `accept(consumer, input slot)`.
  bool Reach(std::vector<std::pair<int, int>> work, tensorflow::DataType type,
             std::set<int>* forwarding, const std::function<bool(int, int)>& accept) const {
    while (!work.empty()) {
      auto [n, port] = work.back();
      work.pop_back();
      for (const Use& u : DataUses(n, port)) {
        const tensorflow::NodeDef& c = def_->node(u.first);
        if (IsForwarding(c) && TypeAttr(c) == type) {
          if (forwarding->insert(u.first).second) {
            for (int p = 0; p < Outputs(c); ++p) work.push_back({u.first, p});
          }
        } else if (!accept(u.first, u.second)) {
          return false;
        }
      }
    }
    return true;
  }

  static int FlowSlot(const std::string& op) {
    if (op == "TensorArrayWriteV3" || op == "TensorArrayScatterV3") return 3;
    if (op == "TensorArrayReadV3" || op == "TensorArrayGatherV3") return 2;
    if (op == "TensorArraySizeV3") return 1;
    return -1;
  }

  // A Const holding `shape` as TensorList ops take it (-1: unknown), ordered after `after`
  // (so that it sits in that node's loop frame).
  std::string AddElementShape(const std::string& base, const tensorflow::TensorShapeProto& shape,
                              const std::string& after) {
    std::string name = absl::StrCat(base, "/element_shape");
    for (int k = 1; index_.contains(name); ++k) {
      name = absl::StrCat(base, "/element_shape_", k);
    }
    index_[name] = -1;
    tensorflow::NodeDef c;
    c.set_name(name);
    c.set_op("Const");
    if (!after.empty()) c.add_input(absl::StrCat("^", after));
    (*c.mutable_attr())["dtype"].set_type(tensorflow::DT_INT32);
    tensorflow::TensorProto* t = (*c.mutable_attr())["value"].mutable_tensor();
    t->set_dtype(tensorflow::DT_INT32);
    if (shape.unknown_rank()) {
      t->mutable_tensor_shape();
      t->add_int_val(-1);
    } else {
      t->mutable_tensor_shape()->add_dim()->set_size(shape.dim_size());
      for (const auto& d : shape.dim()) t->add_int_val(static_cast<int32_t>(d.size()));
    }
    added_.push_back(std::move(c));
    return name;
  }

  void RewriteOp(int i, const tensorflow::TensorShapeProto& shape) {
    tensorflow::NodeDef& n = *def_->mutable_node(i);
    std::vector<std::string> data, controls;
    for (const std::string& in : n.input()) {
      (!in.empty() && in.front() == '^' ? controls : data).push_back(in);
    }
    const std::string op = n.op();
    tensorflow::NodeDef out;
    out.set_name(n.name());
    out.set_device(n.device());
    auto element_dtype = [&](tensorflow::DataType t) {
      (*out.mutable_attr())["element_dtype"].set_type(t);
    };
    const std::string flow_node = data.size() > 1 ? ParseRef(data.back()).node : "";
    if (op == "TensorArrayWriteV3") {
      out.set_op("TensorListSetItem");
      for (const std::string& in : {data[3], data[1], data[2]}) out.add_input(in);
      element_dtype(n.attr().at("T").type());
    } else if (op == "TensorArrayReadV3" || op == "TensorArrayGatherV3") {
      out.set_op(op == "TensorArrayReadV3" ? "TensorListGetItem" : "TensorListGather");
      tensorflow::TensorShapeProto es = shape;
      if (auto a = n.attr().find("element_shape");
          a != n.attr().end() && !a->second.shape().unknown_rank()) {
        es = a->second.shape();
      }
      for (const std::string& in : {data[2], data[1]}) out.add_input(in);
      out.add_input(AddElementShape(n.name(), es, flow_node));
      element_dtype(n.attr().at("dtype").type());
    } else if (op == "TensorArrayScatterV3") {
      out.set_op("TensorListScatterIntoExistingList");
      for (const std::string& in : {data[3], data[2], data[1]}) out.add_input(in);
      element_dtype(n.attr().at("T").type());
    } else if (op == "TensorArraySizeV3") {
      out.set_op("TensorListLength");
      out.add_input(data[1]);
    } else {  // TensorArrayCloseV3: nothing to release
      out.set_op("NoOp");
    }
    for (const std::string& c : controls) out.add_input(c);
    n = std::move(out);
  }

  // Forwarding nodes of rewritten handles, now read by nothing, go; the new Consts come in.
  void RemoveDeadHandles() {
    google::protobuf::RepeatedPtrField<tensorflow::NodeDef> kept;
    for (int i = 0; i < def_->node_size(); ++i) {
      if (!dead_handles_.contains(i)) *kept.Add() = std::move(*def_->mutable_node(i));
    }
    for (tensorflow::NodeDef& c : added_) *kept.Add() = std::move(c);
    def_->mutable_node()->Swap(&kept);
  }

  inline static const std::set<std::string> kListForm = {
      "TensorArrayWriteV3", "TensorArrayReadV3", "TensorArrayGatherV3",
      "TensorArrayScatterV3", "TensorArraySizeV3", "TensorArrayCloseV3"};

  tensorflow::GraphDef* def_;
  absl::flat_hash_map<std::string, int> index_;
  absl::flat_hash_map<std::string, std::vector<Use>> consumers_;
  std::set<int> dead_handles_;
  std::vector<tensorflow::NodeDef> added_;
};

// ---- Conditionals ----

using Literal = std::pair<int, int>;  // (Switch node, output): live only if that output is
using Literals = std::vector<Literal>;  // sorted

Literals Union(const Literals& a, const Literals& b) {
  Literals out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}
Literals Intersection(const Literals& a, const Literals& b) {
  Literals out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}
Literals Difference(const Literals& a, const Literals& b) {
  Literals out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Which Switch outputs each node's liveness depends on (TF's deadness, as literals): a
// Switch output adds its literal; a conditional's Merge drops the literals its two inputs
// differ in when they are one predicate's two outputs; a loop's Merge reads its Enter; Exit
// drops its loop's Switch literals; any other node unions its inputs'.
class Deadness {
 public:
  Deadness(const tensorflow::GraphDef& def, const FrameAnalysis& frames) : def_(def),
                                                                           frames_(frames) {}

  bool Run(std::string* why) {
    const int n = def_.node_size();
    base_.assign(static_cast<size_t>(n), {});
    pred_.assign(static_cast<size_t>(n), -1);
    std::vector<int> order;
    if (!Order(&order, why)) return false;
    for (int i : order) {
      const tensorflow::NodeDef& node = def_.node(i);
      if (Is(node, "Switch") && node.input_size() >= 2) {
        pred_[static_cast<size_t>(i)] = CanonicalPred(ParseRef(node.input(1)));
      }
      if (Is(node, "Merge")) {
        base_[static_cast<size_t>(i)] = MergeLiterals(i);
        continue;
      }
      Literals acc;
      for (const std::string& in : node.input()) acc = Union(acc, Of(ParseRef(in)));
      if (Is(node, "Exit") && node.input_size() > 0) {
        const int frame = frames_.frame_of(frames_.index(ParseRef(node.input(0)).node));
        Literals kept;
        for (const Literal& l : acc) {
          if (frames_.frame_of(l.first) != frame) kept.push_back(l);
        }
        acc = std::move(kept);
      }
      base_[static_cast<size_t>(i)] = std::move(acc);
    }
    return true;
  }

  // The literals of what `r` reads.
  Literals Of(const Ref& r) const {
    const int p = frames_.index(r.node);
    Literals out = base_[static_cast<size_t>(p)];
    if (!r.control && Is(def_.node(p), "Switch")) {
      out = Union(out, {{p, r.port}});
    }
    return out;
  }
  const Literals& base(int i) const { return base_[static_cast<size_t>(i)]; }
  // A Switch's predicate as a canonical node (Identity chains followed), or -1.
  int pred(int sw) const { return pred_[static_cast<size_t>(sw)]; }
  // For a conditional's Merge: the literals both inputs share, the predicate, and which data
  // input is the true branch's; nullopt for other Merges.
  struct CondMerge {
    Literals rest;
    int pred = -1;
    int then_input = 0;
  };
  std::optional<CondMerge> AsCondMerge(int m) const {
    std::vector<Ref> data;
    for (const std::string& in : def_.node(m).input()) {
      if (Ref r = ParseRef(in); !r.control) data.push_back(r);
    }
    if (data.size() != 2) return std::nullopt;
    for (const Ref& r : data) {
      if (Is(def_.node(frames_.index(r.node)), "NextIteration")) return std::nullopt;
    }
    const Literals a = Of(data[0]), b = Of(data[1]);
    const Literals only_a = Difference(a, b), only_b = Difference(b, a);
    std::optional<int> pred, port_a, port_b;
    auto one_side = [&](const Literals& ls, std::optional<int>* port) {
      for (const Literal& l : ls) {
        const int p = pred_[static_cast<size_t>(l.first)];
        if (p < 0 || (pred.has_value() && *pred != p) ||
            (port->has_value() && **port != l.second)) {
          return false;
        }
        pred = p;
        *port = l.second;
      }
      return !ls.empty();
    };
    if (!one_side(only_a, &port_a) || !one_side(only_b, &port_b) || *port_a == *port_b) {
      return std::nullopt;
    }
    return CondMerge{Intersection(a, b), *pred, *port_a == 1 ? 0 : 1};
  }

 private:
  bool Order(std::vector<int>* order, std::string* why) const {
    const int n = def_.node_size();
    std::vector<std::vector<int>> consumers(static_cast<size_t>(n));
    std::vector<int> pending(static_cast<size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
      for (const std::string& in : def_.node(i).input()) {
        const int p = frames_.index(ParseRef(in).node);
        if (Is(def_.node(i), "Merge") && Is(def_.node(p), "NextIteration")) continue;
        consumers[static_cast<size_t>(p)].push_back(i);
        ++pending[static_cast<size_t>(i)];
      }
    }
    std::deque<int> ready;
    for (int i = 0; i < n; ++i) {
      if (pending[static_cast<size_t>(i)] == 0) ready.push_back(i);
    }
    while (!ready.empty()) {
      const int i = ready.front();
      ready.pop_front();
      order->push_back(i);
      for (int c : consumers[static_cast<size_t>(i)]) {
        if (--pending[static_cast<size_t>(c)] == 0) ready.push_back(c);
      }
    }
    if (static_cast<int>(order->size()) != n) {
      *why = "the graph has a cycle other than loops' NextIteration -> Merge edges";
      return false;
    }
    return true;
  }
  int CanonicalPred(Ref r) const {
    for (int depth = 0; depth < 64; ++depth) {
      const int p = frames_.index(r.node);
      if (p < 0 || def_.node(p).op() != "Identity" || def_.node(p).input_size() == 0) return p;
      r = ParseRef(def_.node(p).input(0));
    }
    return frames_.index(r.node);
  }
  Literals MergeLiterals(int m) const {
    std::vector<Ref> data;
    for (const std::string& in : def_.node(m).input()) {
      if (Ref r = ParseRef(in); !r.control) data.push_back(r);
    }
    for (const Ref& r : data) {
      if (Is(def_.node(frames_.index(r.node)), "Enter")) return Of(r);  // a loop's Merge
    }
    if (std::optional<CondMerge> c = AsCondMerge(m)) return c->rest;
    Literals acc;
    for (size_t k = 0; k < data.size(); ++k) {
      acc = k == 0 ? Of(data[k]) : Intersection(acc, Of(data[k]));
    }
    return acc;
  }

  const tensorflow::GraphDef& def_;
  const FrameAnalysis& frames_;
  std::vector<Literals> base_;
  std::vector<int> pred_;
};

// One TF1 conditional (the Merges of one predicate under the same outer literals) as an If.
class CondRewriter {
 public:
  CondRewriter(tensorflow::GraphDef* def, const FrameAnalysis& frames, const Deadness& dead,
               int pred, Literals rest, std::vector<int> merges,
               std::vector<int> then_inputs)
      : def_(def), frames_(frames), dead_(dead), pred_(pred), rest_(std::move(rest)),
        merges_(std::move(merges)), then_inputs_(std::move(then_inputs)) {}

  // false: not (yet) possible; `why` empty when an inner conditional or loop must go first.
  bool Run(std::string* why) {
    why->clear();
    if (!Collect(why)) return false;
    tensorflow::FunctionDef then_fn, else_fn;
    if (!Branch(1, &then_fn, why) || !Branch(0, &else_fn, why)) return false;
    Rewrite(std::move(then_fn), std::move(else_fn));
    return true;
  }

 private:
  const tensorflow::NodeDef& node(int i) const { return def_->node(i); }
  bool Fail(std::string* why, std::string text) const {
    *why = std::move(text);
    return false;
  }

  bool Collect(std::string* why) {
    for (int i = 0; i < def_->node_size(); ++i) {
      if (Is(node(i), "Switch") && dead_.pred(i) == pred_ &&
          Difference(dead_.base(i), rest_).empty()) {
        switch_arg_[i] = switches_.size();
        switches_.push_back(i);
      }
    }
    const std::set<int> merges(merges_.begin(), merges_.end());
    for (int i = 0; i < def_->node_size(); ++i) {
      if (switch_arg_.contains(i) || merges.contains(i)) continue;
      const Literals extra = Difference(dead_.base(i), rest_);
      if (extra.empty()) continue;
      std::optional<int> port;
      bool ours = false, other = false;
      for (const Literal& l : extra) {
        if (switch_arg_.contains(l.first)) {
          ours = true;
          if (port.has_value() && *port != l.second) {
            return Fail(why, absl::StrCat("node '", node(i).name(), "' is in both branches"));
          }
          port = l.second;
        } else {
          other = true;
        }
      }
      if (!ours) continue;
      if (other) return false;  // an inner conditional or loop goes first
      const tensorflow::NodeDef& n = node(i);
      if (Is(n, "Enter") || Is(n, "Exit") || Is(n, "NextIteration") || Is(n, "Switch") ||
          Is(n, "Merge") || n.op() == "LoopCond") {
        return false;  // a TF1 loop or conditional inside a branch goes first
      }
      branch_[i] = *port;
    }
    // Nothing outside reads the branches or Merge:1; Switches are read only by the branches.
    for (int i = 0; i < def_->node_size(); ++i) {
      if (branch_.contains(i)) continue;
      for (const std::string& in : node(i).input()) {
        const Ref r = ParseRef(in);
        const int p = frames_.index(r.node);
        const bool merge = merges.contains(i);
        if (branch_.contains(p) && !merge) {
          return Fail(why, absl::StrCat("node '", node(i).name(), "' reads '", r.node,
                                        "' of a branch without a Merge"));
        }
        if (switch_arg_.contains(p) && !merge && !switch_arg_.contains(i)) {
          return Fail(why, absl::StrCat("node '", node(i).name(), "' reads Switch '", r.node,
                                        "' outside the branches"));
        }
        if (merges.contains(p) && !r.control && r.port != 0) {
          return Fail(why, absl::StrCat("node '", node(i).name(), "' reads Merge '", r.node,
                                        "''s value_index"));
        }
      }
    }
    return true;
  }

  static std::string ArgName(size_t k) { return absl::StrCat("_tfjit_in_", k); }

  // `ref` (read in branch `port`) as the function names it; captures tensors live outside.
  std::optional<std::string> Map(const std::string& ref, int port, std::set<int>* constants) {
    const Ref r = ParseRef(ref);
    const int p = frames_.index(r.node);
    const std::string control = r.control ? "^" : "";
    if (auto b = branch_.find(p); b != branch_.end()) {
      return b->second == port ? std::optional<std::string>(ref) : std::nullopt;
    }
    if (auto s = switch_arg_.find(p); s != switch_arg_.end()) {
      if (!r.control && r.port != port) return std::nullopt;
      return absl::StrCat(control, ArgName(s->second));
    }
    if (frames_.IsFreeConstant(*def_, p)) {
      constants->insert(p);
      return ref;
    }
    if (r.control) return std::string();  // an ordering edge from outside: the If waits
    // A tensor live whenever the conditional runs: one more input of the If.
    if (Difference(dead_.Of(r), rest_).empty()) {
      auto [it, inserted] = capture_.try_emplace(ref, switches_.size() + captured_.size());
      if (inserted) captured_.push_back(ref);
      return ArgName(it->second);
    }
    return std::nullopt;
  }

  bool Branch(int port, tensorflow::FunctionDef* fn, std::string* why) {
    std::set<int> constants;
    std::vector<tensorflow::NodeDef> nodes;
    for (const auto& [i, side] : branch_) {
      if (side != port) continue;
      tensorflow::NodeDef copy = node(i);
      copy.clear_input();
      for (const std::string& in : node(i).input()) {
        std::optional<std::string> mapped = Map(in, port, &constants);
        if (!mapped.has_value()) {
          return Fail(why, absl::StrCat("node '", node(i).name(), "' reads '", in,
                                        "', which is not live in its branch"));
        }
        if (!mapped->empty()) copy.add_input(*mapped);
      }
      nodes.push_back(std::move(copy));
    }
    for (int c : constants) *fn->add_node_def() = node(c);
    for (tensorflow::NodeDef& n : nodes) *fn->add_node_def() = std::move(n);
    for (size_t k = 0; k < merges_.size(); ++k) {
      std::vector<std::string> data;
      for (const std::string& in : node(merges_[k]).input()) {
        if (in.empty() || in.front() != '^') data.push_back(in);
      }
      const std::string& in = data[static_cast<size_t>(port == 1 ? then_inputs_[k]
                                                                 : 1 - then_inputs_[k])];
      std::optional<std::string> mapped = Map(in, port, &constants);
      if (!mapped.has_value() || mapped->empty()) {
        return Fail(why, absl::StrCat("Merge '", node(merges_[k]).name(), "' input '", in,
                                      "' is not its branch's value"));
      }
      auto* out = fn->mutable_signature()->add_output_arg();
      out->set_name(absl::StrCat("output_", k));
      out->set_type(TypeAttr(node(merges_[k])));
      (*fn->mutable_ret())[out->name()] = *mapped;
    }
    for (int c : constants) {  // constants the outputs name directly
      bool present = false;
      for (const auto& n : fn->node_def()) present = present || n.name() == node(c).name();
      if (!present) *fn->add_node_def() = node(c);
    }
    return true;
  }

  void Rewrite(tensorflow::FunctionDef then_fn, tensorflow::FunctionDef else_fn) {
    // Both branches take every input: the switched tensors, then the captured ones.
    tensorflow::AttrValue tin, tout;
    std::vector<std::string> inputs;
    for (int s : switches_) {
      inputs.push_back(node(s).input(0));
      tin.mutable_list()->add_type(TypeAttr(node(s)));
    }
    for (const std::string& c : captured_) {
      inputs.push_back(c);
      const Ref r = ParseRef(c);
      tin.mutable_list()->add_type(OutputType(frames_.index(r.node), r.port));
    }
    for (int m : merges_) tout.mutable_list()->add_type(TypeAttr(node(m)));
    const std::string serial = absl::StrCat(def_->library().function_size());
    for (tensorflow::FunctionDef* fn : {&then_fn, &else_fn}) {
      const bool then = fn == &then_fn;
      fn->mutable_signature()->set_name(UniqueFunctionName(
          def_->library(), absl::StrCat(then ? "_tfjit_cond_then_" : "_tfjit_cond_else_",
                                        serial)));
      for (size_t k = 0; k < inputs.size(); ++k) {
        auto* a = fn->mutable_signature()->add_input_arg();
        a->set_name(ArgName(k));
        a->set_type(tin.list().type(static_cast<int>(k)));
      }
    }
    tensorflow::NodeDef cond;
    std::string name = absl::StrCat(node(merges_[0]).name(), "/functional_if");
    for (int k = 1; frames_.index(name) >= 0; ++k) {
      name = absl::StrCat(node(merges_[0]).name(), "/functional_if_", k);
    }
    cond.set_name(name);
    cond.set_op("If");
    cond.set_device(node(merges_[0]).device());
    cond.add_input(node(switches_[0]).input(1));
    for (const std::string& in : inputs) cond.add_input(in);
    std::set<std::string> controls;
    for (int s : switches_) {
      for (const std::string& in : node(s).input()) {
        if (!in.empty() && in.front() == '^') controls.insert(in);
      }
    }
    for (const std::string& c : controls) cond.add_input(c);
    (*cond.mutable_attr())["Tcond"].set_type(tensorflow::DT_BOOL);
    (*cond.mutable_attr())["Tin"] = tin;
    (*cond.mutable_attr())["Tout"] = tout;
    (*cond.mutable_attr())["then_branch"].mutable_func()->set_name(then_fn.signature().name());
    (*cond.mutable_attr())["else_branch"].mutable_func()->set_name(else_fn.signature().name());
    (*cond.mutable_attr())["output_shapes"].mutable_list();
    *def_->mutable_library()->add_function() = std::move(then_fn);
    *def_->mutable_library()->add_function() = std::move(else_fn);
    for (size_t k = 0; k < merges_.size(); ++k) {
      tensorflow::NodeDef* m = def_->mutable_node(merges_[k]);
      const std::string merge_name = m->name(), device = m->device();
      const tensorflow::DataType type = TypeAttr(*m);
      m->Clear();
      m->set_name(merge_name);
      m->set_op("Identity");
      m->set_device(device);
      m->add_input(absl::StrCat(name, ":", k));
      (*m->mutable_attr())["T"].set_type(type);
    }
    google::protobuf::RepeatedPtrField<tensorflow::NodeDef> kept;
    for (int i = 0; i < def_->node_size(); ++i) {
      if (!branch_.contains(i) && !switch_arg_.contains(i)) {
        *kept.Add() = std::move(*def_->mutable_node(i));
      }
    }
    *kept.Add() = std::move(cond);
    def_->mutable_node()->Swap(&kept);
  }

  tensorflow::DataType OutputType(int p, int port) const {
    const tensorflow::NodeDef& n = node(p);
    for (const char* attr : {"T", "dtype"}) {
      if (auto it = n.attr().find(attr); it != n.attr().end()) {
        if (it->second.value_case() == tensorflow::AttrValue::kType) return it->second.type();
        if (it->second.has_list() && port < it->second.list().type_size()) {
          return it->second.list().type(port);
        }
      }
    }
    return tensorflow::DT_INVALID;
  }

  tensorflow::GraphDef* def_;
  const FrameAnalysis& frames_;
  const Deadness& dead_;
  const int pred_;
  const Literals rest_;
  const std::vector<int> merges_;
  const std::vector<int> then_inputs_;  // per Merge: its data input from the true branch
  std::vector<int> switches_;
  absl::flat_hash_map<int, size_t> switch_arg_;
  std::map<int, int> branch_;  // node -> the Switch output it is live on
  absl::flat_hash_map<std::string, size_t> capture_;
  std::vector<std::string> captured_;
};

// One conditional of `def` turned into an If, if any can be; `left` collects those that
// cannot (by their first Merge's name).
absl::StatusOr<bool> FunctionalizeOneCond(tensorflow::GraphDef* def, const FrameAnalysis& frames,
                                          const FunctionalizeOptions& options,
                                          std::set<std::string>* given_up,
                                          FunctionalizeResult* result) {
  Deadness dead(*def, frames);
  std::string why;
  if (!dead.Run(&why)) return false;
  std::map<std::pair<int, Literals>, std::pair<std::vector<int>, std::vector<int>>> groups;
  for (int i = 0; i < def->node_size(); ++i) {
    if (!Is(def->node(i), "Merge") || given_up->contains(def->node(i).name())) continue;
    if (!options.conditionals_outside_loops && frames.frame_of(i) == 0) continue;
    if (std::optional<Deadness::CondMerge> c = dead.AsCondMerge(i)) {
      auto& g = groups[{c->pred, c->rest}];
      g.first.push_back(i);
      g.second.push_back(c->then_input);
    }
  }
  for (auto& [key, merges] : groups) {
    CondRewriter rewriter(def, frames, dead, key.first, key.second, merges.first, merges.second);
    if (rewriter.Run(&why)) {
      ++result->conds;
      return true;
    }
    if (!why.empty()) {
      for (int m : merges.first) given_up->insert(def->node(m).name());
      result->left.push_back({absl::StrCat("conditional at Merge '",
                                           def->node(merges.first[0]).name(), "'"), why});
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<FunctionalizeResult> FunctionalizeLoops(tensorflow::GraphDef* def,
                                                       const FunctionalizeOptions& options) {
  FunctionalizeResult result;
  result.tensor_arrays = TensorArrayRewriter(def).Run();
  std::set<std::string> left;             // frames given up on, by name
  std::set<std::string> conds_given_up;   // conditionals given up on, by Merge name
  for (;;) {
    FrameAnalysis frames;
    std::string why;
    if (!frames.Run(*def, &why)) {
      result.left.push_back({"graph", why});
      return result;
    }
    // Conditionals first (a loop holding one cannot be functionalized before), then the
    // deepest loop; then again, until neither changes anything.
    TFJIT_ASSIGN_OR_RETURN(bool changed,
                           FunctionalizeOneCond(def, frames, options, &conds_given_up,
                                                &result));
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
