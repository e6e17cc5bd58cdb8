// Public dense tensor: an element type, a static shape and a shared, 64-byte aligned buffer.
#ifndef TFJIT_INCLUDE_TFJIT_TENSOR_H_
#define TFJIT_INCLUDE_TFJIT_TENSOR_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "tfjit/dtype.h"

namespace tfjit {

// Bytes per element of `dtype`; 0 for kInvalid, kString, kResource and kVariant.
size_t DTypeSize(DType dtype);
// TF-style name: "float32", "int32", "bool", "float16", ...
const char* DTypeName(DType dtype);

// A runtime object carried by a scalar kResource or kVariant tensor: a variable handle, a
// TensorList, a TensorArray. Defined by the runtime; opaque to users.
class TensorObject {
 public:
  virtual ~TensorObject() = default;
  // One line for messages and printing: "resource<float32[2]> 'v' on CPU:0".
  virtual std::string DebugString() const = 0;
};

// A dense, row-major tensor. Copying a Tensor is cheap and shares the buffer (like TF's
// Tensor); use Clone() for a deep copy. A default-constructed Tensor is invalid (kInvalid).
// Thread safety: distinct Tensors may be used concurrently; writes to a shared buffer are
// the caller's to synchronise.
class Tensor {
 public:
  Tensor() = default;
  // Allocates a zero-filled buffer. Dims must be >= 0 (callers validate user input first).
  Tensor(DType dtype, std::vector<int64_t> dims);
  // Allocates a buffer whose contents are unspecified, for a producer that writes every
  // element (compiled clusters' outputs): it saves the zero fill, which for a large output
  // costs as much as a simple kernel.
  static Tensor Uninitialized(DType dtype, std::vector<int64_t> dims);

  // A scalar kResource or kVariant tensor holding `object` (shared, immutable through the
  // tensor; mutable state lives behind the object, e.g. a variable's value).
  static Tensor FromObject(DType dtype, std::shared_ptr<const TensorObject> object);

  // Builds a tensor from host values; `values.size()` must equal the element count.
  template <typename T>
  static Tensor FromVector(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values);

  DType dtype() const { return dtype_; }
  bool valid() const { return dtype_ != DType::kInvalid; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t num_elements() const;
  size_t byte_size() const { return static_cast<size_t>(num_elements()) * DTypeSize(dtype_); }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <typename T>
  T* data() {
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }

  // The object of a kResource/kVariant scalar; nullptr otherwise.
  const TensorObject* object() const { return object_.get(); }
  const std::shared_ptr<const TensorObject>& shared_object() const { return object_; }
  // The object as `T`, or nullptr when it holds none or another kind.
  template <typename T>
  const T* object_as() const {
    return dynamic_cast<const T*>(object_.get());
  }

  // Same buffer, new dims with the same element count (checked by the caller).
  Tensor Reshaped(std::vector<int64_t> dims) const;
  // Same buffer read as `dtype` with `dims`, of the same byte size (checked by the caller):
  // e.g. complex64[n] as float32[n, 2], the layout of std::complex.
  Tensor BitcastView(DType dtype, std::vector<int64_t> dims) const;
  // A deep copy with its own buffer.
  Tensor Clone() const;
  bool SharesBufferWith(const Tensor& other) const { return buffer_ == other.buffer_; }

  // "float32[2,3]".
  std::string ShapeString() const;
  // Human-readable summary: dtype, shape and the first `max_values` values.
  std::string DebugString(int max_values = 8) const;

 private:
  DType dtype_ = DType::kInvalid;
  std::vector<int64_t> dims_;
  Tensor(DType dtype, std::vector<int64_t> dims, bool zeroed);

  std::shared_ptr<void> buffer_;
  void* data_ = nullptr;
  std::shared_ptr<const TensorObject> object_;
};

template <typename T>
Tensor Tensor::FromVector(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
  Tensor t(dtype, std::move(dims));
  T* out = t.data<T>();
  const size_t n = std::min(values.size(), static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < n; ++i) out[i] = values[i];
  return t;
}

}  // namespace tfjit

#endif  // TFJIT_INCLUDE_TFJIT_TENSOR_H_
