// TF1 control flow in the runtime: Switch/Merge deadness and Enter/Exit/NextIteration frames,
// run by tagged-token dataflow. A token carries a tag naming its frame instance and
// iteration ("" is the root frame); a node instance (node, tag) fires once its inputs for
// that tag arrived. Semantics follow TF's executor: an untaken Switch output is dead, dead
// inputs make a node dead without running it, a Merge forwards its first live input, a dead
// NextIteration ends its loop, constant Enters reach every iteration, and an Exit's dead
// tokens count only when its loop never produced a live one. Runs sequentially: TF1 graphs
// are legacy models, and a single worklist keeps iteration order deterministic.
#include <algorithm>
#include <deque>
#include <iterator>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compiler/cluster/deadness.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "runtime/executor.h"

namespace tfjit::runtime {
namespace {

using cluster::IsTf1ControlFlowOp;

constexpr char kFrameSep = '\x1e';  // between frame instances in a tag
constexpr char kIterSep = '\x1f';   // between a frame name and its iteration

bool Is(const tf::Node& n, const char* op) {
  return n.op() == op || n.op() == absl::StrCat("Ref", op);
}

// The frame instance of an iteration tag ("...<sep>frame") and its iteration.
std::string FrameOf(const std::string& tag) { return tag.substr(0, tag.rfind(kIterSep)); }
int64_t IterationOf(const std::string& tag) {
  const size_t p = tag.rfind(kIterSep);
  int64_t k = 0;
  if (p != std::string::npos) (void)absl::SimpleAtoi(tag.substr(p + 1), &k);
  return k;
}
std::string IterationTag(const std::string& frame, int64_t k) {
  return absl::StrCat(frame, std::string(1, kIterSep), k);
}

class FrameRun {
 public:
  using ClusterFn =
      std::function<absl::Status(int, const std::vector<Tensor>&, std::vector<Tensor>*)>;
  // Clusters from `first_cluster` on in the plan's clustering are root-frame units.
  FrameRun(
      const Plan& plan, const absl::flat_hash_set<const tf::Node*>& needed, const ExecContext& ctx,
      std::function<absl::Status(const tf::Node&, const std::vector<Tensor>&, std::vector<Tensor>*)>
          run_kernel,
      int first_cluster, ClusterFn run_cluster)
      : plan_(plan),
        needed_(needed),
        ctx_(ctx),
        run_kernel_(std::move(run_kernel)),
        first_cluster_(first_cluster),
        run_cluster_(std::move(run_cluster)) {
    InitClusters();
  }

  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<tf::Output>& feeds,
                                          const std::vector<Tensor>& feed_values,
                                          const std::vector<tf::Output>& fetches,
                                          const std::vector<const tf::Node*>& roots);

 private:
  struct Pending {
    std::vector<Tensor> inputs;
    int data = 0, control = 0, live = 0;
    bool dead = false;
  };
  struct Ready {
    const tf::Node* node;
    std::string tag;
    std::vector<Tensor> inputs;
    bool dead;
    int merge_index;
    int cluster = -1;  // set for a cluster unit (then `node` is null)
  };
  // A compiled cluster of root-frame nodes: fires once, when every external data and
  // control edge into it has delivered (dead if any token was dead).
  struct ClusterState {
    std::vector<Tensor> inputs;  // per spec input
    int data = 0, control = 0;
    int expected_data = 0, expected_control = 0;
    bool dead = false;
  };

  absl::Status Fire(const Ready& r);
  void InitClusters();
  // The frame cluster `node` belongs to, or -1.
  int ClusterOf(const tf::Node& node) const;
  void ArriveCluster(int c, const tf::Node& consumer, int slot, const std::string& tag,
                     const Tensor* v, bool dead);
  absl::Status FireCluster(const Ready& r);
  // Sends output `k` of `producer` (which ran at `tag`) to its consumers.
  absl::Status Deliver(const tf::Node& producer, int k, const std::string& tag, const Tensor& v,
                       bool dead);
  void Emit(const tf::Node& producer, int k, const std::string& dest, const Tensor& v, bool dead);
  void EmitControl(const tf::Node& producer, const std::string& dest, bool dead);
  void Arrive(const tf::Node& consumer, const std::string& tag, int slot, const Tensor& v,
              bool dead);
  void ArriveControl(const tf::Node& consumer, const std::string& tag, bool dead);
  void MaybeReady(const tf::Node& consumer, const std::string& tag, Pending& p);
  absl::StatusOr<std::string> DestTag(const tf::Node& producer, const std::string& tag) const;
  void StartIteration(const std::string& frame, int64_t k);
  int ExpectedMergeInputs(const tf::Node& merge, const std::string& tag) const;

  const Plan& plan_;
  const absl::flat_hash_set<const tf::Node*>& needed_;
  const ExecContext& ctx_;
  std::function<absl::Status(const tf::Node&, const std::vector<Tensor>&, std::vector<Tensor>*)>
      run_kernel_;
  const int first_cluster_;
  ClusterFn run_cluster_;
  std::vector<ClusterState> clusters_;  // by cluster index - first_cluster_
  // Per cluster: (consumer node id, input slot) of each external data edge -> spec input.
  std::vector<absl::flat_hash_map<std::pair<int, int>, int>> cluster_slots_;
  absl::Status error_;  // first inconsistency seen while delivering tokens
  std::deque<Ready> ready_;
  std::map<std::pair<int, std::string>, Pending> pending_;
  absl::flat_hash_set<std::pair<int, std::string>> merge_fired_;
  // Per frame instance: the constant Enters' values, and the last iteration started.
  absl::flat_hash_map<std::string, std::vector<std::tuple<const tf::Node*, Tensor, bool>>>
      constants_;
  absl::flat_hash_map<std::string, int64_t> last_iteration_;
  // Exits seen dead, by (exit node id, parent tag) -> whether a live token left already.
  std::map<std::pair<int, std::string>, bool> exits_;
  absl::flat_hash_map<std::pair<const tf::Node*, int>, Tensor> root_values_;
  absl::flat_hash_set<std::pair<const tf::Node*, int>> dead_roots_;
  absl::flat_hash_set<std::pair<const tf::Node*, int>> fed_;
};

absl::StatusOr<std::string> FrameRun::DestTag(const tf::Node& producer,
                                              const std::string& tag) const {
  if (Is(producer, "Enter")) {
    TFJIT_ASSIGN_OR_RETURN(std::string frame, tf::GetStringAttr(producer, "frame_name"));
    return IterationTag(absl::StrCat(tag, std::string(1, kFrameSep), frame), 0);
  }
  if (Is(producer, "NextIteration")) {
    if (tag.empty()) {
      return InvalidArgument(
          "node %s runs outside any loop frame; a NextIteration must be "
          "inside an Enter/Exit frame",
          producer.DebugName());
    }
    return IterationTag(FrameOf(tag), IterationOf(tag) + 1);
  }
  if (Is(producer, "Exit")) {
    const size_t p = tag.rfind(kFrameSep);
    if (p == std::string::npos) {
      return InvalidArgument(
          "node %s leaves a frame it never entered; every Exit needs a "
          "matching Enter",
          producer.DebugName());
    }
    return tag.substr(0, p);
  }
  return tag;
}

void FrameRun::StartIteration(const std::string& frame, int64_t k) {
  auto [it, inserted] = last_iteration_.insert({frame, k});
  if (!inserted) {
    if (it->second >= k) return;
    it->second = k;
  }
  const std::string tag = IterationTag(frame, k);
  for (const auto& [enter, value, dead] : constants_[frame]) Emit(*enter, 0, tag, value, dead);
}

absl::Status FrameRun::Deliver(const tf::Node& producer, int k, const std::string& tag,
                               const Tensor& v, bool dead) {
  if (Is(producer, "NextIteration") && dead) return absl::OkStatus();  // the loop ends here
  TFJIT_ASSIGN_OR_RETURN(std::string dest, DestTag(producer, tag));
  if (Is(producer, "Exit")) {
    bool& live = exits_[{producer.id(), dest}];
    if (dead || live) return absl::OkStatus();  // dead exits wait for the loop to end
    live = true;
  }
  if (dest.empty() && !dead) root_values_[{&producer, k}] = v;  // fetchable
  if (dest.empty() && dead) dead_roots_.insert({&producer, k});
  if (Is(producer, "Enter")) {
    const std::string frame = FrameOf(dest);
    if (tf::GetBoolAttrOr(producer, "is_constant", false).value_or(false)) {
      constants_[frame].emplace_back(&producer, v, dead);
      auto it = last_iteration_.find(frame);
      if (it == last_iteration_.end()) {
        StartIteration(frame, 0);  // delivers the constant to iteration 0
      } else {
        for (int64_t i = 0; i <= it->second; ++i)
          Emit(producer, k, IterationTag(frame, i), v, dead);
      }
      return absl::OkStatus();
    }
    StartIteration(frame, 0);
  }
  if (Is(producer, "NextIteration")) StartIteration(FrameOf(dest), IterationOf(dest));
  Emit(producer, k, dest, v, dead);
  return absl::OkStatus();
}

void FrameRun::Emit(const tf::Node& producer, int k, const std::string& dest, const Tensor& v,
                    bool dead) {
  const int from = ClusterOf(producer);
  for (const auto& [consumer, slot] : producer.data_consumers()) {
    if (consumer->input(slot).index != k || !needed_.contains(consumer)) continue;
    const int to = ClusterOf(*consumer);
    if (to >= 0 && to == from) continue;  // inside the cluster
    if (to >= 0) {
      ArriveCluster(to, *consumer, slot, dest, &v, dead);
    } else {
      Arrive(*consumer, dest, slot, v, dead);
    }
  }
}

void FrameRun::EmitControl(const tf::Node& producer, const std::string& dest, bool dead) {
  const int from = ClusterOf(producer);
  for (const tf::Node* consumer : producer.control_consumers()) {
    if (!needed_.contains(consumer)) continue;
    const int to = ClusterOf(*consumer);
    if (to >= 0 && to == from) continue;
    if (to >= 0) {
      ArriveCluster(to, *consumer, -1, dest, nullptr, dead);
    } else {
      ArriveControl(*consumer, dest, dead);
    }
  }
}

void FrameRun::InitClusters() {
  const cluster::ClusteringResult& r = plan_.clustering();
  for (size_t c = static_cast<size_t>(first_cluster_); c < r.clusters.size(); ++c) {
    const tf2hlo::ClusterSpec& spec = r.clusters[c].spec;
    ClusterState st;
    st.inputs.resize(spec.inputs.size());
    absl::flat_hash_map<std::pair<const tf::Node*, int>, int> input_index;
    for (size_t i = 0; i < spec.inputs.size(); ++i) {
      input_index[{spec.inputs[i].node, spec.inputs[i].index}] = static_cast<int>(i);
    }
    absl::flat_hash_map<std::pair<int, int>, int> slots;
    for (const tf::Node* n : spec.nodes) {
      for (int i = 0; i < n->num_inputs(); ++i) {
        const tf::Output& in = n->input(i);
        auto it = input_index.find({in.node, in.index});
        if (it == input_index.end()) continue;  // produced inside the cluster
        slots[{n->id(), i}] = it->second;
        ++st.expected_data;
      }
      for (const tf::Node* ctl : n->control_inputs()) {
        st.expected_control += r.cluster_of[ctl->id()] == static_cast<int>(c) ? 0 : 1;
      }
    }
    clusters_.push_back(std::move(st));
    cluster_slots_.push_back(std::move(slots));
  }
}

int FrameRun::ClusterOf(const tf::Node& node) const {
  const int c =
      plan_.clustering().cluster_of.empty() ? -1 : plan_.clustering().cluster_of[node.id()];
  return c >= first_cluster_ ? c : -1;
}

void FrameRun::ArriveCluster(int c, const tf::Node& consumer, int slot, const std::string& tag,
                             const Tensor* v, bool dead) {
  if (!tag.empty()) {  // the frame analysis put a loop-frame node in a cluster: our bug
    if (error_.ok()) {
      error_ = Internal("node %s is compiled in %s but received a token inside a TF1 loop frame",
                        consumer.DebugName(), plan_.clustering().clusters[c].spec.name);
    }
    return;
  }
  ClusterState& st = clusters_[static_cast<size_t>(c - first_cluster_)];
  if (v != nullptr) {
    st.inputs[static_cast<size_t>(cluster_slots_[c - first_cluster_].at({consumer.id(), slot}))] =
        *v;
    ++st.data;
  } else {
    ++st.control;
  }
  st.dead |= dead;
  if (st.data == st.expected_data && st.control == st.expected_control) {
    ready_.push_back({nullptr, "", std::move(st.inputs), st.dead, -1, c});
  }
}

absl::Status FrameRun::FireCluster(const Ready& r) {
  const tf2hlo::ClusterSpec& spec = plan_.clustering().clusters[r.cluster].spec;
  std::vector<Tensor> outs;
  if (!r.dead) TFJIT_RETURN_IF_ERROR(run_cluster_(r.cluster, r.inputs, &outs));
  for (size_t k = 0; k < spec.outputs.size(); ++k) {
    const tf::Output& o = spec.outputs[k];
    TFJIT_RETURN_IF_ERROR(Deliver(*o.node, o.index, "", r.dead ? Tensor() : outs[k], r.dead));
  }
  for (const tf::Node* n : spec.nodes) EmitControl(*n, "", r.dead);
  return absl::OkStatus();
}

int FrameRun::ExpectedMergeInputs(const tf::Node& merge, const std::string& tag) const {
  // A loop's Merge (one with a NextIteration input) gets its forward inputs in iteration 0
  // and its back edges later; a cond's Merge gets all its inputs in every iteration.
  int back = 0;
  for (const tf::Output& in : merge.inputs()) back += Is(*in.node, "NextIteration") ? 1 : 0;
  if (back == 0) return merge.num_inputs();
  const bool later = !tag.empty() && IterationOf(tag) > 0;
  return later ? back : merge.num_inputs() - back;
}

void FrameRun::Arrive(const tf::Node& consumer, const std::string& tag, int slot, const Tensor& v,
                      bool dead) {
  const std::pair<int, std::string> key{consumer.id(), tag};
  if (Is(consumer, "Merge") && merge_fired_.contains(key)) return;
  Pending& p = pending_[key];
  if (p.inputs.empty()) p.inputs.resize(static_cast<size_t>(consumer.num_inputs()));
  p.inputs[static_cast<size_t>(slot)] = v;
  ++p.data;
  if (dead) {
    p.dead = true;
  } else if (Is(consumer, "Merge")) {
    merge_fired_.insert(key);
    ready_.push_back({&consumer, tag, {v}, false, slot});
    pending_.erase(key);
    return;
  }
  MaybeReady(consumer, tag, p);
}

void FrameRun::ArriveControl(const tf::Node& consumer, const std::string& tag, bool dead) {
  Pending& p = pending_[{consumer.id(), tag}];
  if (p.inputs.empty()) p.inputs.resize(static_cast<size_t>(consumer.num_inputs()));
  ++p.control;
  p.dead |= dead;
  MaybeReady(consumer, tag, p);
}

void FrameRun::MaybeReady(const tf::Node& consumer, const std::string& tag, Pending& p) {
  const std::pair<int, std::string> key{consumer.id(), tag};
  if (Is(consumer, "Merge")) {
    if (p.data < ExpectedMergeInputs(consumer, tag)) return;
    merge_fired_.insert(key);  // every input arrived dead
    ready_.push_back({&consumer, tag, {}, true, -1});
    pending_.erase(key);
    return;
  }
  if (p.data < consumer.num_inputs() ||
      p.control < static_cast<int>(consumer.control_inputs().size())) {
    return;
  }
  ready_.push_back({&consumer, tag, std::move(p.inputs), p.dead, -1});
  pending_.erase(key);
}

absl::Status FrameRun::Fire(const Ready& r) {
  if (r.cluster >= 0) return FireCluster(r);
  const tf::Node& node = *r.node;
  std::vector<Tensor> outs(static_cast<size_t>(node.num_outputs()));
  std::vector<bool> dead(outs.size(), r.dead);
  if (!r.dead) {
    if (Is(node, "Switch")) {
      const Tensor& pred = r.inputs[1];
      if (pred.dtype() != DType::kBool || pred.num_elements() != 1) {
        return AttachNode(InvalidArgument("node %s: pred must be a bool scalar, got %s",
                                          node.DebugName(), pred.ShapeString()),
                          node.name(), node.op());
      }
      const bool taken = pred.data<bool>()[0];
      outs = {r.inputs[0], r.inputs[0]};
      dead = {taken, !taken};  // output_false, output_true
    } else if (Is(node, "Merge")) {
      outs = {r.inputs[0], Tensor::FromVector<int32_t>(DType::kInt32, {}, {r.merge_index})};
    } else if (Is(node, "Enter") || Is(node, "Exit") || Is(node, "NextIteration") ||
               node.op() == "LoopCond") {
      outs = {r.inputs[0]};
    } else {
      TFJIT_RETURN_IF_ERROR(run_kernel_(node, r.inputs, &outs));
    }
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    if (fed_.contains({&node, static_cast<int>(k)})) continue;  // the feed wins
    TFJIT_RETURN_IF_ERROR(Deliver(node, static_cast<int>(k), r.tag, outs[k], dead[k]));
  }
  TFJIT_ASSIGN_OR_RETURN(std::string dest, DestTag(node, r.tag));
  if (!(Is(node, "NextIteration") && r.dead) && !(Is(node, "Exit") && r.dead)) {
    EmitControl(node, dest, r.dead);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> FrameRun::Run(const std::vector<tf::Output>& feeds,
                                                  const std::vector<Tensor>& feed_values,
                                                  const std::vector<tf::Output>& fetches,
                                                  const std::vector<const tf::Node*>& roots) {
  for (size_t i = 0; i < feeds.size(); ++i) {
    fed_.insert({feeds[i].node, feeds[i].index});
    root_values_[{feeds[i].node, feeds[i].index}] = feed_values[i];
    Emit(*feeds[i].node, feeds[i].index, "", feed_values[i], false);
    // A fed node that does not run still releases its control consumers (see NeededNodes).
    if (feeds[i].index == 0 && !needed_.contains(feeds[i].node)) {
      EmitControl(*feeds[i].node, "", false);
    }
  }
  for (const tf::Node* root : roots) {
    if (ClusterOf(*root) < 0) ready_.push_back({root, "", {}, false, -1});
  }
  for (size_t c = 0; c < clusters_.size(); ++c) {  // clusters without external inputs
    if (clusters_[c].expected_data == 0 && clusters_[c].expected_control == 0) {
      ready_.push_back({nullptr, "", {}, false, -1, first_cluster_ + static_cast<int>(c)});
    }
  }
  while (true) {
    while (!ready_.empty()) {
      Ready r = std::move(ready_.front());
      ready_.pop_front();
      // Every firing, kernels or not: a loop of pure control-flow ops (Merge, Switch,
      // NextIteration) must stop at the deadline too.
      if (ctx_.control != nullptr && ctx_.control->ShouldStop()) {
        if (r.node != nullptr) return CheckRunControl(ctx_, *r.node);
        return ctx_.control->Check("a cluster of the TF1 graph");
      }
      TFJIT_RETURN_IF_ERROR(Fire(r));
      TFJIT_RETURN_IF_ERROR(error_);
    }
    // Loops that never produced a live exit (e.g. inside an untaken branch) end dead.
    bool flushed = false;
    for (auto& [key, live] : exits_) {
      if (live) continue;
      live = true;
      flushed = true;
      if (key.second.empty()) dead_roots_.insert({plan_.graph().node(key.first), 0});
      Emit(*plan_.graph().node(key.first), 0, key.second, Tensor(), true);
      EmitControl(*plan_.graph().node(key.first), key.second, true);
    }
    if (!flushed) break;
  }
  std::vector<Tensor> results;
  for (const tf::Output& f : fetches) {
    auto it = root_values_.find({f.node, f.index});
    if (it == root_values_.end()) {
      return AttachNode(
          InvalidArgument("fetched tensor %s:%d has no value: %s", f.node->name(), f.index,
                          dead_roots_.contains({f.node, f.index})
                              ? "it is dead (it depends on an untaken Switch branch)"
                              : "its TF1 control flow never produced it (a Merge or Exit is "
                                "missing an input)"),
          f.node->name(), f.node->op());
    }
    TFJIT_ASSIGN_OR_RETURN(Tensor v, Deref(it->second));
    results.push_back(std::move(v));
  }
  return results;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> Plan::RunFrames(const std::vector<Tensor>& feed_values,
                                                    const ExecContext& ctx, RunStats* stats) const {
  std::vector<tf::Output> feeds = feeds_;
  std::vector<Tensor> values = feed_values;
  if (prefix_ != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(std::vector<Tensor> handed, prefix_->Run(feed_values, ctx, stats));
    feeds.insert(feeds.end(), boundary_.begin(), boundary_.end());
    values.insert(values.end(), handed.begin(), handed.end());
  }
  std::vector<const tf::Node*> roots;
  for (const tf::Node* n : graph_->topological_order()) {
    if (needed_.contains(n) && n->control_inputs().empty() && n->num_inputs() == 0) {
      roots.push_back(n);
    }
  }
  RunStats cluster_stats;
  FrameRun run(
      *this, needed_, ctx,
      [&](const tf::Node& node, const std::vector<Tensor>& in, std::vector<Tensor>* out) {
        return RunKernel(node, in, ctx, out, nullptr);
      },
      frame_cluster_begin_,
      [&](int c, const std::vector<Tensor>& in, std::vector<Tensor>* out) {
        return RunFrameCluster(c, in, ctx, out, &cluster_stats);
      });
  absl::StatusOr<std::vector<Tensor>> results = run.Run(feeds, values, fetches_, roots);
  if (stats != nullptr) {
    cluster_stats.nodes_total = 0;  // the caller counts the plan's nodes
    AddNestedStats(cluster_stats, stats);
  }
  return results;
}

}  // namespace tfjit::runtime
