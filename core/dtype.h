// Element-type helpers shared by every layer: C++ type traits, HLO names and TF enum values.
#ifndef TFJIT_CORE_DTYPE_H_
#define TFJIT_CORE_DTYPE_H_

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

#include "Eigen/Core"
#include "tfjit/dtype.h"
#include "tfjit/tensor.h"

namespace tfjit {

using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;
using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

// HLO spelling: pred s8 s16 s32 s64 u8 u16 u32 u64 f16 bf16 f32 f64. Empty for non-numeric
// types and for complex (tfjit's HLO has no complex element types yet).
absl::string_view DTypeHloName(DType dtype);
std::optional<DType> DTypeFromHloName(absl::string_view name);

// TensorFlow's DataType enum values (types.proto). _REF types (x + 100) map to their base
// type. Returns nullopt for types tfjit does not support (quantized, float8, ...).
std::optional<DType> DTypeFromTfEnum(int tf_enum);
int DTypeToTfEnum(DType dtype);

bool IsFloatingDType(DType dtype);
bool IsSignedIntegerDType(DType dtype);
bool IsUnsignedIntegerDType(DType dtype);
inline bool IsIntegerDType(DType d) { return IsSignedIntegerDType(d) || IsUnsignedIntegerDType(d); }
// Numeric: bool, integers and floats (the element types of tfjit's HLO). Complex is NOT
// included: it is numeric for TF, but HLO has no complex element type (compiled code holds a
// complex tensor as its real parts, compiler/tf2hlo/complex_values.h); test IsComplexDType (or
// IsNumericOrComplexDType) where complex values are welcome.
bool IsNumericDType(DType dtype);
// float16 / bfloat16 (computed in float32 by TF's CPU kernels and tfjit's lowerings).
inline bool Is16BitFloat(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }
// complex64 / complex128. Neither floating nor real: IsFloatingDType is false for them.
inline bool IsComplexDType(DType d) { return d == DType::kComplex64 || d == DType::kComplex128; }
// The type of a complex type's real and imaginary parts (float32 / float64); `d` otherwise.
inline DType ComplexPartDType(DType d) {
  return d == DType::kComplex64 ? DType::kFloat32 : d == DType::kComplex128 ? DType::kFloat64 : d;
}
inline bool IsNumericOrComplexDType(DType d) { return IsNumericDType(d) || IsComplexDType(d); }

// C++ type <-> DType.
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::kInt16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUInt8;
};
template <>
struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::kUInt16;
};
template <>
struct DTypeOf<uint32_t> {
  static constexpr DType value = DType::kUInt32;
};
template <>
struct DTypeOf<uint64_t> {
  static constexpr DType value = DType::kUInt64;
};
template <>
struct DTypeOf<half> {
  static constexpr DType value = DType::kFloat16;
};
template <>
struct DTypeOf<bfloat16> {
  static constexpr DType value = DType::kBFloat16;
};
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeOf<complex64> {
  static constexpr DType value = DType::kComplex64;
};
template <>
struct DTypeOf<complex128> {
  static constexpr DType value = DType::kComplex128;
};

// Calls f(T{}) with the C++ type of a numeric dtype; returns false for non-numeric types.
// Usage: DispatchNumeric(dtype, [&](auto tag) { using T = decltype(tag); ... });
template <typename F>
bool DispatchNumeric(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kBool:
      f(bool{});
      return true;
    case DType::kInt8:
      f(int8_t{});
      return true;
    case DType::kInt16:
      f(int16_t{});
      return true;
    case DType::kInt32:
      f(int32_t{});
      return true;
    case DType::kInt64:
      f(int64_t{});
      return true;
    case DType::kUInt8:
      f(uint8_t{});
      return true;
    case DType::kUInt16:
      f(uint16_t{});
      return true;
    case DType::kUInt32:
      f(uint32_t{});
      return true;
    case DType::kUInt64:
      f(uint64_t{});
      return true;
    case DType::kFloat16:
      f(half{});
      return true;
    case DType::kBFloat16:
      f(bfloat16{});
      return true;
    case DType::kFloat32:
      f(float{});
      return true;
    case DType::kFloat64:
      f(double{});
      return true;
    default:
      return false;
  }
}

// Whether a C++ element type is complex64 / complex128.
template <typename T>
inline constexpr bool IsComplexType = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;

// Calls f(T{}) with complex64 / complex128; returns false for other types.
template <typename F>
bool DispatchComplex(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kComplex64:
      f(complex64{});
      return true;
    case DType::kComplex128:
      f(complex128{});
      return true;
    default:
      return false;
  }
}

// Reads element `i` of a numeric tensor as double / int64 (for printing, checksums, tests).
// For a complex tensor these read the real part; ElementAsComplex reads both parts of any
// numeric or complex tensor (imaginary part 0 for real types).
double ElementAsDouble(const Tensor& t, int64_t i);
int64_t ElementAsInt64(const Tensor& t, int64_t i);
complex128 ElementAsComplex(const Tensor& t, int64_t i);

// Dims as error messages print them: "[2,3]", "[]" for a scalar.
std::string DimsString(absl::Span<const int64_t> dims);

}  // namespace tfjit

#endif  // TFJIT_CORE_DTYPE_H_
