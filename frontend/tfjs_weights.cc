// TF.js weight shards (see tfjs_weights.h). The byte layout follows the converter's writer
// (write_weights.py): per group, every weight's bytes in manifest order, no padding, cut into
// shard files; all little-endian. Decoding mirrors tfjs-core's decodeWeight so that the values
// tfjit runs with are the ones TF.js runs with.
#include "frontend/tfjs_weights.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/tensor_proto.h"

namespace tfjit::tf {
namespace {

std::string Where(const tfjs::WeightSpec& spec) {
  return absl::StrCat("weight '", spec.name(), "'");
}

// Host-endian load; tfjit runs on little-endian hosts only, like TF.js's typed arrays.
template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Element count of a manifest shape; INVALID_ARGUMENT for negative dims or overflow.
absl::StatusOr<int64_t> NumElements(const tfjs::WeightSpec& spec) {
  int64_t n = 1;
  for (int64_t d : spec.shape()) {
    if (d < 0) {
      return InvalidArgument("%s has a negative dimension in its manifest shape %s", Where(spec),
                             DimsString(spec.shape()));
    }
  }
  for (int64_t d : spec.shape()) {
    if (d == 0) return 0;
  }
  for (int64_t d : spec.shape()) {
    if (__builtin_mul_overflow(n, d, &n)) {
      return InvalidArgument("%s: manifest shape %s has too many elements", Where(spec),
                             DimsString(spec.shape()));
    }
  }
  return n;
}

// Claims `size` bytes at *offset, or DATA_LOSS naming the weight and where its bytes end.
absl::StatusOr<const char*> Take(const tfjs::WeightSpec& spec, absl::string_view bytes,
                                 size_t* offset, int64_t count, size_t elem_size,
                                 absl::string_view source) {
  const size_t available = bytes.size() - *offset;
  if (static_cast<uint64_t>(count) > available / elem_size) {
    return DataLoss(
        "%s (%s %s) needs %d bytes at byte %d of its group, but %s hold only %d bytes in "
        "all: a shard is truncated or does not belong to this model.json",
        Where(spec), spec.dtype(), DimsString(spec.shape()),
        static_cast<int64_t>(count) * static_cast<int64_t>(elem_size),
        static_cast<int64_t>(*offset), std::string(source), static_cast<int64_t>(bytes.size()));
  }
  const char* p = bytes.data() + *offset;
  *offset += static_cast<size_t>(count) * elem_size;
  return p;
}

// q * scale + min rounded twice, as JS evaluates it. Left alone, the compiler may contract it
// into one FMA (x86-64-v3 has them), which rounds once and changes some weights' last bit.
double Affine(uint32_t q, double scale, double min) {
  volatile double product = static_cast<double>(q) * scale;
  return product + min;
}

// uint8/uint16/float16 storage -> float32 or int32 values (decodeWeight's quantized branch).
absl::Status DecodeQuantized(const tfjs::WeightSpec& spec, absl::string_view bytes, size_t* offset,
                             int64_t n, absl::string_view source, TfjsWeight* out) {
  const tfjs::Quantization& q = spec.quantization();
  const std::string& storage = q.dtype();
  const bool affine = storage == "uint8" || storage == "uint16";
  if (affine) {
    if (!q.has_scale() || !q.has_min()) {
      return InvalidArgument(
          "%s is quantized to %s but its quantization has no 'scale' and "
          "'min'; the manifest is incomplete",
          Where(spec), storage);
    }
    if (spec.dtype() != "float32" && spec.dtype() != "int32") {
      return InvalidArgument("%s: %s quantization supports float32 and int32 weights, not %s",
                             Where(spec), storage, spec.dtype());
    }
  } else if (storage == "float16") {
    if (spec.dtype() != "float32") {
      return InvalidArgument(
          "%s is quantized with float16, which only supports float32 "
          "weights, not %s",
          Where(spec), spec.dtype());
    }
  } else {
    return InvalidArgument(
        "%s has unknown quantization dtype '%s'; TF.js supports uint8, "
        "uint16 and float16",
        Where(spec), storage);
  }
  const size_t elem = storage == "uint8" ? 1 : 2;
  TFJIT_ASSIGN_OR_RETURN(const char* p, Take(spec, bytes, offset, n, elem, source));
  auto quantized = [&](int64_t i) -> uint32_t {
    return elem == 1 ? static_cast<uint8_t>(p[i]) : Load<uint16_t>(p + 2 * i);
  };
  if (storage == "float16") {
    out->f32.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      // half -> float is exact, as TF.js's table-driven decoder is.
      out->f32[static_cast<size_t>(i)] =
          static_cast<float>(Eigen::numext::bit_cast<half>(static_cast<uint16_t>(quantized(i))));
    }
  } else if (spec.dtype() == "float32") {
    // JS computes q * scale + min in double and stores it into a Float32Array.
    out->f32.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      out->f32[static_cast<size_t>(i)] =
          static_cast<float>(Affine(quantized(i), q.scale(), q.min()));
    }
  } else {
    out->i32.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      // Math.round: halves round towards +infinity.
      const double v = std::floor(Affine(quantized(i), q.scale(), q.min()) + 0.5);
      out->i32[static_cast<size_t>(i)] = static_cast<int32_t>(v);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadShard(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("weight shard '%s' does not exist or cannot be opened", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return DataLoss("weight shard '%s' could not be read", path);
  return std::move(buffer).str();
}

}  // namespace

absl::StatusOr<TfjsWeight> DecodeTfjsWeight(const tfjs::WeightSpec& spec, absl::string_view bytes,
                                            size_t* offset, absl::string_view source) {
  TfjsWeight out;
  out.name = spec.name();
  out.dtype = spec.dtype();
  out.shape.assign(spec.shape().begin(), spec.shape().end());
  if (spec.name().empty()) return InvalidArgument("a weight in the manifest has no name");
  TFJIT_ASSIGN_OR_RETURN(const int64_t n, NumElements(spec));
  if (spec.has_quantization()) {
    TFJIT_RETURN_IF_ERROR(DecodeQuantized(spec, bytes, offset, n, source, &out));
    return out;
  }
  const std::string& dtype = spec.dtype();
  if (dtype == "float32" || dtype == "complex64") {
    const int64_t values = dtype == "complex64" ? 2 * n : n;
    TFJIT_ASSIGN_OR_RETURN(const char* p, Take(spec, bytes, offset, values, 4, source));
    out.f32.resize(static_cast<size_t>(values));
    // memcpy's pointers must be valid even for 0 bytes; an empty vector's data() may be null.
    if (values > 0) std::memcpy(out.f32.data(), p, static_cast<size_t>(values) * 4);
  } else if (dtype == "int32") {
    TFJIT_ASSIGN_OR_RETURN(const char* p, Take(spec, bytes, offset, n, 4, source));
    out.i32.resize(static_cast<size_t>(n));
    if (n > 0) std::memcpy(out.i32.data(), p, static_cast<size_t>(n) * 4);
  } else if (dtype == "bool") {
    TFJIT_ASSIGN_OR_RETURN(const char* p, Take(spec, bytes, offset, n, 1, source));
    out.b.assign(p, p + n);
  } else if (dtype == "string") {
    // Each element: uint32 little-endian byte length, then the bytes.
    out.strings.reserve(static_cast<size_t>(std::min<int64_t>(n, 1 << 20)));
    for (int64_t i = 0; i < n; ++i) {
      TFJIT_ASSIGN_OR_RETURN(const char* len_p, Take(spec, bytes, offset, 1, 4, source));
      const uint32_t len = Load<uint32_t>(len_p);
      TFJIT_ASSIGN_OR_RETURN(const char* p, Take(spec, bytes, offset, len, 1, source));
      out.strings.emplace_back(p, len);
    }
  } else {
    return InvalidArgument(
        "%s has dtype '%s'; TF.js weights are float32, int32, bool, string "
        "or complex64",
        Where(spec), dtype);
  }
  return out;
}

absl::StatusOr<std::vector<TfjsWeight>> ReadTfjsWeights(
    const google::protobuf::RepeatedPtrField<tfjs::WeightGroup>& manifest, const std::string& dir,
    const std::string& model) {
  std::vector<TfjsWeight> weights;
  for (int g = 0; g < manifest.size(); ++g) {
    const tfjs::WeightGroup& group = manifest[g];
    std::string stream;
    std::vector<std::string> shard_desc;
    for (int i = 0; i < group.paths_size(); ++i) {
      const std::string& rel = group.paths(i);
      const std::string path =
          !rel.empty() && rel.front() == '/' ? rel : absl::StrCat(dir, "/", rel);
      absl::StatusOr<std::string> bytes = ReadShard(path);
      if (!bytes.ok()) {
        return WithContext(bytes.status(),
                           absl::StrFormat("TF.js model '%s': weightsManifest group %d, shard %d "
                                           "of %d",
                                           model, g, i + 1, group.paths_size()));
      }
      shard_desc.push_back(absl::StrCat("'", path, "' (", bytes->size(), " bytes)"));
      stream += *bytes;
    }
    const std::string source =
        shard_desc.empty()
            ? absl::StrCat("weightsManifest group ", g, ", which lists no shard files,")
            : absl::StrCat("the shards of group ", g, " (", absl::StrJoin(shard_desc, " + "), ")");
    size_t offset = 0;
    for (const tfjs::WeightSpec& spec : group.weights()) {
      absl::StatusOr<TfjsWeight> w = DecodeTfjsWeight(spec, stream, &offset, source);
      if (!w.ok()) return WithContext(w.status(), absl::StrCat("TF.js model '", model, "'"));
      w->group = g;
      weights.push_back(std::move(*w));
    }
  }
  return weights;
}

namespace {

enum class Kind { kFloat, kInt, kBool, kString, kComplex };

Kind KindOf(const std::string& dtype) {
  if (dtype == "float32") return Kind::kFloat;
  if (dtype == "int32") return Kind::kInt;
  if (dtype == "bool") return Kind::kBool;
  if (dtype == "string") return Kind::kString;
  return Kind::kComplex;
}

// Which Const dtypes a weight of this kind can fill (the converter's narrowing, undone).
bool Accepts(Kind kind, tensorflow::DataType target) {
  using tensorflow::DataType;
  switch (kind) {
    case Kind::kFloat:
      return target == DataType::DT_FLOAT || target == DataType::DT_DOUBLE ||
             target == DataType::DT_HALF || target == DataType::DT_BFLOAT16;
    case Kind::kInt:
      return target == DataType::DT_INT32 || target == DataType::DT_INT64 ||
             target == DataType::DT_INT16 || target == DataType::DT_INT8 ||
             target == DataType::DT_UINT8 || target == DataType::DT_UINT16 ||
             target == DataType::DT_UINT32 || target == DataType::DT_UINT64;
    case Kind::kBool:
      return target == DataType::DT_BOOL;
    case Kind::kString:
      return target == DataType::DT_STRING;
    case Kind::kComplex:
      return target == DataType::DT_COMPLEX64 || target == DataType::DT_COMPLEX128;
  }
  return false;
}

tensorflow::DataType NativeType(Kind kind) {
  switch (kind) {
    case Kind::kFloat:
      return tensorflow::DT_FLOAT;
    case Kind::kInt:
      return tensorflow::DT_INT32;
    case Kind::kBool:
      return tensorflow::DT_BOOL;
    case Kind::kString:
      return tensorflow::DT_STRING;
    case Kind::kComplex:
      return tensorflow::DT_COMPLEX64;
  }
  return tensorflow::DT_INVALID;
}

}  // namespace

absl::StatusOr<tensorflow::TensorProto> TfjsWeightToTensorProto(
    const TfjsWeight& weight, tensorflow::DataType target,
    const tensorflow::TensorShapeProto* declared) {
  const Kind kind = KindOf(weight.dtype);
  if (target == tensorflow::DT_INVALID) target = NativeType(kind);
  if (static_cast<int>(target) > 100) target = static_cast<tensorflow::DataType>(target - 100);
  if (!Accepts(kind, target)) {
    return InvalidArgument(
        "weight '%s' is %s in the weightsManifest but its Const node has "
        "dtype %s; the weights do not belong to this graph",
        weight.name, weight.dtype, TfDataTypeName(target));
  }
  if (declared != nullptr) {
    bool unknown_rank = false;
    absl::StatusOr<std::vector<int64_t>> dims = ShapeFromProto(*declared, &unknown_rank);
    if (dims.ok() && !unknown_rank && *dims != weight.shape) {
      return InvalidArgument(
          "weight '%s' has shape %s in the weightsManifest but its Const "
          "node declares %s",
          weight.name, DimsString(weight.shape), DimsString(*dims));
    }
  }
  tensorflow::TensorProto proto;
  proto.set_dtype(target);
  *proto.mutable_tensor_shape() = ShapeToProto(weight.shape);
  switch (kind) {
    case Kind::kString:
      for (const std::string& s : weight.strings) proto.add_string_val(s);
      return proto;
    case Kind::kComplex:
      if (target == tensorflow::DT_COMPLEX64) {
        for (float v : weight.f32) proto.add_scomplex_val(v);
      } else {
        for (float v : weight.f32) proto.add_dcomplex_val(v);
      }
      return proto;
    default:
      break;
  }
  const std::optional<DType> dtype = DTypeFromTfEnum(target);
  if (!dtype.has_value()) {
    return Unimplemented("weight '%s': Const dtype %s is not supported", weight.name,
                         TfDataTypeName(target));
  }
  std::string content;
  DispatchNumeric(*dtype, [&](auto tag) {
    using T = decltype(tag);
    auto fill = [&](const auto& values) {
      content.resize(values.size() * sizeof(T));
      char* out = content.data();
      for (size_t i = 0; i < values.size(); ++i) {
        const T v = static_cast<T>(values[i]);
        std::memcpy(out + i * sizeof(T), &v, sizeof(T));
      }
    };
    if (kind == Kind::kFloat) {
      fill(weight.f32);
    } else if (kind == Kind::kInt) {
      fill(weight.i32);
    } else {
      fill(weight.b);
    }
  });
  proto.set_tensor_content(std::move(content));
  return proto;
}

}  // namespace tfjit::tf
