// LowerCluster: walks the cluster's nodes in order and calls each op's lowering function.
#include "compiler/tf2hlo/lowering.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::tf2hlo {
namespace {

const std::vector<OpLowering>& LoweringTable() {
  static const std::vector<OpLowering>* table = [] {
    auto* t = new std::vector<OpLowering>();
    AppendMathLowerings(t);
    AppendArrayLowerings(t);
    AppendNnLowerings(t);
    AppendRandomLowerings(t);
    std::sort(t->begin(), t->end(), [](const OpLowering& a, const OpLowering& b) {
      return absl::string_view(a.op) < absl::string_view(b.op);
    });
    return t;
  }();
  return *table;
}

absl::Status LowerNode(LoweringContext& ctx, const tf::Node& node) {
  const OpLowering* lowering = FindOpLowering(node.op());
  if (lowering == nullptr) {
    return Unimplemented("no HLO lowering for op %s", node.op());
  }
  hlo::Metadata meta;
  meta.tf_node = node.name();
  meta.tf_op = node.op();
  ctx.b().set_metadata(std::move(meta));
  return lowering->fn(ctx, node);
}

}  // namespace

const OpLowering* FindOpLowering(absl::string_view op) {
  const std::vector<OpLowering>& table = LoweringTable();
  auto it = std::lower_bound(table.begin(), table.end(), op,
                             [](const OpLowering& l, absl::string_view o) {
                               return absl::string_view(l.op) < o;
                             });
  return (it != table.end() && it->op == op) ? &*it : nullptr;
}

bool CanLower(const tf::Node& node, std::string* why) {
  const OpLowering* lowering = FindOpLowering(node.op());
  if (lowering == nullptr) {
    *why = absl::StrCat("op ", node.op(), " has no HLO lowering");
    return false;
  }
  for (DType t : node.input_types()) {
    if (!IsNumericDType(t)) {
      *why = absl::StrCat("input type ", DTypeName(t), " cannot be compiled");
      return false;
    }
  }
  for (DType t : node.output_types()) {
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

std::vector<int> MustBeConstantInputs(const ClusterSpec& cluster) {
  absl::flat_hash_set<const tf::Node*> in_cluster(cluster.nodes.begin(), cluster.nodes.end());
  absl::flat_hash_set<std::pair<const tf::Node*, int>> needed_outputs;
  // Walk backwards: a needed output produced inside the cluster makes its producer's inputs
  // needed, except for Shape-like ops whose value depends only on the (static) input shape.
  std::vector<tf::Output> work;
  for (const tf::Node* node : cluster.nodes) {
    for (int i : node->compile_time_const_inputs()) {
      if (i < node->num_inputs()) work.push_back(node->input(i));
    }
  }
  while (!work.empty()) {
    tf::Output out = work.back();
    work.pop_back();
    if (!needed_outputs.insert({out.node, out.index}).second) continue;
    if (!in_cluster.contains(out.node)) continue;
    const std::string& op = out.node->op();
    if (op == "Shape" || op == "Size" || op == "Rank" || op == "Const") continue;
    for (const tf::Output& in : out.node->inputs()) work.push_back(in);
  }
  std::vector<int> result;
  for (size_t i = 0; i < cluster.inputs.size(); ++i) {
    const tf::Output& in = cluster.inputs[i];
    if (needed_outputs.contains(std::pair<const tf::Node*, int>(in.node, in.index))) {
      result.push_back(static_cast<int>(i));
    }
  }
  return result;
}

absl::StatusOr<std::unique_ptr<hlo::Module>> LowerCluster(const ClusterSpec& cluster,
                                                          const std::vector<ArgInfo>& args) {
  if (args.size() != cluster.inputs.size()) {
    return Internal("cluster '%s' has %d inputs but %d arguments were given", cluster.name,
                    cluster.inputs.size(), args.size());
  }
  auto module = std::make_unique<hlo::Module>(cluster.name);
  hlo::Computation* entry = module->AddComputation("main");
  module->set_entry(entry);
  LoweringContext ctx(module.get(), entry);
  for (size_t i = 0; i < args.size(); ++i) {
    const tf::Output& in = cluster.inputs[i];
    std::string name = absl::StrCat("arg", i);
    hlo::Instruction* param =
        ctx.b().Parameter(static_cast<int64_t>(i), hlo::Shape(args[i].dtype, args[i].dims), name);
    if (args[i].value.has_value()) ctx.BindConstantValue(param, *args[i].value);
    ctx.Bind(in, param);
  }
  for (const tf::Node* node : cluster.nodes) {
    absl::Status s = LowerNode(ctx, *node);
    if (!s.ok()) {
      return AttachNode(WithContext(s, absl::StrCat("lowering node ", node->DebugName())),
                        node->name(), node->op());
    }
  }
  std::vector<hlo::Instruction*> results;
  for (const tf::Output& out : cluster.outputs) {
    TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * v, ctx.Value(out));
    results.push_back(v);
  }
  ctx.b().set_metadata({});
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * root, ctx.b().Tuple(results));
  entry->set_root(root);
  return module;
}

}  // namespace tfjit::tf2hlo
