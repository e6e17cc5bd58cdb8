// Auto-clustering by cycle-safe edge contraction, and the must-compile check.
//
// Algorithm (auto mode):
//  1. Mark candidates: nodes in the subgraph that tf2hlo can lower and that TF's rules allow
//     in a cluster (not fed, not stateful, not Assert/CheckNumerics, not _XlaCompile=false,
//     not excluded by the caller).
//     Nodes merge only when they share a device and an _XlaScope.
//  2. Start with one unit per node; units form a DAG through data and control edges (TF1
//     NextIteration -> Merge back edges left out).
//  3. Visit edges u->v in topological order of u; if both are candidates in different units,
//     merge the two units unless another path u ~> v exists (merging would make a cycle
//     through an uncompiled node, as TF's GraphCycles::ContractEdge refuses).
//  4. Drop units that hold no computation (only constants and identities).
#include "compiler/cluster/clustering.h"
#include "compiler/rules/a_variable_device.h"
#include "compiler/rules/b_list_crossing.h"
#include "compiler/rules/d_dynamic_array.h"
#include "compiler/rules/e_random_seeds.h"
#include "compiler/rules/unsupported_ops.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/tf2hlo/dynamic_sizes.h"
#include "compiler/tf2hlo/function_lowering.h"
#include "compiler/tf2hlo/list_lowering.h"
#include "compiler/tf2hlo/lowering.h"
#include "core/logging.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/function.h"
#include "frontend/op_catalog.h"

namespace tfjit::cluster {
namespace {

// Resource-variable ops are stateful but compile: a cluster reads its variables at launch
// and writes them back at its end (tf2hlo threads each variable's value through the
// cluster in dependency order). Handles themselves (VarHandleOp) come from the runtime.
bool IsCompilableResourceOp(const tf::Node& node) {
  static const char* const kOps[] = {
      "ReadVariableOp", "AssignVariableOp",   "AssignAddVariableOp", "AssignSubVariableOp",
      "ResourceGather", "VarIsInitializedOp", "VariableShape"};
  // The ResourceApply* optimizers (optimizers_lowerings.cc) update variables in clusters too.
  return std::any_of(std::begin(kOps), std::end(kOps),
                     [&](const char* op) { return node.op() == op; }) ||
         absl::StartsWith(node.op(), "ResourceApply") ||
         // ResourceScatter* and ResourceScatterNd* (scatter_segment_lowerings.cc) likewise,
         // and ResourceStridedSliceAssign (array_slice_lowerings.cc).
         absl::StartsWith(node.op(), "ResourceScatter") ||
         node.op() == "ResourceStridedSliceAssign";
}

bool ControlFlowStaysInRuntime(const tf::Node& node, std::string* why, bool must_compile);

bool IsRefVariable(const tf::Node& node) {
  return node.op() == "VariableV2" || node.op() == "Variable";
}

// --autofix, beyond TF (whose XLA compiles no reference-variable op): a TF1 variable update
// (Assign*, Apply*) compiles like its resource form when every reference it updates comes
// straight from a VariableV2 (not through RefSwitch/RefEnter/RefIdentity) and nothing reads
// its output reference as data (TF1 groups optimizer updates with control edges). The cluster
// then receives the variable itself and writes it back (tf2hlo::CompilableRefUpdateInputs).
// Defined after DeviceOf: the variable must live on the update's device (known issue A's rule,
// as for resource variables), and _XlaCompile=false keeps the node out as everywhere.
bool CompilableRefUpdate(const ClusteringOptions& options, const tf::Node& node);

// Ops that TF's auto-clustering keeps in the runtime even where XLA could compile them.
// `must_compile`: the node is in a must-compile unit, where While/If bodies may hold resource
// ops (TF keeps those loops out of auto clusters only).
bool StaysInRuntime(const tf::Node& node, std::string* why, bool must_compile = false) {
  const std::string& op = node.op();
  if (op == "Placeholder" || op == "PlaceholderWithDefault") {
    *why = "graph inputs are fed, not compiled";
    return true;
  }
  // A NoOp that orders nodes after others (what an Assert leaves in a converted graph, a
  // function's inlined input/output control nodes) compiles to nothing, as XLA's NoOp, so it
  // does not split a cluster. One with nothing before it or nothing after it stays: tf.group
  // and init ops, fetched by name.
  if (op == "NoOp" && ((node.num_inputs() == 0 && node.control_inputs().empty()) ||
                       node.control_consumers().empty())) {
    *why = "NoOp carries no data";
    return true;
  }
  if (node.called_function() != nullptr) {
    // The runtime instantiates the body and compiles it per its own attrs (_XlaMustCompile).
    *why = absl::StrCat("function call runs as a unit (must-compile: ",
                        tf::CallMustCompileAttr(node).value_or(false) ? "yes" : "no", ")");
    return true;
  }
  if (op == "CheckNumerics" || op == "Assert") {
    *why = absl::StrCat(op,
                        " stays in the runtime (TF keeps Assert/CheckNumerics out of "
                        "clusters)");
    return true;
  }
  if (node.op_def() != nullptr && node.op_def()->is_stateful && !IsCompilableResourceOp(node) &&
      !tf2hlo::IsFunctionalControlFlow(op)) {
    *why = absl::StrCat("stateful op ", op, " stays in the runtime");
    return true;
  }
  absl::StatusOr<bool> hint = tf::GetBoolAttrOr(node, "_XlaCompile", true);
  if (hint.ok() && !*hint) {
    *why = "the node has _XlaCompile=false";
    return true;
  }
  if (tf2hlo::IsFunctionalControlFlow(op))
    return ControlFlowStaysInRuntime(node, why, must_compile);
  return false;
}

// While/If: the op's own stateful flag only says that a body may have side effects; as TF's
// mark_for_compilation does, look at the bodies instead. The node stays in the runtime when
// a node its functions need would (recursively), or touches a resource (TF does not
// auto-cluster functional control flow containing resource operations).
bool ControlFlowStaysInRuntime(const tf::Node& node, std::string* why, bool must_compile) {
  static thread_local int depth = 0;
  if (depth > 32) {
    *why = "its functions nest more than 32 levels deep (recursion?)";
    return true;
  }
  ++depth;
  const bool is_while = tf2hlo::IsFunctionalWhile(node.op());
  bool stays = false;
  for (const char* attr : is_while ? std::vector<const char*>{"cond", "body"}
                                   : std::vector<const char*>{"then_branch", "else_branch"}) {
    absl::StatusOr<tf::FunctionBody> body = tf2hlo::InstantiateFunctionAttr(node, attr);
    if (!body.ok()) continue;  // CanLower says why
    // Sizes known only at run time (Where, NMS) must end inside the body (tf2hlo's dynamic
    // sizes: read by ops that know padding, ending in Shape or a pad to a static size).
    if (std::optional<std::string> dynamic = tf2hlo::UnresolvedDynamicSize(*body)) {
      *why = absl::StrCat("function '", body->graph->source(), "' (", attr, "): ", *dynamic);
      stays = true;
      break;
    }
    for (const tf::Node* inner : tf2hlo::NeededBodyNodes(*body)) {
      std::string inner_why;
      bool resource = false;
      for (DType t : inner->input_types()) resource |= t == DType::kResource;
      for (DType t : inner->output_types()) resource |= t == DType::kResource;
      if (resource && !must_compile) {
        inner_why = "resource operations inside While/If functions stay in the runtime";
      } else if (must_compile && rules::IsStatefulRandomOp(inner->op())) {
        continue;  // drawn from the loop's carried state (known issue E), as at top level
      } else if (!StaysInRuntime(*inner, &inner_why, must_compile)) {
        continue;
      }
      *why = absl::StrCat("node ", inner->DebugName(), " of function '", body->graph->source(),
                          "' (", attr, "): ", inner_why);
      stays = true;
      break;
    }
    if (stays) break;
  }
  --depth;
  return stays;
}

const std::string& DeviceOf(const ClusteringOptions& options, const tf::Node& node) {
  const size_t id = static_cast<size_t>(node.id());
  return id < options.node_devices.size() && !options.node_devices[id].empty()
             ? options.node_devices[id]
             : options.device;
}

// Whether `node` is placed on a GPU.
bool OnGpu(const ClusteringOptions& options, const tf::Node& node) {
  return absl::StrContains(DeviceOf(options, node), "device:GPU:");
}

// A resource op whose variable handle comes from a VarHandleOp placed elsewhere (known
// issue A's clustering check).
bool VariableOnOtherDevice(const ClusteringOptions& options, const tf::Node& node,
                           std::string* why) {
  if (!IsCompilableResourceOp(node)) return false;
  std::optional<std::string> other = rules::VariableOnOtherDevice(
      node, [&](const tf::Node& n) -> const std::string& { return DeviceOf(options, n); });
  if (other.has_value()) *why = std::move(*other);
  return other.has_value();
}

bool CompilableRefUpdate(const ClusteringOptions& options, const tf::Node& node) {
  const int refs = tf2hlo::CompilableRefUpdateInputs(node.op());
  if (refs == 0 || node.num_inputs() < refs || !node.data_consumers().empty()) return false;
  absl::StatusOr<bool> hint = tf::GetBoolAttrOr(node, "_XlaCompile", true);
  if (hint.ok() && !*hint) return false;
  for (int i = 0; i < refs; ++i) {
    const tf::Node& var = *node.input(i).node;
    if (!IsRefVariable(var) || DeviceOf(options, var) != DeviceOf(options, node)) return false;
  }
  return true;
}

// True when `out` is computed from constants and shapes only, so the compiler knows its value
// once input shapes are fixed (Const, Shape/Size/Rank, and pure ops of such values).
bool DerivesFromConstants(const tf::Output& out, int depth = 0);

bool DerivesFromConstants(const tf::Output& out, int depth) {
  const tf::Node& node = *out.node;
  const std::string& op = node.op();
  if (op == "Const" || op == "Shape" || op == "Size" || op == "Rank" || op == "ShapeN") {
    return true;
  }
  // A fixed-size list's length (TF1 TensorArraySizeV3 after functionalization: the stacks
  // after a tf.map_fn take their Range bounds from it).
  if (op == "TensorListLength" && node.num_inputs() > 0) {
    const std::optional<tf::Output> origin = tf2hlo::ListLengthOrigin(node.input(0));
    if (!origin.has_value()) return false;
    return origin->node->op() == "TensorListFromTensor" ||
           DerivesFromConstants(origin->node->input(1), depth + 1);
  }
  if (depth > 64 || op == "Placeholder" || op == "PlaceholderWithDefault" ||
      node.num_inputs() == 0 || (node.op_def() != nullptr && node.op_def()->is_stateful) ||
      node.called_function() != nullptr) {
    return false;
  }
  for (const tf::Output& in : node.inputs()) {
    if (!DerivesFromConstants(in, depth + 1)) return false;
  }
  return true;
}

// True when `out` is computed from a value padded with a size known only at run time (a
// Where's or NMS's): a Range to it compiles padded to its bound (tf2hlo/dynamic_sizes.h).
bool DerivesFromPadded(const tf::Output& out) {
  absl::flat_hash_set<const tf::Node*> seen;
  std::vector<const tf::Node*> work = {out.node};
  while (!work.empty() && seen.size() < 4096) {
    const tf::Node* node = work.back();
    work.pop_back();
    if (!seen.insert(node).second) continue;
    if (tf2hlo::HasRowCountedOutput(*node)) return true;
    if (node->called_function() != nullptr) continue;
    for (const tf::Output& in : node->inputs()) work.push_back(in.node);
  }
  return false;
}

// The node's `_XlaScope` attr ("" when absent): nodes of different scopes never merge.
std::string ScopeOf(const tf::Node& node) {
  return tf::GetStringAttrOr(node, "_XlaScope", "").value_or("");
}

// Autofix B in must-compile mode: a TensorList that would cross the compiled boundary (a list
// the function returns, or one consumed outside) stays in the runtime with every list op on
// its path, so the compiled part never takes or gives a list. Returns whether it moved any.
bool KeepCrossingListsInRuntime(const tf::Graph& graph, const ClusteringOptions& options,
                                std::vector<bool>& candidate, ClusteringResult* result) {
  absl::flat_hash_set<std::pair<const tf::Node*, int>> fetched;
  for (const tf::Output& f : options.fetched) fetched.insert({f.node, f.index});
  const std::vector<rules::KeptInRuntime> kept = rules::KeepListsOnOneSide(
      graph,
      [&](const tf::Node& n) { return options.subgraph.empty() || options.subgraph.contains(&n); },
      fetched, candidate);
  for (const rules::KeptInRuntime& k : kept) {
    result->why_not[k.node->id()] = absl::StrCat("autofix B: ", k.why);
    result->rule_of[k.node->id()] = rules::RuleId::kListCrossing;
    // In must-compile code this changes what TF would compile; in auto mode the node
    // would have stayed out anyway (TF keeps lists out), so it is only informative.
    Log(options.mode == JitMode::kAll ? LogLevel::kWarning : LogLevel::kInfo,
        "autofix B: %s runs in the runtime so that no TensorList crosses the compiled "
        "boundary (%s)",
        k.node->DebugName(), k.why);
  }
  return !kept.empty();
}

bool IsLoopBackEdge(const tf::Node& from, const tf::Node& to) {
  return (from.op() == "NextIteration" || from.op() == "RefNextIteration") &&
         (to.op() == "Merge" || to.op() == "RefMerge");
}

bool IsTrivial(const tf::Node& node) {
  static const char* const kTrivial[] = {"Const", "Identity", "IdentityN", "StopGradient", "Shape"};
  return std::any_of(std::begin(kTrivial), std::end(kTrivial),
                     [&](const char* op) { return node.op() == op; });
}

// Union-find over node ids with a successor set per representative.
class UnitGraph {
 public:
  explicit UnitGraph(int n) : parent_(n), succ_(n) { std::iota(parent_.begin(), parent_.end(), 0); }

  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void AddEdge(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) succ_[a].insert(b);
  }
  // True if b is reachable from a by a path other than the direct edge a->b.
  bool HasIndirectPath(int a, int b) {
    std::vector<int> stack;
    absl::flat_hash_set<int> seen;
    for (int s : succ_[a]) {
      s = Find(s);
      if (s != b && seen.insert(s).second) stack.push_back(s);
    }
    while (!stack.empty()) {
      int x = stack.back();
      stack.pop_back();
      for (int s : succ_[x]) {
        s = Find(s);
        if (s == b) return true;
        if (s != x && seen.insert(s).second) stack.push_back(s);
      }
    }
    return false;
  }
  void Merge(int a, int b) {
    a = Find(a);
    b = Find(b);
    parent_[b] = a;
    for (int s : succ_[b]) succ_[a].insert(s);
    succ_[b].clear();
    // Re-point every successor set at the representative lazily via Find(); drop self edges.
    absl::flat_hash_set<int> cleaned;
    for (int s : succ_[a]) {
      s = Find(s);
      if (s != a) cleaned.insert(s);
    }
    succ_[a] = std::move(cleaned);
  }

 private:
  std::vector<int> parent_;
  std::vector<absl::flat_hash_set<int>> succ_;
};

// Fills inputs/outputs of a cluster from the graph's edges.
void FinishSpec(const tf::Graph& graph, const ClusteringOptions& options,
                const std::vector<int>& cluster_of, int index, tf2hlo::ClusterSpec* spec) {
  absl::flat_hash_set<std::pair<const tf::Node*, int>> seen_in, seen_out;
  auto in_this = [&](const tf::Node* n) { return cluster_of[n->id()] == index; };
  auto considered = [&](const tf::Node* n) {
    return options.subgraph.empty() || options.subgraph.contains(n);
  };
  for (const tf::Node* node : spec->nodes) {
    for (const tf::Output& in : node->inputs()) {
      if (in_this(in.node)) continue;
      if (seen_in.insert({in.node, in.index}).second) spec->inputs.push_back(in);
    }
    for (const auto& [consumer, slot] : node->data_consumers()) {
      if (in_this(consumer) || !considered(consumer)) continue;
      const tf::Output& out = consumer->input(slot);
      if (seen_out.insert({out.node, out.index}).second) spec->outputs.push_back(out);
    }
  }
  for (const tf::Output& f : options.fetched) {
    if (in_this(f.node) && seen_out.insert({f.node, f.index}).second) spec->outputs.push_back(f);
  }
}

}  // namespace

absl::StatusOr<JitMode> ParseJitMode(absl::string_view text) {
  if (text == "none") return JitMode::kNone;
  if (text == "off") return JitMode::kOff;
  if (text == "auto") return JitMode::kAuto;
  if (text == "all") return JitMode::kAll;
  return InvalidArgument("unknown jit mode '%s'; expected one of: none, off, auto, all", text);
}

const char* JitModeName(JitMode mode) {
  switch (mode) {
    case JitMode::kNone:
      return "none";
    case JitMode::kOff:
      return "off";
    case JitMode::kAuto:
      return "auto";
    case JitMode::kAll:
      return "all";
  }
  return "?";
}

namespace {

absl::StatusOr<ClusteringResult> FindClustersOnce(const tf::Graph& graph,
                                                  const ClusteringOptions& options) {
  const int n = graph.num_nodes();
  ClusteringResult result;
  result.cluster_of.assign(n, -1);
  auto considered = [&](const tf::Node* node) {
    return options.subgraph.empty() || options.subgraph.contains(node);
  };
  std::vector<bool> candidate(n, false);
  std::vector<std::string> unsupported;
  for (const tf::Node* node : graph.topological_order()) {
    if (!considered(node)) continue;
    std::string why;
    std::optional<rules::RuleId> rule;  // the known-issue rule that keeps it out, if one does
    // Nodes placed on a GPU compile even without auto-clustering, each as its own cluster:
    // tfjit has no hand-written GPU kernels, and TF runs them op by op there.
    const JitMode mode =
        options.mode == JitMode::kOff && OnGpu(options, *node) ? JitMode::kAuto : options.mode;
    bool fed = false;
    for (int i = 0; i < node->num_outputs(); ++i) fed |= options.fed.contains({node, i});
    if (mode == JitMode::kNone || mode == JitMode::kOff) {
      why = absl::StrCat("jit mode is ", JitModeName(mode));
    } else if (auto ex = options.excluded.find(node->id()); ex != options.excluded.end()) {
      why = ex->second;
    } else if (fed) {
      why = "its output is fed by the caller";
    } else if (mode == JitMode::kAll && rules::IsDynamicTensorArray(*node)) {
      return AppendContext(rules::DynamicArrayError(*node),
                           absl::StrCat("[[{{node ", node->name(),
                                        "}}]] TF1 TensorArrayV3 with "
                                        "dynamic_size=true; give it a fixed size"));
    } else if (options.autofix && CompilableRefUpdate(options, *node) &&
               tf2hlo::CanLower(*node, &why)) {
      candidate[node->id()] = true;
      continue;
    } else if (StaysInRuntime(*node, &why, mode == JitMode::kAll) &&
               // Must-compile code compiles stateful RNG (known issue E); auto mode does not.
               !(mode == JitMode::kAll && rules::IsStatefulRandomOp(node->op()))) {
      if (rules::IsStatefulRandomOp(node->op())) rule = rules::RuleId::kRandomSeeds;
      // Variables' handles come from the runtime (with --autofix, TF1 references too).
      if (mode == JitMode::kAll && node->op() != "Placeholder" &&
          node->op() != "PlaceholderWithDefault" && node->op() != "NoOp" &&
          node->op() != "VarHandleOp" && !(options.autofix && IsRefVariable(*node)) &&
          node->called_function() == nullptr) {
        unsupported.push_back(absl::StrCat(node->op(), " (", why, "){{node ", node->name(), "}}"));
      }
    } else if (mode == JitMode::kAuto && !options.autofix && rules::CarriesTensorList(*node)) {
      why =
          "TensorList/TensorArray (variant) values stay in the runtime in auto-clustering, as "
          "in TF";
      rule = rules::RuleId::kListCrossing;
    } else if (mode == JitMode::kAuto && VariableOnOtherDevice(options, *node, &why)) {
      // TF's auto-clustering never gives a cluster a variable of another device (issue A).
      rule = rules::RuleId::kVariableDevice;
    } else if (mode == JitMode::kAuto && tf2hlo::IsFunctionalControlFlow(node->op()) &&
               !tf2hlo::ControlFlowIsStaticallyCompilable(*node, &why)) {
      // While/If that would fail to compile stay in the runtime; kAll reports the exact error.
    } else if (mode == JitMode::kAuto && node->op() == "Range" &&
               !std::all_of(node->inputs().begin(), node->inputs().end(),
                            [](const tf::Output& in) { return DerivesFromConstants(in); }) &&
               !(node->num_inputs() == 3 && DerivesFromConstants(node->input(0)) &&
                 DerivesFromConstants(node->input(2)) && DerivesFromPadded(node->input(1)))) {
      why = "output shape depends on input values (Range bounds computed at run time)";
    } else if (!tf2hlo::CanLower(*node, &why)) {
      if (mode == JitMode::kAll) {
        unsupported.push_back(absl::StrCat(node->op(), " (", why, "){{node ", node->name(), "}}"));
      }
    } else {
      candidate[node->id()] = true;
      continue;
    }
    result.why_not[node->id()] = why;
    if (rule.has_value()) result.rule_of[node->id()] = *rule;
  }
  // Autofix B: lists compile where their producers and consumers compile too (auto mode
  // lets list ops join clusters), and list ops at a boundary stay in the runtime.
  const bool kept_lists = (options.mode == JitMode::kAll || options.mode == JitMode::kAuto) &&
                          options.autofix &&
                          KeepCrossingListsInRuntime(graph, options, candidate, &result);
  if (!unsupported.empty()) {
    return rules::UnsupportedOpsError(graph.source(), options.device, unsupported);
  }
  if (options.mode == JitMode::kNone ||
      (options.mode == JitMode::kOff &&
       std::none_of(candidate.begin(), candidate.end(), [](bool c) { return c; }))) {
    return result;
  }

  // Call nodes run as units even in kAll mode (their bodies compile on their own), so kAll
  // may then need several clusters, merged as in auto mode to avoid cycles through a call.
  bool has_calls = false;
  UnitGraph units(n);
  // Values padded to a bound with a size known only at run time (Where, NMS without padding,
  // and what reads them on: tf2hlo/dynamic_sizes.h): a reader that does not compile on one
  // never joins its producer's unit (the producer's cluster cuts it at its edge instead).
  std::vector<const tf::Node*> order(graph.topological_order().begin(),
                                     graph.topological_order().end());
  const tf2hlo::PaddedAnalysis padded = tf2hlo::AnalyzePadded(
      order, [&](const tf::Node& node) { return considered(&node) && candidate[node.id()]; });
  has_calls |= !padded.padded.empty();  // kAll then needs several clusters, merged cycle-safely
  // Per unit representative: how many of its nodes are in a refused pair.
  std::vector<int> refused_nodes(static_cast<size_t>(n), 0);
  for (const auto& [producer, reader] : padded.refused) {
    ++refused_nodes[static_cast<size_t>(producer->id())];
    ++refused_nodes[static_cast<size_t>(reader->id())];
  }
  for (const tf::Node* node : graph.topological_order()) {
    if (!considered(node)) continue;
    has_calls |= node->called_function() != nullptr || kept_lists;
    // A node that stays out but sits between compiled nodes (e.g. a tf.group NoOp) could
    // close a cycle through one all-in cluster: merge cycle-safely then.
    has_calls |= !candidate[node->id()] &&
                 (node->num_inputs() > 0 || !node->control_inputs().empty()) &&
                 (!node->data_consumers().empty() || !node->control_consumers().empty());
    // A TF1 loop's NextIteration -> Merge back edge would make the unit graph cyclic; paths
    // through the loop (Enter -> ... -> Exit) remain without it.
    for (const tf::Output& in : node->inputs()) {
      if (IsLoopBackEdge(*in.node, *node)) continue;
      units.AddEdge(in.node->id(), node->id());
    }
    for (const tf::Node* c : node->control_inputs()) units.AddEdge(c->id(), node->id());
  }
  // Candidate nodes per unit representative, for the maximum cluster size.
  std::vector<int> unit_size(static_cast<size_t>(n), 1);
  for (const tf::Node* node : graph.topological_order()) {
    if (!candidate[node->id()]) continue;
    // Data and control edges both contract, as in TF (a control edge orders two variable
    // updates; inside one cluster the lowering keeps that order).
    std::vector<const tf::Node*> consumers;
    for (const auto& [consumer, slot] : node->data_consumers()) consumers.push_back(consumer);
    for (const tf::Node* consumer : node->control_consumers()) consumers.push_back(consumer);
    for (const tf::Node* consumer : consumers) {
      if (!candidate[consumer->id()] || !considered(consumer)) continue;
      if (DeviceOf(options, *node) != DeviceOf(options, *consumer)) continue;  // one device
      if (options.mode == JitMode::kOff) continue;  // GPU nodes without auto-clustering: one each
      if (ScopeOf(*node) != ScopeOf(*consumer)) continue;  // _XlaScope separates clusters
      const int a = units.Find(node->id()), b = units.Find(consumer->id());
      if (a == b) continue;
      if (options.mode == JitMode::kAuto && options.max_cluster_size > 0 &&
          unit_size[static_cast<size_t>(a)] + unit_size[static_cast<size_t>(b)] >
              options.max_cluster_size) {
        continue;
      }
      // A refused read of a padded value stays across units (only units holding one of its
      // nodes are searched).
      auto refused = [&]() {
        if (refused_nodes[static_cast<size_t>(a)] == 0 ||
            refused_nodes[static_cast<size_t>(b)] == 0) {
          return false;
        }
        for (const auto& [producer, reader] : padded.refused) {
          const int p = units.Find(producer->id()), r = units.Find(reader->id());
          if ((p == a && r == b) || (p == b && r == a)) return true;
        }
        return false;
      };
      if (refused()) continue;
      if ((options.mode == JitMode::kAll && !has_calls) || !units.HasIndirectPath(a, b)) {
        units.Merge(a, b);  // a stays the representative
        unit_size[static_cast<size_t>(a)] += unit_size[static_cast<size_t>(b)];
        refused_nodes[static_cast<size_t>(a)] += refused_nodes[static_cast<size_t>(b)];
      }
    }
  }
  // Group candidates by representative, in topological order; drop trivial groups.
  absl::flat_hash_map<int, std::vector<const tf::Node*>> groups;
  std::vector<int> group_order;
  for (const tf::Node* node : graph.topological_order()) {
    if (!candidate[node->id()]) continue;
    // In must-compile mode every candidate joins one cluster, connected or not.
    const int rep = options.mode == JitMode::kAll && !has_calls ? 0 : units.Find(node->id());
    if (!groups.contains(rep)) group_order.push_back(rep);
    groups[rep].push_back(node);
  }
  for (int rep : group_order) {
    const std::vector<const tf::Node*>& nodes = groups[rep];
    const bool trivial =
        std::all_of(nodes.begin(), nodes.end(), [](const tf::Node* x) { return IsTrivial(*x); });
    if (trivial && options.mode != JitMode::kAll) {
      for (const tf::Node* x : nodes) {
        result.why_not[x->id()] = "its cluster would hold only constants/identities";
      }
      continue;
    }
    if (options.mode == JitMode::kAuto &&
        static_cast<int>(nodes.size()) < options.min_cluster_size) {
      for (const tf::Node* x : nodes) {
        result.why_not[x->id()] =
            absl::StrCat("its cluster would hold ", nodes.size(),
                         " node(s), fewer than the "
                         "minimum cluster size ",
                         options.min_cluster_size, " (--tf_xla_min_cluster_size)");
      }
      continue;
    }
    const int index = static_cast<int>(result.clusters.size());
    Cluster c;
    c.spec.name = absl::StrCat("cluster_", index);
    c.spec.nodes = nodes;
    c.must_compile = options.mode == JitMode::kAll;
    c.device = DeviceOf(options, *nodes.front());
    for (const tf::Node* x : nodes) result.cluster_of[x->id()] = index;
    result.clusters.push_back(std::move(c));
  }
  for (size_t i = 0; i < result.clusters.size(); ++i) {
    FinishSpec(graph, options, result.cluster_of, static_cast<int>(i), &result.clusters[i].spec);
  }
  return result;
}

}  // namespace

// Auto-clustering with --autofix lets TensorLists into clusters, and KeepCrossingListsInRuntime
// keeps list ops next to runtime nodes out. Two candidates may still land in different
// clusters (a node kept out between them, e.g. a Range with run-time bounds, would close a
// cycle): their list would fail both clusters with known issue B and run them all on kernels
// (faceboxes under --autofix compiled none of its nodes). Instead the nodes on both sides
// of such an edge stay in the runtime with the list, and the graph is clustered again until
// no list crosses.
absl::StatusOr<ClusteringResult> FindClusters(const tf::Graph& graph,
                                              const ClusteringOptions& options) {
  if (options.mode != JitMode::kAuto || !options.autofix) return FindClustersOnce(graph, options);
  ClusteringOptions opts = options;
  for (;;) {
    TFJIT_ASSIGN_OR_RETURN(ClusteringResult result, FindClustersOnce(graph, opts));
    bool changed = false;
    for (const tf::Node* node : graph.topological_order()) {
      if (!opts.subgraph.empty() && !opts.subgraph.contains(node)) continue;  // does not run
      for (const tf::Output& in : node->inputs()) {
        if (in.node->output_types()[static_cast<size_t>(in.index)] != DType::kVariant) continue;
        const int from = result.cluster_of[in.node->id()];
        const int to = result.cluster_of[node->id()];
        if (from == to) continue;
        const std::string why =
            absl::StrCat("autofix B: its TensorList ", in.node->name(), ":", in.index,
                         " would cross a "
                         "cluster's edge to ",
                         node->name(), ", so the list stays in the runtime");
        for (const tf::Node* side : {static_cast<const tf::Node*>(in.node), node}) {
          if (result.cluster_of[side->id()] >= 0 && !opts.excluded.contains(side->id())) {
            opts.excluded[side->id()] = why;
            changed = true;
          }
        }
      }
    }
    if (!changed) return result;
  }
}

}  // namespace tfjit::cluster
