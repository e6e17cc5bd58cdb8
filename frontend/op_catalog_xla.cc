// Catalog entries of the xla family (docs/DESIGN.md, "Op families"): XLA's own ops as TF's
// tf2xla registers them (tensorflow/compiler/tf2xla/ops/xla_ops.cc), written into graphs by
// jax2tf's graph serialization and the tf2xla Python API. Their dimension numbers are
// serialized XLA protos in string attrs (frontend/xla_dims.h decodes them). The window
// arguments of the convolutions are compile-time constants, as in tf2xla. The string attrs
// dimension_numbers and precision_config are required (no defaults), as in TF.
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddXlaOps(std::vector<OpDef>* ops) {
  // tfjit computes them in real types (complex ones run nowhere yet: the compiler has no
  // complex types and neither op has a kernel for them).
  ops->push_back(Op("XlaDotV2")
                     .In("lhs: LhsT")
                     .In("rhs: RhsT")
                     .Out("output: preferred_element_type")
                     .Types("LhsT", RealTypes())
                     .Types("RhsT", RealTypes())
                     .Types("preferred_element_type", RealTypes())
                     .Build());
  ops->push_back(
      Op("XlaDot").In("lhs: T").In("rhs: T").Out("output: T").Types("T", RealTypes()).Build());
  ops->push_back(Op("XlaConvV2")
                     .In("lhs: LhsT")
                     .In("rhs: RhsT")
                     .In("window_strides: Tindices")
                     .In("padding: Tindices")
                     .In("lhs_dilation: Tindices")
                     .In("rhs_dilation: Tindices")
                     .In("feature_group_count: Tindices")
                     .Out("output: preferred_element_type")
                     .Attr("batch_group_count", I(1))
                     .Types("LhsT", RealTypes())
                     .Types("RhsT", RealTypes())
                     .Types("preferred_element_type", RealTypes())
                     .Types("Tindices", IndexTypes())
                     .Const({2, 3, 4, 5, 6})
                     .Build());
  ops->push_back(Op("XlaConv")
                     .In("lhs: T")
                     .In("rhs: T")
                     .In("window_strides: Tindices")
                     .In("padding: Tindices")
                     .In("lhs_dilation: Tindices")
                     .In("rhs_dilation: Tindices")
                     .In("feature_group_count: Tindices")
                     .Out("output: T")
                     .Types("T", RealTypes())
                     .Types("Tindices", IndexTypes())
                     .Const({2, 3, 4, 5, 6})
                     .Build());
}

}  // namespace tfjit::tf::catalog
