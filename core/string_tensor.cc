// String tensors; see string_tensor.h.
#include "core/string_tensor.h"

#include <memory>

#include "absl/strings/str_cat.h"

namespace tfjit {

std::string StringArray::DebugString() const {
  return absl::StrCat("string tensor of ", values_.size(), " value",
                      values_.size() == 1 ? "" : "s");
}

Tensor MakeStringTensor(std::vector<int64_t> dims, std::vector<std::string> values) {
  return Tensor::FromObject(DType::kString, std::make_shared<StringArray>(std::move(values)))
      .Reshaped(std::move(dims));
}

const std::vector<std::string>* StringValues(const Tensor& t) {
  if (t.dtype() != DType::kString) return nullptr;
  const auto* array = t.object_as<StringArray>();
  return array == nullptr ? nullptr : &array->values();
}

}  // namespace tfjit
