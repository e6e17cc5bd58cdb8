// Lowerings of TF's basic elementwise math, reductions (incl. All/Any, ArgMax/ArgMin),
// Select/SelectV2, AddN and ClipByValue; TopKV2 (a reduction) as the custom-call tfjit.top_k
// (HLO has no sort).
#include <cmath>
#include <limits>

#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/top_k.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Lowers a TF binary op with broadcasting to one HLO elementwise op.
absl::Status LowerBinary(LoweringContext& ctx, const tf::Node& node, Opcode opcode) {
  TFJIT_ASSIGN_OR_RETURN(auto ab, ctx.BroadcastBinaryInputs(node));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(opcode, ab.first, ab.second));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerUnary(LoweringContext& ctx, const tf::Node& node, Opcode opcode) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Unary(opcode, x));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

#define TFJIT_BINARY_LOWERING(Name, opcode) \
  absl::Status Lower##Name(LoweringContext& ctx, const tf::Node& node) { \
    return LowerBinary(ctx, node, Opcode::opcode);                       \
  }
#define TFJIT_UNARY_LOWERING(Name, opcode) \
  absl::Status Lower##Name(LoweringContext& ctx, const tf::Node& node) { \
    return LowerUnary(ctx, node, Opcode::opcode);                        \
  }
TFJIT_BINARY_LOWERING(Add, kAdd)
TFJIT_BINARY_LOWERING(Sub, kSubtract)
TFJIT_BINARY_LOWERING(Mul, kMultiply)
TFJIT_BINARY_LOWERING(RealDiv, kDivide)
TFJIT_BINARY_LOWERING(Maximum, kMaximum)
TFJIT_BINARY_LOWERING(Minimum, kMinimum)
TFJIT_UNARY_LOWERING(Neg, kNegate)
TFJIT_UNARY_LOWERING(Abs, kAbs)
TFJIT_UNARY_LOWERING(Exp, kExp)
TFJIT_UNARY_LOWERING(Log, kLog)
TFJIT_UNARY_LOWERING(Tanh, kTanh)
TFJIT_UNARY_LOWERING(Sigmoid, kLogistic)
TFJIT_UNARY_LOWERING(Sqrt, kSqrt)
TFJIT_UNARY_LOWERING(Rsqrt, kRsqrt)
#undef TFJIT_BINARY_LOWERING
#undef TFJIT_UNARY_LOWERING

// Square(x) => x * x
absl::Status LowerSquare(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kMultiply, x, x));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Relu(x) => max(x, 0)
absl::Status LowerRelu(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero,
                         ctx.Splat(x->shape().element_type(), 0.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kMaximum, x, zero));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Relu6(x) => min(max(x, 0), 6)
absl::Status LowerRelu6(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * six, ctx.Splat(t, 6.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lo, ctx.b().Binary(Opcode::kMaximum, x, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kMinimum, lo, six));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Cast(x) => convert(x); Truncate only matters for float->narrower float, which convert
// already rounds to nearest-even like TF's default (Truncate=false).
// TF's CPU Cast from a float to an integer is x86's truncating conversion (the kernel spells
// it out in math_kernels.cc): in-range values truncate toward zero; NaN and values outside
// int32 (int64 for 64-bit and uint32 targets) give that type's lowest value, which then
// narrows by wrapping; uint64 converts [0, 2^64) directly. HLO's convert saturates instead
// (HLO.md), so the range check is explicit here and compiled code equals the kernel.
absl::StatusOr<Instruction*> FloatToIntAsTfCpu(hlo::Builder& b, Instruction* x, DType to) {
  if (x->shape().element_type() != DType::kFloat32 &&
      x->shape().element_type() != DType::kFloat64) {
    TFJIT_ASSIGN_OR_RETURN(x, b.Convert(x, DType::kFloat32));  // half types, as the kernel
  }
  const DType f = x->shape().element_type();
  const std::vector<int64_t>& dims = x->shape().dims();
  auto full = [&](Instruction* scalar) { return b.Broadcast(scalar, dims, {}); };
  auto float_const = [&](double v) {
    return full(f == DType::kFloat32 ? b.ScalarConstant<float>(f, static_cast<float>(v))
                                     : b.ScalarConstant<double>(f, v));
  };
  const bool wide = DTypeSize(to) == 8 || to == DType::kUInt32;
  const DType via = wide ? DType::kInt64 : DType::kInt32;
  const double bound = wide ? 9223372036854775808.0 : 2147483648.0;
  auto in_range = [&](double lo, double hi) -> absl::StatusOr<Instruction*> {
    TFJIT_ASSIGN_OR_RETURN(Instruction * l, float_const(lo));
    TFJIT_ASSIGN_OR_RETURN(Instruction * h, float_const(hi));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ge, b.Compare(hlo::ComparisonDirection::kGe, x, l));
    TFJIT_ASSIGN_OR_RETURN(Instruction * lt, b.Compare(hlo::ComparisonDirection::kLt, x, h));
    return b.Binary(hlo::Opcode::kAnd, ge, lt);
  };
  TFJIT_ASSIGN_OR_RETURN(Instruction * ok, in_range(-bound, bound));
  TFJIT_ASSIGN_OR_RETURN(Instruction * truncated, b.Convert(x, via));
  TFJIT_ASSIGN_OR_RETURN(
      Instruction * lowest,
      full(via == DType::kInt64
               ? b.ScalarConstant<int64_t>(via, std::numeric_limits<int64_t>::min())
               : b.ScalarConstant<int32_t>(via, std::numeric_limits<int32_t>::min())));
  TFJIT_ASSIGN_OR_RETURN(Instruction * v, b.Select(ok, truncated, lowest));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, b.Convert(v, to));
  if (to == DType::kUInt64) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * ok_u, in_range(0.0, 18446744073709551616.0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * direct, b.Convert(x, to));
    TFJIT_ASSIGN_OR_RETURN(r, b.Select(ok_u, direct, r));
  }
  return r;
}

absl::Status LowerCast(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(DType to, tf::GetTypeAttr(node, "DstT"));
  Instruction* r = nullptr;
  if (IsFloatingDType(x->shape().element_type()) && IsIntegerDType(to)) {
    TFJIT_ASSIGN_OR_RETURN(r, FloatToIntAsTfCpu(ctx.b(), x, to));
  } else {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(x, to));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Normalises TF reduction axes (scalar or vector, negative allowed) against `rank`.
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
    case ReduceKind::kMax: return Opcode::kMaximum;
    case ReduceKind::kMin: return Opcode::kMinimum;
    case ReduceKind::kProd: return Opcode::kMultiply;
    default: return Opcode::kAdd;
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
  if (axis_v.size() != 1) return InvalidArgument("node %s: dimension must be a scalar",
                                                 node.DebugName());
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
  TFJIT_ASSIGN_OR_RETURN(Instruction * hit,
                         ctx.b().Compare(hlo::ComparisonDirection::kEq, x, mb));
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

// Select(cond, t, e): cond has t's shape, is a scalar, or is a vector choosing rows of t.
absl::Status LowerSelect(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * cond, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * t, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * e, ctx.Input(node, 2));
  const hlo::Shape& ts = t->shape();
  if (ts.dims() != e->shape().dims()) {
    return InvalidArgument("node %s: t and e must have the same shape: t is %s, e is %s",
                           node.DebugName(), ts.ToString(), e->shape().ToString());
  }
  const hlo::Shape& cs = cond->shape();
  if (cs.rank() == 1 && ts.rank() > 1 && cs.dim(0) == ts.dim(0)) {
    TFJIT_ASSIGN_OR_RETURN(cond, ctx.b().Broadcast(cond, ts.dims(), {0}));
  } else if (cs.rank() == 0) {
    TFJIT_ASSIGN_OR_RETURN(cond, ctx.b().Broadcast(cond, ts.dims(), {}));
  } else if (cs.dims() != ts.dims()) {
    return InvalidArgument("node %s: condition must be a scalar, a vector of t's first "
                           "dimension or t's shape: condition is %s, t is %s",
                           node.DebugName(), cs.ToString(), ts.ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(cond, t, e));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// SelectV2(cond, t, e): all three broadcast to their common shape.
absl::Status LowerSelectV2(LoweringContext& ctx, const tf::Node& node) {
  std::vector<Instruction*> xs(3);
  std::vector<int64_t> dims;
  for (int i = 0; i < 3; ++i) {
    TFJIT_ASSIGN_OR_RETURN(xs[static_cast<size_t>(i)], ctx.Input(node, i));
    absl::StatusOr<std::vector<int64_t>> d =
        BroadcastDims(dims, xs[static_cast<size_t>(i)]->shape().dims());
    if (!d.ok()) {
      return InvalidArgument("node %s: %s; condition, t and e must be broadcast-compatible",
                             node.DebugName(), d.status().message());
    }
    dims = *d;
  }
  for (Instruction*& x : xs) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.BroadcastTo(x, dims));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(xs[0], xs[1], xs[2]));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// AddN(xs) => ((x0 + x1) + x2) + ...; all inputs have one shape.
absl::Status LowerAddN(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum, ctx.Input(node, 0));
  for (int i = 1; i < node.num_inputs(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    if (x->shape().dims() != sum->shape().dims()) {
      return InvalidArgument("node %s: Inputs to operation AddN must have the same size and "
                             "shape. Input 0: %s != input %d: %s",
                             node.DebugName(), sum->shape().ToString(), i,
                             x->shape().ToString());
    }
    TFJIT_ASSIGN_OR_RETURN(sum, ctx.b().Binary(Opcode::kAdd, sum, x));
  }
  ctx.SetOutput(node, 0, sum);
  return absl::OkStatus();
}

// ClipByValue(t, lo, hi) => max(min(t, hi), lo); lo and hi are scalars or t's shape.
absl::Status LowerClipByValue(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * t, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lo, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hi, ctx.Input(node, 2));
  const std::vector<int64_t>& dims = t->shape().dims();
  for (Instruction** bound : {&lo, &hi}) {
    const hlo::Shape& bs = (*bound)->shape();
    if (bs.rank() != 0 && bs.dims() != dims) {
      return InvalidArgument("node %s: clip_value_min and clip_value_max must be scalars or "
                             "have t's shape %s, got %s",
                             node.DebugName(), t->shape().ToString(), bs.ToString());
    }
    TFJIT_ASSIGN_OR_RETURN(*bound, ctx.BroadcastTo(*bound, dims));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kMinimum, t, hi));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Binary(Opcode::kMaximum, r, lo));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- TopKV2 ----

// The custom-call tfjit.top_k (core/top_k.h, the fallback kernel's routine) on a compile-time
// k; TF's checks and messages. Indices come back s32 and are widened for index_type int64.
absl::Status LowerTopKV2(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction* x, ctx.Input(node, 0));
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
    return Unimplemented("node %s: top-k rows of %d columns are too long to compile (at most "
                         "2^31 - 1)", node.DebugName(), n);
  }
  TFJIT_ASSIGN_OR_RETURN(DType index_type, tf::GetTypeAttr(node, "index_type"));
  if (index_type != DType::kInt32 && index_type != DType::kInt64) {
    return InvalidArgument("node %s: index_type must be int32 or int64, got %s",
                           node.DebugName(), DTypeName(index_type));
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

}  // namespace

absl::StatusOr<std::vector<int64_t>> ReductionAxes(LoweringContext& ctx, const tf::Node& node,
                                                   int rank) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.ConstantInputAsInts(node, 1));
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) {
      return InvalidArgument("Invalid reduction dimension (%d for input with %d dimension(s)); "
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


void AppendMathLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
      {"TopKV2", LowerTopKV2},
      {"Add", LowerAdd},         {"AddV2", LowerAdd},         {"Sub", LowerSub},
      {"Mul", LowerMul},         {"RealDiv", LowerRealDiv, true},
      {"Maximum", LowerMaximum}, {"Minimum", LowerMinimum},   {"Neg", LowerNeg},
      {"Abs", LowerAbs},         {"Exp", LowerExp, true},     {"Log", LowerLog, true},
      {"Tanh", LowerTanh, true}, {"Sigmoid", LowerSigmoid, true},
      {"Sqrt", LowerSqrt, true}, {"Rsqrt", LowerRsqrt, true}, {"Square", LowerSquare},
      {"Relu", LowerRelu},       {"Relu6", LowerRelu6},       {"Cast", LowerCast},
      {"Sum", LowerSum},         {"Mean", LowerMean},         {"Max", LowerMax},
      {"Min", LowerMin},         {"Prod", LowerProd},
      {"All", LowerAll},         {"Any", LowerAny},
      {"ArgMax", LowerArgMax},   {"ArgMin", LowerArgMin},
      {"Select", LowerSelect},   {"SelectV2", LowerSelectV2},
      {"AddN", LowerAddN},       {"ClipByValue", LowerClipByValue},
  });
}

}  // namespace tfjit::tf2hlo
