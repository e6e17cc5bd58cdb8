// Bounded dynamic sizes: which ops read padded values, the graph-level analysis clustering
// asks, the propagation run after each node's lowering (padded dims and symbolic shape
// arithmetic), and Pad with run-time paddings. The lowerings of ops that read padded values
// are in padded_lowerings.cc.
#include "compiler/tf2hlo/dynamic_sizes.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/function_lowering.h"
#include "compiler/tf2hlo/lowering.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;

struct ReadRule {
  const char* op;
  DynamicRead read;
  // A shape-preserving elementwise op: PropagateDynamicSizes pads its output as its input.
  bool elementwise = false;
};

// The inputs through which an op may read a padded value (its data, not its shape or axis
// arguments); -1: every input.
int PaddedSlotLimit(absl::string_view op) {
  if (op == "GatherV2" || op == "NonMaxSuppression" || op == "NonMaxSuppressionV2" ||
      op == "NonMaxSuppressionV3" || op == "NonMaxSuppressionV4" || op == "NonMaxSuppressionV5") {
    return 2;  // params/indices, boxes/scores
  }
  if (op == "Split") return -2;  // only input 1 (the value)
  if (op == "ConcatV2" || op == "Add" || op == "AddV2" || op == "Sub" || op == "Mul" ||
      op == "RealDiv" || op == "Maximum" || op == "Minimum" || op == "Greater" ||
      op == "GreaterEqual" || op == "Less" || op == "LessEqual" || op == "Equal" ||
      op == "NotEqual" || op == "LogicalAnd" || op == "LogicalOr" || op == "Select" ||
      op == "SelectV2") {
    return -1;
  }
  return 1;  // input 0 only
}

constexpr ReadRule kReadRules[] = {
    {"Abs", DynamicRead::kPropagates, true},
    {"Add", DynamicRead::kPropagates},  // elementwise binary: PropagateElementwise
    {"AddV2", DynamicRead::kPropagates},
    {"All", DynamicRead::kPropagates},  // reductions: padding masked with the identity
    {"Any", DynamicRead::kPropagates},
    {"Cast", DynamicRead::kPropagates, true},
    {"Ceil", DynamicRead::kPropagates, true},
    {"ConcatV2", DynamicRead::kPropagates},  // along the padded dim: packed by update-slices
    {"Equal", DynamicRead::kPropagates},
    {"Exp", DynamicRead::kPropagates, true},
    {"ExpandDims", DynamicRead::kPropagates},
    {"Floor", DynamicRead::kPropagates, true},
    {"GatherV2", DynamicRead::kPropagates},  // array_slice_lowerings.cc
    {"Greater", DynamicRead::kPropagates},
    {"GreaterEqual", DynamicRead::kPropagates},
    {"Identity", DynamicRead::kPropagates, true},
    {"Less", DynamicRead::kPropagates},
    {"LessEqual", DynamicRead::kPropagates},
    {"LogicalAnd", DynamicRead::kPropagates},
    {"LogicalNot", DynamicRead::kPropagates, true},
    {"LogicalOr", DynamicRead::kPropagates},
    {"Max", DynamicRead::kPropagates},
    {"Maximum", DynamicRead::kPropagates},
    {"Min", DynamicRead::kPropagates},
    {"Minimum", DynamicRead::kPropagates},
    {"Mul", DynamicRead::kPropagates},
    {"Neg", DynamicRead::kPropagates, true},
    {"NonMaxSuppression", DynamicRead::kResolves},  // image_lowerings.cc: padded scores masked
    {"NonMaxSuppressionV2", DynamicRead::kResolves},
    {"NonMaxSuppressionV3", DynamicRead::kResolves},
    {"NonMaxSuppressionV4", DynamicRead::kResolves},
    {"NonMaxSuppressionV5", DynamicRead::kResolves},
    {"NotEqual", DynamicRead::kPropagates},
    {"Pad", DynamicRead::kResolves},  // LowerDynamicPad (padded on with constant paddings)
    {"PadV2", DynamicRead::kResolves},
    {"Prod", DynamicRead::kPropagates},
    {"RealDiv", DynamicRead::kPropagates},
    {"Relu", DynamicRead::kPropagates, true},
    {"Reshape", DynamicRead::kPropagates},  // a padded leading dim stays the leading dim
    {"Round", DynamicRead::kPropagates, true},
    {"Select", DynamicRead::kPropagates},
    {"SelectV2", DynamicRead::kPropagates},
    {"Shape", DynamicRead::kResolves},  // array_lowerings.cc
    {"Sigmoid", DynamicRead::kPropagates, true},
    {"Size", DynamicRead::kResolves},
    {"Slice", DynamicRead::kPropagates},
    {"Snapshot", DynamicRead::kPropagates, true},
    {"Split", DynamicRead::kPropagates},  // along another dim
    {"Sqrt", DynamicRead::kPropagates, true},
    {"Squeeze", DynamicRead::kPropagates},  // array_lowerings.cc
    {"StopGradient", DynamicRead::kPropagates, true},
    {"Sub", DynamicRead::kPropagates},
    {"Sum", DynamicRead::kPropagates},
    {"Tanh", DynamicRead::kPropagates, true},
    {"TopKV2", DynamicRead::kPropagates},  // padding sorted last
    {"Where", DynamicRead::kResolves},     // padding masked false; its rows padded anew
};

const ReadRule* RuleFor(absl::string_view op) {
  for (const ReadRule& r : kReadRules) {
    if (op == r.op) return &r;
  }
  return nullptr;
}

// Elementwise integer arithmetic on expressions; nullopt where the result is not affine.
std::optional<SymExpr> Arith(absl::string_view op, const SymExpr& a, const SymExpr* b) {
  if (op == "Neg") return Scaled(a, -1);
  if (b == nullptr) return std::nullopt;
  if (op == "Add" || op == "AddV2") return Sum(a, *b);
  if (op == "Sub") return Sum(a, Scaled(*b, -1));
  if (op == "Mul") {
    if (b->IsConstant()) return Scaled(a, b->constant);
    if (a.IsConstant()) return Scaled(*b, a.constant);
    return std::nullopt;
  }
  if (op == "Maximum" || op == "Minimum") {
    const SymExpr d = Sum(a, Scaled(*b, -1));
    if (!d.IsConstant()) return std::nullopt;
    const bool a_larger = d.constant >= 0;
    return (op == "Maximum") == a_larger ? a : *b;
  }
  return std::nullopt;
}

bool IsArithOp(absl::string_view op) {
  return op == "Add" || op == "AddV2" || op == "Sub" || op == "Mul" || op == "Neg" ||
         op == "Maximum" || op == "Minimum";
}

// Ops that only move integer elements around: the data inputs whose elements they move.
std::optional<std::vector<int>> MovedInputs(const tf::Node& node) {
  const absl::string_view op = node.op();
  if (op == "StridedSlice" || op == "Slice" || op == "Reshape" || op == "ExpandDims" ||
      op == "Squeeze" || op == "Identity" || op == "Cast" || op == "Snapshot") {
    return std::vector<int>{0};
  }
  std::vector<int> all;
  if (op == "Pack") {
    for (int i = 0; i < node.num_inputs(); ++i) all.push_back(i);
    return all;
  }
  if (op == "ConcatV2") {
    for (int i = 0; i + 1 < node.num_inputs(); ++i) all.push_back(i);
    return all;
  }
  return std::nullopt;
}

// Records `exprs` as the elements of `node`'s output 0; when they are all constants (a static
// dim's entry of a Shape read from a padded value), the output becomes that constant, so the
// ops after it fold it as any other.
void SetElements(LoweringContext& ctx, const tf::Node& node, std::vector<SymExpr> exprs) {
  const tf::Output out{const_cast<tf::Node*>(&node), 0};
  bool constant = true;
  for (const SymExpr& e : exprs) constant &= e.IsConstant();
  const std::vector<Instruction*> values = ctx.OutputsOf(node);
  if (constant && !values.empty() && values[0] != nullptr &&
      values[0]->shape().num_elements() == static_cast<int64_t>(exprs.size())) {
    const DType t = values[0]->shape().element_type();
    if (t == DType::kInt32 || t == DType::kInt64) {
      Tensor c(t, values[0]->shape().dims());
      for (size_t k = 0; k < exprs.size(); ++k) {
        if (t == DType::kInt32) {
          c.data<int32_t>()[k] = static_cast<int32_t>(exprs[k].constant);
        } else {
          c.data<int64_t>()[k] = exprs[k].constant;
        }
      }
      ctx.SetOutput(node, 0, ctx.b().Constant(hlo::Literal::FromTensor(c)));
    }
  }
  ctx.SetSymbolic(out, std::move(exprs));
}

// Runs `node`'s lowering once more on stand-in inputs that encode (input, element) as
// (input + 1) * 2^16 + element, evaluates the result and decodes where each of its elements
// comes from. The stand-in's instructions are dead (DCE removes them); the node's real outputs
// are rebound.
absl::Status PropagateMoved(LoweringContext& ctx, const tf::Node& node,
                            const std::vector<int>& moved) {
  constexpr int64_t kStride = int64_t{1} << 16;
  const OpLowering* lowering = LoweringFor(node);
  if (lowering == nullptr) return absl::OkStatus();
  std::vector<std::vector<SymExpr>> sources;
  std::vector<Instruction*> overrides(static_cast<size_t>(node.num_inputs()), nullptr);
  for (int i : moved) {
    std::optional<std::vector<SymExpr>> exprs = ctx.SymbolicInput(node, i);
    if (!exprs.has_value() || exprs->size() >= static_cast<size_t>(kStride)) {
      return absl::OkStatus();
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * value, ctx.Input(node, i));
    const DType t = value->shape().element_type();
    if (t != DType::kInt32 && t != DType::kInt64) return absl::OkStatus();
    Tensor code(t, value->shape().dims());
    for (int64_t k = 0; k < code.num_elements(); ++k) {
      const int64_t v = static_cast<int64_t>(sources.size() + 1) * kStride + k;
      if (t == DType::kInt32) {
        code.data<int32_t>()[k] = static_cast<int32_t>(v);
      } else {
        code.data<int64_t>()[k] = v;
      }
    }
    overrides[static_cast<size_t>(i)] = ctx.b().Constant(hlo::Literal::FromTensor(code));
    sources.push_back(std::move(*exprs));
  }
  const std::vector<Instruction*> real = ctx.OutputsOf(node);
  ctx.OverrideInputs(node, overrides);
  const absl::Status lowered = lowering->fn(ctx, node);
  ctx.ClearInputOverride();
  const std::vector<Instruction*> stand_in = ctx.OutputsOf(node);
  ctx.RestoreOutputs(node, real);
  if (!lowered.ok() || stand_in.empty() || stand_in[0] == nullptr) return absl::OkStatus();
  absl::StatusOr<Tensor> t = ctx.Evaluate(stand_in[0]);
  if (!t.ok() || !IsIntegerDType(t->dtype())) return absl::OkStatus();
  std::vector<SymExpr> out;
  for (int64_t k = 0; k < t->num_elements(); ++k) {
    const int64_t v = ElementAsInt64(*t, k);
    const int64_t source = v / kStride - 1, element = v % kStride;
    if (source < 0 || static_cast<size_t>(source) >= sources.size() ||
        static_cast<size_t>(element) >= sources[static_cast<size_t>(source)].size()) {
      return absl::OkStatus();  // an element the op made itself: not tracked
    }
    out.push_back(sources[static_cast<size_t>(source)][static_cast<size_t>(element)]);
  }
  SetElements(ctx, node, std::move(out));
  return absl::OkStatus();
}

absl::Status PropagateArith(LoweringContext& ctx, const tf::Node& node) {
  const bool unary = node.op() == "Neg";
  std::optional<std::vector<SymExpr>> a = ctx.SymbolicInput(node, 0);
  std::optional<std::vector<SymExpr>> b;
  if (!unary) b = ctx.SymbolicInput(node, 1);
  if (!a.has_value() || (!unary && !b.has_value())) return absl::OkStatus();
  const size_t n = unary ? a->size() : std::max(a->size(), b->size());
  if (!unary && a->size() != n && a->size() != 1) return absl::OkStatus();
  if (!unary && b->size() != n && b->size() != 1) return absl::OkStatus();
  const std::vector<Instruction*> outs = ctx.OutputsOf(node);
  if (outs.empty() || outs[0] == nullptr ||
      outs[0]->shape().num_elements() != static_cast<int64_t>(n)) {
    return absl::OkStatus();
  }
  std::vector<SymExpr> out;
  for (size_t k = 0; k < n; ++k) {
    const SymExpr& x = (*a)[a->size() == 1 ? 0 : k];
    const SymExpr* y = unary ? nullptr : &(*b)[b->size() == 1 ? 0 : k];
    std::optional<SymExpr> r = Arith(node.op(), x, y);
    if (!r.has_value()) return absl::OkStatus();
    out.push_back(std::move(*r));
  }
  SetElements(ctx, node, std::move(out));
  return absl::OkStatus();
}

// A reduction over dim 0 (where Where's and NMS's rows, and most values read from them, are
// padded) by constant axes: its output has a static size (LowerPaddedReduction).
bool ReducesLeadingDim(const tf::Node& node) {
  const std::string& op = node.op();
  if (op != "Sum" && op != "Prod" && op != "Max" && op != "Min" && op != "Any" && op != "All") {
    return false;
  }
  if (node.num_inputs() < 2 || node.input(1).node->op() != "Const") return false;
  absl::StatusOr<Tensor> axes = tf::GetTensorAttr(*node.input(1).node, "value");
  if (!axes.ok() || !IsIntegerDType(axes->dtype())) return false;
  for (int64_t k = 0; k < axes->num_elements(); ++k) {
    if (ElementAsInt64(*axes, k) == 0) return true;
  }
  return false;
}

}  // namespace

SymExpr Constant(int64_t c) {
  SymExpr e;
  e.constant = c;
  return e;
}

SymExpr Scaled(const SymExpr& a, int64_t k) {
  SymExpr r;
  if (k == 0) return r;
  r.constant = a.constant * k;
  for (const auto& [atom, coef] : a.terms) r.terms.push_back({atom, coef * k});
  return r;
}

SymExpr Sum(const SymExpr& a, const SymExpr& b) {
  SymExpr r;
  r.constant = a.constant + b.constant;
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    if (j == b.terms.size() || (i < a.terms.size() && a.terms[i].first < b.terms[j].first)) {
      r.terms.push_back(a.terms[i++]);
    } else if (i == a.terms.size() || b.terms[j].first < a.terms[i].first) {
      r.terms.push_back(b.terms[j++]);
    } else {
      const int64_t coef = a.terms[i].second + b.terms[j].second;
      if (coef != 0) r.terms.push_back({a.terms[i].first, coef});
      ++i;
      ++j;
    }
  }
  return r;
}

DynamicRead DynamicReadOf(absl::string_view op) {
  const ReadRule* rule = RuleFor(op);
  return rule == nullptr ? DynamicRead::kNone : rule->read;
}

DynamicRead DynamicReadOf(const tf::Node& node, int input) {
  const DynamicRead read = DynamicReadOf(node.op());
  if (read == DynamicRead::kNone) return read;
  for (DType t : node.input_types()) {
    if (IsComplexDType(t)) return DynamicRead::kNone;
  }
  for (DType t : node.output_types()) {
    if (IsComplexDType(t)) return DynamicRead::kNone;
  }
  if (node.op() == "Squeeze" && tf::FindAttr(node, "squeeze_dims") == nullptr) {
    return DynamicRead::kNone;
  }
  const int limit = PaddedSlotLimit(node.op());
  if (limit == -2) return input == 1 ? read : DynamicRead::kNone;
  if (limit == -1) {
    if (node.op() == "ConcatV2" && input == node.num_inputs() - 1) return DynamicRead::kNone;
    return read;
  }
  return input < limit ? read : DynamicRead::kNone;
}

absl::Status PaddedReadError(const tf::Node& node, int i, const DynamicDim& dim) {
  const tf::Output in = node.input(i);
  return Unimplemented(
      "node %s reads %s:%d, whose dim %d has a size known only at run time "
      "(padded to its bound, as XLA's bounded dynamic dims); %s does not "
      "compile on such a value (ops that do: Shape, Size, Pad, GatherV2, "
      "Squeeze, NonMaxSuppression, elementwise unary ops)",
      node.DebugName(), in.node->name(), in.index, dim.dim, node.op());
}

PaddedAnalysis AnalyzePadded(const std::vector<const tf::Node*>& order,
                             const std::function<bool(const tf::Node&)>& in_scope) {
  PaddedAnalysis a;
  auto mark = [](absl::flat_hash_map<std::pair<const tf::Node*, int>, const tf::Node*>& set,
                 const tf::Node* node, const tf::Node* source) {
    for (int k = 0; k < node->num_outputs(); ++k) set.insert({{node, k}, source});
  };
  for (const tf::Node* node : order) {
    if (!in_scope(*node)) continue;
    const std::vector<int> constant_slots = node->compile_time_const_inputs();
    for (int i = 0; i < node->num_inputs(); ++i) {
      const tf::Output in = node->input(i);
      const std::pair<const tf::Node*, int> key(in.node, in.index);
      if (auto it = a.padded.find(key); it != a.padded.end()) {
        const tf::Node* source = it->second;
        const DynamicRead read = DynamicReadOf(*node, i);
        if (read == DynamicRead::kNone) {
          a.refused.push_back({in.node, node});
          if (a.first_problem.empty()) {
            a.first_problem =
                absl::StrCat("node ", node->DebugName(), " reads ", in.node->name(), ":", in.index,
                             ", whose size is known only at run time (from ", source->DebugName(),
                             "); ", node->op(), " does not compile on such a value");
          }
          continue;
        }
        // A Pad whose paddings come from constants keeps the run-time size (padded on); one
        // whose paddings are computed from run-time sizes makes it static (pad to a bound).
        const tf::Output pads = node->num_inputs() > 1 ? node->input(1) : in;
        const bool pad_on = (node->op() == "Pad" || node->op() == "PadV2") && i == 0 &&
                            !a.dependent.contains(std::make_pair(
                                static_cast<const tf::Node*>(pads.node), pads.index));
        if ((read == DynamicRead::kPropagates && !ReducesLeadingDim(*node)) || pad_on) {
          mark(a.padded, node, source);
        }
        mark(a.dependent, node, source);
        continue;
      }
      auto it = a.dependent.find(key);
      if (it == a.dependent.end()) continue;
      const tf::Node* source = it->second;
      mark(a.dependent, node, source);
      // Sizes computed at run time make a padded value here (LowerPaddedNode) ...
      const absl::string_view op = node->op();
      if ((op == "Range" && i <= 1) || (op == "Slice" && i == 2) || (op == "Fill" && i == 0) ||
          (op == "TopKV2" && i == 1)) {
        mark(a.padded, node, source);
        continue;
      }
      // ... and can be a shape argument where they stay expressions in the lowering; any other
      // argument that must be known when compiling cannot come from them.
      const bool symbolic_ok = ((op == "Pad" || op == "PadV2" || op == "Reshape") && i == 1) ||
                               op == "StridedSlice" || op == "Slice" || op == "Pack" ||
                               op == "ConcatV2" || op == "ExpandDims" || op == "Squeeze" ||
                               op == "Identity" || op == "Cast" || op == "Shape";
      if (!symbolic_ok &&
          std::find(constant_slots.begin(), constant_slots.end(), i) != constant_slots.end()) {
        a.refused.push_back({in.node, node});
        if (a.first_problem.empty()) {
          a.first_problem =
              absl::StrCat("node ", node->DebugName(), " needs input ", i, " when compiling, but ",
                           in.node->name(), ":", in.index, " is computed at run time (from ",
                           source->DebugName(), "'s size)");
        }
      }
    }
    for (int k : RowCountedOutputs(*node)) {
      a.padded.insert({{node, k}, node});
      a.dependent.insert({{node, k}, node});
    }
  }
  return a;
}

std::optional<std::string> UnresolvedDynamicSize(const tf::FunctionBody& body) {
  absl::flat_hash_set<const tf::Node*> needed;
  for (const tf::Node* n : NeededBodyNodes(body)) needed.insert(n);
  std::vector<const tf::Node*> order(body.graph->topological_order().begin(),
                                     body.graph->topological_order().end());
  const PaddedAnalysis a =
      AnalyzePadded(order, [&](const tf::Node& n) { return needed.contains(&n); });
  if (!a.first_problem.empty()) return a.first_problem;
  for (const std::string& name : body.outputs) {
    absl::StatusOr<tf::Output> out = body.graph->FindOutput(name);
    if (!out.ok()) continue;
    auto it = a.padded.find(std::make_pair(static_cast<const tf::Node*>(out->node), out->index));
    if (it != a.padded.end()) {
      return absl::StrCat("the function returns ", name,
                          ", whose size is known only at run "
                          "time (from ",
                          it->second->DebugName(),
                          "); a body's results need "
                          "static shapes (pad it to a fixed size inside the body)");
    }
  }
  return std::nullopt;
}

absl::Status PropagateDynamicSizes(LoweringContext& ctx, const tf::Node& node,
                                   bool lowered_padded) {
  const ReadRule* rule = RuleFor(node.op());
  if (!lowered_padded && rule != nullptr && rule->elementwise && node.num_inputs() >= 1) {
    if (const DynamicDim* d = ctx.DynamicInput(node, 0)) {
      ctx.SetDynamic({const_cast<tf::Node*>(&node), 0}, *d);
    }
  }
  bool symbolic = false;
  for (int i = 0; i < node.num_inputs(); ++i) symbolic |= ctx.HasSymbolic(node.input(i));
  if (!symbolic) return absl::OkStatus();
  if (IsArithOp(node.op())) return PropagateArith(ctx, node);
  if (std::optional<std::vector<int>> moved = MovedInputs(node)) {
    return PropagateMoved(ctx, node, *moved);
  }
  return absl::OkStatus();
}

absl::StatusOr<Instruction*> MaskBeyond(LoweringContext& ctx, Instruction* x, int dim,
                                        const SymExpr& limit, Instruction* fill) {
  const std::vector<int64_t>& dims = x->shape().dims();
  if (limit.IsConstant() && limit.constant >= dims[static_cast<size_t>(dim)]) return x;
  hlo::Builder& b = ctx.b();
  TFJIT_ASSIGN_OR_RETURN(Instruction * iota, b.Iota(hlo::Shape(DType::kInt64, dims), dim));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lim, ctx.SizeValue(limit));
  TFJIT_ASSIGN_OR_RETURN(lim, b.Broadcast(lim, dims, {}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * real, b.Compare(hlo::ComparisonDirection::kLt, iota, lim));
  TFJIT_ASSIGN_OR_RETURN(fill, b.Broadcast(fill, dims, {}));
  return b.Select(real, x, fill);
}

// Per dim e: lo must be a constant. A static dim pads by constants. The padded dim (size s,
// bound B) either gets a static size T when lo + s + hi is the constant T (hi = T - lo - s,
// the pad-to-max pattern: the data is cut to T - lo rows, whose real ones all fit since
// hi >= 0 is checked at run time as TF's kernel does), or stays padded with size
// lo + s + hi when hi is a constant. Either way the rows past lo + s get the padding value.
absl::Status LowerDynamicPad(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DynamicDim* dyn = ctx.DynamicInput(node, 0);
  const int rank = x->shape().rank();
  std::optional<std::vector<SymExpr>> pads = ctx.SymbolicInput(node, 1);
  if (!pads.has_value()) {  // TF's known issue F
    const absl::Status s = ctx.ConstantInput(node, 1).status();
    return s.ok() ? Internal("node %s: paddings evaluate but have no expressions", node.DebugName())
                  : s;
  }
  if (pads->size() != static_cast<size_t>(2 * rank)) {
    return InvalidArgument("node %s: paddings must be a matrix of shape [%d, 2], got %d values",
                           node.DebugName(), rank, pads->size());
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * value,
                         PadConstantValue(ctx, node, x->shape().element_type()));
  hlo::Attributes attrs;
  attrs.padding.resize(static_cast<size_t>(rank));
  std::optional<DynamicDim> out_dyn;
  int mask_dim = -1;
  SymExpr mask_limit;
  for (int e = 0; e < rank; ++e) {
    const SymExpr& lo = (*pads)[static_cast<size_t>(2 * e)];
    const SymExpr& hi = (*pads)[static_cast<size_t>(2 * e + 1)];
    if (!lo.IsConstant()) {
      return Unimplemented(
          "node %s: the low padding of dim %d is computed at run time; only "
          "a high padding may be (pad-to-a-bound)",
          node.DebugName(), e);
    }
    if (lo.constant < 0 || (hi.IsConstant() && hi.constant < 0)) {
      return InvalidArgument("node %s: Paddings must be non-negative: %d %d", node.DebugName(),
                             lo.constant, hi.IsConstant() ? hi.constant : 0);
    }
    const int64_t bound = x->shape().dim(e);
    if (dyn == nullptr || dyn->dim != e) {
      if (!hi.IsConstant()) {
        return Unimplemented(
            "node %s: the high padding of dim %d is computed at run time (from "
            "a size known only then) and dim %d is not padded: its size would "
            "be known only at run time",
            node.DebugName(), e, e);
      }
      attrs.padding[static_cast<size_t>(e)] = {lo.constant, hi.constant, 0};
      continue;
    }
    const SymExpr total = Sum(Sum(lo, dyn->size), hi);
    mask_dim = e;
    mask_limit = Sum(lo, dyn->size);
    if (total.IsConstant()) {
      const int64_t avail = total.constant - lo.constant;  // rows left for the data
      if (avail < 0) {
        return InvalidArgument(
            "node %s: Paddings must be non-negative: the paddings of dim %d "
            "give a size of %d",
            node.DebugName(), e, total.constant);
      }
      if (ctx.UpperBound(dyn->size) > avail) {
        TFJIT_ASSIGN_OR_RETURN(Instruction * s, ctx.SizeValue(dyn->size));
        TFJIT_ASSIGN_OR_RETURN(Instruction * bad, ctx.b().Compare(hlo::ComparisonDirection::kGt, s,
                                                                  ctx.b().ScalarConstant<int64_t>(
                                                                      DType::kInt64, avail)));
        TFJIT_RETURN_IF_ERROR(ctx.AddConditionCheck(
            node, bad,
            absl::StrCat("Paddings must be non-negative: the high padding of dim ", e, " (",
                         total.constant, " - ", lo.constant,
                         " - the run-time "
                         "size) is negative")));
      }
      if (bound > avail) {
        std::vector<hlo::SliceDim> slice;
        for (int64_t d : x->shape().dims()) slice.push_back({0, d, 1});
        slice[static_cast<size_t>(e)].limit = avail;
        TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Slice(x, slice));
      }
      attrs.padding[static_cast<size_t>(e)] = {lo.constant, avail - std::min(bound, avail), 0};
    } else if (hi.IsConstant()) {
      attrs.padding[static_cast<size_t>(e)] = {lo.constant, hi.constant, 0};
      out_dyn = DynamicDim{e, total};
    } else {
      return Unimplemented(
          "node %s: the high padding of dim %d is computed at run time and "
          "does not give that dim a static size (lo + size + hi is not a "
          "constant)",
          node.DebugName(), e);
    }
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Add(hlo::Opcode::kPad, {x, value}, attrs));
  if (mask_dim >= 0) {
    TFJIT_ASSIGN_OR_RETURN(r, MaskBeyond(ctx, r, mask_dim, mask_limit, value));
  }
  ctx.SetOutput(node, 0, r);
  if (out_dyn.has_value()) ctx.SetDynamic({const_cast<tf::Node*>(&node), 0}, *out_dyn);
  return absl::OkStatus();
}

}  // namespace tfjit::tf2hlo
