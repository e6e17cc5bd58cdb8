// Static deadness of TF1 control flow (Switch/Merge, Enter/Exit loop frames), for clustering:
// which nodes of a graph's frame part may join a cluster. A node may only when it is in the
// root frame and can never be dead, so it runs exactly once per Run; the runtime's
// tagged-token executor (runtime/frame_executor.cc) runs the rest node by node.
#ifndef TFJIT_COMPILER_CLUSTER_DEADNESS_H_
#define TFJIT_COMPILER_CLUSTER_DEADNESS_H_

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "frontend/graph.h"

namespace tfjit::cluster {

// Enter, Exit, NextIteration, Merge, Switch, LoopCond and their Ref forms.
bool IsTf1ControlFlowOp(const std::string& op);

// Whether `nodes` include TF1 control-flow ops, which run by the runtime's frame executor.
bool UsesTf1ControlFlow(const absl::flat_hash_set<const tf::Node*>& nodes);

// The frame part's nodes that must not join a cluster, and why: TF1 control-flow ops, nodes
// inside a loop frame, and nodes that may be dead (downstream of a Switch that no
// tf.cond-shaped Merge joins again, or of a loop entered with such values). The rest are in
// the root frame and always live. `needed`: the nodes a Run needs; `fed`: the tensors it feeds
// (their producers do not run). A per-node-id map for ClusteringOptions::excluded.
absl::flat_hash_map<int, std::string> FrameClusterExclusions(
    const tf::Graph& graph, const absl::flat_hash_set<const tf::Node*>& needed,
    const absl::flat_hash_set<std::pair<const tf::Node*, int>>& fed);

}  // namespace tfjit::cluster

#endif  // TFJIT_COMPILER_CLUSTER_DEADNESS_H_
