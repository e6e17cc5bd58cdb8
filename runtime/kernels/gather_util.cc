// GatherByOffsets and ScatterByOffsets: the offset-map copies shared by the slicing, padding
// and strided-slice assignment kernels.
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

std::vector<std::vector<int64_t>> StridedSliceOffsets(const tf::StridedPlan& plan,
                                                      const std::vector<int64_t>& dims) {
  const std::vector<int64_t> strides = RowStrides(dims);
  std::vector<std::vector<int64_t>> offsets;
  for (size_t d = 0; d < plan.dims.size(); ++d) {
    const tf::StridedDimPlan& p = plan.dims[d];
    offsets.push_back(StepOffsets(p.begin, p.stride, p.size, strides[d]));
  }
  return offsets;
}

std::vector<int64_t> StridedProcessingDims(const tf::StridedPlan& plan) {
  std::vector<int64_t> dims;
  for (const tf::StridedDimPlan& p : plan.dims) dims.push_back(p.size);
  return dims;
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

void ScatterByOffsets(const Tensor& src, const std::vector<std::vector<int64_t>>& offsets,
                      Tensor& dst) {
  if (src.num_elements() == 0) return;
  const size_t width = DTypeSize(src.dtype());
  char* out = static_cast<char*>(dst.raw_data());
  const char* in = static_cast<const char*>(src.raw_data());
  std::vector<size_t> idx(offsets.size(), 0);
  for (int64_t k = 0; k < src.num_elements(); ++k) {
    int64_t off = 0;
    for (size_t d = 0; d < offsets.size(); ++d) off += offsets[d][idx[d]];
    std::memcpy(out + static_cast<size_t>(off) * width, in + static_cast<size_t>(k) * width, width);
    for (size_t d = offsets.size(); d-- > 0;) {  // the next row-major index of src
      if (++idx[d] < offsets[d].size()) break;
      idx[d] = 0;
    }
  }
}

}  // namespace tfjit::runtime
