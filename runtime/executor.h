// Executor: runs the part of a graph that a (feeds, fetches) pair needs, as a dataflow of
// units — single nodes run by fallback kernels, and compiled clusters — on a thread pool.
// Contract: Plan::Build prunes the graph to what the fetches and targets need, places the
// nodes (placement.h), clusters them (compiler/cluster) and orders the units; Plan::Run runs a
// unit once all its predecessors have, each on its own kernel or, for a cluster, through the
// cluster kernel (cluster_kernel.cc: compilation cache -> Executable, like TF's
// compile-on-demand op), and the first error ends the run. TF1 control flow runs in the frame
// executor (frame_executor.cc); which of its nodes may still compile is compiler/cluster/
// deadness.h's to say. Files: executor.cc (build and run), cluster_kernel.cc, placement.cc,
// frame_executor.cc.
#ifndef TFJIT_RUNTIME_EXECUTOR_H_
#define TFJIT_RUNTIME_EXECUTOR_H_

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "backends/backend.h"
#include "compiler/cluster/clustering.h"
#include "core/run_control.h"
#include "core/thread_pool.h"
#include "frontend/graph.h"
#include "runtime/compilation_cache.h"
#include "runtime/kernels/kernel.h"
#include "runtime/placement.h"
#include "runtime/resource_mgr.h"
#include "runtime/shape_policy.h"
#include "tfjit/session.h"

namespace tfjit::runtime {

class FunctionRuntime;
struct CallFrame;

// Everything a plan needs from its session. Not owned.
struct ExecContext {
  const KernelRegistry* kernels = nullptr;
  const backends::Backend* backend = nullptr;
  // The backends of clusters placed on GPU:0, GPU:1, ... (empty without a GPU).
  std::vector<const backends::Backend*> gpu_backends;
  CompilationCache* cache = nullptr;
  ThreadPool* inter_op = nullptr;  // runs units
  ThreadPool* intra_op = nullptr;  // parallelism inside kernels and compiled code
  std::string dump_dir;
  // Runs call nodes (PartitionedCall, ...); nullptr: call nodes fail UNIMPLEMENTED.
  FunctionRuntime* functions = nullptr;
  // Per-session state of stateful kernels (e.g. the Philox stream of RandomUniform).
  KernelStateStore* kernel_state = nullptr;
  // The function calls this run is nested in (innermost first); nullptr at the top level.
  const CallFrame* call_stack = nullptr;
  // Prepended to compilation-cache keys: node names are unique only within one graph, so a
  // function body's clusters are keyed by its instance.
  std::string key_prefix;
  // The session's variables, per device; nullptr: resource kernels fail FAILED_PRECONDITION.
  ResourceMgrSet* resources = nullptr;
  // Beyond-TF fixes for the known interop issues (SessionOptions::autofix).
  bool autofix = false;
  // SessionOptions::shapes (shape_policy.h).
  ShapeMode shapes = ShapeMode::kAuto;
  // SessionOptions::batch_buckets, sorted (the session's); null: none.
  const std::vector<int64_t>* batch_buckets = nullptr;
  // The device of the call or control-flow node whose body this run is (full TF name); a
  // body's nodes run there unless they ask for another. "" at the top level.
  std::string device;
  // The run's deadline, cancellation and memory budget (core/run_control.h); checked before
  // every node and loop iteration, installed on the thread around kernels and clusters.
  // nullptr: no limits.
  const RunControl* control = nullptr;
  // RunOptions::profile: each unit's time and bytes go to RunStats::profile.
  bool profile = false;
  // SessionOptions::show_compile_progress.
  bool show_compile_progress = false;
};

// OK unless the run was cancelled or passed its deadline; then CANCELLED / DEADLINE_EXCEEDED
// naming `node` as where it stopped.
absl::Status CheckRunControl(const ExecContext& ctx, const tf::Node& node);

// Adds what a nested run (a function body, a loop's iterations) did to the outer statistics.
void AddNestedStats(const RunStats& nested, RunStats* into);

// A unit of execution: one node, or one cluster.
struct Unit {
  const tf::Node* node = nullptr;  // set for kernel units
  int cluster = -1;                // set for cluster units
  std::vector<int> input_slots;
  std::vector<int> output_slots;  // -1 for outputs nobody reads
  std::vector<int> successors;
  int num_predecessors = 0;
};

class Plan {
 public:
  // Prunes the graph to what `fetches` and `targets` (nodes run for their effect) need given
  // `feeds`, clusters it per `mode`, and orders
  // the units. Errors: unfed placeholders, must-compile failures (INVALID_ARGUMENT).
  static absl::StatusOr<std::unique_ptr<Plan>> Build(
      const tf::Graph& graph, const std::vector<tf::Output>& feeds,
      const std::vector<tf::Output>& fetches, cluster::JitMode mode, const Placement& placement,
      const std::vector<const tf::Node*>& targets = {});
  // The device `node` was placed on (full TF name).
  const std::string& device_of(const tf::Node& node) const { return device_of_[node.id()]; }

  // Runs with one value per feed; returns one tensor per fetch. Thread-safe.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& feed_values,
                                          const ExecContext& ctx, RunStats* stats) const;

  const cluster::ClusteringResult& clustering() const { return clustering_; }
  const tf::Graph& graph() const { return *graph_; }
  int num_nodes() const { return num_nodes_; }

 private:
  // One Run's dataflow state (executor.cc) and statistics (the cluster kernel adds to them).
  struct RunState {
    std::vector<Tensor> slots;
    std::unique_ptr<std::atomic<int>[]> pending;
    std::mutex mu;
    std::condition_variable cv;
    int in_flight = 0;
    int units_done = 0;  // guarded by mu; a plan whose units cannot all run is our bug
    absl::Status status;
    RunStats stats;  // guarded by mu
  };
  // TF1 control flow (Switch/Merge, loop frames): tagged-token dataflow, frame_executor.cc.
  // `stats` gets the statistics of the static prefix (the compiled part).
  absl::StatusOr<std::vector<Tensor>> RunFrames(const std::vector<Tensor>& feed_values,
                                                const ExecContext& ctx, RunStats* stats) const;
  static absl::Status BuildStaticPrefix(
      const tf::Graph& graph, const std::vector<tf::Output>& feeds,
      const std::vector<tf::Output>& fetches, cluster::JitMode mode, const Placement& placement,
      const std::vector<const tf::Node*>& targets,
      const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fed, Plan* plan);
  // TF1 plans: clusters the frame part's root-frame nodes that can never be dead (see
  // cluster::FrameClusterExclusions); FrameRun runs each as a unit. `fed`: the frame part's feeds.
  static absl::Status BuildFrameClusters(
      const tf::Graph& graph, const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fed,
      cluster::JitMode mode, const Placement& placement, Plan* plan);
  // Runs cluster `index` outside the dataflow of Run (for FrameRun); adds to `stats`.
  absl::Status RunFrameCluster(int index, const std::vector<Tensor>& inputs, const ExecContext& ctx,
                               std::vector<Tensor>* outputs, RunStats* stats) const;
  absl::Status RunUnit(const Unit& unit, RunState& state, const ExecContext& ctx) const;
  std::vector<int> RunAndRelease(int u, RunState& state, const ExecContext& ctx) const;
  // `state` (may be null) receives the statistics of function bodies run by call nodes.
  absl::Status RunKernel(const tf::Node& node, const std::vector<Tensor>& inputs,
                         const ExecContext& ctx, std::vector<Tensor>* outputs,
                         RunState* state) const;
  // Call nodes and functional control flow: the body runs on the node's device.
  absl::Status RunCall(const tf::Node& node, const std::vector<Tensor>& inputs,
                       const ExecContext& ctx, std::vector<Tensor>* outputs, RunState* state) const;
  // Every other node: its fallback kernel.
  absl::Status RunKernelFn(const tf::Node& node, const std::vector<Tensor>& inputs,
                           const ExecContext& ctx, std::vector<Tensor>* outputs) const;
  // `kernels`, when not null (a profiled run): the compiled kernels' timings, empty when the
  // cluster ran on kernels.
  absl::Status RunCluster(int index, const std::vector<Tensor>& inputs, const ExecContext& ctx,
                          std::vector<Tensor>* outputs, RunState& state,
                          std::vector<KernelProfile>* kernels = nullptr) const;
  // Reads the variables behind a cluster's resource inputs (checking TF's rule that a
  // cluster touches only variables on its own device), and writes back updated ones.
  absl::Status ReadClusterVariables(int index, std::vector<Tensor>& inputs,
                                    std::vector<tf2hlo::ArgInfo>& args,
                                    const ExecContext& ctx) const;
  absl::Status RunClusterWithKernels(int index, const std::vector<Tensor>& inputs,
                                     const ExecContext& ctx, std::vector<Tensor>* outputs) const;
  // The per-cluster tables below (const inputs, keys, variable updates, random nodes) from
  // clustering_ (cluster_kernel.cc).
  void BuildClusterTables();
  // Units, value slots and dependencies of a plan without TF1 frames (executor.cc).
  void BuildUnits(const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fed);
  void BuildSlots(const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fed);
  void BuildDependencies(const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fed,
                         const std::vector<int>& unit_of);

  const tf::Graph* graph_ = nullptr;
  cluster::ClusteringResult clustering_;
  std::vector<std::vector<int>> const_inputs_;              // per cluster
  std::vector<std::string> cluster_keys_;                   // per cluster: stable signature
  std::vector<std::vector<int>> resource_updates_;          // per cluster: ResourceUpdateInputs
  std::vector<std::vector<const tf::Node*>> random_nodes_;  // per cluster: StatefulRandomNodes
  std::vector<std::string> device_of_;                      // per node id: full device name
  std::unique_ptr<std::atomic<bool>[]> autofix_logged_;     // per cluster
  std::unique_ptr<ClusterShapes[]> shapes_;                 // per cluster (shape_policy.h)
  std::shared_ptr<LearnedExclusions> learned_;              // Placement::learned
  std::vector<Unit> units_;
  int num_slots_ = 0;
  std::vector<int> feed_slots_;
  std::vector<int> fetch_slots_;
  std::vector<int> initial_ready_;
  int num_nodes_ = 0;
  // For RunFrames: set when the needed nodes use TF1 control flow.
  bool has_frames_ = false;
  absl::flat_hash_set<const tf::Node*> needed_;
  std::vector<tf::Output> feeds_, fetches_;
  // TF1 plans: the nodes upstream of all control flow run first as an ordinary plan (so they
  // compile); their outputs that the frame part reads (`boundary_`) are fed to it.
  std::unique_ptr<Plan> prefix_;
  std::vector<tf::Output> boundary_;
  std::vector<const tf::Node*> frame_targets_;
  // Clusters from this index on (after the prefix's, kept for explain) belong to the frame
  // part.
  int frame_cluster_begin_ = 0;
};

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_EXECUTOR_H_
