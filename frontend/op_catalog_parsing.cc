// Catalog entries of the parsing ops (docs/DESIGN.md, "Op families"): TF's arg names, type
// attrs (tensorflow/core/ops/parsing_ops.cc; none has a default). Kernels in
// parsing_kernels.cc; never compiled (their inputs are strings).
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddParsingOps(std::vector<OpDef>* ops) {
  const std::vector<DType> values = {DType::kFloat32, DType::kInt64, DType::kString};
  ops->push_back(Op("ParseExample")
                     .In("serialized: string")
                     .In("names: string")
                     .In("sparse_keys: Nsparse * string")
                     .In("dense_keys: Ndense * string")
                     .In("dense_defaults: [Tdense]")
                     .Out("sparse_indices: Nsparse * int64")
                     .Out("sparse_values: [sparse_types]")
                     .Out("sparse_shapes: Nsparse * int64")
                     .Out("dense_values: [Tdense]")
                     .Types("sparse_types", values)
                     .Types("Tdense", values)
                     .Build());
  ops->push_back(Op("ParseExampleV2")
                     .In("serialized: string")
                     .In("names: string")
                     .In("sparse_keys: string")
                     .In("dense_keys: string")
                     .In("ragged_keys: string")
                     .In("dense_defaults: [Tdense]")
                     .Out("sparse_indices: num_sparse * int64")
                     .Out("sparse_values: [sparse_types]")
                     .Out("sparse_shapes: num_sparse * int64")
                     .Out("dense_values: [Tdense]")
                     .Out("ragged_values: [ragged_value_types]")
                     .Out("ragged_row_splits: [ragged_split_types]")
                     .Types("sparse_types", values)
                     .Types("Tdense", values)
                     .Types("ragged_value_types", values)
                     .Types("ragged_split_types", {DType::kInt32, DType::kInt64})
                     .Build());
}

}  // namespace tfjit::tf::catalog
