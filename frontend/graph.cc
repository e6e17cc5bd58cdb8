// tf::Graph construction and validation: names, ops, attr defaults, types, edges, cycles.
#include "frontend/graph.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/function.h"
#include "frontend/op_catalog.h"
#include "tfjit/tensor.h"

namespace tfjit::tf {

absl::StatusOr<TensorName> ParseTensorName(absl::string_view name) {
  TensorName out;
  absl::string_view rest = name;
  if (!rest.empty() && rest.front() == '^') {
    out.is_control = true;
    rest.remove_prefix(1);
  }
  const size_t colon = rest.rfind(':');
  if (colon != absl::string_view::npos) {
    absl::string_view suffix = rest.substr(colon + 1);
    const bool digits = !suffix.empty() && std::all_of(suffix.begin(), suffix.end(), [](char c) {
      return absl::ascii_isdigit(static_cast<unsigned char>(c));
    });
    if (!digits || !absl::SimpleAtoi(suffix, &out.index)) {
      return InvalidArgument("tensor name '%s' has a malformed output index ':%s'",
                             std::string(name), std::string(suffix));
    }
    if (out.is_control) {
      return InvalidArgument("control input '%s' must not name an output index", std::string(name));
    }
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return InvalidArgument("tensor name '%s' has no node name", std::string(name));
  out.node = std::string(rest);
  return out;
}

std::string Node::DebugName() const { return absl::StrCat("'", name(), "' (", op(), ")"); }

// Builds a Graph in passes; each pass relies on the previous ones having succeeded.
class GraphBuilder {
 public:
  GraphBuilder(const tensorflow::GraphDef& def, Graph* graph) : def_(def), graph_(graph) {}

  absl::Status Run() {
    TFJIT_RETURN_IF_ERROR(AddNodes());
    TFJIT_RETURN_IF_ERROR(ResolveTypes());
    for (auto& node : graph_->nodes_) TFJIT_RETURN_IF_ERROR(ResolveCall(node.get()));
    for (auto& node : graph_->nodes_) TFJIT_RETURN_IF_ERROR(ConnectInputs(node.get()));
    return SortTopologically();
  }

 private:
  absl::Status NodeError(const Node& node, absl::Status status) {
    return AttachNode(WithContext(status, absl::StrCat("node ", node.DebugName())), node.name(),
                      node.op());
  }

  absl::Status AddNodes();
  absl::Status ResolveTypes();
  const OpDef* FunctionOp(const std::string& op);
  absl::Status ResolveCall(Node* node);
  absl::Status ConnectInputs(Node* node);
  absl::Status CheckInputType(Node* node, int slot, const std::string& input, Output producer);
  absl::Status SortTopologically();
  absl::Status CycleError(const std::vector<int>& pending);

  const tensorflow::GraphDef& def_;
  Graph* graph_;
};

absl::Status GraphBuilder::AddNodes() {
  // Unknown ops in order of first appearance, each with the nodes that use it.
  std::vector<std::pair<std::string, std::vector<std::string>>> unknown;
  std::map<std::string, size_t> unknown_index;
  for (const tensorflow::NodeDef& node_def : def_.node()) {
    const int id = static_cast<int>(graph_->nodes_.size());
    if (node_def.name().empty()) {
      return InvalidArgument("node #%d (op %s) has an empty name", id, node_def.op());
    }
    if (node_def.op().empty()) {
      return InvalidArgument("node '%s' has no op", node_def.name());
    }
    auto node = std::make_unique<Node>();
    node->id_ = id;
    node->def_ = node_def;
    node->graph_ = graph_;
    if (!graph_->by_name_.emplace(node_def.name(), node.get()).second) {
      return InvalidArgument(
          "duplicate node name '%s' (nodes #%d and #%d); node names must be "
          "unique",
          node_def.name(), graph_->by_name_[node_def.name()]->id(), id);
    }
    node->op_def_ = LookupOpDef(node_def.op());
    if (node->op_def_ == nullptr) node->op_def_ = FunctionOp(node_def.op());
    if (node->op_def_ == nullptr) {
      auto [it, inserted] = unknown_index.emplace(node_def.op(), unknown.size());
      if (inserted) unknown.push_back({node_def.op(), {}});
      unknown[it->second].second.push_back(node_def.name());
    }
    graph_->nodes_.push_back(std::move(node));
  }
  if (unknown.empty()) return absl::OkStatus();
  std::vector<std::string> parts;
  for (const auto& [op, nodes] : unknown) {
    std::vector<std::string> quoted;
    for (size_t i = 0; i < nodes.size() && i < 3; ++i)
      quoted.push_back(absl::StrCat("'", nodes[i], "'"));
    if (nodes.size() > 3) quoted.push_back(absl::StrCat("and ", nodes.size() - 3, " more"));
    parts.push_back(absl::StrCat("'", op, "' (node", nodes.size() > 1 ? "s " : " ",
                                 absl::StrJoin(quoted, ", "), ")"));
  }
  return Unimplemented("%d unknown op%s: %s; 'tfjit ops' lists the %d ops tfjit supports",
                       unknown.size(), unknown.size() > 1 ? "s" : "", absl::StrJoin(parts, ", "),
                       KnownOps().size());
}

// A direct call: the op names a library function (catalog ops win, as TF's registry does).
const OpDef* GraphBuilder::FunctionOp(const std::string& op) {
  auto it = graph_->function_ops_.find(op);
  if (it != graph_->function_ops_.end()) return it->second.get();
  const tensorflow::FunctionDef* function = graph_->FindFunction(op);
  if (function == nullptr) return nullptr;
  auto def = std::make_shared<const OpDef>(FunctionOpDef(*function));
  graph_->function_ops_[op] = def;
  return def.get();
}

// Binds call nodes to their function; NOT_FOUND names the node and the missing function.
absl::Status GraphBuilder::ResolveCall(Node* node) {
  if (!IsPartitionedCallOp(node->op())) {
    if (LookupOpDef(node->op()) == nullptr) node->function_ = graph_->FindFunction(node->op());
    return absl::OkStatus();
  }
  absl::StatusOr<const tensorflow::NameAttrList*> f = GetFuncAttr(*node, "f");
  if (!f.ok()) return NodeError(*node, f.status());
  node->function_ = graph_->FindFunction((*f)->name());
  if (node->function_ == nullptr) {
    return NodeError(*node, NotFound("calls function '%s', which is not in the graph's function "
                                     "library (%d function(s))",
                                     (*f)->name(), graph_->library_.function_size()));
  }
  const tensorflow::OpDef& sig = node->function_->signature();
  const bool flat = std::all_of(sig.output_arg().begin(), sig.output_arg().end(), [](auto& a) {
    return a.number_attr().empty() && a.type_list_attr().empty();
  });
  if (flat && sig.output_arg_size() != node->num_outputs()) {
    return NodeError(*node,
                     InvalidArgument("attr Tout lists %d type(s), but function '%s' "
                                     "returns %d output(s)",
                                     node->num_outputs(), (*f)->name(), sig.output_arg_size()));
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::ResolveTypes() {
  for (auto& node : graph_->nodes_) {
    const OpDef& op = *node->op_def_;
    auto* attrs = node->def_.mutable_attr();
    for (const AttrDefault& d : op.attr_defaults) {
      if (!attrs->contains(d.name)) (*attrs)[d.name] = d.value;
    }
    // Attrs starting with '_' (_output_shapes, _class, ...) stay in def() and are not checked.
    TFJIT_RETURN_IF_ERROR(
        ResolveArgTypes(op, node->def_, &node->input_types_, &node->output_types_));
    TFJIT_ASSIGN_OR_RETURN(node->const_inputs_,
                           FlatInputIndices(op, node->def_, op.compile_time_const_inputs));
    TFJIT_ASSIGN_OR_RETURN(node->host_inputs_,
                           FlatInputIndices(op, node->def_, op.host_memory_inputs));
    TFJIT_ASSIGN_OR_RETURN(node->host_outputs_,
                           FlatOutputIndices(op, node->def_, op.host_memory_outputs));
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::ConnectInputs(Node* node) {
  const tensorflow::NodeDef& def = node->def_;
  for (int i = 0; i < def.input_size(); ++i) {
    const std::string& input = def.input(i);
    absl::StatusOr<TensorName> parsed = ParseTensorName(input);
    if (!parsed.ok()) {
      return NodeError(*node, WithContext(parsed.status(), absl::StrCat("input ", i)));
    }
    Node* producer = graph_->FindNode(parsed->node);
    if (producer == nullptr) {
      return NodeError(*node, InvalidArgument("input %d '%s' refers to an unknown node; no node "
                                              "is named '%s'",
                                              i, input, parsed->node));
    }
    if (parsed->is_control) {
      auto& controls = node->control_inputs_;
      if (std::find(controls.begin(), controls.end(), producer) == controls.end()) {
        controls.push_back(producer);
        producer->control_consumers_.push_back(node);
      }
      continue;
    }
    if (!node->control_inputs_.empty()) {
      return NodeError(*node, InvalidArgument("data input %d '%s' comes after control input "
                                              "'^%s'; control inputs must come last",
                                              i, input, node->control_inputs_.front()->name()));
    }
    if (parsed->index >= producer->num_outputs()) {
      return NodeError(*node, InvalidArgument("input %d '%s' refers to output %d, but %s has "
                                              "%d output(s)",
                                              i, input, parsed->index, producer->DebugName(),
                                              producer->num_outputs()));
    }
    const int slot = node->num_inputs();
    TFJIT_RETURN_IF_ERROR(CheckInputType(node, slot, input, Output{producer, parsed->index}));
    node->inputs_.push_back(Output{producer, parsed->index});
    producer->data_consumers_.push_back({node, slot});
  }
  if (node->num_inputs() != static_cast<int>(node->input_types_.size())) {
    std::vector<std::string> names;
    for (const ArgDef& arg : node->op_def_->inputs) names.push_back(arg.name);
    return NodeError(
        *node, InvalidArgument("has %d data input(s) but %s takes %d (%s)", node->num_inputs(),
                               node->op(), node->input_types_.size(), absl::StrJoin(names, ", ")));
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::CheckInputType(Node* node, int slot, const std::string& input,
                                          Output producer) {
  // Too many inputs is reported once all are read (the count check names the op's args).
  if (slot >= static_cast<int>(node->input_types_.size())) return absl::OkStatus();
  const DType expected = node->input_types_[static_cast<size_t>(slot)];
  const DType actual = producer.node->output_types_[static_cast<size_t>(producer.index)];
  if (expected == actual) return absl::OkStatus();
  std::vector<int> starts, unused;
  TFJIT_RETURN_IF_ERROR(ResolveArgStarts(*node->op_def_, node->def_, &starts, &unused));
  std::string arg_name;
  for (size_t a = 0; a + 1 < starts.size(); ++a) {
    if (slot >= starts[a] && slot < starts[a + 1]) arg_name = node->op_def_->inputs[a].name;
  }
  return NodeError(
      *node,
      InvalidArgument(
          "input %d '%s' is %s (output %d of %s), but %s expects %s for arg '%s'; fix the type "
          "attrs or insert a Cast",
          slot, input, DTypeName(actual), producer.index, producer.node->DebugName(), node->op(),
          DTypeName(expected), arg_name));
}

absl::Status GraphBuilder::SortTopologically() {
  const size_t n = graph_->nodes_.size();
  std::vector<int> pending(n, 0);
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;  // smallest id first
  // TF1 loops close through NextIteration -> Merge back edges; the order ignores them (as
  // TF's executor does), so a TF1 loop sorts and any other cycle is an error.
  auto back_edge = [](const Node* producer) { return producer->op() == "NextIteration"; };
  for (auto& node : graph_->nodes_) {
    int count = 0;
    for (const Output& in : node->inputs_) count += back_edge(in.node) ? 0 : 1;
    for (const Node* in : node->control_inputs_) count += back_edge(in) ? 0 : 1;
    pending[static_cast<size_t>(node->id())] = count;
    if (count == 0) ready.push(node->id());
  }
  auto release = [&](Node* consumer) {
    if (--pending[static_cast<size_t>(consumer->id())] == 0) ready.push(consumer->id());
  };
  while (!ready.empty()) {
    Node* node = graph_->node(ready.top());
    ready.pop();
    graph_->topo_order_.push_back(node);
    if (back_edge(node)) continue;
    for (const auto& [consumer, slot] : node->data_consumers_) release(consumer);
    for (Node* consumer : node->control_consumers_) release(consumer);
  }
  if (graph_->topo_order_.size() == n) return absl::OkStatus();
  return CycleError(pending);
}

// Every node left with pending inputs has an unsorted producer, so walking producers from
// one of them must revisit a node: that loop is a cycle.
absl::Status GraphBuilder::CycleError(const std::vector<int>& pending) {
  auto unsorted_producer = [&](Node* node) -> Node* {
    for (const Output& in : node->inputs_) {
      if (pending[static_cast<size_t>(in.node->id())] > 0) return in.node;
    }
    for (Node* in : node->control_inputs_) {
      if (pending[static_cast<size_t>(in->id())] > 0) return in;
    }
    return nullptr;
  };
  Node* start = nullptr;
  for (auto& node : graph_->nodes_) {
    if (pending[static_cast<size_t>(node->id())] > 0) {
      start = node.get();
      break;
    }
  }
  std::vector<Node*> path;
  std::map<int, size_t> position;
  for (Node* cur = start; cur != nullptr && !position.contains(cur->id());
       cur = unsorted_producer(cur)) {
    position[cur->id()] = path.size();
    path.push_back(cur);
  }
  Node* repeat = unsorted_producer(path.back());
  std::vector<Node*> cycle(path.begin() + static_cast<long>(position[repeat->id()]), path.end());
  std::reverse(cycle.begin(), cycle.end());  // producer -> consumer order
  cycle.push_back(cycle.front());
  bool tf1_loop = false;
  std::vector<std::string> names;
  for (Node* node : cycle) {
    tf1_loop |= node->op() == "NextIteration" || node->op() == "Merge";
    names.push_back(node->DebugName());
  }
  std::string hint =
      tf1_loop
          ? "a TF1 loop must close through a NextIteration -> Merge edge; this cycle does not"
          : "a GraphDef must be acyclic except for TF1 loops (NextIteration -> Merge); loops need "
            "functional While or TF1 frames";
  return AttachNode(
      InvalidArgument("the graph has a cycle: %s; %s", absl::StrJoin(names, " -> "), hint),
      cycle.front()->name(), cycle.front()->op());
}

absl::StatusOr<std::unique_ptr<Graph>> Graph::Build(const tensorflow::GraphDef& graph_def,
                                                    absl::string_view source) {
  auto graph = std::make_unique<Graph>();
  graph->source_ = std::string(source);
  graph->library_ = graph_def.library();
  for (const tensorflow::FunctionDef& f : graph->library_.function()) {
    graph->functions_.emplace(f.signature().name(), &f);
  }
  graph->versions_ = graph_def.versions();
  GraphBuilder builder(graph_def, graph.get());
  absl::Status status = builder.Run();
  if (!status.ok()) return WithContext(status, absl::StrCat("graph '", source, "'"));
  return graph;
}

const tensorflow::FunctionDef* Graph::FindFunction(absl::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second;
}

Node* Graph::FindNode(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

absl::StatusOr<Output> Graph::FindOutput(absl::string_view tensor_name) const {
  TFJIT_ASSIGN_OR_RETURN(TensorName parsed, ParseTensorName(tensor_name));
  if (parsed.is_control) {
    return InvalidArgument("'%s' names a control edge, not a tensor", std::string(tensor_name));
  }
  Node* node = FindNode(parsed.node);
  if (node == nullptr) {
    return NotFound("graph '%s' has no node named '%s'", source_, parsed.node);
  }
  if (parsed.index >= node->num_outputs()) {
    return InvalidArgument("tensor '%s': %s has %d output(s)", std::string(tensor_name),
                           node->DebugName(), node->num_outputs());
  }
  return Output{node, parsed.index};
}

}  // namespace tfjit::tf
