// Element-type tables: names, sizes and TF enum values.
#include "core/dtype.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tfjit {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* tf_name;
  const char* hlo_name;
  size_t size;
  int tf_enum;
};

constexpr std::array<DTypeInfo, 19> kInfos = {{
    {DType::kInvalid, "invalid", "", 0, 0},
    {DType::kBool, "bool", "pred", 1, 10},
    {DType::kInt8, "int8", "s8", 1, 6},
    {DType::kInt16, "int16", "s16", 2, 5},
    {DType::kInt32, "int32", "s32", 4, 3},
    {DType::kInt64, "int64", "s64", 8, 9},
    {DType::kUInt8, "uint8", "u8", 1, 4},
    {DType::kUInt16, "uint16", "u16", 2, 17},
    {DType::kUInt32, "uint32", "u32", 4, 22},
    {DType::kUInt64, "uint64", "u64", 8, 23},
    {DType::kFloat16, "float16", "f16", 2, 19},
    {DType::kBFloat16, "bfloat16", "bf16", 2, 14},
    {DType::kFloat32, "float32", "f32", 4, 1},
    {DType::kFloat64, "float64", "f64", 8, 2},
    {DType::kString, "string", "", 0, 7},
    {DType::kResource, "resource", "", 0, 20},
    {DType::kVariant, "variant", "", 0, 21},
    {DType::kComplex64, "complex64", "", 8, 8},
    {DType::kComplex128, "complex128", "", 16, 18},
}};

const DTypeInfo& Info(DType d) { return kInfos[static_cast<size_t>(d)]; }

}  // namespace

size_t DTypeSize(DType dtype) { return Info(dtype).size; }
const char* DTypeName(DType dtype) { return Info(dtype).tf_name; }
absl::string_view DTypeHloName(DType dtype) { return Info(dtype).hlo_name; }

std::optional<DType> DTypeFromHloName(absl::string_view name) {
  if (name.empty()) return std::nullopt;
  for (const DTypeInfo& info : kInfos) {
    if (name == info.hlo_name) return info.dtype;
  }
  return std::nullopt;
}

std::optional<DType> DTypeFromTfEnum(int tf_enum) {
  if (tf_enum > 100) tf_enum -= 100;  // DT_X_REF = DT_X + 100.
  for (const DTypeInfo& info : kInfos) {
    if (info.tf_enum == tf_enum && info.dtype != DType::kInvalid) return info.dtype;
  }
  return std::nullopt;
}

int DTypeToTfEnum(DType dtype) { return Info(dtype).tf_enum; }

bool IsFloatingDType(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 ||
         d == DType::kFloat64;
}
bool IsSignedIntegerDType(DType d) {
  return d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64;
}
bool IsUnsignedIntegerDType(DType d) {
  return d == DType::kUInt8 || d == DType::kUInt16 || d == DType::kUInt32 || d == DType::kUInt64;
}
bool IsNumericDType(DType d) { return d >= DType::kBool && d <= DType::kFloat64; }

double ElementAsDouble(const Tensor& t, int64_t i) {
  double v = 0;
  DispatchNumeric(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    v = static_cast<double>(t.data<T>()[i]);
  });
  if (t.dtype() == DType::kComplex64) v = t.data<complex64>()[i].real();
  if (t.dtype() == DType::kComplex128) v = t.data<complex128>()[i].real();
  return v;
}

int64_t ElementAsInt64(const Tensor& t, int64_t i) {
  int64_t v = 0;
  DispatchNumeric(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    v = static_cast<int64_t>(t.data<T>()[i]);
  });
  if (t.dtype() == DType::kComplex64) v = static_cast<int64_t>(t.data<complex64>()[i].real());
  if (t.dtype() == DType::kComplex128) v = static_cast<int64_t>(t.data<complex128>()[i].real());
  return v;
}

complex128 ElementAsComplex(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kComplex64) return complex128(t.data<complex64>()[i]);
  if (t.dtype() == DType::kComplex128) return t.data<complex128>()[i];
  return complex128(ElementAsDouble(t, i), 0.0);
}

std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

}  // namespace tfjit
