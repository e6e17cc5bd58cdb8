// The reference evaluator's driver: evaluates a computation in post order, dispatches each
// opcode to its family (elementwise.cc, shape_ops.cc, reduce_dot.cc, ...) and runs the
// structural and control-flow opcodes (tuple, call, fusion, while, conditional) itself.
#include "compiler/evaluator/evaluator.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/evaluator/evaluator_internal.h"
#include "core/run_control.h"
#include "core/status.h"

namespace tfjit::hlo {
namespace {

using eval::Operands;

absl::StatusOr<Literal> EvalCalled(const Computation* computation, const Operands& ops) {
  std::vector<Literal> args;
  args.reserve(ops.size());
  for (const Literal* op : ops) args.push_back(*op);  // shares buffers; no deep copy
  return EvaluateComputation(*computation, args);
}

absl::StatusOr<Literal> EvalTuple(const Operands& ops) {
  std::vector<Literal> elements;
  for (const Literal* op : ops) elements.push_back(*op);
  return Literal::MakeTuple(std::move(elements));
}

absl::StatusOr<Literal> EvalGetTupleElement(const Instruction& inst, const Operands& ops) {
  const int64_t index = inst.attrs().tuple_index;
  if (!ops[0]->shape().IsTuple() || index < 0 ||
      index >= static_cast<int64_t>(ops[0]->elements().size())) {
    return InvalidArgument("%s: tuple index %d out of range", inst.name(), index);
  }
  return ops[0]->elements()[static_cast<size_t>(index)];
}

absl::StatusOr<Literal> EvalWhile(const Instruction& inst, const Operands& ops) {
  const Computation* condition = inst.called_computations().at(0);
  const Computation* body = inst.called_computations().at(1);
  Literal state = *ops[0];
  // The run this evaluation belongs to (the interpreter backend, inside Session::Run), if any:
  // its deadline and cancellation stop a loop that would not end by itself.
  const RunControl* control = CurrentRunControl();
  while (true) {
    TFJIT_ASSIGN_OR_RETURN(Literal keep_going, EvaluateComputation(*condition, {state}));
    if (!keep_going.data<bool>()[0]) return state;
    TFJIT_ASSIGN_OR_RETURN(state, EvaluateComputation(*body, {state}));
    if (control != nullptr && control->ShouldStop()) {
      return control->Check(absl::StrCat("evaluated While '", inst.name(), "'"));
    }
  }
}

// A pred selects branch 0 for true and 1 for false; an s32 index out of range (negative too)
// selects the last branch. Branch i receives operand i + 1.
absl::StatusOr<Literal> EvalConditional(const Instruction& inst, const Operands& ops) {
  const std::vector<Computation*>& branches = inst.called_computations();
  const int64_t count = static_cast<int64_t>(branches.size());
  int64_t branch;
  if (ops[0]->shape().element_type() == DType::kBool) {
    branch = ops[0]->data<bool>()[0] ? 0 : 1;
  } else {
    branch = ElementAsInt64(ops[0]->tensor(), 0);
  }
  if (branch < 0 || branch >= count) branch = count - 1;
  if (branch + 1 >= static_cast<int64_t>(ops.size())) {
    return InvalidArgument("%s: branch %d has no operand", inst.name(), branch);
  }
  return EvaluateComputation(*branches[static_cast<size_t>(branch)],
                             {*ops[static_cast<size_t>(branch + 1)]});
}

absl::StatusOr<Literal> EvalConstant(const Instruction& inst) {
  if (!inst.attrs().literal.has_value()) {
    return InvalidArgument("%s: constant without a literal", inst.name());
  }
  return inst.literal();
}

// One call per opcode family.
absl::StatusOr<Literal> EvalInstruction(const Instruction& inst, const Operands& ops) {
  const Opcode op = inst.opcode();
  if (IsElementwiseUnary(op)) return eval::EvalUnary(inst, ops);
  if (IsElementwiseBinary(op)) return eval::EvalBinary(inst, ops);
  switch (op) {
    case Opcode::kConstant:
      return EvalConstant(inst);
    case Opcode::kCompare:
      return eval::EvalCompare(inst, ops);
    case Opcode::kSelect:
      return eval::EvalSelect(inst, ops);
    case Opcode::kClamp:
      return eval::EvalClamp(inst, ops);
    case Opcode::kConvert:
      return eval::EvalConvert(inst, ops);
    case Opcode::kBitcastConvert:
      return eval::EvalBitcastConvert(inst, ops);
    case Opcode::kIsFinite:
      return eval::EvalIsFinite(inst, ops);
    case Opcode::kBroadcast:
      return eval::EvalBroadcast(inst, ops);
    case Opcode::kReshape:
      return eval::EvalReshape(inst, ops);
    case Opcode::kTranspose:
      return eval::EvalTranspose(inst, ops);
    case Opcode::kSlice:
      return eval::EvalSlice(inst, ops);
    case Opcode::kDynamicSlice:
      return eval::EvalDynamicSlice(inst, ops);
    case Opcode::kDynamicUpdateSlice:
      return eval::EvalDynamicUpdateSlice(inst, ops);
    case Opcode::kConcatenate:
      return eval::EvalConcatenate(inst, ops);
    case Opcode::kPad:
      return eval::EvalPad(inst, ops);
    case Opcode::kReverse:
      return eval::EvalReverse(inst, ops);
    case Opcode::kIota:
      return eval::EvalIota(inst, ops);
    case Opcode::kGetDimensionSize:
      // The operand's own dim: in a specialized module, the batch size's extent there.
      return Literal::Scalar<int32_t>(
          DType::kInt32, static_cast<int32_t>(
                             ops[0]->shape().dim(static_cast<int>(inst.attrs().dimensions.at(0)))));
    case Opcode::kGather:
      return eval::EvalGather(inst, ops);
    case Opcode::kScatter:
      return eval::EvalScatter(inst, ops);
    case Opcode::kReduce:
      return eval::EvalReduce(inst, ops);
    case Opcode::kReduceWindow:
      return eval::EvalReduceWindow(inst, ops);
    case Opcode::kDot:
      return eval::EvalDot(inst, ops);
    case Opcode::kConvolution:
      return eval::EvalConvolution(inst, ops);
    case Opcode::kRngBitGenerator:
      return eval::EvalRngBitGenerator(inst, ops);
    case Opcode::kCustomCall:
      return eval::EvalCustomCall(inst, ops);
    case Opcode::kTuple:
      return EvalTuple(ops);
    case Opcode::kGetTupleElement:
      return EvalGetTupleElement(inst, ops);
    case Opcode::kCall:
      return EvalCalled(inst.to_apply(), ops);
    case Opcode::kFusion:
      return EvalCalled(inst.to_apply(), ops);
    case Opcode::kWhile:
      return EvalWhile(inst, ops);
    case Opcode::kConditional:
      return EvalConditional(inst, ops);
    default:
      return Unimplemented("the evaluator does not implement opcode '%s' (instruction %s)",
                           OpcodeName(op), inst.name());
  }
}

bool ShapesCompatible(const Shape& expected, const Shape& actual) {
  if (expected.IsTuple() != actual.IsTuple()) return false;
  if (!expected.IsTuple()) return expected == actual;
  if (expected.tuple_shapes().size() != actual.tuple_shapes().size()) return false;
  for (size_t i = 0; i < expected.tuple_shapes().size(); ++i) {
    if (!ShapesCompatible(expected.tuple_shapes()[i], actual.tuple_shapes()[i])) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<Literal> EvaluateComputation(const Computation& computation,
                                            const std::vector<Literal>& args) {
  if (static_cast<int>(args.size()) != computation.num_parameters()) {
    return InvalidArgument("computation '%s' takes %d arguments, got %d", computation.name(),
                           computation.num_parameters(), args.size());
  }
  for (int i = 0; i < computation.num_parameters(); ++i) {
    const Shape& expected = computation.parameter(i)->shape();
    if (!ShapesCompatible(expected, args[static_cast<size_t>(i)].shape())) {
      return InvalidArgument("computation '%s': argument %d has shape %s, expected %s",
                             computation.name(), i, args[static_cast<size_t>(i)].shape().ToString(),
                             expected.ToString());
    }
  }
  if (computation.root() == nullptr) {
    return InvalidArgument("computation '%s' has no ROOT", computation.name());
  }
  absl::flat_hash_map<const Instruction*, Literal> values;
  for (const Instruction* inst : computation.MakePostOrder()) {
    if (inst->opcode() == Opcode::kParameter) {
      values[inst] = args[static_cast<size_t>(inst->parameter_number())];
      continue;
    }
    Operands ops;
    ops.reserve(inst->operands().size());
    for (const Instruction* operand : inst->operands()) {
      auto it = values.find(operand);
      if (it == values.end()) {
        return Internal("evaluating %s: operand %s has no value", inst->name(), operand->name());
      }
      ops.push_back(&it->second);
    }
    absl::StatusOr<Literal> result = EvalInstruction(*inst, ops);
    if (!result.ok()) return result.status();
    values[inst] = *std::move(result);
  }
  return values.at(computation.root());
}

absl::StatusOr<Literal> EvaluateInstruction(const Instruction& inst,
                                            const std::vector<Literal>& operands) {
  if (static_cast<int>(operands.size()) != inst.operand_count()) {
    return InvalidArgument("%s takes %d operands, got %d", inst.name(), inst.operand_count(),
                           operands.size());
  }
  if (inst.opcode() == Opcode::kParameter) {
    return InvalidArgument("%s: a parameter has no value on its own", inst.name());
  }
  Operands ops;
  for (const Literal& l : operands) ops.push_back(&l);
  return EvalInstruction(inst, ops);
}

absl::StatusOr<Literal> Evaluate(const Module& module, const std::vector<Literal>& args) {
  if (module.entry() == nullptr) return InvalidArgument("module '%s' has no entry", module.name());
  return EvaluateComputation(*module.entry(), args);
}

bool EvaluatorSupports(Opcode /*opcode*/) {
  // Every opcode; custom-call for the targets the backends emit (HLO.md), any other target
  // fails UNIMPLEMENTED naming it.
  return true;
}

}  // namespace tfjit::hlo
