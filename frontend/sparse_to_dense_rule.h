// TF's SparseToDense rule (sparse_to_dense_op.cc), shared by the fallback kernel and the
// lowering so the two cannot disagree: the shape checks, and the checks of the index rows
// (in bounds always; sorted and unique under validate_indices).
#ifndef TFJIT_FRONTEND_SPARSE_TO_DENSE_RULE_H_
#define TFJIT_FRONTEND_SPARSE_TO_DENSE_RULE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tfjit/tensor.h"

namespace tfjit::tf {

// sparse_indices read as `num` rows of `rank` coordinates ([N, R], [N] or a scalar index).
struct SparseIndexRows {
  int64_t num = 1;
  int64_t rank = 1;
};

// Checks the dims of SparseToDense's inputs against TF's rules (`output_shape` being the value
// of the output_shape input), or INVALID_ARGUMENT with TF's message (without node context).
absl::StatusOr<SparseIndexRows> CheckSparseToDenseShapes(const std::vector<int64_t>& indices_dims,
                                                         const std::vector<int64_t>& output_shape,
                                                         const std::vector<int64_t>& values_dims,
                                                         const std::vector<int64_t>& default_dims);

// Checks the index rows of `indices` (int32 or int64, `rows` as CheckSparseToDenseShapes gave
// them): each in bounds of `output_shape`; with `validate`, each after the one before it in
// lexicographic order (TF's "is repeated" and "is out of order").
absl::Status CheckSparseToDenseIndices(const Tensor& indices, SparseIndexRows rows,
                                       const std::vector<int64_t>& output_shape, bool validate);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_SPARSE_TO_DENSE_RULE_H_
