// Plan building (pruning, clustering, units and value slots) and dataflow execution.
#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/cluster/deadness.h"
#include "compiler/hlo/printer.h"
#include "compiler/tf2hlo/lowering.h"
#include "core/dtype.h"
#include "core/logging.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "runtime/control_flow.h"
#include "runtime/device.h"
#include "runtime/function_runtime.h"
#include "runtime/kernels/random_kernels.h"

namespace tfjit::runtime {
namespace {

// The first `rows` rows of `t` (a cluster output padded to its static size). Rows are
// contiguous from the buffer's start, so when at least a quarter of them are real the result
// is a view of the padded buffer (no copy; at most 4x its bytes held); fewer get a buffer of
// their own, so a large padded buffer is not kept alive for a few rows.
absl::StatusOr<Tensor> LeadingRows(const Tensor& t, int64_t rows) {
  if (rows < 0 || rows > t.dim(0)) {
    return Internal("a padded cluster output %s reports %d real rows", t.ShapeString(), rows);
  }
  std::vector<int64_t> dims = t.dims();
  dims[0] = rows;
  if (4 * rows >= t.dim(0)) return t.BitcastView(t.dtype(), std::move(dims));
  Tensor out = Tensor::Uninitialized(t.dtype(), std::move(dims));
  if (out.byte_size() > 0) std::memcpy(out.raw_data(), t.raw_data(), out.byte_size());
  return out;
}

using OutputKey = std::pair<const tf::Node*, int>;

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string ShapeForMessage(const tf::Node& placeholder) {
  absl::StatusOr<tf::PartialShape> shape = tf::GetShapeAttr(placeholder, "shape");
  if (!shape.ok() || shape->unknown_rank) return "<unknown>";
  std::vector<std::string> dims;
  for (int64_t d : shape->dims) dims.push_back(d < 0 ? "?" : absl::StrCat(d));
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// Nodes the fetches need, stopping at fed tensors.
absl::StatusOr<absl::flat_hash_set<const tf::Node*>> NeededNodes(
    const std::vector<tf::Output>& fetches, const std::vector<const tf::Node*>& targets,
    const absl::flat_hash_set<OutputKey>& fed) {
  absl::flat_hash_set<const tf::Node*> needed;
  std::vector<const tf::Node*> work(targets.begin(), targets.end());
  for (const tf::Output& f : fetches) {
    if (!fed.contains({f.node, f.index})) work.push_back(f.node);
  }
  while (!work.empty()) {
    const tf::Node* node = work.back();
    work.pop_back();
    if (!needed.insert(node).second) continue;
    if (node->op() == "Placeholder") {
      absl::StatusOr<DType> dtype = tf::GetTypeAttr(*node, "dtype");
      return InvalidArgument(
          "You must feed a value for placeholder tensor '%s' with dtype %s "
          "and shape %s (feed it with --input %s=FILE.npy)",
          node->name(), dtype.ok() ? DTypeName(*dtype) : "?", ShapeForMessage(*node), node->name());
    }
    for (const tf::Output& in : node->inputs()) {
      if (!fed.contains({in.node, in.index})) work.push_back(in.node);
    }
    // As in TF's FeedInputs, feeding output 0 of a node also stands in for its control
    // edges: a Const with ^input (common in TF.js graphs) does not need the placeholder run.
    for (const tf::Node* c : node->control_inputs()) {
      if (!fed.contains({c, 0})) work.push_back(c);
    }
  }
  return needed;
}

// A signature of a cluster that is stable for the life of the graph (node names are unique).
std::string ClusterSignature(const tf2hlo::ClusterSpec& spec) {
  auto out_name = [](std::string* s, const tf::Output& o) {
    absl::StrAppend(s, o.node->name(), ":", o.index);
  };
  return absl::StrCat(
      absl::StrJoin(spec.nodes, ",",
                    [](std::string* s, const tf::Node* n) { absl::StrAppend(s, n->name()); }),
      "|in=", absl::StrJoin(spec.inputs, ",", out_name),
      "|out=", absl::StrJoin(spec.outputs, ",", out_name));
}

// Each node's device: the one it asks for when that device exists, else the default (TF's
// soft placement: a graph written for a GPU still runs where there is none).
std::vector<std::string> PlaceNodes(const tf::Graph& graph, const Placement& placement) {
  std::vector<std::string> device_of(static_cast<size_t>(graph.num_nodes()),
                                     placement.default_device);
  DeviceSet devices(placement.logical_cpus);
  for (const auto& node : graph.nodes()) {
    if (!node->requested_device().empty()) {
      absl::StatusOr<DeviceName> d = ParseDeviceName(node->requested_device());
      if (d.ok() && devices.Check(*d).ok()) {
        device_of[node->id()] = d->FullName();
      } else {
        Log(LogLevel::kInfo, "node %s asks for device '%s', which does not exist; placed on %s",
            node->DebugName(), node->requested_device(), placement.default_device);
      }
    }
    // TF has no GPU kernels for int32 variables: they stay in host memory, on CPU:0 (so a GPU
    // cluster using one meets known issue A; the workaround is int64).
    if ((node->op() == "VarHandleOp" || node->op() == "VariableV2") &&
        absl::StrContains(device_of[node->id()], "device:GPU:")) {
      absl::StatusOr<DType> dtype = tf::GetTypeAttr(*node, "dtype");
      if (dtype.ok() && *dtype == DType::kInt32) {
        device_of[node->id()] = DeviceName{"CPU", 0}.FullName();
      }
    }
  }
  return device_of;
}

// The backend that compiles clusters placed on `device` (a full TF name).
absl::StatusOr<const backends::Backend*> BackendFor(const ExecContext& ctx,
                                                    const std::string& device) {
  absl::StatusOr<DeviceName> name = ParseDeviceName(device);
  if (!name.ok() || name->type != "GPU") return ctx.backend;
  if (name->index < static_cast<int>(ctx.gpu_backends.size()) &&
      ctx.gpu_backends[static_cast<size_t>(name->index)] != nullptr) {
    return ctx.gpu_backends[static_cast<size_t>(name->index)];
  }
  return FailedPrecondition(
      "a cluster is placed on %s, and the session has no GPU backend for "
      "it",
      device);
}

// SessionOptions::show_compile_progress: a compile still running after a second says so on
// stderr ("tfjit: compiling cluster_0 (177 nodes)..."), and when it ends ("done in 1.4 s");
// shorter ones print nothing. TFJIT_PROGRESS_AFTER_MS changes the second (tests use 0).
class CompileProgress {
 public:
  CompileProgress(bool enabled, std::string name, int nodes) {
    if (!enabled) return;
    start_ = std::chrono::steady_clock::now();
    int after_ms = 1000;
    if (const char* env = std::getenv("TFJIT_PROGRESS_AFTER_MS"); env != nullptr) {
      after_ms = std::max(0, std::atoi(env));
    }
    if (after_ms == 0) {  // announced at once
      Announce(name, nodes);
      return;
    }
    watcher_ = std::thread([this, name = std::move(name), nodes, after_ms] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::milliseconds(after_ms), [this] { return done_; })) {
        Announce(name, nodes);
      }
    });
  }
  ~CompileProgress() {
    if (watcher_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        done_ = true;
      }
      cv_.notify_all();
      watcher_.join();
    }
    if (printed_) std::fprintf(stderr, "tfjit: ... done in %.1f s\n", MsSince(start_) / 1000);
  }

 private:
  void Announce(const std::string& name, int nodes) {
    std::fprintf(stderr, "tfjit: compiling %s (%d nodes)...\n", name.c_str(), nodes);
    printed_ = true;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool printed_ = false;  // written by the watcher before join, read after
  std::chrono::steady_clock::time_point start_;
  std::thread watcher_;
};

}  // namespace

absl::Status CheckRunControl(const ExecContext& ctx, const tf::Node& node) {
  if (ctx.control == nullptr || !ctx.control->ShouldStop()) return absl::OkStatus();
  return AttachNode(ctx.control->Check(absl::StrCat("node ", node.DebugName())), node.name(),
                    node.op());
}

// Adds what a nested run (a function body) did to the outer run's statistics.
void AddNestedStats(const RunStats& nested, RunStats* into) {
  into->clusters += nested.clusters;
  into->nodes_compiled += nested.nodes_compiled;
  into->nodes_total += nested.nodes_total;
  into->compile_ms += nested.compile_ms;
  into->cache_hits += nested.cache_hits;
  into->disk_cache_hits += nested.disk_cache_hits;
  into->compiles.insert(into->compiles.end(), nested.compiles.begin(), nested.compiles.end());
  into->flops += nested.flops;
  into->fallbacks += nested.fallbacks;
  into->profile.insert(into->profile.end(), nested.profile.begin(), nested.profile.end());
}

struct Plan::RunState {
  std::vector<Tensor> slots;
  std::unique_ptr<std::atomic<int>[]> pending;
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  int units_done = 0;  // guarded by mu; a plan whose units cannot all run is our bug
  absl::Status status;
  RunStats stats;
};

// TF1 control flow runs in the frame executor, node by node. The nodes that depend on no
// control flow at all (through data or control edges) can run first as an ordinary plan,
// whose clusters compile: typically a detector's whole backbone before its NMS loop. The
// frame part then takes their outputs as feeds. Leaves `plan->prefix_` null when there is no
// such part worth it.
absl::Status Plan::BuildStaticPrefix(const tf::Graph& graph, const std::vector<tf::Output>& feeds,
                                     const std::vector<tf::Output>& fetches, cluster::JitMode mode,
                                     const Placement& placement,
                                     const std::vector<const tf::Node*>& targets,
                                     const absl::flat_hash_set<OutputKey>& fed, Plan* plan) {
  const auto& needed = plan->needed_;
  std::vector<bool> after_cf(graph.num_nodes(), false);
  absl::flat_hash_set<const tf::Node*> prefix_nodes;
  for (const tf::Node* n : graph.topological_order()) {
    if (!needed.contains(n)) continue;
    bool tainted = cluster::UsesTf1ControlFlow({n});
    for (const tf::Output& in : n->inputs()) {
      if (!fed.contains({in.node, in.index})) tainted = tainted || after_cf[in.node->id()];
    }
    for (const tf::Node* c : n->control_inputs()) {
      if (!fed.contains({c, 0})) tainted = tainted || after_cf[c->id()];
    }
    after_cf[n->id()] = tainted;
    if (!tainted && n->op() != "Placeholder" && n->op() != "PlaceholderWithDefault") {
      prefix_nodes.insert(n);
    }
  }
  // Constants stay in the frame part too (recomputing them is free): handed over they would
  // reach the frame part's clusters as run-time parameters instead of compile-time values.
  std::function<bool(const tf::Node*, int)> recomputable = [&](const tf::Node* n, int depth) {
    if ((n->op() != "Const" && n->op() != "NoOp") || n->num_inputs() > 0 || depth > 4) {
      return false;
    }
    for (const tf::Node* c : n->control_inputs()) {
      if (!fed.contains({c, 0}) && !recomputable(c, depth + 1)) return false;
    }
    return true;
  };
  // What the frame part reads from the prefix: data inputs, control inputs (fed output 0
  // stands for them; a prefix node without outputs cannot be handed over) and fetches.
  absl::flat_hash_set<OutputKey> boundary_set;
  std::vector<tf::Output> boundary;
  auto add = [&](const tf::Output& o) {
    if (boundary_set.insert({o.node, o.index}).second) boundary.push_back(o);
  };
  bool computes = false;
  for (const tf::Node* n : graph.topological_order()) {
    if (!needed.contains(n)) continue;
    if (prefix_nodes.contains(n)) {
      computes = computes || (n->op() != "Const" && n->op() != "Identity");
      continue;
    }
    for (const tf::Output& in : n->inputs()) {
      if (prefix_nodes.contains(in.node) && !fed.contains({in.node, in.index}) &&
          !recomputable(in.node, 0)) {
        add(in);
      }
    }
    for (const tf::Node* c : n->control_inputs()) {
      if (!prefix_nodes.contains(c) || recomputable(c, 0)) continue;
      if (c->num_outputs() == 0) return absl::OkStatus();  // keep the whole plan in frames
      add(tf::Output{const_cast<tf::Node*>(c), 0});
    }
  }
  for (const tf::Output& f : fetches) {
    if (prefix_nodes.contains(f.node)) add(f);
  }
  std::vector<const tf::Node*> prefix_targets;
  for (const tf::Node* t : targets) {
    (prefix_nodes.contains(t) ? prefix_targets : plan->frame_targets_).push_back(t);
  }
  if (!computes || (boundary.empty() && prefix_targets.empty())) {
    plan->frame_targets_.clear();
    return absl::OkStatus();
  }
  TFJIT_ASSIGN_OR_RETURN(plan->prefix_,
                         Build(graph, feeds, boundary, mode, placement, prefix_targets));
  plan->boundary_ = boundary;
  absl::flat_hash_set<OutputKey> frame_fed = fed;
  for (const tf::Output& b : boundary) frame_fed.insert({b.node, b.index});
  TFJIT_ASSIGN_OR_RETURN(plan->needed_, NeededNodes(fetches, plan->frame_targets_, frame_fed));
  // Explain shows the prefix's clusters; BuildFrameClusters adds the frame part's.
  plan->clustering_ = plan->prefix_->clustering_;
  return absl::OkStatus();
}

void Plan::BuildClusterTables() {
  const size_t n = clustering_.clusters.size();
  const_inputs_.clear();
  cluster_keys_.clear();
  resource_updates_.clear();
  random_nodes_.clear();
  for (const cluster::Cluster& c : clustering_.clusters) {
    const_inputs_.push_back(tf2hlo::MustBeConstantInputs(c.spec));
    cluster_keys_.push_back(ClusterSignature(c.spec));
    resource_updates_.push_back(tf2hlo::ResourceUpdateInputs(c.spec));
    // Instantiates the bodies of the cluster's While/If nodes: once per plan, not per run.
    random_nodes_.push_back(tf2hlo::StatefulRandomNodes(c.spec));
  }
  autofix_logged_.reset(new std::atomic<bool>[n]());
}

absl::Status Plan::BuildFrameClusters(const tf::Graph& graph,
                                      const absl::flat_hash_set<OutputKey>& fed,
                                      cluster::JitMode mode, const Placement& placement,
                                      Plan* plan) {
  cluster::ClusteringOptions copts;
  copts.mode = mode;
  copts.subgraph = plan->needed_;
  copts.fed = fed;
  copts.fetched = plan->fetches_;
  copts.device = placement.default_device;
  copts.node_devices = plan->device_of_;
  copts.autofix = placement.autofix;
  copts.min_cluster_size = placement.min_cluster_size;
  copts.max_cluster_size = placement.max_cluster_size;
  copts.excluded = cluster::FrameClusterExclusions(graph, plan->needed_, fed);
  if (placement.learned != nullptr) placement.learned->AddTo(&graph, &copts.excluded);
  plan->learned_ = placement.learned;
  TFJIT_ASSIGN_OR_RETURN(cluster::ClusteringResult frame, cluster::FindClusters(graph, copts));
  // One clustering for the whole plan (explain, RunCluster's per-cluster tables): the
  // prefix's clusters first, renumbered frame clusters after them.
  cluster::ClusteringResult& all = plan->clustering_;
  if (all.cluster_of.empty()) all.cluster_of.assign(static_cast<size_t>(graph.num_nodes()), -1);
  plan->frame_cluster_begin_ = static_cast<int>(all.clusters.size());
  for (cluster::Cluster& c : frame.clusters) {
    const int index = static_cast<int>(all.clusters.size());
    c.spec.name = absl::StrCat("cluster_", index);
    for (const tf::Node* n : c.spec.nodes) all.cluster_of[n->id()] = index;
    all.clusters.push_back(std::move(c));
  }
  for (auto& [id, why] : frame.why_not) all.why_not[id] = std::move(why);
  plan->BuildClusterTables();
  return absl::OkStatus();
}

absl::Status Plan::RunFrameCluster(int index, const std::vector<Tensor>& inputs,
                                   const ExecContext& ctx, std::vector<Tensor>* outputs,
                                   RunStats* stats) const {
  RunState state;
  TFJIT_RETURN_IF_ERROR(RunCluster(index, inputs, ctx, outputs, state));
  AddNestedStats(state.stats, stats);
  return absl::OkStatus();
}

bool LearnedExclusions::Add(const tf::Graph* graph, const tf::Node& node, std::string why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (excluded_.size() >= 64) return false;
  if (!excluded_.insert({{graph, node.id()}, std::move(why)}).second) return false;
  ++generation_;
  return true;
}

void LearnedExclusions::AddTo(const tf::Graph* graph,
                              absl::flat_hash_map<int, std::string>* excluded) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, why] : excluded_) {
    if (key.first == graph) excluded->insert({key.second, why});
  }
}

int LearnedExclusions::generation() const { return generation_.load(); }

absl::StatusOr<std::unique_ptr<Plan>> Plan::Build(const tf::Graph& graph,
                                                  const std::vector<tf::Output>& feeds,
                                                  const std::vector<tf::Output>& fetches,
                                                  cluster::JitMode mode, const Placement& placement,
                                                  const std::vector<const tf::Node*>& targets) {
  auto plan = std::unique_ptr<Plan>(new Plan());
  plan->graph_ = &graph;
  plan->learned_ = placement.learned;
  plan->device_of_ = PlaceNodes(graph, placement);
  absl::flat_hash_set<OutputKey> fed;
  for (const tf::Output& f : feeds) fed.insert({f.node, f.index});
  TFJIT_ASSIGN_OR_RETURN(auto needed, NeededNodes(fetches, targets, fed));
  plan->num_nodes_ = static_cast<int>(needed.size());

  plan->needed_ = needed;
  plan->feeds_ = feeds;
  plan->fetches_ = fetches;
  plan->has_frames_ = cluster::UsesTf1ControlFlow(needed);
  if (plan->has_frames_ && mode == cluster::JitMode::kAll) {
    std::vector<std::string> ops;
    for (const tf::Node* n : graph.topological_order()) {
      if (needed.contains(n) && cluster::UsesTf1ControlFlow({n})) {
        ops.push_back(absl::StrCat(n->op(), " (TF1 control flow runs in the runtime){{node ",
                                   n->name(), "}}"));
      }
    }
    return InvalidArgument(
        "Detected unsupported operations when trying to compile graph %s on "
        "%s: %s",
        graph.source(), placement.default_device, absl::StrJoin(ops, "; "));
  }
  if (plan->has_frames_ && mode != cluster::JitMode::kNone) {
    TFJIT_RETURN_IF_ERROR(
        BuildStaticPrefix(graph, feeds, fetches, mode, placement, targets, fed, plan.get()));
    absl::flat_hash_set<OutputKey> frame_fed = fed;
    for (const tf::Output& b : plan->boundary_) frame_fed.insert({b.node, b.index});
    TFJIT_RETURN_IF_ERROR(BuildFrameClusters(graph, frame_fed, mode, placement, plan.get()));
    return plan;
  }
  cluster::ClusteringOptions copts;
  // Only --jit none gets here with TF1 control flow: it compiles nothing.
  copts.mode = plan->has_frames_ ? cluster::JitMode::kNone : mode;
  copts.subgraph = needed;
  copts.fed = fed;
  copts.fetched = fetches;
  copts.device = placement.default_device;
  copts.node_devices = plan->device_of_;
  copts.autofix = placement.autofix;
  copts.min_cluster_size = placement.min_cluster_size;
  copts.max_cluster_size = placement.max_cluster_size;
  if (placement.learned != nullptr) placement.learned->AddTo(&graph, &copts.excluded);
  TFJIT_ASSIGN_OR_RETURN(plan->clustering_, cluster::FindClusters(graph, copts));
  if (plan->has_frames_) {
    for (auto& [id, why] : plan->clustering_.why_not) {
      why =
          "the graph uses TF1 control flow (Switch/Merge, loop frames), which runs in the "
          "runtime";
    }
  }
  plan->BuildClusterTables();

  // Units in topological order of their first node.
  std::vector<int> unit_of(graph.num_nodes(), -1);
  std::vector<int> cluster_unit(plan->clustering_.clusters.size(), -1);
  for (const tf::Node* node : graph.topological_order()) {
    if (!needed.contains(node)) continue;
    const int c = plan->clustering_.cluster_of[node->id()];
    if (c >= 0 && cluster_unit[c] >= 0) {
      unit_of[node->id()] = cluster_unit[c];
      continue;
    }
    Unit unit;
    if (c >= 0) {
      unit.cluster = c;
      cluster_unit[c] = static_cast<int>(plan->units_.size());
    } else {
      unit.node = node;
    }
    unit_of[node->id()] = static_cast<int>(plan->units_.size());
    plan->units_.push_back(std::move(unit));
  }

  // Value slots: one per tensor read by a unit, fed, or fetched.
  absl::flat_hash_map<OutputKey, int> slot_of;
  auto slot = [&](const tf::Output& o) {
    auto [it, inserted] = slot_of.insert({{o.node, o.index}, plan->num_slots_});
    if (inserted) ++plan->num_slots_;
    return it->second;
  };
  for (const tf::Output& f : feeds) plan->feed_slots_.push_back(slot(f));
  for (const tf::Output& f : fetches) plan->fetch_slots_.push_back(slot(f));
  for (Unit& unit : plan->units_) {
    const std::vector<tf::Output>& ins = unit.node != nullptr
                                             ? unit.node->inputs()
                                             : plan->clustering_.clusters[unit.cluster].spec.inputs;
    for (const tf::Output& in : ins) unit.input_slots.push_back(slot(in));
  }
  auto output_slot = [&](const tf::Output& o) {
    if (fed.contains({o.node, o.index})) return -1;  // the feed wins over the producer
    auto it = slot_of.find({o.node, o.index});
    return it == slot_of.end() ? -1 : it->second;
  };
  for (Unit& unit : plan->units_) {
    if (unit.node != nullptr) {
      for (int k = 0; k < unit.node->num_outputs(); ++k) {
        unit.output_slots.push_back(output_slot({const_cast<tf::Node*>(unit.node), k}));
      }
    } else {
      for (const tf::Output& o : plan->clustering_.clusters[unit.cluster].spec.outputs) {
        unit.output_slots.push_back(output_slot(o));
      }
    }
  }

  // Dependencies: producers of read tensors and control inputs, deduplicated.
  for (size_t u = 0; u < plan->units_.size(); ++u) {
    absl::flat_hash_set<int> preds;
    auto add_node_deps = [&](const tf::Node* node) {
      for (const tf::Output& in : node->inputs()) {
        if (!fed.contains({in.node, in.index}) && needed.contains(in.node)) {
          preds.insert(unit_of[in.node->id()]);
        }
      }
      for (const tf::Node* c : node->control_inputs()) {
        if (needed.contains(c)) preds.insert(unit_of[c->id()]);  // else satisfied by a feed
      }
    };
    Unit& unit = plan->units_[u];
    if (unit.node != nullptr) {
      add_node_deps(unit.node);
    } else {
      for (const tf::Node* n : plan->clustering_.clusters[unit.cluster].spec.nodes) {
        add_node_deps(n);
      }
    }
    preds.erase(static_cast<int>(u));
    unit.num_predecessors = static_cast<int>(preds.size());
    std::vector<int> sorted(preds.begin(), preds.end());
    std::sort(sorted.begin(), sorted.end());
    for (int p : sorted) plan->units_[p].successors.push_back(static_cast<int>(u));
  }
  for (size_t u = 0; u < plan->units_.size(); ++u) {
    if (plan->units_[u].num_predecessors == 0) plan->initial_ready_.push_back(static_cast<int>(u));
  }
  return plan;
}

absl::StatusOr<std::vector<Tensor>> Plan::Run(const std::vector<Tensor>& feed_values,
                                              const ExecContext& ctx, RunStats* stats) const {
  const auto t0 = std::chrono::steady_clock::now();
  if (has_frames_) {
    RunStats prefix_stats;
    absl::StatusOr<std::vector<Tensor>> results = RunFrames(feed_values, ctx, &prefix_stats);
    if (stats != nullptr) {
      *stats = prefix_stats;
      stats->nodes_total = num_nodes_;
      stats->run_ms = MsSince(t0);
    }
    return results;
  }
  RunState state;
  state.slots.resize(static_cast<size_t>(num_slots_));
  for (size_t i = 0; i < feed_slots_.size(); ++i) state.slots[feed_slots_[i]] = feed_values[i];
  state.pending.reset(new std::atomic<int>[units_.size()]);
  for (size_t u = 0; u < units_.size(); ++u) state.pending[u] = units_[u].num_predecessors;

  // Runs `first` and then, on the same thread, one newly ready successor at a time; other
  // ready successors go to the pool (or to the local worklist when there is no pool).
  std::function<void(int)> drive = [&](int first) {
    std::vector<int> work = {first};
    while (!work.empty()) {
      const int u = work.back();
      work.pop_back();
      bool ok;
      {
        std::lock_guard<std::mutex> lock(state.mu);
        ok = state.status.ok();
      }
      std::vector<int> ready;
      if (ok) {
        absl::Status s = RunUnit(units_[u], state, ctx);
        {
          std::lock_guard<std::mutex> lock(state.mu);
          ++state.units_done;
        }
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(state.mu);
          if (state.status.ok()) state.status = s;
        } else {
          for (int succ : units_[u].successors) {
            if (state.pending[succ].fetch_sub(1, std::memory_order_acq_rel) == 1) {
              ready.push_back(succ);
            }
          }
        }
      }
      bool run_over;
      {
        std::lock_guard<std::mutex> lock(state.mu);
        state.in_flight += static_cast<int>(ready.size()) - 1;
        run_over = state.in_flight == 0;
        if (run_over) state.cv.notify_all();
      }
      // Once in_flight reaches 0 the caller may return and destroy `state` and `drive`
      // (this closure included): touch nothing captured after giving the last token back.
      if (run_over) return;
      for (size_t i = 0; i < ready.size(); ++i) {
        if (i + 1 == ready.size() || ctx.inter_op == nullptr) {
          work.push_back(ready[i]);
        } else {
          const int r = ready[i];
          ctx.inter_op->Schedule([&drive, r] { drive(r); });
        }
      }
    }
  };

  state.in_flight = static_cast<int>(initial_ready_.size());
  for (size_t i = 0; i < initial_ready_.size(); ++i) {
    const int r = initial_ready_[i];
    if (i + 1 == initial_ready_.size() || ctx.inter_op == nullptr) {
      drive(r);
    } else {
      ctx.inter_op->Schedule([&drive, r] { drive(r); });
    }
  }
  {
    std::unique_lock<std::mutex> lock(state.mu);
    state.cv.wait(lock, [&] { return state.in_flight == 0; });
  }
  TFJIT_RETURN_IF_ERROR(state.status);
  if (state.units_done != static_cast<int>(units_.size())) {
    return Internal(
        "the plan ran %d of its %d units: its clusters depend on each other in a "
        "cycle (a clustering bug); run with --jit none to get results meanwhile",
        state.units_done, units_.size());
  }
  std::vector<Tensor> results;
  for (int s : fetch_slots_) {
    TFJIT_ASSIGN_OR_RETURN(Tensor value, Deref(state.slots[s]));  // a TF1 variable's value
    results.push_back(std::move(value));
  }
  if (stats != nullptr) {
    *stats = state.stats;
    stats->nodes_total = num_nodes_ + state.stats.nodes_total;  // + nodes of function bodies
    stats->run_ms = MsSince(t0);
  }
  return results;
}

absl::Status Plan::RunUnit(const Unit& unit, RunState& state, const ExecContext& ctx) const {
  if (ctx.control != nullptr && ctx.control->ShouldStop()) {
    if (unit.node != nullptr) return CheckRunControl(ctx, *unit.node);
    return ctx.control->Check(clustering_.clusters[unit.cluster].spec.name);
  }
  std::vector<Tensor> inputs;
  inputs.reserve(unit.input_slots.size());
  for (int s : unit.input_slots) inputs.push_back(state.slots[s]);
  std::vector<Tensor> outputs;
  std::vector<KernelProfile> kernels;  // a profiled compiled cluster's
  const auto start =
      ctx.profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  if (unit.node != nullptr) {
    TFJIT_RETURN_IF_ERROR(RunKernel(*unit.node, inputs, ctx, &outputs, &state));
  } else {
    TFJIT_RETURN_IF_ERROR(
        RunCluster(unit.cluster, inputs, ctx, &outputs, state, ctx.profile ? &kernels : nullptr));
  }
  if (ctx.profile) {
    UnitProfile p;
    p.kernels = std::move(kernels);
    p.ms = MsSince(start);
    p.calls = 1;
    if (unit.node != nullptr) {
      p.name = unit.node->name();
      p.kind = unit.node->op();
    } else {
      p.name = absl::StrCat(ctx.key_prefix, clustering_.clusters[unit.cluster].spec.name);
      p.kind = "cluster";
      p.compiled = true;
    }
    for (const Tensor& t : inputs)
      p.input_bytes += t.valid() ? static_cast<int64_t>(t.byte_size()) : 0;
    for (const Tensor& t : outputs)
      p.output_bytes += t.valid() ? static_cast<int64_t>(t.byte_size()) : 0;
    std::lock_guard<std::mutex> lock(state.mu);
    state.stats.profile.push_back(std::move(p));
  }
  for (size_t k = 0; k < unit.output_slots.size() && k < outputs.size(); ++k) {
    if (unit.output_slots[k] >= 0) state.slots[unit.output_slots[k]] = std::move(outputs[k]);
  }
  return absl::OkStatus();
}

absl::Status Plan::RunKernel(const tf::Node& node, const std::vector<Tensor>& inputs,
                             const ExecContext& ctx, std::vector<Tensor>* outputs,
                             RunState* state) const {
  TFJIT_RETURN_IF_ERROR(CheckRunControl(ctx, node));
  if (node.called_function() != nullptr || IsControlFlowOp(node.op())) {
    std::vector<Tensor> values = inputs;
    for (Tensor& v : values) {
      absl::StatusOr<Tensor> d = Deref(v);
      if (!d.ok()) return AttachNode(d.status(), node.name(), node.op());
      v = *std::move(d);
    }
    ExecContext call_ctx = ctx;
    call_ctx.device = device_of_[node.id()];
    return RunCall(node, values, call_ctx, outputs, state);
  }
  return RunKernelFn(node, inputs, ctx, outputs);
}

absl::Status Plan::RunCall(const tf::Node& node, const std::vector<Tensor>& inputs,
                           const ExecContext& ctx, std::vector<Tensor>* outputs,
                           RunState* state) const {
  if (node.called_function() != nullptr) {  // PartitionedCall & co: run the body as a unit
    if (ctx.functions == nullptr) {
      return AttachNode(Unimplemented("node %s calls function '%s', but this run has no "
                                      "function runtime",
                                      node.DebugName(), node.called_function()->signature().name()),
                        node.name(), node.op());
    }
    RunStats nested;
    TFJIT_RETURN_IF_ERROR(ctx.functions->Call(node, inputs, ctx, outputs, &nested));
    if (state != nullptr) {
      std::lock_guard<std::mutex> lock(state->mu);
      AddNestedStats(nested, &state->stats);
    }
    return absl::OkStatus();
  }
  if (IsControlFlowOp(node.op())) {  // While/If: cond, body and branches run as functions
    RunStats nested;
    TFJIT_RETURN_IF_ERROR(RunControlFlow(node, inputs, ctx, outputs, &nested));
    if (state != nullptr) {
      std::lock_guard<std::mutex> lock(state->mu);
      AddNestedStats(nested, &state->stats);
    }
    return absl::OkStatus();
  }
  return Internal("node %s is not a call", node.DebugName());
}

absl::Status Plan::RunKernelFn(const tf::Node& node, const std::vector<Tensor>& inputs,
                               const ExecContext& ctx, std::vector<Tensor>* outputs) const {
  if (node.op() == "PlaceholderWithDefault") {  // not fed: its default flows through
    *outputs = {inputs[0]};
    return absl::OkStatus();
  }
  KernelFn fn = ctx.kernels->Find(node.op());
  if (fn == nullptr) {
    return AttachNode(
        Unimplemented("node %s: no CPU kernel for op %s", node.DebugName(), node.op()), node.name(),
        node.op());
  }
  std::vector<Tensor> values = inputs;
  for (size_t i = 0; i < values.size(); ++i) {
    if (TakesVariableRef(node, static_cast<int>(i))) continue;
    absl::StatusOr<Tensor> v = Deref(values[i]);
    if (!v.ok()) return AttachNode(v.status(), node.name(), node.op());
    values[i] = *std::move(v);
  }
  KernelContext kctx(node, values, ctx.intra_op);
  kctx.set_state_store(ctx.kernel_state);
  const std::string& device = device_of_[node.id()];
  kctx.set_device(device, ctx.resources != nullptr ? ctx.resources->ForDevice(device) : nullptr);
  absl::Status s;
  {
    // Tensor allocations in the kernel charge the run's budget; a refused one (over the cap,
    // or a shape no machine holds) throws before allocating and ends the kernel here.
    ScopedRunControl scope(ctx.control, AllocationMode::kThrowOnRefusal);
    const std::string where = absl::StrCat("node ", node.DebugName());
    try {
      s = fn(kctx);
    } catch (const AllocationRefused& refused) {
      s = AllocationRefusedStatus(refused, where);
    } catch (const std::bad_alloc&) {
      s = ResourceExhausted(
          "%s: out of memory (an allocation failed); check the shapes the "
          "node computes and the memory available",
          where);
    } catch (const std::length_error& e) {
      s = ResourceExhausted("%s: out of memory (%s); check the shapes the node computes", where,
                            e.what());
    }
  }
  if (!s.ok()) {
    if (!absl::StrContains(s.message(), node.name())) {
      s = AppendContext(s, absl::StrCat("[[{{node ", node.name(), "}}]] (", node.op(), ")"));
    }
    return AttachNode(s, node.name(), node.op());
  }
  *outputs = std::move(kctx.outputs());
  for (int k = 0; k < node.num_outputs(); ++k) {
    const Tensor& t = (*outputs)[k];
    if (!t.valid() || t.dtype() != node.output_types()[k]) {
      return Internal("node %s: kernel produced %s for output %d, expected dtype %s",
                      node.DebugName(), t.valid() ? t.ShapeString() : "nothing", k,
                      DTypeName(node.output_types()[k]));
    }
  }
  return absl::OkStatus();
}

absl::Status Plan::RunClusterWithKernels(int index, const std::vector<Tensor>& inputs,
                                         const ExecContext& ctx,
                                         std::vector<Tensor>* outputs) const {
  const tf2hlo::ClusterSpec& spec = clustering_.clusters[index].spec;
  absl::flat_hash_map<OutputKey, Tensor> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    values[{spec.inputs[i].node, spec.inputs[i].index}] = inputs[i];
  }
  for (const tf::Node* node : spec.nodes) {
    std::vector<Tensor> ins, outs;
    for (const tf::Output& in : node->inputs()) ins.push_back(values.at({in.node, in.index}));
    TFJIT_RETURN_IF_ERROR(RunKernel(*node, ins, ctx, &outs, nullptr));
    for (size_t k = 0; k < outs.size(); ++k) values[{node, static_cast<int>(k)}] = outs[k];
  }
  for (const tf::Output& o : spec.outputs) outputs->push_back(values.at({o.node, o.index}));
  return absl::OkStatus();
}

absl::Status Plan::ReadClusterVariables(int index, std::vector<Tensor>& inputs,
                                        std::vector<tf2hlo::ArgInfo>& args,
                                        const ExecContext& ctx) const {
  const cluster::Cluster& cluster = clustering_.clusters[index];
  absl::flat_hash_map<const Var*, int> seen;
  const std::vector<int>& updates = resource_updates_[index];
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype() != DType::kResource) {
      const VarRef* ref = inputs[i].object_as<VarRef>();
      if (ref != nullptr &&
          std::find(updates.begin(), updates.end(), static_cast<int>(i)) != updates.end()) {
        // A TF1 variable the cluster updates (--autofix): passed like a resource variable.
        // Uninitialized (an init op's Assign): a dummy of dims [0], as for resources; a read
        // before the cluster assigns it fails with TF's message (tf2hlo).
        Tensor value = ref->var()->Get();
        const bool initialized = value.valid();
        if (!initialized) value = Tensor(ref->var()->dtype(), {0});
        if (!seen.insert({ref->var(), static_cast<int>(i)}).second) {
          return Unimplemented(
              "Duplicate variable passed to XLA cluster: '%s' enters %s "
              "through two references (inputs %d and %d)",
              ref->name(), cluster.spec.name, seen[ref->var()], i);
        }
        args[i].variable = tf2hlo::VariableInfo{ref->name(), "", initialized, /*ref=*/true};
        inputs[i] = value;
        continue;
      }
      TFJIT_ASSIGN_OR_RETURN(inputs[i], Deref(inputs[i]));  // a TF1 variable's value
      continue;
    }
    const tf::Output& in = cluster.spec.inputs[i];
    const tf::Node* user = in.node;
    for (const tf::Node* n : cluster.spec.nodes) {
      if (n->num_inputs() > 0 && n->input(0) == in) {
        user = n;
        break;
      }
    }
    TFJIT_ASSIGN_OR_RETURN(
        const ResourceHandle* h,
        GetResourceHandle(inputs[i], absl::StrCat(cluster.spec.name, " input ", i)));
    if (h->device() != cluster.device) {
      if (!ctx.autofix) {
        return AttachNode(
            InvalidArgument("Trying to access resource %s located in device %s from device %s\n"
                            " Cf. https://www.tensorflow.org/xla/known_issues#tfvariable_on_a_"
                            "different_device\n"
                            " Node %s uses variable '%s' (created by '%s') in %s, compiled for %s. "
                            "Fix: create the variable on %s (int32 variables always stay in host "
                            "memory: use int64 on GPUs), or run with --autofix to copy it to the "
                            "cluster's device for the run and write it back.",
                            h->name(), h->device(), cluster.device, user->DebugName(), h->name(),
                            h->creator(), cluster.spec.name, cluster.device, cluster.device),
            user->name(), user->op());
      }
      if (!autofix_logged_[index].exchange(true)) {  // once per cluster and plan
        Log(LogLevel::kWarning,
            "autofix A: %s copies variable '%s' from %s to %s for each run and writes it back "
            "(node %s)",
            cluster.spec.name, h->name(), h->device(), cluster.device, user->DebugName());
      }
    }
    if (!seen.insert({h->var(), static_cast<int>(i)}).second) {
      return AttachNode(Unimplemented("Duplicate variable passed to XLA cluster: '%s' enters %s "
                                      "through two handles (inputs %d and %d)",
                                      h->name(), cluster.spec.name, seen[h->var()], i),
                        user->name(), user->op());
    }
    Tensor value = h->var()->Get();
    tf2hlo::VariableInfo info{h->name(), h->container(), value.valid()};
    if (!value.valid()) value = Tensor(h->var()->dtype(), {0});
    if (value.dtype() != h->var()->dtype()) {
      return Internal("variable '%s' holds %s, declared %s", h->name(), value.ShapeString(),
                      DTypeName(h->var()->dtype()));
    }
    inputs[i] = value;
    args[i].variable = info;
  }
  return absl::OkStatus();
}

absl::Status Plan::RunCluster(int index, const std::vector<Tensor>& handles, const ExecContext& ctx,
                              std::vector<Tensor>* outputs, RunState& state,
                              std::vector<KernelProfile>* kernels) const {
  const cluster::Cluster& cluster = clustering_.clusters[index];
  // Variables the cluster writes stay locked from their read to their write-back, so a
  // concurrent run's update cannot be lost between the two.
  std::vector<Var*> written;
  for (int i : resource_updates_[index]) {
    if (const ResourceHandle* h = handles[i].object_as<ResourceHandle>())
      written.push_back(h->var());
    if (const VarRef* r = handles[i].object_as<VarRef>()) written.push_back(r->var());
  }
  std::sort(written.begin(), written.end());
  written.erase(std::unique(written.begin(), written.end()), written.end());
  std::vector<std::unique_ptr<std::lock_guard<std::mutex>>> locks;
  for (Var* v : written) {
    locks.push_back(std::make_unique<std::lock_guard<std::mutex>>(v->update_mu()));
  }

  std::vector<Tensor> inputs = handles;
  std::vector<tf2hlo::ArgInfo> args(inputs.size());
  absl::Status read = ReadClusterVariables(index, inputs, args, ctx);
  if (!read.ok()) {
    // Auto clusters never fail for what TF's auto-clustering would have kept out (e.g. a
    // variable of another device reached through a function argument): they run on kernels.
    if (cluster.must_compile || read.code() == absl::StatusCode::kInternal) return read;
    Log(LogLevel::kInfo, "%s runs on CPU kernels: %s", cluster.spec.name, read.message());
    locks.clear();
    {
      std::lock_guard<std::mutex> lock(state.mu);
      state.stats.fallbacks++;
    }
    return RunClusterWithKernels(index, handles, ctx, outputs);
  }
  std::string key = absl::StrCat(ctx.key_prefix, cluster_keys_[index], "@", cluster.device);
  TFJIT_ASSIGN_OR_RETURN(const backends::Backend* backend, BackendFor(ctx, cluster.device));
  for (size_t i = 0; i < inputs.size(); ++i) {
    args[i].dtype = inputs[i].dtype();
    args[i].dims = inputs[i].dims();
    absl::StrAppend(&key, "|", inputs[i].ShapeString(),
                    args[i].variable.has_value() && !args[i].variable->initialized ? "u" : "");
  }
  for (int i : const_inputs_[index]) {
    args[i].value = inputs[i];
    absl::StrAppend(&key, "|v", i, "=",
                    absl::BytesToHexString(absl::string_view(
                        static_cast<const char*>(inputs[i].raw_data()), inputs[i].byte_size())));
  }
  double compile_ms = 0;
  bool hit = false;
  auto compile = [&]() -> absl::StatusOr<CompilationCache::ExecutablePtr> {
    const auto t0 = std::chrono::steady_clock::now();
    CompileProgress progress(ctx.show_compile_progress, cluster.spec.name,
                             static_cast<int>(cluster.spec.nodes.size()));
    TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module,
                           tf2hlo::LowerCluster(cluster.spec, args, ctx.autofix));
    TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<backends::Executable> exe,
                           backend->Compile(std::move(module)));
    compile_ms = MsSince(t0);
    const backends::CompileStats& cs = exe->stats();
    Log(LogLevel::kInfo,
        "compiled %s (%d nodes) in %.1f ms: lowering %.1f ms, HLO passes %.1f ms, %s %.1f "
        "ms, %d kernels, temporaries %.2f MB (%.2f MB unshared)",
        cluster.spec.name, static_cast<int>(cluster.spec.nodes.size()), compile_ms,
        compile_ms - cs.optimize_ms - cs.codegen_ms, cs.optimize_ms,
        cs.loaded_from_disk_cache ? "loaded from the disk cache in" : "codegen", cs.codegen_ms,
        cs.num_kernels, cs.temp_bytes / 1e6, cs.temp_bytes_unshared / 1e6);
    if (!ctx.dump_dir.empty()) {
      std::ofstream(absl::StrCat(ctx.dump_dir, "/", cluster.spec.name, "_",
                                 std::hash<std::string>()(key) % 1000000, ".hlo"))
          << hlo::PrintModule(exe->module());
    }
    return CompilationCache::ExecutablePtr(std::move(exe));
  };
  absl::StatusOr<CompilationCache::ExecutablePtr> exe = ctx.cache->GetOrCompile(key, compile, &hit);
  if (!exe.ok()) {
    const absl::Status& s = exe.status();
    // An auto cluster that cannot compile runs on kernels, whatever the reason (a user
    // error the compiler sees, e.g. an unbounded list, is raised again by the kernels if
    // the runtime has it too); only our own bugs (INTERNAL) surface.
    if (!cluster.must_compile && s.code() != absl::StatusCode::kInternal) {
      if (!hit) {
        Log(LogLevel::kWarning, "%s falls back to CPU kernels: %s", cluster.spec.name, s.message());
        // The nodes the error names (each that failed on its own) stay out of the session's
        // next plans, so the rest of the cluster compiles from the next run on.
        std::vector<std::string> failing = tf2hlo::ClusterNodesOfError(s);
        if (failing.size() > 16) failing.resize(16);  // the session learns at most 64 nodes
        for (const tf::Node* node : cluster.spec.nodes) {
          if (learned_ == nullptr ||
              std::find(failing.begin(), failing.end(), node->name()) == failing.end()) {
            continue;
          }
          const std::string first_line =
              node->name() == failing.front()
                  ? std::string(s.message().substr(0, s.message().find('\n')))
                  : std::string("it failed to compile there as well as the first node named");
          if (learned_->Add(graph_, *node,
                            absl::StrCat("its cluster failed to compile, so it "
                                         "runs in the runtime: ",
                                         first_line))) {
            Log(LogLevel::kWarning,
                "%s stays out of clusters from the next run on; the rest "
                "of %s compiles then",
                node->DebugName(), cluster.spec.name);
          }
        }
      }
      {
        std::lock_guard<std::mutex> lock(state.mu);
        state.stats.fallbacks++;
      }
      locks.clear();  // the kernels lock the variables themselves
      return RunClusterWithKernels(index, handles, ctx, outputs);
    }
    return AppendContext(s, absl::StrCat("while compiling ", cluster.spec.name, " (",
                                         cluster.spec.nodes.size(), " nodes)"));
  }
  // Known issue E: each stateful random node gets its Philox state as an extra parameter
  // (random_kernels.h: XLA's unseeded stream, or with --autofix the kernel's own, locked until
  // the advanced state the cluster returns is installed).
  std::vector<CompiledRandomState> rng;
  for (const tf::Node* node : random_nodes_[index]) {
    // A While/If drawing in its bodies has no kernel stream to continue: XLA's unseeded one.
    const bool honour_seeds = ctx.autofix && tf2hlo::IsStatefulRandomOp(node->op());
    TFJIT_ASSIGN_OR_RETURN(CompiledRandomState s,
                           AcquireCompiledRandomState(ctx.kernel_state, *node, honour_seeds));
    inputs.push_back(s.state());
    rng.push_back(std::move(s));
  }
  {
    // Outputs and arena charge the run's budget (checked by the executable before it
    // allocates); compiled loops poll the run's deadline and cancellation.
    ScopedRunControl scope(ctx.control, AllocationMode::kCharge);
    // Complex arguments are read as their real parts (tf2hlo::ParameterShape).
    for (size_t i = 0; i < args.size(); ++i) {
      if (!IsComplexDType(inputs[i].dtype())) continue;
      std::vector<int64_t> dims = inputs[i].dims();
      dims.push_back(2);
      inputs[i] = inputs[i].BitcastView(ComplexPartDType(inputs[i].dtype()), std::move(dims));
    }
    std::vector<backends::KernelTiming> timings;
    absl::StatusOr<std::vector<Tensor>> ran =
        kernels != nullptr ? (*exe)->RunProfiled(inputs, ctx.intra_op, &timings)
                           : (*exe)->Run(inputs, ctx.intra_op);
    if (kernels != nullptr) {
      for (backends::KernelTiming& t : timings) {
        KernelProfile k;
        k.name = std::move(t.name);
        k.ops = std::move(t.ops);
        k.calls = t.calls;
        k.ms = t.ms;
        k.bytes = t.bytes * t.calls;
        k.flops = t.flops * t.calls;
        kernels->push_back(std::move(k));
      }
    }
    if (!ran.ok()) {
      const absl::StatusCode code = ran.status().code();
      if (code != absl::StatusCode::kDeadlineExceeded && code != absl::StatusCode::kCancelled &&
          code != absl::StatusCode::kResourceExhausted) {
        return ran.status();
      }
      const tf::Node* first = cluster.spec.nodes.front();
      return AttachNode(
          AppendContext(ran.status(),
                        absl::StrCat("in ", cluster.spec.name, " (", cluster.spec.nodes.size(),
                                     " nodes, from ", first->DebugName(), ")")),
          first->name(), first->op());
    }
    *outputs = *std::move(ran);
  }
  // Write back the variables the cluster assigned: results after the cluster outputs.
  const size_t num_outputs = cluster.spec.outputs.size();
  const std::vector<int>& updates = resource_updates_[index];
  const std::vector<hlo::RuntimeCheck>& checks = (*exe)->module().runtime_checks();
  const std::vector<int64_t>& row_counted = (*exe)->module().row_counted_outputs();
  if (outputs->size() !=
      num_outputs + updates.size() + rng.size() + row_counted.size() + checks.size()) {
    return Internal(
        "%s returned %d results, expected %d outputs, %d variable updates, %d "
        "random states, %d row counts and %d run-time checks",
        cluster.spec.name, outputs->size(), num_outputs, updates.size(), rng.size(),
        row_counted.size(), checks.size());
  }
  // Run-time checks (the last results) first: a failing run installs no state, as the
  // kernel's error would have stopped the graph before the writes.
  const size_t first_count = num_outputs + updates.size() + rng.size();
  const size_t first_check = first_count + row_counted.size();
  for (size_t c = 0; c < checks.size(); ++c) {
    const Tensor& r = (*outputs)[first_check + c];
    if (r.dtype() != DType::kInt64 || r.num_elements() < 1) {
      return Internal("%s: run-time check %d returned %s", cluster.spec.name, c, r.ShapeString());
    }
    const int64_t* v = r.data<int64_t>();
    if (v[0] < 0) continue;
    const hlo::RuntimeCheck& check = checks[c];
    const std::string message = check.Message(std::vector<int64_t>(v, v + r.num_elements()));
    outputs->clear();
    return AttachNode(InvalidArgument("node '%s' (%s): %s", check.tf_node, check.tf_op, message),
                      check.tf_node, check.tf_op);
  }
  for (size_t k = 0; k < updates.size(); ++k) {
    const Tensor& handle = handles[updates[k]];
    Var* var = handle.dtype() == DType::kResource ? handle.object_as<ResourceHandle>()->var()
                                                  : handle.object_as<VarRef>()->var();
    var->Set((*outputs)[num_outputs + k], ctx.control);
  }
  for (size_t k = 0; k < rng.size(); ++k) {
    rng[k].Commit((*outputs)[num_outputs + updates.size() + k]);
  }
  // Outputs padded to their static size (Where's rows) keep their real leading rows.
  for (size_t k = 0; k < row_counted.size(); ++k) {
    const Tensor& count = (*outputs)[first_count + k];
    const size_t o = static_cast<size_t>(row_counted[k]);
    if (o >= num_outputs || count.dtype() != DType::kInt64 || count.num_elements() != 1 ||
        (*outputs)[o].rank() == 0) {
      return Internal("%s: row count %d (output %d) came back as %s", cluster.spec.name, k, o,
                      count.ShapeString());
    }
    TFJIT_ASSIGN_OR_RETURN((*outputs)[o], LeadingRows((*outputs)[o], count.data<int64_t>()[0]));
  }
  outputs->resize(num_outputs);
  // Complex outputs come back as (real, imag) pairs in a last dim of 2.
  for (size_t i = 0; i < num_outputs; ++i) {
    const tf::Output& out = cluster.spec.outputs[i];
    const DType t = out.node->output_types()[static_cast<size_t>(out.index)];
    Tensor& r = (*outputs)[i];
    if (!IsComplexDType(t)) continue;
    if (r.rank() == 0 || r.dims().back() != 2 || r.dtype() != ComplexPartDType(t)) {
      return Internal("%s: complex output %d came back as %s", cluster.spec.name, i,
                      r.ShapeString());
    }
    std::vector<int64_t> dims = r.dims();
    dims.pop_back();
    r = r.BitcastView(t, std::move(dims));
  }
  std::lock_guard<std::mutex> lock(state.mu);
  state.stats.clusters++;
  state.stats.nodes_compiled += static_cast<int>(cluster.spec.nodes.size());
  state.stats.compile_ms += compile_ms;
  state.stats.cache_hits += hit ? 1 : 0;
  if (!hit) {
    const backends::CompileStats& cs = (*exe)->stats();
    if (cs.loaded_from_disk_cache) ++state.stats.disk_cache_hits;
    ClusterCompile c;
    c.cluster = cluster.spec.name;
    c.nodes = static_cast<int>(cluster.spec.nodes.size());
    c.compile_ms = compile_ms;
    c.passes_ms = cs.optimize_ms;
    c.codegen_ms = cs.codegen_ms;
    c.lowering_ms = std::max(0.0, compile_ms - cs.optimize_ms - cs.codegen_ms);
    c.kernels = cs.num_kernels;
    c.from_disk_cache = cs.loaded_from_disk_cache;
    state.stats.compiles.push_back(std::move(c));
  }
  state.stats.flops += (*exe)->stats().flops;
  state.stats.bytes_copied += (*exe)->copied_output_bytes();
  return absl::OkStatus();
}

}  // namespace tfjit::runtime
