// Catalog entries of the nn_more ops (docs/DESIGN.md, "Op families"): TF's arg names, type
// attrs, allowed dtypes and attr defaults (from TF's op registry), compile-time-constant and
// host-memory inputs, statefulness.
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddNnMoreOps(std::vector<OpDef>* ops) {
  const std::vector<DType> half_float = {DType::kFloat16, DType::kBFloat16, DType::kFloat32};
  // MaxPool with the window as inputs; tf2xla needs them constant.
  ops->push_back(Op("MaxPoolV2")
                     .In("input: T")
                     .In("ksize: int32")
                     .In("strides: int32")
                     .Out("output: T")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Attr("data_format", S("NHWC"))
                     .Const({1, 2})
                     .Types("T", {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                  DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8,
                                  DType::kInt16, DType::kInt8, DType::kUInt16})
                     .Build());
  ops->push_back(Op("MaxPool3D")
                     .In("input: T")
                     .Out("output: T")
                     .Attr("data_format", S("NDHWC"))
                     .Types("T", half_float)
                     .Build());
  ops->push_back(Op("AvgPool3D")
                     .In("input: T")
                     .Out("output: T")
                     .Attr("data_format", S("NDHWC"))
                     .Types("T", FloatTypes())
                     .Build());
  ops->push_back(Op("Conv3D")
                     .In("input: T")
                     .In("filter: T")
                     .Out("output: T")
                     .Attr("data_format", S("NDHWC"))
                     .Attr("dilations", IntList({1, 1, 1, 1, 1}))
                     .Types("T", FloatTypes())
                     .Build());
  // TF-only (XLA leaves them to TF's kernels).
  ops->push_back(Op("MaxPoolWithArgmax")
                     .In("input: T")
                     .Out("output: T")
                     .Out("argmax: Targmax")
                     .Attr("Targmax", T(tensorflow::DT_INT64))
                     .Attr("include_batch_in_index", B(false))
                     .Types("T", RealTypes())
                     .Types("Targmax", IndexTypes())
                     .Build());
  ops->push_back(Op("Dilation2D")
                     .In("input: T")
                     .In("filter: T")
                     .Out("output: T")
                     .Types("T", RealTypes())
                     .Build());
  ops->push_back(Op("LSTMBlockCell")
                     .In("x: T")
                     .In("cs_prev: T")
                     .In("h_prev: T")
                     .In("w: T")
                     .In("wci: T")
                     .In("wcf: T")
                     .In("wco: T")
                     .In("b: T")
                     .Out("i: T")
                     .Out("cs: T")
                     .Out("f: T")
                     .Out("o: T")
                     .Out("ci: T")
                     .Out("co: T")
                     .Out("h: T")
                     .Attr("forget_bias", F(1.0f))
                     .Attr("cell_clip", F(3.0f))
                     .Attr("use_peephole", B(false))
                     .Types("T", {DType::kFloat16, DType::kFloat32})
                     .Build());
  ops->push_back(Op("BlockLSTM")
                     .In("seq_len_max: int64")
                     .In("x: T")
                     .In("cs_prev: T")
                     .In("h_prev: T")
                     .In("w: T")
                     .In("wci: T")
                     .In("wcf: T")
                     .In("wco: T")
                     .In("b: T")
                     .Out("i: T")
                     .Out("cs: T")
                     .Out("f: T")
                     .Out("o: T")
                     .Out("ci: T")
                     .Out("co: T")
                     .Out("h: T")
                     .Attr("forget_bias", F(1.0f))
                     .Attr("cell_clip", F(3.0f))
                     .Attr("use_peephole", B(false))
                     .Types("T", {DType::kFloat16, DType::kFloat32})
                     .Build());
  ops->push_back(Op("GRUBlockCell")
                     .In("x: T")
                     .In("h_prev: T")
                     .In("w_ru: T")
                     .In("w_c: T")
                     .In("b_ru: T")
                     .In("b_c: T")
                     .Out("r: T")
                     .Out("u: T")
                     .Out("c: T")
                     .Out("h: T")
                     .Types("T", {DType::kFloat32})
                     .Build());
  ops->push_back(Op("LRN")
                     .In("input: T")
                     .Out("output: T")
                     .Attr("depth_radius", I(5))
                     .Attr("bias", F(1.0f))
                     .Attr("alpha", F(1.0f))
                     .Attr("beta", F(0.5f))
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Types("T", half_float)
                     .Build());
}

}  // namespace tfjit::tf::catalog
