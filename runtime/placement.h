// Placement: which device each node of a graph runs on, and what the session learned to keep
// out of clusters. Contract: a node runs on the device it asks for when that device exists,
// else on the default (TF's soft placement); int32 resource variables asked for on a GPU stay
// on CPU:0, as TF keeps them in host memory (known issue A's int32 case). Clustering never
// merges nodes of different devices (compiler/cluster), and each cluster compiles for its
// device's backend (the cluster kernel, cluster_kernel.cc).
#ifndef TFJIT_RUNTIME_PLACEMENT_H_
#define TFJIT_RUNTIME_PLACEMENT_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "frontend/graph.h"

namespace tfjit::runtime {

// Nodes whose auto cluster failed to compile (a lowering error naming them that clustering
// could not foresee: an If whose branches return different shapes, a list op the compiler
// refuses): the session's next plans keep them out of clusters, so one such node costs its
// cluster one fallback to kernels, not every run. Thread-safe; shared by a session's plans.
class LearnedExclusions {
 public:
  // Records `node` of `graph` with `why`; false when it was known or the cap (64) is reached.
  bool Add(const tf::Graph* graph, const tf::Node& node, std::string why);
  // Adds this graph's exclusions to `excluded` (node id -> why).
  void AddTo(const tf::Graph* graph, absl::flat_hash_map<int, std::string>* excluded) const;
  // Grows with every Add that took effect: plans built before are out of date.
  int generation() const;

 private:
  mutable std::mutex mu_;
  absl::flat_hash_map<std::pair<const tf::Graph*, int>, std::string> excluded_;
  std::atomic<int> generation_{0};  // read on every Run without the lock
};

// Where nodes run: the default device for nodes that ask for none (full TF name) and the
// number of logical CPUs that exist; and what clustering takes from the session.
struct Placement {
  Placement() = default;
  // Implicit: a device name alone means one logical CPU.
  Placement(std::string device, int cpus = 1)  // NOLINT(google-explicit-constructor)
      : default_device(std::move(device)), logical_cpus(cpus) {}
  std::string default_device = "/job:localhost/replica:0/task:0/device:CPU:0";
  int logical_cpus = 1;
  bool autofix = false;  // SessionOptions::autofix (clustering's part of the fixes)
  // SessionOptions::min_cluster_size / max_cluster_size (auto-clustering's limits).
  int min_cluster_size = 1;
  int max_cluster_size = 0;
  // The session's learned exclusions (null: none are learned, e.g. nested function plans).
  std::shared_ptr<LearnedExclusions> learned;
};

// The full device name of each node (by id) of `graph`.
std::vector<std::string> PlaceNodes(const tf::Graph& graph, const Placement& placement);

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_PLACEMENT_H_
