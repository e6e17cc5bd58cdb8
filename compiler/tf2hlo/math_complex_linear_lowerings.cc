// The linear ops on complex values (complex_values.h): an op whose result's real
// (imaginary) part is the op applied to the inputs' real (imaginary) parts runs its real
// lowering once per part (LowerComponentwise); Einsum of two operands runs its real
// contraction four times, as the complex MatMul's products.
#include <string>
#include <vector>

#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/complex_values.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::tf2hlo {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// The ops whose result's real (imaginary) part is the op applied to the inputs' real
// (imaginary) parts, with every real input (indices, shapes, axes, conditions) unchanged.
// Data movement, sums and differences qualify; products and anything that fills in a value
// other than 0 (OnesLike, Prod) do not.
// Ops with only real outputs (Shape, Size, Rank, ShapeN, EnsureShape's check) qualify too:
// they read the parts' dims, which are the TF tensor's.
// Scatters and segment sums qualify (their combiner adds or assigns; empty rows hold 0), and
// ops whose fill value is a T input (MatrixDiagV2's padding, OneHot's on/off values,
// SparseToDense's default) take that input's part in each pass.
constexpr const char* kComponentwiseOps[] = {"Add",
                                             "AddN",
                                             "AddV2",
                                             "BatchToSpace",
                                             "BatchToSpaceND",
                                             "BiasAdd",
                                             "BiasAddGrad",
                                             "BiasAddV1",
                                             "BroadcastTo",
                                             "Concat",
                                             "ConcatV2",
                                             "Cumsum",
                                             "DepthToSpace",
                                             "Diag",
                                             "DiagPart",
                                             "DynamicStitch",
                                             "EnsureShape",
                                             "ExpandDims",
                                             "Fill",
                                             "Gather",
                                             "GatherNd",
                                             "GatherV2",
                                             "Identity",
                                             "IdentityN",
                                             "MatrixBandPart",
                                             "MatrixDiag",
                                             "MatrixDiagPart",
                                             "MatrixDiagPartV2",
                                             "MatrixDiagPartV3",
                                             "MatrixDiagV2",
                                             "MatrixDiagV3",
                                             "MatrixSetDiag",
                                             "MatrixSetDiagV2",
                                             "MatrixSetDiagV3",
                                             "Mean",
                                             "MirrorPad",
                                             "MirrorPadGrad",
                                             "Neg",
                                             "OneHot",
                                             "Pack",
                                             "Pad",
                                             "PadV2",
                                             "ParallelDynamicStitch",
                                             "PreventGradient",
                                             "Rank",
                                             "Reshape",
                                             "Reverse",
                                             "ReverseSequence",
                                             "ReverseV2",
                                             "Roll",
                                             "ScatterNd",
                                             "Select",
                                             "SelectV2",
                                             "Shape",
                                             "ShapeN",
                                             "Size",
                                             "Slice",
                                             "Snapshot",
                                             "SpaceToBatch",
                                             "SpaceToBatchND",
                                             "SpaceToDepth",
                                             "SparseToDense",
                                             "Split",
                                             "SplitV",
                                             "Squeeze",
                                             "StopGradient",
                                             "StridedSlice",
                                             "StridedSliceGrad",
                                             "Sub",
                                             "Sum",
                                             "TensorScatterAdd",
                                             "TensorScatterSub",
                                             "TensorScatterUpdate",
                                             "TensorStridedSliceUpdate",
                                             "Tile",
                                             "Transpose",
                                             "UnsortedSegmentSum",
                                             "Unpack",
                                             "ZerosLike"};

// Runs `node`'s real lowering with input i read as inputs[i] (null: its own value) and returns
// the node's outputs.
absl::StatusOr<std::vector<Instruction*>> RealPass(LoweringContext& ctx, const tf::Node& node,
                                                   const OpLowering& real,
                                                   std::vector<Instruction*> inputs) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (const DynamicDim* d = ctx.DynamicOf(node.input(i))) {
      return Unimplemented(
          "node %s: complex values whose size is known only at run time (dim "
          "%d of input %d) do not compile",
          node.DebugName(), d->dim, i);
    }
  }
  ctx.OverrideInputs(node, std::move(inputs));
  const absl::Status status = real.fn(ctx, node);
  ctx.ClearInputOverride();
  TFJIT_RETURN_IF_ERROR(status);
  std::vector<Instruction*> outs;
  for (int o = 0; o < node.num_outputs(); ++o) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * v, ctx.Value(tf::Output{const_cast<tf::Node*>(&node), o}));
    outs.push_back(v);
  }
  return outs;
}

const OpLowering* RealLowering(const tf::Node& node) { return FindOpLowering(node.op()); }

// Einsum: one operand is linear (a transpose, diagonal or sum per part); two are bilinear, so
// the real contraction E runs four times: E(a, b) = E(ar, br) - E(ai, bi) + i (E(ar, bi) +
// E(ai, br)), as the complex MatMul's products.
absl::Status LowerComplexEinsum(LoweringContext& ctx, const tf::Node& node) {
  if (node.num_inputs() != 2) return LowerComponentwise(ctx, node);
  const OpLowering* real = RealLowering(node);
  if (real == nullptr) return Internal("tf2hlo: no real lowering of %s", node.op());
  TFJIT_ASSIGN_OR_RETURN(ComplexParts a, ComplexInput(ctx, node, 0));
  TFJIT_ASSIGN_OR_RETURN(ComplexParts b, ComplexInput(ctx, node, 1));
  auto product = [&](Instruction* x, Instruction* y) -> absl::StatusOr<Instruction*> {
    TFJIT_ASSIGN_OR_RETURN(std::vector<Instruction*> outs, RealPass(ctx, node, *real, {x, y}));
    return outs[0];
  };
  TFJIT_ASSIGN_OR_RETURN(Instruction * rr, product(a.re, b.re));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ii, product(a.im, b.im));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ri, product(a.re, b.im));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ir, product(a.im, b.re));
  ComplexParts r;
  TFJIT_ASSIGN_OR_RETURN(r.re, ctx.b().Binary(Opcode::kSubtract, rr, ii));
  TFJIT_ASSIGN_OR_RETURN(r.im, ctx.b().Binary(Opcode::kAdd, ri, ir));
  return SetComplexOutput(ctx, node, 0, r);
}

}  // namespace

absl::Status LowerComponentwise(LoweringContext& ctx, const tf::Node& node) {
  const OpLowering* real = RealLowering(node);
  if (real == nullptr) return Internal("tf2hlo: no real lowering of %s", node.op());
  const size_t n = static_cast<size_t>(node.num_inputs());
  std::vector<Instruction*> part_inputs[2] = {std::vector<Instruction*>(n, nullptr),
                                              std::vector<Instruction*>(n, nullptr)};
  for (size_t i = 0; i < n; ++i) {
    if (!IsComplexDType(node.input_types()[i])) continue;
    TFJIT_ASSIGN_OR_RETURN(ComplexParts p, ComplexInput(ctx, node, static_cast<int>(i)));
    part_inputs[0][i] = p.re;
    part_inputs[1][i] = p.im;
  }
  // Ops with only real outputs (Shape, Size, Rank, ...) read the dims, which both parts share:
  // one pass is enough.
  bool complex_out = false;
  for (DType t : node.output_types()) complex_out |= IsComplexDType(t);
  std::vector<Instruction*> outs[2];
  for (int part = 0; part < (complex_out ? 2 : 1); ++part) {
    TFJIT_ASSIGN_OR_RETURN(outs[part], RealPass(ctx, node, *real, part_inputs[part]));
  }
  for (int o = 0; o < node.num_outputs(); ++o) {
    const size_t k = static_cast<size_t>(o);
    if (IsComplexDType(node.output_types()[k])) {
      TFJIT_RETURN_IF_ERROR(SetComplexOutput(ctx, node, o, ComplexParts{outs[0][k], outs[1][k]}));
    } else {
      ctx.SetOutput(node, o, outs[0][k]);
    }
  }
  return absl::OkStatus();
}

void AppendComplexLinearLowerings(std::vector<OpLowering>* table) {
  table->push_back({"Einsum", LowerComplexEinsum});
  for (const char* op : kComponentwiseOps) {
    const OpLowering* real = FindOpLowering(op);
    if (real == nullptr) continue;
    OpLowering l = *real;
    l.op = op;
    l.fn = LowerComponentwise;
    l.float_only = false;
    table->push_back(l);
  }
}

}  // namespace tfjit::tf2hlo
