// Lowerings of the reduction family (docs/DESIGN.md, "Op families"): Sum, Mean, Max, Min,
// Prod, All/Any, ArgMax/ArgMin, TopKV2 as the custom-call tfjit.top_k (HLO has no sort),
// InTopKV2 as compare-and-count, and the scans Cumsum, Cumprod and CumulativeLogsumexp as
// reduce-windows.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/top_k.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using hlo::Opcode;

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd };

// The identity of the reduction's combiner. Integer Max/Min use the type's limits instead
// (IntegerLimit), which a double cannot carry exactly for 64-bit types.
double ReduceInit(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kMean:
      return 0.0;
    case ReduceKind::kProd:
      return 1.0;
    case ReduceKind::kMax:
      return -std::numeric_limits<double>::infinity();
    case ReduceKind::kMin:
      return std::numeric_limits<double>::infinity();
  }
  return 0.0;
}

Opcode ReduceOpcode(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kMax:
      return Opcode::kMaximum;
    case ReduceKind::kMin:
      return Opcode::kMinimum;
    case ReduceKind::kProd:
      return Opcode::kMultiply;
    default:
      return Opcode::kAdd;
  }
}

absl::StatusOr<Instruction*> IntegerLimit(LoweringContext& ctx, DType t, bool lowest) {
  Tensor v(t, {});
  DispatchNumeric(t, [&](auto tag) {
    using T = decltype(tag);
    *v.data<T>() = lowest ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  });
  return ctx.b().Constant(hlo::Literal::FromTensor(v));
}

absl::Status LowerReduction(LoweringContext& ctx, const tf::Node& node, ReduceKind kind) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape& shape = x->shape();
  const DType t = shape.element_type();
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReductionAxes(ctx, node, shape.rank()));
  TFJIT_ASSIGN_OR_RETURN(bool keep_dims, tf::GetBoolAttrOr(node, "keep_dims", false));
  Instruction* init = nullptr;
  if ((kind == ReduceKind::kMax || kind == ReduceKind::kMin) && !IsFloatingDType(t)) {
    TFJIT_ASSIGN_OR_RETURN(init, IntegerLimit(ctx, t, kind == ReduceKind::kMax));
  } else {
    TFJIT_ASSIGN_OR_RETURN(init, ctx.Splat(t, ReduceInit(kind), {}));
  }
  hlo::Computation* combiner =
      hlo::GetOrAddScalarBinaryComputation(ctx.module(), ReduceOpcode(kind), t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Reduce(x, init, axes, combiner));
  if (kind == ReduceKind::kMean) {
    int64_t count = 1;
    for (int64_t a : axes) count *= shape.dim(static_cast<int>(a));
    // TF divides the sum by the element count in the input type: integer division for ints,
    // NaN for an empty float reduction. An empty integer Mean (a division by zero in TF's
    // kernel) is defined as 0 here, the value the fallback kernel gives too.
    if (count != 0 || IsFloatingDType(t)) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * n,
                             ctx.Splat(t, static_cast<double>(count), r->shape().dims()));
      TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kDivide, r, n));
    }
  }
  if (keep_dims) {
    std::vector<int64_t> kept = shape.dims();
    for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, kept));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerSum(LoweringContext& c, const tf::Node& n) {
  return LowerReduction(c, n, ReduceKind::kSum);
}
absl::Status LowerMean(LoweringContext& c, const tf::Node& n) {
  return LowerReduction(c, n, ReduceKind::kMean);
}
absl::Status LowerMax(LoweringContext& c, const tf::Node& n) {
  return LowerReduction(c, n, ReduceKind::kMax);
}
absl::Status LowerMin(LoweringContext& c, const tf::Node& n) {
  return LowerReduction(c, n, ReduceKind::kMin);
}
absl::Status LowerProd(LoweringContext& c, const tf::Node& n) {
  return LowerReduction(c, n, ReduceKind::kProd);
}

// All/Any(x: bool, axes) => reduce with and/or; keep_dims as for the numeric reductions.
absl::Status LowerBoolReduction(LoweringContext& ctx, const tf::Node& node, bool all) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape& shape = x->shape();
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReductionAxes(ctx, node, shape.rank()));
  TFJIT_ASSIGN_OR_RETURN(bool keep_dims, tf::GetBoolAttrOr(node, "keep_dims", false));
  Instruction* init = ctx.b().ScalarConstant<bool>(DType::kBool, all);
  hlo::Computation* combiner = hlo::GetOrAddScalarBinaryComputation(
      ctx.module(), all ? Opcode::kAnd : Opcode::kOr, DType::kBool);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Reduce(x, init, axes, combiner));
  if (keep_dims) {
    std::vector<int64_t> kept = shape.dims();
    for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, kept));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}
absl::Status LowerAll(LoweringContext& c, const tf::Node& n) {
  return LowerBoolReduction(c, n, true);
}
absl::Status LowerAny(LoweringContext& c, const tf::Node& n) {
  return LowerBoolReduction(c, n, false);
}

// ArgMax/ArgMin(x, axis): the first index holding the extreme value. With a NaN along the
// axis the answer is the first NaN (XLA's rule; the extreme reduce propagates NaN).
// Built from single-output reduces: m = max(x); index = min(x == m ? iota : limit).
absl::Status LowerArgExtreme(LoweringContext& ctx, const tf::Node& node, bool is_max) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape& shape = x->shape();
  const DType t = shape.element_type();
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, ctx.ConstantInputAsInts(node, 1));
  if (axis_v.size() != 1)
    return InvalidArgument("node %s: dimension must be a scalar", node.DebugName());
  const int rank = shape.rank();
  int64_t axis = axis_v[0];
  if (axis < -rank || axis >= rank) {
    return InvalidArgument("node %s: Expected dimension in the range [%d, %d), but got %d",
                           node.DebugName(), -rank, rank, axis);
  }
  if (axis < 0) axis += rank;
  if (shape.dim(static_cast<int>(axis)) == 0) {
    return InvalidArgument("node %s: Reduction axis %d is empty in shape %s", node.DebugName(),
                           axis, shape.ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(DType out_t, tf::GetTypeAttr(node, "output_type"));
  Instruction* init = nullptr;
  if (IsFloatingDType(t)) {
    const double inf = std::numeric_limits<double>::infinity();
    TFJIT_ASSIGN_OR_RETURN(init, ctx.Splat(t, is_max ? -inf : inf, {}));
  } else {
    TFJIT_ASSIGN_OR_RETURN(init, IntegerLimit(ctx, t, is_max));
  }
  hlo::Computation* extreme = hlo::GetOrAddScalarBinaryComputation(
      ctx.module(), is_max ? Opcode::kMaximum : Opcode::kMinimum, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * m, ctx.b().Reduce(x, init, {axis}, extreme));
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) kept.push_back(d);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * mb, ctx.b().Broadcast(m, shape.dims(), kept));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hit, ctx.b().Compare(hlo::ComparisonDirection::kEq, x, mb));
  if (IsFloatingDType(t)) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x_nan,
                           ctx.b().Compare(hlo::ComparisonDirection::kNe, x, x));
    TFJIT_ASSIGN_OR_RETURN(Instruction * m_nan,
                           ctx.b().Compare(hlo::ComparisonDirection::kNe, mb, mb));
    TFJIT_ASSIGN_OR_RETURN(hit, ctx.b().Select(m_nan, x_nan, hit));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * iota, ctx.b().Iota(hlo::Shape(out_t, shape.dims()), axis));
  TFJIT_ASSIGN_OR_RETURN(Instruction * limit, IntegerLimit(ctx, out_t, /*lowest=*/false));
  TFJIT_ASSIGN_OR_RETURN(Instruction * limits, ctx.b().Broadcast(limit, shape.dims(), {}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * candidates, ctx.b().Select(hit, iota, limits));
  hlo::Computation* first =
      hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMinimum, out_t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Reduce(candidates, limit, {axis}, first));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}
absl::Status LowerArgMax(LoweringContext& c, const tf::Node& n) {
  return LowerArgExtreme(c, n, true);
}
absl::Status LowerArgMin(LoweringContext& c, const tf::Node& n) {
  return LowerArgExtreme(c, n, false);
}

// ---- TopKV2 ----

// The custom-call tfjit.top_k (core/top_k.h, the fallback kernel's routine) on a compile-time
// k; TF's checks and messages. Indices come back s32 and are widened for index_type int64.
absl::Status LowerTopKV2(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Tensor k_t, ctx.ConstantInput(node, 1));
  if (k_t.rank() != 0) {
    return InvalidArgument("node %s: k must be scalar, got shape %s", node.DebugName(),
                           k_t.ShapeString());
  }
  const int64_t k = ElementAsInt64(k_t, 0);
  if (k < 0) return InvalidArgument("node %s: Need k >= 0, got %d", node.DebugName(), k);
  const hlo::Shape& in = x->shape();
  if (in.rank() < 1) {
    return InvalidArgument("node %s: input must be >= 1-D, got shape %s", node.DebugName(),
                           in.ToString());
  }
  const int64_t n = in.dims().back();
  if (n < k) {
    return InvalidArgument("node %s: input must have at least k columns. Had %d, needed %d",
                           node.DebugName(), n, k);
  }
  if (n > std::numeric_limits<int32_t>::max()) {
    return Unimplemented(
        "node %s: top-k rows of %d columns are too long to compile (at most "
        "2^31 - 1)",
        node.DebugName(), n);
  }
  TFJIT_ASSIGN_OR_RETURN(DType index_type, tf::GetTypeAttr(node, "index_type"));
  if (index_type != DType::kInt32 && index_type != DType::kInt64) {
    return InvalidArgument("node %s: index_type must be int32 or int64, got %s", node.DebugName(),
                           DTypeName(index_type));
  }
  std::vector<int64_t> out_dims = in.dims();
  out_dims.back() = k;
  hlo::Attributes attrs;
  attrs.custom_call_target = topk::kTopKTarget;
  const hlo::Shape result = hlo::Shape::Tuple(
      {hlo::Shape(in.element_type(), out_dims), hlo::Shape(DType::kInt32, out_dims)});
  TFJIT_ASSIGN_OR_RETURN(Instruction * top,
                         ctx.b().Add(Opcode::kCustomCall, {x}, std::move(attrs), {}, result));
  TFJIT_ASSIGN_OR_RETURN(Instruction * values, ctx.b().GetTupleElement(top, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, ctx.b().GetTupleElement(top, 1));
  if (index_type == DType::kInt64) {
    TFJIT_ASSIGN_OR_RETURN(indices, ctx.b().Convert(indices, DType::kInt64));
  }
  ctx.SetOutput(node, 0, values);
  ctx.SetOutput(node, 1, indices);
  return absl::OkStatus();
}

// ---- InTopKV2 ----

// InTopKV2: tf2xla's count of predictions above the target's, and (as TF's CPU kernel) false
// for an out-of-range target.
absl::Status LowerInTopK(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * p, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * targets, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> k_v, ctx.ConstantInputAsInts(node, 2));
  if (p->shape().rank() != 2) {
    return InvalidArgument("node %s: predictions must be == 2-D, got shape %s", node.DebugName(),
                           p->shape().ToString());
  }
  if (targets->shape().rank() != 1 || targets->shape().dim(0) != p->shape().dim(0)) {
    return InvalidArgument(
        "node %s: targets must be 1-D with as many elements as predictions has "
        "rows: targets is %s, predictions is %s",
        node.DebugName(), targets->shape().ToString(), p->shape().ToString());
  }
  if (k_v.size() != 1) return InvalidArgument("node %s: k must be 0-D", node.DebugName());
  const int64_t b = p->shape().dim(0), c = p->shape().dim(1);
  const DType tt = targets->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * tb, ctx.b().Broadcast(targets, {b, c}, {0}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * iota, ctx.b().Iota(hlo::Shape(tt, {b, c}), 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hit, ctx.b().Compare(ComparisonDirection::kEq, tb, iota));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(DType::kFloat32, 0.0, {b, c}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * picked, ctx.b().Select(hit, p, zeros));
  TFJIT_ASSIGN_OR_RETURN(Instruction * tv, SumOver(ctx, picked, {1}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * tvb, ctx.b().Broadcast(tv, {b, c}, {0}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * gt, ctx.b().Compare(ComparisonDirection::kGt, p, tvb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * gt_i, ctx.b().Convert(gt, DType::kInt64));
  TFJIT_ASSIGN_OR_RETURN(Instruction * larger, SumOver(ctx, gt_i, {1}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * k,
                         ctx.Splat(DType::kInt64, static_cast<double>(k_v[0]), {b}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Compare(ComparisonDirection::kLt, larger, k));
  TFJIT_ASSIGN_OR_RETURN(Instruction * finite, ctx.b().Add(Opcode::kIsFinite, {tv}));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kAnd, r, finite));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lo, ctx.Splat(tt, 0.0, {b}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hi, ctx.Splat(tt, static_cast<double>(c), {b}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ge0, ctx.b().Compare(ComparisonDirection::kGe, targets, lo));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ltc, ctx.b().Compare(ComparisonDirection::kLt, targets, hi));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kAnd, r, ge0));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kAnd, r, ltc));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Scans: Cumsum, Cumprod, CumulativeLogsumexp ----

// (a, b) -> log(exp(a) + exp(b)): hi + log1p(exp(lo - hi)), and hi itself when hi is not
// finite (inf and -inf are absorbing, NaN propagates) as the kernel's LogAddExp.
hlo::Computation* LogAddExpComputation(LoweringContext& ctx, DType t) {
  const std::string name = absl::StrCat("logaddexp_", DTypeHloName(t));
  if (hlo::Computation* c = ctx.module()->FindComputation(name)) return c;
  hlo::Computation* c = ctx.module()->AddComputation(name);
  hlo::Builder b(c);
  Instruction* x = b.Parameter(0, hlo::Shape::Scalar(t), "lhs");
  Instruction* y = b.Parameter(1, hlo::Shape::Scalar(t), "rhs");
  Instruction* hi = *b.Binary(Opcode::kMaximum, x, y);
  Instruction* lo = *b.Binary(Opcode::kMinimum, x, y);
  Instruction* e = *b.Unary(Opcode::kExp, *b.Binary(Opcode::kSubtract, lo, hi));
  Instruction* sum = *b.Binary(Opcode::kAdd, hi, *b.Unary(Opcode::kLog1p, e));
  Instruction* finite = *b.Add(Opcode::kIsFinite, {hi});
  c->set_root(*b.Select(finite, sum, hi));
  return c;
}

// The scans Cumsum, Cumprod and CumulativeLogsumexp: a reduce-window over the prefix of each
// position (window n, padded n - 1 low with the reducer's identity), whose in-order
// evaluation is the kernel's running sum; exclusive shifts the input by one, reverse scans
// the reversed input. 16-bit floats scan in float32, as the kernels do.
enum class ScanKind { kSum, kProd, kLogSumExp };

absl::Status LowerScan(LoweringContext& ctx, const tf::Node& node, ScanKind kind) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, ctx.ConstantInputAsInts(node, 1));
  const int rank = x->shape().rank();
  if (axis_v.size() != 1 || rank == 0 || axis_v[0] < -rank || axis_v[0] >= rank) {
    return InvalidArgument("node %s: axis must be a scalar in [-%d, %d) for input %s",
                           node.DebugName(), rank, rank, x->shape().ToString());
  }
  const int64_t axis = axis_v[0] < 0 ? axis_v[0] + rank : axis_v[0];
  TFJIT_ASSIGN_OR_RETURN(bool exclusive, tf::GetBoolAttrOr(node, "exclusive", false));
  TFJIT_ASSIGN_OR_RETURN(bool reverse, tf::GetBoolAttrOr(node, "reverse", false));
  const DType t = x->shape().element_type();
  const DType c = (t == DType::kFloat16 || t == DType::kBFloat16) ? DType::kFloat32 : t;
  const int64_t n = x->shape().dim(static_cast<int>(axis));
  if (n == 0) {
    ctx.SetOutput(node, 0, x);
    return absl::OkStatus();
  }
  TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, c));
  if (reverse) {
    TFJIT_ASSIGN_OR_RETURN(x, ReverseDims(ctx, x, {axis}));
  }
  const double identity = kind == ScanKind::kSum    ? 0.0
                          : kind == ScanKind::kProd ? 1.0
                                                    : -std::numeric_limits<double>::infinity();
  TFJIT_ASSIGN_OR_RETURN(Instruction * init, ctx.Splat(c, identity, {}));
  if (exclusive) {
    hlo::Attributes shift;
    shift.padding.assign(static_cast<size_t>(rank), hlo::PadDim{});
    shift.padding[static_cast<size_t>(axis)] = {1, -1, 0};
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Add(Opcode::kPad, {x, init}, shift));
  }
  hlo::Attributes attrs;
  attrs.window.assign(static_cast<size_t>(rank), hlo::WindowDim{});
  attrs.window[static_cast<size_t>(axis)].size = n;
  attrs.window[static_cast<size_t>(axis)].pad_lo = n - 1;
  hlo::Computation* reducer =
      kind == ScanKind::kLogSumExp
          ? LogAddExpComputation(ctx, c)
          : hlo::GetOrAddScalarBinaryComputation(
                ctx.module(), kind == ScanKind::kSum ? Opcode::kAdd : Opcode::kMultiply, c);
  TFJIT_ASSIGN_OR_RETURN(
      Instruction * r, ctx.b().Add(Opcode::kReduceWindow, {x, init}, std::move(attrs), {reducer}));
  if (reverse) {
    TFJIT_ASSIGN_OR_RETURN(r, ReverseDims(ctx, r, {axis}));
  }
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerCumulativeLogsumexp(LoweringContext& ctx, const tf::Node& node) {
  return LowerScan(ctx, node, ScanKind::kLogSumExp);
}
absl::Status LowerCumsum(LoweringContext& ctx, const tf::Node& node) {
  return LowerScan(ctx, node, ScanKind::kSum);
}
absl::Status LowerCumprod(LoweringContext& ctx, const tf::Node& node) {
  return LowerScan(ctx, node, ScanKind::kProd);
}

}  // namespace

// Sum of `x` over `dims` in its own type.
absl::StatusOr<Instruction*> SumOver(LoweringContext& ctx, Instruction* x,
                                     const std::vector<int64_t>& dims) {
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, {}));
  return ctx.b().Reduce(x, zero, dims,
                        hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, t));
}

absl::StatusOr<std::vector<int64_t>> ReductionAxes(LoweringContext& ctx, const tf::Node& node,
                                                   int rank) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.ConstantInputAsInts(node, 1));
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) {
      return InvalidArgument(
          "Invalid reduction dimension (%d for input with %d dimension(s)); "
          "axes must be in [-%d, %d)",
          a, rank, rank, rank);
    }
    if (a < 0) a += rank;
    seen[static_cast<size_t>(a)] = true;
  }
  std::vector<int64_t> unique;
  for (int d = 0; d < rank; ++d) {
    if (seen[static_cast<size_t>(d)]) unique.push_back(d);
  }
  return unique;
}

void AppendReductionLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
                                  {"Sum", LowerSum},
                                  {"Mean", LowerMean},
                                  {"Max", LowerMax},
                                  {"Min", LowerMin},
                                  {"Prod", LowerProd},
                                  {"All", LowerAll},
                                  {"Any", LowerAny},
                                  {"ArgMax", LowerArgMax},
                                  {"ArgMin", LowerArgMin},
                                  {"TopKV2", LowerTopKV2},
                                  {"InTopKV2", LowerInTopK},
                                  {"Cumsum", LowerCumsum},
                                  {"Cumprod", LowerCumprod},
                                  {"CumulativeLogsumexp", LowerCumulativeLogsumexp},
                              });
}

}  // namespace tfjit::tf2hlo
