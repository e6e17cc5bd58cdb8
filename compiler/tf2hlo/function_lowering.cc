// Function bodies inside compiled clusters: instantiation from func attrs, the nodes a body
// needs, compile-time-constant analysis across the body boundary, and lowering to HLO.
#include "compiler/tf2hlo/function_lowering.h"

#include <functional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/dynamic_sizes.h"
#include "compiler/tf2hlo/lowering.h"
#include "compiler/tf2hlo/lowering_context.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::tf2hlo {
namespace {

// Nested While/If are analysed recursively; a function that (indirectly) contains a loop
// over itself would recurse forever, so the analysis gives up at this depth.
constexpr int kMaxNesting = 32;
thread_local int nesting_depth = 0;

struct NestingGuard {
  NestingGuard() { ++nesting_depth; }
  ~NestingGuard() { --nesting_depth; }
  bool too_deep() const { return nesting_depth > kMaxNesting; }
};

// Input placeholder node -> its index in the body's flat inputs.
absl::flat_hash_map<const tf::Node*, int> InputIndex(const tf::FunctionBody& body) {
  absl::flat_hash_map<const tf::Node*, int> index;
  for (size_t i = 0; i < body.inputs.size(); ++i) {
    absl::StatusOr<tf::Output> o = body.graph->FindOutput(body.inputs[i]);
    if (o.ok()) index[o->node] = static_cast<int>(i);
  }
  return index;
}

std::string ShapeProtoString(const tensorflow::TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "<unknown rank>";
  std::vector<std::string> dims;
  for (const auto& d : shape.dim()) dims.push_back(d.size() < 0 ? "?" : absl::StrCat(d.size()));
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// Which data inputs of a nested While/If must be known at compile time.
std::vector<bool> NestedWantedInputs(const tf::Node& node) {
  std::vector<bool> wanted(static_cast<size_t>(node.num_inputs()), false);
  NestingGuard guard;
  if (guard.too_deep()) return wanted;
  const bool is_while = IsFunctionalWhile(node.op());
  const int offset = is_while ? 0 : 1;  // If's input 0 is the predicate
  for (const char* attr : is_while ? std::vector<const char*>{"cond", "body"}
                                   : std::vector<const char*>{"then_branch", "else_branch"}) {
    absl::StatusOr<tf::FunctionBody> body = InstantiateFunctionAttr(node, attr);
    if (!body.ok()) continue;
    const std::vector<bool> inner = BodyInputsNeedingConstants(*body);
    for (size_t i = 0; i < inner.size() && i + offset < wanted.size(); ++i) {
      if (inner[i]) wanted[i + offset] = true;
    }
  }
  return wanted;
}

}  // namespace

bool IsFunctionalWhile(absl::string_view op) { return op == "While" || op == "StatelessWhile"; }

bool IsFunctionalControlFlow(absl::string_view op) {
  return IsFunctionalWhile(op) || op == "If" || op == "StatelessIf";
}

absl::StatusOr<tf::FunctionBody> InstantiateFunctionAttr(const tf::Node& node,
                                                         absl::string_view attr) {
  auto it = node.def().attr().find(std::string(attr));
  if (it == node.def().attr().end() || !it->second.has_func()) {
    return AttachNode(
        InvalidArgument("node %s has no function attr '%s'", node.DebugName(), std::string(attr)),
        node.name(), node.op());
  }
  if (node.graph() == nullptr) {
    return Internal("node %s is not part of a graph", node.DebugName());
  }
  const tensorflow::NameAttrList& func = it->second.func();
  // Compiled bodies hold the functions they call (XLA inlines them).
  return tf::InstantiateFunction(node.graph()->library(), node.graph()->versions(), func.name(),
                                 func.attr(), /*inline_calls=*/true);
}

std::vector<const tf::Node*> NeededBodyNodes(const tf::FunctionBody& body) {
  absl::flat_hash_set<const tf::Node*> needed;
  std::vector<const tf::Node*> work;
  auto push = [&](const tf::Node* n) {
    if (n != nullptr && needed.insert(n).second) work.push_back(n);
  };
  for (const std::string& out : body.outputs) {
    absl::StatusOr<tf::Output> o = body.graph->FindOutput(out);
    if (o.ok()) push(o->node);
  }
  for (const std::string& name : body.control_outputs) push(body.graph->FindNode(name));
  while (!work.empty()) {
    const tf::Node* n = work.back();
    work.pop_back();
    for (const tf::Output& in : n->inputs()) push(in.node);
    for (const tf::Node* c : n->control_inputs()) push(c);
  }
  const absl::flat_hash_map<const tf::Node*, int> inputs = InputIndex(body);
  std::vector<const tf::Node*> ordered;
  for (const tf::Node* n : body.graph->topological_order()) {
    if (!needed.contains(n) || inputs.contains(n) || n->op() == "NoOp") continue;
    ordered.push_back(n);
  }
  return ordered;
}

std::vector<bool> BodyInputsNeedingConstants(const tf::FunctionBody& body) {
  std::vector<bool> wanted(body.inputs.size(), false);
  const absl::flat_hash_map<const tf::Node*, int> inputs = InputIndex(body);
  std::vector<tf::Output> work;
  for (const tf::Node* node : NeededBodyNodes(body)) {
    for (int i : node->compile_time_const_inputs()) {
      if (i < node->num_inputs()) work.push_back(node->input(i));
    }
    if (IsFunctionalControlFlow(node->op())) {
      const std::vector<bool> nested = NestedWantedInputs(*node);
      for (size_t i = 0; i < nested.size(); ++i) {
        if (nested[i]) work.push_back(node->input(static_cast<int>(i)));
      }
    }
  }
  absl::flat_hash_set<std::pair<const tf::Node*, int>> seen;
  while (!work.empty()) {
    const tf::Output out = work.back();
    work.pop_back();
    if (!seen.insert({out.node, out.index}).second) continue;
    auto it = inputs.find(out.node);
    if (it != inputs.end()) {
      wanted[static_cast<size_t>(it->second)] = true;
      continue;
    }
    const std::string& op = out.node->op();
    if (op == "Shape" || op == "Size" || op == "Rank" || op == "Const") continue;
    for (const tf::Output& in : out.node->inputs()) work.push_back(in);
  }
  return wanted;
}

std::vector<bool> LoopInvariantVars(const tf::FunctionBody& body) {
  std::vector<bool> invariant(body.inputs.size(), false);
  const absl::flat_hash_map<const tf::Node*, int> inputs = InputIndex(body);
  for (size_t j = 0; j < body.outputs.size() && j < invariant.size(); ++j) {
    absl::StatusOr<tf::Output> o = body.graph->FindOutput(body.outputs[j]);
    if (!o.ok()) continue;
    tf::Output cur = *o;
    while ((cur.node->op() == "Identity" || cur.node->op() == "StopGradient") &&
           cur.node->num_inputs() == 1) {
      cur = cur.node->input(0);
    }
    auto it = inputs.find(cur.node);
    invariant[j] = it != inputs.end() && it->second == static_cast<int>(j);
  }
  return invariant;
}

bool CanLowerFunctionAttr(const tf::Node& node, absl::string_view attr, std::string* why) {
  NestingGuard guard;
  if (guard.too_deep()) {
    *why = absl::StrCat("functions nest more than ", kMaxNesting, " levels deep (recursion?)");
    return false;
  }
  absl::StatusOr<tf::FunctionBody> body = InstantiateFunctionAttr(node, attr);
  if (!body.ok()) {
    *why = absl::StrCat("its function attr '", attr,
                        "' cannot be instantiated: ", body.status().message());
    return false;
  }
  const std::string& name = body->graph->source();
  for (const tf::Node* inner : NeededBodyNodes(*body)) {
    std::string inner_why;
    if (!CanLower(*inner, &inner_why)) {
      *why = absl::StrCat("node ", inner->DebugName(), " of function '", name, "' (", attr,
                          "): ", inner_why);
      return false;
    }
  }
  return true;
}

bool ControlFlowIsStaticallyCompilable(const tf::Node& node, std::string* why) {
  const bool is_while = IsFunctionalWhile(node.op());
  auto shapes = node.def().attr().find("output_shapes");
  if (shapes != node.def().attr().end()) {
    const auto& list = shapes->second.list().shape();
    for (int k = 0; k < list.size(); ++k) {
      bool fixed = !list[k].unknown_rank();
      for (const auto& d : list[k].dim()) fixed &= d.size() >= 0;
      if (!fixed) {
        *why = absl::StrCat(is_while ? "loop variable " : "output ", k,
                            " has no fixed shape (output_shapes says ", ShapeProtoString(list[k]),
                            is_while ? "); compiled loops need loop-invariant shapes"
                                     : "); a compiled If needs branches of equal shapes");
        return false;
      }
    }
  }
  if (!is_while) return true;
  absl::StatusOr<tf::FunctionBody> cond = InstantiateFunctionAttr(node, "cond");
  absl::StatusOr<tf::FunctionBody> body = InstantiateFunctionAttr(node, "body");
  if (!cond.ok() || !body.ok()) return true;  // CanLower reports these
  const std::vector<bool> in_cond = BodyInputsNeedingConstants(*cond);
  const std::vector<bool> in_body = BodyInputsNeedingConstants(*body);
  const std::vector<bool> invariant = LoopInvariantVars(*body);
  for (size_t i = 0; i < invariant.size(); ++i) {
    const bool wanted = (i < in_cond.size() && in_cond[i]) || (i < in_body.size() && in_body[i]);
    if (wanted && !invariant[i]) {
      *why = absl::StrCat("loop variable ", i,
                          " changes across iterations and feeds an input "
                          "that must be a compile-time constant");
      return false;
    }
  }
  return true;
}

namespace {

// Binds the body's inputs (known constant or given value), lowers its nodes into ctx's
// computation and returns its outputs.
absl::StatusOr<std::vector<hlo::Instruction*>> LowerInto(
    LoweringContext& ctx, const tf::FunctionBody& body,
    const std::function<absl::StatusOr<hlo::Instruction*>(size_t)>& input,
    const std::vector<std::optional<Tensor>>& known_values,
    std::vector<hlo::Instruction*>* final_variables = nullptr) {
  const std::string& function = body.graph->source();
  for (size_t i = 0; i < body.inputs.size(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(tf::Output in, body.graph->FindOutput(body.inputs[i]));
    hlo::Instruction* value;
    if (i < known_values.size() && known_values[i].has_value()) {
      value = ctx.b().Constant(hlo::Literal::FromTensor(*known_values[i]));
    } else {
      TFJIT_ASSIGN_OR_RETURN(value, input(i));
    }
    if (in.node->output_types()[in.index] == DType::kResource) {
      // A variable carried by a loop or passed to a branch: its value is the operand.
      ResourceState var;
      var.name = in.node->name();
      var.dtype = value->shape().element_type();
      var.value = value;
      ctx.BindResource(in, std::move(var));
      continue;
    }
    ctx.Bind(in, value);
  }
  for (const tf::Node* node : NeededBodyNodes(body)) {
    absl::Status s = LowerNode(ctx, *node);
    if (!s.ok()) {
      return AttachNode(
          AppendContext(s, absl::StrCat("[[{{node ", node->name(), "}}]] while lowering ",
                                        node->DebugName(), " in function '", function, "'")),
          node->name(), node->op());
    }
  }
  ctx.b().set_metadata({});
  std::vector<hlo::Instruction*> outputs;
  for (const std::string& out : body.outputs) {
    TFJIT_ASSIGN_OR_RETURN(tf::Output o, body.graph->FindOutput(out));
    if (ResourceState* var = ctx.ResourceOf(o)) {  // a variable: its value at the end
      if (var->value == nullptr) return VariableNotFoundError(var->container, var->name);
      outputs.push_back(var->value);
      continue;
    }
    TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * v, ctx.Value(o));
    if (const DynamicDim* d = ctx.DynamicOf(o)) {
      return Unimplemented(
          "function '%s' returns %s, whose dim %d has a size known only at run "
          "time; a body's results need static shapes (pad it to a fixed size "
          "inside the body)",
          function, out, d->dim);
    }
    outputs.push_back(v);
  }
  if (final_variables != nullptr) {
    final_variables->assign(body.inputs.size(), nullptr);
    for (size_t i = 0; i < body.inputs.size(); ++i) {
      TFJIT_ASSIGN_OR_RETURN(tf::Output in, body.graph->FindOutput(body.inputs[i]));
      if (ResourceState* var = ctx.ResourceOf(in)) (*final_variables)[i] = var->value;
    }
  }
  return outputs;
}

}  // namespace

absl::StatusOr<LoweredBody> LowerFunctionBody(
    hlo::Module* module, const tf::FunctionBody& body, const std::vector<hlo::Shape>& param_shapes,
    const std::vector<std::optional<Tensor>>& known_values, const std::string& name,
    LoweringOptions* options, bool random_state) {
  const std::string& function = body.graph->source();
  if (param_shapes.size() != body.inputs.size()) {
    return InvalidArgument("function '%s' takes %d input(s), %d given", function,
                           body.inputs.size(), param_shapes.size());
  }
  LoweredBody lowered;
  lowered.computation = module->AddComputation(name);
  LoweringContext ctx(module, lowered.computation, options);
  std::vector<hlo::Shape> shapes = param_shapes;
  if (random_state) shapes.push_back(hlo::Shape(DType::kUInt64, {3}));
  lowered.parameter = ctx.b().Parameter(0, hlo::Shape::Tuple(shapes), "state");
  auto input = [&](size_t i) {
    return ctx.b().GetTupleElement(lowered.parameter, static_cast<int64_t>(i));
  };
  if (random_state) {
    TFJIT_ASSIGN_OR_RETURN(lowered.random_in, input(param_shapes.size()));
    ctx.set_body_random_state(lowered.random_in);
  }
  TFJIT_ASSIGN_OR_RETURN(lowered.outputs,
                         LowerInto(ctx, body, input, known_values, &lowered.final_variables));
  lowered.checks = ctx.pending_checks();
  lowered.random_out = ctx.body_random_state();
  return lowered;
}

absl::StatusOr<std::vector<hlo::Instruction*>> LowerFunctionBodyInline(
    hlo::Module* module, hlo::Computation* computation, const tf::FunctionBody& body,
    const std::vector<hlo::Instruction*>& inputs,
    const std::vector<std::optional<Tensor>>& known_values, LoweringOptions* options,
    std::vector<LoweringContext::PendingCheck>* checks, hlo::Instruction** random_state) {
  if (inputs.size() != body.inputs.size()) {
    return InvalidArgument("function '%s' takes %d input(s), %d given", body.graph->source(),
                           body.inputs.size(), inputs.size());
  }
  LoweringContext ctx(module, computation, options);
  auto input = [&](size_t i) -> absl::StatusOr<hlo::Instruction*> { return inputs[i]; };
  if (random_state != nullptr) ctx.set_body_random_state(*random_state);
  TFJIT_ASSIGN_OR_RETURN(std::vector<hlo::Instruction*> outputs,
                         LowerInto(ctx, body, input, known_values));
  const auto& pending = ctx.pending_checks();
  checks->insert(checks->end(), pending.begin(), pending.end());
  if (random_state != nullptr) *random_state = ctx.body_random_state();
  return outputs;
}

}  // namespace tfjit::tf2hlo
