// Catalog entries of the random_more ops (docs/DESIGN.md, "Op families"): TF's arg names, type
// attrs, allowed dtypes and attr defaults (from TF's op registry), compile-time-constant and
// host-memory inputs, statefulness.
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddRandomMoreOps(std::vector<OpDef>* ops) {
  const std::vector<DType> full_int = {DType::kInt32, DType::kInt64, DType::kUInt32,
                                       DType::kUInt64};
  // TF's stateless_random_ops{,_v2}.cc.
  ops->push_back(Op("StatelessRandomUniformFullInt")
                     .In("shape: T")
                     .In("seed: Tseed")
                     .Out("output: dtype")
                     .Attr("dtype", T(tensorflow::DT_UINT64))
                     .Attr("T", T(tensorflow::DT_INT32))
                     .Attr("Tseed", T(tensorflow::DT_INT64))
                     .Types("dtype", full_int)
                     .Types("T", IndexTypes())
                     .Types("Tseed", full_int)
                     .Const({0})
                     .Build());
  ops->push_back(Op("StatelessRandomUniformFullIntV2")
                     .In("shape: Tshape")
                     .In("key: uint64")
                     .In("counter: uint64")
                     .In("alg: int32")
                     .Out("output: dtype")
                     .Attr("dtype", T(tensorflow::DT_UINT64))
                     .Attr("Tshape", T(tensorflow::DT_INT32))
                     .Types("dtype", full_int)
                     .Types("Tshape", IndexTypes())
                     .Const({0, 3})
                     .Build());
  ops->push_back(Op("StatelessMultinomial")
                     .In("logits: T")
                     .In("num_samples: int32")
                     .In("seed: Tseed")
                     .Out("output: output_dtype")
                     .Attr("Tseed", T(tensorflow::DT_INT64))
                     .Attr("output_dtype", T(tensorflow::DT_INT64))
                     .Types("T", RealTypes())
                     .Types("Tseed", IndexTypes())
                     .Types("output_dtype", IndexTypes())
                     .Const({1})
                     .Build());
  ops->push_back(Op("StatelessParameterizedTruncatedNormal")
                     .In("shape: S")
                     .In("seed: Tseed")
                     .In("means: dtype")
                     .In("stddevs: dtype")
                     .In("minvals: dtype")
                     .In("maxvals: dtype")
                     .Out("output: dtype")
                     .Attr("Tseed", T(tensorflow::DT_INT64))
                     .Types("S", IndexTypes())
                     .Types("Tseed", IndexTypes())
                     .Types("dtype", {DType::kFloat16, DType::kFloat32, DType::kFloat64})
                     .Const({0})
                     .Build());
  // tf2xla's XlaRngBitGenerator (xla_ops.cc); ops-target.md lists it as RngBitGenerator, so
  // both names are known with the same signature.
  for (const char* name : {"XlaRngBitGenerator", "RngBitGenerator"}) {
    ops->push_back(Op(name)
                       .In("algorithm: int32")
                       .In("initial_state: uint64")
                       .In("shape: Tshape")
                       .Out("output_key: uint64")
                       .Out("output: dtype")
                       .Attr("dtype", T(tensorflow::DT_UINT64))
                       .Attr("Tshape", T(tensorflow::DT_INT32))
                       .Types("dtype", full_int)
                       .Types("Tshape", IndexTypes())
                       .Const({0, 2})
                       .Build());
  }
  // TF's random_ops.cc: stateful, seeded by seed/seed2 like RandomUniform.
  ops->push_back(Op("Multinomial")
                     .In("logits: T")
                     .In("num_samples: int32")
                     .Out("output: output_dtype")
                     .Attr("seed", I(0))
                     .Attr("seed2", I(0))
                     .Attr("output_dtype", T(tensorflow::DT_INT64))
                     .Types("T", RealTypes())
                     .Types("output_dtype", IndexTypes())
                     .Const({1})
                     .Stateful()
                     .Build());
  ops->push_back(Op("RandomShuffle")
                     .In("value: T")
                     .Out("output: T")
                     .Attr("seed", I(0))
                     .Attr("seed2", I(0))
                     .Stateful()
                     .Build());
  ops->push_back(Op("RandomGamma")
                     .In("shape: S")
                     .In("alpha: T")
                     .Out("output: T")
                     .Attr("seed", I(0))
                     .Attr("seed2", I(0))
                     .Types("S", IndexTypes())
                     .Types("T", {DType::kFloat16, DType::kFloat32, DType::kFloat64})
                     .Stateful()
                     .Build());
  const std::vector<DType> poisson = {DType::kFloat16, DType::kFloat32, DType::kFloat64,
                                      DType::kInt32, DType::kInt64};
  ops->push_back(Op("RandomPoissonV2")
                     .In("shape: S")
                     .In("rate: R")
                     .Out("output: dtype")
                     .Attr("seed", I(0))
                     .Attr("seed2", I(0))
                     .Attr("R", T(tensorflow::DT_DOUBLE))
                     .Attr("dtype", T(tensorflow::DT_INT64))
                     .Types("S", IndexTypes())
                     .Types("R", poisson)
                     .Types("dtype", poisson)
                     .Stateful()
                     .Build());
}

}  // namespace tfjit::tf::catalog
