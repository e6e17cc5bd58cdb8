// Typed attr getters over NodeDef attr maps, with errors that name node, op and attr.
#include "frontend/attr.h"

#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::tf {
namespace {

using tensorflow::AttrValue;
using tensorflow::NodeDef;

absl::Status AttrError(const NodeDef& def, absl::Status status) {
  return AttachNode(WithContext(status, absl::StrCat("node '", def.name(), "' (", def.op(), ")")),
                    def.name(), def.op());
}

// The element kind of a list: the first non-empty repeated field ("" when empty).
std::string ListKind(const AttrValue::ListValue& list) {
  if (list.s_size() > 0) return "string";
  if (list.i_size() > 0) return "int";
  if (list.f_size() > 0) return "float";
  if (list.b_size() > 0) return "bool";
  if (list.type_size() > 0) return "type";
  if (list.shape_size() > 0) return "shape";
  if (list.tensor_size() > 0) return "tensor";
  if (list.func_size() > 0) return "func";
  return "";
}

// The attr if present and of `kind` (OpDef spelling); an empty list matches any list kind.
absl::StatusOr<const AttrValue*> GetAttrOfKind(const NodeDef& def, absl::string_view name,
                                               absl::string_view kind) {
  const AttrValue* value = FindAttr(def, name);
  if (value == nullptr) {
    return AttrError(def, InvalidArgument("attr '%s' is missing", std::string(name)));
  }
  const std::string actual = AttrKindName(*value);
  const bool empty_list =
      value->value_case() == AttrValue::kList && ListKind(value->list()).empty();
  const bool ok = actual == kind || (empty_list && absl::StartsWith(kind, "list("));
  if (!ok) {
    return AttrError(def, InvalidArgument("attr '%s' has type %s, expected %s", std::string(name),
                                          actual, std::string(kind)));
  }
  return value;
}

absl::StatusOr<DType> TypeFromEnum(const NodeDef& def, absl::string_view name, int tf_enum) {
  std::optional<DType> dtype = DTypeFromTfEnum(tf_enum);
  if (tf_enum == 0 || !dtype.has_value()) {
    return AttrError(def, Unimplemented("attr '%s' is %s, a dtype tfjit does not support",
                                        std::string(name), TfDataTypeName(tf_enum)));
  }
  return *dtype;
}

}  // namespace

const AttrValue* FindAttr(const NodeDef& def, absl::string_view name) {
  auto it = def.attr().find(std::string(name));
  return it == def.attr().end() ? nullptr : &it->second;
}

const AttrValue* FindAttr(const Node& node, absl::string_view name) {
  return FindAttr(node.def(), name);
}

std::string AttrKindName(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kList: {
      const std::string kind = ListKind(value.list());
      return kind.empty() ? "list(empty)" : absl::StrCat("list(", kind, ")");
    }
    case AttrValue::kS:
      return "string";
    case AttrValue::kI:
      return "int";
    case AttrValue::kF:
      return "float";
    case AttrValue::kB:
      return "bool";
    case AttrValue::kType:
      return "type";
    case AttrValue::kShape:
      return "shape";
    case AttrValue::kTensor:
      return "tensor";
    case AttrValue::kPlaceholder:
      return "placeholder";
    case AttrValue::kFunc:
      return "func";
    case AttrValue::VALUE_NOT_SET:
      return "none";
  }
  return "none";
}

absl::StatusOr<DType> GetTypeAttr(const NodeDef& def, absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(def, name, "type"));
  return TypeFromEnum(def, name, v->type());
}

absl::StatusOr<int64_t> GetIntAttr(const NodeDef& def, absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(def, name, "int"));
  return v->i();
}

absl::StatusOr<std::vector<DType>> GetTypeListAttr(const NodeDef& def, absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(def, name, "list(type)"));
  std::vector<DType> out;
  for (int t : v->list().type()) {
    TFJIT_ASSIGN_OR_RETURN(DType d, TypeFromEnum(def, name, t));
    out.push_back(d);
  }
  return out;
}

absl::StatusOr<DType> GetTypeAttr(const Node& node, absl::string_view name) {
  return GetTypeAttr(node.def(), name);
}

absl::StatusOr<int64_t> GetIntAttr(const Node& node, absl::string_view name) {
  return GetIntAttr(node.def(), name);
}

absl::StatusOr<std::vector<DType>> GetTypeListAttr(const Node& node, absl::string_view name) {
  return GetTypeListAttr(node.def(), name);
}

absl::StatusOr<float> GetFloatAttr(const Node& node, absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(node.def(), name, "float"));
  return v->f();
}

absl::StatusOr<bool> GetBoolAttr(const Node& node, absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(node.def(), name, "bool"));
  return v->b();
}

absl::StatusOr<std::string> GetStringAttr(const Node& node, absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(node.def(), name, "string"));
  return v->s();
}

absl::StatusOr<std::vector<int64_t>> GetIntListAttr(const Node& node, absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(node.def(), name, "list(int)"));
  return std::vector<int64_t>(v->list().i().begin(), v->list().i().end());
}

absl::StatusOr<std::vector<float>> GetFloatListAttr(const Node& node, absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(node.def(), name, "list(float)"));
  return std::vector<float>(v->list().f().begin(), v->list().f().end());
}

absl::StatusOr<PartialShape> GetShapeAttr(const Node& node, absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(node.def(), name, "shape"));
  absl::StatusOr<PartialShape> shape = PartialShapeFromProto(v->shape());
  if (!shape.ok()) {
    return AttrError(node.def(), WithContext(shape.status(), absl::StrCat("attr '", name, "'")));
  }
  return shape;
}

absl::StatusOr<std::vector<PartialShape>> GetShapeListAttr(const Node& node,
                                                           absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(node.def(), name, "list(shape)"));
  std::vector<PartialShape> out;
  for (const tensorflow::TensorShapeProto& proto : v->list().shape()) {
    absl::StatusOr<PartialShape> shape = PartialShapeFromProto(proto);
    if (!shape.ok()) {
      return AttrError(node.def(), WithContext(shape.status(), absl::StrCat("attr '", name, "'")));
    }
    out.push_back(*std::move(shape));
  }
  return out;
}

absl::StatusOr<Tensor> GetTensorAttr(const Node& node, absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(node.def(), name, "tensor"));
  absl::StatusOr<Tensor> tensor = TensorFromProto(v->tensor());
  if (!tensor.ok()) {
    return AttrError(node.def(), WithContext(tensor.status(), absl::StrCat("attr '", name, "'")));
  }
  return tensor;
}

absl::StatusOr<const tensorflow::NameAttrList*> GetFuncAttr(const Node& node,
                                                            absl::string_view name) {
  TFJIT_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfKind(node.def(), name, "func"));
  return &v->func();
}

absl::StatusOr<bool> GetBoolAttrOr(const Node& node, absl::string_view name, bool default_value) {
  if (FindAttr(node, name) == nullptr) return default_value;
  return GetBoolAttr(node, name);
}

absl::StatusOr<int64_t> GetIntAttrOr(const Node& node, absl::string_view name,
                                     int64_t default_value) {
  if (FindAttr(node, name) == nullptr) return default_value;
  return GetIntAttr(node, name);
}

absl::StatusOr<float> GetFloatAttrOr(const Node& node, absl::string_view name,
                                     float default_value) {
  if (FindAttr(node, name) == nullptr) return default_value;
  return GetFloatAttr(node, name);
}

absl::StatusOr<std::string> GetStringAttrOr(const Node& node, absl::string_view name,
                                            absl::string_view default_value) {
  if (FindAttr(node, name) == nullptr) return std::string(default_value);
  return GetStringAttr(node, name);
}

}  // namespace tfjit::tf
