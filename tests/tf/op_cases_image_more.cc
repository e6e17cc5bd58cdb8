// Differential cases of the image_more ops (docs/DESIGN.md, "Op families"): kernel vs evaluator
// vs CPU JIT, each against an independent reference where one is given: ResizeNearestNeighbor
// in its three coordinate modes and several dtypes, RGBToHSV / HSVToRGB (textbook hexcone
// formulas in double), AdjustHue, AdjustSaturation, AdjustContrastv2, ExtractImagePatches, and the
// TF-only ResizeArea, ResizeBicubic (TF's 1/1024-quantised cubic weights), CropAndResize and
// DrawBoundingBoxesV2 and ScaleAndTranslate (every sampling kernel).
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "examples/cli_output.h"
#include "tests/tf/op_cases.h"

namespace tfjit::optest {
namespace {

// Seeded values in [0, 1): pixel intensities or HSV triples.
Tensor UnitTensor(DType t, const Dims& dims, uint64_t seed) {
  const Tensor r = cli::RandomTensor(DType::kFloat64, dims, seed);
  return Build(t, dims, [&](const Dims& i) { return std::abs(At(r, i)); });
}

Tensor ScalarF(float v) { return Tensor::FromVector<float>(DType::kFloat32, {}, {v}); }

void AddResizeNearestCases(std::vector<OpCase>& cases) {
  struct R {
    const char* name;
    Dims in;
    int32_t oh, ow;
  };
  struct M {
    const char* name;
    bool align, half;
  };
  for (const R& r : std::vector<R>{{"up", {2, 4, 5, 3}, 8, 10},
                                   {"down", {1, 9, 7, 2}, 3, 2},
                                   {"mixed", {1, 3, 8, 1}, 7, 5},
                                   {"to_1x1", {1, 4, 4, 2}, 1, 1}}) {
    for (const M& m : std::vector<M>{{"legacy", false, false},
                                     {"align_corners", true, false},
                                     {"half_pixel", false, true}}) {
      for (DType t : {DType::kFloat32, DType::kUInt8}) {
        OpCase c{absl::StrCat("ResizeNearestNeighbor_", r.name, "_", m.name, "_", DTypeName(t)),
                 "ResizeNearestNeighbor",
                 t,
                 {r.in},
                 {Ints({r.oh, r.ow})}};
        c.attrs["align_corners"] = BoolAttr(m.align);
        c.attrs["half_pixel_centers"] = BoolAttr(m.half);
        c.reference = [m, r](const std::vector<Tensor>& in) {
          const Tensor& x = in[0];
          auto src = [&](int64_t o, int64_t n_in, int64_t n_out) {
            const double scale = (m.align && n_out > 1)
                                     ? static_cast<double>(n_in - 1) / (n_out - 1)
                                     : static_cast<double>(n_in) / n_out;
            const double p = m.half ? (o + 0.5) * scale : o * scale;
            int64_t i =
                m.align ? static_cast<int64_t>(std::round(p)) : static_cast<int64_t>(std::floor(p));
            return std::max<int64_t>(std::min(i, n_in - 1), 0);
          };
          return Build(x.dtype(), {x.dim(0), r.oh, r.ow, x.dim(3)}, [&](const Dims& o) {
            return At(x, {o[0], src(o[1], x.dim(1), r.oh), src(o[2], x.dim(2), r.ow), o[3]});
          });
        };
        cases.push_back(c);
      }
    }
  }
  OpCase f16{"ResizeNearestNeighbor_f16_half_pixel",
             "ResizeNearestNeighbor",
             DType::kFloat16,
             {{1, 5, 3, 2}},
             {Ints({9, 4})}};
  f16.attrs["half_pixel_centers"] = BoolAttr(true);
  cases.push_back(f16);
}

// Textbook hexcone conversions in double.
void Hsv(double r, double g, double b, double* h, double* s, double* v) {
  *v = std::max({r, g, b});
  const double range = *v - std::min({r, g, b});
  *s = *v > 0 ? range / *v : 0;
  if (range <= 0) {
    *h = 0;
    return;
  }
  double hh = *v == r ? (g - b) / range : (*v == g ? 2 + (b - r) / range : 4 + (r - g) / range);
  hh /= 6;
  *h = hh < 0 ? hh + 1 : hh;
}

void Rgb(double h, double s, double v, double* rgb) {
  const double h6 = h * 6, f = h6 - std::floor(h6);
  const int i = static_cast<int>(std::floor(h6)) % 6;
  const double p = v * (1 - s), q = v * (1 - f * s), t = v * (1 - (1 - f) * s);
  const double table[6][3] = {{v, t, p}, {q, v, p}, {p, v, t}, {p, q, v}, {t, p, v}, {v, p, q}};
  for (int k = 0; k < 3; ++k) rgb[k] = table[(i + 6) % 6][k];
}

// Applies `pixel(in3, out3)` per pixel of in[0].
RefFn PixelRef(std::function<void(const double*, double*)> pixel) {
  return [pixel](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    Tensor out(x.dtype(), x.dims());
    for (int64_t p = 0; p < x.num_elements() / 3; ++p) {
      double a[3] = {ElementAsDouble(x, 3 * p), ElementAsDouble(x, 3 * p + 1),
                     ElementAsDouble(x, 3 * p + 2)};
      double b[3];
      pixel(a, b);
      for (int k = 0; k < 3; ++k) SetFromDouble(out, 3 * p + k, b[k]);
    }
    return out;
  };
}

void AddColourCases(std::vector<OpCase>& cases) {
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    for (const Dims& dims : std::vector<Dims>{{2, 4, 5, 3}, {3}, {0, 3}}) {
      OpCase to{
          absl::StrCat("RGBToHSV_", DimsName(dims), "_", DTypeName(t)), "RGBToHSV", t, {dims}};
      to.feed_values = {UnitTensor(t, dims, 7)};
      to.reference =
          PixelRef([](const double* a, double* b) { Hsv(a[0], a[1], a[2], &b[0], &b[1], &b[2]); });
      cases.push_back(to);
      OpCase from{
          absl::StrCat("HSVToRGB_", DimsName(dims), "_", DTypeName(t)), "HSVToRGB", t, {dims}};
      from.feed_values = {UnitTensor(t, dims, 8)};
      from.reference = PixelRef([](const double* a, double* b) { Rgb(a[0], a[1], a[2], b); });
      cases.push_back(from);
    }
  }
  // Greys and primaries: zero range, ties between channels, h wrapping below 0.
  OpCase edge{"RGBToHSV_edges", "RGBToHSV", DType::kFloat32, {{6, 3}}};
  edge.feed_values = {Floats(DType::kFloat32, {6, 3},
                             {0, 0, 0, 0.5, 0.5, 0.5, 1, 0, 0, 0, 1, 1, 1, 0, 0.5, 0.2, 0.2, 0.9})};
  edge.reference =
      PixelRef([](const double* a, double* b) { Hsv(a[0], a[1], a[2], &b[0], &b[1], &b[2]); });
  cases.push_back(edge);
  for (DType t : {DType::kFloat32, DType::kFloat16}) {
    for (float delta : {0.3f, -0.45f, 0.0f}) {
      OpCase c{
          absl::StrCat("AdjustHue_", delta, "_", DTypeName(t)), "AdjustHue", t, {{2, 3, 4, 3}, {}}};
      c.input_dtypes = {t, DType::kFloat32};
      c.feed_values = {UnitTensor(t, {2, 3, 4, 3}, 9), ScalarF(delta)};
      c.reference = PixelRef([delta](const double* a, double* b) {
        double h, s, v;
        Hsv(a[0], a[1], a[2], &h, &s, &v);
        h = std::fmod(h + static_cast<double>(delta), 1.0);
        Rgb(h < 0 ? h + 1 : h, s, v, b);
      });
      cases.push_back(c);
    }
    for (float scale : {0.4f, 1.7f, 0.0f}) {
      OpCase c{absl::StrCat("AdjustSaturation_", scale, "_", DTypeName(t)),
               "AdjustSaturation",
               t,
               {{2, 3, 4, 3}, {}}};
      c.input_dtypes = {t, DType::kFloat32};
      c.feed_values = {UnitTensor(t, {2, 3, 4, 3}, 10), ScalarF(scale)};
      c.reference = PixelRef([scale](const double* a, double* b) {
        double h, s, v;
        Hsv(a[0], a[1], a[2], &h, &s, &v);
        Rgb(h, std::min(std::max(s * scale, 0.0), 1.0), v, b);
      });
      cases.push_back(c);
    }
    for (const Dims& dims : std::vector<Dims>{{2, 3, 4, 3}, {5, 4, 2}, {2, 2, 3, 3, 1}}) {
      OpCase c{absl::StrCat("AdjustContrastv2_", DimsName(dims), "_", DTypeName(t)),
               "AdjustContrastv2",
               t,
               {dims, {}}};
      c.input_dtypes = {t, DType::kFloat32};
      c.feed_values = {UnitTensor(t, dims, 11), ScalarF(1.8f)};
      c.reference = [](const std::vector<Tensor>& in) {
        const Tensor& x = in[0];
        const int r = x.rank();
        return Build(x.dtype(), x.dims(), [&](const Dims& i) {
          double sum = 0;
          Dims j = i;
          for (j[r - 3] = 0; j[r - 3] < x.dim(r - 3); ++j[r - 3]) {
            for (j[r - 2] = 0; j[r - 2] < x.dim(r - 2); ++j[r - 2]) sum += At(x, j);
          }
          const double mean = sum / static_cast<double>(x.dim(r - 3) * x.dim(r - 2));
          return (At(x, i) - mean) * 1.8 + mean;
        });
      };
      cases.push_back(c);
    }
  }
}

tensorflow::AttrValue IntList(const std::vector<int64_t>& v) {
  tensorflow::AttrValue a;
  a.mutable_list();
  for (int64_t x : v) a.mutable_list()->add_i(x);
  return a;
}

void AddPatchCases(std::vector<OpCase>& cases) {
  struct P {
    const char* name;
    Dims in;
    int64_t kh, kw, s, r;
    bool same;
    DType t;
  };
  for (const P& p :
       std::vector<P>{{"3x3_s1_SAME", {2, 5, 6, 3}, 3, 3, 1, 1, true, DType::kFloat32},
                      {"2x3_s2_VALID", {1, 7, 8, 2}, 2, 3, 2, 1, false, DType::kFloat32},
                      {"rate2_SAME", {1, 6, 7, 2}, 2, 2, 1, 2, true, DType::kFloat64},
                      {"int32_s3", {2, 7, 7, 1}, 3, 2, 3, 1, true, DType::kInt32},
                      {"bool", {1, 4, 4, 2}, 2, 2, 1, 1, false, DType::kBool},
                      {"empty_VALID", {1, 2, 2, 3}, 3, 3, 1, 1, false, DType::kFloat32}}) {
    OpCase c{absl::StrCat("ExtractImagePatches_", p.name), "ExtractImagePatches", p.t, {p.in}};
    c.attrs["ksizes"] = IntList({1, p.kh, p.kw, 1});
    c.attrs["strides"] = IntList({1, p.s, p.s, 1});
    c.attrs["rates"] = IntList({1, p.r, p.r, 1});
    c.attrs["padding"] = StringAttr(p.same ? "SAME" : "VALID");
    c.reference = [p](const std::vector<Tensor>& in) {
      const Tensor& x = in[0];
      auto geo = [&](int64_t n, int64_t k) -> std::pair<int64_t, int64_t> {
        const int64_t eff = (k - 1) * p.r + 1;
        if (!p.same) return {n >= eff ? (n - eff) / p.s + 1 : 0, 0};
        const int64_t out = (n + p.s - 1) / p.s;
        return {out, std::max<int64_t>((out - 1) * p.s + eff - n, 0) / 2};
      };
      const auto [oh, ph] = geo(x.dim(1), p.kh);
      const auto [ow, pw] = geo(x.dim(2), p.kw);
      return Build(x.dtype(), {x.dim(0), oh, ow, p.kh * p.kw * x.dim(3)}, [&](const Dims& o) {
        const int64_t c = o[3] % x.dim(3), tap = o[3] / x.dim(3);
        const int64_t iy = o[1] * p.s + (tap / p.kw) * p.r - ph;
        const int64_t ix = o[2] * p.s + (tap % p.kw) * p.r - pw;
        if (iy < 0 || iy >= x.dim(1) || ix < 0 || ix >= x.dim(2)) return 0.0;
        return At(x, {o[0], iy, ix, c});
      });
    };
    cases.push_back(c);
  }
}

// ---- TF-only resizes (kernel vs reference) ----

// Output `o`'s cells for an area resize by `scale`: (index, overlap).
std::vector<std::pair<int64_t, double>> AreaCells(int64_t o, double scale, int64_t in) {
  std::vector<std::pair<int64_t, double>> cells;
  const double lo = o * scale, hi = (o + 1) * scale;
  for (int64_t i = static_cast<int64_t>(std::floor(lo));
       i < static_cast<int64_t>(std::ceil(hi - 1e-9)); ++i) {
    const double overlap = std::min<double>(i + 1, hi) - std::max<double>(i, lo);
    cells.push_back({std::min(std::max<int64_t>(i, 0), in - 1), overlap});
  }
  return cells;
}

// Keys' cubic kernel with parameter a at distance t.
double Cubic(double t, double a) {
  t = std::abs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

// TF's bicubic taps: the fraction quantised to 1/1024; half-pixel drops out-of-image taps and
// renormalises, legacy clamps them.
std::vector<std::pair<int64_t, double>> CubicCells(int64_t o, double scale, int64_t in, bool half) {
  const double src = half ? (o + 0.5) * scale - 0.5 : o * scale;
  const double base = std::floor(src), frac = std::nearbyint((src - base) * 1024) / 1024;
  const double a = half ? -0.5 : -0.75;
  std::vector<std::pair<int64_t, double>> cells;
  double sum = 0;
  for (int k = -1; k <= 2; ++k) {
    const int64_t i = static_cast<int64_t>(base) + k;
    const int64_t b = std::min(std::max<int64_t>(i, 0), in - 1);
    const double w = (half && b != i) ? 0.0 : Cubic(frac - k, a);
    cells.push_back({b, w});
    sum += w;
  }
  if (half) {
    for (auto& c : cells) c.second /= sum;
  }
  return cells;
}

using CellFn = std::function<std::vector<std::pair<int64_t, double>>(int64_t, int64_t)>;

// out[n, y, x, c] = norm * sum of wy * wx * in[n, iy, ix, c] (a float result).
Tensor Separable(const Tensor& x, int64_t oh, int64_t ow, const CellFn& rows, const CellFn& cols,
                 double norm) {
  return Build(DType::kFloat32, {x.dim(0), oh, ow, x.dim(3)}, [&](const Dims& o) {
    double sum = 0;
    for (const auto& [iy, wy] : rows(o[1], x.dim(1))) {
      for (const auto& [ix, wx] : cols(o[2], x.dim(2)))
        sum += wy * wx * At(x, {o[0], iy, ix, o[3]});
    }
    return sum * norm;
  });
}

double Scale(int64_t in, int64_t out, bool align) {
  return (align && out > 1) ? static_cast<double>(in - 1) / (out - 1)
                            : static_cast<double>(in) / out;
}

void AddTfOnlyResizeCases(std::vector<OpCase>& cases) {
  struct R {
    const char* name;
    Dims in;
    int32_t oh, ow;
  };
  const std::vector<R> sizes = {
      {"down", {2, 9, 8, 3}, 3, 5}, {"up", {1, 4, 5, 2}, 7, 9}, {"mixed", {1, 6, 3, 1}, 4, 7}};
  for (const R& r : sizes) {
    for (bool align : {false, true}) {
      for (DType t : {DType::kFloat32, DType::kUInt8}) {
        OpCase c{absl::StrCat("ResizeArea_", r.name, align ? "_align_" : "_", DTypeName(t)),
                 "ResizeArea",
                 t,
                 {r.in},
                 {Ints({r.oh, r.ow})}};
        c.attrs["align_corners"] = BoolAttr(align);
        c.kernel_only = true;
        c.reference = [r, align](const std::vector<Tensor>& in) {
          const double sy = Scale(in[0].dim(1), r.oh, align), sx = Scale(in[0].dim(2), r.ow, align);
          return Separable(
              in[0], r.oh, r.ow, [sy](int64_t o, int64_t n) { return AreaCells(o, sy, n); },
              [sx](int64_t o, int64_t n) { return AreaCells(o, sx, n); }, 1.0 / (sy * sx));
        };
        cases.push_back(c);
      }
    }
    for (int mode = 0; mode < 3; ++mode) {
      const bool align = mode == 1, half = mode == 2;
      OpCase c{absl::StrCat("ResizeBicubic_", r.name, "_",
                            mode == 0 ? "legacy" : (align ? "align" : "half_pixel")),
               "ResizeBicubic",
               DType::kFloat32,
               {r.in},
               {Ints({r.oh, r.ow})}};
      c.attrs["align_corners"] = BoolAttr(align);
      c.attrs["half_pixel_centers"] = BoolAttr(half);
      c.kernel_only = true;
      c.reference = [r, align, half](const std::vector<Tensor>& in) {
        const double sy = Scale(in[0].dim(1), r.oh, align), sx = Scale(in[0].dim(2), r.ow, align);
        return Separable(
            in[0], r.oh, r.ow, [=](int64_t o, int64_t n) { return CubicCells(o, sy, n, half); },
            [=](int64_t o, int64_t n) { return CubicCells(o, sx, n, half); }, 1.0);
      };
      cases.push_back(c);
    }
  }
  // CropAndResize: boxes inside, flipped, partly outside (extrapolated) and degenerate (1 row).
  const std::vector<float> boxes = {0.1f,  0.2f, 0.8f, 0.9f, 0.9f, 0.7f, 0.2f, 0.1f,
                                    -0.3f, 0.0f, 1.2f, 1.0f, 0.4f, 0.3f, 0.6f, 0.5f};
  struct CR {
    const char* name;
    int32_t ch, cw;
    const char* method;
    DType t;
  };
  for (const CR& cr : std::vector<CR>{{"bilinear", 5, 4, "bilinear", DType::kFloat32},
                                      {"nearest", 3, 6, "nearest", DType::kFloat32},
                                      {"bilinear_uint8", 4, 4, "bilinear", DType::kUInt8},
                                      {"one_pixel", 1, 1, "bilinear", DType::kFloat64}}) {
    OpCase c{absl::StrCat("CropAndResize_", cr.name),
             "CropAndResize",
             cr.t,
             {{2, 7, 8, 3}, {4, 4}, {4}}};
    c.input_dtypes = {cr.t, DType::kFloat32, DType::kInt32};
    Tensor image = cli::RandomTensor(cr.t, {2, 7, 8, 3}, 21);
    if (cr.t == DType::kUInt8) {
      // Pixels 0 or 1: the kernel blends in float (as TF's does), and larger integer pixels
      // would put its rounding past the float tolerance of the double reference.
      for (int64_t k = 0; k < image.num_elements(); ++k) image.data<uint8_t>()[k] %= 2;
    }
    c.feed_values = {image, Tensor::FromVector<float>(DType::kFloat32, {4, 4}, boxes),
                     Tensor::FromVector<int32_t>(DType::kInt32, {4}, {0, 1, 1, 0})};
    c.consts = {Ints({cr.ch, cr.cw})};
    c.attrs["method"] = StringAttr(cr.method);
    tensorflow::AttrValue ext;
    ext.set_f(-1.5f);
    c.attrs["extrapolation_value"] = ext;
    c.kernel_only = true;
    const bool nearest = std::string(cr.method) == "nearest";
    c.reference = [cr, nearest](const std::vector<Tensor>& in) {
      const Tensor& img = in[0];
      const double h = static_cast<double>(img.dim(1) - 1), w = static_cast<double>(img.dim(2) - 1);
      return Build(DType::kFloat32, {4, cr.ch, cr.cw, img.dim(3)}, [&](const Dims& o) {
        const double y1 = At(in[1], {o[0], 0}), x1 = At(in[1], {o[0], 1});
        const double y2 = At(in[1], {o[0], 2}), x2 = At(in[1], {o[0], 3});
        const int64_t n = static_cast<int64_t>(At(in[2], {o[0]}));
        const double y =
            cr.ch > 1 ? y1 * h + o[1] * (y2 - y1) * h / (cr.ch - 1) : 0.5 * (y1 + y2) * h;
        const double x =
            cr.cw > 1 ? x1 * w + o[2] * (x2 - x1) * w / (cr.cw - 1) : 0.5 * (x1 + x2) * w;
        if (y < 0 || y > h || x < 0 || x > w) return -1.5;
        if (nearest) return At(img, {n, std::lround(y), std::lround(x), o[3]});
        const int64_t t = static_cast<int64_t>(std::floor(y)),
                      b = static_cast<int64_t>(std::ceil(y));
        const int64_t l = static_cast<int64_t>(std::floor(x)),
                      r = static_cast<int64_t>(std::ceil(x));
        const double top = At(img, {n, t, l, o[3]}) +
                           (At(img, {n, t, r, o[3]}) - At(img, {n, t, l, o[3]})) * (x - l);
        const double bot = At(img, {n, b, l, o[3]}) +
                           (At(img, {n, b, r, o[3]}) - At(img, {n, b, l, o[3]})) * (x - l);
        return top + (bot - top) * (y - t);
      });
    };
    cases.push_back(c);
  }
}

// ---- DrawBoundingBoxesV2 (kernel only) ----

void AddDrawCases(std::vector<OpCase>& cases) {
  // Inside, partly outside (edges beyond the image not drawn), inverted (skipped), tiny.
  const std::vector<float> boxes = {0.1f, 0.2f, 0.6f, 0.7f, -0.2f, 0.5f, 0.5f, 1.3f,
                                    0.8f, 0.1f, 0.2f, 0.4f, 0.5f,  0.5f, 0.5f, 0.5f};
  struct D {
    const char* name;
    int64_t depth;
    Dims colors;
  };
  for (const D& d :
       std::vector<D>{{"rgb", 3, {2, 4}}, {"grey_default", 1, {0, 4}}, {"rgba", 4, {3, 4}}}) {
    OpCase c{absl::StrCat("DrawBoundingBoxesV2_", d.name),
             "DrawBoundingBoxesV2",
             DType::kFloat32,
             {{1, 6, 7, d.depth}, {1, 4, 4}, d.colors}};
    c.input_dtypes = {DType::kFloat32, DType::kFloat32, DType::kFloat32};
    c.feed_values = {UnitTensor(DType::kFloat32, {1, 6, 7, d.depth}, 30),
                     Tensor::FromVector<float>(DType::kFloat32, {1, 4, 4}, boxes),
                     UnitTensor(DType::kFloat32, d.colors, 31)};
    c.kernel_only = true;
    c.reference = [](const std::vector<Tensor>& in) {
      Tensor out = in[0].Clone();
      const int64_t h = out.dim(1), w = out.dim(2), depth = out.dim(3);
      std::vector<std::vector<double>> colors;
      for (int64_t i = 0; i < in[2].dim(0); ++i) {
        colors.push_back(
            {At(in[2], {i, 0}), At(in[2], {i, 1}), At(in[2], {i, 2}), At(in[2], {i, 3})});
      }
      if (colors.empty()) {
        colors = {{1, 1, 0, 1},     {0, 0, 1, 1},   {1, 0, 0, 1},   {0, 1, 0, 1}, {0.5, 0, 0.5, 1},
                  {0.5, 0.5, 0, 1}, {0.5, 0, 0, 1}, {0, 0, 0.5, 1}, {0, 1, 1, 1}, {1, 0, 1, 1}};
      }
      if (depth == 1) {
        for (auto& col : colors) col[0] = 1;
      }
      for (int64_t k = 0; k < 4; ++k) {
        auto corner = [&](int64_t j, int64_t size) {
          return static_cast<int64_t>(static_cast<float>(At(in[1], {0, k, j})) *
                                      static_cast<float>(size - 1));
        };
        const int64_t y0 = corner(0, h), x0 = corner(1, w), y1 = corner(2, h), x1 = corner(3, w);
        if (y0 > y1 || x0 > x1 || y0 >= h || y1 < 0 || x0 >= w || x1 < 0) continue;
        const auto& col = colors[static_cast<size_t>(k) % colors.size()];
        for (int64_t y = 0; y < h; ++y) {
          for (int64_t x = 0; x < w; ++x) {
            const bool in_x = x >= x0 && x <= x1, in_y = y >= y0 && y <= y1;
            if (((y == y0 || y == y1) && in_x) || ((x == x0 || x == x1) && in_y)) {
              for (int64_t c = 0; c < depth; ++c) {
                SetFromDouble(out, Ravel({0, y, x, c}, out.dims()), col[static_cast<size_t>(c)]);
              }
            }
          }
        }
      }
      return out;
    };
    cases.push_back(c);
  }
}

// ---- ScaleAndTranslate (kernel only) ----

double Filter(const std::string& k, double x) {
  x = std::abs(x);
  if (k.rfind("lanczos", 0) == 0) {
    const double r = k.back() - '0';
    if (x > r) return 0;
    if (x <= 1e-3) return 1;
    return r * std::sin(M_PI * x) * std::sin(M_PI * x / r) / (M_PI * x * M_PI * x);
  }
  if (k == "gaussian") return x >= 1.5 ? 0 : std::exp(-x * x / 0.5);
  if (k == "box") return x < 0.5 ? 1 : (x == 0.5 ? 0.5 : 0);
  if (k == "triangle") return x < 1 ? 1 - x : 0;
  if (k == "keyscubic") return Cubic(x, -0.5);
  // mitchellcubic: B = C = 1/3.
  if (x >= 2) return 0;
  if (x >= 1) return ((-7.0 / 18 * x + 2) * x - 10.0 / 3) * x + 16.0 / 9;
  return (7.0 / 6 * x - 2) * x * x + 8.0 / 9;
}

double Radius(const std::string& k) {
  if (k.rfind("lanczos", 0) == 0) return k.back() - '0';
  if (k == "gaussian") return 1.5;
  if (k == "keyscubic" || k == "mitchellcubic") return 2;
  return 1;
}

// The normalised taps of output o: the filter (widened by 1 / scale when antialiasing a
// downscale) centred at (o + 0.5 - translate) / scale, over the pixels it reaches.
std::vector<std::pair<int64_t, double>> SpanCells(const std::string& k, int64_t o, int64_t in,
                                                  double scale, double translate, bool aa) {
  const double centre = (o + 0.5 - translate) / scale;
  if (centre < 0 || centre > in) return {};
  const double ks = aa ? std::max(1 / scale, 1.0) : 1.0, r = Radius(k) * ks;
  const int64_t lo =
      std::clamp<int64_t>(static_cast<int64_t>(std::ceil(centre - r - 0.5)), 0, in - 1);
  const int64_t hi =
      std::clamp<int64_t>(static_cast<int64_t>(std::floor(centre + r - 0.5)), 0, in - 1);
  std::vector<std::pair<int64_t, double>> cells;
  double sum = 0;
  for (int64_t i = lo; i <= hi; ++i) {
    cells.push_back({i, Filter(k, (i + 0.5 - centre) / ks)});
    sum += cells.back().second;
  }
  for (auto& c : cells) c.second = std::abs(sum) > 1e-30 ? c.second / sum : 0.0;
  return cells;
}

void AddScaleAndTranslateCases(std::vector<OpCase>& cases) {
  struct S {
    const char* kernel;
    float sy, sx, ty, tx;
    bool aa;
    int32_t oh, ow;
  };
  for (const S& st : std::vector<S>{{"lanczos3", 0.5f, 0.5f, 0, 0, true, 4, 5},
                                    {"lanczos3", 2.0f, 1.6f, 0.3f, -0.5f, true, 12, 13},
                                    {"lanczos5", 0.5f, 2.0f, 0, 1, false, 4, 16},
                                    {"lanczos1", 1.6f, 1.6f, 0, 0, true, 9, 9},
                                    {"gaussian", 0.5f, 0.625f, 0.25f, 0, true, 4, 5},
                                    {"box", 2.0f, 0.5f, 0, 0, true, 10, 4},
                                    {"triangle", 0.625f, 2.0f, 0, 0.5f, false, 5, 12},
                                    {"keyscubic", 1.6f, 0.5f, -1.0f, 0, true, 9, 4},
                                    {"mitchellcubic", 2.0f, 2.0f, 3.0f, 0, true, 12, 12}}) {
    OpCase c{
        absl::StrCat("ScaleAndTranslate_", st.kernel, "_", st.oh, "x", st.ow, st.aa ? "_aa" : ""),
        "ScaleAndTranslate",
        DType::kFloat32,
        {{2, 8, 7, 2}, {2}, {2}, {2}}};
    // size is input 1 of 4, so it is fed (the kernel reads it at run time) rather than a const.
    c.input_dtypes = {DType::kFloat32, DType::kInt32, DType::kFloat32, DType::kFloat32};
    c.feed_values = {cli::RandomTensor(DType::kFloat32, {2, 8, 7, 2}, 40), Ints({st.oh, st.ow}),
                     Tensor::FromVector<float>(DType::kFloat32, {2}, {st.sy, st.sx}),
                     Tensor::FromVector<float>(DType::kFloat32, {2}, {st.ty, st.tx})};
    c.kernel_only = true;
    c.attrs["kernel_type"] = StringAttr(st.kernel);
    c.attrs["antialias"] = BoolAttr(st.aa);
    c.reference = [st](const std::vector<Tensor>& in) {
      const std::string k = st.kernel;
      return Separable(
          in[0], st.oh, st.ow,
          [&](int64_t o, int64_t n) { return SpanCells(k, o, n, st.sy, st.ty, st.aa); },
          [&](int64_t o, int64_t n) { return SpanCells(k, o, n, st.sx, st.tx, st.aa); }, 1.0);
    };
    cases.push_back(c);
  }
}

}  // namespace

std::vector<OpCase> ImageMoreCases() {
  std::vector<OpCase> cases;
  AddResizeNearestCases(cases);
  AddColourCases(cases);
  AddPatchCases(cases);
  AddTfOnlyResizeCases(cases);
  AddDrawCases(cases);
  AddScaleAndTranslateCases(cases);
  return cases;
}

}  // namespace tfjit::optest
