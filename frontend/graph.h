// tf::Graph: TF nodes with typed outputs, data and control edges, and the function library.
#ifndef TFJIT_FRONTEND_GRAPH_H_
#define TFJIT_FRONTEND_GRAPH_H_

#include <memory>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "frontend/proto/graph.pb.h"
#include "tfjit/dtype.h"

namespace tfjit::tf {

class Node;
class Graph;
struct OpDef;

// One output of a node: "name:index" in TF's tensor naming.
struct Output {
  Node* node = nullptr;
  int index = 0;
  bool operator==(const Output&) const = default;
};

// A parsed tensor name: "node" (index 0), "node:3", or "^node" (control).
struct TensorName {
  std::string node;
  int index = 0;
  bool is_control = false;
};
// INVALID_ARGUMENT for an empty name or a malformed ":k" suffix.
absl::StatusOr<TensorName> ParseTensorName(absl::string_view name);

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_.name(); }
  const std::string& op() const { return def_.op(); }
  // The device the graph asked for ("" if none).
  const std::string& requested_device() const { return def_.device(); }
  // The NodeDef as loaded (attrs with OpDef defaults filled in).
  const tensorflow::NodeDef& def() const { return def_; }
  const OpDef* op_def() const { return op_def_; }

  // Data inputs in order; control inputs separately.
  const std::vector<Output>& inputs() const { return inputs_; }
  const Output& input(int i) const { return inputs_[static_cast<size_t>(i)]; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const std::vector<Node*>& control_inputs() const { return control_inputs_; }

  // Output element types, resolved from the op catalog and the node's attrs.
  const std::vector<DType>& output_types() const { return output_types_; }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  const std::vector<DType>& input_types() const { return input_types_; }

  // Consumers: (node, input slot) for data edges; nodes for control edges.
  const std::vector<std::pair<Node*, int>>& data_consumers() const { return data_consumers_; }
  const std::vector<Node*>& control_consumers() const { return control_consumers_; }

  // "'name' (Op)" for error messages.
  std::string DebugName() const;

  // Flat data-input indices that must be compile-time constants when compiled, and the flat
  // inputs/outputs TF keeps in host memory (the op catalog's arg indices resolved for this
  // node's list lengths).
  const std::vector<int>& compile_time_const_inputs() const { return const_inputs_; }
  const std::vector<int>& host_memory_inputs() const { return host_inputs_; }
  const std::vector<int>& host_memory_outputs() const { return host_outputs_; }

  // For call nodes (PartitionedCall, StatefulPartitionedCall, or an op that names a library
  // function): the called function in the graph's library; nullptr for other nodes.
  const tensorflow::FunctionDef* called_function() const { return function_; }

  // The graph that owns this node (its function library serves While/If bodies).
  const Graph* graph() const { return graph_; }

 private:
  friend class Graph;
  friend class GraphBuilder;
  int id_ = -1;
  tensorflow::NodeDef def_;
  const OpDef* op_def_ = nullptr;
  std::vector<Output> inputs_;
  std::vector<Node*> control_inputs_;
  std::vector<DType> output_types_;
  std::vector<DType> input_types_;
  std::vector<std::pair<Node*, int>> data_consumers_;
  std::vector<Node*> control_consumers_;
  std::vector<int> const_inputs_;
  std::vector<int> host_inputs_;
  std::vector<int> host_outputs_;
  const tensorflow::FunctionDef* function_ = nullptr;
  const Graph* graph_ = nullptr;
};

// A whole TF graph. Immutable after Build() except through the explicit mutators used by the
// cluster pass. Thread safety: const methods may be called concurrently.
class Graph {
 public:
  // Builds and validates a graph: names unique, inputs resolvable, every op known (all
  // unknown ops listed in one UNIMPLEMENTED error), types consistent, no cycles.
  // `source` names the file in error messages.
  static absl::StatusOr<std::unique_ptr<Graph>> Build(const tensorflow::GraphDef& graph_def,
                                                      absl::string_view source);

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  Node* node(int id) const { return nodes_[static_cast<size_t>(id)].get(); }
  Node* FindNode(absl::string_view name) const;
  // Resolves "node" / "node:k" to an output; NOT_FOUND / INVALID_ARGUMENT with the name.
  absl::StatusOr<Output> FindOutput(absl::string_view tensor_name) const;

  // Nodes in a topological order (data and control edges), stable by id.
  const std::vector<Node*>& topological_order() const { return topo_order_; }

  const tensorflow::FunctionDefLibrary& library() const { return library_; }
  // The library function named `name`, or nullptr.
  const tensorflow::FunctionDef* FindFunction(absl::string_view name) const;
  const tensorflow::VersionDef& versions() const { return versions_; }
  const std::string& source() const { return source_; }

 private:
  friend class GraphBuilder;
  std::vector<std::unique_ptr<Node>> nodes_;
  absl::flat_hash_map<std::string, Node*> by_name_;
  std::vector<Node*> topo_order_;
  tensorflow::FunctionDefLibrary library_;
  absl::flat_hash_map<std::string, const tensorflow::FunctionDef*> functions_;
  // Signatures of functions called directly (op = function name), as OpDefs.
  absl::flat_hash_map<std::string, std::shared_ptr<const OpDef>> function_ops_;
  tensorflow::VersionDef versions_;
  std::string source_;
};

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_GRAPH_H_
