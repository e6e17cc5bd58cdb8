// LowerCluster: walks the cluster's nodes in order and calls each op's lowering function.
#include "compiler/tf2hlo/lowering.h"

#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/hlo/builder.h"
#include "compiler/rules/b_list_crossing.h"
#include "compiler/rules/e_random_seeds.h"
#include "compiler/rules/f_constant_inputs.h"
#include "compiler/tf2hlo/dynamic_sizes.h"
#include "compiler/tf2hlo/function_lowering.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/run_control.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

const std::vector<OpLowering>& LoweringTable() {
  static const std::vector<OpLowering>* table = [] {
    auto* t = new std::vector<OpLowering>();
    AppendMathLowerings(t);
    AppendReductionLowerings(t);
    AppendArrayLowerings(t);
    AppendNnLowerings(t);
    AppendRandomLowerings(t);
    AppendControlFlowLowerings(t);
    AppendResourceLowerings(t);
    AppendListLowerings(t);
    AppendElementwiseLowerings(t);
    AppendSliceLowerings(t);
    AppendConvLowerings(t);
    AppendImageLowerings(t);
    AppendGradientsLowerings(t);
    AppendOptimizersLowerings(t);
    AppendLinalgLowerings(t);
    AppendLinalgMatmulLowerings(t);
    AppendScatterSegmentLowerings(t);
    AppendArrayMoreLowerings(t);
    AppendSpecialLowerings(t);
    AppendRandomMoreLowerings(t);
    AppendImageMoreLowerings(t);
    AppendNnMoreLowerings(t);
    AppendXlaLowerings(t);
    AppendGraphLowerings(t);
    std::sort(t->begin(), t->end(), [](const OpLowering& a, const OpLowering& b) {
      return absl::string_view(a.op) < absl::string_view(b.op);
    });
    return t;
  }();
  return *table;
}

}  // namespace

absl::Status LowerNode(LoweringContext& ctx, const tf::Node& node) {
  const OpLowering* lowering = LoweringFor(node);
  if (lowering == nullptr) {
    return Unimplemented("no HLO lowering for op %s", node.op());
  }
  hlo::Metadata meta;
  meta.tf_node = node.name();
  meta.tf_op = node.op();
  ctx.b().set_metadata(std::move(meta));
  return LowerNodeWithSizes(ctx, node, *lowering);
}

double LowestValue(DType t) {
  switch (t) {
    case DType::kInt8:
      return std::numeric_limits<int8_t>::lowest();
    case DType::kInt16:
      return std::numeric_limits<int16_t>::lowest();
    case DType::kInt32:
      return std::numeric_limits<int32_t>::lowest();
    case DType::kInt64:
      return static_cast<double>(std::numeric_limits<int64_t>::lowest());
    default:
      return IsFloatingDType(t) ? -std::numeric_limits<double>::infinity() : 0.0;
  }
}

absl::Status KernelOnlyLowering(LoweringContext&, const tf::Node& node) {
  return Unimplemented("node %s: %s runs only as a fallback kernel", node.DebugName(), node.op());
}

bool DataDependentShape(const tf::Node& node, std::string* why) {
  *why = absl::StrCat("op ", node.op(),
                      " stays in the runtime: its output shape depends on "
                      "input values");
  return false;
}

const OpLowering* FindOpLowering(absl::string_view op) {
  const std::vector<OpLowering>& table = LoweringTable();
  auto it = std::lower_bound(
      table.begin(), table.end(), op,
      [](const OpLowering& l, absl::string_view o) { return absl::string_view(l.op) < o; });
  return (it != table.end() && it->op == op) ? &*it : nullptr;
}

bool HasComplexValues(const tf::Node& node) {
  for (const std::vector<DType>* types : {&node.input_types(), &node.output_types()}) {
    for (DType t : *types) {
      if (IsComplexDType(t)) return true;
    }
  }
  return false;
}

const OpLowering* LoweringFor(const tf::Node& node) {
  return HasComplexValues(node) ? FindComplexLowering(node.op()) : FindOpLowering(node.op());
}

std::string ClusterNodeOfError(const absl::Status& status) {
  auto payload = status.GetPayload(kClusterNodePayloadUrl);
  if (!payload.has_value()) return std::string();
  const std::string names(*payload);
  return names.substr(0, names.find('\n'));
}

std::vector<std::string> ClusterNodesOfError(const absl::Status& status) {
  auto payload = status.GetPayload(kClusterNodePayloadUrl);
  if (!payload.has_value()) return {};
  return absl::StrSplit(std::string(*payload), '\n', absl::SkipEmpty());
}

std::vector<int> RowCountedOutputs(const tf::Node& node) {
  const std::string& op = node.op();
  if (op == "Where") return {0};
  if (op == "NonMaxSuppression" || op == "NonMaxSuppressionV2" || op == "NonMaxSuppressionV3") {
    return {0};
  }
  if (op == "NonMaxSuppressionV4" || op == "NonMaxSuppressionV5") {
    absl::StatusOr<bool> pad = tf::GetBoolAttrOr(node, "pad_to_max_output_size", false);
    if (pad.ok() && *pad) return {};
    // V5: selected_indices and selected_scores; valid_outputs is a scalar.
    return op == "NonMaxSuppressionV5" ? std::vector<int>{0, 1} : std::vector<int>{0};
  }
  return {};
}

bool HasRowCountedOutput(const tf::Node& node) { return !RowCountedOutputs(node).empty(); }

hlo::Shape ParameterShape(DType dtype, std::vector<int64_t> dims) {
  if (IsComplexDType(dtype)) dims.push_back(2);
  return hlo::Shape(ComplexPartDType(dtype), std::move(dims));
}

bool CanLower(const tf::Node& node, std::string* why) {
  // Complex values compile only through the lowerings written for them (complex_values.h):
  // every other lowering would read a complex value's (re, im) dim as data.
  if (HasComplexValues(node)) {
    const OpLowering* lowering = FindComplexLowering(node.op());
    if (lowering == nullptr) {
      DType t = DType::kComplex64;
      for (const std::vector<DType>* types : {&node.input_types(), &node.output_types()}) {
        for (DType d : *types) {
          if (IsComplexDType(d)) t = d;
        }
      }
      *why = absl::StrCat(DTypeName(t), " values of op ", node.op(),
                          " run on kernels: tfjit "
                          "compiles complex values only in the ops `tfjit ops` lists with "
                          "complex types");
      return false;
    }
    for (const std::vector<DType>* types : {&node.input_types(), &node.output_types()}) {
      for (DType t : *types) {
        if (!IsNumericOrComplexDType(t)) {
          *why = absl::StrCat("type ", DTypeName(t), " cannot be compiled");
          return false;
        }
      }
    }
    if (lowering->can_lower != nullptr) return lowering->can_lower(node, why);
    return true;
  }
  const OpLowering* lowering = FindOpLowering(node.op());
  if (lowering == nullptr) {
    *why = absl::StrCat("op ", node.op(), " has no HLO lowering");
    return false;
  }
  for (size_t i = 0; i < node.input_types().size(); ++i) {
    const DType t = node.input_types()[i];
    if (t == DType::kResource && lowering->takes_resource) continue;
    if (t == DType::kVariant && lowering->takes_list) continue;
    if (!IsNumericDType(t)) {
      *why = absl::StrCat("input type ", DTypeName(t), " cannot be compiled");
      return false;
    }
  }
  for (DType t : node.output_types()) {
    if (t == DType::kVariant && lowering->takes_list) continue;
    if (t == DType::kResource && lowering->takes_resource) continue;
    if (!IsNumericDType(t)) {
      *why = absl::StrCat("output type ", DTypeName(t), " cannot be compiled");
      return false;
    }
    if (lowering->float_only && !IsFloatingDType(t)) {
      *why = absl::StrCat("op ", node.op(), " is compiled for floating-point types only, not ",
                          DTypeName(t));
      return false;
    }
  }
  if (lowering->can_lower != nullptr) return lowering->can_lower(node, why);
  return true;
}

namespace {

// Inputs of a While/If that its bodies need as compile-time constants (a loop variable only
// when the loop passes it through unchanged): the launch reads their values, as TF compiles
// a jit function for the values of such arguments.
std::vector<int> ControlFlowConstantInputs(const tf::Node& node) {
  if (!IsFunctionalControlFlow(node.op())) return {};
  const bool is_while = IsFunctionalWhile(node.op());
  std::vector<bool> wanted;
  const int first = is_while ? 0 : 1;
  for (const char* attr : is_while ? std::vector<const char*>{"cond", "body"}
                                   : std::vector<const char*>{"then_branch", "else_branch"}) {
    absl::StatusOr<tf::FunctionBody> body = InstantiateFunctionAttr(node, attr);
    if (!body.ok()) return {};
    std::vector<bool> w = BodyInputsNeedingConstants(*body);
    if (is_while && std::string(attr) == "body") {
      const std::vector<bool> invariant = LoopInvariantVars(*body);
      for (size_t i = 0; i < w.size(); ++i) w[i] = w[i] && i < invariant.size() && invariant[i];
    }
    wanted.resize(std::max(wanted.size(), w.size()), false);
    for (size_t i = 0; i < w.size(); ++i) wanted[i] = wanted[i] || w[i];
  }
  std::vector<int> out;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const int input = first + static_cast<int>(i);
    if (wanted[i] && input < node.num_inputs() &&
        node.input_types()[static_cast<size_t>(input)] != DType::kResource) {
      out.push_back(input);
    }
  }
  return out;
}

}  // namespace

std::vector<int> MustBeConstantInputs(const ClusterSpec& cluster) {
  absl::flat_hash_set<const tf::Node*> in_cluster(cluster.nodes.begin(), cluster.nodes.end());
  // Values computed from a size known only at run time (dynamic_sizes.h) are never constants:
  // the lowering takes them as expressions or bounds, or fails naming the node.
  const PaddedAnalysis padded =
      AnalyzePadded(cluster.nodes, [&](const tf::Node& n) { return in_cluster.contains(&n); });
  return rules::InputsThatMustBeConstant(
      cluster.nodes, cluster.inputs,
      [](const tf::Node& node) {
        std::vector<int> inputs = node.compile_time_const_inputs();
        for (int i : ControlFlowConstantInputs(node)) inputs.push_back(i);
        return inputs;
      },
      [&](const tf::Output& out) {
        return padded.dependent.contains(
            std::make_pair(static_cast<const tf::Node*>(out.node), out.index));
      });
}

bool BodiesDrawRandom(const tf::Node& node) {
  static thread_local int depth = 0;
  if (!IsFunctionalControlFlow(node.op()) || depth > 32) return false;
  ++depth;
  bool draws = false;
  for (const char* attr : {"cond", "body", "then_branch", "else_branch"}) {
    if (!node.def().attr().contains(attr)) continue;
    absl::StatusOr<tf::FunctionBody> body = InstantiateFunctionAttr(node, attr);
    if (!body.ok()) continue;
    for (const tf::Node* inner : NeededBodyNodes(*body)) {
      draws |= rules::IsStatefulRandomOp(inner->op()) || BodiesDrawRandom(*inner);
    }
  }
  --depth;
  return draws;
}

std::vector<const tf::Node*> StatefulRandomNodes(const ClusterSpec& cluster) {
  std::vector<const tf::Node*> result;
  for (const tf::Node* node : cluster.nodes) {
    if (rules::IsStatefulRandomOp(node->op()) || BodiesDrawRandom(*node)) result.push_back(node);
  }
  return result;
}

std::vector<int> ResourceUpdateInputs(const ClusterSpec& cluster) {
  absl::flat_hash_set<std::pair<const tf::Node*, int>> written;
  for (const tf::Node* node : cluster.nodes) {
    const std::string& op = node->op();
    if ((op == "AssignVariableOp" || op == "AssignAddVariableOp" || op == "AssignSubVariableOp") &&
        node->num_inputs() > 0) {
      written.insert({node->input(0).node, node->input(0).index});
    }
    // A compiled loop or conditional carries its variables through and returns them (their
    // bodies may assign them); a ResourceApply* optimizer writes every variable it takes, and a
    // ResourceScatter* or ResourceStridedSliceAssign writes its variable.
    if (IsFunctionalControlFlow(op) || absl::StartsWith(op, "ResourceApply") ||
        absl::StartsWith(op, "ResourceScatter") || op == "ResourceStridedSliceAssign") {
      for (int i = 0; i < node->num_inputs(); ++i) {
        if (node->input_types()[i] == DType::kResource) {
          written.insert({node->input(i).node, node->input(i).index});
        }
      }
    }
    // TF1 reference-variable updates (--autofix): their leading reference inputs.
    for (int i = 0; i < std::min(CompilableRefUpdateInputs(op), node->num_inputs()); ++i) {
      written.insert({node->input(i).node, node->input(i).index});
    }
  }
  // A handle reaches the writer through Identities inside the cluster (an inlined call's
  // argument): the variable written is the cluster input they start from.
  const absl::flat_hash_set<const tf::Node*> inside(cluster.nodes.begin(), cluster.nodes.end());
  absl::flat_hash_set<std::pair<const tf::Node*, int>> sources;
  for (std::pair<const tf::Node*, int> w : written) {
    for (int hops = 0; hops < 64 && inside.contains(w.first); ++hops) {
      const std::string& op = w.first->op();
      if (op == "Identity" || op == "Snapshot") {
        w = {w.first->input(0).node, w.first->input(0).index};
      } else if (op == "IdentityN" && w.second < w.first->num_inputs()) {
        w = {w.first->input(w.second).node, w.first->input(w.second).index};
      } else {
        break;
      }
    }
    sources.insert(w);
  }
  std::vector<int> result;
  for (size_t i = 0; i < cluster.inputs.size(); ++i) {
    const tf::Output& in = cluster.inputs[i];
    if (sources.contains(std::pair<const tf::Node*, int>(in.node, in.index))) {
      result.push_back(static_cast<int>(i));
    }
  }
  return result;
}

absl::StatusOr<std::unique_ptr<hlo::Module>> LowerCluster(const ClusterSpec& cluster,
                                                          const std::vector<ArgInfo>& args,
                                                          bool autofix) {
  if (args.size() != cluster.inputs.size()) {
    return Internal("cluster '%s' has %d inputs but %d arguments were given", cluster.name,
                    cluster.inputs.size(), args.size());
  }
  TFJIT_RETURN_IF_ERROR(rules::CheckNoListCrosses(cluster.inputs, cluster.outputs, cluster.name));
  auto module = std::make_unique<hlo::Module>(cluster.name);
  hlo::Computation* entry = module->AddComputation("main");
  module->set_entry(entry);
  LoweringOptions options;
  options.autofix = autofix;
  LoweringContext ctx(module.get(), entry, &options);
  for (size_t i = 0; i < args.size(); ++i) {
    const tf::Output& in = cluster.inputs[i];
    std::string name = absl::StrCat("arg", i);
    hlo::Instruction* param = ctx.b().Parameter(static_cast<int64_t>(i),
                                                ParameterShape(args[i].dtype, args[i].dims), name);
    if (args[i].value.has_value()) ctx.BindConstantValue(param, *args[i].value);
    if (args[i].variable.has_value()) {
      ResourceState var;
      var.name = args[i].variable->name;
      var.container = args[i].variable->container;
      var.dtype = args[i].dtype;
      var.arg_index = static_cast<int>(i);
      var.value = args[i].variable->initialized ? param : nullptr;
      var.ref = args[i].variable->ref;
      ctx.BindResource(in, std::move(var));
    } else {
      ctx.Bind(in, param);
    }
  }
  const std::vector<const tf::Node*> random_nodes = StatefulRandomNodes(cluster);
  for (size_t k = 0; k < random_nodes.size(); ++k) {
    options.random_states[random_nodes[k]].state =
        ctx.b().Parameter(static_cast<int64_t>(args.size() + k), hlo::Shape(DType::kUInt64, {3}),
                          absl::StrCat("rng_state", k));
  }
  // A node that fails does not end the lowering: the nodes that do not depend on it go on, so
  // one error names every node of the cluster that fails on its own (the runtime leaves them
  // all out of the next plan at once, not one per run). The first error is returned.
  absl::Status first_error;
  std::vector<std::string> failing;
  absl::flat_hash_set<const tf::Node*> failed;
  for (const tf::Node* node : cluster.nodes) {
    bool after_failure = false;
    for (const tf::Output& in : node->inputs()) after_failure |= failed.contains(in.node);
    for (const tf::Node* c : node->control_inputs()) after_failure |= failed.contains(c);
    if (after_failure) {
      failed.insert(node);
      continue;
    }
    // The run's deadline and cancellation hold while compiling (core/run_control.h).
    TFJIT_RETURN_IF_ERROR(RunCheckpoint(
        [&] { return absl::StrCat("lowering ", cluster.name, ", node ", node->DebugName()); }));
    absl::Status s = LowerNode(ctx, *node);
    if (!s.ok()) {
      failed.insert(node);
      failing.push_back(node->name());
      if (first_error.ok()) {
        first_error = AttachNode(
            AppendContext(s, absl::StrCat("[[{{node ", node->name(), "}}]] while lowering ",
                                          node->DebugName(), " in ", cluster.name)),
            node->name(), node->op());
      }
      if (s.code() == absl::StatusCode::kInternal) break;  // our own bug: stop there
    }
  }
  if (!first_error.ok()) {
    // The cluster's own nodes (AttachNode keeps the innermost: a While body's node).
    first_error.SetPayload(kClusterNodePayloadUrl, absl::Cord(absl::StrJoin(failing, "\n")));
    return first_error;
  }
  // An output padded along dim 0 (Where's rows, and what reads them on: dynamic_sizes.h)
  // leaves with its row count, which the runtime cuts it to.
  std::vector<hlo::Instruction*> results;
  std::vector<hlo::Instruction*> row_counts;
  for (const tf::Output& out : cluster.outputs) {
    TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * v, ctx.Value(out));
    if (const DynamicDim* d = ctx.DynamicOf(out)) {
      if (d->dim != 0) {
        absl::Status s = AttachNode(
            Unimplemented("cluster '%s': output %s:%d has a size known only at run time in dim "
                          "%d; only a leading dim can be cut at the cluster's edge",
                          cluster.name, out.node->name(), out.index, d->dim),
            out.node->name(), out.node->op());
        // Auto mode leaves the node out from the next run on (its input is cut instead).
        s.SetPayload(kClusterNodePayloadUrl, absl::Cord(out.node->name()));
        return s;
      }
      module->AddRowCountedOutput(static_cast<int64_t>(results.size()));
      TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * count, ctx.SizeValue(d->size));
      row_counts.push_back(count);
    }
    results.push_back(v);
  }
  for (int i : ResourceUpdateInputs(cluster)) {
    const tf::Output& in = cluster.inputs[static_cast<size_t>(i)];
    ResourceState* var = ctx.ResourceOf(in);
    if (var == nullptr)
      return Internal("cluster '%s': input %d is not a variable", cluster.name, i);
    if (var->value == nullptr) {
      return Internal("cluster '%s': variable '%s' is assigned but has no value", cluster.name,
                      var->name);
    }
    results.push_back(var->value);
  }
  for (const tf::Node* node : random_nodes) {
    hlo::Instruction* next = options.random_states[node].next;
    if (next == nullptr) {
      return Internal("cluster '%s': stateful random node %s did not advance its state",
                      cluster.name, node->DebugName());
    }
    results.push_back(next);
  }
  // Row counts of padded outputs, then the run-time checks (gather index ranges) last: the
  // runtime reads the checks before it installs any variable update or random state.
  for (hlo::Instruction* count : row_counts) results.push_back(count);
  if (options.runtime_checks.size() != module->runtime_checks().size()) {
    return Internal("cluster '%s': %d run-time check values for %d checks", cluster.name,
                    options.runtime_checks.size(), module->runtime_checks().size());
  }
  for (hlo::Instruction* check : options.runtime_checks) results.push_back(check);
  ctx.b().set_metadata({});
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * root, ctx.b().Tuple(results));
  entry->set_root(root);
  return module;
}

}  // namespace tfjit::tf2hlo
