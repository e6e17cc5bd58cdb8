// Catalog entries of the array_more ops (docs/DESIGN.md, "Op families"): TF's arg names, type
// attrs, allowed dtypes and attr defaults (from TF's op registry), compile-time-constant and
// host-memory inputs, statefulness. A few ops here belong to other families (InTopKV2,
// NthElement and CumulativeLogsumexp: reduction; ApproximateEqual: math; ControlTrigger:
// control_flow; Assert: graph) and say so on their entry.
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {
namespace {

using tensorflow::DT_INT32;
using tensorflow::DT_INT64;

void Push(std::vector<OpDef>* ops, Op& op, const char* family = "") {
  OpDef def = op.Build();
  def.family = family;
  ops->push_back(std::move(def));
}

// Data-movement dtypes: every numeric type and bool (TF's list for Reverse, Roll, Bitcast less
// complex and string).
std::vector<DType> MoveTypes() { return PodTypes(); }

std::vector<DType> BitcastTypes() { return NumberTypes(); }

// Reversals, rolls, permutations and sequences: the array ops proper.
void AddShuffleOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("Reverse")
                     .In("tensor: T")
                     .In("dims: bool")
                     .Out("output: T")
                     .Types("T", MoveTypes())
                     .Const({1})
                     .Build());
  ops->push_back(Op("Roll")
                     .In("input: T")
                     .In("shift: Tshift")
                     .In("axis: Taxis")
                     .Out("output: T")
                     .Types("Tshift", IndexTypes())
                     .Types("Taxis", IndexTypes())
                     .Const({1, 2})
                     .Build());
  ops->push_back(Op("InvertPermutation")
                     .In("x: T")
                     .Out("y: T")
                     .Attr("T", T(DT_INT32))
                     .Types("T", IndexTypes())
                     .Build());
  ops->push_back(Op("LinSpace")
                     .In("start: T")
                     .In("stop: T")
                     .In("num: Tidx")
                     .Out("output: T")
                     .Attr("Tidx", T(DT_INT32))
                     .Types("T", FloatTypes())
                     .Types("Tidx", IndexTypes())
                     .Const({2})
                     .Build());
  ops->push_back(Op("BroadcastArgs")
                     .In("s0: T")
                     .In("s1: T")
                     .Out("r0: T")
                     .Attr("T", T(DT_INT32))
                     .Types("T", IndexTypes())
                     .Const({0, 1})
                     .Build());
  ops->push_back(Op("Bucketize")
                     .In("input: T")
                     .Out("output: int32")
                     .Types("T", {DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64})
                     .Build());
  for (const char* name : {"LowerBound", "UpperBound"}) {
    ops->push_back(Op(name)
                       .In("sorted_inputs: T")
                       .In("values: T")
                       .Out("output: out_type")
                       .Attr("out_type", T(DT_INT32))
                       .Types("out_type", IndexTypes())
                       .Build());
  }
  ops->push_back(Op("Bitcast")
                     .In("input: T")
                     .Out("output: type")
                     .Types("T", BitcastTypes())
                     .Types("type", BitcastTypes())
                     .Build());
  ops->push_back(Op("PopulationCount").In("x: T").Out("y: uint8").Types("T", IntTypes()).Build());
  for (const char* name : {"DataFormatDimMap", "DataFormatVecPermute"}) {
    ops->push_back(Op(name)
                       .In("x: T")
                       .Out("y: T")
                       .Attr("T", T(DT_INT32))
                       .Attr("src_format", S("NHWC"))
                       .Attr("dst_format", S("NCHW"))
                       .Types("T", IndexTypes())
                       .Build());
  }
  ops->push_back(Op("BatchToSpace")
                     .In("input: T")
                     .In("crops: Tidx")
                     .Out("output: T")
                     .Attr("Tidx", T(DT_INT32))
                     .Types("Tidx", IndexTypes())
                     .Const({1})
                     .Build());
  ops->push_back(Op("SpaceToBatch")
                     .In("input: T")
                     .In("paddings: Tpaddings")
                     .Out("output: T")
                     .Attr("Tpaddings", T(DT_INT32))
                     .Types("Tpaddings", IndexTypes())
                     .Const({1})
                     .Build());
  ops->push_back(Op("ReverseSequence")
                     .In("input: T")
                     .In("seq_lengths: Tlen")
                     .Out("output: T")
                     .Attr("batch_dim", I(0))
                     .Attr("Tlen", T(DT_INT64))
                     .Types("Tlen", IndexTypes())
                     .Build());
}

// The ops XLA leaves to TF (kernel only), and the odd ones out of other families.
void AddRuntimeOps(std::vector<OpDef>* ops) {
  ops->push_back(
      Op("AccumulateNV2").In("inputs: N * T").Out("sum: T").Types("T", NumberTypes()).Build());
  ops->push_back(Op("Unique")
                     .In("x: T")
                     .Out("y: T")
                     .Out("idx: out_idx")
                     .Attr("out_idx", T(DT_INT32))
                     .Types("out_idx", IndexTypes())
                     .Build());
  ops->push_back(Op("UniqueWithCounts")
                     .In("x: T")
                     .Out("y: T")
                     .Out("idx: out_idx")
                     .Out("count: out_idx")
                     .Attr("out_idx", T(DT_INT32))
                     .Types("out_idx", IndexTypes())
                     .Build());
  ops->push_back(Op("ListDiff")
                     .In("x: T")
                     .In("y: T")
                     .Out("out: T")
                     .Out("idx: out_idx")
                     .Attr("out_idx", T(DT_INT32))
                     .Types("out_idx", IndexTypes())
                     .Build());
  ops->push_back(Op("Empty")
                     .In("shape: int32")
                     .Out("output: dtype")
                     .Attr("init", B(false))
                     .Stateful()
                     .Build());
  ops->push_back(Op("DeepCopy").In("x: T").Out("y: T").Stateful().Build());
  ops->push_back(Op("ParallelConcat").In("values: N * T").Out("output: T").Build());
  ops->push_back(Op("HistogramFixedWidth")
                     .In("values: T")
                     .In("value_range: T")
                     .In("nbins: int32")
                     .Out("out: dtype")
                     .Attr("dtype", T(DT_INT32))
                     .Types("T", {DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64})
                     .Types("dtype", IndexTypes())
                     .Build());
  ops->push_back(Op("CompareAndBitpack")
                     .In("input: T")
                     .In("threshold: T")
                     .Out("output: uint8")
                     .Types("T", {DType::kBool, DType::kFloat16, DType::kFloat32, DType::kFloat64,
                                  DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64})
                     .Build());
  Op in_top_k = Op("InTopKV2")
                    .In("predictions: float")
                    .In("targets: T")
                    .In("k: T")
                    .Out("precision: bool")
                    .Attr("T", T(DT_INT32))
                    .Types("T", IndexTypes())
                    .Const({2});
  Push(ops, in_top_k, "reduction");
  Op nth = Op("NthElement")
               .In("input: T")
               .In("n: int32")
               .Out("values: T")
               .Attr("reverse", B(false))
               .Types("T", RealTypes());
  Push(ops, nth, "reduction");
  Op logsumexp = Op("CumulativeLogsumexp")
                     .In("x: T")
                     .In("axis: Tidx")
                     .Out("out: T")
                     .Attr("exclusive", B(false))
                     .Attr("reverse", B(false))
                     .Attr("Tidx", T(DT_INT32))
                     .Types("T", {DType::kFloat16, DType::kFloat32, DType::kFloat64})
                     .Types("Tidx", IndexTypes())
                     .Const({1});
  Push(ops, logsumexp, "reduction");
  Op approx = Op("ApproximateEqual")
                  .In("x: T")
                  .In("y: T")
                  .Out("z: bool")
                  .Attr("tolerance", F(1e-5f))
                  .Types("T", NumberTypes());
  Push(ops, approx, "math");
  Op trigger = Op("ControlTrigger");
  Push(ops, trigger, "control_flow");
  Op assert_op =
      Op("Assert").In("condition: bool").In("data: [T]").Attr("summarize", I(3)).Stateful();
  Push(ops, assert_op, "graph");
}

// Fake quantization (TF's array_ops.cc registers them with the array ops).
void AddQuantizeOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("QuantizeAndDequantizeV2")
                     .In("input: T")
                     .In("input_min: T")
                     .In("input_max: T")
                     .Out("output: T")
                     .Attr("signed_input", B(true))
                     .Attr("num_bits", I(8))
                     .Attr("range_given", B(false))
                     .Attr("round_mode", S("HALF_TO_EVEN"))
                     .Attr("narrow_range", B(false))
                     .Attr("axis", I(-1))
                     .Types("T", FloatTypes())
                     .Build());
  ops->push_back(Op("FakeQuantWithMinMaxArgs")
                     .In("inputs: float")
                     .Out("outputs: float")
                     .Attr("min", F(-6.f))
                     .Attr("max", F(6.f))
                     .Attr("num_bits", I(8))
                     .Attr("narrow_range", B(false))
                     .Build());
  ops->push_back(Op("FakeQuantWithMinMaxArgsGradient")
                     .In("gradients: float")
                     .In("inputs: float")
                     .Out("backprops: float")
                     .Attr("min", F(-6.f))
                     .Attr("max", F(6.f))
                     .Attr("num_bits", I(8))
                     .Attr("narrow_range", B(false))
                     .Build());
  for (const char* name : {"FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsPerChannel"}) {
    ops->push_back(Op(name)
                       .In("inputs: float")
                       .In("min: float")
                       .In("max: float")
                       .Out("outputs: float")
                       .Attr("num_bits", I(8))
                       .Attr("narrow_range", B(false))
                       .Build());
  }
  ops->push_back(Op("FakeQuantWithMinMaxVarsGradient")
                     .In("gradients: float")
                     .In("inputs: float")
                     .In("min: float")
                     .In("max: float")
                     .Out("backprops_wrt_input: float")
                     .Out("backprop_wrt_min: float")
                     .Out("backprop_wrt_max: float")
                     .Attr("num_bits", I(8))
                     .Attr("narrow_range", B(false))
                     .Build());
}

}  // namespace

void AddArrayMoreOps(std::vector<OpDef>* ops) {
  AddShuffleOps(ops);
  AddRuntimeOps(ops);
  AddQuantizeOps(ops);
}

}  // namespace tfjit::tf::catalog
