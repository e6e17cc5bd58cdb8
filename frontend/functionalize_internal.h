// What frontend/functionalize*.cc share: tensor references, TF1 op kinds and the frame
// analysis (which loop frame each node of a GraphDef is in). Internal to the frontend.
#ifndef TFJIT_FRONTEND_FUNCTIONALIZE_INTERNAL_H_
#define TFJIT_FRONTEND_FUNCTIONALIZE_INTERNAL_H_

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "frontend/function.h"
#include "frontend/functionalize.h"
#include "frontend/proto/graph.pb.h"

namespace tfjit::tf::functionalize_internal {

struct Ref {
  std::string node;
  int port = 0;
  bool control = false;
};

inline Ref ParseRef(const std::string& s) {
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

inline bool Is(const tensorflow::NodeDef& n, const char* op) {
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
    order_.clear();
    while (!ready.empty()) {
      const int i = ready.front();
      ready.pop_front();
      order_.push_back(i);
      if (!Assign(def, i, why)) return false;
      for (int c : consumers[static_cast<size_t>(i)]) {
        if (--pending[static_cast<size_t>(c)] == 0) ready.push_back(c);
      }
    }
    if (static_cast<int>(order_.size()) != n) {
      *why = "the graph has a cycle other than loops' NextIteration -> Merge edges";
      return false;
    }
    return true;
  }

  int frame_of(int node) const { return frame_of_[static_cast<size_t>(node)]; }
  // The nodes in a topological order that leaves out NextIteration -> Merge back edges.
  const std::vector<int>& order() const { return order_; }
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
        const int depth = frames_[static_cast<size_t>(parent)].depth + 1;
        frames_.push_back(Frame{frame_name, parent, depth});
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
  std::vector<int> order_;
  std::map<std::pair<int, std::string>, int> child_;
};

inline tensorflow::DataType TypeAttr(const tensorflow::NodeDef& n) {
  auto it = n.attr().find("T");
  return it == n.attr().end() ? tensorflow::DT_INVALID : it->second.type();
}

inline std::string UniqueFunctionName(const tensorflow::FunctionDefLibrary& library,
                                      const std::string& base) {
  std::string name = base;
  for (int k = 1; FindFunction(library, name) != nullptr; ++k) name = absl::StrCat(base, "_", k);
  return name;
}

// TF1 TensorArrays of `def` rewritten as TensorList ops (functionalize_tensor_array.cc); how
// many.
int RewriteTensorArrays(tensorflow::GraphDef* def);

// One TF1 conditional of `def` turned into an If, if one can be (functionalize_cond.cc).
// Those that cannot are added to `given_up` (by Merge name) and `result->left`.
absl::StatusOr<bool> FunctionalizeOneCond(tensorflow::GraphDef* def, const FrameAnalysis& frames,
                                          const FunctionalizeOptions& options,
                                          std::set<std::string>* given_up,
                                          FunctionalizeResult* result);

}  // namespace tfjit::tf::functionalize_internal

#endif  // TFJIT_FRONTEND_FUNCTIONALIZE_INTERNAL_H_
