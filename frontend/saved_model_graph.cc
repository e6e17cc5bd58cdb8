// GraphDef pruning, variable discovery and checkpoint-key tracing for the SavedModel loader
// (see saved_model_internal.h; shared/docs/formats.md 1.13 and 2.7).
#include <deque>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/op_catalog.h"
#include "frontend/saved_model_internal.h"
#include "frontend/tensor_proto.h"

namespace tfjit::tf {
namespace {

using NodeMap = absl::flat_hash_map<std::string, const tensorflow::NodeDef*>;

NodeMap IndexNodes(const google::protobuf::RepeatedPtrField<tensorflow::NodeDef>& nodes) {
  NodeMap map;
  for (const tensorflow::NodeDef& n : nodes) map[n.name()] = &n;
  return map;
}

bool IsFunction(const tensorflow::GraphDef& gd, const std::string& op) {
  for (const tensorflow::FunctionDef& f : gd.library().function()) {
    if (f.signature().name() == op) return true;
  }
  return false;
}

bool KnownOp(const tensorflow::GraphDef& gd, const std::string& op) {
  return LookupOpDef(op) != nullptr || IsFunction(gd, op);
}

// The string values of a Const node's "value" attr (e.g. RestoreV2's tensor_names).
std::vector<std::string> ConstStrings(const tensorflow::NodeDef* node) {
  std::vector<std::string> out;
  if (node == nullptr || node->op() != "Const") return out;
  auto it = node->attr().find("value");
  if (it == node->attr().end()) return out;
  for (const std::string& s : it->second.tensor().string_val()) out.push_back(s);
  return out;
}

// Index k of "node:k" (graph) or "node:out:k" (function body); 0 when absent.
int OutputIndexOf(absl::string_view tensor) {
  std::vector<absl::string_view> parts = absl::StrSplit(tensor, ':');
  int k = 0;
  if (parts.size() >= 2) (void)absl::SimpleAtoi(parts.back(), &k);
  return k;
}

// Function names a node's attrs and op refer to.
void CalledFunctions(const tensorflow::NodeDef& node, std::vector<std::string>* out) {
  out->push_back(node.op());
  for (const auto& [name, attr] : node.attr()) {
    if (attr.has_func()) out->push_back(attr.func().name());
    for (const tensorflow::NameAttrList& f : attr.list().func()) out->push_back(f.name());
  }
}

// Why a node cannot run in tfjit, looking at the node alone; empty when it can.
std::string NodeProblem(const tensorflow::GraphDef& gd, const tensorflow::NodeDef& node) {
  if (!KnownOp(gd, node.op())) {
    return absl::StrCat("node '", node.name(), "' uses op ", node.op(),
                        ", which tfjit does not support");
  }
  if (node.op() == "Placeholder") {
    return absl::StrCat("it needs a value fed to placeholder '", node.name(), "'");
  }
  for (const auto& [name, attr] : node.attr()) {
    bool string_type =
        attr.type() == tensorflow::DT_STRING || attr.tensor().dtype() == tensorflow::DT_STRING;
    for (int t : attr.list().type()) string_type = string_type || t == tensorflow::DT_STRING;
    if (string_type) {
      return absl::StrCat("node '", node.name(), "' (", node.op(),
                          ") uses strings, which tfjit's runtime cannot hold");
    }
  }
  return "";
}

}  // namespace

std::string NodeNameOf(absl::string_view tensor) {
  if (!tensor.empty() && tensor[0] == '^') tensor.remove_prefix(1);
  return std::string(tensor.substr(0, tensor.find(':')));
}

std::string WhyNotRunnable(const tensorflow::GraphDef& graph_def, const std::string& node) {
  const NodeMap nodes = IndexNodes(graph_def.node());
  std::vector<std::string> work = {node};
  absl::flat_hash_set<std::string> seen;
  while (!work.empty()) {
    const std::string name = work.back();
    work.pop_back();
    if (!seen.insert(name).second) continue;
    auto it = nodes.find(name);
    if (it == nodes.end()) return absl::StrCat("it needs node '", name, "', which is missing");
    std::string problem = NodeProblem(graph_def, *it->second);
    if (!problem.empty()) return problem;
    for (const std::string& in : it->second->input()) work.push_back(NodeNameOf(in));
  }
  return "";
}

absl::StatusOr<tensorflow::GraphDef> PruneGraphDef(const tensorflow::GraphDef& graph_def,
                                                   const PruneRoots& roots) {
  const NodeMap nodes = IndexNodes(graph_def.node());
  absl::flat_hash_set<std::string> kept;
  std::vector<std::string> work(roots.nodes.begin(), roots.nodes.end());
  for (const auto& [name, spec] : roots.signature_inputs) work.push_back(name);
  while (!work.empty()) {
    const std::string name = work.back();
    work.pop_back();
    if (kept.contains(name)) continue;
    auto it = nodes.find(name);
    if (it == nodes.end() || !KnownOp(graph_def, it->second->op())) continue;
    kept.insert(name);
    for (const std::string& in : it->second->input()) work.push_back(NodeNameOf(in));
  }
  // Fix-point: a node whose producer was dropped is replaced (signature input) or dropped.
  absl::flat_hash_map<std::string, tensorflow::NodeDef> replaced;
  for (bool changed = true; changed;) {
    changed = false;
    for (const tensorflow::NodeDef& node : graph_def.node()) {
      if (!kept.contains(node.name()) || replaced.contains(node.name())) continue;
      bool missing = false;
      for (const std::string& in : node.input())
        missing = missing || !kept.contains(NodeNameOf(in));
      if (!missing) continue;
      changed = true;
      auto spec = roots.signature_inputs.find(node.name());
      if (spec != roots.signature_inputs.end() && spec->second.dtype != DType::kInvalid) {
        tensorflow::NodeDef ph;
        ph.set_name(node.name());
        ph.set_op("Placeholder");
        ph.set_device(node.device());
        (*ph.mutable_attr())["dtype"].set_type(
            static_cast<tensorflow::DataType>(DTypeToTfEnum(spec->second.dtype)));
        tensorflow::TensorShapeProto* shape = (*ph.mutable_attr())["shape"].mutable_shape();
        if (spec->second.shape.unknown_rank) {
          shape->set_unknown_rank(true);
        } else {
          *shape = ShapeToProto(spec->second.shape.dims);
        }
        replaced[node.name()] = std::move(ph);
      } else {
        kept.erase(node.name());
      }
    }
  }
  tensorflow::GraphDef out;
  *out.mutable_versions() = graph_def.versions();
  std::vector<std::string> called;
  for (const tensorflow::NodeDef& node : graph_def.node()) {
    if (!kept.contains(node.name())) continue;
    auto r = replaced.find(node.name());
    const tensorflow::NodeDef& def = r != replaced.end() ? r->second : node;
    *out.add_node() = def;
    CalledFunctions(def, &called);
  }
  // Functions reachable from the kept nodes, through function bodies too.
  absl::flat_hash_map<std::string, const tensorflow::FunctionDef*> functions;
  for (const tensorflow::FunctionDef& f : graph_def.library().function()) {
    functions[f.signature().name()] = &f;
  }
  std::set<std::string> used;
  while (!called.empty()) {
    const std::string name = called.back();
    called.pop_back();
    auto f = functions.find(name);
    if (f == functions.end() || !used.insert(name).second) continue;
    for (const tensorflow::NodeDef& n : f->second->node_def()) CalledFunctions(n, &called);
  }
  for (const tensorflow::FunctionDef& f : graph_def.library().function()) {
    if (used.count(f.signature().name())) *out.mutable_library()->add_function() = f;
  }
  for (const tensorflow::GradientDef& g : graph_def.library().gradient()) {
    if (used.count(g.function_name())) *out.mutable_library()->add_gradient() = g;
  }
  return out;
}

std::vector<VariableNode> FindVariables(const tensorflow::GraphDef& graph_def) {
  std::vector<VariableNode> out;
  for (const tensorflow::NodeDef& node : graph_def.node()) {
    if (node.op() != "VariableV2" && node.op() != "Variable" && node.op() != "VarHandleOp") {
      continue;
    }
    auto dtype_attr = node.attr().find("dtype");
    if (dtype_attr == node.attr().end()) continue;
    const std::optional<DType> dtype = DTypeFromTfEnum(dtype_attr->second.type());
    if (!dtype.has_value() || !IsNumericOrComplexDType(*dtype)) continue;
    VariableNode v;
    v.name = node.name();
    v.op = node.op();
    v.dtype = *dtype;
    auto shared = node.attr().find("shared_name");
    if (shared != node.attr().end()) v.shared_name = shared->second.s();
    out.push_back(std::move(v));
  }
  return out;
}

namespace {

// TF1: Assign(var, RestoreV2:k) in the graph, with RestoreV2's tensor_names a Const.
void TraceTf1Restore(const tensorflow::GraphDef& gd, std::map<std::string, std::string>* keys) {
  const NodeMap nodes = IndexNodes(gd.node());
  for (const tensorflow::NodeDef& node : gd.node()) {
    if (node.op() != "Assign" || node.input_size() < 2) continue;
    auto restore = nodes.find(NodeNameOf(node.input(1)));
    if (restore == nodes.end() || restore->second->op() != "RestoreV2" ||
        restore->second->input_size() < 2) {
      continue;
    }
    auto names_node = nodes.find(NodeNameOf(restore->second->input(1)));
    if (names_node == nodes.end()) continue;
    const std::vector<std::string> names = ConstStrings(names_node->second);
    const int k = OutputIndexOf(node.input(1));
    if (k >= 0 && k < static_cast<int>(names.size())) {
      keys->emplace(NodeNameOf(node.input(0)), names[static_cast<size_t>(k)]);
    }
  }
}

// TF2: the restore op calls a function whose AssignVariableOp(arg_j, Identity(RestoreV2:k))
// writes tensor_names[k] into the variable passed as the call's input j.
void TraceTf2Restore(const tensorflow::MetaGraphDef& mg, std::map<std::string, std::string>* keys) {
  const tensorflow::GraphDef& gd = mg.graph_def();
  const NodeMap nodes = IndexNodes(gd.node());
  auto call = nodes.find(NodeNameOf(mg.saver_def().restore_op_name()));
  if (call == nodes.end()) return;
  std::string fname = call->second->op();
  auto f_attr = call->second->attr().find("f");
  if (f_attr != call->second->attr().end()) fname = f_attr->second.func().name();
  const tensorflow::FunctionDef* fn = nullptr;
  for (const tensorflow::FunctionDef& f : gd.library().function()) {
    if (f.signature().name() == fname) fn = &f;
  }
  if (fn == nullptr) return;
  const NodeMap body = IndexNodes(fn->node_def());
  absl::flat_hash_map<std::string, int> arg_index;
  for (int i = 0; i < fn->signature().input_arg_size(); ++i) {
    arg_index[fn->signature().input_arg(i).name()] = i;
  }
  for (const tensorflow::NodeDef& node : fn->node_def()) {
    if (node.op() != "AssignVariableOp" || node.input_size() < 2) continue;
    auto arg = arg_index.find(NodeNameOf(node.input(0)));
    if (arg == arg_index.end() || arg->second >= call->second->input_size()) continue;
    std::string value = node.input(1);
    for (int hops = 0; hops < 8; ++hops) {  // through Identity chains
      auto producer = body.find(NodeNameOf(value));
      if (producer == body.end()) break;
      if (producer->second->op() == "RestoreV2" && producer->second->input_size() >= 2) {
        auto names_node = body.find(NodeNameOf(producer->second->input(1)));
        if (names_node == body.end()) break;
        const std::vector<std::string> names = ConstStrings(names_node->second);
        const int k = OutputIndexOf(value);
        if (k >= 0 && k < static_cast<int>(names.size())) {
          keys->emplace(NodeNameOf(call->second->input(arg->second)),
                        names[static_cast<size_t>(k)]);
        }
        break;
      }
      if (producer->second->op() != "Identity" || producer->second->input_size() < 1) break;
      value = producer->second->input(0);
    }
  }
}

// TF2 object-based key of each SavedVariable: its path from the root, each local name escaped
// ('.' -> '..', '/' -> '.S'), then "/.ATTRIBUTES/VARIABLE_VALUE". Keyed by SavedVariable.name.
std::map<std::string, std::string> ObjectGraphKeys(const tensorflow::SavedObjectGraph& og) {
  std::map<std::string, std::string> out;
  if (og.nodes_size() == 0) return out;
  std::vector<std::string> path(static_cast<size_t>(og.nodes_size()));
  std::vector<bool> seen(path.size(), false);
  std::deque<int> queue = {0};
  seen[0] = true;
  while (!queue.empty()) {
    const int id = queue.front();
    queue.pop_front();
    const tensorflow::SavedObject& obj = og.nodes(id);
    if (obj.has_variable() && id != 0) {
      out.emplace(obj.variable().name(),
                  absl::StrCat(path[static_cast<size_t>(id)], "/.ATTRIBUTES/VARIABLE_VALUE"));
    }
    for (const auto& child : obj.children()) {
      const int c = child.node_id();
      if (c < 0 || c >= og.nodes_size() || seen[static_cast<size_t>(c)]) continue;
      seen[static_cast<size_t>(c)] = true;
      std::string escaped;
      for (char ch : child.local_name()) {
        if (ch == '.')
          escaped += "..";
        else if (ch == '/')
          escaped += ".S";
        else
          escaped += ch;
      }
      path[static_cast<size_t>(c)] =
          id == 0 ? escaped : absl::StrCat(path[static_cast<size_t>(id)], "/", escaped);
      queue.push_back(c);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> CheckpointKeys(
    const tensorflow::MetaGraphDef& meta_graph, const std::vector<VariableNode>& variables,
    const BundleReader& bundle) {
  std::map<std::string, std::string> traced;
  TraceTf1Restore(meta_graph.graph_def(), &traced);
  TraceTf2Restore(meta_graph, &traced);
  const std::map<std::string, std::string> by_object =
      ObjectGraphKeys(meta_graph.object_graph_def());
  std::map<std::string, std::string> keys;
  for (const VariableNode& v : variables) {
    std::vector<std::string> candidates;
    if (auto it = traced.find(v.name); it != traced.end()) candidates.push_back(it->second);
    candidates.push_back(v.name);
    if (!v.shared_name.empty()) candidates.push_back(v.shared_name);
    for (const std::string& n : {v.shared_name, v.name}) {
      if (auto it = by_object.find(n); it != by_object.end()) candidates.push_back(it->second);
    }
    for (const std::string& c : candidates) {
      if (bundle.Contains(c)) {
        keys[v.name] = c;
        break;
      }
    }
    if (!keys.count(v.name)) {
      std::vector<std::string> all = bundle.ListKeys();
      return NotFound(
          "checkpoint '%s' has no value for variable '%s' (%s); tried key%s '%s'; "
          "the checkpoint has %s",
          bundle.index_path(), v.name, v.op, candidates.size() > 1 ? "s" : "",
          absl::StrJoin(candidates, "', '"),
          all.empty() ? std::string("no tensors")
                      : absl::StrCat("'", absl::StrJoin(all, "', '"), "'"));
    }
  }
  return keys;
}

std::string AddRestoreNodes(const VariableNode& variable, const std::vector<int64_t>& dims,
                            tensorflow::GraphDef* graph_def) {
  const std::string placeholder = absl::StrCat(variable.name, kLoaderNodeSuffix);
  const auto tf_dtype = static_cast<tensorflow::DataType>(DTypeToTfEnum(variable.dtype));
  tensorflow::NodeDef* ph = graph_def->add_node();
  ph->set_name(placeholder);
  ph->set_op("Placeholder");
  (*ph->mutable_attr())["dtype"].set_type(tf_dtype);
  *(*ph->mutable_attr())["shape"].mutable_shape() = ShapeToProto(dims);
  tensorflow::NodeDef* assign = graph_def->add_node();
  assign->set_name(absl::StrCat(placeholder, "/assign"));
  assign->add_input(variable.name);
  assign->add_input(placeholder);
  // The variable's current value, for writing the checkpoint back (Session::SaveVariables).
  tensorflow::NodeDef* read = graph_def->add_node();
  read->set_name(absl::StrCat(placeholder, "/read"));
  read->add_input(variable.name);
  if (variable.op == "VarHandleOp") {
    assign->set_op("AssignVariableOp");
    (*assign->mutable_attr())["dtype"].set_type(tf_dtype);
    read->set_op("ReadVariableOp");
    (*read->mutable_attr())["dtype"].set_type(tf_dtype);
  } else {
    assign->set_op("Assign");
    (*assign->mutable_attr())["T"].set_type(tf_dtype);
    (*assign->mutable_attr())["validate_shape"].set_b(true);
    (*assign->mutable_attr())["use_locking"].set_b(true);
    read->set_op("Identity");
    (*read->mutable_attr())["T"].set_type(tf_dtype);
  }
  return placeholder;
}

}  // namespace tfjit::tf
