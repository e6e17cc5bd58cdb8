// TF's SparseToDense rule; see sparse_to_dense_rule.h.
#include "frontend/sparse_to_dense_rule.h"

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::tf {

absl::StatusOr<SparseIndexRows> CheckSparseToDenseShapes(const std::vector<int64_t>& indices_dims,
                                                         const std::vector<int64_t>& output_shape,
                                                         const std::vector<int64_t>& values_dims,
                                                         const std::vector<int64_t>& default_dims) {
  if (indices_dims.size() > 2) {
    return InvalidArgument("sparse_indices should be a scalar, vector, or matrix, got shape %s",
                           DimsString(indices_dims));
  }
  SparseIndexRows rows;
  rows.num = indices_dims.empty() ? 1 : indices_dims[0];
  rows.rank = indices_dims.size() > 1 ? indices_dims[1] : 1;
  if (static_cast<int64_t>(output_shape.size()) != rows.rank) {
    return InvalidArgument("output_shape has incorrect number of elements: %d should be: %d",
                           output_shape.size(), rows.rank);
  }
  for (int64_t d : output_shape) {
    if (d < 0) {
      return InvalidArgument("output_shape has a negative dimension: %s", DimsString(output_shape));
    }
  }
  if (!(values_dims.empty() || (values_dims.size() == 1 && values_dims[0] == rows.num))) {
    return InvalidArgument("sparse_values has incorrect shape %s, should be [] or [%d]",
                           DimsString(values_dims), rows.num);
  }
  if (!default_dims.empty()) {
    return InvalidArgument("default_value should be a scalar, got shape %s",
                           DimsString(default_dims));
  }
  return rows;
}

absl::Status CheckSparseToDenseIndices(const Tensor& indices, SparseIndexRows rows,
                                       const std::vector<int64_t>& output_shape, bool validate) {
  std::vector<int64_t> prev, cur(static_cast<size_t>(rows.rank));
  for (int64_t i = 0; i < rows.num; ++i) {
    bool in_bounds = true;
    for (int64_t d = 0; d < rows.rank; ++d) {
      const int64_t v = ElementAsInt64(indices, i * rows.rank + d);
      cur[static_cast<size_t>(d)] = v;
      in_bounds = in_bounds && v >= 0 && v < output_shape[static_cast<size_t>(d)];
    }
    if (!in_bounds) {
      return InvalidArgument("indices[%d] = %s is out of bounds: need 0 <= index < %s", i,
                             DimsString(cur), DimsString(output_shape));
    }
    if (validate && i > 0 && cur == prev) {
      return InvalidArgument("indices[%d] = %s is repeated", i, DimsString(cur));
    }
    if (validate && i > 0 && cur < prev) {
      return InvalidArgument("indices[%d] = %s is out of order", i, DimsString(cur));
    }
    prev = cur;
  }
  return absl::OkStatus();
}

}  // namespace tfjit::tf
