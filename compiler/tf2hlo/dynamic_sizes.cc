// Bounded dynamic sizes: which ops read padded values, the graph-level check clustering asks,
// the propagation run after each node's lowering, and Pad with run-time paddings.
#include "compiler/tf2hlo/dynamic_sizes.h"

#include <algorithm>
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

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;

struct ReadRule {
  const char* op;
  DynamicRead read;
  // A shape-preserving elementwise op: PropagateDynamicSizes pads its output as its input.
  bool elementwise = false;
};

constexpr ReadRule kReadRules[] = {
    {"Abs", DynamicRead::kPropagates, true},
    {"Cast", DynamicRead::kPropagates, true},
    {"Ceil", DynamicRead::kPropagates, true},
    {"Exp", DynamicRead::kPropagates, true},
    {"Floor", DynamicRead::kPropagates, true},
    {"GatherV2", DynamicRead::kPropagates},  // slice_lowerings.cc
    {"Identity", DynamicRead::kPropagates, true},
    {"LogicalNot", DynamicRead::kPropagates, true},
    {"Neg", DynamicRead::kPropagates, true},
    {"NonMaxSuppression", DynamicRead::kResolves},  // image_lowerings.cc: padded scores masked
    {"NonMaxSuppressionV2", DynamicRead::kResolves},
    {"NonMaxSuppressionV3", DynamicRead::kResolves},
    {"NonMaxSuppressionV4", DynamicRead::kResolves},
    {"NonMaxSuppressionV5", DynamicRead::kResolves},
    {"Pad", DynamicRead::kResolves},  // LowerDynamicPad (padded on with constant paddings)
    {"PadV2", DynamicRead::kResolves},
    {"Relu", DynamicRead::kPropagates, true},
    {"Round", DynamicRead::kPropagates, true},
    {"Shape", DynamicRead::kResolves},  // array_lowerings.cc
    {"Sigmoid", DynamicRead::kPropagates, true},
    {"Size", DynamicRead::kResolves},
    {"Snapshot", DynamicRead::kPropagates, true},
    {"Sqrt", DynamicRead::kPropagates, true},
    {"Squeeze", DynamicRead::kPropagates},  // array_lowerings.cc
    {"StopGradient", DynamicRead::kPropagates, true},
    {"Tanh", DynamicRead::kPropagates, true},
};

const ReadRule* RuleFor(absl::string_view op) {
  for (const ReadRule& r : kReadRules) {
    if (op == r.op) return &r;
  }
  return nullptr;
}

// ---- Expressions ----

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
  ctx.SetSymbolic({const_cast<tf::Node*>(&node), 0}, std::move(out));
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
  ctx.SetSymbolic({const_cast<tf::Node*>(&node), 0}, std::move(out));
  return absl::OkStatus();
}

// The scalar padding value of Pad (zero) or PadV2 (its third input).
absl::StatusOr<Instruction*> PadValue(LoweringContext& ctx, const tf::Node& node, DType type) {
  if (node.num_inputs() <= 2) return ctx.Splat(type, 0.0, {});
  TFJIT_ASSIGN_OR_RETURN(Instruction * value, ctx.Input(node, 2));
  if (value->shape().rank() != 0) {
    return InvalidArgument("node %s: constant_values must be a scalar, got %s", node.DebugName(),
                           value->shape().ToString());
  }
  return value;
}

}  // namespace

DynamicRead DynamicReadOf(absl::string_view op) {
  const ReadRule* rule = RuleFor(op);
  return rule == nullptr ? DynamicRead::kNone : rule->read;
}

absl::Status PaddedReadError(const tf::Node& node, int i, const DynamicDim& dim) {
  const tf::Output in = node.input(i);
  return Unimplemented("node %s reads %s:%d, whose dim %d has a size known only at run time "
                       "(padded to its bound, as XLA's bounded dynamic dims); %s does not "
                       "compile on such a value (ops that do: Shape, Size, Pad, GatherV2, "
                       "Squeeze, NonMaxSuppression, elementwise unary ops)",
                       node.DebugName(), in.node->name(), in.index, dim.dim, node.op());
}

std::optional<std::string> UnresolvedDynamicSize(const tf::FunctionBody& body) {
  absl::flat_hash_set<const tf::Node*> needed;
  for (const tf::Node* n : NeededBodyNodes(body)) needed.insert(n);
  // Padded tensors, with the node whose run-time size they carry.
  absl::flat_hash_map<std::pair<const tf::Node*, int>, const tf::Node*> padded;
  for (const tf::Node* node : body.graph->topological_order()) {
    if (!needed.contains(node)) continue;
    for (int i = 0; i < node->num_inputs(); ++i) {
      const tf::Output in = node->input(i);
      auto it = padded.find(std::make_pair(static_cast<const tf::Node*>(in.node), in.index));
      if (it == padded.end()) continue;
      const DynamicRead read = DynamicReadOf(node->op());
      if (read == DynamicRead::kNone) {
        return absl::StrCat("node ", node->DebugName(), " reads ", in.node->name(), ":",
                            in.index, ", whose size is known only at run time (from ",
                            it->second->DebugName(), "); ", node->op(),
                            " does not compile on such a value");
      }
      const bool pad_on = (node->op() == "Pad" || node->op() == "PadV2") && i == 0 &&
                          node->input(1).node->op() == "Const";
      if (read == DynamicRead::kPropagates || pad_on) {
        for (int k = 0; k < node->num_outputs(); ++k) padded[{node, k}] = it->second;
      }
    }
    for (int k : RowCountedOutputs(*node)) padded[{node, k}] = node;
  }
  for (const std::string& name : body.outputs) {
    absl::StatusOr<tf::Output> out = body.graph->FindOutput(name);
    if (!out.ok()) continue;
    auto it = padded.find(std::make_pair(static_cast<const tf::Node*>(out->node), out->index));
    if (it != padded.end()) {
      return absl::StrCat("the function returns ", name, ", whose size is known only at run "
                          "time (from ", it->second->DebugName(), "); a body's results need "
                          "static shapes (pad it to a fixed size inside the body)");
    }
  }
  return std::nullopt;
}

absl::Status PropagateDynamicSizes(LoweringContext& ctx, const tf::Node& node) {
  const ReadRule* rule = RuleFor(node.op());
  if (rule != nullptr && rule->elementwise && node.num_inputs() >= 1) {
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
  if (!pads.has_value()) return ctx.ConstantInput(node, 1).status();  // TF's known issue F
  if (pads->size() != static_cast<size_t>(2 * rank)) {
    return InvalidArgument("node %s: paddings must be a matrix of shape [%d, 2], got %d values",
                           node.DebugName(), rank, pads->size());
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * value, PadValue(ctx, node, x->shape().element_type()));
  hlo::Attributes attrs;
  attrs.padding.resize(static_cast<size_t>(rank));
  std::optional<DynamicDim> out_dyn;
  int mask_dim = -1;
  SymExpr mask_limit;
  for (int e = 0; e < rank; ++e) {
    const SymExpr& lo = (*pads)[static_cast<size_t>(2 * e)];
    const SymExpr& hi = (*pads)[static_cast<size_t>(2 * e + 1)];
    if (!lo.IsConstant()) {
      return Unimplemented("node %s: the low padding of dim %d is computed at run time; only "
                           "a high padding may be (pad-to-a-bound)", node.DebugName(), e);
    }
    if (lo.constant < 0 || (hi.IsConstant() && hi.constant < 0)) {
      return InvalidArgument("node %s: Paddings must be non-negative: %d %d", node.DebugName(),
                             lo.constant, hi.IsConstant() ? hi.constant : 0);
    }
    const int64_t bound = x->shape().dim(e);
    if (dyn == nullptr || dyn->dim != e) {
      if (!hi.IsConstant()) return ctx.ConstantInput(node, 1).status();
      attrs.padding[static_cast<size_t>(e)] = {lo.constant, hi.constant, 0};
      continue;
    }
    const SymExpr total = Sum(Sum(lo, dyn->size), hi);
    mask_dim = e;
    mask_limit = Sum(lo, dyn->size);
    if (total.IsConstant()) {
      const int64_t avail = total.constant - lo.constant;  // rows left for the data
      if (avail < 0) {
        return InvalidArgument("node %s: Paddings must be non-negative: the paddings of dim %d "
                               "give a size of %d", node.DebugName(), e, total.constant);
      }
      if (ctx.UpperBound(dyn->size) > avail) {
        TFJIT_ASSIGN_OR_RETURN(Instruction * s, ctx.SizeValue(dyn->size));
        TFJIT_ASSIGN_OR_RETURN(
            Instruction * bad,
            ctx.b().Compare(hlo::ComparisonDirection::kGt, s,
                            ctx.b().ScalarConstant<int64_t>(DType::kInt64, avail)));
        TFJIT_RETURN_IF_ERROR(ctx.AddConditionCheck(
            node, bad, absl::StrCat("Paddings must be non-negative: the high padding of dim ", e,
                                    " (", total.constant, " - ", lo.constant, " - the run-time "
                                    "size) is negative")));
      }
      if (bound > avail) {
        std::vector<hlo::SliceDim> slice;
        for (int64_t d : x->shape().dims()) slice.push_back({0, d, 1});
        slice[static_cast<size_t>(e)].limit = avail;
        TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Slice(x, slice));
      }
      attrs.padding[static_cast<size_t>(e)] = {lo.constant,
                                               avail - std::min(bound, avail), 0};
    } else if (hi.IsConstant()) {
      attrs.padding[static_cast<size_t>(e)] = {lo.constant, hi.constant, 0};
      out_dyn = DynamicDim{e, total};
    } else {
      return Unimplemented("node %s: the high padding of dim %d is computed at run time and "
                           "does not give that dim a static size (lo + size + hi is not a "
                           "constant)", node.DebugName(), e);
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
