// Op catalog: the signature of every TF op tfjit knows (inputs, outputs, type attrs), which
// inputs must be compile-time constants, which live in host memory, and statefulness.
#ifndef TFJIT_FRONTEND_OP_CATALOG_H_
#define TFJIT_FRONTEND_OP_CATALOG_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
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

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDefault> attr_defaults;  // filled into NodeDefs that omit them
  // Input indices (flat) that must be compile-time constants when compiled (known issue F).
  std::vector<int> compile_time_const_inputs;
  // Flat input/output indices TF keeps in host memory on GPU.
  std::vector<int> host_memory_inputs;
  std::vector<int> host_memory_outputs;
  bool is_stateful = false;
};

// The op, or nullptr if tfjit does not know it.
const OpDef* LookupOpDef(absl::string_view op);
// Every known op name, sorted.
std::vector<std::string> KnownOps();

// Resolves the flat input and output types of `node_def` (attrs with defaults filled).
// INVALID_ARGUMENT naming the node and attr when a type/number attr is missing or wrong.
absl::Status ResolveArgTypes(const OpDef& op, const tensorflow::NodeDef& node_def,
                             std::vector<DType>* input_types, std::vector<DType>* output_types);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_OP_CATALOG_H_
