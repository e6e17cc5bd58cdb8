// TF1 conditionals as If nodes (functionalize.h): a deadness analysis over Switch outputs
// finds each conditional's Merges and branches; the branches become library functions.
#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "frontend/functionalize_internal.h"

namespace tfjit::tf::functionalize_internal {
namespace {

using Literal = std::pair<int, int>;    // (Switch node, output): live only if that output is
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
  Deadness(const tensorflow::GraphDef& def, const FrameAnalysis& frames)
      : def_(def), frames_(frames) {}

  // Over the frame analysis's order (a GraphDef it accepted).
  void Run() {
    const int n = def_.node_size();
    base_.assign(static_cast<size_t>(n), {});
    pred_.assign(static_cast<size_t>(n), -1);
    for (int i : frames_.order()) {
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
               int pred, Literals rest, std::vector<int> merges, std::vector<int> then_inputs)
      : def_(def),
        frames_(frames),
        dead_(dead),
        pred_(pred),
        rest_(std::move(rest)),
        merges_(std::move(merges)),
        then_inputs_(std::move(then_inputs)) {}

  // The Merges of the conditional Run took (or tried).
  const std::vector<int>& merges() const { return merges_; }

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
    KeepFirstConditional();
    if (switches_.empty()) {
      return Fail(why, absl::StrCat("Merge '", node(merges_[0]).name(), "' joins no Switch"));
    }
    // Nothing outside reads the branches or Merge:1; Switches are read only by the branches.
    const std::set<int> kept(merges_.begin(), merges_.end());
    for (int i = 0; i < def_->node_size(); ++i) {
      if (branch_.contains(i)) continue;
      for (const std::string& in : node(i).input()) {
        const Ref r = ParseRef(in);
        const int p = frames_.index(r.node);
        const bool merge = kept.contains(i);
        if (branch_.contains(p) && !merge) {
          return Fail(why, absl::StrCat("node '", node(i).name(), "' reads '", r.node,
                                        "' of a branch without a Merge"));
        }
        if (switch_arg_.contains(p) && !merge && !switch_arg_.contains(i)) {
          return Fail(why, absl::StrCat("node '", node(i).name(), "' reads Switch '", r.node,
                                        "' outside the branches"));
        }
        if (kept.contains(p) && !r.control && r.port != 0) {
          return Fail(why, absl::StrCat("node '", node(i).name(), "' reads Merge '", r.node,
                                        "''s value_index"));
        }
      }
    }
    return true;
  }

  // Conditionals on one predicate are separate Ifs unless their branches or Switches are
  // connected: batch norms chained on one `is_training` feed each other through their Merges,
  // and one If for all of them would read its own output. Keeps the first Merge's conditional
  // (its Merges, Switches and branch nodes); later rounds take the others.
  void KeepFirstConditional() {
    absl::flat_hash_map<int, int> parent;
    std::function<int(int)> find = [&](int x) {
      auto it = parent.find(x);
      if (it == parent.end() || it->second == x) return x;
      return it->second = find(it->second);
    };
    auto member = [&](int i) {
      return branch_.contains(i) || switch_arg_.contains(i) ||
             std::find(merges_.begin(), merges_.end(), i) != merges_.end();
    };
    for (int i = 0; i < def_->node_size(); ++i) {
      if (!member(i) || switch_arg_.contains(i)) continue;
      for (const std::string& in : node(i).input()) {
        const int p = frames_.index(ParseRef(in).node);
        if (p >= 0 && member(p)) parent[find(i)] = find(p);
      }
    }
    const int first = find(merges_[0]);
    std::vector<int> merges, then_inputs, switches;
    for (size_t k = 0; k < merges_.size(); ++k) {
      if (find(merges_[k]) != first) continue;
      merges.push_back(merges_[k]);
      then_inputs.push_back(then_inputs_[k]);
    }
    for (int s : switches_) {
      if (find(s) == first) switches.push_back(s);
    }
    for (auto it = branch_.begin(); it != branch_.end();) {
      it = find(it->first) == first ? std::next(it) : branch_.erase(it);
    }
    merges_ = std::move(merges);
    then_inputs_ = std::move(then_inputs);
    switches_ = std::move(switches);
    switch_arg_.clear();
    for (size_t k = 0; k < switches_.size(); ++k) switch_arg_[switches_[k]] = k;
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
      const std::string& in =
          data[static_cast<size_t>(port == 1 ? then_inputs_[k] : 1 - then_inputs_[k])];
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
          def_->library(), absl::StrCat(then ? "_tfjit_cond_then_" : "_tfjit_cond_else_", serial)));
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
  std::vector<int> merges_;
  std::vector<int> then_inputs_;  // per Merge: its data input from the true branch
  std::vector<int> switches_;
  absl::flat_hash_map<int, size_t> switch_arg_;
  std::map<int, int> branch_;  // node -> the Switch output it is live on
  absl::flat_hash_map<std::string, size_t> capture_;
  std::vector<std::string> captured_;
};

}  // namespace

// One conditional of `def` turned into an If, if any can be; `left` collects those that
// cannot (by their first Merge's name).
absl::StatusOr<bool> FunctionalizeOneCond(tensorflow::GraphDef* def, const FrameAnalysis& frames,
                                          const FunctionalizeOptions& options,
                                          std::set<std::string>* given_up,
                                          FunctionalizeResult* result) {
  Deadness dead(*def, frames);
  dead.Run();
  std::string why;
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
      for (int m : rewriter.merges()) given_up->insert(def->node(m).name());
      result->left.push_back(
          {absl::StrCat("conditional at Merge '", def->node(rewriter.merges()[0]).name(), "'"),
           why});
    }
  }
  return false;
}

}  // namespace tfjit::tf::functionalize_internal
