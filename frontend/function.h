// TF functions: FunctionDef signatures as OpDefs, call nodes (PartitionedCall,
// StatefulPartitionedCall, direct calls), and instantiation of a body as a standalone tf::Graph.
#ifndef TFJIT_FRONTEND_FUNCTION_H_
#define TFJIT_FRONTEND_FUNCTION_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontend/graph.h"
#include "frontend/op_catalog.h"
#include "frontend/proto/graph.pb.h"

namespace tfjit::tf {

using AttrMap = google::protobuf::Map<std::string, tensorflow::AttrValue>;

// The function named `name` in `library`, or nullptr.
const tensorflow::FunctionDef* FindFunction(const tensorflow::FunctionDefLibrary& library,
                                            absl::string_view name);

// The function's signature in the op catalog's form, so a node whose op is the function's
// name (a direct call) resolves its types like any op.
OpDef FunctionOpDef(const tensorflow::FunctionDef& function);

// The FunctionDef attr `_XlaMustCompile` when present (true: must compile; false: never).
std::optional<bool> MustCompileAttr(const tensorflow::FunctionDef& function);

// PartitionedCall / StatefulPartitionedCall: the function is attr `f`.
bool IsPartitionedCallOp(absl::string_view op);

// What a call node calls: the function and the attrs it is instantiated with (`f`'s attrs for
// PartitionedCall, the node's own non-internal attrs for a direct call).
struct FunctionCall {
  const tensorflow::FunctionDef* function = nullptr;
  AttrMap attrs;
};
// For nodes with called_function() set; INVALID_ARGUMENT otherwise.
absl::StatusOr<FunctionCall> GetFunctionCall(const Node& node);

// Whether the call must compile: the function's `_XlaMustCompile`, else the call node's.
std::optional<bool> CallMustCompileAttr(const Node& node);

// A stable key for (function, attrs): equal calls instantiate equal bodies.
std::string FunctionInstanceKey(absl::string_view name, const AttrMap& attrs);

// A function body as a standalone graph: one Placeholder per (flat) input arg, the body
// nodes with GraphDef-style inputs and attr placeholders substituted.
struct FunctionBody {
  std::unique_ptr<Graph> graph;              // graph->source() is the function name
  std::vector<std::string> inputs;           // placeholder tensor names, flat input order
  std::vector<std::string> outputs;          // tensors, in signature output order
  std::vector<std::string> control_outputs;  // node names, in signature order
  // When the function has control outputs: a tensor whose computation runs them all (fetch
  // it to run the side effects); "" otherwise.
  std::string control_sink;
  bool must_compile = false;  // _XlaMustCompile is true
};

// Instantiates `name` from `library` with the call's `attrs` (signature attr defaults fill the
// rest). NOT_FOUND for a missing function; INVALID_ARGUMENT naming function, node and field
// for bad references, missing attrs or rets; UNIMPLEMENTED for list-valued outputs.
// `inline_calls`: the body's calls are inlined (InlineCalls), as XLA does for a function it
// compiles, so that values pass between nested functions inside one compiled unit.
// `keep_must_compile_calls`: calls to must-compile functions stay calls (auto-clustering
// inlines plain calls as TF's function inlining does, but a jit_compile function keeps its
// own all-or-error semantics).
absl::StatusOr<FunctionBody> InstantiateFunction(const tensorflow::FunctionDefLibrary& library,
                                                 const tensorflow::VersionDef& versions,
                                                 absl::string_view name, const AttrMap& attrs,
                                                 bool inline_calls = false,
                                                 bool keep_must_compile_calls = false);

// Inlines the call nodes of `def` (PartitionedCall, StatefulPartitionedCall, direct calls) and
// of the bodies they bring, as XLA's bridge inlines the calls of a function it compiles. A
// call node "c" becomes the callee's nodes, named "c/<node>"; each input arg an Identity
// "c/<arg>" of the call's input; and "c" itself an Identity (one output) or IdentityN of the
// callee's outputs, with the callee's control outputs as control inputs, so every consumer
// and fetch of "c:k" reads what it read before. The call's control inputs reach the callee's
// args and its nodes without inputs; its device is theirs when they name none. Calls to a
// function marked `_XlaMustCompile: false`, and calls that would recurse (a function in
// `callers` or on the inlining path), stay calls: the runtime runs and reports them.
absl::Status InlineCalls(const tensorflow::FunctionDefLibrary& library,
                         const tensorflow::VersionDef& versions,
                         const std::vector<std::string>& callers, tensorflow::GraphDef* def,
                         bool keep_must_compile_calls = false);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_FUNCTION_H_
