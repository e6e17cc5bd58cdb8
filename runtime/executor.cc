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
#include "compiler/rules/unsupported_ops.h"
#include "compiler/tf2hlo/lowering.h"
#include "core/dtype.h"
#include "core/logging.h"
#include "core/status.h"
#include "core/timing.h"
#include "frontend/attr.h"
#include "runtime/control_flow.h"
#include "runtime/device.h"
#include "runtime/function_runtime.h"
#include "runtime/kernels/random_kernels.h"

namespace tfjit::runtime {
namespace {

using OutputKey = std::pair<const tf::Node*, int>;

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
    return rules::UnsupportedOpsError(graph.source(), placement.default_device, ops);
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
  plan->BuildUnits(fed);
  return plan;
}

// The plan's units: one per cluster and one per other needed node, in topological order of
// their first node; then their value slots (BuildSlots) and dependencies (BuildDependencies).
void Plan::BuildUnits(const absl::flat_hash_set<OutputKey>& fed) {
  // Units in topological order of their first node.
  std::vector<int> unit_of(graph_->num_nodes(), -1);
  std::vector<int> cluster_unit(clustering_.clusters.size(), -1);
  for (const tf::Node* node : graph_->topological_order()) {
    if (!needed_.contains(node)) continue;
    const int c = clustering_.cluster_of[node->id()];
    if (c >= 0 && cluster_unit[c] >= 0) {
      unit_of[node->id()] = cluster_unit[c];
      continue;
    }
    Unit unit;
    if (c >= 0) {
      unit.cluster = c;
      cluster_unit[c] = static_cast<int>(units_.size());
    } else {
      unit.node = node;
    }
    unit_of[node->id()] = static_cast<int>(units_.size());
    units_.push_back(std::move(unit));
  }

  BuildSlots(fed);
  BuildDependencies(fed, unit_of);
}

// Value slots: one per tensor read by a unit, fed, or fetched; each unit's input and output
// slots (-1 for an output nothing reads, or that a feed replaces).
void Plan::BuildSlots(const absl::flat_hash_set<OutputKey>& fed) {
  absl::flat_hash_map<OutputKey, int> slot_of;
  auto slot = [&](const tf::Output& o) {
    auto [it, inserted] = slot_of.insert({{o.node, o.index}, num_slots_});
    if (inserted) ++num_slots_;
    return it->second;
  };
  for (const tf::Output& f : feeds_) feed_slots_.push_back(slot(f));
  for (const tf::Output& f : fetches_) fetch_slots_.push_back(slot(f));
  for (Unit& unit : units_) {
    const std::vector<tf::Output>& ins =
        unit.node != nullptr ? unit.node->inputs() : clustering_.clusters[unit.cluster].spec.inputs;
    for (const tf::Output& in : ins) unit.input_slots.push_back(slot(in));
  }
  auto output_slot = [&](const tf::Output& o) {
    if (fed.contains({o.node, o.index})) return -1;  // the feed wins over the producer
    auto it = slot_of.find({o.node, o.index});
    return it == slot_of.end() ? -1 : it->second;
  };
  for (Unit& unit : units_) {
    if (unit.node != nullptr) {
      for (int k = 0; k < unit.node->num_outputs(); ++k) {
        unit.output_slots.push_back(output_slot({const_cast<tf::Node*>(unit.node), k}));
      }
    } else {
      for (const tf::Output& o : clustering_.clusters[unit.cluster].spec.outputs) {
        unit.output_slots.push_back(output_slot(o));
      }
    }
  }
}

// Each unit's predecessors (the producers of what it reads, and its nodes' control inputs)
// and successors; the units with none start a run.
void Plan::BuildDependencies(const absl::flat_hash_set<OutputKey>& fed,
                             const std::vector<int>& unit_of) {
  for (size_t u = 0; u < units_.size(); ++u) {
    absl::flat_hash_set<int> preds;
    auto add_node_deps = [&](const tf::Node* node) {
      for (const tf::Output& in : node->inputs()) {
        if (!fed.contains({in.node, in.index}) && needed_.contains(in.node)) {
          preds.insert(unit_of[in.node->id()]);
        }
      }
      for (const tf::Node* c : node->control_inputs()) {
        if (needed_.contains(c)) preds.insert(unit_of[c->id()]);  // else satisfied by a feed
      }
    };
    Unit& unit = units_[u];
    if (unit.node != nullptr) {
      add_node_deps(unit.node);
    } else {
      for (const tf::Node* n : clustering_.clusters[unit.cluster].spec.nodes) {
        add_node_deps(n);
      }
    }
    preds.erase(static_cast<int>(u));
    unit.num_predecessors = static_cast<int>(preds.size());
    std::vector<int> sorted(preds.begin(), preds.end());
    std::sort(sorted.begin(), sorted.end());
    for (int p : sorted) units_[p].successors.push_back(static_cast<int>(u));
  }
  for (size_t u = 0; u < units_.size(); ++u) {
    if (units_[u].num_predecessors == 0) initial_ready_.push_back(static_cast<int>(u));
  }
}

// Runs unit `u` unless the run already failed (the first error is the run's); returns the
// successors whose last predecessor it was.
std::vector<int> Plan::RunAndRelease(int u, RunState& state, const ExecContext& ctx) const {
  std::vector<int> ready;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    if (!state.status.ok()) return ready;
  }
  absl::Status s = RunUnit(units_[u], state, ctx);
  {
    std::lock_guard<std::mutex> lock(state.mu);
    ++state.units_done;
    if (!s.ok()) {
      if (state.status.ok()) state.status = s;
      return ready;
    }
  }
  // The counters are atomic: releasing successors takes no lock.
  for (int succ : units_[u].successors) {
    if (state.pending[succ].fetch_sub(1, std::memory_order_acq_rel) == 1) ready.push_back(succ);
  }
  return ready;
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
      stats->run_ms = MillisSince(t0);
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
      const std::vector<int> ready = RunAndRelease(u, state, ctx);
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
    stats->run_ms = MillisSince(t0);
  }
  return results;
}

absl::Status Plan::RunUnit(const Unit& unit, RunState& state, const ExecContext& ctx) const {
  if (CheckpointHookSet()) {  // tests (core/run_control.h)
    RunCheckpointHook(unit.node != nullptr ? absl::StrCat("node ", unit.node->DebugName())
                                           : clustering_.clusters[unit.cluster].spec.name);
  }
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
    p.ms = MillisSince(start);
    p.calls = 1;
    if (unit.node != nullptr) {
      p.name = unit.node->name();
      p.kind = unit.node->op();
    } else {
      p.name = absl::StrCat(ctx.key_prefix, clustering_.clusters[unit.cluster].spec.name);
      p.kind = "cluster";
      p.compiled = true;
      p.shapes = shapes_[unit.cluster].Summary();
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

}  // namespace tfjit::runtime
