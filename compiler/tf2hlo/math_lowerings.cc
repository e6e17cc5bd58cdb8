// Lowerings of TF's basic elementwise math: arithmetic, Cast, Select/SelectV2, AddN and
// ClipByValue. The reductions are in reduction_lowerings.cc, Relu and Relu6 in nn_lowerings.cc.
#include <cmath>
#include <limits>

#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
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

#define TFJIT_BINARY_LOWERING(Name, opcode)                              \
  absl::Status Lower##Name(LoweringContext& ctx, const tf::Node& node) { \
    return LowerBinary(ctx, node, Opcode::opcode);                       \
  }
#define TFJIT_UNARY_LOWERING(Name, opcode)                               \
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
    return InvalidArgument(
        "node %s: condition must be a scalar, a vector of t's first "
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
      return InvalidArgument(
          "node %s: Inputs to operation AddN must have the same size and "
          "shape. Input 0: %s != input %d: %s",
          node.DebugName(), sum->shape().ToString(), i, x->shape().ToString());
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
      return InvalidArgument(
          "node %s: clip_value_min and clip_value_max must be scalars or "
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

}  // namespace

void AppendMathLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
                                  {"Add", LowerAdd},
                                  {"AddV2", LowerAdd},
                                  {"Sub", LowerSub},
                                  {"Mul", LowerMul},
                                  {"RealDiv", LowerRealDiv, true},
                                  {"Maximum", LowerMaximum},
                                  {"Minimum", LowerMinimum},
                                  {"Neg", LowerNeg},
                                  {"Abs", LowerAbs},
                                  {"Exp", LowerExp, true},
                                  {"Log", LowerLog, true},
                                  {"Tanh", LowerTanh, true},
                                  {"Sigmoid", LowerSigmoid, true},
                                  {"Sqrt", LowerSqrt, true},
                                  {"Rsqrt", LowerRsqrt, true},
                                  {"Square", LowerSquare},
                                  {"Cast", LowerCast},
                                  {"Select", LowerSelect},
                                  {"SelectV2", LowerSelectV2},
                                  {"AddN", LowerAddN},
                                  {"ClipByValue", LowerClipByValue},
                              });
}

}  // namespace tfjit::tf2hlo
