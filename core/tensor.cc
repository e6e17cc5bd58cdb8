// Implementation of the public Tensor: aligned buffers (large ones reused), reshape views and
// printing.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/run_control.h"
#include "tfjit/tensor.h"

namespace tfjit {
namespace {

// 64 bytes: one cache line and one AVX-512 vector, so compiled loops may use aligned access.
constexpr size_t kAlignment = 64;

// Freed buffers of at least kMinCached bytes are kept for reuse, up to kCacheCapacity bytes
// (the least recently freed go first). malloc serves such sizes with fresh mmaps, and
// touching a fresh mapping page-faults on every page: a 64 MB output cost about 250 ms of
// faults in a VM, every run, against 7 ms of work. Runs allocate the same sizes run after
// run, so exact sizes (rounded to pages) are reused.
// Sanitizer builds keep no cache, so that ASan still sees every use after free.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kMinCached = SIZE_MAX;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr size_t kMinCached = SIZE_MAX;
#else
constexpr size_t kMinCached = size_t{256} << 10;
#endif
#else
constexpr size_t kMinCached = size_t{256} << 10;
#endif
constexpr size_t kCacheCapacity = size_t{512} << 20;
constexpr size_t kPage = 4096;

class BufferCache {
 public:
  void* Take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_size_.find(bytes);
    if (it == by_size_.end()) return nullptr;
    void* p = it->second->second;
    order_.erase(it->second);
    by_size_.erase(it);
    total_ -= bytes;
    return p;
  }
  void Give(size_t bytes, void* p) {
    std::vector<void*> evicted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (bytes > kCacheCapacity) {
        evicted.push_back(p);
      } else {
        order_.emplace_back(bytes, p);
        by_size_.emplace(bytes, std::prev(order_.end()));
        total_ += bytes;
        while (total_ > kCacheCapacity) {
          auto& [size, ptr] = order_.front();
          auto range = by_size_.equal_range(size);
          for (auto i = range.first; i != range.second; ++i) {
            if (i->second == order_.begin()) {
              by_size_.erase(i);
              break;
            }
          }
          total_ -= size;
          evicted.push_back(ptr);
          order_.pop_front();
        }
      }
    }
    for (void* q : evicted) std::free(q);
  }

 private:
  std::mutex mu_;
  std::list<std::pair<size_t, void*>> order_;  // oldest first
  std::multimap<size_t, std::list<std::pair<size_t, void*>>::iterator> by_size_;
  size_t total_ = 0;
};

BufferCache& Cache() {
  static BufferCache* cache = new BufferCache();  // never destroyed: deleters may run late
  return *cache;
}

// `budget` (may be null) was charged `bytes` for this buffer; the deleter gives them back.
std::shared_ptr<void> Allocate(size_t bytes, std::shared_ptr<MemoryBudget> budget, bool zeroed) {
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  const bool cached = rounded >= kMinCached;
  if (cached) rounded = (rounded + kPage - 1) / kPage * kPage;
  void* p = cached ? Cache().Take(rounded) : nullptr;
  if (p == nullptr) p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) {
    if (budget != nullptr) budget->Release(static_cast<int64_t>(bytes));
    return nullptr;
  }
  if (zeroed) std::memset(p, 0, rounded);
  return std::shared_ptr<void>(p, [budget = std::move(budget), bytes, rounded, cached](void* q) {
    if (cached) {
      Cache().Give(rounded, q);
    } else {
      std::free(q);
    }
    if (budget != nullptr) budget->Release(static_cast<int64_t>(bytes));
  });
}

}  // namespace

Tensor::Tensor(DType dtype, std::vector<int64_t> dims) : Tensor(dtype, std::move(dims), true) {}

Tensor Tensor::Uninitialized(DType dtype, std::vector<int64_t> dims) {
  return Tensor(dtype, std::move(dims), false);
}

Tensor::Tensor(DType dtype, std::vector<int64_t> dims, bool zeroed)
    : dtype_(dtype), dims_(std::move(dims)) {
  // Inside a run, the run's memory budget is charged first; inside a kernel call, a refusal
  // throws AllocationRefused before any memory is taken (core/run_control.h).
  int64_t bytes = -1;
  if (!TensorBytes(dtype_, dims_, &bytes)) bytes = -1;
  std::shared_ptr<MemoryBudget> budget = ChargeTensorAllocation(dtype_, dims_, bytes);
  buffer_ = Allocate(byte_size(), std::move(budget), zeroed);
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

Tensor Tensor::BitcastView(DType dtype, std::vector<int64_t> dims) const {
  Tensor t = *this;
  t.dtype_ = dtype;
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
  if (!IsNumericOrComplexDType(dtype_)) return out;
  absl::StrAppend(&out, " {");
  const int64_t n = std::min<int64_t>(num_elements(), max_values);
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) absl::StrAppend(&out, ", ");
    if (IsComplexDType(dtype_)) {
      const complex128 c = ElementAsComplex(*this, i);
      absl::StrAppend(&out, "(", c.real(), ",", c.imag(), ")");
    } else if (IsFloatingDType(dtype_)) {
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
