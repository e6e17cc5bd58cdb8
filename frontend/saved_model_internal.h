// SavedModel loader internals shared by saved_model.cc and saved_model_graph.cc: pruning the
// MetaGraphDef's GraphDef, finding variables and their checkpoint keys, and the restore nodes.
// Not a public interface.
#ifndef TFJIT_FRONTEND_SAVED_MODEL_INTERNAL_H_
#define TFJIT_FRONTEND_SAVED_MODEL_INTERNAL_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontend/model.h"
#include "frontend/proto/saved_model.pb.h"
#include "frontend/tensor_bundle.h"

namespace tfjit::tf {

inline constexpr char kInitOpSignatureKey[] = "__saved_model_init_op";

// "^x", "x:0", "x:out:0" -> "x".
std::string NodeNameOf(absl::string_view tensor);

struct PruneRoots {
  std::vector<std::string> nodes;                      // keep these and what they need
  std::map<std::string, TensorSpec> signature_inputs;  // node name -> the input it provides
};

// Keeps the roots and their inputs (data and control), never passing through an op tfjit does
// not know (the Saver's ops, ParseExample, ...). A kept node that needs a dropped node is
// dropped too, unless it is a signature input: then it becomes a Placeholder of the
// signature's dtype and shape (feeding it is how the signature runs). The function library
// keeps the functions kept nodes can call.
absl::StatusOr<tensorflow::GraphDef> PruneGraphDef(const tensorflow::GraphDef& graph_def,
                                                   const PruneRoots& roots);

// Empty when running `node` needs only ops and dtypes tfjit supports and no feeds; else why not
// ("node 'Assign' (Assign) uses dtype string ...").
std::string WhyNotRunnable(const tensorflow::GraphDef& graph_def, const std::string& node);

struct VariableNode {
  std::string name;  // the VariableV2 / VarHandleOp node
  std::string op;
  std::string shared_name;  // attr shared_name, may be empty
  DType dtype = DType::kInvalid;
};

// The graph's variables of numeric dtype (string variables, e.g. asset paths, are skipped: the
// runtime cannot hold strings).
std::vector<VariableNode> FindVariables(const tensorflow::GraphDef& graph_def);

// Variable node name -> checkpoint key. Traces the Saver's restore op (TF1: Assign(var,
// RestoreV2:k); TF2: the restore function's AssignVariableOp(arg, RestoreV2:k)), then falls
// back to the node / shared name and to the SavedObjectGraph path. NOT_FOUND for a variable
// without a key.
absl::StatusOr<std::map<std::string, std::string>> CheckpointKeys(
    const tensorflow::MetaGraphDef& meta_graph, const std::vector<VariableNode>& variables,
    const BundleReader& bundle);

// Adds "<var>/_tfjit_restore" (Placeholder) and "<var>/_tfjit_restore/assign" (Assign or
// AssignVariableOp) to `graph_def`; returns the placeholder's name.
std::string AddRestoreNodes(const VariableNode& variable, const std::vector<int64_t>& dims,
                            tensorflow::GraphDef* graph_def);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_SAVED_MODEL_INTERNAL_H_
