// TF's per-pixel image formulas shared by the fallback kernels (runtime/kernels/
// image_more_kernels.cc) and the lowerings (compiler/tf2hlo/image_more_lowerings.cc):
// ResizeNearestNeighbor's source indices (TF's float arithmetic exactly, so both paths pick the
// same pixel at ties) and the RGB <-> HSV conversions of TF's colorspace ops. Header-only.
#ifndef TFJIT_CORE_IMAGE_OPS_H_
#define TFJIT_CORE_IMAGE_OPS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tfjit::image {

// The input row (or column) of each of `out` outputs: scale = (in - 1) / (out - 1) with
// align_corners (out > 1), else in / out, in float; source = x * scale (legacy) or
// (x + 0.5) * scale (half-pixel centers, no -0.5 for nearest); rounded with align_corners,
// floored otherwise; clamped to [0, in - 1].
inline std::vector<int64_t> NearestSourceIndices(int64_t in, int64_t out, bool align_corners,
                                                 bool half_pixel) {
  const float scale = (align_corners && out > 1)
                          ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                          : static_cast<float>(in) / static_cast<float>(out);
  std::vector<int64_t> r(static_cast<size_t>(out));
  for (int64_t x = 0; x < out; ++x) {
    const float src =
        half_pixel ? (static_cast<float>(x) + 0.5f) * scale : static_cast<float>(x) * scale;
    int64_t i = align_corners ? static_cast<int64_t>(std::round(src))
                              : static_cast<int64_t>(std::floor(src));
    i = std::min(i, in - 1);
    if (half_pixel) i = std::max<int64_t>(i, 0);
    r[static_cast<size_t>(x)] = i;
  }
  return r;
}

// RGB -> HSV: v = max, s = range / v (0 when v <= 0), h from the max channel in sixths,
// 0 without range, wrapped into [0, 1).
template <typename C>
void RgbToHsv(const C* rgb, C* hsv) {
  const C r = rgb[0], g = rgb[1], b = rgb[2];
  const C v = std::max(r, std::max(g, b));
  const C range = v - std::min(r, std::min(g, b));
  const C s = v > C(0) ? range / v : C(0);
  const C norm = C(1) / (C(6) * range);
  C h = r == v ? norm * (g - b)
               : (g == v ? norm * (b - r) + C(2) / C(6) : norm * (r - g) + C(4) / C(6));
  if (!(range > C(0))) h = C(0);
  if (h < C(0)) h += C(1);
  hsv[0] = h;
  hsv[1] = s;
  hsv[2] = v;
}

// HSV -> RGB: each channel v * (1 - s + s * ramp(h * 6)) with TF's piecewise-linear ramps.
template <typename C>
void HsvToRgb(const C* hsv, C* rgb) {
  const C h = hsv[0], s = hsv[1], v = hsv[2];
  const C dh = h * C(6);
  auto clamp01 = [](C x) { return std::min(std::max(x, C(0)), C(1)); };
  const C dr = clamp01(std::abs(dh - C(3)) - C(1));
  const C dg = clamp01(C(2) - std::abs(dh - C(2)));
  const C db = clamp01(C(2) - std::abs(dh - C(4)));
  const C one_s = C(1) - s;
  rgb[0] = v * (one_s + s * dr);
  rgb[1] = v * (one_s + s * dg);
  rgb[2] = v * (one_s + s * db);
}

// A hue shifted by a delta, back into [0, 1).
template <typename C>
C WrapHue(C h) {
  h = std::fmod(h, C(1));
  return h < C(0) ? h + C(1) : h;
}

}  // namespace tfjit::image

#endif  // TFJIT_CORE_IMAGE_OPS_H_
