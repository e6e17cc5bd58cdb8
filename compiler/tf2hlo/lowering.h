// Lowering of a TF cluster (a set of graph nodes) to an hlo::Module for concrete input shapes.
#ifndef TFJIT_COMPILER_TF2HLO_LOWERING_H_
#define TFJIT_COMPILER_TF2HLO_LOWERING_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/hlo/module.h"
#include "frontend/graph.h"
#include "tfjit/tensor.h"

namespace tfjit::tf2hlo {

// What is compiled: `nodes` (topologically ordered) consume `inputs` (tensors produced
// outside the cluster or fed by the user, in parameter order) and produce `outputs`.
struct ClusterSpec {
  std::string name;
  std::vector<const tf::Node*> nodes;
  std::vector<tf::Output> inputs;
  std::vector<tf::Output> outputs;
};

// One cluster input at launch: its dtype and dims, and its value when the input must be a
// compile-time constant (see MustBeConstantInputs); the value then joins the cache key.
//
// A resource input (a variable handle) is passed as the variable's value at launch: `dtype`
// and `dims` are the value's, `value` is set when it must be known at compile time, and
// `variable` says which variable it is.
struct VariableInfo {
  std::string name;
  std::string container;
  bool initialized = false;  // false: the parameter is a dummy of dims [0]
  // A TF1 reference variable (VariableV2) entering a cluster that updates it (--autofix):
  // the cluster's other readers of the reference read its current value.
  bool ref = false;
};
struct ArgInfo {
  DType dtype = DType::kInvalid;
  std::vector<int64_t> dims;
  std::optional<Tensor> value;
  std::optional<VariableInfo> variable;
};

// Indices of the cluster's resource inputs that nodes inside the cluster assign, in input
// order. Their final values follow the cluster outputs in the module's result tuple.
std::vector<int> ResourceUpdateInputs(const ClusterSpec& cluster);
// How many of `op`'s leading inputs are TF1 variable references it updates and tfjit can
// compile (behind --autofix; TF's XLA compiles no reference-variable op): Assign, AssignAdd,
// AssignSub (1) and the Apply* optimizers whose ResourceApply* form compiles (its variable
// count); 0 for every other op.
int CompilableRefUpdateInputs(const std::string& op);

// The stateful random nodes of the cluster, in cluster order (known issue E), and its While
// and If nodes whose functions draw from one (BodiesDrawRandom). Each gets one extra ENTRY
// parameter u64[3] (its Philox state [key, counter_lo, counter_hi] at launch) after the
// cluster inputs, and one extra result u64[3] (the state after its draws: the counter
// advanced by 256 blocks per output, as TF's kernel reserves) after the variable updates.
// A While or If carries its state through its bodies, whose random ops draw from it in turn
// (XLA's semantics: one stream, seeds ignored).
std::vector<const tf::Node*> StatefulRandomNodes(const ClusterSpec& cluster);

// Whether the functions of the While/If `node` contain a stateful random op, at any depth.
bool BodiesDrawRandom(const tf::Node& node);

// Builds the module: ENTRY parameters are the cluster inputs, then the states of
// StatefulRandomNodes; the ROOT is a tuple of the cluster outputs, then the updated variables
// (ResourceUpdateInputs), then the random nodes' next states, then one s64[1+k] per run-time
// check (module->runtime_checks(), e.g. gather indices computed at run time: hlo::RuntimeCheck;
// the runtime fails the run before installing any state when one reports a bad position).
// Errors carry the failing node
// (AttachNode) and say what to change:
// UNIMPLEMENTED for ops/types without a lowering, INVALID_ARGUMENT for user errors (shape
// mismatches, non-constant shape arguments with TF's compile-time-constant message).
// A TensorList entering or leaving the cluster is TF's UNIMPLEMENTED "Support for TensorList
// crossing the XLA/TF boundary is not implemented" (known issue B, compiler/rules/
// b_list_crossing.h). `autofix` enables the
// beyond-TF fixes of known issues C, D and F (loop_analysis.h), and logs E's (the runtime
// then supplies seeded random states).
absl::StatusOr<std::unique_ptr<hlo::Module>> LowerCluster(const ClusterSpec& cluster,
                                                          const std::vector<ArgInfo>& args,
                                                          bool autofix = false);

// The HLO shape of a cluster argument of `dtype` and `dims`: complex64/complex128 values are
// f32/f64 with a last dim of 2 holding (real, imag), the byte layout of std::complex, so the
// runtime passes the tensor's buffer unchanged (Tensor::BitcastView) and reads complex
// results back the same way (compiler/tf2hlo/complex_values.h).
hlo::Shape ParameterShape(DType dtype, std::vector<int64_t> dims);

// Whether tf2hlo has a lowering for `node`'s op and dtypes (the cluster pass asks this).
// On false, `*why` says why in one phrase.
bool CanLower(const tf::Node& node, std::string* why);

// The node of the cluster whose lowering failed (a LowerCluster error), or "": for an error
// inside a While/If body, the While/If, where NodeOfError names the body's node.
inline constexpr char kClusterNodePayloadUrl[] = "tfjit/cluster_node";
std::string ClusterNodeOfError(const absl::Status& status);
// Every cluster node the error names: LowerCluster goes on past a failing node with the nodes
// that do not depend on it, and names each that fails on its own, the first first.
std::vector<std::string> ClusterNodesOfError(const absl::Status& status);

// The outputs of `node` that compile padded, with their row count known only at run time
// (Where; the NonMaxSuppression forms without pad_to_max_output_size): no node of their
// cluster may read them, so clustering puts their readers in another cluster.
std::vector<int> RowCountedOutputs(const tf::Node& node);
bool HasRowCountedOutput(const tf::Node& node);

// Indices of `cluster.inputs` whose values must be known when compiling because they feed
// (through ops inside the cluster) an input that must be a compile-time constant.
std::vector<int> MustBeConstantInputs(const ClusterSpec& cluster);

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_LOWERING_H_
