// String tensors (DT_STRING): tfjit has no compiled or numeric use for strings, but TF-written
// graphs carry them as constants (Assert's messages, a Saver's file and tensor names). A
// kString tensor holds its values in a StringArray object, row-major like any tensor; string
// tensors never enter compiled clusters, and data-movement kernels that copy by element width
// refuse them.
#ifndef TFJIT_CORE_STRING_TENSOR_H_
#define TFJIT_CORE_STRING_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tfjit/tensor.h"

namespace tfjit {

class StringArray : public TensorObject {
 public:
  explicit StringArray(std::vector<std::string> values) : values_(std::move(values)) {}
  const std::vector<std::string>& values() const { return values_; }
  std::string DebugString() const override;

 private:
  std::vector<std::string> values_;
};

// A kString tensor of `dims` holding `values` (one per element, row-major).
Tensor MakeStringTensor(std::vector<int64_t> dims, std::vector<std::string> values);
// The values of a kString tensor, or nullptr for any other tensor.
const std::vector<std::string>* StringValues(const Tensor& t);

}  // namespace tfjit

#endif  // TFJIT_CORE_STRING_TENSOR_H_
