// TensorProto <-> Tensor and TensorShapeProto -> dims, with TF's decoding rules
// (shared/docs/formats.md 1.4 and 1.5).
#ifndef TFJIT_FRONTEND_TENSOR_PROTO_H_
#define TFJIT_FRONTEND_TENSOR_PROTO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontend/proto/graph.pb.h"
#include "tfjit/dtype.h"
#include "tfjit/tensor.h"

namespace tfjit::tf {

// A shape as TF graphs state it: dims may be -1 (unknown), or the whole rank may be unknown.
struct PartialShape {
  std::vector<int64_t> dims;
  bool unknown_rank = false;

  bool IsFullyDefined() const;
  // "[2,?,3]", "[]" for a scalar, "<unknown>" for unknown rank.
  std::string ToString() const;
  bool operator==(const PartialShape&) const = default;
};

// Loader limits: the largest tensor a model file may make tfjit allocate (a Const value, a
// restored checkpoint variable). A GraphDef Const can declare any shape with a single value
// that TF pads out, so without a cap a few bytes of file could ask for terabytes. The defaults
// (2^31 elements and 4 GiB per tensor) are above any real model's weights; they are
// process-wide because loading has no session yet (the fuzz targets lower them).
struct LoaderLimits {
  int64_t max_tensor_elements = int64_t{1} << 31;
  int64_t max_tensor_bytes = int64_t{4} << 30;
};
LoaderLimits GetLoaderLimits();
void SetLoaderLimits(const LoaderLimits& limits);

// The element count of `dims` for a tensor of `dtype`, checked before anything is allocated:
// INVALID_ARGUMENT for a negative dim or a product that overflows int64, RESOURCE_EXHAUSTED
// ("float32[1000000,1000000] has 1000000000000 elements (4000000000000 bytes); tfjit refuses
// tensors over ...") above the LoaderLimits.
absl::StatusOr<int64_t> CheckedNumElements(DType dtype, const std::vector<int64_t>& dims);

// Decodes a TensorShapeProto. Unknown dims stay -1; dims below -1 and unknown_rank together
// with dims are INVALID_ARGUMENT.
absl::StatusOr<PartialShape> PartialShapeFromProto(const tensorflow::TensorShapeProto& proto);

// The dims of a shape proto. Unknown dims stay -1. With `unknown_rank` non-null it receives
// the unknown_rank flag (dims then empty); with nullptr an unknown rank is INVALID_ARGUMENT.
absl::StatusOr<std::vector<int64_t>> ShapeFromProto(const tensorflow::TensorShapeProto& proto,
                                                    bool* unknown_rank = nullptr);
tensorflow::TensorShapeProto ShapeToProto(const std::vector<int64_t>& dims);

// Decodes a constant the way TF's Tensor::FromProto does: tensor_content holds exactly
// n * sizeof(element) little-endian bytes; otherwise the typed *_val field is used, and a
// field with fewer than n values is padded with its last value (empty: zeros). Errors:
// INVALID_ARGUMENT for bad sizes/shapes, RESOURCE_EXHAUSTED for shapes over the LoaderLimits
// (checked before allocating), UNIMPLEMENTED for dtypes tfjit cannot hold (string, complex,
// quantized, resource, variant, float8, int4).
absl::StatusOr<Tensor> TensorFromProto(const tensorflow::TensorProto& proto);

// Encodes a numeric tensor in the tensor_content form.
tensorflow::TensorProto TensorToProto(const Tensor& tensor);

// "DT_COMPLEX64" -> "complex64"-style name for any TF DataType value, for messages.
std::string TfDataTypeName(int tf_enum);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_TENSOR_PROTO_H_
