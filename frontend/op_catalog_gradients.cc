// Catalog entries of the gradients ops (docs/DESIGN.md, "Op families"): TF's arg names, type
// attrs, allowed dtypes and attr defaults (from TF's op registry), compile-time-constant and
// host-memory inputs, statefulness.
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddGradientsOps(std::vector<OpDef>* ops) {
  // Activation gradients (nn_ops.cc): (gradients, features-or-outputs) -> backprops.
  for (const char* name : {"ReluGrad", "Relu6Grad"}) {
    ops->push_back(Op(name)
                       .In("gradients: T")
                       .In("features: T")
                       .Out("backprops: T")
                       .Types("T", RealTypes())
                       .Build());
  }
  for (const char* name : {"EluGrad", "SeluGrad"}) {
    ops->push_back(Op(name)
                       .In("gradients: T")
                       .In("outputs: T")
                       .Out("backprops: T")
                       .Types("T", FloatTypes())
                       .Build());
  }
  for (const char* name : {"SoftplusGrad", "SoftsignGrad"}) {
    ops->push_back(Op(name)
                       .In("gradients: T")
                       .In("features: T")
                       .Out("backprops: T")
                       .Types("T", FloatTypes())
                       .Build());
  }
  ops->push_back(Op("LeakyReluGrad")
                     .In("gradients: T")
                     .In("features: T")
                     .Out("backprops: T")
                     .Attr("alpha", F(0.2f))
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Types("T", FloatTypes())
                     .Build());
  // Gradients of unary math ops written in terms of their output (math_ops.cc): (y, dy) -> z.
  for (const char* name :
       {"SigmoidGrad", "TanhGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "InvGrad"}) {
    ops->push_back(
        Op(name).In("y: T").In("dy: T").Out("z: T").Types("T", WithComplex(FloatTypes())).Build());
  }

  ops->push_back(Op("BiasAddGrad")
                     .In("out_backprop: T")
                     .Out("output: T")
                     .Attr("data_format", S("NHWC"))
                     .Types("T", NumberTypes())
                     .Build());
  // Shapes in, reduction axes out; tf2xla needs both shapes at compile time.
  ops->push_back(Op("BroadcastGradientArgs")
                     .In("s0: T")
                     .In("s1: T")
                     .Out("r0: T")
                     .Out("r1: T")
                     .Attr("T", T(tensorflow::DT_INT32))
                     .Types("T", IndexTypes())
                     .Const({0, 1})
                     .HostOut({0, 1})
                     .Build());
  ops->push_back(Op("SoftmaxCrossEntropyWithLogits")
                     .In("features: T")
                     .In("labels: T")
                     .Out("loss: T")
                     .Out("backprop: T")
                     .Types("T", FloatTypes())
                     .Build());
  ops->push_back(Op("SparseSoftmaxCrossEntropyWithLogits")
                     .In("features: T")
                     .In("labels: Tlabels")
                     .Out("loss: T")
                     .Out("backprop: T")
                     .Attr("Tlabels", T(tensorflow::DT_INT64))
                     .Types("T", FloatTypes())
                     .Types("Tlabels", IndexTypes())
                     .Build());
  // The indices must be compile-time constants in tf2xla's kernels.
  for (const char* name : {"DynamicStitch", "ParallelDynamicStitch"}) {
    ops->push_back(
        Op(name).In("indices: N * int32").In("data: N * T").Out("merged: T").Const({0}).Build());
  }
  ops->push_back(Op("StridedSliceGrad")
                     .In("shape: Index")
                     .In("begin: Index")
                     .In("end: Index")
                     .In("strides: Index")
                     .In("dy: T")
                     .Out("output: T")
                     .Attr("begin_mask", I(0))
                     .Attr("end_mask", I(0))
                     .Attr("ellipsis_mask", I(0))
                     .Attr("new_axis_mask", I(0))
                     .Attr("shrink_axis_mask", I(0))
                     .Types("Index", IndexTypes())
                     .Const({0, 1, 2, 3})
                     .Build());
  ops->push_back(Op("MirrorPadGrad")
                     .In("input: T")
                     .In("paddings: Tpaddings")
                     .Out("output: T")
                     .Attr("Tpaddings", T(tensorflow::DT_INT32))
                     .Types("Tpaddings", IndexTypes())
                     .Const({1})
                     .Build());
  // Pooling gradients; ksize, strides and padding have no defaults.
  ops->push_back(Op("AvgPoolGrad")
                     .In("orig_input_shape: int32")
                     .In("grad: T")
                     .Out("output: T")
                     .Attr("data_format", S("NHWC"))
                     .Types("T", FloatTypes())
                     .Const({0})
                     .Build());
  ops->push_back(Op("MaxPoolGrad")
                     .In("orig_input: T")
                     .In("orig_output: T")
                     .In("grad: T")
                     .Out("output: T")
                     .Attr("explicit_paddings", EmptyList())
                     .Attr("data_format", S("NHWC"))
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Types("T", RealTypes())
                     .Build());
  ops->push_back(Op("MaxPoolGradV2")
                     .In("orig_input: T")
                     .In("orig_output: T")
                     .In("grad: T")
                     .In("ksize: int32")
                     .In("strides: int32")
                     .Out("output: T")
                     .Attr("data_format", S("NHWC"))
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Types("T", RealTypes())
                     .Const({3, 4})
                     .Build());
  // Batch-norm gradients: reserve_space_1/2 are the mean and variance the forward op used.
  ops->push_back(Op("FusedBatchNormGrad")
                     .In("y_backprop: T")
                     .In("x: T")
                     .In("scale: T")
                     .In("reserve_space_1: T")
                     .In("reserve_space_2: T")
                     .Out("x_backprop: T")
                     .Out("scale_backprop: T")
                     .Out("offset_backprop: T")
                     .Out("reserve_space_3: T")
                     .Out("reserve_space_4: T")
                     .Attr("epsilon", F(0.0001f))
                     .Attr("data_format", S("NHWC"))
                     .Attr("is_training", B(true))
                     .Types("T", {DType::kFloat32})
                     .Build());
  for (const char* name : {"FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
    const bool v3 = name == std::string("FusedBatchNormGradV3");
    Op op = Op(name)
                .In("y_backprop: T")
                .In("x: T")
                .In("scale: float")
                .In("reserve_space_1: U")
                .In("reserve_space_2: U");
    if (v3) op.In("reserve_space_3: U");
    op.Out("x_backprop: T").Out("scale_backprop: U").Out("offset_backprop: U");
    if (v3) {
      op.Out("reserve_space_4: U").Out("reserve_space_5: U");
    } else {
      op.Out("reserve_space_3: U").Out("reserve_space_4: U");
    }
    ops->push_back(op.Attr("epsilon", F(0.0001f))
                       .Attr("data_format", S("NHWC"))
                       .Attr("is_training", B(true))
                       .Types("T", {DType::kFloat16, DType::kBFloat16, DType::kFloat32})
                       .Types("U", {DType::kFloat32})
                       .Build());
  }
  // Convolution backprops; strides and padding have no defaults.
  ops->push_back(Op("Conv2DBackpropFilter")
                     .In("input: T")
                     .In("filter_sizes: int32")
                     .In("out_backprop: T")
                     .Out("output: T")
                     .Attr("use_cudnn_on_gpu", B(true))
                     .Attr("explicit_paddings", EmptyList())
                     .Attr("data_format", S("NHWC"))
                     .Attr("dilations", IntList({1, 1, 1, 1}))
                     .Types("T", FloatTypes())
                     .Const({1})
                     .Build());
  ops->push_back(Op("DepthwiseConv2dNativeBackpropFilter")
                     .In("input: T")
                     .In("filter_sizes: int32")
                     .In("out_backprop: T")
                     .Out("output: T")
                     .Attr("explicit_paddings", EmptyList())
                     .Attr("data_format", S("NHWC"))
                     .Attr("dilations", IntList({1, 1, 1, 1}))
                     .Types("T", FloatTypes())
                     .Const({1})
                     .Build());
  ops->push_back(Op("DepthwiseConv2dNativeBackpropInput")
                     .In("input_sizes: int32")
                     .In("filter: T")
                     .In("out_backprop: T")
                     .Out("output: T")
                     .Attr("explicit_paddings", EmptyList())
                     .Attr("data_format", S("NHWC"))
                     .Attr("dilations", IntList({1, 1, 1, 1}))
                     .Types("T", FloatTypes())
                     .Const({0})
                     .Build());
  // Resize gradients: grads has the resized shape, the output the original one.
  ops->push_back(
      Op("ResizeBilinearGrad")
          .In("grads: float")
          .In("original_image: T")
          .Out("output: T")
          .Attr("align_corners", B(false))
          .Attr("half_pixel_centers", B(false))
          .Types("T", {DType::kFloat32, DType::kBFloat16, DType::kFloat16, DType::kFloat64})
          .Build());
  ops->push_back(Op("ResizeNearestNeighborGrad")
                     .In("grads: T")
                     .In("size: int32")
                     .Out("output: T")
                     .Attr("align_corners", B(false))
                     .Attr("half_pixel_centers", B(false))
                     .Types("T", {DType::kUInt8, DType::kInt8, DType::kInt32, DType::kFloat16,
                                  DType::kFloat32, DType::kFloat64, DType::kBFloat16})
                     .Const({1})
                     .Build());
  // LRN's gradient (nn_ops.cc): the local response normalisation over depth, 4-D.
  ops->push_back(Op("LRNGrad")
                     .In("input_grads: T")
                     .In("input_image: T")
                     .In("output_image: T")
                     .Out("output: T")
                     .Attr("depth_radius", I(5))
                     .Attr("bias", F(1.0f))
                     .Attr("alpha", F(1.0f))
                     .Attr("beta", F(0.5f))
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Types("T", {DType::kFloat16, DType::kBFloat16, DType::kFloat32})
                     .Build());
  // MaxPool's second-order gradient: grad has orig_input's shape, the output orig_output's.
  ops->push_back(Op("MaxPoolGradGrad")
                     .In("orig_input: T")
                     .In("orig_output: T")
                     .In("grad: T")
                     .Out("output: T")
                     .Attr("data_format", S("NHWC"))
                     .Types("T", RealTypes())
                     .Build());
  ops->push_back(Op("MaxPoolGradGradV2")
                     .In("orig_input: T")
                     .In("orig_output: T")
                     .In("grad: T")
                     .In("ksize: int32")
                     .In("strides: int32")
                     .Out("output: T")
                     .Attr("data_format", S("NHWC"))
                     .Types("T", RealTypes())
                     .Const({3, 4})
                     .Build());
  // 3-D pooling and convolution gradients (NDHWC or NCDHW); ksize, strides, padding have no
  // defaults.
  const std::vector<DType> half_float = {DType::kFloat16, DType::kBFloat16, DType::kFloat32};
  ops->push_back(Op("AvgPool3DGrad")
                     .In("orig_input_shape: int32")
                     .In("grad: T")
                     .Out("output: T")
                     .Attr("data_format", S("NDHWC"))
                     .Types("T", FloatTypes())
                     .Const({0})
                     .Build());
  ops->push_back(Op("MaxPool3DGrad")
                     .In("orig_input: TInput")
                     .In("orig_output: TInput")
                     .In("grad: T")
                     .Out("output: T")
                     .Attr("data_format", S("NDHWC"))
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Attr("TInput", T(tensorflow::DT_FLOAT))
                     .Types("T", half_float)
                     .Types("TInput", half_float)
                     .Build());
  ops->push_back(Op("Conv3DBackpropInputV2")
                     .In("input_sizes: Tshape")
                     .In("filter: T")
                     .In("out_backprop: T")
                     .Out("output: T")
                     .Attr("data_format", S("NDHWC"))
                     .Attr("dilations", IntList({1, 1, 1, 1, 1}))
                     .Attr("Tshape", T(tensorflow::DT_INT32))
                     .Types("T", FloatTypes())
                     .Types("Tshape", IndexTypes())
                     .Const({0})
                     .Build());
  ops->push_back(Op("Conv3DBackpropFilterV2")
                     .In("input: T")
                     .In("filter_sizes: int32")
                     .In("out_backprop: T")
                     .Out("output: T")
                     .Attr("data_format", S("NDHWC"))
                     .Attr("dilations", IntList({1, 1, 1, 1, 1}))
                     .Types("T", FloatTypes())
                     .Const({1})
                     .Build());
  // Dilation2D's gradients (TF-only: XLA leaves them to TF's kernels).
  ops->push_back(Op("Dilation2DBackpropInput")
                     .In("input: T")
                     .In("filter: T")
                     .In("out_backprop: T")
                     .Out("in_backprop: T")
                     .Types("T", RealTypes())
                     .Build());
  ops->push_back(Op("Dilation2DBackpropFilter")
                     .In("input: T")
                     .In("filter: T")
                     .In("out_backprop: T")
                     .Out("filter_backprop: T")
                     .Types("T", RealTypes())
                     .Build());
  // ConcatOffset feeds concat gradients but is an array op (family "array").
  OpDef concat_offset = Op("ConcatOffset")
                            .In("concat_dim: int32")
                            .In("shape: N * shape_type")
                            .Out("offset: N * shape_type")
                            .Attr("shape_type", T(tensorflow::DT_INT32))
                            .Types("shape_type", IndexTypes())
                            .Const({0, 1})
                            .HostOut({0})
                            .Build();
  concat_offset.family = "array";
  ops->push_back(std::move(concat_offset));
}

}  // namespace tfjit::tf::catalog
