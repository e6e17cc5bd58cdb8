// TF's strided-slice rule (ValidateStridedSliceOp: the masks, the dense-spec expansion, the
// canonical begin/step/size per dim and the final shape), shared by the kernels and lowerings
// of StridedSlice, StridedSliceGrad and the strided-slice assignments (StridedSliceAssign,
// ResourceStridedSliceAssign, TensorStridedSliceUpdate) so that none can disagree.
#ifndef TFJIT_FRONTEND_STRIDED_SLICE_RULE_H_
#define TFJIT_FRONTEND_STRIDED_SLICE_RULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tfjit::tf {

class Node;

// One input dim of a strided slice after TF's dense-spec expansion and canonicalisation:
// the first index, the step and the number of elements taken.
struct StridedDimPlan {
  int64_t begin = 0, stride = 1, size = 0;
};
struct StridedPlan {
  std::vector<StridedDimPlan> dims;  // per input dim (the "processing" shape)
  std::vector<int64_t> final_dims;   // the slice's shape (new axes in, shrunk axes out)
};
struct StridedMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink = 0;
};

// The node's five mask attributes (absent ones are 0).
absl::StatusOr<StridedMasks> GetStridedMasks(const Node& node);

// TF's ValidateStridedSliceOp for an input of dims `shape`; "" or the error message.
std::string PlanStridedSlice(const std::vector<int64_t>& shape, const std::vector<int64_t>& begin,
                             const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                             const StridedMasks& m, StridedPlan* plan);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_STRIDED_SLICE_RULE_H_
