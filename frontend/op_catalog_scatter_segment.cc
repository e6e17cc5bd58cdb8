// Catalog entries of the scatter_segment ops (docs/DESIGN.md, "Op families"): TF's arg names, type
// attrs, allowed dtypes and attr defaults (from TF's op registry), compile-time-constant and
// host-memory inputs, statefulness.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {
void AddScatterSegmentOps(std::vector<OpDef>* ops) {
  // ScatterNd: `shape` must be a compile-time constant in compiled code (tf2xla).
  ops->push_back(Op("ScatterNd")
                     .In("indices: Tindices")
                     .In("updates: T")
                     .In("shape: Tindices")
                     .Out("output: T")
                     .Attr("bad_indices_policy", S(""))
                     .Types("T", PodTypes())
                     .Types("Tindices", {DType::kInt16, DType::kInt32, DType::kInt64})
                     .Const({2})
                     .Build());
  ops->push_back(
      Op("TensorScatterUpdate")
          .In("tensor: T")
          .In("indices: Tindices")
          .In("updates: T")
          .Out("output: T")
          .Attr("bad_indices_policy", S(""))
          .Types("T", PodTypes())
          .Types("Tindices", {DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt16})
          .Build());
  for (const char* name :
       {"TensorScatterAdd", "TensorScatterSub", "TensorScatterMin", "TensorScatterMax"}) {
    const bool minmax = absl::EndsWith(name, "Min") || absl::EndsWith(name, "Max");
    ops->push_back(Op(name)
                       .In("tensor: T")
                       .In("indices: Tindices")
                       .In("updates: T")
                       .Out("output: T")
                       .Attr("bad_indices_policy", S(""))
                       .Types("T", minmax ? RealTypes() : NumberTypes())
                       .Types("Tindices", IndexTypes())
                       .Build());
  }

  // Resource variables: ResourceScatter{Update,Add,Sub,Mul,Div,Min,Max} and
  // ResourceScatterNd{Update,Add,Sub}.
  for (const char* name :
       {"ResourceScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterMul",
        "ResourceScatterDiv", "ResourceScatterMin", "ResourceScatterMax"}) {
    const bool update = std::string(name) == "ResourceScatterUpdate";
    ops->push_back(Op(name)
                       .In("resource: resource")
                       .In("indices: Tindices")
                       .In("updates: dtype")
                       .Types("dtype", update ? PodTypes() : NumberTypes())
                       .Types("Tindices", IndexTypes())
                       .Stateful()
                       .Build());
  }
  for (const char* name :
       {"ResourceScatterNdUpdate", "ResourceScatterNdAdd", "ResourceScatterNdSub"}) {
    ops->push_back(Op(name)
                       .In("ref: resource")
                       .In("indices: Tindices")
                       .In("updates: T")
                       .Attr("use_locking", B(true))
                       .Attr("bad_indices_policy", S(""))
                       .Types("T", PodTypes())
                       .Types("Tindices", IndexTypes())
                       .Stateful()
                       .Build());
  }

  // TF1 reference variables (input 0 is the VariableV2's ref).
  ops->push_back(Op("ScatterUpdate")
                     .In("ref: T")
                     .In("indices: Tindices")
                     .In("updates: T")
                     .Out("output_ref: T")
                     .Attr("use_locking", B(true))
                     .Types("T", PodTypes())
                     .Types("Tindices", IndexTypes())
                     .Stateful()
                     .Build());
  for (const char* name : {"ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv"}) {
    ops->push_back(Op(name)
                       .In("ref: T")
                       .In("indices: Tindices")
                       .In("updates: T")
                       .Out("output_ref: T")
                       .Attr("use_locking", B(false))
                       .Types("T", NumberTypes())
                       .Types("Tindices", IndexTypes())
                       .Stateful()
                       .Build());
  }
  for (const char* name : {"ScatterMin", "ScatterMax"}) {
    ops->push_back(Op(name)
                       .In("ref: T")
                       .In("indices: Tindices")
                       .In("updates: T")
                       .Out("output_ref: T")
                       .Attr("use_locking", B(false))
                       .Types("T", {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                    DType::kFloat64, DType::kInt32, DType::kInt64})
                       .Types("Tindices", IndexTypes())
                       .Stateful()
                       .Build());
  }
  ops->push_back(Op("ScatterNdUpdate")
                     .In("ref: T")
                     .In("indices: Tindices")
                     .In("updates: T")
                     .Out("output_ref: T")
                     .Attr("use_locking", B(true))
                     .Attr("bad_indices_policy", S(""))
                     .Types("T", PodTypes())
                     .Types("Tindices", IndexTypes())
                     .Stateful()
                     .Build());
  for (const char* name : {"ScatterNdAdd", "ScatterNdSub"}) {
    ops->push_back(Op(name)
                       .In("ref: T")
                       .In("indices: Tindices")
                       .In("updates: T")
                       .Out("output_ref: T")
                       .Attr("use_locking", B(false))
                       .Attr("bad_indices_policy", S(""))
                       .Types("T", NumberTypes())
                       .Types("Tindices", IndexTypes())
                       .Stateful()
                       .Build());
  }

  // Sorted segment reductions (kernel only in tfjit, as in TF: tf2xla has none).
  for (const char* name : {"SegmentSum", "SegmentMean", "SegmentProd"}) {
    ops->push_back(Op(name)
                       .In("data: T")
                       .In("segment_ids: Tindices")
                       .Out("output: T")
                       .Types("T", NumberTypes())
                       .Types("Tindices", IndexTypes())
                       .Build());
  }
  for (const char* name : {"SegmentMax", "SegmentMin"}) {
    ops->push_back(Op(name)
                       .In("data: T")
                       .In("segment_ids: Tindices")
                       .Out("output: T")
                       .Types("T", RealTypes())
                       .Types("Tindices", IndexTypes())
                       .Build());
  }
  // Unsorted: num_segments is a compile-time constant in compiled code (tf2xla).
  for (const char* name :
       {"UnsortedSegmentSum", "UnsortedSegmentProd", "UnsortedSegmentMax", "UnsortedSegmentMin"}) {
    const bool minmax = absl::EndsWith(name, "Min") || absl::EndsWith(name, "Max");
    ops->push_back(Op(name)
                       .In("data: T")
                       .In("segment_ids: Tindices")
                       .In("num_segments: Tnumsegments")
                       .Out("output: T")
                       .Attr("Tnumsegments", T(tensorflow::DT_INT32))
                       .Types("T", minmax ? RealTypes() : NumberTypes())
                       .Types("Tindices", {DType::kInt16, DType::kInt32, DType::kInt64})
                       .Types("Tnumsegments", IndexTypes())
                       .Const({2})
                       .Build());
  }

  ops->push_back(Op("DynamicPartition")
                     .In("data: T")
                     .In("partitions: int32")
                     .Out("outputs: num_partitions * T")
                     .Types("T", PodTypes())
                     .Build());
  ops->push_back(Op("Bincount")
                     .In("arr: int32")
                     .In("size: int32")
                     .In("weights: T")
                     .Out("bins: T")
                     .Types("T", {DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64})
                     .Build());
  // The dense tensor of output_shape holding sparse_values at sparse_indices and default_value
  // elsewhere (TF's sparse_ops.cc); output_shape is a compile-time constant when compiled, as
  // in tf2xla.
  ops->push_back(Op("SparseToDense")
                     .In("sparse_indices: Tindices")
                     .In("output_shape: Tindices")
                     .In("sparse_values: T")
                     .In("default_value: T")
                     .Out("dense: T")
                     .Attr("validate_indices", B(true))
                     .Types("T", PodTypes())
                     .Types("Tindices", IndexTypes())
                     .Const({1})
                     .Build());
  // b plus a sparse tensor given by (indices, values, shape) (TF's sparse_ops.cc).
  ops->push_back(Op("SparseTensorDenseAdd")
                     .In("a_indices: Tindices")
                     .In("a_values: T")
                     .In("a_shape: Tindices")
                     .In("b: T")
                     .Out("output: T")
                     .Types("T", NumberTypes())
                     .Types("Tindices", IndexTypes())
                     .Build());
  // The ragged tensor of ranges [starts[i], limits[i]) by deltas[i] (TF's ragged_math_ops):
  // its row splits and flat values. An array op, in this file beside its sparse kin.
  OpDef ragged = Op("RaggedRange")
                     .In("starts: T")
                     .In("limits: T")
                     .In("deltas: T")
                     .Out("rt_nested_splits: Tsplits")
                     .Out("rt_dense_values: T")
                     .Attr("T", T(tensorflow::DT_INT32))
                     .Attr("Tsplits", T(tensorflow::DT_INT64))
                     .Types("T", {DType::kBFloat16, DType::kFloat32, DType::kFloat64, DType::kInt32,
                                  DType::kInt64})
                     .Types("Tsplits", IndexTypes())
                     .Build();
  ragged.family = "array";
  ops->push_back(std::move(ragged));
}

}  // namespace tfjit::tf::catalog
