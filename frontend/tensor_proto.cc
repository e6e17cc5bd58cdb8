// TensorProto decoding and encoding (TF's Tensor::FromProto rules) and shape protos.
#include "frontend/tensor_proto.h"

#include "core/string_tensor.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/string_tensor.h"

namespace tfjit::tf {
namespace {

// tensor_content is little-endian; decoding by memcpy is only right on a little-endian host.
static_assert(std::endian::native == std::endian::little, "tfjit assumes a little-endian host");

std::string TypedShapeString(DType dtype, const std::vector<int64_t>& dims) {
  return absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(dims, ","), "]");
}

// Copies `values` (proto field) into `out` as T, padding with the last value (TF's rule).
template <typename T, typename Field>
void FillFromField(const Field& values, int64_t n, T* out) {
  const int64_t in_n = values.size();
  if (in_n == 0) return;  // The buffer is already zero-filled.
  const int64_t copied = std::min(in_n, n);
  for (int64_t i = 0; i < copied; ++i) out[i] = static_cast<T>(values.Get(static_cast<int>(i)));
  for (int64_t i = copied; i < n; ++i) out[i] = out[copied - 1];
}

// half_val holds 16-bit patterns of half or bfloat16 in int32s.
void FillHalfBits(const tensorflow::TensorProto& proto, int64_t n, Tensor* t) {
  auto* out = static_cast<uint16_t*>(t->raw_data());
  FillFromField(proto.half_val(), n, out);
}

// scomplex_val / dcomplex_val hold (re, im) pairs; the count is pairs (an odd trailing value
// is ignored), padded with the last pair like the other fields.
template <typename C, typename Field>
void FillComplexFromField(const Field& values, int64_t n, C* out) {
  using R = typename C::value_type;
  const int64_t in_n = values.size() / 2;
  if (in_n == 0) return;  // The buffer is already zero-filled.
  const int64_t copied = std::min(in_n, n);
  for (int64_t i = 0; i < copied; ++i) {
    out[i] = C(static_cast<R>(values.Get(static_cast<int>(2 * i))),
               static_cast<R>(values.Get(static_cast<int>(2 * i + 1))));
  }
  for (int64_t i = copied; i < n; ++i) out[i] = out[copied - 1];
}

// Fills `t` from the typed *_val field that TF uses for its dtype.
absl::Status FillTypedField(const tensorflow::TensorProto& proto, int64_t n, Tensor* t) {
  switch (t->dtype()) {
    case DType::kFloat32:
      FillFromField(proto.float_val(), n, t->data<float>());
      break;
    case DType::kFloat64:
      FillFromField(proto.double_val(), n, t->data<double>());
      break;
    case DType::kInt32:
      FillFromField(proto.int_val(), n, t->data<int32_t>());
      break;
    case DType::kInt16:
      FillFromField(proto.int_val(), n, t->data<int16_t>());
      break;
    case DType::kInt8:
      FillFromField(proto.int_val(), n, t->data<int8_t>());
      break;
    case DType::kUInt8:
      FillFromField(proto.int_val(), n, t->data<uint8_t>());
      break;
    case DType::kUInt16:
      FillFromField(proto.int_val(), n, t->data<uint16_t>());
      break;
    case DType::kInt64:
      FillFromField(proto.int64_val(), n, t->data<int64_t>());
      break;
    case DType::kUInt32:
      FillFromField(proto.uint32_val(), n, t->data<uint32_t>());
      break;
    case DType::kUInt64:
      FillFromField(proto.uint64_val(), n, t->data<uint64_t>());
      break;
    case DType::kBool:
      FillFromField(proto.bool_val(), n, t->data<bool>());
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      FillHalfBits(proto, n, t);
      break;
    case DType::kComplex64:
      FillComplexFromField(proto.scomplex_val(), n, t->data<complex64>());
      break;
    case DType::kComplex128:
      FillComplexFromField(proto.dcomplex_val(), n, t->data<complex128>());
      break;
    default:
      return Internal("TensorFromProto: no typed field for %s", DTypeName(t->dtype()));
  }
  return absl::OkStatus();
}

absl::Status CopyContent(const std::string& content, int64_t n, Tensor* t) {
  const size_t expected = static_cast<size_t>(n) * DTypeSize(t->dtype());
  if (content.size() != expected) {
    return InvalidArgument("tensor_content has %d bytes, expected %d for %s", content.size(),
                           expected, TypedShapeString(t->dtype(), t->dims()));
  }
  if (t->dtype() == DType::kBool) {
    // Any non-zero byte is true; never store a bool byte other than 0/1.
    bool* out = t->data<bool>();
    for (int64_t i = 0; i < n; ++i) out[i] = content[static_cast<size_t>(i)] != 0;
    return absl::OkStatus();
  }
  if (expected > 0) std::memcpy(t->raw_data(), content.data(), expected);
  return absl::OkStatus();
}

}  // namespace

bool PartialShape::IsFullyDefined() const {
  if (unknown_rank) return false;
  for (int64_t d : dims) {
    if (d < 0) return false;
  }
  return true;
}

std::string PartialShape::ToString() const {
  if (unknown_rank) return "<unknown>";
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    out += dims[i] < 0 ? std::string("?") : absl::StrCat(dims[i]);
  }
  return out + "]";
}

std::string TfDataTypeName(int tf_enum) {
  if (std::optional<DType> d = DTypeFromTfEnum(tf_enum)) {
    return tf_enum > 100 ? absl::StrCat(DTypeName(*d), "_ref") : DTypeName(*d);
  }
  if (!tensorflow::DataType_IsValid(tf_enum)) return absl::StrCat("DataType(", tf_enum, ")");
  std::string name = tensorflow::DataType_Name(static_cast<tensorflow::DataType>(tf_enum));
  if (absl::StartsWith(name, "DT_")) name = name.substr(3);
  return absl::AsciiStrToLower(name);
}

namespace {
std::atomic<int64_t> max_tensor_elements{LoaderLimits{}.max_tensor_elements};
std::atomic<int64_t> max_tensor_bytes{LoaderLimits{}.max_tensor_bytes};
}  // namespace

LoaderLimits GetLoaderLimits() {
  return {max_tensor_elements.load(std::memory_order_relaxed),
          max_tensor_bytes.load(std::memory_order_relaxed)};
}

void SetLoaderLimits(const LoaderLimits& limits) {
  max_tensor_elements.store(limits.max_tensor_elements, std::memory_order_relaxed);
  max_tensor_bytes.store(limits.max_tensor_bytes, std::memory_order_relaxed);
}

absl::StatusOr<int64_t> CheckedNumElements(DType dtype, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : dims) {
    if (d < 0) {
      return InvalidArgument("shape %s has a negative dimension", TypedShapeString(dtype, dims));
    }
    // Keep checking the remaining dims for negatives, but stop multiplying on overflow
    // (a later 0 does not make an overflowing shape valid: TF rejects it too).
    if (!overflow && d != 0 && n > std::numeric_limits<int64_t>::max() / d) overflow = true;
    if (!overflow) n *= d;
  }
  if (overflow) {
    return InvalidArgument("shape %s has more elements than int64 can count",
                           TypedShapeString(dtype, dims));
  }
  const LoaderLimits limits = GetLoaderLimits();
  const int64_t elem = std::max<int64_t>(1, static_cast<int64_t>(DTypeSize(dtype)));
  if (n > limits.max_tensor_elements || n > limits.max_tensor_bytes / elem) {
    return ResourceExhausted(
        "%s has %d elements (%d bytes); tfjit refuses tensors from a file over %d elements or "
        "%d bytes (tf::LoaderLimits)",
        TypedShapeString(dtype, dims), n,
        n > std::numeric_limits<int64_t>::max() / elem ? std::numeric_limits<int64_t>::max()
                                                       : n * elem,
        limits.max_tensor_elements, limits.max_tensor_bytes);
  }
  return n;
}

absl::StatusOr<PartialShape> PartialShapeFromProto(const tensorflow::TensorShapeProto& proto) {
  PartialShape shape;
  if (proto.unknown_rank()) {
    if (proto.dim_size() > 0) {
      return InvalidArgument("shape has unknown_rank set but also %d dims", proto.dim_size());
    }
    shape.unknown_rank = true;
    return shape;
  }
  shape.dims.reserve(static_cast<size_t>(proto.dim_size()));
  for (int i = 0; i < proto.dim_size(); ++i) {
    const int64_t size = proto.dim(i).size();
    if (size < -1) {
      return InvalidArgument("shape dim %d has size %d; sizes must be >= 0, or -1 for unknown", i,
                             size);
    }
    shape.dims.push_back(size);
  }
  return shape;
}

absl::StatusOr<std::vector<int64_t>> ShapeFromProto(const tensorflow::TensorShapeProto& proto,
                                                    bool* unknown_rank) {
  TFJIT_ASSIGN_OR_RETURN(PartialShape shape, PartialShapeFromProto(proto));
  if (unknown_rank != nullptr) {
    *unknown_rank = shape.unknown_rank;
  } else if (shape.unknown_rank) {
    return InvalidArgument("shape has unknown rank where a known rank is required");
  }
  return std::move(shape.dims);
}

tensorflow::TensorShapeProto ShapeToProto(const std::vector<int64_t>& dims) {
  tensorflow::TensorShapeProto proto;
  for (int64_t d : dims) proto.add_dim()->set_size(d);
  return proto;
}

// A DT_STRING constant: one string_val per element, or fewer with the last one repeated (as
// TF fills); strings are bytes and kept as they are. At most 2^24 elements and 1 GiB in all.
absl::StatusOr<Tensor> StringTensorFromProto(const tensorflow::TensorProto& proto,
                                             const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d != 0 && n > (int64_t{1} << 24) / d) {
      return InvalidArgument("a string constant of %s holds more than 2^24 strings",
                             TypedShapeString(DType::kString, dims));
    }
    n *= d;
  }
  const int given = proto.string_val_size();
  if (given > n) {
    return InvalidArgument("string constant has %d string_val entries for %s", given,
                           TypedShapeString(DType::kString, dims));
  }
  if (n > 0 && given == 0) {
    return InvalidArgument("string constant of %s has no string_val entries",
                           TypedShapeString(DType::kString, dims));
  }
  std::vector<std::string> values;
  values.reserve(static_cast<size_t>(n));
  int64_t bytes = 0;
  for (int64_t i = 0; i < n; ++i) {
    values.push_back(proto.string_val(static_cast<int>(std::min<int64_t>(i, given - 1))));
    bytes += static_cast<int64_t>(values.back().size());
    if (bytes > (int64_t{1} << 30)) {
      return InvalidArgument("a string constant of %s holds more than 1 GiB",
                             TypedShapeString(DType::kString, dims));
    }
  }
  return MakeStringTensor(dims, std::move(values));
}

absl::StatusOr<Tensor> TensorFromProto(const tensorflow::TensorProto& proto) {
  const int tf_dtype = static_cast<int>(proto.dtype());
  std::optional<DType> dtype = DTypeFromTfEnum(tf_dtype);
  if (!dtype.has_value() || tf_dtype == 0) {
    if (tf_dtype == 0) return InvalidArgument("tensor has no dtype (DT_INVALID)");
    return Unimplemented("tensors of dtype %s are not supported by tfjit",
                         TfDataTypeName(tf_dtype));
  }
  if (!IsNumericOrComplexDType(*dtype) && *dtype != DType::kString) {
    return Unimplemented("constant tensors of dtype %s are not supported by tfjit",
                         DTypeName(*dtype));
  }
  TFJIT_ASSIGN_OR_RETURN(PartialShape shape, PartialShapeFromProto(proto.tensor_shape()));
  if (!shape.IsFullyDefined()) {
    return InvalidArgument("tensor has shape %s; a constant needs a fully defined shape",
                           shape.ToString());
  }
  if (*dtype == DType::kString) return StringTensorFromProto(proto, shape.dims);
  // Refuse element counts that overflow or cannot be allocated before touching memory.
  TFJIT_ASSIGN_OR_RETURN(const int64_t n, CheckedNumElements(*dtype, shape.dims));
  // tensor_content must hold exactly the tensor's bytes: check before allocating, so a
  // mismatch never costs the declared size.
  if (!proto.tensor_content().empty() &&
      proto.tensor_content().size() != static_cast<size_t>(n) * DTypeSize(*dtype)) {
    return InvalidArgument(
        "tensor_content has %d bytes, expected %d for %s", proto.tensor_content().size(),
        n * static_cast<int64_t>(DTypeSize(*dtype)), TypedShapeString(*dtype, shape.dims));
  }
  Tensor t(*dtype, shape.dims);
  if (!proto.tensor_content().empty()) {
    TFJIT_RETURN_IF_ERROR(CopyContent(proto.tensor_content(), n, &t));
  } else if (n > 0) {
    TFJIT_RETURN_IF_ERROR(FillTypedField(proto, n, &t));
  }
  return t;
}

tensorflow::TensorProto TensorToProto(const Tensor& tensor) {
  tensorflow::TensorProto proto;
  proto.set_dtype(static_cast<tensorflow::DataType>(DTypeToTfEnum(tensor.dtype())));
  *proto.mutable_tensor_shape() = ShapeToProto(tensor.dims());
  if (const std::vector<std::string>* strings = StringValues(tensor)) {
    for (const std::string& s : *strings) proto.add_string_val(s);
  } else if (tensor.byte_size() > 0) {
    proto.set_tensor_content(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
  }
  return proto;
}

}  // namespace tfjit::tf
