// FunctionDef instantiation: arg placeholders, body references (`node:out_arg:idx`, `arg`,
// `^node`; formats.md 1.7) rewritten to GraphDef syntax, attr placeholders, rets, control rets.
#include "frontend/function.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf {
namespace {

using tensorflow::AttrValue;

const AttrValue* FindIn(const AttrMap& attrs, const std::string& name) {
  auto it = attrs.find(name);
  return it == attrs.end() ? nullptr : &it->second;
}

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

// Replaces `placeholder` attr values (and those nested in func attrs) with the call's attrs.
absl::Status Substitute(AttrValue* value, const AttrMap& attrs, const std::string& function,
                        const std::string& node, const std::string& attr) {
  if (value->value_case() == AttrValue::kPlaceholder) {
    const AttrValue* bound = FindIn(attrs, value->placeholder());
    if (bound == nullptr) {
      return InvalidArgument(
          "function '%s': node '%s' attr '%s' takes the value of function "
          "attr '%s', which the call does not set",
          function, node, attr, value->placeholder());
    }
    *value = *bound;
    return absl::OkStatus();
  }
  auto substitute_func = [&](tensorflow::NameAttrList* func) -> absl::Status {
    for (auto& [name, nested] : *func->mutable_attr()) {
      TFJIT_RETURN_IF_ERROR(Substitute(&nested, attrs, function, node, attr));
    }
    return absl::OkStatus();
  };
  if (value->value_case() == AttrValue::kFunc) return substitute_func(value->mutable_func());
  if (value->value_case() == AttrValue::kList) {
    for (auto& func : *value->mutable_list()->mutable_func()) {
      TFJIT_RETURN_IF_ERROR(substitute_func(&func));
    }
  }
  return absl::OkStatus();
}

// Builds the GraphDef of one instantiation.
class BodyBuilder {
 public:
  BodyBuilder(const tensorflow::FunctionDefLibrary& library, const tensorflow::FunctionDef& fn,
              AttrMap attrs)
      : library_(library), fn_(fn), name_(fn.signature().name()), attrs_(std::move(attrs)) {}

  absl::Status Run(tensorflow::GraphDef* def, FunctionBody* body) {
    def_ = def;
    TFJIT_RETURN_IF_ERROR(AddArgs(body));
    TFJIT_RETURN_IF_ERROR(AddNodes());
    for (int i = first_body_node_; i < def_->node_size(); ++i) {
      TFJIT_RETURN_IF_ERROR(RewriteInputs(def_->mutable_node(i)));
    }
    TFJIT_RETURN_IF_ERROR(AddRets(body));
    return AddControlRets(body);
  }

 private:
  absl::StatusOr<std::vector<int>> ArgTypes(const tensorflow::OpDef::ArgDef& arg, bool* is_list);
  absl::Status AddArgs(FunctionBody* body);
  absl::Status AddNodes();
  absl::Status RewriteInputs(tensorflow::NodeDef* node);
  absl::StatusOr<std::vector<std::string>> Resolve(const std::string& ref,
                                                   const std::string& where);
  absl::Status AddRets(FunctionBody* body);
  absl::Status AddControlRets(FunctionBody* body);

  struct BodyNode {
    tensorflow::NodeDef* def = nullptr;
    const OpDef* op = nullptr;
  };
  const tensorflow::FunctionDefLibrary& library_;
  const tensorflow::FunctionDef& fn_;
  std::string name_;
  AttrMap attrs_;
  tensorflow::GraphDef* def_ = nullptr;
  int first_body_node_ = 0;
  std::map<std::string, std::vector<std::string>> args_;  // arg name -> placeholder tensors
  absl::flat_hash_map<std::string, BodyNode> nodes_;
  std::vector<std::unique_ptr<OpDef>> function_ops_;  // signatures of directly called functions
};

// The TF DataType enums of one arg (several for a list arg), from the call's attrs.
absl::StatusOr<std::vector<int>> BodyBuilder::ArgTypes(const tensorflow::OpDef::ArgDef& arg,
                                                       bool* is_list) {
  auto attr = [&](const std::string& attr_name, AttrValue::ValueCase kind,
                  const char* kind_name) -> absl::StatusOr<const AttrValue*> {
    const AttrValue* v = FindIn(attrs_, attr_name);
    if (v == nullptr || v->value_case() != kind) {
      return InvalidArgument(
          "function '%s': input arg '%s' needs attr '%s' (%s), which the "
          "call %s",
          name_, arg.name(), attr_name, kind_name,
          v == nullptr ? "does not set" : "sets to another kind");
    }
    return v;
  };
  *is_list = !arg.number_attr().empty() || !arg.type_list_attr().empty();
  if (!arg.type_list_attr().empty()) {
    TFJIT_ASSIGN_OR_RETURN(const AttrValue* v,
                           attr(arg.type_list_attr(), AttrValue::kList, "list(type)"));
    return std::vector<int>(v->list().type().begin(), v->list().type().end());
  }
  int type = arg.type();
  if (!arg.type_attr().empty()) {
    TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, attr(arg.type_attr(), AttrValue::kType, "type"));
    type = v->type();
  }
  if (type == 0) {
    return InvalidArgument("function '%s': input arg '%s' has no type", name_, arg.name());
  }
  int64_t n = 1;
  if (!arg.number_attr().empty()) {
    TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, attr(arg.number_attr(), AttrValue::kI, "int"));
    n = v->i();
    if (n < 0 || n > (1 << 20)) {
      return InvalidArgument("function '%s': input arg '%s' has length attr '%s' = %d", name_,
                             arg.name(), arg.number_attr(), n);
    }
  }
  return std::vector<int>(static_cast<size_t>(n), type >= 100 ? type - 100 : type);
}

absl::Status BodyBuilder::AddArgs(FunctionBody* body) {
  const auto& inputs = fn_.signature().input_arg();
  for (int i = 0; i < inputs.size(); ++i) {
    const tensorflow::OpDef::ArgDef& arg = inputs[i];
    bool is_list = false;
    TFJIT_ASSIGN_OR_RETURN(std::vector<int> types, ArgTypes(arg, &is_list));
    if (args_.contains(arg.name())) {
      return InvalidArgument("function '%s': two input args are named '%s'", name_, arg.name());
    }
    // Shapes TF recorded for the arg (`_output_shapes`); unknown rank otherwise.
    const tensorflow::TensorShapeProto* shape = nullptr;
    auto arg_attr = fn_.arg_attr().find(static_cast<uint32_t>(i));
    if (!is_list && arg_attr != fn_.arg_attr().end()) {
      auto shapes = arg_attr->second.attr().find("_output_shapes");
      if (shapes != arg_attr->second.attr().end() && shapes->second.list().shape_size() > 0) {
        shape = &shapes->second.list().shape(0);
      }
    }
    std::vector<std::string>& tensors = args_[arg.name()];
    for (size_t k = 0; k < types.size(); ++k) {
      tensorflow::NodeDef* node = def_->add_node();
      node->set_name(is_list ? absl::StrCat(arg.name(), "_", k) : arg.name());
      node->set_op("Placeholder");
      (*node->mutable_attr())["dtype"].set_type(static_cast<tensorflow::DataType>(types[k]));
      tensorflow::TensorShapeProto* out = (*node->mutable_attr())["shape"].mutable_shape();
      if (shape != nullptr) {
        *out = *shape;
      } else {
        out->set_unknown_rank(true);
      }
      tensors.push_back(absl::StrCat(node->name(), ":0"));
      body->inputs.push_back(tensors.back());
    }
  }
  first_body_node_ = def_->node_size();
  return absl::OkStatus();
}

absl::Status BodyBuilder::AddNodes() {
  for (const tensorflow::NodeDef& source : fn_.node_def()) {
    tensorflow::NodeDef* node = def_->add_node();
    *node = source;
    for (auto& [attr_name, value] : *node->mutable_attr()) {
      TFJIT_RETURN_IF_ERROR(Substitute(&value, attrs_, name_, node->name(), attr_name));
    }
    const OpDef* op = LookupOpDef(node->op());
    if (op == nullptr) {
      if (const tensorflow::FunctionDef* callee = FindFunction(library_, node->op())) {
        function_ops_.push_back(std::make_unique<OpDef>(FunctionOpDef(*callee)));
        op = function_ops_.back().get();
      }
    }
    // Defaults are needed now: list lengths decide the flat index of `node:out_arg:idx`.
    if (op != nullptr) {
      for (const AttrDefault& d : op->attr_defaults) {
        if (!node->attr().contains(d.name)) (*node->mutable_attr())[d.name] = d.value;
      }
    }
    if (args_.contains(node->name()) || !nodes_.emplace(node->name(), BodyNode{node, op}).second) {
      return InvalidArgument(
          "function '%s': node name '%s' is used twice (node names and "
          "input arg names must be unique)",
          name_, node->name());
    }
  }
  return absl::OkStatus();
}

absl::Status BodyBuilder::RewriteInputs(tensorflow::NodeDef* node) {
  std::vector<std::string> rewritten;
  for (int i = 0; i < node->input_size(); ++i) {
    const std::string& ref = node->input(i);
    if (!ref.empty() && ref.front() == '^') {
      const std::string target = ref.substr(1);
      auto arg = args_.find(target);
      if (arg == args_.end()) {
        if (!nodes_.contains(target)) {
          return InvalidArgument(
              "function '%s': node '%s' control input %d '%s' names no node "
              "of the body",
              name_, node->name(), i, ref);
        }
        rewritten.push_back(ref);
        continue;
      }
      for (const std::string& t : arg->second) {
        rewritten.push_back(absl::StrCat("^", t.substr(0, t.rfind(':'))));
      }
      continue;
    }
    TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> tensors,
                           Resolve(ref, absl::StrCat("node '", node->name(), "' input ", i)));
    rewritten.insert(rewritten.end(), tensors.begin(), tensors.end());
  }
  node->clear_input();
  for (std::string& r : rewritten) node->add_input(std::move(r));
  return absl::OkStatus();
}

// One body reference as GraphDef tensor names (an arg that is a list yields all elements).
absl::StatusOr<std::vector<std::string>> BodyBuilder::Resolve(const std::string& ref,
                                                              const std::string& where) {
  std::vector<std::string> parts = absl::StrSplit(ref, ':');
  auto bad = [&](absl::string_view why) {
    return InvalidArgument("function '%s': %s '%s' %s", name_, where, ref, std::string(why));
  };
  auto arg = args_.find(parts[0]);
  if (arg != args_.end()) {
    if (parts.size() == 1) return arg->second;
    int index = -1;
    if (parts.size() == 2 && AllDigits(parts[1]) && absl::SimpleAtoi(parts[1], &index) &&
        index < static_cast<int>(arg->second.size())) {
      return std::vector<std::string>{arg->second[static_cast<size_t>(index)]};
    }
    return bad(absl::StrCat("names input arg '", parts[0], "' with a bad index (it has ",
                            arg->second.size(), " element(s))"));
  }
  auto node = nodes_.find(parts[0]);
  if (node == nodes_.end()) {
    return bad(absl::StrCat("refers to '", parts[0],
                            "', which is neither an input arg nor a "
                            "node of the body"));
  }
  if (parts.size() == 1) return std::vector<std::string>{parts[0]};
  if (parts.size() == 2 && AllDigits(parts[1])) return std::vector<std::string>{ref};
  int index = 0;
  if (parts.size() > 3 || (parts.size() == 3 && !absl::SimpleAtoi(parts[2], &index))) {
    return bad("is malformed; expected 'node:out_arg:index'");
  }
  // Unknown ops are reported by Graph::Build with the whole list; keep the name resolvable.
  if (node->second.op == nullptr) return std::vector<std::string>{parts[0]};
  absl::StatusOr<int> flat = FlatOutputIndex(*node->second.op, *node->second.def, parts[1], index);
  if (!flat.ok()) {
    return WithContext(flat.status(),
                       absl::StrCat("function '", name_, "': ", where, " '", ref, "'"));
  }
  return std::vector<std::string>{absl::StrCat(parts[0], ":", *flat)};
}

absl::Status BodyBuilder::AddRets(FunctionBody* body) {
  for (const tensorflow::OpDef::ArgDef& out : fn_.signature().output_arg()) {
    if (!out.number_attr().empty() || !out.type_list_attr().empty()) {
      return Unimplemented(
          "function '%s': output arg '%s' is a list; tfjit supports functions "
          "whose outputs are single tensors",
          name_, out.name());
    }
    auto ret = fn_.ret().find(out.name());
    if (ret == fn_.ret().end()) {
      return InvalidArgument("function '%s': output arg '%s' has no entry in 'ret'", name_,
                             out.name());
    }
    TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> tensors,
                           Resolve(ret->second, absl::StrCat("ret '", out.name(), "'")));
    if (tensors.size() != 1) {
      return InvalidArgument("function '%s': ret '%s' names %d tensors; it must name one", name_,
                             out.name(), tensors.size());
    }
    body->outputs.push_back(tensors[0]);
  }
  return absl::OkStatus();
}

// A Const with control inputs on every control output: fetching it runs them.
absl::Status BodyBuilder::AddControlRets(FunctionBody* body) {
  for (const std::string& out : fn_.signature().control_output()) {
    auto ret = fn_.control_ret().find(out);
    if (ret == fn_.control_ret().end() || !nodes_.contains(ret->second)) {
      return InvalidArgument("function '%s': control output '%s' %s", name_, out,
                             ret == fn_.control_ret().end()
                                 ? std::string("has no entry in 'control_ret'")
                                 : absl::StrCat("names '", ret->second, "', no node of the body"));
    }
    body->control_outputs.push_back(ret->second);
  }
  if (body->control_outputs.empty()) return absl::OkStatus();
  std::string sink = "_tfjit_control_ret";
  while (nodes_.contains(sink) || args_.contains(sink)) sink += "_";
  tensorflow::NodeDef* node = def_->add_node();
  node->set_name(sink);
  node->set_op("Const");
  (*node->mutable_attr())["dtype"].set_type(tensorflow::DT_INT32);
  tensorflow::TensorProto* value = (*node->mutable_attr())["value"].mutable_tensor();
  value->set_dtype(tensorflow::DT_INT32);
  value->mutable_tensor_shape();
  value->add_int_val(0);
  for (const std::string& c : body->control_outputs) node->add_input(absl::StrCat("^", c));
  body->control_sink = absl::StrCat(sink, ":0");
  return absl::OkStatus();
}

}  // namespace

const tensorflow::FunctionDef* FindFunction(const tensorflow::FunctionDefLibrary& library,
                                            absl::string_view name) {
  for (const tensorflow::FunctionDef& f : library.function()) {
    if (f.signature().name() == name) return &f;
  }
  return nullptr;
}

OpDef FunctionOpDef(const tensorflow::FunctionDef& function) {
  auto convert = [](const tensorflow::OpDef::ArgDef& a) {
    ArgDef arg;
    arg.name = a.name();
    arg.type_attr = a.type_attr();
    arg.number_attr = a.number_attr();
    arg.type_list_attr = a.type_list_attr();
    if (a.type() != 0) {
      arg.fixed_type =
          DTypeFromTfEnum(a.type() >= 100 ? a.type() - 100 : a.type()).value_or(DType::kInvalid);
    }
    return arg;
  };
  const tensorflow::OpDef& sig = function.signature();
  OpDef op;
  op.name = sig.name();
  for (const auto& a : sig.input_arg()) op.inputs.push_back(convert(a));
  for (const auto& a : sig.output_arg()) op.outputs.push_back(convert(a));
  for (const auto& a : sig.attr()) {
    if (a.default_value().value_case() != AttrValue::VALUE_NOT_SET) {
      op.attr_defaults.push_back({a.name(), a.default_value()});
    }
  }
  op.is_stateful = sig.is_stateful();
  return op;
}

std::optional<bool> MustCompileAttr(const tensorflow::FunctionDef& function) {
  auto it = function.attr().find("_XlaMustCompile");
  if (it == function.attr().end() || it->second.value_case() != AttrValue::kB) return std::nullopt;
  return it->second.b();
}

bool IsPartitionedCallOp(absl::string_view op) {
  return op == "PartitionedCall" || op == "StatefulPartitionedCall";
}

absl::StatusOr<FunctionCall> GetFunctionCall(const Node& node) {
  if (node.called_function() == nullptr) {
    return InvalidArgument("node %s does not call a function", node.DebugName());
  }
  FunctionCall call;
  call.function = node.called_function();
  if (IsPartitionedCallOp(node.op())) {
    TFJIT_ASSIGN_OR_RETURN(const tensorflow::NameAttrList* f, GetFuncAttr(node, "f"));
    call.attrs = f->attr();
    return call;
  }
  for (const auto& [name, value] : node.def().attr()) {
    if (!name.empty() && name.front() != '_') call.attrs[name] = value;
  }
  return call;
}

std::optional<bool> CallMustCompileAttr(const Node& node) {
  if (node.called_function() != nullptr) {
    std::optional<bool> attr = MustCompileAttr(*node.called_function());
    if (attr.has_value()) return attr;
  }
  const AttrValue* v = FindAttr(node, "_XlaMustCompile");
  if (v == nullptr || v->value_case() != AttrValue::kB) return std::nullopt;
  return v->b();
}

std::string FunctionInstanceKey(absl::string_view name, const AttrMap& attrs) {
  std::map<std::string, std::string> sorted;
  for (const auto& [k, v] : attrs) sorted[k] = v.ShortDebugString();
  return absl::StrCat(name, "{", absl::StrJoin(sorted, ",", absl::PairFormatter("=")), "}");
}

absl::StatusOr<FunctionBody> InstantiateFunction(const tensorflow::FunctionDefLibrary& library,
                                                 const tensorflow::VersionDef& versions,
                                                 absl::string_view name, const AttrMap& attrs,
                                                 bool inline_calls, bool keep_must_compile_calls) {
  const tensorflow::FunctionDef* fn = FindFunction(library, name);
  if (fn == nullptr) {
    return NotFound("function '%s' is not in the graph's function library (%d function(s))",
                    std::string(name), library.function_size());
  }
  AttrMap merged = attrs;
  for (const auto& a : fn->signature().attr()) {
    if (!merged.contains(a.name()) && a.default_value().value_case() != AttrValue::VALUE_NOT_SET) {
      merged[a.name()] = a.default_value();
    }
  }
  tensorflow::GraphDef def;
  *def.mutable_library() = library;
  *def.mutable_versions() = versions;
  FunctionBody body;
  BodyBuilder builder(library, *fn, std::move(merged));
  TFJIT_RETURN_IF_ERROR(builder.Run(&def, &body));
  if (inline_calls) {
    TFJIT_RETURN_IF_ERROR(
        InlineCalls(library, versions, {std::string(name)}, &def, keep_must_compile_calls));
  }
  TFJIT_ASSIGN_OR_RETURN(body.graph, Graph::Build(def, name));
  body.must_compile = MustCompileAttr(*fn).value_or(false);
  return body;
}

}  // namespace tfjit::tf
