// Catalog entries of the complex math ops (docs/DESIGN.md, "Op families"): TF's arg names,
// type attrs, allowed dtypes and attr defaults (tensorflow/core/ops/math_ops.cc). Kernels in
// math_complex_kernels.cc; compiled with complex values held as real pairs
// (compiler/tf2hlo/complex_values.h, math_complex_lowerings.cc). The complex paths of older ops
// (Add, Cast, Sum, MatMul, ...) need no entry here: those entries do not restrict T.
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddMathComplexOps(std::vector<OpDef>* ops) {
  const std::vector<DType> reals = {DType::kFloat32, DType::kFloat64};
  ops->push_back(Op("Complex")
                     .In("real: T")
                     .In("imag: T")
                     .Out("out: Tout")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Attr("Tout", T(tensorflow::DT_COMPLEX64))
                     .Types("T", reals)
                     .Types("Tout", ComplexTypes())
                     .Build());
  for (const char* name : {"Real", "Imag", "Angle"}) {
    ops->push_back(Op(name)
                       .In("input: T")
                       .Out("output: Tout")
                       .Attr("T", T(tensorflow::DT_COMPLEX64))
                       .Attr("Tout", T(tensorflow::DT_FLOAT))
                       .Types("T", ComplexTypes())
                       .Types("Tout", reals)
                       .Build());
  }
  ops->push_back(Op("ComplexAbs")
                     .In("x: T")
                     .Out("y: Tout")
                     .Attr("T", T(tensorflow::DT_COMPLEX64))
                     .Attr("Tout", T(tensorflow::DT_FLOAT))
                     .Types("T", ComplexTypes())
                     .Types("Tout", reals)
                     .Build());
  // TF also allows variant (a Conj of a TensorList); tfjit has no kernel for that.
  ops->push_back(Op("Conj")
                     .In("input: T")
                     .Out("output: T")
                     .Attr("T", T(tensorflow::DT_COMPLEX64))
                     .Types("T", ComplexTypes())
                     .Build());
}

}  // namespace tfjit::tf::catalog
