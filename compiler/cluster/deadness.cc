// TF1 deadness analysis for clustering (deadness.h): per node, its frame and the Switch
// outputs whose liveness implies its own, found by a fixpoint over the graph.
#include "compiler/cluster/deadness.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontend/attr.h"

namespace tfjit::cluster {
namespace {

constexpr char kFrameSep = '\x1e';  // between frame names in a frame's path

bool Is(const tf::Node& n, const char* op) {
  return n.op() == op || n.op() == absl::StrCat("Ref", op);
}

}  // namespace

bool IsTf1ControlFlowOp(const std::string& op) {
  return op == "Enter" || op == "Exit" || op == "NextIteration" || op == "Merge" ||
         op == "Switch" || op == "LoopCond" || op == "RefEnter" || op == "RefExit" ||
         op == "RefNextIteration" || op == "RefMerge" || op == "RefSwitch";
}

bool UsesTf1ControlFlow(const absl::flat_hash_set<const tf::Node*>& nodes) {
  for (const tf::Node* n : nodes) {
    if (IsTf1ControlFlowOp(n->op())) return true;
  }
  return false;
}

namespace {

using Source = std::pair<int, int>;   // (Switch node id, output port) that may be dead
using Sources = std::vector<Source>;  // sorted, unique

void Unite(const Sources& from, Sources* into) {
  Sources out;
  std::set_union(into->begin(), into->end(), from.begin(), from.end(), std::back_inserter(out));
  *into = std::move(out);
}

// The tensor behind a chain of Identity nodes: tf.cond's Switches take its pred through
// `pred_id = Identity(pred)`, the pivot Switch takes `pred` itself; both carry one value.
std::pair<const tf::Node*, int> CanonicalTensor(tf::Output o) {
  for (int depth = 0; depth < 64 && o.node->op() == "Identity" && o.node->num_inputs() == 1;
       ++depth) {
    o = o.node->input(0);
  }
  return {o.node, o.index};
}

constexpr char kMalformed[] = "?";  // a frame that Enter/Exit pairs do not define

// Static deadness of the frame part, per node: the Switch outputs whose liveness implies
// the node's. Sound by construction: a node is live when all its sources are live.
class DeadnessAnalysis {
 public:
  DeadnessAnalysis(const tf::Graph& graph, const absl::flat_hash_set<const tf::Node*>& needed,
                   const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fed)
      : graph_(graph),
        needed_(needed),
        fed_(fed),
        frame_(static_cast<size_t>(graph.num_nodes())),
        sources_(static_cast<size_t>(graph.num_nodes())) {}

  // Returns false when the fixpoint did not settle (then nothing may compile).
  bool Run() {
    for (const tf::Node* n : graph_.topological_order()) {
      if (needed_.contains(n)) frame_[n->id()] = FrameOf(*n);
    }
    // An Exit's sources are those of all Enters of its loop, which may come later in
    // topological order: iterate until nothing changes.
    for (int pass = 0; pass < 16; ++pass) {
      bool changed = false;
      absl::flat_hash_map<std::string, Sources> enters;
      for (const tf::Node* n : graph_.topological_order()) {
        if (!needed_.contains(n)) continue;
        Sources s = Compute(*n);
        if (s != sources_[n->id()]) {
          sources_[n->id()] = std::move(s);
          changed = true;
        }
        if (Is(*n, "Enter")) Unite(sources_[n->id()], &enters[frame_[n->id()]]);
      }
      changed |= enters != enters_;
      enters_ = std::move(enters);
      if (!changed) return true;
    }
    return false;
  }

  const std::string& frame(const tf::Node& n) const { return frame_[n.id()]; }
  const Sources& sources(const tf::Node& n) const { return sources_[n.id()]; }

 private:
  // "" is the root frame; a child frame is its parent's name, kFrameSep and frame_name.
  std::string FrameOf(const tf::Node& n) const {
    if (Is(n, "Enter")) {
      const std::string parent = n.num_inputs() > 0 ? InputFrame(n.input(0)) : "";
      absl::StatusOr<std::string> name = tf::GetStringAttr(n, "frame_name");
      if (!name.ok() || parent == kMalformed) return kMalformed;
      return absl::StrCat(parent, std::string(1, kFrameSep), *name);
    }
    if (Is(n, "Exit")) {
      const std::string inner = n.num_inputs() > 0 ? InputFrame(n.input(0)) : "";
      const size_t p = inner.rfind(kFrameSep);
      return inner == kMalformed || p == std::string::npos ? kMalformed : inner.substr(0, p);
    }
    // The deepest frame among the inputs (loop constants inherit theirs through ^control
    // edges from loop Identities); back edges from NextIteration are not visited yet.
    // (A malformed frame wins; the string is assigned once, from `f` itself: assigning the
    // literal here set off GCC 12's -Wstringop-overflow false positive under -fPIC.)
    std::string deepest;
    bool malformed = false;
    auto take = [&](const std::string& f) {
      if (malformed) return;
      if (f == kMalformed) {
        malformed = true;
        deepest = f;
      } else if (f.size() > deepest.size()) {
        deepest = f;
      }
    };
    for (const tf::Output& in : n.inputs()) take(InputFrame(in));
    for (const tf::Node* c : n.control_inputs()) {
      if (!fed_.contains({c, 0})) take(InputFrame(tf::Output{const_cast<tf::Node*>(c), 0}));
    }
    return deepest;
  }
  std::string InputFrame(const tf::Output& in) const {
    if (fed_.contains({in.node, in.index}) || !needed_.contains(in.node)) return "";
    return frame_[in.node->id()];
  }

  Sources OutputSources(const tf::Output& in) const {
    if (fed_.contains({in.node, in.index}) || !needed_.contains(in.node)) return {};
    Sources s = sources_[in.node->id()];
    if (Is(*in.node, "Switch")) Unite({{in.node->id(), in.index}}, &s);
    return s;
  }

  Sources Compute(const tf::Node& n) const {
    Sources s;
    if (Is(n, "Exit") && frame_[n.id()].empty()) {
      // A root-level loop whose Enters are all live ends with a live Exit.
      auto it = enters_.find(InputFrame(n.input(0)));
      if (it != enters_.end()) s = it->second;
    } else if (Is(n, "Merge") && frame_[n.id()].empty() && LiveMerge(n, &s)) {
      // `s` holds what the Merge's liveness depends on.
    } else {
      for (const tf::Output& in : n.inputs()) Unite(OutputSources(in), &s);
    }
    // A Merge fires on its first live data input whatever its control inputs carry (as in
    // TF's executor), so only other nodes inherit deadness through control edges.
    if (Is(n, "Merge")) return s;
    for (const tf::Node* c : n.control_inputs()) {
      if (!fed_.contains({c, 0}) && needed_.contains(c)) Unite(sources_[c->id()], &s);
    }
    return s;
  }

  // A tf.cond Merge: one input lives exactly when pred P is false (its only possibly-dead
  // sources beyond `M` are port-0 Switches on P), another exactly when P is true. Then the
  // Merge is live whenever all of M is: M holds P's own sources and the Switches' data
  // inputs' sources, which both inputs already include.
  bool LiveMerge(const tf::Node& merge, Sources* out) const {
    std::vector<Sources> in;
    for (const tf::Output& o : merge.inputs()) in.push_back(OutputSources(o));
    for (const Sources& s : in) {
      if (s.empty()) {
        out->clear();
        return true;
      }
    }
    for (size_t i = 0; i < in.size(); ++i) {
      for (size_t j = 0; j < in.size(); ++j) {
        if (i == j) continue;
        for (const Source& cand : in[i]) {
          if (cand.second != 0) continue;
          const auto pred = PredOf(cand.first);
          Sources m;
          bool removed_i = false, removed_j = false;
          for (const Source& x : in[i]) {
            const bool on_p = x.second == 0 && PredOf(x.first) == pred;
            removed_i |= on_p;
            if (!on_p) m.push_back(x);
          }
          for (const Source& x : in[j]) {
            const bool on_p = x.second == 1 && PredOf(x.first) == pred;
            removed_j |= on_p;
            if (!on_p) m.push_back(x);
          }
          if (!removed_i || !removed_j) continue;
          std::sort(m.begin(), m.end());
          m.erase(std::unique(m.begin(), m.end()), m.end());
          *out = std::move(m);
          return true;
        }
      }
    }
    return false;
  }
  std::pair<const tf::Node*, int> PredOf(int switch_id) const {
    const tf::Node* sw = graph_.node(switch_id);
    return sw->num_inputs() > 1 ? CanonicalTensor(sw->input(1))
                                : std::pair<const tf::Node*, int>{sw, -1};
  }

  const tf::Graph& graph_;
  const absl::flat_hash_set<const tf::Node*>& needed_;
  const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fed_;
  std::vector<std::string> frame_;
  std::vector<Sources> sources_;
  absl::flat_hash_map<std::string, Sources> enters_;  // per frame: its Enters' sources
};

}  // namespace

absl::flat_hash_map<int, std::string> FrameClusterExclusions(
    const tf::Graph& graph, const absl::flat_hash_set<const tf::Node*>& needed,
    const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fed) {
  absl::flat_hash_map<int, std::string> excluded;
  DeadnessAnalysis analysis(graph, needed, fed);
  const bool settled = analysis.Run();
  for (const tf::Node* n : needed) {
    if (IsTf1ControlFlowOp(n->op())) {
      excluded[n->id()] = "TF1 control flow (Switch/Merge, loop frames) runs in the runtime";
    } else if (!settled) {
      excluded[n->id()] =
          "the TF1 deadness analysis did not settle; the frame part runs node by "
          "node";
    } else if (!analysis.frame(*n).empty()) {
      excluded[n->id()] = "inside a TF1 loop frame, which runs per iteration in the runtime";
    } else if (!analysis.sources(*n).empty()) {
      const Source& s = analysis.sources(*n).front();
      excluded[n->id()] = absl::StrCat("may be dead (depends on output ", s.second,
                                       " of TF1 "
                                       "Switch ",
                                       graph.node(s.first)->name(), ")");
    }
  }
  return excluded;
}

}  // namespace tfjit::cluster
