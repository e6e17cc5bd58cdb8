// Clustering: which nodes compile. Must-compile mode ("all") compiles the whole subgraph or
// fails with TF's message; auto mode forms maximal compilable clusters without creating cycles
// through uncompiled nodes; "off"/"none" compile nothing here.
#ifndef TFJIT_COMPILER_CLUSTER_CLUSTERING_H_
#define TFJIT_COMPILER_CLUSTER_CLUSTERING_H_

#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "compiler/rules/rule.h"
#include "compiler/tf2hlo/lowering.h"
#include "frontend/graph.h"

namespace tfjit::cluster {

// kNone: nothing compiles (the uncompiled reference run); kOff: no auto-clustering (TF's
// default; must-compile functions still compile once functions are supported); kAuto:
// auto-clustering; kAll: the whole graph is one must-compile unit.
enum class JitMode { kNone, kOff, kAuto, kAll };
absl::StatusOr<JitMode> ParseJitMode(absl::string_view text);
const char* JitModeName(JitMode mode);  // "none", "off", "auto" or "all"

struct ClusteringOptions {
  JitMode mode = JitMode::kAuto;
  // Nodes to consider (the subgraph a Run needs); empty = every node of the graph.
  absl::flat_hash_set<const tf::Node*> subgraph;
  // Tensors the caller feeds: their producers are not compiled, the values enter clusters as
  // inputs.
  absl::flat_hash_set<std::pair<const tf::Node*, int>> fed;
  // Tensors the caller fetches: a cluster producing one exports it.
  std::vector<tf::Output> fetched;
  // Device name for messages ("/job:localhost/replica:0/task:0/device:CPU:0").
  std::string device = "/job:localhost/replica:0/task:0/device:CPU:0";
  // Per node id: the full name of the device the node is placed on ("" or absent: `device`).
  // Auto-clustering never merges nodes of different devices.
  std::vector<std::string> node_devices;
  // Beyond-TF fixes (SessionOptions::autofix); here: known issue B in must-compile mode.
  bool autofix = false;
  // Auto-clustering's size limits, in nodes (TF's --tf_xla_min_cluster_size and
  // --tf_xla_max_cluster_size): smaller clusters stay in the runtime; merging stops before a
  // cluster would pass the maximum (0: none).
  int min_cluster_size = 1;
  int max_cluster_size = 0;
  // Per node id: nodes the caller keeps out of clusters, and why (e.g. TF1 control flow:
  // nodes inside a loop frame or that may be dead). They still take part in cycle checks.
  absl::flat_hash_map<int, std::string> excluded;
};

struct Cluster {
  tf2hlo::ClusterSpec spec;
  bool must_compile = false;
  // Full name of the device the cluster runs on.
  std::string device;
};

struct ClusteringResult {
  std::vector<Cluster> clusters;
  // Per node id: the cluster index, or -1.
  std::vector<int> cluster_of;
  // Per node id not compiled (within the subgraph): why, in one phrase.
  std::map<int, std::string> why_not;
  // Per node id of why_not that a known-issue rule kept out: the rule (compiler/rules). What
  // `explain` lists as the rules that fired.
  std::map<int, rules::RuleId> rule_of;
};

// INVALID_ARGUMENT "Detected unsupported operations when trying to compile graph ..." in kAll
// mode when some node cannot compile; otherwise OK.
absl::StatusOr<ClusteringResult> FindClusters(const tf::Graph& graph,
                                              const ClusteringOptions& options);

}  // namespace tfjit::cluster

#endif  // TFJIT_COMPILER_CLUSTER_CLUSTERING_H_
