// Fallback kernels of the image_more ops (docs/DESIGN.md, "Op families"), with TF's CPU
// semantics, dtypes and error messages: ResizeNearestNeighbor, RGBToHSV, HSVToRGB,
// AdjustContrastv2, AdjustSaturation, AdjustHue, ExtractImagePatches, and the TF-only
// ResizeArea, ResizeBicubic, CropAndResize, DrawBoundingBoxes(V2) and ScaleAndTranslate. The colour
// formulas are TF's colorspace ones, computed in float (double for float64 images).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/image_ops.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

// ---- ResizeNearestNeighbor ----

absl::Status ResizeNearestKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  bool align = false, half_pixel = false;
  TFJIT_RETURN_IF_ERROR(ResizeFlags(ctx, &align, &half_pixel));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ResizeOutputSize(ctx));
  const std::vector<int64_t> ys =
      image::NearestSourceIndices(in.dim(1), size[0], align, half_pixel);
  const std::vector<int64_t> xs =
      image::NearestSourceIndices(in.dim(2), size[1], align, half_pixel);
  Tensor out(in.dtype(), {in.dim(0), size[0], size[1], in.dim(3)});
  const int64_t depth = in.dim(3), bytes = static_cast<int64_t>(DTypeSize(in.dtype()));
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  const int64_t rows = in.dim(0) * size[0];
  ParallelFor(ctx, rows, size[1] * depth + 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / size[0], y = r % size[0];
      for (int64_t x = 0; x < size[1]; ++x) {
        const int64_t from = ((n * in.dim(1) + ys[static_cast<size_t>(y)]) * in.dim(2) +
                              xs[static_cast<size_t>(x)]) *
                             depth;
        std::copy_n(src + from * bytes, depth * bytes, dst + (r * size[1] + x) * depth * bytes);
      }
    }
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Colour spaces and adjustments ----

// Runs `pixel(in, out)` over every 3-channel pixel of the images (last dim 3) in the compute
// type C of T; `floats` lists the supported dtypes for the error.
template <typename Pixel>
absl::Status MapPixels(KernelContext& ctx, bool with_double, const char* floats,
                       const Pixel& pixel) {
  const Tensor& in = ctx.input(0);
  if (in.rank() < 1 || in.dim(in.rank() - 1) != 3) {
    return KernelError(ctx, "input must have 3 channels but input only has %d channels: %s",
                       in.rank() < 1 ? 0 : in.dim(in.rank() - 1), in.ShapeString());
  }
  Tensor out(in.dtype(), in.dims());
  const int64_t pixels = in.num_elements() / 3;
  const bool ok = DispatchFloat(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    ParallelFor(ctx, pixels, 40, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        C v[3] = {static_cast<C>(x[3 * p]), static_cast<C>(x[3 * p + 1]),
                  static_cast<C>(x[3 * p + 2])};
        C r[3];
        pixel(v, r);
        for (int k = 0; k < 3; ++k) y[3 * p + k] = static_cast<T>(r[k]);
      }
    });
  });
  if (!ok || (!with_double && in.dtype() == DType::kFloat64) ||
      (!with_double && in.dtype() == DType::kBFloat16)) {
    return UnsupportedDType(ctx, in.dtype(), floats);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status RgbToHsvKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  return MapPixels(ctx, true, "float16, bfloat16, float32, float64",
                   [](const auto* v, auto* r) { image::RgbToHsv(v, r); });
}

absl::Status HsvToRgbKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  return MapPixels(ctx, true, "float16, bfloat16, float32, float64",
                   [](const auto* v, auto* r) { image::HsvToRgb(v, r); });
}

// The scalar float input `i` (contrast_factor, delta, scale).
absl::StatusOr<float> ScalarFloatInput(const KernelContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 0 || t.dtype() != DType::kFloat32) {
    return KernelError(ctx, "%s must be a float32 scalar: %s", what, t.ShapeString());
  }
  return t.data<float>()[0];
}

absl::Status CheckImages(const KernelContext& ctx) {
  if (ctx.input(0).rank() < 3) {
    return KernelError(ctx, "input must be at least 3-D, got shape %s", ctx.input(0).ShapeString());
  }
  return absl::OkStatus();
}

// hsv' = (h + delta wrapped into [0, 1), s, v).
absl::Status AdjustHueKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_RETURN_IF_ERROR(CheckImages(ctx));
  TFJIT_ASSIGN_OR_RETURN(float delta, ScalarFloatInput(ctx, 1, "delta"));
  return MapPixels(ctx, false, "float16, float32", [delta](const auto* v, auto* r) {
    using C = std::decay_t<decltype(*r)>;
    C hsv[3];
    image::RgbToHsv(v, hsv);
    hsv[0] = image::WrapHue(hsv[0] + static_cast<C>(delta));
    image::HsvToRgb(hsv, r);
  });
}

// hsv' = (h, clamp(s * scale, 0, 1), v).
absl::Status AdjustSaturationKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_RETURN_IF_ERROR(CheckImages(ctx));
  TFJIT_ASSIGN_OR_RETURN(float scale, ScalarFloatInput(ctx, 1, "scale"));
  return MapPixels(ctx, false, "float16, float32", [scale](const auto* v, auto* r) {
    using C = std::decay_t<decltype(*r)>;
    C hsv[3];
    image::RgbToHsv(v, hsv);
    hsv[1] = std::min(std::max(hsv[1] * static_cast<C>(scale), C(0)), C(1));
    image::HsvToRgb(hsv, r);
  });
}

// y = (x - mean) * contrast_factor + mean, the mean over H and W (dims -3, -2) per image and
// channel, in float.
absl::Status AdjustContrastKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_RETURN_IF_ERROR(CheckImages(ctx));
  TFJIT_ASSIGN_OR_RETURN(float factor, ScalarFloatInput(ctx, 1, "contrast_factor"));
  const Tensor& in = ctx.input(0);
  const int r = in.rank();
  const int64_t hw = in.dim(r - 3) * in.dim(r - 2), c_n = in.dim(r - 1);
  const int64_t batch = hw * c_n == 0 ? 0 : in.num_elements() / (hw * c_n);
  Tensor out(in.dtype(), in.dims());
  const bool ok = DispatchFloat(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data<T>();
    T* y = out.data<T>();
    ParallelFor(ctx, batch, hw * c_n * 4 + 1, [&](int64_t begin, int64_t end) {
      std::vector<float> mean(static_cast<size_t>(c_n));
      for (int64_t b = begin; b < end; ++b) {
        const T* xb = x + b * hw * c_n;
        T* yb = y + b * hw * c_n;
        std::fill(mean.begin(), mean.end(), 0.0f);
        for (int64_t p = 0; p < hw; ++p) {
          for (int64_t c = 0; c < c_n; ++c)
            mean[static_cast<size_t>(c)] += static_cast<float>(xb[p * c_n + c]);
        }
        for (float& m : mean) m /= static_cast<float>(hw);
        for (int64_t p = 0; p < hw; ++p) {
          for (int64_t c = 0; c < c_n; ++c) {
            const float m = mean[static_cast<size_t>(c)];
            yb[p * c_n + c] =
                static_cast<T>((static_cast<float>(xb[p * c_n + c]) - m) * factor + m);
          }
        }
      }
    });
  });
  if (!ok || in.dtype() == DType::kFloat64 || in.dtype() == DType::kBFloat16) {
    return UnsupportedDType(ctx, in.dtype(), "float16, float32");
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- ExtractImagePatches ----

// The validated window of an ExtractImagePatches node on input dims `x`: for each spatial dim
// (1 = H, 2 = W) TF's size, stride, rate, output size and leading pad.
struct PatchDim {
  int64_t k = 1, stride = 1, rate = 1, out = 0, pad = 0;
};

absl::StatusOr<std::vector<PatchDim>> PatchGeometry(const KernelContext& ctx, const Tensor& x) {
  if (x.rank() != 4) {
    return KernelError(ctx, "input must be 4-dimensional, got %s", x.ShapeString());
  }
  std::vector<int64_t> lists[3];
  const char* names[3] = {"ksizes", "strides", "rates"};
  for (int i = 0; i < 3; ++i) {
    TFJIT_ASSIGN_OR_RETURN(lists[i], tf::GetIntListAttr(ctx.node(), names[i]));
    if (lists[i].size() != 4 || lists[i][0] != 1 || lists[i][3] != 1) {
      return KernelError(ctx, "Only support %s across space: %s must be [1, h, w, 1], got %s",
                         names[i], names[i], DimsString(lists[i]));
    }
  }
  TFJIT_ASSIGN_OR_RETURN(std::string padding, tf::GetStringAttr(ctx.node(), "padding"));
  if (padding != "SAME" && padding != "VALID") {
    return KernelError(ctx, "padding must be SAME or VALID, got '%s'", padding);
  }
  std::vector<PatchDim> dims;
  for (size_t d = 1; d <= 2; ++d) {
    PatchDim p{lists[0][d], lists[1][d], lists[2][d], 0, 0};
    if (p.k < 1 || p.stride < 1 || p.rate < 1) {
      return KernelError(ctx, "ksizes, strides and rates must be >= 1");
    }
    const int64_t in = x.dim(static_cast<int>(d)), eff = (p.k - 1) * p.rate + 1;
    if (padding == "SAME") {
      p.out = (in + p.stride - 1) / p.stride;
      p.pad = std::max<int64_t>((p.out - 1) * p.stride + eff - in, 0) / 2;
    } else {
      p.out = in >= eff ? (in - eff) / p.stride + 1 : 0;
    }
    dims.push_back(p);
  }
  return dims;
}

// out[n, y, x, (i * kw + j) * C + c] = in[n, y * sh + i * rh - ph, x * sw + j * rw - pw, c],
// 0 outside the input.
absl::Status ExtractImagePatchesKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(std::vector<PatchDim> g, PatchGeometry(ctx, in));
  const PatchDim& h = g[0];
  const PatchDim& w = g[1];
  const int64_t depth = in.dim(3), bytes = static_cast<int64_t>(DTypeSize(in.dtype()));
  const int64_t out_depth = h.k * w.k * depth;
  Tensor out(in.dtype(), {in.dim(0), h.out, w.out, out_depth});
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  ParallelFor(ctx, in.dim(0) * h.out, w.out * out_depth + 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / h.out, oy = r % h.out;
      for (int64_t ox = 0; ox < w.out; ++ox) {
        char* o = dst + (r * w.out + ox) * out_depth * bytes;
        for (int64_t i = 0; i < h.k; ++i) {
          const int64_t iy = oy * h.stride + i * h.rate - h.pad;
          for (int64_t j = 0; j < w.k; ++j) {
            const int64_t ix = ox * w.stride + j * w.rate - w.pad;
            char* to = o + (i * w.k + j) * depth * bytes;
            if (iy < 0 || iy >= in.dim(1) || ix < 0 || ix >= in.dim(2)) continue;  // zeros
            std::copy_n(src + ((n * in.dim(1) + iy) * in.dim(2) + ix) * depth * bytes,
                        depth * bytes, to);
          }
        }
      }
    }
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- ResizeArea / ResizeBicubic / CropAndResize (TF-only; float outputs) ----

float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  return (align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                    : static_cast<float>(in) / static_cast<float>(out);
}

// Runs fn(T{}) for TF's real number types (the resizes' T); false for others.
template <typename F>
bool DispatchImage(DType t, F&& f) {
  return DispatchReal(t, [&](auto tag) {
    if constexpr (!std::is_same_v<decltype(tag), bool>) f(tag);
  });
}

// One source cell of an area or cubic filter: its (clamped) index and weight.
struct Tap {
  int64_t index;
  float weight;
};

// ResizeArea's cells of output `o`: every input cell [i, i + 1) overlapping [o * s, (o + 1) * s),
// weighted by the overlap (TF's start/end scales), indices clamped to the input.
std::vector<std::vector<Tap>> AreaTaps(int64_t in, int64_t out, float scale) {
  std::vector<std::vector<Tap>> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const float lo = static_cast<float>(o) * scale, hi = static_cast<float>(o + 1) * scale;
    for (int64_t i = static_cast<int64_t>(std::floor(lo)); i < static_cast<int64_t>(std::ceil(hi));
         ++i) {
      const float fi = static_cast<float>(i);
      const float w =
          fi < lo ? (fi + 1 > hi ? scale : fi + 1 - lo) : (fi + 1 > hi ? hi - fi : 1.0f);
      taps[static_cast<size_t>(o)].push_back({std::min(std::max<int64_t>(i, 0), in - 1), w});
    }
  }
  return taps;
}

// out[b, y, x, c] = sum over (y, x) taps of wy * wx * in[...] / (scale_y * scale_x).
absl::Status ResizeAreaKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_ASSIGN_OR_RETURN(bool align, tf::GetBoolAttrOr(ctx.node(), "align_corners", false));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ResizeOutputSize(ctx));
  const Tensor& in = ctx.input(0);
  const float sy = ResizeScale(in.dim(1), size[0], align);
  const float sx = ResizeScale(in.dim(2), size[1], align);
  const auto ys = AreaTaps(in.dim(1), size[0], sy), xs = AreaTaps(in.dim(2), size[1], sx);
  const float norm = 1.0f / (sy * sx);
  Tensor out(DType::kFloat32, {in.dim(0), size[0], size[1], in.dim(3)});
  const int64_t depth = in.dim(3);
  const bool ok = DispatchImage(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = in.data<T>();
    float* py = out.data<float>();
    ParallelFor(
        ctx, in.dim(0) * size[0], size[1] * depth * 16 + 1, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t n = r / size[0], y = r % size[0];
            for (int64_t x = 0; x < size[1]; ++x) {
              for (int64_t c = 0; c < depth; ++c) {
                float sum = 0;
                for (const Tap& ty : ys[static_cast<size_t>(y)]) {
                  float row = 0;
                  for (const Tap& tx : xs[static_cast<size_t>(x)]) {
                    row +=
                        static_cast<float>(
                            px[((n * in.dim(1) + ty.index) * in.dim(2) + tx.index) * depth + c]) *
                        tx.weight;
                  }
                  sum += row * ty.weight;
                }
                py[((r * size[1]) + x) * depth + c] = sum * norm;
              }
            }
          }
        });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "floating-point and integer types");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// TF's bicubic taps: the 4 cells around the source position with coefficients from a
// 1024-entry table of the cubic kernel (A = -0.5, Keys, with half-pixel centers, which also
// zeroes out-of-image taps and renormalises; A = -0.75 clamping indices otherwise).
std::vector<std::array<Tap, 4>> CubicTaps(int64_t in, int64_t out, float scale, bool half) {
  constexpr int kTable = 1024;
  const double a = half ? -0.5 : -0.75;
  std::vector<float> table(2 * (kTable + 1));
  for (int i = 0; i <= kTable; ++i) {
    float x = static_cast<float>(i * 1.0 / kTable);
    table[static_cast<size_t>(2 * i)] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
    x += 1.0f;
    table[static_cast<size_t>(2 * i + 1)] =
        static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
  }
  auto bound = [in](int64_t v) { return std::min(in - 1, std::max<int64_t>(0, v)); };
  std::vector<std::array<Tap, 4>> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const float src =
        half ? (static_cast<float>(o) + 0.5f) * scale - 0.5f : static_cast<float>(o) * scale;
    const int64_t base = static_cast<int64_t>(std::floor(src));
    const int64_t off =
        static_cast<int64_t>(std::lrintf((src - static_cast<float>(base)) * kTable));
    const float w[4] = {table[static_cast<size_t>(off * 2 + 1)],
                        table[static_cast<size_t>(off * 2)],
                        table[static_cast<size_t>((kTable - off) * 2)],
                        table[static_cast<size_t>((kTable - off) * 2 + 1)]};
    std::array<Tap, 4>& t = taps[static_cast<size_t>(o)];
    float sum = 0;
    for (int k = 0; k < 4; ++k) {
      const int64_t i = base - 1 + k;
      t[static_cast<size_t>(k)] = {bound(i), (!half || bound(i) == i) ? w[k] : 0.0f};
      sum += t[static_cast<size_t>(k)].weight;
    }
    if (half && std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
      for (Tap& tap : t) tap.weight *= 1.0f / sum;
    }
  }
  return taps;
}

absl::Status ResizeBicubicKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  bool align = false, half = false;
  TFJIT_RETURN_IF_ERROR(ResizeFlags(ctx, &align, &half));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ResizeOutputSize(ctx));
  const Tensor& in = ctx.input(0);
  const auto ys = CubicTaps(in.dim(1), size[0], ResizeScale(in.dim(1), size[0], align), half);
  const auto xs = CubicTaps(in.dim(2), size[1], ResizeScale(in.dim(2), size[1], align), half);
  Tensor out(DType::kFloat32, {in.dim(0), size[0], size[1], in.dim(3)});
  const int64_t depth = in.dim(3);
  const bool ok = DispatchImage(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = in.data<T>();
    float* py = out.data<float>();
    ParallelFor(
        ctx, in.dim(0) * size[0], size[1] * depth * 32 + 1, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t n = r / size[0], y = r % size[0];
            for (int64_t x = 0; x < size[1]; ++x) {
              for (int64_t c = 0; c < depth; ++c) {
                float sum = 0;
                for (const Tap& ty : ys[static_cast<size_t>(y)]) {
                  float row = 0;
                  for (const Tap& tx : xs[static_cast<size_t>(x)]) {
                    row +=
                        static_cast<float>(
                            px[((n * in.dim(1) + ty.index) * in.dim(2) + tx.index) * depth + c]) *
                        tx.weight;
                  }
                  sum += row * ty.weight;
                }
                py[((r * size[1]) + x) * depth + c] = sum;
              }
            }
          }
        });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "floating-point and integer types");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Checks CropAndResize's image (4-D, positive size), boxes [num_boxes, 4] float32, box_ind
// (int32, in range) and crop_size (two positive values); returns crop_size.
absl::StatusOr<std::vector<int64_t>> CheckCropAndResizeInputs(const KernelContext& ctx) {
  const Tensor& image = ctx.input(0);
  const Tensor& boxes = ctx.input(1);
  const Tensor& box_ind = ctx.input(2);
  if (image.rank() != 4) {
    return KernelError(ctx, "input image must be 4-D, got %s", image.ShapeString());
  }
  if (image.dim(1) <= 0 || image.dim(2) <= 0) {
    return KernelError(ctx, "image dimensions must be positive, got %s", image.ShapeString());
  }
  const int64_t num_boxes = boxes.rank() == 2 ? boxes.dim(0) : -1;
  if (boxes.dtype() != DType::kFloat32 || boxes.rank() != 2 || boxes.dim(1) != 4) {
    return KernelError(ctx, "boxes must be a float32 matrix [num_boxes, 4], got %s",
                       boxes.ShapeString());
  }
  if (box_ind.dtype() != DType::kInt32 || box_ind.rank() != 1 || box_ind.dim(0) != num_boxes) {
    return KernelError(ctx, "box_index must be an int32 vector of %d entries, got %s", num_boxes,
                       box_ind.ShapeString());
  }
  std::vector<int64_t> crop;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(3), "crop_size", &crop));
  if (crop.size() != 2 || crop[0] <= 0 || crop[1] <= 0) {
    return KernelError(ctx, "crop_size must be two positive values, got %s", DimsString(crop));
  }
  const int32_t* bi = box_ind.data<int32_t>();
  for (int64_t b = 0; b < num_boxes; ++b) {
    if (bi[b] < 0 || bi[b] >= image.dim(0)) {
      return KernelError(ctx, "box_index has values outside [0, batch_size)");
    }
  }
  return crop;
}

// Samples every box of `boxes` from `image` into `out` [num_boxes, crop_h, crop_w, depth],
// one output row (box, y) at a time.
template <typename T>
void CropAndResizeRows(const KernelContext& ctx, const Tensor& image, const Tensor& boxes,
                       const Tensor& box_ind, bool bilinear, float extrapolation, Tensor& out) {
  const int64_t h = image.dim(1), w = image.dim(2), depth = image.dim(3);
  const int64_t num_boxes = out.dim(0), ch = out.dim(1), cw = out.dim(2);
  const int32_t* bi = box_ind.data<int32_t>();
  const float* bx = boxes.data<float>();
  const T* px = image.data<T>();
  float* py = out.data<float>();
  auto at = [&](int64_t n, int64_t y, int64_t x, int64_t c) {
    return static_cast<float>(px[((n * h + y) * w + x) * depth + c]);
  };
  ParallelFor(ctx, num_boxes * ch, cw * depth * 8 + 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / ch, y = r % ch, n = bi[b];
      const float y1 = bx[4 * b], x1 = bx[4 * b + 1], y2 = bx[4 * b + 2], x2 = bx[4 * b + 3];
      const float hs =
          ch > 1 ? (y2 - y1) * static_cast<float>(h - 1) / static_cast<float>(ch - 1) : 0;
      const float ws =
          cw > 1 ? (x2 - x1) * static_cast<float>(w - 1) / static_cast<float>(cw - 1) : 0;
      const float in_y = ch > 1 ? y1 * static_cast<float>(h - 1) + static_cast<float>(y) * hs
                                : static_cast<float>(0.5 * (y1 + y2) * static_cast<double>(h - 1));
      float* row = py + r * cw * depth;
      if (in_y < 0 || in_y > static_cast<float>(h - 1)) {
        std::fill(row, row + cw * depth, extrapolation);
        continue;
      }
      const int64_t top = static_cast<int64_t>(std::floor(in_y));
      const int64_t bottom = static_cast<int64_t>(std::ceil(in_y));
      const float y_lerp = in_y - static_cast<float>(top);
      for (int64_t x = 0; x < cw; ++x) {
        const float in_x = cw > 1
                               ? x1 * static_cast<float>(w - 1) + static_cast<float>(x) * ws
                               : static_cast<float>(0.5 * (x1 + x2) * static_cast<double>(w - 1));
        float* o = row + x * depth;
        if (in_x < 0 || in_x > static_cast<float>(w - 1)) {
          std::fill(o, o + depth, extrapolation);
          continue;
        }
        if (!bilinear) {
          const int64_t ny = static_cast<int64_t>(std::round(in_y));
          const int64_t nx = static_cast<int64_t>(std::round(in_x));
          for (int64_t c = 0; c < depth; ++c) o[c] = at(n, ny, nx, c);
          continue;
        }
        const int64_t left = static_cast<int64_t>(std::floor(in_x));
        const int64_t right = static_cast<int64_t>(std::ceil(in_x));
        const float x_lerp = in_x - static_cast<float>(left);
        for (int64_t c = 0; c < depth; ++c) {
          const float tl = at(n, top, left, c), tr = at(n, top, right, c);
          const float bl = at(n, bottom, left, c), br = at(n, bottom, right, c);
          const float t = tl + (tr - tl) * x_lerp, bt = bl + (br - bl) * x_lerp;
          o[c] = t + (bt - t) * y_lerp;
        }
      }
    }
  });
}

// CropAndResize(image, boxes, box_ind, crop_size): each box [y1, x1, y2, x2] (normalised)
// sampled on a crop_h x crop_w grid, bilinear or nearest; samples outside the image get
// extrapolation_value.
absl::Status CropAndResizeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  const Tensor& image = ctx.input(0);
  const Tensor& boxes = ctx.input(1);
  const Tensor& box_ind = ctx.input(2);
  TFJIT_ASSIGN_OR_RETURN(std::string method, tf::GetStringAttrOr(ctx.node(), "method", "bilinear"));
  TFJIT_ASSIGN_OR_RETURN(float extrapolation,
                         tf::GetFloatAttrOr(ctx.node(), "extrapolation_value", 0.0f));
  if (method != "bilinear" && method != "nearest") {
    return KernelError(ctx, "method must be 'bilinear' or 'nearest', got '%s'", method);
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> crop, CheckCropAndResizeInputs(ctx));
  Tensor out(DType::kFloat32, {boxes.dim(0), crop[0], crop[1], image.dim(3)});
  const bool bilinear = method == "bilinear";
  const bool ok = DispatchImage(image.dtype(), [&](auto tag) {
    CropAndResizeRows<decltype(tag)>(ctx, image, boxes, box_ind, bilinear, extrapolation, out);
  });
  if (!ok) return UnsupportedDType(ctx, image.dtype(), "floating-point and integer types");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- DrawBoundingBoxesV2 (TF-only) ----

// The outline colours: the optional colors input (at least `depth` channels, padded with 0 to
// RGBA) or TF's default table when it is absent or empty; grey images draw white-first.
absl::StatusOr<std::vector<std::array<float, 4>>> ReadBoxColors(const KernelContext& ctx,
                                                                int64_t depth) {
  std::vector<std::array<float, 4>> colors;
  if (ctx.num_inputs() > 2) {
    const Tensor& c = ctx.input(2);
    if (c.dtype() != DType::kFloat32 || c.rank() != 2) {
      return KernelError(ctx, "colors must be a 2-D float32 matrix, got %s", c.ShapeString());
    }
    if (c.dim(1) < depth) {
      return KernelError(ctx,
                         "colors must have equal or more channels than the image provided: "
                         "%s",
                         c.ShapeString());
    }
    for (int64_t i = 0; i < c.dim(0); ++i) {
      std::array<float, 4> v{0, 0, 0, 0};
      for (int64_t j = 0; j < std::min<int64_t>(c.dim(1), 4); ++j)
        v[static_cast<size_t>(j)] = c.data<float>()[i * c.dim(1) + j];
      colors.push_back(v);
    }
  }
  if (colors.empty()) {
    colors = {{1, 1, 0, 1},     {0, 0, 1, 1},   {1, 0, 0, 1},   {0, 1, 0, 1}, {0.5, 0, 0.5, 1},
              {0.5, 0.5, 0, 1}, {0.5, 0, 0, 1}, {0, 0, 0.5, 1}, {0, 1, 1, 1}, {1, 0, 1, 1}};
  }
  if (depth == 1) {
    for (auto& c : colors) c[0] = 1;
  }
  return colors;
}

// Paints each box's in-image outline edges onto `out` (a copy of the images), box by box.
template <typename T>
void DrawBoxOutlines(const Tensor& boxes, const std::vector<std::array<float, 4>>& colors,
                     Tensor& out) {
  const int64_t batch = out.dim(0), h = out.dim(1), w = out.dim(2), depth = out.dim(3);
  T* canvas = out.data<T>();
  const float* pb = boxes.data<float>();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t k = 0; k < boxes.dim(1); ++k) {
      const float* box = pb + (b * boxes.dim(1) + k) * 4;
      const std::array<float, 4>& color = colors[static_cast<size_t>(k) % colors.size()];
      const int64_t top = static_cast<int64_t>(box[0] * static_cast<float>(h - 1));
      const int64_t bottom = static_cast<int64_t>(box[2] * static_cast<float>(h - 1));
      const int64_t left = static_cast<int64_t>(box[1] * static_cast<float>(w - 1));
      const int64_t right = static_cast<int64_t>(box[3] * static_cast<float>(w - 1));
      if (top > bottom || left > right || top >= h || bottom < 0 || left >= w || right < 0) {
        continue;
      }
      auto paint = [&](int64_t y, int64_t x) {
        for (int64_t c = 0; c < depth; ++c) {
          canvas[((b * h + y) * w + x) * depth + c] = static_cast<T>(color[static_cast<size_t>(c)]);
        }
      };
      const int64_t y0 = std::max<int64_t>(top, 0), y1 = std::min(bottom, h - 1);
      const int64_t x0 = std::max<int64_t>(left, 0), x1 = std::min(right, w - 1);
      for (int64_t x = x0; x <= x1; ++x) {
        if (top >= 0) paint(top, x);
        if (bottom < h) paint(bottom, x);
      }
      for (int64_t y = y0; y <= y1; ++y) {
        if (left >= 0) paint(y, left);
        if (right < w) paint(y, right);
      }
    }
  }
}

// Copies the images and draws each box's one-pixel outline in colour box % num_colors (TF's
// default table when colors is empty; white-first for grey images). Box corners scale by
// (size - 1) and truncate; inverted or wholly outside boxes are skipped, edges outside the
// image are not drawn.
absl::Status DrawBoundingBoxesKernel(KernelContext& ctx) {
  const Tensor& images = ctx.input(0);
  const Tensor& boxes = ctx.input(1);
  if (images.rank() != 4) {
    return KernelError(ctx, "The rank of the images should be 4, got %s", images.ShapeString());
  }
  const int64_t batch = images.dim(0), depth = images.dim(3);
  if (depth != 1 && depth != 3 && depth != 4) {
    return KernelError(ctx, "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA), got %d",
                       depth);
  }
  if (boxes.dtype() != DType::kFloat32 || boxes.rank() != 3 || boxes.dim(0) != batch ||
      boxes.dim(2) != 4) {
    return KernelError(ctx, "boxes must be float32 [batch, num_boxes, 4] for images %s, got %s",
                       images.ShapeString(), boxes.ShapeString());
  }
  using Colors = std::vector<std::array<float, 4>>;
  TFJIT_ASSIGN_OR_RETURN(const Colors colors, ReadBoxColors(ctx, depth));
  Tensor out = images.Clone();
  const bool ok = DispatchFloat(images.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half>) {
      DrawBoxOutlines<T>(boxes, colors, out);
    }
  });
  if (!ok || (images.dtype() != DType::kFloat32 && images.dtype() != DType::kFloat16)) {
    return UnsupportedDType(ctx, images.dtype(), "float16, float32");
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- ScaleAndTranslate (TF-only) ----

// TF's sampling kernels (sampling_kernels.h) by name: the filter at |x| and its radius.
struct SamplingKernel {
  float radius = 0;
  float (*fn)(float x, float radius) = nullptr;
};

float Lanczos(float x, float radius) {
  x = std::abs(x);
  if (x > radius) return 0.0f;
  if (x <= 1e-3f) return 1.0f;
  const float pi_x = static_cast<float>(M_PI) * x;
  return radius * std::sin(pi_x) * std::sin(pi_x / radius) / (pi_x * pi_x);
}
float GaussianKernel(float x, float radius) {
  x = std::abs(x);
  constexpr float kSigma = 0.5f;
  return x >= radius ? 0.0f : std::exp(-x * x / (2.0f * kSigma * kSigma));
}
float BoxKernel(float x, float) {
  x = std::abs(x);
  return x < 0.5f ? 1.0f : (x == 0.5f ? 0.5f : 0.0f);
}
float TriangleKernel(float x, float) {
  x = std::abs(x);
  return x < 1.0f ? 1.0f - x : 0.0f;
}
float KeysCubicKernel(float x, float) {
  x = std::abs(x);
  if (x >= 2.0f) return 0.0f;
  if (x >= 1.0f) return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
  return ((1.5f * x - 2.5f) * x) * x + 1.0f;
}
float MitchellCubicKernel(float x, float) {
  x = std::abs(x);
  if (x >= 2.0f) return 0.0f;
  if (x >= 1.0f) {
    return (((-7.0f / 18.0f) * x + 2.0f) * x - 10.0f / 3.0f) * x + 16.0f / 9.0f;
  }
  return (((7.0f / 6.0f) * x - 2.0f) * x) * x + 8.0f / 9.0f;
}

std::optional<SamplingKernel> FindSamplingKernel(const std::string& name) {
  if (name == "lanczos1") return SamplingKernel{1.0f, Lanczos};
  if (name == "lanczos3") return SamplingKernel{3.0f, Lanczos};
  if (name == "lanczos5") return SamplingKernel{5.0f, Lanczos};
  if (name == "gaussian") return SamplingKernel{1.5f, GaussianKernel};
  if (name == "box") return SamplingKernel{1.0f, BoxKernel};
  if (name == "triangle") return SamplingKernel{1.0f, TriangleKernel};
  if (name == "keyscubic") return SamplingKernel{2.0f, KeysCubicKernel};
  if (name == "mitchellcubic") return SamplingKernel{2.0f, MitchellCubicKernel};
  return std::nullopt;
}

// Output pixel o's input taps: centre (o + 0.5) / scale - translate / scale; the kernel
// widened by 1 / scale when antialiasing a downscale; taps clamped to the image and weights
// normalised to sum 1; none when the centre falls outside [0, in].
std::vector<std::vector<Tap>> SpanTaps(const SamplingKernel& k, int64_t out, int64_t in,
                                       float scale, float translate, bool antialias) {
  const float inv_scale = 1.0f / scale, inv_translate = -inv_scale * translate;
  const float kscale = antialias ? std::max(inv_scale, 1.0f) : 1.0f;
  std::vector<std::vector<Tap>> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const float centre = (static_cast<float>(o) + 0.5f) * inv_scale + inv_translate;
    if (centre < 0 || centre > static_cast<float>(in)) continue;
    const int64_t lo = std::min(
        std::max<int64_t>(static_cast<int64_t>(std::ceil(centre - k.radius * kscale - 0.5f)), 0),
        in - 1);
    const int64_t hi =
        std::min(std::max<int64_t>(
                     static_cast<int64_t>(std::floor(centre + k.radius * kscale - 0.5f)), 0),
                 in - 1) +
        1;
    std::vector<Tap>& t = taps[static_cast<size_t>(o)];
    float sum = 0;
    for (int64_t i = lo; i < hi; ++i) {
      const float w = k.fn(std::abs((static_cast<float>(i) + 0.5f - centre) / kscale), k.radius);
      t.push_back({i, w});
      sum += w;
    }
    if (std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
      for (Tap& tap : t) tap.weight *= 1.0f / sum;
    } else {
      for (Tap& tap : t) tap.weight = 0;
    }
  }
  return taps;
}

// The 2-element float input `i` (scale, translation).
absl::StatusOr<std::array<float, 2>> FloatPair(const KernelContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DType::kFloat32 || t.rank() != 1 || t.dim(0) != 2) {
    return KernelError(ctx, "%s must be a float32 vector of 2 elements, got %s", what,
                       t.ShapeString());
  }
  return std::array<float, 2>{t.data<float>()[0], t.data<float>()[1]};
}

absl::Status ScaleAndTranslateKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  TFJIT_ASSIGN_OR_RETURN(std::string kernel_type,
                         tf::GetStringAttrOr(ctx.node(), "kernel_type", "lanczos3"));
  TFJIT_ASSIGN_OR_RETURN(bool antialias, tf::GetBoolAttrOr(ctx.node(), "antialias", true));
  const std::optional<SamplingKernel> k = FindSamplingKernel(kernel_type);
  if (!k.has_value()) {
    return KernelError(ctx, "Unrecognized kernel type: %s", kernel_type);
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ResizeOutputSize(ctx));
  TFJIT_ASSIGN_OR_RETURN(auto scale, FloatPair(ctx, 2, "scale"));
  TFJIT_ASSIGN_OR_RETURN(auto translate, FloatPair(ctx, 3, "translation"));
  if (!(scale[0] > 0) || !(scale[1] > 0)) {
    return KernelError(ctx, "Scale must be greater than zero, got [%g, %g]", scale[0], scale[1]);
  }
  const Tensor& in = ctx.input(0);
  const auto ys = SpanTaps(*k, size[0], in.dim(1), scale[0], translate[0], antialias);
  const auto xs = SpanTaps(*k, size[1], in.dim(2), scale[1], translate[1], antialias);
  Tensor out(DType::kFloat32, {in.dim(0), size[0], size[1], in.dim(3)});
  const int64_t depth = in.dim(3);
  const bool ok = DispatchImage(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = in.data<T>();
    float* py = out.data<float>();
    ParallelFor(
        ctx, in.dim(0) * size[0], size[1] * depth * 32 + 1, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t n = r / size[0], y = r % size[0];
            for (int64_t x = 0; x < size[1]; ++x) {
              for (int64_t c = 0; c < depth; ++c) {
                float sum = 0;
                for (const Tap& ty : ys[static_cast<size_t>(y)]) {
                  float row = 0;
                  for (const Tap& tx : xs[static_cast<size_t>(x)]) {
                    row +=
                        static_cast<float>(
                            px[((n * in.dim(1) + ty.index) * in.dim(2) + tx.index) * depth + c]) *
                        tx.weight;
                  }
                  sum += row * ty.weight;
                }
                py[((r * size[1]) + x) * depth + c] = sum;
              }
            }
          }
        });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "floating-point and integer types");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterImageMoreKernels(KernelRegistry& registry) {
  registry.Register("ResizeNearestNeighbor", &ResizeNearestKernel);
  registry.Register("RGBToHSV", &RgbToHsvKernel);
  registry.Register("HSVToRGB", &HsvToRgbKernel);
  registry.Register("AdjustHue", &AdjustHueKernel);
  registry.Register("AdjustSaturation", &AdjustSaturationKernel);
  registry.Register("AdjustContrastv2", &AdjustContrastKernel);
  registry.Register("ExtractImagePatches", &ExtractImagePatchesKernel);
  registry.Register("ResizeArea", &ResizeAreaKernel);
  registry.Register("ResizeBicubic", &ResizeBicubicKernel);
  registry.Register("CropAndResize", &CropAndResizeKernel);
  registry.Register("DrawBoundingBoxes", &DrawBoundingBoxesKernel);
  registry.Register("DrawBoundingBoxesV2", &DrawBoundingBoxesKernel);
  registry.Register("ScaleAndTranslate", &ScaleAndTranslateKernel);
}

}  // namespace tfjit::runtime
