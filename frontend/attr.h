// Typed access to a node's attrs. Errors are INVALID_ARGUMENT naming node, op and attr
// ("node 'x' (Op): attr 'T' is missing") and carry the node payload (core/status.h).
#ifndef TFJIT_FRONTEND_ATTR_H_
#define TFJIT_FRONTEND_ATTR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "core/status.h"
#include "frontend/graph.h"
#include "frontend/proto/graph.pb.h"
#include "frontend/tensor_proto.h"
#include "tfjit/dtype.h"
#include "tfjit/tensor.h"

namespace tfjit::tf {

// "node 'c' (Conv2D): <message>" with `code` and the node payload: the errors of the rules
// that validate a node's attrs and operands (conv_attrs.h, xla_dims.h, ...).
template <typename... Args>
absl::Status NodeStatus(absl::StatusCode code, const Node& node,
                        const absl::FormatSpec<Args...>& format, const Args&... args) {
  absl::Status status(
      code, absl::StrCat("node ", node.DebugName(), ": ", absl::StrFormat(format, args...)));
  return AttachNode(std::move(status), node.name(), node.op());
}
template <typename... Args>
absl::Status NodeInvalid(const Node& node, const absl::FormatSpec<Args...>& format,
                         const Args&... args) {
  return NodeStatus(absl::StatusCode::kInvalidArgument, node, format, args...);
}

// The attr, or nullptr when absent.
const tensorflow::AttrValue* FindAttr(const Node& node, absl::string_view name);
const tensorflow::AttrValue* FindAttr(const tensorflow::NodeDef& def, absl::string_view name);

// The kind of value an AttrValue holds, in OpDef spelling: "int", "list(type)", "none", ...
std::string AttrKindName(const tensorflow::AttrValue& value);

// A type attr; UNIMPLEMENTED when the type is one tfjit has no DType for (complex, ...).
absl::StatusOr<DType> GetTypeAttr(const Node& node, absl::string_view name);
absl::StatusOr<int64_t> GetIntAttr(const Node& node, absl::string_view name);
absl::StatusOr<float> GetFloatAttr(const Node& node, absl::string_view name);
absl::StatusOr<bool> GetBoolAttr(const Node& node, absl::string_view name);
absl::StatusOr<std::string> GetStringAttr(const Node& node, absl::string_view name);
absl::StatusOr<std::vector<int64_t>> GetIntListAttr(const Node& node, absl::string_view name);
absl::StatusOr<std::vector<float>> GetFloatListAttr(const Node& node, absl::string_view name);
absl::StatusOr<std::vector<DType>> GetTypeListAttr(const Node& node, absl::string_view name);
absl::StatusOr<PartialShape> GetShapeAttr(const Node& node, absl::string_view name);
absl::StatusOr<std::vector<PartialShape>> GetShapeListAttr(const Node& node,
                                                           absl::string_view name);
// Decodes a tensor attr (e.g. Const's "value") with TensorFromProto.
absl::StatusOr<Tensor> GetTensorAttr(const Node& node, absl::string_view name);
// A func attr (While.body, PartitionedCall.f); the pointer lives as long as the node.
absl::StatusOr<const tensorflow::NameAttrList*> GetFuncAttr(const Node& node,
                                                            absl::string_view name);

// Optional attrs: `default_value` when absent; still an error when present with a wrong type.
absl::StatusOr<bool> GetBoolAttrOr(const Node& node, absl::string_view name, bool default_value);
absl::StatusOr<int64_t> GetIntAttrOr(const Node& node, absl::string_view name,
                                     int64_t default_value);
absl::StatusOr<float> GetFloatAttrOr(const Node& node, absl::string_view name, float default_value);
absl::StatusOr<std::string> GetStringAttrOr(const Node& node, absl::string_view name,
                                            absl::string_view default_value);

// NodeDef forms, used while a Graph is being built (ResolveArgTypes).
absl::StatusOr<DType> GetTypeAttr(const tensorflow::NodeDef& def, absl::string_view name);
absl::StatusOr<int64_t> GetIntAttr(const tensorflow::NodeDef& def, absl::string_view name);
absl::StatusOr<std::vector<DType>> GetTypeListAttr(const tensorflow::NodeDef& def,
                                                   absl::string_view name);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_ATTR_H_
