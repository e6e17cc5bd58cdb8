// GatherByOffsets: the offset-map copy shared by the slicing and padding kernels.
#include "runtime/kernels/gather_util.h"

#include <cstring>

namespace tfjit::runtime {
namespace {

template <typename W>
void GatherTyped(const KernelContext& ctx, const W* src,
                 const std::vector<std::vector<int64_t>>& offsets, const W fill, W* dst) {
  const size_t rank = offsets.size();
  const std::vector<int64_t>& inner = offsets.back();
  const int64_t width = static_cast<int64_t>(inner.size());
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= static_cast<int64_t>(offsets[d].size());
  ParallelFor(ctx, rows, width + 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      // Decompose the row index over the outer dims; a fill offset fills the whole row.
      int64_t base = 0;
      bool filled = false;
      for (size_t d = rank - 1, rest = static_cast<size_t>(r); d-- > 0;) {
        const size_t n = offsets[d].size();
        const int64_t off = offsets[d][rest % n];
        rest /= n;
        if (off == kFillOffset) filled = true;
        base += off;
      }
      W* row = dst + r * width;
      if (filled) {
        for (int64_t j = 0; j < width; ++j) row[j] = fill;
        continue;
      }
      for (int64_t j = 0; j < width; ++j) {
        const int64_t off = inner[static_cast<size_t>(j)];
        row[j] = off == kFillOffset ? fill : src[base + off];
      }
    }
  });
}

}  // namespace

std::vector<int64_t> RowStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

std::vector<int64_t> StepOffsets(int64_t begin, int64_t step, int64_t size, int64_t stride) {
  std::vector<int64_t> out(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) out[static_cast<size_t>(i)] = (begin + i * step) * stride;
  return out;
}

void GatherByOffsets(const KernelContext& ctx, const Tensor& src,
                     const std::vector<std::vector<int64_t>>& offsets, const void* fill,
                     Tensor& out) {
  if (out.num_elements() == 0) return;
  const size_t width = DTypeSize(src.dtype());
  if (offsets.empty()) {
    std::memcpy(out.raw_data(), src.raw_data(), width);
    return;
  }
  DispatchByWidth(src.dtype(), [&](auto tag) {
    using W = decltype(tag);
    W fill_value{};
    if (fill != nullptr) std::memcpy(&fill_value, fill, sizeof(W));
    GatherTyped<W>(ctx, src.data<W>(), offsets, fill_value, out.data<W>());
  });
}

}  // namespace tfjit::runtime
