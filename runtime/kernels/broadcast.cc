// Broadcast plans: result shape, dim collapsing and per-operand strides.
#include "runtime/kernels/broadcast.h"

#include <cstddef>

namespace tfjit::runtime {

void BroadcastPlan::Offsets(int64_t i, int64_t* offsets) const {
  const size_t k = strides.size();
  for (size_t op = 0; op < k; ++op) offsets[op] = 0;
  for (size_t d = dims.size(); d-- > 0;) {
    const int64_t idx = i % dims[d];
    i /= dims[d];
    if (idx == 0) continue;
    for (size_t op = 0; op < k; ++op) offsets[op] += idx * strides[op][d];
  }
}

std::optional<BroadcastPlan> MakeBroadcastPlan(const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  const size_t k = shapes.size();
  // Operand dims padded with leading 1s to the common rank.
  std::vector<std::vector<int64_t>> padded(k, std::vector<int64_t>(rank, 1));
  for (size_t op = 0; op < k; ++op) {
    std::copy(shapes[op].begin(), shapes[op].end(),
              padded[op].begin() + (rank - shapes[op].size()));
  }
  BroadcastPlan plan;
  plan.out_dims.assign(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    for (size_t op = 0; op < k; ++op) {
      const int64_t s = padded[op][d];
      if (s == 1) continue;
      if (plan.out_dims[d] == 1) {
        plan.out_dims[d] = s;
      } else if (s != plan.out_dims[d]) {
        return std::nullopt;
      }
    }
  }
  plan.num_elements = 1;
  for (int64_t d : plan.out_dims) plan.num_elements *= d;

  // Collapse: drop size-1 output dims and merge neighbours whose broadcast pattern (which
  // operands repeat along them) is the same; such dims are contiguous in every operand.
  std::vector<std::vector<bool>> bcast;  // per collapsed dim, per operand
  for (size_t d = 0; d < rank; ++d) {
    if (plan.out_dims[d] == 1) continue;
    std::vector<bool> pattern(k);
    for (size_t op = 0; op < k; ++op) pattern[op] = padded[op][d] == 1;
    if (!bcast.empty() && bcast.back() == pattern) {
      plan.dims.back() *= plan.out_dims[d];
    } else {
      plan.dims.push_back(plan.out_dims[d]);
      bcast.push_back(pattern);
    }
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    bcast.push_back(std::vector<bool>(k, true));
  }
  plan.strides.assign(k, std::vector<int64_t>(plan.dims.size(), 0));
  for (size_t op = 0; op < k; ++op) {
    int64_t acc = 1;
    for (size_t d = plan.dims.size(); d-- > 0;) {
      if (bcast[d][op]) continue;
      plan.strides[op][d] = acc;
      acc *= plan.dims[d];
    }
  }
  return plan;
}

}  // namespace tfjit::runtime
