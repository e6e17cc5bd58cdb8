// NHWC 2-D convolution loops shared by the fallback kernels (runtime/kernels) and the CPU
// backend's runtime library (backends/cpu/runtime_library.cc), which both sit above core.
//
// Geometry is HLO's: output pixel o and tap k of a spatial dim read position
// o * stride + k * rhs_dilate - pad in the lhs-dilated, padded input, which is input element
// pos / lhs_dilate when pos is a multiple of lhs_dilate and inside; otherwise zero. Padding
// after the input is implied by the output size. Features follow feature_group_count: the
// filter is [k_h, k_w, in_c / groups, out_c] and output feature o reads the input features of
// group o / (out_c / groups).
//
// Regular and grouped convolutions gather one patch row per output pixel (im2col) into a
// per-chunk buffer that stays in L2 and multiply it by the filter matrix (core/gemm.h for
// float, Eigen otherwise); chunks of output pixels (and, for small images, blocks of output
// features) run in parallel. Depthwise convolutions (one input feature per group) are a direct
// loop over contiguous channels, register-blocked in core/gemm.h for float. Float
// convolutions to 1-8 features put output pixels in the vector lanes instead (Conv2DNarrow).
#ifndef TFJIT_CORE_CONV2D_H_
#define TFJIT_CORE_CONV2D_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "Eigen/Core"
#include "core/gemm.h"

namespace tfjit::conv {

struct Conv2DParams {
  int64_t batch = 1, in_h = 1, in_w = 1, in_c = 1;
  int64_t k_h = 1, k_w = 1, out_c = 1, out_h = 1, out_w = 1;
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
  int64_t lhs_dilate_h = 1, lhs_dilate_w = 1, rhs_dilate_h = 1, rhs_dilate_w = 1;
  int64_t groups = 1;

  int64_t in_per_group() const { return in_c / groups; }
  int64_t out_per_group() const { return out_c / groups; }
  bool depthwise() const { return in_per_group() == 1 && groups > 1; }
  // 1x1, stride 1, no padding or dilation, one group: the pixels times the filter matrix.
  bool pointwise() const {
    return k_h == 1 && k_w == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 &&
           pad_left == 0 && lhs_dilate_h == 1 && lhs_dilate_w == 1 && out_h == in_h &&
           out_w == in_w && groups == 1;
  }
};

// Runs fn(begin, end) over a partition of [0, n); `cost_per_unit` is in cycles per unit.
using ParallelForFn = std::function<void(int64_t n, int64_t cost_per_unit,
                                         const std::function<void(int64_t, int64_t)>& fn)>;

// Input element read by output coordinate `o` at tap `k`, or -1 for padding and lhs holes.
inline int64_t TapSource(int64_t o, int64_t k, int64_t stride, int64_t rhs_dilate, int64_t pad,
                         int64_t lhs_dilate, int64_t in) {
  int64_t pos = o * stride + k * rhs_dilate - pad;
  if (pos < 0) return -1;
  if (lhs_dilate != 1) {
    if (pos % lhs_dilate != 0) return -1;
    pos /= lhs_dilate;
  }
  return pos < in ? pos : -1;
}

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// out[rows, n] = lhs[rows, k] * w[k, n], all row-major (leading dims lda, ldw, ldo):
// gemm::GemmF32 for float (AVX-512 where the CPU has it), Eigen otherwise.
template <typename T>
void GemmRows(int64_t rows, int64_t n, int64_t k, const T* lhs, int64_t lda, const T* w,
              int64_t ldw, T* out, int64_t ldo) {
  if constexpr (std::is_same_v<T, float>) {
    gemm::GemmF32(rows, n, k, lhs, lda, w, ldw, out, ldo);
  } else {
    using Stride = Eigen::OuterStride<>;
    Eigen::Map<RowMajorMatrix<T>, 0, Stride> o(out, rows, n, Stride(ldo));
    if (k == 0) {
      o.setZero();
      return;
    }
    Eigen::Map<const RowMajorMatrix<T>, 0, Stride> a(lhs, rows, k, Stride(lda));
    Eigen::Map<const RowMajorMatrix<T>, 0, Stride> b(w, k, n, Stride(ldw));
    o.noalias() = a * b;
  }
}

// out[rows, n] (row-major, leading dim ldo) = patches * weights[k, n] (leading dim ldw), where
// fill(first, count, dst) writes the k-wide patches of rows [first, first + count) one after
// another, or, when `direct` is set, the patches are
// the rows of direct[rows, k] themselves. Work units are chunks of rows (sized so a chunk's
// patches stay in L2) and, when there are few chunks, blocks of output columns too, so small
// images still spread over the threads; they run through `parallel_for`. done(first_row,
// count) runs once the rows are final (for a fused epilogue): per chunk, right after its GEMM
// when columns were not split, or per chunk after the loop when they were.
// `packed`, when not null: the weights packed by gemm::Pack (one block [k, n], float only).
template <typename T, typename Fill, typename Done>
void PatchGemm(const ParallelForFn& parallel_for, int64_t rows, int64_t k, int64_t n,
               const T* weights, int64_t ldw, T* out, int64_t ldo, const T* direct,
               const Fill& fill, const Done& done, const T* packed = nullptr) {
  // About 64K patch values per chunk: the buffer stays in L2 while the GEMM streams it.
  const int64_t chunk = std::max<int64_t>(8, 65536 / std::max<int64_t>(k, 1));
  const int64_t chunks = (rows + chunk - 1) / chunk;
  // Fewer than 8 units: split columns in blocks of at least 64 (a multiple of 32).
  int64_t col_block = n;
  if (chunks < 8 && n >= 128) {
    const int64_t want = std::min<int64_t>((8 + chunks - 1) / chunks, n / 64);
    col_block = ((n + want - 1) / want + 31) / 32 * 32;
  }
  const int64_t col_blocks = (n + col_block - 1) / col_block;
  const int64_t unit_cost = chunk * k * std::min(col_block, n) * 2 + 1;
  parallel_for(chunks * col_blocks, unit_cost, [&](int64_t begin, int64_t end) {
    std::vector<T> patches;
    for (int64_t u = begin; u < end; ++u) {
      const int64_t c = u / col_blocks, j0 = (u % col_blocks) * col_block;
      const int64_t r0 = c * chunk, count = std::min(chunk, rows - r0);
      const int64_t cols = std::min(col_block, n - j0);
      const T* lhs = direct != nullptr ? direct + r0 * k : nullptr;
      if (lhs == nullptr && k > 0) {
        patches.resize(static_cast<size_t>(count * k));
        fill(r0, count, patches.data());
        lhs = patches.data();
      }
      if constexpr (std::is_same_v<T, float>) {
        if (packed != nullptr) {
          gemm::GemmF32Packed(count, cols, k, lhs, k, packed, n, j0, out + r0 * ldo + j0, ldo);
        } else {
          GemmRows<T>(count, cols, k, lhs, k, weights + j0, ldw, out + r0 * ldo + j0, ldo);
        }
      } else {
        GemmRows<T>(count, cols, k, lhs, k, weights + j0, ldw, out + r0 * ldo + j0, ldo);
      }
      if (col_blocks == 1) done(r0, count);
    }
  });
  if (col_blocks > 1) {
    // Every column block of a chunk is final only now: the epilogue runs per chunk, split
    // across the threads like the GEMM.
    parallel_for(chunks, chunk * n * 4 + 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) done(c * chunk, std::min(chunk, rows - c * chunk));
    });
  }
}

// dst[0, n) = src[0, n). Patch runs are short (a 3x3 stem's are 9 floats): a call to
// memmove per run cost more than the copy (18% of a stem convolution's time), so runs up to
// 16 elements are copied inline.
template <typename T>
inline void CopyRun(const T* src, int64_t n, T* dst) {
  if (n > 16) {
    std::copy_n(src, n, dst);
    return;
  }
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const T a = src[i], b = src[i + 1], c = src[i + 2], d = src[i + 3];
    dst[i] = a;
    dst[i + 1] = b;
    dst[i + 2] = c;
    dst[i + 3] = d;
  }
  for (; i < n; ++i) dst[i] = src[i];
}

// Regular or grouped convolution by patch GEMM (see the file comment). done(r0, count) runs
// once the output pixels [r0, r0 + count) hold every group's features.
template <typename T, typename Done>
void Conv2DPatchGemm(const Conv2DParams& p, const T* x, const T* f, T* y,
                     const ParallelForFn& parallel_for, const Done& done,
                     const T* packed = nullptr) {
  const int64_t group_c = p.in_per_group(), group_out = p.out_per_group();
  const int64_t rows = p.batch * p.out_h * p.out_w;
  const int64_t k = p.k_h * p.k_w * group_c;
  // A whole kernel row of taps is one contiguous run of the input when the row is inside.
  const bool contiguous_row = p.groups == 1 && p.lhs_dilate_w == 1 && p.rhs_dilate_w == 1;
  for (int64_t g = 0; g < p.groups; ++g) {
    const bool last_group = g + 1 == p.groups;
    // Rows in order: (n, oy, ox) advance by one pixel per row, so no division per row.
    auto fill = [&](int64_t first, int64_t count, T* dst) {
      int64_t ox = first % p.out_w, oy = (first / p.out_w) % p.out_h;
      int64_t n = first / (p.out_w * p.out_h);
      for (int64_t r = 0; r < count; ++r) {
        const int64_t ix0 = ox * p.stride_w - p.pad_left;
        for (int64_t kh = 0; kh < p.k_h; ++kh) {
          const int64_t iy =
              TapSource(oy, kh, p.stride_h, p.rhs_dilate_h, p.pad_top, p.lhs_dilate_h, p.in_h);
          if (iy < 0) {
            std::fill_n(dst, p.k_w * group_c, T(0));
            dst += p.k_w * group_c;
            continue;
          }
          const T* src_row = x + (n * p.in_h + iy) * p.in_w * p.in_c + g * group_c;
          if (contiguous_row && ix0 >= 0 && ix0 + p.k_w <= p.in_w) {
            CopyRun(src_row + ix0 * p.in_c, p.k_w * group_c, dst);
            dst += p.k_w * group_c;
            continue;
          }
          for (int64_t kw = 0; kw < p.k_w; ++kw, dst += group_c) {
            const int64_t ix =
                TapSource(ox, kw, p.stride_w, p.rhs_dilate_w, p.pad_left, p.lhs_dilate_w, p.in_w);
            if (ix < 0) {
              std::fill_n(dst, group_c, T(0));
            } else {
              CopyRun(src_row + ix * p.in_c, group_c, dst);
            }
          }
        }
        if (++ox == p.out_w) {
          ox = 0;
          if (++oy == p.out_h) {
            oy = 0;
            ++n;
          }
        }
      }
    };
    // The epilogue needs every group's features: it runs with the last group.
    PatchGemm<T>(
        parallel_for, rows, k, group_out, f + g * group_out, p.out_c, y + g * group_out, p.out_c,
        p.pointwise() ? x : nullptr, fill,
        [&](int64_t r0, int64_t count) {
          if (last_group) done(r0, count);
        },
        p.groups == 1 ? packed : nullptr);
  }
}

// Depthwise convolution (groups == in_c; out_c = in_c * multiplier, feature c * mult + m).
// done(r0, count) runs on every finished run of output pixels.
template <typename T, typename Done>
void DepthwiseConv2D(const Conv2DParams& p, const T* x, const T* f, T* y,
                     const ParallelForFn& parallel_for, const Done& done) {
  const int64_t in_c = p.in_c, mult = p.out_c / p.in_c, out_c = p.out_c;
  const int64_t out_rows = p.batch * p.out_h;  // one task = one output image row
  const int64_t cost = p.out_w * p.k_h * p.k_w * out_c * 2 + 1;
  if constexpr (std::is_same_v<T, float>) {
    if (mult == 1 && p.lhs_dilate_w == 1) {
      // One output row per call of the register-blocked row kernel (core/gemm.h).
      parallel_for(out_rows, cost, [&](int64_t begin, int64_t end) {
        std::vector<const float*> x_rows(static_cast<size_t>(p.k_h));
        for (int64_t r = begin; r < end; ++r) {
          const int64_t n = r / p.out_h, oy = r % p.out_h;
          for (int64_t kh = 0; kh < p.k_h; ++kh) {
            const int64_t iy =
                TapSource(oy, kh, p.stride_h, p.rhs_dilate_h, p.pad_top, p.lhs_dilate_h, p.in_h);
            x_rows[static_cast<size_t>(kh)] =
                iy < 0 ? nullptr : x + (n * p.in_h + iy) * p.in_w * in_c;
          }
          gemm::DepthwiseRow row;
          row.rows = x_rows.data();
          row.filter = f;
          row.out = y + r * p.out_w * out_c;
          row.k_h = p.k_h;
          row.k_w = p.k_w;
          row.in_w = p.in_w;
          row.out_w = p.out_w;
          row.channels = in_c;
          row.stride_w = p.stride_w;
          row.dilate_w = p.rhs_dilate_w;
          row.pad_left = p.pad_left;
          gemm::DepthwiseRowF32(row);
          done(r * p.out_w, p.out_w);
        }
      });
      return;
    }
  }
  parallel_for(out_rows, cost, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / p.out_h, oy = r % p.out_h;
      T* row = y + r * p.out_w * out_c;
      std::fill_n(row, p.out_w * out_c, T(0));
      for (int64_t kh = 0; kh < p.k_h; ++kh) {
        const int64_t iy =
            TapSource(oy, kh, p.stride_h, p.rhs_dilate_h, p.pad_top, p.lhs_dilate_h, p.in_h);
        if (iy < 0) continue;
        const T* x_row = x + (n * p.in_h + iy) * p.in_w * in_c;
        for (int64_t kw = 0; kw < p.k_w; ++kw) {
          const T* pf = f + (kh * p.k_w + kw) * out_c;
          for (int64_t ox = 0; ox < p.out_w; ++ox) {
            const int64_t ix =
                TapSource(ox, kw, p.stride_w, p.rhs_dilate_w, p.pad_left, p.lhs_dilate_w, p.in_w);
            if (ix < 0) continue;
            const T* px = x_row + ix * in_c;
            T* acc = row + ox * out_c;
            if (mult == 1) {
              for (int64_t c = 0; c < in_c; ++c) acc[c] += px[c] * pf[c];
            } else {
              for (int64_t c = 0; c < in_c; ++c) {
                for (int64_t m = 0; m < mult; ++m) acc[c * mult + m] += px[c] * pf[c * mult + m];
              }
            }
          }
        }
      }
      done(r * p.out_w, p.out_w);
    }
  });
}

// Whether a convolution's kernel rows are short (k_w * in_c < 16 taps: a 3-channel stem's 9)
// while its window fits one k block of the GEMM. A per-kernel-row GEMM would then have a
// short k and read and write the output rows once per kernel row; instead its packed filter is
// one block [k_h * k_w * in_c, out_c] and each output row is one GEMM over the whole window
// (gemm::GemmF32PackedSegments: the kernel rows are the runs of `a`).
inline bool ShortKernelRows(const Conv2DParams& p) {
  return p.k_h > 1 && p.k_w * p.in_c < 16 && p.k_h * p.k_w * p.in_c <= gemm::kMaxSegmentedK;
}

// Conv2DRowGemm for ShortKernelRows shapes with a packed filter: one segmented GEMM per output
// row. Its k_h input rows are read in place when every tap of the row is inside the image;
// otherwise they are copied into a band with the padding as zeros (exact: packed filters are
// finite), one row of (out_w - 1) * stride_w + k_w pixels per kernel row.
template <typename Done>
void Conv2DWindowRows(const Conv2DParams& p, const float* x, float* y,
                      const ParallelForFn& parallel_for, const Done& done, const float* packed) {
  const int64_t run = p.k_w * p.in_c, lda = p.stride_w * p.in_c, oc = p.out_c;
  const int64_t width = (p.out_w - 1) * p.stride_w + p.k_w;  // input pixels a row reads
  const int64_t x0 = -p.pad_left;
  const bool inside_row = x0 >= 0 && x0 + width <= p.in_w;
  const int64_t row_floats = p.in_w * p.in_c;
  const int64_t cost = p.out_w * oc * p.k_h * run * 2 + 1;
  parallel_for(p.batch * p.out_h, cost, [&](int64_t begin, int64_t end) {
    std::vector<float> band;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / p.out_h, oy = r % p.out_h;
      const float* image = x + n * p.in_h * row_floats;
      const int64_t iy0 =
          TapSource(oy, 0, p.stride_h, p.rhs_dilate_h, p.pad_top, p.lhs_dilate_h, p.in_h);
      const int64_t iy1 =
          TapSource(oy, p.k_h - 1, p.stride_h, p.rhs_dilate_h, p.pad_top, p.lhs_dilate_h, p.in_h);
      const float* a = nullptr;
      int64_t seg_stride = 0;
      if (inside_row && iy0 >= 0 && iy1 >= 0) {  // every kernel row inside the image
        a = image + iy0 * row_floats + x0 * p.in_c;
        seg_stride = p.rhs_dilate_h * row_floats;
      } else {
        seg_stride = width * p.in_c;
        band.assign(static_cast<size_t>(p.k_h * seg_stride), 0.0f);
        const int64_t from = std::max<int64_t>(x0, 0), to = std::min(x0 + width, p.in_w);
        for (int64_t kh = 0; kh < p.k_h && to > from; ++kh) {
          const int64_t iy =
              TapSource(oy, kh, p.stride_h, p.rhs_dilate_h, p.pad_top, p.lhs_dilate_h, p.in_h);
          if (iy < 0) continue;
          std::copy_n(image + iy * row_floats + from * p.in_c, (to - from) * p.in_c,
                      band.data() + kh * seg_stride + (from - x0) * p.in_c);
        }
        a = band.data();
      }
      gemm::GemmF32PackedSegments(p.out_w, oc, p.k_h, run, seg_stride, a, lda, packed, oc, 0,
                                  y + r * p.out_w * oc, oc);
      done(r * p.out_w, p.out_w);
    }
  });
}

// A float convolution with one group and no lhs dilation or horizontal rhs dilation, as a sum
// over kernel rows of GEMMs that read the input where it is: for kernel row kh, the taps of
// output pixel ox are the k_w * in_c floats of input row iy from pixel ox * stride - pad_left
// on, and the next pixel's start stride * in_c floats later, so the output row is
// GEMM(a = the input row with leading dim stride * in_c, b = filter row kh [k_w * in_c,
// out_c]), accumulated over kh. No patch buffer is written (the patch gather was half of a
// 3-channel stem's time); edge pixels, whose taps leave the row, take the part of the filter
// row inside it. One task per output row; done() runs on each finished row.
// `packed`, when not null: the filter packed by gemm::Pack(FilterPackingOf(p)), one block per
// kernel row (one block for ShortKernelRows shapes: Conv2DWindowRows), all of it finite.
template <typename Done>
void Conv2DRowGemm(const Conv2DParams& p, const float* x, const float* f, float* y,
                   const ParallelForFn& parallel_for, const Done& done,
                   const float* packed = nullptr) {
  if (packed != nullptr && ShortKernelRows(p)) {
    return Conv2DWindowRows(p, x, y, parallel_for, done, packed);
  }
  const int64_t run = p.k_w * p.in_c, lda = p.stride_w * p.in_c, oc = p.out_c;
  // Pixels whose taps are all inside the row: [lo, hi).
  const int64_t lo =
      std::min(p.out_w, (std::max<int64_t>(p.pad_left, 0) + p.stride_w - 1) / p.stride_w);
  const int64_t last = p.in_w - p.k_w + p.pad_left;  // the last interior ox * stride
  const int64_t hi = last < 0 ? lo : std::clamp(last / p.stride_w + 1, lo, p.out_w);
  const int64_t rows = p.batch * p.out_h;
  const int64_t cost = p.out_w * oc * p.k_h * run * 2 + 1;
  const int64_t packed_block = packed != nullptr ? gemm::PackedBlockFloats(run, oc) : 0;
  parallel_for(rows, cost, [&](int64_t begin, int64_t end) {
    std::vector<float> padded_row;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / p.out_h, oy = r % p.out_h;
      float* out = y + r * p.out_w * oc;
      bool first = true;
      for (int64_t kh = 0; kh < p.k_h; ++kh) {
        const int64_t iy =
            TapSource(oy, kh, p.stride_h, p.rhs_dilate_h, p.pad_top, p.lhs_dilate_h, p.in_h);
        if (iy < 0) continue;
        const float* in = x + (n * p.in_h + iy) * p.in_w * p.in_c;
        const float* b = f + kh * run * oc;
        if (packed != nullptr && (lo > 0 || hi < p.out_w)) {
          // Edge pixels too: the row with its padding made explicit (zeros), so the whole
          // row is one GEMM on the packed filter (small images have many edge pixels, and a
          // one-pixel GEMM is a slow matrix-vector product). The zeros add exact zeros: the
          // filter is finite (the code generator packs only finite filters).
          const int64_t x0 = -p.pad_left;
          const int64_t width = (p.out_w - 1) * p.stride_w + p.k_w;
          padded_row.assign(static_cast<size_t>(width * p.in_c), 0.0f);
          const int64_t from = std::max<int64_t>(x0, 0), to = std::min(x0 + width, p.in_w);
          if (to > from) {
            std::copy_n(in + from * p.in_c, (to - from) * p.in_c,
                        padded_row.data() + (from - x0) * p.in_c);
          }
          gemm::GemmF32Packed(p.out_w, oc, run, padded_row.data(), lda, packed + kh * packed_block,
                              oc, 0, out, oc, !first);
          first = false;
          continue;
        }
        if (hi > lo && packed != nullptr) {
          gemm::GemmF32Packed(hi - lo, oc, run, in + (lo * p.stride_w - p.pad_left) * p.in_c, lda,
                              packed + kh * packed_block, oc, 0, out + lo * oc, oc, !first);
        } else if (hi > lo) {
          gemm::GemmF32(hi - lo, oc, run, in + (lo * p.stride_w - p.pad_left) * p.in_c, lda, b, oc,
                        out + lo * oc, oc, !first);
        }
        auto edge = [&](int64_t ox) {
          const int64_t ix0 = ox * p.stride_w - p.pad_left;
          const int64_t kw0 = std::max<int64_t>(0, -ix0);
          const int64_t kw1 = std::min(p.k_w, p.in_w - ix0);
          if (kw1 > kw0) {
            gemm::GemmF32(1, oc, (kw1 - kw0) * p.in_c, in + (ix0 + kw0) * p.in_c, lda,
                          b + kw0 * p.in_c * oc, oc, out + ox * oc, oc, !first);
          } else if (first) {
            std::fill_n(out + ox * oc, oc, 0.0f);
          }
        };
        for (int64_t ox = 0; ox < lo; ++ox) edge(ox);
        for (int64_t ox = hi; ox < p.out_w; ++ox) edge(ox);
        first = false;
      }
      if (first) std::fill_n(out, p.out_w * oc, 0.0f);  // every kernel row in the padding
      done(r * p.out_w, p.out_w);
    }
  });
}

// Whether a float convolution of `p` runs with output pixels in the vector lanes
// (Conv2DNarrow): one group, at most half a vector of output features (1-8 with AVX-512,
// 1-4 with AVX2), at least 4 taps, stride and dilation 1 along the row, no lhs dilation, rows
// of two vectors of pixels or more. A features-in-lanes GEMM would leave half its lanes or
// more empty; the planar copy of the input costs less than the taps it serves. With 8
// features on AVX2 the GEMM fills its 8 lanes and measured faster (gender's 3x3 62x62x8 -> 8:
// 53.5 against 45.8 GFLOP/s, kernel_bench BM_ConvNarrow impl 3). Shorter rows would leave the
// pixel lanes empty instead (emotion's 8x8x256 -> 7 classifier took 0.16 ms this way, 0.09
// as a row GEMM).
inline bool UsesNarrow(const Conv2DParams& p) {
  return p.groups == 1 && p.out_c <= gemm::kMaxNarrowOutputs &&
         p.out_c * 2 <= gemm::NarrowPixelBlock() && p.k_h * p.k_w >= 4 && p.stride_w == 1 &&
         p.rhs_dilate_w == 1 && p.lhs_dilate_h == 1 && p.lhs_dilate_w == 1 &&
         gemm::NarrowConvAvailable() && p.out_w >= 2 * gemm::NarrowPixelBlock();
}

// Whether a float convolution of `p` can run as a sum of row GEMMs (Conv2DRowGemm).
inline bool RowGemmFits(const Conv2DParams& p) {
  return p.groups == 1 && p.lhs_dilate_h == 1 && p.lhs_dilate_w == 1 && p.rhs_dilate_w == 1 &&
         !p.pointwise();
}
// Whether it does (narrow ones with a finite filter run in Conv2DNarrow).
inline bool UsesRowGemm(const Conv2DParams& p) { return RowGemmFits(p) && !UsesNarrow(p); }

// Whether every one of the n floats at f is finite. The narrow path multiplies padding's
// zeros by the filter; HLO's convolution leaves padding out of the sum (docs/HLO.md), which
// differs only where a filter element is infinite or NaN.
inline bool AllFinite(const float* f, int64_t n) {
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) finite &= std::isfinite(f[i]);
  return finite;
}

// A float convolution with output pixels in the vector lanes (UsesNarrow). Tasks are bands of
// output rows: a band first lays out the input rows it reads in planar form (each as in_c
// runs of `pitch` floats, its horizontal padding as zeros: gemm::NarrowConvRow's layout) in a
// buffer sized to stay in L2, then runs the row kernel on each of its output rows; done()
// runs on each finished row. (One planar copy of a whole 256x256x8 input, 2 MB, left L2 and
// took as long as the convolution.)
template <typename Done>
void Conv2DNarrow(const Conv2DParams& p, const float* x, const float* f, float* y,
                  const ParallelForFn& parallel_for, const Done& done) {
  const int64_t block = gemm::NarrowPixelBlock();
  const int64_t pitch = (p.out_w + block - 1) / block * block + p.k_w - 1;
  const int64_t planar_row = p.in_c * pitch;
  // Input column ix is planar column ix + pad_left (output column ox reads ox + kw); input
  // columns [ix0, ix1) land inside the run, at planar columns [c0, c1).
  const int64_t ix0 = std::max<int64_t>(0, -p.pad_left);
  const int64_t ix1 = std::max(ix0, std::min(p.in_w, pitch - p.pad_left));
  const int64_t c0 = ix0 + p.pad_left, c1 = ix1 + p.pad_left;
  // Output rows per band: its input rows' planar form within about 128 KB, and 8 bands or
  // more per image when the image has the rows.
  const int64_t span = (p.k_h - 1) * p.rhs_dilate_h + 1;  // input rows one output row reads
  const int64_t fit =
      std::max<int64_t>(1, (32768 / std::max<int64_t>(planar_row, 1) - span) / p.stride_h + 1);
  const int64_t band = std::clamp<int64_t>(p.out_h / 8, 1, fit);
  const int64_t bands = (p.out_h + band - 1) / band;
  const int64_t cost =
      band * (p.out_w * p.out_c * p.k_h * p.k_w * p.in_c * 2 + span * p.in_w * p.in_c) + 1;
  parallel_for(p.batch * bands, cost, [&](int64_t begin, int64_t end) {
    std::vector<float> planar;
    std::vector<const float*> rows(static_cast<size_t>(p.k_h));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t n = t / bands, oy0 = (t % bands) * band;
      const int64_t oy1 = std::min(p.out_h, oy0 + band);
      // The input rows the band reads: [iy0, iy1), clamped to the image.
      const int64_t iy0 = std::max<int64_t>(0, oy0 * p.stride_h - p.pad_top);
      const int64_t iy1 = std::min(p.in_h, (oy1 - 1) * p.stride_h - p.pad_top + span);
      if (iy1 > iy0) planar.resize(static_cast<size_t>((iy1 - iy0) * planar_row));
      for (int64_t iy = iy0; iy < iy1; ++iy) {
        float* dst = planar.data() + (iy - iy0) * planar_row;
        gemm::PlanarizeRow(x + ((n * p.in_h + iy) * p.in_w + ix0) * p.in_c, ix1 - ix0, p.in_c,
                           dst + c0, pitch);
        for (int64_t i = 0; i < p.in_c; ++i) {
          std::fill(dst + i * pitch, dst + i * pitch + c0, 0.0f);
          std::fill(dst + i * pitch + c1, dst + (i + 1) * pitch, 0.0f);
        }
      }
      for (int64_t oy = oy0; oy < oy1; ++oy) {
        for (int64_t kh = 0; kh < p.k_h; ++kh) {
          const int64_t iy = TapSource(oy, kh, p.stride_h, p.rhs_dilate_h, p.pad_top, 1, p.in_h);
          rows[static_cast<size_t>(kh)] =
              iy < 0 ? nullptr : planar.data() + (iy - iy0) * planar_row;
        }
        const int64_t r = n * p.out_h + oy;
        gemm::NarrowConvRow row;
        row.rows = rows.data();
        row.filter = f;
        row.out = y + r * p.out_w * p.out_c;
        row.k_h = p.k_h;
        row.k_w = p.k_w;
        row.in_c = p.in_c;
        row.out_c = p.out_c;
        row.out_w = p.out_w;
        row.pitch = pitch;
        gemm::NarrowConvRowF32(row);
        done(r * p.out_w, p.out_w);
      }
    }
  });
}

// How a float convolution of `p` reads its filter packed once (gemm::Pack): one block
// [k_w * in_c, out_c] per kernel row for row GEMMs, the whole [k_h * k_w * in_c, out_c] for a
// one-group patch GEMM; nothing for depthwise and grouped convolutions.
inline gemm::Packing FilterPackingOf(const Conv2DParams& p) {
  gemm::Packing packing;
  if (p.depthwise() || p.groups != 1 || UsesNarrow(p)) return packing;
  if (UsesRowGemm(p) && !ShortKernelRows(p)) {
    packing.blocks = p.k_h;
    packing.k = p.k_w * p.in_c;
    packing.stride = packing.k * p.out_c;
  } else {
    packing.blocks = 1;
    packing.k = p.k_h * p.k_w * p.in_c;
  }
  packing.n = p.out_c;
  if (gemm::PackedBlockFloats(packing.k, packing.n) == 0) return gemm::Packing{};
  return packing;
}

// Any convolution of `p`: depthwise directly; float ones to few features with pixels in the
// lanes, others by row GEMMs where they fit; everything else by patch GEMM. `packed`, when
// not null: the float filter packed by gemm::Pack(FilterPackingOf(p)), every element finite.
template <typename T, typename Done>
void Conv2D(const Conv2DParams& p, const T* x, const T* f, T* y, const ParallelForFn& parallel_for,
            const Done& done, const T* packed = nullptr) {
  if (p.batch * p.out_h * p.out_w * p.out_c == 0) return;
  if (p.depthwise()) {
    DepthwiseConv2D<T>(p, x, f, y, parallel_for, done);
  } else if constexpr (std::is_same_v<T, float>) {
    if (UsesNarrow(p) && AllFinite(f, p.k_h * p.k_w * p.in_c * p.out_c)) {
      Conv2DNarrow(p, x, f, y, parallel_for, done);
    } else if (RowGemmFits(p)) {  // `packed` is null for a narrow shape (FilterPackingOf)
      Conv2DRowGemm(p, x, f, y, parallel_for, done, packed);
    } else {
      Conv2DPatchGemm<T>(p, x, f, y, parallel_for, done, packed);
    }
  } else {
    Conv2DPatchGemm<T>(p, x, f, y, parallel_for, done);
  }
}

}  // namespace tfjit::conv

#endif  // TFJIT_CORE_CONV2D_H_
