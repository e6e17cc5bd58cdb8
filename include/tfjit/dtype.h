// Public element types of tfjit tensors. Dependency-free: this header is the leaf of the tree.
#ifndef TFJIT_INCLUDE_TFJIT_DTYPE_H_
#define TFJIT_INCLUDE_TFJIT_DTYPE_H_

#include <cstdint>

namespace tfjit {

// The element types tfjit knows. Numeric types map 1:1 onto HLO element types (pred, s8, ...,
// f64); kString, kResource and kVariant exist only in the runtime (TF's DT_STRING,
// DT_RESOURCE, DT_VARIANT) and never appear inside compiled code. kComplex64/kComplex128
// (std::complex of float or double, TF's DT_COMPLEX64/128) run on kernels only for now: the
// compiler has no complex element types yet. New values go at the end (values are stable).
enum class DType : uint8_t {
  kInvalid = 0,
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kString,
  kResource,
  kVariant,
  kComplex64,
  kComplex128,
};

}  // namespace tfjit

#endif  // TFJIT_INCLUDE_TFJIT_DTYPE_H_
