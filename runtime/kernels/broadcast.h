// NumPy/TF broadcasting of N operands into one output shape, collapsed into as few dims as
// possible so elementwise kernels run long contiguous inner loops.
#ifndef TFJIT_RUNTIME_KERNELS_BROADCAST_H_
#define TFJIT_RUNTIME_KERNELS_BROADCAST_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace tfjit::runtime {

// How to walk N broadcast operands in step with the output.
// Invariants: dims is non-empty; strides[k].size() == dims.size(); the innermost stride of
// every operand is 0 (broadcast) or 1 (contiguous).
struct BroadcastPlan {
  std::vector<int64_t> out_dims;              // the broadcast result shape
  std::vector<int64_t> dims;                  // collapsed iteration dims
  std::vector<std::vector<int64_t>> strides;  // [operand][dim], 0 where broadcast
  int64_t num_elements = 0;

  int num_operands() const { return static_cast<int>(strides.size()); }
  int64_t inner() const { return dims.back(); }
  int64_t inner_stride(int k) const { return strides[static_cast<size_t>(k)].back(); }
  // Element offset of each operand at output linear index `i` (offsets has num_operands()).
  void Offsets(int64_t i, int64_t* offsets) const;
};

// The broadcast of `shapes` (aligned from the right; each dim equal or 1), or nullopt when
// they are incompatible.
std::optional<BroadcastPlan> MakeBroadcastPlan(const std::vector<std::vector<int64_t>>& shapes);

// Calls fn(out_index, offsets, len) for each contiguous run of output elements in
// [begin, end) that shares one inner row; operand k's j-th element of the run is at
// offsets[k] + j * plan.inner_stride(k).
template <typename Fn>
void ForEachRun(const BroadcastPlan& plan, int64_t begin, int64_t end, Fn&& fn) {
  constexpr int kMaxOperands = 8;
  int64_t offsets[kMaxOperands];
  const int64_t inner = plan.inner();
  int64_t i = begin;
  while (i < end) {
    const int64_t len = std::min(inner - i % inner, end - i);
    plan.Offsets(i, offsets);
    fn(i, static_cast<const int64_t*>(offsets), len);
    i += len;
  }
}

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_KERNELS_BROADCAST_H_
