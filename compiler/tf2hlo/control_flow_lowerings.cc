// Lowerings of functional control flow (While/StatelessWhile -> HLO while over a tuple of the
// loop variables, If/StatelessIf -> HLO conditional), of ControlTrigger (no values), and of
// the comparison and logical ops that loop conditions are made of.
#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/function_lowering.h"
#include "compiler/tf2hlo/list_lowering.h"
#include "compiler/tf2hlo/loop_analysis.h"
#include "compiler/tf2hlo/lowering.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/logging.h"
#include "core/status.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using hlo::Opcode;

// ---- Predicates ----

absl::Status LowerComparison(LoweringContext& ctx, const tf::Node& node, ComparisonDirection d) {
  TFJIT_ASSIGN_OR_RETURN(auto ab, ctx.BroadcastBinaryInputs(node));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Compare(d, ab.first, ab.second));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerLogical(LoweringContext& ctx, const tf::Node& node, Opcode opcode) {
  TFJIT_ASSIGN_OR_RETURN(auto ab, ctx.BroadcastBinaryInputs(node));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(opcode, ab.first, ab.second));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerLess(LoweringContext& c, const tf::Node& n) {
  return LowerComparison(c, n, ComparisonDirection::kLt);
}
absl::Status LowerLessEqual(LoweringContext& c, const tf::Node& n) {
  return LowerComparison(c, n, ComparisonDirection::kLe);
}
absl::Status LowerGreater(LoweringContext& c, const tf::Node& n) {
  return LowerComparison(c, n, ComparisonDirection::kGt);
}
absl::Status LowerGreaterEqual(LoweringContext& c, const tf::Node& n) {
  return LowerComparison(c, n, ComparisonDirection::kGe);
}
absl::Status LowerEqual(LoweringContext& c, const tf::Node& n) {
  return LowerComparison(c, n, ComparisonDirection::kEq);
}
absl::Status LowerNotEqual(LoweringContext& c, const tf::Node& n) {
  return LowerComparison(c, n, ComparisonDirection::kNe);
}
absl::Status LowerLogicalAnd(LoweringContext& c, const tf::Node& n) {
  return LowerLogical(c, n, Opcode::kAnd);
}
absl::Status LowerLogicalOr(LoweringContext& c, const tf::Node& n) {
  return LowerLogical(c, n, Opcode::kOr);
}
absl::Status LowerLogicalNot(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Unary(Opcode::kNot, x));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Functional control flow ----

// TF's truthiness of a predicate tensor (functional_ops ToBool): a scalar is true when it is
// nonzero; any other tensor is true when it has elements.
absl::StatusOr<Instruction*> ToPred(hlo::Builder& b, Instruction* x) {
  const hlo::Shape& s = x->shape();
  if (!s.IsScalar()) {
    return b.Constant(hlo::Literal::Scalar<bool>(DType::kBool, s.num_elements() > 0));
  }
  if (s.element_type() == DType::kBool) return x;
  Tensor zero(s.element_type(), {});
  std::memset(zero.raw_data(), 0, zero.byte_size());
  return b.Compare(ComparisonDirection::kNe, x, b.Constant(hlo::Literal::FromTensor(zero)));
}

std::string ShapesString(const std::vector<hlo::Shape>& shapes) {
  return absl::StrCat("(",
                      absl::StrJoin(shapes, ", ",
                                    [](std::string* out, const hlo::Shape& s) {
                                      absl::StrAppend(out, s.ToString());
                                    }),
                      ")");
}

// Values of inputs [first, first + wanted.size()) of `node` that the bodies want as compile-time
// constants and that the enclosing computation knows (others stay runtime values).
std::vector<std::optional<Tensor>> KnownInputs(LoweringContext& ctx, const tf::Node& node,
                                               int first, const std::vector<bool>& wanted) {
  std::vector<std::optional<Tensor>> known(wanted.size());
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (!wanted[i]) continue;
    absl::StatusOr<Tensor> v = ctx.ConstantInput(node, first + static_cast<int>(i));
    if (v.ok()) known[i] = std::move(*v);
  }
  return known;
}

std::vector<bool> Or(const std::vector<bool>& a, const std::vector<bool>& b) {
  std::vector<bool> out(std::max(a.size(), b.size()), false);
  for (size_t i = 0; i < out.size(); ++i) out[i] = (i < a.size() && a[i]) || (i < b.size() && b[i]);
  return out;
}

absl::Status CheckArity(const tf::Node& node, const tf::FunctionBody& f, absl::string_view role,
                        size_t inputs, size_t outputs) {
  if (f.inputs.size() != inputs || f.outputs.size() != outputs) {
    return InvalidArgument(
        "node %s: its %s function '%s' takes %d input(s) and returns %d "
        "output(s); the node needs %d and %d",
        node.DebugName(), std::string(role), f.graph->source(), f.inputs.size(), f.outputs.size(),
        inputs, outputs);
  }
  return absl::OkStatus();
}

// The body must give every loop variable back with the shape it came in with (XLA's rule).
absl::Status CheckLoopInvariantShapes(const tf::Node& node, const tf::FunctionBody& body,
                                      const std::vector<hlo::Shape>& in,
                                      const std::vector<Instruction*>& out) {
  std::vector<hlo::Shape> out_shapes;
  for (Instruction* o : out) out_shapes.push_back(o->shape());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == out_shapes[i]) continue;
    return AttachNode(
        InvalidArgument("Input and output shapes of loop body do not match: %s vs. %s; loop "
                        "variable %d of node %s enters body '%s' as %s and leaves it as %s. "
                        "Compiled loops need loop variables of fixed shapes: keep this "
                        "loop in the runtime (--jit off/auto) or give the variable a fixed "
                        "shape (e.g. pad it to its largest size)",
                        ShapesString(in), ShapesString(out_shapes), i, node.DebugName(),
                        body.graph->source(), in[i].ToString(), out_shapes[i].ToString()),
        node.name(), node.op());
  }
  return absl::OkStatus();
}

// Operand `i` of a While/If as HLO: a variable handle contributes the variable's current
// value (loops and branches carry variables by value; SetResult writes them back).
absl::StatusOr<Instruction*> OperandValue(LoweringContext& ctx, const tf::Node& node, int i) {
  if (node.input_types()[static_cast<size_t>(i)] != DType::kResource) return ctx.Input(node, i);
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, i));
  if (var->value == nullptr) {
    return Unimplemented(
        "node %s: variable '%s' enters the compiled %s before it holds a "
        "value; initialize it before the loop or conditional",
        node.DebugName(), var->name, node.op());
  }
  return var->value;
}

// Output `k` of a While/If: a variable (the loop's input `operand`) gets `value` as its new
// value and the output names that variable; other outputs are plain values.
void SetResult(LoweringContext& ctx, const tf::Node& node, int k, int operand, Instruction* value) {
  if (operand >= 0 && operand < node.num_inputs() &&
      node.input_types()[static_cast<size_t>(operand)] == DType::kResource &&
      node.output_types()[static_cast<size_t>(k)] == DType::kResource) {
    absl::StatusOr<ResourceState*> var = ctx.Resource(node, operand);
    if (var.ok()) {
      (*var)->value = value;
      (*var)->written = true;
      ctx.AliasResource({const_cast<tf::Node*>(&node), k}, node.input(operand));
      return;
    }
  }
  ctx.SetOutput(node, k, value);
}

// Autofix F: a loop whose changing variable feeds a compile-time-constant input is unrolled
// when its trip count is provable and at most kMaxUnrolledIterations; each copy of the body
// sees that iteration's control-variable values as constants. false: not unrolled.
absl::StatusOr<bool> UnrollLoop(LoweringContext& ctx, const tf::Node& node,
                                const tf::FunctionBody& body, std::vector<Instruction*> state,
                                Instruction* random_state) {
  std::vector<std::optional<double>> initial;
  for (const tf::Output& in : node.inputs()) initial.push_back(ctx.KnownScalar(in));
  std::string why;
  std::optional<LoopTrace> trace = TraceLoop(node, initial, &why);
  if (!trace.has_value() || trace->trip_count > kMaxUnrolledIterations) {
    Log(LogLevel::kInfo, "autofix F: %s is not unrolled: %s", node.DebugName(),
        trace.has_value() ? absl::StrCat("it runs ", trace->trip_count,
                                         " iterations, more than "
                                         "the limit of ",
                                         kMaxUnrolledIterations)
                          : why);
    return false;
  }
  for (int64_t t = 0; t < trace->trip_count; ++t) {
    std::vector<std::optional<Tensor>> known(state.size());
    for (size_t k = 0; k < trace->control_vars.size(); ++k) {
      const int v = trace->control_vars[k];
      const DType dtype = state[static_cast<size_t>(v)]->shape().element_type();
      if (!state[static_cast<size_t>(v)]->shape().IsArray() || !IsNumericDType(dtype)) continue;
      Tensor value(dtype, {});
      const double x = trace->values[k][t];
      DispatchNumeric(dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_arithmetic_v<T>) {
          value.data<T>()[0] = static_cast<T>(x);
        } else {  // 16-bit floats convert from float
          value.data<T>()[0] = static_cast<T>(static_cast<float>(x));
        }
      });
      known[static_cast<size_t>(v)] = value;
    }
    std::vector<LoweringContext::PendingCheck> checks;
    TFJIT_ASSIGN_OR_RETURN(
        state, LowerFunctionBodyInline(ctx.module(), ctx.b().computation(), body, state, known,
                                       ctx.options(), &checks,
                                       random_state != nullptr ? &random_state : nullptr));
    for (LoweringContext::PendingCheck& c : checks) ctx.AddCheckValue(std::move(c.check), c.value);
  }
  for (size_t i = 0; i < state.size(); ++i) {
    SetResult(ctx, node, static_cast<int>(i), static_cast<int>(i), state[i]);
  }
  if (random_state != nullptr) ctx.SetNextRandomState(node, random_state);
  Log(LogLevel::kWarning,
      "autofix F: unrolled %s (%d iterations of '%s') so that its loop "
      "variables are compile-time constants in each copy of the body",
      node.DebugName(), trace->trip_count, body.graph->source());
  return true;
}

// Lists entering the loop without a known element shape (TF2 TensorArrays made without
// element_shape) take the shape their writes in the body store: the body is lowered once in
// a scratch module to learn it (LoweringOptions::probing), as XLA infers it from the body.
absl::Status ShapeListsFromBody(LoweringContext& ctx, const tf::FunctionBody& body,
                                const std::vector<std::optional<Tensor>>& known,
                                std::vector<Instruction*>& init, std::vector<hlo::Shape>& shapes,
                                bool random_state) {
  std::vector<size_t> unshaped;
  for (size_t i = 0; i < init.size(); ++i) {
    if (ctx.options()->unshaped_lists.contains(init[i])) unshaped.push_back(i);
  }
  if (unshaped.empty()) return absl::OkStatus();
  hlo::Module scratch("list_shape_probe");
  LoweringOptions probe = *ctx.options();
  probe.probing = true;
  probe.probed_items.clear();
  // Errors surface again, with their context, when the body is lowered for real.
  (void)LowerFunctionBody(&scratch, body, shapes, known, "probe", &probe, random_state);
  for (size_t i : unshaped) {
    for (const tf::Node* write : ListChain(body, static_cast<int>(i))) {
      auto it = probe.probed_items.find(ListWriteKey(*write));
      if (it == probe.probed_items.end()) continue;
      // Zeros of the buffer the writes need ([capacity, element...], or for a list of lists
      // its elements' parts stacked the same way).
      const hlo::Shape& buffer = init[i]->shape().tuple_shape(0);
      TFJIT_ASSIGN_OR_RETURN(Instruction * zeros,
                             StackedListZeros(ctx, buffer.dims()[0], it->second));
      TFJIT_ASSIGN_OR_RETURN(Instruction * length, ctx.b().GetTupleElement(init[i], 1));
      TFJIT_ASSIGN_OR_RETURN(init[i], ctx.b().Tuple({zeros, length}));
      shapes[i] = init[i]->shape();
      break;
    }
  }
  return absl::OkStatus();
}

// A check value that passed: s64[like's size] = [-1, 0, ...] (hlo::RuntimeCheck's layout).
Instruction* PassedCheck(hlo::Builder& b, const Instruction* like) {
  const int64_t size = like->shape().num_elements();
  std::vector<int64_t> v(static_cast<size_t>(size), 0);
  v[0] = -1;
  return b.Constant(
      hlo::Literal::FromTensor(Tensor::FromVector<int64_t>(DType::kInt64, {size}, v)));
}

// pred && every check in `checks` passed (its position is negative).
absl::StatusOr<Instruction*> AndChecksPassed(hlo::Builder& b, Instruction* pred,
                                             const std::vector<Instruction*>& checks) {
  for (Instruction* check : checks) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * position, b.Slice(check, {{0, 1, 1}}));
    TFJIT_ASSIGN_OR_RETURN(position, b.Reshape(position, {}));
    Instruction* zero = b.ScalarConstant<int64_t>(DType::kInt64, 0);
    TFJIT_ASSIGN_OR_RETURN(Instruction * passed,
                           b.Compare(hlo::ComparisonDirection::kLt, position, zero));
    TFJIT_ASSIGN_OR_RETURN(pred, b.Binary(Opcode::kAnd, pred, passed));
  }
  return pred;
}

// Run-time checks inside a loop (a gather with run-time indices in the body, as TF's kernel
// checks them): each body check is one more element of the loop state, starting passed; the
// condition also asks that every carried check passed, so the loop stops at the first
// failure, and the state it stops with goes out of the While to the enclosing computation's
// checks (the runtime then fails the run with the kernel's error before installing any state).
// A check in the condition itself stops the loop the same way, and the condition is lowered
// once more on the final state (where it failed, or the state that ended the loop) to carry
// that check out. Returns the While (its first n results are the loop variables).
// `init` holds the loop variables (the first num_vars) and the random state, if carried.
absl::StatusOr<Instruction*> LowerCheckedWhile(LoweringContext& ctx, const tf::FunctionBody& cond,
                                               const std::vector<std::optional<Tensor>>& known,
                                               std::vector<Instruction*> init, size_t num_vars,
                                               LoweredBody& c, Instruction* pred, LoweredBody& b) {
  const size_t n = init.size();
  std::vector<hlo::Shape> state_shapes;
  for (Instruction* v : init) state_shapes.push_back(v->shape());
  for (const LoweringContext::PendingCheck& check : b.checks) {
    state_shapes.push_back(check.value->shape());
    init.push_back(PassedCheck(ctx.b(), check.value));
  }
  const hlo::Shape state_shape = hlo::Shape::Tuple(state_shapes);
  c.parameter->set_shape(state_shape);
  b.parameter->set_shape(state_shape);
  hlo::Builder cb(c.computation);
  std::vector<Instruction*> cond_checks;
  for (size_t j = 0; j < b.checks.size(); ++j) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * carried,
                           cb.GetTupleElement(c.parameter, static_cast<int64_t>(n + j)));
    cond_checks.push_back(carried);
  }
  for (const LoweringContext::PendingCheck& check : c.checks) cond_checks.push_back(check.value);
  TFJIT_ASSIGN_OR_RETURN(pred, AndChecksPassed(cb, pred, cond_checks));
  c.computation->set_root(pred);
  std::vector<Instruction*> next = b.outputs;
  for (const LoweringContext::PendingCheck& check : b.checks) next.push_back(check.value);
  hlo::Builder bb(b.computation);
  TFJIT_ASSIGN_OR_RETURN(Instruction * root, bb.Tuple(next));
  b.computation->set_root(root);
  TFJIT_ASSIGN_OR_RETURN(Instruction * state, ctx.b().Tuple(init));
  TFJIT_ASSIGN_OR_RETURN(Instruction * loop,
                         ctx.b().Add(Opcode::kWhile, {state}, {}, {c.computation, b.computation}));
  for (size_t j = 0; j < b.checks.size(); ++j) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * carried,
                           ctx.b().GetTupleElement(loop, static_cast<int64_t>(n + j)));
    ctx.AddCheckValue(b.checks[j].check, carried);
  }
  if (!c.checks.empty()) {
    std::vector<Instruction*> final_state;
    for (size_t i = 0; i < num_vars; ++i) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * v,
                             ctx.b().GetTupleElement(loop, static_cast<int64_t>(i)));
      final_state.push_back(v);
    }
    std::vector<LoweringContext::PendingCheck> checks;
    TFJIT_RETURN_IF_ERROR(LowerFunctionBodyInline(ctx.module(), ctx.b().computation(), cond,
                                                  final_state, known, ctx.options(), &checks)
                              .status());
    for (LoweringContext::PendingCheck& check : checks) {
      ctx.AddCheckValue(std::move(check.check), check.value);
    }
  }
  return loop;
}

absl::Status LowerWhile(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(tf::FunctionBody cond, InstantiateFunctionAttr(node, "cond"));
  TFJIT_ASSIGN_OR_RETURN(tf::FunctionBody body, InstantiateFunctionAttr(node, "body"));
  const size_t n = static_cast<size_t>(node.num_inputs());
  TFJIT_RETURN_IF_ERROR(CheckArity(node, cond, "cond", n, 1));
  TFJIT_RETURN_IF_ERROR(CheckArity(node, body, "body", n, n));
  std::vector<Instruction*> init;
  std::vector<hlo::Shape> shapes;
  for (size_t i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * v, OperandValue(ctx, node, static_cast<int>(i)));
    init.push_back(v);
    shapes.push_back(v->shape());
  }
  // Only a variable the body passes through unchanged has the same value in every iteration;
  // the others are HLO parameters of unknown value (known issue F inside the body).
  std::vector<bool> wanted = Or(BodyInputsNeedingConstants(cond), BodyInputsNeedingConstants(body));
  const std::vector<bool> invariant = LoopInvariantVars(body);
  bool varying_constant = false;  // known issue F inside the loop
  for (size_t i = 0; i < wanted.size(); ++i) {
    varying_constant |= wanted[i] && !invariant[i];
    wanted[i] = wanted[i] && invariant[i];
  }
  // Stateful random ops in the functions draw from one Philox state the loop carries.
  const bool draws = BodiesDrawRandom(node);
  Instruction* random_state = nullptr;
  if (draws) {
    TFJIT_ASSIGN_OR_RETURN(random_state, ctx.RandomStateFor(node));
  }
  if (varying_constant && ctx.autofix()) {
    absl::StatusOr<bool> unrolled = UnrollLoop(ctx, node, body, init, random_state);
    if (!unrolled.ok() || *unrolled) return unrolled.status();
  }
  const std::vector<std::optional<Tensor>> known = KnownInputs(ctx, node, 0, wanted);
  TFJIT_RETURN_IF_ERROR(ShapeListsFromBody(ctx, body, known, init, shapes, draws));

  TFJIT_ASSIGN_OR_RETURN(LoweredBody c,
                         LowerFunctionBody(ctx.module(), cond, shapes, known, cond.graph->source(),
                                           ctx.options(), draws));
  if (c.random_out != c.random_in) {
    return Unimplemented(
        "node %s: condition '%s' draws random numbers; a compiled While carries "
        "its random state through the body only (draw in the body)",
        node.DebugName(), cond.graph->source());
  }
  hlo::Builder cb(c.computation);
  TFJIT_ASSIGN_OR_RETURN(Instruction * pred, ToPred(cb, c.outputs[0]));
  c.computation->set_root(pred);
  TFJIT_ASSIGN_OR_RETURN(LoweredBody b,
                         LowerFunctionBody(ctx.module(), body, shapes, known, body.graph->source(),
                                           ctx.options(), draws));
  TFJIT_RETURN_IF_ERROR(CheckLoopInvariantShapes(node, body, shapes, b.outputs));
  if (draws) {  // the state is the loop's element n
    init.push_back(random_state);
    b.outputs.push_back(b.random_out);
  }
  Instruction* loop = nullptr;
  if (!b.checks.empty() || !c.checks.empty()) {
    TFJIT_ASSIGN_OR_RETURN(loop, LowerCheckedWhile(ctx, cond, known, init, n, c, pred, b));
  } else {
    hlo::Builder bb(b.computation);
    TFJIT_ASSIGN_OR_RETURN(Instruction * next, bb.Tuple(b.outputs));
    b.computation->set_root(next);
    TFJIT_ASSIGN_OR_RETURN(Instruction * state, ctx.b().Tuple(init));
    TFJIT_ASSIGN_OR_RETURN(
        loop, ctx.b().Add(Opcode::kWhile, {state}, {}, {c.computation, b.computation}));
  }
  for (size_t i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * out,
                           ctx.b().GetTupleElement(loop, static_cast<int64_t>(i)));
    SetResult(ctx, node, static_cast<int>(i), static_cast<int>(i), out);
  }
  if (draws) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * next,
                           ctx.b().GetTupleElement(loop, static_cast<int64_t>(n)));
    ctx.SetNextRandomState(node, next);
  }
  return absl::OkStatus();
}

absl::Status LowerIf(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(tf::FunctionBody then_fn, InstantiateFunctionAttr(node, "then_branch"));
  TFJIT_ASSIGN_OR_RETURN(tf::FunctionBody else_fn, InstantiateFunctionAttr(node, "else_branch"));
  const size_t n = static_cast<size_t>(node.num_inputs()) - 1;
  const size_t m = static_cast<size_t>(node.num_outputs());
  TFJIT_RETURN_IF_ERROR(CheckArity(node, then_fn, "then_branch", n, m));
  TFJIT_RETURN_IF_ERROR(CheckArity(node, else_fn, "else_branch", n, m));
  TFJIT_ASSIGN_OR_RETURN(Instruction * cond, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * pred, ToPred(ctx.b(), cond));
  std::vector<Instruction*> args;
  std::vector<hlo::Shape> shapes;
  std::vector<int> variables;  // operand indices (into args) that are variables
  for (size_t i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * v, OperandValue(ctx, node, static_cast<int>(i + 1)));
    if (node.input_types()[i + 1] == DType::kResource) variables.push_back(static_cast<int>(i));
    args.push_back(v);
    shapes.push_back(v->shape());
  }
  const std::vector<std::optional<Tensor>> known = KnownInputs(
      ctx, node, 1, Or(BodyInputsNeedingConstants(then_fn), BodyInputsNeedingConstants(else_fn)));
  // Stateful random ops in the branches draw from one Philox state, an operand element after
  // the branch inputs, returned after the variables.
  const bool draws = BodiesDrawRandom(node);
  if (draws) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * random_state, ctx.RandomStateFor(node));
    args.push_back(random_state);
  }
  // A predicate known when compiling (from constants, or from inputs whose values the cache
  // key holds: a downsample ratio the branches resize by) takes its branch only, as a call
  // that the call inliner inlines: the other is not lowered, and the branches may return
  // different shapes (rvm's `tf.cond(ratio < 1, resize, identity)`).
  std::optional<size_t> taken;
  if (absl::StatusOr<Tensor> known_pred = ctx.Evaluate(pred); known_pred.ok()) {
    taken = known_pred->data<bool>()[0] ? 0 : 1;
  }
  const tf::FunctionBody* fns[2] = {&then_fn, &else_fn};
  std::vector<LoweredBody> lowered_branches;
  for (size_t br = 0; br < 2; ++br) {
    if (taken.has_value() && br != *taken) continue;
    const tf::FunctionBody* fn = fns[br];
    TFJIT_ASSIGN_OR_RETURN(LoweredBody lowered,
                           LowerFunctionBody(ctx.module(), *fn, shapes, known, fn->graph->source(),
                                             ctx.options(), draws));
    lowered_branches.push_back(std::move(lowered));
  }
  // Each branch's run-time checks leave the conditional as results after the variables; the
  // branch not taken returns them passed.
  std::vector<LoweringContext::PendingCheck> checks;
  for (const LoweredBody& lowered : lowered_branches) {
    checks.insert(checks.end(), lowered.checks.begin(), lowered.checks.end());
  }
  std::vector<hlo::Computation*> branches;
  std::vector<std::vector<Instruction*>> results;
  size_t own_first = 0;
  for (LoweredBody& lowered : lowered_branches) {
    // A branch returns its outputs and then the final value of each variable it was given,
    // so assignments inside a branch reach the variable.
    std::vector<Instruction*> roots = lowered.outputs;
    for (int v : variables) roots.push_back(lowered.final_variables[static_cast<size_t>(v)]);
    if (draws) roots.push_back(lowered.random_out);
    hlo::Builder builder(lowered.computation);
    for (size_t j = 0; j < checks.size(); ++j) {
      const bool own = j >= own_first && j < own_first + lowered.checks.size();
      roots.push_back(own ? checks[j].value : PassedCheck(builder, checks[j].value));
    }
    own_first += lowered.checks.size();
    TFJIT_ASSIGN_OR_RETURN(Instruction * root, builder.Tuple(roots));
    lowered.computation->set_root(root);
    branches.push_back(lowered.computation);
    results.push_back(roots);
  }
  for (size_t k = 0; branches.size() == 2 && k < results[0].size(); ++k) {
    if (results[0][k]->shape() == results[1][k]->shape()) continue;
    return AttachNode(InvalidArgument("node %s: output %d is %s in then_branch '%s' but %s in "
                                      "else_branch '%s'; a compiled If needs both branches to "
                                      "return the same shapes",
                                      node.DebugName(), k, results[0][k]->shape().ToString(),
                                      then_fn.graph->source(), results[1][k]->shape().ToString(),
                                      else_fn.graph->source()),
                      node.name(), node.op());
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * operand, ctx.b().Tuple(args));
  Instruction* cases = nullptr;
  if (branches.size() == 1) {
    TFJIT_ASSIGN_OR_RETURN(cases, ctx.b().Add(Opcode::kCall, {operand}, {}, {branches[0]}));
  } else {
    TFJIT_ASSIGN_OR_RETURN(
        cases, ctx.b().Add(Opcode::kConditional, {pred, operand, operand}, {}, branches));
  }
  for (size_t k = 0; k < m; ++k) {
    if (node.output_types()[k] == DType::kResource) {
      return Unimplemented(
          "node %s: output %d is a variable handle; compiled If branches "
          "cannot return variables",
          node.DebugName(), k);
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * out,
                           ctx.b().GetTupleElement(cases, static_cast<int64_t>(k)));
    ctx.SetOutput(node, static_cast<int>(k), out);
  }
  for (size_t j = 0; j < variables.size(); ++j) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * value,
                           ctx.b().GetTupleElement(cases, static_cast<int64_t>(m + j)));
    TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, variables[j] + 1));
    var->value = value;
    var->written = true;
  }
  const size_t first_check = m + variables.size() + (draws ? 1 : 0);
  if (draws) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * next,
                           ctx.b().GetTupleElement(cases, static_cast<int64_t>(first_check - 1)));
    ctx.SetNextRandomState(node, next);
  }
  for (size_t j = 0; j < checks.size(); ++j) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * value,
                           ctx.b().GetTupleElement(cases, static_cast<int64_t>(first_check + j)));
    ctx.AddCheckValue(std::move(checks[j].check), value);
  }
  return absl::OkStatus();
}

// ControlTrigger produces no values; compiled code has nothing to do for it.
absl::Status LowerControlTrigger(LoweringContext&, const tf::Node&) { return absl::OkStatus(); }

bool CanLowerWhile(const tf::Node& node, std::string* why) {
  return CanLowerFunctionAttr(node, "cond", why) && CanLowerFunctionAttr(node, "body", why);
}

bool CanLowerIf(const tf::Node& node, std::string* why) {
  return CanLowerFunctionAttr(node, "then_branch", why) &&
         CanLowerFunctionAttr(node, "else_branch", why);
}

}  // namespace

void AppendControlFlowLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(),
                {
                    // Loop variables and branch operands may be TensorLists (tuples in HLO).
                    {"While", LowerWhile, false, CanLowerWhile, true, true},
                    {"StatelessWhile", LowerWhile, false, CanLowerWhile, true, true},
                    {"If", LowerIf, false, CanLowerIf, true, true},
                    {"StatelessIf", LowerIf, false, CanLowerIf, true, true},
                    {"Less", LowerLess},
                    {"LessEqual", LowerLessEqual},
                    {"Greater", LowerGreater},
                    {"GreaterEqual", LowerGreaterEqual},
                    {"Equal", LowerEqual},
                    {"NotEqual", LowerNotEqual},
                    {"LogicalAnd", LowerLogicalAnd},
                    {"LogicalOr", LowerLogicalOr},
                    {"LogicalNot", LowerLogicalNot},
                    {"ControlTrigger", LowerControlTrigger},
                });
}

}  // namespace tfjit::tf2hlo
