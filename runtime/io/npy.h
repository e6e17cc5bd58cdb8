// NumPy .npy files (format versions 1.0, 2.0 and 3.0): reading into and writing from Tensors.
#ifndef TFJIT_RUNTIME_IO_NPY_H_
#define TFJIT_RUNTIME_IO_NPY_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tfjit/tensor.h"

namespace tfjit::runtime {

// Parses the bytes of a .npy file. `source` names the file in error messages.
// Supported: little-endian (or byte-order-free) C-order arrays of dtype <f2 <f4 <f8 |i1 <i2
// <i4 <i8 |u1 <u2 <u4 <u8 |b1. Errors:
//   INVALID_ARGUMENT  bad magic, truncated or malformed header, data size not matching the
//                     header (`file 'x.npy': data has 12 bytes, header says float32[2,2]
//                     (16 bytes)`);
//   UNIMPLEMENTED     fortran_order: True, big-endian data, or an unsupported dtype.
absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes, absl::string_view source);

// Reads and parses `path`. NOT_FOUND when the file cannot be opened.
absl::StatusOr<Tensor> ReadNpy(const std::string& path);

// The .npy bytes of `tensor` as NumPy writes them: version 1.0 (2.0 if the header would not
// fit), header dict padded with spaces to a multiple of 64 bytes. Precondition: the tensor has
// an npy-representable dtype (see NpyDescr); otherwise returns an empty string.
std::string SerializeNpy(const Tensor& tensor);

// Writes SerializeNpy(tensor) to `path`. UNIMPLEMENTED for dtypes npy cannot hold (bfloat16,
// string, resource, variant); INTERNAL-free: I/O failures are FAILED_PRECONDITION naming the
// path.
absl::Status WriteNpy(const std::string& path, const Tensor& tensor);

// The npy dtype descriptor for `dtype` ("<f4", "|b1", ...), or "" if npy has none.
std::string NpyDescr(DType dtype);

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_IO_NPY_H_
