// Differential cases of the windowed ops' gradients (docs/DESIGN.md, "Op families"; the
// elementwise, loss and shape-op gradients are in op_cases_gradients.cc): pooling (2-D, 3-D,
// GradGrad), FusedBatchNormGrad, convolution backprops (2-D, depthwise, 3-D), resize gradients,
// LRNGrad and Dilation2D. Kernel vs evaluator vs CPU JIT, each against naive loops over windows
// and taps in double precision (TF's batch-norm gradient formula written out). NCHW variants
// transpose an NHWC case (NCDHW an NDHWC one). Dilation2DBackpropInput/Filter are kernel-only
// (XLA leaves them to TF).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tests/tf/op_cases.h"
#include "tfjit/session.h"

namespace tfjit::optest {
namespace {

// ---- Pooling gradients (NHWC) ----

tensorflow::AttrValue IntListAttr(const std::vector<int64_t>& v) {
  tensorflow::AttrValue a;
  a.mutable_list();
  for (int64_t x : v) a.mutable_list()->add_i(x);
  return a;
}

// TF's windowed output size and padding before, for one spatial dim.
std::pair<int64_t, int64_t> PoolDim(int64_t in, int64_t k, int64_t s, bool same) {
  if (!same) return {(in - k + s) / s, 0};
  const int64_t out = (in + s - 1) / s;
  return {out, std::max<int64_t>((out - 1) * s + k - in, 0) / 2};
}

struct PoolSpec {
  const char* name;
  Dims in;  // NHWC
  int64_t k, s;
  bool same;
};

// Calls f(n, oh, ow, c, h0, h1, w0, w1) for every output element, with its clipped window.
template <typename F>
void ForEachPoolOutput(const PoolSpec& p, F f) {
  const auto [oh_n, ph] = PoolDim(p.in[1], p.k, p.s, p.same);
  const auto [ow_n, pw] = PoolDim(p.in[2], p.k, p.s, p.same);
  for (int64_t n = 0; n < p.in[0]; ++n) {
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        for (int64_t c = 0; c < p.in[3]; ++c) {
          const int64_t hs = oh * p.s - ph, ws = ow * p.s - pw;
          f(n, oh, ow, c, std::max<int64_t>(hs, 0), std::min(hs + p.k, p.in[1]),
            std::max<int64_t>(ws, 0), std::min(ws + p.k, p.in[2]));
        }
      }
    }
  }
}

Dims PoolOut(const PoolSpec& p) {
  return {p.in[0], PoolDim(p.in[1], p.k, p.s, p.same).first,
          PoolDim(p.in[2], p.k, p.s, p.same).first, p.in[3]};
}

void SetPoolAttrs(OpCase* c, const PoolSpec& p) {
  c->attrs["ksize"] = IntListAttr({1, p.k, p.k, 1});
  c->attrs["strides"] = IntListAttr({1, p.s, p.s, 1});
  c->attrs["padding"] = StringAttr(p.same ? "SAME" : "VALID");
}

const std::vector<PoolSpec>& PoolSpecs() {
  static const std::vector<PoolSpec> specs = {
      {"k2s2_valid", {2, 5, 6, 3}, 2, 2, false},
      {"k3s2_same", {1, 7, 7, 2}, 3, 2, true},
      {"k3s1_same", {1, 4, 5, 1}, 3, 1, true},
      {"k2s3_valid", {2, 7, 8, 2}, 2, 3, false},
  };
  return specs;
}

RefFn MaxPoolGradRef(const PoolSpec& p);

void AddPoolGradCases(std::vector<OpCase>* cases) {
  for (const PoolSpec& p : PoolSpecs()) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
      OpCase c{absl::StrCat("AvgPoolGrad_", p.name, "_", DTypeHloName(t)),
               "AvgPoolGrad",
               t,
               {PoolOut(p)},
               {Ints(std::vector<int32_t>(p.in.begin(), p.in.end()))}};
      c.consts_first = true;
      SetPoolAttrs(&c, p);
      c.reference = [p](const std::vector<Tensor>& in) {
        Tensor out(in[0].dtype(), p.in);
        std::vector<double> acc(static_cast<size_t>(out.num_elements()), 0.0);
        const Dims od = in[0].dims();
        ForEachPoolOutput(p, [&](int64_t n, int64_t oh, int64_t ow, int64_t c, int64_t h0,
                                 int64_t h1, int64_t w0, int64_t w1) {
          const double g = At(in[0], {n, oh, ow, c}) / static_cast<double>((h1 - h0) * (w1 - w0));
          for (int64_t i = h0; i < h1; ++i) {
            for (int64_t j = w0; j < w1; ++j)
              acc[static_cast<size_t>(Ravel({n, i, j, c}, p.in))] += g;
          }
        });
        return Floats(in[0].dtype(), p.in, acc);
      };
      cases->push_back(c);
    }
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
      OpCase c{absl::StrCat("MaxPoolGrad_", p.name, "_", DTypeHloName(t)),
               "MaxPoolGrad",
               t,
               {p.in, PoolOut(p), PoolOut(p)}};
      SetPoolAttrs(&c, p);
      if (t == DType::kFloat32) {  // MaxPoolGradV2: ksize and strides as constant inputs
        OpCase v2 = c;
        v2.name = absl::StrCat("MaxPoolGradV2_", p.name, "_", DTypeHloName(t));
        v2.op = "MaxPoolGradV2";
        v2.attrs.erase("ksize");
        v2.attrs.erase("strides");
        v2.consts = {Ints({1, static_cast<int32_t>(p.k), static_cast<int32_t>(p.k), 1}),
                     Ints({1, static_cast<int32_t>(p.s), static_cast<int32_t>(p.s), 1})};
        v2.reference = MaxPoolGradRef(p);
        cases->push_back(v2);
      }
      c.reference = MaxPoolGradRef(p);
      cases->push_back(c);
    }
  }
}

// MaxPoolGrad: each gradient goes to the first maximum of its window (row-major order).
RefFn MaxPoolGradRef(const PoolSpec& p) {
  return [p](const std::vector<Tensor>& in) {
    std::vector<double> acc(static_cast<size_t>(in[0].num_elements()), 0.0);
    ForEachPoolOutput(p, [&](int64_t n, int64_t oh, int64_t ow, int64_t c, int64_t h0, int64_t h1,
                             int64_t w0, int64_t w1) {
      Dims best;
      for (int64_t i = h0; i < h1; ++i) {
        for (int64_t j = w0; j < w1; ++j) {
          if (best.empty() || At(in[0], {n, i, j, c}) > At(in[0], best)) best = {n, i, j, c};
        }
      }
      acc[static_cast<size_t>(Ravel(best, p.in))] += At(in[2], {n, oh, ow, c});
    });
    return Floats(in[0].dtype(), p.in, acc);
  };
}

// ---- FusedBatchNormGrad ----

// TF's batch-norm gradient in double: output 0 x_backprop, 1 scale_backprop, 2 offset_backprop,
// 3 an empty placeholder.
RefFn BatchNormGradRef(int output, bool training, bool nchw, double eps) {
  return [=](const std::vector<Tensor>& in) {
    const Tensor &dy = in[0], &x = in[1];
    const Dims& d = x.dims();
    const size_t cdim = nchw ? 1 : d.size() - 1;
    const int64_t channels = d[cdim];
    if (output == 3) return Tensor(DType::kFloat32, {0});
    std::vector<double> sum_dy(static_cast<size_t>(channels)), sum_dyxc(sum_dy.size());
    for (int64_t k = 0; k < x.num_elements(); ++k) {
      const int64_t c = Unravel(k, d)[cdim];
      const double xc = ElementAsDouble(x, k) - ElementAsDouble(in[3], c);
      sum_dy[static_cast<size_t>(c)] += ElementAsDouble(dy, k);
      sum_dyxc[static_cast<size_t>(c)] += ElementAsDouble(dy, k) * xc;
    }
    auto r = [&](int64_t c) { return 1.0 / std::sqrt(ElementAsDouble(in[4], c) + eps); };
    if (output == 1 || output == 2) {
      std::vector<double> v(sum_dy.size());
      for (int64_t c = 0; c < channels; ++c) {
        v[static_cast<size_t>(c)] =
            output == 2 ? sum_dy[static_cast<size_t>(c)] : sum_dyxc[static_cast<size_t>(c)] * r(c);
      }
      return Floats(DType::kFloat32, {channels}, v);
    }
    const double n = static_cast<double>(x.num_elements() / std::max<int64_t>(1, channels));
    return Build(x.dtype(), d, [&](const Dims& i) {
      const int64_t c = i[cdim];
      const size_t cc = static_cast<size_t>(c);
      const double g = At(dy, i), xc = At(x, i) - ElementAsDouble(in[3], c);
      const double s = ElementAsDouble(in[2], c);
      if (!training) return g * s * r(c);
      return s * r(c) * (g - sum_dy[cc] / n - xc * (sum_dyxc[cc] / n) * r(c) * r(c));
    });
  };
}

void AddBatchNormGradCases(std::vector<OpCase>* cases) {
  struct Bn {
    const char* op;
    DType t;
    Dims x;
    bool nchw, training;
  };
  const std::vector<Bn> all = {
      {"FusedBatchNormGrad", DType::kFloat32, {2, 3, 4, 3}, false, true},
      {"FusedBatchNormGrad", DType::kFloat32, {2, 3, 4, 3}, false, false},
      {"FusedBatchNormGradV2", DType::kFloat32, {1, 5, 3, 4}, true, true},
      {"FusedBatchNormGradV2", DType::kFloat16, {2, 2, 3, 5}, false, true},
      {"FusedBatchNormGradV3", DType::kFloat32, {3, 2, 2, 4}, false, true},
      {"FusedBatchNormGradV3", DType::kBFloat16, {2, 4, 2, 3}, false, false},
      {"FusedBatchNormGradV3", DType::kFloat32, {2, 3, 2, 5}, true, false},
  };
  for (const Bn& b : all) {
    const int64_t channels = b.nchw ? b.x[1] : b.x[3];
    const bool v1 = std::string(b.op) == "FusedBatchNormGrad";
    const bool v3 = std::string(b.op) == "FusedBatchNormGradV3";
    for (int output : {0, 1, 2, 3}) {
      OpCase c{absl::StrCat(b.op, "_", DTypeHloName(b.t), "_", DimsName(b.x), b.nchw ? "_nchw" : "",
                            b.training ? "_training" : "_inference", "_out", output),
               b.op,
               b.t,
               {b.x, b.x, {channels}, {channels}, {channels}}};
      const DType f = DType::kFloat32;
      c.input_dtypes = {b.t, b.t, f, f, f};
      auto vec = [&](int salt, double lo, double span) {
        return Build(f, {channels}, [=](const Dims& i) {
          return lo + span * std::fabs(std::sin(static_cast<double>(i[0] * 3 + salt)));
        });
      };
      c.feed_values = {
          Build(b.t, b.x,
                [&](const Dims& i) { return std::sin(static_cast<double>(Ravel(i, b.x)) * 0.7); }),
          Build(b.t, b.x,
                [&](const Dims& i) {
                  return std::cos(static_cast<double>(Ravel(i, b.x)) * 1.3) * 2;
                }),
          vec(1, 0.5, 1.0), vec(2, -0.3, 0.6), vec(3, 0.2, 1.5)};
      if (v3) {
        c.inputs.push_back({});
        c.input_dtypes.push_back(f);
        c.feed_values.push_back(Tensor(f, {}));
      }
      if (!v1) c.attrs["U"] = TypeAttr(f);
      c.attrs["is_training"] = BoolAttr(b.training);
      c.attrs["epsilon"].set_f(0.001f);
      if (b.nchw) c.attrs["data_format"] = StringAttr("NCHW");
      c.output = output;
      c.reference = BatchNormGradRef(output, b.training, b.nchw, static_cast<double>(0.001f));
      cases->push_back(c);
    }
  }
}

// ---- Convolution backprops (NHWC) ----

struct ConvSpec {
  const char* name;
  Dims x, filter;  // filter [kh, kw, in_c, out_c] (depthwise [kh, kw, c, multiplier])
  int64_t stride, dilation;
  bool same;
};

// TF's output size and padding before of one spatial dim with dilation.
std::pair<int64_t, int64_t> ConvDim(int64_t in, int64_t k, int64_t s, int64_t d, bool same) {
  const int64_t ek = (k - 1) * d + 1;
  if (!same) return {(in - ek + s) / s, 0};
  const int64_t out = (in + s - 1) / s;
  return {out, std::max<int64_t>((out - 1) * s + ek - in, 0) / 2};
}

Dims ConvOut(const ConvSpec& c, bool depthwise) {
  return {c.x[0], ConvDim(c.x[1], c.filter[0], c.stride, c.dilation, c.same).first,
          ConvDim(c.x[2], c.filter[1], c.stride, c.dilation, c.same).first,
          depthwise ? c.filter[2] * c.filter[3] : c.filter[3]};
}

// f(n, oy, ox, kh, kw, iy, ix) for every tap inside the input.
template <typename F>
void ForEachConvTap(const ConvSpec& c, F f) {
  const auto [oh, ph] = ConvDim(c.x[1], c.filter[0], c.stride, c.dilation, c.same);
  const auto [ow, pw] = ConvDim(c.x[2], c.filter[1], c.stride, c.dilation, c.same);
  for (int64_t n = 0; n < c.x[0]; ++n) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        for (int64_t kh = 0; kh < c.filter[0]; ++kh) {
          for (int64_t kw = 0; kw < c.filter[1]; ++kw) {
            const int64_t iy = oy * c.stride + kh * c.dilation - ph;
            const int64_t ix = ox * c.stride + kw * c.dilation - pw;
            if (iy >= 0 && iy < c.x[1] && ix >= 0 && ix < c.x[2]) f(n, oy, ox, kh, kw, iy, ix);
          }
        }
      }
    }
  }
}

void SetConvAttrs(OpCase* o, const ConvSpec& c) {
  o->attrs["strides"] = IntListAttr({1, c.stride, c.stride, 1});
  o->attrs["dilations"] = IntListAttr({1, c.dilation, c.dilation, 1});
  o->attrs["padding"] = StringAttr(c.same ? "SAME" : "VALID");
}

Tensor Wavy(DType t, const Dims& d, double freq) {
  return Build(t, d,
               [&](const Dims& i) { return std::sin(static_cast<double>(Ravel(i, d)) * freq); });
}

void AddConvBackpropCases(std::vector<OpCase>* cases) {
  const std::vector<ConvSpec> conv = {
      {"s1_same", {2, 5, 6, 3}, {3, 3, 3, 4}, 1, 1, true},
      {"s2_valid", {1, 7, 7, 2}, {3, 2, 2, 5}, 2, 1, false},
      {"dilated_same", {1, 6, 6, 2}, {2, 2, 2, 3}, 1, 2, true},
      {"s2_same_1x1", {2, 5, 4, 3}, {1, 1, 3, 2}, 2, 1, true},
  };
  for (const bool depthwise : {false, true}) {
    const std::string op =
        depthwise ? "DepthwiseConv2dNativeBackpropFilter" : "Conv2DBackpropFilter";
    for (const ConvSpec& c : conv) {
      for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
        if (depthwise && c.dilation != 1) continue;
        OpCase o{absl::StrCat(op, "_", c.name, "_", DTypeHloName(t)),
                 op,
                 t,
                 {ConvOut(c, depthwise)},
                 {Wavy(t, c.x, 0.9), Ints(std::vector<int32_t>(c.filter.begin(), c.filter.end()))}};
        o.consts_first = true;  // input (as a constant), filter_sizes, then the fed out_backprop
        SetConvAttrs(&o, c);
        o.reference = [c, depthwise](const std::vector<Tensor>& in) {
          const Tensor &dy = in[0], &x = in[1];
          std::vector<double> acc(
              static_cast<size_t>(c.filter[0] * c.filter[1] * c.filter[2] * c.filter[3]), 0.0);
          ForEachConvTap(c, [&](int64_t n, int64_t oy, int64_t ox, int64_t kh, int64_t kw,
                                int64_t iy, int64_t ix) {
            for (int64_t ci = 0; ci < c.filter[2]; ++ci) {
              for (int64_t o = 0; o < c.filter[3]; ++o) {
                const int64_t oc = depthwise ? ci * c.filter[3] + o : o;
                acc[static_cast<size_t>(Ravel({kh, kw, ci, o}, c.filter))] +=
                    At(x, {n, iy, ix, ci}) * At(dy, {n, oy, ox, oc});
              }
            }
          });
          return Floats(x.dtype(), c.filter, acc);
        };
        cases->push_back(o);
      }
    }
  }
  const std::vector<ConvSpec> dw = {
      {"s1_same", {2, 5, 5, 3}, {3, 3, 3, 2}, 1, 1, true},
      {"s2_valid", {1, 7, 6, 2}, {2, 3, 2, 1}, 2, 1, false},
      {"s2_same", {1, 6, 7, 4}, {3, 3, 4, 3}, 2, 1, true},
  };
  for (const ConvSpec& c : dw) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
      OpCase o{absl::StrCat("DepthwiseConv2dNativeBackpropInput_", c.name, "_", DTypeHloName(t)),
               "DepthwiseConv2dNativeBackpropInput",
               t,
               {c.filter, ConvOut(c, true)},
               {Ints(std::vector<int32_t>(c.x.begin(), c.x.end()))}};
      o.consts_first = true;
      SetConvAttrs(&o, c);
      o.reference = [c](const std::vector<Tensor>& in) {
        const Tensor &f = in[0], &dy = in[1];
        std::vector<double> acc(static_cast<size_t>(c.x[0] * c.x[1] * c.x[2] * c.x[3]), 0.0);
        ForEachConvTap(c, [&](int64_t n, int64_t oy, int64_t ox, int64_t kh, int64_t kw, int64_t iy,
                              int64_t ix) {
          for (int64_t ci = 0; ci < c.x[3]; ++ci) {
            for (int64_t m = 0; m < c.filter[3]; ++m) {
              acc[static_cast<size_t>(Ravel({n, iy, ix, ci}, c.x))] +=
                  At(dy, {n, oy, ox, ci * c.filter[3] + m}) * At(f, {kh, kw, ci, m});
            }
          }
        });
        return Floats(f.dtype(), c.x, acc);
      };
      cases->push_back(o);
    }
  }
}

// ---- Resize gradients (NHWC) ----

// TF's resize source coordinate in float (legacy or half-pixel scaler).
float ResizeScale(int64_t in, int64_t out, bool align) {
  return (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                            : static_cast<float>(in) / static_cast<float>(out);
}

struct ResizeSpec {
  const char* name;
  Dims grads;    // [N, OH, OW, C]
  int64_t h, w;  // the original size
  bool align, half_pixel;
};

void AddResizeGradCases(std::vector<OpCase>* cases) {
  const std::vector<ResizeSpec> specs = {
      {"up", {2, 7, 9, 3}, 3, 4, false, false},
      {"down", {1, 3, 2, 2}, 5, 6, false, false},
      {"up_align", {1, 5, 7, 2}, 3, 4, true, false},
      {"up_half_pixel", {2, 6, 5, 1}, 4, 3, false, true},
      {"down_half_pixel", {1, 2, 3, 3}, 5, 7, false, true},
  };
  for (const ResizeSpec& r : specs) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
      const Dims image = {r.grads[0], r.h, r.w, r.grads[3]};
      OpCase c{absl::StrCat("ResizeBilinearGrad_", r.name, "_", DTypeHloName(t)),
               "ResizeBilinearGrad",
               t,
               {r.grads, image}};
      c.input_dtypes = {DType::kFloat32, t};
      c.attrs["align_corners"] = BoolAttr(r.align);
      c.attrs["half_pixel_centers"] = BoolAttr(r.half_pixel);
      c.reference = [r, image, t](const std::vector<Tensor>& in) {
        std::vector<double> acc(static_cast<size_t>(image[0] * r.h * r.w * image[3]), 0.0);
        const float sy = ResizeScale(r.h, r.grads[1], r.align);
        const float sx = ResizeScale(r.w, r.grads[2], r.align);
        auto src = [&](int64_t i, float s) {
          return r.half_pixel ? (static_cast<float>(i) + 0.5f) * s - 0.5f
                              : static_cast<float>(i) * s;
        };
        for (int64_t k = 0; k < in[0].num_elements(); ++k) {
          const Dims i = Unravel(k, r.grads);
          const float fy = src(i[1], sy), fx = src(i[2], sx);
          const int64_t y0 = std::max<int64_t>(static_cast<int64_t>(std::floor(fy)), 0);
          const int64_t y1 = std::min<int64_t>(static_cast<int64_t>(std::ceil(fy)), r.h - 1);
          const int64_t x0 = std::max<int64_t>(static_cast<int64_t>(std::floor(fx)), 0);
          const int64_t x1 = std::min<int64_t>(static_cast<int64_t>(std::ceil(fx)), r.w - 1);
          // The weights as TF holds them: lerp and 1 - lerp in float.
          const float ly = fy - std::floor(fy), lx = fx - std::floor(fx);
          const double ay = 1.0f - ly, ax = 1.0f - lx;
          const double g = ElementAsDouble(in[0], k);
          acc[static_cast<size_t>(Ravel({i[0], y0, x0, i[3]}, image))] += g * ay * ax;
          acc[static_cast<size_t>(Ravel({i[0], y0, x1, i[3]}, image))] += g * ay * lx;
          acc[static_cast<size_t>(Ravel({i[0], y1, x0, i[3]}, image))] += g * ly * ax;
          acc[static_cast<size_t>(Ravel({i[0], y1, x1, i[3]}, image))] += g * ly * lx;
        }
        return Floats(t, image, acc);
      };
      cases->push_back(c);
    }
    for (DType t : {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kUInt8}) {
      const Dims image = {r.grads[0], r.h, r.w, r.grads[3]};
      OpCase c{absl::StrCat("ResizeNearestNeighborGrad_", r.name, "_", DTypeHloName(t)),
               "ResizeNearestNeighborGrad",
               t,
               {r.grads},
               {Ints({static_cast<int32_t>(r.h), static_cast<int32_t>(r.w)})}};
      c.attrs["align_corners"] = BoolAttr(r.align);
      c.attrs["half_pixel_centers"] = BoolAttr(r.half_pixel);
      c.reference = [r, image, t](const std::vector<Tensor>& in) {
        std::vector<double> acc(static_cast<size_t>(image[0] * r.h * r.w * image[3]), 0.0);
        const float sy = ResizeScale(r.h, r.grads[1], r.align);
        const float sx = ResizeScale(r.w, r.grads[2], r.align);
        auto src = [&](int64_t i, float s, int64_t n) {
          const float f =
              r.half_pixel ? (static_cast<float>(i) + 0.5f) * s : static_cast<float>(i) * s;
          int64_t v =
              r.align ? static_cast<int64_t>(std::round(f)) : static_cast<int64_t>(std::floor(f));
          return std::max<int64_t>(std::min(v, n - 1), 0);
        };
        for (int64_t k = 0; k < in[0].num_elements(); ++k) {
          const Dims i = Unravel(k, r.grads);
          acc[static_cast<size_t>(Ravel({i[0], src(i[1], sy, r.h), src(i[2], sx, r.w), i[3]},
                                        image))] += ElementAsDouble(in[0], k);
        }
        return Floats(t, image, acc);
      };
      cases->push_back(c);
    }
  }
}

// ---- NCHW variants: the NHWC case with its 4-D tensors transposed ----

// t with dims permuted: out.dim(i) == t.dim(perm[i]).
Tensor Permute4(const Tensor& t, const std::vector<int>& perm) {
  Dims d(4);
  for (size_t i = 0; i < 4; ++i) d[i] = t.dims()[static_cast<size_t>(perm[i])];
  Tensor out(t.dtype(), d);
  for (int64_t k = 0; k < out.num_elements(); ++k) {
    const Dims o = Unravel(k, d);
    Dims src(4);
    for (size_t i = 0; i < 4; ++i) src[static_cast<size_t>(perm[i])] = o[i];
    SetFromDouble(out, k, At(t, src));
  }
  return out;
}

// An NCHW copy of an NHWC case: the image placeholders (`images`) and shape consts transposed, the
// per-dim attrs permuted, the reference run on NHWC and its (4-D) result transposed back.
OpCase AsNchw(OpCase c, const std::vector<size_t>& images, const std::vector<size_t>& const_shapes,
              bool output_4d) {
  const std::vector<int> to_nchw = {0, 3, 1, 2}, to_nhwc = {0, 2, 3, 1};
  c.name += "_nchw";
  c.attrs["data_format"] = StringAttr("NCHW");
  for (const char* a : {"ksize", "strides", "dilations"}) {
    auto it = c.attrs.find(a);
    if (it == c.attrs.end()) continue;
    auto* l = it->second.mutable_list();
    const int64_t h = l->i(1), w = l->i(2);
    l->set_i(1, l->i(3));
    l->set_i(2, h);
    l->set_i(3, w);
  }
  std::vector<bool> four_d(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    four_d[i] = std::find(images.begin(), images.end(), i) != images.end();
    if (four_d[i]) c.inputs[i] = {c.inputs[i][0], c.inputs[i][3], c.inputs[i][1], c.inputs[i][2]};
  }
  for (size_t k : const_shapes) {  // shape vectors given in NHWC order
    std::vector<int32_t> v;
    for (int64_t i = 0; i < 4; ++i)
      v.push_back(static_cast<int32_t>(ElementAsDouble(c.consts[k], i)));
    c.consts[k] = Ints({v[0], v[3], v[1], v[2]});
  }
  const RefFn nhwc_ref = c.reference;
  const size_t n_placeholders = c.inputs.size();
  const std::vector<size_t> shapes = const_shapes;
  c.reference = [=](const std::vector<Tensor>& in) {
    std::vector<Tensor> x = in;
    for (size_t i = 0; i < n_placeholders; ++i) {
      if (four_d[i]) x[i] = Permute4(in[i], to_nhwc);
    }
    for (size_t k : shapes) {
      const Tensor& s = in[n_placeholders + k];
      x[n_placeholders + k] = Ints({static_cast<int32_t>(ElementAsDouble(s, 0)),
                                    static_cast<int32_t>(ElementAsDouble(s, 2)),
                                    static_cast<int32_t>(ElementAsDouble(s, 3)),
                                    static_cast<int32_t>(ElementAsDouble(s, 1))});
    }
    const Tensor r = nhwc_ref(x);
    return output_4d ? Permute4(r, to_nchw) : r;
  };
  return c;
}

void AddNchwCases(std::vector<OpCase>* cases) {
  std::vector<OpCase> more;
  for (const OpCase& c : *cases) {
    const bool pool = c.op == "MaxPoolGrad" || c.op == "AvgPoolGrad";
    const bool conv =
        c.op == "Conv2DBackpropFilter" || c.op == "DepthwiseConv2dNativeBackpropInput";
    if (c.dtype != DType::kFloat32 || (!pool && !conv)) continue;
    if (c.op == "AvgPoolGrad") more.push_back(AsNchw(c, {0}, {0}, true));
    if (c.op == "MaxPoolGrad") more.push_back(AsNchw(c, {0, 1, 2}, {}, true));
    if (c.op == "DepthwiseConv2dNativeBackpropInput") more.push_back(AsNchw(c, {1}, {0}, true));
  }
  cases->insert(cases->end(), more.begin(), more.end());
}

// ---- MaxPoolGradGrad / V2 ----

// Each output (orig_output's shape) takes grad (orig_input's shape) at the first maximum of its
// window of orig_input in row-major window order; TF's CPU kernel takes the first cell equal
// to orig_output, XLA the first maximum, so a tie goes to the first. The random f32/f64 feeds
// have no ties; the f16/int32 ones may, and every side takes the first.
RefFn MaxPoolGradGradRef(const PoolSpec& p) {
  return [p](const std::vector<Tensor>& in) {
    const Dims od = PoolOut(p);
    std::vector<double> out(static_cast<size_t>(od[0] * od[1] * od[2] * od[3]), 0.0);
    ForEachPoolOutput(p, [&](int64_t n, int64_t oh, int64_t ow, int64_t c, int64_t h0, int64_t h1,
                             int64_t w0, int64_t w1) {
      Dims best;
      for (int64_t i = h0; i < h1; ++i) {
        for (int64_t j = w0; j < w1; ++j) {
          if (best.empty() || At(in[0], {n, i, j, c}) > At(in[0], best)) best = {n, i, j, c};
        }
      }
      out[static_cast<size_t>(Ravel({n, oh, ow, c}, od))] = best.empty() ? 0.0 : At(in[2], best);
    });
    return Floats(in[0].dtype(), od, out);
  };
}

void AddMaxPoolGradGradCases(std::vector<OpCase>* cases) {
  for (const PoolSpec& p : PoolSpecs()) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
      OpCase c{absl::StrCat("MaxPoolGradGrad_", p.name, "_", DTypeHloName(t)),
               "MaxPoolGradGrad",
               t,
               {p.in, PoolOut(p), p.in}};
      SetPoolAttrs(&c, p);
      c.reference = MaxPoolGradGradRef(p);
      if (t == DType::kFloat32 || t == DType::kInt32) {  // ksize and strides as constant inputs
        OpCase v2 = c;
        v2.name = absl::StrCat("MaxPoolGradGradV2_", p.name, "_", DTypeHloName(t));
        v2.op = "MaxPoolGradGradV2";
        v2.attrs.erase("ksize");
        v2.attrs.erase("strides");
        v2.consts = {Ints({1, static_cast<int32_t>(p.k), static_cast<int32_t>(p.k), 1}),
                     Ints({1, static_cast<int32_t>(p.s), static_cast<int32_t>(p.s), 1})};
        cases->push_back(v2);
      }
      cases->push_back(c);
    }
  }
  PoolSpec empty{"empty_batch", {0, 4, 4, 2}, 2, 2, false};
  OpCase e{"MaxPoolGradGrad_empty_batch_f32",
           "MaxPoolGradGrad",
           DType::kFloat32,
           {empty.in, PoolOut(empty), empty.in}};
  SetPoolAttrs(&e, empty);
  e.reference = MaxPoolGradGradRef(empty);
  cases->push_back(e);
}

// ---- LRNGrad ----

// TF's lrn_op.cc formula in double (see gradients_kernels.cc): in = {input_grads, input_image,
// output_image}.
RefFn LrnGradRef(int64_t r, double bias, double alpha, double beta) {
  return [=](const std::vector<Tensor>& in) {
    const Dims d = in[0].dims();
    const int64_t depth = d[3], rows = depth == 0 ? 0 : in[0].num_elements() / depth;
    std::vector<double> out(static_cast<size_t>(in[0].num_elements()), 0.0);
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t off = row * depth;
      auto x = [&](int64_t k) { return ElementAsDouble(in[1], off + k); };
      for (int64_t j = 0; j < depth; ++j) {
        double norm = 0;
        for (int64_t k = std::max<int64_t>(0, j - r); k <= std::min(depth - 1, j + r); ++k) {
          norm += x(k) * x(k);
        }
        norm = bias + alpha * norm;
        const double g = ElementAsDouble(in[0], off + j), y = ElementAsDouble(in[2], off + j);
        for (int64_t k = std::max<int64_t>(0, j - r); k <= std::min(depth - 1, j + r); ++k) {
          double v = -2.0 * alpha * beta * x(k) * y / norm;
          if (k == j) v += std::pow(norm, -beta);
          out[static_cast<size_t>(off + k)] += v * g;
        }
      }
    }
    return Floats(in[0].dtype(), d, out);
  };
}

void AddLrnGradCases(std::vector<OpCase>* cases) {
  struct Lrn {
    const char* name;
    Dims d;
    int64_t r;
    float bias, alpha, beta;
    bool defaults;
  };
  const std::vector<Lrn> specs = {
      {"r2", {2, 3, 4, 7}, 2, 1.5f, 0.25f, 0.75f, false},
      {"defaults", {1, 2, 3, 12}, 5, 1.0f, 1.0f, 0.5f, true},
      {"r0", {1, 2, 2, 5}, 0, 2.0f, 0.5f, 1.0f, false},
      {"depth1", {2, 2, 2, 1}, 3, 1.0f, 2.0f, 0.5f, false},
      {"empty", {0, 2, 2, 3}, 2, 1.0f, 1.0f, 0.5f, false},
  };
  for (const Lrn& l : specs) {
    for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      if (t != DType::kFloat32 && std::string(l.name) != "r2") continue;
      OpCase c{
          absl::StrCat("LRNGrad_", l.name, "_", DTypeHloName(t)), "LRNGrad", t, {l.d, l.d, l.d}};
      if (!l.defaults) {
        c.attrs["depth_radius"] = IntAttr(l.r);
        c.attrs["bias"] = FloatAttr(l.bias);
        c.attrs["alpha"] = FloatAttr(l.alpha);
        c.attrs["beta"] = FloatAttr(l.beta);
      }
      c.reference = LrnGradRef(l.r, l.bias, l.alpha, l.beta);
      cases->push_back(c);
    }
  }
}

// ---- 3-D pooling and convolution gradients (NDHWC; NCDHW copies) ----

// t with its dims permuted: out dims[i] = t.dims[perm[i]].
Tensor PermuteN(const Tensor& t, const std::vector<int>& perm) {
  const size_t r = perm.size();
  Dims d(r);
  for (size_t i = 0; i < r; ++i) d[i] = t.dims()[static_cast<size_t>(perm[i])];
  Tensor out(t.dtype(), d);
  for (int64_t k = 0; k < out.num_elements(); ++k) {
    const Dims o = Unravel(k, d);
    Dims src(r);
    for (size_t i = 0; i < r; ++i) src[static_cast<size_t>(perm[i])] = o[i];
    SetFromDouble(out, k, At(t, src));
  }
  return out;
}

struct Spec3D {
  const char* name;
  Dims x;  // NDHWC
  Dims k;  // pool window, or the filter [kd, kh, kw, in_c, out_c]
  Dims s, dil;
  bool same;
};

// The output size and padding before of one spatial dim (with dilation).
std::pair<int64_t, int64_t> Dim3(const Spec3D& p, int i) {
  const size_t u = static_cast<size_t>(i);
  return ConvDim(p.x[u + 1], p.k[u], p.s[u], p.dil[u], p.same);
}

Dims Out3D(const Spec3D& p, int64_t channels) {
  return {p.x[0], Dim3(p, 0).first, Dim3(p, 1).first, Dim3(p, 2).first, channels};
}

// f(n, o[3], i[3], tap[3]) for every output position and window tap inside the input.
template <typename F>
void ForEachTap3D(const Spec3D& p, F f) {
  const Dims od = Out3D(p, 1);
  const int64_t pad[3] = {Dim3(p, 0).second, Dim3(p, 1).second, Dim3(p, 2).second};
  for (int64_t n = 0; n < p.x[0]; ++n) {
    for (int64_t a = 0; a < od[1]; ++a) {
      for (int64_t b = 0; b < od[2]; ++b) {
        for (int64_t c = 0; c < od[3]; ++c) {
          const int64_t o[3] = {a, b, c};
          for (int64_t t0 = 0; t0 < p.k[0]; ++t0) {
            for (int64_t t1 = 0; t1 < p.k[1]; ++t1) {
              for (int64_t t2 = 0; t2 < p.k[2]; ++t2) {
                const int64_t tap[3] = {t0, t1, t2};
                int64_t i[3];
                bool inside = true;
                for (int d = 0; d < 3; ++d) {
                  i[d] = o[d] * p.s[static_cast<size_t>(d)] +
                         tap[d] * p.dil[static_cast<size_t>(d)] - pad[d];
                  inside = inside && i[d] >= 0 && i[d] < p.x[static_cast<size_t>(d + 1)];
                }
                if (inside) f(n, o, i, tap);
              }
            }
          }
        }
      }
    }
  }
}

void SetAttrs3D(OpCase* c, const Spec3D& p, bool pool) {
  if (pool) c->attrs["ksize"] = IntListAttr({1, p.k[0], p.k[1], p.k[2], 1});
  c->attrs["strides"] = IntListAttr({1, p.s[0], p.s[1], p.s[2], 1});
  if (!pool) c->attrs["dilations"] = IntListAttr({1, p.dil[0], p.dil[1], p.dil[2], 1});
  c->attrs["padding"] = StringAttr(p.same ? "SAME" : "VALID");
}

// An NCDHW copy of an NDHWC case: the 5-D placeholders (`images`), the 5-D constants
// (`const_images`) and the shape constants (`const_shapes`) transposed, the per-dim attrs
// permuted, the reference run on NDHWC and its result transposed back when `output_5d`.
OpCase AsNcdhw(OpCase c, const std::vector<size_t>& images, const std::vector<size_t>& const_images,
               const std::vector<size_t>& const_shapes, bool output_5d) {
  const std::vector<int> to_first = {0, 4, 1, 2, 3}, to_last = {0, 2, 3, 4, 1};
  c.name += "_ncdhw";
  c.attrs["data_format"] = StringAttr("NCDHW");
  for (const char* a : {"ksize", "strides", "dilations"}) {
    auto it = c.attrs.find(a);
    if (it == c.attrs.end()) continue;
    std::vector<int64_t> v(it->second.list().i().begin(), it->second.list().i().end());
    it->second = IntListAttr({v[0], v[4], v[1], v[2], v[3]});
  }
  std::vector<bool> five_d(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    five_d[i] = std::find(images.begin(), images.end(), i) != images.end();
    const Dims d = c.inputs[i];
    if (five_d[i]) c.inputs[i] = {d[0], d[4], d[1], d[2], d[3]};
  }
  for (size_t k : const_images) c.consts[k] = PermuteN(c.consts[k], to_first);
  for (size_t k : const_shapes) {
    std::vector<int32_t> v;
    for (int64_t i = 0; i < 5; ++i)
      v.push_back(static_cast<int32_t>(ElementAsDouble(c.consts[k], i)));
    c.consts[k] = Ints({v[0], v[4], v[1], v[2], v[3]});
  }
  const RefFn ref = c.reference;
  const size_t np = c.inputs.size();
  c.reference = [=](const std::vector<Tensor>& in) {
    std::vector<Tensor> x = in;
    for (size_t i = 0; i < np; ++i) {
      if (five_d[i]) x[i] = PermuteN(in[i], to_last);
    }
    for (size_t k : const_images) x[np + k] = PermuteN(in[np + k], to_last);
    for (size_t k : const_shapes) {
      const Tensor& s = in[np + k];
      std::vector<int32_t> v;
      for (int64_t i : {0, 2, 3, 4, 1}) v.push_back(static_cast<int32_t>(ElementAsDouble(s, i)));
      x[np + k] = Ints(v);
    }
    const Tensor r = ref(x);
    return output_5d ? PermuteN(r, to_first) : r;
  };
  return c;
}

const std::vector<Spec3D>& PoolSpecs3D() {
  static const std::vector<Spec3D> specs = {
      {"k2s2_valid", {2, 4, 5, 4, 3}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, false},
      {"k3s2_same", {1, 5, 5, 6, 2}, {3, 3, 2}, {2, 2, 1}, {1, 1, 1}, true},
      {"k1x2x3_s1_same", {1, 3, 4, 5, 2}, {1, 2, 3}, {1, 1, 2}, {1, 1, 1}, true},
  };
  return specs;
}

// The first maximum of window (n, o, c) of x (NDHWC), -1 for an empty window.
int64_t FirstMax3D(const Spec3D& p, const Tensor& x, int64_t n, const int64_t* o, int64_t c) {
  int64_t best = -1;
  double bv = 0;
  ForEachTap3D(Spec3D{p.name, {1, p.x[1], p.x[2], p.x[3], p.x[4]}, p.k, p.s, p.dil, p.same},
               [&](int64_t, const int64_t* oo, const int64_t* i, const int64_t*) {
                 if (oo[0] != o[0] || oo[1] != o[1] || oo[2] != o[2]) return;
                 const int64_t at = Ravel({n, i[0], i[1], i[2], c}, p.x);
                 const double v = ElementAsDouble(x, at);
                 if (best < 0 || v > bv) {
                   best = at;
                   bv = v;
                 }
               });
  return best;
}

void AddPool3DGradCases(std::vector<OpCase>* cases) {
  for (const Spec3D& p : PoolSpecs3D()) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
      OpCase c{absl::StrCat("AvgPool3DGrad_", p.name, "_", DTypeHloName(t)),
               "AvgPool3DGrad",
               t,
               {Out3D(p, p.x[4])},
               {Ints(std::vector<int32_t>(p.x.begin(), p.x.end()))}};
      c.consts_first = true;
      SetAttrs3D(&c, p, true);
      c.reference = [p](const std::vector<Tensor>& in) {
        const Dims od = Out3D(p, p.x[4]);
        std::vector<double> count(static_cast<size_t>(od[1] * od[2] * od[3]), 0.0);
        std::vector<double> acc(static_cast<size_t>(p.x[0] * p.x[1] * p.x[2] * p.x[3] * p.x[4]));
        ForEachTap3D(p, [&](int64_t n, const int64_t* o, const int64_t*, const int64_t*) {
          if (n == 0) count[static_cast<size_t>((o[0] * od[2] + o[1]) * od[3] + o[2])] += 1;
        });
        ForEachTap3D(p, [&](int64_t n, const int64_t* o, const int64_t* i, const int64_t*) {
          const double cnt = count[static_cast<size_t>((o[0] * od[2] + o[1]) * od[3] + o[2])];
          for (int64_t ch = 0; ch < p.x[4]; ++ch) {
            acc[static_cast<size_t>(Ravel({n, i[0], i[1], i[2], ch}, p.x))] +=
                At(in[0], {n, o[0], o[1], o[2], ch}) / cnt;
          }
        });
        return Floats(in[0].dtype(), p.x, acc);
      };
      cases->push_back(c);
      if (t == DType::kFloat32) cases->push_back(AsNcdhw(c, {0}, {}, {0}, true));
    }
    // MaxPool3DGrad: each gradient to the first maximum of its window. TF's CPU kernel credits
    // every tied cell, XLA (and tfjit) the first; the random f32 feeds have no ties, the 16-bit
    // ones may and every side here takes the first.
    for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      OpCase c{absl::StrCat("MaxPool3DGrad_", p.name, "_", DTypeHloName(t)),
               "MaxPool3DGrad",
               t,
               {p.x, Out3D(p, p.x[4]), Out3D(p, p.x[4])}};
      c.attrs["TInput"] = TypeAttr(t);
      SetAttrs3D(&c, p, true);
      c.reference = [p](const std::vector<Tensor>& in) {
        std::vector<double> acc(static_cast<size_t>(in[0].num_elements()), 0.0);
        const Dims od = Out3D(p, p.x[4]);
        for (int64_t k = 0; k < in[2].num_elements(); ++k) {
          const Dims o = Unravel(k, od);
          const int64_t oo[3] = {o[1], o[2], o[3]};
          const int64_t best = FirstMax3D(p, in[0], o[0], oo, o[4]);
          if (best >= 0) acc[static_cast<size_t>(best)] += ElementAsDouble(in[2], k);
        }
        return Floats(in[2].dtype(), p.x, acc);
      };
      cases->push_back(c);
      if (t == DType::kFloat32) {
        cases->push_back(AsNcdhw(c, {0, 1, 2}, {}, {}, true));
        // TInput (orig_input, orig_output) differs from T (grad, output).
        OpCase mixed = c;
        mixed.name = absl::StrCat("MaxPool3DGrad_", p.name, "_f16_input_f32_grad");
        mixed.attrs["TInput"] = TypeAttr(DType::kFloat16);
        mixed.input_dtypes = {DType::kFloat16, DType::kFloat16, DType::kFloat32};
        cases->push_back(mixed);
      }
    }
  }
}

void AddConv3DBackpropCases(std::vector<OpCase>* cases) {
  const std::vector<Spec3D> specs = {
      {"s1_same", {2, 3, 4, 4, 2}, {2, 3, 2, 2, 3}, {1, 1, 1}, {1, 1, 1}, true},
      {"s2_valid", {1, 5, 5, 6, 3}, {3, 2, 2, 3, 2}, {2, 2, 2}, {1, 1, 1}, false},
      {"s121_same", {1, 4, 5, 5, 2}, {2, 2, 3, 2, 2}, {1, 2, 1}, {1, 1, 1}, true},
      {"dilated_valid", {1, 5, 5, 5, 2}, {2, 2, 2, 2, 3}, {1, 1, 1}, {2, 1, 2}, false},
      {"dilated_same_s2", {1, 6, 5, 4, 1}, {2, 2, 2, 1, 2}, {2, 2, 1}, {2, 2, 1}, true},
      {"18_taps_same", {1, 4, 5, 6, 3}, {3, 3, 2, 3, 2}, {1, 2, 1}, {1, 1, 1}, true},
  };
  for (const Spec3D& p : specs) {
    const Dims f = p.k;
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
      if (t == DType::kBFloat16 && std::string(p.name) != "s1_same") continue;
      OpCase bi{absl::StrCat("Conv3DBackpropInputV2_", p.name, "_", DTypeHloName(t)),
                "Conv3DBackpropInputV2",
                t,
                {f, Out3D(p, f[4])},
                {Ints(std::vector<int32_t>(p.x.begin(), p.x.end()))}};
      bi.consts_first = true;
      SetAttrs3D(&bi, p, false);
      bi.reference = [p](const std::vector<Tensor>& in) {
        const Tensor &w = in[0], &dy = in[1];
        std::vector<double> acc(static_cast<size_t>(p.x[0] * p.x[1] * p.x[2] * p.x[3] * p.x[4]));
        ForEachTap3D(p, [&](int64_t n, const int64_t* o, const int64_t* i, const int64_t* tap) {
          for (int64_t c = 0; c < p.k[3]; ++c) {
            for (int64_t oc = 0; oc < p.k[4]; ++oc) {
              acc[static_cast<size_t>(Ravel({n, i[0], i[1], i[2], c}, p.x))] +=
                  At(dy, {n, o[0], o[1], o[2], oc}) * At(w, {tap[0], tap[1], tap[2], c, oc});
            }
          }
        });
        return Floats(w.dtype(), p.x, acc);
      };
      cases->push_back(bi);
      if (t == DType::kFloat32) {
        cases->push_back(AsNcdhw(bi, {1}, {}, {0}, true));
        OpCase i64 = bi;  // Tshape int64
        i64.name += "_int64_sizes";
        i64.attrs["Tshape"] = TypeAttr(DType::kInt64);
        i64.consts = {Ints64(std::vector<int64_t>(p.x.begin(), p.x.end()))};
        cases->push_back(i64);
      }

      OpCase bf{absl::StrCat("Conv3DBackpropFilterV2_", p.name, "_", DTypeHloName(t)),
                "Conv3DBackpropFilterV2",
                t,
                {Out3D(p, f[4])},
                {Wavy(t, p.x, 0.7), Ints(std::vector<int32_t>(f.begin(), f.end()))}};
      bf.consts_first = true;  // input (as a constant), filter_sizes, then the fed out_backprop
      SetAttrs3D(&bf, p, false);
      bf.reference = [p](const std::vector<Tensor>& in) {
        const Tensor &dy = in[0], &x = in[1];
        std::vector<double> acc(static_cast<size_t>(p.k[0] * p.k[1] * p.k[2] * p.k[3] * p.k[4]));
        ForEachTap3D(p, [&](int64_t n, const int64_t* o, const int64_t* i, const int64_t* tap) {
          for (int64_t c = 0; c < p.k[3]; ++c) {
            for (int64_t oc = 0; oc < p.k[4]; ++oc) {
              acc[static_cast<size_t>(Ravel({tap[0], tap[1], tap[2], c, oc}, p.k))] +=
                  At(x, {n, i[0], i[1], i[2], c}) * At(dy, {n, o[0], o[1], o[2], oc});
            }
          }
        });
        return Floats(x.dtype(), p.k, acc);
      };
      cases->push_back(bf);
      if (t == DType::kFloat32) cases->push_back(AsNcdhw(bf, {0}, {0}, {}, false));
    }
  }
}

// ---- Dilation2DBackpropInput / Filter (kernel only) ----

// `v` rounded to dtype `t` (TF adds input and filter in T).
double RoundTo(DType t, double v) {
  Tensor one(t, {1});
  SetFromDouble(one, 0, v);
  return ElementAsDouble(one, 0);
}

// TF's dilation_ops.cc: each out_backprop value goes to the (input cell, filter tap) of the
// first maximum of input + filter over its window's in-bounds taps, in (row, col) scan order
// (strict >, so a tie goes to the first tap). in = {input, filter, out_backprop}.
RefFn Dilation2DGradRef(bool filter_grad, int64_t s, int64_t r, bool same) {
  return [=](const std::vector<Tensor>& in) {
    const Tensor &x = in[0], &f = in[1], &dy = in[2];
    const Dims xd = x.dims(), fd = f.dims();
    const auto [oh, ph] = ConvDim(xd[1], fd[0], s, r, same);
    const auto [ow, pw] = ConvDim(xd[2], fd[1], s, r, same);
    const Dims od = filter_grad ? fd : xd;
    std::vector<double> acc(
        static_cast<size_t>(od[0] * od[1] * od[2] * (od.size() > 3 ? od[3] : 1)));
    for (int64_t n = 0; n < xd[0]; ++n) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t z = 0; z < ow; ++z) {
          for (int64_t c = 0; c < xd[3]; ++c) {
            bool found = false;
            double best = 0;
            int64_t bi = 0, bj = 0, by = 0, bz = 0;
            for (int64_t i = 0; i < fd[0]; ++i) {
              for (int64_t j = 0; j < fd[1]; ++j) {
                const int64_t iy = y * s + i * r - ph, iz = z * s + j * r - pw;
                if (iy < 0 || iy >= xd[1] || iz < 0 || iz >= xd[2]) continue;
                const double v = RoundTo(x.dtype(), At(x, {n, iy, iz, c}) + At(f, {i, j, c}));
                if (!found || v > best) {
                  found = true;
                  best = v;
                  bi = i;
                  bj = j;
                  by = iy;
                  bz = iz;
                }
              }
            }
            if (!found) {  // no tap inside: TF credits tap (0, 0) and the clamped start
              by = std::max<int64_t>(y * s - ph, 0);
              bz = std::max<int64_t>(z * s - pw, 0);
            }
            const double g = At(dy, {n, y, z, c});
            if (filter_grad) {
              acc[static_cast<size_t>(Ravel({bi, bj, c}, fd))] += g;
            } else if (by < xd[1] && bz < xd[2]) {
              acc[static_cast<size_t>(Ravel({n, by, bz, c}, xd))] += g;
            }
          }
        }
      }
    }
    return Floats(x.dtype(), od, acc);
  };
}

void AddDilation2DGradCases(std::vector<OpCase>* cases) {
  struct Dil {
    const char* name;
    Dims x, f;
    int64_t s, r;
    bool same;
  };
  const std::vector<Dil> specs = {
      {"s1_same", {2, 5, 6, 3}, {3, 3, 3}, 1, 1, true},
      {"s2_valid", {1, 7, 7, 2}, {2, 3, 2}, 2, 1, false},
      {"rate2_same", {1, 6, 5, 2}, {2, 2, 2}, 1, 2, true},
      {"s2_rate2_valid", {2, 8, 7, 1}, {2, 2, 1}, 2, 2, false},
      {"no_tap_inside", {1, 1, 1, 2}, {2, 2, 2}, 1, 3, true},  // both taps fall in the padding
      {"empty_batch", {0, 4, 4, 2}, {2, 2, 2}, 1, 1, true},
  };
  for (const char* op : {"Dilation2DBackpropInput", "Dilation2DBackpropFilter"}) {
    const bool filter_grad = std::string(op) == "Dilation2DBackpropFilter";
    for (const Dil& d : specs) {
      for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
        const Dims od = {d.x[0], ConvDim(d.x[1], d.f[0], d.s, d.r, d.same).first,
                         ConvDim(d.x[2], d.f[1], d.s, d.r, d.same).first, d.x[3]};
        OpCase c{absl::StrCat(op, "_", d.name, "_", DTypeHloName(t)), op, t, {d.x, d.f, od}};
        c.attrs["strides"] = IntListAttr({1, d.s, d.s, 1});
        c.attrs["rates"] = IntListAttr({1, d.r, d.r, 1});
        c.attrs["padding"] = StringAttr(d.same ? "SAME" : "VALID");
        c.kernel_only = true;
        c.reference = Dilation2DGradRef(filter_grad, d.s, d.r, d.same);
        cases->push_back(c);
      }
    }
  }
}

}  // namespace

void AddWindowGradientsCases(std::vector<OpCase>* out) {
  std::vector<OpCase>& cases = *out;
  AddPoolGradCases(&cases);
  AddBatchNormGradCases(&cases);
  AddConvBackpropCases(&cases);
  AddResizeGradCases(&cases);
  AddNchwCases(&cases);
  {
    std::vector<OpCase> mpgg;
    AddMaxPoolGradGradCases(&mpgg);
    for (const OpCase& c : mpgg) {
      cases.push_back(c);
      if (c.op == "MaxPoolGradGrad" && c.dtype == DType::kFloat32 && c.inputs[0][0] > 0) {
        cases.push_back(AsNchw(c, {0, 1, 2}, {}, true));
      }
    }
  }
  AddLrnGradCases(&cases);
  AddPool3DGradCases(&cases);
  AddConv3DBackpropCases(&cases);
  AddDilation2DGradCases(&cases);
}

}  // namespace tfjit::optest
