// Op catalog lookup and arg resolution: flat input/output types and index ranges of a NodeDef.
#include "frontend/op_catalog.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf {
namespace {

const absl::flat_hash_map<std::string, OpDef>& Catalog() {
  static const auto* catalog = [] {
    auto* map = new absl::flat_hash_map<std::string, OpDef>();
    for (OpDef& op : BuiltinOpDefs()) {
      std::string name = op.name;
      map->emplace(std::move(name), std::move(op));
    }
    return map;
  }();
  return *catalog;
}

absl::Status NodeError(const tensorflow::NodeDef& def, absl::Status status) {
  return AttachNode(WithContext(status, absl::StrCat("node '", def.name(), "' (", def.op(), ")")),
                    def.name(), def.op());
}

// How many flat elements one arg has for this node (1 unless a list).
absl::StatusOr<int> ArgLength(const ArgDef& arg, const tensorflow::NodeDef& def) {
  if (!arg.number_attr.empty()) {
    TFJIT_ASSIGN_OR_RETURN(int64_t n, GetIntAttr(def, arg.number_attr));
    if (n < 0 || n > (1 << 20)) {
      return NodeError(def, InvalidArgument("attr '%s' = %d is not a valid length for arg '%s'",
                                            arg.number_attr, n, arg.name));
    }
    return static_cast<int>(n);
  }
  if (!arg.type_list_attr.empty()) {
    TFJIT_ASSIGN_OR_RETURN(std::vector<DType> types, GetTypeListAttr(def, arg.type_list_attr));
    return static_cast<int>(types.size());
  }
  return 1;
}

bool def_has_attr(const tensorflow::NodeDef& def, const std::string& name) {
  return def.attr().find(name) != def.attr().end();
}

absl::Status AppendArgTypes(const ArgDef& arg, const tensorflow::NodeDef& def,
                            std::vector<DType>* types) {
  if (!arg.type_list_attr.empty()) {
    TFJIT_ASSIGN_OR_RETURN(std::vector<DType> list, GetTypeListAttr(def, arg.type_list_attr));
    types->insert(types->end(), list.begin(), list.end());
    return absl::OkStatus();
  }
  DType type = arg.fixed_type;
  if (!arg.type_attr.empty()) {
    TFJIT_ASSIGN_OR_RETURN(type, GetTypeAttr(def, arg.type_attr));
  }
  TFJIT_ASSIGN_OR_RETURN(int n, ArgLength(arg, def));
  types->insert(types->end(), static_cast<size_t>(n), type);
  return absl::OkStatus();
}

absl::Status ArgStarts(const std::vector<ArgDef>& args, const tensorflow::NodeDef& def,
                       std::vector<int>* starts) {
  starts->assign(1, 0);
  for (const ArgDef& arg : args) {
    TFJIT_ASSIGN_OR_RETURN(int n, ArgLength(arg, def));
    starts->push_back(starts->back() + n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> FlatIndices(const std::vector<ArgDef>& args,
                                             const tensorflow::NodeDef& def,
                                             const std::vector<int>& arg_indices) {
  std::vector<int> starts;
  TFJIT_RETURN_IF_ERROR(ArgStarts(args, def, &starts));
  std::vector<int> flat;
  for (int a : arg_indices) {
    if (a < 0 || a >= static_cast<int>(args.size())) {
      return Internal("op %s has no arg %d", def.op(), a);
    }
    for (int i = starts[static_cast<size_t>(a)]; i < starts[static_cast<size_t>(a) + 1]; ++i) {
      flat.push_back(i);
    }
  }
  return flat;
}

}  // namespace

const OpDef* LookupOpDef(absl::string_view op) {
  auto it = Catalog().find(op);
  return it == Catalog().end() ? nullptr : &it->second;
}

std::vector<std::string> KnownOps() {
  std::vector<std::string> names;
  names.reserve(Catalog().size());
  for (const auto& [name, op] : Catalog()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status ResolveArgTypes(const OpDef& op, const tensorflow::NodeDef& node_def,
                             std::vector<DType>* input_types, std::vector<DType>* output_types) {
  input_types->clear();
  output_types->clear();
  for (const TypeConstraint& c : op.type_constraints) {
    if (!def_has_attr(node_def, c.attr)) continue;  // a missing attr fails below, by name
    // A type attr, or a list(type) attr whose every entry is constrained (ParseExample's).
    std::vector<DType> types;
    if (node_def.attr().at(c.attr).value_case() == tensorflow::AttrValue::kList) {
      TFJIT_ASSIGN_OR_RETURN(types, GetTypeListAttr(node_def, c.attr));
    } else {
      TFJIT_ASSIGN_OR_RETURN(DType t, GetTypeAttr(node_def, c.attr));
      types.push_back(t);
    }
    for (DType t : types) {
      if (std::find(c.allowed.begin(), c.allowed.end(), t) != c.allowed.end()) continue;
      std::vector<std::string> names;
      for (DType a : c.allowed) names.push_back(DTypeName(a));
      return NodeError(
          node_def,
          InvalidArgument("value for attr '%s' of %s is not in the list of allowed "
                          "values: %s; TF registers no %s kernel for this dtype "
                          "('tfjit ops %s' lists the dtypes)",
                          c.attr, DTypeName(t), absl::StrJoin(names, ", "), op.name, op.name));
    }
  }
  for (const ArgDef& arg : op.inputs) {
    TFJIT_RETURN_IF_ERROR(AppendArgTypes(arg, node_def, input_types));
  }
  for (const ArgDef& arg : op.outputs) {
    TFJIT_RETURN_IF_ERROR(AppendArgTypes(arg, node_def, output_types));
  }
  return absl::OkStatus();
}

absl::Status ResolveArgStarts(const OpDef& op, const tensorflow::NodeDef& node_def,
                              std::vector<int>* input_starts, std::vector<int>* output_starts) {
  TFJIT_RETURN_IF_ERROR(ArgStarts(op.inputs, node_def, input_starts));
  return ArgStarts(op.outputs, node_def, output_starts);
}

absl::StatusOr<std::vector<int>> FlatInputIndices(const OpDef& op,
                                                  const tensorflow::NodeDef& node_def,
                                                  const std::vector<int>& arg_indices) {
  return FlatIndices(op.inputs, node_def, arg_indices);
}

absl::StatusOr<std::vector<int>> FlatOutputIndices(const OpDef& op,
                                                   const tensorflow::NodeDef& node_def,
                                                   const std::vector<int>& arg_indices) {
  return FlatIndices(op.outputs, node_def, arg_indices);
}

absl::StatusOr<int> FlatOutputIndex(const OpDef& op, const tensorflow::NodeDef& node_def,
                                    absl::string_view output_arg, int index) {
  std::vector<int> starts;
  TFJIT_RETURN_IF_ERROR(ArgStarts(op.outputs, node_def, &starts));
  for (size_t a = 0; a < op.outputs.size(); ++a) {
    if (op.outputs[a].name != output_arg) continue;
    const int length = starts[a + 1] - starts[a];
    if (index < 0 || index >= length) {
      return NodeError(node_def, InvalidArgument("output '%s:%d' is out of range: '%s' has %d "
                                                 "element(s)",
                                                 std::string(output_arg), index,
                                                 std::string(output_arg), length));
    }
    return starts[a] + index;
  }
  std::string names;
  for (const ArgDef& arg : op.outputs) absl::StrAppend(&names, names.empty() ? "" : ", ", arg.name);
  return NodeError(node_def, InvalidArgument("op %s has no output '%s' (its outputs: %s)", op.name,
                                             std::string(output_arg), names));
}

}  // namespace tfjit::tf
