// The built-in op table: TF's real arg names, type attrs and attr defaults (from TF's op
// registry), compile-time-constant inputs (known-issues.md F), host-memory args, statefulness.
#include <initializer_list>
#include <utility>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "frontend/op_catalog.h"
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf {
namespace {

using namespace catalog;  // NOLINT(build/namespaces): the builder vocabulary

void AddUnaryOps(std::vector<OpDef>* ops) {
  for (const char* name :
       {"Abs",    "Acos",  "Asin",  "Atan",      "Ceil",     "Cos",   "Cosh",   "Erf",
        "Erfc",   "Exp",   "Expm1", "Floor",     "Log",      "Log1p", "Neg",    "Reciprocal",
        "Rint",   "Round", "Rsqrt", "Sigmoid",   "Sign",     "Sin",   "Sinh",   "Sqrt",
        "Square", "Tan",   "Tanh",  "ZerosLike", "OnesLike", "Inv",   "Invert", "Digamma",
        "Lgamma", "Acosh", "Asinh", "Atanh"}) {
    ops->push_back(Op(name).In("x: T").Out("y: T").Build());
  }
  for (const char* name : {"IsNan", "IsInf", "IsFinite"}) {
    ops->push_back(Op(name).In("x: T").Out("y: bool").Build());
  }
  ops->push_back(Op("LogicalNot").In("x: bool").Out("y: bool").Build());
  for (const char* name : {"Relu", "Relu6", "Elu", "Selu", "Softplus", "Softsign"}) {
    ops->push_back(Op(name).In("features: T").Out("activations: T").Build());
  }
  ops->push_back(
      Op("LeakyRelu").In("features: T").Out("activations: T").Attr("alpha", F(0.2f)).Build());
  ops->push_back(Op("Softmax").In("logits: T").Out("softmax: T").Build());
  ops->push_back(Op("LogSoftmax").In("logits: T").Out("logsoftmax: T").Build());
  ops->push_back(Op("L2Loss").In("t: T").Out("output: T").Build());
}

void AddBinaryOps(std::vector<OpDef>* ops) {
  for (const char* name : {"Add",
                           "AddV2",
                           "Sub",
                           "Mul",
                           "RealDiv",
                           "Div",
                           "DivNoNan",
                           "Maximum",
                           "Minimum",
                           "Pow",
                           "SquaredDifference",
                           "FloorDiv",
                           "FloorMod",
                           "Mod",
                           "TruncateDiv",
                           "TruncateMod",
                           "Atan2",
                           "BitwiseAnd",
                           "BitwiseOr",
                           "BitwiseXor",
                           "MulNoNan",
                           "Xdivy",
                           "Xlogy",
                           "LeftShift",
                           "RightShift"}) {
    ops->push_back(Op(name).In("x: T").In("y: T").Out("z: T").Build());
  }
  for (const char* name : {"Less", "LessEqual", "Greater", "GreaterEqual"}) {
    ops->push_back(Op(name).In("x: T").In("y: T").Out("z: bool").Build());
  }
  for (const char* name : {"Equal", "NotEqual"}) {
    ops->push_back(Op(name)
                       .In("x: T")
                       .In("y: T")
                       .Out("z: bool")
                       .Attr("incompatible_shape_error", B(true))
                       .Build());
  }
  for (const char* name : {"LogicalAnd", "LogicalOr"}) {
    ops->push_back(Op(name).In("x: bool").In("y: bool").Out("z: bool").Build());
  }
  ops->push_back(Op("AddN").In("inputs: N * T").Out("sum: T").Build());
  ops->push_back(Op("ClipByValue")
                     .In("t: T")
                     .In("clip_value_min: T")
                     .In("clip_value_max: T")
                     .Out("output: T")
                     .Build());
  for (const char* name : {"Select", "SelectV2"}) {
    ops->push_back(Op(name).In("condition: bool").In("t: T").In("e: T").Out("output: T").Build());
  }
  ops->push_back(Op("MatMul")
                     .In("a: T")
                     .In("b: T")
                     .Out("product: T")
                     .Attr("transpose_a", B(false))
                     .Attr("transpose_b", B(false))
                     .Attr("grad_a", B(false))
                     .Attr("grad_b", B(false))
                     .Build());
  for (const char* name : {"BatchMatMul", "BatchMatMulV2"}) {
    ops->push_back(Op(name)
                       .In("x: T")
                       .In("y: T")
                       .Out("output: T")
                       .Attr("adj_x", B(false))
                       .Attr("adj_y", B(false))
                       .Attr("grad_x", B(false))
                       .Attr("grad_y", B(false))
                       .Build());
  }
  ops->push_back(Op("BatchMatMulV3")
                     .In("x: Ta")
                     .In("y: Tb")
                     .Out("output: Tout")
                     .Attr("adj_x", B(false))
                     .Attr("adj_y", B(false))
                     .Attr("grad_x", B(false))
                     .Attr("grad_y", B(false))
                     .Build());
  ops->push_back(Op("Einsum").In("inputs: N * T").Out("output: T").Build());
  ops->push_back(Op("Cast").In("x: SrcT").Out("y: DstT").Attr("Truncate", B(false)).Build());
}

void AddReductionOps(std::vector<OpDef>* ops) {
  for (const char* name : {"Sum", "Mean", "Max", "Min", "Prod", "EuclideanNorm"}) {
    ops->push_back(Op(name)
                       .In("input: T")
                       .In("reduction_indices: Tidx")
                       .Out("output: T")
                       .Attr("keep_dims", B(false))
                       .Attr("Tidx", T(tensorflow::DT_INT32))
                       .Const({1})
                       .Build());
  }
  for (const char* name : {"All", "Any"}) {
    ops->push_back(Op(name)
                       .In("input: bool")
                       .In("reduction_indices: Tidx")
                       .Out("output: bool")
                       .Attr("keep_dims", B(false))
                       .Attr("Tidx", T(tensorflow::DT_INT32))
                       .Const({1})
                       .Build());
  }
  for (const char* name : {"ArgMax", "ArgMin"}) {
    ops->push_back(Op(name)
                       .In("input: T")
                       .In("dimension: Tidx")
                       .Out("output: output_type")
                       .Attr("Tidx", T(tensorflow::DT_INT32))
                       .Attr("output_type", T(tensorflow::DT_INT64))
                       .Const({1})
                       .Build());
  }
  for (const char* name : {"Cumsum", "Cumprod"}) {
    ops->push_back(Op(name)
                       .In("x: T")
                       .In("axis: Tidx")
                       .Out("out: T")
                       .Attr("exclusive", B(false))
                       .Attr("reverse", B(false))
                       .Attr("Tidx", T(tensorflow::DT_INT32))
                       .Const({1})
                       .Build());
  }
  ops->push_back(Op("TopKV2")
                     .In("input: T")
                     .In("k: Tk")
                     .Out("values: T")
                     .Out("indices: index_type")
                     .Attr("sorted", B(true))
                     .Attr("Tk", T(tensorflow::DT_INT32))
                     .Attr("index_type", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
}

void AddShapeOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("Reshape")
                     .In("tensor: T")
                     .In("shape: Tshape")
                     .Out("output: T")
                     .Attr("Tshape", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
  ops->push_back(Op("Transpose")
                     .In("x: T")
                     .In("perm: Tperm")
                     .Out("y: T")
                     .Attr("Tperm", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
  // tf.transpose(conjugate=True), tf.linalg.adjoint: Transpose, then conj for complex T.
  ops->push_back(Op("ConjugateTranspose")
                     .In("x: T")
                     .In("perm: Tperm")
                     .Out("y: T")
                     .Attr("Tperm", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
  ops->push_back(Op("Shape")
                     .In("input: T")
                     .Out("output: out_type")
                     .Attr("out_type", T(tensorflow::DT_INT32))
                     .HostOut({0})
                     .Build());
  ops->push_back(Op("ShapeN")
                     .In("input: N * T")
                     .Out("output: N * out_type")
                     .Attr("out_type", T(tensorflow::DT_INT32))
                     .HostOut({0})
                     .Build());
  ops->push_back(Op("Size")
                     .In("input: T")
                     .Out("output: out_type")
                     .Attr("out_type", T(tensorflow::DT_INT32))
                     .HostOut({0})
                     .Build());
  ops->push_back(Op("Rank").In("input: T").Out("output: int32").HostOut({0}).Build());
  ops->push_back(
      Op("Squeeze").In("input: T").Out("output: T").Attr("squeeze_dims", EmptyList()).Build());
  ops->push_back(Op("ExpandDims")
                     .In("input: T")
                     .In("dim: Tdim")
                     .Out("output: T")
                     .Attr("Tdim", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
  ops->push_back(Op("BroadcastTo")
                     .In("input: T")
                     .In("shape: Tidx")
                     .Out("output: T")
                     .Attr("Tidx", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
  ops->push_back(Op("Fill")
                     .In("dims: index_type")
                     .In("value: T")
                     .Out("output: T")
                     .Attr("index_type", T(tensorflow::DT_INT32))
                     .Const({0})
                     .Build());
  ops->push_back(Op("Range")
                     .In("start: Tidx")
                     .In("limit: Tidx")
                     .In("delta: Tidx")
                     .Out("output: Tidx")
                     .Attr("Tidx", T(tensorflow::DT_INT32))
                     .Const({0, 1, 2})
                     .Build());
  ops->push_back(Op("Tile")
                     .In("input: T")
                     .In("multiples: Tmultiples")
                     .Out("output: T")
                     .Attr("Tmultiples", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
  ops->push_back(Op("Pad")
                     .In("input: T")
                     .In("paddings: Tpaddings")
                     .Out("output: T")
                     .Attr("Tpaddings", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
  ops->push_back(Op("PadV2")
                     .In("input: T")
                     .In("paddings: Tpaddings")
                     .In("constant_values: T")
                     .Out("output: T")
                     .Attr("Tpaddings", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
  ops->push_back(Op("MirrorPad")
                     .In("input: T")
                     .In("paddings: Tpaddings")
                     .Out("output: T")
                     .Attr("Tpaddings", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
  ops->push_back(Op("ReverseV2")
                     .In("tensor: T")
                     .In("axis: Tidx")
                     .Out("output: T")
                     .Attr("Tidx", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
}

void AddSliceOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("ConcatV2")
                     .In("values: N * T")
                     .In("axis: Tidx")
                     .Out("output: T")
                     .Attr("Tidx", T(tensorflow::DT_INT32))
                     .Const({1})
                     .Build());
  ops->push_back(
      Op("Concat").In("concat_dim: int32").In("values: N * T").Out("output: T").Const({0}).Build());
  ops->push_back(Op("Pack").In("values: N * T").Out("output: T").Attr("axis", I(0)).Build());
  ops->push_back(Op("Unpack").In("value: T").Out("output: num * T").Attr("axis", I(0)).Build());
  ops->push_back(Op("Split")
                     .In("split_dim: int32")
                     .In("value: T")
                     .Out("output: num_split * T")
                     .Const({0})
                     .Build());
  ops->push_back(Op("SplitV")
                     .In("value: T")
                     .In("size_splits: Tlen")
                     .In("split_dim: int32")
                     .Out("output: num_split * T")
                     .Attr("Tlen", T(tensorflow::DT_INT64))
                     .Const({1, 2})
                     .Build());
  ops->push_back(Op("Slice")
                     .In("input: T")
                     .In("begin: Index")
                     .In("size: Index")
                     .Out("output: T")
                     .Const({1, 2})
                     .Build());
  ops->push_back(Op("StridedSlice")
                     .In("input: T")
                     .In("begin: Index")
                     .In("end: Index")
                     .In("strides: Index")
                     .Out("output: T")
                     .Attr("begin_mask", I(0))
                     .Attr("end_mask", I(0))
                     .Attr("ellipsis_mask", I(0))
                     .Attr("new_axis_mask", I(0))
                     .Attr("shrink_axis_mask", I(0))
                     .Const({1, 2, 3})
                     .Build());
  // The strided-slice assignments: a tensor's copy (TensorStridedSliceUpdate), a resource
  // variable (ResourceStridedSliceAssign, what `v[1:3].assign(x)` writes) and a TF1 reference
  // (StridedSliceAssign, forwarding the ref).
  for (const char* name :
       {"TensorStridedSliceUpdate", "ResourceStridedSliceAssign", "StridedSliceAssign"}) {
    const std::string op = name;
    Op def(name);
    def.In(op == "TensorStridedSliceUpdate" ? "input: T"
           : op == "StridedSliceAssign"     ? "ref: T"
                                            : "ref: resource");
    def.In("begin: Index").In("end: Index").In("strides: Index").In("value: T");
    if (op == "TensorStridedSliceUpdate") def.Out("output: T");
    if (op == "StridedSliceAssign") def.Out("output_ref: T");
    def.Attr("begin_mask", I(0))
        .Attr("end_mask", I(0))
        .Attr("ellipsis_mask", I(0))
        .Attr("new_axis_mask", I(0))
        .Attr("shrink_axis_mask", I(0))
        .Const({1, 2, 3});
    if (op != "TensorStridedSliceUpdate") def.Stateful();
    ops->push_back(def.Build());
  }
  ops->push_back(Op("GatherV2")
                     .In("params: Tparams")
                     .In("indices: Tindices")
                     .In("axis: Taxis")
                     .Out("output: Tparams")
                     .Attr("batch_dims", I(0))
                     .Const({2})
                     .Build());
  ops->push_back(Op("Gather")
                     .In("params: Tparams")
                     .In("indices: Tindices")
                     .Out("output: Tparams")
                     .Attr("validate_indices", B(true))
                     .Build());
  ops->push_back(Op("OneHot")
                     .In("indices: TI")
                     .In("depth: int32")
                     .In("on_value: T")
                     .In("off_value: T")
                     .Out("output: T")
                     .Attr("axis", I(-1))
                     .Attr("TI", T(tensorflow::DT_INT64))
                     .Const({1})
                     .Build());
  ops->push_back(
      Op("Where").In("input: T").Out("index: int64").Attr("T", T(tensorflow::DT_BOOL)).Build());
}

void AddNnOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("BiasAdd")
                     .In("value: T")
                     .In("bias: T")
                     .Out("output: T")
                     .Attr("data_format", S("NHWC"))
                     .Build());
  // The deprecated form: no data_format (always NHWC-style, bias on the last dim).
  ops->push_back(Op("BiasAddV1").In("value: T").In("bias: T").Out("output: T").Build());
  ops->push_back(Op("Conv2D")
                     .In("input: T")
                     .In("filter: T")
                     .Out("output: T")
                     .Attr("use_cudnn_on_gpu", B(true))
                     .Attr("explicit_paddings", EmptyList())
                     .Attr("data_format", S("NHWC"))
                     .Attr("dilations", IntList({1, 1, 1, 1}))
                     .Build());
  ops->push_back(Op("DepthwiseConv2dNative")
                     .In("input: T")
                     .In("filter: T")
                     .Out("output: T")
                     .Attr("explicit_paddings", EmptyList())
                     .Attr("data_format", S("NHWC"))
                     .Attr("dilations", IntList({1, 1, 1, 1}))
                     .Build());
  // Transposed convolution; input_sizes (the forward input's shape) fixes the output shape.
  ops->push_back(Op("Conv2DBackpropInput")
                     .In("input_sizes: int32")
                     .In("filter: T")
                     .In("out_backprop: T")
                     .Out("output: T")
                     .Attr("use_cudnn_on_gpu", B(true))
                     .Attr("explicit_paddings", EmptyList())
                     .Attr("data_format", S("NHWC"))
                     .Attr("dilations", IntList({1, 1, 1, 1}))
                     .Const({0})
                     .Build());
  // Grappler's and the tfjs converter's fused contractions (formats.md 3.5): the contraction,
  // then `fused_ops` applied in order with `args` (bias, prelu alpha, batch-norm stats).
  // Newer TF adds host_args (num_host_args, 0 for float graphs).
  for (const char* name : {"_FusedConv2D", "FusedDepthwiseConv2dNative"}) {
    ops->push_back(Op(name)
                       .In("input: T")
                       .In("filter: T")
                       .In("args: num_args * T")
                       .In("host_args: num_host_args * float")
                       .Out("output: T")
                       .Attr("num_host_args", I(0))
                       .Attr("explicit_paddings", EmptyList())
                       .Attr("data_format", S("NHWC"))
                       .Attr("dilations", IntList({1, 1, 1, 1}))
                       .Attr("use_cudnn_on_gpu", B(true))
                       .Attr("fused_ops", EmptyList())
                       .Attr("epsilon", F(0.0001f))
                       .Attr("leakyrelu_alpha", F(0.2f))
                       .Build());
  }
  ops->push_back(Op("_FusedMatMul")
                     .In("a: T")
                     .In("b: T")
                     .In("args: num_args * T")
                     .Out("product: T")
                     .Attr("transpose_a", B(false))
                     .Attr("transpose_b", B(false))
                     .Attr("fused_ops", EmptyList())
                     .Attr("epsilon", F(0.0001f))
                     .Attr("leakyrelu_alpha", F(0.2f))
                     .Build());
  // tfjs-only: y = x >= 0 ? x : alpha * x; the converter writes no T attr.
  ops->push_back(
      Op("Prelu").In("x: T").In("alpha: T").Out("y: T").Attr("T", T(tensorflow::DT_FLOAT)).Build());
  ops->push_back(Op("MaxPool")
                     .In("input: T")
                     .Out("output: T")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Attr("explicit_paddings", EmptyList())
                     .Attr("data_format", S("NHWC"))
                     .Build());
  ops->push_back(
      Op("AvgPool").In("value: T").Out("output: T").Attr("data_format", S("NHWC")).Build());
  ops->push_back(Op("FusedBatchNorm")
                     .In("x: T")
                     .In("scale: T")
                     .In("offset: T")
                     .In("mean: T")
                     .In("variance: T")
                     .Out("y: T")
                     .Out("batch_mean: T")
                     .Out("batch_variance: T")
                     .Out("reserve_space_1: T")
                     .Out("reserve_space_2: T")
                     .Attr("epsilon", F(0.0001f))
                     .Attr("exponential_avg_factor", F(1.0f))
                     .Attr("data_format", S("NHWC"))
                     .Attr("is_training", B(true))
                     .Build());
  for (const char* name : {"FusedBatchNormV2", "FusedBatchNormV3"}) {
    Op op = Op(name)
                .In("x: T")
                .In("scale: U")
                .In("offset: U")
                .In("mean: U")
                .In("variance: U")
                .Out("y: T")
                .Out("batch_mean: U")
                .Out("batch_variance: U")
                .Out("reserve_space_1: U")
                .Out("reserve_space_2: U");
    if (name == std::string("FusedBatchNormV3")) op.Out("reserve_space_3: U");
    ops->push_back(op.Attr("epsilon", F(0.0001f))
                       .Attr("exponential_avg_factor", F(1.0f))
                       .Attr("data_format", S("NHWC"))
                       .Attr("is_training", B(true))
                       .Build());
  }
}

// Image, space/batch and index ops of detection and pose models (TF's image_ops.cc,
// array_ops.cc, sparse_ops.cc). Sizes, block shapes and paddings/crops are compile-time
// constants as in TF's XLA kernels. Every NMS form compiles with max_output_size a constant
// (tf2xla's V4 rule): padded to max_output_size with pad_to_max_output_size, else padded to
// min(max_output_size, boxes) with the selection's size carried as a row count.
void AddImageOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("ResizeBilinear")
                     .In("images: T")
                     .In("size: int32")
                     .Out("resized_images: float")
                     .Attr("align_corners", B(false))
                     .Attr("half_pixel_centers", B(false))
                     .Const({1})
                     .Build());
  for (const char* name : {"DepthToSpace", "SpaceToDepth"}) {
    ops->push_back(Op(name).In("input: T").Out("output: T").Attr("data_format", S("NHWC")).Build());
  }
  ops->push_back(Op("SpaceToBatchND")
                     .In("input: T")
                     .In("block_shape: Tblock_shape")
                     .In("paddings: Tpaddings")
                     .Out("output: T")
                     .Attr("Tblock_shape", T(tensorflow::DT_INT32))
                     .Attr("Tpaddings", T(tensorflow::DT_INT32))
                     .Const({1, 2})
                     .Build());
  ops->push_back(Op("BatchToSpaceND")
                     .In("input: T")
                     .In("block_shape: Tblock_shape")
                     .In("crops: Tcrops")
                     .Out("output: T")
                     .Attr("Tblock_shape", T(tensorflow::DT_INT32))
                     .Attr("Tcrops", T(tensorflow::DT_INT32))
                     .Const({1, 2})
                     .Build());
  ops->push_back(
      Op("GatherNd").In("params: Tparams").In("indices: Tindices").Out("output: Tparams").Build());
  ops->push_back(Op("NonMaxSuppressionV2")
                     .In("boxes: T")
                     .In("scores: T")
                     .In("max_output_size: int32")
                     .In("iou_threshold: T_threshold")
                     .Out("selected_indices: int32")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Attr("T_threshold", T(tensorflow::DT_FLOAT))
                     .Const({2})
                     .Build());
  ops->push_back(Op("NonMaxSuppressionV3")
                     .In("boxes: T")
                     .In("scores: T")
                     .In("max_output_size: int32")
                     .In("iou_threshold: T_threshold")
                     .In("score_threshold: T_threshold")
                     .Out("selected_indices: int32")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Attr("T_threshold", T(tensorflow::DT_FLOAT))
                     .Const({2})
                     .Build());
  // The first form: float boxes and scores, iou_threshold an attr (TF's image_ops.cc).
  ops->push_back(Op("NonMaxSuppression")
                     .In("boxes: float")
                     .In("scores: float")
                     .In("max_output_size: int32")
                     .Out("selected_indices: int32")
                     .Attr("iou_threshold", F(0.5f))
                     .Const({2})
                     .Build());
  ops->push_back(Op("NonMaxSuppressionV4")
                     .In("boxes: T")
                     .In("scores: T")
                     .In("max_output_size: int32")
                     .In("iou_threshold: T_threshold")
                     .In("score_threshold: T_threshold")
                     .Out("selected_indices: int32")
                     .Out("valid_outputs: int32")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Attr("T_threshold", T(tensorflow::DT_FLOAT))
                     .Attr("pad_to_max_output_size", B(false))
                     .Const({2})
                     .Build());
  ops->push_back(Op("NonMaxSuppressionV5")
                     .In("boxes: T")
                     .In("scores: T")
                     .In("max_output_size: int32")
                     .In("iou_threshold: T")
                     .In("score_threshold: T")
                     .In("soft_nms_sigma: T")
                     .Out("selected_indices: int32")
                     .Out("selected_scores: T")
                     .Out("valid_outputs: int32")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Attr("pad_to_max_output_size", B(false))
                     .Const({2})
                     .Build());
}

void AddGraphOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("Placeholder").Out("output: dtype").Attr("shape", UnknownRankShape()).Build());
  ops->push_back(Op("PlaceholderWithDefault").In("input: dtype").Out("output: dtype").Build());
  ops->push_back(Op("Const").Out("output: dtype").Build());
  ops->push_back(Op("NoOp").Build());
  for (const char* name : {"Identity", "StopGradient", "Snapshot"}) {
    ops->push_back(Op(name).In("input: T").Out("output: T").Build());
  }
  ops->push_back(
      Op("PreventGradient").In("input: T").Out("output: T").Attr("message", S("")).Build());
  ops->push_back(Op("IdentityN").In("input: [T]").Out("output: [T]").Build());
  // Stateful in TF so that it is never constant-folded away.
  for (const char* name : {"CheckNumerics", "CheckNumericsV2"}) {
    ops->push_back(Op(name).In("tensor: T").Out("output: T").Stateful().Build());
  }
  ops->push_back(Op("_Arg").Out("output: T").Stateful().Build());
  ops->push_back(Op("_Retval").In("input: T").Stateful().Build());
}

void AddControlFlowOps(std::vector<OpDef>* ops) {
  for (const char* name : {"PartitionedCall", "StatefulPartitionedCall"}) {
    Op op = Op(name)
                .In("args: [Tin]")
                .Out("output: [Tout]")
                .Attr("config", S(""))
                .Attr("config_proto", S(""))
                .Attr("executor_type", S(""));
    if (name == std::string("StatefulPartitionedCall")) op.Stateful();
    ops->push_back(op.Build());
  }
  for (const char* name : {"While", "StatelessWhile"}) {
    Op op = Op(name)
                .In("input: [T]")
                .Out("output: [T]")
                .Attr("output_shapes", EmptyList())
                .Attr("parallel_iterations", I(10));
    if (name == std::string("While")) op.Stateful();
    ops->push_back(op.Build());
  }
  for (const char* name : {"If", "StatelessIf"}) {
    Op op = Op(name)
                .In("cond: Tcond")
                .In("input: [Tin]")
                .Out("output: [Tout]")
                .Attr("output_shapes", EmptyList());
    if (name == std::string("If")) op.Stateful();
    ops->push_back(op.Build());
  }
  // TF1 control flow: known so that a loop is reported as such (a cycle), not as unknown ops.
  ops->push_back(Op("Enter")
                     .In("data: T")
                     .Out("output: T")
                     .Attr("is_constant", B(false))
                     .Attr("parallel_iterations", I(10))
                     .Build());
  ops->push_back(Op("Exit").In("data: T").Out("output: T").Build());
  ops->push_back(Op("NextIteration").In("data: T").Out("output: T").Build());
  ops->push_back(
      Op("Merge").In("inputs: N * T").Out("output: T").Out("value_index: int32").Build());
  ops->push_back(Op("Switch")
                     .In("data: T")
                     .In("pred: bool")
                     .Out("output_false: T")
                     .Out("output_true: T")
                     .Build());
  ops->push_back(Op("LoopCond").In("input: bool").Out("output: bool").Build());
}

void AddStatefulOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("VarHandleOp")
                     .Out("resource: resource")
                     .Attr("container", S(""))
                     .Attr("shared_name", S(""))
                     .Attr("allowed_devices", EmptyList())
                     .Stateful()
                     .Build());
  ops->push_back(
      Op("ReadVariableOp").In("resource: resource").Out("value: dtype").Stateful().Build());
  for (const char* name : {"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"}) {
    Op op = Op(name).In("resource: resource").In("value: dtype").Stateful();
    if (name == std::string("AssignVariableOp")) op.Attr("validate_shape", B(false));
    ops->push_back(op.Build());
  }
  ops->push_back(Op("VarIsInitializedOp")
                     .In("resource: resource")
                     .Out("is_initialized: bool")
                     .Stateful()
                     .HostOut({0})
                     .Build());
  ops->push_back(Op("DestroyResourceOp")
                     .In("resource: resource")
                     .Attr("ignore_lookup_error", B(true))
                     .Stateful()
                     .Build());
  // ResourceGather: TF's XLA kernel needs batch_dims and the axis static, not the indices.
  ops->push_back(Op("ResourceGather")
                     .In("resource: resource")
                     .In("indices: Tindices")
                     .Out("output: dtype")
                     .Attr("batch_dims", I(0))
                     .Attr("validate_indices", B(true))
                     .Stateful()
                     .Build());
  ops->push_back(Op("VariableV2")
                     .Out("ref: dtype")
                     .Attr("container", S(""))
                     .Attr("shared_name", S(""))
                     .Stateful()
                     .Build());
  ops->push_back(
      Op("IsVariableInitialized").In("ref: dtype").Out("is_initialized: bool").Stateful().Build());
  for (const char* name : {"AssignAdd", "AssignSub"}) {
    ops->push_back(Op(name)
                       .In("ref: T")
                       .In("value: T")
                       .Out("output_ref: T")
                       .Attr("use_locking", B(false))
                       .Stateful()
                       .Build());
  }
  ops->push_back(Op("Assign")
                     .In("ref: T")
                     .In("value: T")
                     .Out("output_ref: T")
                     .Attr("validate_shape", B(true))
                     .Attr("use_locking", B(true))
                     .Stateful()
                     .Build());
  for (const char* name : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    ops->push_back(Op(name)
                       .In("shape: T")
                       .Out("output: dtype")
                       .Attr("seed", I(0))
                       .Attr("seed2", I(0))
                       .Const({0})
                       .Stateful()
                       .Build());
  }
  ops->push_back(Op("RandomUniformInt")
                     .In("shape: T")
                     .In("minval: Tout")
                     .In("maxval: Tout")
                     .Out("output: Tout")
                     .Attr("seed", I(0))
                     .Attr("seed2", I(0))
                     .Const({0})
                     .Stateful()
                     .Build());
}

// Stateless random ops (TF's stateless_random_ops{,_v2}.cc): v1 take a seed pair, V2 a
// key/counter/alg triple. The shape and alg are compile-time constants as in TF's XLA kernels.
void AddStatelessRandomOps(std::vector<OpDef>* ops) {
  for (const char* name :
       {"StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"}) {
    ops->push_back(Op(name)
                       .In("shape: T")
                       .In("seed: Tseed")
                       .Out("output: dtype")
                       .Attr("dtype", T(tensorflow::DT_FLOAT))
                       .Attr("T", T(tensorflow::DT_INT32))
                       .Attr("Tseed", T(tensorflow::DT_INT64))
                       .Const({0})
                       .Build());
  }
  ops->push_back(Op("StatelessRandomUniformInt")
                     .In("shape: T")
                     .In("seed: Tseed")
                     .In("minval: dtype")
                     .In("maxval: dtype")
                     .Out("output: dtype")
                     .Attr("Tseed", T(tensorflow::DT_INT64))
                     .Const({0})
                     .Build());
  for (const char* name :
       {"StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"}) {
    ops->push_back(Op(name)
                       .In("shape: Tshape")
                       .In("key: uint64")
                       .In("counter: uint64")
                       .In("alg: int32")
                       .Out("output: dtype")
                       .Attr("dtype", T(tensorflow::DT_FLOAT))
                       .Attr("Tshape", T(tensorflow::DT_INT32))
                       .Const({0, 3})
                       .Build());
  }
  ops->push_back(Op("StatelessRandomUniformIntV2")
                     .In("shape: Tshape")
                     .In("key: uint64")
                     .In("counter: uint64")
                     .In("alg: int32")
                     .In("minval: dtype")
                     .In("maxval: dtype")
                     .Out("output: dtype")
                     .Attr("Tshape", T(tensorflow::DT_INT32))
                     .Const({0, 3})
                     .Build());
  ops->push_back(Op("StatelessRandomGetKeyCounter")
                     .In("seed: Tseed")
                     .Out("key: uint64")
                     .Out("counter: uint64")
                     .Attr("Tseed", T(tensorflow::DT_INT64))
                     .HostOut({0, 1})
                     .Build());
  ops->push_back(Op("StatelessRandomGetKeyCounterAlg")
                     .In("seed: Tseed")
                     .Out("key: uint64")
                     .Out("counter: uint64")
                     .Out("alg: int32")
                     .Attr("Tseed", T(tensorflow::DT_INT64))
                     .HostOut({0, 1, 2})
                     .Build());
  ops->push_back(Op("StatelessRandomGetAlg").Out("alg: int32").HostOut({0}).Build());
}

// TensorList ops (TF's list_ops.cc). Lists are variant scalars. The sizes and element shapes of
// the constructors are compile-time constants, as TF's XLA kernels require (known issues C, F).
void AddTensorListOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("EmptyTensorList")
                     .In("element_shape: shape_type")
                     .In("max_num_elements: int32")
                     .Out("handle: variant")
                     .Const({0, 1})
                     .Build());
  ops->push_back(Op("TensorListReserve")
                     .In("element_shape: shape_type")
                     .In("num_elements: int32")
                     .Out("handle: variant")
                     .Const({0, 1})
                     .Build());
  ops->push_back(Op("TensorListFromTensor")
                     .In("tensor: element_dtype")
                     .In("element_shape: shape_type")
                     .Out("output_handle: variant")
                     .Const({1})
                     .Build());
  ops->push_back(
      Op("TensorListLength").In("input_handle: variant").Out("length: int32").HostOut({0}).Build());
  ops->push_back(Op("TensorListElementShape")
                     .In("input_handle: variant")
                     .Out("element_shape: shape_type")
                     .HostOut({0})
                     .Build());
  ops->push_back(Op("TensorListPushBack")
                     .In("input_handle: variant")
                     .In("tensor: element_dtype")
                     .Out("output_handle: variant")
                     .Build());
  ops->push_back(Op("TensorListPopBack")
                     .In("input_handle: variant")
                     .In("element_shape: int32")
                     .Out("output_handle: variant")
                     .Out("tensor: element_dtype")
                     .Build());
  ops->push_back(Op("TensorListGetItem")
                     .In("input_handle: variant")
                     .In("index: int32")
                     .In("element_shape: int32")
                     .Out("item: element_dtype")
                     .Build());
  ops->push_back(Op("TensorListSetItem")
                     .In("input_handle: variant")
                     .In("index: int32")
                     .In("item: element_dtype")
                     .Out("output_handle: variant")
                     .Attr("resize_if_index_out_of_bounds", B(false))
                     .Build());
  ops->push_back(Op("TensorListResize")
                     .In("input_handle: variant")
                     .In("size: int32")
                     .Out("output_handle: variant")
                     .Build());
  ops->push_back(Op("TensorListStack")
                     .In("input_handle: variant")
                     .In("element_shape: int32")
                     .Out("tensor: element_dtype")
                     .Attr("num_elements", I(-1))
                     .Build());
  ops->push_back(Op("TensorListGather")
                     .In("input_handle: variant")
                     .In("indices: int32")
                     .In("element_shape: int32")
                     .Out("values: element_dtype")
                     .Build());
  ops->push_back(Op("TensorListConcat")
                     .In("input_handle: variant")
                     .Out("tensor: element_dtype")
                     .Out("lengths: int64")
                     .Attr("element_shape", UnknownRankShape())
                     .Build());
  ops->push_back(Op("TensorListConcatV2")
                     .In("input_handle: variant")
                     .In("element_shape: shape_type")
                     .In("leading_dims: int64")
                     .Out("tensor: element_dtype")
                     .Out("lengths: int64")
                     .Build());
  ops->push_back(Op("TensorListScatter")
                     .In("tensor: element_dtype")
                     .In("indices: int32")
                     .In("element_shape: shape_type")
                     .Out("output_handle: variant")
                     .Build());
  ops->push_back(Op("TensorListScatterV2")
                     .In("tensor: element_dtype")
                     .In("indices: int32")
                     .In("element_shape: shape_type")
                     .In("num_elements: int32")
                     .Out("output_handle: variant")
                     .Build());
  ops->push_back(Op("TensorListScatterIntoExistingList")
                     .In("input_handle: variant")
                     .In("tensor: element_dtype")
                     .In("indices: int32")
                     .Out("output_handle: variant")
                     .Build());
  ops->push_back(Op("TensorListSplit")
                     .In("tensor: element_dtype")
                     .In("element_shape: shape_type")
                     .In("lengths: int64")
                     .Out("output_handle: variant")
                     .Const({1, 2})
                     .Build());
}

// TF1 TensorArray ops (TF's data_flow_ops.cc, V3): a resource handle plus a float "flow" that
// orders the ops. All are stateful in TF. TensorArrayV3's size is a compile-time constant in
// TF's XLA kernel, as are TensorArraySplitV3's lengths.
void AddTensorArrayOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("TensorArrayV3")
                     .In("size: int32")
                     .Out("handle: resource")
                     .Out("flow: float")
                     .Attr("element_shape", UnknownRankShape())
                     .Attr("dynamic_size", B(false))
                     .Attr("clear_after_read", B(true))
                     .Attr("identical_element_shapes", B(false))
                     .Attr("tensor_array_name", S(""))
                     .Const({0})
                     .Stateful()
                     .Build());
  ops->push_back(Op("TensorArrayWriteV3")
                     .In("handle: resource")
                     .In("index: int32")
                     .In("value: T")
                     .In("flow_in: float")
                     .Out("flow_out: float")
                     .Stateful()
                     .Build());
  ops->push_back(Op("TensorArrayReadV3")
                     .In("handle: resource")
                     .In("index: int32")
                     .In("flow_in: float")
                     .Out("value: dtype")
                     .Stateful()
                     .Build());
  ops->push_back(Op("TensorArrayGatherV3")
                     .In("handle: resource")
                     .In("indices: int32")
                     .In("flow_in: float")
                     .Out("value: dtype")
                     .Attr("element_shape", UnknownRankShape())
                     .Stateful()
                     .Build());
  ops->push_back(Op("TensorArrayScatterV3")
                     .In("handle: resource")
                     .In("indices: int32")
                     .In("value: T")
                     .In("flow_in: float")
                     .Out("flow_out: float")
                     .Stateful()
                     .Build());
  ops->push_back(Op("TensorArrayConcatV3")
                     .In("handle: resource")
                     .In("flow_in: float")
                     .Out("value: dtype")
                     .Out("lengths: int64")
                     .Attr("element_shape_except0", UnknownRankShape())
                     .Stateful()
                     .Build());
  ops->push_back(Op("TensorArraySplitV3")
                     .In("handle: resource")
                     .In("value: T")
                     .In("lengths: int64")
                     .In("flow_in: float")
                     .Out("flow_out: float")
                     .Const({2})
                     .Stateful()
                     .Build());
  ops->push_back(Op("TensorArraySizeV3")
                     .In("handle: resource")
                     .In("flow_in: float")
                     .Out("size: int32")
                     .Stateful()
                     .Build());
  ops->push_back(Op("TensorArrayCloseV3").In("handle: resource").Stateful().Build());
  // The gradient array of a TF1 gradient loop (tf.gradients through a TensorArray).
  ops->push_back(Op("TensorArrayGradV3")
                     .In("handle: resource")
                     .In("flow_in: float")
                     .Out("grad_handle: resource")
                     .Out("flow_out: float")
                     .Attr("source", S(""))
                     .Stateful()
                     .Build());
}

// Ops whose catalog entry sits in a section of this file named for another family.
const std::pair<const char*, const char*> kFamilyOverrides[] = {
    {"Relu", "nn"},
    {"Relu6", "nn"},
    {"Elu", "nn"},
    {"Selu", "nn"},
    {"Softplus", "nn"},
    {"Softsign", "nn"},
    {"LeakyRelu", "nn"},
    {"Softmax", "nn"},
    {"LogSoftmax", "nn"},
    {"L2Loss", "nn"},
    {"Digamma", "special"},
    {"Lgamma", "special"},
    {"Erf", "special"},
    {"Erfc", "special"},
    {"Xlogy", "special"},
    {"Xdivy", "special"},
    {"MatMul", "linalg"},
    {"BatchMatMul", "linalg"},
    {"BatchMatMulV2", "linalg"},
    {"BatchMatMulV3", "linalg"},
    {"Einsum", "linalg"},
    {"TopKV2", "reduction"},
    {"CheckNumerics", "graph"},
    {"CheckNumericsV2", "graph"},
    {"GatherNd", "array"},
    // The stateful random ops sit with the variables (they draw from a per-node state); their
    // family is random's, as the stateless ones'.
    {"RandomUniform", "random"},
    {"RandomStandardNormal", "random"},
    {"TruncatedNormal", "random"},
    {"RandomUniformInt", "random"},
    // A convolution's input gradient, like every backprop (docs/DESIGN.md, "Op families").
    {"Conv2DBackpropInput", "gradients"},
};

}  // namespace

std::vector<OpDef> BuiltinOpDefs() {
  std::vector<OpDef> ops;
  // Each section's ops get its family unless the op names one itself.
  auto add = [&ops](const char* family, void (*section)(std::vector<OpDef>*)) {
    const size_t before = ops.size();
    section(&ops);
    for (size_t i = before; i < ops.size(); ++i) {
      if (ops[i].family.empty()) ops[i].family = family;
    }
  };
  add("graph", AddGraphOps);
  add("math", AddUnaryOps);
  add("math", AddBinaryOps);
  add("reduction", AddReductionOps);
  add("array", AddShapeOps);
  add("array", AddSliceOps);
  add("nn", AddNnOps);
  add("image", AddImageOps);
  add("control_flow", AddControlFlowOps);
  add("state", AddStatefulOps);
  add("random", AddStatelessRandomOps);
  add("state", AddTensorListOps);
  add("state", AddTensorArrayOps);
  // The family files (op_catalog_<family>.cc).
  add("gradients", catalog::AddGradientsOps);
  add("optimizers", catalog::AddOptimizersOps);
  add("linalg", catalog::AddLinalgOps);
  add("scatter_segment", catalog::AddScatterSegmentOps);
  add("array", catalog::AddArrayMoreOps);
  add("special", catalog::AddSpecialOps);
  add("random", catalog::AddRandomMoreOps);
  add("image", catalog::AddImageMoreOps);
  add("nn", catalog::AddNnMoreOps);
  add("state", catalog::AddStateMoreOps);
  add("fft", catalog::AddFftOps);
  add("parsing", catalog::AddParsingOps);
  add("math", catalog::AddMathComplexOps);
  add("xla", catalog::AddXlaOps);
  for (OpDef& op : ops) {
    for (const auto& [name, family] : kFamilyOverrides) {
      if (op.name == name) op.family = family;
    }
  }
  return ops;
}

}  // namespace tfjit::tf
