// Image kernels of real TF models (NHWC): ResizeBilinear, DepthToSpace, SpaceToDepth,
// SpaceToBatchND and BatchToSpaceND. Geometry and error messages follow TF's CPU kernels
// (resize_bilinear_op, depthtospace_op, spacetobatch_functor).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "frontend/attr.h"
#include "frontend/conv_attrs.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

// ---- ResizeBilinear ----

// The source rows (or columns) of one output coordinate and the weight of the upper one.
struct Interp {
  int64_t lower = 0, upper = 0;
  float lerp = 0;
};

// TF's compute_interpolation_weights with its legacy or half-pixel scaler, in float.
std::vector<Interp> InterpolationWeights(int64_t in, int64_t out, bool align_corners,
                                         bool half_pixel) {
  const float scale = (align_corners && out > 1)
                          ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                          : static_cast<float>(in) / static_cast<float>(out);
  std::vector<Interp> r(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const float src =
        half_pixel ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
    const float src_floor = std::floor(src);
    Interp& p = r[static_cast<size_t>(i)];
    p.lower = std::max<int64_t>(static_cast<int64_t>(src_floor), 0);
    p.upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1);
    p.lerp = src - src_floor;
  }
  return r;
}

absl::Status ResizeBilinearKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  bool align = false, half_pixel = false;
  TFJIT_RETURN_IF_ERROR(ResizeFlags(ctx, &align, &half_pixel));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ResizeOutputSize(ctx));
  const int64_t batch = in.dim(0), ih = in.dim(1), iw = in.dim(2), depth = in.dim(3);
  const int64_t oh = size[0], ow = size[1];
  // Refused before anything is built: the output, and the per-row and per-column tables
  // (which a huge size with an empty batch or depth would still make huge).
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, DType::kFloat32, {batch, oh, ow, depth}));
  static_assert(sizeof(Interp) <= 3 * sizeof(int64_t));
  TFJIT_RETURN_IF_ERROR(
      CheckOutputShape(ctx, DType::kInt64, {std::max(oh, ow), 6}, "interpolation tables"));
  const std::vector<Interp> ys = InterpolationWeights(ih, oh, align, half_pixel);
  const std::vector<Interp> xs = InterpolationWeights(iw, ow, align, half_pixel);
  Tensor out(DType::kFloat32, {batch, oh, ow, depth});
  float* y = out.data<float>();
  const bool ok = DispatchReal(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data<T>();
    auto at = [&](int64_t n, int64_t i, int64_t j, int64_t c) {
      return static_cast<float>(x[((n * ih + i) * iw + j) * depth + c]);
    };
    ParallelFor(ctx, batch * oh, ow * depth * 8 + 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t n = r / oh;
        const Interp& yi = ys[static_cast<size_t>(r % oh)];
        for (int64_t j = 0; j < ow; ++j) {
          const Interp& xi = xs[static_cast<size_t>(j)];
          for (int64_t c = 0; c < depth; ++c) {
            const float tl = at(n, yi.lower, xi.lower, c), tr = at(n, yi.lower, xi.upper, c);
            const float bl = at(n, yi.upper, xi.lower, c), br = at(n, yi.upper, xi.upper, c);
            const float top = tl + (tr - tl) * xi.lerp;
            const float bottom = bl + (br - bl) * xi.lerp;
            y[(r * ow + j) * depth + c] = top + (bottom - top) * yi.lerp;
          }
        }
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "floating-point and integer types");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- DepthToSpace / SpaceToDepth ----

// Copies element bytes from `in` to `out` where out element k comes from in element src(k);
// rows of `run` contiguous elements move together.
template <typename Src>
absl::Status PermuteElements(const KernelContext& ctx, const Tensor& in, Tensor& out, int64_t run,
                             Src src) {
  const size_t bytes = static_cast<size_t>(run) * DTypeSize(in.dtype());
  const char* x = static_cast<const char*>(in.raw_data());
  char* y = static_cast<char*>(out.raw_data());
  const int64_t rows = run == 0 ? 0 : out.num_elements() / run;
  ParallelFor(ctx, rows, run + 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      std::memcpy(y + static_cast<size_t>(r) * bytes,
                  x + static_cast<size_t>(src(r * run)) * DTypeSize(in.dtype()), bytes);
    }
  });
  return absl::OkStatus();
}

template <bool kToSpace>
absl::Status DepthSpaceKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(int64_t b, tf::GetIntAttr(ctx.node(), "block_size"));
  // TF's CPU kernel rejects other layouts as INVALID_ARGUMENT.
  TFJIT_RETURN_IF_ERROR(tf::CheckNhwc(ctx.node(), absl::StatusCode::kInvalidArgument));
  if (b < 2) return KernelError(ctx, "Block size should be > 1, but was: %d", b);
  if (in.rank() != 4) {
    return KernelError(ctx, "Input rank should be: 4 instead of: %d", in.rank());
  }
  if (DTypeSize(in.dtype()) == 0) return UnsupportedDType(ctx, in.dtype(), "numeric types");
  const int64_t n = in.dim(0), h = in.dim(1), w = in.dim(2), c = in.dim(3);
  if (kToSpace) {
    if (c % (b * b) != 0) {
      return KernelError(ctx, "Input depth dimension %d should be divisible by: %d", c, b * b);
    }
    const int64_t oc = c / (b * b);
    Tensor out(in.dtype(), {n, h * b, w * b, oc});
    // out[n, y, x, k] = in[n, y / b, x / b, ((y % b) * b + x % b) * oc + k]
    TFJIT_RETURN_IF_ERROR(PermuteElements(ctx, in, out, oc, [&](int64_t k) {
      const int64_t p = k / oc, x = p % (w * b), y = (p / (w * b)) % (h * b),
                    bn = p / (w * b * h * b);
      return ((bn * h + y / b) * w + x / b) * c + ((y % b) * b + x % b) * oc;
    }));
    ctx.set_output(0, std::move(out));
    return absl::OkStatus();
  }
  if (h % b != 0 || w % b != 0) {
    return KernelError(ctx, "Image width %d and height %d should be divisible by block_size: %d", w,
                       h, b);
  }
  const int64_t oh = h / b, ow = w / b;
  Tensor out(in.dtype(), {n, oh, ow, c * b * b});
  // out[n, y, x, (i * b + j) * c + k] = in[n, y * b + i, x * b + j, k]
  TFJIT_RETURN_IF_ERROR(PermuteElements(ctx, in, out, c, [&](int64_t k) {
    const int64_t p = k / c, blk = p % (b * b), q = p / (b * b);
    const int64_t x = q % ow, y = (q / ow) % oh, bn = q / (ow * oh);
    return ((bn * h + y * b + blk / b) * w + x * b + blk % b) * c;
  }));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- SpaceToBatchND / BatchToSpaceND ----

// block_shape [M] and paddings/crops [M, 2] (non-negative), checked against the input rank.
absl::Status ReadBlockArgs(const KernelContext& ctx, const Tensor& in, const char* pad_name,
                           std::vector<int64_t>* block, std::vector<int64_t>* pads) {
  const Tensor& bt = ctx.input(1);
  const Tensor& pt = ctx.input(2);
  if (bt.rank() != 1) {
    return KernelError(ctx, "block_shape must be 1-dimensional, got %s", bt.ShapeString());
  }
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, bt, "block_shape", block));
  const int64_t m = bt.dim(0);
  if (pt.rank() != 2 || pt.dim(0) != m || pt.dim(1) != 2) {
    return KernelError(ctx, "%s should have shape [%d, 2] instead of %s", pad_name, m,
                       pt.ShapeString());
  }
  if (pt.dtype() != DType::kInt32 && pt.dtype() != DType::kInt64) {
    return KernelError(ctx, "%s must be int32 or int64, got %s", pad_name, DTypeName(pt.dtype()));
  }
  for (int64_t i = 0; i < 2 * m; ++i) pads->push_back(ElementAsInt64(pt, i));
  if (in.rank() < 1 + m) {
    return KernelError(ctx, "input rank should be >= %d instead of %d", 1 + m, in.rank());
  }
  for (int64_t i = 0; i < m; ++i) {
    if ((*block)[static_cast<size_t>(i)] < 1) {
      return KernelError(ctx,
                         "All values in block_shape must be positive, got value, %d at "
                         "index %d.",
                         (*block)[static_cast<size_t>(i)], i);
    }
  }
  for (int64_t p : *pads) {
    if (p < 0) return KernelError(ctx, "All values in %s must be non-negative", pad_name);
  }
  if (DTypeSize(in.dtype()) == 0) return UnsupportedDType(ctx, in.dtype(), "numeric types");
  return absl::OkStatus();
}

// The output dims of SpaceToBatchND (`to_batch`) or BatchToSpaceND, checking divisibility and
// crops; sets `space_batch` to the small-batch side's batch size.
absl::Status SpaceBatchOutDims(const KernelContext& ctx, const Tensor& in,
                               const std::vector<int64_t>& block, const std::vector<int64_t>& pads,
                               bool to_batch, std::vector<int64_t>& out_dims,
                               int64_t& space_batch) {
  const size_t m = block.size();
  int64_t block_count = 1;
  for (int64_t b : block) block_count *= b;
  out_dims = in.dims();
  // The (padded / uncropped) spatial sizes of the small-batch side.
  space_batch = in.dim(0);
  std::vector<int64_t> padded(m);
  if (to_batch) {
    for (size_t i = 0; i < m; ++i) {
      padded[i] = in.dim(static_cast<int>(i + 1)) + pads[2 * i] + pads[2 * i + 1];
      if (padded[i] % block[i] != 0) {
        return KernelError(ctx, "padded_shape[%d]=%d is not divisible by block_shape[%d]=%d", i,
                           padded[i], i, block[i]);
      }
      out_dims[i + 1] = padded[i] / block[i];
    }
    out_dims[0] = in.dim(0) * block_count;
    return absl::OkStatus();
  }
  if (in.dim(0) % block_count != 0) {
    return KernelError(ctx,
                       "Input batch dimension (%d) is not divisible by product of block "
                       "sizes (%d)",
                       in.dim(0), block_count);
  }
  space_batch = in.dim(0) / block_count;
  out_dims[0] = space_batch;
  for (size_t i = 0; i < m; ++i) {
    padded[i] = in.dim(static_cast<int>(i + 1)) * block[i];
    out_dims[i + 1] = padded[i] - pads[2 * i] - pads[2 * i + 1];
    if (out_dims[i + 1] < 0) {
      return KernelError(ctx,
                         "Cropped size must be non-negative: start: %d end: %d "
                         "size %d",
                         pads[2 * i], pads[2 * i + 1], padded[i]);
    }
  }
  return absl::OkStatus();
}

// Moves each row of `rest` trailing elements between the batch side and the space side (to
// the batch side, zero-filling padding rows, when `to_batch`; else to the space side, dropping
// cropped rows).
void CopySpaceBatchRows(const KernelContext& ctx, const Tensor& in, Tensor& out,
                        const std::vector<int64_t>& block, const std::vector<int64_t>& pads,
                        int64_t space_batch, int64_t rest, bool to_batch) {
  const size_t m = block.size();
  const size_t elem = DTypeSize(in.dtype());
  const size_t bytes = static_cast<size_t>(rest) * elem;
  const char* x = static_cast<const char*>(in.raw_data());
  char* y = static_cast<char*>(out.raw_data());
  // The "batch"-side dims and the real (unpadded, uncropped) space-side dims.
  const std::vector<int64_t>& batch_dims = to_batch ? out.dims() : in.dims();
  const std::vector<int64_t>& space_dims = to_batch ? in.dims() : out.dims();
  int64_t batch_rows = 1;
  for (size_t d = 0; d <= m; ++d) batch_rows *= batch_dims[d];
  ParallelFor(ctx, batch_rows, rest + 8, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> coord(m + 1);
    for (int64_t r = begin; r < end; ++r) {
      int64_t t = r;
      for (size_t d = m + 1; d-- > 0;) {
        coord[d] = t % batch_dims[d];
        t /= batch_dims[d];
      }
      // Batch index = offset * space_batch + b, offsets row-major over the block dims.
      int64_t offset = coord[0] / space_batch;
      const int64_t b = coord[0] % space_batch;
      int64_t space_row = b;
      bool inside = true;
      for (size_t i = m; i-- > 0;) {
        const int64_t o = offset % block[i];
        offset /= block[i];
        coord[i + 1] = coord[i + 1] * block[i] + o - pads[2 * i];  // real space coordinate
        inside = inside && coord[i + 1] >= 0 && coord[i + 1] < space_dims[i + 1];
      }
      for (size_t i = 0; i < m && inside; ++i)
        space_row = space_row * space_dims[i + 1] + coord[i + 1];
      const size_t batch_at = static_cast<size_t>(r) * bytes;
      const size_t space_at = static_cast<size_t>(space_row) * bytes;
      if (to_batch) {
        if (inside) {
          std::memcpy(y + batch_at, x + space_at, bytes);
        } else {
          std::memset(y + batch_at, 0, bytes);
        }
      } else if (inside) {
        std::memcpy(y + space_at, x + batch_at, bytes);
      }
    }
  });
}

// Shared by both directions. `space` is the tensor with the large spatial dims and small batch
// ([B, P1..PM, rest], P = padded size), `batch` the one with [B * prod(block), P1/b1.., rest].
// SpaceToBatch writes `batch` from `space` (padding cells are zero); BatchToSpace writes the
// cropped `space` from `batch`.
absl::Status SpaceBatchKernel(KernelContext& ctx, bool to_batch) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> block, pads;
  TFJIT_RETURN_IF_ERROR(ReadBlockArgs(ctx, in, to_batch ? "paddings" : "crops", &block, &pads));
  int64_t rest = 1;
  for (int d = 1 + static_cast<int>(block.size()); d < in.rank(); ++d) rest *= in.dim(d);
  std::vector<int64_t> out_dims;
  int64_t space_batch = 0;
  TFJIT_RETURN_IF_ERROR(SpaceBatchOutDims(ctx, in, block, pads, to_batch, out_dims, space_batch));
  Tensor out(in.dtype(), out_dims);
  CopySpaceBatchRows(ctx, in, out, block, pads, space_batch, rest, to_batch);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status SpaceToBatchNDKernel(KernelContext& ctx) { return SpaceBatchKernel(ctx, true); }
absl::Status BatchToSpaceNDKernel(KernelContext& ctx) { return SpaceBatchKernel(ctx, false); }

}  // namespace

void RegisterImageKernels(KernelRegistry& registry) {
  registry.Register("ResizeBilinear", &ResizeBilinearKernel);
  registry.Register("DepthToSpace", &DepthSpaceKernel<true>);
  registry.Register("SpaceToDepth", &DepthSpaceKernel<false>);
  registry.Register("SpaceToBatchND", &SpaceToBatchNDKernel);
  registry.Register("BatchToSpaceND", &BatchToSpaceNDKernel);
}

}  // namespace tfjit::runtime
