// TF1 TensorArrays (TensorArrayV3 and friends): the mutable array state a kResource handle
// carries, with TF's tensor_array.h rules (write-once slots, clear_after_read, dynamic_size).
#ifndef TFJIT_RUNTIME_KERNELS_STATE_TENSOR_ARRAY_KERNELS_H_
#define TFJIT_RUNTIME_KERNELS_STATE_TENSOR_ARRAY_KERNELS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "frontend/tensor_proto.h"
#include "tfjit/tensor.h"

namespace tfjit::runtime {

// One TensorArray, created fresh by every run of a TensorArrayV3 node. Thread-safe: every
// method takes the array's own lock. Errors are INVALID_ARGUMENT with TF's text and no node
// prefix (the kernels add it).
class TensorArray {
 public:
  struct Options {
    std::string name;  // unique: "<tensor_array_name or node>_<counter>"
    DType dtype = DType::kInvalid;
    tf::PartialShape element_shape{{}, true};
    int64_t size = 0;
    bool dynamic_size = false;
    bool clear_after_read = true;
    bool identical_element_shapes = false;
    // A gradient array's (TensorArrayGradV3): a second write to a slot adds to it.
    bool multiple_writes_aggregate = false;
  };
  explicit TensorArray(Options options);

  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  bool dynamic_size() const { return dynamic_size_; }

  // Writes `values[k]` at `indices[k]`, in order (one write per slot; growth if dynamic).
  absl::Status WriteMany(const std::vector<int64_t>& indices, const std::vector<Tensor>& values);
  absl::Status Write(int64_t index, const Tensor& value) { return WriteMany({index}, {value}); }
  // Reads the slots; an unwritten slot reads as zeros when the element shape is fully defined.
  absl::Status ReadMany(const std::vector<int64_t>& indices, std::vector<Tensor>* values);
  absl::Status Size(int64_t* size) const;
  absl::Status ElementShape(tf::PartialShape* shape) const;
  // Merges `shape` into the element shape (TF's SetElemShape).
  absl::Status MergeElementShape(const tf::PartialShape& shape);
  // Drops every slot; later operations fail with "has already been closed".
  void Close();
  // The gradient array for `source` (TensorArrayGradV3): made on the first call, with this
  // array's current size, dtype and element shape, and writes that aggregate; the same array
  // for every later call with that source.
  absl::StatusOr<std::shared_ptr<TensorArray>> GradientArray(const std::string& source);

 private:
  struct Slot {
    Tensor tensor;
    std::vector<int64_t> shape;
    bool written = false;
    bool read = false;
    bool cleared = false;
  };
  absl::Status CheckOpenLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteLocked(int64_t index, const Tensor& value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReadLocked(int64_t index, Tensor* value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_;
  const DType dtype_;
  const bool dynamic_size_;
  const bool clear_after_read_;
  const bool identical_element_shapes_;
  const bool multiple_writes_aggregate_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<TensorArray>> gradients_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  tf::PartialShape element_shape_ ABSL_GUARDED_BY(mu_);
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
};

// What a TensorArrayV3 handle (a kResource scalar) holds.
class TensorArrayHandle : public TensorObject {
 public:
  explicit TensorArrayHandle(std::shared_ptr<TensorArray> array) : array_(std::move(array)) {}
  TensorArray* array() const { return array_.get(); }
  const std::shared_ptr<TensorArray>& shared_array() const { return array_; }
  // "TensorArray 'ta_0' of float32".
  std::string DebugString() const override;

 private:
  std::shared_ptr<TensorArray> array_;
};

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_KERNELS_STATE_TENSOR_ARRAY_KERNELS_H_
