// Implementation of the public Tensor: aligned zeroed buffers, reshape views and printing.
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/run_control.h"
#include "tfjit/tensor.h"

namespace tfjit {
namespace {

// 64 bytes: one cache line and one AVX-512 vector, so compiled loops may use aligned access.
constexpr size_t kAlignment = 64;

// `budget` (may be null) was charged `bytes` for this buffer; the deleter gives them back.
std::shared_ptr<void> AllocateZeroed(size_t bytes, std::shared_ptr<MemoryBudget> budget) {
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) {
    if (budget != nullptr) budget->Release(static_cast<int64_t>(bytes));
    return nullptr;
  }
  std::memset(p, 0, rounded);
  if (budget == nullptr) return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  return std::shared_ptr<void>(p, [budget = std::move(budget), bytes](void* q) {
    std::free(q);
    budget->Release(static_cast<int64_t>(bytes));
  });
}

}  // namespace

Tensor::Tensor(DType dtype, std::vector<int64_t> dims) : dtype_(dtype), dims_(std::move(dims)) {
  // Inside a run, the run's memory budget is charged first; inside a kernel call, a refusal
  // throws AllocationRefused before any memory is taken (core/run_control.h).
  int64_t bytes = -1;
  if (!TensorBytes(dtype_, dims_, &bytes)) bytes = -1;
  std::shared_ptr<MemoryBudget> budget = ChargeTensorAllocation(dtype_, dims_, bytes);
  buffer_ = AllocateZeroed(byte_size(), std::move(budget));
  data_ = buffer_.get();
}

Tensor Tensor::FromObject(DType dtype, std::shared_ptr<const TensorObject> object) {
  Tensor t;
  t.dtype_ = dtype;
  t.object_ = std::move(object);
  return t;
}

int64_t Tensor::num_elements() const {
  if (dtype_ == DType::kInvalid) return 0;
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

Tensor Tensor::Reshaped(std::vector<int64_t> dims) const {
  Tensor t = *this;
  t.dims_ = std::move(dims);
  return t;
}

Tensor Tensor::Clone() const {
  if (object_ != nullptr) return *this;  // objects are shared, never copied
  Tensor t(dtype_, dims_);
  if (byte_size() > 0) std::memcpy(t.data_, data_, byte_size());
  return t;
}

std::string Tensor::ShapeString() const {
  return absl::StrCat(DTypeName(dtype_), "[", absl::StrJoin(dims_, ","), "]");
}

std::string Tensor::DebugString(int max_values) const {
  std::string out = ShapeString();
  if (object_ != nullptr) return absl::StrCat(out, " ", object_->DebugString());
  if (!IsNumericDType(dtype_)) return out;
  absl::StrAppend(&out, " {");
  const int64_t n = std::min<int64_t>(num_elements(), max_values);
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) absl::StrAppend(&out, ", ");
    if (IsFloatingDType(dtype_)) {
      absl::StrAppend(&out, ElementAsDouble(*this, i));
    } else {
      absl::StrAppend(&out, ElementAsInt64(*this, i));
    }
  }
  if (num_elements() > n) absl::StrAppend(&out, ", ...");
  absl::StrAppend(&out, "}");
  return out;
}

}  // namespace tfjit
