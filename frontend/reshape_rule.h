// TF's Reshape rule (reshape_op.h), shared by the fallback kernel and the lowering so the two
// cannot disagree: one -1 is inferred; zero-sized requested dims are left out of the product,
// so [0, 3] -> [0, -1] infers 3 and [0] -> [-1] infers 0.
#ifndef TFJIT_FRONTEND_RESHAPE_RULE_H_
#define TFJIT_FRONTEND_RESHAPE_RULE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace tfjit::tf {

// The output dims of reshaping a tensor of `input_dims` to `sizes` (at most one -1), or
// INVALID_ARGUMENT with TF's message (without node context).
absl::StatusOr<std::vector<int64_t>> ResolveReshape(const std::vector<int64_t>& input_dims,
                                                    std::vector<int64_t> sizes);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_RESHAPE_RULE_H_
