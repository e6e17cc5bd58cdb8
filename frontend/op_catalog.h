// Op catalog: the signature of every TF op tfjit knows (inputs, outputs, type attrs), which
// inputs must be compile-time constants, which live in host memory, and statefulness.
#ifndef TFJIT_FRONTEND_OP_CATALOG_H_
#define TFJIT_FRONTEND_OP_CATALOG_H_

#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "frontend/proto/graph.pb.h"
#include "tfjit/dtype.h"

namespace tfjit::tf {

// One input or output argument, as in TF's OpDef.ArgDef.
struct ArgDef {
  std::string name;
  DType fixed_type = DType::kInvalid;  // set when the op fixes the type (e.g. int32)
  std::string type_attr;               // type comes from this attr ("T")
  std::string number_attr;             // list of N (attr) values of one type
  std::string type_list_attr;          // list whose types are this list(type) attr
};

struct AttrDefault {
  std::string name;
  tensorflow::AttrValue value;
};

// The dtypes TF registers for a type attr (OpDef.AttrDef.allowed_values): a node whose attr
// names another dtype is rejected at load time, as TF's graph construction does.
struct TypeConstraint {
  std::string attr;
  std::vector<DType> allowed;
};

struct OpDef {
  std::string name;
  // The op's family (docs/DESIGN.md, "Op families"): one name for its catalog entry
  // (op_catalog_<family>.cc or a section of op_catalog_ops.cc), kernel
  // (runtime/kernels/<family>_kernels.cc), lowering (compiler/tf2hlo/<family>_lowerings.cc) and
  // test cases (tests/tf/op_cases_<family>.cc).
  std::string family;
  std::vector<TypeConstraint> type_constraints;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDefault> attr_defaults;  // filled into NodeDefs that omit them
  // Input indices that must be compile-time constants when compiled (known issue F). These
  // index `inputs` (arg indices): they equal flat input indices unless an earlier input arg
  // is a list (ConcatV2's axis is arg 1 but flat input N); Node::compile_time_const_inputs()
  // and FlatInputIndices() give the flat ones.
  std::vector<int> compile_time_const_inputs;
  // Input/output arg indices TF keeps in host memory on GPU (same indexing as above).
  std::vector<int> host_memory_inputs;
  std::vector<int> host_memory_outputs;
  bool is_stateful = false;
};

// One type attr of an op in TF's registry (TF 2.4's ops.pbtxt): the dtypes it allows, in TF's
// spelling, comma-separated ("half,float,double"), or "*" for any.
struct RegistryTypes {
  const char* op;
  const char* attr;
  const char* allowed;
};
// Every type attr of the catalog's ops that TF 2.4's registry has (op_registry_types.cc).
// Information, not a load-time check: newer TF versions allow more dtypes for some ops.
absl::Span<const RegistryTypes> TfRegistryTypes();

// The built-in op table (op_catalog_ops.cc); LookupOpDef indexes it once.
std::vector<OpDef> BuiltinOpDefs();

// The op, or nullptr if tfjit does not know it.
const OpDef* LookupOpDef(absl::string_view op);
// Every known op name, sorted.
std::vector<std::string> KnownOps();

// Resolves the flat input and output types of `node_def` (attrs with defaults filled).
// INVALID_ARGUMENT naming the node and attr when a type/number attr is missing or wrong.
absl::Status ResolveArgTypes(const OpDef& op, const tensorflow::NodeDef& node_def,
                             std::vector<DType>* input_types, std::vector<DType>* output_types);

// The flat index range of every arg: arg i covers [starts[i], starts[i + 1]); the last entry
// is the flat count. Errors as ResolveArgTypes.
absl::Status ResolveArgStarts(const OpDef& op, const tensorflow::NodeDef& node_def,
                              std::vector<int>* input_starts, std::vector<int>* output_starts);

// Flat indices covered by the given input (output) arg indices; a list arg contributes all of
// its elements. Used to turn compile_time_const_inputs / host_memory_* into flat indices.
absl::StatusOr<std::vector<int>> FlatInputIndices(const OpDef& op,
                                                  const tensorflow::NodeDef& node_def,
                                                  const std::vector<int>& arg_indices);
absl::StatusOr<std::vector<int>> FlatOutputIndices(const OpDef& op,
                                                   const tensorflow::NodeDef& node_def,
                                                   const std::vector<int>& arg_indices);

// The flat output index of "node:out_arg:index" (FunctionDef body tensor names, formats.md
// 1.7). INVALID_ARGUMENT when the op has no such output arg or the index is out of range.
absl::StatusOr<int> FlatOutputIndex(const OpDef& op, const tensorflow::NodeDef& node_def,
                                    absl::string_view output_arg, int index);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_OP_CATALOG_H_
