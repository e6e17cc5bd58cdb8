// Element-type helpers shared by every layer: C++ type traits, HLO names and TF enum values.
#ifndef TFJIT_CORE_DTYPE_H_
#define TFJIT_CORE_DTYPE_H_

#include <cstdint>
#include <optional>
#include "absl/strings/string_view.h"

#include "Eigen/Core"
#include "tfjit/dtype.h"
#include "tfjit/tensor.h"

namespace tfjit {

using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;

// HLO spelling: pred s8 s16 s32 s64 u8 u16 u32 u64 f16 bf16 f32 f64. Empty for non-numeric types.
absl::string_view DTypeHloName(DType dtype);
std::optional<DType> DTypeFromHloName(absl::string_view name);

// TensorFlow's DataType enum values (types.proto). _REF types (x + 100) map to their base
// type. Returns nullopt for types tfjit does not support (complex, quantized, float8, ...).
std::optional<DType> DTypeFromTfEnum(int tf_enum);
int DTypeToTfEnum(DType dtype);

bool IsFloatingDType(DType dtype);
bool IsSignedIntegerDType(DType dtype);
bool IsUnsignedIntegerDType(DType dtype);
inline bool IsIntegerDType(DType d) { return IsSignedIntegerDType(d) || IsUnsignedIntegerDType(d); }
// Numeric: bool, integers and floats (everything that can enter compiled code).
bool IsNumericDType(DType dtype);

// C++ type <-> DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::kUInt16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::kUInt32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::kUInt64; };
template <> struct DTypeOf<half> { static constexpr DType value = DType::kFloat16; };
template <> struct DTypeOf<bfloat16> { static constexpr DType value = DType::kBFloat16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };

// Calls f(T{}) with the C++ type of a numeric dtype; returns false for non-numeric types.
// Usage: DispatchNumeric(dtype, [&](auto tag) { using T = decltype(tag); ... });
template <typename F>
bool DispatchNumeric(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kBool: f(bool{}); return true;
    case DType::kInt8: f(int8_t{}); return true;
    case DType::kInt16: f(int16_t{}); return true;
    case DType::kInt32: f(int32_t{}); return true;
    case DType::kInt64: f(int64_t{}); return true;
    case DType::kUInt8: f(uint8_t{}); return true;
    case DType::kUInt16: f(uint16_t{}); return true;
    case DType::kUInt32: f(uint32_t{}); return true;
    case DType::kUInt64: f(uint64_t{}); return true;
    case DType::kFloat16: f(half{}); return true;
    case DType::kBFloat16: f(bfloat16{}); return true;
    case DType::kFloat32: f(float{}); return true;
    case DType::kFloat64: f(double{}); return true;
    default: return false;
  }
}

// Reads element `i` of a numeric tensor as double / int64 (for printing, checksums, tests).
double ElementAsDouble(const Tensor& t, int64_t i);
int64_t ElementAsInt64(const Tensor& t, int64_t i);

}  // namespace tfjit

#endif  // TFJIT_CORE_DTYPE_H_
