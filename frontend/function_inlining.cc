// InlineCalls: the calls of a function body spliced into it (function.h), so that a compiled
// function is one unit however its Python code was split into functions.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/function.h"

namespace tfjit::tf {
namespace {

// The function a NodeDef calls and the attrs it is instantiated with, or null.
const tensorflow::FunctionDef* CalledFunction(const tensorflow::FunctionDefLibrary& library,
                                              const tensorflow::NodeDef& node, AttrMap* attrs) {
  if (IsPartitionedCallOp(node.op())) {
    auto f = node.attr().find("f");
    if (f == node.attr().end() || !f->second.has_func()) return nullptr;
    *attrs = f->second.func().attr();
    return FindFunction(library, f->second.func().name());
  }
  const tensorflow::FunctionDef* fn = FindFunction(library, node.op());
  if (fn == nullptr) return nullptr;
  attrs->clear();
  for (const auto& [name, value] : node.attr()) {
    if (!name.empty() && name.front() != '_') (*attrs)[name] = value;
  }
  return fn;
}

// Whether `from` calls, directly or through other functions, one of `targets`.
bool CallsAnyOf(const tensorflow::FunctionDefLibrary& library, const std::string& from,
                const std::vector<std::string>& targets) {
  absl::flat_hash_set<std::string> seen;
  std::vector<std::string> work = {from};
  while (!work.empty()) {
    const std::string name = work.back();
    work.pop_back();
    if (!seen.insert(name).second) continue;
    const tensorflow::FunctionDef* fn = FindFunction(library, name);
    if (fn == nullptr) continue;
    for (const tensorflow::NodeDef& node : fn->node_def()) {
      AttrMap attrs;
      const tensorflow::FunctionDef* callee = CalledFunction(library, node, &attrs);
      if (callee == nullptr) continue;
      const std::string& callee_name = callee->signature().name();
      if (std::find(targets.begin(), targets.end(), callee_name) != targets.end()) return true;
      work.push_back(callee_name);
    }
  }
  return false;
}

// "x:k" or "^x" of the callee, as named once inlined under `prefix`.
std::string Prefixed(absl::string_view prefix, absl::string_view ref) {
  if (!ref.empty() && ref.front() == '^') return absl::StrCat("^", prefix, ref.substr(1));
  return absl::StrCat(prefix, ref);
}

absl::string_view NodeOf(absl::string_view tensor) { return tensor.substr(0, tensor.find(':')); }

}  // namespace

absl::Status InlineCalls(const tensorflow::FunctionDefLibrary& library,
                         const tensorflow::VersionDef& versions,
                         const std::vector<std::string>& callers, tensorflow::GraphDef* def,
                         bool keep_must_compile_calls) {
  absl::flat_hash_set<std::string> names;
  for (const tensorflow::NodeDef& n : def->node()) names.insert(n.name());
  // Per node: the functions it was inlined from, outermost first (recursion stops there).
  std::vector<std::vector<std::string>> paths(static_cast<size_t>(def->node_size()), callers);
  // Nodes appended by an inlining are visited too: their calls are inlined in turn.
  for (int i = 0; i < def->node_size(); ++i) {
    AttrMap attrs;
    const tensorflow::FunctionDef* fn = CalledFunction(library, def->node(i), &attrs);
    if (fn == nullptr || MustCompileAttr(*fn) == std::optional<bool>(false)) continue;
    if (keep_must_compile_calls) {
      auto call_attr = def->node(i).attr().find("_XlaMustCompile");
      const bool call_must = call_attr != def->node(i).attr().end() &&
                             call_attr->second.value_case() == tensorflow::AttrValue::kB &&
                             call_attr->second.b();
      if (MustCompileAttr(*fn).value_or(false) || call_must) continue;
    }
    const std::string& callee = fn->signature().name();
    std::vector<std::string> path = paths[static_cast<size_t>(i)];
    if (std::find(path.begin(), path.end(), callee) != path.end()) continue;
    // A callee on a cycle back to the path stays a call too, so the runtime's recursion error
    // names the whole cycle ("fa -> fb -> fa").
    if (CallsAnyOf(library, callee, path)) continue;
    path.push_back(callee);
    const tensorflow::NodeDef call = def->node(i);
    absl::StatusOr<FunctionBody> body = InstantiateFunction(library, versions, callee, attrs);
    if (!body.ok()) {
      return WithContext(body.status(), absl::StrCat("inlining function '", callee,
                                                     "' called by node '", call.name(), "'"));
    }
    std::vector<std::string> data_inputs, control_inputs;
    for (const std::string& in : call.input()) {
      (!in.empty() && in.front() == '^' ? control_inputs : data_inputs).push_back(in);
    }
    if (data_inputs.size() != body->inputs.size()) {
      return InvalidArgument("node '%s' calls function '%s' with %d inputs; it takes %d",
                             call.name(), callee, data_inputs.size(), body->inputs.size());
    }
    // The callee's nodes go under "<call>/" (a fresh prefix should a name be taken).
    std::string prefix = absl::StrCat(call.name(), "/");
    auto prefix_is_free = [&](const std::string& p) {
      for (const auto& node : body->graph->nodes()) {
        if (names.contains(absl::StrCat(p, node->name()))) return false;
      }
      return true;
    };
    for (int k = 1; !prefix_is_free(prefix); ++k) {
      prefix = absl::StrCat(call.name(), "/_inlined", k, "/");
    }
    absl::flat_hash_map<std::string, size_t> arg_index;
    for (size_t k = 0; k < body->inputs.size(); ++k) {
      arg_index[std::string(NodeOf(body->inputs[k]))] = k;
    }
    const std::string sink(NodeOf(body->control_sink));
    for (const auto& node : body->graph->nodes()) {
      if (!sink.empty() && node->name() == sink) continue;
      tensorflow::NodeDef inlined = node->def();
      inlined.set_name(absl::StrCat(prefix, node->name()));
      if (inlined.device().empty()) inlined.set_device(call.device());
      inlined.clear_input();
      auto arg = arg_index.find(node->name());
      if (arg != arg_index.end()) {
        const DType type = node->output_types()[0];
        inlined.set_op("Identity");
        inlined.clear_attr();
        (*inlined.mutable_attr())["T"].set_type(
            static_cast<tensorflow::DataType>(DTypeToTfEnum(type)));
        inlined.add_input(data_inputs[arg->second]);
      } else {
        for (const std::string& in : node->def().input()) inlined.add_input(Prefixed(prefix, in));
      }
      if (arg != arg_index.end() || node->def().input_size() == 0) {
        for (const std::string& c : control_inputs) inlined.add_input(c);
      }
      names.insert(inlined.name());
      *def->add_node() = std::move(inlined);
      paths.push_back(path);
    }
    // The call node becomes the callee's outputs under its own name.
    tensorflow::NodeDef outputs;
    outputs.set_name(call.name());
    outputs.set_device(call.device());
    tensorflow::AttrValue types;
    for (const std::string& out : body->outputs) {
      TFJIT_ASSIGN_OR_RETURN(Output o, body->graph->FindOutput(out));
      types.mutable_list()->add_type(static_cast<tensorflow::DataType>(
          DTypeToTfEnum(o.node->output_types()[static_cast<size_t>(o.index)])));
      outputs.add_input(Prefixed(prefix, out));
    }
    if (body->outputs.empty()) {
      outputs.set_op("NoOp");
    } else if (body->outputs.size() == 1) {
      outputs.set_op("Identity");
      (*outputs.mutable_attr())["T"].set_type(types.list().type(0));
    } else {
      outputs.set_op("IdentityN");
      (*outputs.mutable_attr())["T"] = types;
    }
    for (const std::string& c : body->control_outputs) {
      outputs.add_input(absl::StrCat("^", prefix, c));
    }
    *def->mutable_node(i) = std::move(outputs);
  }
  return absl::OkStatus();
}

}  // namespace tfjit::tf
