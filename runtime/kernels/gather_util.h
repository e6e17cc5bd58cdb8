// Copying a tensor through per-dimension offset maps: the one data-movement primitive behind
// Slice, StridedSlice, Split, Unpack, Tile, Pad, MirrorPad, ReverseV2 and BroadcastTo, and
// (in the other direction) the strided-slice assignments.
#ifndef TFJIT_RUNTIME_KERNELS_GATHER_UTIL_H_
#define TFJIT_RUNTIME_KERNELS_GATHER_UTIL_H_

#include <cstdint>
#include <vector>

#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {

// Marks an output position along one dim that reads no input (Pad's border): the element is
// the fill value.
inline constexpr int64_t kFillOffset = -1;

// Row-major element strides of `dims`.
std::vector<int64_t> RowStrides(const std::vector<int64_t>& dims);

// Writes `out` (already allocated, dtype of `src`, dims[d] == offsets[d].size()) so that the
// element at (i_0, ..., i_k) is src's element at sum_d offsets[d][i_d] (an element offset), or
// *fill (one element of src's dtype) when any offsets[d][i_d] is kFillOffset. `fill` may be
// null when no offset is kFillOffset. A rank-0 output copies src's element at offset 0.
void GatherByOffsets(const KernelContext& ctx, const Tensor& src,
                     const std::vector<std::vector<int64_t>>& offsets, const void* fill,
                     Tensor& out);

// The inverse copy: src's element at (i_0, ..., i_k) (dims[d] == offsets[d].size()) is written
// to dst's element at sum_d offsets[d][i_d]. dst has src's dtype; no offset may be kFillOffset.
void ScatterByOffsets(const Tensor& src, const std::vector<std::vector<int64_t>>& offsets,
                      Tensor& dst);

// Offsets that read input dim `d` (extent n, element stride `stride`) at begin + i * step
// for i in [0, size).
std::vector<int64_t> StepOffsets(int64_t begin, int64_t step, int64_t size, int64_t stride);

// A planned strided slice (frontend/strided_slice_rule.h) of a value of dims `dims`: per
// input dim, the element offsets of the positions it takes, and the slice's dims before new
// axes are inserted and shrunk ones dropped (the "processing" shape).
std::vector<std::vector<int64_t>> StridedSliceOffsets(const tf::StridedPlan& plan,
                                                      const std::vector<int64_t>& dims);
std::vector<int64_t> StridedProcessingDims(const tf::StridedPlan& plan);

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_KERNELS_GATHER_UTIL_H_
